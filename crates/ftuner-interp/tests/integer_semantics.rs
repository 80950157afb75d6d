//! The interpreter and the folders compute arith's integer ops the same way (one
//! definition, `ftuner_dialects::arith_semantics`), including where the interpreter used
//! to compute on f64: `ceildivsi(7, -2)` is -3, `divui(-1, 2)` is 2^31 - 1 in i32, adds
//! wrap, and 64-bit values are exact (`i64::MAX + 1` is `i64::MIN`; the interpreter's f64
//! carrier held integers to 2^53). Every integer binary op at widths 8, 32 and 64 over
//! edge values, the widths' minimum and maximum included. Then the folds
//! of float ops and casts that ftuner-runtime's differential test (interpreter, folder
//! and JIT on every arith and math op) found wrong.

use ftuner_dialects::arith_semantics::{int_binary, INT_BINARY_OPS as OPS};
use ftuner_interp::{run, RtVal, Word};
use ftuner_ir::parse_module;
use ftuner_pass::PassManager;

/// Edge values of a `w`-bit integer.
fn edges(w: u32) -> Vec<i128> {
    let min = -(1i128 << (w - 1));
    let max = (1i128 << (w - 1)) - 1;
    let mut v = vec![
        0,
        1,
        -1,
        2,
        -2,
        3,
        -7,
        7,
        100,
        min,
        max,
        min + 1,
        max - 1,
        (1 << 53) + 1,
        w as i128 - 1,
    ];
    v.retain(|x| (min..=max).contains(x));
    v.sort_unstable();
    v.dedup();
    v
}

fn interpret(op: &str, ty: &str, a: i128, b: i128) -> Result<i128, String> {
    let src = format!(
        "func.func @f(%a: {ty}, %b: {ty}) -> {ty} {{\n  %r = arith.{op} %a, %b : {ty}\n  return %r : {ty}\n}}\n"
    );
    let ctx = ftuner_transforms::context();
    let m = parse_module(&ctx, &src, "t.mlir").map_err(|e| format!("{e:?}"))?;
    let out = run(
        &ctx,
        &m.ir,
        m.top,
        "f",
        vec![
            RtVal::Scalar(Word::int(a as i64)),
            RtVal::Scalar(Word::int(b as i64)),
        ],
    )
    .map_err(|e| format!("{e:?}"))?;
    match out[0] {
        RtVal::Scalar(v) => Ok(v.i() as i128),
        _ => Err("not a scalar".into()),
    }
}

/// What canonicalize folds `arith.<op>` of two constants to (None: not folded).
fn fold(op: &str, ty: &str, a: i128, b: i128) -> Option<i128> {
    let src = format!(
        "func.func @f() -> {ty} {{\n  %a = arith.constant {a} : {ty}\n  %b = arith.constant {b} : {ty}\n  %r = arith.{op} %a, %b : {ty}\n  return %r : {ty}\n}}\n"
    );
    let ctx = ftuner_transforms::context();
    let mut m = parse_module(&ctx, &src, "t.mlir").ok()?;
    let mut reg = ftuner_pass::PassRegistry::default();
    ftuner_transforms::register_passes(&mut reg);
    let mut pm = PassManager::from_pipeline(&reg, "builtin.module(canonicalize)").ok()?;
    pm.run(&ctx, &mut m.ir, m.top).ok()?;
    let text = ftuner_ir::print_module(&m.ir, &ctx, m.top, ftuner_ir::PrintOptions::default());
    if text.contains(&format!("arith.{op}")) {
        return None;
    }
    let line = text.lines().find(|l| l.contains("arith.constant"))?;
    let v = line.split("arith.constant ").nth(1)?.split(" :").next()?;
    match v {
        "true" => Some(1),
        "false" => Some(0),
        v => v.parse().ok(),
    }
}

#[test]
fn interpreter_and_folder_agree_with_the_definition() {
    let mut cases = 0;
    for (w, ty) in [(8u32, "i8"), (32, "i32"), (64, "i64")] {
        for op in OPS {
            for a in edges(w) {
                for b in edges(w) {
                    let want = int_binary(op, a, b, w);
                    let got = interpret(op, ty, a, b);
                    match want {
                        Some(v) => assert_eq!(got, Ok(v), "interpreter: {ty} {op}({a}, {b})"),
                        None => assert!(
                            got.is_err(),
                            "interpreter: {ty} {op}({a}, {b}) is undefined, got {got:?}"
                        ),
                    }
                    assert_eq!(fold(op, ty, a, b), want, "folder: {ty} {op}({a}, {b})");
                    cases += 1;
                }
            }
        }
    }
    assert!(cases > 3000, "{cases} cases");
}

