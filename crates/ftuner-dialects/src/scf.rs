//! `scf`: `for` and `if` syntax and verifiers (`while` in `scf/while_loop.rs`,
//! `index_switch` in `scf/index_switch.rs`); canonicalization in `scf/canonicalize.rs`.

mod canonicalize;
mod execute_region;
mod forall;
mod forall_canonicalize;
mod index_switch;
mod parallel;
mod while_canonicalize;
mod while_loop;

pub use canonicalize::{for_trip_count, CANONICALIZE_FOR, CANONICALIZE_IF};
pub use execute_region::{
    parse_execute_region, print_execute_region, verify_execute_region, CANONICALIZE_EXECUTE_REGION,
};
pub use forall::{
    parse_forall, parse_forall_in_parallel, print_forall, print_forall_in_parallel, verify_forall,
    verify_forall_in_parallel,
};
pub use forall_canonicalize::CANONICALIZE_FORALL;
pub use index_switch::{parse_index_switch, print_index_switch, verify_index_switch};
pub use parallel::{
    parse_parallel, parse_reduce, print_parallel, print_reduce, verify_parallel, verify_reduce,
    CANONICALIZE_PARALLEL,
};
pub use while_canonicalize::CANONICALIZE_WHILE;
pub use while_loop::{parse_while, print_while, verify_condition, verify_while};

use ftuner_ir::lexer::Tok;
use ftuner_ir::parser::{Argument, OperationState, PResult, Parser};
use ftuner_ir::Context;
use ftuner_ir::{Ir, OpId, OpPrinter, Type};

/// Discardable unit attribute on an `scf.for` whose iterations are independent: each
/// writes its own part of the memory the loop writes and reads nothing another iteration
/// writes. `lower-ukernels` puts it on the loops over batches and full tiles;
/// `bufferize` does not hoist buffers out of such a loop (each iteration keeps its own);
/// `convert-parallel-loops-to-runtime` outlines the outermost one for the runtime's thread
/// pool (`rt.parallel_for`; one of a dynamic trip count holding marked loops `nested`, its
/// marked loops outlined too). Any other consumer,
/// upstream MLIR included, runs it as the plain loop it is.
pub const PARALLEL_ATTR: &str = "ftuner.parallel";

/// Discardable unit attribute on a register tile's k loop (an `scf.for` with vector
/// results) of a contraction whose contiguous B is read in place: `lower-ukernels` puts
/// it there when B is static, larger than the target's L2 (it comes from L3 at each
/// panel's first row strip), and its rows do not collide in L2's sets;
/// `prefetch-tile-updates` then prefetches the next column panel's rows into L2 while
/// this one is computed. Without it, no such prefetch.
pub const PREFETCH_NEXT_PANEL_ATTR: &str = "ftuner.prefetch_next_panel";

/// Discardable unit attribute on the loop over a contraction's full row strips (register
/// tiles along M, an `scf.for` over one column panel): `lower-ukernels` puts it there;
/// `prefetch-tile-updates` lets only the first few strips of such a loop prefetch the next
/// panel (the strips after them would fetch it again). A loop over panels, or over
/// anything else, never carries it, so a strip loop that canonicalization folded away
/// (a static M of one strip) leaves no loop to mistake for it.
pub const ROW_STRIPS_ATTR: &str = "ftuner.row_strips";

