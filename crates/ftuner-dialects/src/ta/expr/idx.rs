//! Index expressions: affine in the iterators, with `floordiv`, exact division and `mod` by
//! positive constants ([`Idx`] over [`Atom`]s), kept canonical; their algebra, evaluation,
//! ranges and printing.

use std::collections::BTreeMap;
use std::fmt::Write;

/// A non-linear or variable atom of an index expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Atom {
    Var(String),
    FloorDiv(Box<Idx>, i64),
    Mod(Box<Idx>, i64),
    /// Exact division `e / k`: the index when `k` divides `e`; otherwise the access reads
    /// nothing (0), like a read outside the tensor. A strided `insert_slice` (zero
    /// insertion, as in transposed convolutions) reads its source this way.
    Div(Box<Idx>, i64),
}

/// An index expression in canonical form: `Σ coef·atom + c`, atoms sorted, no zero
/// coefficients (so structurally equal means equal).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Idx {
    pub terms: Vec<(Atom, i64)>,
    pub c: i64,
}

impl Idx {
    pub fn constant(c: i64) -> Idx {
        Idx { terms: vec![], c }
    }
    pub fn var(name: &str) -> Idx {
        Idx::atom(Atom::Var(name.to_string()))
    }
    fn atom(a: Atom) -> Idx {
        Idx {
            terms: vec![(a, 1)],
            c: 0,
        }
    }
    fn from_map(m: BTreeMap<Atom, i64>, c: i64) -> Idx {
        Idx {
            terms: m.into_iter().filter(|(_, k)| *k != 0).collect(),
            c,
        }
    }
    pub fn add(&self, o: &Idx) -> Idx {
        let mut m: BTreeMap<Atom, i64> = self.terms.iter().cloned().collect();
        for (a, k) in &o.terms {
            let e = m.entry(a.clone()).or_insert(0);
            *e = e.wrapping_add(*k);
        }
        // Wrapping: absurd constants must not panic (they fail bounds checks instead).
        Idx::from_map(m, self.c.wrapping_add(o.c))
    }
    pub fn scale(&self, k: i64) -> Idx {
        if k == 0 {
            return Idx::constant(0);
        }
        Idx {
            terms: self
                .terms
                .iter()
                .map(|(a, x)| (a.clone(), x.wrapping_mul(k)))
                .collect(),
            c: self.c.wrapping_mul(k),
        }
    }
    pub fn sub(&self, o: &Idx) -> Idx {
        self.add(&o.scale(-1))
    }
    pub fn offset(&self, c: i64) -> Idx {
        self.add(&Idx::constant(c))
    }
    /// `self floordiv k`, simplified when every coefficient and the constant divide by k.
    pub fn floordiv(&self, k: i64) -> Idx {
        self.divided(k)
            .unwrap_or_else(|| Idx::atom(Atom::FloorDiv(Box::new(self.clone()), k)))
    }
    /// `self / k` term by term, when k divides every coefficient and the constant.
    fn divided(&self, k: i64) -> Option<Idx> {
        (self.terms.iter().all(|(_, x)| x % k == 0) && self.c % k == 0).then(|| Idx {
            terms: self.terms.iter().map(|(a, x)| (a.clone(), x / k)).collect(),
            c: self.c / k,
        })
    }
    /// `self / k` (exact division), simplified when every coefficient and the constant
    /// divide by k.
    pub fn exact_div(&self, k: i64) -> Idx {
        self.divided(k)
            .unwrap_or_else(|| Idx::atom(Atom::Div(Box::new(self.clone()), k)))
    }
    /// `self mod k`, simplified when every coefficient and the constant divide by k.
    pub fn modulo(&self, k: i64) -> Idx {
        if self.divided(k).is_some() {
            return Idx::constant(0);
        }
        Idx::atom(Atom::Mod(Box::new(self.clone()), k))
    }
    /// The constant, when the expression has no atom.
    pub fn as_const(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.c)
    }
    /// The variable, when the expression is exactly one iterator.
    pub fn as_var(&self) -> Option<&str> {
        match self.terms.as_slice() {
            [(Atom::Var(v), 1)] if self.c == 0 => Some(v),
            _ => None,
        }
    }
    /// `(coefficients of the variables, constant)` when the expression is affine.
    pub fn linear(&self) -> Option<(BTreeMap<String, i64>, i64)> {
        let mut m = BTreeMap::new();
        for (a, k) in &self.terms {
            match a {
                Atom::Var(v) => {
                    m.insert(v.clone(), *k);
                }
                _ => return None,
            }
        }
        Some((m, self.c))
    }
    /// The coefficient of variable `v` when it appears only linearly (0 when absent).
    pub fn coef(&self, v: &str) -> i64 {
        self.terms
            .iter()
            .find_map(|(a, k)| matches!(a, Atom::Var(x) if x == v).then_some(*k))
            .unwrap_or(0)
    }
    /// Whether `v` appears anywhere (also inside floordiv / mod).
    pub fn uses(&self, v: &str) -> bool {
        self.terms.iter().any(|(a, _)| match a {
            Atom::Var(x) => x == v,
            Atom::FloorDiv(e, _) | Atom::Mod(e, _) | Atom::Div(e, _) => e.uses(v),
        })
    }
    pub fn vars(&self, out: &mut Vec<String>) {
        for (a, _) in &self.terms {
            match a {
                Atom::Var(x) => {
                    if !out.contains(x) {
                        out.push(x.clone())
                    }
                }
                Atom::FloorDiv(e, _) | Atom::Mod(e, _) | Atom::Div(e, _) => e.vars(out),
            }
        }
    }
    /// Replace variable `v` by `by` everywhere.
    pub fn subst(&self, v: &str, by: &Idx) -> Idx {
        let mut out = Idx::constant(self.c);
        for (a, k) in &self.terms {
            let t = match a {
                Atom::Var(x) if x == v => by.clone(),
                Atom::Var(_) => Idx::atom(a.clone()),
                Atom::FloorDiv(e, d) => e.subst(v, by).floordiv(*d),
                Atom::Div(e, d) => e.subst(v, by).exact_div(*d),
                Atom::Mod(e, d) => e.subst(v, by).modulo(*d),
            };
            out = out.add(&t.scale(*k));
        }
        out
    }
    /// Rename variables through `f`.
    pub fn rename(&self, f: &dyn Fn(&str) -> String) -> Idx {
        let mut out = Idx::constant(self.c);
        for (a, k) in &self.terms {
            let t = match a {
                Atom::Var(x) => Idx::var(&f(x)),
                Atom::FloorDiv(e, d) => e.rename(f).floordiv(*d),
                Atom::Div(e, d) => e.rename(f).exact_div(*d),
                Atom::Mod(e, d) => e.rename(f).modulo(*d),
            };
            out = out.add(&t.scale(*k));
        }
        out
    }
    /// The value; None when an exact division is not exact (the access reads 0).
    pub fn eval(&self, env: &dyn Fn(&str) -> i64) -> Option<i64> {
        let mut s = self.c;
        for (a, k) in &self.terms {
            let v = match a {
                Atom::Var(x) => env(x),
                Atom::FloorDiv(e, d) => e.eval(env)?.div_euclid(*d),
                Atom::Mod(e, d) => e.eval(env)?.rem_euclid(*d),
                Atom::Div(e, d) => {
                    let x = e.eval(env)?;
                    if x.rem_euclid(*d) != 0 {
                        return None;
                    }
                    x.div_euclid(*d)
                }
            };
            s = s.wrapping_add(k.wrapping_mul(v));
        }
        Some(s)
    }
    /// The range `[lo, hi)` of values over iterator ranges `range` (interval arithmetic;
    /// exact for affine expressions of independent iterators).
    pub fn range(&self, range: &dyn Fn(&str) -> Option<(i64, i64)>) -> Option<(i64, i64)> {
        let (mut lo, mut hi) = (self.c, self.c);
        for (a, k) in &self.terms {
            let (l, h) = match a {
                Atom::Var(x) => {
                    let (l, h) = range(x)?;
                    (l, h.checked_sub(1)?)
                }
                Atom::FloorDiv(e, d) => {
                    let (l, h) = e.range(range)?;
                    (l.div_euclid(*d), h.checked_sub(1)?.div_euclid(*d))
                }
                Atom::Div(e, d) => {
                    let (l, h) = e.range(range)?;
                    // Smallest and largest multiples of d in [l, h).
                    let lo = -((-l).div_euclid(*d));
                    (lo, h.checked_sub(1)?.div_euclid(*d))
                }
                Atom::Mod(_, d) => (0, d - 1),
            };
            let (a, b) = if *k >= 0 { (l, h) } else { (h, l) };
            lo = lo.checked_add(k.checked_mul(a)?)?;
            hi = hi.checked_add(k.checked_mul(b)?)?;
        }
        Some((lo, hi.checked_add(1)?))
    }
}

