//! `scf.parallel` and `scf.reduce`: custom syntax, verifiers and upstream's canonicalization
//! patterns (`ParallelOpSingleOrZeroIterationDimsFolder`, `MergeNestedParallelLoops`).
//!
//! ```mlir
//! %r = scf.parallel (%i, %j) = (%c0, %c0) to (%n, %m) step (%c1, %c1) init (%zero) -> f32 {
//!   %v = memref.load %a[%i, %j] : memref<?x?xf32>
//!   scf.reduce(%v : f32) {
//!   ^bb0(%lhs: f32, %rhs: f32):
//!     %s = arith.addf %lhs, %rhs : f32
//!     scf.reduce.return %s : f32
//!   }
//! }
//! ```
//! Operands: lower bounds, upper bounds, steps (one per induction variable), then the
//! reductions' initial values (`operandSegmentSizes`).

use super::canonicalize::{block, const_int, trip_count};
use crate::util::result_types;
use ftuner_ir::dialect::CanonFn;
use ftuner_ir::lexer::Tok;
use ftuner_ir::parser::{Argument, OperationState, PResult, Parser};
use ftuner_ir::Context;
use ftuner_ir::{Attribute, Ir, OpId, OpPrinter, Type, Value};

/// `scf.parallel (ivs) = (lbs) to (ubs) step (steps) [init (vals)] [-> types] region [attr-dict]`
pub fn parse_parallel(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    let ivs = p.parse_paren_operand_list()?;
    p.expect(Tok::Equal, "'='")?;
    let mut lists = vec![];
    for kw in ["", "to", "step"] {
        if !kw.is_empty() {
            p.parse_keyword(kw)?;
        }
        let at = p.current_offset();
        let l = p.parse_paren_operand_list()?;
        if l.len() != ivs.len() {
            return Err(p.err_at(
                at,
                format!(
                    "expected {} operands, one per induction variable, got {}",
                    ivs.len(),
                    l.len()
                ),
            ));
        }
        let tys = vec![Type::index(); l.len()];
        lists.push(p.resolve_operands(&l, &tys, at)?);
    }
    let mut inits = vec![];
    if p.parse_optional_keyword("init") {
        inits = p.parse_paren_operand_list()?;
    }
    if p.consume_if(Tok::Arrow) {
        st.result_types = p.parse_function_result_types()?;
    }
    let at = p.current_offset();
    if inits.len() != st.result_types.len() {
        return Err(p.err_at(
            at,
            format!(
                "expected as many result types as initial values ({}), got {}",
                inits.len(),
                st.result_types.len()
            ),
        ));
    }
    let args: Vec<Argument> = ivs
        .into_iter()
        .map(|name| Argument {
            name,
            ty: Type::index(),
            attrs: None,
            loc: None,
        })
        .collect();
    let body = p.parse_region_with_args(&args, false)?;
    p.ensure_terminator(body, "scf.reduce", st.loc);
    st.regions.push(body);
    p.parse_attr_dict_into(st, false)?;
    let n = args.len() as i32;
    let inits = p.resolve_operands(&inits, &st.result_types.clone(), at)?;
    st.add_attr(
        "operandSegmentSizes",
        Attribute::dense_i32_array(&[n, n, n, inits.len() as i32]),
    );
    for l in lists {
        st.operands.extend(l);
    }
    st.operands.extend(inits);
    Ok(())
}

/// The lower bounds, upper bounds, steps and initial values of an `scf.parallel`.
fn parts(ir: &Ir, op: OpId) -> Option<[Vec<Value>; 4]> {
    let ops = ir.operands(op);
    let segs = ir.attr(op, "operandSegmentSizes")?.as_dense_i64s()?;
    if segs.len() != 4
        || segs.iter().any(|n| *n < 0)
        || segs.iter().sum::<i64>() != ops.len() as i64
    {
        return None;
    }
    let mut at = 0;
    Some(std::array::from_fn(|k| {
        let n = segs[k] as usize;
        at += n;
        ops[at - n..at].to_vec()
    }))
}

pub fn print_parallel(pr: &mut OpPrinter<'_>, op: OpId) {
    let ir = pr.ir;
    let r = ir.regions_of(op)[0];
    let ivs = ir
        .region_entry(r)
        .map(|b| ir.block_args(b).to_vec())
        .unwrap_or_default();
    let Some([lbs, ubs, steps, inits]) = parts(ir, op) else {
        return;
    };
    pr.write(" (");
    pr.print_operands(&ivs);
    for (kw, l) in [(") = (", &lbs), (") to (", &ubs), (") step (", &steps)] {
        pr.write(kw);
        pr.print_operands(l);
    }
    pr.write(")");
    if !inits.is_empty() {
        pr.write(" init (");
        pr.print_operands(&inits);
        pr.write(")");
    }
    let res: Vec<Type> = result_types(ir, op);
    if !res.is_empty() {
        pr.write(" -> ");
        pr.print_result_types(&res);
    }
    pr.write(" ");
    pr.print_region(r, false, true);
    pr.print_optional_attr_dict(op, &["operandSegmentSizes"]);
}

