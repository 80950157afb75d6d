//! `reassociate-reductions`: float sums of `linalg.generic` reductions may be
//! reassociated (`arith.addf ... fastmath<reassoc>`), so LLVM vectorizes them.
//!
//! A reduction's body yields `out + x` for each element: run as loops, one chain of
//! dependent scalar adds per output (a softmax's row sum over 384 scores: 384 adds of 4
//! cycles' latency each, about a tenth of the throughput of the same loop in vectors).
//! With `reassoc` on that add, LLVM's loop vectorizer keeps partial sums in vector lanes
//! and adds them at the end — the order PyTorch and ONNX Runtime sum a softmax or a
//! LayerNorm in. The result changes by rounding only; the error bound of a sum in
//! `lanes` partial sums (`(n / lanes + lanes) * eps`) is below that of one chain (`n * eps`).
//!
//! Which adds: in a `linalg.generic` with a reduction iterator, an `arith.addf` that a
//! result yields, one of whose operands is that result's output block argument and whose
//! other operand does not depend on it. Contractions (an addend that multiplies two block
//! arguments, `mulf(a, b)` with `a != b`, each maybe cast) are left as they are: `lower-ukernels` sums their k in order,
//! and one it did not take keeps that order too.

use ftuner_dialects::ops;
use ftuner_ir::{Attribute, Ir, OpId, Value};
use ftuner_pass::{define_pass, PassContext, PassFailure};

/// Whether `v` depends on block argument `a` within its block.
fn depends_on(ir: &Ir, v: Value, a: Value) -> bool {
    let mut work = vec![v];
    let mut seen = rustc_hash::FxHashSet::default();
    while let Some(x) = work.pop() {
        if x == a {
            return true;
        }
        if !seen.insert(x) {
            continue;
        }
        if let Some(d) = ir.defining_op(x) {
            if ir.parent_block(d) == ir.value_block(a) {
                work.extend(ir.operands(d).iter().copied());
            }
        }
    }
    false
}

/// A multiply of two distinct block arguments, each maybe cast (`arith.extf`, `truncf`,
/// `sitofp`, ...: a mixed-precision contraction's addend); a square is not one.
fn is_mul_add_term(ir: &Ir, v: Value) -> bool {
    let arg = |mut x: Value| {
        while let Some(d) = ir.defining_op(x) {
            let cast = [
                ops::arith::ExtfOp::NAME,
                ops::arith::TruncfOp::NAME,
                ops::arith::SitofpOp::NAME,
                ops::arith::UitofpOp::NAME,
            ];
            if !cast.contains(&ir.name(d)) {
                return None;
            }
            x = ir.operand(d, 0);
        }
        Some(x)
    };
    ir.defining_op(v)
        .filter(|d| ir.name(*d) == ops::arith::MulfOp::NAME)
        .is_some_and(|d| match (arg(ir.operand(d, 0)), arg(ir.operand(d, 1))) {
            (Some(a), Some(b)) => a != b,
            _ => false,
        })
}

/// The sum adds of generic `op` that may be reassociated.
fn sum_adds(ir: &Ir, op: OpId) -> Vec<OpId> {
    if ftuner_dialects::linalg::body::parallel_iterators(ir, op)
        .is_none_or(|p| p.iter().all(|x| *x))
    {
        return vec![];
    }
    let (ins, _) = ftuner_dialects::linalg::ins_outs(ir, op);
    let Some(blk) = ir.regions_of(op).first().and_then(|r| ir.region_entry(*r)) else {
        return vec![];
    };
    let Some(y) = ir.terminator(blk) else {
        return vec![];
    };
    let args = ir.block_args(blk).to_vec();
    let mut out = vec![];
    for (i, yv) in ir.operands(y).iter().enumerate() {
        let Some(&acc) = args.get(ins.len() + i) else {
            continue;
        };
        let Some(add) = ir.defining_op(*yv) else {
            continue;
        };
        if ir.name(add) != ops::arith::AddfOp::NAME || ir.uses(*yv).len() != 1 {
            continue;
        }
        let (a, b) = (ir.operand(add, 0), ir.operand(add, 1));
        let term = match (a == acc, b == acc) {
            (true, false) => b,
            (false, true) => a,
            _ => continue,
        };
        if !depends_on(ir, term, acc) && !is_mul_add_term(ir, term) {
            out.push(add);
        }
    }
    out
}

/// `flags` (the op's fastmath flags) with `reassoc` added, as an `#arith.fastmath`.
fn with_reassoc(ir: &Ir, add: OpId) -> Attribute {
    let mut flags: Vec<&str> = ir
        .attr(add, "fastmath")
        .map(|a| ftuner_dialects::util::fastmath_flags(a, "arith"))
        .unwrap_or_default();
    if !flags.contains(&"reassoc") && !flags.contains(&"fast") {
        flags.push("reassoc");
    }
    Attribute::dialect("arith", &format!("fastmath<{}>", flags.join(",")))
}

define_pass! {
    /// `reassociate-reductions`: the float sums of linalg.generic reductions marked
    /// `fastmath<reassoc>`, for LLVM to vectorize them.
    pub struct ReassociateReductionsPass {
        argument: "reassociate-reductions",
        name: "ReassociateReductions",
        summary: "Allow the float sums of linalg.generic reductions to be reassociated (fastmath<reassoc>), so they vectorize",
        description: "In each linalg.generic with a reduction iterator, an arith.addf that a result yields, one of whose operands is that result's output block argument and whose other operand does not depend on it (and is not a multiply of two distinct block arguments: a contraction's), gets the fastmath flag reassoc. LLVM's loop vectorizer then keeps partial sums in vector lanes (a softmax's or LayerNorm's row sum) instead of one chain of scalar adds; results change by rounding only.",
        options: ReassociateReductionsOptions {},
        statistics: {
            marked: "num-reassociated" => "Reduction adds marked reassoc",
        },
    }
}

impl ReassociateReductionsPass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        top: OpId,
        _: &ReassociateReductionsOptions,
    ) -> Result<(), PassFailure> {
        let mut adds = vec![];
        cx.ir.walk_pre(top, &mut |o| {
            if cx.ir.name(o) == ops::linalg::GenericOp::NAME {
                adds.extend(sum_adds(cx.ir, o));
            }
        });
        for a in adds {
            let f = with_reassoc(cx.ir, a);
            cx.ir.set_prop(a, "fastmath", Some(f));
            self.marked += 1;
        }
        Ok(())
    }
}
