//! `ftuner-e2e`: a whole layer with a dynamic sequence length, compiled once, run at every
//! length of a sweep, checked, and timed against the bucket approach built with the same
//! compiler.
//!
//! ```text
//! ftuner-e2e examples/bert_layer_dynamic.mlir --seq 2..512 --check-loops --check-interp 2,7,33 \
//!     --json e2e.jsonl --svg e2e.svg
//! ```
//!
//! * ftuner: the layer compiled once with `?` dims (patch-ukernels, lower-ukernels), run at
//!   each T.
//! * buckets: the layer compiled once per bucket size (32, 64, 128, 256, 512) with the
//!   dynamic dims fixed to it (a `tensor.cast` at entry, so every shape is static), the
//!   input zero-padded from T up to the next bucket.
//! * checks: `--check-loops` compares every T with the same layer lowered without
//!   patch-ukernels (plain loops: an independent lowering of every contraction);
//!   `--check-interp` compares the listed T with the reference interpreter running the
//!   layer as read. Tolerance `1e-5 * (1 + |ref|) * sqrt(R)`, R the largest extent (3072
//!   for BERT), as `ftuner-run --check`.
//!
//! Every dynamic dim of every argument takes T. Times are medians of `--reps` runs of the
//! compiled function alone, one thread.

use clap::Parser;
use ftuner_interp::{RtVal, Tensor};
use ftuner_ir::{intern_name, Attribute, Ir, OpId, OpSpec, Type, DYNAMIC};
use ftuner_run::Rng;
use std::io::Write;
use std::rc::Rc;
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "ftuner-e2e",
    about = "A dynamic-shape layer over a sweep of lengths: compiled once, checked, against buckets"
)]
struct Cli {
    /// The layer (MLIR with `?` dims).
    layer: Option<String>,
    /// Lengths: `A..B` (inclusive) or a list `a,b,c`.
    #[arg(long, default_value = "2..512")]
    seq: String,
    /// Step through an `A..B` range.
    #[arg(long, default_value_t = 1)]
    step: usize,
    /// Timed runs per length (median).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Bucket sizes for the padding baseline.
    #[arg(long, value_delimiter = ',', default_value = "32,64,128,256,512")]
    buckets: Vec<usize>,
    /// No bucket baseline.
    #[arg(long)]
    no_buckets: bool,
    /// Also time the layer with every matmul / batch_matmul done by OpenBLAS (one thread)
    /// and the rest by our generated loops.
    #[arg(long)]
    blas: bool,
    /// Check every length against the layer lowered without patch-ukernels.
    #[arg(long)]
    check_loops: bool,
    /// Check these lengths against the reference interpreter.
    #[arg(long, value_delimiter = ',')]
    check_interp: Vec<usize>,
    /// JSON lines, one per length.
    #[arg(long)]
    json: Option<String>,
    /// An SVG plot of latency against length.
    #[arg(long)]
    svg: Option<String>,
    /// Compile ftuner's version with the schedules of this tuning database
    /// (`patch-ukernels{tuning-db=...}`; ftuner-tune) instead of the analytic defaults.
    #[arg(long)]
    tuning_db: Option<String>,
    /// The static arguments (the weights) are drawn from U(-S, S) instead of U(-1, 1).
    /// A layer whose output is not normalized (a GPT-2 block ends on the residual stream)
    /// needs realistic magnitudes for the checks: with U(-1, 1) weights its activations
    /// reach 1e3 and float32 rounding alone exceeds the per-element tolerance near zero.
    /// 0.036 is PyTorch's `Linear` bound for 768 inputs.
    #[arg(long, default_value_t = 1.0)]
    weight_scale: f64,
    /// Only redraw `--svg` from a `--json` file of an earlier run (the layer is not run).
    #[arg(long)]
    replot: Option<String>,
}

