//! Tensor-algebra expressions in OLLIE's traversal notation: the syntax tree, its parser
//! and printer, and an evaluator (the meaning every derivation must preserve).
//!
//! ```text
//! L<n:0:dim($0, 0), f:0:64, h:0:56, w:0:56> Sum<c:0:64, r:0:3, s:0:3> {
//!   $0[n, c, h + r - 1, w + s - 1] * $1[f, c, r, s]
//! }
//! ```
//!
//! A scope's traversal iterators (`L`) span its result: the element of the result at
//! position `p` is the value of the body summed over the summation iterators (`Sum`), with
//! each traversal iterator set to `lo + p`. Reading a tensor outside its bounds gives 0
//! (padding). A nested scope used as a tensor, `(L<...> Sum<...> { ... })[i, j]`, is
//! indexed by its iterators' values (so a scope over `t:-1:57` is read at `t = -1 ... 56`),
//! and is closed: it only uses its own iterators. Index expressions are affine in the
//! iterators, with `floordiv` and `mod` by positive constants.

use std::collections::{BTreeMap, HashMap};
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

/// The upper bound of an iterator: a constant, or a dimension of an input plus a constant.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Bound {
    pub dim: Option<(usize, usize)>,
    pub c: i64,
}

impl Bound {
    pub fn fixed(c: i64) -> Bound {
        Bound { dim: None, c }
    }
    pub fn eval(&self, shapes: &[Vec<usize>]) -> Option<i64> {
        match self.dim {
            None => Some(self.c),
            Some((i, d)) => Some((*shapes.get(i)?.get(d)? as i64).wrapping_add(self.c)),
        }
    }
}

/// An iterator `name:lo:hi` (the range `[lo, hi)`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Iter {
    pub name: String,
    pub lo: i64,
    pub hi: Bound,
}

impl Iter {
    pub fn new(name: &str, lo: i64, hi: i64) -> Iter {
        Iter {
            name: name.into(),
            lo,
            hi: Bound::fixed(hi),
        }
    }
    /// `name:0:dim($input, d)`: a range of exactly a dimension of an input.
    pub fn over_dim(name: &str, input: usize, d: usize) -> Iter {
        Iter {
            name: name.into(),
            lo: 0,
            hi: Bound {
                dim: Some((input, d)),
                c: 0,
            },
        }
    }
    /// `(lo, hi)` when the bound is static.
    pub fn static_range(&self) -> Option<(i64, i64)> {
        self.hi.dim.is_none().then_some((self.lo, self.hi.c))
    }
    /// `(input, d)` when the range is exactly `[0, dim($input, d))`.
    pub fn dim_range(&self) -> Option<(usize, usize)> {
        self.hi.dim.filter(|_| self.lo == 0 && self.hi.c == 0)
    }
}

/// What an access reads: input `$i` of the op, or a nested scope.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Src {
    Input(usize),
    Scope(Box<Scope>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
}

/// The summand.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Term {
    Access(Src, Vec<Idx>),
    /// A literal, stored as the bits of an f64 (so terms can be hashed).
    Const(u64),
    Bin(BinOp, Box<Term>, Box<Term>),
}

impl Term {
    pub fn constant(x: f64) -> Term {
        Term::Const(x.to_bits())
    }
    pub fn product(a: Term, b: Term) -> Term {
        Term::Bin(BinOp::Mul, Box::new(a), Box::new(b))
    }
    /// Every access, in order.
    pub fn accesses(&self) -> Vec<(&Src, &[Idx])> {
        let mut v = vec![];
        fn go<'a>(t: &'a Term, v: &mut Vec<(&'a Src, &'a [Idx])>) {
            match t {
                Term::Access(s, i) => v.push((s, i)),
                Term::Const(_) => {}
                Term::Bin(_, a, b) => {
                    go(a, v);
                    go(b, v);
                }
            }
        }
        go(self, &mut v);
        v
    }
    /// Apply `f` to every index expression.
    pub fn map_idx(&self, f: &dyn Fn(&Idx) -> Idx) -> Term {
        match self {
            Term::Access(s, i) => Term::Access(s.clone(), i.iter().map(f).collect()),
            Term::Const(c) => Term::Const(*c),
            Term::Bin(o, a, b) => Term::Bin(*o, Box::new(a.map_idx(f)), Box::new(b.map_idx(f))),
        }
    }
}

