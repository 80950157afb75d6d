//! # ftuner-run
//!
//! Run one function of an MLIR module on given (`.npy`) or random (seeded) inputs, with the
//! run-time shapes the user names:
//!
//! ```text
//! ftuner-run FILE [--entry NAME] [--pass-pipeline=P] [--shape INDEX=D0xD1x...]...
//!            [--input INDEX=FILE.npy]... [--output FILE.npy] [--seed S] [--check]
//!            [--bench N] [--json] [--threads N]
//! ```
//!
//! `--backend=jit` (the default) compiles the module for this machine (`ftuner-runtime`:
//! what `--pass-pipeline` left is bufferized, lowered to loops and to the llvm dialect,
//! optimized with LLVM at O3 for the host CPU and JIT-compiled) and calls it;
//! `--backend=interp` runs the reference interpreter instead. `--pass-pipeline` runs
//! passes first; without it, a module on tensors run by the JIT gets ftuner's CPU
//! pipeline for this machine (`ftuner-cpu-pipeline{target=host}`: contractions patched
//! with uKernels and lowered), and `--pass-pipeline='builtin.module()'` runs none. `--check` then runs the
//! module as read on the interpreter and compares every result, so a pipeline and the
//! code generator are checked end to end on a concrete shape. A shape that contradicts
//! the signature is an error before anything runs.

pub mod npy;
mod report;

use clap::Parser as _;
use ftuner_dialects::func_attrs::{prepared, Prepared};
use ftuner_interp::{RtVal, Tensor, Word};
use ftuner_ir::{Context, Ir, OpId, Type, DYNAMIC};
use ftuner_pass::PassRegistry;
use std::rc::Rc;
use std::time::Instant;

#[derive(clap::Parser, Debug)]
#[command(
    name = "ftuner-run",
    about = "Run a function of an MLIR module on given or random inputs (JIT-compiled, or the reference interpreter)"
)]
struct Cli {
    /// Input file ('-' for stdin).
    file: String,
    /// Function to run (default: the only public func.func, or the first one).
    #[arg(long)]
    entry: Option<String>,
    /// Passes to run before executing, as for ftuner-opt (default with the JIT, for a
    /// module on tensors: builtin.module(ftuner-cpu-pipeline{target=host});
    /// 'builtin.module()' runs none).
    #[arg(long = "pass-pipeline")]
    pass_pipeline: Option<String>,
    /// Run-time shape of an argument: INDEX=D0xD1x... (fixes its '?' dims).
    #[arg(long = "shape")]
    shapes: Vec<String>,
    /// Argument from a .npy file: INDEX=FILE.npy.
    #[arg(long = "input")]
    inputs: Vec<String>,
    /// Write result #0 to this .npy file.
    #[arg(long)]
    output: Option<String>,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Also run the module as read (before --pass-pipeline) and compare every result.
    #[arg(long)]
    check: bool,
    /// Run N times and report the median time.
    #[arg(long)]
    bench: Option<usize>,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    json: bool,
    /// `jit` (compile for this machine) or `interp` (the reference interpreter).
    #[arg(long, default_value = "jit", value_parser = ["jit", "interp"])]
    backend: String,
    /// Threads of the parallel loops (default: FTUNER_NUM_THREADS, else every core).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: Option<u64>,
    /// Let the module call functions of this process it declares (`func.func private @f`),
    /// beyond the runtime's and libm's. Off: a module from untrusted input cannot call
    /// `system`.
    #[arg(long = "allow-native-calls")]
    allow_native_calls: bool,
}

/// A user-facing error: printed as `ftuner-run: error: ...`, exit code 1.
#[derive(Debug)]
pub struct RunError(pub String);

/// Diagnostics already rendered MLIR-style (`file:line:col: error: ...`).
const RENDERED: &str = "\u{0}rendered\u{0}";

impl<T: Into<String>> From<T> for RunError {
    fn from(s: T) -> Self {
        RunError(s.into())
    }
}

