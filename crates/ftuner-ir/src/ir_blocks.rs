//! Block surgery: splitting a block, moving a region's blocks into another region (MLIR's
//! `Block::splitBlock` and `RewriterBase::inlineRegionBefore`).

use super::{BlockId, Ir, OpId, RegionId, Type};

impl Ir {
    /// Split the block holding `op` before it: `op` and every op after it move to a new
    /// block with arguments of `arg_types`, placed right after the old block in its
    /// region. `None` when `op` is not in a block of a region.
    pub fn split_block_before(&mut self, op: OpId, arg_types: &[Type]) -> Option<BlockId> {
        let b = self.ops[op.index()].parent?;
        let r = self.blocks[b.index()].parent?;
        let pos = self.regions[r.index()]
            .blocks
            .iter()
            .position(|x| *x == b)?;
        let nb = self.new_block(arg_types);
        self.blocks[nb.index()].parent = Some(r);
        self.regions[r.index()].blocks.insert(pos + 1, nb);
        let mut cur = Some(op);
        while let Some(o) = cur {
            cur = self.ops[o.index()].next;
            self.unlink(o);
            self.append_op(nb, o);
        }
        Some(nb)
    }

    /// Move every block of region `from`, in order, into the region of `before`, just
    /// before it. Returns the moved blocks.
    pub fn inline_region_before(&mut self, from: RegionId, before: BlockId) -> Vec<BlockId> {
        let Some(r) = self.blocks[before.index()].parent else {
            return vec![];
        };
        let blocks = std::mem::take(&mut self.regions[from.index()].blocks);
        let at = self.regions[r.index()]
            .blocks
            .iter()
            .position(|x| *x == before)
            .unwrap_or(self.regions[r.index()].blocks.len());
        for (k, b) in blocks.iter().enumerate() {
            self.blocks[b.index()].parent = Some(r);
            self.regions[r.index()].blocks.insert(at + k, *b);
        }
        blocks
    }
}
