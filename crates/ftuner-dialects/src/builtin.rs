//! `builtin`: the `module` syntax.

use ftuner_ir::lexer::Tok;
use ftuner_ir::parser::{OperationState, PResult, Parser};
use ftuner_ir::{Attribute, OpId, OpPrinter};

/// `module @name attributes {...} { ... }`
pub fn parse_module(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    if p.peek() == Tok::AtIdent {
        let n = p.parse_symbol_name()?;
        st.add_attr("sym_name", Attribute::string(n));
    }
    let mut attrs = vec![];
    p.parse_optional_attr_dict_with_keyword(&mut attrs)?;
    for (k, v) in attrs {
        st.add_attr(&k, v);
    }
    let r = p.parse_region()?;
    if p.ir.region(r).blocks.is_empty() {
        p.ir.append_block(r, &[]);
    }
    st.regions.push(r);
    Ok(())
}

pub fn print_module(pr: &mut OpPrinter<'_>, op: OpId) {
    if let Some(n) = pr.ir.attr(op, "sym_name").and_then(|a| a.as_str()) {
        pr.write(" ");
        pr.print_attr(Attribute::symbol_ref(n));
    }
    pr.print_optional_attr_dict_with_keyword(op, &["sym_name"]);
    pr.write(" ");
    let r = pr.ir.regions_of(op)[0];
    pr.print_region(r, false, false);
}
