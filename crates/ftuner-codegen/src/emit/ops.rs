//! The per-function translation state ([`Fn`]: value texts, the body being written, the
//! intrinsic declarations), its value helpers, and the dispatch of one op to the function
//! of its family; constants and scalar arithmetic (binary ops, casts, compares, `select`)
//! are here too.

use super::types::ty;
use super::{err, prop, EmitError, R};
use crate::literals::const_lit;
use ftuner_ir::{BlockId, Ir, OpId, Value};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::fmt::Write;

pub(super) struct Fn<'a> {
    pub(super) ir: &'a Ir,
    /// Value -> operand text (`%vN`, or a literal for constants).
    pub(super) vals: FxHashMap<Value, String>,
    pub(super) out: String,
    pub(super) decls: &'a mut BTreeMap<String, String>,
}

/// The LLVM instruction of a binary `llvm.*` op (its short name).
fn binary_inst(s: &str) -> Option<&'static str> {
    Some(match s {
        "add" => "add",
        "sub" => "sub",
        "mul" => "mul",
        "sdiv" => "sdiv",
        "udiv" => "udiv",
        "srem" => "srem",
        "urem" => "urem",
        "and" => "and",
        "or" => "or",
        "xor" => "xor",
        "shl" => "shl",
        "lshr" => "lshr",
        "ashr" => "ashr",
        "fadd" => "fadd",
        "fsub" => "fsub",
        "fmul" => "fmul",
        "fdiv" => "fdiv",
        "frem" => "frem",
        _ => return None,
    })
}

/// An op's `fastmathFlags` (`#llvm.fastmath<nnan, ninf>`) as LLVM IR's instruction flags
/// (` nnan ninf`); empty for none.
pub(super) fn fast_math_flags(ir: &Ir, op: OpId) -> String {
    let Some(a) = prop(ir, op, "fastmathFlags") else {
        return String::new();
    };
    ftuner_dialects::util::fastmath_flags(a, "llvm")
        .into_iter()
        .filter(|f| {
            matches!(
                *f,
                "nnan" | "ninf" | "nsz" | "arcp" | "contract" | "afn" | "reassoc" | "fast"
            )
        })
        .map(|f| format!(" {f}"))
        .collect()
}

/// The LLVM instruction of a cast `llvm.*` op (its short name).
fn cast_inst(s: &str) -> Option<&'static str> {
    Some(match s {
        "sext" => "sext",
        "zext" => "zext",
        "trunc" => "trunc",
        "sitofp" => "sitofp",
        "uitofp" => "uitofp",
        "fptosi" => "fptosi",
        "fptoui" => "fptoui",
        "fpext" => "fpext",
        "fptrunc" => "fptrunc",
        "bitcast" => "bitcast",
        "ptrtoint" => "ptrtoint",
        "inttoptr" => "inttoptr",
        _ => return None,
    })
}

