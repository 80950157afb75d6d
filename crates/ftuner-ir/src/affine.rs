//! Affine expressions, maps and integer sets, simplified on construction exactly as
//! MLIR's `AffineExpr.cpp` does, so that printing matches `mlir-opt`.

use std::fmt::Write;
use std::ops::{Add, Mul, Neg, Sub};
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AffineExpr {
    Dim(u32),
    Symbol(u32),
    Const(i64),
    Add(Arc<AffineExpr>, Arc<AffineExpr>),
    Mul(Arc<AffineExpr>, Arc<AffineExpr>),
    Mod(Arc<AffineExpr>, Arc<AffineExpr>),
    FloorDiv(Arc<AffineExpr>, Arc<AffineExpr>),
    CeilDiv(Arc<AffineExpr>, Arc<AffineExpr>),
}

use AffineExpr as E;

// Wrapping, as index arithmetic: `i64::MIN floordiv -1` (2^63) panicked.
fn floor_div(a: i64, b: i64) -> i64 {
    let q = a.wrapping_div(b);
    if (a.wrapping_rem(b) != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}
fn ceil_div(a: i64, b: i64) -> i64 {
    let q = a.wrapping_div(b);
    if (a.wrapping_rem(b) != 0) && ((a < 0) == (b < 0)) {
        q + 1
    } else {
        q
    }
}
fn pos_mod(a: i64, b: i64) -> i64 {
    let m = a.wrapping_rem(b);
    if m < 0 {
        // Exact: the result is below |b| <= 2^63.
        m.wrapping_add(b.wrapping_abs())
    } else {
        m
    }
}
fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a as i64
}

impl AffineExpr {
    pub fn dim(i: u32) -> AffineExpr {
        E::Dim(i)
    }
    pub fn symbol(i: u32) -> AffineExpr {
        E::Symbol(i)
    }
    pub fn constant(c: i64) -> AffineExpr {
        E::Const(c)
    }
    pub fn as_const(&self) -> Option<i64> {
        match self {
            E::Const(c) => Some(*c),
            _ => None,
        }
    }
    /// True if the expression has no dimension identifiers.
    pub fn is_symbolic_or_constant(&self) -> bool {
        match self {
            E::Dim(_) => false,
            E::Symbol(_) | E::Const(_) => true,
            E::Add(a, b) | E::Mul(a, b) | E::Mod(a, b) | E::FloorDiv(a, b) | E::CeilDiv(a, b) => {
                a.is_symbolic_or_constant() && b.is_symbolic_or_constant()
            }
        }
    }
    /// True if the expression is pure affine (no semi-affine multiplication/division).
    pub fn is_pure_affine(&self) -> bool {
        match self {
            E::Dim(_) | E::Symbol(_) | E::Const(_) => true,
            E::Add(a, b) => a.is_pure_affine() && b.is_pure_affine(),
            E::Mul(a, b) => {
                a.is_pure_affine()
                    && b.is_pure_affine()
                    && (a.as_const().is_some() || b.as_const().is_some())
            }
            E::Mod(a, b) | E::FloorDiv(a, b) | E::CeilDiv(a, b) => {
                a.is_pure_affine() && b.as_const().is_some_and(|c| c > 0)
            }
        }
    }
    pub fn largest_known_divisor(&self) -> i64 {
        match self {
            E::Dim(_) | E::Symbol(_) => 1,
            E::Const(c) => c.wrapping_abs(),
            E::Mul(a, b) => a
                .largest_known_divisor()
                .wrapping_mul(b.largest_known_divisor()),
            E::Add(a, b) => gcd(a.largest_known_divisor(), b.largest_known_divisor()),
            E::FloorDiv(a, b) | E::CeilDiv(a, b) => match b.as_const() {
                Some(c) if c != 0 && a.largest_known_divisor().wrapping_rem(c) == 0 => {
                    a.largest_known_divisor().wrapping_div(c).wrapping_abs()
                }
                _ => 1,
            },
            E::Mod(a, b) => match b.as_const() {
                Some(c) => gcd(a.largest_known_divisor(), c),
                None => 1,
            },
        }
    }
    pub fn uses_dim(&self, d: u32) -> bool {
        match self {
            E::Dim(x) => *x == d,
            E::Symbol(_) | E::Const(_) => false,
            E::Add(a, b) | E::Mul(a, b) | E::Mod(a, b) | E::FloorDiv(a, b) | E::CeilDiv(a, b) => {
                a.uses_dim(d) || b.uses_dim(d)
            }
        }
    }
    /// Evaluate with concrete dimension and symbol values.
    pub fn eval(&self, dims: &[i64], syms: &[i64]) -> Option<i64> {
        Some(match self {
            E::Dim(i) => *dims.get(*i as usize)?,
            E::Symbol(i) => *syms.get(*i as usize)?,
            E::Const(c) => *c,
            E::Add(a, b) => a.eval(dims, syms)?.checked_add(b.eval(dims, syms)?)?,
            E::Mul(a, b) => a.eval(dims, syms)?.checked_mul(b.eval(dims, syms)?)?,
            E::Mod(a, b) => {
                let d = b.eval(dims, syms)?;
                if d == 0 {
                    return None;
                }
                pos_mod(a.eval(dims, syms)?, d)
            }
            E::FloorDiv(a, b) => {
                let d = b.eval(dims, syms)?;
                if d == 0 {
                    return None;
                }
                floor_div(a.eval(dims, syms)?, d)
            }
            E::CeilDiv(a, b) => {
                let d = b.eval(dims, syms)?;
                if d == 0 {
                    return None;
                }
                ceil_div(a.eval(dims, syms)?, d)
            }
        })
    }

