//! Comparisons of a value known to be non-negative against a constant at or below zero.
//!
//! torch-mlir guards every dynamic size it computes with `index_cast(tensor.dim) < 0`
//! (an inferred `-1` dimension of `aten.view`, a negative broadcast size of
//! `aten.expand`), and selects between sizes on the answer:
//!
//! ```mlir
//! %n = arith.index_cast %dim : index to i64
//! %neg = arith.cmpi slt, %n, %c0_i64 : i64
//! %s = arith.select %neg, %inferred, %n : i64
//! ```
//!
//! A size is never negative, so `%neg` is `false`, `%s` is `%n`, and the sizes of the
//! tensors downstream become the input's own dims again (which is what lets
//! `linalg.generic`'s broadcast-gather canonicalization see that an `aten.expand` copies
//! a tensor of the same shape). Upstream derives this with integer range analysis
//! (`arith-int-range-optimizations`, from `tensor.dim`'s `InferIntRangeInterface`); here
//! it is one canonicalization of `arith.cmpi` over the few producers that matter.

use super::*;
use crate::ops;
use ftuner_ir::Context;

/// Whether the scalar integer `v` is non-negative as a signed value of its type: a
/// `tensor.dim` / `memref.dim` (a size), a non-negative constant, a zero extension to a
/// wider type, an `index_cast` of a non-negative value to a type at least as wide (64
/// bits: `index` is 64 bits wide on every target ftuner compiles for), a `select` of
/// two non-negative values, or a `maxsi` with a non-negative operand.
fn non_negative(ctx: &Context, ir: &Ir, v: Value, depth: u32) -> bool {
    if depth > 8 || ir.value_type(v).is_shaped() {
        return false;
    }
    if let Some(c) = scalar_int_of(ctx, ir, v) {
        let w = width(ir.value_type(v));
        return w > 0 && w <= 128 && sext(c, w) >= 0;
    }
    let Some(d) = ir.defining_op(v) else {
        return false;
    };
    let name = ir.name(d);
    if name == ops::tensor::DimOp::NAME || name == ops::memref::DimOp::NAME {
        return true;
    }
    let operand = |i: usize| ir.operand(d, i);
    let wide = |from: Value| {
        let (f, t) = (width(ir.value_type(from)), width(ir.value_type(v)));
        f > 0 && t >= f && t >= 64
    };
    if name == ops::arith::ExtuiOp::NAME {
        return width(ir.value_type(v)) > width(ir.value_type(operand(0)));
    }
    if name == ops::arith::IndexCastOp::NAME || name == ops::arith::IndexCastuiOp::NAME {
        return wide(operand(0)) && non_negative(ctx, ir, operand(0), depth + 1);
    }
    if name == ops::arith::SelectOp::NAME {
        return non_negative(ctx, ir, operand(1), depth + 1)
            && non_negative(ctx, ir, operand(2), depth + 1);
    }
    if name == ops::arith::MaxsiOp::NAME {
        return non_negative(ctx, ir, operand(0), depth + 1)
            || non_negative(ctx, ir, operand(1), depth + 1);
    }
    false
}

/// `cmpi(pred, x, c)` with `x` non-negative and `c <= 0` (after `cmpi_canonical` moved
/// the constant right): `slt` / `sle` / `eq` are false and `sge` / `sgt` / `ne` true where
/// the answer holds for every non-negative `x` (`x < 0`, `x <= c < 0`, `x == c < 0`, ...).
pub(super) fn cmpi_non_negative(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (l, r) = (ir.operand(op, 0), ir.operand(op, 1));
    let (Some(p), Some(c)) = (
        ir.attr(op, "predicate").and_then(|a| a.as_i64()),
        scalar_int_of(ctx, ir, r),
    ) else {
        return false;
    };
    let w = width(ir.value_type(r));
    if w == 0 || w > 128 {
        return false;
    }
    let c = sext(c, w);
    // eq, ne, slt, sle, sgt, sge.
    let answer = match p {
        0 if c < 0 => false,
        1 if c < 0 => true,
        2 if c <= 0 => false,
        3 if c < 0 => false,
        4 if c < 0 => true,
        5 if c <= 0 => true,
        _ => return false,
    };
    if !non_negative(ctx, ir, l, 0) {
        return false;
    }
    let ty = result_type(ir, op);
    let Some(v) = cst(ir, op, Const::Int(answer as i128), ty) else {
        return false;
    };
    replace(ir, op, v)
}
