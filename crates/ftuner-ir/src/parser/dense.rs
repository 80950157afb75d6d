//! Parsing elements attributes: `array<...>`, `dense<...>` (nested literals, splats, raw
//! hex) and `sparse<...>`, and converting their literals to the element type.

use super::{PResult, Parser};
use crate::attrs::{AttrKind, Attribute, Scalar};
use crate::lexer::Tok;
use crate::types::{Type, TypeKind};

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
    pub(super) fn parse_dense_array(&mut self) -> PResult<Attribute> {
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

    pub(super) fn parse_dense(&mut self) -> PResult<Attribute> {
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

    pub(super) fn parse_sparse(&mut self) -> PResult<Attribute> {
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
}

fn join(v: &[i64]) -> String {
    v.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