#[test]
fn the_reported_cases() {
    assert_eq!(interpret("ceildivsi", "i64", 7, -2), Ok(-3));
    assert_eq!(interpret("divui", "i32", -1, 2), Ok((1 << 31) - 1));
    assert_eq!(
        interpret("addi", "i32", i32::MAX as i128, 1),
        Ok(i32::MIN as i128)
    );
    assert_eq!(interpret("addi", "i8", 127, 1), Ok(-128));
    assert!(interpret("divsi", "i32", i32::MIN as i128, -1).is_err());
    // Exact past 2^53 (an UNMODELLED error before; i64::MAX was 2^63 in f64).
    let (max, min) = (i64::MAX as i128, i64::MIN as i128);
    assert_eq!(interpret("addi", "i64", max, 1), Ok(min));
    assert_eq!(interpret("muli", "i64", max, 2), Ok(-2));
    assert_eq!(interpret("divui", "i64", -1, 2), Ok(max));
    assert_eq!(
        interpret("subi", "i64", (1 << 53) + 1, 0),
        Ok((1 << 53) + 1)
    );
}

/// What canonicalize folds the function `src` (one result, of type `ty`) to.
fn fold_fn(src: &str) -> Option<ftuner_dialects::util::Const> {
    let ctx = ftuner_transforms::context();
    let mut m = parse_module(&ctx, src, "t.mlir").unwrap();
    let mut reg = ftuner_pass::PassRegistry::default();
    ftuner_transforms::register_passes(&mut reg);
    let mut pm = PassManager::from_pipeline(&reg, "builtin.module(canonicalize)").unwrap();
    pm.run(&ctx, &mut m.ir, m.top).unwrap();
    let ir = &m.ir;
    let mut ret = None;
    ir.walk_pre(m.top, &mut |o| {
        if ir.name(o) == "func.return" {
            ret = Some(o);
        }
    });
    let def = ir.defining_op(ir.operand(ret?, 0))?;
    if ir.name(def) != "arith.constant" {
        return None;
    }
    ftuner_dialects::util::const_value(ir.attr(def, "value")?).map(|c| c.0)
}

/// `arith.<op> %c : from to to` of the constant `lit`, folded.
fn fold_cast(op: &str, lit: &str, from: &str, to: &str) -> Option<ftuner_dialects::util::Const> {
    fold_fn(&format!(
        "func.func @f() -> {to} {{\n  %c = arith.constant {lit} : {from}\n  %r = arith.{op} %c : {from} to {to}\n  return %r : {to}\n}}\n"
    ))
}

/// The folds the differential test (ftuner-runtime's `differential`) found wrong against
/// the interpreter and the JIT.
#[test]
fn the_folds_the_differential_test_found() {
    use ftuner_dialects::util::Const;
    let float = |c: Option<Const>| match c {
        Some(Const::Float(x)) => Some(x.to_bits()),
        _ => None,
    };
    // maximumf/minimumf order -0 < +0 (folded to the other zero before).
    let minmax = |op: &str, a: &str, b: &str| {
        float(fold_fn(&format!(
            "func.func @f() -> f32 {{\n  %a = arith.constant {a} : f32\n  %b = arith.constant {b} : f32\n  %r = arith.{op} %a, %b : f32\n  return %r : f32\n}}\n"
        )))
    };
    assert_eq!(minmax("maximumf", "-0.0", "0.0"), Some(0f64.to_bits()));
    assert_eq!(minmax("minimumf", "0.0", "-0.0"), Some((-0f64).to_bits()));
    // Out of range is poison: not folded (was folded to the wrapped value).
    assert_eq!(fold_cast("fptosi", "1.0e10", "f32", "i32"), None);
    assert_eq!(fold_cast("fptoui", "2.5", "f64", "i1"), None);
    assert_eq!(fold_cast("fptosi", "1.0", "f64", "i1"), None);
    assert_eq!(
        fold_cast("fptosi", "-1.5", "f64", "i1"),
        Some(Const::Int(1))
    );
    // 2^62 + 2^38 + 1 rounds up in f32; through f64 it rounded twice, to 2^62.
    assert_eq!(
        float(fold_cast("sitofp", "4611686293305294849", "i64", "f32")),
        Some((2f64.powi(62) + 2f64.powi(39)).to_bits())
    );
    // bitcast of a constant folds (it did not).
    assert_eq!(
        fold_cast("bitcast", "1.0", "f32", "i32"),
        Some(Const::Int(0x3F80_0000))
    );
    assert_eq!(
        float(fold_cast("bitcast", "-9223372036854775808", "i64", "f64")),
        Some((-0f64).to_bits())
    );
}

/// An argument is wrapped to its parameter's width, whatever the tensor says it holds (15
/// passed as an i64 to an i4 parameter is -1, as compiled code reads the low bits).
#[test]
fn arguments_are_wrapped_to_the_parameters_width() {
    let src = "func.func @f(%x: tensor<2xi4>) -> tensor<2xi4> {\n  return %x : tensor<2xi4>\n}\n";
    let ctx = ftuner_transforms::context();
    let m = parse_module(&ctx, src, "t.mlir").unwrap();
    let t = ftuner_interp::Tensor::from_i64(vec![2], ftuner_ir::Type::i64(), vec![15, 3]);
    let out = run(&ctx, &m.ir, m.top, "f", vec![RtVal::Tensor(t.into())]).unwrap();
    assert_eq!(out[0].tensor().unwrap().to_i64(), vec![-1, 3]);
}
