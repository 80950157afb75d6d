//! Parser for MLIR's textual IR: the generic op form, custom forms through each op's
//! parse hook, aliases, locations and the `{-# dialect_resources #-}` section.
//!
//! Errors stop the parse and carry a `file:line:col` location. Nesting is bounded
//! ([`MAX_NESTING`]) so that no input overflows the stack.

mod affine;
mod attrs;
mod dense;
mod ops;
mod types;

pub use ops::{Argument, UnresolvedOperand};

use crate::attrs::{Attribute, LocKind};
use crate::diag::Diagnostic;
use crate::dialect::Context;
use crate::ir::{BlockId, Ir, OpId, RegionId, Value};
use crate::lexer::{Lexer, Tok, Token};
use crate::types::Type;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Deepest nesting of regions, attributes or types the parser accepts.
pub const MAX_NESTING: usize = 200;

/// Run `f` with enough stack for one more level of recursion (grows the stack on the
/// heap when needed), so deep but legal nesting cannot overflow a thread's stack.
pub fn with_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(128 * 1024, 2 * 1024 * 1024, f)
}

pub type PResult<T> = Result<T, Diagnostic>;

/// What a custom parse hook fills in.
pub struct OperationState {
    pub name: &'static str,
    pub loc: Attribute,
    pub operands: Vec<Value>,
    pub result_types: Vec<Type>,
    pub props: Vec<(String, Attribute)>,
    pub attrs: Vec<(String, Attribute)>,
    pub regions: Vec<RegionId>,
    pub successors: Vec<BlockId>,
}

impl OperationState {
    pub fn add_attr(&mut self, name: &str, a: Attribute) {
        self.attrs.retain(|(k, _)| k != name);
        self.attrs.push((name.to_string(), a));
    }
    pub fn get_attr(&self, name: &str) -> Option<Attribute> {
        self.attrs
            .iter()
            .chain(self.props.iter())
            .find(|(k, _)| k == name)
            .map(|(_, v)| *v)
    }
}

pub(crate) struct Scope {
    pub values: FxHashMap<String, Vec<Value>>,
    pub isolated: bool,
    /// Forward references (only in isolated scopes): name -> (placeholders by result
    /// number, use loc). Sparse: `%x#2147483647` is one placeholder, not 2^31.
    pub forward: FxHashMap<String, (std::collections::BTreeMap<u32, Value>, Attribute)>,
}

pub(crate) struct BlockScope {
    pub blocks: FxHashMap<String, (BlockId, bool, Attribute)>,
}

pub struct Parser<'a> {
    pub ctx: &'a Context,
    pub ir: &'a mut Ir,
    pub(crate) src: &'a str,
    lex: Lexer<'a>,
    pub(crate) tok: Token,
    file: &'static str,
    line_starts: Vec<u32>,
    pub(crate) attr_aliases: FxHashMap<String, Attribute>,
    pub(crate) type_aliases: FxHashMap<String, Type>,
    pub(crate) scopes: Vec<Scope>,
    pub(crate) block_scopes: Vec<BlockScope>,
    pub(crate) default_dialects: Vec<&'static str>,
    /// Ops whose syntax is being parsed (innermost last): regions take their traits.
    pub(crate) op_stack: Vec<&'static str>,
    pub(crate) depth: usize,
    pub(crate) placeholder_op: OpId,
    /// Location aliases read ahead of their definition ([`Parser::prescan_location_aliases`]).
    prescanned: rustc_hash::FxHashSet<String>,
}

/// A parsed file: the IR and its top-level `builtin.module`.
pub struct ParsedModule {
    pub ir: Ir,
    pub top: OpId,
}

/// Parse a whole file into a module (wrapping top-level ops in an implicit module).
pub fn parse_module(ctx: &Context, src: &str, file: &str) -> PResult<ParsedModule> {
    let mut ir = Ir::new();
    // About one op per line: reserving avoids the doubling copies of large modules.
    let lines = src.bytes().filter(|b| *b == b'\n').count() + 1;
    ir.ops.reserve(lines);
    ir.values.reserve(lines);
    let top = {
        let mut p = Parser::new(ctx, &mut ir, src, file);
        p.parse_top_level()?
    };
    Ok(ParsedModule { ir, top })
}

/// Parse `src` as a module into an existing `ir` (a pass that writes part of its output as
/// MLIR text parses it next to the ops it rewrites, then moves the ops where they belong).
/// Returns the new top-level op, which is detached: the caller erases it when done.
pub fn parse_into(ctx: &Context, ir: &mut Ir, src: &str, file: &str) -> PResult<OpId> {
    let mut p = Parser::new(ctx, ir, src, file);
    p.parse_top_level()
}

