//! The run-time checks `convert-to-llvm` emits (`cf.assert` among them, each message a
//! constant global), and the protocol by which a failed one leaves the function
//! (`ftuner_codegen::status`, docs/codegen.md "Run-time checks"): the failure recorded
//! through `ftuner_rt_fail`, the function returning at once, its callers (and the caller
//! of a parallel loop) propagating it. Which functions may fail is a fixed point over the
//! call graph, so code that checks nothing pays nothing.

use super::types::{conv, llvm_ty};
use super::{LlvmRewriter, FAIL, FAILED, R};
use ftuner_dialects::ops;
use ftuner_ir::{intern_name, AttrKind, Attribute, BlockId, Ir, OpId, OpSpec, Type, Value};
use rustc_hash::{FxHashMap, FxHashSet};

/// The integer divisions: undefined for a zero divisor (and signed overflow), so the
/// conversion checks them at run time unless the divisor is a positive constant.
pub(super) const DIVISIONS: [&str; 7] = [
    ops::arith::DivsiOp::NAME,
    ops::arith::DivuiOp::NAME,
    ops::arith::RemsiOp::NAME,
    ops::arith::RemuiOp::NAME,
    ops::arith::FloordivsiOp::NAME,
    ops::arith::CeildivsiOp::NAME,
    ops::arith::CeildivuiOp::NAME,
];

