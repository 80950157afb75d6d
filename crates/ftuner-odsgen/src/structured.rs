//! A named structured op's definition as data (MLIR's OpDSL): its indexing maps and the
//! scalar body of one output element, from the spec's `structured` table, checked here and
//! generated as a `ftuner_dialects::linalg::named::Named` constant of the op's wrapper.
//!
//! ```toml
//! structured = { maps = ["(n, ow, f, kw, c) -> (n, ow * strides[0] + kw * dilations[0], c)",
//!                        "(n, ow, f, kw, c) -> (kw, c, f)", "(n, ow, f, kw, c) -> (n, ow, f)"],
//!                body = "add(out, mul(cast(in0), cast(in1)))" }
//! structured = { elementwise = true, body = "exp(cast(in0))" }
//! ```
//!
//! `maps`: one per operand (inputs, then the output), over the loop dims in the op's
//! iteration order; each result is a sum of dims, each alone or times an element of an
//! integer-array attribute (`strides[0]`; absent, it is 1). `elementwise`: every shaped
//! operand is indexed by the identity of the output's rank and a scalar by none (rank
//! polymorphic: `linalg.add`, `fill`, `copy`). Neither: the maps come from the op's own
//! hook (`transpose`, `broadcast`, as upstream builds them in C++). `body`: `in<i>`,
//! `out`, `cast(e)` (to the output's element type, signed or per the op's `cast`
//! attribute), the binary `add sub mul div max min powf` and the unary `exp log abs ceil
//! floor negf sqrt rsqrt tanh erf reciprocal square`, each the float or integer `arith` /
//! `math` op of its operand's type.

use serde::Deserialize;

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct StructuredSpec {
    #[serde(default)]
    pub maps: Vec<String>,
    #[serde(default)]
    pub elementwise: bool,
    pub body: String,
}

const BINARY: &[(&str, &str)] = &[
    ("add", "Add"),
    ("sub", "Sub"),
    ("mul", "Mul"),
    ("div", "Div"),
    ("max", "Max"),
    ("min", "Min"),
    ("powf", "Pow"),
];
const UNARY: &[(&str, &str)] = &[
    ("exp", "Exp"),
    ("log", "Log"),
    ("abs", "Abs"),
    ("ceil", "Ceil"),
    ("floor", "Floor"),
    ("negf", "Negf"),
    ("sqrt", "Sqrt"),
    ("rsqrt", "Rsqrt"),
    ("tanh", "Tanh"),
    ("erf", "Erf"),
    ("reciprocal", "Reciprocal"),
    ("square", "Square"),
];

const P: &str = "crate::linalg::named";

/// The Rust constant of `s` (a `Named`), or what is wrong with it.
pub fn rust(s: &StructuredSpec) -> Result<String, String> {
    let maps = if s.elementwise {
        if !s.maps.is_empty() {
            return Err("structured: `elementwise` and `maps` exclude each other".into());
        }
        format!("{P}::Maps::Elementwise")
    } else if s.maps.is_empty() {
        format!("{P}::Maps::Hook")
    } else {
        let mut dims: Option<Vec<String>> = None;
        let mut out = vec![];
        for m in &s.maps {
            let (d, results) = map(m)?;
            match &dims {
                Some(x) if *x != d => {
                    return Err(format!("map '{m}': other loop dims than the first map's"))
                }
                Some(_) => {}
                None => dims = Some(d.clone()),
            }
            out.push(results);
        }
        let dims = dims.unwrap_or_default();
        let mut rs = vec![];
        for results in out {
            let mut es = vec![];
            for terms in results {
                let mut ts = vec![];
                for (dim, coef) in terms {
                    let k = dims
                        .iter()
                        .position(|x| *x == dim)
                        .ok_or(format!("unknown loop dim '{dim}'"))?;
                    ts.push(match coef {
                        None => format!("{P}::Term {{ dim: {k}, coef: None }}"),
                        Some((a, i)) => {
                            format!("{P}::Term {{ dim: {k}, coef: Some(({a:?}, {i})) }}")
                        }
                    });
                }
                es.push(format!("&[{}]", ts.join(", ")));
            }
            rs.push(format!("&[{}]", es.join(", ")));
        }
        format!(
            "{P}::Maps::Affine {{ dims: {}, maps: &[{}] }}",
            dims.len(),
            rs.join(", ")
        )
    };
    let mut p = Parser {
        s: s.body.as_bytes(),
        i: 0,
        inputs: 0,
    };
    let body = p.expr()?;
    p.ws();
    if p.i != p.s.len() {
        return Err(format!("body '{}': trailing text at {}", s.body, p.i));
    }
    // With maps, one per input and the output's: the body reads inputs that have one.
    if !s.maps.is_empty() && p.inputs > s.maps.len() - 1 {
        return Err(format!(
            "body '{}' reads input {} of {} (one map per input, then the output's)",
            s.body,
            p.inputs - 1,
            s.maps.len() - 1
        ));
    }
    Ok(format!("{P}::Named {{ maps: {maps}, body: {body} }}"))
}