impl<'a> Parser<'a> {
    pub fn new(ctx: &'a Context, ir: &'a mut Ir, src: &'a str, file: &str) -> Parser<'a> {
        let mut line_starts = vec![0u32];
        for (i, b) in src.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i as u32 + 1);
            }
        }
        // A detached op that owns forward-reference placeholders.
        let placeholder_op = ir.create_op(crate::ir::OpSpec::new(
            "builtin.unrealized_placeholder",
            Attribute::unknown_loc(),
        ));
        let mut lex = Lexer::new(src);
        let tok = lex.next_token();
        Parser {
            ctx,
            ir,
            src,
            lex,
            tok,
            file: crate::ir::intern_name(file),
            line_starts,
            attr_aliases: FxHashMap::default(),
            type_aliases: FxHashMap::default(),
            scopes: vec![],
            block_scopes: vec![],
            default_dialects: vec![],
            op_stack: vec![],
            depth: 0,
            placeholder_op,
            prescanned: Default::default(),
        }
    }

    /// MLIR prints location aliases (`#loc3 = loc("f.mlir":29:8)`) after the operations
    /// that use them, some at the top and some at the end. Reads the top-level location
    /// alias definitions (each on a line of its own) before the operations, so that every
    /// use resolves to its location instead of the position of the use. A line that does
    /// not parse as one is left to the main parse, which reports it where it stands.
    fn prescan_location_aliases(&mut self) {
        if !self.src.contains("= loc(") {
            return;
        }
        let mut scratch = Ir::new();
        let mut found: FxHashMap<String, Attribute> = FxHashMap::default();
        for line in self.src.lines() {
            let t = line.trim_end();
            if !t.starts_with('#') || !t.contains("= loc(") {
                continue;
            }
            let mut p = Parser::new(self.ctx, &mut scratch, t, self.file);
            if p.tok.kind != Tok::HashIdent {
                continue;
            }
            p.attr_aliases = std::mem::take(&mut found);
            let name = p.tok_text()[1..].to_string();
            let ok = p.is_alias_def()
                && !p.attr_aliases.contains_key(&name)
                && p.parse_attr_alias_def().is_ok()
                && p.tok.kind == Tok::Eof
                && p.attr_aliases.get(&name).is_some_and(|a| a.is_location());
            found = std::mem::take(&mut p.attr_aliases);
            if !ok {
                found.remove(&name);
            }
        }
        self.prescanned = found.keys().cloned().collect();
        self.attr_aliases.extend(found);
    }

    // ----- tokens ----------------------------------------------------------------------
    pub fn peek(&self) -> Tok {
        self.tok.kind
    }
    pub fn tok_text(&self) -> &'a str {
        &self.src[self.tok.start as usize..self.tok.end as usize]
    }
    /// Move to the next token (for custom parse hooks).
    pub fn advance_pub(&mut self) {
        self.advance()
    }
    pub(crate) fn advance(&mut self) {
        self.tok = self.lex.next_token();
    }
    /// Restart lexing at a byte offset.
    pub(crate) fn reset_to(&mut self, pos: usize) {
        self.lex.pos = pos;
        self.advance();
    }
    pub fn consume_if(&mut self, k: Tok) -> bool {
        if self.tok.kind == k {
            self.advance();
            true
        } else {
            false
        }
    }
    pub fn expect(&mut self, k: Tok, what: &str) -> PResult<()> {
        if self.tok.kind == k {
            self.advance();
            Ok(())
        } else {
            Err(self.err_here(format!("expected {what}")))
        }
    }
    pub fn peek_keyword(&self, kw: &str) -> bool {
        self.tok.kind == Tok::BareIdent && self.tok_text() == kw
    }
    pub fn parse_optional_keyword(&mut self, kw: &str) -> bool {
        if self.peek_keyword(kw) {
            self.advance();
            true
        } else {
            false
        }
    }
    pub fn parse_keyword(&mut self, kw: &str) -> PResult<()> {
        if self.parse_optional_keyword(kw) {
            Ok(())
        } else {
            Err(self.err_here(format!("expected '{kw}'")))
        }
    }
    /// Any bare identifier.
    pub fn parse_optional_any_keyword(&mut self) -> Option<&'a str> {
        if self.tok.kind == Tok::BareIdent {
            let t = self.tok_text();
            self.advance();
            Some(t)
        } else {
            None
        }
    }

    // ----- locations & errors ------------------------------------------------------------
    pub fn line_col(&self, offset: u32) -> (u32, u32) {
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        (line as u32 + 1, offset - self.line_starts[line] + 1)
    }
    pub fn loc_at(&self, offset: u32) -> Attribute {
        let (line, col) = self.line_col(offset);
        Attribute::location(LocKind::FileLineCol {
            file: self.file,
            line,
            col,
        })
    }
    pub fn current_loc(&self) -> Attribute {
        self.loc_at(self.tok.start)
    }
    pub fn err_at(&self, offset: u32, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::error(self.loc_at(offset), msg)
    }
    pub fn err_here(&self, msg: impl Into<String>) -> Diagnostic {
        if self.tok.kind == Tok::Error {
            return self.err_at(self.tok.start, "unexpected character");
        }
        self.err_at(self.tok.start, msg)
    }
    pub(crate) fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.err_here(format!("nesting deeper than {MAX_NESTING} levels")));
        }
        Ok(())
    }
    pub(crate) fn leave(&mut self) {
        self.depth -= 1;
    }

    // ----- literals ----------------------------------------------------------------------
    pub fn parse_string(&mut self) -> PResult<String> {
        if self.tok.kind != Tok::String {
            return Err(self.err_here("expected string literal"));
        }
        let s = self.string_value()?;
        self.advance();
        Ok(s)
    }
    pub(crate) fn string_value(&self) -> PResult<String> {
        let t = self.tok_text();
        let bytes =
            crate::lexer::unescape(&t.as_bytes()[1..t.len() - 1]).map_err(|e| self.err_here(e))?;
        String::from_utf8(bytes).map_err(|_| self.err_here("string literal is not valid UTF-8"))
    }
    /// An integer literal, optionally negative.
    pub fn parse_integer(&mut self) -> PResult<i128> {
        let neg = self.consume_if(Tok::Minus);
        if self.tok.kind != Tok::Integer {
            return Err(self.err_here("expected integer value"));
        }
        let v = self.int_value()?;
        self.advance();
        Ok(if neg { -v } else { v })
    }
    pub fn parse_i64(&mut self) -> PResult<i64> {
        let at = self.tok.start;
        let v = self.parse_integer()?;
        i64::try_from(v).map_err(|_| self.err_at(at, "integer value too large"))
    }
    pub(crate) fn int_value(&self) -> PResult<i128> {
        let t = self.tok_text();
        let r = if let Some(h) = t.strip_prefix("0x") {
            u128::from_str_radix(h, 16).ok().map(|v| v as i128)
        } else {
            t.parse::<i128>().ok()
        };
        r.ok_or_else(|| self.err_here("integer value too large"))
    }
    pub fn parse_symbol_name(&mut self) -> PResult<String> {
        if self.tok.kind != Tok::AtIdent {
            return Err(self.err_here("expected valid '@'-identifier for symbol name"));
        }
        let s = self.symbol_text()?;
        self.advance();
        Ok(s)
    }
    pub(crate) fn symbol_text(&self) -> PResult<String> {
        let t = &self.tok_text()[1..];
        if t.starts_with('"') {
            let b = crate::lexer::unescape(&t.as_bytes()[1..t.len() - 1])
                .map_err(|e| self.err_here(e))?;
            String::from_utf8(b).map_err(|_| self.err_here("invalid UTF-8 in symbol"))
        } else {
            Ok(t.to_string())
        }
    }

    // ----- top level ---------------------------------------------------------------------
    fn parse_top_level(&mut self) -> PResult<OpId> {
        let block = self.ir.new_block(&[]);
        self.scopes.push(Scope {
            values: Default::default(),
            isolated: true,
            forward: Default::default(),
        });
        self.block_scopes.push(BlockScope {
            blocks: Default::default(),
        });
        self.prescan_location_aliases();
        loop {
            match self.tok.kind {
                Tok::Eof => break,
                Tok::HashIdent if self.is_alias_def() => self.parse_attr_alias_def()?,
                Tok::ExclaimIdent if self.is_alias_def() => self.parse_type_alias_def()?,
                Tok::FileMetadataBegin => self.parse_file_metadata()?,
                _ => {
                    let op = self.parse_operation()?;
                    self.ir.append_op(block, op);
                }
            }
        }
        self.finish_scope()?;
        self.block_scopes.pop();
        let ops = self.ir.block_ops_vec(block);
        let loc = self.loc_at(0);
        if ops.len() == 1 && self.ir.name(ops[0]) == "builtin.module" {
            self.ir.unlink(ops[0]);
            return Ok(ops[0]);
        }
        let module = self.ir.create_op(
            crate::ir::OpSpec::new(crate::ir::intern_name("builtin.module"), loc).regions(1),
        );
        let r = self.ir.op(module).regions[0];
        self.ir.blocks[block.index()].parent = Some(r);
        self.ir.regions[r.index()].blocks.push(block);
        Ok(module)
    }

    fn is_alias_def(&self) -> bool {
        let mut l = Lexer {
            src: self.lex.src,
            pos: self.lex.pos,
        };
        l.next_token().kind == Tok::Equal
    }

    fn parse_attr_alias_def(&mut self) -> PResult<()> {
        let name = self.tok_text()[1..].to_string();
        let at = self.tok.start;
        // A location alias read ahead is defined here for the first time.
        if !self.prescanned.remove(&name) && self.attr_aliases.contains_key(&name) {
            return Err(self.err_at(at, format!("redefinition of attribute alias id '{name}'")));
        }
        self.advance();
        self.expect(Tok::Equal, "'='")?;
        let a = self.parse_attribute(None)?;
        self.attr_aliases.insert(name, a);
        Ok(())
    }

    fn parse_type_alias_def(&mut self) -> PResult<()> {
        let name = self.tok_text()[1..].to_string();
        let at = self.tok.start;
        if self.type_aliases.contains_key(&name) {
            return Err(self.err_at(at, format!("redefinition of type alias id '{name}'")));
        }
        self.advance();
        self.expect(Tok::Equal, "'='")?;
        let t = self.parse_type()?;
        self.type_aliases.insert(name, t);
        Ok(())
    }

    /// `{-# dialect_resources: { builtin: { key: "0x..." } } #-}`; other sections are
    /// skipped.
    fn parse_file_metadata(&mut self) -> PResult<()> {
        self.advance();
        loop {
            if self.consume_if(Tok::FileMetadataEnd) {
                return Ok(());
            }
            let section = self
                .parse_optional_any_keyword()
                .ok_or_else(|| self.err_here("expected identifier"))?;
            self.expect(Tok::Colon, "':'")?;
            self.expect(Tok::LBrace, "'{'")?;
            while !self.consume_if(Tok::RBrace) {
                let dialect = self
                    .parse_optional_any_keyword()
                    .ok_or_else(|| self.err_here("expected identifier"))?
                    .to_string();
                self.expect(Tok::Colon, "':'")?;
                self.expect(Tok::LBrace, "'{'")?;
                while !self.consume_if(Tok::RBrace) {
                    let key = match self.tok.kind {
                        Tok::BareIdent => self.tok_text().to_string(),
                        Tok::String => self.string_value()?,
                        _ => {
                            return Err(self.err_here("expected identifier key for resource entry"))
                        }
                    };
                    self.advance();
                    self.expect(Tok::Colon, "':'")?;
                    let value = self.tok_text().to_string();
                    self.advance();
                    if section == "dialect_resources" {
                        self.ir.resources.push(crate::ir::Resource {
                            dialect: dialect.clone(),
                            key,
                            value,
                        });
                    }
                    if !self.consume_if(Tok::Comma) && self.tok.kind != Tok::RBrace {
                        return Err(self.err_here("expected ',' or '}'"));
                    }
                }
                if !self.consume_if(Tok::Comma) && self.tok.kind != Tok::RBrace {
                    return Err(self.err_here("expected ',' or '}'"));
                }
            }
            self.consume_if(Tok::Comma);
        }
    }

    // ----- SSA scopes --------------------------------------------------------------------
    pub(crate) fn push_scope(&mut self, isolated: bool) {
        self.scopes.push(Scope {
            values: Default::default(),
            isolated,
            forward: Default::default(),
        });
    }

    /// Pop a scope; an isolated scope must have no unresolved forward references.
    pub(crate) fn finish_scope(&mut self) -> PResult<()> {
        let s = self.scopes.pop().expect("scope");
        if let Some((name, (_, loc))) = s
            .forward
            .iter()
            .min_by_key(|(_, (_, l))| crate::diag::file_line_col(*l))
        {
            return Err(Diagnostic::error(
                *loc,
                format!("use of undeclared SSA value name '%{name}'"),
            ));
        }
        if !s.forward.is_empty() {
            return Err(self.err_here("use of undeclared SSA value name"));
        }
        Ok(())
    }

    fn isolated_scope_index(&self) -> usize {
        (0..self.scopes.len())
            .rev()
            .find(|&i| self.scopes[i].isolated)
            .unwrap_or(0)
    }

    pub(crate) fn lookup_value(&self, name: &str) -> Option<&Vec<Value>> {
        for s in self.scopes.iter().rev() {
            if let Some(v) = s.values.get(name) {
                return Some(v);
            }
            if s.isolated {
                break;
            }
        }
        None
    }

    /// Bind a name to values in the innermost scope, resolving forward references.
    pub(crate) fn define_values(&mut self, name: &str, vals: Vec<Value>, at: u32) -> PResult<()> {
        if self.lookup_value(name).is_some() {
            return Err(self.err_at(at, format!("redefinition of SSA value '%{name}'")));
        }
        let iso = self.isolated_scope_index();
        if let Some((placeholders, _)) = self.scopes[iso].forward.remove(name) {
            for (&i, ph) in &placeholders {
                let Some(real) = vals.get(i as usize) else {
                    return Err(self.err_at(
                        at,
                        format!("use of undeclared SSA value name '%{name}#{i}'"),
                    ));
                };
                let (pt, rt) = (self.ir.value_type(*ph), self.ir.value_type(*real));
                if pt != rt {
                    return Err(self.err_at(
                        at,
                        format!("definition of SSA value '%{name}#{i}' has type {rt}, but it was used with type {pt}"),
                    ));
                }
                self.ir.replace_all_uses(*ph, *real);
            }
        }
        self.scopes
            .last_mut()
            .expect("scope")
            .values
            .insert(name.to_string(), vals);
        Ok(())
    }

    /// The value for `%name#index` used with type `ty` (a placeholder if not yet defined).
    pub(crate) fn resolve_value(&mut self, op: &UnresolvedOperand, ty: Type) -> PResult<Value> {
        if let Some(vals) = self.lookup_value(&op.name) {
            let v = *vals.get(op.index as usize).ok_or_else(|| {
                self.err_at(
                    op.at,
                    format!(
                        "reference to invalid result number '%{}#{}'",
                        op.name, op.index
                    ),
                )
            })?;
            let vt = self.ir.value_type(v);
            if vt != ty {
                return Err(self.err_at(
                    op.at,
                    format!(
                        "use of value '%{}' expects different type than prior uses: '{}' vs '{}'",
                        op.name, ty, vt
                    ),
                ));
            }
            return Ok(v);
        }
        let iso = self.isolated_scope_index();
        let loc = self.loc_at(op.at);
        let ph_op = self.placeholder_op;
        let entry = self.scopes[iso]
            .forward
            .entry(op.name.clone())
            .or_insert((Default::default(), loc));
        if let Some(&existing) = entry.0.get(&op.index) {
            let vt = self.ir.value_type(existing);
            if vt != ty {
                return Err(self.err_at(
                    op.at,
                    format!(
                        "use of value '%{}' expects different type than prior uses: '{}' vs '{}'",
                        op.name, ty, vt
                    ),
                ));
            }
            return Ok(existing);
        }
        let v = self
            .ir
            .new_value(ty, crate::ir::ValueDef::OpResult(ph_op, 0));
        self.scopes[iso]
            .forward
            .get_mut(&op.name)
            .expect("entry")
            .0
            .insert(op.index, v);
        Ok(v)
    }

    pub fn file(&self) -> &str {
        self.file
    }
    pub fn source(&self) -> Arc<str> {
        Arc::from(self.src)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Upstream's generic printing puts some location aliases before the operations and
    /// the rest after them: every use resolves to its definition.
    #[test]
    fn location_aliases_defined_after_their_use_resolve() {
        let mut ctx = Context::new();
        ctx.allow_unregistered = true;
        let src = "#loc2 = loc(\"f.mlir\":25:14)\n\
                   \"x.a\"() : () -> () loc(#loc2)\n\
                   \"x.b\"() : () -> () loc(#loc7)\n\
                   #loc7 = loc(\"f.mlir\":29:8)\n";
        let m = parse_module(&ctx, src, "g.mlir").unwrap();
        let body = m.ir.region_entry(m.ir.regions_of(m.top)[0]).unwrap();
        let locs: Vec<String> =
            m.ir.block_ops(body)
                .map(|o| format!("{}", m.ir.loc(o)))
                .collect();
        assert_eq!(locs, ["loc(\"f.mlir\":25:14)", "loc(\"f.mlir\":29:8)"]);
        // Defined twice is still an error.
        let twice = format!("{src}#loc7 = loc(\"f.mlir\":1:1)\n");
        let e = parse_module(&ctx, &twice, "g.mlir").err().unwrap();
        assert!(
            e.to_string()
                .contains("redefinition of attribute alias id 'loc7'"),
            "{e}"
        );
    }
}
