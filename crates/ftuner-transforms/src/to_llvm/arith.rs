//! `arith` to `llvm` (MLIR's `ArithToLLVM`): one-to-one ops by table, constants (index
//! constants remembered for folding), comparisons, index casts, integer min/max as
//! compare-and-select, and floor/ceil division (signed and unsigned). An integer division first gets its
//! run-time check (checks.rs).

use super::types::{conv, retype_dense};
use super::{unsupported, Cv, R};
use ftuner_ir::{Attribute, OpId, Type};

/// The `llvm` op of an `arith` op that converts one to one.
fn one_to_one(name: &str) -> Option<&'static str> {
    Some(match name {
        "arith.addi" => "llvm.add",
        "arith.subi" => "llvm.sub",
        "arith.muli" => "llvm.mul",
        "arith.divsi" => "llvm.sdiv",
        "arith.divui" => "llvm.udiv",
        "arith.remsi" => "llvm.srem",
        "arith.remui" => "llvm.urem",
        "arith.andi" => "llvm.and",
        "arith.ori" => "llvm.or",
        "arith.xori" => "llvm.xor",
        "arith.shli" => "llvm.shl",
        "arith.shrsi" => "llvm.ashr",
        "arith.shrui" => "llvm.lshr",
        "arith.addf" => "llvm.fadd",
        "arith.subf" => "llvm.fsub",
        "arith.mulf" => "llvm.fmul",
        "arith.divf" => "llvm.fdiv",
        "arith.remf" => "llvm.frem",
        "arith.negf" => "llvm.fneg",
        "arith.select" => "llvm.select",
        "arith.extf" => "llvm.fpext",
        "arith.truncf" => "llvm.fptrunc",
        "arith.extsi" => "llvm.sext",
        "arith.extui" => "llvm.zext",
        "arith.trunci" => "llvm.trunc",
        "arith.sitofp" => "llvm.sitofp",
        "arith.uitofp" => "llvm.uitofp",
        "arith.fptosi" => "llvm.fptosi",
        "arith.fptoui" => "llvm.fptoui",
        "arith.bitcast" => "llvm.bitcast",
        "arith.maximumf" => "llvm.intr.maximum",
        "arith.minimumf" => "llvm.intr.minimum",
        "arith.maxnumf" => "llvm.intr.maxnum",
        "arith.minnumf" => "llvm.intr.minnum",
        _ => return None,
    })
}