/// Entry point of the binary (returns the exit code): `reg` holds the passes and the
/// driver's hooks (the upstream import: `ftuner_opt::registry_with_upstream`).
pub fn run_main(args: Vec<String>, reg: PassRegistry) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            // Usage errors exit 1, as every other error (README); --help and --version 0.
            let _ = e.print();
            return i32::from(e.use_stderr());
        }
    };
    if let Some(n) = cli.threads {
        ftuner_runtime::set_num_threads(n as usize);
    }
    ftuner_runtime::allow_native_calls(cli.allow_native_calls);
    match execute(&cli, &reg) {
        Ok(ok) => {
            if ok {
                0
            } else {
                1
            }
        }
        Err(RunError(m)) => {
            match m.strip_prefix(RENDERED) {
                Some(d) => eprint!("{d}"),
                None => eprintln!("ftuner-run: error: {m}"),
            }
            1
        }
    }
}

fn load(
    ctx: &Context,
    src: &str,
    file: &str,
    reg: &PassRegistry,
) -> Result<ftuner_ir::ParsedModule, RunError> {
    let upstream = reg.extensions().get::<ftuner_opt::UpstreamImport>();
    ftuner_opt::parse_for_execution(ctx, src, file, upstream).map_err(|ds| {
        let mut sm = ftuner_ir::SourceMap::default();
        sm.add(file, src.into());
        let text: String = ds.iter().map(|d| ftuner_ir::diag::render(d, &sm)).collect();
        RunError(format!("{RENDERED}{text}"))
    })
}

/// The function to run: `--entry`, else the only public one, else the first.
fn find_entry(ir: &Ir, top: OpId, name: Option<&str>) -> Result<OpId, RunError> {
    let mut funcs = vec![];
    ir.walk_pre(top, &mut |o| {
        if ir.name(o) == "func.func" && !ir.regions_of(o).is_empty() {
            funcs.push(o);
        }
    });
    if let Some(n) = name {
        return funcs
            .into_iter()
            .find(|f| ir.symbol_name(*f) == Some(n))
            .ok_or_else(|| RunError(format!("no function @{n} with a body in the module")));
    }
    let public: Vec<OpId> = funcs
        .iter()
        .copied()
        .filter(|f| {
            ir.attr(*f, "sym_visibility")
                .and_then(|a| a.as_str().map(|s| s.to_string()))
                .is_none()
        })
        .collect();
    public
        .first()
        .or(funcs.first())
        .copied()
        .ok_or_else(|| RunError("the module has no function with a body".into()))
}

fn parse_indexed(s: &str, what: &str) -> Result<(usize, String), RunError> {
    let (i, rest) = s
        .split_once('=')
        .ok_or_else(|| RunError(format!("--{what} expects INDEX=..., got '{s}'")))?;
    let i = i
        .trim()
        .parse()
        .map_err(|_| RunError(format!("--{what}: '{i}' is not an argument index")))?;
    Ok((i, rest.to_string()))
}

fn parse_shape(s: &str) -> Result<Vec<usize>, RunError> {
    if s.is_empty() {
        return Ok(vec![]);
    }
    s.split('x')
        .map(|d| {
            d.parse::<usize>()
                .map_err(|_| RunError(format!("--shape: '{d}' in '{s}' is not a dimension")))
        })
        .collect()
}

