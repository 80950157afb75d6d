//! `OpBuilder`: creates operations at an insertion point (the end of a block, or before an
//! operation) with a location, as MLIR's `OpBuilder`. Passes that place ops build through
//! it; their own helpers (lower-ukernels' `B`, convert-to-llvm's `Cv`, the hidden bodies
//! of linalg's named ops, convert-linalg-to-loops) are conveniences over it (constants,
//! loops, compares in one call), as MLIR's `ImplicitLocOpBuilder` and the dialects' builder
//! functions are. `Ir::create_op` alone makes a detached op (a function or global to be
//! placed later, MLIR's `Operation::create`).

use crate::{intern_name, Attribute, BlockId, Ir, OpId, OpSpec, Type, Value};

/// Where created operations go.
#[derive(Clone, Copy, Debug)]
pub enum InsertPoint {
    /// Appended to the block.
    End(BlockId),
    /// Inserted before the operation.
    Before(OpId),
}

pub struct OpBuilder<'a> {
    pub ir: &'a mut Ir,
    pub at: InsertPoint,
    /// The location of what is created.
    pub loc: Attribute,
}

impl<'a> OpBuilder<'a> {
    /// Operations appended to `block`, at `loc`.
    pub fn at_end(ir: &'a mut Ir, block: BlockId, loc: Attribute) -> OpBuilder<'a> {
        OpBuilder {
            ir,
            at: InsertPoint::End(block),
            loc,
        }
    }
    /// Operations inserted before `op`, at its location.
    pub fn before(ir: &'a mut Ir, op: OpId) -> OpBuilder<'a> {
        let loc = ir.loc(op);
        OpBuilder {
            ir,
            at: InsertPoint::Before(op),
            loc,
        }
    }
    /// Create the operation `spec` describes at the insertion point.
    pub fn insert(&mut self, spec: OpSpec) -> OpId {
        let o = self.ir.create_op(spec);
        self.place(o);
        o
    }
    /// Put the detached operation `o` (e.g. a clone) at the insertion point.
    pub fn place(&mut self, o: OpId) {
        match self.at {
            InsertPoint::End(b) => self.ir.append_op(b, o),
            InsertPoint::Before(x) => self.ir.insert_before(x, o),
        }
    }
    /// `name(operands) {props} : results`, no regions.
    pub fn create(
        &mut self,
        name: &str,
        operands: Vec<Value>,
        results: Vec<Type>,
        props: &[(&str, Attribute)],
    ) -> OpId {
        let mut s = OpSpec::new(intern_name(name), self.loc)
            .operands(operands)
            .results(results);
        for (k, v) in props {
            s = s.prop(k, *v);
        }
        self.insert(s)
    }
    /// The one result of `name(operands) {props} : ty`.
    pub fn value(
        &mut self,
        name: &str,
        operands: Vec<Value>,
        ty: Type,
        props: &[(&str, Attribute)],
    ) -> Value {
        let o = self.create(name, operands, vec![ty], props);
        self.ir.result(o, 0)
    }
    /// `arith.constant k : index`.
    pub fn index(&mut self, k: i64) -> Value {
        self.value(
            "arith.constant",
            vec![],
            Type::index(),
            &[("value", Attribute::index(k))],
        )
    }
}
