//! The interpreter's multiply-accumulate fast path gives the general path's results bit for
//! bit: each contraction below is run twice, once with the body `out + a * b` (the fast
//! path) and once with the same value spelled `out - (-(a * b))` (exact in IEEE
//! arithmetic, and a body the fast path does not take); and a matmul against a direct
//! loop that rounds as f32 ops do.

use ftuner_interp::{run, RtVal, Tensor};
use ftuner_ir::{parse_module, Type};
use std::rc::Rc;

fn rand(seed: &mut u64, shape: Vec<usize>, ty: &str) -> Tensor {
    let n: usize = shape.iter().product();
    let data = (0..n)
        .map(|i| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            // Varied magnitudes, so the order of accumulation shows in the low bits.
            let x = ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0;
            let x = x * [1.0, 1e3, 1e-3][i % 3];
            if ty == "f32" {
                x as f32 as f64
            } else {
                x
            }
        })
        .collect();
    let t = if ty == "f32" {
        Type::f32()
    } else {
        Type::f64()
    };
    Tensor::from_f64(shape, t, data)
}

/// A generic with `maps` over `iters`, body `out + a * b` (or its general-path spelling).
fn generic(maps: [&str; 3], iters: &str, shapes: [&str; 3], ty: &str, fast: bool) -> String {
    let body = if fast {
        format!("%m = arith.mulf %a, %b : {ty}\n    %r = arith.addf %o, %m : {ty}")
    } else {
        format!(
            "%m = arith.mulf %a, %b : {ty}\n    %n = arith.negf %m : {ty}\n    %r = arith.subf %o, %n : {ty}"
        )
    };
    format!(
        "#a = affine_map<{}>\n#b = affine_map<{}>\n#c = affine_map<{}>\n\
         func.func @f(%x: {s0}, %y: {s1}, %z: {s2}) -> {s2} {{\n\
         %r = linalg.generic {{indexing_maps = [#a, #b, #c], iterator_types = [{iters}]}} \
         ins(%x, %y : {s0}, {s1}) outs(%z : {s2}) {{\n  ^bb0(%a: {ty}, %b: {ty}, %o: {ty}):\n    {body}\n    linalg.yield %r : {ty}\n  }} -> {s2}\n  return %r : {s2}\n}}\n",
        maps[0],
        maps[1],
        maps[2],
        s0 = shapes[0],
        s1 = shapes[1],
        s2 = shapes[2],
    )
}

fn interpret(src: &str, args: &[Tensor]) -> Vec<f64> {
    let ctx = ftuner_transforms::context();
    let m = parse_module(&ctx, src, "t.mlir").unwrap();
    let args = args
        .iter()
        .map(|t| RtVal::Tensor(Rc::new(t.clone())))
        .collect();
    let out = run(&ctx, &m.ir, m.top, "f", args).unwrap();
    out[0].tensor().unwrap().to_f64()
}

fn dims(shape: &[usize]) -> Vec<usize> {
    shape.to_vec()
}

fn tensor_ty(shape: &[usize], ty: &str) -> String {
    let d: Vec<String> = shape.iter().map(|x| x.to_string()).collect();
    format!("tensor<{}x{ty}>", d.join("x"))
}

/// Run `maps` both ways on random operands of `shapes`; the results must be identical.
fn same_both_ways(maps: [&str; 3], iters: &str, shapes: [&[usize]; 3], ty: &str) -> Vec<f64> {
    let mut seed = 7u64;
    let args: Vec<Tensor> = shapes
        .iter()
        .map(|s| rand(&mut seed, dims(s), ty))
        .collect();
    let tys = [
        tensor_ty(shapes[0], ty),
        tensor_ty(shapes[1], ty),
        tensor_ty(shapes[2], ty),
    ];
    let st = [tys[0].as_str(), tys[1].as_str(), tys[2].as_str()];
    let fast = interpret(&generic(maps, iters, st, ty, true), &args);
    let general = interpret(&generic(maps, iters, st, ty, false), &args);
    assert_eq!(fast.len(), general.len());
    for (i, (x, y)) in fast.iter().zip(&general).enumerate() {
        assert!(
            x.to_bits() == y.to_bits(),
            "{maps:?} {ty}: element {i}: {x} vs {y}"
        );
    }
    fast
}

