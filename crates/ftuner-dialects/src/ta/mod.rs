//! The `ta` dialect: `ta.expr`, a tensor-algebra expression in OLLIE's traversal notation.
//! The expression language itself is [`expr`].

pub mod expr;

pub use expr::{Atom, BinOp, Bound, Idx, Iter, Scope, Src, Term};

use ftuner_ir::lexer::Tok;
use ftuner_ir::parser::{OperationState, PResult, Parser};
use ftuner_ir::Context;
use ftuner_ir::{Attribute, Ir, OpId, OpPrinter};

/// The expression of a `ta.expr` (None when its attribute is missing or malformed).
pub fn scope_of(ir: &Ir, op: OpId) -> Option<Scope> {
    let s = ir.attr(op, "expr")?.as_str()?;
    expr::parse_scope(s, &expr::positional).ok()
}

/// The attribute text of a scope (inputs written `$i`).
pub fn expr_attr(s: &Scope) -> Attribute {
    Attribute::string(s.to_string())
}

/// `ta.expr L<...> Sum<...> { body } ins(%a, %b : ta, tb) -> type`
pub fn parse_expr(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    // Take the expression's text (up to the brace closing its body) and parse it once the
    // inputs' names are known.
    let start = p.current_offset();
    let mut depth = 0i32;
    loop {
        match p.peek() {
            Tok::LBrace => depth += 1,
            Tok::RBrace => {
                depth -= 1;
                if depth == 0 {
                    p.advance_pub();
                    break;
                }
            }
            Tok::Eof => return Err(p.err_here("unterminated ta.expr body: expected '}'")),
            _ => {}
        }
        p.advance_pub();
    }
    let end = p.current_offset();
    let src = p.source();
    let text = src[start as usize..end as usize].trim_end().to_string();
    if !p.peek_keyword("ins") {
        return Err(p.err_here("expected 'ins'"));
    }
    let (names, vals) = crate::linalg::parse_named_operand_clause(p, "ins")?;
    let resolve = |r: &str| {
        names
            .iter()
            .position(|n| n.trim_start_matches('%') == r.trim_start_matches('%'))
            .or_else(|| expr::positional(r))
    };
    let scope =
        expr::parse_scope(&text, &resolve).map_err(|e| p.err_at(start + e.offset as u32, e.msg))?;
    p.expect(Tok::Arrow, "'->'")?;
    st.result_types.push(p.parse_type()?);
    st.add_attr("expr", expr_attr(&scope));
    st.operands.extend(vals);
    Ok(())
}

pub fn print_expr(pr: &mut OpPrinter<'_>, op: OpId) {
    let ir = pr.ir;
    let inputs = ir.operands(op).to_vec();
    let Some(scope) = scope_of(ir, op) else {
        // Unparsable attribute: the generic form shows it as it is.
        pr.print_generic(op);
        return;
    };
    let names: Vec<String> = inputs.iter().map(|v| pr.value_name(*v)).collect();
    let text = expr::print_scope(&scope, &|i| {
        names.get(i).cloned().unwrap_or_else(|| format!("${i}"))
    });
    pr.write(" ");
    pr.write(&text);
    pr.write(" ins(");
    pr.print_operands(&inputs);
    if !inputs.is_empty() {
        pr.write(" : ");
        pr.print_types_of(&inputs);
    }
    pr.write(") -> ");
    pr.print_type(ir.value_type(ir.result(op, 0)));
}

pub fn verify_expr(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let text = ir
        .attr(op, "expr")
        .and_then(|a| a.as_str())
        .ok_or("requires a string attribute 'expr'")?;
    let scope = expr::parse_scope(text, &expr::positional)
        .map_err(|e| format!("malformed expression at offset {}: {}", e.offset, e.msg))?;
    let ins = ir.operands(op);
    let ranks: Vec<usize> = ins
        .iter()
        .map(|v| ir.value_type(*v).shape().map_or(0, |s| s.len()))
        .collect();
    expr::check(&scope, &ranks)?;
    let mut used = vec![];
    scope.inputs(&mut used);
    // An input may only size an iterator (its `dim(...)` bound).
    used.extend(
        scope
            .trav
            .iter()
            .chain(&scope.sum)
            .filter_map(|it| it.hi.dim.map(|(j, _)| j)),
    );
    if let Some(i) = (0..ins.len()).find(|i| !used.contains(i)) {
        return Err(format!(
            "input ${i} is neither read by the expression nor bounds an iterator"
        ));
    }
    let rt = ir.value_type(ir.result(op, 0));
    let shape = rt.shape().unwrap_or_default();
    if shape.len() != scope.trav.len() {
        return Err(format!(
            "result has rank {} but the expression traverses {} iterators",
            shape.len(),
            scope.trav.len()
        ));
    }
    let elem = rt.element_type();
    for v in ins {
        if ir.value_type(*v).element_type() != elem {
            return Err("inputs and result must have the same element type".into());
        }
    }
    let dynamic = ftuner_ir::types::DYNAMIC;
    for (k, (it, d)) in scope.trav.iter().zip(shape).enumerate() {
        let d = (*d != dynamic).then_some(*d);
        let static_shape = |i: usize, dd: usize| -> Option<i64> {
            let x = *ir.value_type(*ins.get(i)?).shape()?.get(dd)?;
            (x != dynamic).then_some(x)
        };
        // Checked: bounds near i64's limits (`L<i:-2:9223372036854775807>`) overflowed.
        let span = |base: i64| {
            base.checked_add(it.hi.c)
                .and_then(|v| v.checked_sub(it.lo))
                .ok_or_else(|| format!("the extent of traversal iterator '{}' overflows", it.name))
        };
        let ext = match it.hi.dim {
            None => Some(span(0)?),
            Some((i, dd)) => static_shape(i, dd).map(span).transpose()?,
        };
        match (ext, d) {
            (Some(e), Some(d)) if e != d => {
                return Err(format!(
                    "traversal iterator '{}' spans {e} but result dim {k} is {d}",
                    it.name
                ))
            }
            (None, Some(d)) => {
                return Err(format!(
                    "traversal iterator '{}' has a dynamic extent but result dim {k} is {d}",
                    it.name
                ))
            }
            (Some(e), None) => {
                return Err(format!(
                    "traversal iterator '{}' spans {e} but result dim {k} is dynamic",
                    it.name
                ))
            }
            _ => {}
        }
    }
    Ok(())
}
