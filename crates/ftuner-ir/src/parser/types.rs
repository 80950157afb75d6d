//! Type parsing.

use super::{PResult, Parser};
use crate::attrs::AttrKind;
use crate::lexer::Tok;
use crate::types::{FloatKind, Signedness, Type, TypeKind, DYNAMIC};

impl<'a> Parser<'a> {
    pub fn parse_type(&mut self) -> PResult<Type> {
        self.enter()?;
        let r = super::with_stack(|| self.parse_type_inner());
        self.leave();
        r
    }

    /// A type if the next token can start one.
    pub fn parse_optional_type(&mut self) -> PResult<Option<Type>> {
        if self.can_start_type() {
            Ok(Some(self.parse_type()?))
        } else {
            Ok(None)
        }
    }

    /// Whether the current token can start a type.
    pub fn can_start_type_pub(&self) -> bool {
        self.can_start_type()
    }

    pub(crate) fn can_start_type(&self) -> bool {
        match self.tok.kind {
            Tok::LParen | Tok::ExclaimIdent => true,
            Tok::BareIdent => {
                let t = self.tok_text();
                matches!(
                    t,
                    "index" | "none" | "tensor" | "memref" | "vector" | "complex" | "tuple"
                ) || FloatKind::from_keyword(t).is_some()
                    || int_type(t).is_some()
            }
            _ => false,
        }
    }

    pub fn parse_colon_type(&mut self) -> PResult<Type> {
        self.expect(Tok::Colon, "':'")?;
        self.parse_type()
    }

    /// `t1, t2, ...` (at least one).
    pub fn parse_type_list_no_parens(&mut self) -> PResult<Vec<Type>> {
        let mut v = vec![self.parse_type()?];
        while self.consume_if(Tok::Comma) {
            v.push(self.parse_type()?);
        }
        Ok(v)
    }

    /// `( t1, ... )` possibly empty.
    pub fn parse_paren_type_list(&mut self) -> PResult<Vec<Type>> {
        self.expect(Tok::LParen, "'('")?;
        if self.consume_if(Tok::RParen) {
            return Ok(vec![]);
        }
        let v = self.parse_type_list_no_parens()?;
        self.expect(Tok::RParen, "')'")?;
        Ok(v)
    }

    /// A function result list: a single non-function type or a parenthesized list.
    pub fn parse_function_result_types(&mut self) -> PResult<Vec<Type>> {
        if self.tok.kind == Tok::LParen {
            // Could be `(a, b)` or a function type `(a) -> b` as the single result.
            let save = self.tok.start as usize;
            let list = self.parse_paren_type_list()?;
            if self.tok.kind == Tok::Arrow {
                self.reset_to(save);
                return Ok(vec![self.parse_type()?]);
            }
            return Ok(list);
        }
        Ok(vec![self.parse_type()?])
    }

