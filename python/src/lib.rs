//! `ftuner._ftuner`: the Rust half of the `ftuner` Python package.
//!
//! Python hands over a linalg-on-tensors module (what torch-mlir's FX importer printed)
//! with the indices of the arguments that are weights; [`compile`] runs ftuner's CPU
//! pipeline on it (weight preparation outlined, elementwise chains fused, contractions
//! patched with uKernels from the hardware model, lowered, JIT-compiled) with the GIL
//! released, and returns a [`Program`]. A program's `prepare` runs the weight
//! preparation once; `run` calls the model on the caller's buffers without copying and
//! returns [`Buffer`]s that hand their memory to torch or numpy through DLPack.

mod buffer;
mod explain;

use buffer::{Buffer, Mem};
use ftuner_ir::{Context, Ir, OpId, Type, DYNAMIC};
use ftuner_runtime::{Executable, Owner, RawArg, RawOutput};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::time::Instant;

create_exception!(
    _ftuner,
    CompileError,
    PyException,
    "A module ftuner cannot compile: its diagnostics, with locations, are the message."
);

/// The CPU pipeline before bufferization, for `target` (a hardware-model name), with the
/// schedules of a tuning database when one is given: up to the patched contractions
/// (what `explain` reads), then their lowering — ftuner-opt's named pipelines
/// `ftuner-cpu-patch` and what follows it in `ftuner-cpu-pipeline`.
fn cpu_pipeline(target: &str, tuning_db: Option<&str>, derive: bool) -> [String; 2] {
    let db = tuning_db
        .map(|d| format!(" tuning-db={d}"))
        .unwrap_or_default();
    [
        format!("builtin.module(ftuner-cpu-patch{{target={target}{db} derive={derive}}})"),
        format!("builtin.module({})", ftuner_opt::pipelines::CPU_LOWER),
    ]
}

/// Run pipeline `text`; the warnings and remarks of passes that succeed are rendered
/// into `notes` (the package logs them through Python's `logging`, not on stderr).
fn run_passes(
    ctx: &Context,
    ir: &mut Ir,
    top: OpId,
    (text, src, file): (&str, &str, &str),
    notes: &mut Vec<String>,
) -> Result<(), String> {
    let reg = ftuner_opt::default_registry();
    let mut pm = ftuner_pass::PassManager::from_pipeline(&reg, text)
        .map_err(|e| format!("pipeline {text}: {e}"))?;
    pm.collect_diagnostics = true;
    let r = pm.run(ctx, ir, top);
    let mut sm = ftuner_ir::SourceMap::default();
    sm.add(file, src.into());
    notes.extend(pm.collected.iter().map(|d| ftuner_ir::diag::render(d, &sm)));
    r.map_err(|x| {
        let d: String = x
            .diagnostics
            .iter()
            .map(|d| ftuner_ir::diag::render(d, &sm))
            .collect();
        format!("{}\n{d}", x.message)
    })
}

/// Shape (`-1` for a dynamic dim) and element type name of a tensor or memref type.
fn describe(t: Type) -> (Vec<i64>, String) {
    let shape = t
        .shape()
        .unwrap_or(&[])
        .iter()
        .map(|d| if *d == DYNAMIC { -1 } else { *d })
        .collect();
    let elem = if t.is_tensor() || t.is_memref() {
        t.element_type()
    } else {
        t
    };
    (shape, elem.to_string())
}

fn find_func(ir: &Ir, top: OpId, name: Option<&str>) -> Option<OpId> {
    let mut out = None;
    ir.walk_pre(top, &mut |o| {
        if out.is_none()
            && ir.name(o) == "func.func"
            && ir
                .regions_of(o)
                .first()
                .is_some_and(|r| ir.region_entry(*r).is_some())
            && ir.attr(o, "sym_visibility").and_then(|a| a.as_str()) != Some("private")
            && name.is_none_or(|n| ir.symbol_name(o) == Some(n))
        {
            out = Some(o);
        }
    });
    out
}

fn signature(ir: &Ir, f: OpId) -> (Vec<Type>, Vec<Type>) {
    let t = ir.attr(f, "function_type").and_then(|a| a.as_type());
    t.map(|t| (t.function_inputs().to_vec(), t.function_results().to_vec()))
        .unwrap_or_default()
}

/// A compiled model.
#[pyclass(frozen, module = "ftuner._ftuner")]
struct Program {
    exe: Executable,
    entry: String,
    /// The prepare function `ftuner.prepared` names, when weights were given and something
    /// was hoisted.
    prepare: Option<String>,
    /// Indices (in the exported signature) of the arguments `run` takes, in order.
    kept: Vec<usize>,
    inputs: Vec<(Vec<i64>, String)>,
    outputs: Vec<(Vec<i64>, String)>,
    prepared: Vec<(Vec<i64>, String)>,
    explain: String,
    phases: Vec<(String, f64)>,
    /// The passes' warnings and remarks, rendered (`ftuner.compile` logs them).
    notes: Vec<String>,
}

