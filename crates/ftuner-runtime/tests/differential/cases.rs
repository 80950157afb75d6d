//! The functions under test: one per (op, types), each with its cases (operand tuples),
//! which of them are undefined, and how its results compare.

use super::types::{cast_edges, Cmp, Ty, FLOATS, INTS};
use ftuner_dialects::arith_semantics::{int_binary, INT_BINARY_OPS};
use ftuner_interp::Word;

/// One op at one type signature, with every case it runs on.
pub struct Func {
    /// The symbol: `addi_i32`, `cmpf_olt_f64`, `extsi_i8_i32`.
    pub name: String,
    /// The op's full name (`arith.addi`), the unit of the unsupported list and summary.
    pub op: String,
    pub args: Vec<Ty>,
    pub res: Ty,
    /// The op applied to operands named `%x0`, `%x1`…, with `{0}`, `{1}`… standing for
    /// them: `arith.addi {0}, {1} : i32`.
    pub text: String,
    pub cases: Vec<Vec<Word>>,
    /// Undefined per MLIR (poison or undefined behavior): not run compiled, an error in
    /// the interpreter, never folded.
    pub undefined: fn(&Func, &[Word]) -> bool,
    pub cmp: Cmp,
}

impl Func {
    /// The op's line with `names` substituted for its operands.
    pub fn op_line(&self, names: &[String]) -> String {
        let mut s = self.text.clone();
        for (i, n) in names.iter().enumerate() {
            s = s.replace(&format!("{{{i}}}"), n);
        }
        s
    }
}

fn never(_: &Func, _: &[Word]) -> bool {
    false
}

fn pairs(a: &[Word], b: &[Word]) -> Vec<Vec<Word>> {
    a.iter()
        .flat_map(|x| b.iter().map(move |y| vec![*x, *y]))
        .collect()
}

fn func(op: &str, suffix: &str, args: Vec<Ty>, res: Ty, text: String) -> Func {
    let short = op.split_once('.').map_or(op, |(_, s)| s);
    Func {
        name: format!("{short}_{suffix}"),
        op: op.to_string(),
        args,
        res,
        text,
        cases: vec![],
        undefined: never,
        cmp: Cmp::Exact,
    }
}

fn int_undefined(f: &Func, c: &[Word]) -> bool {
    let op = f.op.trim_start_matches("arith.");
    int_binary(op, c[0].i() as i128, c[1].i() as i128, f.res.width()).is_none()
}

/// Every integer binary op of `arith_semantics` at every integer type.
pub fn int_binary_funcs() -> Vec<Func> {
    let mut out = vec![];
    for op in INT_BINARY_OPS {
        for t in INTS {
            let mut f = func(
                &format!("arith.{op}"),
                t.name(),
                vec![t, t],
                t,
                format!("arith.{op} {{0}}, {{1}} : {}", t.name()),
            );
            f.cases = pairs(&t.edges(), &t.edges());
            f.undefined = int_undefined;
            out.push(f);
        }
    }
    out
}

pub const CMPI: [&str; 10] = [
    "eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge",
];
pub const CMPF: [&str; 16] = [
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule",
    "une", "uno", "true",
];

/// `cmpi` with each predicate at every integer type, `cmpf` with each at f32 and f64.
pub fn compare_funcs() -> Vec<Func> {
    let mut out = vec![];
    for (op, preds, types) in [
        ("arith.cmpi", &CMPI[..], &INTS[..]),
        ("arith.cmpf", &CMPF[..], &FLOATS[..]),
    ] {
        for p in preds {
            for t in types {
                let mut f = func(
                    op,
                    &format!("{p}_{}", t.name()),
                    vec![*t, *t],
                    Ty::I1,
                    format!("{op} {p}, {{0}}, {{1}} : {}", t.name()),
                );
                f.cases = pairs(&t.edges(), &t.edges());
                out.push(f);
            }
        }
    }
    out
}

/// The float binary ops and `negf` of `arith`.
pub fn float_funcs() -> Vec<Func> {
    let mut out = vec![];
    for op in [
        "addf", "subf", "mulf", "divf", "remf", "maximumf", "minimumf", "maxnumf", "minnumf",
        "negf",
    ] {
        for t in FLOATS {
            let unary = op == "negf";
            let text = if unary {
                format!("arith.{op} {{0}} : {}", t.name())
            } else {
                format!("arith.{op} {{0}}, {{1}} : {}", t.name())
            };
            let n = if unary { 1 } else { 2 };
            let mut f = func(&format!("arith.{op}"), t.name(), vec![t; n], t, text);
            f.cases = if unary {
                t.edges().into_iter().map(|x| vec![x]).collect()
            } else {
                pairs(&t.edges(), &t.edges())
            };
            if matches!(op, "maxnumf" | "minnumf") {
                f.cmp = Cmp::AnyZero;
            }
            out.push(f);
        }
    }
    out
}

