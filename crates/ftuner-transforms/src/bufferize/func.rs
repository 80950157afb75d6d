//! Function boundaries: functions take and return identity-layout memrefs, a returned
//! buffer is always one the function allocated (else a copy) so callers own results,
//! declarations change only their type, and `func.call` results are owned by the caller.

use super::types::{is_identity, memref_of};
use super::{BufferRewriter, R};
use ftuner_dialects::ops;
use ftuner_ir::{intern_name, Attribute, BlockId, Ir, OpId, OpSpec, Type, Value};
use rustc_hash::FxHashSet;

/// The argument types of function `func` (its body's entry block `entry`) on buffers.
pub(super) fn arg_types(ir: &Ir, func: OpId, entry: BlockId) -> R<Vec<Type>> {
    ir.block_args(entry)
        .iter()
        .map(|a| {
            let t = ir.value_type(*a);
            if t.is_tensor() {
                memref_of(t).ok_or((func, "unranked tensor argument".to_string()))
            } else {
                Ok(t)
            }
        })
        .collect::<R<_>>()
}

/// Update the types of declarations (no body) and of `func.call` results elsewhere.
pub(super) fn convert_signature(ir: &mut Ir, func: OpId) {
    let Some(fty) = ir.attr(func, "function_type").and_then(|a| a.as_type()) else {
        return;
    };
    let conv = |t: &Type| {
        if t.is_tensor() {
            memref_of(*t).unwrap_or(*t)
        } else {
            *t
        }
    };
    let ins: Vec<Type> = fty.function_inputs().iter().map(conv).collect();
    let outs: Vec<Type> = fty.function_results().iter().map(conv).collect();
    ir.set_prop(
        func,
        "function_type",
        Some(Attribute::type_attr(Type::function(ins, outs))),
    );
}

impl BufferRewriter<'_> {
    /// The new `func.return` at the end of `entry` for the old one, `term`; returns the
    /// function's result types. Callers own what we return: a buffer allocated here (or
    /// a reshaped view of all of one), returned once, with identity layout; else a copy.
    pub(super) fn func_return(&mut self, term: OpId, entry: BlockId) -> R<Vec<Type>> {
        let loc = self.ir.loc(term);
        let mut rets = vec![];
        let owned_here: FxHashSet<Value> = self
            .owned
            .iter()
            .filter(|(_, blk)| *blk == entry)
            .map(|(v, _)| *v)
            .collect();
        let mut returned = FxHashSet::default();
        for v in self.ir.operands(term).to_vec() {
            let nv = self.v(term, v)?;
            if !self.ir.value_type(nv).is_memref() {
                rets.push(nv);
                continue;
            }
            let root = reshaped_root(self.ir, nv);
            let mine = owned_here.contains(&root) && is_identity(self.ir.value_type(nv));
            if mine && returned.insert(root) {
                rets.push(nv);
            } else {
                let n = self.alloc_like(entry, nv, loc);
                self.copy(entry, nv, n, loc);
                self.copies += 1;
                returned.insert(n);
                rets.push(n);
            }
        }
        let res_types: Vec<Type> = rets.iter().map(|v| self.ir.value_type(*v)).collect();
        let r = self
            .ir
            .create_op(OpSpec::new(intern_name(ops::func::ReturnOp::NAME), loc).operands(rets));
        self.ir.append_op(entry, r);
        Ok(res_types)
    }

    /// `func.call`: tensor results become buffers the caller owns.
    pub(super) fn call(&mut self, op: OpId, b: BlockId) -> R<()> {
        let results = self.ir.results(op).to_vec();
        let ops = self.vs(op, self.ir.operands(op))?;
        let tys = results
            .iter()
            .map(|r| {
                let t = self.ir.value_type(*r);
                if t.is_tensor() {
                    memref_of(t).ok_or((op, "unranked tensor result".into()))
                } else {
                    Ok(t)
                }
            })
            .collect::<R<Vec<_>>>()?;
        let n = self.clone_like(op, b, ops, tys)?;
        for (i, (o, r)) in results.iter().zip(self.ir.results(n).to_vec()).enumerate() {
            self.map.insert(*o, r);
            if self.ir.value_type(results[i]).is_tensor() {
                self.owned.push((r, b));
            }
        }
        Ok(())
    }
}

/// The buffer `v` is a whole reshape (or cast) of.
fn reshaped_root(ir: &Ir, v: Value) -> Value {
    let mut root = v;
    while let Some(d) = ir.defining_op(root).filter(|d| {
        matches!(
            ir.name(*d),
            ops::memref::ReshapeOp::NAME
                | ops::memref::CollapseShapeOp::NAME
                | ops::memref::ExpandShapeOp::NAME
                | ops::memref::CastOp::NAME
        )
    }) {
        root = ir.operand(d, 0);
    }
    root
}

/// `func.call`'s bufferization model.
pub(super) fn register(reg: &mut ftuner_ir::Registry) {
    reg.attach_interface(
        ops::func::CallOp::NAME,
        super::Bufferizable::plain(|rw, op, b| rw.call(op, b)),
    );
}