/// Rows back from `--json` lines.
fn rows_from_json(text: &str) -> Result<(String, Vec<Row>), String> {
    let field = |l: &str, k: &str| -> Option<f64> {
        let at = l.find(&format!("\"{k}\": "))? + k.len() + 4;
        let rest = &l[at..];
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        rest[..end].trim().parse().ok()
    };
    let mut name = String::new();
    let mut rows = vec![];
    for (i, l) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        if name.is_empty() {
            if let Some(a) = l.find("\"layer\": \"") {
                name = l[a + 10..].split('"').next().unwrap_or("").to_string();
            }
        }
        let t = field(l, "T").ok_or_else(|| format!("--replot: line {}: no T", i + 1))?;
        let ms = field(l, "ftuner_ms")
            .ok_or_else(|| format!("--replot: line {}: no ftuner_ms", i + 1))?;
        rows.push((t as usize, ms, field(l, "bucket_ms"), field(l, "blas_ms")));
    }
    Ok((name, rows))
}

/// (T, ftuner ms, bucket ms, OpenBLAS-variant ms).
type Row = (usize, f64, Option<f64>, Option<f64>);

const PIPELINE: &str =
    "builtin.module(canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)";
const LOOPS: &str = "builtin.module(canonicalize,cse)";
/// Contractions to OpenBLAS, the rest ours: bufferized, then the library calls.
const BLAS: &str =
    "builtin.module(canonicalize,cse,bufferize,convert-linalg-to-library-calls,canonicalize,cse)";

extern crate openblas_src;

extern "C" {
    fn openblas_set_num_threads(n: i32);
}

/// One f32 matrix as the compiled code passes it: base pointer (aligned + offset), sizes,
/// strides.
#[derive(Clone, Copy)]
struct View {
    p: *mut f32,
    rows: i64,
    cols: i64,
    rs: i64,
    cs: i64,
}

impl View {
    /// cblas operand: (pointer, transpose, leading dim) when one stride is 1.
    fn operand(&self) -> Option<(*mut f32, cblas_sys::CBLAS_TRANSPOSE, i32)> {
        if self.cs == 1 && self.rs >= self.cols.max(1) {
            Some((
                self.p,
                cblas_sys::CBLAS_TRANSPOSE::CblasNoTrans,
                self.rs as i32,
            ))
        } else if self.rs == 1 && self.cs >= self.rows.max(1) {
            Some((
                self.p,
                cblas_sys::CBLAS_TRANSPOSE::CblasTrans,
                self.cs as i32,
            ))
        } else {
            None
        }
    }
    /// A dense row-major copy.
    fn dense(&self) -> Vec<f32> {
        let mut v = Vec::with_capacity((self.rows * self.cols) as usize);
        for i in 0..self.rows {
            for j in 0..self.cols {
                // SAFETY: inside the view the compiled code handed over.
                v.push(unsafe { *self.p.offset((i * self.rs + j * self.cs) as isize) });
            }
        }
        v
    }
}

/// `C += A * B` with OpenBLAS (any strides; copies only a view no BLAS layout fits).
fn gemm(a: View, b: View, c: View) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    if m == 0 || n == 0 {
        return;
    }
    let (a_copy, b_copy);
    let (pa, ta, lda) = match a.operand() {
        Some(x) => x,
        None => {
            a_copy = a.dense();
            (
                a_copy.as_ptr() as *mut f32,
                cblas_sys::CBLAS_TRANSPOSE::CblasNoTrans,
                k.max(1) as i32,
            )
        }
    };
    let (pb, tb, ldb) = match b.operand() {
        Some(x) => x,
        None => {
            b_copy = b.dense();
            (
                b_copy.as_ptr() as *mut f32,
                cblas_sys::CBLAS_TRANSPOSE::CblasNoTrans,
                n.max(1) as i32,
            )
        }
    };
    let direct = c.cs == 1 && c.rs >= n;
    let mut c_copy = if direct { vec![] } else { c.dense() };
    let (pc, ldc) = if direct {
        (c.p, c.rs as i32)
    } else {
        (c_copy.as_mut_ptr(), n as i32)
    };
    // SAFETY: pointers and leading dimensions describe m x k, k x n and m x n matrices
    // inside the buffers the compiled code passed (or the dense copies above).
    unsafe {
        cblas_sys::cblas_sgemm(
            cblas_sys::CBLAS_LAYOUT::CblasRowMajor,
            ta,
            tb,
            m as i32,
            n as i32,
            k as i32,
            1.0,
            pa,
            lda,
            pb,
            ldb,
            1.0,
            pc,
            ldc,
        );
    }
    if !direct {
        for i in 0..m {
            for j in 0..n {
                // SAFETY: inside C's view.
                unsafe {
                    *c.p.offset((i * c.rs + j * c.cs) as isize) = c_copy[(i * n + j) as usize]
                };
            }
        }
    }
}

