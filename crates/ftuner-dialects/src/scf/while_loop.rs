//! `scf.while`: custom syntax and verifier (upstream's `WhileOp::parse` / `print` / `verify`).
//!
//! ```mlir
//! %r = scf.while (%a = %init) : (i32) -> i32 {
//!   %c = "test.cond"(%a) : (i32) -> i1
//!   scf.condition(%c) %a : i32
//! } do {
//! ^bb0(%x: i32):
//!   scf.yield %x : i32
//! }
//! ```
//! The `before` region takes the initial values (named in the assignment list, its entry
//! arguments are not printed); the `after` region declares its own arguments.

use crate::util::{result_types, value_types};
use ftuner_ir::lexer::Tok;
use ftuner_ir::parser::{Argument, OperationState, PResult, Parser};
use ftuner_ir::Context;
use ftuner_ir::{BlockId, Ir, OpId, OpPrinter, Type, TypeKind};

/// `scf.while [(%a = %v, ...)] : (inputs) -> results before-region do after-region [attributes attr-dict]`
pub fn parse_while(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    let mut names = vec![];
    let mut inits = vec![];
    if p.consume_if(Tok::LParen) && !p.consume_if(Tok::RParen) {
        loop {
            names.push(p.parse_operand()?);
            p.expect(Tok::Equal, "'='")?;
            inits.push(p.parse_operand()?);
            if p.consume_if(Tok::RParen) {
                break;
            }
            p.expect(Tok::Comma, "','")?;
        }
    }
    p.expect(Tok::Colon, "':'")?;
    let at = p.current_offset();
    let fty = p.parse_type()?;
    if !matches!(fty.kind(), TypeKind::Function { .. }) {
        return Err(p.err_at(at, "expected a function type `(inputs) -> results`"));
    }
    let inputs = fty.function_inputs();
    if inputs.len() != inits.len() {
        return Err(p.err_at(
            at,
            format!(
                "expected as many input types as operands (expected {} got {})",
                inits.len(),
                inputs.len()
            ),
        ));
    }
    st.operands = p.resolve_operands(&inits, inputs, at)?;
    st.result_types = fty.function_results().to_vec();
    let args: Vec<Argument> = names
        .into_iter()
        .zip(inputs)
        .map(|(name, ty)| Argument {
            name,
            ty: *ty,
            attrs: None,
            loc: None,
        })
        .collect();
    st.regions.push(p.parse_region_with_args(&args, false)?);
    p.parse_keyword("do")?;
    st.regions.push(p.parse_region()?);
    p.parse_attr_dict_into(st, true)?;
    Ok(())
}

pub fn print_while(pr: &mut OpPrinter<'_>, op: OpId) {
    let ir = pr.ir;
    let regions = ir.regions_of(op).to_vec();
    let inits = ir.operands(op).to_vec();
    let before_args = regions
        .first()
        .and_then(|r| ir.region_entry(*r))
        .map(|b| ir.block_args(b).to_vec())
        .unwrap_or_default();
    if !inits.is_empty() {
        pr.write(" (");
        for (i, (a, v)) in before_args.iter().zip(&inits).enumerate() {
            if i > 0 {
                pr.write(", ");
            }
            pr.print_operand(*a);
            pr.write(" = ");
            pr.print_operand(*v);
        }
        pr.write(")");
    }
    pr.write(" : (");
    pr.print_types_of(&inits);
    pr.write(") -> ");
    let res: Vec<Type> = result_types(ir, op);
    pr.print_result_types(&res);
    pr.write(" ");
    pr.print_region(regions[0], false, true);
    pr.write(" do ");
    pr.print_region(regions[1], true, true);
    pr.print_optional_attr_dict_with_keyword(op, &[]);
}

/// The entry block of `region` and its terminator, which must be `name`.
fn block_ending_in(
    ir: &Ir,
    op: OpId,
    region: usize,
    name: &str,
    which: &str,
) -> Result<(BlockId, OpId), String> {
    let msg = || format!("expects the '{which}' region to terminate with '{name}'");
    let r = *ir.regions_of(op).get(region).ok_or_else(msg)?;
    let b = ir.region_entry(r).ok_or_else(msg)?;
    let last = *ir.region(r).blocks.last().ok_or_else(msg)?;
    let t = ir.terminator(last).ok_or_else(msg)?;
    if ir.name(t) != name {
        return Err(msg());
    }
    Ok((b, t))
}

fn mismatch(what: &str, a: &[Type], b: &[Type]) -> Result<(), String> {
    if a == b {
        return Ok(());
    }
    let show = |v: &[Type]| {
        v.iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    Err(format!("{what}: ({}) vs ({})", show(a), show(b)))
}

pub fn verify_while(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    if ir.regions_of(op).len() != 2 {
        return Err("expects two regions".into());
    }
    let (before, cond) = block_ending_in(ir, op, 0, "scf.condition", "before")?;
    let (after, yld) = block_ending_in(ir, op, 1, "scf.yield", "after")?;
    let inits = value_types(ir, ir.operands(op));
    let before_args = value_types(ir, ir.block_args(before));
    mismatch(
        "the 'before' region's arguments must have the types of the initial values",
        &before_args,
        &inits,
    )?;
    let forwarded = value_types(ir, ir.operands(cond).get(1..).unwrap_or(&[]));
    mismatch(
        "'scf.condition' must forward values of the 'after' region's argument types",
        &forwarded,
        &value_types(ir, ir.block_args(after)),
    )?;
    mismatch(
        "'scf.condition' must forward values of the result types",
        &forwarded,
        &value_types(ir, ir.results(op)),
    )?;
    mismatch(
        "the 'after' region must yield values of the 'before' region's argument types",
        &value_types(ir, ir.operands(yld)),
        &before_args,
    )
}

/// `scf.condition` ends the `before` region of an `scf.while` and nowhere else.
pub fn verify_condition(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    match ir.parent_op(op) {
        Some(p) if ir.name(p) == "scf.while" => Ok(()),
        _ => Err("expects parent op 'scf.while'".into()),
    }
}
