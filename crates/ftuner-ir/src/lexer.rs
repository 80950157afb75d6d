//! MLIR's lexical structure (mlir/docs/LangRef.md "Lexical structure").

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tok {
    Eof,
    Error,
    BareIdent,
    /// `%name`
    PercentIdent,
    /// `^bb0`
    CaretIdent,
    /// `@name` or `@"..."`
    AtIdent,
    /// `#name`
    HashIdent,
    /// `!name`
    ExclaimIdent,
    Integer,
    Float,
    String,
    LParen,
    RParen,
    LSquare,
    RSquare,
    LBrace,
    RBrace,
    Less,
    Greater,
    Comma,
    Colon,
    Equal,
    Arrow,
    Question,
    Star,
    Plus,
    Minus,
    Ellipsis,
    Pipe,
    /// `{-#`
    FileMetadataBegin,
    /// `#-}`
    FileMetadataEnd,
}

#[derive(Clone, Copy, Debug)]
pub struct Token {
    pub kind: Tok,
    pub start: u32,
    pub end: u32,
}

pub struct Lexer<'a> {
    pub src: &'a [u8],
    pub pos: usize,
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}
fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'.'
}
fn is_suffix_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.' | b'-')
}

impl<'a> Lexer<'a> {
    pub fn new(src: &'a str) -> Lexer<'a> {
        Lexer {
            src: src.as_bytes(),
            pos: 0,
        }
    }

    fn peek(&self, off: usize) -> u8 {
        *self.src.get(self.pos + off).unwrap_or(&0)
    }

    fn skip_ws(&mut self) {
        loop {
            match self.peek(0) {
                b' ' | b'\t' | b'\n' | b'\r' => self.pos += 1,
                b'/' if self.peek(1) == b'/' => {
                    while self.pos < self.src.len() && self.src[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                _ => return,
            }
        }
    }

    fn tok(&self, kind: Tok, start: usize) -> Token {
        Token {
            kind,
            start: start as u32,
            end: self.pos as u32,
        }
    }

    pub fn next_token(&mut self) -> Token {
        self.skip_ws();
        let start = self.pos;
        if self.pos >= self.src.len() {
            return self.tok(Tok::Eof, start);
        }
        let c = self.src[self.pos];
        self.pos += 1;
        let kind = match c {
            b'(' => Tok::LParen,
            b')' => Tok::RParen,
            b'[' => Tok::LSquare,
            b']' => Tok::RSquare,
            b'{' => {
                if self.peek(0) == b'-' && self.peek(1) == b'#' {
                    self.pos += 2;
                    Tok::FileMetadataBegin
                } else {
                    Tok::LBrace
                }
            }
            b'}' => Tok::RBrace,
            b'<' => Tok::Less,
            b'>' => Tok::Greater,
            b',' => Tok::Comma,
            b':' => Tok::Colon,
            b'=' => Tok::Equal,
            b'?' => Tok::Question,
            b'*' => Tok::Star,
            b'+' => Tok::Plus,
            b'|' => Tok::Pipe,
            b'-' => {
                if self.peek(0) == b'>' {
                    self.pos += 1;
                    Tok::Arrow
                } else {
                    Tok::Minus
                }
            }
            b'.' => {
                if self.peek(0) == b'.' && self.peek(1) == b'.' {
                    self.pos += 2;
                    Tok::Ellipsis
                } else {
                    Tok::Error
                }
            }
            b'"' => return self.lex_string(start),
            b'%' | b'^' => {
                // Suffix id: digits or [a-zA-Z_$.-][...]*
                let s = self.pos;
                if self.peek(0).is_ascii_digit() {
                    while self.peek(0).is_ascii_digit() {
                        self.pos += 1;
                    }
                } else if is_suffix_char(self.peek(0)) {
                    while is_suffix_char(self.peek(0)) {
                        self.pos += 1;
                    }
                }
                if self.pos == s {
                    Tok::Error
                } else if c == b'%' {
                    Tok::PercentIdent
                } else {
                    Tok::CaretIdent
                }
            }
            b'@' => {
                if self.peek(0) == b'"' {
                    self.pos += 1;
                    let t = self.lex_string(start);
                    if t.kind == Tok::Error {
                        return t;
                    }
                    Tok::AtIdent
                } else {
                    let s = self.pos;
                    while is_suffix_char(self.peek(0)) {
                        self.pos += 1;
                    }
                    if self.pos == s {
                        Tok::Error
                    } else {
                        Tok::AtIdent
                    }
                }
            }
            b'#' | b'!' => {
                if c == b'#' && self.peek(0) == b'-' && self.peek(1) == b'}' {
                    self.pos += 2;
                    Tok::FileMetadataEnd
                } else {
                    let s = self.pos;
                    while is_suffix_char(self.peek(0)) {
                        self.pos += 1;
                    }
                    if self.pos == s {
                        Tok::Error
                    } else if c == b'#' {
                        Tok::HashIdent
                    } else {
                        Tok::ExclaimIdent
                    }
                }
            }
            b'0'..=b'9' => return self.lex_number(start),
            c if is_ident_start(c) => {
                while is_ident_char(self.peek(0)) {
                    self.pos += 1;
                }
                Tok::BareIdent
            }
            _ => {
                // A non-ASCII character is one error token, whole: its text is a `str`
                // slice (a token ending inside the character made `tok_text` panic).
                while (0x80..0xC0).contains(&self.peek(0)) {
                    self.pos += 1;
                }
                Tok::Error
            }
        };
        self.tok(kind, start)
    }

    fn lex_number(&mut self, start: usize) -> Token {
        // The first digit was consumed.
        if self.src[start] == b'0' && self.peek(0) == b'x' && self.peek(1).is_ascii_hexdigit() {
            self.pos += 1;
            while self.peek(0).is_ascii_hexdigit() {
                self.pos += 1;
            }
            return self.tok(Tok::Integer, start);
        }
        while self.peek(0).is_ascii_digit() {
            self.pos += 1;
        }
        if self.peek(0) != b'.' {
            return self.tok(Tok::Integer, start);
        }
        self.pos += 1;
        while self.peek(0).is_ascii_digit() {
            self.pos += 1;
        }
        if matches!(self.peek(0), b'e' | b'E')
            && (self.peek(1).is_ascii_digit()
                || (matches!(self.peek(1), b'+' | b'-') && self.peek(2).is_ascii_digit()))
        {
            self.pos += 2;
            while self.peek(0).is_ascii_digit() {
                self.pos += 1;
            }
        }
        self.tok(Tok::Float, start)
    }

    fn lex_string(&mut self, start: usize) -> Token {
        loop {
            if self.pos >= self.src.len() {
                return self.tok(Tok::Error, start);
            }
            let c = self.src[self.pos];
            self.pos += 1;
            match c {
                b'"' => return self.tok(Tok::String, start),
                b'\n' => return self.tok(Tok::Error, start),
                b'\\' if self.pos < self.src.len() => self.pos += 1,
                _ => {}
            }
        }
    }
}

/// Decode the body of a string token (without quotes): `\n`, `\t`, `\"`, `\\`, `\XX`.
pub fn unescape(body: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let c = body[i];
        if c != b'\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let n = *body.get(i + 1).ok_or("unterminated escape")?;
        match n {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'"' => out.push(b'"'),
            b'\\' => out.push(b'\\'),
            _ => {
                let h = *body.get(i + 2).ok_or("invalid escape sequence")?;
                let hex = |c: u8| (c as char).to_digit(16);
                match (hex(n), hex(h)) {
                    (Some(a), Some(b)) => {
                        out.push((a * 16 + b) as u8);
                        i += 3;
                        continue;
                    }
                    _ => return Err("unknown escape in string literal".into()),
                }
            }
        }
        i += 2;
    }
    Ok(out)
}
