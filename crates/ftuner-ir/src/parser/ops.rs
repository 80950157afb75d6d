//! Operations, regions, blocks and the API custom parse hooks use.

use super::{BlockScope, OperationState, PResult, Parser};
use crate::attrs::{AttrKind, Attribute, LocKind};
use crate::dialect::traits;
use crate::ir::{intern_name, BlockId, OpId, OpSpec, RegionId, Value};
use crate::lexer::Tok;
use crate::types::Type;

/// `%name#index` as written, before its type is known.
#[derive(Clone, Debug)]
pub struct UnresolvedOperand {
    pub name: String,
    pub index: u32,
    pub at: u32,
}

/// A region argument as written: `%arg0: f32 {attrs} loc(...)`.
#[derive(Clone, Debug)]
pub struct Argument {
    pub name: UnresolvedOperand,
    pub ty: Type,
    pub attrs: Option<Attribute>,
    pub loc: Option<Attribute>,
}

impl<'a> Parser<'a> {
    // ----- operations --------------------------------------------------------------------
    pub(crate) fn parse_operation(&mut self) -> PResult<OpId> {
        let start = self.tok.start;
        // Result list.
        let mut result_names: Vec<(String, u32, u32)> = vec![];
        if self.tok.kind == Tok::PercentIdent {
            loop {
                if self.tok.kind != Tok::PercentIdent {
                    return Err(self.err_here("expected valid ssa identifier"));
                }
                let name = self.tok_text()[1..].to_string();
                let at = self.tok.start;
                self.advance();
                let mut count = 1u32;
                if self.consume_if(Tok::Colon) {
                    let c = self.parse_integer()?;
                    if c < 1 || c > u32::MAX as i128 {
                        return Err(
                            self.err_here("expected named operation to have at least 1 result")
                        );
                    }
                    count = c as u32;
                }
                result_names.push((name, count, at));
                if !self.consume_if(Tok::Comma) {
                    break;
                }
            }
            self.expect(Tok::Equal, "'=' after SSA name")?;
        }
        let op_start = self.tok.start;
        let op = match self.tok.kind {
            Tok::String => self.parse_generic_operation()?,
            Tok::BareIdent => self.parse_custom_operation()?,
            _ => return Err(self.err_here("expected operation name in quotes")),
        };
        let _ = start;
        // Bind results.
        let results = self.ir.results(op).to_vec();
        let declared: u32 = result_names.iter().map(|r| r.1).sum();
        if !result_names.is_empty() && declared as usize != results.len() {
            return Err(self.err_at(
                op_start,
                format!(
                    "operation defines {} results but was provided {} to bind",
                    results.len(),
                    declared
                ),
            ));
        }
        let mut i = 0usize;
        for (name, count, at) in result_names {
            let vals = results[i..i + count as usize].to_vec();
            i += count as usize;
            self.define_values(&name, vals, at)?;
        }
        Ok(op)
    }

    /// Trailing `loc(...)`, if present.
    pub fn parse_optional_trailing_location(&mut self) -> PResult<Option<Attribute>> {
        if self.peek_keyword("loc") {
            self.advance();
            self.expect(Tok::LParen, "'(' in location")?;
            let l = self.parse_location_body()?;
            self.expect(Tok::RParen, "')' in location")?;
            return Ok(Some(l));
        }
        Ok(None)
    }