    fn parse_type_inner(&mut self) -> PResult<Type> {
        match self.tok.kind {
            Tok::LParen => {
                let inputs = self.parse_paren_type_list()?;
                self.expect(Tok::Arrow, "'->' in function type")?;
                let results = self.parse_function_result_types()?;
                Ok(Type::function(inputs, results))
            }
            Tok::ExclaimIdent => {
                let name = self.tok_text()[1..].to_string();
                if let Some(t) = self.type_aliases.get(&name) {
                    let t = *t;
                    self.advance();
                    return Ok(t);
                }
                if !name.contains('.') && !self.src[self.tok.end as usize..].starts_with('<') {
                    return Err(self.err_here(format!("undefined symbol alias id '{name}'")));
                }
                let (dialect, body) = self.dialect_symbol_body(&name)?;
                Ok(Type::get(TypeKind::Dialect { dialect, body }))
            }
            Tok::BareIdent => {
                let t = self.tok_text();
                if let Some(k) = FloatKind::from_keyword(t) {
                    self.advance();
                    return Ok(Type::float(k));
                }
                if let Some((w, s)) = int_type(t) {
                    if w > 16_777_215 {
                        return Err(self.err_here("integer bitwidth is limited to 16777215 bits"));
                    }
                    self.advance();
                    return Ok(Type::get(TypeKind::Integer {
                        width: w,
                        signedness: s,
                    }));
                }
                match t {
                    "index" => {
                        self.advance();
                        Ok(Type::index())
                    }
                    "none" => {
                        self.advance();
                        Ok(Type::none())
                    }
                    "tensor" => self.parse_tensor_type(),
                    "memref" => self.parse_memref_type(),
                    "vector" => self.parse_vector_type(),
                    "complex" => {
                        self.advance();
                        self.expect(Tok::Less, "'<' in complex type")?;
                        let at = self.tok.start;
                        let e = self.parse_type()?;
                        if !(e.is_float() || e.is_integer()) {
                            return Err(self.err_at(at, "invalid element type for complex"));
                        }
                        self.expect(Tok::Greater, "'>' in complex type")?;
                        Ok(Type::get(TypeKind::Complex(e)))
                    }
                    "tuple" => {
                        self.advance();
                        self.expect(Tok::Less, "'<' in tuple type")?;
                        let mut v = vec![];
                        if !self.consume_if(Tok::Greater) {
                            v = self.parse_type_list_no_parens()?;
                            self.expect(Tok::Greater, "'>' in tuple type")?;
                        }
                        Ok(Type::get(TypeKind::Tuple(v)))
                    }
                    _ => Err(self.err_here("expected non-function type")),
                }
            }
            _ => Err(self.err_here("expected non-function type")),
        }
    }

    /// `<...>` with balanced brackets, as raw text (for dialect attribute bodies).
    pub fn parse_balanced_angle(&mut self) -> PResult<String> {
        if self.tok.kind != Tok::Less {
            return Err(self.err_here("expected '<'"));
        }
        // Reuse the dialect-body scanner by pretending a symbol ends right before '<'.
        let start = self.tok.start as usize;
        let fake_end = start as u32;
        let saved = self.tok;
        self.tok.end = fake_end;
        let r = self.dialect_symbol_body("x");
        if r.is_err() {
            self.tok = saved;
        }
        let (_, body) = r?;
        Ok(body)
    }

    /// After a `!dialect.name` or `#dialect.name` token: the dialect and the body text
    /// (`name`, `name<...>` or `<...>`), with balanced brackets.
    pub(crate) fn dialect_symbol_body(&mut self, name: &str) -> PResult<(String, String)> {
        let (dialect, rest) = match name.find('.') {
            Some(i) => (&name[..i], &name[i + 1..]),
            None => (name, ""),
        };
        let mut body = rest.to_string();
        let end = self.tok.end as usize;
        let bytes = self.src.as_bytes();
        let mut pos = end;
        if bytes.get(end) == Some(&b'<') {
            let mut depth: Vec<u8> = vec![];
            let start = pos;
            loop {
                let Some(&c) = bytes.get(pos) else {
                    return Err(self.err_at(
                        start as u32,
                        "unbalanced '<' character in pretty dialect name",
                    ));
                };
                pos += 1;
                match c {
                    b'<' | b'(' | b'[' | b'{' => depth.push(c),
                    b'-' if bytes.get(pos) == Some(&b'>') => pos += 1,
                    b'>' | b')' | b']' | b'}' => {
                        let open = match c {
                            b'>' => b'<',
                            b')' => b'(',
                            b']' => b'[',
                            _ => b'{',
                        };
                        if depth.pop() != Some(open) {
                            return Err(self.err_at(
                                start as u32,
                                "unbalanced '<' character in pretty dialect name",
                            ));
                        }
                        if depth.is_empty() {
                            break;
                        }
                    }
                    b'"' => {
                        while let Some(&d) = bytes.get(pos) {
                            pos += 1;
                            if d == b'\\' {
                                pos += 1;
                            } else if d == b'"' {
                                break;
                            }
                        }
                    }
                    _ => {}
                }
            }
            body.push_str(&self.src[start..pos]);
        }
        self.reset_to(pos);
        Ok((dialect.to_string(), body))
    }

