//! Explorative derivation: equality saturation with the rules, always under node,
//! iteration and time limits, then extraction priced by the hardware model.

use crate::egraph::{add_piece, piece_of, tree, TaAnalysis, TaGraph, TaNode, CHILD};
use crate::rules::{self, RuleRewrite};
use egg::Id;
use ftuner_dialects::ta::{Idx, Scope, Src, Term};
use rustc_hash::{FxHashMap, FxHashSet};
use std::time::{Duration, Instant};

/// Which operators a derivation may end in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Whatever the cost model prefers (a conv may stay an implicit-GEMM conv).
    Auto,
    /// Contractions must become matmul / batch_matmul (plus eOperators).
    Matmul,
    /// Strided and dilated convs must become dense convs (unit stride and dilation),
    /// matmuls and eOperators: for targets whose conv kernels handle only dense windows
    /// well (OLLIE's dilated conv → dense conv through reshapes).
    DenseConv,
}

#[derive(Clone, Debug)]
pub struct Options {
    pub iter_limit: usize,
    pub node_limit: usize,
    pub time_limit: Duration,
    pub target: Target,
    /// Guided derivation: summation splitting only along the iterator table.
    pub guided: bool,
    /// Add expression splitting (gathers of compound accesses, im2col) to the rules.
    pub split_expressions: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            iter_limit: 8,
            node_limit: 20_000,
            time_limit: Duration::from_secs(5),
            target: Target::Auto,
            guided: false,
            split_expressions: false,
        }
    }
}

/// Machine figures the cost model uses (from the hardware model).
#[derive(Clone, Debug)]
pub struct Costs {
    /// FLOP/s of one core at the vector FMA peak.
    pub peak: f64,
    /// Bytes/s from memory.
    pub bandwidth: f64,
    /// Cycles/s.
    pub freq: f64,
}

/// Efficiency of a patched-uKernel matmul and of an implicit-GEMM conv relative to the
/// FMA peak (measured with ftuner-bench and ftuner-run; docs/ollie.md). The large dense
/// convs reach more (the dilated 3x3 conv of ../shared/inputs 206 of the model's 272
/// GFLOP/s), the DCGAN generator's small-output ones much less: at 0.7 the model keeps
/// its first transposed conv, and the generator runs in 27.2 ms at batch 8 instead of
/// 18.1 ms with it derived.
const GEMM_EFFICIENCY: f64 = 0.8;
const CONV_EFFICIENCY: f64 = 0.5;
/// Cycles per element of an eOperator per access (index arithmetic, bounds check, load)
/// and per arithmetic op: scalar loops.
const EOP_ACCESS_CYCLES: f64 = 3.0;
const EOP_OP_CYCLES: f64 = 1.0;
/// Extent assumed for a dynamic dimension when pricing.
const DYN_EXTENT: i64 = 64;

impl Costs {
    pub fn from_model(m: &ftuner_hw::HardwareModel) -> Costs {
        match m.cpu() {
            Some(c) => Costs {
                peak: c.peak_gflops_core(4) * 1e9,
                bandwidth: c.dram_bw_gbs.max(1.0) * 1e9,
                freq: c.freq_ghz * 1e9,
            },
            None => Costs {
                peak: 1e12,
                bandwidth: 1e12,
                freq: 1.5e9,
            },
        }
    }
}

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

/// Seconds of a G2BMM (`bt` batches of `rows` rows, a band of `band` rows `delta` apart,
/// reductions of `kv`) as sliding chunks of `m` rows: the chunks of A (a reshape when `m`
/// divides the rows, else a gather eOperator), the overlapping windows of B (a gather
/// eOperator), the batch_matmul of the chunks, and the band read back (an eOperator).
fn g2bmm_chunk_cost(
    bt: f64,
    rows: i64,
    band: i64,
    delta: i64,
    kv: f64,
    m: i64,
    costs: &Costs,
) -> f64 {
    let j = g2bmm_cols(m, band, delta) as f64;
    let chunks = bt * ((rows + m - 1) / m) as f64;
    let m = m as f64;
    let ga = if rows % m as i64 == 0 {
        0.0
    } else {
        chunks * m * kv
    };
    let (gb, r, out) = (chunks * j * kv, chunks * m * j, bt * (rows * band) as f64);
    2.0 * chunks * m * j * kv / (GEMM_EFFICIENCY * costs.peak)
        + (ga + gb + out) * EOP_ACCESS_CYCLES / costs.freq
        + 4.0 * (2.0 * (ga + gb + r) + out) / costs.bandwidth
}

