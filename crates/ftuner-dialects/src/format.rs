//! An interpreter for MLIR's declarative assembly format (`assembly_format` in the specs):
//! the same format string drives both parsing and printing, with MLIR's spacing rules.
//!
//! Supported: `$operand`, `$attr`, `$region`, `$successor`, `type($x)`, `type(operands)`,
//! `type(results)`, `functional-type(a, b)`, `attr-dict`, `attr-dict-with-keyword`,
//! literals and keywords in backquotes, the spacing literals `` and ` `, optional groups
//! `(...)?` with a `^` anchor, `operands`, `results`, `qualified(...)`, and
//! `custom<DynamicIndexList>(...)`.

use ftuner_ir::dialect::{Arity, OpDef, TypeEnv};
use ftuner_ir::lexer::Tok;
use ftuner_ir::parser::{OperationState, PResult, Parser, UnresolvedOperand};
use ftuner_ir::{AttrKind, Attribute, OpId, OpPrinter, Type, DYNAMIC};
use rustc_hash::FxHashMap;
use std::sync::{Arc, LazyLock, Mutex};

#[derive(Debug, Clone)]
enum Elem {
    Lit(String),
    Var(String),
    TypeOf(Vec<String>),
    FunctionalType(String, String),
    AttrDict(bool),
    Optional(Vec<Elem>, String),
    Custom(String, Vec<String>),
}

fn tokenize_format(f: &str) -> Result<Vec<Elem>, String> {
    let mut p = FmtParser {
        s: f.as_bytes(),
        i: 0,
    };
    let v = p.elems(false)?;
    Ok(v)
}

struct FmtParser<'a> {
    s: &'a [u8],
    i: usize,
}

impl FmtParser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn ident(&mut self) -> String {
        let st = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric()
                || self.s[self.i] == b'_'
                || self.s[self.i] == b'-')
        {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[st..self.i]).into_owned()
    }
    fn args(&mut self) -> Result<Vec<String>, String> {
        self.ws();
        if self.s.get(self.i) != Some(&b'(') {
            return Err("expected '(' in format directive".into());
        }
        self.i += 1;
        let mut v = vec![];
        loop {
            self.ws();
            match self.s.get(self.i) {
                Some(b')') => {
                    self.i += 1;
                    return Ok(v);
                }
                Some(b',') => self.i += 1,
                Some(b'$') => {
                    self.i += 1;
                    v.push(self.ident());
                }
                Some(_) => {
                    // `type($x)` nested inside custom directives, or `operands`/`results`.
                    let id = self.ident();
                    if id == "type" || id == "qualified" {
                        let inner = self.args()?;
                        v.extend(inner.into_iter().map(|x| format!("type:{x}")));
                    } else if id.is_empty() {
                        return Err("bad format argument".into());
                    } else {
                        v.push(id);
                    }
                }
                None => return Err("unterminated format directive".into()),
            }
        }
    }
    fn elems(&mut self, in_group: bool) -> Result<Vec<Elem>, String> {
        let mut v = vec![];
        loop {
            self.ws();
            let Some(&c) = self.s.get(self.i) else {
                if in_group {
                    return Err("unterminated optional group".into());
                }
                return Ok(v);
            };
            match c {
                b'`' => {
                    self.i += 1;
                    let st = self.i;
                    while self.i < self.s.len() && self.s[self.i] != b'`' {
                        self.i += 1;
                    }
                    let l = String::from_utf8_lossy(&self.s[st..self.i]).into_owned();
                    self.i += 1;
                    v.push(Elem::Lit(l));
                }
                b'$' => {
                    self.i += 1;
                    let n = self.ident();
                    if self.s.get(self.i) == Some(&b'^') {
                        self.i += 1;
                        v.push(Elem::Var(format!("^{n}")));
                    } else {
                        v.push(Elem::Var(n));
                    }
                }
                b'(' => {
                    self.i += 1;
                    let inner = self.elems(true)?;
                    let anchor = find_anchor(&inner).ok_or("optional group without anchor")?;
                    v.push(Elem::Optional(strip_anchor(inner), anchor));
                }
                b')' if in_group => {
                    self.i += 1;
                    self.ws();
                    if self.s.get(self.i) == Some(&b'?') {
                        self.i += 1;
                    }
                    return Ok(v);
                }
                _ => {
                    let id = self.ident();
                    match id.as_str() {
                        "attr-dict" => v.push(Elem::AttrDict(false)),
                        "attr-dict-with-keyword" => v.push(Elem::AttrDict(true)),
                        "type" | "qualified" => {
                            let a = self.args()?;
                            v.push(Elem::TypeOf(
                                a.into_iter()
                                    .map(|x| x.trim_start_matches("type:").to_string())
                                    .collect(),
                            ));
                        }
                        "functional-type" => {
                            let a = self.args()?;
                            if a.len() != 2 {
                                return Err("functional-type takes two arguments".into());
                            }
                            v.push(Elem::FunctionalType(a[0].clone(), a[1].clone()));
                        }
                        "custom" => {
                            if self.s.get(self.i) != Some(&b'<') {
                                return Err("expected '<' after custom".into());
                            }
                            self.i += 1;
                            let n = self.ident();
                            self.i += 1; // '>'
                            let a = self.args()?;
                            v.push(Elem::Custom(n, a));
                        }
                        "operands" | "results" | "regions" | "successors" => v.push(Elem::Var(id)),
                        _ => return Err(format!("unknown format element '{id}'")),
                    }
                }
            }
        }
    }
}

