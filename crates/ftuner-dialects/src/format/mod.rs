//! An interpreter for MLIR's declarative assembly format (`assembly_format` in the specs):
//! the same format string drives both parsing and printing, with MLIR's spacing rules.
//!
//! Supported: `$operand`, `$attr`, `$region`, `$successor`, `type($x)`, `type(operands)`,
//! `type(results)`, `functional-type(a, b)`, `attr-dict`, `attr-dict-with-keyword`,
//! literals and keywords in backquotes, the spacing literals `` and ` `, optional groups
//! `(...)?` with a `^` anchor, `operands`, `results`, `qualified(...)`, and
//! `custom<DynamicIndexList>(...)`.
//!
//! One concept per file: `syntax` (the format string's elements), `parse` (parsing an
//! op's custom form by its format), `finish` (type inference and operand resolution at
//! the end of parsing) and `print`; this file has the format cache and what the others
//! share about an op's definition.

mod finish;
mod parse;
mod print;
mod syntax;

pub use parse::{parse, parse_attr_text, parse_dynamic_index_list};
pub use print::{print, print_dynamic_index_list, print_dynamic_index_list_in};

use ftuner_ir::dialect::{Arity, OpDef};
use rustc_hash::FxHashMap;
use std::sync::{Arc, LazyLock, Mutex};
use syntax::tokenize_format;

#[derive(Debug, Clone)]
enum Elem {
    Lit(String),
    Var(String),
    TypeOf(Vec<String>),
    FunctionalType(String, String),
    AttrDict(bool),
    Optional(Vec<Elem>, String),
    Custom(String, Vec<String>),
}

type FormatCache = Mutex<FxHashMap<&'static str, Arc<Vec<Elem>>>>;
static CACHE: LazyLock<FormatCache> = LazyLock::new(Default::default);

fn format_of(def: &OpDef) -> Result<Arc<Vec<Elem>>, String> {
    let f = def.format.ok_or("op has no assembly format")?;
    let mut c = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(v) = c.get(f) {
        return Ok(v.clone());
    }
    let v = Arc::new(
        tokenize_format(f).map_err(|e| format!("{}: bad assembly format: {e}", def.name))?,
    );
    c.insert(f, v.clone());
    Ok(v)
}

/// Check that every spec's format is well formed (used by tests).
pub fn check_format(def: &OpDef) -> Result<(), String> {
    format_of(def).map(|_| ())
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Operand(Arity),
    Result(Arity),
    Attr,
    Region,
    Successor,
}

fn kind_of(def: &OpDef, name: &str) -> Option<Kind> {
    if let Some(a) = def.operands.iter().find(|a| a.name == name) {
        return Some(Kind::Operand(a.arity));
    }
    if let Some(a) = def.results.iter().find(|a| a.name == name) {
        return Some(Kind::Result(a.arity));
    }
    if def.attributes.iter().any(|a| a.name == name) {
        return Some(Kind::Attr);
    }
    if name.starts_with("region") || name == "body" || name == "thenRegion" || name == "elseRegion"
    {
        return Some(Kind::Region);
    }
    if name == "dest" || name.ends_with("Dest") || name == "successors" {
        return Some(Kind::Successor);
    }
    None
}

fn attr_constraint<'d>(def: &'d OpDef, name: &str) -> &'d str {
    def.attributes
        .iter()
        .find(|a| a.name == name)
        .map(|a| a.constraint)
        .unwrap_or("AnyAttr")
}

fn op_dialect(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}
