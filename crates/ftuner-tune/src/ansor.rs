//! Import of TVM auto-scheduler (Ansor) measurement logs.
//!
//! Every line is parsed (a line that is not a record is an error with its line number).
//! A record maps when its workload is a contraction we have a kernel class for and its
//! state holds the multi-level tiling of that contraction:
//!
//! * workloads: `matmul_add` (A `N x L` times B `L x M`, plus C: class `matmul`, epilogue
//!   `add`), `conv2d_layer` (NCHW, with bias and ReLU in TVM's tutorial: epilogue
//!   `bias_relu`), and Relay-extracted tasks whose tensor shapes are those of an NHWC
//!   convolution (input `N H W CI`, kernel `KH KW CI CO`, output last) or of a dense layer
//!   (data `N K`, weight `O K`, output `N O`); extra tensors in between are fused
//!   elementwise operands (epilogue `relay+k`). The class is computed by building the
//!   equivalent linalg op and classifying it as any other kernel, so an imported class
//!   only meets our kernels when layout, epilogue and dynamic dims really agree.
//! * schedules: in the stage with the most `SP` (split) steps, the spatial splits (several
//!   lengths) come in loop order and the reduction splits (one length) after them. The
//!   innermost length of each split is the register tile (Ansor's `SSRSRS` CPU sketch
//!   computes `i3 x j3` in registers inside the inner reduction loop), so `mr` is the
//!   product of the innermost lengths of the M loops, `nr` that of the N loops, and `kc`
//!   the product of the inner reduction lengths. The tile is then made legal for our
//!   target (`nr` to the vector lanes, `mr` to the register file); the report counts how
//!   many needed that.
//! * GPU records (`cuda` targets) keep thread/block tiles that have no CPU knob: counted,
//!   not mapped. Failed measurements (`ERROR_NO != 0`) are counted and skipped.

use crate::db::{Record, Source};
use ftuner_hw::HardwareModel;
use ftuner_ukernel::{DType, KernelClass, Schedule, WorkloadKey};
use serde_json::Value;

/// One parsed log line.
#[derive(Clone, Debug)]
pub struct AnsorRecord {
    pub line: usize,
    pub version: String,
    pub workload: Vec<Value>,
    pub target: String,
    pub steps: Vec<Value>,
    pub costs: Vec<f64>,
    pub error_no: i64,
    pub timestamp: i64,
}

/// Parse every non-comment line of a log.
pub fn parse_log(text: &str, file: &str) -> Result<Vec<AnsorRecord>, String> {
    let mut out = vec![];
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let at = |m: String| format!("{file}:{}: {m}", i + 1);
        let v: Value = serde_json::from_str(t).map_err(|e| at(format!("not JSON: {e}")))?;
        let inp = v
            .get("i")
            .and_then(Value::as_array)
            .ok_or_else(|| at("no \"i\": [task, state]".into()))?;
        let task = inp
            .first()
            .and_then(Value::as_array)
            .ok_or_else(|| at("no task".into()))?;
        let key = task
            .first()
            .and_then(Value::as_str)
            .ok_or_else(|| at("no workload key".into()))?;
        let workload: Vec<Value> = serde_json::from_str(key)
            .map_err(|e| at(format!("workload key '{key}' is not a JSON list: {e}")))?;
        let target = task
            .get(1)
            .and_then(Value::as_str)
            .ok_or_else(|| at("no target".into()))?
            .to_string();
        let steps = inp
            .get(1)
            .and_then(Value::as_array)
            .and_then(|s| s.get(1))
            .and_then(Value::as_array)
            .ok_or_else(|| at("no state steps".into()))?
            .clone();
        let r = v
            .get("r")
            .and_then(Value::as_array)
            .ok_or_else(|| at("no \"r\": [costs, error_no, all_cost, timestamp]".into()))?;
        let costs = r
            .first()
            .and_then(Value::as_array)
            .ok_or_else(|| at("no costs".into()))?
            .iter()
            .map(|c| {
                c.as_f64()
                    .ok_or_else(|| at(format!("cost {c} is not a number")))
            })
            .collect::<Result<Vec<f64>, String>>()?;
        out.push(AnsorRecord {
            line: i + 1,
            version: v
                .get("v")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string(),
            workload,
            target,
            steps,
            costs,
            error_no: r.get(1).and_then(Value::as_i64).unwrap_or(-1),
            timestamp: r.get(3).and_then(Value::as_f64).unwrap_or(0.0) as i64,
        });
    }
    Ok(out)
}

