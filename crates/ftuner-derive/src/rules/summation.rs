//! Summation rules: summation splitting (every way, or guided by the iterator table)
//! and unit summations.

use super::helpers::*;
use crate::egraph::{Piece, TaGraph, TaNode, CHILD};
use ftuner_dialects::ta::{Idx, Iter, Scope, Src, Term};

/// Summation splitting: `Σ_{S} f = Σ_{outer} (Σ_{inner} f)`: the inner sum becomes a
/// nested scope traversing the variables it needs (the parent's traversal and the outer
/// summation variables the body uses).
pub(super) fn sum_split(_eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
    let k = n.head.sum.len();
    if !(2..=4).contains(&k) {
        return vec![];
    }
    split_with(n, 1..(1u32 << k) - 1)
}

/// Guided summation splitting (OLLIE's iterator-table guidance toward a contraction):
/// the one split whose inner summation holds the iterators a matmul can reduce — those
/// that every access reads plainly (never inside a compound index) and that at least two
/// accesses read; the mismatching ones (`r` of `h + r`) stay outside, for the
/// substitutions to work on.
pub(super) fn sum_split_guided(_eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
    let s = &n.head;
    if s.sum.len() < 2 || s.sum.len() > 31 {
        return vec![];
    }
    let acc = s.body.accesses();
    let mut mask = 0u32;
    for (b, it) in s.sum.iter().enumerate() {
        let mut readers = 0;
        let mut plain = true;
        for (_, idx) in &acc {
            if idx.iter().any(|e| e.uses(&it.name)) {
                readers += 1;
                plain &= idx
                    .iter()
                    .filter(|e| e.uses(&it.name))
                    .all(|e| e.as_var() == Some(it.name.as_str()));
            }
        }
        if plain && readers >= 2 {
            mask |= 1 << b;
        }
    }
    if mask == 0 || mask == (1u32 << s.sum.len()) - 1 {
        return vec![];
    }
    split_with(n, std::iter::once(mask))
}

pub(super) fn split_with(n: &TaNode, masks: impl Iterator<Item = u32>) -> Vec<Piece> {
    let s = &n.head;
    let k = s.sum.len();
    let mut used = vec![];
    for (_, idx) in s.body.accesses() {
        for e in idx {
            e.vars(&mut used);
        }
    }
    let mut out = vec![];
    for mask in masks {
        let inner: Vec<Iter> = (0..k)
            .filter(|b| mask & (1 << b) != 0)
            .map(|b| s.sum[b].clone())
            .collect();
        let outer: Vec<Iter> = (0..k)
            .filter(|b| mask & (1 << b) == 0)
            .map(|b| s.sum[b].clone())
            .collect();
        let ctrav: Vec<Iter> = s
            .trav
            .iter()
            .chain(&outer)
            .filter(|i| used.contains(&i.name))
            .cloned()
            .collect();
        let child = Piece::New(
            Scope {
                trav: ctrav.clone(),
                sum: inner,
                body: s.body.clone(),
            },
            same_kids(n),
        );
        let read = ctrav.iter().map(|i| Idx::var(&i.name)).collect();
        out.push(Piece::New(
            Scope {
                trav: s.trav.clone(),
                sum: outer,
                body: Term::Access(Src::Input(CHILD), read),
            },
            vec![child],
        ));
    }
    out
}

/// A summation over a single value is a substitution: `Σ_{r ∈ [a, a+1)} f = f[r := a]`.
pub(super) fn unit_sum(_eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
    let s = &n.head;
    let Some(p) = s
        .sum
        .iter()
        .position(|i| i.static_range().is_some_and(|(l, h)| h - l == 1))
    else {
        return vec![];
    };
    let (name, lo) = (s.sum[p].name.clone(), s.sum[p].lo);
    let mut sum = s.sum.clone();
    sum.remove(p);
    let by = Idx::constant(lo);
    vec![Piece::New(
        Scope {
            trav: s.trav.clone(),
            sum,
            body: s.body.map_idx(&|e| e.subst(&name, &by)),
        },
        same_kids(n),
    )]
}