pub fn verify_parallel(ctx: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let [lbs, ubs, steps, inits] = parts(ir, op).ok_or("expects four operand segments")?;
    if steps.is_empty() {
        return Err("needs at least one tuple element for lowerBound, upperBound and step".into());
    }
    if lbs.len() != steps.len() || ubs.len() != steps.len() {
        return Err("expects as many lower bounds, upper bounds and steps".into());
    }
    if steps
        .iter()
        .any(|s| const_int(ctx, ir, *s).is_some_and(|c| c <= 0))
    {
        return Err("constant step operand must be positive".into());
    }
    let b = ir
        .region_entry(ir.regions_of(op)[0])
        .ok_or("expects a body block")?;
    let ivs = ir.block_args(b);
    if ivs.len() != steps.len() {
        return Err(format!(
            "expects the same number of induction variables: {} as bound and step values: {}",
            ivs.len(),
            steps.len()
        ));
    }
    if ivs.iter().any(|v| !ir.value_type(*v).is_index()) {
        return Err("expects arguments for the induction variable to be of index type".into());
    }
    let t = ir
        .terminator(b)
        .filter(|t| ir.name(*t) == "scf.reduce")
        .ok_or("expects body to terminate with 'scf.reduce'")?;
    let red = ir.operands(t);
    if red.len() != inits.len() {
        return Err(format!(
            "expects number of results: {} to be the same as number of reductions: {}",
            inits.len(),
            red.len()
        ));
    }
    for (i, (r, v)) in ir.results(op).iter().zip(red).enumerate() {
        let (rt, vt) = (ir.value_type(*r), ir.value_type(*v));
        if rt != vt || ir.value_type(inits[i]) != rt {
            return Err(format!(
                "expects type of {i}-th reduction operand: {vt} to be the same as the {i}-th result type and initial value: {rt}"
            ));
        }
    }
    Ok(())
}

/// `scf.reduce [(%v, ... : types)] [{ region }, ...] [attr-dict]`
pub fn parse_reduce(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    if p.consume_if(Tok::LParen) {
        let mut names = vec![p.parse_operand()?];
        while p.consume_if(Tok::Comma) {
            names.push(p.parse_operand()?);
        }
        p.expect(Tok::Colon, "':'")?;
        let at = p.current_offset();
        let tys = p.parse_type_list_no_parens()?;
        p.expect(Tok::RParen, "')'")?;
        st.operands = p.resolve_operands(&names, &tys, at)?;
    }
    if let Some(r) = p.parse_optional_region()? {
        st.regions.push(r);
        while p.consume_if(Tok::Comma) {
            st.regions.push(p.parse_region()?);
        }
    }
    p.parse_attr_dict_into(st, false)?;
    Ok(())
}

pub fn print_reduce(pr: &mut OpPrinter<'_>, op: OpId) {
    let ir = pr.ir;
    let vals = ir.operands(op).to_vec();
    if !vals.is_empty() {
        pr.write("(");
        pr.print_operands(&vals);
        pr.write(" : ");
        pr.print_types_of(&vals);
        pr.write(")");
    }
    for (i, r) in ir.regions_of(op).to_vec().into_iter().enumerate() {
        pr.write(if i == 0 { " " } else { ", " });
        pr.print_region(r, true, true);
    }
    pr.print_optional_attr_dict(op, &[]);
}

pub fn verify_reduce(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let vals = ir.operands(op);
    let regions = ir.regions_of(op);
    if regions.len() != vals.len() {
        return Err(format!(
            "expects one reduction region per operand ({}), got {}",
            vals.len(),
            regions.len()
        ));
    }
    if ir
        .parent_op(op)
        .is_none_or(|p| ir.name(p) != "scf.parallel")
    {
        return Err("expects parent op 'scf.parallel'".into());
    }
    for (i, (v, r)) in vals.iter().zip(regions).enumerate() {
        let t = ir.value_type(*v);
        let b = ir.region_entry(*r);
        let args = b.map(|b| ir.block_args(b)).unwrap_or(&[]);
        if args.len() != 2 || args.iter().any(|a| ir.value_type(*a) != t) {
            return Err(format!(
                "expected two block arguments with type {t} in the {i}-th reduction region"
            ));
        }
        let ret = b
            .and_then(|b| ir.terminator(b))
            .filter(|x| ir.name(*x) == "scf.reduce.return")
            .ok_or_else(|| {
                format!("the {i}-th reduction region must terminate with 'scf.reduce.return'")
            })?;
        if ir.operands(ret).len() != 1 || ir.value_type(ir.operand(ret, 0)) != t {
            return Err(format!(
                "the {i}-th reduction region must return one value of type {t}"
            ));
        }
    }
    Ok(())
}

