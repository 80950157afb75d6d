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
//!
//! One concept per file: `idx` (index expressions), this file (the rest of the syntax
//! tree: bounds, iterators, terms, scopes), `print`, `parse`, `check` and `eval`.

mod check;
mod eval;
mod idx;
mod parse;
mod print;

pub use check::check;
pub use eval::{evaluate, evaluate_at, result_shape, Inputs};
pub use idx::{Atom, Idx};
pub use parse::{parse_scope, positional, ParseError};
pub use print::print_scope;

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
    /// None also when the volume overflows i64.
    pub fn sum_volume(&self) -> Option<i64> {
        self.sum.iter().try_fold(1i64, |p, i| {
            let (l, h) = i.static_range()?;
            p.checked_mul(h.checked_sub(l)?.max(0))
        })
    }
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