/// A module after ftuner's pipeline (up to bufferization), ready for code generation.
struct Lowered {
    ctx: Context,
    m: ftuner_ir::ParsedModule,
    name: String,
    ins: Vec<Type>,
    outs: Vec<Type>,
    explain: String,
    phases: Vec<(String, f64)>,
    /// The passes' warnings and remarks, rendered.
    notes: Vec<String>,
}

/// What a compilation is asked to do.
struct Request<'a> {
    text: &'a str,
    file: &'a str,
    entry: Option<&'a str>,
    weights: &'a [usize],
    target: &'a str,
    pipeline: Option<&'a str>,
    tuning_db: Option<&'a str>,
    /// Run `ollie-derive` before patching (the default pipeline only).
    derive: bool,
}

/// With `FTUNER_DUMP_IR=<dir>`, the module as ftuner receives it (`<entry>.input.mlir`,
/// weights marked `{ftuner.weight}`: what `ftuner-opt --pass-pipeline=...` reproduces a
/// compilation from) and after the pipeline (`<entry>.lowered.mlir`, the nests whose names
/// a profiler shows).
fn dump(ctx: &Context, m: &ftuner_ir::ParsedModule, name: &str, stage: &str) -> Result<(), String> {
    let Some(dir) = std::env::var_os("FTUNER_DUMP_IR") else {
        return Ok(());
    };
    let path = std::path::Path::new(&dir).join(format!("{name}.{stage}.mlir"));
    let opts = ftuner_ir::PrintOptions {
        generic: false,
        debuginfo: false,
    };
    std::fs::write(&path, ftuner_ir::print_module(&m.ir, ctx, m.top, opts))
        .map_err(|e| format!("FTUNER_DUMP_IR: {}: {e}", path.display()))
}

fn lower(r: &Request<'_>) -> Result<Lowered, String> {
    let (text, file) = (r.text, r.file);
    let mut phases = vec![];
    let t0 = Instant::now();
    let ctx = ftuner_transforms::context();
    let mut m = ftuner_opt::parse_for_execution(&ctx, text, file, None).map_err(|ds| {
        let mut sm = ftuner_ir::SourceMap::default();
        sm.add(file, text.into());
        ds.iter()
            .map(|d| ftuner_ir::diag::render(d, &sm))
            .collect::<String>()
    })?;
    phases.push(("parse".to_string(), t0.elapsed().as_secs_f64()));
    let f = find_func(&m.ir, m.top, r.entry).ok_or_else(|| match r.entry {
        Some(n) => format!("{file}: no public function @{n} with a body"),
        None => format!("{file}: no public function with a body"),
    })?;
    let name = m.ir.symbol_name(f).unwrap_or_default().to_string();
    let (ins, outs) = signature(&m.ir, f);
    if let Some(w) = r.weights.iter().find(|w| **w >= ins.len()) {
        return Err(format!(
            "weight index {w} is out of range: @{name} takes {} arguments",
            ins.len()
        ));
    }
    ftuner_transforms::outline_weights::mark_weights(&mut m.ir, f, r.weights);
    dump(&ctx, &m, &name, "input")?;
    let mut notes = vec![];
    let t1 = Instant::now();
    let explain = match r.pipeline {
        Some(p) => {
            run_passes(&ctx, &mut m.ir, m.top, (p, text, file), &mut notes)?;
            explain::patches(&m.ir, m.top)
        }
        None => {
            let [patch, lower] = cpu_pipeline(r.target, r.tuning_db, r.derive);
            run_passes(&ctx, &mut m.ir, m.top, (&patch, text, file), &mut notes)?;
            let x = explain::patches(&m.ir, m.top);
            run_passes(&ctx, &mut m.ir, m.top, (&lower, text, file), &mut notes)?;
            x
        }
    };
    phases.push(("passes".to_string(), t1.elapsed().as_secs_f64()));
    dump(&ctx, &m, &name, "lowered")?;
    Ok(Lowered {
        ctx,
        m,
        name,
        ins,
        outs,
        explain,
        phases,
        notes,
    })
}

