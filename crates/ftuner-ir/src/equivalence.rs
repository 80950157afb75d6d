//! Structural equivalence of operations (MLIR's `OperationEquivalence`): two ops are
//! equivalent when they have the same names, attributes, types and region structure, and
//! their operands are the same values (outside the op) or correspond (defined inside it).
//! Locations are ignored.
//!
//! [`structure_key`] computes a key of an op such that two ops with equal keys are
//! equivalent. Attributes and types are uniqued, so the key is made of their identities
//! and is only meaningful within one process; it is cheap to build (no printing) and to
//! hash, which is what deduplication of outlined code needs.

use crate::{Ir, OpId, Value};
use rustc_hash::FxHashMap;

const OP: usize = usize::MAX;
const REGION: usize = usize::MAX - 1;
const BLOCK: usize = usize::MAX - 2;
const END: usize = usize::MAX - 3;
const OUTSIDE: usize = usize::MAX - 4;

/// A key of `op` and everything nested in it: equal keys, equivalent ops. Values defined
/// inside `op` are numbered in definition order; a value from outside is keyed by its
/// identity (so two nests reading different outer values differ).
pub fn structure_key(ir: &Ir, op: OpId) -> Vec<usize> {
    let mut k = Keyer {
        ir,
        key: Vec::with_capacity(64),
        local: FxHashMap::default(),
        blocks: FxHashMap::default(),
    };
    k.op(op);
    k.key
}

struct Keyer<'a> {
    ir: &'a Ir,
    key: Vec<usize>,
    local: FxHashMap<Value, usize>,
    blocks: FxHashMap<crate::BlockId, usize>,
}

impl Keyer<'_> {
    fn define(&mut self, v: Value) {
        let n = self.local.len();
        self.local.insert(v, n);
        self.key.push(self.ir.value_type(v).id());
    }

    fn op(&mut self, op: OpId) {
        let d = self.ir.op(op);
        self.key.push(OP);
        self.key.push(d.name.as_ptr() as usize);
        self.key.push(d.name.len());
        self.key.push(d.props.id());
        self.key.push(d.attrs.id());
        self.key.push(d.operands.len());
        for v in &d.operands {
            match self.local.get(v) {
                Some(n) => self.key.push(*n),
                None => {
                    self.key.push(OUTSIDE);
                    self.key.push(v.index());
                }
            }
        }
        // Successors by their position in the enclosing region (numbered on entry).
        self.key.push(d.successors.len());
        for s in &d.successors {
            let n = self.blocks.get(s).copied().unwrap_or(OUTSIDE);
            self.key.push(n);
        }
        self.key.push(d.results.len());
        for r in d.results.clone() {
            self.define(r);
        }
        for r in d.regions.clone() {
            self.key.push(REGION);
            let blocks = self.ir.region(r).blocks.clone();
            for (i, b) in blocks.iter().enumerate() {
                self.blocks.insert(*b, i);
            }
            for b in blocks {
                self.key.push(BLOCK);
                let args = self.ir.block_args(b).to_vec();
                self.key.push(args.len());
                for a in args {
                    self.define(a);
                }
                for o in self.ir.block_ops(b) {
                    self.op(o);
                }
            }
            self.key.push(END);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_module, Context};

    /// The keys of the top-level ops of `src` (generic form, unregistered ops).
    fn keys(src: &str) -> Vec<Vec<usize>> {
        let mut ctx = Context::new();
        ctx.allow_unregistered = true;
        let m = parse_module(&ctx, src, "t.mlir").expect("parses");
        let body =
            m.ir.region_entry(m.ir.regions_of(m.top)[0])
                .expect("a body");
        let ops = m.ir.block_ops_vec(body);
        ops.iter().map(|o| structure_key(&m.ir, *o)).collect()
    }

    #[test]
    fn equal_up_to_locations_and_different_otherwise() {
        let nest = |c: i32, swap: bool, at: &str| {
            let (a, b) = if swap { ("%k", "%x") } else { ("%x", "%k") };
            format!(
                r#""t.nest"() ({{
                ^bb0(%x: i32):
                  %k = "t.const"() {{value = {c} : i32}} : () -> i32
                  %y = "t.add"({a}, {b}) : (i32, i32) -> i32 loc({at})
                  "t.yield"(%y) : (i32) -> ()
                }}) : () -> ()
                "#
            )
        };
        let src = [
            nest(1, false, "\"a.mlir\":1:1"),
            nest(1, false, "\"b.mlir\":9:9"),
            nest(2, false, "\"a.mlir\":1:1"),
            nest(1, true, "\"a.mlir\":1:1"),
        ]
        .concat();
        let k = keys(&src);
        assert_eq!(k.len(), 4);
        assert_eq!(k[0], k[1], "locations do not matter");
        assert_ne!(k[0], k[2], "a different constant");
        assert_ne!(k[0], k[3], "operands swapped");
    }
}
