//! Derivation rules (OLLIE §4), grouped by topic. See README.md for the rule policy.
//!
//! Each rule is a function from one e-node (a scope, with its children's e-classes) to
//! equivalent expressions ([`Piece`]s); `egg` runs them to saturation (or a limit) through
//! [`RuleRewrite`], which adds each result and unions it with the node's class. Rules that
//! change a child change how the parent reads it, so every rule keeps the parent's
//! traversal (an e-class is one tensor).

use crate::egraph::{add_piece, Piece, TaGraph, TaNode, CHILD};
use egg::{Id, Searcher};
use ftuner_dialects::ta::{Atom, BinOp, Idx, Iter, Scope, Src, Term};
use std::cell::Cell;

/// A rule: a name, a topic, and the function producing equivalent expressions of a node.
pub struct Rule {
    pub name: &'static str,
    pub topic: &'static str,
    pub apply: fn(&TaGraph, &TaNode) -> Vec<Piece>,
    /// Applied to the root class only (the expression being derived): a rule whose
    /// results every other rule would derive again, as a whole new family.
    pub root_only: bool,
}

/// Expression splitting (opt-in: it multiplies the e-graph by about 2.5 and finds hybrid
/// im2col forms the model rarely prefers).
pub fn splitting() -> Rule {
    Rule {
        name: "expression-splitting",
        topic: "inter-expression",
        apply: split_access,
        root_only: false,
    }
}

/// The rules of guided derivation: summation splitting only along the iterator table
/// ([`sum_split_guided`]), the rest as in [`all`].
pub fn guided() -> Vec<Rule> {
    let mut v = all();
    v[0] = Rule {
        name: "summation-splitting-guided",
        topic: "intra-expression",
        apply: sum_split_guided,
        root_only: false,
    };
    v
}

/// Every rule, by topic.
pub fn all() -> Vec<Rule> {
    vec![
        Rule {
            name: "summation-splitting",
            topic: "intra-expression",
            apply: sum_split,
            root_only: false,
        },
        Rule {
            name: "variable-substitution",
            topic: "intra-expression",
            apply: var_subst,
            root_only: false,
        },
        Rule {
            name: "boundary-tightening",
            topic: "intra-expression",
            apply: tighten,
            root_only: false,
        },
        Rule {
            name: "boundary-relaxing",
            topic: "intra-expression",
            apply: relax,
            root_only: false,
        },
        Rule {
            name: "traversal-shift",
            topic: "intra-expression",
            apply: shift,
            root_only: false,
        },
        Rule {
            name: "division-substitution",
            topic: "intra-expression",
            apply: div_subst,
            root_only: false,
        },
        Rule {
            name: "unit-summation",
            topic: "intra-expression",
            apply: unit_sum,
            root_only: false,
        },
        Rule {
            name: "traversal-merging",
            topic: "intra-expression",
            apply: trav_merge,
            root_only: false,
        },
        Rule {
            name: "traversal-splitting",
            topic: "intra-expression",
            apply: trav_split,
            root_only: true,
        },
    ]
}

/// A rule as an `egg` rewrite: searches every class with a node the rule changes, applies
/// it to each node, and stops adding once the e-graph holds `node_limit` nodes.
#[derive(Clone)]
pub struct RuleRewrite {
    pub apply: fn(&TaGraph, &TaNode) -> Vec<Piece>,
    pub node_limit: usize,
    pub root_only: bool,
}

impl Searcher<TaNode, crate::egraph::TaAnalysis> for RuleRewrite {
    fn search_eclass_with_limit(
        &self,
        egraph: &TaGraph,
        eclass: Id,
        limit: usize,
    ) -> Option<egg::SearchMatches<'_, TaNode>> {
        if limit == 0
            || (self.root_only
                && egraph.analysis.root.map(|r| egraph.find(r)) != Some(egraph.find(eclass)))
        {
            return None;
        }
        let hit = egraph[eclass]
            .nodes
            .iter()
            .any(|n| !(self.apply)(egraph, n).is_empty());
        hit.then(|| egg::SearchMatches {
            eclass,
            substs: vec![egg::Subst::default()],
            ast: None,
        })
    }
    fn vars(&self) -> Vec<egg::Var> {
        vec![]
    }
}