/// The rows of B a chunk of `m` rows multiplies: `m + δ·(band - 1)`, plus 8 when that is
/// a multiple of 64 (rows of 256 bytes: the windows' and products' rows then alias in the
/// L1 sets; measured on the example's band, J = 256: 3.0 ms or 11 ms depending on where
/// the buffers land, J = 264: 3.0-4.0 ms in every process).
pub fn g2bmm_cols(m: i64, band: i64, delta: i64) -> i64 {
    let j = m + delta * (band - 1);
    if j % 64 == 0 {
        j + 8
    } else {
        j
    }
}

/// The rows per chunk of a G2BMM instantiation the model prices cheapest (a multiple of 8
/// up to 256; small chunks multiply fewer rows outside the band, large ones copy fewer
/// overlapping windows), and its cost.
pub fn g2bmm_chunk(
    bt: f64,
    rows: i64,
    band: i64,
    delta: i64,
    kv: f64,
    costs: &Costs,
) -> (i64, f64) {
    let top = ((rows.max(1) + 7) / 8 * 8).min(256);
    (1..=top / 8)
        .map(|k| {
            let m = 8 * k;
            (m, g2bmm_chunk_cost(bt, rows, band, delta, kv, m, costs))
        })
        .fold((8, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a })
}

/// The extent the model assumes for iterator `v` of `s` (`DYN_EXTENT` where dynamic).
fn priced_extent(s: &Scope, v: &str) -> i64 {
    s.iter(v)
        .and_then(|i| i.static_range())
        .map_or(DYN_EXTENT, |(l, h)| h - l)
}

/// Whether a G2BMM is chunked per residue `p = i mod δ` (rows `δ·(m·q + r) + p`, each
/// chunk's window dense): a dilated one whose row count is dynamic, which traversal
/// splitting cannot split (the residues' row counts would not be dims).
pub fn g2bmm_by_residue(s: &Scope, g: &G2bmm) -> bool {
    g.delta > 1 && s.iter(&g.i).is_some_and(|i| i.static_range().is_none())
}

/// The chunk rows and seconds of a G2BMM as sliding chunks ([`g2bmm_chunk`]).
pub fn g2bmm_plan(s: &Scope, g: &G2bmm, costs: &Costs) -> (i64, f64) {
    let ext = |v: &String| priced_extent(s, v) as f64;
    let mut bt: f64 = g.batch.iter().map(ext).product();
    let kv: f64 = g.k.iter().map(ext).product();
    let (mut rows, mut delta) = (priced_extent(s, &g.i), g.delta);
    if g2bmm_by_residue(s, g) {
        bt *= delta as f64;
        rows = (rows + delta - 1) / delta;
        delta = 1;
    }
    g2bmm_chunk(bt, rows, priced_extent(s, &g.w), delta, kv, costs)
}

fn volume(s: &Scope) -> f64 {
    s.trav
        .iter()
        .chain(&s.sum)
        .map(|i| i.static_range().map_or(DYN_EXTENT, |(l, h)| (h - l).max(0)) as f64)
        .product()
}

fn count_ops(t: &Term) -> (f64, f64) {
    match t {
        Term::Access(..) => (1.0, 0.0),
        Term::Const(_) => (0.0, 0.0),
        Term::Bin(_, a, b) => {
            let (x, y) = (count_ops(a), count_ops(b));
            (x.0 + y.0, x.1 + y.1 + 1.0)
        }
    }
}

