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

/// The pipeline that compiles a kernel with `sched` (or the analytic default).
pub fn pipeline(target: &str, sched: Option<&Schedule>) -> String {
    let s = sched.map(|s| format!(" schedule={s}")).unwrap_or_default();
    format!("builtin.module(patch-ukernels{{target={target}{s}}},lower-ukernels,canonicalize,cse)")
}

fn registry() -> ftuner_pass::PassRegistry {
    let mut reg = ftuner_pass::PassRegistry::default();
    ftuner_transforms::register_passes(&mut reg);
    ftuner_ukernel::register_passes(&mut reg);
    reg
}

/// Compile `kernel` with `sched`.
pub fn compile(
    kernel: &Kernel,
    target: &str,
    sched: Option<&Schedule>,
) -> Result<ftuner_runtime::Executable, String> {
    let ctx = ftuner_dialects::context();
    let mut m = load(&ctx, &kernel.module, &kernel.loc)?;
    let p = pipeline(target, sched);
    let mut pm =
        ftuner_pass::PassManager::from_pipeline(&registry(), &p).map_err(|e| e.to_string())?;
    if let Err(e) = pm.run(&ctx, &mut m.ir, m.top) {
        let msg: Vec<String> = e.diagnostics.iter().map(|d| d.to_string()).collect();
        return Err(format!("{p}: {} {}", e.message, msg.join("; ")));
    }
    ftuner_runtime::Executable::compile(&ctx, &mut m.ir, m.top).map_err(|e| e.0)
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
    Tensor::new(shape.to_vec(), ftuner_ir::Type::f32(), data)
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
            // Checks the results against the reference as a measurement does.
            self.measure_with(kernel, s.as_ref(), 1)?;
            let exe = compile(kernel, &self.target, s.as_ref())?;
            let prepared = self
                .args
                .iter()
                .map(|a| exe.prepare("kernel", a).map_err(|e| e.0))
                .collect::<Result<Vec<_>, String>>()?;
            exes.push((exe, prepared));
        }
        let mut per: Vec<Vec<f64>> = vec![vec![]; scheds.len()];
        for _ in 0..rounds.max(1) {
            for (i, (exe, prepared)) in exes.iter().enumerate() {
                let mut logs = 0.0;
                for p in prepared {
                    let mut ts = vec![];
                    for _ in 0..self.reps {
                        ts.push(exe.time(p).map_err(|e| e.0)?.as_secs_f64());
                    }
                    ts.sort_by(f64::total_cmp);
                    logs += ts[ts.len() / 2].max(1e-12).ln();
                }
                per[i].push((logs / prepared.len() as f64).exp());
            }
        }
        Ok(per
            .into_iter()
            .map(|mut v| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            })
            .collect())
    }

    /// Compile `kernel` with `sched`, check it, time it. The first successful call of a
    /// bench (normally the analytic default) fixes the reference results.
    pub fn measure(
        &mut self,
        kernel: &Kernel,
        sched: Option<&Schedule>,
    ) -> Result<Measurement, String> {
        self.measure_with(kernel, sched, self.reps)
    }

    fn measure_with(
        &mut self,
        kernel: &Kernel,
        sched: Option<&Schedule>,
        reps: usize,
    ) -> Result<Measurement, String> {
        let t0 = Instant::now();
        let exe = compile(kernel, &self.target, sched)?;
        let compile_s = exe.compile_seconds;
        let mut per_point = vec![];
        for (i, args) in self.args.iter().enumerate() {
            let out = exe.call("kernel", args).map_err(|e| e.0)?;
            let got = out
                .first()
                .and_then(|v| v.tensor())
                .ok_or("kernel returned no tensor")?
                .data
                .clone();
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
            let prepared = exe.prepare("kernel", args).map_err(|e| e.0)?;
            let _ = exe.time(&prepared).map_err(|e| e.0)?;
            let mut ts = vec![];
            for _ in 0..reps.max(1) {
                ts.push(exe.time(&prepared).map_err(|e| e.0)?.as_secs_f64());
            }
            ts.sort_by(f64::total_cmp);
            per_point.push(ts[ts.len() / 2]);
        }
        let cost = (per_point.iter().map(|t| t.max(1e-12).ln()).sum::<f64>()
            / per_point.len() as f64)
            .exp();
        Ok(Measurement {
            per_point,
            cost,
            compile_s,
            trial_s: t0.elapsed().as_secs_f64(),
        })
    }
}
