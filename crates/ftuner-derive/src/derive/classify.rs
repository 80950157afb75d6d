//! Operator matching: which operator a scope is instantiated as ([`Kind`]): a
//! contraction (matmul / batch_matmul), a G2BMM (banded matmul), a dense conv, a direct
//! conv, or an eOperator.

use super::cost::DYN_EXTENT;
use crate::egraph::CHILD;
use ftuner_dialects::ta::{Idx, Scope, Src, Term};

/// A matched contraction: `X[...] * Y[...]` with plain iterator indices (constants
/// select a slice), batch / M / N / K iterators.
#[derive(Clone, Debug, PartialEq)]
pub struct Contraction {
    pub batch: Vec<String>,
    pub m: Vec<String>,
    pub n: Vec<String>,
    pub k: Vec<String>,
}

/// A matched G2BMM (general-to-band matrix multiplication, OLLIE's operator for banded
/// attention): `L<batch, i, w> Sum<k> { A[.., e(i), ..] * B[.., e(i) + s·δ·w + c, ..] }`:
/// row `e(i)` of `A` (one dim holds `s·i` plus batch iterators) against rows `δ` apart
/// around it in `B`; every other dim reads the same plain indices in both.
#[derive(Clone, Debug, PartialEq)]
pub struct G2bmm {
    /// Which factor of the product is `A` (0 or 1).
    pub rows: usize,
    /// The dim of the band.
    pub dim: usize,
    /// The row iterator and the band iterator.
    pub i: String,
    pub w: String,
    /// The band's step in rows (a dilation).
    pub delta: i64,
    pub batch: Vec<String>,
    pub k: Vec<String>,
}

/// A dense 2-d convolution inside a derived program:
/// `L<batch.., f, oh, ow> Sum<c, r, s> { X[.., c, .., a·(oh + r) + .., a'·(ow + s) + ..] * W[f, c, r, s] }`
/// — each window dim reads `o + r` with equal coefficients (unit dilation relative to the
/// output), `W` plainly in FCHW order. Instantiated as a gather of X into NCHW
/// (`G[batch, c, t_h, t_w]`, batch flattened into N) and a `linalg.conv_2d_nchw_fchw`
/// with unit strides and dilations.
#[derive(Clone, Debug, PartialEq)]
pub struct DenseConv {
    /// Which factor is the image (0 or 1).
    pub image: usize,
    pub batch: Vec<String>,
    pub f: String,
    pub c: String,
    /// (output iterator, window iterator) of the two spatial dims, in W's order.
    pub windows: [(String, String); 2],
}

/// What an expression is instantiated as.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// A dense conv (see [`DenseConv`]): as an op, an implicit-GEMM conv; in a derived
    /// program, a gather and a conv op.
    DenseConv(DenseConv),
    Contraction(Contraction),
    /// A banded batched matmul, instantiated as sliding-chunk batch_matmuls.
    G2bmm(G2bmm),
    /// A direct convolution (implicit GEMM in patch-ukernels).
    Conv2d,
    /// Everything else: an eOperator, generated as loops.
    EOp,
}

