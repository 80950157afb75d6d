//! Ahead-of-time shared libraries: a compiled model as `lib<name>.so` with a C header,
//! usable without Python or ftuner (`ftuner-translate --emit=shared`, `ftuner.save`).
//!
//! The library holds the compiled functions (LLVM object code, its loops marked
//! `ftuner.parallel` run by the library's own thread pool: `aot/threads.c`), a C wrapper
//! generated here, and optionally the model's weights (bytes assembled in with
//! `.incbin`). Its C interface (`<name>.h`):
//!
//! ```c
//! typedef struct { void *data; void *owner; int32_t dtype; int32_t rank; int64_t shape[8]; } ftuner_tensor;
//! int  <name>_run(const ftuner_tensor *inputs, int32_t num_inputs,
//!                 ftuner_tensor *outputs, int32_t num_outputs, char *err, size_t err_len);
//! void <name>_free(ftuner_tensor *t);          /* an output's memory */
//! const char *<name>_signature(void);          /* JSON: inputs, dims, outputs */
//! void <name>_set_num_threads(int32_t n);       /* FTUNER_NUM_THREADS, else every CPU */
//! int32_t <name>_num_threads(void);
//! ```
//! Inputs and outputs are row-major contiguous. `run` checks every input (count, rank,
//! element type, static dims, each dynamic dim against its range and against the other
//! dims with the same symbol) and returns a non-zero code with a message in `err` before
//! any code runs; outputs are allocated by the call and freed with `<name>_free`. When the
//! entry has a weight-preparation function (`outline-weight-preparation`), the first call
//! runs it once on the embedded weights (thread-safe, `pthread_once`).
//!
//! This file builds the library and describes its interface (signature JSON, header); the
//! C wrapper is generated in `wrapper`.

use crate::{e, RuntimeError, Signature};
use ftuner_codegen::{Compiler, Emit, Target};
use ftuner_dialects::func_attrs::{self, Prepared};
use ftuner_dialects::ops;
use ftuner_ir::{Context, Ir, OpId, Type, TypeKind, DYNAMIC};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use wrapper::wrapper_c;

mod wrapper;

/// A dynamic dim's constraint: its range and the symbol tying it to other dims.
#[derive(Clone, Debug)]
pub struct DimRange {
    pub symbol: String,
    pub lo: i64,
    pub hi: Option<i64>,
}

/// What goes into the library besides the code.
#[derive(Clone, Debug, Default)]
pub struct SharedOptions {
    /// C identifier prefixing every exported symbol.
    pub name: String,
    /// The entry function.
    pub entry: String,
    /// Weights: a file of the weight arguments' bytes, each at a 64-byte aligned offset,
    /// in the order of the prepare function's arguments (or of `weight_args`), and the
    /// offsets.
    pub weights: Option<(PathBuf, Vec<usize>)>,
    /// Indices (in the exported signature) of the weight arguments, when the entry takes
    /// them itself (no prepare function).
    pub weight_args: Vec<usize>,
    /// Per input of `run` (the non-weight arguments, in order), per dim: a range for
    /// dynamic dims (None: any size >= 0).
    pub ranges: Vec<Vec<Option<DimRange>>>,
    /// Extra JSON fields of `<name>_signature()` (e.g. `"out_spec": ...`), without braces.
    pub extra_json: String,
    /// C compiler (default `cc`, or `$CC`).
    pub cc: Option<String>,
}

/// Element-type codes of `ftuner_tensor.dtype`.
pub fn dtype_code(t: Type) -> Option<(i32, &'static str)> {
    Some(match t.kind() {
        TypeKind::Float(ftuner_ir::FloatKind::F32) => (0, "float32"),
        TypeKind::Float(ftuner_ir::FloatKind::F64) => (1, "float64"),
        TypeKind::Integer { width: 64, .. } | TypeKind::Index => (2, "int64"),
        TypeKind::Integer { width: 32, .. } => (3, "int32"),
        TypeKind::Integer { width: 1, .. } => (4, "bool"),
        TypeKind::Integer { width: 8, .. } => (5, "int8"),
        TypeKind::Float(ftuner_ir::FloatKind::F16) => (6, "float16"),
        TypeKind::Float(ftuner_ir::FloatKind::BF16) => (7, "bfloat16"),
        _ => return None,
    })
}

