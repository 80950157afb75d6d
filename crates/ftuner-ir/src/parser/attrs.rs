//! Attribute parsing, including affine maps/sets and `dense<...>` literals.

use super::{PResult, Parser};
use crate::affine::{AffineExpr, AffineMap, IntegerSet};
use crate::attrs::{AttrKind, Attribute, Scalar};
use crate::lexer::Tok;
use crate::types::{Type, TypeKind};
#[allow(unused_imports)]
use std::ops::{Add, Mul, Neg, Sub};

/// A `dense<...>` literal before its type is known.
enum Lit {
    Int(bool, u32),
    Float(bool, String, u32),
    Bool(bool),
    Str(String),
    Complex(Box<Lit>, Box<Lit>),
    List(Vec<Lit>),
}

impl<'a> Parser<'a> {
    pub fn parse_attribute(&mut self, ty: Option<Type>) -> PResult<Attribute> {
        self.enter()?;
        let r = super::with_stack(|| self.parse_attribute_inner(ty));
        self.leave();
        r
    }

    /// `{name = attr, ...}` if present; entries are appended to `out`.
    pub fn parse_optional_attr_dict(&mut self, out: &mut Vec<(String, Attribute)>) -> PResult<()> {
        if self.tok.kind != Tok::LBrace {
            return Ok(());
        }
        self.advance();
        if self.consume_if(Tok::RBrace) {
            return Ok(());
        }
        loop {
            let at = self.tok.start;
            let name = match self.tok.kind {
                Tok::BareIdent => self.tok_text().to_string(),
                Tok::String => {
                    let s = self.string_value()?;
                    if s.is_empty() {
                        return Err(self.err_here("expected valid attribute name"));
                    }
                    s
                }
                _ => return Err(self.err_here("expected attribute name")),
            };
            self.advance();
            if out.iter().any(|(k, _)| *k == name) {
                return Err(self.err_at(
                    at,
                    format!("duplicate key '{name}' in dictionary attribute"),
                ));
            }
            let value = if self.consume_if(Tok::Equal) {
                self.parse_attribute(None)?
            } else {
                Attribute::unit()
            };
            out.push((name, value));
            if self.consume_if(Tok::RBrace) {
                return Ok(());
            }
            self.expect(Tok::Comma, "',' or '}' in attribute dictionary")?;
        }
    }

    /// `attributes {...}` (the `attr-dict-with-keyword` directive).
    pub fn parse_optional_attr_dict_with_keyword(
        &mut self,
        out: &mut Vec<(String, Attribute)>,
    ) -> PResult<()> {
        if self.parse_optional_keyword("attributes") {
            if self.tok.kind != Tok::LBrace {
                return Err(self.err_here("expected '{' after 'attributes'"));
            }
            self.parse_optional_attr_dict(out)?;
        }
        Ok(())
    }

