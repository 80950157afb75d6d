//! The body of the `linalg.generic` a `ta.expr` lowers to: index arithmetic, the
//! iterators' values, and the expression's scalar code, where a mapped access reads its
//! block argument and any other access is a `tensor.extract` at computed indices,
//! guarded so that out-of-bounds (and inexact-division) reads are 0.

use super::Nest;
use crate::emit::ty;
use ftuner_dialects::ops;
use ftuner_dialects::ta::{Atom, BinOp, Idx, Scope, Src, Term};
use std::fmt::Write;

/// Block-argument markers while generating a body.
const ARG_BASE: usize = 1 << 28;

pub(super) struct Body {
    out: String,
    n: usize,
    elem: String,
    /// Conditions of exact divisions met while computing indices (the access reads 0
    /// unless they all hold).
    exact: Vec<String>,
}

impl Body {
    fn fresh(&mut self) -> String {
        self.n += 1;
        format!("%b{}", self.n)
    }
    fn line(&mut self, s: String) {
        let _ = writeln!(self.out, "      {s}");
    }
    fn cst(&mut self, v: i64) -> String {
        let c = self.fresh();
        self.line(format!("{c} = arith.constant {v} : index"));
        c
    }
    fn bin(&mut self, op: &str, a: &str, b: &str, ty: &str) -> String {
        let r = self.fresh();
        self.line(format!("{r} = {op} {a}, {b} : {ty}"));
        r
    }
    fn idx(&mut self, e: &Idx, var: &dyn Fn(&str) -> String) -> String {
        let mut acc: Option<String> = None;
        for (a, k) in &e.terms {
            let v = match a {
                Atom::Var(x) => var(x),
                Atom::FloorDiv(inner, d) => {
                    let x = self.idx(inner, var);
                    let c = self.cst(*d);
                    self.bin(ops::arith::FloordivsiOp::NAME, &x, &c, "index")
                }
                Atom::Mod(inner, d) => {
                    let x = self.idx(inner, var);
                    let c = self.cst(*d);
                    let q = self.bin(ops::arith::FloordivsiOp::NAME, &x, &c, "index");
                    let qk = self.bin(ops::arith::MuliOp::NAME, &q, &c, "index");
                    self.bin(ops::arith::SubiOp::NAME, &x, &qk, "index")
                }
                Atom::Div(inner, d) => {
                    let x = self.idx(inner, var);
                    let c = self.cst(*d);
                    let q = self.bin(ops::arith::FloordivsiOp::NAME, &x, &c, "index");
                    let qk = self.bin(ops::arith::MuliOp::NAME, &q, &c, "index");
                    let ok = self.fresh();
                    self.line(format!("{ok} = arith.cmpi eq, {qk}, {x} : index"));
                    self.exact.push(ok);
                    q
                }
            };
            let t = if *k == 1 {
                v
            } else {
                let c = self.cst(*k);
                self.bin(ops::arith::MuliOp::NAME, &v, &c, "index")
            };
            acc = Some(match acc {
                None => t,
                Some(a) => self.bin(ops::arith::AddiOp::NAME, &a, &t, "index"),
            });
        }
        match acc {
            None => self.cst(e.c),
            Some(a) if e.c == 0 => a,
            Some(a) => {
                let c = self.cst(e.c);
                self.bin(ops::arith::AddiOp::NAME, &a, &c, "index")
            }
        }
    }
}

/// What the body's code reads: the input shapes, the loop nest, and the value of every
/// iterator the body uses.
struct Reads<'a> {
    inputs: &'a [Vec<i64>],
    nest: &'a Nest<'a>,
    var_val: Vec<Option<String>>,
}

impl Reads<'_> {
    /// The SSA value of iterator `v`.
    fn var(&self, v: &str) -> String {
        self.nest
            .pos(v)
            .and_then(|p| self.var_val[p].clone())
            .unwrap_or_else(|| "%undefined".into())
    }
    /// The static range of iterator `v`.
    fn range_of(&self, v: &str) -> Option<(i64, i64)> {
        self.nest
            .pos(v)
            .map(|p| self.nest.ranges[p])
            .filter(|r| r.1 != ftuner_ir::DYNAMIC)
    }
    /// Whether iterator `v` runs over exactly dim `d` of input `i` (a dynamic bound).
    fn by_dim(&self, v: &str, i: usize, d: usize) -> bool {
        self.nest
            .pos(v)
            .is_some_and(|p| self.nest.iters[p].dim_range() == Some((i, d)))
    }
}

