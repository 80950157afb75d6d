//! Parsing an op's custom form by its format: the elements in order, optional groups by
//! their first element, attributes by their constraints, and `custom<...>` directives.

use super::finish::finish;
use super::{attr_constraint, format_of, kind_of, Elem, Kind};
use ftuner_ir::dialect::{Arity, OpDef};
use ftuner_ir::lexer::Tok;
use ftuner_ir::parser::{OperationState, PResult, Parser, UnresolvedOperand};
use ftuner_ir::{Attribute, Type, DYNAMIC};
use rustc_hash::FxHashMap;
use std::sync::{LazyLock, Mutex};

/// What the elements of a format gave: operands and types by name, regions, successors.
pub(super) struct PState {
    pub(super) operands: FxHashMap<String, Vec<UnresolvedOperand>>,
    pub(super) types: FxHashMap<String, Vec<Type>>,
    pub(super) regions: Vec<ftuner_ir::RegionId>,
    pub(super) successors: Vec<ftuner_ir::BlockId>,
}

/// Parse hook for ops with an `assembly_format`.
pub fn parse(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    let def = p
        .ctx
        .op_def(st.name)
        .cloned()
        .ok_or_else(|| p.err_here("unregistered op"))?;
    let elems = format_of(&def).map_err(|e| p.err_here(e))?;
    let at = p.current_offset();
    let mut ps = PState {
        operands: Default::default(),
        types: Default::default(),
        regions: vec![],
        successors: vec![],
    };
    parse_elems(p, st, &def, &elems, &mut ps)?;
    // Defaults for absent default-valued attributes.
    for (name, text) in def.defaults {
        if st.get_attr(name).is_none() {
            let a = parse_attr_text(p.ctx, text).map_err(|e| p.err_here(e))?;
            st.add_attr(name, a);
        }
    }
    finish(p, st, &def, ps, at)
}

/// Parse an attribute from text (spec defaults).
pub fn parse_attr_text(ctx: &ftuner_ir::Context, text: &str) -> Result<Attribute, String> {
    // Spec defaults are few and parsed for every op: cache them.
    static DEFAULTS: LazyLock<Mutex<FxHashMap<String, Attribute>>> =
        LazyLock::new(Default::default);
    if let Some(a) = DEFAULTS.lock().unwrap_or_else(|e| e.into_inner()).get(text) {
        return Ok(*a);
    }
    let mut ir = ftuner_ir::Ir::new();
    let mut p = Parser::new(ctx, &mut ir, text, "<spec>");
    let a = p.parse_attribute(None).map_err(|e| e.message)?;
    DEFAULTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(text.to_string(), a);
    Ok(a)
}

fn is_present(p: &Parser<'_>, def: &OpDef, first: &Elem) -> bool {
    match first {
        Elem::Lit(l) => {
            if l.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            {
                p.peek_keyword(l)
            } else {
                lit_tok(l).is_some_and(|t| p.peek() == t)
            }
        }
        Elem::Var(n) => match kind_of(def, n) {
            Some(Kind::Operand(_)) => p.peek() == Tok::PercentIdent,
            Some(Kind::Region) => p.peek() == Tok::LBrace,
            Some(Kind::Successor) => p.peek() == Tok::CaretIdent,
            Some(Kind::Attr) => {
                let c = attr_constraint(def, n);
                match c {
                    "UnitAttr" => false,
                    _ => !matches!(p.peek(), Tok::Colon | Tok::Eof | Tok::RBrace | Tok::RParen),
                }
            }
            _ => false,
        },
        Elem::TypeOf(_) => p.can_start_type_pub(),
        Elem::AttrDict(_) => p.peek() == Tok::LBrace,
        Elem::Custom(..) => p.peek() == Tok::LSquare,
        _ => false,
    }
}

fn lit_tok(l: &str) -> Option<Tok> {
    Some(match l {
        "," => Tok::Comma,
        ":" => Tok::Colon,
        "=" => Tok::Equal,
        "->" => Tok::Arrow,
        "(" => Tok::LParen,
        ")" => Tok::RParen,
        "[" => Tok::LSquare,
        "]" => Tok::RSquare,
        "{" => Tok::LBrace,
        "}" => Tok::RBrace,
        "<" => Tok::Less,
        ">" => Tok::Greater,
        "?" => Tok::Question,
        "*" => Tok::Star,
        "+" => Tok::Plus,
        "-" => Tok::Minus,
        "|" => Tok::Pipe,
        "..." => Tok::Ellipsis,
        _ => return None,
    })
}