    fn parse_attribute_inner(&mut self, ty: Option<Type>) -> PResult<Attribute> {
        match self.tok.kind {
            Tok::LSquare => {
                self.advance();
                let mut v = vec![];
                if !self.consume_if(Tok::RSquare) {
                    loop {
                        v.push(self.parse_attribute(None)?);
                        if self.consume_if(Tok::RSquare) {
                            break;
                        }
                        self.expect(Tok::Comma, "',' or ']' in array")?;
                    }
                }
                Ok(Attribute::array(v))
            }
            Tok::LBrace => {
                let mut v = vec![];
                self.parse_optional_attr_dict(&mut v)?;
                Ok(Attribute::dictionary(v))
            }
            Tok::HashIdent => {
                let name = self.tok_text()[1..].to_string();
                if let Some(a) = self.attr_aliases.get(&name) {
                    let a = *a;
                    self.advance();
                    return Ok(a);
                }
                if !name.contains('.') && !self.src[self.tok.end as usize..].starts_with('<') {
                    return Err(self.err_here(format!("undefined symbol alias id '{name}'")));
                }
                let (dialect, body) = self.dialect_symbol_body(&name)?;
                let a = Attribute::get(AttrKind::Dialect { dialect, body });
                // A typed dialect attribute `#d.x<...> : type` keeps only the attribute.
                Ok(a)
            }
            Tok::AtIdent => {
                let root = self.symbol_text()?;
                self.advance();
                let mut nested = vec![];
                while self.tok.kind == Tok::Colon
                    && self.src[self.tok.end as usize..].starts_with(':')
                {
                    // `::@nested`
                    let p = self.tok.end as usize + 1;
                    self.reset_to(p);
                    if self.tok.kind != Tok::AtIdent {
                        return Err(self.err_here("expected nested symbol reference identifier"));
                    }
                    nested.push(self.symbol_text()?);
                    self.advance();
                }
                Ok(Attribute::get(AttrKind::SymbolRef { root, nested }))
            }
            Tok::String => {
                let s = self.string_value()?;
                self.advance();
                let ty = if self.consume_if(Tok::Colon) {
                    Some(self.parse_type()?)
                } else {
                    None
                };
                Ok(Attribute::get(AttrKind::String { value: s, ty }))
            }
            Tok::Integer | Tok::Float | Tok::Minus => self.parse_number_attr(ty),
            Tok::BareIdent => {
                let kw = self.tok_text();
                match kw {
                    "true" | "false" => {
                        self.advance();
                        Ok(Attribute::bool(kw == "true"))
                    }
                    "unit" => {
                        self.advance();
                        Ok(Attribute::unit())
                    }
                    "affine_map" => {
                        self.advance();
                        self.expect(Tok::Less, "'<'")?;
                        let m = self.parse_affine_map_or_set(false)?;
                        self.expect(Tok::Greater, "'>'")?;
                        Ok(m)
                    }
                    "affine_set" => {
                        self.advance();
                        self.expect(Tok::Less, "'<'")?;
                        let m = self.parse_affine_map_or_set(true)?;
                        self.expect(Tok::Greater, "'>'")?;
                        Ok(m)
                    }
                    "array" => self.parse_dense_array(),
                    "dense" => self.parse_dense(),
                    "sparse" => self.parse_sparse(),
                    "dense_resource" => {
                        self.advance();
                        self.expect(Tok::Less, "'<'")?;
                        let handle = match self.tok.kind {
                            Tok::BareIdent => self.tok_text().to_string(),
                            Tok::String => self.string_value()?,
                            _ => {
                                return Err(
                                    self.err_here("expected identifier key for 'resource' entry")
                                )
                            }
                        };
                        self.advance();
                        self.expect(Tok::Greater, "'>'")?;
                        self.expect(Tok::Colon, "':'")?;
                        let t = self.parse_type()?;
                        Ok(Attribute::get(AttrKind::DenseResource { ty: t, handle }))
                    }
                    "strided" => {
                        self.advance();
                        self.expect(Tok::Less, "'<'")?;
                        self.expect(Tok::LSquare, "'['")?;
                        let mut strides = vec![];
                        if !self.consume_if(Tok::RSquare) {
                            loop {
                                strides.push(self.parse_dyn_int()?);
                                if self.consume_if(Tok::RSquare) {
                                    break;
                                }
                                self.expect(Tok::Comma, "','")?;
                            }
                        }
                        let mut offset = 0;
                        if self.consume_if(Tok::Comma) {
                            self.parse_keyword("offset")?;
                            self.expect(Tok::Colon, "':'")?;
                            offset = self.parse_dyn_int()?;
                        }
                        self.expect(Tok::Greater, "'>'")?;
                        Ok(Attribute::get(AttrKind::StridedLayout { offset, strides }))
                    }
                    "loc" => {
                        self.advance();
                        self.expect(Tok::LParen, "'('")?;
                        let l = self.parse_location_body()?;
                        self.expect(Tok::RParen, "')'")?;
                        Ok(l)
                    }
                    _ => {
                        if self.can_start_type() {
                            let t = self.parse_type()?;
                            return Ok(Attribute::type_attr(t));
                        }
                        Err(self.err_here("expected attribute value"))
                    }
                }
            }
            Tok::LParen | Tok::ExclaimIdent => {
                let t = self.parse_type()?;
                Ok(Attribute::type_attr(t))
            }
            _ => Err(self.err_here("expected attribute value")),
        }
    }