/// `memref<?x?xf32, strided<[?, ?], offset: ?>>` x 3, as MLIR's expanded descriptors.
#[allow(clippy::too_many_arguments)]
extern "C" fn lib_matmul_f32(
    _a0: *mut f32,
    a: *mut f32,
    ao: i64,
    am: i64,
    ak: i64,
    ars: i64,
    acs: i64,
    _b0: *mut f32,
    b: *mut f32,
    bo: i64,
    bk: i64,
    bn: i64,
    brs: i64,
    bcs: i64,
    _c0: *mut f32,
    c: *mut f32,
    co: i64,
    cm: i64,
    cn: i64,
    crs: i64,
    ccs: i64,
) {
    let _ = (bk, cm, cn);
    // SAFETY: offsets inside the buffers, from the descriptors.
    let (a, b, c) = unsafe {
        (
            a.offset(ao as isize),
            b.offset(bo as isize),
            c.offset(co as isize),
        )
    };
    gemm(
        View {
            p: a,
            rows: am,
            cols: ak,
            rs: ars,
            cs: acs,
        },
        View {
            p: b,
            rows: bk,
            cols: bn,
            rs: brs,
            cs: bcs,
        },
        View {
            p: c,
            rows: cm,
            cols: cn,
            rs: crs,
            cs: ccs,
        },
    );
}

/// The batched form: rank-3 descriptors, one gemm per batch.
#[allow(clippy::too_many_arguments)]
extern "C" fn lib_batch_matmul_f32(
    _a0: *mut f32,
    a: *mut f32,
    ao: i64,
    ab: i64,
    am: i64,
    ak: i64,
    abs: i64,
    ars: i64,
    acs: i64,
    _b0: *mut f32,
    b: *mut f32,
    bo: i64,
    bb: i64,
    bk: i64,
    bn: i64,
    bbs: i64,
    brs: i64,
    bcs: i64,
    _c0: *mut f32,
    c: *mut f32,
    co: i64,
    cb: i64,
    cm: i64,
    cn: i64,
    cbs: i64,
    crs: i64,
    ccs: i64,
) {
    let _ = (bb, cb);
    for i in 0..ab {
        // SAFETY: batch i of each view, inside the buffers.
        let (pa, pb, pc) = unsafe {
            (
                a.offset((ao + i * abs) as isize),
                b.offset((bo + i * bbs) as isize),
                c.offset((co + i * cbs) as isize),
            )
        };
        gemm(
            View {
                p: pa,
                rows: am,
                cols: ak,
                rs: ars,
                cs: acs,
            },
            View {
                p: pb,
                rows: bk,
                cols: bn,
                rs: brs,
                cs: bcs,
            },
            View {
                p: pc,
                rows: cm,
                cols: cn,
                rs: crs,
                cs: ccs,
            },
        );
    }
}

struct Layer {
    name: String,
    /// Argument shapes with `DYNAMIC` for the length.
    shapes: Vec<Vec<i64>>,
    elems: Vec<Type>,
}