/// What a workload is, as far as we can map it.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    /// `matmul`, `dense`, `conv2d_nchw`, `conv2d_nhwc`.
    pub kind: &'static str,
    /// The linalg module whose one contraction has this workload's class.
    pub module: String,
    pub epilogue: String,
    /// Role of each spatial split of the compute stage, in loop order (M or N).
    pub spatial: Vec<char>,
}

fn ints(v: &[Value]) -> Option<Vec<i64>> {
    let mut out = vec![];
    for x in v {
        match x {
            Value::Number(n) => out.push(n.as_i64()?),
            Value::Array(a) => out.extend(ints(a)?),
            _ => return None,
        }
    }
    Some(out)
}

fn matmul_module(m: i64, k: i64, n: i64) -> String {
    format!(
        "func.func @k(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>, %c: tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32> {{\n  %r = linalg.matmul ins(%a, %b : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) outs(%c : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>\n  return %r : tensor<{m}x{n}xf32>\n}}\n"
    )
}

fn dense_module(m: i64, k: i64, n: i64) -> String {
    format!(
        "#a = affine_map<(d0, d1, d2) -> (d0, d2)>\n#b = affine_map<(d0, d1, d2) -> (d1, d2)>\n#c = affine_map<(d0, d1, d2) -> (d0, d1)>\nfunc.func @k(%a: tensor<{m}x{k}xf32>, %b: tensor<{n}x{k}xf32>, %c: tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32> {{\n  %r = linalg.generic {{indexing_maps = [#a, #b, #c], iterator_types = [\"parallel\", \"parallel\", \"reduction\"]}} ins(%a, %b : tensor<{m}x{k}xf32>, tensor<{n}x{k}xf32>) outs(%c : tensor<{m}x{n}xf32>) {{\n  ^bb0(%x: f32, %y: f32, %z: f32):\n    %p = arith.mulf %x, %y : f32\n    %s = arith.addf %z, %p : f32\n    linalg.yield %s : f32\n  }} -> tensor<{m}x{n}xf32>\n  return %r : tensor<{m}x{n}xf32>\n}}\n"
    )
}

#[allow(clippy::too_many_arguments)]
fn conv_module(
    nhwc: bool,
    n: i64,
    h: i64,
    w: i64,
    ci: i64,
    co: i64,
    kh: i64,
    kw: i64,
    oh: i64,
    ow: i64,
    s: i64,
) -> String {
    let (it, kt, ot, op) = if nhwc {
        (
            format!("{n}x{h}x{w}x{ci}"),
            format!("{kh}x{kw}x{ci}x{co}"),
            format!("{n}x{oh}x{ow}x{co}"),
            "conv_2d_nhwc_hwcf",
        )
    } else {
        (
            format!("{n}x{ci}x{h}x{w}"),
            format!("{co}x{ci}x{kh}x{kw}"),
            format!("{n}x{co}x{oh}x{ow}"),
            "conv_2d_nchw_fchw",
        )
    };
    format!(
        "func.func @k(%a: tensor<{it}xf32>, %b: tensor<{kt}xf32>, %c: tensor<{ot}xf32>) -> tensor<{ot}xf32> {{\n  %r = linalg.{op} {{dilations = dense<1> : vector<2xi64>, strides = dense<{s}> : vector<2xi64>}} ins(%a, %b : tensor<{it}xf32>, tensor<{kt}xf32>) outs(%c : tensor<{ot}xf32>) -> tensor<{ot}xf32>\n  return %r : tensor<{ot}xf32>\n}}\n"
    )
}