fn find_anchor(v: &[Elem]) -> Option<String> {
    for e in v {
        match e {
            Elem::Var(n) if n.starts_with('^') => return Some(n[1..].to_string()),
            Elem::TypeOf(a) if a.iter().any(|x| x.starts_with('^')) => {
                return a
                    .iter()
                    .find(|x| x.starts_with('^'))
                    .map(|x| x[1..].to_string())
            }
            Elem::Custom(_, a) if a.iter().any(|x| x.starts_with('^')) => {
                return a
                    .iter()
                    .find(|x| x.starts_with('^'))
                    .map(|x| x[1..].to_string())
            }
            _ => {}
        }
    }
    None
}

fn strip_anchor(v: Vec<Elem>) -> Vec<Elem> {
    v.into_iter()
        .map(|e| match e {
            Elem::Var(n) => Elem::Var(n.trim_start_matches('^').to_string()),
            o => o,
        })
        .collect()
}

type FormatCache = Mutex<FxHashMap<&'static str, Arc<Vec<Elem>>>>;
static CACHE: LazyLock<FormatCache> = LazyLock::new(Default::default);

fn format_of(def: &OpDef) -> Result<Arc<Vec<Elem>>, String> {
    let f = def.format.ok_or("op has no assembly format")?;
    let mut c = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(v) = c.get(f) {
        return Ok(v.clone());
    }
    let v = Arc::new(
        tokenize_format(f).map_err(|e| format!("{}: bad assembly format: {e}", def.name))?,
    );
    c.insert(f, v.clone());
    Ok(v)
}

/// Check that every spec's format is well formed (used by tests).
pub fn check_format(def: &OpDef) -> Result<(), String> {
    format_of(def).map(|_| ())
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Operand(Arity),
    Result(Arity),
    Attr,
    Region,
    Successor,
}

fn kind_of(def: &OpDef, name: &str) -> Option<Kind> {
    if let Some(a) = def.operands.iter().find(|a| a.name == name) {
        return Some(Kind::Operand(a.arity));
    }
    if let Some(a) = def.results.iter().find(|a| a.name == name) {
        return Some(Kind::Result(a.arity));
    }
    if def.attributes.iter().any(|a| a.name == name) {
        return Some(Kind::Attr);
    }
    if name.starts_with("region") || name == "body" || name == "thenRegion" || name == "elseRegion"
    {
        return Some(Kind::Region);
    }
    if name == "dest" || name.ends_with("Dest") || name == "successors" {
        return Some(Kind::Successor);
    }
    None
}

fn attr_constraint<'d>(def: &'d OpDef, name: &str) -> &'d str {
    def.attributes
        .iter()
        .find(|a| a.name == name)
        .map(|a| a.constraint)
        .unwrap_or("AnyAttr")
}