fn load(src: &str, file: &str) -> Result<(ftuner_ir::Context, ftuner_ir::ParsedModule), String> {
    let ctx = ftuner_dialects::context();
    let m = ftuner_opt::parse_and_verify(&ctx, src, file).map_err(|d| {
        d.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    Ok((ctx, m))
}

fn entry(ir: &Ir, top: OpId) -> Result<OpId, String> {
    let mut fs = vec![];
    ir.walk_pre(top, &mut |o| {
        if ir.name(o) == "func.func"
            && ir
                .regions_of(o)
                .first()
                .and_then(|r| ir.region_entry(*r))
                .is_some()
        {
            fs.push(o);
        }
    });
    fs.into_iter()
        .next()
        .ok_or_else(|| "no function with a body".to_string())
}

/// Fix every dynamic dim of every argument of `f` to `t`: the argument gets the static
/// type and a `tensor.cast` back to the dynamic one feeds the body, so the body is
/// unchanged and canonicalization folds the now-constant sizes.
fn specialize(ir: &mut Ir, f: OpId, t: i64) {
    let blk = ir
        .regions_of(f)
        .first()
        .and_then(|r| ir.region_entry(*r))
        .expect("function with a body");
    let args = ir.block_args(blk).to_vec();
    let mut inputs = vec![];
    for a in args.iter().rev() {
        let ty = ir.value_type(*a);
        let Some(shape) = ty.shape().map(|s| s.to_vec()) else {
            inputs.push(ty);
            continue;
        };
        if !shape.contains(&DYNAMIC) || !ty.is_tensor() {
            inputs.push(ty);
            continue;
        }
        let fixed: Vec<i64> = shape
            .iter()
            .map(|d| if *d == DYNAMIC { t } else { *d })
            .collect();
        let st = Type::tensor(fixed, ty.element_type());
        let loc = ir.loc(f);
        let cast = ir.create_op(
            OpSpec::new(intern_name("tensor.cast"), loc)
                .operands([*a])
                .results([ty]),
        );
        ir.prepend_op(blk, cast);
        let r = ir.result(cast, 0);
        ir.replace_all_uses(*a, r);
        ir.set_operand(cast, 0, *a);
        ir.set_value_type(*a, st);
        inputs.push(st);
    }
    inputs.reverse();
    let results: Vec<Type> = ir
        .attr(f, "function_type")
        .and_then(|a| a.as_type())
        .map(|t| t.function_results().to_vec())
        .unwrap_or_default();
    let ft = Some(Attribute::type_attr(Type::function(inputs, results)));
    if ir.prop(f, "function_type").is_some() {
        ir.set_prop(f, "function_type", ft);
    } else {
        ir.set_attr(f, "function_type", ft);
    }
}

fn compile(
    src: &str,
    file: &str,
    pipeline: &str,
    fix: Option<i64>,
) -> Result<(ftuner_runtime::Executable, f64), String> {
    let t0 = Instant::now();
    let (ctx, mut m) = load(src, file)?;
    if let Some(t) = fix {
        let f = entry(&m.ir, m.top)?;
        specialize(&mut m.ir, f, t);
        let errs = ftuner_ir::verify::verify(&ctx, &m.ir, m.top);
        if let Some(e) = errs.first() {
            return Err(format!("specialized to {t}: {e}"));
        }
    }
    let reg = ftuner_opt::default_registry();
    let mut pm =
        ftuner_pass::PassManager::from_pipeline(&reg, pipeline).map_err(|e| e.to_string())?;
    pm.run(&ctx, &mut m.ir, m.top).map_err(|e| e.to_string())?;
    let exe = ftuner_runtime::Executable::compile(&ctx, &mut m.ir, m.top).map_err(|e| e.0)?;
    Ok((exe, t0.elapsed().as_secs_f64()))
}

fn tensor(shape: &[usize], elem: Type, rng: &mut Rng) -> Tensor {
    let n: usize = shape.iter().product();
    Tensor::new(
        shape.to_vec(),
        elem,
        (0..n).map(|_| rng.value(elem)).collect(),
    )
}

/// `x` zero-padded along every dim where `from` differs from `to`.
fn pad(x: &Tensor, to: &[usize]) -> Tensor {
    let mut out = Tensor::zeros(to.to_vec(), x.elem);
    let (xs, os) = (x.strides(), out.strides());
    for (i, v) in x.data.iter().enumerate() {
        let mut o = 0;
        for (d, s) in xs.iter().enumerate() {
            o += ((i / s) % x.shape[d]) * os[d];
        }
        out.data[o] = *v;
    }
    out
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn time(
    exe: &ftuner_runtime::Executable,
    name: &str,
    args: &[RtVal],
    reps: usize,
) -> Result<f64, String> {
    let p = exe.prepare(name, args).map_err(|e| e.0)?;
    exe.time(&p).map_err(|e| e.0)?;
    let mut ts = vec![];
    for _ in 0..reps.max(1) {
        ts.push(exe.time(&p).map_err(|e| e.0)?.as_secs_f64());
    }
    Ok(median(&mut ts))
}

fn lengths(cli: &Cli) -> Result<Vec<usize>, String> {
    let s = cli.seq.trim();
    if let Some((a, b)) = s.split_once("..") {
        let (a, b): (usize, usize) = (
            a.parse()
                .map_err(|_| format!("--seq: '{a}' is not a length"))?,
            b.parse()
                .map_err(|_| format!("--seq: '{b}' is not a length"))?,
        );
        if a == 0 || b < a {
            return Err(format!("--seq {s}: expected 1 <= A <= B"));
        }
        return Ok((a..=b).step_by(cli.step.max(1)).collect());
    }
    s.split(',')
        .map(|x| {
            x.trim()
                .parse::<usize>()
                .ok()
                .filter(|v| *v > 0)
                .ok_or_else(|| format!("--seq: '{x}' is not a length"))
        })
        .collect()
}

fn svg(rows: &[Row], title: &str) -> String {
    let (w, h, l, r, t, b) = (760.0, 440.0, 70.0, 20.0, 40.0, 50.0);
    let xmax = rows.iter().map(|x| x.0).max().unwrap_or(1) as f64;
    let ymax = rows
        .iter()
        .map(|x| x.1.max(x.2.unwrap_or(0.0)).max(x.3.unwrap_or(0.0)))
        .fold(0.0, f64::max)
        * 1.05;
    let px = |x: f64| l + (w - l - r) * x / xmax;
    let py = |y: f64| h - b - (h - t - b) * y / ymax.max(1e-9);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"14\">{title}</text>\n",
        w / 2.0
    );
    s += &format!(
        "<line x1=\"{l}\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" stroke=\"black\"/>\n<line x1=\"{l}\" y1=\"{t}\" x2=\"{l}\" y2=\"{0}\" stroke=\"black\"/>\n",
        h - b,
        w - r
    );
    for i in 0..=8 {
        let x = xmax * i as f64 / 8.0;
        s += &format!(
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{:.0}</text>\n",
            px(x),
            h - b + 16.0,
            x
        );
        let y = ymax * i as f64 / 8.0;
        s += &format!(
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{:.1}</text>\n<line x1=\"{l}\" y1=\"{:.1}\" x2=\"{}\" y2=\"{:.1}\" stroke=\"#ddd\"/>\n",
            l - 6.0,
            py(y) + 4.0,
            y,
            py(y),
            w - r,
            py(y)
        );
    }
    s += &format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">sequence length T</text>\n<text x=\"16\" y=\"{}\" transform=\"rotate(-90 16 {})\" text-anchor=\"middle\">latency (ms)</text>\n",
        (l + w - r) / 2.0,
        h - 12.0,
        (t + h - b) / 2.0,
        (t + h - b) / 2.0
    );
    let line = |pts: Vec<(f64, f64)>, color: &str| {
        let p: Vec<String> = pts
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y)))
            .collect();
        format!(
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"1.5\" points=\"{}\"/>\n",
            p.join(" ")
        )
    };
    s += &line(rows.iter().map(|x| (x.0 as f64, x.1)).collect(), "#1f77b4");
    let bk: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|x| x.2.map(|v| (x.0 as f64, v)))
        .collect();
    if !bk.is_empty() {
        s += &line(bk, "#d62728");
    }
    let bl: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|x| x.3.map(|v| (x.0 as f64, v)))
        .collect();
    let has_blas = !bl.is_empty();
    if has_blas {
        s += &line(bl, "#2ca02c");
        s += &format!(
            "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"3\" fill=\"#2ca02c\"/><text x=\"{}\" y=\"{}\">contractions by OpenBLAS, the rest ours</text>\n",
            l + 12.0,
            t + 44.0,
            l + 30.0,
            t + 48.0
        );
    }
    s += &format!(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"3\" fill=\"#1f77b4\"/><text x=\"{}\" y=\"{}\">ftuner (compiled once, dynamic T)</text>\n<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"3\" fill=\"#d62728\"/><text x=\"{}\" y=\"{}\">buckets (padded to the next bucket, one compilation each)</text>\n</svg>\n",
        l + 12.0, t + 8.0, l + 30.0, t + 12.0, l + 12.0, t + 26.0, l + 30.0, t + 30.0
    );
    s
}

