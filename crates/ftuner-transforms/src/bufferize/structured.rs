//! Bufferization of destination-passing structured ops (`linalg` ops, `ukernel.patch`):
//! on buffers they read their inputs, write their outputs' buffers (in place, or copies)
//! and have no results.

use super::{BufferRewriter, R};
use ftuner_dialects::linalg::ins_outs;
use ftuner_ir::{BlockId, Ir, OpId};

/// Whether a linalg op reads its outputs' old contents (its body uses an output block
/// argument); `linalg.fill`/`transpose`/`copy`-like ops that only write do not.
pub(super) fn linalg_reads_outs(ir: &Ir, op: OpId) -> bool {
    let (ins, _) = ins_outs(ir, op);
    let Some(b) = ir.regions_of(op).first().and_then(|r| ir.region_entry(*r)) else {
        return true;
    };
    let args = ir.block_args(b);
    if args.is_empty() {
        return true;
    }
    args.iter().skip(ins.len()).any(|a| ir.has_uses(*a))
}

impl BufferRewriter<'_> {
    /// A structured op on tensors: the same op on the buffers, its tensor results those
    /// of its outputs.
    pub(super) fn structured_op(&mut self, op: OpId, b: BlockId) -> R<()> {
        let results = self.ir.results(op).to_vec();
        let (ins, outs) = ins_outs(self.ir, op);
        let mut ops = vec![];
        for v in &ins {
            ops.push(self.v(op, *v)?);
        }
        let reads_out = linalg_reads_outs(self.ir, op);
        for (i, v) in outs.iter().enumerate() {
            if self.ir.value_type(*v).is_tensor() {
                ops.push(self.dest(b, op, ins.len() + i, reads_out)?);
            } else {
                ops.push(self.v(op, *v)?);
            }
        }
        // A patch's epilogue operands are read like its inputs.
        for v in ftuner_dialects::ukernel::epilogue_inputs(self.ir, op) {
            ops.push(self.v(op, v)?);
        }
        self.clone_like(op, b, ops.clone(), vec![])?;
        let mut r = 0;
        for (i, v) in outs.iter().enumerate() {
            if self.ir.value_type(*v).is_tensor() {
                self.map.insert(results[r], ops[ins.len() + i]);
                r += 1;
            }
        }
        Ok(())
    }
}
