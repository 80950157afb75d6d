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