fn op_dialect(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

// ===================================================================================
// Parsing
// ===================================================================================

struct PState {
    operands: FxHashMap<String, Vec<UnresolvedOperand>>,
    types: FxHashMap<String, Vec<Type>>,
    regions: Vec<ftuner_ir::RegionId>,
    successors: Vec<ftuner_ir::BlockId>,
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
            // `[1, %x, ?]`: static values, `%v` for dynamic ones (their static slot is ?).
            p.expect(Tok::LSquare, "'['")?;
            let mut stat = vec![];
            let mut dynv = vec![];
            if !p.consume_if(Tok::RSquare) {
                loop {
                    if p.peek() == Tok::PercentIdent {
                        dynv.push(p.parse_operand()?);
                        stat.push(DYNAMIC);
                    } else {
                        stat.push(p.parse_i64()?);
                    }
                    if p.consume_if(Tok::RSquare) {
                        break;
                    }
                    p.expect(Tok::Comma, "','")?;
                }
            }
            ps.operands.insert(args[0].clone(), dynv);
            st.add_attr(&args[1], Attribute::dense_i64_array(&stat));
            Ok(())
        }
        _ => Err(p.err_here(format!("unknown custom directive '{name}'"))),
    }
}

fn finish(
    p: &mut Parser<'_>,
    st: &mut OperationState,
    def: &OpDef,
    mut ps: PState,
    at: u32,
) -> PResult<()> {
    // Collect known types into an environment, infer the rest.
    let mut env = TypeEnv::default();
    for a in def.operands {
        let cnt = ps.operands.get(a.name).map(|v| v.len()).unwrap_or(0);
        env.groups
            .push((a.name, cnt, ps.types.get(a.name).cloned()));
    }
    for a in def.results {
        let cnt = match a.arity {
            Arity::Single => 1,
            _ => ps.types.get(a.name).map(|v| v.len()).unwrap_or(0),
        };
        env.groups
            .push((a.name, cnt, ps.types.get(a.name).cloned()));
    }
    // `operands` / `results` keys.
    if let Some(all) = ps.operands.remove("operands") {
        let tys = ps.types.get("operands").cloned();
        let mut i = 0;
        for a in def.operands {
            let n = if a.arity == Arity::Single {
                1
            } else {
                all.len() + 1 - def.operands.len()
            };
            let slice = all[i..(i + n).min(all.len())].to_vec();
            if let Some(g) = env.groups.iter_mut().find(|g| g.0 == a.name) {
                g.1 = slice.len();
                if let Some(t) = &tys {
                    g.2 = Some(t[i..(i + n).min(t.len())].to_vec());
                }
            }
            ps.operands.insert(a.name.to_string(), slice);
            i += n;
        }
    }
    // `type(operands)` / `functional-type(operands, ...)` with operands parsed by name.
    if let Some(t) = ps.types.get("operands").cloned() {
        let mut i = 0;
        for a in def.operands {
            let n = ps.operands.get(a.name).map(|v| v.len()).unwrap_or(0);
            if let Some(g) = env.groups.iter_mut().find(|g| g.0 == a.name) {
                if g.2.is_none() && i + n <= t.len() {
                    g.2 = Some(t[i..i + n].to_vec());
                }
            }
            i += n;
        }
    }
    if let Some(t) = ps.types.get("results").cloned() {
        if def.results.len() == 1 {
            env.groups
                .iter_mut()
                .filter(|g| g.0 == def.results[0].name)
                .for_each(|g| {
                    g.1 = t.len();
                    g.2 = Some(t.clone());
                });
        }
    }
    env.attrs = st.attrs.clone();
    // Type groups and SameOperandsAndResultType.
    let same_all = def.has(ftuner_ir::traits::SAME_OPERANDS_AND_RESULT_TYPE);
    for _ in 0..2 {
        for g in def.type_groups {
            let known = g.iter().find_map(|n| env.get1(n));
            if let Some(t) = known {
                for n in g.iter() {
                    let c = env.count(n).max(1);
                    env.set(n, vec![t; c]);
                }
            }
        }
        if same_all {
            let known = env
                .groups
                .iter()
                .find_map(|g| g.2.as_ref().and_then(|v| v.first().copied()));
            if let Some(t) = known {
                let names: Vec<(&str, usize)> = env.groups.iter().map(|g| (g.0, g.1)).collect();
                for (n, c) in names {
                    env.set(n, vec![t; c]);
                }
            }
        }
        if let Some(f) = def.infer_results {
            f(&mut env).map_err(|m| p.err_at(at, format!("'{}' op {m}", def.name)))?;
        }
    }
    // Resolve operands.
    let mut seg = vec![];
    for a in def.operands {
        let ops = ps.operands.get(a.name).cloned().unwrap_or_default();
        seg.push(ops.len() as i32);
        if ops.is_empty() {
            continue;
        }
        let tys = match env
            .get(a.name)
            .cloned()
            .or_else(|| concrete_type(a.constraint).map(|t| vec![t]))
        {
            Some(t) => t,
            None => {
                return Err(p.err_at(
                    at,
                    format!(
                        "type of operand '{}' of '{}' could not be inferred",
                        a.name, def.name
                    ),
                ))
            }
        };
        let tys = if tys.len() == 1 && ops.len() > 1 {
            vec![tys[0]; ops.len()]
        } else {
            tys
        };
        if tys.len() != ops.len() {
            return Err(p.err_at(
                at,
                format!("{} operands present, but expected {}", ops.len(), tys.len()),
            ));
        }
        for (o, t) in ops.iter().zip(tys) {
            st.operands.push(p.resolve_operand(o, t)?);
        }
    }
    if def.has(ftuner_ir::traits::ATTR_SIZED_OPERAND_SEGMENTS) {
        st.props.push((
            "operandSegmentSizes".into(),
            Attribute::dense_i32_array(&seg),
        ));
    }
    for a in def.results {
        match env
            .get(a.name)
            .cloned()
            .or_else(|| concrete_type(a.constraint).map(|t| vec![t]))
        {
            Some(t) => st.result_types.extend(t.iter().copied()),
            None if a.arity == Arity::Single => {
                return Err(p.err_at(
                    at,
                    format!(
                        "type of result '{}' of '{}' could not be inferred",
                        a.name, def.name
                    ),
                ))
            }
            None => {}
        }
    }
    st.regions.extend(ps.regions);
    st.successors.extend(ps.successors);
    Ok(())
}

