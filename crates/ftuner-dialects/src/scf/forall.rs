//! `scf.forall` and `scf.forall.in_parallel`: custom syntax and verifiers (upstream's
//! `ForallOp` / `InParallelOp`); canonicalization in `scf/forall_canonicalize.rs`.
//!
//! ```mlir
//! %r = scf.forall (%i, %j) in (%n, 8) shared_outs(%o = %t) -> (tensor<?x8xf32>) {
//!   %v = ...
//!   scf.forall.in_parallel {
//!     tensor.parallel_insert_slice %v into %o[%i, %j] [1, 1] [1, 1] : tensor<1x1xf32> into tensor<?x8xf32>
//!   }
//! }
//! ```
//! Bounds are mixed static / dynamic lists (`staticLowerBound` etc., `?` where an operand
//! stands); operands: the dynamic lower bounds, upper bounds, steps, then the shared
//! outputs. The body takes one index per dimension, then one value per output.

use crate::format::{parse_dynamic_index_list, print_dynamic_index_list_in};
use crate::tensor::slices::{dynamics, read_lists, statics, write_lists, Ofr};
use ftuner_ir::lexer::Tok;
use ftuner_ir::parser::{Argument, OperationState, PResult, Parser, UnresolvedOperand};
use ftuner_ir::Context;
use ftuner_ir::{intern_name, Attribute, BlockId, Ir, OpId, OpPrinter, OpSpec, Type, Value};

pub(crate) const BOUNDS: [&str; 3] = ["staticLowerBound", "staticUpperBound", "staticStep"];

/// The bounds (lower, upper, step) and shared outputs of an `scf.forall`.
#[derive(Clone, Debug)]
pub(crate) struct Forall {
    pub bounds: [Vec<Ofr>; 3],
    pub outputs: Vec<Value>,
}

impl Forall {
    pub fn read(ir: &Ir, op: OpId) -> Option<Forall> {
        let ops = ir.operands(op);
        let (lists, used) = read_lists(ir, op, ops, &BOUNDS)?;
        let [lb, ub, st]: [Vec<Ofr>; 3] = lists.try_into().ok()?;
        let r = lb.len();
        (ub.len() == r && st.len() == r).then(|| Forall {
            bounds: [lb, ub, st],
            outputs: ops[used..].to_vec(),
        })
    }
    pub fn rank(&self) -> usize {
        self.bounds[0].len()
    }
    pub fn write(&self, ir: &mut Ir, op: OpId) {
        let (mut operands, mut segs) = write_lists(ir, op, &self.bounds, &BOUNDS);
        segs.push(self.outputs.len() as i32);
        operands.extend(&self.outputs);
        ir.set_operands(op, operands);
        ir.set_prop(
            op,
            "operandSegmentSizes",
            Some(Attribute::dense_i32_array(&segs)),
        );
    }
    /// Lower bounds all 0 and steps all 1, static or constants (upstream's
    /// `isNormalized`): printed `in (upper bounds)`.
    fn normalized(&self, ctx: &Context, ir: &Ir) -> bool {
        let is = |x: &Ofr, k: i64| match *x {
            Ofr::S(s) => s == k,
            Ofr::V(v) => crate::cf::constant_of(ctx, ir, v).and_then(|a| a.as_i64()) == Some(k),
        };
        self.bounds[0].iter().all(|b| is(b, 0)) && self.bounds[2].iter().all(|b| is(b, 1))
    }
}

fn parse_index_list(p: &mut Parser<'_>) -> PResult<(Vec<UnresolvedOperand>, Vec<i64>)> {
    parse_dynamic_index_list(p, Tok::LParen, Tok::RParen)
}

fn print_index_list(pr: &mut OpPrinter<'_>, l: &[Ofr]) {
    print_dynamic_index_list_in(pr, &dynamics(l), &statics(l), ("(", ")"));
}

/// An empty `scf.forall.in_parallel` (one block, no ops) at the end of `b`.
pub(crate) fn append_in_parallel(ir: &mut Ir, b: BlockId, loc: Attribute) -> OpId {
    let t = ir.create_op(OpSpec::new(intern_name("scf.forall.in_parallel"), loc).regions(1));
    let r = ir.regions_of(t)[0];
    ir.append_block(r, &[]);
    ir.append_op(b, t);
    t
}