/// The seeded xorshift generator of random inputs (a nonzero seed).
pub struct Rng(pub u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A value suited to `elem`: uniform in [-1, 1) for floats, small integers otherwise.
    pub fn value(&mut self, elem: Type) -> Word {
        let u = self.next();
        if elem.float_kind().is_some() {
            Word::of_number((u >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0, elem)
        } else {
            // Small integers, wrapped to the width (15 is -1 in an i4).
            ftuner_interp::round_to(Word::int((u % 16) as i64), elem)
        }
    }
}

/// Build the arguments from the signature, --shape, --input and the seed.
fn make_args(ir: &Ir, f: OpId, cli: &Cli) -> Result<Vec<RtVal>, RunError> {
    let entry = ir
        .regions_of(f)
        .first()
        .and_then(|r| ir.region_entry(*r))
        .ok_or("the function has no body")?;
    let params = ir.block_args(entry).to_vec();
    let n = params.len();
    let mut shapes: Vec<Option<Vec<usize>>> = vec![None; n];
    let mut files: Vec<Option<String>> = vec![None; n];
    for s in &cli.shapes {
        let (i, d) = parse_indexed(s, "shape")?;
        let slot = shapes
            .get_mut(i)
            .ok_or_else(|| RunError(format!("--shape {s}: the function has {n} arguments")))?;
        if slot.is_some() {
            return Err(format!("--shape {s}: argument #{i} has a --shape already").into());
        }
        *slot = Some(parse_shape(&d)?);
    }
    for s in &cli.inputs {
        let (i, p) = parse_indexed(s, "input")?;
        let slot = files
            .get_mut(i)
            .ok_or_else(|| RunError(format!("--input {s}: the function has {n} arguments")))?;
        if slot.is_some() {
            return Err(format!("--input {s}: argument #{i} has an --input already").into());
        }
        *slot = Some(p);
    }
    let mut rng = Rng(cli.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut args = vec![];
    for (i, p) in params.iter().enumerate() {
        let ty = ir.value_type(*p);
        let elem = ty.element_type();
        let Some(sig) = ty.shape() else {
            if files[i].is_some() || shapes[i].is_some() {
                return Err(format!("argument #{i} is a scalar ({ty})").into());
            }
            args.push(RtVal::Scalar(rng.value(ty)));
            continue;
        };
        let t = if let Some(path) = &files[i] {
            let bytes = read_input(path)?;
            let t = npy::read(&bytes).map_err(|e| RunError(format!("{path}: {e}")))?;
            if t.elem != elem {
                return Err(
                    format!("{path}: holds {} values, argument #{i} is {ty}", t.elem).into(),
                );
            }
            t
        } else {
            let shape = match &shapes[i] {
                Some(s) => s.clone(),
                None if sig.iter().all(|d| *d != DYNAMIC) => {
                    sig.iter().map(|d| *d as usize).collect()
                }
                None => {
                    return Err(format!(
                        "argument #{i} ({ty}) has dynamic dimensions: give --shape {i}=..."
                    )
                    .into())
                }
            };
            let count = shape
                .iter()
                .try_fold(1usize, |a, d| a.checked_mul(*d))
                .filter(|c| *c <= (1 << 31))
                .ok_or_else(|| RunError(format!("argument #{i}: shape {shape:?} is too large")))?;
            let data = (0..count).map(|_| rng.value(elem)).collect();
            Tensor::new(shape, elem, data)
        };
        ftuner_runtime::raw::buffer_bytes(&t.shape, elem)
            .map_err(|e| RunError(format!("argument #{i}: {e}")))?;
        if t.shape.len() != sig.len()
            || sig
                .iter()
                .zip(&t.shape)
                .any(|(d, x)| *d != DYNAMIC && *d as usize != *x)
        {
            return Err(format!(
                "argument #{i}: shape {} does not match {ty}",
                fmt_shape(&t.shape)
            )
            .into());
        }
        args.push(RtVal::Tensor(Rc::new(t)));
    }
    Ok(args)
}

/// The largest .npy input read (8 GiB: the interpreter's budget of 2^30 f64 elements).
const MAX_INPUT_BYTES: u64 = 1 << 33;

/// An input file: a regular file (not a device or a FIFO: `/dev/zero` would be read until
/// memory runs out) of at most [`MAX_INPUT_BYTES`].
fn read_input(path: &str) -> Result<Vec<u8>, RunError> {
    let meta = std::fs::metadata(path).map_err(|e| RunError(format!("cannot read {path}: {e}")))?;
    if !meta.is_file() {
        return Err(RunError(format!("{path} is not a regular file")));
    }
    if meta.len() > MAX_INPUT_BYTES {
        return Err(RunError(format!(
            "{path} is {} bytes, more than an input may be ({MAX_INPUT_BYTES})",
            meta.len()
        )));
    }
    std::fs::read(path).map_err(|e| RunError(format!("cannot read {path}: {e}")))
}

fn fmt_shape(s: &[usize]) -> String {
    s.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

fn call(
    ctx: &Context,
    m: &ftuner_ir::ParsedModule,
    name: &str,
    args: &[RtVal],
) -> Result<Vec<RtVal>, RunError> {
    ftuner_interp::run(ctx, &m.ir, m.top, name, args.to_vec()).map_err(|e| RunError(e.message))
}

/// The oracle's verdict on one result (`ftuner_interp::check`): `got` against the
/// interpreter's single-precision and wide references, within the error bound derived
/// from the reference's own rounding; `r` bounds any reduction's length.
pub use ftuner_interp::check::compare;

/// What running the function gave: its results, the run times (sorted after the run),
/// and with the JIT the compile time and the peak bytes allocated.
struct Outcome {
    results: Vec<RtVal>,
    times: Vec<f64>,
    compile_s: f64,
    peak_bytes: Option<usize>,
}

impl Outcome {
    /// The median run time (of the sorted times).
    fn median(&self) -> f64 {
        self.times[self.times.len() / 2]
    }
}

fn execute(cli: &Cli, reg: &PassRegistry) -> Result<bool, RunError> {
    let src = read_source(&cli.file)?;
    let ctx = ftuner_transforms::context();
    let original = load(&ctx, &src, &cli.file, reg)?;
    let mut module = load(&ctx, &src, &cli.file, reg)?;
    // The entry is a function of the module as read (a pipeline may add functions, such
    // as the weight preparation outline-weight-preparation puts first).
    let e = find_entry(&original.ir, original.top, cli.entry.as_deref())?;
    let name = original.ir.symbol_name(e).unwrap_or_default().to_string();
    run_pipeline(&ctx, &mut module, cli, reg)?;
    let f = find_entry(&module.ir, module.top, Some(&name))?;
    // `--shape`/`--input` name the arguments of the function as read.
    let args = make_args(&original.ir, e, cli)?;
    // Split by the pipeline (not already in the module as read, which then takes the
    // prepared values as its arguments).
    let prepared = prepared(&original.ir, e)
        .is_none()
        .then(|| prepared(&module.ir, f))
        .flatten();
    let jit = cli.backend == "jit";
    let mut outcome = if jit {
        run_jit(&ctx, &mut module, &name, &args, prepared, cli.bench)?
    } else {
        let call_args = entry_args(&args, prepared, |p, w| call(&ctx, &module, p, &w))?;
        run_interp(&ctx, &module, &name, &call_args, cli.bench)?
    };
    outcome.times.sort_by(f64::total_cmp);
    // What each result is (a scalar's word says nothing of its type).
    let tys = ftuner_interp::result_types(&original.ir, original.top, &name).unwrap_or_default();
    let check = if cli.check {
        Some(check_results(
            &ctx,
            (&original, &name, &tys),
            &args,
            &outcome.results,
        )?)
    } else {
        None
    };
    if let Some(path) = &cli.output {
        write_result(path, &outcome.results)?;
    }
    let sums: Vec<report::Summary> = outcome
        .results
        .iter()
        .enumerate()
        .map(|(i, r)| report::summarize(r, tys.get(i).copied().unwrap_or(Type::f32())))
        .collect();
    if cli.json {
        report::print_json(&name, jit, &outcome, &sums, &check);
    } else {
        report::print_text(cli, jit, &outcome, &sums, &args, &check);
    }
    Ok(!matches!(check, Some(Err(_))))
}

/// The module's text: `file`, or standard input for `-`.
fn read_source(file: &str) -> Result<String, RunError> {
    if file == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .map_err(|e| RunError(format!("cannot read stdin: {e}")))?;
        Ok(s)
    } else {
        std::fs::read_to_string(file).map_err(|e| RunError(format!("cannot read {file}: {e}")))
    }
}

/// Run `--pass-pipeline`, or the JIT's default, on `module`.
fn run_pipeline(
    ctx: &Context,
    module: &mut ftuner_ir::ParsedModule,
    cli: &Cli,
    reg: &PassRegistry,
) -> Result<(), RunError> {
    // The default for the JIT: ftuner's CPU pipeline for this machine on a module on
    // tensors (what the Python package runs); `--pass-pipeline='builtin.module()'` runs
    // none. The interpreter runs the module as read.
    let default_pipeline = (cli.backend == "jit"
        && ftuner_transforms::has_tensor_functions(&module.ir, module.top))
    .then(|| "builtin.module(ftuner-cpu-pipeline{target=host})".to_string());
    if let Some(p) = cli.pass_pipeline.as_ref().or(default_pipeline.as_ref()) {
        let mut pm = ftuner_pass::PassManager::from_pipeline(reg, p)
            .map_err(|e| RunError(format!("--pass-pipeline: {e}")))?;
        if let Err(e) = pm.run(ctx, &mut module.ir, module.top) {
            return Err(RunError(format!("the pass pipeline failed: {e}")));
        }
    }
    Ok(())
}

/// Compile `module` for this machine, call `name` once, then `--bench` times.
/// The arguments of the pipelined entry from those of the function as read: for a function
/// outline-weight-preparation split (`ftuner.prepared`), the kept arguments, then what its
/// prepare function (`prepare`: a runner) computes from the weights.
fn entry_args(
    args: &[RtVal],
    prepared: Option<Prepared>,
    prepare: impl FnOnce(&str, Vec<RtVal>) -> Result<Vec<RtVal>, RunError>,
) -> Result<Vec<RtVal>, RunError> {
    let Some(Prepared {
        inputs: kept,
        prepare: p,
    }) = prepared
    else {
        return Ok(args.to_vec());
    };
    let weights = (0..args.len())
        .filter(|i| !kept.contains(i))
        .map(|i| args[i].clone())
        .collect();
    let mut out = kept
        .iter()
        .map(|i| {
            args.get(*i)
                .cloned()
                .ok_or_else(|| RunError(format!("@{p}: argument #{i} is missing")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    out.extend(prepare(&p, weights)?);
    Ok(out)
}

fn run_jit(
    ctx: &Context,
    module: &mut ftuner_ir::ParsedModule,
    name: &str,
    args: &[RtVal],
    prepared: Option<Prepared>,
    bench: Option<usize>,
) -> Result<Outcome, RunError> {
    let exe =
        ftuner_runtime::Executable::compile(ctx, &mut module.ir, module.top).map_err(|e| {
            RunError(format!(
                "compilation failed (--backend=interp runs the interpreter): {e}"
            ))
        })?;
    // The weights are prepared once, outside the timed calls.
    let args = &entry_args(args, prepared, |p, w| {
        exe.call(p, &w).map_err(|e| RunError(e.0))
    })?;
    let compile_s = exe.compile_seconds;
    let t0 = Instant::now();
    let results = exe.call(name, args).map_err(|e| RunError(e.0))?;
    let peak_bytes = Some(exe.last_peak_bytes());
    let mut times = vec![t0.elapsed().as_secs_f64()];
    if let Some(n) = bench {
        times = exe
            .bench(name, args, n)
            .map_err(|e| RunError(e.0))?
            .iter()
            .map(|d| d.as_secs_f64())
            .collect();
    }
    Ok(Outcome {
        results,
        times,
        compile_s,
        peak_bytes,
    })
}

/// Run `name` on the reference interpreter once, then `--bench` times.
fn run_interp(
    ctx: &Context,
    module: &ftuner_ir::ParsedModule,
    name: &str,
    args: &[RtVal],
    bench: Option<usize>,
) -> Result<Outcome, RunError> {
    let t0 = Instant::now();
    let results = call(ctx, module, name, args)?;
    let mut times = vec![t0.elapsed().as_secs_f64()];
    if let Some(n) = bench {
        times.clear();
        for _ in 0..n.max(1) {
            let t = Instant::now();
            let _ = call(ctx, module, name, args)?;
            times.push(t.elapsed().as_secs_f64());
        }
    }
    Ok(Outcome {
        results,
        times,
        compile_s: 0.0,
        peak_bytes: None,
    })
}

/// `--check`: run the module as read on the interpreter and compare every result.
/// The entry: the module as read, the function's name and its result types.
fn check_results(
    ctx: &Context,
    (original, name, result_tys): (&ftuner_ir::ParsedModule, &str, &[Type]),
    args: &[RtVal],
    results: &[RtVal],
) -> Result<Result<(), String>, RunError> {
    // The compiled code ran: a reference that cannot is said as such (the compiled code
    // accepted what the oracle rejects — or the oracle's limits; the fuzzer counts them).
    // A program outside the interpreter's model (integers of more than 64 bits) cannot be
    // checked: said as such, a failure of the check but not a finding about the program.
    let refused = |e: RunError| {
        if e.0.contains(ftuner_interp::UNMODELLED) {
            RunError(format!("cannot check: {}", e.0))
        } else {
            RunError(format!(
                "the compiled code ran but the reference interpreter failed: {}",
                e.0
            ))
        }
    };
    let want = call(ctx, original, name, args).map_err(refused)?;
    // The same program in f64: how far the single-precision reference is from the value
    // it approximates sets the tolerance (ftuner_interp::check).
    let wide = ftuner_interp::wide(|| call(ctx, original, name, args)).map_err(refused)?;
    let r = args
        .iter()
        .filter_map(|a| a.tensor())
        .flat_map(|t| t.shape.iter().copied())
        .max()
        .unwrap_or(1);
    let mut res = Ok(());
    if want.len() != results.len() {
        res = Err(format!(
            "{} results vs reference {}",
            results.len(),
            want.len()
        ));
    }
    for (i, ((g, w), x)) in results.iter().zip(&want).zip(&wide).enumerate() {
        let nans = w
            .tensor()
            .filter(|t| t.elem.is_float())
            .map_or(0, |t| t.data.iter().filter(|v| v.f().is_nan()).count());
        let total = w.tensor().map_or(0, |t| t.data.len());
        let undefined = w.tensor().filter(|t| t.elem.is_float()).map_or(0, |t| {
            t.data
                .iter()
                .filter(|v| ftuner_interp::is_undefined(v.f()))
                .count()
        });
        if total > 0 && undefined == total {
            res = Err(format!(
                "result #{i} is undefined everywhere: the reference reads contents no op wrote (a tensor.empty, an allocation), so the check compares nothing"
            ));
            break;
        }
        if undefined > 0 {
            eprintln!(
                "ftuner-run: warning: result #{i} has {undefined} elements computed from contents no op wrote; they are not compared"
            );
        }
        let nans = nans - undefined;
        if total > 0 && nans + undefined == total && nans > 0 {
            // Nothing to compare: not a pass (issue 25: random inputs through a batch
            // norm with negative variances).
            res = Err(format!(
                "result #{i} of the reference is NaN everywhere: the check compares nothing (inputs outside what the model takes?)"
            ));
            break;
        }
        if nans > 0 {
            eprintln!(
                "ftuner-run: warning: result #{i} of the reference has {nans} NaN values; NaN matches NaN, so those elements check nothing"
            );
        }
        let ty = result_tys.get(i).copied().unwrap_or(Type::f32());
        if let Err(e) = compare(g, w, x, r, ty) {
            res = Err(format!("result #{i}: {e}"));
            break;
        }
    }
    Ok(res)
}

/// `--output`: result #0 as a .npy file.
fn write_result(path: &str, results: &[RtVal]) -> Result<(), RunError> {
    let t = results
        .first()
        .and_then(|r| r.tensor())
        .ok_or("--output: result #0 is not a tensor")?;
    let bytes = npy::write(t)?;
    std::fs::write(path, bytes).map_err(|e| RunError(format!("cannot write {path}: {e}")))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(data: Vec<f64>) -> RtVal {
        RtVal::Tensor(Rc::new(Tensor::from_f64(vec![2, 2], Type::f32(), data)))
    }
    fn compare(got: &RtVal, single: &RtVal, wide: &RtVal, r: usize) -> Result<(), String> {
        super::compare(got, single, wide, r, Type::f32())
    }

    #[test]
    fn compare_reports_the_worst_element() {
        let want = t(vec![1.0, 2.0, 3.0, 4.0]);
        assert!(compare(&t(vec![1.0, 2.0, 3.0, 4.0 + 1e-7]), &want, &want, 4).is_ok());
        let e = compare(&t(vec![1.0, 2.5, 3.0, 4.1]), &want, &want, 4).unwrap_err();
        assert!(
            e.starts_with("worst element [0, 1]: 2.5 vs reference 2"),
            "{e}"
        );
    }
}
