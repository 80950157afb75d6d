//! `func`: function syntax and verifiers.

use ftuner_ir::lexer::Tok;
use ftuner_ir::parser::{Argument, OperationState, PResult, Parser};
use ftuner_ir::Context;
use ftuner_ir::{Attribute, Ir, OpId, OpPrinter, Type};

/// `func.func [private] @name(%a: t {attrs}, ...) -> (t {attrs}, ...) [attributes {...}] [{ body }]`
pub fn parse_func(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    if let Some(vis) = ["private", "public", "nested"]
        .iter()
        .find(|v| p.peek_keyword(v))
    {
        p.advance_pub();
        st.add_attr("sym_visibility", Attribute::string(*vis));
    }
    let name = p.parse_symbol_name()?;
    st.add_attr("sym_name", Attribute::string(name));
    p.expect(Tok::LParen, "'('")?;
    let mut args: Vec<Argument> = vec![];
    let mut arg_types = vec![];
    let mut arg_attrs = vec![];
    let mut named = None;
    if !p.consume_if(Tok::RParen) {
        loop {
            if p.peek() == Tok::PercentIdent {
                if named == Some(false) {
                    return Err(p.err_here("expected type instead of SSA identifier"));
                }
                named = Some(true);
                let a = p.parse_argument(true, true)?;
                arg_types.push(a.ty);
                arg_attrs.push(a.attrs.unwrap_or_else(|| Attribute::dictionary(vec![])));
                args.push(a);
            } else {
                if named == Some(true) {
                    return Err(p.err_here("expected SSA identifier"));
                }
                named = Some(false);
                arg_types.push(p.parse_type()?);
                let mut d = vec![];
                p.parse_optional_attr_dict(&mut d)?;
                arg_attrs.push(Attribute::dictionary(d));
            }
            if p.consume_if(Tok::RParen) {
                break;
            }
            p.expect(Tok::Comma, "')' or ','")?;
        }
    }
    let mut results = vec![];
    let mut res_attrs = vec![];
    if p.consume_if(Tok::Arrow) {
        if p.peek() == Tok::LParen {
            p.advance_pub();
            if !p.consume_if(Tok::RParen) {
                loop {
                    results.push(p.parse_type()?);
                    let mut d = vec![];
                    p.parse_optional_attr_dict(&mut d)?;
                    res_attrs.push(Attribute::dictionary(d));
                    if p.consume_if(Tok::RParen) {
                        break;
                    }
                    p.expect(Tok::Comma, "')' or ','")?;
                }
            }
        } else {
            results.push(p.parse_type()?);
            res_attrs.push(Attribute::dictionary(vec![]));
        }
    }
    st.add_attr(
        "function_type",
        Attribute::type_attr(Type::function(arg_types, results)),
    );
    if arg_attrs
        .iter()
        .any(|d| d.as_dict().is_some_and(|x| !x.is_empty()))
    {
        st.add_attr("arg_attrs", Attribute::array(arg_attrs));
    }
    if res_attrs
        .iter()
        .any(|d| d.as_dict().is_some_and(|x| !x.is_empty()))
    {
        st.add_attr("res_attrs", Attribute::array(res_attrs));
    }
    let mut attrs = vec![];
    p.parse_optional_attr_dict_with_keyword(&mut attrs)?;
    for (k, v) in attrs {
        st.add_attr(&k, v);
    }
    if p.peek() == Tok::LBrace {
        if named == Some(false) && !args.is_empty() {
            return Err(p.err_here("expected named arguments for a function with a body"));
        }
        let r = p.parse_region_with_args(&args, false)?;
        st.regions.push(r);
    } else {
        let r = p.ir.new_region(None);
        st.regions.push(r);
    }
    Ok(())
}

