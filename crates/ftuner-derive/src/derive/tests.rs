//! Tests of derivation: convs derived to matmuls and eOperators under the limits,
//! guided derivation, G2BMM and dense-conv matching and pricing.

use super::*;
use ftuner_dialects::ta::expr::{parse_scope, positional};

pub(super) fn costs() -> Costs {
    Costs {
        peak: 200e9,
        bandwidth: 20e9,
        freq: 4e9,
        flat_dense_convs: true,
    }
}

/// A 3x3 conv with padding 1 and its input shapes.
pub(super) fn conv3x3() -> (Scope, Vec<Vec<Option<i64>>>) {
    let s = parse_scope(
        "L<n:0:1, f:0:8, h:0:6, w:0:6> Sum<c:0:4, r:0:3, s:0:3> { $0[n, c, h + r - 1, w + s - 1] * $1[f, c, r, s] }",
        &positional,
    )
    .unwrap();
    let shapes = vec![
        vec![Some(1), Some(4), Some(6), Some(6)],
        vec![Some(8), Some(4), Some(3), Some(3)],
    ];
    (s, shapes)
}

#[test]
fn conv3x3_derives_to_matmul_and_eop() {
    let (s, shapes) = conv3x3();
    let o = derive(
        &s,
        &shapes,
        &costs(),
        &Options {
            target: Target::Matmul,
            ..Default::default()
        },
    );
    eprintln!(
        "{} ({:?}, {} nodes, {})",
        o.best, o.best_cost, o.nodes, o.stop_reason
    );
    assert!(o.best_cost.is_finite());
    let ushapes: Vec<Vec<usize>> = vec![vec![1, 4, 6, 6], vec![8, 4, 3, 3]];
    crate::check::equivalent(&s, &o.best, &ushapes, 200, 1).unwrap();
}

mod more_tests {
    use super::*;
    use ftuner_dialects::ta::expr::{parse_scope, positional};

    fn derive_checked(src: &str, shapes: &[Vec<i64>]) -> Outcome {
        let s = parse_scope(src, &positional).unwrap();
        let sh: Vec<Vec<Option<i64>>> = shapes
            .iter()
            .map(|v| v.iter().map(|d| Some(*d)).collect())
            .collect();
        let o = derive(
            &s,
            &sh,
            &costs(),
            &Options {
                target: Target::Matmul,
                ..Default::default()
            },
        );
        let us: Vec<Vec<usize>> = shapes
            .iter()
            .map(|v| v.iter().map(|d| *d as usize).collect())
            .collect();
        crate::check::equivalent(&s, &o.best, &us, 200, 3).unwrap();
        o
    }

    #[test]
    fn conv1x1_is_one_contraction() {
        let o = derive_checked(
            "L<n:0:2, f:0:6, h:0:3, w:0:5> Sum<c:0:4, r:0:1, s:0:1> { $0[n, c, h + r, w + s] * $1[f, c, r, s] }",
            &[vec![2, 4, 3, 5], vec![6, 4, 1, 1]],
        );
        let shape = |src: &Src| match src {
            Src::Input(0) => Some(vec![Some(2), Some(4), Some(3), Some(5)]),
            Src::Input(1) => Some(vec![Some(6), Some(4), Some(1), Some(1)]),
            _ => None,
        };
        assert!(
            matches!(classify(&o.best, &shape), Kind::Contraction(_)),
            "{}",
            o.best
        );
    }

