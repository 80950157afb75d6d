//! Parsing scopes in the traversal notation: a small lexer and a recursive-descent parser
//! that reports errors at byte offsets.

use super::{BinOp, Bound, Idx, Iter, Scope, Src, Term};

/// A parse error at a byte offset of the parsed text.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    pub offset: usize,
    pub msg: String,
}

#[derive(Clone, Debug, PartialEq)]
enum T {
    Ident(String),
    Ref(String),
    Int(i64),
    Float(f64),
    P(char),
    Eof,
}

struct Lex<'a> {
    s: &'a [u8],
    pos: usize,
    tok: T,
    at: usize,
}

impl<'a> Lex<'a> {
    fn new(s: &'a str) -> Result<Lex<'a>, ParseError> {
        let mut l = Lex {
            s: s.as_bytes(),
            pos: 0,
            tok: T::Eof,
            at: 0,
        };
        l.next()?;
        Ok(l)
    }
    fn err(&self, msg: impl Into<String>) -> ParseError {
        ParseError {
            offset: self.at,
            msg: msg.into(),
        }
    }
    fn next(&mut self) -> Result<T, ParseError> {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
        self.at = self.pos;
        let prev = std::mem::replace(&mut self.tok, T::Eof);
        let Some(&c) = self.s.get(self.pos) else {
            return Ok(prev);
        };
        let word = |l: &mut Lex, start: usize| {
            let mut e = start;
            while e < l.s.len()
                && (l.s[e].is_ascii_alphanumeric() || matches!(l.s[e], b'_' | b'#' | b'.' | b'\''))
            {
                e += 1;
            }
            l.pos = e;
            String::from_utf8_lossy(&l.s[start..e]).into_owned()
        };
        self.tok = if c.is_ascii_alphabetic() || c == b'_' {
            T::Ident(word(self, self.pos))
        } else if c == b'%' || c == b'$' {
            let w = word(self, self.pos + 1);
            if w.is_empty() {
                return Err(self.err("expected a name after '%' or '$'"));
            }
            T::Ref(format!("{}{w}", c as char))
        } else if c.is_ascii_digit() {
            let mut e = self.pos;
            let mut float = false;
            while e < self.s.len()
                && (self.s[e].is_ascii_digit()
                    || self.s[e] == b'.'
                    || ((self.s[e] == b'e' || self.s[e] == b'E') && float)
                    || ((self.s[e] == b'-' || self.s[e] == b'+')
                        && matches!(self.s[e - 1], b'e' | b'E')
                        && float))
            {
                float |= self.s[e] == b'.';
                e += 1;
            }
            let txt = String::from_utf8_lossy(&self.s[self.pos..e]).into_owned();
            self.pos = e;
            if float {
                T::Float(
                    txt.parse()
                        .map_err(|_| self.err(format!("bad number '{txt}'")))?,
                )
            } else {
                T::Int(
                    txt.parse()
                        .map_err(|_| self.err(format!("integer '{txt}' out of range")))?,
                )
            }
        } else if b"<>:,{}[]()+-*?/".contains(&c) {
            self.pos += 1;
            T::P(c as char)
        } else {
            return Err(self.err(format!("unexpected character '{}'", c as char)));
        };
        Ok(prev)
    }
    fn eat(&mut self, c: char) -> Result<bool, ParseError> {
        if self.tok == T::P(c) {
            self.next()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }
    fn expect(&mut self, c: char) -> Result<(), ParseError> {
        if !self.eat(c)? {
            return Err(self.err(format!("expected '{c}'")));
        }
        Ok(())
    }
    fn is_kw(&self, k: &str) -> bool {
        matches!(&self.tok, T::Ident(s) if s == k)
    }
}

struct P<'a, 'r> {
    l: Lex<'a>,
    resolve: &'r dyn Fn(&str) -> Option<usize>,
}

impl P<'_, '_> {
    fn int(&mut self) -> Result<i64, ParseError> {
        let neg = self.l.eat('-')?;
        match self.l.tok {
            T::Int(v) => {
                self.l.next()?;
                Ok(if neg { -v } else { v })
            }
            _ => Err(self.l.err("expected an integer")),
        }
    }
    fn input(&mut self) -> Result<usize, ParseError> {
        match self.l.tok.clone() {
            T::Ref(r) => {
                let i = (self.resolve)(&r).ok_or_else(|| {
                    self.l
                        .err(format!("'{r}' is not an input of the expression"))
                })?;
                self.l.next()?;
                Ok(i)
            }
            _ => Err(self.l.err("expected an input ('%name' or '$index')")),
        }
    }
    fn bound(&mut self) -> Result<Bound, ParseError> {
        if self.l.is_kw("dim") {
            self.l.next()?;
            self.l.expect('(')?;
            let i = self.input()?;
            self.l.expect(',')?;
            let d = self.int()?;
            self.l.expect(')')?;
            let mut c = 0;
            if self.l.eat('+')? {
                c = self.int()?;
            } else if self.l.eat('-')? {
                c = -self.int()?;
            }
            return Ok(Bound {
                dim: Some((
                    i,
                    usize::try_from(d).map_err(|_| self.l.err("negative dim"))?,
                )),
                c,
            });
        }
        Ok(Bound::fixed(self.int()?))
    }
    fn iters(&mut self, kw: &str) -> Result<Vec<Iter>, ParseError> {
        if !self.l.is_kw(kw) {
            return Err(self.l.err(format!("expected '{kw}<'")));
        }
        self.l.next()?;
        self.l.expect('<')?;
        let mut v = vec![];
        if self.l.eat('>')? {
            return Ok(v);
        }
        loop {
            let T::Ident(name) = self.l.tok.clone() else {
                return Err(self.l.err("expected an iterator name"));
            };
            self.l.next()?;
            self.l.expect(':')?;
            let lo = self.int()?;
            self.l.expect(':')?;
            let hi = self.bound()?;
            v.push(Iter { name, lo, hi });
            if self.l.eat('>')? {
                return Ok(v);
            }
            self.l.expect(',')?;
        }
    }
    fn scope(&mut self) -> Result<Scope, ParseError> {
        let trav = self.iters("L")?;
        let sum = if self.l.is_kw("Sum") {
            self.iters("Sum")?
        } else {
            vec![]
        };
        self.l.expect('{')?;
        let body = self.term()?;
        self.l.expect('}')?;
        Ok(Scope { trav, sum, body })
    }
    fn term(&mut self) -> Result<Term, ParseError> {
        let mut a = self.product()?;
        loop {
            let op = if self.l.eat('+')? {
                BinOp::Add
            } else if self.l.eat('-')? {
                BinOp::Sub
            } else {
                return Ok(a);
            };
            let b = self.product()?;
            a = Term::Bin(op, Box::new(a), Box::new(b));
        }
    }
    fn product(&mut self) -> Result<Term, ParseError> {
        let mut a = self.factor()?;
        while self.l.eat('*')? {
            let b = self.factor()?;
            a = Term::product(a, b);
        }
        Ok(a)
    }
    fn factor(&mut self) -> Result<Term, ParseError> {
        match self.l.tok.clone() {
            T::Float(x) => {
                self.l.next()?;
                Ok(Term::constant(x))
            }
            T::Int(x) => {
                self.l.next()?;
                Ok(Term::constant(x as f64))
            }
            T::P('-') => {
                self.l.next()?;
                let f = self.factor()?;
                Ok(Term::Bin(
                    BinOp::Sub,
                    Box::new(Term::constant(0.0)),
                    Box::new(f),
                ))
            }
            T::P('(') => {
                self.l.next()?;
                if self.l.is_kw("L") {
                    let s = self.scope()?;
                    self.l.expect(')')?;
                    let idx = self.indices()?;
                    return Ok(Term::Access(Src::Scope(Box::new(s)), idx));
                }
                let t = self.term()?;
                self.l.expect(')')?;
                Ok(t)
            }
            T::Ref(_) => {
                let i = self.input()?;
                let idx = self.indices()?;
                Ok(Term::Access(Src::Input(i), idx))
            }
            _ => Err(self.l.err("expected a tensor access, a number or '('")),
        }
    }
    fn indices(&mut self) -> Result<Vec<Idx>, ParseError> {
        self.l.expect('[')?;
        let mut v = vec![];
        if self.l.eat(']')? {
            return Ok(v);
        }
        loop {
            v.push(self.idx()?);
            if self.l.eat(']')? {
                return Ok(v);
            }
            self.l.expect(',')?;
        }
    }
    fn idx(&mut self) -> Result<Idx, ParseError> {
        let mut a = self.idx_product()?;
        loop {
            if self.l.eat('+')? {
                a = a.add(&self.idx_product()?);
            } else if self.l.eat('-')? {
                a = a.sub(&self.idx_product()?);
            } else {
                return Ok(a);
            }
        }
    }
    fn idx_product(&mut self) -> Result<Idx, ParseError> {
        let mut a = self.idx_atom()?;
        loop {
            if self.l.eat('*')? {
                let b = self.idx_atom()?;
                a = match (a.as_const(), b.as_const()) {
                    (Some(k), _) => b.scale(k),
                    (_, Some(k)) => a.scale(k),
                    _ => return Err(self.l.err("index expressions must be affine")),
                };
            } else if self.l.eat('/')? {
                let k = self.int()?;
                if k <= 0 {
                    return Err(self.l.err("'/' needs a positive constant"));
                }
                a = a.exact_div(k);
            } else if self.l.is_kw("floordiv") || self.l.is_kw("mod") {
                let div = self.l.is_kw("floordiv");
                self.l.next()?;
                let k = self.int()?;
                if k <= 0 {
                    return Err(self.l.err("floordiv and mod need a positive constant"));
                }
                a = if div { a.floordiv(k) } else { a.modulo(k) };
            } else {
                return Ok(a);
            }
        }
    }
    fn idx_atom(&mut self) -> Result<Idx, ParseError> {
        match self.l.tok.clone() {
            T::Int(v) => {
                self.l.next()?;
                Ok(Idx::constant(v))
            }
            T::P('-') => {
                self.l.next()?;
                Ok(self.idx_atom()?.scale(-1))
            }
            T::P('(') => {
                self.l.next()?;
                let e = self.idx()?;
                self.l.expect(')')?;
                Ok(e)
            }
            T::Ident(v) => {
                self.l.next()?;
                Ok(Idx::var(&v))
            }
            _ => Err(self.l.err("expected an index expression")),
        }
    }
}

/// Parse a scope; `resolve` maps an input reference (`$0`, `%arg1`) to its position.
pub fn parse_scope(
    src: &str,
    resolve: &dyn Fn(&str) -> Option<usize>,
) -> Result<Scope, ParseError> {
    let mut p = P {
        l: Lex::new(src)?,
        resolve,
    };
    let s = p.scope()?;
    if p.l.tok != T::Eof {
        return Err(p.l.err("unexpected text after the expression"));
    }
    Ok(s)
}

/// Resolve `$i` references (the attribute form).
pub fn positional(r: &str) -> Option<usize> {
    r.strip_prefix('$')?.parse().ok()
}