/// `scf.for %iv = %lb to %ub step %s [iter_args(%a = %init, ...) -> (types)] [: type] { ... }`
pub fn parse_for(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    let iv = p.parse_operand()?;
    p.expect(Tok::Equal, "'='")?;
    let lb = p.parse_operand()?;
    p.parse_keyword("to")?;
    let ub = p.parse_operand()?;
    p.parse_keyword("step")?;
    let step = p.parse_operand()?;
    let mut iter_names = vec![];
    let mut inits = vec![];
    let mut result_types = vec![];
    if p.parse_optional_keyword("iter_args") {
        p.expect(Tok::LParen, "'('")?;
        if !p.consume_if(Tok::RParen) {
            loop {
                iter_names.push(p.parse_operand()?);
                p.expect(Tok::Equal, "'='")?;
                inits.push(p.parse_operand()?);
                if p.consume_if(Tok::RParen) {
                    break;
                }
                p.expect(Tok::Comma, "','")?;
            }
        }
        p.expect(Tok::Arrow, "'->'")?;
        result_types = p.parse_function_result_types()?;
    }
    let mut ivt = Type::index();
    if p.consume_if(Tok::Colon) {
        ivt = p.parse_type()?;
    }
    let at = p.current_offset();
    st.operands.push(p.resolve_operand(&lb, ivt)?);
    st.operands.push(p.resolve_operand(&ub, ivt)?);
    st.operands.push(p.resolve_operand(&step, ivt)?);
    let inits = p.resolve_operands(&inits, &result_types, at)?;
    st.operands.extend(inits);
    let mut args = vec![Argument {
        name: iv,
        ty: ivt,
        attrs: None,
        loc: None,
    }];
    for (n, t) in iter_names.into_iter().zip(&result_types) {
        args.push(Argument {
            name: n,
            ty: *t,
            attrs: None,
            loc: None,
        });
    }
    let r = p.parse_region_with_args(&args, false)?;
    p.ensure_terminator(r, "scf.yield", st.loc);
    st.regions.push(r);
    st.result_types = result_types;
    p.parse_attr_dict_into(st, false)?;
    Ok(())
}

pub fn print_for(pr: &mut OpPrinter<'_>, op: OpId) {
    let ir = pr.ir;
    let r = ir.regions_of(op)[0];
    let Some(b) = ir.region_entry(r) else { return };
    let args = ir.block_args(b).to_vec();
    let ops = ir.operands(op).to_vec();
    pr.write(" ");
    pr.print_operand(args[0]);
    pr.write(" = ");
    pr.print_operand(ops[0]);
    pr.write(" to ");
    pr.print_operand(ops[1]);
    pr.write(" step ");
    pr.print_operand(ops[2]);
    if ops.len() > 3 {
        pr.write(" iter_args(");
        for (i, (a, v)) in args[1..].iter().zip(&ops[3..]).enumerate() {
            if i > 0 {
                pr.write(", ");
            }
            pr.print_operand(*a);
            pr.write(" = ");
            pr.print_operand(*v);
        }
        pr.write(") -> (");
        pr.print_types_of(&ops[3..]);
        pr.write(")");
    }
    let ivt = ir.value_type(args[0]);
    if !ivt.is_index() {
        pr.write(" : ");
        pr.print_type(ivt);
    }
    pr.write(" ");
    pr.print_region(r, false, ops.len() > 3);
    pr.print_optional_attr_dict(op, &[]);
}

pub fn verify_for(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let ops = ir.operands(op);
    let r = ir.regions_of(op)[0];
    let b = ir.region_entry(r).ok_or("expected body region")?;
    let args = ir.block_args(b);
    if args.len() != ops.len() - 2 {
        return Err("mismatch in number of loop-carried values and defined values".into());
    }
    if ir.value_type(args[0]) != ir.value_type(ops[0]) {
        return Err("expected induction variable to be same type as bounds and step".into());
    }
    let res = ir.results(op);
    if res.len() != ops.len() - 3 {
        return Err("mismatch in number of loop-carried values and defined values".into());
    }
    for (i, (r, init)) in res.iter().zip(&ops[3..]).enumerate() {
        if ir.value_type(*r) != ir.value_type(*init) {
            return Err(format!(
                "types mismatch between {i}th iter operand and defined value"
            ));
        }
    }
    for (i, (a, init)) in args[1..].iter().zip(&ops[3..]).enumerate() {
        if ir.value_type(*a) != ir.value_type(*init) {
            return Err(format!(
                "types mismatch between {i}th iter region arg and defined value"
            ));
        }
    }
    if let Some(t) = ir.terminator(b) {
        yields_results(ir, op, t)?;
    }
    Ok(())
}