    fn parse_generic_operation(&mut self) -> PResult<OpId> {
        let at = self.tok.start;
        let name_s = self.string_value()?;
        self.advance();
        let name = intern_name(&name_s);
        let def = self.ctx.op_def(name).cloned();
        if def.is_none() {
            self.check_unregistered(&name_s, at)?;
        }
        let loc = self.loc_at(at);
        self.expect(Tok::LParen, "'(' to start operand list")?;
        let mut operands = vec![];
        if !self.consume_if(Tok::RParen) {
            loop {
                operands.push(self.parse_operand()?);
                if self.consume_if(Tok::RParen) {
                    break;
                }
                self.expect(Tok::Comma, "')' in operand list")?;
            }
        }
        let mut successors = vec![];
        if self.consume_if(Tok::LSquare) {
            loop {
                successors.push(self.parse_successor()?);
                if self.consume_if(Tok::RSquare) {
                    break;
                }
                self.expect(Tok::Comma, "']' in successor list")?;
            }
        }
        let mut props = vec![];
        if self.tok.kind == Tok::Less {
            self.advance();
            let a = self.parse_attribute(None)?;
            match a.kind() {
                AttrKind::Dictionary(d) => props = d.clone(),
                _ => return Err(self.err_here("expected dictionary attribute for properties")),
            }
            self.expect(Tok::Greater, "'>' to close properties")?;
        }
        let mut regions = vec![];
        if self.tok.kind == Tok::LParen {
            self.advance();
            self.op_stack.push(name);
            loop {
                regions.push(self.parse_region_with_args(&[], false)?);
                if self.consume_if(Tok::RParen) {
                    break;
                }
                self.expect(Tok::Comma, "')' to end region list")?;
            }
            self.op_stack.pop();
        }
        let mut attrs = vec![];
        self.parse_optional_attr_dict(&mut attrs)?;
        self.expect(Tok::Colon, "':' followed by operation type")?;
        let ty_at = self.tok.start;
        let fty = self.parse_type()?;
        let (ins, outs) = match fty.kind() {
            crate::types::TypeKind::Function { inputs, results } => {
                (inputs.clone(), results.clone())
            }
            _ => return Err(self.err_at(ty_at, "expected function type")),
        };
        if ins.len() != operands.len() {
            return Err(self.err_at(
                ty_at,
                format!(
                    "expected {} operand type{} but had {}",
                    operands.len(),
                    if operands.len() == 1 { "" } else { "s" },
                    ins.len()
                ),
            ));
        }
        let mut vals = Vec::with_capacity(operands.len());
        for (o, t) in operands.iter().zip(ins) {
            vals.push(self.resolve_value(o, t)?);
        }
        let loc = self.parse_optional_trailing_location()?.unwrap_or(loc);
        let mut state = OperationState {
            name,
            loc,
            operands: vals,
            result_types: outs,
            props,
            attrs,
            regions,
            successors,
        };
        if let Some(d) = &def {
            place_inherent(d, &mut state);
        }
        Ok(self.build_op(state))
    }

    fn check_unregistered(&self, name: &str, at: u32) -> PResult<()> {
        if self.ctx.allow_unregistered {
            return Ok(());
        }
        let dialect = name.split('.').next().unwrap_or(name);
        if !name.contains('.') || !self.ctx.registry.has_dialect(dialect) {
            return Err(self.err_at(
                at,
                format!("Dialect `{dialect}' not found for custom op '{name}' "),
            ));
        }
        Err(self.err_at(at, format!("unregistered operation '{name}' found in dialect ('{dialect}') that does not allow unknown operations")))
    }

    /// Create the op from a parse state and attach its regions.
    pub fn build_op(&mut self, state: OperationState) -> OpId {
        let op = self.ir.create_op(OpSpec {
            name: state.name,
            operands: state.operands,
            result_types: state.result_types,
            props: state.props,
            attrs: state.attrs,
            num_regions: 0,
            successors: state.successors,
            loc: state.loc,
        });
        for r in &state.regions {
            self.ir.regions[r.index()].parent = Some(op);
        }
        self.ir.ops[op.index()].regions = state.regions.into_iter().collect();
        op
    }

