//! Run-time bounds checks the lowering emits where a bound is known only at run time:
//! a `cf.assert` before the access, which the interpreter evaluates and `convert-to-llvm`
//! turns into a failed check reported as a value (ftuner_codegen::status), never an
//! out-of-bounds access. The verifier rejects what is wrong statically
//! (`ftuner_dialects::tensor::verify_slice_bounds`); these checks cover the rest.
//!
//! Slices our own lowerings make (tiles of an iteration space they sized themselves) carry
//! [`IN_BOUNDS`] and are not checked again.

use ftuner_dialects::ops;
use ftuner_ir::{Attribute, BlockId, Ir, OpBuilder, OpId, Type, Value, DYNAMIC};

pub use ftuner_dialects::tensor::IN_BOUNDS;

/// Marks a `memref.dealloc` of the input program ([`guard_input`]): convert-to-llvm
/// lowers it to `ftuner_rt_release`, which fails a run-time check for a block that is not
/// live (a double free, an argument's buffer) and keeps the block until the call ends.
pub const CHECKED_DEALLOC: &str = "ftuner.checked_dealloc";

/// Marks a memory access of the input program in a function that deallocates buffers
/// itself ([`guard_input`]): convert-to-llvm checks first that the buffer was not
/// deallocated (`ftuner_rt_released`; the block is quarantined, so the access would read
/// memory the process owns, but stale), as the interpreter refuses such an access.
/// `linalg-to-loops` passes it from a structured op on buffers to the loads and stores it
/// makes.
pub const CHECK_LIVE: &str = "ftuner.check_live";

/// `arith.cmpi` predicates.
const EQ: i64 = 0;
const SLT: i64 = 2;
const SLE: i64 = 3;
const SGT: i64 = 4;
const SGE: i64 = 5;
const ULT: i64 = 6;
const ULE: i64 = 7;

/// Emits check arithmetic through an [`OpBuilder`], collecting conditions that must all
/// hold.
pub(crate) struct Checks<'a> {
    b: OpBuilder<'a>,
    conds: Vec<Value>,
}