/// An `scf.yield` ending a region of `op` yields `op`'s result types (upstream checks this
/// edge of the region-branch interface). Without it an `scf.if` yielding f32 for a bf16
/// result verified, and canonicalization made an `arith.select` that does not.
fn yields_results(ir: &Ir, op: OpId, t: OpId) -> Result<(), String> {
    if ir.name(t) != "scf.yield" {
        return Ok(());
    }
    let (got, want) = (ir.operands(t), ir.results(op));
    if got.len() != want.len() {
        return Err(format!(
            "expected {} yield operands, got {}",
            want.len(),
            got.len()
        ));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let (g, w) = (ir.value_type(*g), ir.value_type(*w));
        if g != w {
            return Err(format!(
                "along control flow edge from Operation scf.yield to parent: successor operand type #{i} '{g}' should match successor input type #{i} '{w}'"
            ));
        }
    }
    Ok(())
}

/// `scf.if %c [-> (types)] { ... } [else { ... }]`
pub fn parse_if(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    let c = p.parse_operand()?;
    st.operands.push(p.resolve_operand(&c, Type::i1())?);
    if p.consume_if(Tok::Arrow) {
        st.result_types = p.parse_function_result_types()?;
    }
    let then_r = p.parse_region()?;
    p.ensure_terminator(then_r, "scf.yield", st.loc);
    st.regions.push(then_r);
    let else_r = if p.parse_optional_keyword("else") {
        let r = p.parse_region()?;
        p.ensure_terminator(r, "scf.yield", st.loc);
        r
    } else {
        p.ir.new_region(None)
    };
    st.regions.push(else_r);
    p.parse_attr_dict_into(st, false)?;
    Ok(())
}

pub fn print_if(pr: &mut OpPrinter<'_>, op: OpId) {
    let ir = pr.ir;
    pr.write(" ");
    pr.print_operand(ir.operand(op, 0));
    let res = ir.results(op).to_vec();
    if !res.is_empty() {
        pr.write(" -> (");
        pr.print_types_of(&res);
        pr.write(")");
    }
    let regions = ir.regions_of(op).to_vec();
    pr.write(" ");
    pr.print_region(regions[0], false, !res.is_empty());
    if regions.len() > 1 && !ir.region(regions[1]).blocks.is_empty() {
        pr.write(" else ");
        pr.print_region(regions[1], false, !res.is_empty());
    }
    pr.print_optional_attr_dict(op, &[]);
}

pub fn verify_if(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let regions = ir.regions_of(op);
    let n = ir.results(op).len();
    if n > 0
        && regions
            .get(1)
            .is_none_or(|r| ir.region(*r).blocks.is_empty())
    {
        return Err("must have an else block if defining values".into());
    }
    for r in regions {
        if let Some(t) = ir.region_entry(*r).and_then(|b| ir.terminator(b)) {
            yields_results(ir, op, t)?;
        }
    }
    Ok(())
}

/// `scf.index_switch` on a constant: inline the region that would run (upstream's
/// `FoldConstantCase`).
fn index_switch_constant_case(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let Some(sel) = crate::cf::constant_of(ctx, ir, ir.operand(op, 0)).and_then(|a| a.as_i64())
    else {
        return false;
    };
    let Some(cases) = ir.attr(op, "cases").and_then(|a| a.as_dense_i64s()) else {
        return false;
    };
    let idx = cases.iter().position(|c| *c == sel).map_or(0, |i| i + 1);
    let Some(&region) = ir.regions_of(op).get(idx) else {
        return false;
    };
    let Some(block) = ir.region_entry(region) else {
        return false;
    };
    let Some(term) = ir.terminator(block) else {
        return false;
    };
    if ir.name(term) != "scf.yield" || ir.operands(term).len() != ir.results(op).len() {
        return false;
    }
    let vals = ir.operands(term).to_vec();
    ir.inline_block_before(block, op, &[]);
    ir.erase_op(term);
    ir.replace_op(op, &vals);
    true
}
pub const CANONICALIZE_INDEX_SWITCH: &[ftuner_ir::dialect::CanonFn] = &[index_switch_constant_case];