/// Seconds the model gives one scope (not counting its children). `as_op`: the scope is
/// an op as it stands (a direct conv is then an implicit-GEMM conv); inside a derived
/// program a conv-shaped scope is an eOperator, since that is how it would be emitted.
pub fn node_cost(
    s: &Scope,
    shape: &dyn Fn(&Src) -> Option<Vec<Option<i64>>>,
    costs: &Costs,
    target: Target,
    as_op: bool,
) -> f64 {
    let vol = volume(s);
    let out_elems: f64 = s
        .trav
        .iter()
        .map(|i| i.static_range().map_or(DYN_EXTENT, |(l, h)| h - l) as f64)
        .product();
    match classify(s, shape) {
        Kind::Contraction(_) => {
            let in_elems: f64 = s
                .body
                .accesses()
                .iter()
                .map(|(src, _)| {
                    shape(src).map_or(0.0, |sh| {
                        sh.iter()
                            .map(|d| d.unwrap_or(DYN_EXTENT) as f64)
                            .product::<f64>()
                    })
                })
                .sum();
            // Operands are transposed to the matmul's layout: read and written once more.
            2.0 * vol / (GEMM_EFFICIENCY * costs.peak)
                + 4.0 * (3.0 * in_elems + out_elems) / costs.bandwidth
        }
        // As an op as it stands, a banded product is a linalg.generic: loops.
        Kind::G2bmm(g) if !as_op => g2bmm_plan(s, &g, costs).1,
        Kind::DenseConv(_) if as_op => match target {
            Target::Matmul => f64::INFINITY,
            Target::Auto | Target::DenseConv => 2.0 * vol / (CONV_EFFICIENCY * costs.peak),
        },
        Kind::DenseConv(d) => match target {
            Target::Matmul => f64::INFINITY,
            Target::Auto | Target::DenseConv => {
                // The conv and the gather of its image (an eOperator copy).
                let ext = |v: &str| priced_extent(s, v) as f64;
                let gathered: f64 = d.batch.iter().map(|v| ext(v)).product::<f64>()
                    * ext(&d.c)
                    * d.windows
                        .iter()
                        .map(|(o, w)| ext(o) + ext(w) - 1.0)
                        .product::<f64>();
                2.0 * vol / (CONV_EFFICIENCY * costs.peak)
                    + gathered * EOP_ACCESS_CYCLES / costs.freq
                    + 8.0 * gathered / costs.bandwidth
            }
        },
        Kind::Conv2d if as_op => match target {
            Target::Matmul | Target::DenseConv => f64::INFINITY,
            Target::Auto => 2.0 * vol / (CONV_EFFICIENCY * costs.peak),
        },
        Kind::G2bmm(_) | Kind::Conv2d | Kind::EOp => {
            let (acc, ops) = count_ops(&s.body);
            vol * (acc * EOP_ACCESS_CYCLES + ops * EOP_OP_CYCLES) / costs.freq
                + 4.0 * out_elems / costs.bandwidth
        }
    }
}

/// Seconds the model gives a closed expression reading inputs of `input_shapes`.
pub fn price(s: &Scope, input_shapes: &[Vec<Option<i64>>], costs: &Costs, target: Target) -> f64 {
    let shape = |src: &Src| match src {
        Src::Input(i) => input_shapes.get(*i).cloned(),
        Src::Scope(s) => Some(
            s.trav
                .iter()
                .map(|i| i.static_range().map(|(l, h)| h - l))
                .collect(),
        ),
    };
    let mut total = node_cost(s, &shape, costs, target, true);
    for (src, _) in s.body.accesses() {
        if let Src::Scope(inner) = src {
            total += price(inner, input_shapes, costs, target);
        }
    }
    total
}

/// The result of a derivation.
#[derive(Debug)]
pub struct Outcome {
    /// The cheapest equivalent expression (nested scopes are the intermediate tensors).
    pub best: Scope,
    pub best_cost: f64,
    pub original_cost: f64,
    pub stop_reason: String,
    pub iterations: usize,
    pub nodes: usize,
    pub classes: usize,
    pub elapsed: Duration,
}

/// Derive `s` (reading inputs of `input_shapes`) and extract the cheapest form.
pub fn derive(
    s: &Scope,
    input_shapes: &[Vec<Option<i64>>],
    costs: &Costs,
    opts: &Options,
) -> Outcome {
    let start = Instant::now();
    let mut eg = TaGraph::new(TaAnalysis {
        input_shapes: input_shapes.to_vec(),
        range_conflicts: 0,
        root: None,
    });
    let root = add_piece(&mut eg, &piece_of(s));
    eg.analysis.root = Some(root);
    let mut rule_set = if opts.guided {
        rules::guided()
    } else {
        rules::all()
    };
    if opts.split_expressions {
        rule_set.push(rules::splitting());
    }
    // Rules bind no pattern variables, so building a rewrite cannot fail; a rule that
    // could not be built is left out rather than stopping the derivation.
    let rewrites: Vec<egg::Rewrite<TaNode, TaAnalysis>> = rule_set
        .into_iter()
        .filter_map(|r| {
            let rw = RuleRewrite {
                apply: r.apply,
                node_limit: opts.node_limit,
                root_only: r.root_only,
            };
            egg::Rewrite::new(r.name, rw.clone(), rw).ok()
        })
        .collect();
    let runner = egg::Runner::default()
        .with_egraph(eg)
        .with_iter_limit(opts.iter_limit)
        .with_node_limit(opts.node_limit)
        .with_time_limit(opts.time_limit)
        .with_scheduler(egg::SimpleScheduler)
        .run(&rewrites);
    let stop_reason = match &runner.stop_reason {
        Some(egg::StopReason::Saturated) => "saturated".to_string(),
        Some(egg::StopReason::IterationLimit(n)) => format!("iteration limit ({n})"),
        Some(egg::StopReason::NodeLimit(n)) => format!("node limit ({n})"),
        Some(egg::StopReason::TimeLimit(t)) => format!("time limit ({t} s)"),
        Some(egg::StopReason::Other(o)) => o.clone(),
        None => "not run".into(),
    };
    let eg = runner.egraph;
    let root = eg.find(root);
    let (best, best_cost) = extract(&eg, root, costs, opts.target);
    let original_cost = price(s, input_shapes, costs, opts.target);
    Outcome {
        best,
        best_cost,
        original_cost,
        stop_reason,
        iterations: runner.iterations.len(),
        nodes: eg.total_number_of_nodes(),
        classes: eg.number_of_classes(),
        elapsed: start.elapsed(),
    }
}