/// `select` at every type: both conditions, each edge against the edges in reverse.
pub fn select_funcs() -> Vec<Func> {
    INTS.iter()
        .chain(&FLOATS)
        .map(|&t| {
            let mut f = func(
                "arith.select",
                t.name(),
                vec![Ty::I1, t, t],
                t,
                format!("arith.select {{0}}, {{1}}, {{2}} : {}", t.name()),
            );
            let e = t.edges();
            for c in [Word::int(0), Word::int(1)] {
                for (a, b) in e.iter().zip(e.iter().rev()) {
                    f.cases.push(vec![c, *a, *b]);
                }
            }
            f
        })
        .collect()
}

/// fptosi/fptoui of NaN, an infinity or a value whose integer part the result type
/// cannot hold is poison.
fn fpto_undefined(f: &Func, c: &[Word]) -> bool {
    let x = c[0].f().trunc();
    let w = f.res.width();
    // The bound past the largest value is a power of two, exact in an f64.
    let (lo, past) = if f.op == "arith.fptosi" {
        (-(2f64.powi(w as i32 - 1)), 2f64.powi(w as i32 - 1))
    } else {
        (0.0, 2f64.powi(w as i32))
    };
    !(x >= lo && x < past)
}

fn cast(op: &str, from: Ty, to: Ty) -> Func {
    let mut f = func(
        &format!("arith.{op}"),
        &format!("{}_{}", from.name(), to.name()),
        vec![from],
        to,
        format!("arith.{op} {{0}} : {} to {}", from.name(), to.name()),
    );
    let inputs = match op {
        "fptosi" | "fptoui" => cast_edges(from),
        // Values that round (ties to even), underflow to a subnormal and overflow.
        "truncf" => {
            let mut v = from.edges();
            let t = 2f64.powi(-24);
            v.extend(
                [
                    0.1,
                    1e-40,
                    1e39,
                    -1e39,
                    1.0 + t,
                    1.0 + 3.0 * t,
                    3.4028235e38 + 1e30,
                    f32::MAX as f64 * (1.0 + t / 2.0),
                    1e-46,
                    f64::MIN_POSITIVE,
                ]
                .map(|x| from.float(x)),
            );
            v
        }
        _ => from.edges(),
    };
    f.cases = inputs.into_iter().map(|x| vec![x]).collect();
    if op.starts_with("fpto") {
        f.undefined = fpto_undefined;
    }
    f
}

/// Every cast between the types under test that its verifier accepts.
pub fn cast_funcs() -> Vec<Func> {
    use Ty::*;
    let mut out = vec![];
    let widen = [
        (I1, I8),
        (I1, I32),
        (I1, I64),
        (I8, I32),
        (I8, I64),
        (I32, I64),
    ];
    for (a, b) in widen {
        out.push(cast("extsi", a, b));
        out.push(cast("extui", a, b));
        out.push(cast("trunci", b, a));
    }
    for i in [I1, I8, I32, I64] {
        for fl in FLOATS {
            out.push(cast("sitofp", i, fl));
            out.push(cast("uitofp", i, fl));
            out.push(cast("fptosi", fl, i));
            out.push(cast("fptoui", fl, i));
        }
        for op in ["index_cast", "index_castui"] {
            out.push(cast(op, i, Index));
            out.push(cast(op, Index, i));
        }
    }
    out.push(cast("extf", F32, F64));
    out.push(cast("truncf", F64, F32));
    for (a, b) in [(I32, F32), (I64, F64)] {
        out.push(cast("bitcast", a, b));
        out.push(cast("bitcast", b, a));
    }
    out
}

