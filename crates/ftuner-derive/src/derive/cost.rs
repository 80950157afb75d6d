//! The cost model: seconds of a scope as the operator it is instantiated as, from the
//! hardware model's peak, bandwidth and frequency ([`Costs`]); the sliding-chunk plan of
//! a G2BMM.

use super::{classify, G2bmm, Kind, Target};
use ftuner_dialects::ta::{Scope, Src, Term};

/// Machine figures the cost model uses (from the hardware model).
#[derive(Clone, Debug)]
pub struct Costs {
    /// FLOP/s of one core at the vector FMA peak.
    pub peak: f64,
    /// Bytes/s from memory.
    pub bandwidth: f64,
    /// Cycles/s.
    pub freq: f64,
    /// Whether a dense conv over a static image stands as the flat-k form (a matmul's
    /// efficiency). Off for an op whose image is zero-inserted (a transposed conv as
    /// exported), whose derivation skips the zeros: the DCGAN generator, 13.6 ms at batch
    /// 8 derived, 34 ms kept as flat-form convs.
    pub flat_dense_convs: bool,
}

/// Efficiency of a patched-uKernel matmul and of an implicit-GEMM conv relative to the
/// FMA peak (measured with ftuner-bench and ftuner-run; docs/ollie.md). The large dense
/// convs reach more (the dilated 3x3 conv of ../shared/inputs 206 of the model's 272
/// GFLOP/s), the DCGAN generator's small-output ones much less: at 0.7 the model keeps
/// its first transposed conv, and the generator runs in 27.2 ms at batch 8 instead of
/// 18.1 ms with it derived.
const GEMM_EFFICIENCY: f64 = 0.8;
const CONV_EFFICIENCY: f64 = 0.5;
/// A conv (direct or dense) whose image dims past the batch and filter are static runs
/// its k dims as one loop over B's panels (lower-ukernels' flat-k form) at a matmul's
/// speed: ResNet-50's convs at 150-197 GFLOP/s on a core whose model peak is 166-180
/// (docs/ollie.md).
const FLAT_CONV_EFFICIENCY: f64 = GEMM_EFFICIENCY;
/// Cycles per element of an eOperator per access (index arithmetic, bounds check, load)
/// and per arithmetic op: scalar loops.
pub(super) const EOP_ACCESS_CYCLES: f64 = 3.0;
pub(super) const EOP_OP_CYCLES: f64 = 1.0;
/// Extent assumed for a dynamic dimension when pricing.
pub(super) const DYN_EXTENT: i64 = 64;

impl Costs {
    pub fn from_model(m: &ftuner_hw::HardwareModel) -> Costs {
        match m.cpu() {
            Some(c) => Costs {
                peak: c.peak_gflops_core(4) * 1e9,
                bandwidth: c.dram_bw_gbs.max(1.0) * 1e9,
                freq: c.freq_ghz * 1e9,
                flat_dense_convs: true,
            },
            None => Costs {
                peak: 1e12,
                bandwidth: 1e12,
                freq: 1.5e9,
                flat_dense_convs: true,
            },
        }
    }
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

pub(super) fn volume(s: &Scope) -> f64 {
    s.trav
        .iter()
        .chain(&s.sum)
        .map(|i| i.static_range().map_or(DYN_EXTENT, |(l, h)| (h - l).max(0)) as f64)
        .product()
}

pub(super) fn count_ops(t: &Term) -> (f64, f64) {
    match t {
        Term::Access(..) => (1.0, 0.0),
        Term::Const(_) => (0.0, 0.0),
        Term::Bin(_, a, b) => {
            let (x, y) = (count_ops(a), count_ops(b));
            (x.0 + y.0, x.1 + y.1 + 1.0)
        }
    }
}

/// Whether every input's dims past the first (the batch) are static: what lower-ukernels'
/// flat-k form (and, for 1x1 filters or a stem's few k steps, convert-1x1-conv-to-matmul)
/// needs.
fn static_image(s: &Scope, shape: &dyn Fn(&Src) -> Option<Vec<Option<i64>>>) -> bool {
    s.body
        .accesses()
        .iter()
        .all(|(src, _)| shape(src).is_some_and(|sh| sh.iter().skip(1).all(Option::is_some)))
}

/// The efficiency of an implicit-GEMM conv: the flat-k form's over a static image, else
/// the nested loops'.
fn conv_efficiency(s: &Scope, shape: &dyn Fn(&Src) -> Option<Vec<Option<i64>>>) -> f64 {
    if static_image(s, shape) {
        FLAT_CONV_EFFICIENCY
    } else {
        CONV_EFFICIENCY
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
            // Over a static image: the flat-k form, or a matmul per image for a 1x1
            // filter or a stem's few k steps through an im2col matrix
            // (convert-1x1-conv-to-matmul), priced as the flat form; in the layout the
            // tensors have (derived,
            // ResNet-50 paid 113 transposes and an im2col per 3x3 conv: 572 ms at batch 8
            // against 490 kept). Not when the image is zero-inserted (`flat_dense_convs`
            // off), which a derivation skips.
            Target::Auto if costs.flat_dense_convs && static_image(s, shape) => {
                2.0 * vol / (FLAT_CONV_EFFICIENCY * costs.peak)
            }
            // Dynamic images, zero-inserted ones: the nested form's efficiency.
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
            Target::Auto => 2.0 * vol / (conv_efficiency(s, shape) * costs.peak),
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
