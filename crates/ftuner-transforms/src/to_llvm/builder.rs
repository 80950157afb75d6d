//! Building `llvm` dialect ops at the conversion's insertion point: the generic builder,
//! constants (index constants remembered, so index arithmetic folds at conversion time),
//! blocks and branches, compares, aggregate fields, calls, address arithmetic, loads and
//! stores, and vector splats.

use super::types::ptr;
use super::{LlvmRewriter, R};
use ftuner_dialects::ops;
use ftuner_ir::{intern_name, Attribute, BlockId, OpId, OpSpec, Type, Value};

impl LlvmRewriter<'_> {
    pub(super) fn emit(
        &mut self,
        name: &str,
        operands: Vec<Value>,
        results: Vec<Type>,
        props: Vec<(&str, Attribute)>,
        succ: Vec<BlockId>,
    ) -> OpId {
        let mut s = OpSpec::new(intern_name(name), self.loc)
            .operands(operands)
            .results(results);
        for (k, v) in props {
            s = s.prop(k, v);
        }
        s.successors = succ;
        ftuner_ir::OpBuilder::at_end(&mut *self.ir, self.cur, self.loc).insert(s)
    }
    pub(super) fn val(&mut self, name: &str, operands: Vec<Value>, ty: Type) -> Value {
        let o = self.emit(name, operands, vec![ty], vec![], vec![]);
        self.ir.result(o, 0)
    }
    /// The `llvm` op `name` of these (converted) operands, result type and properties, at
    /// the insertion point: its result.
    pub fn valp(
        &mut self,
        name: &str,
        operands: Vec<Value>,
        ty: Type,
        props: Vec<(&str, Attribute)>,
    ) -> Value {
        let o = self.emit(name, operands, vec![ty], props, vec![]);
        self.ir.result(o, 0)
    }
    pub(super) fn cst(&mut self, value: Attribute, ty: Type) -> Value {
        self.valp(
            ops::llvm::MlirConstantOp::NAME,
            vec![],
            ty,
            vec![("value", value)],
        )
    }
    pub(super) fn c64(&mut self, k: i64) -> Value {
        let v = self.cst(Attribute::i64(k), Type::i64());
        self.consts.insert(v, k);
        v
    }
    pub(super) fn known(&self, v: Value) -> Option<i64> {
        self.consts.get(&v).copied()
    }
    /// The value of `c` when an `llvm.mlir.constant` defines it.
    pub(super) fn constant_attr(&self, c: Value) -> Option<Attribute> {
        self.ir
            .defining_op(c)
            .filter(|d| self.ir.name(*d) == ops::llvm::MlirConstantOp::NAME)
            .and_then(|d| self.ir.attr(d, "value"))
    }
    pub(super) fn add(&mut self, a: Value, b: Value) -> Value {
        match (self.known(a), self.known(b)) {
            (Some(0), _) => b,
            (_, Some(0)) => a,
            (Some(x), Some(y)) => self.c64(x.wrapping_add(y)),
            _ => self.val(ops::llvm::AddOp::NAME, vec![a, b], Type::i64()),
        }
    }
    pub(super) fn mul(&mut self, a: Value, b: Value) -> Value {
        match (self.known(a), self.known(b)) {
            (Some(1), _) => b,
            (_, Some(1)) => a,
            (Some(x), Some(y)) => self.c64(x.wrapping_mul(y)),
            _ => self.val(ops::llvm::MulOp::NAME, vec![a, b], Type::i64()),
        }
    }
    pub(super) fn block(&mut self, args: &[Type]) -> BlockId {
        self.ir.append_block(self.region, args)
    }
    /// The entry block of `op`'s (first) region.
    pub(super) fn body(&self, op: OpId) -> R<BlockId> {
        self.ir
            .regions_of(op)
            .first()
            .and_then(|r| self.ir.region_entry(*r))
            .ok_or((op, "has no body".into()))
    }
    pub(super) fn br(&mut self, dest: BlockId, args: Vec<Value>) {
        self.emit(ops::llvm::BrOp::NAME, args, vec![], vec![], vec![dest]);
    }
    pub(super) fn cond_br(
        &mut self,
        c: Value,
        t: BlockId,
        targs: Vec<Value>,
        f: BlockId,
        fargs: Vec<Value>,
    ) {
        let seg = [1, targs.len() as i32, fargs.len() as i32];
        let mut ops = vec![c];
        ops.extend(targs);
        ops.extend(fargs);
        self.emit(
            ops::llvm::CondBrOp::NAME,
            ops,
            vec![],
            vec![("operandSegmentSizes", Attribute::dense_i32_array(&seg))],
            vec![t, f],
        );
    }
    /// `llvm.return` of `values` (none: a void return).
    pub(super) fn llvm_return(&mut self, values: Vec<Value>) {
        self.emit(ops::llvm::ReturnOp::NAME, values, vec![], vec![], vec![]);
    }
    pub(super) fn icmp(&mut self, pred: i64, a: Value, b: Value) -> Value {
        self.valp(
            ops::llvm::IcmpOp::NAME,
            vec![a, b],
            Type::i1(),
            vec![("predicate", Attribute::i64(pred))],
        )
    }
    pub(super) fn extract(&mut self, agg: Value, pos: &[i64], ty: Type) -> Value {
        self.valp(
            ops::llvm::ExtractvalueOp::NAME,
            vec![agg],
            ty,
            vec![("position", Attribute::dense_i64_array(pos))],
        )
    }
    pub(super) fn insert(&mut self, agg: Value, v: Value, pos: &[i64]) -> Value {
        let ty = self.ir.value_type(agg);
        self.valp(
            ops::llvm::InsertvalueOp::NAME,
            vec![agg, v],
            ty,
            vec![("position", Attribute::dense_i64_array(pos))],
        )
    }
    /// `llvm.call @callee(args)` of an external function of type `fty`, declared in the
    /// module.
    pub(super) fn call(
        &mut self,
        callee: &str,
        fty: &str,
        args: Vec<Value>,
        ret: Option<Type>,
    ) -> Option<Value> {
        self.decls.insert(callee.to_string(), fty.to_string());
        self.call_sym(callee, args, ret)
    }
    /// `llvm.call @callee(args)` of a function defined or declared elsewhere.
    pub(super) fn call_sym(
        &mut self,
        callee: &str,
        args: Vec<Value>,
        ret: Option<Type>,
    ) -> Option<Value> {
        let n = args.len() as i32;
        let o = self.emit(
            ops::llvm::CallOp::NAME,
            args,
            ret.into_iter().collect(),
            vec![
                ("callee", Attribute::symbol_ref(callee)),
                ("operandSegmentSizes", Attribute::dense_i32_array(&[n, 0])),
                ("op_bundle_sizes", Attribute::dense_i32_array(&[])),
            ],
            vec![],
        );
        self.ir.results(o).first().copied()
    }
    /// The address of global `name`.
    pub(super) fn address_of(&mut self, name: &str) -> Value {
        self.valp(
            ops::llvm::MlirAddressofOp::NAME,
            vec![],
            ptr(),
            vec![("global_name", Attribute::symbol_ref(name))],
        )
    }
    /// `base + offset` elements of `elem` (`ty`: a pointer, or a vector of them when
    /// `offset` is a vector).
    pub(super) fn gep(&mut self, base: Value, offset: Value, ty: Type, elem: Type) -> Value {
        self.valp(
            ops::llvm::GetelementptrOp::NAME,
            vec![base, offset],
            ty,
            vec![
                ("elem_type", Attribute::type_attr(elem)),
                (
                    "rawConstantIndices",
                    Attribute::dense_i32_array(&[i32::MIN]),
                ),
            ],
        )
    }
    pub(super) fn load(&mut self, p: Value, ty: Type, align: i64) -> Value {
        self.valp(
            ops::llvm::LoadOp::NAME,
            vec![p],
            ty,
            vec![("alignment", Attribute::i64(align))],
        )
    }
    pub(super) fn store(&mut self, v: Value, p: Value, align: i64) {
        self.emit(
            ops::llvm::StoreOp::NAME,
            vec![v, p],
            vec![],
            vec![("alignment", Attribute::i64(align))],
            vec![],
        );
    }
    /// The float constant `x` of `ty`, splatted when `ty` is a vector.
    pub(super) fn float_of(&mut self, x: f64, ty: Type) -> Value {
        let c = self.cst(Attribute::float(x, ty.element_type()), ty.element_type());
        if ty.is_vector() {
            self.splat(c, ty)
        } else {
            c
        }
    }
    /// Scalar `x` in every lane of the 1-d vector type `ty`.
    pub(super) fn splat(&mut self, x: Value, ty: Type) -> Value {
        let n = ty.shape().and_then(|s| s.first()).copied().unwrap_or(1) as usize;
        let p = self.val(ops::llvm::MlirPoisonOp::NAME, vec![], ty);
        let z = self.cst(Attribute::int(0, Type::i32()), Type::i32());
        let v = self.val(ops::llvm::InsertelementOp::NAME, vec![p, x, z], ty);
        self.valp(
            ops::llvm::ShufflevectorOp::NAME,
            vec![v, p],
            ty,
            vec![("mask", Attribute::dense_i32_array(&vec![0; n]))],
        )
    }
}