    /// Scan `4x?x[8]x` at the character level; stops before the element type.
    /// Returns (dims, scalable flags).
    fn parse_dim_list(
        &mut self,
        allow_scalable: bool,
        allow_dynamic: bool,
    ) -> PResult<(Vec<i64>, Vec<bool>)> {
        let bytes = self.src.as_bytes();
        let mut pos = self.tok.start as usize;
        let mut dims = vec![];
        let mut scal = vec![];
        loop {
            while bytes.get(pos).is_some_and(|c| c.is_ascii_whitespace()) {
                pos += 1;
            }
            let save = pos;
            let mut scalable = false;
            if allow_scalable && bytes.get(pos) == Some(&b'[') {
                scalable = true;
                pos += 1;
            }
            let d: i64;
            if bytes.get(pos) == Some(&b'?') {
                if !allow_dynamic {
                    return Err(self.err_at(pos as u32, "expected static shape"));
                }
                d = DYNAMIC;
                pos += 1;
            } else if bytes.get(pos).is_some_and(|c| c.is_ascii_digit()) {
                let s = pos;
                while bytes.get(pos).is_some_and(|c| c.is_ascii_digit()) {
                    pos += 1;
                }
                // A hex literal `0x...` is not a dimension.
                d = self.src[s..pos]
                    .parse::<i64>()
                    .map_err(|_| self.err_at(s as u32, "invalid dimension"))?;
            } else {
                pos = save;
                break;
            }
            if scalable {
                if bytes.get(pos) != Some(&b']') {
                    return Err(self.err_at(pos as u32, "missing ']' closing scalable dimension"));
                }
                pos += 1;
            }
            if bytes.get(pos) != Some(&b'x') {
                // e.g. `tensor<4>`: a dim without element type.
                return Err(self.err_at(pos as u32, "expected 'x' in dimension list"));
            }
            pos += 1;
            dims.push(d);
            scal.push(scalable);
        }
        self.reset_to(pos);
        Ok((dims, scal))
    }

    fn parse_tensor_type(&mut self) -> PResult<Type> {
        self.advance();
        if self.tok.kind != Tok::Less {
            return Err(self.err_here("expected '<' in tensor type"));
        }
        // Look at the raw text after '<' for `*x`.
        let after = self.tok.end as usize;
        let rest = self.src[after..].trim_start();
        if rest.starts_with('*') {
            let star = self.src.len() - rest.len();
            let bytes = self.src.as_bytes();
            let mut p = star + 1;
            while bytes.get(p).is_some_and(|c| c.is_ascii_whitespace()) {
                p += 1;
            }
            if bytes.get(p) != Some(&b'x') {
                return Err(self.err_at(p as u32, "expected 'x' in dimension list"));
            }
            self.reset_to(p + 1);
            let elem = self.parse_element_type()?;
            self.expect(Tok::Greater, "'>' in tensor type")?;
            return Ok(Type::get(TypeKind::UnrankedTensor { elem }));
        }
        self.reset_to(after);
        let (shape, _) = self.parse_dim_list(false, true)?;
        let elem = self.parse_element_type()?;
        let mut encoding = None;
        if self.consume_if(Tok::Comma) {
            encoding = Some(self.parse_attribute(None)?);
        }
        self.expect(Tok::Greater, "'>' in tensor type")?;
        if shape.iter().any(|&d| d < 0 && d != DYNAMIC) {
            return Err(self.err_here("invalid tensor dimension size"));
        }
        Ok(Type::get(TypeKind::RankedTensor {
            shape,
            elem,
            encoding,
        }))
    }

    fn parse_element_type(&mut self) -> PResult<Type> {
        let at = self.tok.start;
        let t = self.parse_type()?;
        if matches!(t.kind(), TypeKind::Function { .. } | TypeKind::None) || t.is_tensor() {
            return Err(self.err_at(at, "invalid element type"));
        }
        Ok(t)
    }