/// Classify a scope; `shape(src)` is the static shape of what an access reads.
pub fn classify(s: &Scope, shape: &dyn Fn(&Src) -> Option<Vec<Option<i64>>>) -> Kind {
    let Term::Bin(ftuner_dialects::ta::BinOp::Mul, a, b) = &s.body else {
        return Kind::EOp;
    };
    let (Term::Access(sa, ia), Term::Access(sb, ib)) = (&**a, &**b) else {
        return Kind::EOp;
    };
    let plain = |src: &Src, idx: &[ftuner_dialects::ta::Idx]| -> Option<Vec<String>> {
        let sh = shape(src)?;
        let mut vars = vec![];
        for (d, e) in idx.iter().enumerate() {
            let ext = *sh.get(d)?;
            if let Some(c) = e.as_const() {
                if c < 0 || c >= ext? {
                    return None;
                }
                continue;
            }
            let v = e.as_var()?.to_string();
            let it = s.iter(&v)?;
            // The iterator covers the dim exactly: no padding, no partial read. A dynamic
            // dim is covered by an iterator bounded by a dynamic dim (the emitted code
            // checks the two are equal at run time).
            let covers = match ext {
                Some(ext) => it.static_range() == Some((0, ext)),
                None => it.dim_range().is_some(),
            };
            if !covers || vars.contains(&v) {
                return None;
            }
            vars.push(v);
        }
        Some(vars)
    };
    if let (Some(va), Some(vb)) = (plain(sa, ia), plain(sb, ib)) {
        let mut c = Contraction {
            batch: vec![],
            m: vec![],
            n: vec![],
            k: vec![],
        };
        let mut ok = true;
        for i in &s.trav {
            match (va.contains(&i.name), vb.contains(&i.name)) {
                (true, true) => c.batch.push(i.name.clone()),
                (true, false) => c.m.push(i.name.clone()),
                (false, true) => c.n.push(i.name.clone()),
                _ => ok = false,
            }
        }
        for i in &s.sum {
            if va.contains(&i.name) && vb.contains(&i.name) {
                c.k.push(i.name.clone());
            } else {
                ok = false;
            }
        }
        if ok && !c.m.is_empty() && !c.n.is_empty() && !c.k.is_empty() {
            return Kind::Contraction(c);
        }
        return Kind::EOp;
    }
    if let Some(g) = classify_g2bmm(s, ia, ib) {
        return Kind::G2bmm(g);
    }
    for image in 0..2 {
        let (ix, (sw, iw)) = if image == 0 {
            (ia, (sb, ib))
        } else {
            (ib, (sa, ia))
        };
        if let Some(d) = classify_dense_conv(s, ix, sw, iw, shape) {
            return Kind::DenseConv(DenseConv { image, ..d });
        }
    }
    // A convolution: one operand read by plain iterators, the other by sums of one
    // traversal and one summation iterator (strided / dilated windows).
    let conv_like = |idx: &[ftuner_dialects::ta::Idx]| {
        idx.iter().all(|e| {
            e.linear().is_some_and(|(m, _)| {
                m.len() <= 2
                    && m.keys()
                        .filter(|v| s.sum.iter().any(|i| &&i.name == v))
                        .count()
                        <= 1
            })
        })
    };
    let all_plain = |idx: &[ftuner_dialects::ta::Idx]| idx.iter().all(|e| e.as_var().is_some());
    if matches!((sa, sb), (Src::Input(x), Src::Input(y)) if *x < CHILD && *y < CHILD)
        && ((conv_like(ia) && all_plain(ib)) || (conv_like(ib) && all_plain(ia)))
    {
        return Kind::Conv2d;
    }
    Kind::EOp
}

/// The dense-conv form of `X[ix] * W[iw]` (see [`DenseConv`]), `image` unset.
fn classify_dense_conv(
    s: &Scope,
    ix: &[Idx],
    sw: &Src,
    iw: &[Idx],
    shape: &dyn Fn(&Src) -> Option<Vec<Option<i64>>>,
) -> Option<DenseConv> {
    // W[f, c, r, s], plain, covering its static dims exactly.
    let wsh = shape(sw)?;
    if iw.len() != 4 || wsh.len() != 4 || s.sum.len() != 3 {
        return None;
    }
    let mut wv = vec![];
    for (e, ext) in iw.iter().zip(&wsh) {
        let v = e.as_var()?;
        let it = s.iter(v)?;
        if it.static_range()? != (0, (*ext)?) || wv.contains(&v) {
            return None;
        }
        wv.push(v);
    }
    let is_sum = |v: &str| s.sum.iter().any(|i| i.name == v);
    let (f, c, r, q) = (wv[0], wv[1], wv[2], wv[3]);
    if is_sum(f) || !is_sum(c) || !is_sum(r) || !is_sum(q) {
        return None;
    }
    // X: c plainly in one dim, each window `a·(o + r) + rest` in one dim each.
    let lins: Vec<_> = ix.iter().map(|e| e.linear()).collect();
    if !ix.iter().any(|e| e.as_var() == Some(c)) || ix.iter().any(|e| e.uses(f)) {
        return None;
    }
    let uses = |v: &str| ix.iter().filter(|e| e.uses(v)).count();
    let mut windows = vec![];
    for w in [r, q] {
        if uses(w) != 1 {
            return None;
        }
        let d = ix.iter().position(|e| e.uses(w))?;
        let (lin, _) = lins[d].as_ref()?;
        let a = *lin.get(w)?;
        // The output iterator: a traversal iterator with the same coefficient, read in
        // this dim only.
        let o = lin
            .iter()
            .find(|(v, k)| **k == a && v.as_str() != w && !is_sum(v) && uses(v) == 1)?;
        let oit = s.iter(o.0)?;
        oit.static_range()?;
        windows.push((o.0.clone(), w.to_string()));
    }
    if windows[0].0 == windows[1].0 {
        return None;
    }
    // Every other traversal iterator is a batch iterator of X.
    let mut batch = vec![];
    for t in &s.trav {
        let v = t.name.as_str();
        if v == f || windows.iter().any(|(o, _)| o == v) {
            continue;
        }
        if uses(v) == 0 {
            return None;
        }
        batch.push(v.to_string());
    }
    if batch.is_empty() {
        return None;
    }
    Some(DenseConv {
        image: 0,
        batch,
        f: f.to_string(),
        c: c.to_string(),
        windows: windows.try_into().ok()?,
    })
}