/// The one type a constraint allows, if it names a single type.
fn concrete_type(c: &str) -> Option<Type> {
    Some(match c {
        "Index" => Type::index(),
        "I1" => Type::i1(),
        "I32" => Type::i32(),
        "I64" => Type::i64(),
        "F32" => Type::f32(),
        "F64" => Type::f64(),
        _ => return None,
    })
}

// ===================================================================================
// Printing
// ===================================================================================

struct Spacing {
    emit_space: bool,
    last_punct: bool,
}

fn print_lit(pr: &mut OpPrinter<'_>, sp: &mut Spacing, l: &str) {
    if l.is_empty() {
        sp.emit_space = false;
        sp.last_punct = true;
        return;
    }
    if l == " " {
        pr.write(" ");
        sp.emit_space = false;
        sp.last_punct = false;
        return;
    }
    let space_before = if l.len() != 1 && l != "->" {
        true
    } else if sp.last_punct {
        !">)}],".contains(&l[..1])
    } else {
        !"<>(){}[],".contains(&l[..1])
    };
    if sp.emit_space && space_before {
        pr.write(" ");
    }
    pr.write(l);
    sp.emit_space = l.len() != 1 || !"<({[".contains(&l[..1]);
    let f = l.as_bytes()[0];
    sp.last_punct = f != b'_' && !f.is_ascii_alphabetic();
}

fn pre_elem(pr: &mut OpPrinter<'_>, sp: &mut Spacing) {
    if sp.emit_space || !sp.last_punct {
        pr.write(" ");
    }
    sp.last_punct = false;
    sp.emit_space = true;
}