/// Shapes of what a node's accesses read: op inputs, or the node's children's classes.
fn shape_fn<'a>(
    eg: &'a TaGraph,
    input_shapes: &'a [Vec<Option<i64>>],
    kids: &'a [Id],
) -> impl Fn(&Src) -> Option<Vec<Option<i64>>> + 'a {
    move |src: &Src| match src {
        Src::Input(i) if *i >= CHILD => kids.get(*i - CHILD).map(|k| eg[*k].data.shape.clone()),
        Src::Input(i) => input_shapes.get(*i).cloned(),
        Src::Scope(s) => Some(
            s.trav
                .iter()
                .map(|i| i.static_range().map(|(l, h)| h - l))
                .collect(),
        ),
    }
}

/// DAG-aware greedy extraction: each class's best node minimises the summed cost of the
/// distinct classes below it (a class shared by two parents is paid once). A node is only
/// chosen when none of its children's choices contains its own class, so the result is
/// acyclic.
fn extract(eg: &TaGraph, root: Id, costs: &Costs, target: Target) -> (Scope, f64) {
    let input_shapes = &eg.analysis.input_shapes;
    // Own cost of every node.
    let mut own: FxHashMap<(Id, usize), f64> = FxHashMap::default();
    for c in eg.classes() {
        for (j, n) in c.nodes.iter().enumerate() {
            let shape = shape_fn(eg, input_shapes, &n.kids);
            own.insert((c.id, j), node_cost(&n.head, &shape, costs, target, false));
        }
    }
    // best[class] = (total, node index, classes below including itself with their cost).
    let mut best: FxHashMap<Id, (f64, usize, FxHashMap<Id, f64>)> = FxHashMap::default();
    for _round in 0..64 {
        let mut changed = false;
        for c in eg.classes() {
            for (j, n) in c.nodes.iter().enumerate() {
                let mut set: FxHashMap<Id, f64> = FxHashMap::default();
                let mut ok = true;
                for k in &n.kids {
                    let k = eg.find(*k);
                    match best.get(&k) {
                        Some((_, _, s)) if !s.contains_key(&c.id) => {
                            set.extend(s.iter().map(|(a, b)| (*a, *b)));
                        }
                        _ => {
                            ok = false;
                            break;
                        }
                    }
                }
                if !ok {
                    continue;
                }
                let o = own[&(c.id, j)];
                set.insert(c.id, o);
                let total: f64 = set.values().sum();
                if !total.is_finite() {
                    continue;
                }
                let better = best
                    .get(&c.id)
                    .is_none_or(|(t, _, _)| total < *t * (1.0 - 1e-9));
                if better {
                    best.insert(c.id, (total, j, set));
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let Some((total, j, _)) = best.get(&root) else {
        // Nothing finite (e.g. target=matmul and no matmul form found): the original.
        let n = &eg[root].nodes[0];
        return (tree(eg, n, &|id| eg[id].nodes[0].clone()), f64::INFINITY);
    };
    let pick = |id: Id| -> TaNode {
        let id = eg.find(id);
        let j = best.get(&id).map_or(0, |b| b.1);
        eg[id].nodes[j].clone()
    };
    let node = eg[root].nodes[*j].clone();
    let mut seen = FxHashSet::default();
    seen.insert(root);
    (tree(eg, &node, &pick), *total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ftuner_dialects::ta::expr::{parse_scope, positional};

    pub(super) fn costs() -> Costs {
        Costs {
            peak: 200e9,
            bandwidth: 20e9,
            freq: 4e9,
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
}

#[cfg(test)]
mod more_tests {
    use super::tests::costs;
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

#[cfg(test)]
mod guided_tests {
    use super::tests::{conv3x3, costs};
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

#[cfg(test)]
mod g2bmm_tests {
    use super::tests::costs;
    use super::*;
    use ftuner_dialects::ta::expr::{parse_scope, positional};

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

#[cfg(test)]
mod dense_conv_tests {
    use super::tests::costs;
    use super::*;
    use ftuner_dialects::ta::expr::{parse_scope, positional};

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