/// The G2BMM form of `X[ia] * Y[ib]`, if it is one (see [`G2bmm`]).
fn classify_g2bmm(s: &Scope, ia: &[Idx], ib: &[Idx]) -> Option<G2bmm> {
    if ia.len() != ib.len() || !s.sum.iter().all(|k| k.static_range().is_some()) {
        return None;
    }
    let differ: Vec<usize> = (0..ia.len()).filter(|d| ia[*d] != ib[*d]).collect();
    let [dim] = differ[..] else { return None };
    let uses_elsewhere = |v: &str| {
        (0..ia.len())
            .filter(|d| *d != dim)
            .any(|d| ia[d].uses(v) || ib[d].uses(v))
    };
    for rows in 0..2 {
        let (ea, eb) = if rows == 0 {
            (&ia[dim], &ib[dim])
        } else {
            (&ib[dim], &ia[dim])
        };
        let (Some((la, _)), Some((ldiff, _))) = (ea.linear(), eb.sub(ea).linear()) else {
            continue;
        };
        // The difference is `coef·w + c`, w a traversal iterator read nowhere else.
        let [(w, coef)] = ldiff.iter().collect::<Vec<_>>()[..] else {
            continue;
        };
        let (w, coef) = (w.clone(), *coef);
        if coef <= 0 || la.contains_key(&w) || uses_elsewhere(&w) {
            continue;
        }
        let Some(wit) = s.trav.iter().find(|t| t.name == w) else {
            continue;
        };
        if wit.static_range().is_none_or(|(l, h)| h - l < 2) {
            continue;
        }
        // The row iterator: the longest traversal iterator of A's band index whose
        // coefficient divides the band's, read nowhere else.
        let i = la
            .iter()
            .filter(|(v, a)| **a > 0 && coef % **a == 0 && !uses_elsewhere(v))
            .filter_map(|(v, a)| {
                let it = s.trav.iter().find(|t| &t.name == v)?;
                // A dynamic row count (a sequence length) from 0 to a dim: chunked at
                // run time (the chunk count is a ceiling division).
                let ext = match it.static_range() {
                    Some((l, h)) => h - l,
                    None if it.dim_range().is_some() => DYN_EXTENT,
                    None => return None,
                };
                (ext >= 2).then_some((ext, v.clone(), coef / a))
            })
            .max();
        let Some((_, i, delta)) = i else { continue };
        // Everything else: batch iterators read by A, reductions read in both (not in
        // the band).
        let mut batch = vec![];
        let mut ok = true;
        for t in &s.trav {
            if t.name == i || t.name == w {
                continue;
            }
            if ia.iter().any(|e| e.uses(&t.name)) {
                batch.push(t.name.clone());
            } else {
                ok = false;
            }
        }
        let mut k = vec![];
        for t in &s.sum {
            if ia[dim].uses(&t.name) || ib[dim].uses(&t.name) || !uses_elsewhere(&t.name) {
                ok = false;
            }
            k.push(t.name.clone());
        }
        if ok && !k.is_empty() {
            return Some(G2bmm {
                rows,
                dim,
                i,
                w,
                delta,
                batch,
                k,
            });
        }
    }
    None
}
