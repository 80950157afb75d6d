//! Traversal rules: splitting an iterator by a dilation into (quotient, residue), and
//! merging a view's iterators back into one.

use super::helpers::*;
use crate::egraph::{Piece, TaGraph, TaNode, CHILD};
use ftuner_dialects::ta::{Idx, Iter, Scope, Src, Term};

/// The factors `d` a traversal iterator `x` can be split by: in some index, another
/// iterator's coefficient is `d` times `x`'s (`h + 2r`, `i + 4w`: a dilation), `d ≥ 2`.
pub(super) fn split_factors(s: &Scope, x: &str) -> Vec<i64> {
    let mut out = vec![];
    for (_, idx) in s.body.accesses() {
        for e in idx {
            let Some((lin, _)) = e.linear() else { continue };
            let Some(a) = lin.get(x).copied().filter(|a| *a != 0) else {
                continue;
            };
            for (v, b) in &lin {
                if v != x && b % a == 0 && (b / a).abs() >= 2 && !out.contains(&(b / a).abs()) {
                    out.push((b / a).abs());
                }
            }
        }
    }
    out
}

/// Traversal splitting, `x → (x / d, x % d)`: a node traversing `x` equals a copy of a
/// child traversing `x' ∈ [0, ⌈X/d⌉)` and `p ∈ [0, d)` in its place, with `x = d·x' + p`
/// in the body, read at `[(x - lo) floordiv d, (x - lo) mod d]`. With `d` a dilation
/// (`i + d·w`, `h + d·r`), the child reads `d·(x' + w) + p`: per `p`, a dense (undilated)
/// problem, as OLLIE turns a dilated G2BMM or conv into dense ones through reshapes.
/// Every iterator that can be split by `d` is split at once (a 2-d dilation needs both),
/// and only at the root (see [`Rule::root_only`]): the child is a whole new expression
/// for the other rules.
pub(super) fn trav_split(_eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
    let s = &n.head;
    let mut factors = vec![];
    for x in &s.trav {
        for d in split_factors(s, &x.name) {
            if !factors.contains(&d) {
                factors.push(d);
            }
        }
    }
    let mut out = vec![];
    for d in factors {
        let mut trav = vec![];
        let mut read = vec![];
        let mut body = s.body.clone();
        let mut split = false;
        for x in &s.trav {
            let range = x.static_range();
            match range {
                Some((lo, hi)) if hi - lo >= 2 * d && split_factors(s, &x.name).contains(&d) => {
                    let (q, r) = (fresh(), fresh());
                    trav.push(Iter::new(&q, 0, (hi - lo + d - 1) / d));
                    trav.push(Iter::new(&r, 0, d));
                    let by = Idx::var(&q).scale(d).add(&Idx::var(&r)).offset(lo);
                    body = body.map_idx(&|e| e.subst(&x.name, &by));
                    let xi = Idx::var(&x.name).offset(-lo);
                    read.push(xi.floordiv(d));
                    read.push(xi.modulo(d));
                    split = true;
                }
                _ => {
                    trav.push(x.clone());
                    read.push(Idx::var(&x.name));
                }
            }
        }
        if !split {
            continue;
        }
        let child = Scope {
            trav,
            sum: s.sum.clone(),
            body,
        };
        out.push(Piece::New(
            Scope {
                trav: s.trav.clone(),
                sum: vec![],
                body: Term::Access(Src::Input(CHILD), read),
            },
            vec![Piece::New(child, same_kids(n))],
        ));
    }
    out
}

/// Traversal merging, the inverse of splitting: a view (a child copying one access)
/// traversing `q ∈ [q0, q1)` and
/// `r ∈ [0, k)` whose body reads them only together as `k·q + r` (in every index, `q`'s
/// coefficient is `k` times `r`'s, outside any division) holds one value per `x = k·q + r`:
/// the child over `x ∈ [k·q0, k·q1)` instead, read by the parent at `k·e_q + e_r` (when the
/// parent's reads of `q` and `r` stay inside their ranges, so no read of the zero padding
/// around the child lands on a value).
pub(super) fn trav_merge(eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
    let mut out = vec![];
    for (k, pidx, cn) in child_nodes(eg, n) {
        let c = &cn.head;
        // Views only (a copy of one access): merging the iterators of a computed child
        // re-derives what splitting just derived (measured: the dilated conv's e-graph
        // grows from 2.4 k to 13 k nodes and 4.5 s).
        if !c.sum.is_empty() || !matches!(c.body, Term::Access(..)) {
            continue;
        }
        let lins: Option<Vec<_>> = c
            .body
            .accesses()
            .iter()
            .flat_map(|(_, idx)| idx.iter())
            .map(|e| e.linear().map(|(l, _)| l))
            .collect();
        // Iterators inside a division cannot be merged (linear() is None there).
        let Some(lins) = lins else { continue };
        for (pq, q) in c.trav.iter().enumerate() {
            for (pr, r) in c.trav.iter().enumerate() {
                if pq == pr {
                    continue;
                }
                let (Some((q0, q1)), Some((0, kk))) = (q.static_range(), r.static_range()) else {
                    continue;
                };
                if kk < 2 {
                    continue;
                }
                let joint = lins.iter().all(|l| {
                    let (a, b) = (
                        l.get(&q.name).copied().unwrap_or(0),
                        l.get(&r.name).copied().unwrap_or(0),
                    );
                    a == kk * b
                }) && lins.iter().any(|l| l.contains_key(&r.name));
                if !joint
                    || !reads_inside(&n.head, &pidx[pq], q0, q1)
                    || !reads_inside(&n.head, &pidx[pr], 0, kk)
                {
                    continue;
                }
                let x = fresh();
                let mut trav = vec![];
                let mut nidx = vec![];
                for (j, t) in c.trav.iter().enumerate() {
                    if j == pq {
                        trav.push(Iter::new(&x, kk * q0, kk * q1));
                        nidx.push(pidx[pq].scale(kk).add(&pidx[pr]));
                    } else if j != pr {
                        trav.push(t.clone());
                        nidx.push(pidx[j].clone());
                    }
                }
                let (zero, xv) = (Idx::constant(0), Idx::var(&x));
                let child = Scope {
                    trav,
                    sum: c.sum.clone(),
                    body: c
                        .body
                        .map_idx(&|e| e.subst(&q.name, &zero).subst(&r.name, &xv)),
                };
                out.push(rebuild(n, k, &nidx, Piece::New(child, same_kids(&cn))));
            }
        }
    }
    out
}