fn parse_elems(
    p: &mut Parser<'_>,
    st: &mut OperationState,
    def: &OpDef,
    elems: &[Elem],
    ps: &mut PState,
) -> PResult<()> {
    for e in elems {
        match e {
            Elem::Lit(l) => {
                if l.is_empty() || l == " " || l == "\\n" {
                    continue;
                }
                if let Some(t) = lit_tok(l) {
                    p.expect(t, &format!("'{l}'"))?;
                } else {
                    p.parse_keyword(l)?;
                }
            }
            Elem::AttrDict(kw) => {
                let mut v = vec![];
                if *kw {
                    p.parse_optional_attr_dict_with_keyword(&mut v)?;
                } else {
                    p.parse_optional_attr_dict(&mut v)?;
                }
                for (k, a) in v {
                    st.add_attr(&k, a);
                }
            }
            Elem::Optional(inner, anchor) => {
                if let Some(first) = inner
                    .iter()
                    .find(|e| !matches!(e, Elem::Lit(l) if l.is_empty() || l == " "))
                {
                    if is_present(p, def, first) {
                        parse_elems(p, st, def, inner, ps)?;
                    } else if attr_constraint(def, anchor) == "UnitAttr"
                        && !matches!(first, Elem::Var(_))
                    {
                        // unit attribute absent
                    }
                }
                let _ = anchor;
            }
            Elem::Var(n) if n == "operands" && kind_of(def, n).is_none() => {
                let ops = p.parse_operand_list()?;
                ps.operands.insert("operands".into(), ops);
            }
            Elem::Var(n) => match kind_of(def, n) {
                Some(Kind::Operand(ar)) => {
                    let v = match ar {
                        Arity::Single => vec![p.parse_operand()?],
                        Arity::Optional => p.parse_optional_operand()?.into_iter().collect(),
                        Arity::Variadic => p.parse_operand_list()?,
                    };
                    ps.operands.insert(n.clone(), v);
                }
                Some(Kind::Attr) => {
                    let a = parse_format_attr(p, def, n)?;
                    if let Some(a) = a {
                        st.add_attr(n, a);
                    }
                }
                Some(Kind::Region) => ps.regions.push(p.parse_region()?),
                Some(Kind::Successor) => ps.successors.push(p.parse_successor()?),
                _ => {
                    return Err(p.err_here(format!(
                        "format variable '{n}' is not an operand, attribute or region of '{}'",
                        def.name
                    )))
                }
            },
            Elem::TypeOf(names) => {
                for (i, n) in names.iter().enumerate() {
                    if i > 0 {
                        p.expect(Tok::Comma, "','")?;
                    }
                    let count = match kind_of(def, n) {
                        Some(Kind::Operand(Arity::Single)) | Some(Kind::Result(Arity::Single)) => 1,
                        Some(Kind::Operand(_)) => ps.operands.get(n).map(|v| v.len()).unwrap_or(0),
                        _ if n == "operands" => ps.operands.values().map(|v| v.len()).sum(),
                        _ => usize::MAX,
                    };
                    let tys = if count == usize::MAX {
                        if p.can_start_type_pub() {
                            p.parse_type_list_no_parens()?
                        } else {
                            vec![]
                        }
                    } else {
                        let mut v = vec![];
                        for k in 0..count {
                            if k > 0 {
                                p.expect(Tok::Comma, "','")?;
                            }
                            v.push(p.parse_type()?);
                        }
                        v
                    };
                    ps.types.insert(n.clone(), tys);
                }
            }
            Elem::FunctionalType(a, b) => {
                let ins = p.parse_paren_type_list()?;
                p.expect(Tok::Arrow, "'->'")?;
                let outs = p.parse_function_result_types()?;
                ps.types.insert(a.clone(), ins);
                ps.types.insert(b.clone(), outs);
            }
            Elem::Custom(name, args) => custom_parse(p, st, name, args, ps)?,
        }
    }
    Ok(())
}