    /// An integer or `?` (dynamic).
    fn parse_dyn_int(&mut self) -> PResult<i64> {
        if self.consume_if(Tok::Question) {
            return Ok(crate::types::DYNAMIC);
        }
        self.parse_i64()
    }

    fn parse_number_attr(&mut self, ty: Option<Type>) -> PResult<Attribute> {
        let at = self.tok.start;
        let neg = self.consume_if(Tok::Minus);
        let kind = self.tok.kind;
        if !matches!(kind, Tok::Integer | Tok::Float) {
            return Err(self.err_here("expected constant integer or floating point value"));
        }
        let text = self.tok_text();
        self.advance();
        let ty = if self.consume_if(Tok::Colon) {
            self.parse_type()?
        } else {
            ty.unwrap_or_else(|| {
                if kind == Tok::Float {
                    Type::f64()
                } else {
                    Type::i64()
                }
            })
        };
        self.number_to_attr(neg, text, kind, ty, at)
    }

    fn number_to_attr(
        &self,
        neg: bool,
        text: &str,
        kind: Tok,
        ty: Type,
        at: u32,
    ) -> PResult<Attribute> {
        if let Some(fk) = ty.float_kind() {
            if kind == Tok::Integer {
                if let Some(h) = text.strip_prefix("0x") {
                    if neg {
                        return Err(self.err_at(
                            at,
                            "hexadecimal float literal should not have a leading minus",
                        ));
                    }
                    let bits = u128::from_str_radix(h, 16).map_err(|_| {
                        self.err_at(at, "hexadecimal float constant out of range for type")
                    })?;
                    if fk.width() < 128 && bits >> fk.width() != 0 {
                        return Err(
                            self.err_at(at, "hexadecimal float constant out of range for type")
                        );
                    }
                    return Ok(Attribute::get(AttrKind::Float { bits, ty }));
                }
            }
            let s = if neg {
                format!("-{text}")
            } else {
                text.to_string()
            };
            let bits = crate::float::parse_decimal(&s, fk).ok_or_else(|| {
                self.err_at(
                    at,
                    format!("floating point literals of type {ty} are not supported"),
                )
            })?;
            return Ok(Attribute::get(AttrKind::Float { bits, ty }));
        }
        if kind == Tok::Float {
            return Err(self.err_at(at, "floating point value not valid for specified type"));
        }
        if !(ty.is_integer() || ty.is_index()) {
            return Err(self.err_at(at, "integer literal not valid for specified type"));
        }
        let v = if let Some(h) = text.strip_prefix("0x") {
            u128::from_str_radix(h, 16)
                .map(|v| v as i128)
                .map_err(|_| self.err_at(at, "integer constant out of range for attribute"))?
        } else {
            text.parse::<i128>()
                .map_err(|_| self.err_at(at, "integer constant out of range for attribute"))?
        };
        let v = if neg { -v } else { v };
        if let Some(w) = ty.int_width() {
            if neg
                && matches!(
                    ty.kind(),
                    TypeKind::Integer {
                        signedness: crate::types::Signedness::Unsigned,
                        ..
                    }
                )
            {
                return Err(self.err_at(
                    at,
                    "negative integer literal not valid for unsigned integer type",
                ));
            }
            if w < 127 {
                let fits = if w == 1 {
                    (0..=1).contains(&v) || v == -1
                } else {
                    v >= -(1i128 << (w - 1)) && v < (1i128 << w)
                };
                if !fits || (neg && v < -(1i128 << (w - 1))) {
                    return Err(self.err_at(at, "integer constant out of range for attribute"));
                }
            }
        }
        Ok(Attribute::int(v, ty))
    }