fn sig_of(ir: &Ir, top: OpId, name: &str) -> Option<Signature> {
    let mut out = None;
    ir.walk_pre(top, &mut |o| {
        if ir.name(o) == ops::func::FuncOp::NAME && ir.symbol_name(o) == Some(name) {
            if let Some(t) = ir.attr(o, "function_type").and_then(|a| a.as_type()) {
                out = Some(Signature {
                    inputs: t.function_inputs().to_vec(),
                    results: t.function_results().to_vec(),
                });
            }
        }
    });
    out
}

fn prepared_of(ir: &Ir, top: OpId, entry: &str) -> Option<Prepared> {
    let mut out = None;
    ir.walk_pre(top, &mut |o| {
        if ir.name(o) == ops::func::FuncOp::NAME && ir.symbol_name(o) == Some(entry) {
            out = func_attrs::prepared(ir, o);
        }
    });
    out
}

fn check_buffers(what: &str, ts: &[Type]) -> Result<(), RuntimeError> {
    for (i, t) in ts.iter().enumerate() {
        if !t.is_memref() || !matches!(t.kind(), TypeKind::MemRef { layout: None, .. }) {
            return Err(e(format!(
                "{what} #{i} is {t}: a shared library takes and returns identity-layout buffers only"
            )));
        }
        if t.rank().unwrap_or(0) > 8 || dtype_code(t.element_type()).is_none() {
            return Err(e(format!("{what} #{i} ({t}) has no C equivalent")));
        }
    }
    Ok(())
}

fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn c_str(s: &str) -> String {
    let mut o = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' => o.push_str("\\\""),
            b'\\' => o.push_str("\\\\"),
            0x20..=0x7e => o.push(b as char),
            _ => {
                let _ = write!(o, "\\{b:03o}");
            }
        }
    }
    o.push('"');
    o
}

/// Build `out` (a shared library) and `header` from `ir`, a module on tensors or buffers
/// whose entry function is `opts.entry`.
pub fn build_shared(
    ctx: &Context,
    ir: &mut Ir,
    top: OpId,
    target: &Target,
    opts: &SharedOptions,
    out: &Path,
    header: &Path,
) -> Result<(), RuntimeError> {
    if opts.name.is_empty()
        || !opts
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(e(format!("'{}' is not a C identifier", opts.name)));
    }
    if ftuner_transforms::has_tensor_functions(ir, top) {
        crate::run_pipeline(ctx, ir, top, "builtin.module(bufferize)")?;
    }
    let entry = opts.entry.as_str();
    let sig = sig_of(ir, top, entry).ok_or_else(|| e(format!("no function @{entry}")))?;
    let prepared = prepared_of(ir, top, entry);
    let psig = match &prepared {
        Some(Prepared { prepare: p, .. }) => {
            Some(sig_of(ir, top, p).ok_or_else(|| e(format!("no function @{p}")))?)
        }
        None => None,
    };
    check_buffers("argument", &sig.inputs)?;
    check_buffers("result", &sig.results)?;
    if let Some(p) = &psig {
        check_buffers("weight", &p.inputs)?;
        check_buffers("prepared value", &p.results)?;
    }
    if let Some(p) =
        ftuner_transforms::to_llvm_pipeline(ir, top, true, false, target.vector_bytes())
    {
        crate::run_pipeline(ctx, ir, top, &p)?;
    }
    let compiler = Compiler::new();
    let m = compiler
        .module(ir, top, target, 3, &[])
        .map_err(|x| e(x.0))?;
    // The compiled code allocates through the wrapper's caching allocator (hidden in the
    // library: the process's own aligned_alloc and free are untouched).
    for (libc, ours) in [
        ("aligned_alloc", "ftuner_aot_alloc"),
        ("free", "ftuner_aot_free"),
    ] {
        if let Some(f) = m.get_function(libc) {
            f.as_global_value().set_name(ours);
        }
    }
    let obj = compiler.emit(&m, target, Emit::Obj).map_err(|x| e(x.0))?;
    let dir = std::env::temp_dir().join(format!(
        "ftuner-shared-{}-{}",
        std::process::id(),
        opts.name
    ));
    std::fs::create_dir_all(&dir).map_err(|x| e(format!("{}: {x}", dir.display())))?;
    let wrote = |p: PathBuf, bytes: &[u8]| -> Result<PathBuf, RuntimeError> {
        std::fs::write(&p, bytes).map_err(|x| e(format!("cannot write {}: {x}", p.display())))?;
        Ok(p)
    };
    let o = wrote(dir.join("model.o"), &obj)?;
    let c = wrote(
        dir.join("wrapper.c"),
        wrapper_c(opts, &sig, prepared.as_ref(), psig.as_ref())?.as_bytes(),
    )?;
    let h = header_c(opts, &sig, prepared.as_ref());
    std::fs::write(header, &h).map_err(|x| e(format!("cannot write {}: {x}", header.display())))?;
    // The wrapper includes `<name>.h`, whatever the header beside the library is called.
    wrote(dir.join(format!("{}.h", opts.name)), h.as_bytes())?;
    let mut sources = vec![c, o];
    if let Some((blob, _)) = &opts.weights {
        let abs = std::fs::canonicalize(blob).map_err(|x| e(format!("{}: {x}", blob.display())))?;
        let asm = format!(
            "  .section .rodata\n  .balign 64\n  .globl {n}_weight_bytes\n  .hidden {n}_weight_bytes\n{n}_weight_bytes:\n  .incbin {}\n  .section .note.GNU-stack,\"\",@progbits\n",
            c_str(&abs.to_string_lossy()),
            n = opts.name
        );
        sources.push(wrote(dir.join("weights.S"), asm.as_bytes())?);
    }
    let cc = opts
        .cc
        .clone()
        .or_else(|| std::env::var("CC").ok())
        .unwrap_or_else(|| "cc".into());
    let status = std::process::Command::new(&cc)
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(out)
        .arg(format!("-I{}", dir.display()))
        .args(&sources)
        .args(["-lm", "-lpthread"])
        .output()
        .map_err(|x| e(format!("cannot run the C compiler '{cc}': {x}")))?;
    if std::env::var_os("FTUNER_KEEP_TEMPS").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    if !status.status.success() {
        return Err(e(format!(
            "{cc} failed to link the shared library:\n{}",
            String::from_utf8_lossy(&status.stderr)
        )));
    }
    Ok(())
}