/// Every op of the `math` dialect the context registers, at the types its operand
/// constraints allow: float operands at f32 and f64, integer operands at i8/i32/i64, a
/// float and an integer (`fpowi`) at f32/f64 with i32 exponents. Operand edges in full
/// for one or two operands, a subset for three.
pub fn math_funcs(ctx: &ftuner_ir::Context) -> Vec<Func> {
    let mut defs: Vec<_> = ctx
        .registry
        .ops()
        .filter(|d| d.name.starts_with("math."))
        .collect();
    defs.sort_by_key(|d| d.name);
    let mut out = vec![];
    for d in defs {
        let kinds: Vec<&str> = d.operands.iter().map(|a| a.constraint).collect();
        let sigs: Vec<(Vec<Ty>, Ty)> = match kinds.as_slice() {
            k if k.iter().all(|c| *c == "FloatLike") => {
                FLOATS.iter().map(|t| (vec![*t; k.len()], *t)).collect()
            }
            k if k.iter().all(|c| *c == "SignlessIntegerLike") => [Ty::I8, Ty::I32, Ty::I64]
                .iter()
                .map(|t| (vec![*t; k.len()], *t))
                .collect(),
            ["FloatLike", "SignlessIntegerLike"] => {
                FLOATS.iter().map(|t| (vec![*t, Ty::I32], *t)).collect()
            }
            k => panic!("{}: operand constraints {k:?} are new to this test", d.name),
        };
        for (args, res) in sigs {
            let names: Vec<String> = (0..args.len()).map(|i| format!("{{{i}}}")).collect();
            let tys: Vec<&str> = args.iter().map(|t| t.name()).collect();
            // The generic form: every op parses so, whatever its custom syntax.
            let text = format!(
                "\"{}\"({}) : ({}) -> {}",
                d.name,
                names.join(", "),
                tys.join(", "),
                res.name()
            );
            let suffix = tys.join("_");
            let mut f = func(d.name, &suffix, args.clone(), res, text);
            f.cases = math_cases(&args);
            f.cmp = math_cmp(d.name, res);
            if d.scalar_eval.is_some_and(|e| e.is_int()) {
                f.undefined = math_int_undefined;
            }
            out.push(f);
        }
    }
    out
}

/// Undefined per the op's one definition (`math.ipowi` of 0 to a negative power).
fn math_int_undefined(f: &Func, c: &[Word]) -> bool {
    let eval = ftuner_dialects::registry()
        .op(&f.op)
        .and_then(|d| d.scalar_eval);
    let args: Vec<i128> = c.iter().map(|x| x.i() as i128).collect();
    eval.is_some_and(|e| e.apply_int(&args, f.res.width()).is_none())
}

fn math_cases(args: &[Ty]) -> Vec<Vec<Word>> {
    let edges = |t: Ty| {
        if t == Ty::I32 && args[0].is_float() {
            // Exponents of fpowi.
            [0, 1, -1, 2, -2, 3, 7, -7, 31].map(Word::int).to_vec()
        } else {
            t.edges()
        }
    };
    match args.len() {
        1 => edges(args[0]).into_iter().map(|x| vec![x]).collect(),
        2 => pairs(&edges(args[0]), &edges(args[1])),
        _ => {
            let t = args[0];
            // Three operands: the float ones (fma).
            assert!(t.is_float(), "three integer operands are new to this test");
            let sub: Vec<Word> = edges(t)
                .into_iter()
                .filter(|x| x.f().is_sign_positive() || matches!(x.f(), -1.0 | -2.5 | -1e10))
                .collect();
            let mut out = vec![vec![]];
            for _ in args {
                out = out
                    .into_iter()
                    .flat_map(|c: Vec<Word>| {
                        sub.iter().map(move |x| {
                            let mut c = c.clone();
                            c.push(*x);
                            c
                        })
                    })
                    .collect();
            }
            if args.len() == 3 {
                // Where one rounding differs from two: (1 + e)(1 - e) - 1 = -e^2, and a
                // product past the largest finite value brought back by the addend.
                let e = if t == Ty::F32 {
                    2f64.powi(-23)
                } else {
                    2f64.powi(-52)
                };
                let max = t.edges().into_iter().map(|x| x.f()).fold(0.0, f64::max);
                let w = |v: [f64; 3]| v.map(|x| t.float(x)).to_vec();
                out.extend([
                    w([1.0 + e, 1.0 - e, -1.0]),
                    w([1.0 + e, 1.0 + e, -1.0]),
                    w([max, 1.5, -max]),
                    w([max, 2.0, -max]),
                ]);
            }
            out
        }
    }
}

fn math_cmp(op: &str, res: Ty) -> Cmp {
    let exact = [
        "math.absf",
        "math.ceil",
        "math.floor",
        "math.trunc",
        "math.round",
        "math.roundeven",
        "math.sqrt",
        "math.copysign",
        "math.fma",
    ];
    if !res.is_float() || exact.contains(&op) {
        Cmp::Exact
    } else {
        Cmp::Ulps(4)
    }
}
