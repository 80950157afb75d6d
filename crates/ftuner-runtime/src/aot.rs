//! Ahead-of-time shared libraries: a compiled model as `lib<name>.so` with a C header,
//! usable without Python or ftuner (`ftuner-translate --emit=shared`, `ftuner.save`).
//!
//! The library holds the compiled functions (LLVM object code, serial), a C wrapper
//! generated here, and optionally the model's weights (bytes assembled in with
//! `.incbin`). Its C interface (`<name>.h`):
//!
//! ```c
//! typedef struct { void *data; void *owner; int32_t dtype; int32_t rank; int64_t shape[8]; } ftuner_tensor;
//! int  <name>_run(const ftuner_tensor *inputs, int32_t num_inputs,
//!                 ftuner_tensor *outputs, int32_t num_outputs, char *err, size_t err_len);
//! void <name>_free(ftuner_tensor *t);          /* an output's memory */
//! const char *<name>_signature(void);          /* JSON: inputs, dims, outputs */
//! ```
//! Inputs and outputs are row-major contiguous. `run` checks every input (count, rank,
//! element type, static dims, each dynamic dim against its range and against the other
//! dims with the same symbol) and returns a non-zero code with a message in `err` before
//! any code runs; outputs are allocated by the call and freed with `<name>_free`. When the
//! entry has a weight-preparation function (`outline-weight-preparation`), the first call
//! runs it once on the embedded weights (thread-safe, `pthread_once`).

