//! Evaluating a scope on row-major f64 inputs (the meaning every derivation must
//! preserve): whole results or single points, out-of-bounds reads as 0.

use super::{BinOp, Scope, Src, Term};
use std::collections::HashMap;

/// Inputs of an evaluation: row-major data and shapes.
pub struct Inputs<'a> {
    pub shapes: Vec<Vec<usize>>,
    pub data: Vec<&'a [f64]>,
}

/// The result shape of `s` over inputs of `shapes`.
pub fn result_shape(s: &Scope, shapes: &[Vec<usize>]) -> Result<Vec<usize>, String> {
    s.trav
        .iter()
        .map(|i| {
            let hi =
                i.hi.eval(shapes)
                    .ok_or_else(|| format!("bound of '{}' names a missing dim", i.name))?;
            Ok((hi - i.lo).max(0) as usize)
        })
        .collect()
}

/// A nested scope's values: (data, shape, lower bounds of its iterators).
type Tensor = (Vec<f64>, Vec<usize>, Vec<i64>);

struct Eval<'a> {
    inputs: &'a Inputs<'a>,
    /// Nested scopes evaluated once: (values, shape, lows).
    nested: HashMap<*const Scope, Tensor>,
    /// Points of nested scopes computed on demand (when `nested` lacks the scope).
    cache: std::cell::RefCell<HashMap<(*const Scope, Vec<i64>), f64>>,
}

fn read(data: &[f64], shape: &[usize], lows: Option<&[i64]>, idx: &[i64]) -> f64 {
    let mut off = 0usize;
    for (k, (&i, &d)) in idx.iter().zip(shape).enumerate() {
        let i = i - lows.map_or(0, |l| l[k]);
        if i < 0 || i as usize >= d {
            return 0.0;
        }
        off = off * d + i as usize;
    }
    data[off]
}

impl Eval<'_> {
    fn prepare(&mut self, s: &Scope) -> Result<(), String> {
        for (src, _) in s.body.accesses() {
            if let Src::Scope(inner) = src {
                let key: *const Scope = &**inner;
                if !self.nested.contains_key(&key) {
                    self.prepare(inner)?;
                    let (shape, vals) = self.full(inner)?;
                    let lows = inner.trav.iter().map(|i| i.lo).collect();
                    self.nested.insert(key, (vals, shape, lows));
                }
            }
        }
        Ok(())
    }
    fn term(&self, t: &Term, env: &HashMap<&str, i64>) -> f64 {
        match t {
            Term::Const(b) => f64::from_bits(*b),
            Term::Bin(op, a, b) => {
                let (x, y) = (self.term(a, env), self.term(b, env));
                match op {
                    BinOp::Add => x + y,
                    BinOp::Sub => x - y,
                    BinOp::Mul => x * y,
                }
            }
            Term::Access(src, idx) => {
                let ix: Option<Vec<i64>> = idx
                    .iter()
                    .map(|e| e.eval(&|v| env.get(v).copied().unwrap_or(0)))
                    .collect();
                // An inexact division reads nothing.
                let Some(ix) = ix else {
                    return 0.0;
                };
                match src {
                    Src::Input(i) => read(self.inputs.data[*i], &self.inputs.shapes[*i], None, &ix),
                    Src::Scope(inner) => {
                        let key: *const Scope = &**inner;
                        if let Some((d, sh, lo)) = self.nested.get(&key) {
                            return read(d, sh, Some(lo), &ix);
                        }
                        // Lazily, one point at a time (remembered).
                        let inside = inner.trav.iter().zip(&ix).all(|(it, x)| {
                            *x >= it.lo && it.hi.eval(&self.inputs.shapes).is_some_and(|h| *x < h)
                        });
                        if !inside {
                            return 0.0;
                        }
                        if let Some(v) = self.cache.borrow().get(&(key, ix.clone())) {
                            return *v;
                        }
                        let v = self.point(inner, &ix).unwrap_or(0.0);
                        self.cache.borrow_mut().insert((key, ix), v);
                        v
                    }
                }
            }
        }
    }
    /// The value at one point of the traversal (iterator values `at`).
    fn point(&self, s: &Scope, at: &[i64]) -> Result<f64, String> {
        let mut env: HashMap<&str, i64> = HashMap::new();
        for (i, v) in s.trav.iter().zip(at) {
            env.insert(&i.name, *v);
        }
        let ranges: Vec<(i64, i64)> = s
            .sum
            .iter()
            .map(|i| {
                Ok((
                    i.lo,
                    i.hi.eval(&self.inputs.shapes)
                        .ok_or_else(|| format!("bound of '{}' names a missing dim", i.name))?,
                ))
            })
            .collect::<Result<_, String>>()?;
        if ranges.iter().any(|(l, h)| h <= l) {
            return Ok(0.0);
        }
        let mut cur: Vec<i64> = ranges.iter().map(|r| r.0).collect();
        let mut acc = 0.0;
        loop {
            for (i, v) in s.sum.iter().zip(&cur) {
                env.insert(&i.name, *v);
            }
            acc += self.term(&s.body, &env);
            let mut k = cur.len();
            loop {
                if k == 0 {
                    return Ok(acc);
                }
                k -= 1;
                cur[k] += 1;
                if cur[k] < ranges[k].1 {
                    break;
                }
                cur[k] = ranges[k].0;
            }
        }
    }
    fn full(&self, s: &Scope) -> Result<(Vec<usize>, Vec<f64>), String> {
        let shape = result_shape(s, &self.inputs.shapes)?;
        let n: usize = shape.iter().product();
        let mut out = Vec::with_capacity(n);
        let mut at: Vec<i64> = s.trav.iter().map(|i| i.lo).collect();
        for flat in 0..n {
            let mut r = flat;
            for k in (0..shape.len()).rev() {
                at[k] = s.trav[k].lo + (r % shape[k]) as i64;
                r /= shape[k];
            }
            out.push(self.point(s, &at)?);
        }
        Ok((shape, out))
    }
}

/// Evaluate `s` over `inputs`: the result's shape and row-major values (f64).
pub fn evaluate(s: &Scope, inputs: &Inputs<'_>) -> Result<(Vec<usize>, Vec<f64>), String> {
    let mut e = Eval {
        inputs,
        nested: HashMap::new(),
        cache: Default::default(),
    };
    e.prepare(s)?;
    e.full(s)
}

/// Evaluate `s` at the given result positions only (positions, not iterator values).
pub fn evaluate_at(
    s: &Scope,
    inputs: &Inputs<'_>,
    points: &[Vec<usize>],
) -> Result<Vec<f64>, String> {
    let e = Eval {
        inputs,
        nested: HashMap::new(),
        cache: Default::default(),
    };
    // Nested scopes are evaluated lazily: only what the sampled points read.
    points
        .iter()
        .map(|p| {
            let at: Vec<i64> = s
                .trav
                .iter()
                .zip(p)
                .map(|(i, x)| i.lo + *x as i64)
                .collect();
            e.point(s, &at)
        })
        .collect()
}
