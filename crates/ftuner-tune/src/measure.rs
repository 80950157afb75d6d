//! Compile one kernel with a schedule through the JIT and time it.
//!
//! A kernel is measured at a few concrete sizes of its dynamic dims (every dynamic dim
//! takes the point's value: `T` for the sequence length of a layer). Per point: one
//! warm-up call, then `reps` timed calls of the compiled function alone; the point's time
//! is their median, and the schedule's cost is the geometric mean over the points. Each
//! schedule's results are compared with those of the analytic default on the same inputs
//! (the default is itself checked against the reference interpreter by the test suite);
//! a schedule that computes something else is a failed trial, never a fast one.

use crate::kernels::{load, Kernel};
use ftuner_interp::{RtVal, Tensor};
use ftuner_ukernel::Schedule;
use std::rc::Rc;
use std::time::Instant;

/// One measured trial.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// Median seconds per point.
    pub per_point: Vec<f64>,
    /// Geometric mean of `per_point`.
    pub cost: f64,
    /// Seconds spent compiling.
    pub compile_s: f64,
    /// Seconds for the whole trial (compile, check, measure).
    pub trial_s: f64,
}

/// The pipeline that compiles a kernel with `sched` (or the analytic default): what
/// follows the kernel's extraction point in ftuner's CPU pipeline (`patch-ukernels`, then
/// `ftuner_transforms::pipelines::CPU_LOWER`, which lowers the uKernels and moves the
/// packing of weights into `@kernel_prepare`).
pub fn pipeline(target: &str, sched: Option<&Schedule>) -> String {
    let s = sched.map(|s| format!(" schedule={s}")).unwrap_or_default();
    format!(
        "builtin.module(patch-ukernels{{target={target}{s}}},{})",
        ftuner_transforms::pipelines::CPU_LOWER
    )
}

/// Run measured code on `n` threads (the runtime's pool; every core by default).
pub fn set_threads(n: usize) {
    ftuner_runtime::set_num_threads(n);
}

/// A compiled kernel: the executable, and where `@kernel` takes its arguments from when
/// the weight preparation was outlined (`ftuner.prepared`: the indices of the arguments it
/// kept; the others go to the prepare function it names, once).
pub struct Compiled {
    pub exe: ftuner_runtime::Executable,
    pub prepared: Option<ftuner_dialects::func_attrs::Prepared>,
}

impl Compiled {
    /// `@kernel`'s arguments from the kernel's own: the kept ones, then what
    /// its prepare function makes of the weights.
    fn entry_args(&self, args: &[RtVal]) -> Result<Vec<RtVal>, String> {
        let Some(p) = &self.prepared else {
            return Ok(args.to_vec());
        };
        let weights: Vec<RtVal> = (0..args.len())
            .filter(|i| !p.inputs.contains(i))
            .map(|i| args[i].clone())
            .collect();
        let mut out: Vec<RtVal> = p.inputs.iter().map(|i| args[*i].clone()).collect();
        out.extend(self.exe.call(&p.prepare, &weights).map_err(|e| e.0)?);
        Ok(out)
    }
}

/// Compile `kernel` with `sched`.
pub fn compile(
    kernel: &Kernel,
    target: &str,
    sched: Option<&Schedule>,
) -> Result<Compiled, String> {
    let ctx = ftuner_transforms::context();
    let mut m = load(&ctx, &kernel.module, &kernel.loc)?;
    let p = pipeline(target, sched);
    let mut pm = ftuner_pass::PassManager::from_pipeline(&crate::kernels::registry(), &p)
        .map_err(|e| e.to_string())?;
    pm.run(&ctx, &mut m.ir, m.top)
        .map_err(|e| format!("{p}: {e}"))?;
    let mut prepared = None;
    m.ir.walk_pre(m.top, &mut |o| {
        if m.ir.symbol_name(o) == Some("kernel") {
            prepared = ftuner_dialects::func_attrs::prepared(&m.ir, o);
        }
    });
    let exe = ftuner_runtime::Executable::compile(&ctx, &mut m.ir, m.top).map_err(|e| e.0)?;
    Ok(Compiled { exe, prepared })
}

/// Inputs and reference outputs of a kernel at its measurement points.
pub struct Bench {
    pub points: Vec<usize>,
    args: Vec<Vec<RtVal>>,
    reference: Vec<Option<Vec<f64>>>,
    pub reps: usize,
    pub target: String,
    /// Largest |difference| / (1 + |reference|) accepted, scaled by sqrt(K).
    tol: f64,
}

fn random(shape: &[usize], seed: &mut u64) -> Tensor {
    let n: usize = shape.iter().product();
    let data = (0..n)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((*seed >> 40) as f64 / (1u64 << 24) as f64) - 0.5
        })
        .collect();
    Tensor::from_f64(shape.to_vec(), ftuner_ir::Type::f32(), data)
}

impl Bench {
    pub fn new(
        kernel: &Kernel,
        points: &[usize],
        reps: usize,
        target: &str,
    ) -> Result<Bench, String> {
        let points = if kernel.dynamic_roles().is_empty() {
            vec![1]
        } else {
            points.to_vec()
        };
        let mut seed = 0x5eed_u64;
        let mut args = vec![];
        for p in &points {
            let shapes = kernel.shapes_at(*p)?;
            args.push(
                shapes
                    .iter()
                    .map(|s| RtVal::Tensor(Rc::new(random(s, &mut seed))))
                    .collect(),
            );
        }
        let k = kernel
            .sizes
            .iter()
            .find(|(r, _)| *r == crate::kernels::Role::K)
            .map(|(_, s)| if *s < 0 { 512.0 } else { *s as f64 })
            .unwrap_or(512.0);
        Ok(Bench {
            reference: vec![None; points.len()],
            points,
            args,
            reps: reps.max(1),
            target: target.to_string(),
            tol: 1e-5 * k.sqrt(),
        })
    }

