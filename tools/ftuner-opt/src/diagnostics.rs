//! `--verify-diagnostics`: match emitted diagnostics against `// expected-error {{...}}`
//! annotations (with `@+N`, `@-N`, `@N`, `@above`, `@below` and `-re` regex forms).

use ftuner_ir::{diag::file_line_col, Diagnostic, Severity};
use regex::Regex;

#[derive(Debug)]
pub struct Expected {
    pub severity: Severity,
    pub line: u32,
    pub annotation_line: u32,
    pub col: u32,
    pub pattern: Pattern,
    pub text: String,
    pub matched: bool,
}

#[derive(Debug)]
pub enum Pattern {
    Substring(String),
    Regex(Regex),
}

/// Collect the expectations in `src` (line numbers are of `src` plus `line_offset`).
pub fn parse_expectations(src: &str, line_offset: u32) -> Result<Vec<Expected>, String> {
    let re = Regex::new(
        r"expected-(error|warning|note|remark)(-re)?(?:\s*)(@(above|below|[+-]?\d+))?\s*\{\{(.*)\}\}",
    )
    .map_err(|e| e.to_string())?;
    let mut out = vec![];
    for (i, line) in src.lines().enumerate() {
        let lno = i as u32 + 1 + line_offset;
        for c in re.captures_iter(line) {
            let severity = match &c[1] {
                "error" => Severity::Error,
                "warning" => Severity::Warning,
                "note" => Severity::Note,
                _ => Severity::Remark,
            };
            let target = match c.get(4).map(|m| m.as_str()) {
                None => lno,
                Some("above") => lno - 1,
                Some("below") => lno + 1,
                Some(s) if s.starts_with('+') => {
                    lno + s[1..].parse::<u32>().map_err(|e| e.to_string())?
                }
                Some(s) if s.starts_with('-') => {
                    lno.saturating_sub(s[1..].parse::<u32>().map_err(|e| e.to_string())?)
                }
                Some(s) => s.parse::<u32>().map_err(|e| e.to_string())? + line_offset,
            };
            let body = c[5].to_string();
            let pattern = if c.get(2).is_some() {
                // `{{regex}}` segments inside the text are regexes; the rest is literal.
                let mut rx = String::new();
                let mut rest = body.as_str();
                while let Some(s) = rest.find("{{") {
                    rx.push_str(&regex::escape(&rest[..s]));
                    let after = &rest[s + 2..];
                    let e = after.find("}}").ok_or_else(|| {
                        format!("line {lno}: unterminated regex in expected-*-re")
                    })?;
                    rx.push_str(&after[..e]);
                    rest = &after[e + 2..];
                }
                rx.push_str(&regex::escape(rest));
                Pattern::Regex(
                    Regex::new(&rx).map_err(|e| format!("line {lno}: invalid regex: {e}"))?,
                )
            } else {
                Pattern::Substring(body.clone())
            };
            let col = c.get(0).map(|m| m.start() as u32 + 1).unwrap_or(1);
            out.push(Expected {
                severity,
                line: target,
                annotation_line: lno,
                col,
                pattern,
                text: body,
                matched: false,
            });
        }
    }
    Ok(out)
}

fn matches(p: &Pattern, msg: &str) -> bool {
    match p {
        Pattern::Substring(s) => msg.contains(s.as_str()),
        Pattern::Regex(r) => r.is_match(msg),
    }
}

/// Check `diags` against `exp`; returns error messages (empty when everything matched).
pub fn check(file: &str, diags: &[Diagnostic], exp: &mut [Expected]) -> Vec<String> {
    let mut errors = vec![];
    let mut all: Vec<(&Diagnostic, bool)> = vec![];
    for d in diags {
        all.push((d, false));
        for n in &d.notes {
            all.push((n, true));
        }
    }
    for (d, is_attached_note) in all {
        let line = file_line_col(d.loc).map(|(_, l, _)| l);
        let found = exp.iter_mut().find(|e| {
            !e.matched
                && e.severity == d.severity
                && Some(e.line) == line
                && matches(&e.pattern, &d.message)
        });
        match found {
            Some(e) => e.matched = true,
            None => {
                if is_attached_note {
                    continue;
                }
                let (f, l, c) = file_line_col(d.loc).unwrap_or((file, 0, 0));
                errors.push(format!(
                    "{f}:{l}:{c}: error: unexpected {}: {}",
                    d.severity.as_str(),
                    d.message
                ));
            }
        }
    }
    for e in exp.iter().filter(|e| !e.matched) {
        errors.push(format!(
            "{file}:{}:{}: error: expected {} \"{}\" was not produced",
            e.annotation_line,
            e.col,
            e.severity.as_str(),
            e.text
        ));
    }
    errors
}