impl egg::Applier<TaNode, crate::egraph::TaAnalysis> for RuleRewrite {
    fn apply_one(
        &self,
        egraph: &mut TaGraph,
        eclass: Id,
        _subst: &egg::Subst,
        _ast: Option<&egg::PatternAst<TaNode>>,
        _rule: egg::Symbol,
    ) -> Vec<Id> {
        let nodes = egraph[eclass].nodes.clone();
        let mut changed = vec![];
        for n in nodes {
            for p in (self.apply)(egraph, &n) {
                if egraph.total_number_of_nodes() >= self.node_limit {
                    return changed;
                }
                let id = add_piece(egraph, &p);
                if egraph.union(eclass, id) {
                    changed.push(id);
                }
            }
        }
        changed
    }
}

// ---------------------------------------------------------------------------------------
// Helpers

thread_local! {
    static FRESH: Cell<u64> = const { Cell::new(0) };
}

/// A name no canonical iterator has (canonicalization renames it on insertion).
fn fresh() -> String {
    FRESH.with(|c| {
        c.set(c.get() + 1);
        format!("v{}", c.get())
    })
}

fn static_range(s: &Scope, v: &str) -> Option<(i64, i64)> {
    s.iter(v)?.static_range()
}

/// The child accesses of a body: (child number, its indices), in order.
fn child_reads(t: &Term) -> Vec<(usize, Vec<Idx>)> {
    t.accesses()
        .into_iter()
        .filter_map(|(s, i)| match s {
            Src::Input(k) if *k >= CHILD => Some((*k - CHILD, i.to_vec())),
            _ => None,
        })
        .collect()
}