    pub fn floor_div(self, rhs: AffineExpr) -> AffineExpr {
        simplify_floordiv(&self, &rhs).unwrap_or_else(|| E::FloorDiv(Arc::new(self), Arc::new(rhs)))
    }
    pub fn ceil_div(self, rhs: AffineExpr) -> AffineExpr {
        simplify_ceildiv(&self, &rhs).unwrap_or_else(|| E::CeilDiv(Arc::new(self), Arc::new(rhs)))
    }
    pub fn modulo(self, rhs: AffineExpr) -> AffineExpr {
        simplify_mod(&self, &rhs).unwrap_or_else(|| E::Mod(Arc::new(self), Arc::new(rhs)))
    }

    /// Substitute dims and symbols.
    pub fn replace(&self, dims: &[AffineExpr], syms: &[AffineExpr]) -> AffineExpr {
        match self {
            E::Dim(i) => dims.get(*i as usize).cloned().unwrap_or(E::Dim(*i)),
            E::Symbol(i) => syms.get(*i as usize).cloned().unwrap_or(E::Symbol(*i)),
            E::Const(c) => E::Const(*c),
            E::Add(a, b) => a.replace(dims, syms).add(b.replace(dims, syms)),
            E::Mul(a, b) => a.replace(dims, syms).mul(b.replace(dims, syms)),
            E::Mod(a, b) => a.replace(dims, syms).modulo(b.replace(dims, syms)),
            E::FloorDiv(a, b) => a.replace(dims, syms).floor_div(b.replace(dims, syms)),
            E::CeilDiv(a, b) => a.replace(dims, syms).ceil_div(b.replace(dims, syms)),
        }
    }
}

/// Addition with MLIR's simplifications.
impl Add for AffineExpr {
    type Output = AffineExpr;
    fn add(self, rhs: AffineExpr) -> AffineExpr {
        simplify_add(&self, &rhs).unwrap_or_else(|| E::Add(Arc::new(self), Arc::new(rhs)))
    }
}
/// Multiplication with MLIR's simplifications.
impl Mul for AffineExpr {
    type Output = AffineExpr;
    fn mul(self, rhs: AffineExpr) -> AffineExpr {
        simplify_mul(&self, &rhs).unwrap_or_else(|| E::Mul(Arc::new(self), Arc::new(rhs)))
    }
}
/// `e * -1`
impl Neg for AffineExpr {
    type Output = AffineExpr;
    fn neg(self) -> AffineExpr {
        self * E::Const(-1)
    }
}
/// `a + b * -1`
impl Sub for AffineExpr {
    type Output = AffineExpr;
    fn sub(self, rhs: AffineExpr) -> AffineExpr {
        self + (-rhs)
    }
}