    fn parse_custom_operation(&mut self) -> PResult<OpId> {
        let at = self.tok.start;
        let written = self.tok_text();
        let loc = self.loc_at(at);
        let mut def = self.ctx.op_def(written).cloned();
        if def.is_none() && !written.contains('.') {
            if let Some(dd) = self.default_dialects.last() {
                def = self.ctx.op_def(&format!("{dd}.{written}")).cloned();
            }
            if def.is_none() {
                def = self.ctx.op_def(&format!("builtin.{written}")).cloned();
            }
        }
        let Some(def) = def else {
            let dialect = written.split('.').next().unwrap_or(written);
            if self.ctx.registry.has_dialect(dialect) || !written.contains('.') {
                return Err(self.err_at(
                    at,
                    format!("custom op '{written}' is unknown (tried 'func.{written}' as well)"),
                ));
            }
            return Err(self.err_at(
                at,
                format!("Dialect `{dialect}' not found for custom op '{written}' "),
            ));
        };
        let Some(parse) = def.parse else {
            return Err(self.err_at(
                at,
                format!("custom op '{written}' has no custom assembly form; use the generic form"),
            ));
        };
        self.advance();
        let mut state = OperationState {
            name: def.name,
            loc,
            operands: vec![],
            result_types: vec![],
            props: vec![],
            attrs: vec![],
            regions: vec![],
            successors: vec![],
        };
        self.op_stack.push(def.name);
        let r = parse(self, &mut state);
        self.op_stack.pop();
        r?;
        if let Some(l) = self.parse_optional_trailing_location()? {
            state.loc = l;
        }
        place_inherent(&def, &mut state);
        Ok(self.build_op(state))
    }

    // ----- operands ----------------------------------------------------------------------
    pub fn parse_operand(&mut self) -> PResult<UnresolvedOperand> {
        if self.tok.kind != Tok::PercentIdent {
            return Err(self.err_here("expected SSA operand"));
        }
        let at = self.tok.start;
        let text = &self.tok_text()[1..];
        self.advance();
        let (name, index) = (text.to_string(), 0);
        let mut op = UnresolvedOperand { name, index, at };
        // `%name#3`: the lexer stops at '#', which starts a hash identifier.
        if self.tok.kind == Tok::HashIdent
            && self.tok.start as usize == at as usize + 1 + text.len()
        {
            let num = &self.tok_text()[1..];
            op.index = num
                .parse::<u32>()
                .map_err(|_| self.err_here("invalid SSA value result number"))?;
            self.advance();
        }
        Ok(op)
    }
    pub fn parse_optional_operand(&mut self) -> PResult<Option<UnresolvedOperand>> {
        if self.tok.kind == Tok::PercentIdent {
            Ok(Some(self.parse_operand()?))
        } else {
            Ok(None)
        }
    }
    /// Zero or more comma-separated operands (no delimiters).
    pub fn parse_operand_list(&mut self) -> PResult<Vec<UnresolvedOperand>> {
        let mut v = vec![];
        if self.tok.kind != Tok::PercentIdent {
            return Ok(v);
        }
        loop {
            v.push(self.parse_operand()?);
            if !self.consume_if(Tok::Comma) {
                return Ok(v);
            }
        }
    }
    /// `(` operands `)`.
    pub fn parse_paren_operand_list(&mut self) -> PResult<Vec<UnresolvedOperand>> {
        self.expect(Tok::LParen, "'('")?;
        let v = self.parse_operand_list()?;
        self.expect(Tok::RParen, "')'")?;
        Ok(v)
    }
    pub fn resolve_operand(&mut self, op: &UnresolvedOperand, ty: Type) -> PResult<Value> {
        self.resolve_value(op, ty)
    }
    pub fn resolve_operands(
        &mut self,
        ops: &[UnresolvedOperand],
        tys: &[Type],
        at: u32,
    ) -> PResult<Vec<Value>> {
        if ops.len() != tys.len() {
            return Err(self.err_at(
                at,
                format!("{} operands present, but expected {}", ops.len(), tys.len()),
            ));
        }
        ops.iter()
            .zip(tys)
            .map(|(o, t)| self.resolve_value(o, *t))
            .collect()
    }
    pub fn current_offset(&self) -> u32 {
        self.tok.start
    }

    // ----- successors & blocks ---------------------------------------------------------
    pub fn parse_successor(&mut self) -> PResult<BlockId> {
        if self.tok.kind != Tok::CaretIdent {
            return Err(self.err_here("expected block name"));
        }
        let name = self.tok_text().to_string();
        let loc = self.current_loc();
        self.advance();
        Ok(self.block_ref(&name, loc))
    }

