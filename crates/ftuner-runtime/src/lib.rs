//! # ftuner-runtime
//!
//! Compile a module for this machine and call its functions with run-time shapes.
//!
//! [`Executable::compile`] takes a module at any level the pipeline knows (tensors after
//! `lower-ukernels`, buffers, or the `llvm` dialect), finishes lowering it
//! (`bufferize`, `convert-linalg-to-loops`, `canonicalize`, `cse`,
//! `convert-parallel-loops-to-runtime`, `convert-to-llvm`),
//! records the buffer-level signature of every public function, and JIT-compiles it for
//! the host (O3, the host CPU's features). [`Executable::call`] checks the arguments
//! against that signature (rank, element type, every static dimension) before any code
//! runs, copies them into 64-byte aligned buffers, builds MLIR memref descriptors, calls
//! the function through its packed entry, copies the results out and frees their buffers.
//!
//! Loops the pipeline marked `ftuner.parallel` run on a persistent thread pool
//! ([`set_num_threads`]; `FTUNER_NUM_THREADS`, else every core; [`set_spin`]: how long idle
//! workers spin before they sleep).

use ftuner_dialects::ops;
pub mod aot;
pub mod cuda;
pub mod raw;
pub use ftuner_codegen::parallel::{num_threads, set_num_threads, set_spin};
pub use ftuner_codegen::{allow_native_calls, Target};
use ftuner_codegen::{OrcJit, PackedFn};
use ftuner_interp::{RtVal, Tensor, Word};
use ftuner_ir::{Context, Ir, OpId, Type, TypeKind, DYNAMIC};
pub use raw::{free_output, Owner, RawArg, RawOutput};
use rustc_hash::FxHashMap;
use std::alloc::Layout;
use std::ffi::c_void;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A run-time error: bad arguments, a failed compilation.
#[derive(Debug, Clone)]
pub struct RuntimeError(pub String);

impl std::fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RuntimeError {}

pub(crate) fn e(m: impl std::fmt::Display) -> RuntimeError {
    RuntimeError(m.to_string())
}

/// The buffer-level signature of a function.
#[derive(Clone, Debug)]
pub struct Signature {
    pub inputs: Vec<Type>,
    pub results: Vec<Type>,
}

