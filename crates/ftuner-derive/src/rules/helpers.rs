//! Helpers the rules share: fresh iterator names, a node's child reads and their
//! replacement, children's nodes and ranges, rebuilding a parent around a new child, and
//! the linear contexts of an iterator in an index.

use crate::egraph::{Piece, TaGraph, TaNode, CHILD};
use ftuner_dialects::ta::{Atom, BinOp, Idx, Iter, Scope, Src, Term};
use std::cell::Cell;

thread_local! {
    static FRESH: Cell<u64> = const { Cell::new(0) };
}

/// A name no canonical iterator has (canonicalization renames it on insertion).
pub(super) fn fresh() -> String {
    FRESH.with(|c| {
        c.set(c.get() + 1);
        format!("v{}", c.get())
    })
}

pub(super) fn static_range(s: &Scope, v: &str) -> Option<(i64, i64)> {
    s.iter(v)?.static_range()
}

/// The child accesses of a body: (child number, its indices), in order.
pub(super) fn child_reads(t: &Term) -> Vec<(usize, Vec<Idx>)> {
    t.accesses()
        .into_iter()
        .filter_map(|(s, i)| match s {
            Src::Input(k) if *k >= CHILD => Some((*k - CHILD, i.to_vec())),
            _ => None,
        })
        .collect()
}

/// Replace child `k`'s (single) read in `t` by `by`.
pub(super) fn with_child_read(t: &Term, k: usize, idx: &[Idx]) -> Term {
    match t {
        Term::Access(Src::Input(i), _) if *i == CHILD + k => {
            Term::Access(Src::Input(*i), idx.to_vec())
        }
        Term::Access(..) | Term::Const(_) => t.clone(),
        Term::Bin(o, a, b) => Term::Bin(
            *o,
            Box::new(with_child_read(a, k, idx)),
            Box::new(with_child_read(b, k, idx)),
        ),
    }
}

/// The factors of a product body (None when the body is not a product).
pub(super) fn factors(t: &Term) -> Vec<&Term> {
    match t {
        Term::Bin(BinOp::Mul, a, b) => {
            let mut v = factors(a);
            v.extend(factors(b));
            v
        }
        _ => vec![t],
    }
}

/// For each child read once by the node (reads twice are left alone), every node of
/// the child's class: (child number, parent's indices, child node).
pub(super) fn child_nodes(eg: &TaGraph, n: &TaNode) -> Vec<(usize, Vec<Idx>, TaNode)> {
    let reads = child_reads(&n.head.body);
    let mut out = vec![];
    for (k, idx) in &reads {
        if reads.iter().filter(|(j, _)| j == k).count() != 1 {
            continue;
        }
        for cn in &eg[n.kids[*k]].nodes {
            out.push((*k, idx.clone(), cn.clone()));
        }
    }
    out
}

/// Every statically bounded traversal iterator of every child read once:
/// (child number, parent's indices, child node, iterator position, lo, hi).
pub(super) type ChildRange = (usize, Vec<Idx>, TaNode, usize, i64, i64);
pub(super) fn child_ranges(eg: &TaGraph, n: &TaNode) -> Vec<ChildRange> {
    let mut out = vec![];
    for (k, pidx, cn) in child_nodes(eg, n) {
        for (p, x) in cn.head.trav.iter().enumerate() {
            if let Some((lo, hi)) = x.static_range() {
                out.push((k, pidx.clone(), cn.clone(), p, lo, hi));
            }
        }
    }
    out
}

/// The parent with child `k` replaced by `child` and read at `idx`.
pub(super) fn rebuild(n: &TaNode, k: usize, idx: &[Idx], child: Piece) -> Piece {
    let head = Scope {
        trav: n.head.trav.clone(),
        sum: n.head.sum.clone(),
        body: with_child_read(&n.head.body, k, idx),
    };
    let kids = n
        .kids
        .iter()
        .enumerate()
        .map(|(j, id)| {
            if j == k {
                child.clone()
            } else {
                Piece::Class(*id)
            }
        })
        .collect();
    Piece::New(head, kids)
}

/// The linear expressions that hold `v` directly: the index itself when `v` is one of its
/// terms, and (recursively) the operands of its floordiv / mod / exact divisions.
pub(super) fn contexts(e: &Idx, v: &str) -> Vec<Idx> {
    let mut out = vec![];
    if e.terms
        .iter()
        .any(|(a, _)| matches!(a, Atom::Var(x) if x == v))
    {
        out.push(e.clone());
    }
    for (a, _) in &e.terms {
        if let Atom::FloorDiv(inner, _) | Atom::Mod(inner, _) | Atom::Div(inner, _) = a {
            out.extend(contexts(inner, v));
        }
    }
    out
}

/// `e` with each context of `v` (an expression `comb + c` holding `v` directly, at any
/// depth) rewritten to `by + c`.
pub(super) fn replace_context(e: &Idx, v: &str, comb: &Idx, by: &Idx) -> Idx {
    let mut out = Idx::constant(e.c);
    let direct = e
        .terms
        .iter()
        .any(|(a, _)| matches!(a, Atom::Var(x) if x == v));
    let base = if direct {
        // e = comb + (e.c): the non-atomic part becomes `by`.
        let rest = e.sub(comb).offset(-e.c);
        out = out.add(by);
        rest
    } else {
        Idx {
            terms: e.terms.clone(),
            c: 0,
        }
    };
    for (a, k) in &base.terms {
        let t = match a {
            Atom::Var(_) => Idx {
                terms: vec![(a.clone(), 1)],
                c: 0,
            },
            Atom::FloorDiv(inner, d) => replace_context(inner, v, comb, by).floordiv(*d),
            Atom::Mod(inner, d) => replace_context(inner, v, comb, by).modulo(*d),
            Atom::Div(inner, d) => replace_context(inner, v, comb, by).exact_div(*d),
        };
        out = out.add(&t.scale(*k));
    }
    out
}

/// The parent with child `k` (node `cn`) traversing `[lo, hi)` in its iterator `p`.
pub(super) fn with_range(
    n: &TaNode,
    k: usize,
    pidx: &[Idx],
    cn: &TaNode,
    p: usize,
    lo: i64,
    hi: i64,
) -> Piece {
    let c = &cn.head;
    let mut trav = c.trav.clone();
    trav[p] = Iter::new(&c.trav[p].name, lo, hi);
    let child = Scope {
        trav,
        sum: c.sum.clone(),
        body: c.body.clone(),
    };
    rebuild(n, k, pidx, Piece::New(child, same_kids(cn)))
}

pub(super) fn same_kids(n: &TaNode) -> Vec<Piece> {
    n.kids.iter().map(|k| Piece::Class(*k)).collect()
}

/// Whether every index of `idx` stays within the child's traversal ranges over the
/// parent's iterator ranges (so reads never fall in the zero padding around the child).
pub(super) fn reads_inside(parent: &Scope, e: &Idx, lo: i64, hi: i64) -> bool {
    e.range(&|v| static_range(parent, v))
        .is_some_and(|(a, b)| a >= lo && b <= hi)
}