impl LlvmRewriter<'_> {
    /// `cf.assert`: a run-time check of its condition.
    pub(super) fn cf_assert(&mut self, op: OpId) -> R<()> {
        let c = self.v(op, self.ir.operand(op, 0))?;
        let msg = self
            .ir
            .attr(op, "msg")
            .and_then(|a| a.as_str())
            .unwrap_or("assertion failed")
            .to_string();
        self.check(c, &msg);
        Ok(())
    }
    /// A run-time check: where `ok` is false, record the failure `msg` (prefixed with the
    /// location being converted) through `ftuner_rt_fail` and return from the function
    /// with undefined results (ftuner_codegen::status); conversion goes on where it holds.
    pub(super) fn check(&mut self, ok: Value, msg: &str) {
        let base = match ftuner_ir::diag::file_line_col(self.loc) {
            Some((f, l, c)) if !msg.contains(&format!("{f}:{l}:{c}")) => {
                format!("{f}:{l}:{c}: {msg}")
            }
            _ => msg.to_string(),
        };
        let text = if self.abort_on_failure {
            format!("run-time check failed: {base}\n\0")
        } else {
            format!("{base}\0")
        };
        let g = format!("__ftuner_fail_msg_{}", self.strings.len());
        self.strings.push((g.clone(), text.clone()));
        let cont = self.block(&[]);
        let fail = self.block(&[]);
        self.cond_br(ok, cont, vec![], fail, vec![]);
        self.cur = fail;
        let p = self.address_of(&g);
        if self.abort_on_failure {
            // No runtime to report to: the message on stderr (unbuffered), then abort.
            let fd = self.cst(Attribute::int(2, Type::i32()), Type::i32());
            let n = self.c64(text.len() as i64 - 1);
            self.call(
                "write",
                "i64 (i32, ptr, i64)",
                vec![fd, p, n],
                Some(Type::i64()),
            );
            self.call("abort", "void ()", vec![], None);
            self.emit(
                ops::llvm::UnreachableOp::NAME,
                vec![],
                vec![],
                vec![],
                vec![],
            );
        } else {
            self.call(FAIL, "void (ptr)", vec![p], None);
            self.return_undef();
        }
        self.cur = cont;
    }
    /// An integer division by a divisor not known to be safe: check at run time that it
    /// is not zero, and for a signed division not `MIN / -1` (MLIR leaves both undefined;
    /// x86 traps on them). Vectors are not checked.
    pub(super) fn division_check(&mut self, op: OpId, name: &str) -> R<()> {
        let olds = self.ir.operands(op).to_vec();
        let ty = self.ir.value_type(olds[1]);
        let Some(w) = ty.int_width().or_else(|| ty.is_index().then_some(64)) else {
            return Ok(());
        };
        let lty = conv(ty).unwrap_or(ty);
        let b = self.v(op, olds[1])?;
        let signed = name.ends_with("si");
        let k = self
            .known(b)
            .or_else(|| self.constant_attr(b).and_then(|a| a.as_i64()));
        if k.is_some_and(|k| k != 0 && !(signed && k == -1)) {
            return Ok(());
        }
        let a = self.v(op, olds[0])?;
        let zero = self.cst(Attribute::int(0, lty), lty);
        let mut ok = self.icmp(1, b, zero);
        // i1 included: `true` is both MIN and -1.
        if signed {
            let min = if w >= 64 {
                i64::MIN
            } else {
                -(1i64 << (w - 1))
            };
            let m1 = self.cst(Attribute::int(-1, lty), lty);
            let minv = self.cst(Attribute::int(min as i128, lty), lty);
            let not_m1 = self.icmp(1, b, m1);
            let not_min = self.icmp(1, a, minv);
            let fine = self.val(ops::llvm::OrOp::NAME, vec![not_m1, not_min], Type::i1());
            ok = self.val(ops::llvm::AndOp::NAME, vec![ok, fine], Type::i1());
        }
        let what = if signed {
            "division by zero or overflow"
        } else {
            "division by zero"
        };
        self.check(ok, &format!("'{name}' op {what}"));
        Ok(())
    }
    /// A loop step known only at run time must be positive (scf.for's contract; zero
    /// would loop forever, and the parallel trip count divides by it).
    pub(super) fn step_check(&mut self, step: Value) {
        if self.known(step).is_some_and(|k| k > 0) {
            return;
        }
        let zero = self.c64(0);
        let ok = self.icmp(4, step, zero);
        self.check(ok, "'scf.for' op step is not positive");
    }
    /// Whether an allocation of `sizes` elements of `eb` bytes can be made: no size
    /// negative, the product in bytes below 2^62 (unsigned multiplications with overflow),
    /// zero sizes counted as 1 — so the strides fit too, and the answer does not depend
    /// on the order of the sizes (`[0, 2^62]` passed where `[2^62, 0]` failed), as the
    /// interpreter's `checked_sizes`.
    pub(super) fn size_ok(&mut self, sizes: &[Value], eb: i64) -> Value {
        let zero = self.c64(0);
        let one = self.c64(1);
        let mut ok = self.cst(Attribute::int(1, Type::i1()), Type::i1());
        let mut p = self.c64(eb);
        let pair = llvm_ty("struct<(i64, i1)>");
        for s in sizes {
            let nonneg = self.icmp(5, *s, zero);
            ok = self.val(ops::llvm::AndOp::NAME, vec![ok, nonneg], Type::i1());
            let pos = self.icmp(4, *s, zero);
            let s1 = self.val(ops::llvm::SelectOp::NAME, vec![pos, *s, one], Type::i64());
            let r = self
                .call(
                    "llvm.umul.with.overflow.i64",
                    "struct<(i64, i1)> (i64, i64)",
                    vec![p, s1],
                    Some(pair),
                )
                .expect("a call with a result");
            p = self.extract(r, &[0], Type::i64());
            let ovf = self.extract(r, &[1], Type::i1());
            let t = self.cst(Attribute::int(1, Type::i1()), Type::i1());
            let fine = self.val(ops::llvm::XorOp::NAME, vec![ovf, t], Type::i1());
            ok = self.val(ops::llvm::AndOp::NAME, vec![ok, fine], Type::i1());
        }
        let limit = self.c64(1 << 62);
        let small = self.icmp(6, p, limit);
        self.val(ops::llvm::AndOp::NAME, vec![ok, small], Type::i1())
    }
    /// Before an access marked [`crate::runtime_checks::CHECK_LIVE`]: the buffer of
    /// descriptor `d` was not deallocated by the program.
    pub(super) fn live_check(&mut self, op: OpId, d: Value) {
        if self
            .ir
            .attr(op, crate::runtime_checks::CHECK_LIVE)
            .is_none()
        {
            return;
        }
        let p = self.extract(d, &[0], super::types::ptr());
        let r = self
            .call(super::RELEASED, "i32 (ptr)", vec![p], Some(Type::i32()))
            .expect("a call with a result");
        let zero = self.cst(Attribute::int(0, Type::i32()), Type::i32());
        let ok = self.icmp(0, r, zero);
        let name = self.ir.name(op);
        self.check(
            ok,
            &format!("'{name}' op accesses a buffer after memref.dealloc"),
        );
    }
    /// After a call that may have failed a check: return at once if it did.
    pub(super) fn propagate_failure(&mut self) {
        if self.abort_on_failure {
            return; // a failure never returns
        }
        let f = self
            .call(FAILED, "i32 ()", vec![], Some(Type::i32()))
            .expect("a call with a result");
        let zero = self.cst(Attribute::int(0, Type::i32()), Type::i32());
        let failed = self.icmp(1, f, zero);
        let cont = self.block(&[]);
        let out = self.block(&[]);
        self.cond_br(failed, out, vec![], cont, vec![]);
        self.cur = out;
        self.return_undef();
        self.cur = cont;
    }
    fn return_undef(&mut self) {
        let rv = match self.ret {
            Some(t) => vec![self.val(ops::llvm::MlirUndefOp::NAME, vec![], t)],
            None => vec![],
        };
        self.llvm_return(rv);
    }
}