/// The non-weight arguments of the exported signature, in order: (index in the exported
/// signature, type). With a prepare function, the entry's kept arguments are they.
fn run_inputs(
    opts: &SharedOptions,
    sig: &Signature,
    prepared: Option<&Prepared>,
) -> Vec<(usize, Type)> {
    match prepared {
        Some(p) => p
            .inputs
            .iter()
            .enumerate()
            .map(|(k, i)| (*i, sig.inputs[k]))
            .collect(),
        None => sig
            .inputs
            .iter()
            .enumerate()
            .filter(|(i, _)| !opts.weight_args.contains(i))
            .map(|(i, t)| (i, *t))
            .collect(),
    }
}

fn signature_json(opts: &SharedOptions, sig: &Signature, prepared: Option<&Prepared>) -> String {
    let mut s = String::from("{\"inputs\": [");
    for (k, (_, t)) in run_inputs(opts, sig, prepared).iter().enumerate() {
        if k > 0 {
            s.push_str(", ");
        }
        let (_, dt) = dtype_code(t.element_type()).unwrap_or((0, "float32"));
        let dims: Vec<String> = t
            .shape()
            .unwrap_or(&[])
            .iter()
            .enumerate()
            .map(|(d, x)| {
                if *x != DYNAMIC {
                    return x.to_string();
                }
                match opts.ranges.get(k).and_then(|r| r.get(d)).cloned().flatten() {
                    Some(r) => format!(
                        "[{}, {}, {}]",
                        json_str(&r.symbol),
                        r.lo,
                        r.hi.map_or("null".to_string(), |h| h.to_string())
                    ),
                    None => format!("[{}, 0, null]", json_str(&format!("arg{k}.{d}"))),
                }
            })
            .collect();
        let _ = write!(
            s,
            "{{\"dtype\": \"{dt}\", \"dims\": [{}]}}",
            dims.join(", ")
        );
    }
    s.push_str("], \"outputs\": [");
    let outs: Vec<String> = sig
        .results
        .iter()
        .map(|t| {
            let (_, dt) = dtype_code(t.element_type()).unwrap_or((0, "float32"));
            format!(
                "{{\"dtype\": \"{dt}\", \"rank\": {}}}",
                t.rank().unwrap_or(0)
            )
        })
        .collect();
    s.push_str(&outs.join(", "));
    s.push(']');
    if !opts.extra_json.is_empty() {
        s.push_str(", ");
        s.push_str(&opts.extra_json);
    }
    s.push('}');
    s
}