/// `L<trav> Sum<sum> { body }`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Scope {
    pub trav: Vec<Iter>,
    pub sum: Vec<Iter>,
    pub body: Term,
}

impl Scope {
    pub fn iter(&self, name: &str) -> Option<&Iter> {
        self.trav.iter().chain(&self.sum).find(|i| i.name == name)
    }
    /// The inputs this scope (and its nested scopes) read.
    pub fn inputs(&self, out: &mut Vec<usize>) {
        for (s, _) in self.body.accesses() {
            match s {
                Src::Input(i) => {
                    if !out.contains(i) {
                        out.push(*i)
                    }
                }
                Src::Scope(sc) => sc.inputs(out),
            }
        }
    }
    /// Flops per result element (multiplies and adds of the body, times the summation
    /// volume), with dynamic bounds taken as `dyn_extent`.
    pub fn sum_volume(&self) -> Option<i64> {
        self.sum
            .iter()
            .map(|i| i.static_range().map(|(l, h)| (h - l).max(0)))
            .product()
    }
}

// ---------------------------------------------------------------------------------------
// Printing

/// Print `s`, naming input `i` by `name(i)` (`$i` in the attribute, the SSA name in the
/// custom assembly).
pub fn print_scope(s: &Scope, name: &dyn Fn(usize) -> String) -> String {
    let mut out = String::new();
    write_scope(&mut out, s, name);
    out
}

fn write_bound(out: &mut String, b: &Bound, name: &dyn Fn(usize) -> String) {
    match b.dim {
        None => {
            let _ = write!(out, "{}", b.c);
        }
        Some((i, d)) => {
            let _ = write!(out, "dim({}, {d})", name(i));
            if b.c != 0 {
                let _ = write!(out, " {} {}", if b.c < 0 { "-" } else { "+" }, b.c.abs());
            }
        }
    }
}

fn write_iters(out: &mut String, kw: &str, its: &[Iter], name: &dyn Fn(usize) -> String) {
    out.push_str(kw);
    out.push('<');
    for (k, i) in its.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{}:{}:", i.name, i.lo);
        write_bound(out, &i.hi, name);
    }
    out.push('>');
}

fn write_scope(out: &mut String, s: &Scope, name: &dyn Fn(usize) -> String) {
    write_iters(out, "L", &s.trav, name);
    if !s.sum.is_empty() {
        out.push(' ');
        write_iters(out, "Sum", &s.sum, name);
    }
    out.push_str(" { ");
    write_term(out, &s.body, name, 0);
    out.push_str(" }");
}

fn write_term(out: &mut String, t: &Term, name: &dyn Fn(usize) -> String, prec: u8) {
    match t {
        Term::Access(src, idx) => {
            match src {
                Src::Input(i) => out.push_str(&name(*i)),
                Src::Scope(s) => {
                    out.push('(');
                    write_scope(out, s, name);
                    out.push(')');
                }
            }
            out.push('[');
            for (k, e) in idx.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{e}");
            }
            out.push(']');
        }
        Term::Const(b) => {
            let x = f64::from_bits(*b);
            // Shortest round-tripping form, always with a '.' (the lexer's float marker).
            let mut t = format!("{x:?}");
            if !t.contains('.') {
                match t.find('e') {
                    Some(p) => t.insert_str(p, ".0"),
                    None => t.push_str(".0"),
                }
            }
            out.push_str(&t);
        }
        Term::Bin(op, a, b) => {
            let p = if *op == BinOp::Mul { 2 } else { 1 };
            if p < prec {
                out.push('(');
            }
            write_term(out, a, name, p);
            out.push_str(match op {
                BinOp::Add => " + ",
                BinOp::Sub => " - ",
                BinOp::Mul => " * ",
            });
            write_term(out, b, name, p + 1);
            if p < prec {
                out.push(')');
            }
        }
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&print_scope(self, &|i| format!("${i}")))
    }
}

