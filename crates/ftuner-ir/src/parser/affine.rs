//! Parsing affine maps and integer sets (`affine_map<...>`, `affine_set<...>`) and their
//! affine expressions.

use super::{PResult, Parser};
use crate::affine::{AffineExpr, AffineMap, IntegerSet};
use crate::attrs::{AttrKind, Attribute};
use crate::lexer::Tok;
#[allow(unused_imports)]
use std::ops::{Add, Mul, Neg, Sub};

impl<'a> Parser<'a> {
    pub(super) fn parse_affine_map_or_set(&mut self, want_set: bool) -> PResult<Attribute> {
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