const MM: [&str; 3] = [
    "(d0, d1, d2) -> (d0, d2)",
    "(d0, d1, d2) -> (d2, d1)",
    "(d0, d1, d2) -> (d0, d1)",
];
const MM_ITERS: &str = "\"parallel\", \"parallel\", \"reduction\"";

#[test]
fn matmul_fast_path_is_the_general_path_and_rounds_as_f32() {
    for ty in ["f32", "f64"] {
        let (m, n, k) = (7, 13, 37);
        let got = same_both_ways(MM, MM_ITERS, [&[m, k], &[k, n], &[m, n]], ty);
        // A direct loop, k ascending, each product and sum rounded to the type.
        let mut seed = 7u64;
        let a = rand(&mut seed, vec![m, k], ty);
        let b = rand(&mut seed, vec![k, n], ty);
        let c = rand(&mut seed, vec![m, n], ty);
        let r = |x: f64| if ty == "f32" { x as f32 as f64 } else { x };
        for i in 0..m {
            for j in 0..n {
                let mut acc = c.data[i * n + j].f();
                for kk in 0..k {
                    acc = r(acc + r(a.data[i * k + kk].f() * b.data[kk * n + j].f()));
                }
                assert_eq!(acc.to_bits(), got[i * n + j].to_bits(), "{ty} ({i}, {j})");
            }
        }
    }
}

#[test]
fn transposed_batched_and_windowed_contractions_match_the_general_path() {
    // Batch matmul with B transposed (no contiguous output step in B).
    same_both_ways(
        [
            "(d0, d1, d2, d3) -> (d0, d1, d3)",
            "(d0, d1, d2, d3) -> (d0, d2, d3)",
            "(d0, d1, d2, d3) -> (d0, d1, d2)",
        ],
        "\"parallel\", \"parallel\", \"parallel\", \"reduction\"",
        [&[3, 5, 9], &[3, 6, 9], &[3, 5, 6]],
        "f32",
    );
    // A 2-d convolution, NHWC x HWCF, stride 2 and dilation 2 in the width.
    same_both_ways(
        [
            "(n, h, w, f, kh, kw, c) -> (n, h + kh, w * 2 + kw * 2, c)",
            "(n, h, w, f, kh, kw, c) -> (kh, kw, c, f)",
            "(n, h, w, f, kh, kw, c) -> (n, h, w, f)",
        ],
        "\"parallel\", \"parallel\", \"parallel\", \"parallel\", \"reduction\", \"reduction\", \"reduction\"",
        [&[2, 6, 11, 3], &[3, 2, 3, 4], &[2, 4, 4, 4]],
        "f32",
    );
    // A reduction to a scalar-like output (a dot product into a 1-element tensor).
    same_both_ways(
        ["(d0) -> (d0)", "(d0) -> (d0)", "(d0) -> (0)"],
        "\"reduction\"",
        [&[33], &[33], &[1]],
        "f64",
    );
}

#[test]
fn out_of_bounds_windows_are_errors_before_any_work() {
    let src = generic(
        [
            "(d0, d1) -> (d0 + d1)",
            "(d0, d1) -> (d1)",
            "(d0, d1) -> (d0)",
        ],
        "\"parallel\", \"reduction\"",
        ["tensor<?xf32>", "tensor<?xf32>", "tensor<?xf32>"],
        "f32",
        true,
    );
    let ctx = ftuner_transforms::context();
    let m = parse_module(&ctx, &src, "t.mlir").unwrap();
    let mut seed = 1u64;
    let args = [vec![8], vec![4], vec![6]]
        .into_iter()
        .map(|s| RtVal::Tensor(Rc::new(rand(&mut seed, s, "f32"))))
        .collect();
    let e = run(&ctx, &m.ir, m.top, "f", args).unwrap_err();
    assert!(
        e.message
            .contains("operand #0 accessed at 8 in dimension 0 of size 8"),
        "{}",
        e.message
    );
}