// ----- canonicalization ------------------------------------------------------------------

fn set_parts(ir: &mut Ir, op: OpId, parts: [Vec<Value>; 4]) {
    let segs: Vec<i32> = parts.iter().map(|l| l.len() as i32).collect();
    ir.set_operands(op, parts.concat());
    ir.set_prop(
        op,
        "operandSegmentSizes",
        Some(Attribute::dense_i32_array(&segs)),
    );
}

/// A loop with a dimension of no iterations is its initial values; dimensions of one
/// iteration are dropped (their variable is the lower bound); with none left, the body
/// runs once in place and each reduction combines its initial value with the one value
/// (upstream's `ParallelOpSingleOrZeroIterationDimsFolder`).
fn parallel_trivial_dims(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (Some([lbs, ubs, steps, inits]), Some(b)) = (parts(ir, op), block(ir, op, 0)) else {
        return false;
    };
    let trips: Vec<Option<i128>> = (0..lbs.len())
        .map(|d| {
            let c = [lbs[d], ubs[d], steps[d]].map(|v| const_int(ctx, ir, v));
            trip_count(lbs[d] == ubs[d], c)
        })
        .collect();
    // A constant step that is not positive (the verifier refuses one as written; inlining
    // a one-iteration loop whose variable was the step makes one) is undefined: the loop
    // goes like one of no iterations, as upstream's canonicalization leaves nothing of it.
    let bad_step = steps
        .iter()
        .any(|s| const_int(ctx, ir, *s).is_some_and(|c| c <= 0));
    if trips.contains(&Some(0)) || bad_step {
        ir.replace_op(op, &inits);
        return true;
    }
    let keep: Vec<usize> = (0..lbs.len()).filter(|d| trips[*d] != Some(1)).collect();
    if keep.len() == lbs.len() {
        return false;
    }
    if !keep.is_empty() {
        let ivs = ir.block_args(b).to_vec();
        for d in (0..lbs.len()).rev().filter(|d| !keep.contains(d)) {
            ir.replace_all_uses(ivs[d], lbs[d]);
            ir.erase_block_arg(b, d);
        }
        let pick = |l: &[Value]| keep.iter().map(|d| l[*d]).collect::<Vec<_>>();
        set_parts(ir, op, [pick(&lbs), pick(&ubs), pick(&steps), inits]);
        return true;
    }
    let Some(reduce) = ir.inline_block_before(b, op, &lbs) else {
        return false;
    };
    let mut results = vec![];
    let vals = ir.operands(reduce).to_vec();
    let regions = ir.regions_of(reduce).to_vec();
    for (i, r) in regions.into_iter().enumerate() {
        let Some(rb) = ir.region_entry(r) else {
            return false;
        };
        let ret = ir.inline_block_before(rb, op, &[inits[i], vals[i]]);
        let Some(ret) = ret else { return false };
        results.push(ir.operand(ret, 0));
        ir.erase_op(ret);
    }
    ir.erase_op(reduce);
    ir.replace_op(op, &results);
    true
}

/// An `scf.parallel` whose body is only another `scf.parallel` (neither reducing, the
/// inner bounds not using the outer variables) becomes one loop over both sets of
/// dimensions (upstream's `MergeNestedParallelLoops`).
fn parallel_merge_nested(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (Some([lbs, ubs, steps, inits]), Some(b)) = (parts(ir, op), block(ir, op, 0)) else {
        return false;
    };
    let ops: Vec<OpId> = ir.block_ops(b).collect();
    if ops.len() != 2 || ir.name(ops[0]) != "scf.parallel" || !inits.is_empty() {
        return false;
    }
    let inner = ops[0];
    let (Some([ilbs, iubs, isteps, iinits]), Some(ib)) = (parts(ir, inner), block(ir, inner, 0))
    else {
        return false;
    };
    let outer_ivs = ir.block_args(b).to_vec();
    if !iinits.is_empty()
        || !ir.operands(ops[1]).is_empty()
        || ir.operands(inner).iter().any(|v| outer_ivs.contains(v))
    {
        return false;
    }
    let new_ivs: Vec<Value> = (0..ilbs.len())
        .map(|_| ir.add_block_arg(b, Type::index()))
        .collect();
    let Some(term) = ir.inline_block_before(ib, inner, &new_ivs) else {
        return false;
    };
    ir.erase_op(term);
    ir.erase_op(inner);
    set_parts(
        ir,
        op,
        [
            [lbs, ilbs].concat(),
            [ubs, iubs].concat(),
            [steps, isteps].concat(),
            vec![],
        ],
    );
    true
}

pub const CANONICALIZE_PARALLEL: &[CanonFn] = &[parallel_trivial_dims, parallel_merge_nested];
