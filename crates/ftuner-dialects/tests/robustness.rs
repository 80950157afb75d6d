//! No input makes the parser, verifier or printer panic or overflow the stack: every
//! prefix of a real input, random byte flips, and 10,000-deep nesting of every construct
//! give an error or a module.

use ftuner_ir::{parse_module, print_module, verify::verify, PrintOptions};

fn check(src: &str) {
    let mut ctx = ftuner_dialects::context();
    for allow in [false, true] {
        ctx.allow_unregistered = allow;
        if let Ok(mut m) = parse_module(&ctx, src, "fuzz.mlir") {
            ftuner_dialects::after_parse(&mut m.ir, m.top);
            let errs = verify(&ctx, &m.ir, m.top);
            if errs.is_empty() {
                let _ = print_module(
                    &m.ir,
                    &ctx,
                    m.top,
                    PrintOptions {
                        generic: false,
                        debuginfo: true,
                    },
                );
            }
            let _ = print_module(
                &m.ir,
                &ctx,
                m.top,
                PrintOptions {
                    generic: true,
                    debuginfo: false,
                },
            );
        }
    }
}

const DENSE: &str = include_str!("../../../examples/dense_dynamic.mlir");
const BMM: &str = include_str!("../../../examples/bmm_nt_dynamic.mlir");

#[test]
fn every_prefix() {
    for src in [DENSE, BMM] {
        for i in 0..=src.len() {
            if src.is_char_boundary(i) {
                check(&src[..i]);
            }
        }
    }
}

#[test]
fn random_byte_flips() {
    // A small deterministic generator (xorshift) so failures reproduce.
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let alphabet = b"%^@#!<>()[]{},:=-+*?\"x0123456789.aeiz \n";
    for _ in 0..3000 {
        let mut b = DENSE.as_bytes().to_vec();
        let flips = 1 + (next() % 4) as usize;
        for _ in 0..flips {
            let i = (next() as usize) % b.len();
            b[i] = alphabet[(next() as usize) % alphabet.len()];
        }
        if let Ok(t) = String::from_utf8(b) {
            check(&t);
        }
    }
}

#[test]
fn deep_nesting() {
    let n = 10_000;
    let cases = [
        format!(
            "{}{}",
            "\"test.op\"() ({\n".repeat(n),
            "}) : () -> ()\n".repeat(n)
        ),
        format!(
            "\"test.op\"() {{a = {}1{}}} : () -> ()",
            "[".repeat(n),
            "]".repeat(n)
        ),
        format!(
            "\"test.op\"() : () -> ({}i32{})",
            "tuple<".repeat(n),
            ">".repeat(n)
        ),
        format!(
            "\"test.op\"() {{m = affine_map<(d0) -> ({}d0{})>}} : () -> ()",
            "(".repeat(n),
            ")".repeat(n)
        ),
        format!(
            "\"test.op\"() {{a = dense<{}1{}> : tensor<1xi32>}} : () -> ()",
            "[".repeat(n),
            "]".repeat(n)
        ),
        format!(
            "\"test.op\"() : () -> () loc({}unknown{})",
            "fused[".repeat(n),
            "]".repeat(n)
        ),
        format!(
            "func.func @f() {{\n{}{}return\n}}",
            "scf.execute_region {\n".repeat(n),
            "}\n".repeat(n)
        ),
        format!(
            "\"test.op\"() {{a = {}{}}} : () -> ()",
            "{b = ".repeat(n),
            "}".repeat(n)
        ),
        format!("\"test.op\"() : () -> {}i32", "(i32) -> ".repeat(n)),
    ];
    for c in &cases {
        check(c);
    }
}