/// A module compiled for this machine.
pub struct Executable {
    /// Kept alive for the code it holds; never used after `compile` (every entry point
    /// is resolved there).
    _jit: OrcJit,
    last_peak: AtomicUsize,
    sigs: FxHashMap<String, Signature>,
    entries: FxHashMap<String, PackedFn>,
    /// Seconds spent lowering and compiling.
    pub compile_seconds: f64,
    /// Seconds per phase of `compile`: bufferize, the conversion to the llvm dialect, LLVM
    /// IR, its optimization and machine code (on [`codegen_threads`] threads), linking.
    pub phases: Vec<(&'static str, f64)>,
}

/// Threads that compile a module: `FTUNER_CODEGEN_THREADS` if set, else every core.
pub fn codegen_threads() -> usize {
    std::env::var("FTUNER_CODEGEN_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n: &usize| *n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// LLVM's optimization level for the JIT: `FTUNER_OPT_LEVEL` (0-3) if set, else 2. O2
/// against O3 on the same machine, alternated (Xeon family 6 model 167, one thread):
/// BERT-base's LLVM phase 3.6 -> 2.7 s with the same model speed (median over eager
/// 1.14/1.22x at O3, 1.17/1.21x at O2, `examples/serve_bert.py --requests 3`), and
/// ftuner-bench W1 time ratio to OpenBLAS 1.00 (O3) vs 1.02 (O2), inside the noise: the
/// register tiles are explicit vector code already, and what O3 adds (more aggressive
/// loop unrolling and inlining) only grows the code.
pub fn jit_opt_level() -> u8 {
    std::env::var("FTUNER_OPT_LEVEL")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n: &u8| *n <= 3)
        .unwrap_or(2)
}

fn registry() -> ftuner_pass::PassRegistry {
    let mut reg = ftuner_pass::PassRegistry::default();
    ftuner_transforms::register_passes(&mut reg);
    reg
}

fn run_pipeline(ctx: &Context, ir: &mut Ir, top: OpId, p: &str) -> Result<(), RuntimeError> {
    let mut pm = ftuner_pass::PassManager::from_pipeline(&registry(), p)
        .map_err(|x| e(format!("pipeline {p}: {x}")))?;
    pm.run(ctx, ir, top).map_err(|x| {
        let _ = ctx;
        let src = ftuner_ir::SourceMap::default();
        let d: Vec<String> = x
            .diagnostics
            .iter()
            .map(|d| ftuner_ir::diag::render(d, &src))
            .collect();
        e(format!("{}\n{}", x.message, d.join("")))
    })
}

fn public_funcs(ir: &Ir, top: OpId) -> Vec<OpId> {
    let mut out = vec![];
    ir.walk_pre(top, &mut |o| {
        if ir.name(o) == ops::func::FuncOp::NAME
            && ir.attr(o, "sym_visibility").and_then(|a| a.as_str()) != Some("private")
            && ir
                .regions_of(o)
                .first()
                .is_some_and(|r| ir.region_entry(*r).is_some())
        {
            out.push(o);
        }
    });
    out
}

impl Executable {
    /// Lower what is left of `ir` to the llvm dialect and JIT-compile it for the host.
    pub fn compile(ctx: &Context, ir: &mut Ir, top: OpId) -> Result<Executable, RuntimeError> {
        let t0 = Instant::now();
        // Bufferize first, so the signatures recorded are the buffer-level ones.
        if ftuner_transforms::has_tensor_functions(ir, top) {
            run_pipeline(ctx, ir, top, "builtin.module(bufferize)")?;
        }
        let mut sigs = FxHashMap::default();
        for f in public_funcs(ir, top) {
            let t = ir
                .attr(f, "function_type")
                .and_then(|a| a.as_type())
                .ok_or_else(|| e("a function without a type"))?;
            let name = ir.symbol_name(f).unwrap_or_default().to_string();
            sigs.insert(
                name,
                Signature {
                    inputs: t.function_inputs().to_vec(),
                    results: t.function_results().to_vec(),
                },
            );
        }
        let mut phases = vec![("bufferize", t0.elapsed().as_secs_f64())];
        let t = Instant::now();
        let host = Target::host();
        if let Some(p) =
            ftuner_transforms::to_llvm_pipeline(ir, top, true, false, host.vector_bytes())
        {
            run_pipeline(ctx, ir, top, &p)?;
        }
        phases.push(("to llvm dialect", t.elapsed().as_secs_f64()));
        let t = Instant::now();
        let text = ftuner_codegen::llvm_text(ir, top, &host, &[]).map_err(|x| e(x.0))?;
        phases.push(("llvm ir", t.elapsed().as_secs_f64()));
        let t = Instant::now();
        let threads = codegen_threads();
        let jit = OrcJit::compile(&text, &host, jit_opt_level(), threads).map_err(|x| e(x.0))?;
        phases.push((
            "llvm optimization and machine code",
            t.elapsed().as_secs_f64(),
        ));
        let t = Instant::now();
        let mut entries = FxHashMap::default();
        for name in sigs.keys() {
            entries.insert(name.clone(), jit.packed(name).map_err(|x| e(x.0))?);
        }
        phases.push(("link", t.elapsed().as_secs_f64()));
        Ok(Executable {
            _jit: jit,
            last_peak: AtomicUsize::new(0),
            sigs,
            entries,
            compile_seconds: t0.elapsed().as_secs_f64(),
            phases,
        })
    }

    /// Peak bytes the compiled code held allocated during the last call (temporaries and
    /// results; not the inputs, which the runtime allocates).
    pub fn last_peak_bytes(&self) -> usize {
        self.last_peak.load(Ordering::Relaxed)
    }

    /// The names of the public functions.
    pub fn functions(&self) -> impl Iterator<Item = &str> {
        self.sigs.keys().map(|s| s.as_str())
    }

    /// The packed entry and signature of `name`.
    pub(crate) fn entry(&self, name: &str) -> Result<(PackedFn, &Signature), RuntimeError> {
        let sig = self
            .sigs
            .get(name)
            .ok_or_else(|| e(format!("no public function @{name}")))?;
        let f = *self
            .entries
            .get(name)
            .ok_or_else(|| e(format!("no compiled function @{name}")))?;
        Ok((f, sig))
    }

    pub fn signature(&self, name: &str) -> Option<&Signature> {
        self.sigs.get(name)
    }

    /// Call `name` on tensors/scalars; returns tensors/scalars.
    pub fn call(&self, name: &str, args: &[RtVal]) -> Result<Vec<RtVal>, RuntimeError> {
        let prepared = self.prepare(name, args)?;
        self.invoke(&prepared).map(|r| r.0)
    }

    /// Run `name` `n` times on the same inputs; returns each run's time (the compiled
    /// function alone: not the copies of inputs in and results out).
    pub fn bench(
        &self,
        name: &str,
        args: &[RtVal],
        n: usize,
    ) -> Result<Vec<Duration>, RuntimeError> {
        let prepared = self.prepare(name, args)?;
        let mut out = vec![];
        for _ in 0..n.max(1) {
            let (r, t) = self.invoke(&prepared)?;
            out.push(t);
            drop(r);
        }
        Ok(out)
    }

    /// Check and copy the arguments of `name` once, for repeated [`Executable::time`]s.
    pub fn prepare(&self, name: &str, args: &[RtVal]) -> Result<Prepared, RuntimeError> {
        let (f, sig) = self.entry(name)?;
        let sig = sig.clone();
        if args.len() != sig.inputs.len() {
            return Err(e(format!(
                "@{name} takes {} arguments, got {}",
                sig.inputs.len(),
                args.len()
            )));
        }
        let mut inputs = vec![];
        for (i, (a, t)) in args.iter().zip(&sig.inputs).enumerate() {
            inputs.push(Input::new(i, a, *t)?);
        }
        Ok(Prepared { f, sig, inputs })
    }

    /// Run a prepared call once; the time of the compiled function alone.
    pub fn time(&self, p: &Prepared) -> Result<Duration, RuntimeError> {
        self.invoke(p).map(|r| r.1)
    }

    fn invoke(&self, p: &Prepared) -> Result<(Vec<RtVal>, Duration), RuntimeError> {
        let by_ptr = !p.sig.results.is_empty()
            && (p.sig.results.len() > 1 || p.sig.results.iter().any(|t| t.is_memref()));
        // The results: one struct of the result types, natural alignment.
        let mut offsets = vec![];
        let mut size = 0usize;
        for t in &p.sig.results {
            let (sz, al) = field_layout(*t)?;
            size = size.div_ceil(al) * al;
            offsets.push(size);
            size += sz;
        }
        let result = AlignedBuf::new(size.max(8))?;
        let mut ptrs: Vec<*mut c_void> = vec![];
        if by_ptr {
            ptrs.push(result.ptr as *mut c_void);
        }
        for inp in &p.inputs {
            ptrs.push(inp.arg_ptr());
        }
        if !by_ptr && !p.sig.results.is_empty() {
            ptrs.push(result.ptr as *mut c_void);
        }
        ftuner_codegen::memstats::reset_peak();
        let base = ftuner_codegen::memstats::current();
        // Until the results are read: blocks the program deallocates stay allocated.
        let _call = ftuner_codegen::memstats::enter_call();
        ftuner_codegen::status::clear();
        let t0 = Instant::now();
        // SAFETY: the packed entry reads one pointer per parameter (and writes the result
        // through the last one), all of which point at live, large-enough memory above;
        // argument shapes were checked against the signature.
        unsafe { (p.f)(ptrs.as_mut_ptr()) };
        let took = t0.elapsed();
        if let Some(m) = ftuner_codegen::status::take() {
            // The results are undefined: not read, not freed.
            return Err(e(format!("run-time check failed: {m}")));
        }
        self.last_peak.store(
            ftuner_codegen::memstats::peak().saturating_sub(base),
            Ordering::Relaxed,
        );
        let owned: Vec<usize> = p.inputs.iter().filter_map(|i| i.buffer_addr()).collect();
        let mut out = vec![];
        for (t, off) in p.sig.results.iter().zip(offsets) {
            // SAFETY: the callee wrote a value of type `t` at `off`.
            out.push(unsafe { read_result(result.ptr.add(off), *t, &owned)? });
        }
        Ok((out, took))
    }
}

// SAFETY: after `compile` an Executable is immutable but for an atomic counter: calls go
// through the resolved function pointers (the JIT is never touched again), and compiled
// code keeps no state between calls except what the thread-safe runtime (thread pool,
// counted allocator) holds. Dropping it drops the JIT, whose LLVM context is not shared.
unsafe impl Send for Executable {}
unsafe impl Sync for Executable {}

/// A call with its arguments checked and copied into aligned buffers.
pub struct Prepared {
    f: PackedFn,
    sig: Signature,
    inputs: Vec<Input>,
}

/// 64-byte aligned bytes, freed on drop.
struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

impl AlignedBuf {
    fn new(bytes: usize) -> Result<AlignedBuf, RuntimeError> {
        let layout = Layout::from_size_align(bytes.max(64), 64).map_err(|x| e(x.to_string()))?;
        // SAFETY: non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(e(format!("cannot allocate {bytes} bytes")));
        }
        Ok(AlignedBuf { ptr, layout })
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `new`.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// Bytes and alignment of a result field.
pub(crate) fn field_layout(t: Type) -> Result<(usize, usize), RuntimeError> {
    if let Some(r) = t.rank().filter(|_| t.is_memref()) {
        return Ok((8 * (3 + 2 * r), 8));
    }
    let b = elem_bytes(t)?;
    Ok((b, b))
}

pub(crate) fn elem_bytes(t: Type) -> Result<usize, RuntimeError> {
    match t.kind() {
        TypeKind::Index => Ok(8),
        TypeKind::Integer { width, .. } => Ok((*width as usize).div_ceil(8).next_power_of_two()),
        TypeKind::Float(k) => Ok((k.width() as usize).div_ceil(8)),
        _ => Err(e(format!(
            "values of type {t} cannot cross the call boundary"
        ))),
    }
}

/// Encode `x` as element type `t` at `p`.
///
/// # Safety
/// `p` must point at `elem_bytes(t)` writable bytes.
pub(crate) unsafe fn put(p: *mut u8, x: Word, t: Type) {
    unsafe {
        match t.kind() {
            TypeKind::Float(ftuner_ir::FloatKind::F32) => {
                (p as *mut f32).write_unaligned(x.f() as f32)
            }
            TypeKind::Float(ftuner_ir::FloatKind::F64) => (p as *mut f64).write_unaligned(x.f()),
            TypeKind::Float(_) => {
                let bits = ftuner_ir::float::f64_to_bits(x.f(), t) as u16;
                (p as *mut u16).write_unaligned(bits)
            }
            // The low bytes of the sign-extended word.
            TypeKind::Index => (p as *mut i64).write_unaligned(x.i()),
            TypeKind::Integer { width, .. } => match width {
                1..=8 => p.write(x.i() as u8),
                9..=16 => (p as *mut i16).write_unaligned(x.i() as i16),
                17..=32 => (p as *mut i32).write_unaligned(x.i() as i32),
                _ => (p as *mut i64).write_unaligned(x.i()),
            },
            _ => {}
        }
    }
}

/// Decode an element of type `t` at `p`.
///
/// # Safety
/// `p` must point at `elem_bytes(t)` readable bytes.
pub(crate) unsafe fn get(p: *const u8, t: Type) -> Word {
    unsafe {
        let int = |v: i64| ftuner_interp::round_to(Word::int(v), t);
        match t.kind() {
            TypeKind::Float(ftuner_ir::FloatKind::F32) => {
                Word::float((p as *const f32).read_unaligned() as f64)
            }
            TypeKind::Float(ftuner_ir::FloatKind::F64) => {
                Word::float((p as *const f64).read_unaligned())
            }
            TypeKind::Float(k) => Word::float(ftuner_ir::float::bits_to_f64(
                (p as *const u16).read_unaligned() as u128,
                *k,
            )),
            TypeKind::Index => Word::int((p as *const i64).read_unaligned()),
            // Wrapped to the width (an i3 in a byte reads its low three bits).
            TypeKind::Integer { width, .. } => match width {
                1..=8 => int(p.read() as i64),
                9..=16 => int((p as *const i16).read_unaligned() as i64),
                17..=32 => int((p as *const i32).read_unaligned() as i64),
                _ => int((p as *const i64).read_unaligned()),
            },
            _ => Word::float(f64::NAN),
        }
    }
}

/// One argument, ready to pass.
enum Input {
    Buffer { data: AlignedBuf, desc: Vec<i64> },
    Scalar(AlignedBuf),
}

impl Input {
    fn new(i: usize, a: &RtVal, t: Type) -> Result<Input, RuntimeError> {
        if t.is_memref() {
            let shape = t.shape().unwrap_or(&[]);
            let tensor: Tensor = match a {
                RtVal::Tensor(x) => (**x).clone(),
                RtVal::MemRef(m) => m.to_tensor().map_err(e)?,
                RtVal::Scalar(_) => {
                    return Err(e(format!("argument #{i} must be a buffer of type {t}")))
                }
            };
            if tensor.shape.len() != shape.len()
                || shape
                    .iter()
                    .zip(&tensor.shape)
                    .any(|(d, x)| *d != DYNAMIC && *d as usize != *x)
            {
                return Err(e(format!(
                    "argument #{i} has shape {:?}, which does not match {t}",
                    tensor.shape
                )));
            }
            let elem = t.element_type();
            if tensor.elem != elem {
                return Err(e(format!(
                    "argument #{i} holds {} values, the function takes {t}",
                    tensor.elem
                )));
            }
            if !matches!(t.kind(), TypeKind::MemRef { layout: None, .. }) {
                return Err(e(format!(
                    "argument #{i}: only identity-layout memref arguments can be passed, got {t}"
                )));
            }
            let eb = elem_bytes(elem)?;
            let n = tensor.data.len();
            let data = AlignedBuf::new(n.saturating_mul(eb).max(1))?;
            for (k, x) in tensor.data.iter().enumerate() {
                // SAFETY: k < n and the buffer holds n * eb bytes.
                unsafe { put(data.ptr.add(k * eb), *x, elem) };
            }
            let mut desc = vec![data.ptr as i64, data.ptr as i64, 0];
            desc.extend(tensor.shape.iter().map(|d| *d as i64));
            desc.extend(ftuner_interp::row_major(&tensor.shape));
            Ok(Input::Buffer { data, desc })
        } else {
            let x = a
                .scalar()
                .ok_or_else(|| e(format!("argument #{i} must be a scalar of type {t}")))?;
            let slot = AlignedBuf::new(8)?;
            // SAFETY: 8 bytes hold any scalar.
            unsafe { put(slot.ptr, x, t) };
            Ok(Input::Scalar(slot))
        }
    }
    fn arg_ptr(&self) -> *mut c_void {
        match self {
            Input::Buffer { desc, .. } => desc.as_ptr() as *mut c_void,
            Input::Scalar(s) => s.ptr as *mut c_void,
        }
    }
    fn buffer_addr(&self) -> Option<usize> {
        match self {
            Input::Buffer { data, .. } => Some(data.ptr as usize),
            Input::Scalar(_) => None,
        }
    }
}

/// Read a result of type `t` at `p`; a buffer result is copied out and freed (unless it
/// is one of the inputs or a constant global).
///
/// # Safety
/// `p` must point at a value of type `t` written by compiled code.
unsafe fn read_result(p: *const u8, t: Type, inputs: &[usize]) -> Result<RtVal, RuntimeError> {
    unsafe {
        if !t.is_memref() {
            return Ok(RtVal::Scalar(get(p, t)));
        }
        let r = t.rank().unwrap_or(0);
        let d = std::slice::from_raw_parts(p as *const i64, 3 + 2 * r);
        let (alloc, aligned, offset) = (d[0] as usize, d[1] as usize, d[2]);
        released_result(alloc)?;
        let sizes: Vec<usize> = d[3..3 + r].iter().map(|x| (*x).max(0) as usize).collect();
        let strides = &d[3 + r..3 + 2 * r];
        let elem = t.element_type();
        let eb = elem_bytes(elem)?;
        // Sizes the compiled code computed: refused rather than trusted with a panic.
        let n = sizes
            .iter()
            .try_fold(1usize, |a, s| a.checked_mul(*s))
            .filter(|n| *n <= isize::MAX as usize / 8)
            .ok_or_else(|| {
                e(format!(
                    "the compiled code returned a buffer of sizes {sizes:?}"
                ))
            })?;
        let mut data = Vec::new();
        data.try_reserve_exact(n).map_err(|_| {
            e(format!(
                "cannot hold a result of sizes {sizes:?} ({n} elements) in memory"
            ))
        })?;
        let mut point = vec![0usize; r];
        for _ in 0..n {
            let lin: i64 = offset
                + point
                    .iter()
                    .zip(strides)
                    .map(|(i, s)| *i as i64 * s)
                    .sum::<i64>();
            data.push(get(
                (aligned as *const u8).offset(lin as isize * eb as isize),
                elem,
            ));
            for k in (0..r).rev() {
                point[k] += 1;
                if point[k] < sizes[k] {
                    break;
                }
                point[k] = 0;
            }
        }
        if alloc != 0 && alloc != 0xdead_beef && !inputs.contains(&alloc) {
            ftuner_codegen::memstats::counted_free(alloc as *mut c_void);
        }
        Ok(RtVal::Tensor(Rc::new(Tensor::new(sizes, elem, data))))
    }
}

/// A result whose buffer the program deallocated itself (`memref.dealloc`, then returned)
/// is an error, not a dangling buffer handed out.
pub(crate) fn released_result(alloc: usize) -> Result<(), RuntimeError> {
    if alloc != 0 && ftuner_codegen::memstats::is_released(alloc as *const c_void) {
        return Err(e(
            "the compiled function returned a buffer its program deallocated (memref.dealloc)"
                .to_string(),
        ));
    }
    Ok(())
}

/// Bytes compiled code holds allocated now (every executable of the process).
pub fn live_bytes() -> usize {
    ftuner_codegen::memstats::current()
}