/// Recognize a record's workload.
pub fn workload(r: &AnsorRecord) -> Result<Workload, String> {
    let name = r.workload.first().and_then(Value::as_str).unwrap_or("");
    let args = ints(&r.workload[1..]);
    match (name, args) {
        ("matmul_add", _) => {
            let a = ints(&r.workload[1..4]).ok_or("matmul_add: sizes are not integers")?;
            let dt = r.workload.get(4).and_then(Value::as_str).unwrap_or("?");
            if dt != "float32" {
                return Err(format!("matmul_add in {dt}: only float32 is mapped"));
            }
            Ok(Workload {
                kind: "matmul",
                module: matmul_module(a[0], a[1], a[2]),
                epilogue: "add".into(),
                spatial: vec!['M', 'N'],
            })
        }
        ("conv2d_layer", Some(a)) if a.len() >= 11 => {
            // N, H, W, CO, CI, KH, KW, stride (2), padding (2).
            let (n, h, w, co, ci, kh, kw, s, p) =
                (a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[9]);
            if s <= 0 || a[7] != a[8] || a[9] != a[10] {
                return Err("conv2d_layer with unequal strides or paddings".into());
            }
            let (hp, wp) = (h + 2 * p, w + 2 * p);
            let (oh, ow) = ((hp - kh) / s + 1, (wp - kw) / s + 1);
            Ok(Workload {
                kind: "conv2d_nchw",
                module: conv_module(false, n, hp, wp, ci, co, kh, kw, oh, ow, s),
                epilogue: "bias_relu".into(),
                spatial: vec!['M', 'N', 'M', 'M'],
            })
        }
        (hash, Some(a)) if hash.len() == 32 && hash.chars().all(|c| c.is_ascii_hexdigit()) => {
            // Relay task: the I/O shapes, flattened.
            if a.len() >= 12 && a[4] == a[5] && a[6] == a[3] {
                let (n, h, w, ci) = (a[0], a[1], a[2], a[3]);
                let (kh, kw, co) = (a[4], a[5], a[7]);
                let o = &a[a.len() - 4..];
                if o[0] == n && o[3] == co && o[1] > 0 && o[1] <= h {
                    let s = (h as f64 / o[1] as f64).round().max(1.0) as i64;
                    // Pad so the output size comes out as recorded.
                    let hp = (o[1] - 1) * s + kh;
                    let wp = (o[2] - 1) * s + kw;
                    let extra = (a.len() - 12) / 4;
                    return Ok(Workload {
                        kind: "conv2d_nhwc",
                        module: conv_module(
                            true,
                            n,
                            hp.max(h),
                            wp.max(w),
                            ci,
                            co,
                            kh,
                            kw,
                            o[1],
                            o[2],
                            s,
                        ),
                        epilogue: format!("relay+{extra}"),
                        spatial: vec!['M', 'M', 'M', 'N'],
                    });
                }
            }
            if a.len() >= 6 && a[1] == a[3] {
                let (m, k, n) = (a[0], a[1], a[2]);
                let o = &a[a.len() - 2..];
                if o[0] == m && o[1] == n {
                    let extra = (a.len() - 6) / 2;
                    return Ok(Workload {
                        kind: "dense",
                        module: dense_module(m, k, n),
                        epilogue: format!("relay+{extra}"),
                        spatial: vec!['M', 'N'],
                    });
                }
            }
            Err("Relay task whose shapes are not a dense layer or an NHWC convolution (pooling, softmax, elementwise...)".into())
        }
        (other, _) => Err(format!("workload '{other}' is not a contraction we map")),
    }
}