/// Print hook for ops with an `assembly_format`.
pub fn print(pr: &mut OpPrinter<'_>, op: OpId) {
    let name = pr.ir.name(op);
    let Some(def) = pr.ctx.op_def(name).cloned() else {
        return;
    };
    let Ok(elems) = format_of(&def) else { return };
    let mut sp = Spacing {
        emit_space: true,
        last_punct: false,
    };
    // Attributes shown by the format itself are elided from attr-dict.
    let mut shown: Vec<&'static str> = vec!["operandSegmentSizes", "resultSegmentSizes"];
    collect_shown(&elems, &def, &mut shown);
    for (n, text) in def.defaults {
        if let (Some(a), Ok(d)) = (pr.ir.attr(op, n), parse_attr_text(pr.ctx, text)) {
            if a == d {
                shown.push(n);
            }
        }
    }
    print_elems(pr, op, &def, &elems, &mut sp, &shown);
}

fn collect_shown(elems: &[Elem], def: &OpDef, shown: &mut Vec<&'static str>) {
    for e in elems {
        match e {
            Elem::Var(n) => {
                if let Some(a) = def.attributes.iter().find(|a| a.name == n) {
                    shown.push(a.name);
                }
            }
            Elem::Optional(inner, _) => collect_shown(inner, def, shown),
            Elem::Custom(_, args) => {
                for n in args {
                    if let Some(a) = def.attributes.iter().find(|a| a.name == n) {
                        shown.push(a.name);
                    }
                }
            }
            _ => {}
        }
    }
}

fn group_values(
    pr: &OpPrinter<'_>,
    op: OpId,
    def: &OpDef,
    n: &str,
) -> Option<Vec<ftuner_ir::Value>> {
    if let Some(i) = def.operands.iter().position(|a| a.name == n) {
        return Some(crate::segment(pr.ir, op, "operandSegmentSizes", i, true).to_vec());
    }
    if let Some(i) = def.results.iter().position(|a| a.name == n) {
        return Some(crate::segment(pr.ir, op, "resultSegmentSizes", i, false).to_vec());
    }
    if n == "operands" {
        return Some(pr.ir.operands(op).to_vec());
    }
    if n == "results" {
        return Some(pr.ir.results(op).to_vec());
    }
    None
}

fn anchor_present(
    pr: &OpPrinter<'_>,
    op: OpId,
    def: &OpDef,
    anchor: &str,
    shown_defaults: &[&str],
) -> bool {
    if let Some(v) = group_values(pr, op, def, anchor) {
        return !v.is_empty();
    }
    if def.attributes.iter().any(|a| a.name == anchor) {
        // A default-valued attribute at its default is not printed.
        return pr.ir.attr(op, anchor).is_some() && !shown_defaults.contains(&anchor);
    }
    if kind_of(def, anchor) == Some(Kind::Region) {
        return pr
            .ir
            .regions_of(op)
            .first()
            .is_some_and(|r| !pr.ir.region(*r).blocks.is_empty());
    }
    false
}