/// Replace child `k`'s (single) read in `t` by `by`.
fn with_child_read(t: &Term, k: usize, idx: &[Idx]) -> Term {
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
fn factors(t: &Term) -> Vec<&Term> {
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
fn child_nodes(eg: &TaGraph, n: &TaNode) -> Vec<(usize, Vec<Idx>, TaNode)> {
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
type ChildRange = (usize, Vec<Idx>, TaNode, usize, i64, i64);
fn child_ranges(eg: &TaGraph, n: &TaNode) -> Vec<ChildRange> {
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
fn rebuild(n: &TaNode, k: usize, idx: &[Idx], child: Piece) -> Piece {
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
fn contexts(e: &Idx, v: &str) -> Vec<Idx> {
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
fn replace_context(e: &Idx, v: &str, comb: &Idx, by: &Idx) -> Idx {
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
fn with_range(
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

fn same_kids(n: &TaNode) -> Vec<Piece> {
    n.kids.iter().map(|k| Piece::Class(*k)).collect()
}

/// Whether every index of `idx` stays within the child's traversal ranges over the
/// parent's iterator ranges (so reads never fall in the zero padding around the child).
fn reads_inside(parent: &Scope, e: &Idx, lo: i64, hi: i64) -> bool {
    e.range(&|v| static_range(parent, v))
        .is_some_and(|(a, b)| a >= lo && b <= hi)
}

// ---------------------------------------------------------------------------------------
// Intra-expression rules

/// Summation splitting: `Σ_{S} f = Σ_{outer} (Σ_{inner} f)`: the inner sum becomes a
/// nested scope traversing the variables it needs (the parent's traversal and the outer
/// summation variables the body uses).
fn sum_split(_eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
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
fn sum_split_guided(_eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
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

fn split_with(n: &TaNode, masks: impl Iterator<Item = u32>) -> Vec<Piece> {
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

/// Variable substitution: a child traversal variable `x` that its body only uses as
/// `x + L` (one linear combination `L` of other traversal variables) is replaced by
/// `t = x + L`; the parent reads the child at `t = e_x + L(e)`.
fn var_subst(eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
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

/// The windows a product body reads op inputs through by `x`: `(c, D)` for each factor
/// index `x + c` along a static input dim of extent `D`.
fn windows(eg: &TaGraph, body: &Term, x: &str) -> Vec<(i64, i64)> {
    let shapes = &eg.analysis.input_shapes;
    let mut out = vec![];
    for f in factors(body) {
        let Term::Access(Src::Input(i), idx) = f else {
            continue;
        };
        let Some(shape) = shapes.get(*i) else {
            continue;
        };
        for (d, e) in idx.iter().enumerate() {
            let plain = e.terms.len() == 1 && e.coef(x) == 1;
            if let (true, Some(Some(ext))) = (plain, shape.get(d)) {
                out.push((e.c, *ext));
            }
        }
    }
    out
}

/// Boundary tightening: a child whose body is a product with a factor reading input `$i`
/// at `x + c` along a dim of extent `D` is zero outside `x ∈ [-c, D - c)`; its range of
/// `x` shrinks to that (the parent reads the zero padding either way).
fn tighten(eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
    let mut out = vec![];
    for (k, pidx, cn, p, lo, hi) in child_ranges(eg, n) {
        let (mut nlo, mut nhi) = (lo, hi);
        for (off, ext) in windows(eg, &cn.head.body, &cn.head.trav[p].name) {
            nlo = nlo.max(-off);
            nhi = nhi.min(ext - off);
        }
        if (nlo, nhi) != (lo, hi) && nlo < nhi {
            out.push(with_range(n, k, &pidx, &cn, p, nlo, nhi));
        }
    }
    out
}

/// Boundary relaxing, the inverse of tightening: a child traversing `x ∈ [lo, hi)` inside
/// `[0, D)`, with a factor reading input `$i` plainly by `x` along a dim of extent `D`,
/// may traverse all of `[0, D)` when the parent only reads it inside `[lo, hi)` — the
/// extra values are never read, and the child now covers the input's dim, as a matched
/// operator wants (at the price of computing them, which the extraction weighs).
fn relax(eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
    let mut out = vec![];
    for (k, pidx, cn, p, lo, hi) in child_ranges(eg, n) {
        if !reads_inside(&n.head, &pidx[p], lo, hi) {
            continue;
        }
        let full = windows(eg, &cn.head.body, &cn.head.trav[p].name)
            .into_iter()
            .filter(|(off, ext)| *off == 0 && 0 <= lo && hi <= *ext && (lo, hi) != (0, *ext))
            .map(|(_, ext)| ext)
            .min();
        if let Some(ext) = full {
            out.push(with_range(n, k, &pidx, &cn, p, 0, ext));
        }
    }
    out
}

/// Traversal shift: a child traversal variable `x` used only as `x + c` (one constant)
/// becomes `x' = x + c`; the parent reads at `e_x + c`.
fn shift(eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
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
fn div_subst(eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
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

/// Expression splitting: a factor of a product that reads an input at compound indices
/// becomes a nested scope of its own over the iterators it uses (a gather: im2col for a
/// convolution), read by plain iterators, so the rest can match a contraction.
fn split_access(_eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
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

/// The factors `d` a traversal iterator `x` can be split by: in some index, another
/// iterator's coefficient is `d` times `x`'s (`h + 2r`, `i + 4w`: a dilation), `d ≥ 2`.
fn split_factors(s: &Scope, x: &str) -> Vec<i64> {
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
fn trav_split(_eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
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
fn trav_merge(eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
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

/// A summation over a single value is a substitution: `Σ_{r ∈ [a, a+1)} f = f[r := a]`.
fn unit_sum(_eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egraph::{piece_of, tree, TaAnalysis};
    use ftuner_dialects::ta::expr::{parse_scope, positional};

    /// Apply `rule` to the root node of `src`; the results as closed expressions.
    fn apply(
        rule: fn(&TaGraph, &TaNode) -> Vec<Piece>,
        src: &str,
        shapes: &[Vec<i64>],
    ) -> (Scope, Vec<Scope>) {
        let s = parse_scope(src, &positional).unwrap();
        let mut eg = TaGraph::new(TaAnalysis {
            input_shapes: shapes
                .iter()
                .map(|v| v.iter().map(|d| Some(*d)).collect())
                .collect(),
            range_conflicts: 0,
            root: None,
        });
        let root = add_piece(&mut eg, &piece_of(&s));
        eg.rebuild();
        let node = eg[root].nodes[0].clone();
        let outs = rule(&eg, &node)
            .into_iter()
            .map(|p| {
                let id = add_piece(&mut eg, &p);
                let n = eg[id].nodes[0].clone();
                tree(&eg, &n, &|c| eg[c].nodes[0].clone())
            })
            .collect();
        (s, outs)
    }

    /// The one result of `rule` on `src`, checked equal to `src` on random inputs; its text.
    fn one(rule: fn(&TaGraph, &TaNode) -> Vec<Piece>, src: &str, shapes: &[Vec<i64>]) -> String {
        let (s, outs) = apply(rule, src, shapes);
        assert_eq!(outs.len(), 1, "{outs:?}");
        let us: Vec<Vec<usize>> = shapes
            .iter()
            .map(|v| v.iter().map(|d| *d as usize).collect())
            .collect();
        crate::check::equivalent(&s, &outs[0], &us, 200, 29).unwrap();
        outs[0].to_string()
    }

    #[test]
    fn traversal_merging_undoes_a_view() {
        // A matmul reading its rows through a (4 x 8) view of 32 rows: merging the view's
        // two iterators reads the rows directly, at 8i + j.
        let shapes = vec![vec![32, 6], vec![6, 5]];
        let text = one(
            trav_merge,
            "L<i:0:4, j:0:8, n:0:5> Sum<k:0:6> { (L<q:0:4, r:0:8, kk:0:6> { $0[8 * q + r, kk] })[i, j, k] * $1[k, n] }",
            &shapes,
        );
        assert!(text.contains("L<i0:0:32, i1:0:6> { $0[i0, i1] }"), "{text}");
        assert!(text.contains("[8 * i0 + i1, k0]"), "{text}");
        // Not merged when the parent reads r outside [0, 8) (a read of the padding would
        // land on the next row), nor when q and r are not read together.
        for src in [
            "L<i:0:4, j:0:9, n:0:5> Sum<k:0:6> { (L<q:0:4, r:0:8, kk:0:6> { $0[8 * q + r, kk] })[i, j, k] * $1[k, n] }",
            "L<i:0:4, j:0:8, n:0:5> Sum<k:0:6> { (L<q:0:4, r:0:8, kk:0:6> { $0[4 * q + r, kk] })[i, j, k] * $1[k, n] }",
        ] {
            let (_, outs) = apply(trav_merge, src, &shapes);
            assert!(outs.is_empty(), "{src}: {outs:?}");
        }
    }

    #[test]
    fn boundary_relaxing_lets_a_partial_child_cover_its_input() {
        // The parent reads rows 2..6 of a matmul child that computes only those rows: the
        // relaxed child computes all 8 (a plain matmul over A), the parent still reads 2..6.
        let shapes = vec![vec![8, 6], vec![6, 5]];
        let src =
            "L<i:0:4, n:0:5> { (L<m:2:6, nn:0:5> Sum<k:0:6> { $0[m, k] * $1[k, nn] })[i + 2, n] }";
        let text = one(relax, src, &shapes);
        assert!(text.contains("L<i0:0:8, i1:0:5> Sum<k0:0:6>"), "{text}");
        // Not when the parent reads outside the child's range (it would read the new
        // values where it read zeros).
        let (_, outs) = apply(
            relax,
            "L<i:0:6, n:0:5> { (L<m:2:6, nn:0:5> Sum<k:0:6> { $0[m, k] * $1[k, nn] })[i, n] }",
            &shapes,
        );
        assert!(outs.is_empty(), "{outs:?}");
    }

    #[test]
    fn traversal_splitting_splits_every_dilated_iterator_at_once() {
        let shapes = vec![vec![1, 2, 8, 8], vec![3, 2, 3, 3]];
        let text = one(
            trav_split,
            "L<n:0:1, f:0:3, h:0:8, w:0:8> Sum<c:0:2, r:0:3, s:0:3> { $0[n, c, h + 2 * r - 2, w + 2 * s - 2] * $1[f, c, r, s] }",
            &shapes,
        );
        assert!(
            text.contains("i2 floordiv 2, i2 mod 2, i3 floordiv 2, i3 mod 2"),
            "{text}"
        );
        // A dense conv has nothing to split.
        let (_, outs) = apply(
            trav_split,
            "L<n:0:1, f:0:3, h:0:8, w:0:8> Sum<c:0:2, r:0:3, s:0:3> { $0[n, c, h + r - 1, w + s - 1] * $1[f, c, r, s] }",
            &shapes,
        );
        assert!(outs.is_empty());
    }
}