/// The register tile and kc the record's multi-level tiling implies, before legalizing.
pub fn raw_tile(r: &AnsorRecord, spatial: &[char]) -> Result<(u32, u32, u32), String> {
    let mut per_stage: Vec<(i64, Vec<Vec<i64>>)> = vec![];
    for s in &r.steps {
        let Some(a) = s.as_array() else { continue };
        if a.first().and_then(Value::as_str) != Some("SP") {
            continue;
        }
        let stage = a.get(1).and_then(Value::as_i64).unwrap_or(-1);
        let lengths = a
            .get(4)
            .and_then(Value::as_array)
            .and_then(|l| ints(l))
            .ok_or("SP step without lengths")?;
        match per_stage.iter_mut().find(|x| x.0 == stage) {
            Some(x) => x.1.push(lengths),
            None => per_stage.push((stage, vec![lengths])),
        }
    }
    let (_, splits) = per_stage
        .into_iter()
        .max_by_key(|x| (x.1.len(), x.0))
        .ok_or("no split steps: the state holds no multi-level tiling")?;
    let sp: Vec<&Vec<i64>> = splits.iter().filter(|l| l.len() >= 2).collect();
    let red: Vec<&Vec<i64>> = splits.iter().filter(|l| l.len() == 1).collect();
    if sp.len() != spatial.len() || red.is_empty() {
        return Err(format!(
            "the tiled stage has {} spatial and {} reduction splits; expected {} and at least 1",
            sp.len(),
            red.len(),
            spatial.len()
        ));
    }
    let inner = |l: &Vec<i64>| *l.last().unwrap_or(&1) as u32;
    let (mut mr, mut nr) = (1u32, 1u32);
    for (l, role) in sp.iter().zip(spatial) {
        if *role == 'M' {
            mr *= inner(l).max(1);
        } else {
            nr *= inner(l).max(1);
        }
    }
    let kc: u32 = red.iter().map(|l| inner(l).max(1)).product();
    Ok((mr, nr, kc))
}

/// Make a tile legal for the target: `nr` to a multiple of the lanes (or a power of two
/// below them), `mr` down until the register file holds it, `kc` at least 8.
pub fn legalize(model: &HardwareModel, (mr, nr, kc): (u32, u32, u32)) -> Result<Schedule, String> {
    let cpu = model
        .cpu()
        .ok_or("import needs a CPU target to map schedules to")?;
    let lanes = cpu.lanes(4);
    // Register tiles hold a power-of-two number of vectors per row (ftuner_ukernel::cpu):
    // the nearest number of vectors, rounded down to a power of two.
    let pow2_floor = |v: u32| 1u32 << (31 - v.max(1).leading_zeros());
    let nr = if nr >= lanes {
        pow2_floor((nr + lanes / 2) / lanes) * lanes
    } else {
        pow2_floor(nr)
    };
    let mut nr = nr.min(4 * lanes);
    let mut mr = mr.max(1);
    loop {
        if ftuner_ukernel::cpu::check_tile(cpu, DType::F32, mr, nr).is_ok() {
            break;
        }
        if mr > 1 {
            mr -= 1;
        } else if nr > lanes {
            nr /= 2;
        } else {
            return Err(format!("no legal register tile near {mr}x{nr}"));
        }
    }
    Ok(Schedule::new(mr, nr, kc.max(8)))
}

/// The class of the one contraction in `module`, with `epilogue` in place of ours.
pub fn class_of_module(module: &str, epilogue: &str) -> Result<(KernelClass, String), String> {
    let ctx = ftuner_transforms::context();
    let m = crate::kernels::load(&ctx, module, "<ansor workload>")
        .map_err(|d| format!("internal: generated module does not parse: {d}"))?;
    let c = ftuner_ukernel::contraction::find_all(&m.ir, m.top)
        .into_iter()
        .next()
        .ok_or("internal: generated module has no contraction")?;
    let class = ftuner_ukernel::schedule::kernel_class(&m.ir, &c);
    let sizes = ftuner_ukernel::schedule::sizes_text(&c);
    Ok((
        KernelClass(
            class
                .0
                .replace("epilogue=none", &format!("epilogue={epilogue}")),
        ),
        sizes,
    ))
}

