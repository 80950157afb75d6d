//! Window indices of structured ops (`d1 + d4 * 2`, `d0 - d1 + 2`): linear forms, their
//! range over a loop box, and the verifier's check that static windows stay inside their
//! operands (the loop lowering checks the same at run time, `linalg_to_loops`).

use ftuner_ir::{Ir, Value, DYNAMIC};

/// `e` as `const + sum(coeff * d)` when it is linear in the dims (dims, constants, sums,
/// products by a constant of either sign), with checked arithmetic: per dim its total
/// coefficient (dims of coefficient 0 left out), then the constant.
pub fn linear_coeffs(e: &ftuner_ir::AffineExpr) -> Option<(Vec<(u32, i64)>, i64)> {
    use ftuner_ir::AffineExpr as E;
    fn go(e: &E, scale: i64, terms: &mut Vec<(u32, i64)>, c: &mut i64) -> Option<()> {
        match e {
            E::Dim(d) => match terms.iter_mut().find(|t| t.0 == *d) {
                Some(t) => t.1 = t.1.checked_add(scale)?,
                None => terms.push((*d, scale)),
            },
            E::Const(k) => *c = c.checked_add(k.checked_mul(scale)?)?,
            E::Add(a, b) => {
                go(a, scale, terms, c)?;
                go(b, scale, terms, c)?;
            }
            E::Mul(a, b) => match (a.as_const(), b.as_const()) {
                (Some(k), _) => go(b, scale.checked_mul(k)?, terms, c)?,
                (_, Some(k)) => go(a, scale.checked_mul(k)?, terms, c)?,
                _ => return None,
            },
            _ => return None,
        }
        Some(())
    }
    let (mut terms, mut c) = (vec![], 0i64);
    go(e, 1, &mut terms, &mut c)?;
    terms.retain(|t| t.1 != 0);
    Some((terms, c))
}

/// The least and greatest value of a linear `e` ([`linear_coeffs`]) over the loop box
/// `0..=last[d]`: each term at the end of its range that makes it smallest (greatest).
/// None when `e` is not linear or the bounds overflow.
pub fn linear_range(e: &ftuner_ir::AffineExpr, last: &[i64]) -> Option<(i64, i64)> {
    let (terms, c) = linear_coeffs(e)?;
    let (mut lo, mut hi) = (c, c);
    for (d, k) in terms {
        let v = k.checked_mul(*last.get(d as usize)?)?;
        lo = lo.checked_add(v.min(0))?;
        hi = hi.checked_add(v.max(0))?;
    }
    Some((lo, hi))
}

/// Windowed indices (`d1 + d4 * 2`, `d0 + d1 - 1`, ...: linear in the dims) of static
/// operand dims stay inside them over the whole loop box — the least index not below 0,
/// the greatest below the dim — where every loop's extent is known from a static dim it
/// indexes directly (`loop_size`) and the box is not empty: what a convolution whose
/// window leaves its input would read out of bounds.
pub(super) fn verify_windows(
    ir: &Ir,
    maps: &[ftuner_ir::AffineMap],
    operands: &[Value],
    loop_size: &[Option<(i64, usize, usize)>],
) -> Result<(), String> {
    let Some(sizes) = loop_size
        .iter()
        .map(|s| s.map(|x| x.0))
        .collect::<Option<Vec<i64>>>()
    else {
        return Ok(());
    };
    if sizes.contains(&0) {
        return Ok(());
    }
    let last: Vec<i64> = sizes.iter().map(|s| s - 1).collect();
    for (i, (m, v)) in maps.iter().zip(operands).enumerate() {
        let t = ir.value_type(*v);
        let shape = t.shape().unwrap_or(&[]);
        for (j, e) in m.results.iter().enumerate() {
            let Some(&d) = shape.get(j) else { continue };
            if d == DYNAMIC || matches!(e, ftuner_ir::AffineExpr::Dim(_)) {
                continue;
            }
            if linear_coeffs(e).is_none() {
                continue;
            }
            let Some((lo, hi)) = linear_range(e, &last) else {
                return Err(format!(
                    "the index of operand #{i}'s dimension #{j} overflows at the last point of the loops"
                ));
            };
            if lo < 0 {
                let map = ftuner_ir::Attribute::affine_map(m.clone()).to_string();
                let map = map
                    .strip_prefix("affine_map<")
                    .and_then(|x| x.strip_suffix('>'))
                    .unwrap_or(&map);
                return Err(format!(
                    "unexpected result less than 0 at expression #{j} in {map}"
                ));
            }
            if hi >= d {
                return Err(format!("inferred input/output operand #{i} has shape's dimension #{j} to be greater than or equal to {}, but found {d}", i128::from(hi) + 1));
            }
        }
    }
    Ok(())
}