pub fn print_func(pr: &mut OpPrinter<'_>, op: OpId) {
    let ir = pr.ir;
    pr.write(" ");
    if let Some(v) = ir.attr(op, "sym_visibility").and_then(|a| a.as_str()) {
        pr.write(v);
        pr.write(" ");
    }
    let name = ir
        .attr(op, "sym_name")
        .and_then(|a| a.as_str())
        .unwrap_or("");
    pr.print_attr(Attribute::symbol_ref(name));
    let fty = ir
        .attr(op, "function_type")
        .and_then(|a| a.as_type())
        .unwrap_or(Type::function(vec![], vec![]));
    let r = ir.regions_of(op)[0];
    let entry = ir.region_entry(r);
    let arg_attrs = ir
        .attr(op, "arg_attrs")
        .and_then(|a| a.as_array())
        .unwrap_or(&[]);
    let res_attrs = ir
        .attr(op, "res_attrs")
        .and_then(|a| a.as_array())
        .unwrap_or(&[]);
    pr.write("(");
    for (i, t) in fty.function_inputs().iter().enumerate() {
        if i > 0 {
            pr.write(", ");
        }
        match entry {
            Some(b) => pr.print_arg_decl(ir.block_args(b)[i]),
            None => pr.print_type(*t),
        }
        if let Some(d) = arg_attrs.get(i) {
            if d.as_dict().is_some_and(|x| !x.is_empty()) {
                pr.write(" ");
                pr.print_attr(*d);
            }
        }
    }
    pr.write(")");
    let res = fty.function_results();
    if !res.is_empty() {
        pr.write(" -> ");
        let any_attr = res_attrs
            .iter()
            .any(|d| d.as_dict().is_some_and(|x| !x.is_empty()));
        if res.len() == 1
            && !any_attr
            && !matches!(res[0].kind(), ftuner_ir::TypeKind::Function { .. })
        {
            pr.print_type(res[0]);
        } else {
            pr.write("(");
            for (i, t) in res.iter().enumerate() {
                if i > 0 {
                    pr.write(", ");
                }
                pr.print_type(*t);
                if let Some(d) = res_attrs.get(i) {
                    if d.as_dict().is_some_and(|x| !x.is_empty()) {
                        pr.write(" ");
                        pr.print_attr(*d);
                    }
                }
            }
            pr.write(")");
        }
    }
    pr.print_optional_attr_dict_with_keyword(
        op,
        &[
            "sym_name",
            "function_type",
            "sym_visibility",
            "arg_attrs",
            "res_attrs",
        ],
    );
    if entry.is_some() {
        pr.write(" ");
        pr.print_region(r, false, true);
    }
}

pub fn verify_func(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let fty = ir
        .attr(op, "function_type")
        .and_then(|a| a.as_type())
        .ok_or("requires a 'function_type' attribute of function type")?;
    let r = ir.regions_of(op)[0];
    if let Some(b) = ir.region_entry(r) {
        let args = ir.block_args(b);
        let ins = fty.function_inputs();
        if args.len() != ins.len() {
            return Err(format!(
                "entry block must have {} arguments to match function signature",
                ins.len()
            ));
        }
        for (i, (a, t)) in args.iter().zip(ins).enumerate() {
            if ir.value_type(*a) != *t {
                return Err(format!("type of entry block argument #{i}({}) must match the type of the corresponding argument in function signature({t})", ir.value_type(*a)));
            }
        }
    } else if ir.attr(op, "sym_visibility").and_then(|a| a.as_str()) == Some("public")
        || ir.attr(op, "sym_visibility").is_none()
    {
        return Err("symbol declaration cannot have public visibility".into());
    }
    Ok(())
}

pub fn verify_return(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let Some(f) = ir.parent_op(op) else {
        return Ok(());
    };
    if ir.name(f) != "func.func" {
        return Err("expects parent op 'func.func'".into());
    }
    let fty = ir
        .attr(f, "function_type")
        .and_then(|a| a.as_type())
        .ok_or("parent has no function type")?;
    let res = fty.function_results();
    let ops = ir.operands(op);
    if ops.len() != res.len() {
        let fname = ir.symbol_name(f).unwrap_or("");
        return Err(format!(
            "has {} operands, but enclosing function (@{fname}) returns {}",
            ops.len(),
            res.len()
        ));
    }
    for (i, (v, t)) in ops.iter().zip(res).enumerate() {
        if ir.value_type(*v) != *t {
            let fname = ir.symbol_name(f).unwrap_or("");
            return Err(format!("type of return operand {i} ('{}') doesn't match function result type ('{t}') in function @{fname}", ir.value_type(*v)));
        }
    }
    Ok(())
}
