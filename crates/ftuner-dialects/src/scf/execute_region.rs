//! `scf.execute_region`: custom syntax, verifier and upstream's two inliners
//! (`SingleBlockExecuteInliner`, `MultiBlockExecuteInliner`).
//!
//! ```mlir
//! %v = scf.execute_region -> i64 {
//!   cf.cond_br %c, ^bb1, ^bb2
//! ^bb1:
//!   scf.yield %x : i64
//! ^bb2:
//!   scf.yield %y : i64
//! }
//! ```

use crate::util::{result_types, value_types};
use ftuner_ir::dialect::CanonFn;
use ftuner_ir::lexer::Tok;
use ftuner_ir::parser::{OperationState, PResult, Parser};
use ftuner_ir::Context;
use ftuner_ir::{intern_name, Attribute, Ir, OpId, OpPrinter, OpSpec, Type, Value};

/// `scf.execute_region [-> types] [no_inline] region [attr-dict]`
pub fn parse_execute_region(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    if p.consume_if(Tok::Arrow) {
        st.result_types = p.parse_function_result_types()?;
    }
    if p.parse_optional_keyword("no_inline") {
        st.add_attr("no_inline", Attribute::unit());
    }
    st.regions.push(p.parse_region()?);
    p.parse_attr_dict_into(st, false)?;
    Ok(())
}

pub fn print_execute_region(pr: &mut OpPrinter<'_>, op: OpId) {
    let ir = pr.ir;
    let res: Vec<Type> = result_types(ir, op);
    if !res.is_empty() {
        pr.write(" -> ");
        pr.print_result_types(&res);
    }
    pr.write(" ");
    if ir.attr(op, "no_inline").is_some() {
        pr.write("no_inline ");
    }
    if let Some(r) = ir.regions_of(op).first() {
        pr.print_region(*r, false, true);
    }
    pr.print_optional_attr_dict(op, &["no_inline"]);
}

pub fn verify_execute_region(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let r = *ir.regions_of(op).first().ok_or("expects one region")?;
    let b = ir
        .region_entry(r)
        .ok_or("region needs to have at least one block")?;
    if !ir.block_args(b).is_empty() {
        return Err("region cannot have any arguments".into());
    }
    let want: Vec<Type> = result_types(ir, op);
    for blk in &ir.region(r).blocks {
        if let Some(t) = ir.terminator(*blk).filter(|t| ir.name(*t) == "scf.yield") {
            let got: Vec<Type> = value_types(ir, ir.operands(t));
            if got != want {
                return Err(format!(
                    "expects 'scf.yield' to yield the result types ({} values), got {} values of other types",
                    want.len(),
                    got.len()
                ));
            }
        }
    }
    Ok(())
}

/// A single-block region runs in place (upstream's `SingleBlockExecuteInliner`).
fn execute_single_block(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    if ir.attr(op, "no_inline").is_some() {
        return false;
    }
    let Some(&r) = ir.regions_of(op).first() else {
        return false;
    };
    let blocks = ir.region(r).blocks.clone();
    let [b] = blocks[..] else { return false };
    if ir.terminator(b).is_none_or(|t| ir.name(t) != "scf.yield") {
        return false;
    }
    let Some(t) = ir.inline_block_before(b, op, &[]) else {
        return false;
    };
    let vals = ir.operands(t).to_vec();
    ir.erase_op(t);
    ir.replace_op(op, &vals);
    true
}

fn branch(ir: &mut Ir, loc: Attribute, dest: ftuner_ir::BlockId, args: Vec<Value>) -> OpId {
    let mut spec = OpSpec::new(intern_name("cf.br"), loc).operands(args);
    spec.successors = vec![dest];
    ir.create_op(spec)
}

/// A region of several blocks, directly in a function (or another execute_region), is
/// spliced into it: the block is split after the op, each `scf.yield` becomes a branch to
/// the second half, whose arguments are the results (upstream's `MultiBlockExecuteInliner`).
fn execute_multi_block(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    if ir.attr(op, "no_inline").is_some() {
        return false;
    }
    if ir
        .parent_op(op)
        .is_none_or(|p| !matches!(ir.name(p), "func.func" | "scf.execute_region"))
    {
        return false;
    }
    let Some(&r) = ir.regions_of(op).first() else {
        return false;
    };
    let Some(entry) = ir.region_entry(r) else {
        return false;
    };
    let Some(next) = ir.op(op).next else {
        return false;
    };
    let results = ir.results(op).to_vec();
    let types: Vec<Type> = value_types(ir, &results);
    let Some(post) = ir.split_block_before(next, &types) else {
        return false;
    };
    let args = ir.block_args(post).to_vec();
    for (res, a) in results.iter().zip(&args) {
        ir.replace_all_uses(*res, *a);
    }
    let loc = ir.loc(op);
    for b in ir.inline_region_before(r, post) {
        if let Some(t) = ir.terminator(b).filter(|t| ir.name(*t) == "scf.yield") {
            let vals = ir.operands(t).to_vec();
            let br = branch(ir, ir.loc(t), post, vals);
            ir.insert_before(t, br);
            ir.erase_op(t);
        }
    }
    let br = branch(ir, loc, entry, vec![]);
    ir.insert_after(op, br);
    ir.erase_op(op);
    true
}

pub const CANONICALIZE_EXECUTE_REGION: &[CanonFn] = &[execute_single_block, execute_multi_block];
