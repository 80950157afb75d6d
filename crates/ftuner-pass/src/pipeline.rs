//! Textual pass pipelines: `builtin.module(func.func(canonicalize,cse{x=1}),symbol-dce)`.

use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum Element {
    /// A pass by argument, with its option text (without braces).
    Pass {
        name: String,
        options: Option<String>,
    },
    /// A nested pipeline anchored on an op name (or `any`).
    Nested {
        anchor: String,
        elements: Vec<Element>,
    },
}

/// A pipeline: a list of elements (a top-level pipeline is one `Nested`).
#[derive(Clone, Debug, PartialEq)]
pub struct Pipeline {
    pub elements: Vec<Element>,
}

impl fmt::Display for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_list(f, &self.elements)
    }
}

fn write_list(f: &mut fmt::Formatter<'_>, els: &[Element]) -> fmt::Result {
    for (i, e) in els.iter().enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        match e {
            Element::Pass { name, options } => {
                f.write_str(name)?;
                if let Some(o) = options {
                    write!(f, "{{{o}}}")?;
                }
            }
            Element::Nested { anchor, elements } => {
                write!(f, "{anchor}(")?;
                write_list(f, elements)?;
                f.write_str(")")?;
            }
        }
    }
    Ok(())
}

/// Parse pipeline text. Errors describe the position.
pub fn parse(text: &str) -> Result<Pipeline, String> {
    let b = text.as_bytes();
    let mut i = 0;
    let els = parse_list(text, b, &mut i, 0)?;
    skip_ws(b, &mut i);
    if i != b.len() {
        return Err(format!(
            "unexpected '{}' at position {i} in pass pipeline '{text}'",
            b[i] as char
        ));
    }
    Ok(Pipeline { elements: els })
}

fn skip_ws(b: &[u8], i: &mut usize) {
    while *i < b.len() && b[*i].is_ascii_whitespace() {
        *i += 1;
    }
}

fn parse_list(text: &str, b: &[u8], i: &mut usize, depth: usize) -> Result<Vec<Element>, String> {
    if depth > 64 {
        return Err("pass pipeline nested too deeply".into());
    }
    let mut els = vec![];
    loop {
        skip_ws(b, i);
        let s = *i;
        while *i < b.len() && (b[*i].is_ascii_alphanumeric() || matches!(b[*i], b'-' | b'_' | b'.'))
        {
            *i += 1;
        }
        if s == *i {
            if *i < b.len() && b[*i] == b')' && els.is_empty() {
                return Ok(els);
            }
            return Err(format!(
                "expected pass or pipeline name at position {s} in '{text}'"
            ));
        }
        let name = text[s..*i].to_string();
        skip_ws(b, i);
        if *i < b.len() && b[*i] == b'(' {
            *i += 1;
            let inner = parse_list(text, b, i, depth + 1)?;
            skip_ws(b, i);
            if *i >= b.len() || b[*i] != b')' {
                return Err(format!(
                    "expected ')' to close the pipeline of '{name}' in '{text}'"
                ));
            }
            *i += 1;
            els.push(Element::Nested {
                anchor: name,
                elements: inner,
            });
        } else if *i < b.len() && b[*i] == b'{' {
            *i += 1;
            let os = *i;
            let mut d = 1;
            while *i < b.len() && d > 0 {
                match b[*i] {
                    b'{' => d += 1,
                    b'}' => d -= 1,
                    _ => {}
                }
                *i += 1;
            }
            if d != 0 {
                return Err(format!(
                    "unterminated options '{{' for pass '{name}' in '{text}'"
                ));
            }
            els.push(Element::Pass {
                name,
                options: Some(text[os..*i - 1].trim().to_string()),
            });
        } else {
            els.push(Element::Pass {
                name,
                options: None,
            });
        }
        skip_ws(b, i);
        if *i < b.len() && b[*i] == b',' {
            *i += 1;
            continue;
        }
        return Ok(els);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn round_trip() {
        for t in [
            "builtin.module(func.func(canonicalize,cse),symbol-dce)",
            "any(cse)",
            "builtin.module(canonicalize{max-iterations=3 top-down=false})",
        ] {
            assert_eq!(parse(t).unwrap().to_string(), t);
        }
        assert!(parse("builtin.module(cse").is_err());
        assert!(parse("builtin.module(,)").is_err());
        assert!(parse("a{x=1").is_err());
    }
}
