//! Typed pass options, parsed from MLIR's `{key=value key2=value2}` syntax.

#[derive(Clone, Debug, PartialEq)]
pub enum OptionKind {
    Bool,
    Int,
    UInt,
    Float,
    String,
    /// One of the listed values.
    Enum(&'static [&'static str]),
    /// Comma-separated list of strings.
    List,
}

#[derive(Clone, Debug)]
pub struct OptionSpec {
    pub name: &'static str,
    pub kind: OptionKind,
    pub default: &'static str,
    pub description: &'static str,
}

#[derive(Clone, Debug)]
pub enum OptionValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<String>),
}

/// A pass's declared options and their current values.
#[derive(Clone, Debug)]
pub struct PassOptions {
    pub specs: Vec<OptionSpec>,
    values: Vec<OptionValue>,
}

impl PassOptions {
    pub fn new(specs: Vec<OptionSpec>) -> PassOptions {
        let values = specs
            .iter()
            .map(|s| parse_value(s, s.default).expect("valid option default"))
            .collect();
        PassOptions { specs, values }
    }
    fn idx(&self, name: &str) -> Option<usize> {
        self.specs.iter().position(|s| s.name == name)
    }
    /// Set `name` from text; errors name the option and the expected kind.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let i = self
            .idx(name)
            .ok_or_else(|| format!("no such option '{name}'"))?;
        self.values[i] = parse_value(&self.specs[i], value)?;
        Ok(())
    }
    /// The value of `name`, as parsed (`None` for an undeclared name).
    pub fn value(&self, name: &str) -> Option<&OptionValue> {
        self.idx(name).map(|i| &self.values[i])
    }
    /// The value of a declared option. A pass reading a name it did not declare is a bug
    /// of the pass (`opts.bool("mc-bloking")` returned false, silently): a panic naming
    /// it, which the pass manager reports as a crash of that pass.
    fn declared(&self, name: &str) -> &OptionValue {
        match self.idx(name) {
            Some(i) => &self.values[i],
            None => panic!(
                "pass option '{name}' is read but not declared (declared: {})",
                self.specs
                    .iter()
                    .map(|s| s.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
    fn wrong_kind(name: &str, v: &OptionValue, want: &str) -> ! {
        panic!("pass option '{name}' holds {v:?}, read as {want}")
    }
    pub fn bool(&self, name: &str) -> bool {
        match self.declared(name) {
            OptionValue::Bool(b) => *b,
            v => Self::wrong_kind(name, v, "a bool"),
        }
    }
    pub fn int(&self, name: &str) -> i64 {
        match self.declared(name) {
            OptionValue::Int(v) => *v,
            v => Self::wrong_kind(name, v, "an integer"),
        }
    }
    pub fn float(&self, name: &str) -> f64 {
        match self.declared(name) {
            OptionValue::Float(v) => *v,
            OptionValue::Int(v) => *v as f64,
            v => Self::wrong_kind(name, v, "a float"),
        }
    }
    pub fn str(&self, name: &str) -> String {
        match self.declared(name) {
            OptionValue::Str(v) => v.clone(),
            OptionValue::List(v) => v.join(","),
            v => Self::wrong_kind(name, v, "a string"),
        }
    }
    pub fn list(&self, name: &str) -> Vec<String> {
        match self.declared(name) {
            OptionValue::List(v) => v.clone(),
            OptionValue::Str(v) => vec![v.clone()],
            v => Self::wrong_kind(name, v, "a list"),
        }
    }
    /// `{a=1 b=true}` as MLIR prints pass options (every option, sorted by name).
    pub fn to_pipeline_string(&self) -> String {
        let mut items: Vec<(&str, String)> = self
            .specs
            .iter()
            .zip(&self.values)
            .map(|(s, v)| {
                let t = match v {
                    OptionValue::Bool(b) => b.to_string(),
                    OptionValue::Int(i) => i.to_string(),
                    OptionValue::Float(f) => f.to_string(),
                    OptionValue::Str(s) => s.clone(),
                    OptionValue::List(l) => l.join(","),
                };
                (s.name, t)
            })
            .collect();
        items.sort_by(|a, b| a.0.cmp(b.0));
        let body: Vec<String> = items.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{{{}}}", body.join(" "))
    }
}

fn parse_value(s: &OptionSpec, v: &str) -> Result<OptionValue, String> {
    let bad = |what: &str| {
        format!(
            "invalid value '{v}' for option '{}': expected {what}",
            s.name
        )
    };
    Ok(match &s.kind {
        OptionKind::Bool => match v {
            "" | "true" | "1" => OptionValue::Bool(true),
            "false" | "0" => OptionValue::Bool(false),
            _ => return Err(bad("true or false")),
        },
        OptionKind::Int => OptionValue::Int(v.parse().map_err(|_| bad("an integer"))?),
        OptionKind::UInt => {
            let x: i64 = v.parse().map_err(|_| bad("a non-negative integer"))?;
            if x < 0 {
                return Err(bad("a non-negative integer"));
            }
            OptionValue::Int(x)
        }
        OptionKind::Float => OptionValue::Float(v.parse().map_err(|_| bad("a number"))?),
        OptionKind::String => OptionValue::Str(v.to_string()),
        OptionKind::Enum(cases) => {
            if !cases.contains(&v) {
                return Err(bad(&format!("one of {}", cases.join(", "))));
            }
            OptionValue::Str(v.to_string())
        }
        OptionKind::List => OptionValue::List(if v.is_empty() {
            vec![]
        } else {
            v.split(',').map(|x| x.trim().to_string()).collect()
        }),
    })
}

/// Split `a=1 b="x y" c` into pairs (MLIR's option syntax; `c` alone means `c=true`).
pub fn split_options(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = vec![];
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        let ks = i;
        while i < b.len() && b[i] != b'=' && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        let key = text[ks..i].to_string();
        if key.is_empty() {
            return Err(format!("malformed option list '{text}'"));
        }
        let mut val = String::new();
        if i < b.len() && b[i] == b'=' {
            i += 1;
            if i < b.len() && (b[i] == b'"' || b[i] == b'\'') {
                let q = b[i];
                i += 1;
                let vs = i;
                while i < b.len() && b[i] != q {
                    i += 1;
                }
                if i >= b.len() {
                    return Err(format!("unterminated quote in option list '{text}'"));
                }
                val = text[vs..i].to_string();
                i += 1;
            } else {
                let vs = i;
                let mut depth = 0i32;
                while i < b.len() && (depth > 0 || !b[i].is_ascii_whitespace()) {
                    match b[i] {
                        b'{' | b'(' | b'[' => depth += 1,
                        b'}' | b')' | b']' => depth -= 1,
                        _ => {}
                    }
                    i += 1;
                }
                val = text[vs..i].to_string();
            }
        }
        out.push((key, val));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> PassOptions {
        PassOptions::new(vec![OptionSpec {
            name: "mc-blocking",
            kind: OptionKind::Bool,
            default: "true",
            description: "",
        }])
    }

    #[test]
    fn declared_options_read() {
        assert!(opts().bool("mc-blocking"));
    }

    /// A misspelled name returned false, silently (issue 27): now a panic naming it.
    #[test]
    #[should_panic(
        expected = "pass option 'mc-bloking' is read but not declared (declared: mc-blocking)"
    )]
    fn an_undeclared_option_is_a_bug_of_the_pass() {
        opts().bool("mc-bloking");
    }

    #[test]
    #[should_panic(expected = "pass option 'mc-blocking' holds Bool(true), read as an integer")]
    fn a_kind_mismatch_is_a_bug_of_the_pass() {
        opts().int("mc-blocking");
    }
}
