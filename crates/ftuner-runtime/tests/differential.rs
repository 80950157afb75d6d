//! The reference interpreter (`ftuner_interp::run`), the constant folder (`canonicalize`)
//! and the JIT (`Executable::compile` + `call`) compute the same value for every `arith`
//! op and every `math` op the context registers, over i1/i8/i32/i64/index and f32/f64 at
//! edge values. The interpreter runs one function per (op, types) once per case; the
//! folder gets one function per (op, types) holding every case as constants, and a
//! result that canonicalize turns into an `arith.constant` is folded (an op left alone
//! is not an error: folding is optional); the JIT compiles one module with one function
//! per (op, types) and calls it once per case.
//!
//! Rules of comparison:
//! - Undefined cases per MLIR (integer division or remainder by zero, signed division
//!   overflow `MIN / -1`, shifts by the width or more: `arith_semantics::int_binary` is
//!   `None`; fptosi/fptoui of NaN, an infinity or a value out of the result's range:
//!   poison) are not run through the JIT (undefined behaviour in LLVM, it may trap); the
//!   interpreter must report an error on them and the folder must not fold them.
//! - Integers compare exactly. The interpreter and the runtime carry every value as a
//!   64-bit word (`ftuner_interp::Word`), so the edges of every width are exact: 0, ±1,
//!   ±2, ±7, the width less one, the minimum, the maximum and their neighbours (the f64
//!   carrier before it held i64 to 2^53, and those edges stood in at 2^53). i1 values
//!   are 0 and 1 (1 is `true`, -1 when read signed).
//! - Floats: NaN matches NaN, whatever the payload. Everything else is bit for bit after
//!   rounding to the type, so signed zeros must match (negf, absf, copysign, addf, subf,
//!   mulf, divf, remf, the rounding ops, maximumf/minimumf ordering -0 < +0), except
//!   maxnumf/minnumf, where LLVM's maxnum/minnum may return either zero of an equal pair.
//!   Exactly rounded ops (arith's float ops, casts and compares; math's sqrt, ceil, floor,
//!   trunc, round, roundeven, absf, copysign, fma) are bit for bit; the transcendental
//!   math ops within 4 ulp of the type (`cases::math_cmp` says why 4).
//! - An op one engine cannot run at all is in [`EXPECTED_UNSUPPORTED`] (an op that never
//!   folds is listed for the folder), and the set found must equal it: the test fails
//!   when an op becomes supported (shrink the list) or stops working. A math op whose
//!   engines disagree is in [`KNOWN_MATH_DISAGREEMENTS`], which must equal the set found
//!   as well; any disagreement on an `arith` op fails.
//!
//! Run alone: `cargo test --release -p ftuner-runtime --test integration differential::`.

mod cases;
mod engines;
mod types;

use cases::Func;
use engines::Out;
use std::collections::{BTreeMap, BTreeSet};
use types::same;

/// (engine, op) pairs that cannot run yet: `interp` (the interpreter reports the op as not
/// supported), `jit` (convert-to-llvm rejects it), `fold` (canonicalize folds none of its
/// cases). The float math ops have one definition (their `ScalarEval`, math::EVAL) and run
/// everywhere, the integer ones too (IntUnary/IntBinary) except `ipowi` through the JIT
/// (upstream lowers it to a generated function, convert-math-to-funcs); fma has no folder.
const EXPECTED_UNSUPPORTED: &[(&str, &str)] = &[("fold", "math.fma"), ("jit", "math.ipowi")];

/// (op, result type, engines that disagree) of math ops. Empty since the folder and the
/// interpreter compute every float op by its one `ScalarEval` (erf was a 1.2e-7 fit in the
/// folder, a series in the interpreter; both are libm's now, as in the JIT).
const KNOWN_MATH_DISAGREEMENTS: &[(&str, &str, &str)] = &[];

const ENGINES: [&str; 3] = ["interp", "fold", "jit"];

#[derive(Default)]
struct Tally {
    cases: usize,
    undefined: usize,
    compared: usize,
    folded: usize,
    jit_run: usize,
}

#[derive(Default)]
struct Findings {
    unsupported: BTreeSet<(String, String)>,
    math: BTreeSet<(String, String, String)>,
    /// Failures on arith ops (and undefined-case failures of any op), a few per op.
    errors: BTreeMap<String, Vec<String>>,
    tally: BTreeMap<String, Tally>,
    compared: usize,
}

impl Findings {
    fn fail(&mut self, f: &Func, what: String) {
        let v = self.errors.entry(f.op.clone()).or_default();
        if v.len() < 8 {
            v.push(what);
        }
    }