/// `scf.forall (ivs) (in (ubs) | = (lbs) to (ubs) step (steps)) [shared_outs(%o = %v, ...)]
/// [-> (types)] region [attr-dict]`
pub fn parse_forall(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    let ivs = p.parse_paren_operand_list()?;
    let at = p.current_offset();
    let mut lists: Vec<(Vec<UnresolvedOperand>, Vec<i64>)> = vec![];
    if p.parse_optional_keyword("in") {
        let ub = parse_index_list(p)?;
        let n = ub.1.len();
        lists = vec![(vec![], vec![0; n]), ub, (vec![], vec![1; n])];
    } else {
        p.expect(Tok::Equal, "'=' or 'in'")?;
        for kw in ["", "to", "step"] {
            if !kw.is_empty() {
                p.parse_keyword(kw)?;
            }
            lists.push(parse_index_list(p)?);
        }
    }
    if lists.iter().any(|l| l.1.len() != ivs.len()) {
        return Err(p.err_at(
            at,
            format!(
                "expected {} bounds in each list, one per induction variable",
                ivs.len()
            ),
        ));
    }
    let (mut out_names, mut outs) = (vec![], vec![]);
    if p.parse_optional_keyword("shared_outs") {
        p.expect(Tok::LParen, "'('")?;
        loop {
            out_names.push(p.parse_operand()?);
            p.expect(Tok::Equal, "'='")?;
            outs.push(p.parse_operand()?);
            if p.consume_if(Tok::RParen) {
                break;
            }
            p.expect(Tok::Comma, "','")?;
        }
    }
    if p.consume_if(Tok::Arrow) {
        st.result_types = p.parse_function_result_types()?;
    }
    let at = p.current_offset();
    if st.result_types.len() != outs.len() {
        return Err(p.err_at(
            at,
            format!(
                "expected one result type per shared output ({}), got {}",
                outs.len(),
                st.result_types.len()
            ),
        ));
    }
    let mut args: Vec<Argument> = vec![];
    for (name, ty) in ivs
        .into_iter()
        .map(|n| (n, Type::index()))
        .chain(out_names.into_iter().zip(st.result_types.clone()))
    {
        args.push(Argument {
            name,
            ty,
            attrs: None,
            loc: None,
        });
    }
    let body = p.parse_region_with_args(&args, false)?;
    let blocks = p.ir.region(body).blocks.clone();
    let last = match blocks.last() {
        Some(b) => *b,
        None => p.ir.append_block(body, &[]),
    };
    if p.ir
        .terminator(last)
        .is_none_or(|t| p.ir.name(t) != "scf.forall.in_parallel")
    {
        append_in_parallel(p.ir, last, st.loc);
    }
    st.regions.push(body);
    p.parse_attr_dict_into(st, false)?;
    let mut segs = vec![];
    for ((dynv, stat), n) in lists.iter().zip(BOUNDS) {
        let tys = vec![Type::index(); dynv.len()];
        let vals = p.resolve_operands(dynv, &tys, at)?;
        segs.push(vals.len() as i32);
        st.operands.extend(vals);
        st.add_attr(n, Attribute::dense_i64_array(stat));
    }
    let outs = p.resolve_operands(&outs, &st.result_types.clone(), at)?;
    segs.push(outs.len() as i32);
    st.operands.extend(outs);
    st.add_attr("operandSegmentSizes", Attribute::dense_i32_array(&segs));
    Ok(())
}

