//! Attribute parsing: the dispatch on an attribute's first token, attribute dictionaries,
//! numbers, symbol references, strings and keyword attributes (`strided`, `loc`, ...);
//! elements attributes are parsed in `dense`, affine maps and sets in `affine`.

use super::{OperationState, PResult, Parser};
use crate::attrs::{AttrKind, Attribute};
use crate::lexer::Tok;
use crate::types::{Type, TypeKind};
#[allow(unused_imports)]
use std::ops::{Add, Mul, Neg, Sub};

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

    /// An optional `{...}` (or with `keyword`, `attributes {...}`) added to `st`'s
    /// attributes: the `attr-dict` directive of a custom parser.
    pub fn parse_attr_dict_into(&mut self, st: &mut OperationState, keyword: bool) -> PResult<()> {
        let mut v = vec![];
        if keyword {
            self.parse_optional_attr_dict_with_keyword(&mut v)?;
        } else {
            self.parse_optional_attr_dict(&mut v)?;
        }
        for (k, a) in v {
            st.add_attr(&k, a);
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
            Tok::HashIdent => self.parse_hash_attr(),
            Tok::AtIdent => self.parse_symbol_ref(),
            Tok::String => self.parse_string_attr(),
            Tok::Integer | Tok::Float | Tok::Minus => self.parse_number_attr(ty),
            Tok::BareIdent => self.parse_keyword_attr(),
            Tok::LParen | Tok::ExclaimIdent => {
                let t = self.parse_type()?;
                Ok(Attribute::type_attr(t))
            }
            _ => Err(self.err_here("expected attribute value")),
        }
    }

    /// `#alias` or a dialect attribute `#d.x<...>`.
    fn parse_hash_attr(&mut self) -> PResult<Attribute> {
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

    /// `@root::@nested...`.
    fn parse_symbol_ref(&mut self) -> PResult<Attribute> {
        let root = self.symbol_text()?;
        self.advance();
        let mut nested = vec![];
        while self.tok.kind == Tok::Colon && self.src[self.tok.end as usize..].starts_with(':') {
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

    /// `"text"`, optionally typed (`"text" : type`).
    fn parse_string_attr(&mut self) -> PResult<Attribute> {
        let s = self.string_value()?;
        self.advance();
        let ty = if self.consume_if(Tok::Colon) {
            Some(self.parse_type()?)
        } else {
            None
        };
        Ok(Attribute::get(AttrKind::String { value: s, ty }))
    }

    /// An attribute that starts with a keyword (`true`, `unit`, `affine_map<...>`,
    /// `dense<...>`, `strided<...>`, `loc(...)`, ...) or a builtin type.
    fn parse_keyword_attr(&mut self) -> PResult<Attribute> {
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
            "dense_resource" => self.parse_dense_resource(),
            "strided" => self.parse_strided_layout(),
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

    /// `dense_resource<handle> : type`.
    fn parse_dense_resource(&mut self) -> PResult<Attribute> {
        self.advance();
        self.expect(Tok::Less, "'<'")?;
        let handle = match self.tok.kind {
            Tok::BareIdent => self.tok_text().to_string(),
            Tok::String => self.string_value()?,
            _ => return Err(self.err_here("expected identifier key for 'resource' entry")),
        };
        self.advance();
        self.expect(Tok::Greater, "'>'")?;
        self.expect(Tok::Colon, "':'")?;
        let t = self.parse_type()?;
        Ok(Attribute::get(AttrKind::DenseResource { ty: t, handle }))
    }

    /// `strided<[s0, ?], offset: o>`.
    fn parse_strided_layout(&mut self) -> PResult<Attribute> {
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

    pub(super) fn number_to_attr(
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
        let out_of_range = || self.err_at(at, "integer constant out of range for attribute");
        let mag = if let Some(h) = text.strip_prefix("0x") {
            u128::from_str_radix(h, 16)
        } else {
            text.parse::<u128>()
        }
        .map_err(|_| out_of_range())?;
        // The magnitude in u128: `-170141183460469231731687303715884105728` (i128's
        // smallest, as the printer writes it) reads back; `-(i128::MIN)` overflowed.
        let v = match (neg, mag) {
            (true, m) if m > 1 << 127 => return Err(out_of_range()),
            (true, m) => (m as i128).wrapping_neg(),
            (false, m) => m as i128,
        };
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
                // `i0` holds 0 only; `i1` takes -1 and 1 for true.
                let min = match w {
                    0 => 0,
                    1 => -1,
                    _ => -(1i128 << (w - 1)),
                };
                if v < min || v >= (1i128 << w) {
                    return Err(self.err_at(at, "integer constant out of range for attribute"));
                }
            } else if w > 128 && !neg && v < 0 {
                // Held as i128: 2^127 and up would read as negative numbers.
                return Err(out_of_range());
            }
        }
        Ok(Attribute::int(v, ty))
    }
}
