//! The polyphase split of a strided summation, before an expression becomes a generic.
//!
//! A transposed convolution's col2im sums taps at an exact division by its stride,
//! `out[y] = Σ_k in[(y + k + c) / s, k]`: for each output position only the taps with
//! `y + k + c ≡ 0 (mod s)` read anything, the others read 0 (OLLIE's `/`). Lowered as it
//! stands, every output position computes all `s·T` taps, each with a divisibility test
//! and a gather at a run-time quotient. Writing `y = s·q + p` (q the position among the
//! input's, p the phase) and `k = s·t + r(p)`, with `r(p) = (m - p) mod s` and
//! `m = -c mod s`, enumerates exactly the taps that read: `T` of them, at
//! `q + t + R + (p + r(p) + c) / s` (R: the division's other terms over s), a quotient
//! that is exact by construction. For s = 2 the phase's tap and offset are affine
//! (`r(p) = p` or `1 - p`) and the division folds: the taps are plain affine reads of
//! consecutive input positions, and where y is the result's innermost dim the phases are
//! too, two stores per input position, which LLVM vectorises as an interleaved group. The
//! result is `[.., Y, s, ..]` in place of `[.., s·Y, ..]`, the same row-major data: a
//! `tensor.collapse_shape` folds it back.
//!
//! Only where nothing is lost: every access that reads through y or k is already a
//! computed one (a division, a floordiv or mod), so no indexing map becomes a gather. A
//! product counts as 0 where one factor reads nothing, as everywhere in these
//! expressions (padding): with an infinite or NaN other factor the unsplit form would
//! give NaN for that tap, the split none.
//!
//! Measured on Zen 3 (family 25 model 1), the DCGAN generator's fourth col2im pair at
//! batch 8 (`ftuner-run --bench 11 --threads 1`, three alternated rounds): 2.5-3.2 ms as
//! it stands, 1.5-2.1 ms split (docs/ollie.md).

use ftuner_dialects::ta::{Atom, BinOp, Idx, Iter, Scope, Src, Term};

/// A scope rewritten by [`split`]: its result's dims fold back into the original's by
/// `groups` (`groups[i]`: the new dims that make up dim i, in order).
pub(super) struct Split {
    pub scope: Scope,
    pub groups: Vec<Vec<usize>>,
}

/// One split: the summation iterator `k` taken at a stride `s` of traversal iterator
/// `y`, whose division leaves `m = -c mod s`.
struct Candidate {
    k: String,
    y: String,
    s: i64,
    m: i64,
    /// y's position among the traversal iterators, y's and k's extents.
    jy: usize,
    yh: i64,
    kh: i64,
}

/// `s` with every strided summation that can be split, split ([`Candidate`]); None when
/// none can.
pub(super) fn split(s: &Scope) -> Option<Split> {
    let mut cur = s.clone();
    let mut groups: Vec<Vec<usize>> = (0..s.trav.len()).map(|i| vec![i]).collect();
    let mut any = false;
    // Each split removes one summation iterator: at most that many rounds.
    for _ in 0..s.sum.len() {
        let Some(c) = candidate(&cur) else { break };
        cur = apply(&cur, &c, &mut groups);
        any = true;
    }
    any.then_some(Split { scope: cur, groups })
}

/// A summation iterator `k` over `[0, s·T)` and a traversal iterator `y` over `[0, s·Y)`
/// that meet in an exact division `(y + k + s·R + c) / s` (R: other iterators), where the
/// summand is 0 whenever that division is not exact.
fn candidate(sc: &Scope) -> Option<Candidate> {
    for k in &sc.sum {
        let Some((0, kh)) = k.static_range() else {
            continue;
        };
        for (src, idxs) in sc.body.accesses() {
            if matches!(src, Src::Scope(_)) {
                continue;
            }
            for idx in idxs {
                for (atom, _) in &idx.terms {
                    let Atom::Div(e, s) = atom else { continue };
                    let s = *s;
                    if s < 2 || kh <= 0 || kh % s != 0 || e.coef(&k.name) != 1 {
                        continue;
                    }
                    let Some((jy, y, yh)) = sc.trav.iter().enumerate().find_map(|(j, y)| {
                        let (l, h) = y.static_range()?;
                        (y.name != k.name && e.coef(&y.name) == 1 && l == 0 && h > 0 && h % s == 0)
                            .then_some((j, y, h))
                    }) else {
                        continue;
                    };
                    // The rest: plain iterators whose coefficients s divides.
                    let rest_ok = e.terms.iter().all(|(a, c)| match a {
                        Atom::Var(v) => v == &k.name || v == &y.name || c % s == 0,
                        _ => false,
                    });
                    // (A constant with no negation, i64::MIN, is left alone.)
                    let Some(neg_c) = e.c.checked_neg() else {
                        continue;
                    };
                    if rest_ok
                        && vanishes(&sc.body, atom)
                        && only_computed(&sc.body, &[&k.name, &y.name])
                    {
                        return Some(Candidate {
                            k: k.name.clone(),
                            y: y.name.clone(),
                            s,
                            m: neg_c.rem_euclid(s),
                            jy,
                            yh,
                            kh,
                        });
                    }
                }
            }
        }
    }
    None
}

