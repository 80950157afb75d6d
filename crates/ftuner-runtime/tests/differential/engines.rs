//! The three engines on the functions of `cases`: the interpreter (one call per case),
//! the folder (one function per op holding every case as constants, canonicalized once)
//! and the JIT (one module, one function per op, one call per case).

use super::cases::Func;
use super::types::Ty;
use ftuner_interp::{RtVal, Word};
use ftuner_ir::{parse_module, Context};
use ftuner_runtime::Executable;

/// What an engine made of one case.
#[derive(Clone, Debug, PartialEq)]
pub enum Out {
    Val(Word),
    /// An error (the interpreter and the JIT), or not folded (the folder).
    None(String),
    /// The engine does not run the op at all.
    Unsupported(String),
    /// Not run (an undefined case, through the JIT).
    Skipped,
}

/// The function taking the operands as arguments.
fn with_args(f: &Func) -> String {
    let params: Vec<String> = f
        .args
        .iter()
        .enumerate()
        .map(|(i, t)| format!("%x{i}: {}", t.name()))
        .collect();
    let names: Vec<String> = (0..f.args.len()).map(|i| format!("%x{i}")).collect();
    format!(
        "func.func @{}({}) -> {} {{\n  %r = {}\n  return %r : {}\n}}\n",
        f.name,
        params.join(", "),
        f.res.name(),
        f.op_line(&names),
        f.res.name()
    )
}

fn args(case: &[Word]) -> Vec<RtVal> {
    case.iter().map(|x| RtVal::Scalar(*x)).collect()
}

/// The interpreter on every case of `f`.
pub fn interpret(ctx: &Context, f: &Func) -> Vec<Out> {
    let m = match parse_module(ctx, &with_args(f), "t.mlir") {
        Ok(m) => m,
        Err(e) => return vec![Out::Unsupported(format!("{e:?}")); f.cases.len()],
    };
    f.cases
        .iter()
        .map(
            |c| match ftuner_interp::run(ctx, &m.ir, m.top, &f.name, args(c)) {
                Ok(v) => match v.first() {
                    Some(RtVal::Scalar(x)) => Out::Val(*x),
                    other => Out::None(format!("returned {other:?}")),
                },
                Err(e) if e.message.contains("not supported") => Out::Unsupported(e.message),
                Err(e) => Out::None(e.message),
            },
        )
        .collect()
}

/// The function holding every case of `f` as constants, returning every result.
fn with_constants(f: &Func) -> String {
    let mut consts = String::new();
    let mut names: std::collections::HashMap<(Ty, u64), String> = Default::default();
    let mut ops = String::new();
    let mut results = vec![];
    for (k, c) in f.cases.iter().enumerate() {
        let operands: Vec<String> = c
            .iter()
            .zip(&f.args)
            .map(|(x, t)| {
                let n = names.len();
                names
                    .entry((*t, t.bits(*x)))
                    .or_insert_with(|| {
                        consts.push_str(&format!("  %k{n} = arith.constant {}\n", t.literal(*x)));
                        format!("%k{n}")
                    })
                    .clone()
            })
            .collect();
        ops.push_str(&format!("  %r{k} = {}\n", f.op_line(&operands)));
        results.push(format!("%r{k}"));
    }
    let tys = vec![f.res.name(); results.len()].join(", ");
    format!(
        "func.func @{}() -> ({tys}) {{\n{consts}{ops}  return {} : {tys}\n}}\n",
        f.name,
        results.join(", ")
    )
}

fn registry() -> ftuner_pass::PassRegistry {
    let mut reg = ftuner_pass::PassRegistry::default();
    ftuner_transforms::register_passes(&mut reg);
    reg
}

fn run_pipeline(ctx: &Context, m: &mut ftuner_ir::ParsedModule, p: &str) -> Result<(), String> {
    let mut pm = ftuner_pass::PassManager::from_pipeline(&registry(), p)?;
    pm.run(ctx, &mut m.ir, m.top)
        .map_err(|e| format!("{} {:?}", e.message, e.diagnostics))
}

/// Canonicalize one module holding every function's cases as constants; a result
/// defined by an `arith.constant` is folded.
pub fn fold(ctx: &Context, funcs: &[Func]) -> Vec<Vec<Out>> {
    let text: String = funcs.iter().map(with_constants).collect();
    let mut m = parse_module(ctx, &text, "fold.mlir").expect("the folder's module parses");
    run_pipeline(ctx, &mut m, "builtin.module(canonicalize)").expect("canonicalize");
    let ir = &m.ir;
    let mut by_name = std::collections::HashMap::new();
    ir.walk_pre(m.top, &mut |o| {
        if ir.name(o) == "func.func" {
            by_name.insert(ir.symbol_name(o).unwrap_or_default(), o);
        }
    });
    funcs
        .iter()
        .map(|f| {
            let func = by_name[f.name.as_str()];
            let entry = ir.region_entry(ir.regions_of(func)[0]).expect("a body");
            let ret = ir.terminator(entry).expect("a return");
            ir.operands(ret)
                .iter()
                .map(|v| {
                    let Some(def) = ir
                        .defining_op(*v)
                        .filter(|d| ir.name(*d) == "arith.constant")
                    else {
                        return Out::None("not folded".into());
                    };
                    let a = ir.attr(def, "value").expect("a constant has a value");
                    match ftuner_dialects::util::const_value(a) {
                        Some((ftuner_dialects::util::Const::Int(x), _)) => Out::Val(f.res.int(x)),
                        Some((ftuner_dialects::util::Const::Float(x), _)) => {
                            Out::Val(Word::float(x))
                        }
                        None => Out::None(format!("folded to {a:?}")),
                    }
                })
                .collect()
        })
        .collect()
}

/// Whether convert-to-llvm takes `f` (a module that does not convert does not compile,
/// so each function is tried alone first).
pub fn lowers(ctx: &Context, f: &Func) -> Result<(), String> {
    let mut m = parse_module(ctx, &with_args(f), "t.mlir").map_err(|e| format!("{e:?}"))?;
    let p = ftuner_transforms::to_llvm_pipeline(&m.ir, m.top, true, false, 64).expect("functions");
    run_pipeline(ctx, &mut m, &p)
}

/// Compile the functions that lower into one module and call each on its defined cases.
pub fn jit(ctx: &Context, funcs: &[Func]) -> (Vec<Vec<Out>>, f64) {
    let mut text = String::new();
    let mut ok = vec![];
    for f in funcs {
        let r = lowers(ctx, f);
        if r.is_ok() {
            text.push_str(&with_args(f));
        }
        ok.push(r);
    }
    let mut m = parse_module(ctx, &text, "jit.mlir").expect("the JIT's module parses");
    let exe = Executable::compile(ctx, &mut m.ir, m.top).expect("the JIT's module compiles");
    let outs = funcs
        .iter()
        .zip(ok)
        .map(|(f, ok)| match ok {
            Err(e) => vec![Out::Unsupported(e); f.cases.len()],
            Ok(()) => f
                .cases
                .iter()
                .map(|c| {
                    if (f.undefined)(f, c) {
                        return Out::Skipped;
                    }
                    match exe.call(&f.name, &args(c)) {
                        Ok(v) => match v.first() {
                            Some(RtVal::Scalar(x)) => Out::Val(*x),
                            other => Out::None(format!("returned {other:?}")),
                        },
                        Err(e) => Out::None(e.0),
                    }
                })
                .collect(),
        })
        .collect();
    (outs, exe.compile_seconds)
}