    #[test]
    fn dilated_conv_derives_and_limits_hold() {
        let src = "L<n:0:1, f:0:3, h:0:4, w:0:4> Sum<c:0:2, r:0:3, s:0:3> { $0[n, c, h + 2 * r, w + 2 * s] * $1[f, c, r, s] }";
        let o = derive_checked(src, &[vec![1, 2, 8, 8], vec![3, 2, 3, 3]]);
        assert!(o.best_cost.is_finite());
        assert!(o.best.to_string().contains("2 * k0"), "{}", o.best);
        // Tight limits: the e-graph stays within them and says why it stopped.
        let s = parse_scope(src, &positional).unwrap();
        let sh = vec![
            vec![Some(1), Some(2), Some(8), Some(8)],
            vec![Some(3), Some(2), Some(3), Some(3)],
        ];
        for (iters, nodes) in [(1, 1000), (8, 12)] {
            let o = derive(
                &s,
                &sh,
                &costs(),
                &Options {
                    iter_limit: iters,
                    node_limit: nodes,
                    ..Default::default()
                },
            );
            assert!(o.nodes <= nodes + 4, "{} nodes", o.nodes);
            assert!(
                o.stop_reason.contains("limit") || o.stop_reason == "saturated",
                "{}",
                o.stop_reason
            );
            let us = vec![vec![1, 2, 8, 8], vec![3, 2, 3, 3]];
            crate::check::equivalent(&s, &o.best, &us, 50, 5).unwrap();
        }
    }

    #[test]
    fn a_wrong_derivation_fails_the_check() {
        // The check is not vacuous: an off-by-one tap differs.
        let a = parse_scope("L<h:0:6> Sum<r:0:3> { $0[h + r - 1] * $1[r] }", &positional).unwrap();
        let b = parse_scope("L<h:0:6> Sum<r:0:3> { $0[h + r] * $1[r] }", &positional).unwrap();
        assert!(crate::check::equivalent(&a, &b, &[vec![6], vec![3]], 20, 1).is_err());
    }
}

mod guided_tests {
    use super::*;

    #[test]
    fn guided_derivation_reaches_the_matmul_in_a_smaller_egraph() {
        let (s, sh) = conv3x3();
        let c = costs();
        let run = |guided| {
            derive(
                &s,
                &sh,
                &c,
                &Options {
                    target: Target::Matmul,
                    guided,
                    ..Default::default()
                },
            )
        };
        let (g, e) = (run(true), run(false));
        assert!(g.best_cost.is_finite() && e.best_cost.is_finite());
        assert!(
            g.nodes < e.nodes,
            "guided {} vs explorative {}",
            g.nodes,
            e.nodes
        );
        let us = vec![vec![1, 4, 6, 6], vec![8, 4, 3, 3]];
        crate::check::equivalent(&s, &g.best, &us, 100, 9).unwrap();
        // The inner contraction reduces c only.
        assert!(g.best.to_string().contains("Sum<k0:0:4>"), "{}", g.best);
    }
}

mod g2bmm_tests {
    use super::*;
    use crate::derive::cost::{count_ops, volume, DYN_EXTENT, EOP_ACCESS_CYCLES, EOP_OP_CYCLES};
    use ftuner_dialects::ta::expr::{parse_scope, positional};
    use ftuner_dialects::ta::Term;

    fn shapes(v: &[Vec<i64>]) -> (Vec<Vec<Option<i64>>>, Vec<Vec<usize>>) {
        (
            v.iter()
                .map(|s| s.iter().map(|d| Some(*d)).collect())
                .collect(),
            v.iter()
                .map(|s| s.iter().map(|d| *d as usize).collect())
                .collect(),
        )
    }

    fn kind(s: &Scope, sh: &[Vec<Option<i64>>]) -> Kind {
        classify(s, &|src: &Src| match src {
            Src::Input(i) => sh.get(*i).cloned(),
            Src::Scope(_) => None,
        })
    }