/// Whether `t` is 0 wherever `atom` (an exact division) is not exact: an access that
/// reads through it, a product with such a factor, a sum of two such terms.
fn vanishes(t: &Term, atom: &Atom) -> bool {
    match t {
        Term::Access(_, idxs) => idxs.iter().any(|i| contains(i, atom)),
        Term::Const(_) => false,
        Term::Bin(BinOp::Mul, a, b) => vanishes(a, atom) || vanishes(b, atom),
        Term::Bin(_, a, b) => vanishes(a, atom) && vanishes(b, atom),
    }
}

/// Whether every access of `t` that reads through one of `vars` is a computed access
/// (some index holds a division, floordiv or mod): rewriting those variables then turns
/// no indexing map into a gather.
fn only_computed(t: &Term, vars: &[&str]) -> bool {
    t.accesses().iter().all(|(_, idxs)| {
        let uses = idxs.iter().any(|i| vars.iter().any(|v| i.uses(v)));
        let computed = idxs
            .iter()
            .any(|i| i.terms.iter().any(|(a, _)| !matches!(a, Atom::Var(_))));
        !uses || computed
    })
}

/// Whether `atom` occurs in `i`, at any depth.
fn contains(i: &Idx, atom: &Atom) -> bool {
    i.terms.iter().any(|(a, _)| {
        a == atom
            || match a {
                Atom::Var(_) => false,
                Atom::FloorDiv(e, _) | Atom::Mod(e, _) | Atom::Div(e, _) => contains(e, atom),
            }
    })
}

/// A name no iterator of `s` has, from `base`.
fn fresh(s: &Scope, base: &str) -> String {
    let mut n = 0;
    loop {
        let name = format!("{base}{n}");
        if s.iter(&name).is_none() {
            return name;
        }
        n += 1;
    }
}

