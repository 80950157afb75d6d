//! `scf.index_switch`: custom syntax and verifier (upstream's `IndexSwitchOp`).
//!
//! ```mlir
//! %r = scf.index_switch %i -> f32
//! case 2 {
//!   scf.yield %a : f32
//! }
//! default {
//!   scf.yield %b : f32
//! }
//! ```
//! Region 0 is the default region, region `k + 1` the case `cases[k]`.

use crate::util::{result_types, value_types};
use ftuner_ir::parser::{OperationState, PResult, Parser};
use ftuner_ir::Context;
use ftuner_ir::{Attribute, Ir, OpId, OpPrinter, Type};

/// `scf.index_switch %arg [attr-dict] [-> types] (case N region)* default region`
pub fn parse_index_switch(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    let arg = p.parse_operand()?;
    st.operands.push(p.resolve_operand(&arg, Type::index())?);
    p.parse_attr_dict_into(st, false)?;
    if p.consume_if(ftuner_ir::lexer::Tok::Arrow) {
        st.result_types = p.parse_type_list_no_parens()?;
    }
    let mut cases = vec![];
    let mut case_regions = vec![];
    while p.parse_optional_keyword("case") {
        let at = p.current_offset();
        let v = p.parse_i64()?;
        if cases.contains(&v) {
            return Err(p.err_at(at, format!("duplicate case value: {v}")));
        }
        cases.push(v);
        let r = p.parse_region()?;
        p.ensure_terminator(r, "scf.yield", st.loc);
        case_regions.push(r);
    }
    p.parse_keyword("default")?;
    let default = p.parse_region()?;
    p.ensure_terminator(default, "scf.yield", st.loc);
    st.regions.push(default);
    st.regions.extend(case_regions);
    st.add_attr("cases", Attribute::dense_i64_array(&cases));
    Ok(())
}

pub fn print_index_switch(pr: &mut OpPrinter<'_>, op: OpId) {
    let ir = pr.ir;
    pr.write(" ");
    pr.print_operand(ir.operand(op, 0));
    pr.print_optional_attr_dict(op, &["cases"]);
    let res: Vec<Type> = result_types(ir, op);
    if !res.is_empty() {
        pr.write(" -> ");
        pr.print_types(&res);
    }
    let cases = ir
        .attr(op, "cases")
        .and_then(|a| a.as_dense_i64s())
        .unwrap_or_default();
    let regions = ir.regions_of(op).to_vec();
    for (c, r) in cases.iter().zip(regions.iter().skip(1)) {
        pr.newline();
        pr.write(&format!("case {c} "));
        pr.print_region(*r, false, true);
    }
    pr.newline();
    pr.write("default ");
    // The declarative part of upstream's format elides an empty `scf.yield` here (the case
    // regions, printed by custom code, keep theirs).
    pr.print_region(regions[0], false, false);
}

pub fn verify_index_switch(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let cases = ir
        .attr(op, "cases")
        .and_then(|a| a.as_dense_i64s())
        .ok_or("expects a 'cases' array of i64")?;
    let regions = ir.regions_of(op);
    if regions.is_empty() {
        return Err("expects a default region".into());
    }
    if regions.len() != cases.len() + 1 {
        return Err(format!(
            "has {} case regions but {} case values",
            regions.len().saturating_sub(1),
            cases.len()
        ));
    }
    for (i, c) in cases.iter().enumerate() {
        if cases[..i].contains(c) {
            return Err(format!("has duplicate case value: {c}"));
        }
    }
    let want: Vec<Type> = result_types(ir, op);
    for (k, r) in regions.iter().enumerate() {
        let name = if k == 0 {
            "default region".to_string()
        } else {
            format!("case region #{}", k - 1)
        };
        let t = ir
            .region_entry(*r)
            .and_then(|b| ir.terminator(b))
            .filter(|t| ir.name(*t) == "scf.yield")
            .ok_or_else(|| format!("expected {name} to end with scf.yield"))?;
        let got: Vec<Type> = value_types(ir, ir.operands(t));
        if got.len() != want.len() {
            return Err(format!(
                "expected each region to return {} values, but {name} returns {}",
                want.len(),
                got.len()
            ));
        }
        if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
            return Err(format!(
                "expected result #{i} of each region to be {}",
                want[i]
            ));
        }
    }
    Ok(())
}
