//! Expression splitting (inter-expression, opt-in): a compound access of a product
//! becomes a gather of its own.

use super::helpers::*;
use crate::egraph::{Piece, TaGraph, TaNode, CHILD};
use ftuner_dialects::ta::{Idx, Iter, Scope, Src, Term};

/// Expression splitting: a factor of a product that reads an input at compound indices
/// becomes a nested scope of its own over the iterators it uses (a gather: im2col for a
/// convolution), read by plain iterators, so the rest can match a contraction.
pub(super) fn split_access(_eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
    let s = &n.head;
    let fs = factors(&s.body);
    if fs.len() != 2 {
        return vec![];
    }
    let mut out = vec![];
    for (which, f) in fs.iter().enumerate() {
        let Term::Access(Src::Input(i), idx) = f else {
            continue;
        };
        if *i >= CHILD || idx.iter().all(|e| e.as_var().is_some()) {
            continue;
        }
        // The gather's traversal: the parent's traversal iterators it uses, then the
        // summation ones, in the parent's order.
        let mut used = vec![];
        for e in idx.iter() {
            e.vars(&mut used);
        }
        let gtrav: Vec<Iter> = s
            .trav
            .iter()
            .chain(&s.sum)
            .filter(|it| used.contains(&it.name))
            .cloned()
            .collect();
        if gtrav.iter().any(|it| it.hi.dim.is_some() && it.lo != 0) {
            continue;
        }
        let gather = Scope {
            trav: gtrav.clone(),
            sum: vec![],
            body: (*f).clone(),
        };
        let read = Term::Access(
            Src::Input(CHILD + n.kids.len()),
            gtrav.iter().map(|it| Idx::var(&it.name)).collect(),
        );
        let other = fs[1 - which].clone();
        let body = if which == 0 {
            Term::product(read, other)
        } else {
            Term::product(other, read)
        };
        let mut kids = same_kids(n);
        kids.push(Piece::New(gather, vec![]));
        out.push(Piece::New(
            Scope {
                trav: s.trav.clone(),
                sum: s.sum.clone(),
                body,
            },
            kids,
        ));
    }
    out
}