/// The body's code (its block arguments are `args`, then `%acc`): the iterators' values,
/// the expression (added to `%acc` when it sums), and the `linalg.yield`.
pub(super) fn body_text(
    s: &Scope,
    inputs: &[Vec<i64>],
    elem: &str,
    nest: &Nest<'_>,
    mapped: &[(usize, Vec<usize>)],
) -> Result<String, String> {
    let mut b = Body {
        out: String::new(),
        n: 0,
        elem: elem.to_string(),
        exact: vec![],
    };
    let var_val = iterator_values(&mut b, s, nest)?;
    let reads = Reads {
        inputs,
        nest,
        var_val,
    };
    // Mapped accesses read their block argument; replace them before generating.
    let body_t = use_args(&s.body, mapped, &|v| nest.pos(v));
    let v = b.term(&body_t, &reads);
    let res = if s.sum.is_empty() {
        v
    } else {
        b.bin(ops::arith::AddfOp::NAME, "%acc", &v, elem)
    };
    b.line(format!("linalg.yield {res} : {elem}"));
    Ok(b.out)
}

/// `linalg.index` (plus the iterator's lower bound) of every iterator the accesses use.
fn iterator_values(
    b: &mut Body,
    s: &Scope,
    nest: &Nest<'_>,
) -> Result<Vec<Option<String>>, String> {
    let mut var_val: Vec<Option<String>> = vec![None; nest.iters.len()];
    let mut used = vec![];
    for (_, idx) in &s.body.accesses() {
        for e in idx.iter() {
            e.vars(&mut used);
        }
    }
    for v in &used {
        let Some(p) = nest.pos(v) else {
            return Err(format!("'{v}' is not an iterator"));
        };
        let ix = b.fresh();
        b.line(format!("{ix} = linalg.index {p} : index"));
        let val = if nest.ranges[p].0 == 0 {
            ix
        } else {
            let c = b.cst(nest.ranges[p].0);
            b.bin(ops::arith::AddiOp::NAME, &ix, &c, "index")
        };
        var_val[p] = Some(val);
    }
    Ok(var_val)
}

/// The MLIR literal of an `f64` constant (always with a fraction or an exponent).
fn float_literal(bits: u64) -> String {
    let mut lit = format!("{:?}", f64::from_bits(bits));
    if !lit.contains('.') && !lit.contains("inf") && !lit.contains("NaN") {
        match lit.find('e') {
            Some(p) => lit.insert_str(p, ".0"),
            None => lit.push_str(".0"),
        }
    }
    lit
}

impl Body {
    /// `ok` and-ed into the guard so far.
    fn conj(&mut self, guard: Option<String>, ok: String) -> Option<String> {
        Some(match guard {
            None => ok,
            Some(g) => self.bin(ops::arith::AndiOp::NAME, &g, &ok, "i1"),
        })
    }

    /// The scalar code of term `t`; returns its value.
    fn term(&mut self, t: &Term, cx: &Reads<'_>) -> String {
        match t {
            Term::Const(bits) => {
                let r = self.fresh();
                let e = self.elem.clone();
                let lit = float_literal(*bits);
                self.line(format!("{r} = arith.constant {lit} : {e}"));
                r
            }
            Term::Bin(op, x, y) => {
                let xa = self.term(x, cx);
                let ya = self.term(y, cx);
                let name = match op {
                    BinOp::Add => ops::arith::AddfOp::NAME,
                    BinOp::Sub => ops::arith::SubfOp::NAME,
                    BinOp::Mul => ops::arith::MulfOp::NAME,
                };
                let e = self.elem.clone();
                self.bin(name, &xa, &ya, &e)
            }
            Term::Access(src, idx) => {
                let Src::Input(i) = src else {
                    return "%unreachable".into();
                };
                if *i >= ARG_BASE {
                    // A mapped access: its block argument.
                    return format!("%a{}", i - ARG_BASE);
                }
                self.read(*i, idx, cx)
            }
        }
    }