fn compile_inner(r: &Request<'_>) -> Result<Program, String> {
    let Lowered {
        ctx,
        mut m,
        name,
        ins,
        outs,
        explain,
        mut phases,
        notes,
    } = lower(r)?;
    let f =
        find_func(&m.ir, m.top, Some(&name)).ok_or("the pipeline removed the entry function")?;
    let (kept, prepare) = match ftuner_dialects::func_attrs::prepared(&m.ir, f) {
        Some(p) => (p.inputs, Some(p.prepare)),
        None => ((0..ins.len()).collect(), None),
    };
    let prepared = match &prepare {
        Some(p) => {
            let pf = find_func(&m.ir, m.top, Some(p)).ok_or("the prepare function is gone")?;
            signature(&m.ir, pf).1.into_iter().map(describe).collect()
        }
        None => vec![],
    };
    let t2 = Instant::now();
    let exe = Executable::compile(&ctx, &mut m.ir, m.top).map_err(|e| e.0)?;
    phases.push(("codegen".to_string(), t2.elapsed().as_secs_f64()));
    for (k, v) in &exe.phases {
        phases.push((format!("codegen: {k}"), *v));
    }
    Ok(Program {
        exe,
        entry: name,
        prepare,
        kept,
        inputs: ins.into_iter().map(describe).collect(),
        outputs: outs.into_iter().map(describe).collect(),
        prepared,
        explain,
        phases,
        notes,
    })
}

/// Compile `text` (an MLIR module); `weights` are the argument indices of the entry
/// function that hold weights (prepared once by `Program.prepare`).
#[pyfunction]
#[pyo3(signature = (text, file="<module>", entry=None, weights=vec![], target="host", pipeline=None, tuning_db=None, derive=true))]
#[allow(clippy::too_many_arguments)]
fn compile(
    py: Python<'_>,
    text: String,
    file: &str,
    entry: Option<String>,
    weights: Vec<usize>,
    target: &str,
    pipeline: Option<String>,
    tuning_db: Option<String>,
    derive: bool,
) -> PyResult<Program> {
    let file = file.to_string();
    let target = target.to_string();
    py.detach(|| {
        compile_inner(&Request {
            text: &text,
            file: &file,
            entry: entry.as_deref(),
            weights: &weights,
            target: &target,
            pipeline: pipeline.as_deref(),
            tuning_db: tuning_db.as_deref(),
            derive,
        })
    })
    .map_err(CompileError::new_err)
}

/// A dynamic dim's `(symbol, min, max)` from Python.
type DimRangeArg = (String, i64, Option<i64>);

/// Compile `text` into the shared library `out` (with its header `header`): the weights
/// (`weights` argument indices) come from `blob`, a file holding each at `offsets`;
/// `ranges` per input and dim: `(symbol, lo, hi)` or None; `extra_json` goes into the
/// library's signature.
#[pyfunction]
#[pyo3(signature = (text, out, header, name, file="<module>", entry=None, weights=vec![], blob=None, offsets=vec![], ranges=vec![], extra_json=String::new(), target="host", tuning_db=None, derive=true))]
#[allow(clippy::too_many_arguments)]
fn build_shared(
    py: Python<'_>,
    text: String,
    out: std::path::PathBuf,
    header: std::path::PathBuf,
    name: String,
    file: &str,
    entry: Option<String>,
    weights: Vec<usize>,
    blob: Option<std::path::PathBuf>,
    offsets: Vec<usize>,
    ranges: Vec<Vec<Option<DimRangeArg>>>,
    extra_json: String,
    target: &str,
    tuning_db: Option<String>,
    derive: bool,
) -> PyResult<()> {
    let file = file.to_string();
    let target = target.to_string();
    py.detach(|| {
        let mut l = lower(&Request {
            text: &text,
            file: &file,
            entry: entry.as_deref(),
            weights: &weights,
            target: &target,
            pipeline: None,
            tuning_db: tuning_db.as_deref(),
            derive,
        })?;
        let opts = ftuner_runtime::aot::SharedOptions {
            name,
            entry: l.name.clone(),
            weights: blob.map(|b| (b, offsets)),
            weight_args: weights.clone(),
            ranges: ranges
                .into_iter()
                .map(|dims| {
                    dims.into_iter()
                        .map(|d| {
                            d.map(|(symbol, lo, hi)| ftuner_runtime::aot::DimRange {
                                symbol,
                                lo,
                                hi,
                            })
                        })
                        .collect()
                })
                .collect(),
            extra_json,
            cc: None,
        };
        // The code is for this machine, whatever hardware model chose the tiles.
        let t = ftuner_runtime::Target::host();
        ftuner_runtime::aot::build_shared(&l.ctx, &mut l.m.ir, l.m.top, &t, &opts, &out, &header)
            .map_err(|e| e.0)
    })
    .map_err(CompileError::new_err)
}

/// `(data pointer, shape)` pairs or scalars from Python.
fn raw_args(items: &Bound<'_, pyo3::types::PyList>) -> PyResult<Vec<RawArg>> {
    let mut out = vec![];
    for it in items.iter() {
        if let Ok((ptr, shape)) = it.extract::<(usize, Vec<usize>)>() {
            out.push(RawArg::Buffer {
                data: ptr as *mut u8,
                shape,
            });
        } else {
            out.push(RawArg::Scalar(it.extract::<f64>()?));
        }
    }
    Ok(out)
}