// ---------------------------------------------------------------------------------------
// Parsing

/// A parse error at a byte offset of the parsed text.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    pub offset: usize,
    pub msg: String,
}

#[derive(Clone, Debug, PartialEq)]
enum T {
    Ident(String),
    Ref(String),
    Int(i64),
    Float(f64),
    P(char),
    Eof,
}

struct Lex<'a> {
    s: &'a [u8],
    pos: usize,
    tok: T,
    at: usize,
}

impl<'a> Lex<'a> {
    fn new(s: &'a str) -> Result<Lex<'a>, ParseError> {
        let mut l = Lex {
            s: s.as_bytes(),
            pos: 0,
            tok: T::Eof,
            at: 0,
        };
        l.next()?;
        Ok(l)
    }
    fn err(&self, msg: impl Into<String>) -> ParseError {
        ParseError {
            offset: self.at,
            msg: msg.into(),
        }
    }
    fn next(&mut self) -> Result<T, ParseError> {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
        self.at = self.pos;
        let prev = std::mem::replace(&mut self.tok, T::Eof);
        let Some(&c) = self.s.get(self.pos) else {
            return Ok(prev);
        };
        let word = |l: &mut Lex, start: usize| {
            let mut e = start;
            while e < l.s.len()
                && (l.s[e].is_ascii_alphanumeric() || matches!(l.s[e], b'_' | b'#' | b'.' | b'\''))
            {
                e += 1;
            }
            l.pos = e;
            String::from_utf8_lossy(&l.s[start..e]).into_owned()
        };
        self.tok = if c.is_ascii_alphabetic() || c == b'_' {
            T::Ident(word(self, self.pos))
        } else if c == b'%' || c == b'$' {
            let w = word(self, self.pos + 1);
            if w.is_empty() {
                return Err(self.err("expected a name after '%' or '$'"));
            }
            T::Ref(format!("{}{w}", c as char))
        } else if c.is_ascii_digit() {
            let mut e = self.pos;
            let mut float = false;
            while e < self.s.len()
                && (self.s[e].is_ascii_digit()
                    || self.s[e] == b'.'
                    || ((self.s[e] == b'e' || self.s[e] == b'E') && float)
                    || ((self.s[e] == b'-' || self.s[e] == b'+')
                        && matches!(self.s[e - 1], b'e' | b'E')
                        && float))
            {
                float |= self.s[e] == b'.';
                e += 1;
            }
            let txt = String::from_utf8_lossy(&self.s[self.pos..e]).into_owned();
            self.pos = e;
            if float {
                T::Float(
                    txt.parse()
                        .map_err(|_| self.err(format!("bad number '{txt}'")))?,
                )
            } else {
                T::Int(
                    txt.parse()
                        .map_err(|_| self.err(format!("integer '{txt}' out of range")))?,
                )
            }
        } else if b"<>:,{}[]()+-*?/".contains(&c) {
            self.pos += 1;
            T::P(c as char)
        } else {
            return Err(self.err(format!("unexpected character '{}'", c as char)));
        };
        Ok(prev)
    }
    fn eat(&mut self, c: char) -> Result<bool, ParseError> {
        if self.tok == T::P(c) {
            self.next()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }
    fn expect(&mut self, c: char) -> Result<(), ParseError> {
        if !self.eat(c)? {
            return Err(self.err(format!("expected '{c}'")));
        }
        Ok(())
    }
    fn is_kw(&self, k: &str) -> bool {
        matches!(&self.tok, T::Ident(s) if s == k)
    }
}

struct P<'a, 'r> {
    l: Lex<'a>,
    resolve: &'r dyn Fn(&str) -> Option<usize>,
}

impl P<'_, '_> {
    fn int(&mut self) -> Result<i64, ParseError> {
        let neg = self.l.eat('-')?;
        match self.l.tok {
            T::Int(v) => {
                self.l.next()?;
                Ok(if neg { -v } else { v })
            }
            _ => Err(self.l.err("expected an integer")),
        }
    }
    fn input(&mut self) -> Result<usize, ParseError> {
        match self.l.tok.clone() {
            T::Ref(r) => {
                let i = (self.resolve)(&r).ok_or_else(|| {
                    self.l
                        .err(format!("'{r}' is not an input of the expression"))
                })?;
                self.l.next()?;
                Ok(i)
            }
            _ => Err(self.l.err("expected an input ('%name' or '$index')")),
        }
    }
    fn bound(&mut self) -> Result<Bound, ParseError> {
        if self.l.is_kw("dim") {
            self.l.next()?;
            self.l.expect('(')?;
            let i = self.input()?;
            self.l.expect(',')?;
            let d = self.int()?;
            self.l.expect(')')?;
            let mut c = 0;
            if self.l.eat('+')? {
                c = self.int()?;
            } else if self.l.eat('-')? {
                c = -self.int()?;
            }
            return Ok(Bound {
                dim: Some((
                    i,
                    usize::try_from(d).map_err(|_| self.l.err("negative dim"))?,
                )),
                c,
            });
        }
        Ok(Bound::fixed(self.int()?))
    }
    fn iters(&mut self, kw: &str) -> Result<Vec<Iter>, ParseError> {
        if !self.l.is_kw(kw) {
            return Err(self.l.err(format!("expected '{kw}<'")));
        }
        self.l.next()?;
        self.l.expect('<')?;
        let mut v = vec![];
        if self.l.eat('>')? {
            return Ok(v);
        }
        loop {
            let T::Ident(name) = self.l.tok.clone() else {
                return Err(self.l.err("expected an iterator name"));
            };
            self.l.next()?;
            self.l.expect(':')?;
            let lo = self.int()?;
            self.l.expect(':')?;
            let hi = self.bound()?;
            v.push(Iter { name, lo, hi });
            if self.l.eat('>')? {
                return Ok(v);
            }
            self.l.expect(',')?;
        }
    }
    fn scope(&mut self) -> Result<Scope, ParseError> {
        let trav = self.iters("L")?;
        let sum = if self.l.is_kw("Sum") {
            self.iters("Sum")?
        } else {
            vec![]
        };
        self.l.expect('{')?;
        let body = self.term()?;
        self.l.expect('}')?;
        Ok(Scope { trav, sum, body })
    }
    fn term(&mut self) -> Result<Term, ParseError> {
        let mut a = self.product()?;
        loop {
            let op = if self.l.eat('+')? {
                BinOp::Add
            } else if self.l.eat('-')? {
                BinOp::Sub
            } else {
                return Ok(a);
            };
            let b = self.product()?;
            a = Term::Bin(op, Box::new(a), Box::new(b));
        }
    }
    fn product(&mut self) -> Result<Term, ParseError> {
        let mut a = self.factor()?;
        while self.l.eat('*')? {
            let b = self.factor()?;
            a = Term::product(a, b);
        }
        Ok(a)
    }
    fn factor(&mut self) -> Result<Term, ParseError> {
        match self.l.tok.clone() {
            T::Float(x) => {
                self.l.next()?;
                Ok(Term::constant(x))
            }
            T::Int(x) => {
                self.l.next()?;
                Ok(Term::constant(x as f64))
            }
            T::P('-') => {
                self.l.next()?;
                let f = self.factor()?;
                Ok(Term::Bin(
                    BinOp::Sub,
                    Box::new(Term::constant(0.0)),
                    Box::new(f),
                ))
            }
            T::P('(') => {
                self.l.next()?;
                if self.l.is_kw("L") {
                    let s = self.scope()?;
                    self.l.expect(')')?;
                    let idx = self.indices()?;
                    return Ok(Term::Access(Src::Scope(Box::new(s)), idx));
                }
                let t = self.term()?;
                self.l.expect(')')?;
                Ok(t)
            }
            T::Ref(_) => {
                let i = self.input()?;
                let idx = self.indices()?;
                Ok(Term::Access(Src::Input(i), idx))
            }
            _ => Err(self.l.err("expected a tensor access, a number or '('")),
        }
    }
    fn indices(&mut self) -> Result<Vec<Idx>, ParseError> {
        self.l.expect('[')?;
        let mut v = vec![];
        if self.l.eat(']')? {
            return Ok(v);
        }
        loop {
            v.push(self.idx()?);
            if self.l.eat(']')? {
                return Ok(v);
            }
            self.l.expect(',')?;
        }
    }
    fn idx(&mut self) -> Result<Idx, ParseError> {
        let mut a = self.idx_product()?;
        loop {
            if self.l.eat('+')? {
                a = a.add(&self.idx_product()?);
            } else if self.l.eat('-')? {
                a = a.sub(&self.idx_product()?);
            } else {
                return Ok(a);
            }
        }
    }
    fn idx_product(&mut self) -> Result<Idx, ParseError> {
        let mut a = self.idx_atom()?;
        loop {
            if self.l.eat('*')? {
                let b = self.idx_atom()?;
                a = match (a.as_const(), b.as_const()) {
                    (Some(k), _) => b.scale(k),
                    (_, Some(k)) => a.scale(k),
                    _ => return Err(self.l.err("index expressions must be affine")),
                };
            } else if self.l.eat('/')? {
                let k = self.int()?;
                if k <= 0 {
                    return Err(self.l.err("'/' needs a positive constant"));
                }
                a = a.exact_div(k);
            } else if self.l.is_kw("floordiv") || self.l.is_kw("mod") {
                let div = self.l.is_kw("floordiv");
                self.l.next()?;
                let k = self.int()?;
                if k <= 0 {
                    return Err(self.l.err("floordiv and mod need a positive constant"));
                }
                a = if div { a.floordiv(k) } else { a.modulo(k) };
            } else {
                return Ok(a);
            }
        }
    }
    fn idx_atom(&mut self) -> Result<Idx, ParseError> {
        match self.l.tok.clone() {
            T::Int(v) => {
                self.l.next()?;
                Ok(Idx::constant(v))
            }
            T::P('-') => {
                self.l.next()?;
                Ok(self.idx_atom()?.scale(-1))
            }
            T::P('(') => {
                self.l.next()?;
                let e = self.idx()?;
                self.l.expect(')')?;
                Ok(e)
            }
            T::Ident(v) => {
                self.l.next()?;
                Ok(Idx::var(&v))
            }
            _ => Err(self.l.err("expected an index expression")),
        }
    }
}

/// Parse a scope; `resolve` maps an input reference (`$0`, `%arg1`) to its position.
pub fn parse_scope(
    src: &str,
    resolve: &dyn Fn(&str) -> Option<usize>,
) -> Result<Scope, ParseError> {
    let mut p = P {
        l: Lex::new(src)?,
        resolve,
    };
    let s = p.scope()?;
    if p.l.tok != T::Eof {
        return Err(p.l.err("unexpected text after the expression"));
    }
    Ok(s)
}

/// Resolve `$i` references (the attribute form).
pub fn positional(r: &str) -> Option<usize> {
    r.strip_prefix('$')?.parse().ok()
}

// ---------------------------------------------------------------------------------------
// Checking

/// Check a scope against its inputs' ranks and the result rank: iterator names unique
/// within a scope, every index variable bound, ranks matching, nested scopes closed,
/// bounds' dims existing.
pub fn check(s: &Scope, ranks: &[usize]) -> Result<(), String> {
    let mut seen = vec![];
    for i in s.trav.iter().chain(&s.sum) {
        if seen.contains(&i.name) {
            return Err(format!("iterator '{}' is declared twice", i.name));
        }
        seen.push(i.name.clone());
        if let Some((inp, d)) = i.hi.dim {
            if ranks.get(inp).is_none_or(|r| d >= *r) {
                return Err(format!(
                    "bound of '{}' names dim {d} of input ${inp}, which does not exist",
                    i.name
                ));
            }
        } else if i.hi.c < i.lo {
            return Err(format!("iterator '{}' has an empty range", i.name));
        }
    }
    for (src, idx) in s.body.accesses() {
        let rank = match src {
            Src::Input(i) => *ranks
                .get(*i)
                .ok_or_else(|| format!("reads input ${i}, but there are {}", ranks.len()))?,
            Src::Scope(inner) => {
                check(inner, ranks)?;
                inner.trav.len()
            }
        };
        if idx.len() != rank {
            return Err(format!(
                "an access has {} indices for a tensor of rank {rank}",
                idx.len()
            ));
        }
        let mut vars = vec![];
        for e in idx {
            e.vars(&mut vars);
        }
        if let Some(v) = vars.iter().find(|v| !seen.contains(v)) {
            return Err(format!(
                "index variable '{v}' is not an iterator of its scope"
            ));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Evaluation

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_canonical_indices() {
        let src = "L<n:0:dim($0, 0), f:0:4, h:0:5> Sum<c:0:3, r:0:3> { $0[n, c, h + r - 1] * $1[f, c, r] }";
        let s = parse_scope(src, &positional).unwrap();
        assert_eq!(s.to_string(), src);
        let t = parse_scope(
            "L<i:0:8> { $0[(i + 2 * i) floordiv 3, i mod 2 + 0, 4 - i] }",
            &positional,
        )
        .unwrap();
        assert_eq!(t.to_string(), "L<i:0:8> { $0[i, i mod 2, -i + 4] }");
        let nested =
            "L<i:0:4> Sum<k:0:2> { (L<a:-1:5, b:0:2> { $0[a, b] + 1.0 })[i - 1, k] * 2.0 }";
        let u = parse_scope(nested, &positional).unwrap();
        assert_eq!(u.to_string(), nested);
        assert_eq!(check(&u, &[2]), Ok(()));
    }

    #[test]
    fn errors_have_offsets() {
        let e = parse_scope("L<i:0:4> { $0[i * i] }", &positional).unwrap_err();
        assert!(e.msg.contains("affine"), "{e:?}");
        let e = parse_scope("L<i:0:4> { $0[i] ", &positional).unwrap_err();
        assert_eq!(e.msg, "expected '}'");
        let e = parse_scope("L<i:0:4> { %x[i] }", &positional).unwrap_err();
        assert!(e.msg.contains("not an input"));
        let s = parse_scope("L<i:0:4> { $0[j] }", &positional).unwrap();
        assert!(check(&s, &[1]).unwrap_err().contains("'j'"));
        assert!(check(&s, &[2]).is_err());
    }

    #[test]
    fn evaluates_conv_with_padding() {
        // 1-d convolution with implicit zero padding.
        let s = parse_scope("L<h:0:4> Sum<r:0:3> { $0[h + r - 1] * $1[r] }", &positional).unwrap();
        let a = [1.0, 2.0, 3.0, 4.0];
        let k = [1.0, 10.0, 100.0];
        let inp = Inputs {
            shapes: vec![vec![4], vec![3]],
            data: vec![&a, &k],
        };
        let (sh, v) = evaluate(&s, &inp).unwrap();
        assert_eq!(sh, vec![4]);
        assert_eq!(v, vec![210.0, 321.0, 432.0, 43.0]);
        // The same through a nested scope read at offset iterator values.
        let n = parse_scope(
            "L<h:0:4> Sum<r:0:3> { (L<t:-1:5, q:0:3> { $0[t] * $1[q] })[h + r - 1, r] }",
            &positional,
        )
        .unwrap();
        assert_eq!(evaluate(&n, &inp).unwrap().1, v);
        assert_eq!(
            evaluate_at(&n, &inp, &[vec![3], vec![0]]).unwrap(),
            vec![43.0, 210.0]
        );
    }

    #[test]
    fn index_ranges_and_substitution() {
        let e = parse_scope("L<h:0:4, r:0:3> { $0[2 * h + r - 1] }", &positional).unwrap();
        let Term::Access(_, idx) = &e.body else {
            panic!()
        };
        let r = |v: &str| match v {
            "h" => Some((0, 4)),
            "r" => Some((0, 3)),
            _ => None,
        };
        assert_eq!(idx[0].range(&r), Some((-1, 8)));
        let t = idx[0].subst("h", &Idx::var("q").floordiv(2));
        assert_eq!(t.to_string(), "r + 2 * (q floordiv 2) - 1");
        let back = parse_scope(&format!("L<q:0:4, r:0:3> {{ $0[{t}] }}"), &positional).unwrap();
        let Term::Access(_, bi) = &back.body else {
            panic!()
        };
        assert_eq!(bi[0], t);
    }
}