/// The outcome of an import.
#[derive(Clone, Debug, Default)]
pub struct ImportReport {
    pub parsed: usize,
    pub mapped: usize,
    /// Mapped, but the tile had to change to be legal here.
    pub legalized: usize,
    /// (reason, count), most frequent first.
    pub unmapped: Vec<(String, usize)>,
    /// (kind, count) of mapped records.
    pub kinds: Vec<(String, usize)>,
}

impl ImportReport {
    fn skip(&mut self, why: String) {
        match self.unmapped.iter_mut().find(|x| x.0 == why) {
            Some(x) => x.1 += 1,
            None => self.unmapped.push((why, 1)),
        }
    }
    pub fn text(&self) -> String {
        let mut s = format!(
            "parsed {} records; mapped {} ({} with the tile legalized for this target); not mapped {}\n",
            self.parsed,
            self.mapped,
            self.legalized,
            self.parsed - self.mapped
        );
        for (k, n) in &self.kinds {
            s.push_str(&format!("  mapped {k}: {n}\n"));
        }
        for (w, n) in &self.unmapped {
            s.push_str(&format!("  not mapped ({n}): {w}\n"));
        }
        s
    }
}

/// Map parsed records to database records (schedules legal for `model`).
pub fn map_records(
    recs: &[AnsorRecord],
    file: &str,
    model: &HardwareModel,
) -> (Vec<Record>, ImportReport) {
    let mut rep = ImportReport::default();
    let mut out = vec![];
    for r in recs {
        rep.parsed += 1;
        if r.error_no != 0 {
            rep.skip(format!("measurement failed in TVM (error {})", r.error_no));
            continue;
        }
        if r.target.starts_with("cuda") {
            rep.skip("GPU schedule (block/thread tiles have no CPU knob)".into());
            continue;
        }
        let w = match workload(r) {
            Ok(w) => w,
            Err(e) => {
                rep.skip(e);
                continue;
            }
        };
        let raw = match raw_tile(r, &w.spatial) {
            Ok(t) => t,
            Err(e) => {
                rep.skip(format!("{}: {e}", w.kind));
                continue;
            }
        };
        let sched = match legalize(model, raw) {
            Ok(s) => s,
            Err(e) => {
                rep.skip(format!("{}: {e}", w.kind));
                continue;
            }
        };
        let (class, sizes) = match class_of_module(&w.module, &w.epilogue) {
            Ok(c) => c,
            Err(e) => {
                rep.skip(e);
                continue;
            }
        };
        if (sched.mr, sched.nr, sched.kc) != raw {
            rep.legalized += 1;
        }
        rep.mapped += 1;
        match rep.kinds.iter_mut().find(|x| x.0 == w.kind) {
            Some(x) => x.1 += 1,
            None => rep.kinds.push((w.kind.to_string(), 1)),
        }
        let mean = r.costs.iter().sum::<f64>() / r.costs.len().max(1) as f64;
        let key = WorkloadKey {
            class,
            sizes: sizes.clone(),
            target: format!("ansor: {}", r.target),
        };
        let mut rec = Record::new(key, sizes, sched, Source::Ansor);
        rec.costs = r.costs.clone();
        rec.cost = (mean > 0.0 && mean.is_finite()).then_some(mean);
        rec.timestamp = r.timestamp;
        rec.tool_version = format!("tvm-auto-scheduler {}", r.version);
        rec.origin = format!(
            "{file}:{} (tile {}x{} kc={} in TVM)",
            r.line, raw.0, raw.1, raw.2
        );
        out.push(rec);
    }
    rep.unmapped
        .sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    (out, rep)
}
