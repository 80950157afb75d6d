//! The run-time checks of `convert-linalg-to-loops`: operand shapes against the loop
//! extents and linear windows over the whole loop box, before the nest; non-linear
//! indices where they are computed. A violation fails a `cf.assert` naming the op, never
//! an out-of-bounds access.

use super::B;
use ftuner_dialects::linalg::linear_coeffs;
use ftuner_dialects::ops;
use ftuner_ir::{AffineExpr, AffineMap, OpId, Type, Value, DYNAMIC};

/// Run-time shape agreement, before any loop runs: every operand dimension a loop
/// dimension indexes directly must equal that loop's extent, and every windowed index
/// (`d0 + d2`, ...) must stay inside its dimension at the last point of a non-empty loop
/// box. Violations fail a `cf.assert` naming the op, never an out-of-bounds access.
pub(super) fn shape_check(
    b: &mut B<'_>,
    op: OpId,
    maps: &[AffineMap],
    operands: &[Value],
    ubs: &[Value],
    zero: Value,
    one: Value,
) -> Result<(), String> {
    let mut conds = vec![];
    // Some loop empty: nothing is accessed.
    let mut empty: Option<Value> = None;
    for ub in ubs {
        let z = b.cmpi(op, 0, *ub, zero);
        empty = Some(match empty {
            None => z,
            Some(p) => b.val(op, ops::arith::OriOp::NAME, vec![p, z], Type::i1()),
        });
    }
    let lasts: Vec<Value> = ubs
        .iter()
        .map(|u| b.val(op, ops::arith::SubiOp::NAME, vec![*u, one], Type::index()))
        .collect();
    for (m, v) in maps.iter().zip(operands) {
        let ty = b.ir.value_type(*v);
        let Some(shape) = ty.shape().filter(|_| ty.is_memref()).map(|s| s.to_vec()) else {
            continue;
        };
        for (j, e) in m.results.iter().enumerate() {
            let size = if shape[j] == DYNAMIC {
                let c = b.index(op, j as i64);
                b.val(op, ops::memref::DimOp::NAME, vec![*v, c], Type::index())
            } else {
                b.index(op, shape[j])
            };
            // A loop dim indexing the operand directly: the sizes agree. A linear window
            // (`d0 + d1 - 1`, `2 * d1 - d4`): its least and greatest index over the box,
            // at the corners the signs of its coefficients pick, are inside (ult: not
            // negative and below the size).
            let checks: Vec<(i64, Value, Value)> = match e {
                AffineExpr::Dim(d) => vec![(0, size, ubs[*d as usize])], // eq
                _ => match linear_coeffs(e) {
                    Some((terms, _)) => {
                        let mut out = vec![];
                        for greatest in [false, true] {
                            let corner: Vec<Value> = (0..lasts.len())
                                .map(|d| {
                                    let k =
                                        terms.iter().find(|t| t.0 as usize == d).map_or(0, |t| t.1);
                                    if (k > 0) == greatest && k != 0 {
                                        lasts[d]
                                    } else {
                                        zero
                                    }
                                })
                                .collect();
                            out.push((6, b.expr(op, e, &corner)?, size));
                        }
                        out
                    }
                    None => continue,
                },
            };
            for (pred, lhs, rhs) in checks {
                let c = b.cmpi(op, pred, lhs, rhs);
                conds.push((matches!(e, AffineExpr::Dim(_)), c));
            }
        }
    }
    let mut ok: Option<Value> = None;
    for (direct, c) in conds {
        // A window only matters when the box is not empty.
        let c = match (direct, empty) {
            (false, Some(z)) => b.val(op, ops::arith::OriOp::NAME, vec![c, z], Type::i1()),
            _ => c,
        };
        ok = Some(match ok {
            None => c,
            Some(p) => b.val(op, ops::arith::AndiOp::NAME, vec![p, c], Type::i1()),
        });
    }
    if let Some(ok) = ok {
        let at = match ftuner_ir::diag::file_line_col(b.ir.loc(op)) {
            Some((f, l, c)) => format!(" at {f}:{l}:{c}"),
            None => String::new(),
        };
        let name = b.ir.name(op);
        b.assert(
            op,
            ok,
            format!("operand shapes of '{name}'{at} do not agree with its iteration space"),
        );
    }
    Ok(())
}

/// Indices that are not linear in the loops (`d0 mod 3963`, `d0 floordiv 2`): the check
/// before the loop nest bounds linear ones over the whole box, these are checked where
/// they are computed, each against its dim (before: unchecked, and a `mod` larger than the
/// dim read past it; found by the driver fuzzer).
pub(super) fn nonlinear_index_checks(
    b: &mut B<'_>,
    anchor: OpId,
    (i, v): (usize, Value),
    m: &AffineMap,
    idx: &[Value],
    what: &str,
) {
    let shape =
        b.ir.value_type(v)
            .shape()
            .map(|s| s.to_vec())
            .unwrap_or_default();
    for (j, e) in m.results.iter().enumerate() {
        if matches!(e, AffineExpr::Dim(_)) || linear_coeffs(e).is_some() {
            continue;
        }
        let (Some(&d), Some(&x)) = (shape.get(j), idx.get(j)) else {
            continue;
        };
        let size = if d == DYNAMIC {
            let c = b.index(anchor, j as i64);
            b.val(anchor, ops::memref::DimOp::NAME, vec![v, c], Type::index())
        } else {
            b.index(anchor, d)
        };
        let ok = b.cmpi(anchor, 6, x, size); // ult
        b.assert(
            anchor,
            ok,
            format!("operand #{i} of {what} is indexed outside dim {j} (a non-linear index)"),
        );
    }
}
