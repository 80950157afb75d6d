//! One definition per `math` float op, everywhere: every op of
//! `ftuner_dialects::math::EVAL` (its spec entry plus one line there, as
//! docs/adding-an-op.md adds `math.cbrt`) parses, folds to its `ScalarEval`, interprets to
//! it, and runs through the JIT (on scalars, and elementwise over a tensor through the
//! loops the buffer pipeline makes) within two ulps of it — the JIT calls libm's or LLVM's
//! function of the type (`cbrtf` on f32), the folder and the interpreter compute in f64 and
//! round.

use ftuner_interp::{RtVal, Tensor, Word};
use ftuner_ir::{parse_module, ScalarEval, Type};
use ftuner_runtime::Executable;
use std::rc::Rc;

const VALUES: [f64; 14] = [
    0.0,
    -0.0,
    0.5,
    -0.5,
    0.7,
    1.0,
    2.0,
    -3.0,
    10.0,
    1e-3,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    -1.25,
];

fn arity(e: ScalarEval) -> usize {
    match e {
        ScalarEval::FloatUnary(_) | ScalarEval::IntUnary(_) => 1,
        ScalarEval::FloatBinary(_) | ScalarEval::IntBinary(_) => 2,
    }
}

fn cases(n: usize) -> Vec<Vec<f64>> {
    match n {
        1 => VALUES.iter().map(|x| vec![*x]).collect(),
        _ => VALUES
            .iter()
            .flat_map(|x| VALUES.iter().map(move |y| vec![*x, *y]))
            .collect(),
    }
}

fn round(x: f64, ty: &str) -> f64 {
    if ty == "f32" {
        x as f32 as f64
    } else {
        x
    }
}

/// `got` is `want` (NaN for NaN, the same infinity, signed zeros alike) or within `ulps`
/// units in the last place of `ty`.
fn near(got: f64, want: f64, ty: &str, ulps: f64) -> bool {
    if want.is_nan() || got.is_nan() {
        return want.is_nan() && got.is_nan();
    }
    if want.is_infinite() || got.is_infinite() || want == 0.0 || ulps == 0.0 {
        return got == want && got.is_sign_negative() == want.is_sign_negative();
    }
    // An ulp: relative above the normal range, the smallest subnormal below it.
    let (eps, tiny) = if ty == "f32" {
        (f32::EPSILON as f64, f32::from_bits(1) as f64)
    } else {
        (f64::EPSILON, f64::from_bits(1))
    };
    (got - want).abs() <= ulps * (eps * want.abs()).max(tiny)
}

fn short(name: &str) -> &str {
    name.trim_start_matches("math.")
}