    fn block_ref(&mut self, name: &str, loc: Attribute) -> BlockId {
        let scope = self.block_scopes.last_mut().expect("block scope");
        if let Some((b, _, _)) = scope.blocks.get(name) {
            return *b;
        }
        let b = self.ir.new_block(&[]);
        self.block_scopes
            .last_mut()
            .expect("block scope")
            .blocks
            .insert(name.to_string(), (b, false, loc));
        b
    }

    /// `^bb(%a: t, ...)` successor with operands: returns the block and operands.
    pub fn parse_successor_and_use_list(&mut self) -> PResult<(BlockId, Vec<Value>)> {
        let b = self.parse_successor()?;
        let mut vals = vec![];
        if self.consume_if(Tok::LParen) {
            let ops = self.parse_operand_list()?;
            let at = self.tok.start;
            let tys = if !ops.is_empty() {
                self.expect(Tok::Colon, "':'")?;
                self.parse_type_list_no_parens()?
            } else {
                vec![]
            };
            self.expect(Tok::RParen, "')'")?;
            vals = self.resolve_operands(&ops, &tys, at)?;
        }
        Ok((b, vals))
    }

    // ----- regions -----------------------------------------------------------------------
    /// A region whose entry block takes `args` (declared by the op's syntax). With no
    /// `args` the entry block may declare its own with a label.
    pub fn parse_region_with_args(
        &mut self,
        args: &[Argument],
        _shadow: bool,
    ) -> PResult<RegionId> {
        self.enter()?;
        let r = super::with_stack(|| self.parse_region_inner(args));
        self.leave();
        r
    }

    pub fn parse_region(&mut self) -> PResult<RegionId> {
        self.parse_region_with_args(&[], false)
    }

    pub fn parse_optional_region(&mut self) -> PResult<Option<RegionId>> {
        if self.tok.kind == Tok::LBrace {
            Ok(Some(self.parse_region()?))
        } else {
            Ok(None)
        }
    }

    fn parse_region_inner(&mut self, args: &[Argument]) -> PResult<RegionId> {
        let open = self.tok.start;
        self.expect(Tok::LBrace, "'{' to begin a region")?;
        let parent = self.op_stack.last().copied();
        let pdef = parent.and_then(|n| self.ctx.op_def(n));
        let isolated = pdef.is_some_and(|d| d.has(traits::ISOLATED_FROM_ABOVE));
        let dd = pdef.and_then(|d| d.default_dialect).unwrap_or("");
        self.default_dialects.push(dd);
        self.push_scope(isolated);
        self.block_scopes.push(BlockScope {
            blocks: Default::default(),
        });
        let region = self.ir.new_region(None);
        let res = self.parse_region_body(region, args, open);
        self.default_dialects.pop();
        let bs = self.block_scopes.pop().expect("block scope");
        res?;
        if let Some((name, (_, _, loc))) = bs.blocks.iter().find(|(_, (_, defined, _))| !defined) {
            return Err(crate::diag::Diagnostic::error(
                *loc,
                format!("reference to an undefined block '{name}'"),
            ));
        }
        self.finish_scope()?;
        Ok(region)
    }

    fn parse_region_body(&mut self, region: RegionId, args: &[Argument], open: u32) -> PResult<()> {
        if self.tok.kind == Tok::RBrace {
            self.advance();
            if !args.is_empty() {
                // `{}` with declared arguments still has an (empty) entry block.
                let b = self.ir.append_block(region, &[]);
                self.define_block_args(b, args)?;
            }
            return Ok(());
        }
        let _ = open;
        // Entry block without a label.
        if self.tok.kind != Tok::CaretIdent {
            let b = self.ir.append_block(region, &[]);
            self.define_block_args(b, args)?;
            self.parse_block_body(b)?;
        } else if !args.is_empty() {
            return Err(self.err_here("invalid block name in region with named arguments"));
        }
        while self.tok.kind == Tok::CaretIdent {
            self.parse_block(region)?;
        }
        self.expect(Tok::RBrace, "'}' to close region")?;
        Ok(())
    }