impl<'a> Checks<'a> {
    /// Checks appended to block `block`.
    pub(crate) fn new(ir: &'a mut Ir, block: BlockId, loc: Attribute) -> Checks<'a> {
        Checks {
            b: OpBuilder::at_end(ir, block, loc),
            conds: vec![],
        }
    }
    /// Checks inserted before `op`, at its location.
    pub(crate) fn before(ir: &'a mut Ir, op: OpId) -> Checks<'a> {
        Checks {
            b: OpBuilder::before(ir, op),
            conds: vec![],
        }
    }
    fn op(&mut self, name: &str, operands: Vec<Value>, ty: Type) -> Value {
        self.b.value(name, operands, ty, &[])
    }
    fn index(&mut self, k: i64) -> Value {
        self.b.index(k)
    }
    fn cmp(&mut self, pred: i64, a: Value, b: Value) -> Value {
        self.b.value(
            ops::arith::CmpiOp::NAME,
            vec![a, b],
            Type::i1(),
            &[("predicate", Attribute::i64(pred))],
        )
    }
    fn and(&mut self, a: Value, b: Value) -> Value {
        self.op(ops::arith::AndiOp::NAME, vec![a, b], Type::i1())
    }
    fn or(&mut self, a: Value, b: Value) -> Value {
        self.op(ops::arith::OriOp::NAME, vec![a, b], Type::i1())
    }
    fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        let ty = self.b.ir.value_type(a);
        self.op(ops::arith::SelectOp::NAME, vec![c, a, b], ty)
    }
    /// Dim `i` of buffer (or tensor) `m`: a constant when static.
    fn dim(&mut self, m: Value, i: usize) -> Value {
        let ty = self.b.ir.value_type(m);
        let dim_op = if ty.is_tensor() {
            ops::tensor::DimOp::NAME
        } else {
            ops::memref::DimOp::NAME
        };
        match ty.shape().and_then(|s| s.get(i)).copied() {
            Some(d) if d != DYNAMIC => self.index(d),
            _ => {
                let c = self.index(i as i64);
                self.op(dim_op, vec![m, c], Type::index())
            }
        }
    }
    /// `x` (static, or the next of `dyns`) as a value; whether it was dynamic.
    fn param(&mut self, x: i64, dyns: &mut std::slice::Iter<'_, Value>) -> Option<(Value, bool)> {
        if x == DYNAMIC {
            Some((*dyns.next()?, true))
        } else {
            Some((self.index(x), false))
        }
    }

    /// That the parts (a value where dynamic, else the static number) add up to `total`
    /// (a `tensor.pad`'s source size and padding against its static result dim).
    pub(crate) fn sum_equals(&mut self, parts: &[(i64, Option<Value>)], total: i64) {
        let mut sum: Option<Value> = None;
        for (k, v) in parts {
            let x = match v {
                Some(v) => *v,
                None => self.index(*k),
            };
            sum = Some(match sum {
                Some(s) => self.op(ops::arith::AddiOp::NAME, vec![s, x], Type::index()),
                None => x,
            });
        }
        if let Some(s) = sum {
            let t = self.index(total);
            let ok = self.cmp(0, s, t);
            self.conds.push(ok);
        }
    }

    /// [`Checks::slice`] with the static arrays of slice op `op` (`static_offsets`,
    /// `static_sizes`, `static_strides`).
    pub(crate) fn slice_of(&mut self, m: Value, op: OpId, dyns: &[Value]) {
        let g = |ir: &Ir, a: &str| {
            ir.attr(op, a)
                .and_then(|x| x.as_dense_i64s())
                .unwrap_or_default()
        };
        let (offs, sizes, strides) = (
            g(self.b.ir, "static_offsets"),
            g(self.b.ir, "static_sizes"),
            g(self.b.ir, "static_strides"),
        );
        self.slice(m, &offs, &sizes, &strides, dyns)
    }

    /// The slice of `m` (offsets, sizes, strides: static arrays with `DYNAMIC` where the
    /// next of `dyns` is meant, in that order) lies inside it, for every dim where some
    /// bound is dynamic: `0 <= offset`, `0 <= size`, and either `size == 0` and
    /// `offset <= dim`, or `offset < dim` and `0 <= offset + (size - 1) * stride < dim`.
    /// Nothing when the operands do not match the arrays (the verifier's case).
    pub(crate) fn slice(
        &mut self,
        m: Value,
        offs: &[i64],
        sizes: &[i64],
        strides: &[i64],
        dyns: &[Value],
    ) {
        let (mut o_it, mut s_it, mut t_it);
        let n_off = offs.iter().filter(|x| **x == DYNAMIC).count();
        let n_size = sizes.iter().filter(|x| **x == DYNAMIC).count();
        if dyns.len() < n_off + n_size {
            return;
        }
        o_it = dyns[..n_off].iter();
        s_it = dyns[n_off..n_off + n_size].iter();
        t_it = dyns[n_off + n_size..].iter();
        let shape = self.b.ir.value_type(m).shape().unwrap_or(&[]).to_vec();
        if [offs.len(), sizes.len(), strides.len()] != [shape.len(); 3] {
            return;
        }
        for i in 0..shape.len() {
            let Some((o, od)) = self.param(offs[i], &mut o_it) else {
                return;
            };
            let Some((s, sd)) = self.param(sizes[i], &mut s_it) else {
                return;
            };
            let Some((t, td)) = self.param(strides[i], &mut t_it) else {
                return;
            };
            if !(od || sd || td || shape[i] == DYNAMIC) {
                continue; // static: the verifier's
            }
            let d = self.dim(m, i);
            let zero = self.index(0);
            let one = self.index(1);
            let o_ok = self.cmp(SGE, o, zero);
            let s_ok = self.cmp(SGE, s, zero);
            // Empty: may start anywhere up to the end.
            let empty = self.cmp(EQ, s, zero);
            let o_le = self.cmp(SLE, o, d);
            let empty_ok = self.and(empty, o_le);
            // Not empty: first and last inside. `offset + (size - 1) * stride` may wrap
            // (a stride of 2^63 - 1 brings the last element back near the first), so the
            // steps are counted instead: `size - 1 <= (dim - 1 - offset) / stride` for a
            // positive stride, `size - 1 <= offset / -stride` for a negative one (unsigned:
            // `0 - i64::MIN` is 2^63), any size for a zero stride (the last is the first).
            let o_lt = self.cmp(SLT, o, d);
            let s1 = self.op(ops::arith::SubiOp::NAME, vec![s, one], Type::index());
            let pos = self.cmp(SGT, t, zero);
            let t_zero = self.cmp(EQ, t, zero);
            let d1 = self.op(ops::arith::SubiOp::NAME, vec![d, one], Type::index());
            let room_up = self.op(ops::arith::SubiOp::NAME, vec![d1, o], Type::index());
            let room = self.select(pos, room_up, o);
            let neg_t = self.op(ops::arith::SubiOp::NAME, vec![zero, t], Type::index());
            let step = self.select(pos, t, neg_t);
            let step = self.select(t_zero, one, step);
            let steps = self.op(ops::arith::DivuiOp::NAME, vec![room, step], Type::index());
            let fit = self.cmp(ULE, s1, steps);
            let l_ok = self.or(t_zero, fit);
            let full_ok = self.and(o_lt, l_ok);
            let fits = self.or(empty_ok, full_ok);
            let both = self.and(o_ok, s_ok);
            let ok = self.and(both, fits);
            self.conds.push(ok);
        }
    }

    /// Index `x` lies in `0 .. dim` (`idx < dim` unsigned: a negative index fails too), or
    /// with `span`, `x .. x + span` does.
    fn index_in(&mut self, m: Value, i: usize, x: Value, span: Option<i64>) {
        let d = self.dim(m, i);
        match span {
            None => {
                let c = self.cmp(ULT, x, d);
                self.conds.push(c);
            }
            Some(n) => {
                let zero = self.index(0);
                let lo = self.cmp(SGE, x, zero);
                let k = self.index(n);
                let end = self.op(ops::arith::AddiOp::NAME, vec![x, k], Type::index());
                let hi = self.cmp(SLE, end, d);
                let ok = self.and(lo, hi);
                self.conds.push(ok);
            }
        }
    }

    /// The `cf.assert` of every condition collected (none: nothing emitted).
    pub(crate) fn assert(mut self, msg: &str) {
        let conds = std::mem::take(&mut self.conds);
        let Some(first) = conds.first().copied() else {
            return;
        };
        let mut all = first;
        for c in &conds[1..] {
            all = self.and(all, *c);
        }
        self.b.create(
            ops::cf::AssertOp::NAME,
            vec![all],
            vec![],
            &[("msg", Attribute::string(msg))],
        );
    }
}

/// [`CHECK_LIVE`] on every memory access to a buffer in the functions holding one of
/// `deallocs` (only there: programs on tensors, and programs that leave deallocation to
/// the compiler, pay nothing).
fn mark_accesses_after_deallocs(ir: &mut Ir, deallocs: &[OpId]) {
    let mut funcs: Vec<OpId> = vec![];
    for d in deallocs {
        let mut p = ir.parent_op(*d);
        while let Some(o) = p {
            if ir.name(o) == ops::func::FuncOp::NAME {
                if !funcs.contains(&o) {
                    funcs.push(o);
                }
                break;
            }
            p = ir.parent_op(o);
        }
    }
    let mut marked = vec![];
    for f in funcs {
        ir.walk_pre(f, &mut |o| {
            let name = ir.name(o);
            let access = matches!(
                name,
                ops::memref::LoadOp::NAME
                    | ops::memref::StoreOp::NAME
                    | ops::memref::CopyOp::NAME
                    | ops::memref::DimOp::NAME
                    | ops::vector::TransferReadOp::NAME
                    | ops::vector::TransferWriteOp::NAME
            ) || (name.starts_with("linalg.")
                && ir.operands(o).iter().any(|v| ir.value_type(*v).is_memref()));
            if access {
                marked.push(o);
            }
        });
    }
    for o in marked {
        ir.set_attr(o, CHECK_LIVE, Some(Attribute::unit()));
    }
}

/// What the tools that run the IR they read (ftuner-run, ftuner-translate, the Python
/// package) do to it first: the input's own memory accesses are checked at run time
/// (`memref.load` / `store` and, outside structured op bodies, `tensor.extract` / `insert`
/// indices, 1-d `vector.transfer_read` / `write` windows, dynamic `memref.subview`s), as
/// upstream's `-generate-runtime-verification` does, and its
/// promises that slices are in bounds ([`IN_BOUNDS`]) are dropped; its deallocations are
/// checked ([`CHECKED_DEALLOC`]). The accesses ftuner's own lowerings make later are in
/// bounds by construction and are not checked.
pub fn guard_input(ir: &mut Ir, top: OpId) {
    ftuner_dialects::tensor::forget_in_bounds(ir, top);
    // GPU kernels have no failure protocol (convert-to-llvm refuses assertions in them):
    // their accesses are not instrumented.
    let mut gpu = vec![];
    ir.walk_pre(top, &mut |o| {
        if ir.name(o) == ops::gpu::ModuleOp::NAME {
            gpu.push(o);
        }
    });
    let mut accesses = vec![];
    let mut deallocs = vec![];
    ir.walk_pre(top, &mut |o| {
        if gpu.iter().any(|g| ir.is_ancestor(*g, o)) {
            return;
        }
        if ir.name(o) == ops::memref::DeallocOp::NAME {
            deallocs.push(o);
        }
        if matches!(
            ir.name(o),
            ops::memref::LoadOp::NAME
                | ops::memref::StoreOp::NAME
                | ops::vector::TransferReadOp::NAME
                | ops::vector::TransferWriteOp::NAME
                | ops::memref::SubviewOp::NAME
        ) {
            accesses.push(o);
        }
        // Element accesses on tensors: `bufferize` makes them unchecked `memref.load` /
        // `store` (ftuner's own lowerings emit in-bounds ones in their inner loops).
        // Inside a structured op's body the conversion to loops checks them. (A
        // `memref.load` in a body is checked like any other: the interpreter's bodies
        // evaluate `cf.assert`.)
        if matches!(
            ir.name(o),
            ops::tensor::ExtractOp::NAME | ops::tensor::InsertOp::NAME
        ) && !in_body(ir, o)
        {
            accesses.push(o);
        }
    });
    mark_accesses_after_deallocs(ir, &deallocs);
    for o in deallocs {
        ir.set_attr(o, CHECKED_DEALLOC, Some(Attribute::unit()));
    }
    for o in accesses {
        let msg = format!("{}: out of bounds", what(ir, o));
        let name = ir.name(o);
        let ops = ir.operands(o).to_vec();
        let mut ck = Checks::before(ir, o);
        match name {
            ops::memref::LoadOp::NAME
            | ops::memref::StoreOp::NAME
            | ops::tensor::ExtractOp::NAME
            | ops::tensor::InsertOp::NAME => {
                let first = usize::from(
                    name == ops::memref::StoreOp::NAME || name == ops::tensor::InsertOp::NAME,
                );
                let Some(&m) = ops.get(first) else { continue };
                for (i, x) in ops[first + 1..].iter().enumerate() {
                    ck.index_in(m, i, *x, None);
                }
            }
            ops::memref::SubviewOp::NAME => {
                if let Some((&m, dyns)) = ops.split_first() {
                    ck.slice_of(m, o, dyns);
                }
            }
            _ => {
                let read = name == ops::vector::TransferReadOp::NAME;
                let (src, vec_ty) = if read {
                    (0, ck.b.ir.value_type(ck.b.ir.result(o, 0)))
                } else {
                    (1, ck.b.ir.value_type(ops[0]))
                };
                let segs =
                    ck.b.ir
                        .attr(o, "operandSegmentSizes")
                        .and_then(|a| a.as_dense_i64s())
                        .unwrap_or_default();
                let n_idx = segs.get(if read { 1 } else { 2 }).copied().unwrap_or(0) as usize;
                let along =
                    ck.b.ir
                        .attr(o, "permutation_map")
                        .and_then(|a| a.as_affine_map().cloned())
                        .and_then(|m| match m.results.as_slice() {
                            [ftuner_ir::AffineExpr::Dim(k)] => Some(*k as usize),
                            _ => None,
                        });
                let lanes = vec_ty.shape().filter(|s| s.len() == 1).map(|s| s[0]);
                let (Some(&m), Some(along), Some(lanes)) = (ops.get(src), along, lanes) else {
                    continue; // not what the conversion takes: it says so
                };
                if ops.len() < src + 1 + n_idx {
                    continue;
                }
                for (i, x) in ops[src + 1..src + 1 + n_idx].iter().enumerate() {
                    ck.index_in(m, i, *x, (i == along).then_some(lanes));
                }
            }
        }
        ck.assert(&msg);
    }
}

/// Whether `op` lies in the body of an op that is not control flow (a structured op's,
/// a `tensor.pad`'s or `tensor.generate`'s): what runs there is a scalar program.
fn in_body(ir: &Ir, op: OpId) -> bool {
    let mut p = ir.parent_op(op);
    while let Some(q) = p {
        let n = ir.name(q);
        let control = ["scf.", "affine.", "func.", "builtin."];
        if !control.iter().any(|c| n.starts_with(c)) {
            return true;
        }
        p = ir.parent_op(q);
    }
    false
}

/// `'name' op at file:line:col` for messages.
pub(crate) fn what(ir: &Ir, op: OpId) -> String {
    let name = ir.name(op);
    match ftuner_ir::diag::file_line_col(ir.loc(op)) {
        Some((f, l, c)) => format!("'{name}' op at {f}:{l}:{c}"),
        None => format!("'{name}' op"),
    }
}