    fn parse_dense_array(&mut self) -> PResult<Attribute> {
        self.advance();
        self.expect(Tok::Less, "'<' after 'array'")?;
        let elem = self.parse_type()?;
        if !(elem.is_integer() || elem.is_float()) {
            return Err(self.err_here("expected integer or float type"));
        }
        let mut values = vec![];
        if self.consume_if(Tok::Colon) {
            loop {
                let at = self.tok.start;
                let neg = self.consume_if(Tok::Minus);
                let a = if self.peek_keyword("true") || self.peek_keyword("false") {
                    let b = self.peek_keyword("true");
                    self.advance();
                    Attribute::int(b as i128, elem)
                } else {
                    let kind = self.tok.kind;
                    let text = self.tok_text();
                    if !matches!(kind, Tok::Integer | Tok::Float) {
                        return Err(self.err_here("expected integer or float literal"));
                    }
                    self.advance();
                    self.number_to_attr(neg, text, kind, elem, at)?
                };
                values.push(match a.kind() {
                    AttrKind::Bool(b) => Scalar::Int(*b as i128),
                    AttrKind::Integer { value, .. } => Scalar::Int(*value),
                    AttrKind::Float { bits, .. } => Scalar::Float(*bits),
                    _ => Scalar::Int(0),
                });
                if !self.consume_if(Tok::Comma) {
                    break;
                }
            }
        }
        self.expect(Tok::Greater, "'>' to close an array attribute")?;
        Ok(Attribute::get(AttrKind::DenseArray { elem, values }))
    }

    fn parse_dense(&mut self) -> PResult<Attribute> {
        self.advance();
        self.expect(Tok::Less, "'<' after 'dense'")?;
        let lit_at = self.tok.start;
        let lit = if self.tok.kind == Tok::Greater {
            None
        } else {
            Some(self.parse_lit()?)
        };
        self.expect(Tok::Greater, "'>'")?;
        self.expect(Tok::Colon, "':'")?;
        let ty_at = self.tok.start;
        let ty = self.parse_type()?;
        let Some(shape) = ty.shape() else {
            return Err(self.err_at(ty_at, "elements literal must be a shaped type"));
        };
        if !ty.has_static_shape() {
            return Err(self.err_at(ty_at, "elements literal type must have static shape"));
        }
        let n = ty.num_elements().unwrap_or(0) as usize;
        let elem = ty.element_type();
        let Some(lit) = lit else {
            if n != 0 {
                return Err(self.err_at(lit_at, "expected non-empty elements literal"));
            }
            return Ok(Attribute::dense(ty, vec![]));
        };
        if let Lit::Str(s) = &lit {
            if let Some(hex) = s.strip_prefix("0x") {
                return self.dense_from_hex(hex, ty, n, lit_at);
            }
        }
        // Flatten and check the shape.
        let mut flat = vec![];
        let mut strings = vec![];
        let mut lit_shape = vec![];
        self.flatten_lit(&lit, 0, &mut lit_shape, &mut flat, &mut strings, lit_at)?;
        if !strings.is_empty() {
            return Ok(Attribute::get(AttrKind::DenseStrings {
                ty,
                elements: strings,
            }));
        }
        let splat = lit_shape.is_empty();
        if !splat && lit_shape != shape {
            return Err(self.err_at(
                lit_at,
                format!(
                    "inferred shape of elements literal ([{}]) does not match type ([{}])",
                    join(&lit_shape),
                    join(shape)
                ),
            ));
        }
        let mut scalars = Vec::with_capacity(flat.len());
        for l in flat {
            scalars.push(self.lit_to_scalar(l, elem, lit_at)?);
        }
        if splat {
            let s = scalars[0];
            return Ok(Attribute::get(AttrKind::DenseElements {
                ty,
                splat: n != 0,
                elements: if n == 0 { vec![] } else { vec![s] },
            }));
        }
        Ok(Attribute::dense(ty, scalars))
    }

