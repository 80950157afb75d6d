//! Numeric equivalence of a derivation: the original and the derived expression evaluated
//! (in f64, by `ftuner_dialects::ta::expr`) on the same random inputs at sampled result
//! positions (the corners included). Derivations only reassociate sums, so the two agree
//! to rounding; a wrong rule shows as an O(1) difference.

use ftuner_dialects::ta::expr::{evaluate_at, result_shape, Inputs};
use ftuner_dialects::ta::Scope;

/// A small deterministic generator (xorshift64*).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [-1, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// Relative tolerance of the comparison.
pub const TOLERANCE: f64 = 1e-9;

/// Compare `a` and `b` over inputs of `shapes` (random values) at up to `samples`
/// positions; Ok(largest difference) or a description of the first mismatch.
pub fn equivalent(
    a: &Scope,
    b: &Scope,
    shapes: &[Vec<usize>],
    samples: usize,
    seed: u64,
) -> Result<f64, String> {
    let mut rng = Rng::new(seed);
    let data: Vec<Vec<f64>> = shapes
        .iter()
        .map(|s| {
            (0..s.iter().product::<usize>())
                .map(|_| rng.unit())
                .collect()
        })
        .collect();
    let inputs = Inputs {
        shapes: shapes.to_vec(),
        data: data.iter().map(|d| d.as_slice()).collect(),
    };
    let sa = result_shape(a, shapes)?;
    let sb = result_shape(b, shapes)?;
    if sa != sb {
        return Err(format!("result shapes differ: {sa:?} vs {sb:?}"));
    }
    if sa.contains(&0) {
        return Ok(0.0);
    }
    let mut points: Vec<Vec<usize>> = vec![
        sa.iter().map(|_| 0).collect(),
        sa.iter().map(|d| d - 1).collect(),
    ];
    for _ in 0..samples {
        points.push(
            sa.iter()
                .map(|d| (rng.next_u64() % *d as u64) as usize)
                .collect(),
        );
    }
    let va = evaluate_at(a, &inputs, &points)?;
    let vb = evaluate_at(b, &inputs, &points)?;
    let mut worst = 0.0f64;
    for ((p, x), y) in points.iter().zip(&va).zip(&vb) {
        let d = (x - y).abs();
        if d > TOLERANCE * (1.0 + x.abs()) {
            return Err(format!("differs at {p:?}: {x} vs {y}"));
        }
        worst = worst.max(d);
    }
    Ok(worst)
}

/// The default of `ollie-derive`'s `verify-budget`: scalar operations one verification
/// (`verify=true`) may interpret, about 10 s of this machine's reference evaluation.
pub const VERIFY_BUDGET: f64 = 2e8;

/// Iteration points to evaluate `s` in full over inputs of `shapes`: for `s` and every
/// scope nested in it (each evaluated once, in full, as the reference evaluation and the
/// emitted operators both do), the product of its traversal extents times the product of
/// its summation extents (at least 1). `None` when a bound names a dim no input has.
/// Computed from the bounds alone, before anything is evaluated.
pub fn scope_work(s: &Scope, shapes: &[Vec<usize>]) -> Option<f64> {
    let extent = |i: &ftuner_dialects::ta::expr::Iter| -> Option<f64> {
        Some((i.hi.eval(shapes)?.saturating_sub(i.lo)).max(0) as f64)
    };
    let mut points = 1.0;
    for i in s.trav.iter().chain(&s.sum) {
        points *= extent(i)?;
    }
    let mut nested = 0.0;
    for (src, _) in s.body.accesses() {
        if let ftuner_dialects::ta::Src::Scope(inner) = src {
            nested += scope_work(inner, shapes)?;
        }
    }
    Some(points + nested)
}

/// The work of verifying a derivation at one set of sizes: the random inputs and operands
/// generated (their elements), the original expression evaluated in full (the reference)
/// and the derived one interpreted (its operators are its scopes).
pub fn verify_work(
    original: &Scope,
    derived: &Scope,
    shapes: &[Vec<usize>],
    other_tensors: &[Vec<usize>],
) -> f64 {
    let elements: f64 = shapes
        .iter()
        .chain(other_tensors)
        .map(|s| s.iter().map(|d| *d as f64).product::<f64>())
        .sum();
    // A bound naming a missing dim is an error the verification itself reports.
    elements
        + scope_work(original, shapes).unwrap_or(0.0)
        + scope_work(derived, shapes).unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ftuner_dialects::ta::expr::{parse_scope, positional};

    #[test]
    fn work_is_the_iteration_domain_of_every_scope() {
        // A matmul: M x N x K points.
        let mm = parse_scope(
            "L<i:0:dim($0, 0), j:0:48> Sum<k:0:40> { $0[i, k] * $1[k, j] }",
            &positional,
        )
        .unwrap();
        let sh = vec![vec![7, 40], vec![40, 48]];
        assert_eq!(scope_work(&mm, &sh), Some(7.0 * 48.0 * 40.0));
        // A nested scope counts once in full, beside its reader.
        let n = parse_scope(
            "L<h:0:4> Sum<r:0:3> { (L<t:-1:5, q:0:3> { $0[t] * $1[q] })[h + r - 1, r] }",
            &positional,
        )
        .unwrap();
        assert_eq!(scope_work(&n, &[vec![4], vec![3]]), Some(12.0 + 18.0));
        // Inputs and operands count their elements.
        let w = verify_work(&mm, &mm, &sh, &[vec![7, 48]]);
        assert_eq!(w, (280.0 + 1920.0 + 336.0) + 2.0 * 13440.0);
        // A bound over a missing dim: not estimated here.
        assert_eq!(scope_work(&mm, &[]), None);
    }
}