    /// `M=16,128` style text of the points.
    pub fn shape_text(&self, kernel: &Kernel) -> String {
        let roles: Vec<String> = kernel
            .dynamic_roles()
            .iter()
            .map(|r| format!("{r:?}"))
            .collect();
        if roles.is_empty() {
            return "static".into();
        }
        let pts: Vec<String> = self.points.iter().map(|p| p.to_string()).collect();
        format!("{}={}", roles.join("="), pts.join(","))
    }

    /// Compare schedules in one interleaved run: each is compiled (and checked) once, then
    /// `rounds` rounds time every schedule in turn at every point, so drift of the machine
    /// hits all of them alike. Returns, per schedule, the median over rounds of its cost
    /// (geometric mean over points of the round's median time).
    pub fn compare(
        &mut self,
        kernel: &Kernel,
        scheds: &[Option<Schedule>],
        rounds: usize,
    ) -> Result<Vec<f64>, String> {
        let mut exes = vec![];
        for s in scheds {
            exes.push(self.checked(kernel, s.as_ref())?);
        }
        let mut per: Vec<Vec<f64>> = vec![vec![]; scheds.len()];
        for _ in 0..rounds.max(1) {
            for (i, (exe, prepared)) in exes.iter().enumerate() {
                let times = prepared
                    .iter()
                    .map(|p| median_time(exe, p, self.reps))
                    .collect::<Result<Vec<f64>, String>>()?;
                per[i].push(geomean(&times));
            }
        }
        Ok(per.into_iter().map(|mut v| median(&mut v)).collect())
    }

    /// [`Bench::compare`] with the first schedule (the default) compiled and timed twice:
    /// the costs of `scheds`, and the noise band, `|1 - cost / cost of the copy|` (at
    /// least 1%). A speedup inside the band is no speedup.
    pub fn compare_noise(
        &mut self,
        kernel: &Kernel,
        scheds: &[Option<Schedule>],
        rounds: usize,
    ) -> Result<(Vec<f64>, f64), String> {
        let mut all = scheds.to_vec();
        all.insert(1, scheds[0]);
        let mut c = self.compare(kernel, &all, rounds)?;
        let copy = c.remove(1);
        let noise = (1.0 - c[0] / copy).abs().max(0.01);
        Ok((c, noise))
    }

    /// Compile `kernel` with `sched`, check it, time it. The first successful call of a
    /// bench (normally the analytic default) fixes the reference results.
    pub fn measure(
        &mut self,
        kernel: &Kernel,
        sched: Option<&Schedule>,
    ) -> Result<Measurement, String> {
        let t0 = Instant::now();
        let (exe, prepared) = self.checked(kernel, sched)?;
        let mut per_point = vec![];
        for p in &prepared {
            exe.time(p).map_err(|e| e.0)?; // warm-up
            per_point.push(median_time(&exe, p, self.reps)?);
        }
        Ok(Measurement {
            cost: geomean(&per_point),
            per_point,
            compile_s: exe.compile_seconds,
            trial_s: t0.elapsed().as_secs_f64(),
        })
    }

    /// `kernel` compiled with `sched`, its results checked against the reference at every
    /// point (the first successful call sets the reference), and the calls prepared.
    fn checked(
        &mut self,
        kernel: &Kernel,
        sched: Option<&Schedule>,
    ) -> Result<(ftuner_runtime::Executable, Vec<ftuner_runtime::Prepared>), String> {
        let compiled = compile(kernel, &self.target, sched)?;
        let mut prepared = vec![];
        for (i, args) in self.args.iter().enumerate() {
            // The weights are prepared once, outside the timed calls, as in the model.
            let args = &compiled.entry_args(args)?;
            let exe = &compiled.exe;
            let out = exe.call("kernel", args).map_err(|e| e.0)?;
            let got = out
                .first()
                .and_then(|v| v.tensor())
                .ok_or("kernel returned no tensor")?
                .to_f64();
            match &self.reference[i] {
                None => self.reference[i] = Some(got),
                Some(want) => {
                    let worst = want
                        .iter()
                        .zip(&got)
                        .map(|(w, g)| (w - g).abs() / (1.0 + w.abs()))
                        .fold(0.0, f64::max);
                    if want.len() != got.len() || worst.is_nan() || worst > self.tol {
                        return Err(format!(
                            "wrong results at point {}: worst relative difference {worst:e} (tolerance {:e})",
                            self.points[i], self.tol
                        ));
                    }
                }
            }
            prepared.push(exe.prepare("kernel", args).map_err(|e| e.0)?);
        }
        Ok((compiled.exe, prepared))
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn geomean(v: &[f64]) -> f64 {
    (v.iter().map(|t| t.max(1e-12).ln()).sum::<f64>() / v.len().max(1) as f64).exp()
}

/// Median of `reps` timed calls of a prepared call.
fn median_time(
    exe: &ftuner_runtime::Executable,
    p: &ftuner_runtime::Prepared,
    reps: usize,
) -> Result<f64, String> {
    let mut ts = vec![];
    for _ in 0..reps.max(1) {
        ts.push(exe.time(p).map_err(|e| e.0)?.as_secs_f64());
    }
    Ok(median(&mut ts))
}
