//! The `llvm` dialect as LLVM's textual IR, op by op (what `mlir-translate --mlir-to-llvmir`
//! does for these ops): block arguments become `phi`s fed by the branches into the block,
//! `llvm.mlir.constant`s are inlined as literals, intrinsics are declared on first use.
//! Pure Rust: no LLVM here; [`crate::Compiler`] parses the text with LLVM.
//!
//! The translation is split by concept: `types` (type text), `ops` (the per-function
//! state and the dispatch of an op to its family: constants, scalar arithmetic),
//! `intrinsics`, `aggregate`, `memory` and `control` (the op families),
//! `function` (a function's signature, blocks and phis) and `packed` (the JIT's packed
//! entries); this file has the module: globals, functions, declarations.

mod aggregate;
mod control;
mod function;
mod intrinsics;
mod memory;
mod ops;
mod packed;
mod types;

pub use types::ty;

use crate::literals::{const_lit, resource_lit};
use ftuner_ir::{Attribute, Ir, OpId};
use ops::Fn;
use std::collections::BTreeMap;
use std::fmt::Write;

/// A translation error at an op.
#[derive(Debug, Clone)]
pub struct EmitError {
    pub op: Option<OpId>,
    pub message: String,
}

type R<T> = Result<T, EmitError>;

fn err<T>(op: OpId, m: impl Into<String>) -> R<T> {
    Err(EmitError {
        op: Some(op),
        message: m.into(),
    })
}

fn prop(ir: &Ir, op: OpId, k: &str) -> Option<Attribute> {
    ir.attr(op, k)
}

/// Extra attributes for every function definition (`target-cpu`, `target-features`).
#[derive(Clone, Debug, Default)]
pub struct FnAttrs {
    pub cpu: Option<String>,
    pub features: Option<String>,
    /// NVPTX kernels: functions named here get the PTX kernel calling convention (71).
    pub kernels: Vec<String>,
    /// Emit `_ftuner_packed_*` entries (host JIT); off for GPU code.
    pub packed: bool,
}

/// The module's text as it is assembled: definitions in order, declarations of callees
/// and intrinsics (written at the end, unless also defined), and the packed entries to add.
#[derive(Default)]
struct ModuleText {
    out: String,
    decls: BTreeMap<String, String>,
    defined: Vec<String>,
    /// `(name without _mlir_ciface_, return type, parameter types)`.
    packed: Vec<(String, String, Vec<String>)>,
}

/// The module's `llvm.func`s and `llvm.mlir.global`s as textual LLVM IR. Every
/// `_mlir_ciface_NAME` also gets `_ftuner_packed_NAME(ptr %args)`, which takes an array of
/// pointers (one per argument, then one for a returned value) so the JIT can call any
/// signature through one function-pointer type.
pub fn module_to_llvm_ir(ir: &Ir, top: OpId, attrs: &FnAttrs) -> Result<String, EmitError> {
    let mut m = ModuleText::default();
    let body = ir
        .regions_of(top)
        .first()
        .and_then(|r| ir.region_entry(*r))
        .ok_or(EmitError {
            op: Some(top),
            message: "module has no body".into(),
        })?;
    let mut attr_text = String::new();
    if let Some(c) = &attrs.cpu {
        let _ = write!(attr_text, "\"target-cpu\"=\"{c}\" ");
    }
    if let Some(f) = &attrs.features {
        let _ = write!(attr_text, "\"target-features\"=\"{f}\" ");
    }
    for op in ir.block_ops(body) {
        match ir.name(op) {
            "llvm.mlir.global" => global(ir, op, &mut m.out)?,
            "llvm.func" => function::function(ir, op, attrs, &mut m)?,
            "gpu.module" => {} // translated on its own (its body is a module)
            other if other.starts_with("llvm.") => {}
            _ => return err(op, "is not in the llvm dialect: run convert-to-llvm first"),
        }
    }
    let mut out = m.out;
    for (name, ret, params) in m.packed {
        packed::packed_entry(&mut out, &name, &ret, &params);
    }
    for (name, d) in m.decls {
        if !m.defined.contains(&name) {
            let _ = writeln!(out, "{d}");
        }
    }
    let _ = writeln!(out, "\nattributes #0 = {{ {attr_text}}}");
    Ok(out)
}

/// An `llvm.mlir.global` as a private global or constant with its initializer.
fn global(ir: &Ir, op: OpId, out: &mut String) -> R<()> {
    let name = ir
        .symbol_name(op)
        .map_or_else(|| err(op, "has no name"), Ok)?;
    let gt = prop(ir, op, "global_type")
        .and_then(|a| a.as_type())
        .and_then(ty)
        .map_or_else(|| err(op, "has no global_type"), Ok)?;
    let init = match prop(ir, op, "value") {
        Some(v) => match resource_lit(ir, v) {
            Some(r) => r.map_err(|m| EmitError {
                op: Some(op),
                message: m,
            })?,
            None => {
                const_lit(v, &gt).map_or_else(|| err(op, "initial value is not supported"), Ok)?
            }
        },
        None => "zeroinitializer".into(),
    };
    let kind = if prop(ir, op, "constant").is_some() {
        "constant"
    } else {
        "global"
    };
    let align = prop(ir, op, "alignment")
        .and_then(|a| a.as_i64())
        .map(|a| format!(", align {a}"))
        .unwrap_or_default();
    let _ = writeln!(out, "@{name} = private {kind} {gt} {init}{align}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_llvm_ops_are_errors_not_panics() {
        let ctx = ftuner_dialects::context();
        let m = ftuner_ir::parse_module(
            &ctx,
            "func.func @f(%a: i64) -> i64 {\n  return %a : i64\n}",
            "t.mlir",
        )
        .unwrap();
        let e = module_to_llvm_ir(&m.ir, m.top, &FnAttrs::default()).unwrap_err();
        assert!(e.message.contains("convert-to-llvm"), "{}", e.message);
    }
}