use crate::{e, elem_bytes, RuntimeError, Signature};
use ftuner_codegen::{Compiler, Emit, Target};
use ftuner_ir::{Context, Ir, OpId, Type, TypeKind, DYNAMIC};
use std::fmt::Write;
use std::path::{Path, PathBuf};

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
        if ir.name(o) == "func.func" && ir.symbol_name(o) == Some(name) {
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

fn prepared_of(ir: &Ir, top: OpId, entry: &str) -> Option<(String, Vec<usize>)> {
    let mut out = None;
    ir.walk_pre(top, &mut |o| {
        if ir.name(o) == "func.func" && ir.symbol_name(o) == Some(entry) {
            if let Some(d) = ir.attr(o, "ftuner.prepared").and_then(|a| a.as_dict()) {
                let kept = d
                    .iter()
                    .find(|(k, _)| k == "inputs")
                    .and_then(|(_, a)| a.as_dense_i64s())
                    .unwrap_or_default();
                out = Some((
                    format!("{entry}_prepare"),
                    kept.into_iter().map(|k| k as usize).collect(),
                ));
            }
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
        Some((p, _)) => Some(sig_of(ir, top, p).ok_or_else(|| e(format!("no function @{p}")))?),
        None => None,
    };
    check_buffers("argument", &sig.inputs)?;
    check_buffers("result", &sig.results)?;
    if let Some(p) = &psig {
        check_buffers("weight", &p.inputs)?;
        check_buffers("prepared value", &p.results)?;
    }
    if let Some(p) = ftuner_transforms::to_llvm_pipeline(ir, top, false, false) {
        crate::run_pipeline(ctx, ir, top, &p)?;
    }
    let compiler = Compiler::new();
    let m = compiler
        .module(ir, top, target, 3, &[])
        .map_err(|x| e(x.0))?;
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
        .arg(format!(
            "-I{}",
            header
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .display()
        ))
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
    prepared: Option<&(String, Vec<usize>)>,
) -> Vec<(usize, Type)> {
    match prepared {
        Some((_, kept)) => kept
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

fn signature_json(
    opts: &SharedOptions,
    sig: &Signature,
    prepared: Option<&(String, Vec<usize>)>,
) -> String {
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

fn header_c(
    opts: &SharedOptions,
    sig: &Signature,
    prepared: Option<&(String, Vec<usize>)>,
) -> String {
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
    h.push_str("\n#ifdef __cplusplus\n}\n#endif\n#endif\n");
    h
}

/// Words of a rank-`r` memref descriptor (allocated, aligned, offset, sizes, strides).
fn words(t: Type) -> usize {
    3 + 2 * t.rank().unwrap_or(0)
}

fn wrapper_c(
    opts: &SharedOptions,
    sig: &Signature,
    prepared: Option<&(String, Vec<usize>)>,
    psig: Option<&Signature>,
) -> Result<String, RuntimeError> {
    let n = &opts.name;
    let entry = &opts.entry;
    let ins = run_inputs(opts, sig, prepared);
    let mut c = format!("/* Generated by ftuner: the C interface of {n}. */\n#include \"{n}.h\"\n#include <pthread.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n");
    // Prototypes of the compiled functions' C interfaces.
    let cif = |name: &str, s: &Signature| {
        let mut ps = vec![];
        if !s.results.is_empty() {
            ps.push("int64_t *".to_string());
        }
        ps.extend(s.inputs.iter().map(|_| "int64_t *".to_string()));
        format!("void _mlir_ciface_{name}({});\n", ps.join(", "))
    };
    c.push_str(&cif(entry, sig));
    if let (Some((p, _)), Some(ps)) = (prepared, psig) {
        c.push_str(&cif(p, ps));
    }
    let _ = writeln!(
        c,
        "static const char SIGNATURE[] = {};",
        c_str(&signature_json(opts, sig, prepared))
    );
    let _ = writeln!(c, "const char *{n}_signature(void) {{ return SIGNATURE; }}");
    let _ = writeln!(
        c,
        "const char *ftuner_model_name(void) {{ return {}; }}\n",
        c_str(n)
    );
    // Input checks: per input, per dim: static size (>= 0) or -1, range, symbol id.
    let mut syms: Vec<String> = vec![];
    let _ = writeln!(
        c,
        "static const int32_t IN_DTYPE[] = {{{}}};",
        ins.iter()
            .map(|(_, t)| dtype_code(t.element_type()).map_or(0, |x| x.0).to_string())
            .chain(["0".into()])
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        c,
        "static const int32_t IN_RANK[] = {{{}}};",
        ins.iter()
            .map(|(_, t)| t.rank().unwrap_or(0).to_string())
            .chain(["0".into()])
            .collect::<Vec<_>>()
            .join(", ")
    );
    let (mut stat, mut lo, mut hi, mut sym) = (vec![], vec![], vec![], vec![]);
    for (k, (_, t)) in ins.iter().enumerate() {
        for d in 0..8 {
            let x = t.shape().and_then(|s| s.get(d)).copied();
            let r = opts.ranges.get(k).and_then(|r| r.get(d)).cloned().flatten();
            stat.push(match x {
                Some(x) if x != DYNAMIC => x,
                _ => -1,
            });
            lo.push(r.as_ref().map_or(0, |r| r.lo));
            hi.push(r.as_ref().and_then(|r| r.hi).unwrap_or(i64::MAX));
            sym.push(match &r {
                Some(r) => {
                    let i = syms.iter().position(|s| *s == r.symbol).unwrap_or_else(|| {
                        syms.push(r.symbol.clone());
                        syms.len() - 1
                    });
                    i as i64
                }
                None => -1,
            });
        }
    }
    let arr = |v: &[i64]| {
        v.iter()
            .map(|x| format!("{x}LL"))
            .chain(["0".into()])
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(c, "static const int64_t IN_STATIC[] = {{{}}};", arr(&stat));
    let _ = writeln!(c, "static const int64_t IN_LO[] = {{{}}};", arr(&lo));
    let _ = writeln!(c, "static const int64_t IN_HI[] = {{{}}};", arr(&hi));
    let _ = writeln!(c, "static const int64_t IN_SYM[] = {{{}}};", arr(&sym));
    let _ = writeln!(
        c,
        "static const char *SYM_NAME[] = {{{}}};\n",
        syms.iter()
            .map(|s| c_str(s))
            .chain(["0".into()])
            .collect::<Vec<_>>()
            .join(", ")
    );
    c.push_str(&format!(
        "#define NUM_IN {}\n#define NUM_OUT {}\n#define NUM_SYM {}\n",
        ins.len(),
        sig.results.len(),
        syms.len()
    ));
    // Weights and preparation.
    let weight_types: Vec<Type> = match psig {
        Some(ps) => ps.inputs.clone(),
        None => opts.weight_args.iter().map(|i| sig.inputs[*i]).collect(),
    };
    let wtotal: usize = weight_types.iter().map(|t| words(*t)).sum();
    let ptotal: usize = psig.map_or(0, |ps| ps.results.iter().map(|t| words(*t)).sum());
    let _ = writeln!(
        c,
        "static int64_t WEIGHTS[{}];\nstatic int64_t PREPARED[{}];",
        wtotal.max(1),
        ptotal.max(1)
    );
    c.push_str(RUNTIME_C);
    if !weight_types.is_empty() {
        let Some((_, offs)) = &opts.weights else {
            return Err(e(
                "the model has weight arguments but no weights were given",
            ));
        };
        if offs.len() != weight_types.len() {
            return Err(e(format!(
                "{} weights given, the model takes {}",
                offs.len(),
                weight_types.len()
            )));
        }
        let _ = writeln!(c, "extern const unsigned char {n}_weight_bytes[];");
        c.push_str("static void init_weights(void) {\n  int64_t *d = WEIGHTS;\n");
        for (t, off) in weight_types.iter().zip(offs) {
            let shape = t.shape().unwrap_or(&[]);
            if shape.contains(&DYNAMIC) {
                return Err(e(format!("a weight of dynamic shape ({t})")));
            }
            let _ = writeln!(c, "  {{ int64_t s[] = {{{}}}; put_desc(d, (void *)({n}_weight_bytes + {off}), {}, s); d += {}; }}", shape.iter().map(|x| x.to_string()).chain(["0".into()]).collect::<Vec<_>>().join(", "), shape.len(), words(*t));
        }
        c.push_str("}\n");
    } else {
        c.push_str("static void init_weights(void) {}\n");
    }
    if let (Some((p, _)), Some(ps)) = (prepared, psig) {
        c.push_str("static void prepare(void) {\n  init_weights();\n  FAILED_MSG = 0;\n");
        let mut args = vec!["PREPARED".to_string()];
        let mut k = 0;
        for t in &ps.inputs {
            args.push(format!("WEIGHTS + {k}"));
            k += words(*t);
        }
        let _ = writeln!(
            c,
            "  _mlir_ciface_{p}({});\n  PREPARE_FAILED = FAILED_MSG;\n}}",
            args.join(", ")
        );
    } else {
        c.push_str("static void prepare(void) { init_weights(); }\n");
    }
    c.push_str("static pthread_once_t PREPARE_ONCE = PTHREAD_ONCE_INIT;\n\n");
    // run()
    let _ = writeln!(c, "int {n}_run(const ftuner_tensor *inputs, int32_t num_inputs, ftuner_tensor *outputs, int32_t num_outputs, char *err, size_t err_len) {{");
    c.push_str("  int rc = check_inputs(inputs, num_inputs, num_outputs, err, err_len);\n  if (rc) return rc;\n  pthread_once(&PREPARE_ONCE, prepare);\n");
    c.push_str("  if (PREPARE_FAILED) { say(err, err_len, \"run-time check failed preparing the weights: %s\", PREPARE_FAILED); return 3; }\n");
    let in_words: usize = sig.inputs.iter().map(|t| words(*t)).sum();
    let out_words: usize = sig.results.iter().map(|t| words(*t)).sum();
    let _ = writeln!(
        c,
        "  int64_t args[{}];\n  int64_t res[{}];",
        in_words.max(1),
        out_words.max(1)
    );
    let mut call = vec!["res".to_string()];
    let mut k = 0;
    match prepared {
        Some(_) => {
            for (j, t) in sig.inputs.iter().enumerate() {
                if j < ins.len() {
                    let _ = writeln!(
                        c,
                        "  put_desc(args + {k}, inputs[{j}].data, {}, inputs[{j}].shape);",
                        t.rank().unwrap_or(0)
                    );
                } else {
                    let pk: usize = psig
                        .map(|p| p.results[..j - ins.len()].iter().map(|t| words(*t)).sum())
                        .unwrap_or(0);
                    let _ = writeln!(
                        c,
                        "  memcpy(args + {k}, PREPARED + {pk}, sizeof(int64_t) * {});",
                        words(*t)
                    );
                }
                call.push(format!("args + {k}"));
                k += words(*t);
            }
        }
        None => {
            let mut wk = 0;
            let mut ik = 0;
            for (j, t) in sig.inputs.iter().enumerate() {
                if opts.weight_args.contains(&j) {
                    let _ = writeln!(
                        c,
                        "  memcpy(args + {k}, WEIGHTS + {wk}, sizeof(int64_t) * {});",
                        words(*t)
                    );
                    wk += words(*t);
                } else {
                    let _ = writeln!(
                        c,
                        "  put_desc(args + {k}, inputs[{ik}].data, {}, inputs[{ik}].shape);",
                        t.rank().unwrap_or(0)
                    );
                    ik += 1;
                }
                call.push(format!("args + {k}"));
                k += words(*t);
            }
        }
    }
    let _ = writeln!(
        c,
        "  FAILED_MSG = 0;\n  _mlir_ciface_{entry}({});",
        call.join(", ")
    );
    c.push_str("  if (FAILED_MSG) { say(err, err_len, \"run-time check failed: %s\", FAILED_MSG); FAILED_MSG = 0; return 3; }\n");
    let mut rk = 0;
    for (j, t) in sig.results.iter().enumerate() {
        let eb = elem_bytes(t.element_type())?;
        let (code, _) = dtype_code(t.element_type()).unwrap_or((0, ""));
        let _ = writeln!(c, "  if (take_output(&outputs[{j}], res + {rk}, {}, {eb}, {code}, inputs, num_inputs)) rc = 2;", t.rank().unwrap_or(0));
        rk += words(*t);
    }
    c.push_str("  if (rc) { for (int32_t i = 0; i < NUM_OUT; i++) ");
    let _ = writeln!(c, "{n}_free(&outputs[i]); say(err, err_len, \"out of memory copying an output\"); }}\n  return rc;\n}}");
    let _ = writeln!(c, "void {n}_free(ftuner_tensor *t) {{ if (t && t->owner) {{ free(t->owner); t->owner = 0; t->data = 0; }} }}");
    Ok(c)
}

/// The model-independent half of the wrapper.
const RUNTIME_C: &str = r#"
static void say(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#include <stdarg.h>
static void say(char *err, size_t len, const char *fmt, ...) {
  if (!err || !len) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, len, fmt, ap);
  va_end(ap);
}

/* Failed run-time checks of the compiled code (the protocol of ftuner_codegen::status):
   the first message of a call on this thread; the code returns at once after recording it. */
static _Thread_local const char *FAILED_MSG;
static const char *PREPARE_FAILED;
__attribute__((visibility("hidden"))) void ftuner_rt_fail(const char *msg) { if (!FAILED_MSG) FAILED_MSG = msg; }
__attribute__((visibility("hidden"))) int32_t ftuner_rt_failed(void) { return FAILED_MSG != 0; }

/* A descriptor of a row-major buffer: allocated, aligned, offset, sizes, strides. */
static void put_desc(int64_t *d, void *data, int rank, const int64_t *shape) {
  d[0] = (int64_t)(intptr_t)data;
  d[1] = (int64_t)(intptr_t)data;
  d[2] = 0;
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--) {
    d[3 + i] = shape[i];
    d[3 + rank + i] = s;
    s *= shape[i];
  }
}

static int check_inputs(const ftuner_tensor *in, int32_t n, int32_t nout, char *err, size_t len) {
  if (n != NUM_IN) { say(err, len, "the model takes %d inputs, got %d", NUM_IN, (int)n); return 1; }
  if (nout != NUM_OUT) { say(err, len, "the model has %d outputs, %d were asked for", NUM_OUT, (int)nout); return 1; }
  int64_t bound[NUM_SYM + 1];
  int who[NUM_SYM + 1];
  for (int i = 0; i <= NUM_SYM; i++) { bound[i] = -1; who[i] = -1; }
  for (int k = 0; k < NUM_IN; k++) {
    if (!in) { say(err, len, "no inputs"); return 1; }
    if (in[k].dtype != IN_DTYPE[k]) { say(err, len, "input %d has dtype %d, the model takes %d", k, in[k].dtype, IN_DTYPE[k]); return 1; }
    if (in[k].rank != IN_RANK[k]) { say(err, len, "input %d has rank %d, the model takes rank %d", k, in[k].rank, IN_RANK[k]); return 1; }
    int64_t count = 1;
    for (int d = 0; d < IN_RANK[k]; d++) {
      int64_t x = in[k].shape[d];
      int at = k * 8 + d;
      if (x < 0) { say(err, len, "input %d dim %d is negative (%lld)", k, d, (long long)x); return 1; }
      if (IN_STATIC[at] >= 0 && x != IN_STATIC[at]) { say(err, len, "input %d dim %d is %lld, the model takes %lld", k, d, (long long)x, (long long)IN_STATIC[at]); return 1; }
      if (IN_STATIC[at] < 0) {
        if (x < IN_LO[at] || x > IN_HI[at]) { say(err, len, "input %d dim %d is %lld, outside the range [%lld, %lld] of dim '%s'", k, d, (long long)x, (long long)IN_LO[at], (long long)IN_HI[at], IN_SYM[at] >= 0 ? SYM_NAME[IN_SYM[at]] : "?"); return 1; }
        if (IN_SYM[at] >= 0) {
          int s = (int)IN_SYM[at];
          if (bound[s] >= 0 && bound[s] != x) { say(err, len, "input %d dim %d is %lld, but dim '%s' is %lld in input %d", k, d, (long long)x, SYM_NAME[s], (long long)bound[s], who[s]); return 1; }
          bound[s] = x; who[s] = k;
        }
      }
      if (x && count > INT64_MAX / x) { say(err, len, "input %d is too large", k); return 1; }
      count *= x;
    }
    if (!in[k].data && count > 0) { say(err, len, "input %d has no data", k); return 1; }
  }
  return 0;
}

/* Hand an output descriptor over as a contiguous tensor: its own allocation when it is
   one and row-major, else a contiguous copy (views of inputs, of weights, constants). */
static int take_output(ftuner_tensor *o, const int64_t *d, int rank, int eb, int code, const ftuner_tensor *in, int n) {
  char *alloc = (char *)(intptr_t)d[0];
  char *data = (char *)(intptr_t)d[1] + d[2] * eb;
  o->dtype = code;
  o->rank = rank;
  int64_t count = 1, want = 1;
  int row_major = 1;
  for (int i = rank - 1; i >= 0; i--) {
    o->shape[i] = d[3 + i];
    if (d[3 + i] != 1 && d[3 + rank + i] != want) row_major = 0;
    want *= d[3 + i];
    count *= d[3 + i];
  }
  int own = alloc && (intptr_t)alloc != 0xdeadbeef;
  for (int k = 0; k < n && own; k++) if ((char *)in[k].data == alloc) own = 0;
  for (size_t k = 0; k < sizeof(WEIGHTS) / sizeof(WEIGHTS[0]) && own; k++) if (WEIGHTS[k] == (int64_t)(intptr_t)alloc) own = 0;
  for (size_t k = 0; k < sizeof(PREPARED) / sizeof(PREPARED[0]) && own; k++) if (PREPARED[k] == (int64_t)(intptr_t)alloc) own = 0;
  if (own && row_major) { o->owner = alloc; o->data = data; return 0; }
  char *copy = malloc(count * eb > 0 ? count * eb : 1);
  if (!copy) { o->owner = 0; o->data = 0; return 1; }
  int64_t idx[8] = {0};
  for (int64_t k = 0; k < count; k++) {
    int64_t off = 0;
    for (int i = 0; i < rank; i++) off += idx[i] * d[3 + rank + i];
    memcpy(copy + k * eb, data + off * eb, eb);
    for (int i = rank - 1; i >= 0; i--) { if (++idx[i] < d[3 + i]) break; idx[i] = 0; }
  }
  o->owner = copy;
  o->data = copy;
  return 0;
}
"#;

/// `lib<stem>.so` → `<stem>.h` beside it.
pub fn header_path(out: &Path) -> PathBuf {
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "model".into());
    let stem = stem.strip_prefix("lib").unwrap_or(&stem).to_string();
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