fn run(cli: &Cli) -> Result<bool, String> {
    // One thread for every system measured here (issue 6 compares single-threaded).
    ftuner_runtime::set_num_threads(1);
    if !(cli.weight_scale.is_finite() && cli.weight_scale > 0.0) {
        return Err(format!(
            "--weight-scale {}: expected a positive number",
            cli.weight_scale
        ));
    }
    if let Some(j) = &cli.replot {
        let text = std::fs::read_to_string(j).map_err(|e| format!("cannot read {j}: {e}"))?;
        let (name, rows) = rows_from_json(&text)?;
        let out = cli.svg.as_deref().ok_or("--replot needs --svg OUT")?;
        std::fs::write(
            out,
            svg(
                &rows,
                &format!("@{name}: latency against sequence length (one thread)"),
            ),
        )
        .map_err(|e| format!("cannot write {out}: {e}"))?;
        return Ok(true);
    }
    let file = cli.layer.clone().ok_or("no layer given")?;
    let src = std::fs::read_to_string(&file).map_err(|e| format!("cannot read {file}: {e}"))?;
    let ts = lengths(cli)?;
    let (ctx, m) = load(&src, &file)?;
    let f = entry(&m.ir, m.top)?;
    let layer = {
        let blk =
            m.ir.regions_of(f)
                .first()
                .and_then(|r| m.ir.region_entry(*r))
                .ok_or("no body")?;
        let args = m.ir.block_args(blk);
        Layer {
            name: m.ir.symbol_name(f).unwrap_or_default().to_string(),
            shapes: args
                .iter()
                .map(|a| m.ir.value_type(*a).shape().unwrap_or(&[]).to_vec())
                .collect(),
            elems: args
                .iter()
                .map(|a| m.ir.value_type(*a).element_type())
                .collect(),
        }
    };
    if !layer.shapes.iter().flatten().any(|d| *d == DYNAMIC) {
        return Err(format!(
            "{}: @{} has no dynamic dimension",
            file, layer.name
        ));
    }
    let r = layer
        .shapes
        .iter()
        .flatten()
        .copied()
        .filter(|d| *d > 0)
        .max()
        .unwrap_or(1) as usize;
    let shape_at = |i: usize, t: usize| -> Vec<usize> {
        layer.shapes[i]
            .iter()
            .map(|d| if *d == DYNAMIC { t } else { *d as usize })
            .collect()
    };
    let tuned;
    let ftuner_pipeline = match &cli.tuning_db {
        Some(db) => {
            tuned = PIPELINE.replace("target=host", &format!("target=host tuning-db={db}"));
            tuned.as_str()
        }
        None => PIPELINE,
    };
    let (exe, compile_s) = compile(&src, &file, ftuner_pipeline, None)?;
    eprintln!("compiled @{} once in {compile_s:.2} s", layer.name);
    let blas = if cli.blas {
        // SAFETY: single-threaded OpenBLAS; the callees have exactly the expanded-descriptor
        // signatures `convert-linalg-to-library-calls` declares.
        unsafe {
            openblas_set_num_threads(1);
            ftuner_codegen::add_symbol("ftuner_lib_matmul_f32", lib_matmul_f32 as *mut _);
            ftuner_codegen::add_symbol(
                "ftuner_lib_batch_matmul_f32",
                lib_batch_matmul_f32 as *mut _,
            );
        }
        let (e, s) = compile(&src, &file, BLAS, None)?;
        eprintln!("compiled the OpenBLAS variant in {s:.2} s");
        Some(e)
    } else {
        None
    };
    let loops = if cli.check_loops {
        Some(compile(&src, &file, LOOPS, None)?.0)
    } else {
        None
    };
    let mut buckets: Vec<(usize, ftuner_runtime::Executable)> = vec![];
    let mut bucket_compile = 0.0;
    if !cli.no_buckets {
        let mut bs = cli.buckets.clone();
        bs.sort_unstable();
        bs.dedup();
        for b in bs {
            let (e, s) = compile(&src, &file, PIPELINE, Some(b as i64))?;
            bucket_compile += s;
            buckets.push((b, e));
        }
        eprintln!(
            "compiled {} buckets in {bucket_compile:.2} s",
            buckets.len()
        );
    }
    // Weights (static arguments) once; the dynamic ones per length.
    let mut rng = Rng(0x5eed_1234);
    let fixed: Vec<Option<Tensor>> = (0..layer.shapes.len())
        .map(|i| {
            (!layer.shapes[i].contains(&DYNAMIC)).then(|| {
                let mut w = tensor(&shape_at(i, 0), layer.elems[i], &mut rng);
                w.data.iter_mut().for_each(|x| *x *= cli.weight_scale);
                w
            })
        })
        .collect();
    let mut json = match &cli.json {
        Some(p) => Some(std::fs::File::create(p).map_err(|e| format!("cannot write {p}: {e}"))?),
        None => None,
    };
    println!(
        "{:>5} {:>11} {:>7} {:>11} {:>7} {:>9} {:>7}  check",
        "T", "ftuner ms", "bucket", "bucket ms", "ratio", "blas ms", "ratio"
    );
    let mut rows: Vec<Row> = vec![];
    let mut blas_ratios: Vec<f64> = vec![];
    let (mut ok, mut checked_loops, mut checked_interp) = (true, 0, 0);
    let mut peak_at_max = 0usize;
    let tmax = *ts.iter().max().unwrap_or(&1);
    for &t in &ts {
        let mut rng = Rng(0x1000 + t as u64);
        let args: Vec<RtVal> = (0..layer.shapes.len())
            .map(|i| match &fixed[i] {
                Some(w) => RtVal::Tensor(Rc::new(w.clone())),
                None => RtVal::Tensor(Rc::new(tensor(&shape_at(i, t), layer.elems[i], &mut rng))),
            })
            .collect();
        let got = exe
            .call(&layer.name, &args)
            .map_err(|e| format!("T={t}: {}", e.0))?;
        if t == tmax {
            peak_at_max = exe.last_peak_bytes();
        }
        let mut status = vec![];
        if let Some(l) = &loops {
            let want = l
                .call(&layer.name, &args)
                .map_err(|e| format!("T={t}: {}", e.0))?;
            for (g, w) in got.iter().zip(&want) {
                if let Err(e) = ftuner_run::compare(g, w, r) {
                    ok = false;
                    status.push(format!("MISMATCH vs loops: {e}"));
                }
            }
            checked_loops += 1;
            if status.is_empty() {
                status.push("loops ok".into());
            }
        }
        if cli.check_interp.contains(&t) {
            let want = ftuner_interp::run(&ctx, &m.ir, m.top, &layer.name, args.clone())
                .map_err(|e| format!("T={t}: interpreter: {e}"))?;
            let mut good = true;
            for (g, w) in got.iter().zip(&want) {
                if let Err(e) = ftuner_run::compare(g, w, r) {
                    ok = false;
                    good = false;
                    status.push(format!("MISMATCH vs interpreter: {e}"));
                }
            }
            checked_interp += 1;
            if good {
                status.push("interpreter ok".into());
            }
        }
        let ms = time(&exe, &layer.name, &args, cli.reps)? * 1e3;
        let mut blas_ms = None;
        if let Some(be) = &blas {
            let want = be
                .call(&layer.name, &args)
                .map_err(|e| format!("T={t}: {}", e.0))?;
            for (g, w) in got.iter().zip(&want) {
                if let Err(e) = ftuner_run::compare(g, w, r) {
                    ok = false;
                    status.push(format!("MISMATCH vs the OpenBLAS variant: {e}"));
                }
            }
            blas_ms = Some(time(be, &layer.name, &args, cli.reps)? * 1e3);
        }
        let mut bucket = None;
        if let Some((b, be)) = buckets.iter().find(|(b, _)| *b >= t) {
            let padded: Vec<RtVal> = (0..layer.shapes.len())
                .map(|i| match (&fixed[i], &args[i]) {
                    (Some(_), a) => a.clone(),
                    (None, RtVal::Tensor(x)) => RtVal::Tensor(Rc::new(pad(x, &shape_at(i, *b)))),
                    (None, a) => a.clone(),
                })
                .collect();
            // The bucket's answer is the layer's only where padding is neutral (not for
            // attention over padded keys): it is timed, not checked.
            let bms = time(be, &layer.name, &padded, cli.reps)? * 1e3;
            bucket = Some((*b, bms));
        }
        println!(
            "{t:>5} {ms:>11.3} {:>7} {:>11} {:>7} {:>9} {:>7}  {}",
            bucket.map(|x| x.0.to_string()).unwrap_or("-".into()),
            bucket.map(|x| format!("{:.3}", x.1)).unwrap_or("-".into()),
            bucket
                .map(|x| format!("{:.2}", x.1 / ms))
                .unwrap_or("-".into()),
            blas_ms.map(|x| format!("{x:.3}")).unwrap_or("-".into()),
            blas_ms
                .map(|x| format!("{:.2}", x / ms))
                .unwrap_or("-".into()),
            status.join("; ")
        );
        if let Some(b) = blas_ms {
            blas_ratios.push(b / ms);
        }
        if let Some(j) = &mut json {
            let _ = writeln!(
                j,
                "{{\"layer\": \"{}\", \"T\": {t}, \"ftuner_ms\": {ms:.4}, \"bucket\": {}, \"bucket_ms\": {}, \"blas_ms\": {}, \"check\": \"{}\"}}",
                layer.name,
                bucket.map(|x| x.0.to_string()).unwrap_or("null".into()),
                bucket.map(|x| format!("{:.4}", x.1)).unwrap_or("null".into()),
                blas_ms.map(|x| format!("{x:.4}")).unwrap_or("null".into()),
                status.join("; ").replace('"', "'")
            );
        }
        rows.push((t, ms, bucket.map(|x| x.1), blas_ms));
    }
    let mut ratios: Vec<f64> = rows.iter().filter_map(|x| x.2.map(|b| b / x.1)).collect();
    println!(
        "summary: {} lengths; compile once {compile_s:.2} s (buckets: {} compilations, {bucket_compile:.2} s); peak memory at T={tmax}: {:.2} MiB",
        rows.len(),
        buckets.len(),
        peak_at_max as f64 / (1 << 20) as f64
    );
    if !ratios.is_empty() {
        println!(
            "summary: bucket / ftuner latency, median over T: {:.2}x (min {:.2}x, max {:.2}x)",
            median(&mut ratios),
            ratios.first().copied().unwrap_or(0.0),
            ratios.last().copied().unwrap_or(0.0)
        );
    }
    if !blas_ratios.is_empty() {
        let n = blas_ratios.len();
        println!(
            "summary: OpenBLAS-contractions / ftuner latency, median over T: {:.2}x ({n} lengths)",
            median(&mut blas_ratios)
        );
    }
    println!(
        "summary: checked {checked_loops} lengths against the loop lowering, {checked_interp} against the interpreter: {}",
        if ok { "all agree" } else { "MISMATCH" }
    );
    if let Some(p) = &cli.svg {
        std::fs::write(
            p,
            svg(
                &rows,
                &format!(
                    "@{}: latency against sequence length (one thread)",
                    layer.name
                ),
            ),
        )
        .map_err(|e| format!("cannot write {p}: {e}"))?;
    }
    Ok(ok)
}

fn main() {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("ftuner-e2e: error: {e}");
            std::process::exit(1);
        }
    }
}