fn simplify_add(lhs: &E, rhs: &E) -> Option<E> {
    let lc = lhs.as_const();
    let rc = rhs.as_const();
    if let (Some(a), Some(b)) = (lc, rc) {
        return a.checked_add(b).map(E::Const);
    }
    if lc.is_some() || (lhs.is_symbolic_or_constant() && !rhs.is_symbolic_or_constant()) {
        return Some(rhs.clone().add(lhs.clone()));
    }
    if rc == Some(0) {
        return Some(lhs.clone());
    }
    if let (E::Add(ll, lr), Some(c2)) = (lhs, rc) {
        if let Some(c1) = lr.as_const() {
            return Some((**ll).clone().add(E::Const(c1.wrapping_add(c2))));
        }
    }
    // c1 * expr + c2 * expr -> (c1 + c2) * expr
    let (c1, first) = match lhs {
        E::Mul(a, b) if b.as_const().is_some() => (b.as_const().unwrap_or(1), &**a),
        _ => (1, lhs),
    };
    let (c2, second) = match rhs {
        E::Mul(a, b) if b.as_const().is_some() => (b.as_const().unwrap_or(1), &**a),
        _ => (1, rhs),
    };
    if first == second {
        return Some(E::Mul(
            Arc::new(first.clone()),
            Arc::new(E::Const(c1.wrapping_add(c2))),
        ));
    }
    // (d0 + 2) + d1 -> (d0 + d1) + 2
    if let E::Add(ll, lr) = lhs {
        if let Some(c) = lr.as_const() {
            return Some((**ll).clone().add(rhs.clone()).add(E::Const(c)));
        }
    }
    // expr - q * (expr floordiv q) -> expr mod q
    let E::Mul(lrhs, rrhs) = rhs else { return None };
    if rrhs.as_const() == Some(-1) {
        if let E::Mul(llrhs, rlrhs) = &**lrhs {
            if let E::FloorDiv(a, q) = &**llrhs {
                if **q == **rlrhs && **a == *lhs {
                    return Some(lhs.clone().modulo((**rlrhs).clone()));
                }
            }
            return None;
        }
    }
    if let E::FloorDiv(llrhs, rlrhs) = &**lrhs {
        let positive = rlrhs.as_const().is_some_and(|c| c > 0);
        if positive && **llrhs == *lhs && **rlrhs == (**rrhs).clone().neg() {
            return Some(lhs.clone().modulo((**rlrhs).clone()));
        }
    }
    None
}

fn simplify_mul(lhs: &E, rhs: &E) -> Option<E> {
    let lc = lhs.as_const();
    let rc = rhs.as_const();
    if let (Some(a), Some(b)) = (lc, rc) {
        return a.checked_mul(b).map(E::Const);
    }
    if !lhs.is_symbolic_or_constant() && !rhs.is_symbolic_or_constant() {
        return None;
    }
    if !rhs.is_symbolic_or_constant() || lc.is_some() {
        return Some(rhs.clone().mul(lhs.clone()));
    }
    if rc == Some(1) {
        return Some(lhs.clone());
    }
    if rc == Some(0) {
        return Some(E::Const(0));
    }
    if let (E::Mul(ll, lr), Some(c2)) = (lhs, rc) {
        if let Some(c1) = lr.as_const() {
            return Some((**ll).clone().mul(E::Const(c1.wrapping_mul(c2))));
        }
    }
    if let E::Mul(ll, lr) = lhs {
        if let Some(c) = lr.as_const() {
            return Some((**ll).clone().mul(rhs.clone()).mul(E::Const(c)));
        }
    }
    None
}

fn simplify_floordiv(lhs: &E, rhs: &E) -> Option<E> {
    let rc = rhs.as_const()?;
    if rc < 1 {
        return None;
    }
    if let Some(lc) = lhs.as_const() {
        return Some(E::Const(floor_div(lc, rc)));
    }
    if rc == 1 {
        return Some(lhs.clone());
    }
    match lhs {
        E::Mul(a, b) => {
            if let Some(c) = b.as_const() {
                if c % rc == 0 {
                    return Some((**a).clone().mul(E::Const(c / rc)));
                }
            }
        }
        E::Add(a, b) => {
            let ld = a.largest_known_divisor();
            let rd = b.largest_known_divisor();
            if ld % rc == 0 || rd % rc == 0 {
                return Some(
                    (**a)
                        .clone()
                        .floor_div(E::Const(rc))
                        .add((**b).clone().floor_div(E::Const(rc))),
                );
            }
        }
        _ => {}
    }
    None
}

fn simplify_ceildiv(lhs: &E, rhs: &E) -> Option<E> {
    let rc = rhs.as_const()?;
    if rc < 1 {
        return None;
    }
    if let Some(lc) = lhs.as_const() {
        return Some(E::Const(ceil_div(lc, rc)));
    }
    if rc == 1 {
        return Some(lhs.clone());
    }
    if let E::Mul(a, b) = lhs {
        if let Some(c) = b.as_const() {
            if c % rc == 0 {
                return Some((**a).clone().mul(E::Const(c / rc)));
            }
        }
    }
    None
}

