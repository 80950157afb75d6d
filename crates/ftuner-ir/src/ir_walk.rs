//! Walking the nested operations of an op (pre- and post-order).

use super::{Ir, OpId};

impl Ir {
    /// Pre-order walk of `op` and everything nested in it.
    pub fn walk_pre(&self, op: OpId, f: &mut dyn FnMut(OpId)) {
        crate::parser::with_stack(|| self.walk_pre_inner(op, f))
    }
    fn walk_pre_inner(&self, op: OpId, f: &mut dyn FnMut(OpId)) {
        f(op);
        for r in self.ops[op.index()].regions.iter() {
            for b in self.regions[r.index()].blocks.iter() {
                let mut cur = self.blocks[b.index()].first;
                while let Some(o) = cur {
                    cur = self.ops[o.index()].next;
                    self.walk_pre(o, f);
                }
            }
        }
    }
    /// Post-order walk (nested ops before their parent).
    pub fn walk_post(&self, op: OpId, f: &mut dyn FnMut(OpId)) {
        crate::parser::with_stack(|| self.walk_post_inner(op, f))
    }
    fn walk_post_inner(&self, op: OpId, f: &mut dyn FnMut(OpId)) {
        for r in self.ops[op.index()].regions.iter() {
            for b in self.regions[r.index()].blocks.iter() {
                let mut cur = self.blocks[b.index()].first;
                while let Some(o) = cur {
                    cur = self.ops[o.index()].next;
                    self.walk_post(o, f);
                }
            }
        }
        f(op);
    }
    /// All ops nested under `op` (pre-order, `op` included), collected first so the
    /// caller may mutate while iterating.
    pub fn collect_pre(&self, op: OpId) -> Vec<OpId> {
        let mut v = vec![];
        self.walk_pre(op, &mut |o| v.push(o));
        v
    }
    pub fn collect_post(&self, op: OpId) -> Vec<OpId> {
        let mut v = vec![];
        self.walk_post(op, &mut |o| v.push(o));
        v
    }
}