impl Program {
    fn call(
        &self,
        py: Python<'_>,
        name: &str,
        args: Vec<RawArg>,
        copy_views: bool,
    ) -> PyResult<Vec<Py<PyAny>>> {
        // SAFETY: the Python side passes the data pointers of live, contiguous tensors of
        // the signature's element types (checked there, shapes checked here) and keeps
        // them alive and unwritten for the call.
        let outs = py
            .detach(|| unsafe { self.exe.call_raw(name, &args) })
            .map_err(|e| PyRuntimeError::new_err(e.0))?;
        let mut res = vec![];
        for o in outs {
            match o {
                RawOutput::Scalar(x) => res.push(x.into_pyobject(py)?.into_any().unbind()),
                RawOutput::Buffer { owner, .. } if copy_views && owner != Owner::Fresh => {
                    res.push(
                        Py::new(py, Buffer::copied(&o).map_err(PyRuntimeError::new_err)?)?
                            .into_any(),
                    );
                }
                RawOutput::Buffer { .. } => {
                    res.push(Py::new(py, Buffer::from_output(o, Mem::adopt))?.into_any());
                }
            }
        }
        Ok(res)
    }
}

#[pymethods]
impl Program {
    /// Name of the compiled function.
    #[getter]
    fn entry(&self) -> &str {
        &self.entry
    }
    /// `(shape, dtype)` of every argument of the exported function (-1: dynamic).
    #[getter]
    fn inputs(&self) -> Vec<(Vec<i64>, String)> {
        self.inputs.clone()
    }
    #[getter]
    fn outputs(&self) -> Vec<(Vec<i64>, String)> {
        self.outputs.clone()
    }
    /// Indices of the exported arguments `run` takes first (then the prepared values).
    #[getter]
    fn run_inputs(&self) -> Vec<usize> {
        self.kept.clone()
    }
    /// `(shape, dtype)` of each value `prepare` returns.
    #[getter]
    fn prepared(&self) -> Vec<(Vec<i64>, String)> {
        self.prepared.clone()
    }
    #[getter]
    fn has_prepare(&self) -> bool {
        self.prepare.is_some()
    }
    /// `(phase, seconds)` of the compilation.
    #[getter]
    fn phases(&self) -> Vec<(String, f64)> {
        self.phases.clone()
    }
    /// The warnings and remarks of the passes, rendered.
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
    /// The patch plans of the contractions, as JSON.
    fn explain(&self) -> String {
        self.explain.clone()
    }
    /// Peak bytes the compiled code held during the last call.
    #[getter]
    fn last_peak_bytes(&self) -> usize {
        self.exe.last_peak_bytes()
    }
    /// Run the weight preparation on the weights `(pointer, shape)` (all weight arguments,
    /// in order): the prepared values. One that is a weight itself comes back as a view
    /// of it (`owned` false): keep the weight alive as long as the program uses it.
    fn prepare(
        &self,
        py: Python<'_>,
        weights: &Bound<'_, pyo3::types::PyList>,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let Some(p) = &self.prepare else {
            return Err(PyValueError::new_err(
                "this program has no weight preparation",
            ));
        };
        let args = raw_args(weights)?;
        self.call(py, p, args, false)
    }
    /// Call the model: the kept arguments, then the prepared values, as `(pointer, shape)`.
    fn run(
        &self,
        py: Python<'_>,
        args: &Bound<'_, pyo3::types::PyList>,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let args = raw_args(args)?;
        self.call(py, &self.entry, args, true)
    }
}

/// Bytes the compiled code holds allocated now (all programs).
#[pyfunction]
fn live_bytes() -> usize {
    ftuner_runtime::live_bytes()
}

/// Threads of the parallel loops (every compiled program; `FTUNER_NUM_THREADS` sets the
/// default).
#[pyfunction]
fn set_num_threads(n: usize) -> PyResult<()> {
    if n == 0 {
        return Err(PyValueError::new_err(
            "the number of threads must be at least 1",
        ));
    }
    ftuner_runtime::set_num_threads(n);
    Ok(())
}

#[pyfunction]
fn num_threads() -> usize {
    ftuner_runtime::num_threads()
}

#[pymodule]
fn _ftuner(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(build_shared, m)?)?;
    m.add_function(wrap_pyfunction!(live_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(num_threads, m)?)?;
    m.add_class::<Program>()?;
    m.add_class::<Buffer>()?;
    m.add("CompileError", m.py().get_type::<CompileError>())?;
    Ok(())
}