    fn parse_sparse(&mut self) -> PResult<Attribute> {
        self.advance();
        self.expect(Tok::Less, "'<' after 'sparse'")?;
        let at = self.tok.start;
        let (ilit, vlit) = if self.tok.kind == Tok::Greater {
            (None, None)
        } else {
            let i = self.parse_lit()?;
            self.expect(Tok::Comma, "','")?;
            let v = self.parse_lit()?;
            (Some(i), Some(v))
        };
        self.expect(Tok::Greater, "'>'")?;
        self.expect(Tok::Colon, "':'")?;
        let ty = self.parse_type()?;
        if !ty.has_static_shape() {
            return Err(self.err_at(at, "elements literal type must have static shape"));
        }
        let (mut ishape, mut vshape) = (vec![], vec![]);
        let (mut iflat, mut vflat, mut strs) = (vec![], vec![], vec![]);
        if let (Some(i), Some(v)) = (&ilit, &vlit) {
            self.flatten_lit(i, 0, &mut ishape, &mut iflat, &mut strs, at)?;
            self.flatten_lit(v, 0, &mut vshape, &mut vflat, &mut strs, at)?;
        }
        let mut indices = vec![];
        for l in iflat {
            match self.lit_to_scalar(l, Type::i64(), at)? {
                Scalar::Int(x) => indices.push(x as i64),
                _ => return Err(self.err_at(at, "expected integer elements for sparse indices")),
            }
        }
        let mut values = vec![];
        for l in vflat {
            values.push(self.lit_to_scalar(l, ty.element_type(), at)?);
        }
        Ok(Attribute::get(AttrKind::Sparse(Box::new(
            crate::attrs::SparseData {
                ty,
                index_shape: ishape,
                indices,
                value_shape: vshape,
                values,
            },
        ))))
    }

    fn dense_from_hex(&self, hex: &str, ty: Type, n: usize, at: u32) -> PResult<Attribute> {
        let bytes: Option<Vec<u8>> = (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok())
            .collect();
        let bytes = bytes
            .filter(|_| hex.len().is_multiple_of(2))
            .ok_or_else(|| {
                self.err_at(
                    at,
                    "expected string containing hex digits starting with `0x`",
                )
            })?;
        let elem = ty.element_type();
        let bits = elem
            .bit_width()
            .ok_or_else(|| self.err_at(at, "unsupported element type for hex data"))?;
        let (is_complex, base) = match elem.kind() {
            TypeKind::Complex(e) => (true, e.bit_width().unwrap_or(32)),
            _ => (false, bits),
        };
        let esize = if base == 1 {
            1
        } else {
            base.div_ceil(8) as usize
        };
        let per = if is_complex { 2 * esize } else { esize };
        let count = bytes.len().checked_div(per).unwrap_or(0);
        if count != n && count != 1 {
            return Err(self.err_at(
                at,
                format!(
                    "elements hex data size is invalid for provided type: {}",
                    ty
                ),
            ));
        }
        let read = |i: usize| -> u128 {
            let mut v: u128 = 0;
            for k in (0..esize).rev() {
                v = (v << 8) | bytes[i * esize + k] as u128;
            }
            v
        };
        let mut scalars = Vec::with_capacity(count);
        for i in 0..count {
            let s = if is_complex {
                let (r, im) = (read(2 * i), read(2 * i + 1));
                if matches!(elem.kind(), TypeKind::Complex(e) if e.is_float()) {
                    Scalar::ComplexFloat(r, im)
                } else {
                    Scalar::ComplexInt(r as i128, im as i128)
                }
            } else if elem.is_float() {
                Scalar::Float(read(i))
            } else {
                Scalar::Int(crate::attrs::truncate_to_width(read(i) as i128, elem))
            };
            scalars.push(s);
        }
        if count == 1 && n != 1 {
            return Ok(Attribute::get(AttrKind::DenseElements {
                ty,
                splat: true,
                elements: scalars,
            }));
        }
        Ok(Attribute::dense(ty, scalars))
    }

