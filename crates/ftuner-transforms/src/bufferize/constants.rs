//! Constant tensors: each distinct `arith.constant` tensor becomes one private, constant
//! `memref.global` of the module, read with `memref.get_global` at the function's entry.

use super::types::result_memref;
use super::{BufferRewriter, R};
use ftuner_dialects::ops;
use ftuner_ir::{intern_name, Attribute, Ir, OpId, OpSpec, Type};

impl BufferRewriter<'_> {
    /// `arith.constant` of a tensor: `memref.get_global` of the global holding its value
    /// (a new one unless an equal constant of the same type has one).
    pub(super) fn constant(&mut self, op: OpId) -> R<()> {
        let loc = self.ir.loc(op);
        let ty = result_memref(self.ir, op, 0)?;
        let value = self
            .ir
            .attr(op, "value")
            .ok_or((op, "has no value".into()))?;
        let name = match self.globals.iter().find(|g| g.1 == value && g.2 == ty) {
            Some(g) => g.0.clone(),
            None => {
                let n = format!("__constant_{}", self.globals.len());
                self.globals.push((n.clone(), value, ty));
                n
            }
        };
        let g = self.ir.create_op(
            OpSpec::new(intern_name(ops::memref::GetGlobalOp::NAME), loc)
                .results(vec![ty])
                .prop("name", Attribute::symbol_ref(name)),
        );
        self.ir.prepend_op(self.entry, g);
        let res = self.ir.result(op, 0);
        self.map.insert(res, self.ir.result(g, 0));
        Ok(())
    }
}

/// The `memref.global`s of `globals` (name, value, type), first in the body of module
/// `top`.
pub(super) fn emit_globals(ir: &mut Ir, top: OpId, globals: Vec<(String, Attribute, Type)>) {
    let body = ir.regions_of(top).first().and_then(|r| ir.region_entry(*r));
    if let Some(body) = body {
        let loc = ir.loc(top);
        for (name, value, ty) in globals.into_iter().rev() {
            let g = ir.create_op(
                OpSpec::new(intern_name(ops::memref::GlobalOp::NAME), loc)
                    .prop("sym_name", Attribute::string(name))
                    .prop("sym_visibility", Attribute::string("private"))
                    .prop("type", Attribute::type_attr(ty))
                    .prop("initial_value", value)
                    .prop("constant", Attribute::unit())
                    .prop("alignment", Attribute::i64(64)),
            );
            ir.prepend_op(body, g);
        }
    }
}

/// `arith.constant`'s bufferization model (a tensor constant).
pub(super) fn register(reg: &mut ftuner_ir::Registry) {
    reg.attach_interface(
        ops::arith::ConstantOp::NAME,
        super::Bufferizable::plain(|rw, op, _| rw.constant(op)),
    );
}
