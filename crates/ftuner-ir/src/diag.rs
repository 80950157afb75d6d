//! Diagnostics with locations, in MLIR's wording and layout:
//! `file.mlir:12:10: error: 'linalg.matmul' op ...`, then the source line and a caret.

use crate::attrs::{AttrKind, Attribute, LocKind};
use std::fmt::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Note,
    Remark,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Remark => "remark",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub severity: Severity,
    pub loc: Attribute,
    pub message: String,
    pub notes: Vec<Diagnostic>,
}

impl Diagnostic {
    pub fn error(loc: Attribute, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            loc,
            message: message.into(),
            notes: vec![],
        }
    }
    pub fn warning(loc: Attribute, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            loc,
            message: message.into(),
            notes: vec![],
        }
    }
    pub fn remark(loc: Attribute, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Remark,
            loc,
            message: message.into(),
            notes: vec![],
        }
    }
    pub fn with_note(mut self, loc: Attribute, message: impl Into<String>) -> Diagnostic {
        self.notes.push(Diagnostic {
            severity: Severity::Note,
            loc,
            message: message.into(),
            notes: vec![],
        });
        self
    }
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&render(self, &SourceMap::default()))
    }
}

/// The file, line and column a location points to, looking through names, call sites
/// (the callee) and fused locations (the first one with a position).
pub fn file_line_col(loc: Attribute) -> Option<(&'static str, u32, u32)> {
    match loc.kind() {
        AttrKind::Location(l) => match l {
            LocKind::FileLineCol { file, line, col } => Some((file, *line, *col)),
            LocKind::Name { child, .. } => child.and_then(file_line_col),
            LocKind::CallSite { callee, .. } => file_line_col(*callee),
            LocKind::Fused { locs, .. } => locs.iter().find_map(|l| file_line_col(*l)),
            LocKind::Unknown => None,
        },
        _ => None,
    }
}

/// Source texts by file name, for showing the offending line.
#[derive(Default, Clone)]
pub struct SourceMap {
    pub files: Vec<(String, std::sync::Arc<str>)>,
}

impl SourceMap {
    pub fn add(&mut self, name: &str, text: std::sync::Arc<str>) {
        self.files.push((name.to_string(), text));
    }
    fn line(&self, file: &str, line: u32) -> Option<String> {
        let (_, text) = self.files.iter().rev().find(|(n, _)| n == file)?;
        text.lines()
            .nth(line.checked_sub(1)? as usize)
            .map(|s| s.to_string())
    }
}

/// `file:line:col: error: message` + source line + caret, then the notes.
pub fn render(d: &Diagnostic, sources: &SourceMap) -> String {
    let mut out = String::new();
    render_one(&mut out, d, sources);
    for n in &d.notes {
        render_one(&mut out, n, sources);
    }
    out
}

fn render_one(out: &mut String, d: &Diagnostic, sources: &SourceMap) {
    match file_line_col(d.loc) {
        Some((file, line, col)) => {
            let _ = writeln!(
                out,
                "{file}:{line}:{col}: {}: {}",
                d.severity.as_str(),
                d.message
            );
            if let Some(text) = sources.line(file, line) {
                let _ = writeln!(out, "{text}");
                let caret_col = (col.max(1) - 1) as usize;
                let pad: String = text
                    .chars()
                    .take(caret_col)
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect();
                let _ = writeln!(out, "{pad}^");
            }
        }
        None => {
            let _ = writeln!(out, "loc(unknown): {}: {}", d.severity.as_str(), d.message);
        }
    }
}
