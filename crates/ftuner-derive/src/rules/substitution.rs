//! Substitution rules: variable substitution, traversal shift, and substitution
//! through an exact division (zero-inserted inputs).

use super::helpers::*;
use crate::egraph::{Piece, TaGraph, TaNode};
use ftuner_dialects::ta::{Atom, Idx, Iter, Scope};

/// Variable substitution: a child traversal variable `x` that its body only uses as
/// `x + L` (one linear combination `L` of other traversal variables) is replaced by
/// `t = x + L`; the parent reads the child at `t = e_x + L(e)`.
pub(super) fn var_subst(eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
    let mut out = vec![];
    for (k, pidx, cn) in child_nodes(eg, n) {
        let c = &cn.head;
        for (p, x) in c.trav.iter().enumerate() {
            let Some((xlo, xhi)) = x.static_range() else {
                continue;
            };
            // Every context of x is `a * x + L + c` with one (a, L).
            let mut comb: Option<(i64, Idx)> = None;
            let mut ok = true;
            for (_, idx) in c.body.accesses() {
                for e in idx.iter().flat_map(|e| contexts(e, &x.name)) {
                    let a = e.coef(&x.name);
                    let l = e.sub(&Idx::var(&x.name).scale(a)).offset(-e.c);
                    if a == 0 || l.uses(&x.name) || l.terms.is_empty() {
                        ok = false;
                        break;
                    }
                    match &comb {
                        None => comb = Some((a, l)),
                        Some(c0) if *c0 == (a, l.clone()) => {}
                        _ => ok = false,
                    }
                }
            }
            let Some((a, l)) = comb.filter(|_| ok) else {
                continue;
            };
            // L over the child's other traversal variables, affine, static.
            let Some((lin, _)) = l.linear() else { continue };
            if lin.keys().any(|v| {
                !c.trav
                    .iter()
                    .any(|i| &i.name == v && i.static_range().is_some())
            }) {
                continue;
            }
            if !reads_inside(&n.head, &pidx[p], xlo, xhi) {
                continue;
            }
            let comb = Idx::var(&x.name).scale(a).add(&l);
            let Some((tlo, thi)) = comb.range(&|v| static_range(c, v)) else {
                continue;
            };
            let t = fresh();
            let mut trav = c.trav.clone();
            trav[p] = Iter::new(&t, tlo, thi);
            let tv = Idx::var(&t);
            let child = Scope {
                trav,
                sum: c.sum.clone(),
                body: c.body.map_idx(&|e| replace_context(e, &x.name, &comb, &tv)),
            };
            // The parent's read: a * e_x + L(e_y for each y at its position).
            let mut lp = l.clone();
            for (q, y) in c.trav.iter().enumerate() {
                if q != p && l.uses(&y.name) {
                    lp = lp.subst(&y.name, &pidx[q]);
                }
            }
            let mut nidx = pidx.clone();
            nidx[p] = pidx[p].scale(a).add(&lp);
            out.push(rebuild(n, k, &nidx, Piece::New(child, same_kids(&cn))));
        }
    }
    out
}

/// Traversal shift: a child traversal variable `x` used only as `x + c` (one constant)
/// becomes `x' = x + c`; the parent reads at `e_x + c`.
pub(super) fn shift(eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
    let mut out = vec![];
    for (k, pidx, cn) in child_nodes(eg, n) {
        let c = &cn.head;
        for (p, x) in c.trav.iter().enumerate() {
            let Some((lo, hi)) = x.static_range() else {
                continue;
            };
            let mut off: Option<i64> = None;
            let mut ok = true;
            for (_, idx) in c.body.accesses() {
                for e in idx {
                    if !e.uses(&x.name) {
                        continue;
                    }
                    if e.coef(&x.name) != 1 || e.terms.len() != 1 || *off.get_or_insert(e.c) != e.c
                    {
                        ok = false;
                    }
                }
            }
            let Some(c0) = off.filter(|o| ok && *o != 0) else {
                continue;
            };
            let t = fresh();
            let mut trav = c.trav.clone();
            trav[p] = Iter::new(&t, lo + c0, hi + c0);
            let by = Idx::var(&t).offset(-c0);
            let child = Scope {
                trav,
                sum: c.sum.clone(),
                body: c.body.map_idx(&|e| e.subst(&x.name, &by)),
            };
            let mut nidx = pidx.clone();
            nidx[p] = pidx[p].offset(c0);
            out.push(rebuild(n, k, &nidx, Piece::New(child, same_kids(&cn))));
        }
    }
    out
}

/// Variable substitution through an exact division: a child traversal variable `t` that
/// its product body only reads as `(t + c) / k` is zero unless `k` divides `t + c`; the
/// child over `i = (t + c) / k` holds the same values and the parent reads it at
/// `(e_t + c) / k` (an inexact index reads 0, as the child was). This is how a zero-
/// inserted input (a transposed convolution) stops costing work.
pub(super) fn div_subst(eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
    let mut out = vec![];
    for (k, pidx, cn) in child_nodes(eg, n) {
        let c = &cn.head;
        if factors(&c.body).len() < 2 {
            continue;
        }
        for (p, x) in c.trav.iter().enumerate() {
            let Some((lo, hi)) = x.static_range() else {
                continue;
            };
            // Every use of x is as the whole operand `x + c0` of an exact division by d.
            let mut form: Option<(i64, i64)> = None;
            let mut ok = true;
            let mut seen = false;
            for (_, idx) in c.body.accesses() {
                for e in idx {
                    if !e.uses(&x.name) {
                        continue;
                    }
                    seen = true;
                    let f = match e.terms.as_slice() {
                        [(Atom::Div(inner, d), 1)] if e.c == 0 => match inner.terms.as_slice() {
                            [(Atom::Var(v), 1)] if *v == x.name => Some((inner.c, *d)),
                            _ => None,
                        },
                        _ => None,
                    };
                    match (f, form) {
                        (Some(f), None) => form = Some(f),
                        (Some(f), Some(g)) if f == g => {}
                        _ => ok = false,
                    }
                }
            }
            let Some((c0, d)) = form.filter(|_| ok && seen) else {
                continue;
            };
            // i ranges over the multiples: ceil((lo + c0) / d) ..= floor((hi - 1 + c0) / d).
            let ilo = -((-(lo + c0)).div_euclid(d));
            let ihi = (hi - 1 + c0).div_euclid(d) + 1;
            if ilo >= ihi {
                continue;
            }
            let i = fresh();
            let mut trav = c.trav.clone();
            trav[p] = Iter::new(&i, ilo, ihi);
            let by = Idx::var(&i).scale(d).offset(-c0);
            let child = Scope {
                trav,
                sum: c.sum.clone(),
                body: c.body.map_idx(&|e| e.subst(&x.name, &by)),
            };
            let mut nidx = pidx.clone();
            nidx[p] = pidx[p].offset(c0).exact_div(d);
            out.push(rebuild(n, k, &nidx, Piece::New(child, same_kids(&cn))));
        }
    }
    out
}