pub fn print_forall(pr: &mut OpPrinter<'_>, op: OpId) {
    let ir = pr.ir;
    let Some(f) = Forall::read(ir, op) else {
        return;
    };
    let r = ir.regions_of(op)[0];
    let Some(b) = ir.region_entry(r) else { return };
    let args = ir.block_args(b).to_vec();
    let n = f.rank().min(args.len());
    pr.write(" (");
    pr.print_operands(&args[..n]);
    if f.normalized(pr.ctx, ir) {
        pr.write(") in ");
        print_index_list(pr, &f.bounds[1]);
    } else {
        pr.write(") = ");
        print_index_list(pr, &f.bounds[0]);
        pr.write(" to ");
        print_index_list(pr, &f.bounds[1]);
        pr.write(" step ");
        print_index_list(pr, &f.bounds[2]);
    }
    if !f.outputs.is_empty() {
        pr.write(" shared_outs(");
        for (i, (a, v)) in args[n..].iter().zip(&f.outputs).enumerate() {
            if i > 0 {
                pr.write(", ");
            }
            pr.print_operand(*a);
            pr.write(" = ");
            pr.print_operand(*v);
        }
        pr.write(")");
    }
    pr.write(" ");
    if !f.outputs.is_empty() {
        pr.write("-> (");
        pr.print_types_of(ir.results(op));
        pr.write(") ");
    }
    // Upstream prints the terminator only with results; ours keeps one that holds inserts.
    pr.print_region(r, false, !f.outputs.is_empty());
    let mut elided = vec!["operandSegmentSizes"];
    elided.extend(BOUNDS);
    pr.print_optional_attr_dict(op, &elided);
}

pub fn verify_forall(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let f = Forall::read(ir, op).ok_or(
        "expects lower bounds, upper bounds and steps of one length, with an operand per dynamic entry",
    )?;
    let rank = f.rank();
    if f.bounds[2]
        .iter()
        .any(|s| matches!(s, Ofr::S(x) if *x <= 0))
    {
        return Err("constant step must be positive".into());
    }
    if let Some(m) = ir.attr(op, "mapping").and_then(|a| a.as_array()) {
        if !m.is_empty() && m.len() != rank {
            return Err("mapping attribute size must match op rank".into());
        }
    }
    let res = ir.results(op);
    if res.len() != f.outputs.len() {
        return Err(format!(
            "expects one result per shared output: {} vs {}",
            res.len(),
            f.outputs.len()
        ));
    }
    let b = ir
        .region_entry(ir.regions_of(op)[0])
        .ok_or("expects a body block")?;
    let args = ir.block_args(b);
    if args.len() != rank + f.outputs.len() {
        return Err(format!(
            "region expects {} arguments",
            rank + f.outputs.len()
        ));
    }
    if args[..rank].iter().any(|a| !ir.value_type(*a).is_index()) {
        return Err("expects index type for induction var".into());
    }
    for (i, (o, (a, r))) in f
        .outputs
        .iter()
        .zip(args[rank..].iter().zip(res))
        .enumerate()
    {
        let t = ir.value_type(*o);
        if ir.value_type(*a) != t || ir.value_type(*r) != t {
            return Err(format!(
                "type mismatch between the {i}-th output, its block argument and its result"
            ));
        }
    }
    match ir.terminator(b) {
        Some(t) if ir.name(t) == "scf.forall.in_parallel" => Ok(()),
        _ => Err("expects body to terminate with 'scf.forall.in_parallel'".into()),
    }
}

/// `scf.forall.in_parallel { parallel inserts } [attr-dict]`
pub fn parse_forall_in_parallel(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    let r = p.parse_region()?;
    if p.ir.region(r).blocks.is_empty() {
        p.ir.append_block(r, &[]);
    }
    st.regions.push(r);
    p.parse_attr_dict_into(st, false)?;
    Ok(())
}

pub fn print_forall_in_parallel(pr: &mut OpPrinter<'_>, op: OpId) {
    pr.write(" ");
    let r = pr.ir.regions_of(op)[0];
    pr.print_region(r, false, true);
    pr.print_optional_attr_dict(op, &[]);
}

pub fn verify_forall_in_parallel(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    if ir.parent_op(op).is_none_or(|p| ir.name(p) != "scf.forall") {
        return Err("expects parent op 'scf.forall'".into());
    }
    let r = ir.regions_of(op).first().ok_or("expects one region")?;
    if ir.region(*r).blocks.len() != 1 {
        return Err("expects a single block".into());
    }
    for b in &ir.region(*r).blocks {
        if let Some(o) = ir
            .block_ops(*b)
            .find(|o| ir.name(*o) != "tensor.parallel_insert_slice")
        {
            return Err(format!(
                "expected only tensor.parallel_insert_slice ops, got '{}'",
                ir.name(o)
            ));
        }
    }
    Ok(())
}