    /// Check one case: `outs` are the interpreter's, the folder's and the JIT's.
    fn case(&mut self, f: &Func, c: &[ftuner_interp::Word], outs: [&Out; 3]) {
        let show = |o: &[&Out; 3]| {
            format!(
                "@{}{c:?}: interp {:?}, fold {:?}, jit {:?}",
                f.name, o[0], o[1], o[2]
            )
        };
        for (e, o) in ENGINES.iter().zip(outs) {
            if matches!(o, Out::Unsupported(_)) {
                self.unsupported.insert((e.to_string(), f.op.clone()));
            }
        }
        let t = self.tally.entry(f.op.clone()).or_default();
        t.cases += 1;
        t.folded += matches!(outs[1], Out::Val(_)) as usize;
        t.jit_run += matches!(outs[2], Out::Val(_)) as usize;
        if (f.undefined)(f, c) {
            t.undefined += 1;
            self.compared += 1;
            if matches!(outs[0], Out::Val(_)) || matches!(outs[1], Out::Val(_)) {
                self.fail(f, format!("undefined, yet {}", show(&outs)));
            }
            return;
        }
        let mut compared = false;
        for (i, j) in [(0, 2), (1, 2), (1, 0)] {
            let (Out::Val(a), Out::Val(b)) = (outs[i], outs[j]) else {
                continue;
            };
            compared = true;
            if !same(f.res, f.cmp, *a, *b) {
                self.disagree(f, &format!("{}-{}", ENGINES[i], ENGINES[j]), show(&outs));
            }
        }
        for k in [0, 2] {
            if let Out::None(_) = outs[k] {
                self.disagree(f, &format!("{}-error", ENGINES[k]), show(&outs));
            }
        }
        if compared {
            self.compared += 1;
            self.tally.entry(f.op.clone()).or_default().compared += 1;
        }
    }

    fn disagree(&mut self, f: &Func, engines: &str, what: String) {
        if f.op.starts_with("math.") {
            eprintln!("math disagreement ({engines}): {what}");
            self.math
                .insert((f.op.clone(), f.res.name().to_string(), engines.to_string()));
        } else {
            self.fail(f, format!("{engines}: {what}"));
        }
    }
}

fn all_funcs(ctx: &ftuner_ir::Context) -> Vec<Func> {
    let mut funcs = cases::int_binary_funcs();
    funcs.extend(cases::float_funcs());
    funcs.extend(cases::compare_funcs());
    funcs.extend(cases::select_funcs());
    funcs.extend(cases::cast_funcs());
    funcs.extend(cases::math_funcs(ctx));
    // Every arith op the context registers is here (a new one fails until it is), except
    // the two-result *_extended ops (this harness compares one result; their folders have
    // lit cases in Dialect/arith/canonicalize.mlir, and nothing lowers them to LLVM yet).
    let covered: BTreeSet<&str> = funcs.iter().map(|f| f.op.as_str()).collect();
    let two_results = [
        "arith.addui_extended",
        "arith.mulsi_extended",
        "arith.mului_extended",
    ];
    for d in ctx.registry.ops() {
        if d.name.starts_with("arith.")
            && d.name != "arith.constant"
            && !two_results.contains(&d.name)
        {
            assert!(covered.contains(d.name), "{} is not tested", d.name);
        }
    }
    funcs
}

#[test]
fn interpreter_folder_and_jit_agree_on_arith_and_math() {
    let t0 = std::time::Instant::now();
    let ctx = ftuner_transforms::context();
    let funcs = all_funcs(&ctx);
    let interp: Vec<Vec<Out>> = funcs.iter().map(|f| engines::interpret(&ctx, f)).collect();
    let t_interp = t0.elapsed().as_secs_f64();
    let folded = engines::fold(&ctx, &funcs);
    let t_fold = t0.elapsed().as_secs_f64() - t_interp;
    let (jit, compile_s) = engines::jit(&ctx, &funcs);
    let mut found = Findings::default();
    for (k, f) in funcs.iter().enumerate() {
        for (i, c) in f.cases.iter().enumerate() {
            found.case(f, c, [&interp[k][i], &folded[k][i], &jit[k][i]]);
        }
    }
    for f in &funcs {
        if found.tally[&f.op].folded == 0 {
            found.unsupported.insert(("fold".into(), f.op.clone()));
        }
    }
    eprintln!(
        "{:<20} {:>6} {:>6} {:>8} {:>6} {:>6}",
        "op", "cases", "undef", "compared", "folded", "jit"
    );
    for (op, t) in &found.tally {
        eprintln!(
            "{op:<20} {:>6} {:>6} {:>8} {:>6} {:>6}",
            t.cases, t.undefined, t.compared, t.folded, t.jit_run
        );
    }
    eprintln!(
        "{} functions, {} cases checked; interpreter {t_interp:.1} s, folder {t_fold:.1} s, JIT compile {compile_s:.1} s, total {:.1} s",
        funcs.len(),
        found.compared,
        t0.elapsed().as_secs_f64()
    );
    for (op, errs) in &found.errors {
        for e in errs {
            eprintln!("FAIL {op}: {e}");
        }
    }
    assert!(
        found.errors.is_empty(),
        "disagreements on {:?}",
        found.errors.keys()
    );
    let want: BTreeSet<(String, String)> = EXPECTED_UNSUPPORTED
        .iter()
        .map(|(e, o)| (e.to_string(), o.to_string()))
        .collect();
    assert_eq!(
        found.unsupported, want,
        "EXPECTED_UNSUPPORTED is out of date"
    );
    let want: BTreeSet<(String, String, String)> = KNOWN_MATH_DISAGREEMENTS
        .iter()
        .map(|(o, t, e)| (o.to_string(), t.to_string(), e.to_string()))
        .collect();
    assert_eq!(found.math, want, "KNOWN_MATH_DISAGREEMENTS is out of date");
    assert!(found.compared >= 10_000, "only {} cases", found.compared);
}