    fn parse_memref_type(&mut self) -> PResult<Type> {
        self.advance();
        if self.tok.kind != Tok::Less {
            return Err(self.err_here("expected '<' in memref type"));
        }
        let after = self.tok.end as usize;
        let rest = self.src[after..].trim_start();
        let unranked = rest.starts_with('*');
        let mut shape = vec![];
        if unranked {
            let star = self.src.len() - rest.len();
            let bytes = self.src.as_bytes();
            let mut p = star + 1;
            while bytes.get(p).is_some_and(|c| c.is_ascii_whitespace()) {
                p += 1;
            }
            if bytes.get(p) != Some(&b'x') {
                return Err(self.err_at(p as u32, "expected 'x' in dimension list"));
            }
            self.reset_to(p + 1);
        } else {
            self.reset_to(after);
            shape = self.parse_dim_list(false, true)?.0;
        }
        let elem = self.parse_element_type()?;
        let mut layout = None;
        let mut space = None;
        while self.consume_if(Tok::Comma) {
            let at = self.tok.start;
            let a = self.parse_attribute(None)?;
            let is_layout = matches!(
                a.kind(),
                AttrKind::AffineMap(_) | AttrKind::StridedLayout { .. }
            );
            if is_layout && !unranked && layout.is_none() && space.is_none() {
                layout = Some(a);
            } else if space.is_none() {
                space = Some(a);
            } else {
                return Err(self.err_at(at, "multiple memory spaces specified in memref type"));
            }
        }
        self.expect(Tok::Greater, "'>' in memref type")?;
        // MLIR drops an identity layout and a default (0) memory space.
        if let Some(l) = layout {
            if l.as_affine_map().is_some_and(|m| m.is_identity()) {
                layout = None;
            }
        }
        if let Some(s) = space {
            if let AttrKind::Integer { value: 0, .. } = s.kind() {
                space = None;
            }
        }
        if unranked {
            return Ok(Type::get(TypeKind::UnrankedMemRef {
                elem,
                memory_space: space,
            }));
        }
        Ok(Type::get(TypeKind::MemRef {
            shape,
            elem,
            layout,
            memory_space: space,
        }))
    }

    fn parse_vector_type(&mut self) -> PResult<Type> {
        self.advance();
        if self.tok.kind != Tok::Less {
            return Err(self.err_here("expected '<' in vector type"));
        }
        let after = self.tok.end as usize;
        self.reset_to(after);
        let (shape, scalable) = self.parse_dim_list(true, false)?;
        let at = self.tok.start;
        let elem = self.parse_type()?;
        // MLIR's VectorElementTypeInterface: also `!llvm.ptr` (vectors of pointers, the
        // address operand of `llvm.intr.masked.gather`).
        let llvm_ptr = matches!(elem.kind(), TypeKind::Dialect { dialect, body } if dialect == "llvm" && body.starts_with("ptr"));
        if !(elem.is_integer() || elem.is_index() || elem.is_float() || llvm_ptr) {
            return Err(self.err_at(at, "vector elements must be int/index/float type"));
        }
        self.expect(Tok::Greater, "'>' in vector type")?;
        if shape.iter().any(|&d| d <= 0) && !shape.is_empty() {
            return Err(self.err_at(at, "vector types must have positive constant sizes"));
        }
        Ok(Type::get(TypeKind::Vector {
            shape,
            scalable,
            elem,
        }))
    }
}

/// `i32`, `si8`, `ui64` -> (width, signedness).
pub(crate) fn int_type(t: &str) -> Option<(u32, Signedness)> {
    let (rest, s) = if let Some(r) = t.strip_prefix("si") {
        (r, Signedness::Signed)
    } else if let Some(r) = t.strip_prefix("ui") {
        (r, Signedness::Unsigned)
    } else if let Some(r) = t.strip_prefix('i') {
        (r, Signedness::Signless)
    } else {
        return None;
    };
    if rest.is_empty()
        || !rest.bytes().all(|c| c.is_ascii_digit())
        || (rest.len() > 1 && rest.starts_with('0'))
    {
        return None;
    }
    rest.parse::<u32>().ok().map(|w| (w, s))
}
