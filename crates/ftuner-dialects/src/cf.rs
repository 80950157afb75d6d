//! `cf`: branch syntax and verifiers; `cf.assert %true` is dropped by canonicalization.

mod canonicalize;

pub use canonicalize::{CANONICALIZE_BR, CANONICALIZE_COND_BR};

use ftuner_ir::lexer::Tok;
use ftuner_ir::parser::{OperationState, PResult, Parser};
use ftuner_ir::Context;
use ftuner_ir::{AttrKind, Attribute, Ir, OpId, OpPrinter};

/// The constant value of `v` if it is defined by an op the context registers as
/// `ConstantLike` (its `value` attribute): upstream's `m_Constant`.
pub fn constant_of(ctx: &Context, ir: &Ir, v: ftuner_ir::Value) -> Option<Attribute> {
    let d = ir.defining_op(v)?;
    if ctx.has_trait(ir.name(d), ftuner_ir::traits::CONSTANT_LIKE) {
        return ir.attr(d, "value");
    }
    None
}

fn erase_true_assert(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    if let Some(a) = constant_of(ctx, ir, ir.operand(op, 0)) {
        if matches!(a.kind(), AttrKind::Bool(true)) {
            ir.erase_op(op);
            return true;
        }
    }
    false
}
pub const CANONICALIZE_ASSERT: &[ftuner_ir::dialect::CanonFn] = &[erase_true_assert];

pub fn parse_br(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    let (b, vals) = p.parse_successor_and_use_list()?;
    st.successors.push(b);
    st.operands.extend(vals);
    let mut attrs = vec![];
    p.parse_optional_attr_dict(&mut attrs)?;
    for (k, v) in attrs {
        st.add_attr(&k, v);
    }
    Ok(())
}

fn print_succ(pr: &mut OpPrinter<'_>, b: ftuner_ir::BlockId, vals: &[ftuner_ir::Value]) {
    pr.print_successor(b);
    if !vals.is_empty() {
        pr.write("(");
        pr.print_operands(vals);
        pr.write(" : ");
        pr.print_types_of(vals);
        pr.write(")");
    }
}

pub fn print_br(pr: &mut OpPrinter<'_>, op: OpId) {
    pr.write(" ");
    let b = pr.ir.op(op).successors[0];
    let vals = pr.ir.operands(op).to_vec();
    print_succ(pr, b, &vals);
    pr.print_optional_attr_dict(op, &[]);
}

pub fn verify_br(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let b = ir.op(op).successors[0];
    check_succ_args(ir, b, ir.operands(op), "")
}

fn check_succ_args(
    ir: &Ir,
    b: ftuner_ir::BlockId,
    vals: &[ftuner_ir::Value],
    which: &str,
) -> Result<(), String> {
    let args = ir.block_args(b);
    if args.len() != vals.len() {
        return Err(format!(
            "branch has {} operands for successor{which}, but target block has {}",
            vals.len(),
            args.len()
        ));
    }
    for (i, (a, v)) in args.iter().zip(vals).enumerate() {
        if ir.value_type(*a) != ir.value_type(*v) {
            return Err(format!(
                "type mismatch for bb argument #{i} of successor{which}"
            ));
        }
    }
    Ok(())
}

pub fn parse_cond_br(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    let c = p.parse_operand()?;
    let cv = p.resolve_operand(&c, ftuner_ir::Type::i1())?;
    p.expect(Tok::Comma, "','")?;
    let (t, tv) = p.parse_successor_and_use_list()?;
    p.expect(Tok::Comma, "','")?;
    let (f, fv) = p.parse_successor_and_use_list()?;
    let mut attrs = vec![];
    p.parse_optional_attr_dict(&mut attrs)?;
    for (k, v) in attrs {
        st.add_attr(&k, v);
    }
    st.props.push((
        "operandSegmentSizes".into(),
        Attribute::dense_i32_array(&[1, tv.len() as i32, fv.len() as i32]),
    ));
    st.operands.push(cv);
    st.operands.extend(tv);
    st.operands.extend(fv);
    st.successors.push(t);
    st.successors.push(f);
    Ok(())
}

pub fn print_cond_br(pr: &mut OpPrinter<'_>, op: OpId) {
    let ir = pr.ir;
    let c = ir.operand(op, 0);
    let br = crate::ops::cf::CondBrOp(op);
    let (tv, fv) = (br.truedestoperands(ir), br.falsedestoperands(ir));
    let s = ir.op(op).successors.clone();
    pr.write(" ");
    pr.print_operand(c);
    pr.write(", ");
    print_succ(pr, s[0], &tv);
    pr.write(", ");
    print_succ(pr, s[1], &fv);
    pr.print_optional_attr_dict(op, &["operandSegmentSizes"]);
}

pub fn verify_cond_br(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let s = &ir.op(op).successors;
    check_succ_args(
        ir,
        s[0],
        &crate::ops::cf::CondBrOp(op).truedestoperands(ir),
        " #0",
    )?;
    check_succ_args(
        ir,
        s[1],
        &crate::ops::cf::CondBrOp(op).falsedestoperands(ir),
        " #1",
    )
}