    #[test]
    fn banded_attention_is_a_g2bmm() {
        let s = parse_scope(
            "L<b:0:2, i:0:40, w:0:9> Sum<k:0:64> { $0[b, i, k] * $1[b, i + w - 4, k] }",
            &positional,
        )
        .unwrap();
        let (sh, _) = shapes(&[vec![2, 40, 64], vec![2, 40, 64]]);
        let Kind::G2bmm(g) = kind(&s, &sh) else {
            panic!("not a G2BMM: {:?}", kind(&s, &sh))
        };
        assert_eq!(
            (g.rows, g.dim, g.i.as_str(), g.w.as_str(), g.delta),
            (0, 1, "i", "w", 1)
        );
        assert_eq!(
            (g.batch.clone(), g.k.clone()),
            (vec!["b".to_string()], vec!["k".to_string()])
        );
        // The factors the other way round: B is operand 0.
        let t = parse_scope(
            "L<b:0:2, i:0:40, w:0:9> Sum<k:0:64> { $1[b, i + 2 * w - 8, k] * $0[b, i, k] }",
            &positional,
        )
        .unwrap();
        assert!(matches!(
            kind(&t, &sh),
            Kind::G2bmm(G2bmm {
                rows: 1,
                delta: 2,
                ..
            })
        ));
        // Not G2BMMs: a conv (the windowed dim differs in a summation), a band read by
        // a reduction, a band iterator read elsewhere too.
        for src in [
            "L<n:0:1, h:0:8> Sum<c:0:4, r:0:3> { $0[n, c, h + r] * $1[n, c, r] }",
            "L<b:0:2, i:0:40> Sum<k:0:8, w:0:9> { $0[b, i, k] * $1[b, i + w, k] }",
            "L<b:0:2, i:0:40, w:0:9> Sum<k:0:8> { $0[b, i, k] * $1[w, i + w, k] }",
        ] {
            let t = parse_scope(src, &positional).unwrap();
            assert!(!matches!(kind(&t, &sh), Kind::G2bmm(_)), "{src}");
        }
        // Priced far below the eOperator of the same expression.
        let c = costs();
        let g = node_cost(
            &s,
            &|src| match src {
                Src::Input(i) => sh.get(*i).cloned(),
                _ => None,
            },
            &c,
            Target::Auto,
            false,
        );
        let (acc, ops) = count_ops(&s.body);
        let loops = volume(&s) * (acc * EOP_ACCESS_CYCLES + ops * EOP_OP_CYCLES) / c.freq;
        assert!(g < loops / 3.0, "{g} vs {loops}");
    }

    #[test]
    fn a_band_with_a_dynamic_row_count_is_a_g2bmm() {
        // A sequence length known at run time only: rows [0, dim($0, 1)).
        let s = parse_scope(
            "L<b:0:2, i:0:dim($0, 1), w:0:9> Sum<k:0:16> { $0[b, i, k] * $1[b, i + w - 4, k] }",
            &positional,
        )
        .unwrap();
        let sh = vec![vec![Some(2), None, Some(16)]; 2];
        let Kind::G2bmm(g) = kind(&s, &sh) else {
            panic!("not a G2BMM: {:?}", kind(&s, &sh))
        };
        assert_eq!((g.i.as_str(), g.w.as_str(), g.delta), ("i", "w", 1));
        // Rows from an offset of a dim are not chunked (the count would not be a dim).
        let t = parse_scope(
            "L<b:0:2, i:0:dim($0, 1) - 1, w:0:9> Sum<k:0:16> { $0[b, i, k] * $1[b, i + w - 4, k] }",
            &positional,
        )
        .unwrap();
        assert!(!matches!(kind(&t, &sh), Kind::G2bmm(_)));
        // Derived: the G2BMM, priced below the loops, and equal to them at a small length.
        let o = derive(&s, &sh, &costs(), &Options::default());
        assert!(o.best_cost < o.original_cost, "{}", o.best);
        crate::check::equivalent(&s, &o.best, &[vec![2, 37, 16], vec![2, 37, 16]], 64, 3).unwrap();
        // Dilated (δ = 4): not split by traversal splitting, so chunked per residue, and
        // priced as 4x the batch of a dense band over a quarter of the rows.
        let d = parse_scope(
            "L<b:0:2, i:0:dim($0, 1), w:0:9> Sum<k:0:16> { $0[b, i, k] * $1[b, i + 4 * w - 16, k] }",
            &positional,
        )
        .unwrap();
        let Kind::G2bmm(g) = kind(&d, &sh) else {
            panic!("not a G2BMM: {:?}", kind(&d, &sh))
        };
        assert_eq!(g.delta, 4);
        assert!(g2bmm_by_residue(&d, &g));
        let c = costs();
        let dense = g2bmm_chunk(2.0 * 4.0, DYN_EXTENT / 4, 9, 1, 16.0, &c);
        assert_eq!(g2bmm_plan(&d, &g, &c), dense);
        assert!(dense.1 < g2bmm_chunk(2.0, DYN_EXTENT, 9, 4, 16.0, &c).1);
    }

