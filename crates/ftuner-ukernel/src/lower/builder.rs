//! `B`'s helpers: the ops the lowering creates most (constants, loops, ifs, comparisons,
//! index tables, yields), each in one call.

use super::{Blocking, B};
use ftuner_dialects::ops;
use ftuner_dialects::scf::PARALLEL_ATTR;
use ftuner_ir::{intern_name, Attribute, BlockId, Ir, OpId, OpSpec, Type, Value};

impl<'a> B<'a> {
    /// A builder with no register-level state.
    pub(crate) fn new(ir: &'a mut Ir, loc: Attribute) -> B<'a> {
        B {
            ir,
            loc,
            vector: None,
            kblock: None,
            packed: None,
            klast: None,
            blocking: Blocking::default(),
            apacked: None,
            zero_init: false,
            kfirst: None,
            parallel_n: true,
            rows_outside: false,
            tile_epilogue: None,
        }
    }
    pub(crate) fn op(
        &mut self,
        block: BlockId,
        name: &str,
        operands: Vec<Value>,
        results: Vec<Type>,
        props: Vec<(&str, Attribute)>,
        regions: usize,
    ) -> OpId {
        let mut s = OpSpec::new(intern_name(name), self.loc)
            .operands(operands)
            .results(results)
            .regions(regions);
        for (k, v) in props {
            s = s.prop(k, v);
        }
        let o = ftuner_ir::OpBuilder::at_end(&mut *self.ir, block, self.loc).insert(s);
        if matches!(
            name,
            ops::tensor::ExtractSliceOp::NAME | ops::tensor::InsertSliceOp::NAME
        ) {
            // Tiles of the iteration space this lowering sized (after its run-time
            // shape check): in bounds by construction, bufferization checks nothing.
            self.ir.set_attr(
                o,
                ftuner_dialects::tensor::IN_BOUNDS,
                Some(Attribute::unit()),
            );
        }
        o
    }
    pub(crate) fn val(
        &mut self,
        block: BlockId,
        name: &str,
        operands: Vec<Value>,
        ty: Type,
        props: Vec<(&str, Attribute)>,
    ) -> Value {
        let o = self.op(block, name, operands, vec![ty], props, 0);
        self.ir.result(o, 0)
    }
    /// `tensor.dim %v, %d` (an index).
    pub(crate) fn dim(&mut self, block: BlockId, v: Value, d: Value) -> Value {
        self.val(
            block,
            ops::tensor::DimOp::NAME,
            vec![v, d],
            Type::index(),
            vec![],
        )
    }
    /// An index op of two operands (`arith.minsi`, `arith.maxsi`, ...).
    pub(crate) fn index_op(&mut self, block: BlockId, name: &str, a: Value, b: Value) -> Value {
        self.val(block, name, vec![a, b], Type::index(), vec![])
    }
    /// The value of index `v` when an `arith.constant` defines it.
    pub(crate) fn const_index(&self, v: Value) -> Option<i64> {
        let d = self.ir.defining_op(v)?;
        (self.ir.name(d) == ops::arith::ConstantOp::NAME)
            .then(|| self.ir.attr(d, "value").and_then(|a| a.as_i64()))
            .flatten()
    }
    pub(crate) fn index(&mut self, block: BlockId, v: i64) -> Value {
        self.val(
            block,
            ops::arith::ConstantOp::NAME,
            vec![],
            Type::index(),
            vec![("value", Attribute::index(v))],
        )
    }
    /// Mark loop `f` `ftuner.parallel` (when the lowering marks loops): its iterations
    /// write disjoint parts of its result.
    pub(crate) fn mark_parallel(&mut self, f: OpId) {
        if self.blocking.parallel {
            self.ir.set_attr(f, PARALLEL_ATTR, Some(Attribute::unit()));
        }
    }
    /// `scf.for %iv = lb to ub step st iter_args(inits)` appended to `block`: the op, its
    /// body block, the induction variable and the iteration arguments.
    pub(crate) fn for_loop(
        &mut self,
        block: BlockId,
        (lb, ub, step): (Value, Value, Value),
        inits: Vec<Value>,
    ) -> (OpId, BlockId, Value, Vec<Value>) {
        let tys: Vec<Type> = inits.iter().map(|v| self.ir.value_type(*v)).collect();
        let mut ops = vec![lb, ub, step];
        ops.extend(inits);
        let f = self.op(block, ops::scf::ForOp::NAME, ops, tys.clone(), vec![], 1);
        let r = self.ir.regions_of(f)[0];
        let mut btys = vec![Type::index()];
        btys.extend(tys);
        let body = self.ir.append_block(r, &btys);
        let args = self.ir.block_args(body).to_vec();
        (f, body, args[0], args[1..].to_vec())
    }
    /// `scf.if %cond -> (ty)` appended to `block`, each branch built by its closure into
    /// its block, yielding what the closure returns: the run-time choice between two
    /// versions of a nest.
    pub(crate) fn if_else(
        &mut self,
        block: BlockId,
        cond: Value,
        ty: Type,
        then: impl FnOnce(&mut B<'a>, BlockId) -> Value,
        els: impl FnOnce(&mut B<'a>, BlockId) -> Value,
    ) -> Value {
        let iff = self.op(block, ops::scf::IfOp::NAME, vec![cond], vec![ty], vec![], 2);
        let (tr, er) = (self.ir.regions_of(iff)[0], self.ir.regions_of(iff)[1]);
        let tb = self.ir.append_block(tr, &[]);
        let r1 = then(self, tb);
        self.yield_(tb, ops::scf::YieldOp::NAME, vec![r1]);
        let eb = self.ir.append_block(er, &[]);
        let r2 = els(self, eb);
        self.yield_(eb, ops::scf::YieldOp::NAME, vec![r2]);
        self.ir.result(iff, 0)
    }
    /// What `f` makes of `vals` in `block`, inside the kc loop only in its last block
    /// (`scf.if` on the block's flag yielding `vals` unchanged otherwise): where a patch's
    /// epilogue runs.
    pub(crate) fn in_last_k_block(
        &mut self,
        block: BlockId,
        vals: &[Value],
        f: impl FnOnce(&mut B<'a>, BlockId) -> Vec<Value>,
    ) -> Vec<Value> {
        let Some(last) = self.klast else {
            return f(self, block);
        };
        let tys: Vec<Type> = vals.iter().map(|v| self.ir.value_type(*v)).collect();
        let iff = self.op(block, ops::scf::IfOp::NAME, vec![last], tys, vec![], 2);
        let (tr, er) = (self.ir.regions_of(iff)[0], self.ir.regions_of(iff)[1]);
        let tb = self.ir.append_block(tr, &[]);
        let done = f(self, tb);
        self.yield_(tb, ops::scf::YieldOp::NAME, done);
        let eb = self.ir.append_block(er, &[]);
        self.yield_(eb, ops::scf::YieldOp::NAME, vals.to_vec());
        self.ir.results(iff).to_vec()
    }
    /// In the body `fb` of a kc loop at block start `k0` (blocks of `step`, K = `kext`):
    /// the block `(dk, k0, min(step, kext - k0))` the tiles read (`step` itself when it is
    /// a constant that divides a constant `kext`: every block whole, its size static in the
    /// tiles' slices), with its flags — first
    /// (`k0 == 0`: where a zero-initialised C is stored, not added to) when `first`, last
    /// (`k0 + ks >= kext`: where the epilogue runs) when `last`.
    pub(crate) fn enter_k_block(
        &mut self,
        fb: BlockId,
        dk: u32,
        (k0, step, kext): (Value, Value, Value),
        (first, last): (bool, bool),
    ) {
        let whole = match (self.const_index(step), self.const_index(kext)) {
            (Some(st), Some(k)) => st > 0 && k % st == 0,
            _ => false,
        };
        let ks = if whole {
            step
        } else {
            let left = self.ibin(fb, ops::arith::SubiOp::NAME, kext, k0);
            self.index_op(fb, ops::arith::MinsiOp::NAME, step, left)
        };
        self.kblock = Some((dk, k0, ks));
        if first {
            let c0 = self.index(fb, 0);
            self.kfirst = Some(self.cmpi(fb, 0, k0, c0));
        }
        if last {
            let end = self.ibin(fb, ops::arith::AddiOp::NAME, k0, ks);
            self.klast = Some(self.cmpi(fb, 5, end, kext));
        }
    }
    /// `arith.cmpi` with MLIR's predicate number (4 sgt, 5 sge, ...).
    pub(crate) fn cmpi(&mut self, block: BlockId, pred: i64, a: Value, b: Value) -> Value {
        self.val(
            block,
            ops::arith::CmpiOp::NAME,
            vec![a, b],
            Type::i1(),
            vec![("predicate", Attribute::i64(pred))],
        )
    }
    /// A constant `tensor<shape x index>` (a plan table).
    pub(crate) fn index_table(
        &mut self,
        block: BlockId,
        shape: Vec<i64>,
        values: Vec<ftuner_ir::Scalar>,
    ) -> Value {
        let tty = Type::tensor(shape, Type::index());
        self.val(
            block,
            ops::arith::ConstantOp::NAME,
            vec![],
            tty,
            vec![("value", Attribute::dense(tty, values))],
        )
    }
    /// A floating-point zero of type `elem`.
    pub(crate) fn fzero(&mut self, block: BlockId, elem: Type) -> Value {
        self.val(
            block,
            ops::arith::ConstantOp::NAME,
            vec![],
            elem,
            vec![("value", Attribute::float(0.0, elem))],
        )
    }
    pub(crate) fn ibin(&mut self, block: BlockId, name: &str, a: Value, b: Value) -> Value {
        let ov = Attribute::dialect("arith", "overflow<none>");
        let props = if matches!(
            name,
            ops::arith::AddiOp::NAME | ops::arith::SubiOp::NAME | ops::arith::MuliOp::NAME
        ) {
            vec![("overflowFlags", ov)]
        } else {
            vec![]
        };
        self.val(block, name, vec![a, b], Type::index(), props)
    }
    pub(crate) fn yield_(&mut self, block: BlockId, name: &str, vals: Vec<Value>) {
        self.op(block, name, vals, vec![], vec![], 0);
    }
}