    fn define_block_args(&mut self, b: BlockId, args: &[Argument]) -> PResult<()> {
        for a in args {
            let v = self.ir.add_block_arg(b, a.ty);
            self.ir.values[v.index()].loc = a.loc;
            if !a.name.name.is_empty() {
                self.define_values(&a.name.name, vec![v], a.name.at)?;
            }
        }
        Ok(())
    }

    fn parse_block(&mut self, region: RegionId) -> PResult<()> {
        let name = self.tok_text().to_string();
        let at = self.tok.start;
        let loc = self.current_loc();
        self.advance();
        let b = {
            let scope = self.block_scopes.last_mut().expect("block scope");
            match scope.blocks.get_mut(&name) {
                Some((b, defined, _)) => {
                    if *defined {
                        return Err(self.err_at(at, format!("redefinition of block '{name}'")));
                    }
                    *defined = true;
                    *b
                }
                None => {
                    let b = self.ir.new_block(&[]);
                    self.block_scopes
                        .last_mut()
                        .expect("scope")
                        .blocks
                        .insert(name.clone(), (b, true, loc));
                    b
                }
            }
        };
        self.ir.blocks[b.index()].parent = Some(region);
        self.ir.regions[region.index()].blocks.push(b);
        if self.consume_if(Tok::LParen) && !self.consume_if(Tok::RParen) {
            loop {
                let a = self.parse_argument(true, false)?;
                self.define_block_args(b, std::slice::from_ref(&a))?;
                if self.consume_if(Tok::RParen) {
                    break;
                }
                self.expect(Tok::Comma, "')' to end argument list")?;
            }
        }
        self.expect(Tok::Colon, "':' after block name")?;
        self.parse_block_body(b)
    }

    fn parse_block_body(&mut self, b: BlockId) -> PResult<()> {
        while !matches!(self.tok.kind, Tok::CaretIdent | Tok::RBrace | Tok::Eof) {
            let op = self.parse_operation()?;
            self.ir.append_op(b, op);
        }
        Ok(())
    }

    /// `%name : type {attrs}? loc(...)?`; with `allow_attrs` the dictionary is accepted.
    pub fn parse_argument(&mut self, allow_type: bool, allow_attrs: bool) -> PResult<Argument> {
        let name = self.parse_operand()?;
        let ty = if allow_type {
            self.expect(Tok::Colon, "':'")?;
            self.parse_type()?
        } else {
            Type::none()
        };
        let mut attrs = None;
        if allow_attrs && self.tok.kind == Tok::LBrace {
            let mut v = vec![];
            self.parse_optional_attr_dict(&mut v)?;
            attrs = Some(Attribute::dictionary(v));
        }
        let loc = self.parse_optional_trailing_location()?;
        Ok(Argument {
            name,
            ty,
            attrs,
            loc,
        })
    }

    /// Make sure the last block of `region` ends with `terminator` (created with no
    /// operands) — for ops whose syntax elides an implicit terminator.
    pub fn ensure_terminator(&mut self, region: RegionId, terminator: &str, loc: Attribute) {
        let name = intern_name(terminator);
        let blocks = self.ir.regions[region.index()].blocks.clone();
        if blocks.is_empty() {
            let b = self.ir.append_block(region, &[]);
            let t = self.ir.create_op(OpSpec::new(name, loc));
            self.ir.append_op(b, t);
            return;
        }
        let b = *blocks.last().expect("block");
        let has = self
            .ir
            .terminator(b)
            .is_some_and(|t| self.ctx.has_trait(self.ir.name(t), traits::TERMINATOR));
        if !has {
            let t = self.ir.create_op(OpSpec::new(name, loc));
            self.ir.append_op(b, t);
        }
    }

    // ----- locations ---------------------------------------------------------------------
    pub(crate) fn parse_location_body(&mut self) -> PResult<Attribute> {
        self.enter()?;
        let r = super::with_stack(|| self.parse_location_inner());
        self.leave();
        r
    }