    #[test]
    fn a_dilated_g2bmm_is_split_into_dense_ones() {
        let src =
            "L<b:0:2, i:0:256, w:0:17> Sum<k:0:16> { $0[b, i, k] * $1[b, i + 4 * w - 32, k] }";
        let s = parse_scope(src, &positional).unwrap();
        let (sh, us) = shapes(&[vec![2, 256, 16], vec![2, 256, 16]]);
        let o = derive(&s, &sh, &costs(), &Options::default());
        eprintln!(
            "{} ({:e} < {:e}, {} nodes, {})",
            o.best, o.best_cost, o.original_cost, o.nodes, o.stop_reason
        );
        crate::check::equivalent(&s, &o.best, &us, 200, 7).unwrap();
        assert!(o.best_cost < o.original_cost);
        // The copy reads the child at (i floordiv 4, i mod 4): the child is the dense
        // G2BMM over the batch (b, i mod 4).
        let Term::Access(Src::Scope(child), idx) = &o.best.body else {
            panic!("not split: {}", o.best)
        };
        assert!(
            idx.iter().any(|e| e.to_string().contains("floordiv 4")),
            "{}",
            o.best
        );
        let Kind::G2bmm(g) = kind(child, &sh) else {
            panic!("the child is not a G2BMM: {child}")
        };
        assert_eq!(g.delta, 1, "{child}");
        assert_eq!(g.batch.len(), 2, "{child}");
    }
}

mod dense_conv_tests {
    use super::*;
    use ftuner_dialects::ta::expr::{parse_scope, positional};
    use ftuner_dialects::ta::Term;

    #[test]
    fn a_dilated_conv_becomes_a_dense_conv_through_reshapes() {
        let src = "L<n:0:1, f:0:3, h:0:8, w:0:8> Sum<c:0:2, r:0:3, s:0:3> { $0[n, c, h + 2 * r - 2, w + 2 * s - 2] * $1[f, c, r, s] }";
        let s = parse_scope(src, &positional).unwrap();
        let sh = vec![
            vec![Some(1), Some(2), Some(8), Some(8)],
            vec![Some(3), Some(2), Some(3), Some(3)],
        ];
        let shape = |src: &Src| match src {
            Src::Input(i) => sh.get(*i).cloned(),
            Src::Scope(s) => Some(
                s.trav
                    .iter()
                    .map(|i| i.static_range().map(|(l, h)| h - l))
                    .collect(),
            ),
        };
        // The dilated conv itself is not dense; a 3x3 conv with padding is.
        assert_eq!(classify(&s, &shape), Kind::Conv2d);
        let dense = parse_scope(
            "L<n:0:1, f:0:3, h:0:8, w:0:8> Sum<c:0:2, r:0:3, s:0:3> { $0[n, c, h + r - 1, w + s - 1] * $1[f, c, r, s] }",
            &positional,
        )
        .unwrap();
        assert!(matches!(classify(&dense, &shape), Kind::DenseConv(_)));
        let o = derive(
            &s,
            &sh,
            &costs(),
            &Options {
                target: Target::DenseConv,
                ..Default::default()
            },
        );
        let us = vec![vec![1, 2, 8, 8], vec![3, 2, 3, 3]];
        crate::check::equivalent(&s, &o.best, &us, 200, 11).unwrap();
        assert!(o.best_cost.is_finite(), "{}", o.best);
        // The copy of a child split by 2 in h and w, which is a dense conv over the
        // batch (n, h mod 2, w mod 2).
        let Term::Access(Src::Scope(child), _) = &o.best.body else {
            panic!("not split: {}", o.best)
        };
        let Kind::DenseConv(d) = classify(child, &shape) else {
            panic!("the child is not a dense conv: {child}")
        };
        assert_eq!(d.batch.len(), 3, "{child}");
        // target=auto keeps the conv (the gather and the copy only add).
        let a = derive(&s, &sh, &costs(), &Options::default());
        assert!(
            a.best_cost >= price(&s, &sh, &costs(), Target::Auto),
            "{}",
            a.best
        );
    }
}