    fn flatten_lit<'l>(
        &self,
        lit: &'l Lit,
        depth: usize,
        shape: &mut Vec<i64>,
        flat: &mut Vec<&'l Lit>,
        strings: &mut Vec<String>,
        at: u32,
    ) -> PResult<()> {
        match lit {
            Lit::List(items) => {
                if shape.len() == depth {
                    shape.push(items.len() as i64);
                } else if shape.get(depth) != Some(&(items.len() as i64)) {
                    return Err(self.err_at(
                        at,
                        "tensor literal is invalid; ranks are not consistent between elements",
                    ));
                }
                for i in items {
                    self.flatten_lit(i, depth + 1, shape, flat, strings, at)?;
                }
                Ok(())
            }
            Lit::Str(s) => {
                strings.push(s.clone());
                Ok(())
            }
            other => {
                if depth != shape.len() {
                    return Err(self.err_at(
                        at,
                        "tensor literal is invalid; ranks are not consistent between elements",
                    ));
                }
                flat.push(other);
                Ok(())
            }
        }
    }

    fn lit_to_scalar(&self, l: &Lit, elem: Type, at: u32) -> PResult<Scalar> {
        if let TypeKind::Complex(e) = elem.kind() {
            let Lit::Complex(r, i) = l else {
                return Err(self.err_at(at, "expected complex element"));
            };
            let (a, b) = (
                self.lit_to_scalar(r, *e, at)?,
                self.lit_to_scalar(i, *e, at)?,
            );
            return Ok(match (a, b) {
                (Scalar::Float(x), Scalar::Float(y)) => Scalar::ComplexFloat(x, y),
                (Scalar::Int(x), Scalar::Int(y)) => Scalar::ComplexInt(x, y),
                _ => return Err(self.err_at(at, "invalid complex element")),
            });
        }
        let a = match l {
            Lit::Bool(b) => {
                if elem.int_width() != Some(1) {
                    return Err(self.err_at(at, "expected i1 type for 'true' or 'false' values"));
                }
                Attribute::int(*b as i128, elem)
            }
            Lit::Int(neg, off) | Lit::Float(neg, _, off) => {
                let (text, kind) = match l {
                    Lit::Int(_, o) => (self.text_at(*o), Tok::Integer),
                    Lit::Float(_, s, _) => (s.as_str(), Tok::Float),
                    _ => unreachable!(),
                };
                let _ = off;
                self.number_to_attr(*neg, text, kind, elem, at)?
            }
            _ => return Err(self.err_at(at, "invalid element literal")),
        };
        Ok(match a.kind() {
            AttrKind::Integer { value, .. } => Scalar::Int(*value),
            AttrKind::Float { bits, .. } => Scalar::Float(*bits),
            AttrKind::Bool(b) => Scalar::Int(*b as i128),
            _ => Scalar::Int(0),
        })
    }

    fn text_at(&self, off: u32) -> &str {
        let mut l = crate::lexer::Lexer {
            src: self.src.as_bytes(),
            pos: off as usize,
        };
        let t = l.next_token();
        &self.src[t.start as usize..t.end as usize]
    }

    fn parse_lit(&mut self) -> PResult<Lit> {
        self.enter()?;
        let r = super::with_stack(|| self.parse_lit_inner());
        self.leave();
        r
    }

    fn parse_lit_inner(&mut self) -> PResult<Lit> {
        match self.tok.kind {
            Tok::LSquare => {
                self.advance();
                let mut v = vec![];
                if !self.consume_if(Tok::RSquare) {
                    loop {
                        v.push(self.parse_lit()?);
                        if self.consume_if(Tok::RSquare) {
                            break;
                        }
                        self.expect(Tok::Comma, "',' or ']'")?;
                    }
                }
                Ok(Lit::List(v))
            }
            Tok::LParen => {
                self.advance();
                let r = self.parse_lit()?;
                self.expect(Tok::Comma, "','")?;
                let i = self.parse_lit()?;
                self.expect(Tok::RParen, "')'")?;
                Ok(Lit::Complex(Box::new(r), Box::new(i)))
            }
            Tok::String => {
                let s = self.string_value()?;
                self.advance();
                Ok(Lit::Str(s))
            }
            Tok::BareIdent if self.peek_keyword("true") || self.peek_keyword("false") => {
                let b = self.peek_keyword("true");
                self.advance();
                Ok(Lit::Bool(b))
            }
            Tok::Minus | Tok::Integer | Tok::Float => {
                let neg = self.consume_if(Tok::Minus);
                let off = self.tok.start;
                let r = match self.tok.kind {
                    Tok::Integer => Lit::Int(neg, off),
                    Tok::Float => Lit::Float(neg, self.tok_text().to_string(), off),
                    _ => return Err(self.err_here("expected integer or float literal")),
                };
                self.advance();
                Ok(r)
            }
            _ => Err(self.err_here("expected element literal of primitive type")),
        }
    }

    // ----- affine ------------------------------------------------------------------------
    fn parse_affine_map_or_set(&mut self, want_set: bool) -> PResult<Attribute> {
        let mut names: Vec<(String, AffineExpr)> = vec![];
        self.expect(Tok::LParen, "'(' at start of dimensional identifiers list")?;
        let mut nd = 0u32;
        if !self.consume_if(Tok::RParen) {
            loop {
                let n = self
                    .parse_optional_any_keyword()
                    .ok_or_else(|| self.err_here("expected bare identifier"))?;
                if names.iter().any(|(k, _)| k == n) {
                    return Err(self.err_here(format!("redefinition of identifier '{n}'")));
                }
                names.push((n.to_string(), AffineExpr::Dim(nd)));
                nd += 1;
                if self.consume_if(Tok::RParen) {
                    break;
                }
                self.expect(Tok::Comma, "',' or ')'")?;
            }
        }
        let mut ns = 0u32;
        if self.consume_if(Tok::LSquare) && !self.consume_if(Tok::RSquare) {
            loop {
                let n = self
                    .parse_optional_any_keyword()
                    .ok_or_else(|| self.err_here("expected bare identifier"))?;
                names.push((n.to_string(), AffineExpr::Symbol(ns)));
                ns += 1;
                if self.consume_if(Tok::RSquare) {
                    break;
                }
                self.expect(Tok::Comma, "',' or ']'")?;
            }
        }
        if want_set || self.tok.kind == Tok::Colon {
            self.expect(Tok::Colon, "':' in integer set")?;
            self.expect(Tok::LParen, "'('")?;
            let mut cons = vec![];
            if !self.consume_if(Tok::RParen) {
                loop {
                    let lhs = self.parse_affine_expr(&names)?;
                    let eq = if self.consume_if(Tok::Equal) {
                        self.expect(Tok::Equal, "'=='")?;
                        true
                    } else if self.consume_if(Tok::Greater) {
                        self.expect(Tok::Equal, "'>='")?;
                        false
                    } else if self.consume_if(Tok::Less) {
                        self.expect(Tok::Equal, "'<='")?;
                        let rhs = self.parse_affine_expr(&names)?;
                        cons.push((rhs.sub(lhs), false));
                        if self.consume_if(Tok::RParen) {
                            break;
                        }
                        self.expect(Tok::Comma, "','")?;
                        continue;
                    } else {
                        return Err(self.err_here("expected '== affine-expr' or '>= affine-expr' at end of affine constraint"));
                    };
                    let rhs = self.parse_affine_expr(&names)?;
                    cons.push((lhs.sub(rhs), eq));
                    if self.consume_if(Tok::RParen) {
                        break;
                    }
                    self.expect(Tok::Comma, "','")?;
                }
            }
            // `(1 == 0)` alone is the canonical empty set.
            if cons.len() == 1 && cons[0] == (AffineExpr::Const(1), true) {
                cons.clear();
            }
            return Ok(Attribute::get(AttrKind::IntegerSet(IntegerSet {
                num_dims: nd,
                num_symbols: ns,
                constraints: cons,
            })));
        }
        self.expect(Tok::Arrow, "'->' or ':'")?;
        self.expect(Tok::LParen, "'('")?;
        let mut results = vec![];
        if !self.consume_if(Tok::RParen) {
            loop {
                results.push(self.parse_affine_expr(&names)?);
                if self.consume_if(Tok::RParen) {
                    break;
                }
                self.expect(Tok::Comma, "',' or ')'")?;
            }
        }
        Ok(Attribute::affine_map(AffineMap::new(nd, ns, results)))
    }

    pub(crate) fn parse_affine_expr(
        &mut self,
        names: &[(String, AffineExpr)],
    ) -> PResult<AffineExpr> {
        self.enter()?;
        let r = super::with_stack(|| self.parse_affine_sum(names));
        self.leave();
        r
    }

    fn parse_affine_sum(&mut self, names: &[(String, AffineExpr)]) -> PResult<AffineExpr> {
        let mut lhs = self.parse_affine_product(names)?;
        loop {
            if self.consume_if(Tok::Plus) {
                let r = self.parse_affine_product(names)?;
                lhs = lhs.add(r);
            } else if self.tok.kind == Tok::Minus {
                self.advance();
                let r = self.parse_affine_product(names)?;
                lhs = lhs.sub(r);
            } else {
                return Ok(lhs);
            }
        }
    }

    fn parse_affine_product(&mut self, names: &[(String, AffineExpr)]) -> PResult<AffineExpr> {
        let mut lhs = self.parse_affine_operand(names)?;
        loop {
            let at = self.tok.start;
            if self.consume_if(Tok::Star) {
                let r = self.parse_affine_operand(names)?;
                if !lhs.is_symbolic_or_constant() && !r.is_symbolic_or_constant() {
                    return Err(self.err_at(at, "non-affine expression: at least one of the multiply operands has to be either a constant or symbolic"));
                }
                lhs = lhs.mul(r);
                continue;
            }
            let kw = if self.tok.kind == Tok::BareIdent {
                self.tok_text()
            } else {
                ""
            };
            if matches!(kw, "floordiv" | "ceildiv" | "mod") {
                self.advance();
                let r = self.parse_affine_operand(names)?;
                if !r.is_symbolic_or_constant() {
                    return Err(self.err_at(at, format!("non-affine expression: right operand of {kw} has to be either a constant or symbolic")));
                }
                lhs = match kw {
                    "floordiv" => lhs.floor_div(r),
                    "ceildiv" => lhs.ceil_div(r),
                    _ => lhs.modulo(r),
                };
                continue;
            }
            return Ok(lhs);
        }
    }

    fn parse_affine_operand(&mut self, names: &[(String, AffineExpr)]) -> PResult<AffineExpr> {
        match self.tok.kind {
            Tok::Minus => {
                self.advance();
                let e = self.parse_affine_operand(names)?;
                Ok(e.neg())
            }
            Tok::LParen => {
                self.advance();
                let e = self.parse_affine_expr(names)?;
                self.expect(Tok::RParen, "')'")?;
                Ok(e)
            }
            Tok::Integer => {
                let v = self.int_value()?;
                self.advance();
                let v =
                    i64::try_from(v).map_err(|_| self.err_here("constant too large for index"))?;
                Ok(AffineExpr::Const(v))
            }
            Tok::BareIdent => {
                let n = self.tok_text();
                let e = names
                    .iter()
                    .find(|(k, _)| k == n)
                    .map(|(_, e)| e.clone())
                    .ok_or_else(|| self.err_here(format!("use of undeclared identifier '{n}'")))?;
                self.advance();
                Ok(e)
            }
            _ => Err(self.err_here("expected affine expression")),
        }
    }
}

fn join(v: &[i64]) -> String {
    v.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
