//! One shape measured: ftuner's kernel, OpenBLAS, the libraries opened at run time and
//! the padding baselines checked against OpenBLAS, then timed alternately at each thread
//! count, one table row and one JSON line per system.

use crate::blas::Blas;
use crate::{libs, median, use_threads, Out, Point};
use ftuner_interp::{RtVal, Tensor};
use ftuner_ir::Type;
use ftuner_runtime::{free_output, Owner, RawArg, RawOutput};
use std::io::Write;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// A padding baseline of issue 10, built by our own compiler: the problem zero-padded to a
/// larger shape and run by a kernel compiled for that shape.
pub(crate) struct Padded<'a> {
    /// [`POW2`] or [`TILE`].
    pub(crate) system: &'static str,
    pub(crate) exe: &'a ftuner_runtime::Executable,
    pub(crate) args: [Tensor; 2],
}

/// Every dynamic dim padded to the next power of two, one kernel compiled per bucket with
/// its shapes static (the bucketing FTuner replaces).
pub(crate) const POW2: &str = "pad-pow2";
/// The dynamic dims padded to a multiple of the main uKernel (mr rows, nr columns), run by
/// the dynamic kernel, whose plan then uses the main tile alone (one fixed tile).
pub(crate) const TILE: &str = "pad-tile";

/// One shape of a workload: the inputs, OpenBLAS on them, and the padding baselines.
pub(crate) struct Case<'a> {
    pub(crate) workload: &'static str,
    pub(crate) shape: String,
    /// T of W1/W2 (the length the shape comes from).
    pub(crate) t: Option<usize>,
    pub(crate) args: [Tensor; 2],
    pub(crate) blas: Blas,
    pub(crate) pads: Vec<Padded<'a>>,
}

/// `t` zero-padded to `dims` (same rank, each at least `t`'s).
pub(crate) fn pad_to(t: &Tensor, dims: &[usize]) -> Tensor {
    let total: usize = dims.iter().product();
    let mut data = vec![ftuner_interp::Word::float(0.0); total];
    let rank = dims.len();
    let inner = t.shape[rank - 1];
    let rows: usize = t.shape[..rank - 1].iter().product();
    for r in 0..rows {
        // The row's index in `t`'s leading dims, re-linearized in `dims`.
        let (mut rem, mut dst) = (r, 0);
        let mut stride = dims[rank - 1];
        for d in (0..rank - 1).rev() {
            dst += (rem % t.shape[d]) * stride;
            rem /= t.shape[d];
            stride *= dims[d];
        }
        data[dst..dst + inner].copy_from_slice(&t.data[r * inner..(r + 1) * inner]);
    }
    Tensor::new(dims.to_vec(), Type::f32(), data)
}

/// The largest difference between the `(m, n)` blocks of a padded batched result (last
/// two dims at least `m` and `n`) and OpenBLAS's `batch x m x n` result.
fn block_err(got: &Tensor, (batch, m, n): (usize, usize, usize), want: &[f32]) -> f64 {
    let r = got.shape.len();
    let (pm, pn) = (got.shape[r - 2], got.shape[r - 1]);
    let mut err = 0f64;
    for b in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let x = got.data[(b * pm + i) * pn + j].f();
                err = err.max((x - want[(b * m + i) * n + j] as f64).abs());
            }
        }
    }
    err
}

/// A padding baseline ready to time: its system, kernel and prepared call.
type PreparedPad<'a> = (
    &'static str,
    &'a ftuner_runtime::Executable,
    ftuner_runtime::Prepared,
);

/// The constants of one shape's report lines.
struct Measured {
    workload: &'static str,
    shape: String,
    tparam: Option<usize>,
    /// Useful FLOPs of the problem.
    flops: f64,
    /// ftuner's largest difference from OpenBLAS.
    err: f64,
    reps: usize,
}

/// The timed calls (seconds) of every system at one thread count.
struct Times {
    ours: Vec<f64>,
    blas: Vec<f64>,
    /// Per library opened at run time.
    others: Vec<Vec<f64>>,
    /// Per padding baseline.
    pads: Vec<Vec<f64>>,
}