    /// A read of input `i` at `idx` by `tensor.extract`: each index that can fall outside
    /// its dim is clamped and guarded, as are exact divisions; a read whose guard fails
    /// is 0.
    fn read(&mut self, i: usize, idx: &[Idx], cx: &Reads<'_>) -> String {
        let shape = &cx.inputs[i];
        let mut ixs = vec![];
        self.exact.clear();
        let mut guard: Option<String> = None;
        for (dpos, (e, d)) in idx.iter().zip(shape).enumerate() {
            let v = self.idx(e, &|x| cx.var(x));
            // The range of the index as computed (an exact division is a
            // floordiv here, its guard applied to the value read).
            let inside = as_computed(e)
                .range(&|x| cx.range_of(x))
                .is_some_and(|(l, h)| l >= 0 && h <= *d)
                || e.as_var().is_some_and(|x| cx.by_dim(x, i, dpos));
            if inside {
                ixs.push(v);
                continue;
            }
            let z = self.cst(0);
            let dd = if *d == ftuner_ir::DYNAMIC {
                let c = self.cst(ixs.len() as i64);
                let r = self.fresh();
                let e = self.elem.clone();
                self.line(format!("{r} = tensor.dim %in{i}, {c} : {}", ty(shape, &e)));
                r
            } else {
                self.cst(*d)
            };
            let ge = self.fresh();
            self.line(format!("{ge} = arith.cmpi sge, {v}, {z} : index"));
            let lt = self.fresh();
            self.line(format!("{lt} = arith.cmpi slt, {v}, {dd} : index"));
            let ok = self.bin(ops::arith::AndiOp::NAME, &ge, &lt, "i1");
            let cl = self.fresh();
            self.line(format!("{cl} = arith.select {ok}, {v}, {z} : index"));
            ixs.push(cl);
            guard = self.conj(guard, ok);
        }
        for ok in std::mem::take(&mut self.exact) {
            guard = self.conj(guard, ok);
        }
        let e = self.elem.clone();
        let x = self.fresh();
        self.line(format!(
            "{x} = tensor.extract %in{i}[{}] : {}",
            ixs.join(", "),
            ty(shape, &e)
        ));
        match guard {
            None => x,
            Some(g) => {
                let z = self.fresh();
                self.line(format!("{z} = arith.constant 0.000000e+00 : {e}"));
                let r = self.fresh();
                self.line(format!("{r} = arith.select {g}, {x}, {z} : {e}"));
                r
            }
        }
    }
}

/// An access reads its block argument when it is exactly the access its map was made
/// for (same input, same iterators in the same dims).
fn use_args(t: &Term, mapped: &[(usize, Vec<usize>)], pos: &dyn Fn(&str) -> Option<usize>) -> Term {
    match t {
        Term::Access(Src::Input(i), idx) => {
            let dims: Option<Vec<usize>> = idx.iter().map(|e| pos(e.as_var()?)).collect();
            match mapped
                .iter()
                .position(|(j, ds)| j == i && Some(ds) == dims.as_ref())
            {
                // A marker input number: the block argument k.
                Some(k) => Term::Access(Src::Input(ARG_BASE + k), idx.clone()),
                None => t.clone(),
            }
        }
        Term::Bin(o, a, b) => Term::Bin(
            *o,
            Box::new(use_args(a, mapped, pos)),
            Box::new(use_args(b, mapped, pos)),
        ),
        _ => t.clone(),
    }
}

/// `e` with each exact division `x / k` written as the `x floordiv k` the body computes
/// for it: [`Idx::range`] gives an exact division the range of its exact values only,
/// but the index is computed (and must be in bounds) at the other points too.
fn as_computed(e: &Idx) -> Idx {
    Idx {
        terms: e
            .terms
            .iter()
            .map(|(a, k)| {
                let a = match a {
                    Atom::Div(x, d) | Atom::FloorDiv(x, d) => {
                        Atom::FloorDiv(Box::new(as_computed(x)), *d)
                    }
                    Atom::Mod(x, d) => Atom::Mod(Box::new(as_computed(x)), *d),
                    Atom::Var(v) => Atom::Var(v.clone()),
                };
                (a, *k)
            })
            .collect(),
        c: e.c,
    }
}