/// A term of a map result: a loop dim, times `attr[i]` or 1.
type Term = (String, Option<(String, usize)>);

/// `(d, ...) -> (r, ...)`: the loop dims and each result's terms.
fn map(m: &str) -> Result<(Vec<String>, Vec<Vec<Term>>), String> {
    let (l, r) = m
        .split_once("->")
        .ok_or(format!("map '{m}': expected '(dims) -> (results)'"))?;
    let inner = |x: &str| -> Result<String, String> {
        let x = x.trim();
        x.strip_prefix('(')
            .and_then(|x| x.strip_suffix(')'))
            .map(str::to_string)
            .ok_or(format!("map '{m}': expected a parenthesized list in '{x}'"))
    };
    let list = |x: String| -> Vec<String> {
        x.split(',')
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect()
    };
    let dims = list(inner(l)?);
    if let Some(d) = dims
        .iter()
        .enumerate()
        .find_map(|(i, d)| dims[..i].contains(d).then_some(d))
    {
        return Err(format!("map '{m}': loop dim '{d}' named twice"));
    }
    let mut results = vec![];
    for r in list(inner(r)?) {
        let mut terms = vec![];
        for t in r.split('+') {
            let t = t.trim();
            let term = match t.split_once('*') {
                None => (t.to_string(), None),
                Some((d, c)) => {
                    let c = c.trim();
                    let (a, i) = c
                        .strip_suffix(']')
                        .and_then(|c| c.split_once('['))
                        .ok_or(format!("map '{m}': expected 'dim * attr[i]' in '{t}'"))?;
                    let i = i
                        .parse::<usize>()
                        .map_err(|_| format!("map '{m}': bad index in '{t}'"))?;
                    (d.trim().to_string(), Some((a.to_string(), i)))
                }
            };
            terms.push(term);
        }
        results.push(terms);
    }
    Ok((dims, results))
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    /// One more than the highest input read.
    inputs: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn ident(&mut self) -> String {
        self.ws();
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_')
        {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }
    fn eat(&mut self, c: u8) -> Result<(), String> {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!(
                "body '{}': expected '{}' at {}",
                String::from_utf8_lossy(self.s),
                c as char,
                self.i
            ))
        }
    }
    /// One expression, as the Rust of a `&'static Expr`'s target.
    fn expr(&mut self) -> Result<String, String> {
        let id = self.ident();
        if id == "out" {
            return Ok(format!("{P}::Expr::Out"));
        }
        if let Some(k) = id.strip_prefix("in").and_then(|k| k.parse::<usize>().ok()) {
            self.inputs = self.inputs.max(k + 1);
            return Ok(format!("{P}::Expr::In({k})"));
        }
        self.eat(b'(')?;
        let a = self.expr()?;
        let r = if id == "cast" {
            format!("{P}::Expr::Cast(&{a})")
        } else if let Some((_, v)) = UNARY.iter().find(|(n, _)| *n == id) {
            format!("{P}::Expr::Unary({P}::Unary::{v}, &{a})")
        } else if let Some((_, v)) = BINARY.iter().find(|(n, _)| *n == id) {
            self.eat(b',')?;
            let b = self.expr()?;
            format!("{P}::Expr::Binary({P}::Binary::{v}, &{a}, &{b})")
        } else {
            return Err(format!(
                "body '{}': unknown function '{id}'",
                String::from_utf8_lossy(self.s)
            ));
        };
        self.eat(b')')?;
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(maps: &[&str], body: &str) -> StructuredSpec {
        StructuredSpec {
            maps: maps.iter().map(|m| m.to_string()).collect(),
            elementwise: false,
            body: body.into(),
        }
    }

    #[test]
    fn malformed_definitions_fail_the_build() {
        let mm = [
            "(m, n, k) -> (m, k)",
            "(m, n, k) -> (k, n)",
            "(m, n, k) -> (m, n)",
        ];
        assert!(rust(&spec(&mm, "add(out, mul(cast(in0), cast(in1)))")).is_ok());
        for (maps, body, why) in [
            (&mm[..], "add(out, mul(in0, in2))", "reads input 2 of 2"),
            (&mm[..], "fma(out, in0)", "unknown function 'fma'"),
            (&mm[..], "add(out, in0", "expected ')'"),
            (
                &["(m, m) -> (m)", "(m, m) -> (m)"][..],
                "cast(in0)",
                "named twice",
            ),
            (
                &["(m, n) -> (m, x)", "(m, n) -> (m)"][..],
                "cast(in0)",
                "unknown loop dim 'x'",
            ),
            (
                &["(m) -> (m * strides)", "(m) -> (m)"][..],
                "cast(in0)",
                "expected 'dim * attr[i]'",
            ),
            (
                &["(m) -> (m)", "(m, n) -> (m)"][..],
                "cast(in0)",
                "other loop dims",
            ),
        ] {
            let e = rust(&spec(maps, body)).unwrap_err();
            assert!(e.contains(why), "{maps:?} {body}: {e}");
        }
    }
}