fn header_c(opts: &SharedOptions, sig: &Signature, prepared: Option<&Prepared>) -> String {
    let n = &opts.name;
    let guard = format!("FTUNER_{}_H", n.to_uppercase());
    let mut h = format!(
        "/* {n}: a model compiled by ftuner (generated; do not edit). */\n#ifndef {guard}\n#define {guard}\n#include <stddef.h>\n#include <stdint.h>\n#ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n"
    );
    h.push_str("#ifndef FTUNER_TENSOR_DEFINED\n#define FTUNER_TENSOR_DEFINED\n");
    h.push_str("/* Element types of ftuner_tensor.dtype. */\nenum { FTUNER_F32 = 0, FTUNER_F64 = 1, FTUNER_I64 = 2, FTUNER_I32 = 3, FTUNER_BOOL = 4, FTUNER_I8 = 5, FTUNER_F16 = 6, FTUNER_BF16 = 7 };\n");
    h.push_str("/* A row-major contiguous tensor. `owner` is set on outputs: pass them to <model>_free. */\ntypedef struct {\n  void *data;\n  void *owner;\n  int32_t dtype;\n  int32_t rank;\n  int64_t shape[8];\n} ftuner_tensor;\n#endif\n\n");
    let _ = writeln!(h, "/* Inputs of {n}_run, in order:");
    for (k, (_, t)) in run_inputs(opts, sig, prepared).iter().enumerate() {
        let _ = writeln!(h, " *   #{k}: {t}");
    }
    let _ = writeln!(h, " * Outputs:");
    for (k, t) in sig.results.iter().enumerate() {
        let _ = writeln!(h, " *   #{k}: {t}");
    }
    h.push_str(" */\n");
    let _ = writeln!(
        h,
        "#define {}_NUM_INPUTS {}",
        n.to_uppercase(),
        run_inputs(opts, sig, prepared).len()
    );
    let _ = writeln!(
        h,
        "#define {}_NUM_OUTPUTS {}\n",
        n.to_uppercase(),
        sig.results.len()
    );
    let _ = writeln!(h, "/* Run the model. Returns 0, or a non-zero code with a message in err (when err_len > 0):\n * 1 wrong arguments (count, rank, type, shape), 2 out of memory, 3 a run-time check of the\n * model failed (an index or size out of its bounds: the message names the op and its\n * location; no output is set). */");
    let _ = writeln!(h, "int {n}_run(const ftuner_tensor *inputs, int32_t num_inputs, ftuner_tensor *outputs, int32_t num_outputs, char *err, size_t err_len);");
    let _ = writeln!(
        h,
        "/* Free the memory of an output of {n}_run. */\nvoid {n}_free(ftuner_tensor *t);"
    );
    let _ = writeln!(h, "/* The signature as JSON: each input's dtype and dims (static sizes, or [symbol, min, max]). */\nconst char *{n}_signature(void);");
    let _ = writeln!(h, "/* Threads of the model's parallel loops, the caller's included: FTUNER_NUM_THREADS when\n * set, else every CPU the process may run on; 1 runs every loop on the calling thread. A\n * call made while another call holds the threads runs on its own thread alone. */\nvoid {n}_set_num_threads(int32_t n);\nint32_t {n}_num_threads(void);");
    h.push_str("\n#ifdef __cplusplus\n}\n#endif\n#endif\n");
    h
}

/// `lib<stem>.so` → `<stem>.h` beside it.
pub fn header_path(out: &Path) -> PathBuf {
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "model".into());
    // `lib.so` keeps its name (`lib.h`): stripping "lib" would leave a hidden `.h`.
    let stem = match stem.strip_prefix("lib") {
        Some(rest) if !rest.is_empty() => rest.to_string(),
        _ => stem,
    };
    out.with_file_name(format!("{stem}.h"))
}

/// A C identifier from a file name (`libbert-base.so` → `bert_base`).
pub fn c_name(out: &Path) -> String {
    let h = header_path(out);
    let stem = h
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let mut s: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert_str(0, "model_");
    }
    s
}
