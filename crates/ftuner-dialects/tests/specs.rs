//! The specs are consistent: every assembly format is well formed, every constraint name
//! is known, and docs/dialects is what ftuner-odsgen generates from ir-specs.

use std::path::Path;

#[test]
fn formats_and_constraints_are_valid() {
    let reg = ftuner_dialects::registry();
    let mut n = 0;
    for def in reg.ops() {
        n += 1;
        if def.format.is_some() {
            ftuner_dialects::format::check_format(def).unwrap();
        }
        for a in def.operands.iter().chain(def.results) {
            assert!(
                ftuner_ir::constraints::TYPE_CONSTRAINTS.contains(&a.constraint),
                "{}: unknown type constraint {}",
                def.name,
                a.constraint
            );
        }
        for a in def.attributes {
            let c = a.constraint;
            assert!(
                ftuner_ir::constraints::ATTR_CONSTRAINTS.contains(&c)
                    || c.starts_with("I64Enum:")
                    || c.starts_with('#'),
                "{}: unknown attribute constraint {c}",
                def.name
            );
        }
        for (name, text) in def.defaults {
            ftuner_dialects::format::parse_attr_text(&ftuner_dialects::context(), text)
                .unwrap_or_else(|e| panic!("{}: default of {name}: {e}", def.name));
        }
    }
    assert!(n > 150, "only {n} ops registered");
}

#[test]
fn dialect_docs_are_up_to_date() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let (_, docs) = ftuner_odsgen::generate_all(&root.join("ir-specs")).unwrap();
    for (name, md) in docs {
        let p = root.join("docs/dialects").join(format!("{name}.md"));
        let committed = std::fs::read_to_string(&p).unwrap_or_default();
        assert!(committed == md, "{} is stale: run `make docs`", p.display());
    }
}

#[test]
fn generated_builders_make_valid_ops() {
    use ftuner_dialects::{gen_arith::AddfOp, gen_linalg::MatmulOp};
    let ctx = ftuner_dialects::context();
    let src = "func.func @f(%a: f32, %x: tensor<4x8xf32>, %y: tensor<8x2xf32>, %z: tensor<4x2xf32>) -> f32 {\n  return %a : f32\n}";
    let mut m = ftuner_ir::parse_module(&ctx, src, "b.mlir").unwrap();
    let ir = &mut m.ir;
    let func = ir.block_ops_vec(ir.region_entry(ir.regions_of(m.top)[0]).unwrap())[0];
    let entry = ir.region_entry(ir.regions_of(func)[0]).unwrap();
    let args = ir.block_args(entry).to_vec();
    let ret = ir.terminator(entry).unwrap();
    let loc = ir.loc(ret);
    let fm = ftuner_ir::Attribute::dialect("arith", "fastmath<none>");
    let add = AddfOp::build(ir, loc, args[0], args[0], ftuner_ir::Type::f32(), Some(fm));
    ir.insert_before(ret, add.0);
    assert_eq!(add.lhs(ir), args[0]);
    let r = ir.result(add.0, 0);
    ir.set_operand(ret, 0, r);
    // Structured op: builder fills operandSegmentSizes; the body comes from the region builder.
    let ty = ir.value_type(args[3]);
    let mm = MatmulOp::build(ir, loc, &[args[1], args[2]], &[args[3]], &[ty], None, None);
    let region = ir.regions_of(mm.0)[0];
    ftuner_dialects::linalg::body::build_body(
        ir,
        "linalg.matmul",
        region,
        &[args[1], args[2]],
        &[args[3]],
        loc,
        false,
    )
    .unwrap();
    ir.insert_before(ret, mm.0);
    assert_eq!(mm.inputs(ir), vec![args[1], args[2]]);
    assert_eq!(mm.outputs(ir), vec![args[3]]);
    let errs = ftuner_ir::verify::verify(&ctx, &m.ir, m.top);
    assert!(errs.is_empty(), "{errs:?}");
    let text = ftuner_ir::print_module(&m.ir, &ctx, m.top, Default::default());
    assert!(text.contains("arith.addf %arg0, %arg0 : f32"), "{text}");
    assert!(text.contains("linalg.matmul ins(%arg1, %arg2"), "{text}");
}

/// `DestinationStyleOpInterface`: linalg's structured ops and `ukernel.patch` have it (their
/// inputs and inits split as written), their terminators and index ops do not.
#[test]
fn destination_style_ops_are_found_through_the_context() {
    let ctx = ftuner_dialects::context();
    for name in [
        "linalg.matmul",
        "linalg.generic",
        "linalg.fill",
        "ukernel.patch",
    ] {
        assert!(ctx.is_destination_style(name), "{name}");
    }
    for name in ["linalg.yield", "linalg.index", "tensor.empty", "arith.addf"] {
        assert!(!ctx.is_destination_style(name), "{name}");
    }
    let src = "func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %c: tensor<4x2xf32>) -> tensor<4x2xf32> {\n  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>\n  return %r : tensor<4x2xf32>\n}";
    let m = ftuner_ir::parse_module(&ctx, src, "d.mlir").unwrap();
    let mut mm = None;
    m.ir.walk_pre(m.top, &mut |o| {
        if m.ir.name(o) == "linalg.matmul" {
            mm = Some(o);
        }
    });
    let (ins, inits) = ctx.dps_operands(&m.ir, mm.unwrap()).unwrap();
    assert_eq!((ins.len(), inits.len()), (2, 1));
}