impl Cv<'_> {
    /// Convert an `arith` op.
    pub(super) fn arith(&mut self, op: OpId, name: &'static str) -> R<()> {
        if matches!(
            name,
            "arith.divsi"
                | "arith.divui"
                | "arith.remsi"
                | "arith.remui"
                | "arith.floordivsi"
                | "arith.ceildivsi"
                | "arith.ceildivui"
        ) {
            self.division_check(op, name)?;
        }
        if let Some(ln) = one_to_one(name) {
            return self.same_operands(op, ln);
        }
        match name {
            "arith.constant" => self.constant(op),
            "arith.cmpi" | "arith.cmpf" => self.compare(op, name),
            "arith.index_cast" | "arith.index_castui" => self.index_cast(op, name),
            "arith.minsi" | "arith.maxsi" | "arith.minui" | "arith.maxui" => {
                self.int_min_max(op, name)
            }
            "arith.floordivsi" | "arith.ceildivsi" => self.floor_ceil_div(op, name),
            "arith.ceildivui" => self.ceil_div_unsigned(op),
            _ => Err(unsupported(op)),
        }
    }

    fn constant(&mut self, op: OpId) -> R<()> {
        let a = self
            .ir
            .attr(op, "value")
            .ok_or_else(|| (op, "has no value".to_string()))?;
        let ty = self.results_of(op)?[0];
        let r = self.cst(retype_dense(a), ty);
        if let Some(k) = a.as_i64().filter(|_| ty == Type::i64()) {
            self.consts.insert(r, k);
        }
        self.bind(op, r);
        Ok(())
    }

    fn compare(&mut self, op: OpId, name: &str) -> R<()> {
        let p = self
            .ir
            .attr(op, "predicate")
            .and_then(|a| a.as_i64())
            .ok_or_else(|| (op, "has no predicate".to_string()))?;
        let (a, b) = self.two_operands(op)?;
        let ty = self.results_of(op)?[0];
        let ln = if name == "arith.cmpi" {
            "llvm.icmp"
        } else {
            "llvm.fcmp"
        };
        let r = self.valp(ln, vec![a, b], ty, vec![("predicate", Attribute::i64(p))]);
        self.bind(op, r);
        Ok(())
    }

    fn index_cast(&mut self, op: OpId, name: &str) -> R<()> {
        let old = self.ir.operand(op, 0);
        let a = self.v(op, old)?;
        let from = conv(self.ir.value_type(old)).unwrap_or(Type::i64());
        let to = self.results_of(op)?[0];
        let (fw, tw) = (from.int_width().unwrap_or(64), to.int_width().unwrap_or(64));
        let r = if fw == tw {
            a
        } else if fw > tw {
            self.val("llvm.trunc", vec![a], to)
        } else if name == "arith.index_cast" {
            self.val("llvm.sext", vec![a], to)
        } else {
            self.val("llvm.zext", vec![a], to)
        };
        self.bind(op, r);
        Ok(())
    }

    fn int_min_max(&mut self, op: OpId, name: &str) -> R<()> {
        let (a, b) = self.two_operands(op)?;
        let pred = match name {
            "arith.minsi" => 2,
            "arith.maxsi" => 4,
            "arith.minui" => 6,
            _ => 8,
        };
        let ty = self.results_of(op)?[0];
        let c = self.valp(
            "llvm.icmp",
            vec![a, b],
            if ty.is_vector() {
                Type::vector(ty.shape().unwrap_or(&[]).to_vec(), Type::i1())
            } else {
                Type::i1()
            },
            vec![("predicate", Attribute::i64(pred))],
        );
        let r = self.val("llvm.select", vec![c, a, b], ty);
        self.bind(op, r);
        Ok(())
    }

    /// q = a / b (truncating); step q toward -inf (+inf) when the remainder is non-zero
    /// and the signs of r and b differ (agree).
    fn floor_ceil_div(&mut self, op: OpId, name: &str) -> R<()> {
        let (a, b) = self.two_operands(op)?;
        let ty = self.results_of(op)?[0];
        let q = self.val("llvm.sdiv", vec![a, b], ty);
        let r = self.val("llvm.srem", vec![a, b], ty);
        let zero = self.cst(Attribute::int(0, ty), ty);
        let one = self.cst(Attribute::int(1, ty), ty);
        let nz = self.icmp(1, r, zero);
        let rneg = self.icmp(2, r, zero);
        let bneg = self.icmp(2, b, zero);
        let differ = self.val("llvm.xor", vec![rneg, bneg], Type::i1());
        let cond = if name == "arith.floordivsi" {
            differ
        } else {
            let t = self.cst(Attribute::bool(true), Type::i1());
            self.val("llvm.xor", vec![differ, t], Type::i1())
        };
        let adj = self.val("llvm.and", vec![nz, cond], Type::i1());
        let stepped = if name == "arith.floordivsi" {
            self.val("llvm.sub", vec![q, one], ty)
        } else {
            self.val("llvm.add", vec![q, one], ty)
        };
        let res = self.val("llvm.select", vec![adj, stepped, q], ty);
        self.bind(op, res);
        Ok(())
    }

    /// q = a / b (unsigned), plus one when the remainder is non-zero.
    fn ceil_div_unsigned(&mut self, op: OpId) -> R<()> {
        let (a, b) = self.two_operands(op)?;
        let ty = self.results_of(op)?[0];
        let q = self.val("llvm.udiv", vec![a, b], ty);
        let r = self.val("llvm.urem", vec![a, b], ty);
        let zero = self.cst(Attribute::int(0, ty), ty);
        let one = self.cst(Attribute::int(1, ty), ty);
        let nz = self.icmp(1, r, zero);
        let stepped = self.val("llvm.add", vec![q, one], ty);
        let res = self.val("llvm.select", vec![nz, stepped, q], ty);
        self.bind(op, res);
        Ok(())
    }
}