fn print_elems(
    pr: &mut OpPrinter<'_>,
    op: OpId,
    def: &OpDef,
    elems: &[Elem],
    sp: &mut Spacing,
    shown: &[&'static str],
) {
    let defaults_at_default: Vec<&str> = def
        .defaults
        .iter()
        .filter(|(n, t)| {
            pr.ir
                .attr(op, n)
                .is_some_and(|a| parse_attr_text(pr.ctx, t).ok() == Some(a))
        })
        .map(|(n, _)| *n)
        .collect();
    for e in elems {
        match e {
            Elem::Lit(l) => print_lit(pr, sp, l),
            Elem::AttrDict(kw) => {
                if *kw {
                    pr.print_optional_attr_dict_with_keyword(op, shown);
                } else {
                    pr.print_optional_attr_dict(op, shown);
                }
            }
            Elem::Optional(inner, anchor) => {
                if anchor_present(pr, op, def, anchor, &defaults_at_default) {
                    print_elems(pr, op, def, inner, sp, shown);
                }
            }
            Elem::Var(n) => {
                if let Some(vals) = group_values(pr, op, def, n) {
                    pre_elem(pr, sp);
                    pr.print_operands(&vals);
                } else if def.attributes.iter().any(|a| a.name == n) {
                    let Some(a) = pr.ir.attr(op, n) else { continue };
                    pre_elem(pr, sp);
                    print_format_attr(pr, def, n, a, op);
                } else if kind_of(def, n) == Some(Kind::Region) {
                    pre_elem(pr, sp);
                    if let Some(r) = pr.ir.regions_of(op).first().copied() {
                        pr.print_region(r, true, true);
                    }
                } else if kind_of(def, n) == Some(Kind::Successor) {
                    pre_elem(pr, sp);
                    let s = pr.ir.op(op).successors.clone();
                    for (i, b) in s.iter().enumerate() {
                        if i > 0 {
                            pr.write(", ");
                        }
                        pr.print_successor(*b);
                    }
                }
            }
            Elem::TypeOf(names) => {
                pre_elem(pr, sp);
                for (i, n) in names.iter().enumerate() {
                    if i > 0 {
                        pr.write(", ");
                    }
                    let vals = group_values(pr, op, def, n).unwrap_or_default();
                    pr.print_types_of(&vals);
                }
            }
            Elem::FunctionalType(a, b) => {
                pre_elem(pr, sp);
                let ins = group_values(pr, op, def, a).unwrap_or_default();
                let outs = group_values(pr, op, def, b).unwrap_or_default();
                pr.write("(");
                pr.print_types_of(&ins);
                pr.write(") -> ");
                let ot: Vec<Type> = outs.iter().map(|v| pr.ir.value_type(*v)).collect();
                pr.print_result_types(&ot);
            }
            Elem::Custom(name, args) => {
                if name == "DynamicIndexList" {
                    pre_elem(pr, sp);
                    let dynv = group_values(pr, op, def, &args[0]).unwrap_or_default();
                    let stat = pr
                        .ir
                        .attr(op, &args[1])
                        .and_then(|a| a.as_dense_i64s())
                        .unwrap_or_default();
                    print_dynamic_index_list(pr, &dynv, &stat);
                }
            }
        }
    }
}

/// `[0, %x, 2]`
pub fn print_dynamic_index_list(pr: &mut OpPrinter<'_>, dynv: &[ftuner_ir::Value], stat: &[i64]) {
    pr.write("[");
    let mut d = 0;
    for (i, s) in stat.iter().enumerate() {
        if i > 0 {
            pr.write(", ");
        }
        if *s == DYNAMIC {
            if let Some(v) = dynv.get(d) {
                pr.print_operand(*v);
            }
            d += 1;
        } else {
            pr.write(&s.to_string());
        }
    }
    pr.write("]");
}

fn print_format_attr(pr: &mut OpPrinter<'_>, def: &OpDef, n: &str, a: Attribute, op: OpId) {
    let c = attr_constraint(def, n);
    if let Some(cases) = c.strip_prefix("I64Enum:") {
        if let Some(k) = a.as_i64().and_then(|i| cases.split(',').nth(i as usize)) {
            pr.write(k);
            return;
        }
    }
    if let Some(mn) = c.strip_prefix('#') {
        let (dialect, mnemonic) = mn.split_once('.').unwrap_or((mn, ""));
        if let Some((d, body)) = a.dialect_body() {
            if d == dialect && body.starts_with(mnemonic) {
                pr.write(&body[mnemonic.len()..]);
                return;
            }
        }
    }
    let _ = op_dialect(pr.ir.name(op));
    match (c, a.kind()) {
        ("StrAttr", _) => pr.print_escaped(a.as_str().unwrap_or("")),
        ("SymbolNameAttr", AttrKind::String { value, .. }) => {
            let s = Attribute::symbol_ref(value.clone());
            pr.print_attr(s);
        }
        ("I64Attr" | "I32Attr" | "IndexAttr", _) => pr.print_attr_without_type(a),
        ("DenseI64ArrayAttr", _) => {
            let v = a.as_dense_i64s().unwrap_or_default();
            pr.write(&format!(
                "[{}]",
                v.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        ("UnitAttr", _) => {}
        _ => pr.print_attr(a),
    }
}