fn parse_format_attr(p: &mut Parser<'_>, def: &OpDef, n: &str) -> PResult<Option<Attribute>> {
    let c = attr_constraint(def, n);
    if let Some(cases) = c.strip_prefix("I64Enum:") {
        let at = p.current_offset();
        if p.peek() == Tok::String {
            // MLIR also accepts the keyword as a string: `arith.cmpi "slt", ...`.
            let s = p.parse_string()?;
            let idx = cases
                .split(',')
                .position(|x| x == s)
                .ok_or_else(|| p.err_at(at, format!("invalid predicate '{s}'")))?;
            return Ok(Some(Attribute::i64(idx as i64)));
        }
        let kw = p
            .parse_optional_any_keyword()
            .ok_or_else(|| p.err_here("expected keyword for enum attribute"))?;
        let idx = cases
            .split(',')
            .position(|x| x == kw)
            .ok_or_else(|| p.err_at(at, format!("invalid predicate '{kw}'")))?;
        return Ok(Some(Attribute::i64(idx as i64)));
    }
    if let Some(mn) = c.strip_prefix('#') {
        // `#dialect.mnemonic` printed stripped: `<...>` after the mnemonic keyword.
        let (dialect, mnemonic) = mn.split_once('.').unwrap_or((mn, ""));
        let body = p.parse_balanced_angle()?;
        return Ok(Some(Attribute::dialect(
            dialect,
            &format!("{mnemonic}{body}"),
        )));
    }
    Ok(Some(match c {
        "UnitAttr" => Attribute::unit(),
        "I64Attr" => Attribute::i64(p.parse_i64()?),
        "I32Attr" => Attribute::int(p.parse_integer()?, Type::i32()),
        "IndexAttr" => Attribute::index(p.parse_i64()?),
        "StrAttr" => Attribute::string(p.parse_string()?),
        "SymbolNameAttr" => Attribute::string(p.parse_symbol_name()?),
        "FlatSymbolRefAttr" | "SymbolRefAttr" => Attribute::symbol_ref(p.parse_symbol_name()?),
        "TypeAttr" | "FunctionTypeAttr" => Attribute::type_attr(p.parse_type()?),
        "DenseI64ArrayAttr" => {
            p.expect(Tok::LSquare, "'['")?;
            let mut v = vec![];
            if !p.consume_if(Tok::RSquare) {
                loop {
                    v.push(p.parse_i64()?);
                    if p.consume_if(Tok::RSquare) {
                        break;
                    }
                    p.expect(Tok::Comma, "','")?;
                }
            }
            Attribute::dense_i64_array(&v)
        }
        _ => p.parse_attribute(None)?,
    }))
}

fn custom_parse(
    p: &mut Parser<'_>,
    st: &mut OperationState,
    name: &str,
    args: &[String],
    ps: &mut PState,
) -> PResult<()> {
    match name {
        "DynamicIndexList" => {
            let (dynv, stat) = parse_dynamic_index_list(p, Tok::LSquare, Tok::RSquare)?;
            ps.operands.insert(args[0].clone(), dynv);
            st.add_attr(&args[1], Attribute::dense_i64_array(&stat));
            Ok(())
        }
        _ => Err(p.err_here(format!("unknown custom directive '{name}'"))),
    }
}

/// `[1, %x, 4]` between `open` and `close` (upstream's `parseDynamicIndexList`): the
/// operands, and the static list with `DYNAMIC` where an operand stands. `-2^63` is
/// refused as a static entry: it is that mark.
pub fn parse_dynamic_index_list(
    p: &mut Parser<'_>,
    open: Tok,
    close: Tok,
) -> PResult<(Vec<UnresolvedOperand>, Vec<i64>)> {
    p.expect(open, "the index list's opening bracket")?;
    let (mut dynv, mut stat) = (vec![], vec![]);
    if p.consume_if(close) {
        return Ok((dynv, stat));
    }
    loop {
        if p.peek() == Tok::PercentIdent {
            dynv.push(p.parse_operand()?);
            stat.push(DYNAMIC);
        } else {
            let at = p.current_offset();
            let v = p.parse_i64()?;
            if v == DYNAMIC {
                return Err(p.err_at(
                    at,
                    "-2^63 cannot be a static entry (it marks a dynamic one)",
                ));
            }
            stat.push(v);
        }
        if p.consume_if(close) {
            return Ok((dynv, stat));
        }
        p.expect(Tok::Comma, "','")?;
    }
}