impl Fn<'_> {
    pub(super) fn name(&mut self, v: Value) -> String {
        format!("%v{}", v.index())
    }
    pub(super) fn get(&self, op: OpId, v: Value) -> R<String> {
        self.vals
            .get(&v)
            .cloned()
            .map_or_else(|| err(op, "uses a value that is not defined before it"), Ok)
    }
    pub(super) fn vty(&self, op: OpId, v: Value) -> R<String> {
        let t = self.ir.value_type(v);
        ty(t).map_or_else(|| err(op, format!("type {t} has no LLVM equivalent")), Ok)
    }
    pub(super) fn typed(&self, op: OpId, v: Value) -> R<String> {
        Ok(format!("{} {}", self.vty(op, v)?, self.get(op, v)?))
    }
    /// The LLVM type of the op's first result.
    pub(super) fn res_ty(&self, op: OpId) -> R<String> {
        let ir = self.ir;
        let r = *ir.results(op).first().ok_or(EmitError {
            op: Some(op),
            message: "has no result".into(),
        })?;
        let t = ir.value_type(r);
        ty(t).map_or_else(|| err(op, format!("type {t} has no LLVM equivalent")), Ok)
    }
    pub(super) fn def(&mut self, op: OpId, text: String) -> R<()> {
        let r = *self.ir.results(op).first().ok_or(EmitError {
            op: Some(op),
            message: "has no result".into(),
        })?;
        let n = self.name(r);
        let _ = writeln!(self.out, "  {n} = {text}");
        self.vals.insert(r, n);
        Ok(())
    }

    /// Translates one op: dispatches on its name to the function of its family.
    pub(super) fn op(&mut self, op: OpId, block_of: &FxHashMap<BlockId, String>) -> R<()> {
        let name = self.ir.name(op);
        let short = name.strip_prefix("llvm.").unwrap_or(name);
        if let Some(i) = binary_inst(short) {
            let ops = self.ir.operands(op);
            let a = self.typed(op, ops[0])?;
            let b = self.get(op, ops[1])?;
            let fm = fast_math_flags(self.ir, op);
            return self.def(op, format!("{i}{fm} {a}, {b}"));
        }
        if let Some(c) = cast_inst(short) {
            let a = self.typed(op, self.ir.operands(op)[0])?;
            let t = self.res_ty(op)?;
            return self.def(op, format!("{c} {a} to {t}"));
        }
        if let Some(intr) = short.strip_prefix("intr.") {
            return self.intrinsic(op, intr);
        }
        match short {
            "mlir.constant" | "mlir.undef" | "mlir.poison" | "mlir.zero" | "mlir.addressof" => {
                self.constant(op, short)
            }
            "fneg" | "icmp" | "fcmp" | "select" => self.scalar(op, short),
            "extractvalue" | "insertvalue" | "insertelement" | "extractelement"
            | "shufflevector" => self.aggregate(op, short),
            "getelementptr" | "load" | "store" | "alloca" => self.memory(op, short),
            "call" | "br" | "cond_br" | "return" | "unreachable" => {
                self.control(op, short, block_of)
            }
            _ => err(op, "has no LLVM IR translation"),
        }
    }

    /// `llvm.mlir.constant`, `undef`, `poison`, `zero` and `addressof`: no instruction,
    /// the result's text is a literal (inlined at every use).
    fn constant(&mut self, op: OpId, short: &str) -> R<()> {
        let ir = self.ir;
        match short {
            "mlir.constant" => {
                let t = self.res_ty(op)?;
                let a = prop(ir, op, "value").ok_or(EmitError {
                    op: Some(op),
                    message: "has no value".into(),
                })?;
                let lit = const_lit(a, &t).map_or_else(
                    || err(op, format!("constant {a:?} of type {t} is not supported")),
                    Ok,
                )?;
                let r = ir.result(op, 0);
                self.vals.insert(r, lit);
            }
            "mlir.addressof" => {
                let g = prop(ir, op, "global_name")
                    .and_then(|a| a.as_symbol())
                    .map_or_else(|| err(op, "has no global_name"), Ok)?;
                self.vals.insert(ir.result(op, 0), format!("@{g}"));
            }
            _ => {
                let t = self.res_ty(op)?;
                let lit = match short {
                    "mlir.undef" => "undef",
                    "mlir.poison" => "poison",
                    _ if t == "ptr" => "null",
                    _ => "zeroinitializer",
                };
                self.vals.insert(ir.result(op, 0), lit.into());
            }
        }
        Ok(())
    }

    /// `llvm.fneg`, `icmp`, `fcmp` and `select`.
    fn scalar(&mut self, op: OpId, short: &str) -> R<()> {
        let ir = self.ir;
        let ops = ir.operands(op);
        match short {
            "fneg" => {
                let a = self.typed(op, ops[0])?;
                self.def(op, format!("fneg {a}"))
            }
            "select" => {
                let c = self.typed(op, ops[0])?;
                let a = self.typed(op, ops[1])?;
                let b = self.typed(op, ops[2])?;
                self.def(op, format!("select {c}, {a}, {b}"))
            }
            _ => {
                let p = prop(ir, op, "predicate")
                    .and_then(|a| a.as_i64())
                    .map_or_else(|| err(op, "has no predicate"), Ok)?;
                let names: &[&str] = if short == "icmp" {
                    &[
                        "eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge",
                    ]
                } else {
                    &[
                        "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt",
                        "uge", "ult", "ule", "une", "uno", "true",
                    ]
                };
                let pn = names
                    .get(p as usize)
                    .map_or_else(|| err(op, format!("unknown predicate {p}")), Ok)?;
                let a = self.typed(op, ops[0])?;
                let b = self.get(op, ops[1])?;
                self.def(op, format!("{short} {pn} {a}, {b}"))
            }
        }
    }
}
