//! Boundary rules: tightening a child's range to where a factor reads its input, and
//! relaxing it to cover the input's dim.

use super::helpers::*;
use crate::egraph::{Piece, TaGraph, TaNode};
use ftuner_dialects::ta::{Src, Term};

/// The windows a product body reads op inputs through by `x`: `(c, D)` for each factor
/// index `x + c` along a static input dim of extent `D`.
pub(super) fn windows(eg: &TaGraph, body: &Term, x: &str) -> Vec<(i64, i64)> {
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
pub(super) fn tighten(eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
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
pub(super) fn relax(eg: &TaGraph, n: &TaNode) -> Vec<Piece> {
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