fn simplify_mod(lhs: &E, rhs: &E) -> Option<E> {
    let rc = rhs.as_const()?;
    if rc < 1 {
        return None;
    }
    if let Some(lc) = lhs.as_const() {
        return Some(E::Const(pos_mod(lc, rc)));
    }
    if lhs.largest_known_divisor() % rc == 0 {
        return Some(E::Const(0));
    }
    match lhs {
        E::Add(a, b) => {
            if a.largest_known_divisor() % rc == 0 {
                return Some((**b).clone().modulo(E::Const(rc)));
            }
            if b.largest_known_divisor() % rc == 0 {
                return Some((**a).clone().modulo(E::Const(rc)));
            }
        }
        E::Mod(a, b) => {
            if let Some(ic) = b.as_const() {
                if ic >= 1 && pos_mod(ic, rc) == 0 {
                    return Some((**a).clone().modulo(E::Const(rc)));
                }
            }
        }
        _ => {}
    }
    None
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Strength {
    Weak,
    Strong,
}

/// Print an expression the way MLIR's `AsmPrinter` does.
pub fn write_expr(out: &mut String, e: &AffineExpr) {
    write_expr_inner(out, e, Strength::Weak)
}

fn write_expr_inner(out: &mut String, e: &AffineExpr, enclosing: Strength) {
    let strong = enclosing == Strength::Strong;
    match e {
        E::Dim(i) => {
            let _ = write!(out, "d{i}");
        }
        E::Symbol(i) => {
            let _ = write!(out, "s{i}");
        }
        E::Const(c) => {
            let _ = write!(out, "{c}");
        }
        E::Add(l, r) => {
            if strong {
                out.push('(');
            }
            if let E::Mul(rl, rr) = &**r {
                if let Some(c) = rr.as_const() {
                    if c == -1 {
                        write_expr_inner(out, l, Strength::Weak);
                        out.push_str(" - ");
                        let s = if matches!(**rl, E::Add(..)) {
                            Strength::Strong
                        } else {
                            Strength::Weak
                        };
                        write_expr_inner(out, rl, s);
                        if strong {
                            out.push(')');
                        }
                        return;
                    }
                    if c < -1 {
                        write_expr_inner(out, l, Strength::Weak);
                        out.push_str(" - ");
                        write_expr_inner(out, rl, Strength::Strong);
                        let _ = write!(out, " * {}", c.unsigned_abs());
                        if strong {
                            out.push(')');
                        }
                        return;
                    }
                }
            }
            if let Some(c) = r.as_const() {
                if c < 0 {
                    write_expr_inner(out, l, Strength::Weak);
                    let _ = write!(out, " - {}", c.unsigned_abs());
                    if strong {
                        out.push(')');
                    }
                    return;
                }
            }
            write_expr_inner(out, l, Strength::Weak);
            out.push_str(" + ");
            write_expr_inner(out, r, Strength::Weak);
            if strong {
                out.push(')');
            }
        }
        E::Mul(l, r) | E::Mod(l, r) | E::FloorDiv(l, r) | E::CeilDiv(l, r) => {
            let spelling = match e {
                E::Mul(..) => " * ",
                E::Mod(..) => " mod ",
                E::FloorDiv(..) => " floordiv ",
                _ => " ceildiv ",
            };
            if strong {
                out.push('(');
            }
            if matches!(e, E::Mul(..)) && r.as_const() == Some(-1) {
                out.push('-');
                write_expr_inner(out, l, Strength::Strong);
            } else {
                write_expr_inner(out, l, Strength::Strong);
                out.push_str(spelling);
                write_expr_inner(out, r, Strength::Strong);
            }
            if strong {
                out.push(')');
            }
        }
    }
}

/// `(d0, d1)[s0] -> (d0 + s0, d1)`
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AffineMap {
    pub num_dims: u32,
    pub num_symbols: u32,
    pub results: Vec<AffineExpr>,
}

impl AffineMap {
    pub fn new(num_dims: u32, num_symbols: u32, results: Vec<AffineExpr>) -> AffineMap {
        AffineMap {
            num_dims,
            num_symbols,
            results,
        }
    }
    pub fn identity(n: u32) -> AffineMap {
        AffineMap::new(n, 0, (0..n).map(E::Dim).collect())
    }
    /// A map of `n` dims whose results are the given dims, e.g. `(d0, d1, d2) -> (d0, d2)`.
    pub fn projection(n: u32, dims: &[u32]) -> AffineMap {
        AffineMap::new(n, 0, dims.iter().map(|&d| E::Dim(d)).collect())
    }
    pub fn is_identity(&self) -> bool {
        self.num_symbols == 0
            && self.results.len() == self.num_dims as usize
            && self
                .results
                .iter()
                .enumerate()
                .all(|(i, e)| *e == E::Dim(i as u32))
    }
    /// If every result is a plain dim, the dims in result order (not checked distinct:
    /// `(d1, d1)` gives `[1, 1]`).
    pub fn as_permutation_like(&self) -> Option<Vec<u32>> {
        self.results
            .iter()
            .map(|e| if let E::Dim(d) = e { Some(*d) } else { None })
            .collect()
    }
    /// If the results are all the map's dims, each once (a permutation, with as many
    /// results as dims), the dims in result order.
    pub fn as_permutation(&self) -> Option<Vec<u32>> {
        let p = self.as_permutation_like()?;
        let mut seen = vec![false; self.num_dims as usize];
        if p.len() != seen.len() {
            return None;
        }
        for d in &p {
            let s = seen.get_mut(*d as usize)?;
            if std::mem::replace(s, true) {
                return None;
            }
        }
        Some(p)
    }
    pub fn eval(&self, dims: &[i64], syms: &[i64]) -> Option<Vec<i64>> {
        self.results.iter().map(|e| e.eval(dims, syms)).collect()
    }
    /// The dims of the results that are plain dims, in order (others skipped).
    pub fn result_dims(&self) -> Vec<u32> {
        self.results
            .iter()
            .filter_map(|e| if let E::Dim(d) = e { Some(*d) } else { None })
            .collect()
    }
    pub fn write(&self, out: &mut String) {
        write_dims_syms(out, self.num_dims, self.num_symbols);
        out.push_str(" -> (");
        for (i, e) in self.results.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_expr(out, e);
        }
        out.push(')');
    }
}