/// `sc` with `y = s·q + p` (q and p in y's place) and `k = s·t + r(p)`; `groups` follows
/// the result's dims.
fn apply(sc: &Scope, c: &Candidate, groups: &mut [Vec<usize>]) -> Scope {
    let (q, p, t) = (fresh(sc, "q"), fresh(sc, "p"), fresh(sc, "t"));
    let (jy, yh, kh) = (c.jy, c.yh, c.kh);
    let mut trav = sc.trav.clone();
    trav.splice(jy..=jy, [Iter::new(&q, 0, yh / c.s), Iter::new(&p, 0, c.s)]);
    let sum: Vec<Iter> = sc
        .sum
        .iter()
        .map(|i| {
            if i.name == c.k {
                Iter::new(&t, 0, kh / c.s)
            } else {
                i.clone()
            }
        })
        .collect();
    let pv = Idx::var(&p);
    // The phase's tap r(p) = (m - p) mod s: affine for s = 2.
    let r = match (c.s, c.m) {
        (2, 0) => pv.clone(),
        (2, _) => Idx::constant(1).sub(&pv),
        _ => Idx::constant(c.m).sub(&pv).modulo(c.s),
    };
    let y_by = Idx::var(&q).scale(c.s).add(&pv);
    let k_by = Idx::var(&t).scale(c.s).add(&r);
    let body = sc
        .body
        .map_idx(&|i: &Idx| i.subst(&c.y, &y_by).subst(&c.k, &k_by));
    // The new dim p follows q (y's old dim) in q's group; later dims move up one.
    for g in groups.iter_mut() {
        for d in g.iter_mut() {
            if *d > jy {
                *d += 1;
            }
        }
        if let Some(at) = g.iter().position(|d| *d == jy) {
            g.insert(at + 1, jy + 1);
        }
    }
    Scope { trav, sum, body }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ftuner_dialects::ta::expr::{evaluate, parse_scope, positional, Inputs};

    fn scope(src: &str) -> Scope {
        parse_scope(src, &positional).unwrap()
    }

    /// The split scope's values equal the original's, row-major.
    fn same_values(src: &str, shapes: &[Vec<usize>]) -> Split {
        let s = scope(src);
        let sp = split(&s).unwrap_or_else(|| panic!("not split: {src}"));
        let data: Vec<Vec<f64>> = shapes
            .iter()
            .enumerate()
            .map(|(j, sh)| {
                (0..sh.iter().product::<usize>())
                    .map(|i| ((i * 7 + j * 13) % 17) as f64 - 8.0)
                    .collect()
            })
            .collect();
        let inputs = Inputs {
            shapes: shapes.to_vec(),
            data: data.iter().map(|d| d.as_slice()).collect(),
        };
        let (sh0, v0) = evaluate(&s, &inputs).unwrap();
        let (sh1, v1) = evaluate(&sp.scope, &inputs).unwrap();
        assert_eq!(v0, v1, "{src} -> {}", sp.scope);
        for (d, g) in sp.groups.iter().enumerate() {
            assert_eq!(sh0[d], g.iter().map(|j| sh1[*j]).product::<usize>());
        }
        sp
    }

    #[test]
    fn a_col2im_is_split_into_phases() {
        // The DCGAN generator's col2im (kernel 4, stride 2, padding 1: c = -2).
        let sp = same_values(
            "L<n:0:2, h:0:6, w:0:12> Sum<k:0:4> { $0[n, h, (w + k - 2) / 2, k] }",
            &[vec![2, 6, 6, 4]],
        );
        // Affine taps and reads, no division left.
        assert_eq!(
            sp.scope.to_string(),
            "L<n:0:2, h:0:6, q0:0:6, p0:0:2> Sum<t0:0:2> { $0[n, h, p0 + q0 + t0 - 1, p0 + 2 * t0] }"
        );
        assert_eq!(sp.groups, vec![vec![0], vec![1], vec![2, 3]]);
    }

    #[test]
    fn every_offset_stride_and_pair_keeps_the_values() {
        for c in -3..=2 {
            same_values(
                &format!("L<y:0:8> Sum<k:0:4> {{ $0[(y + k + {c}) / 2, k] }}").replace("+ -", "- "),
                &[vec![5, 4]],
            );
            // Stride 3, six taps, a product with a weight read at a computed index,
            // the division's other iterator scaled by the stride.
            same_values(
                &format!(
                    "L<i:0:2, y:0:9> Sum<k:0:6> {{ $0[(y + k + 3 * i + {c}) / 3, k] * $1[k mod 6] }}"
                )
                .replace("+ -", "- "),
                &[vec![6, 6], vec![6]],
            );
        }
        // Both spatial dims in one scope: two splits.
        let sp = same_values(
            "L<c:0:3, y:0:8, x:0:6> Sum<r:0:4, s:0:4> { $0[c, r, s, (y + r - 2) / 2, (x + s - 1) / 2] }",
            &[vec![3, 4, 4, 4, 3]],
        );
        assert_eq!(sp.scope.sum.len(), 2);
        assert_eq!(sp.groups, vec![vec![0], vec![1, 2], vec![3, 4]]);
    }

    #[test]
    fn a_summand_that_reads_without_the_division_is_kept() {
        for src in [
            // A sum with a term that does not vanish off the stride.
            "L<y:0:8> Sum<k:0:4> { $0[(y + k - 2) / 2] + $1[k] }",
            // Taps that are not a whole number of strides.
            "L<y:0:8> Sum<k:0:3> { $0[(y + k - 2) / 2] }",
            // An output extent that is not.
            "L<y:0:7> Sum<k:0:4> { $0[(y + k - 2) / 2] }",
            // The iterators scaled.
            "L<y:0:8> Sum<k:0:4> { $0[(y + 2 * k - 2) / 2] }",
            "L<y:0:8> Sum<k:0:4> { $0[(2 * y + k - 2) / 4] }",
            // Ranges that do not start at 0.
            "L<y:1:9> Sum<k:0:4> { $0[(y + k - 2) / 2] }",
            "L<y:0:8> Sum<k:2:6> { $0[(y + k - 2) / 2] }",
            // A difference with one side that reads without the division.
            "L<y:0:8> Sum<k:0:4> { $0[(y + k - 2) / 2] - $1[k] }",
            // A weight read by an indexing map, which the split would make a gather.
            "L<y:0:8> Sum<k:0:4> { $0[(y + k - 2) / 2] * $1[k] }",
            // A constant with no negation.
            "L<y:0:8> Sum<k:0:4> { $0[(y + k - 9223372036854775807 - 1) / 2] }",
        ] {
            assert!(split(&scope(src)).is_none(), "{src}");
        }
    }
}
