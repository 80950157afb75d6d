//! The format string's syntax: `assembly_format` text as a list of elements (variables,
//! literals, directives, optional groups with their anchors).

use super::Elem;

pub(super) fn tokenize_format(f: &str) -> Result<Vec<Elem>, String> {
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