/// Whether converted `op` may fail a run-time check: an op inside that the conversion
/// checks (`cf.assert`, an allocation of run-time size, an integer division by a divisor
/// not a safe constant, a loop whose step is not a constant, a copy between shapes known
/// at run time, the input program's own dealloc), or a call of a function in
/// `may_fail`.
pub(super) fn fails_inside(ir: &Ir, op: OpId, may_fail: &FxHashSet<String>) -> bool {
    let constant = |v: Value| {
        ir.defining_op(v)
            .filter(|d| ir.name(*d) == ops::arith::ConstantOp::NAME)
            .and_then(|d| ir.attr(d, "value"))
            .and_then(|a| a.as_i64())
    };
    let mut found = false;
    ir.walk_pre(op, &mut |o| {
        let ops = ir.operands(o);
        found |= match ir.name(o) {
            ops::cf::AssertOp::NAME => true,
            ops::memref::AllocOp::NAME | ops::memref::AllocaOp::NAME => {
                !ops.is_empty()
                    || super::memref::static_alloc_too_large(ir.value_type(ir.result(o, 0)))
            }
            ops::memref::CopyOp::NAME if ops.len() == 2 => {
                !super::memref::dynamic_copy_dims(ir.value_type(ops[0]), ir.value_type(ops[1]))
                    .is_empty()
            }
            ops::memref::DeallocOp::NAME => {
                ir.attr(o, crate::runtime_checks::CHECKED_DEALLOC).is_some()
            }
            n if DIVISIONS.contains(&n) => constant(ops[1]).is_none_or(|k| k <= 0),
            ops::scf::ForOp::NAME => ops.get(2).and_then(|s| constant(*s)).is_none_or(|k| k <= 0),
            ops::func::CallOp::NAME | ops::rt::ParallelForOp::NAME => ir
                .attr(o, "callee")
                .and_then(|a| a.as_symbol())
                .is_some_and(|c| may_fail.contains(c)),
            _ => false,
        };
    });
    found
}

/// The functions of a symbol table that may fail a run-time check (their own or a
/// callee's, to a fixed point).
pub(super) fn failing_functions(ir: &Ir, body: BlockId) -> FxHashSet<String> {
    let funcs: Vec<(String, OpId)> = ir
        .block_ops_vec(body)
        .into_iter()
        .filter(|o| ir.name(*o) == ops::func::FuncOp::NAME)
        .filter_map(|o| Some((ir.symbol_name(o)?.to_string(), o)))
        .collect();
    let mut set = FxHashSet::default();
    loop {
        let before = set.len();
        for (name, f) in &funcs {
            if !set.contains(name) && fails_inside(ir, *f, &set) {
                set.insert(name.clone());
            }
        }
        if set.len() == before {
            return set;
        }
    }
}

/// A call (`func.call`, `rt.parallel_for`) on a cycle of the call graph of a symbol table's
/// functions, if there is one. Compiled code has no bound on its stack: a recursive call
/// would run until the stack overflows and the process dies, so recursion is refused
/// where it is converted (the interpreter runs it to a depth of 64). A depth-first search
/// with its own stack (a chain of thousands of functions is fine).
pub(super) fn recursive_call(ir: &Ir, body: BlockId) -> Option<OpId> {
    let funcs: Vec<OpId> = ir
        .block_ops_vec(body)
        .into_iter()
        .filter(|o| {
            matches!(
                ir.name(*o),
                ops::func::FuncOp::NAME | ops::gpu::FuncOp::NAME
            )
        })
        .collect();
    let index: FxHashMap<&str, usize> = funcs
        .iter()
        .enumerate()
        .filter_map(|(i, f)| Some((ir.symbol_name(*f)?, i)))
        .collect();
    let edges: Vec<Vec<(usize, OpId)>> = funcs
        .iter()
        .map(|f| {
            let mut out = vec![];
            ir.walk_pre(*f, &mut |o| {
                if matches!(
                    ir.name(o),
                    ops::func::CallOp::NAME | ops::rt::ParallelForOp::NAME
                ) {
                    let callee = ir.attr(o, "callee").and_then(|a| a.as_symbol());
                    if let Some(k) = callee.and_then(|c| index.get(c)) {
                        out.push((*k, o));
                    }
                }
            });
            out
        })
        .collect();
    // 0: not seen, 1: on the search's path, 2: done.
    let mut state = vec![0u8; funcs.len()];
    for start in 0..funcs.len() {
        if state[start] != 0 {
            continue;
        }
        state[start] = 1;
        let mut path = vec![(start, 0usize)];
        while let Some((v, next)) = path.last_mut() {
            let v = *v;
            let Some(&(w, call)) = edges[v].get(*next) else {
                state[v] = 2;
                path.pop();
                continue;
            };
            *next += 1;
            match state[w] {
                1 => return Some(call),
                0 => {
                    state[w] = 1;
                    path.push((w, 0));
                }
                _ => {}
            }
        }
    }
    None
}

/// The constant global `name` holding a failed check's message `bytes`.
pub(super) fn message_global(ir: &mut Ir, loc: Attribute, name: String, bytes: String) -> OpId {
    let n = bytes.len();
    ir.create_op(
        OpSpec::new(intern_name(ops::llvm::MlirGlobalOp::NAME), loc)
            .prop("sym_name", Attribute::string(name))
            .prop(
                "global_type",
                Attribute::type_attr(llvm_ty(&format!("array<{n} x i8>"))),
            )
            .prop("linkage", Attribute::dialect("llvm", "linkage<private>"))
            .prop("constant", Attribute::unit())
            .prop(
                "value",
                Attribute::get(AttrKind::String {
                    value: bytes,
                    ty: None,
                }),
            )
            .regions(1),
    )
}