fn write_dims_syms(out: &mut String, nd: u32, ns: u32) {
    out.push('(');
    for i in 0..nd {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "d{i}");
    }
    out.push(')');
    if ns > 0 {
        out.push('[');
        for i in 0..ns {
            if i > 0 {
                out.push_str(", ");
            }
            let _ = write!(out, "s{i}");
        }
        out.push(']');
    }
}

/// `(d0)[s0] : (d0 - 10 >= 0, s0 == 0)`
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IntegerSet {
    pub num_dims: u32,
    pub num_symbols: u32,
    /// Each constraint with `true` for an equality (`== 0`), `false` for `>= 0`.
    pub constraints: Vec<(AffineExpr, bool)>,
}

impl IntegerSet {
    pub fn write(&self, out: &mut String) {
        write_dims_syms(out, self.num_dims, self.num_symbols);
        out.push_str(" : (");
        if self.constraints.is_empty() {
            // MLIR prints the empty set as a trivially false constraint.
            out.push_str("1 == 0");
        }
        for (i, (e, eq)) in self.constraints.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_expr(out, e);
            out.push_str(if *eq { " == 0" } else { " >= 0" });
        }
        out.push(')');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn p(e: &AffineExpr) -> String {
        let mut s = String::new();
        write_expr(&mut s, e);
        s
    }
    #[test]
    fn canonical_forms() {
        let d0 = E::Dim(0);
        let d1 = E::Dim(1);
        assert_eq!(p(&E::Const(2).mul(d0.clone())), "d0 * 2");
        assert_eq!(p(&d0.clone().sub(d1.clone())), "d0 - d1");
        assert_eq!(p(&E::Const(4).add(d0.clone())), "d0 + 4");
        assert_eq!(
            p(&d0.clone().add(E::Const(2)).add(d1.clone())),
            "d0 + d1 + 2"
        );
        assert_eq!(p(&d0.clone().add(d0.clone())), "d0 * 2");
        assert_eq!(p(&d0.clone().neg()), "-d0");
        assert_eq!(
            p(&d0.clone().mul(E::Const(128)).floor_div(E::Const(64))),
            "d0 * 2"
        );
        assert_eq!(p(&d0.clone().mul(E::Const(128)).modulo(E::Const(64))), "0");
        let fd = d0.clone().floor_div(E::Const(4));
        assert_eq!(p(&d0.clone().sub(fd.mul(E::Const(4)))), "d0 mod 4");
        assert_eq!(
            p(&d0.clone().add(d1.clone()).mul(E::Const(3))),
            "(d0 + d1) * 3"
        );
        assert_eq!(
            p(&d0.clone().sub(d1.clone().add(E::Symbol(0)))),
            "d0 - (d1 + s0)"
        );
    }
}