pub(crate) fn measure(
    out: &mut Out,
    exe: &ftuner_runtime::Executable,
    case: Case<'_>,
    reps: usize,
) -> Result<(), String> {
    let Case {
        workload,
        shape,
        t: tparam,
        args,
        mut blas,
        pads,
    } = case;
    if out.only.as_ref().is_some_and(|o| !o.contains(&shape)) {
        return Ok(());
    }
    let flops = blas.flops();
    // ftuner reads the buffers the libraries read (not a copy of its own, which the
    // libraries' rounds would leave colder in the caches than theirs).
    let ours = Ours {
        exe,
        args: [
            RawArg::Buffer {
                data: blas.a.as_ptr() as *mut u8,
                shape: args[0].shape.clone(),
            },
            RawArg::Buffer {
                data: blas.b.as_ptr() as *mut u8,
                shape: args[1].shape.clone(),
            },
        ],
    };
    // Warm up both; check the results agree.
    let got = ours.result()?;
    blas.run(1);
    blas.run(1);
    if got.len() != blas.c.len() {
        return Err(format!(
            "{workload} {shape}: ftuner returned {} elements, OpenBLAS {}",
            got.len(),
            blas.c.len()
        ));
    }
    let err = got
        .iter()
        .zip(blas.c.iter())
        .map(|(x, y)| (x - y).abs() as f64)
        .fold(0.0, f64::max);
    let scale = blas.c.iter().fold(0f32, |a, x| a.max(x.abs())) as f64;
    let tol = 1e-5 * (blas.k as f64).sqrt() * (1.0 + scale);
    if err.is_nan() || err > tol {
        return Err(format!(
            "{workload} {shape}: ftuner and OpenBLAS differ by {err:e} (tolerance {tol:e})"
        ));
    }
    let pads_prepared = prepare_pads(&pads, &blas, tol, workload, &shape)?;
    let others = checked_libs(&out.libs, &mut blas, tol, workload, &shape);
    let m = Measured {
        workload,
        shape,
        tparam,
        flops,
        err,
        reps,
    };
    for t in out.threads.clone() {
        use_threads(t, blas.batch, &out.libs);
        let times = time_round(&ours, &mut blas, &others, &pads_prepared, t, reps)?;
        record(out, &m, t, times, &others, &pads_prepared);
    }
    Ok(())
}

/// ftuner's kernel on the operands of a [`Blas`] (its `a` and `b`, which nobody writes
/// while a [`Case`] is measured).
struct Ours<'a> {
    exe: &'a ftuner_runtime::Executable,
    args: [RawArg; 2],
}

impl Ours<'_> {
    /// One call: its time and its outputs (the caller frees them, [`free_all`]).
    fn call(&self) -> Result<(Duration, Vec<RawOutput>), String> {
        let t0 = Instant::now();
        // SAFETY: the buffers hold the shapes' element counts of f32 (a Blas's operands,
        // built from the same tensors), alive and unwritten for the whole measurement.
        let out = unsafe { self.exe.call_raw("mm", &self.args) }.map_err(|e| e.0)?;
        Ok((t0.elapsed(), out))
    }

    /// The time of one call (the compiled function with its argument checks, as a
    /// library's time includes its own), the result freed after.
    fn time(&self) -> Result<Duration, String> {
        let (took, out) = self.call()?;
        free_all(out);
        Ok(took)
    }

    /// The result of one call, row-major.
    fn result(&self) -> Result<Vec<f32>, String> {
        let (_, out) = self.call()?;
        let got = match out.first() {
            Some(RawOutput::Buffer {
                data,
                shape,
                strides,
                elem,
                ..
            }) if *elem == Type::f32() && dense(shape, strides) => {
                let n: usize = shape.iter().product();
                if n == 0 {
                    vec![]
                } else {
                    // SAFETY: a row-major f32 result of `n` elements the call just wrote.
                    unsafe { std::slice::from_raw_parts(*data as *const f32, n) }.to_vec()
                }
            }
            _ => {
                free_all(out);
                return Err("ftuner's kernel returned no row-major f32 tensor".into());
            }
        };
        free_all(out);
        Ok(got)
    }
}

/// Whether `strides` lay `shape` out row-major (a dim of one may have any stride).
fn dense(shape: &[usize], strides: &[i64]) -> bool {
    shape
        .iter()
        .zip(strides.iter().zip(ftuner_interp::row_major(shape)))
        .all(|(d, (s, want))| *d <= 1 || *s == want)
}

fn free_all(out: Vec<RawOutput>) {
    for o in out {
        if let RawOutput::Buffer {
            alloc,
            owner: Owner::Fresh,
            ..
        } = o
        {
            // SAFETY: a fresh output of this call, freed once, no view of it kept.
            unsafe { free_output(alloc) };
        }
    }
}

