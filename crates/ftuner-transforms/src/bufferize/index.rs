//! The `index` values bufferization builds: constants, `memref.dim`, and other ops with
//! one `index` result.

use super::BufferRewriter;
use ftuner_dialects::ops;
use ftuner_ir::{Attribute, BlockId, Type, Value};

impl BufferRewriter<'_> {
    pub(super) fn index_const(&mut self, b: BlockId, k: i64, loc: Attribute) -> Value {
        let o = self.new_op(
            b,
            ops::arith::ConstantOp::NAME,
            vec![],
            vec![Type::index()],
            vec![("value".into(), Attribute::index(k))],
            loc,
        );
        self.ir.result(o, 0)
    }

    /// Op `name` on `operands` with one `index` result, appended to `b`.
    pub(super) fn index_op(
        &mut self,
        b: BlockId,
        name: &str,
        operands: Vec<Value>,
        loc: Attribute,
    ) -> Value {
        let o = self.new_op(b, name, operands, vec![Type::index()], vec![], loc);
        self.ir.result(o, 0)
    }

    /// `memref.dim %m, i`.
    pub(super) fn dim(&mut self, b: BlockId, m: Value, i: usize, loc: Attribute) -> Value {
        let c = self.index_const(b, i as i64, loc);
        self.index_op(b, ops::memref::DimOp::NAME, vec![m, c], loc)
    }
}