/// A direct (strided) conv kept as an op is priced at the flat form's efficiency when its
/// image past the batch and its filter are static (lower-ukernels runs it as one k loop
/// over packed panels), at the nested form's when a spatial dim is dynamic.
#[test]
fn a_static_strided_conv_is_priced_as_a_matmul() {
    let s = parse_scope(
        "L<n:0:2, f:0:16, h:0:4, w:0:4> Sum<c:0:8, r:0:3, t:0:3> { $0[n, c, 2 * h + r, 2 * w + t] * $1[f, c, r, t] }",
        &positional,
    )
    .unwrap();
    let price_with = |image: Vec<Option<i64>>| {
        let sh = [image, vec![Some(16), Some(8), Some(3), Some(3)]];
        let shape = |src: &Src| match src {
            Src::Input(i) => sh.get(*i).cloned(),
            _ => None,
        };
        assert!(matches!(classify(&s, &shape), Kind::Conv2d));
        cost::node_cost(&s, &shape, &costs(), Target::Auto, true)
    };
    let stat = price_with(vec![None, Some(8), Some(9), Some(9)]);
    let dynamic = price_with(vec![None, Some(8), None, Some(9)]);
    let ratio = stat / dynamic;
    assert!(
        (ratio - 0.5 / 0.8).abs() < 1e-9,
        "static / dynamic = {ratio}"
    );
}

#[test]
fn a_dense_conv_over_a_static_image_is_priced_as_a_matmul_unless_zero_inserted() {
    // Unpadded, so the image is the dense-conv input as it stands.
    let s = parse_scope(
        "L<n:0:2, f:0:16, h:0:4, w:0:4> Sum<c:0:8, r:0:3, t:0:3> { $0[n, c, h + r, w + t] * $1[f, c, r, t] }",
        &positional,
    )
    .unwrap();
    let price_with = |image: Vec<Option<i64>>, flat_dense_convs: bool| {
        let sh = [image, vec![Some(16), Some(8), Some(3), Some(3)]];
        let shape = |src: &Src| match src {
            Src::Input(i) => sh.get(*i).cloned(),
            _ => None,
        };
        assert!(matches!(classify(&s, &shape), Kind::DenseConv(_)));
        let c = Costs {
            flat_dense_convs,
            ..costs()
        };
        cost::node_cost(&s, &shape, &c, Target::Auto, true)
    };
    let image = vec![None, Some(8), Some(6), Some(6)];
    let flat = price_with(image.clone(), true);
    let zero_inserted = price_with(image, false);
    let dynamic = price_with(vec![None, Some(8), None, Some(6)], true);
    for (name, other) in [("zero-inserted", zero_inserted), ("dynamic", dynamic)] {
        let ratio = flat / other;
        assert!((ratio - 0.5 / 0.8).abs() < 1e-9, "flat / {name} = {ratio}");
    }
}