/// The tensors as the compiled code's arguments.
fn rt(args: &[Tensor]) -> Vec<RtVal> {
    args.iter()
        .map(|t| RtVal::Tensor(Rc::new(t.clone())))
        .collect()
}

/// The padding baselines compute the same answer in a corner of their result: checked
/// against OpenBLAS's, then prepared for timing.
fn prepare_pads<'a>(
    pads: &[Padded<'a>],
    blas: &Blas,
    tol: f64,
    workload: &str,
    shape: &str,
) -> Result<Vec<PreparedPad<'a>>, String> {
    let mut pads_prepared = vec![];
    for p in pads {
        let a = rt(&p.args);
        let got = p.exe.call("mm", &a).map_err(|e| e.0)?;
        let g = got[0].tensor().ok_or("no result")?;
        let perr = block_err(g, (blas.batch, blas.m, blas.n), &blas.c);
        if perr.is_nan() || perr > tol {
            return Err(format!(
                "{workload} {shape}: {} and OpenBLAS differ by {perr:e} (tolerance {tol:e})",
                p.system
            ));
        }
        pads_prepared.push((p.system, p.exe, p.exe.prepare("mm", &a).map_err(|e| e.0)?));
    }
    Ok(pads_prepared)
}

/// The libraries opened at run time that give OpenBLAS's answer (the others are said
/// and left out): they are timed beside the rest.
fn checked_libs(
    libs: &[libs::BlasLib],
    blas: &mut Blas,
    tol: f64,
    workload: &str,
    shape: &str,
) -> Vec<(&'static str, libs::SgemmFn)> {
    let reference = blas.c.to_vec();
    let mut others: Vec<(&'static str, libs::SgemmFn)> = vec![];
    for l in libs {
        l.set_threads(1);
        // NaN first: a library that writes nothing (a rejected parameter) fails the check.
        blas.c.fill(f32::NAN);
        blas.run_with(1, l.sgemm);
        let e = blas
            .c
            .iter()
            .zip(&reference)
            .map(|(x, y)| (x - y).abs() as f64)
            .fold(0.0, f64::max);
        if e.is_nan() || e > tol {
            eprintln!(
                "{workload} {shape}: {} and OpenBLAS differ by {e:e} (tolerance {tol:e}): not timed",
                l.name
            );
            continue;
        }
        others.push((l.name, l.sgemm));
    }
    others
}

/// The order of the systems `0 .. n` in round `r`: a Williams design (the sequence 0, 1,
/// n-1, 2, n-2, ... shifted by `r`, and for an odd `n` mirrored every other `n` rounds), in
/// which every system comes right after every other equally often — each ordered pair
/// once in `n` rounds (even `n`) or twice in `2n` (odd).
pub(crate) fn round_order(n: usize, r: usize) -> Vec<usize> {
    let base = (0..n).map(|j| {
        if j % 2 == 1 {
            j.div_ceil(2)
        } else {
            (n - j / 2) % n
        }
    });
    let mut order: Vec<usize> = base.map(|b| (b + r) % n).collect();
    if n % 2 == 1 && (r / n) % 2 == 1 {
        order.reverse();
    }
    order
}

/// Every system once more at `t` threads (the pools start, caches settle), then `reps`
/// rounds in which each system is timed once, in [`round_order`]: a system's time depends
/// on what ran right before it (a library reading the same operands leaves them in the
/// caches, a padding baseline reading its own copies evicts them; another library's
/// threads may still spin), and until 2026-12-08 ftuner always came right after the padded
/// runs.
fn time_round(
    ours_k: &Ours<'_>,
    blas: &mut Blas,
    others: &[(&'static str, libs::SgemmFn)],
    pads_prepared: &[PreparedPad<'_>],
    t: usize,
    reps: usize,
) -> Result<Times, String> {
    let systems = 2 + others.len() + pads_prepared.len();
    let mut run = |i: usize| -> Result<f64, String> {
        let t0 = Instant::now();
        match i {
            0 => return Ok(ours_k.time()?.as_secs_f64()),
            1 => blas.run(t),
            i if i < 2 + others.len() => blas.run_with(t, others[i - 2].1),
            i => {
                let (_, pexe, pp) = &pads_prepared[i - 2 - others.len()];
                return Ok(pexe.time(pp).map_err(|e| e.0)?.as_secs_f64());
            }
        }
        Ok(t0.elapsed().as_secs_f64())
    };
    for i in 0..systems {
        run(i)?;
    }
    let mut times: Vec<Vec<f64>> = vec![vec![]; systems];
    for r in 0..reps {
        for i in round_order(systems, r) {
            times[i].push(run(i)?);
        }
    }
    let pads = times.split_off(2 + others.len());
    let others = times.split_off(2);
    let blas_times = times.pop().unwrap_or_default();
    let ours = times.pop().unwrap_or_default();
    Ok(Times {
        ours,
        blas: blas_times,
        others,
        pads,
    })
}

/// One thread count's medians: the table row, a JSON line and a [`Point`] per system,
/// and the large cubes kept for the peak comparison.
fn record(
    out: &mut Out,
    m: &Measured,
    t: usize,
    times: Times,
    others: &[(&'static str, libs::SgemmFn)],
    pads_prepared: &[PreparedPad<'_>],
) {
    let Measured {
        workload,
        ref shape,
        tparam,
        flops,
        err,
        reps,
    } = *m;
    let Times {
        mut ours,
        blas: mut theirs,
        others: mut other_times,
        pads: mut padded,
    } = times;
    let (mo, mb) = (median(&mut ours), median(&mut theirs));
    let (go, gb) = (flops / mo / 1e9, flops / mb / 1e9);
    // Padded systems' GFLOP/s count the useful FLOPs only (their waste shows as time).
    let pad_meds: Vec<(&'static str, f64)> = pads_prepared
        .iter()
        .zip(&mut padded)
        .map(|((sys, _, _), times)| (*sys, median(times)))
        .collect();
    let pad_col = |sys: &str| {
        pad_meds
            .iter()
            .find(|p| p.0 == sys)
            .map_or("-".to_string(), |p| format!("{:.3}", p.1 * 1e3))
    };
    println!(
        "{workload:4} {shape:>22} {t:>3} {:>10.3} {:>10.3} {go:>8.1} {gb:>8.1} {:>7.2} {err:>9.2e} {:>9} {:>9}",
        mo * 1e3,
        mb * 1e3,
        mo / mb,
        pad_col(POW2),
        pad_col(TILE),
    );
    let mut systems = vec![("ftuner", mo), ("openblas", mb)];
    for ((name, _), times) in others.iter().zip(&mut other_times) {
        systems.push((*name, median(times)));
    }
    systems.extend(pad_meds.iter().copied());
    for (sys, med) in systems {
        let gf = flops / med / 1e9;
        if let Some(f) = &mut out.json {
            let tfield = tparam.map_or(String::new(), |v| format!(", \"t\": {v}"));
            let _ = writeln!(
                f,
                "{{\"system\": \"{sys}\", \"workload\": \"{workload}\", \"shape\": \"{shape}\"{tfield}, \"threads\": {t}, \"median_s\": {med:e}, \"gflops\": {gf:.3}, \"reps\": {reps}, \"max_abs_err\": {err:e}}}"
            );
        }
        out.points.push(Point {
            workload,
            shape: shape.clone(),
            t_param: tparam,
            threads: t,
            system: sys,
            median_s: med,
            ours_s: mo,
            gflops: gf,
        });
    }
    if ["1000x1000x1000", "2048x2048x2048"].contains(&shape.as_str()) {
        out.cubes.push((workload.to_string(), shape.clone(), t, go));
    }
}

#[cfg(test)]
mod tests {
    use super::round_order;

    /// Each round times every system once, and over a full design every system comes
    /// right after every other equally often.
    #[test]
    fn every_system_follows_every_other_equally_often() {
        for n in 1..=8 {
            let rounds = if n % 2 == 0 { n } else { 2 * n };
            let mut follows = vec![vec![0; n]; n];
            for r in 0..rounds {
                let o = round_order(n, r);
                let mut seen = o.clone();
                seen.sort_unstable();
                assert_eq!(seen, (0..n).collect::<Vec<_>>(), "n = {n}, round {r}");
                for w in o.windows(2) {
                    follows[w[0]][w[1]] += 1;
                }
            }
            let want = if n % 2 == 0 { 1 } else { 2 };
            for (a, row) in follows.iter().enumerate() {
                for (b, k) in row.iter().enumerate() {
                    assert_eq!(*k, if a == b { 0 } else { want }, "n = {n}: {a} then {b}");
                }
            }
        }
    }
}