fn write_atom(out: &mut String, a: &Atom) {
    match a {
        Atom::Var(v) => out.push_str(v),
        Atom::FloorDiv(e, d) | Atom::Mod(e, d) | Atom::Div(e, d) => {
            let kw = match a {
                Atom::FloorDiv(..) => "floordiv",
                Atom::Mod(..) => "mod",
                _ => "/",
            };
            if e.terms.len() + usize::from(e.c != 0) > 1 || e.terms.iter().any(|t| t.1 != 1) {
                let _ = write!(out, "({e}) {kw} {d}");
            } else {
                let _ = write!(out, "{e} {kw} {d}");
            }
        }
    }
}

impl std::fmt::Display for Idx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = String::new();
        for (i, (a, k)) in self.terms.iter().enumerate() {
            let (neg, m) = (*k < 0, k.abs());
            if i == 0 {
                if neg {
                    s.push('-');
                }
            } else {
                s.push_str(if neg { " - " } else { " + " });
            }
            if m != 1 {
                let _ = write!(s, "{m} * ");
            }
            let wrap = m != 1 && !matches!(a, Atom::Var(_));
            if wrap {
                s.push('(');
            }
            write_atom(&mut s, a);
            if wrap {
                s.push(')');
            }
        }
        if self.terms.is_empty() {
            let _ = write!(s, "{}", self.c);
        } else if self.c != 0 {
            let _ = write!(
                s,
                " {} {}",
                if self.c < 0 { "-" } else { "+" },
                self.c.abs()
            );
        }
        f.write_str(&s)
    }
}
