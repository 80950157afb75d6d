//! Tests of single rules on small expressions, each result checked equal to the
//! original on random inputs.

use super::*;
use crate::egraph::{piece_of, tree, TaAnalysis};
use ftuner_dialects::ta::expr::{parse_scope, positional};
use ftuner_dialects::ta::Scope;

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