    fn parse_location_inner(&mut self) -> PResult<Attribute> {
        match self.tok.kind {
            Tok::HashIdent => {
                let name = self.tok_text()[1..].to_string();
                let a = self.attr_aliases.get(&name).copied();
                let at = self.tok.start;
                self.advance();
                match a {
                    Some(a) if a.is_location() => Ok(a),
                    Some(_) => {
                        Err(self.err_at(at, "expected location, but found a different attribute"))
                    }
                    // Location aliases may be defined after their use (MLIR prints them at
                    // the end of the file); keep the position of the use.
                    None => Ok(self.loc_at(at)),
                }
            }
            Tok::String => {
                let s = self.string_value()?;
                self.advance();
                if self.consume_if(Tok::Colon) {
                    let line = self.parse_integer()?;
                    self.expect(Tok::Colon, "':' in FileLineColLoc")?;
                    let col = self.parse_integer()?;
                    if self.consume_if(Tok::Minus) {
                        // Range `file:1:2 to 3:4` forms are not modelled; keep the start.
                        return Err(self.err_here("location ranges are not supported"));
                    }
                    return Ok(Attribute::location(LocKind::FileLineCol {
                        file: crate::ir::intern_name(&s),
                        line: line.clamp(0, u32::MAX as i128) as u32,
                        col: col.clamp(0, u32::MAX as i128) as u32,
                    }));
                }
                let child = if self.consume_if(Tok::LParen) {
                    let c = self.parse_location_body()?;
                    self.expect(Tok::RParen, "')' after child location of NameLoc")?;
                    Some(c)
                } else {
                    None
                };
                Ok(Attribute::location(LocKind::Name { name: s, child }))
            }
            Tok::BareIdent => match self.tok_text() {
                "unknown" => {
                    self.advance();
                    Ok(Attribute::unknown_loc())
                }
                "callsite" => {
                    self.advance();
                    self.expect(Tok::LParen, "'(' in callsite location")?;
                    let callee = self.parse_location_body()?;
                    self.parse_keyword("at")?;
                    let caller = self.parse_location_body()?;
                    self.expect(Tok::RParen, "')' in callsite location")?;
                    Ok(Attribute::location(LocKind::CallSite { callee, caller }))
                }
                "fused" => {
                    self.advance();
                    let mut metadata = None;
                    if self.consume_if(Tok::Less) {
                        metadata = Some(self.parse_attribute(None)?);
                        self.expect(Tok::Greater, "'>' after fused location metadata")?;
                    }
                    self.expect(Tok::LSquare, "'[' in fused location")?;
                    let mut locs = vec![];
                    if !self.consume_if(Tok::RSquare) {
                        loop {
                            locs.push(self.parse_location_body()?);
                            if self.consume_if(Tok::RSquare) {
                                break;
                            }
                            self.expect(Tok::Comma, "']' in fused location")?;
                        }
                    }
                    Ok(Attribute::location(LocKind::Fused { metadata, locs }))
                }
                _ => Err(self.err_here("expected location instance")),
            },
            _ => Err(self.err_here("expected location instance")),
        }
    }
}

/// Where an op's attributes live: inherent attributes given in the discardable dictionary
/// become properties, as MLIR does for ops that use properties; ops that do not (upstream's
/// `gpu.func`) keep every attribute in the dictionary.
fn place_inherent(def: &crate::dialect::OpDef, state: &mut OperationState) {
    if !def.uses_properties {
        let props = std::mem::take(&mut state.props);
        for (k, v) in props {
            state.attrs.retain(|(ak, _)| *ak != k);
            state.attrs.push((k, v));
        }
        return;
    }
    let (inh, rest): (Vec<_>, Vec<_>) =
        state.attrs.drain(..).partition(|(k, _)| def.is_inherent(k));
    state.attrs = rest;
    for (k, v) in inh {
        state.props.retain(|(pk, _)| *pk != k);
        state.props.push((k, v));
    }
}
