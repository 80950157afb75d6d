fn main() {
    let which: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let n: usize = std::env::args().nth(2).unwrap().parse().unwrap();
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
    let src = cases[which].clone();
    let h = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let mut ctx = ftuner_dialects::context();
            ctx.allow_unregistered = true;
            match ftuner_ir::parse_module(&ctx, &src, "x") {
                Ok(m) => {
                    let e = ftuner_ir::verify::verify(&ctx, &m.ir, m.top);
                    println!("ok {}", e.len());
                    let _ = ftuner_ir::print_module(&m.ir, &ctx, m.top, Default::default());
                }
                Err(e) => println!("err {}", e.message),
            }
        })
        .unwrap();
    let _ = h.join();
}