/// A scalar function and an elementwise tensor function of `op` on `ty`.
fn functions(op: &str, n: usize, ty: &str) -> String {
    let s = short(op);
    let params: Vec<String> = (0..n).map(|i| format!("%a{i}: {ty}")).collect();
    let args: Vec<String> = (0..n).map(|i| format!("%a{i}")).collect();
    let tparams: Vec<String> = (0..n).map(|i| format!("%t{i}: tensor<?x{ty}>")).collect();
    let targs: Vec<String> = (0..n).map(|i| format!("%t{i}")).collect();
    let maps = vec!["affine_map<(d0) -> (d0)>"; n + 1].join(", ");
    let ins_types = vec![format!("tensor<?x{ty}>"); n].join(", ");
    format!(
        "func.func @s_{s}_{ty}({params}) -> {ty} {{
  %r = {op} {args} : {ty}
  return %r : {ty}
}}
func.func @t_{s}_{ty}({tparams}) -> tensor<?x{ty}> {{
  %c0 = arith.constant 0 : index
  %d = tensor.dim %t0, %c0 : tensor<?x{ty}>
  %e = tensor.empty(%d) : tensor<?x{ty}>
  %r = linalg.generic {{indexing_maps = [{maps}], iterator_types = [\"parallel\"]}} ins({targs} : {ins_types}) outs(%e : tensor<?x{ty}>) {{
  ^bb0({bargs}, %o: {ty}):
    %v = {op} {bvals} : {ty}
    linalg.yield %v : {ty}
  }} -> tensor<?x{ty}>
  return %r : tensor<?x{ty}>
}}
",
        params = params.join(", "),
        args = args.join(", "),
        tparams = tparams.join(", "),
        targs = targs.join(", "),
        bargs = (0..n)
            .map(|i| format!("%b{i}: {ty}"))
            .collect::<Vec<_>>()
            .join(", "),
        bvals = (0..n)
            .map(|i| format!("%b{i}"))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

/// What canonicalize folds `op` of constant `args` to.
fn folded(op: &str, ty: &str, args: &[f64]) -> Option<f64> {
    // Bit patterns: exact, and the only spelling of NaN and the infinities.
    let lit = |x: f64| {
        if ty == "f32" {
            format!("0x{:08X}", (x as f32).to_bits())
        } else {
            format!("0x{:016X}", x.to_bits())
        }
    };
    let consts: Vec<String> = args
        .iter()
        .enumerate()
        .map(|(i, x)| format!("  %c{i} = arith.constant {} : {ty}\n", lit(*x)))
        .collect();
    let names: Vec<String> = (0..args.len()).map(|i| format!("%c{i}")).collect();
    let src = format!(
        "func.func @f() -> {ty} {{\n{}  %r = {op} {} : {ty}\n  return %r : {ty}\n}}\n",
        consts.concat(),
        names.join(", ")
    );
    let ctx = ftuner_transforms::context();
    let mut m = parse_module(&ctx, &src, "fold.mlir").unwrap();
    let mut reg = ftuner_pass::PassRegistry::default();
    ftuner_transforms::register_passes(&mut reg);
    let mut pm =
        ftuner_pass::PassManager::from_pipeline(&reg, "builtin.module(canonicalize)").unwrap();
    pm.run(&ctx, &mut m.ir, m.top).unwrap();
    let mut ret = None;
    m.ir.walk_pre(m.top, &mut |o| {
        if m.ir.name(o) == "func.return" {
            ret = Some(o);
        }
    });
    let def = m.ir.defining_op(m.ir.operand(ret?, 0))?;
    if m.ir.name(def) != "arith.constant" {
        return None;
    }
    ftuner_dialects::util::const_value(m.ir.attr(def, "value")?).and_then(|(c, _)| match c {
        ftuner_dialects::util::Const::Float(x) => Some(x),
        _ => None,
    })
}

#[test]
fn every_math_float_op_folds_interprets_and_runs_as_defined() {
    let ctx = ftuner_transforms::context();
    // The float ops (the integer ones are in the differential test, at every width).
    let ops: Vec<_> = ftuner_dialects::math::EVAL
        .iter()
        .filter(|(_, e)| !e.is_int())
        .collect();
    let mut src = String::new();
    for (op, eval) in &ops {
        for ty in ["f32", "f64"] {
            src += &functions(op, arity(*eval), ty);
        }
    }
    let reference = parse_module(&ctx, &src, "math.mlir").unwrap();
    let mut m = parse_module(&ctx, &src, "math.mlir").unwrap();
    let exe = Executable::compile(&ctx, &mut m.ir, m.top).unwrap();
    let mut checked = 0;
    for (op, eval) in &ops {
        let n = arity(*eval);
        for ty in ["f32", "f64"] {
            let t = if ty == "f32" {
                Type::f32()
            } else {
                Type::f64()
            };
            let s = short(op);
            let all = cases(n);
            for args in &all {
                let args: Vec<f64> = args.iter().map(|x| round(*x, ty)).collect();
                let want = round(eval.apply(&args).unwrap(), ty);
                let what = format!("{op} {ty} {args:?}");
                let scalars: Vec<RtVal> = args
                    .iter()
                    .map(|x| RtVal::Scalar(Word::float(*x)))
                    .collect();
                let interp = ftuner_interp::run(
                    &ctx,
                    &reference.ir,
                    reference.top,
                    &format!("s_{s}_{ty}"),
                    scalars.clone(),
                )
                .unwrap();
                let got = interp[0].scalar().unwrap().f();
                assert!(
                    near(got, want, ty, 0.0),
                    "{what}: interpreter {got}, want {want}"
                );
                let f = folded(op, ty, &args);
                // Outside the domain (a NaN from operands that are not) the op stays.
                let domain = want.is_nan() && !args.iter().any(|x| x.is_nan());
                assert!(
                    if domain {
                        f.is_none()
                    } else {
                        f.is_some_and(|f| near(f, want, ty, 0.0))
                    },
                    "{what}: folded to {f:?}, want {want}"
                );
                let jit = exe.call(&format!("s_{s}_{ty}"), &scalars).unwrap();
                let got = jit[0].scalar().unwrap().f();
                assert!(near(got, want, ty, 2.0), "{what}: JIT {got}, want {want}");
                checked += 1;
            }
            // The same op elementwise over tensors, through the buffer pipeline's loops.
            let cols: Vec<RtVal> = (0..n)
                .map(|k| {
                    let data = all.iter().map(|a| round(a[k], ty)).collect();
                    RtVal::Tensor(Rc::new(Tensor::from_f64(vec![all.len()], t, data)))
                })
                .collect();
            let out = exe.call(&format!("t_{s}_{ty}"), &cols).unwrap();
            let out = out[0].tensor().unwrap();
            for (i, args) in all.iter().enumerate() {
                let args: Vec<f64> = args.iter().map(|x| round(*x, ty)).collect();
                let want = round(eval.apply(&args).unwrap(), ty);
                let got = out.data[i].f();
                assert!(
                    near(got, want, ty, 2.0),
                    "{op} {ty} {args:?} over a tensor: JIT {got}, want {want}"
                );
            }
        }
    }
    eprintln!("{checked} scalar cases over {} ops", ops.len());
}
