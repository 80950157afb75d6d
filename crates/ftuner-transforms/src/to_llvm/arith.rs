//! `arith` to `llvm` (MLIR's `ArithToLLVM`): one-to-one ops by table, constants (index
//! constants remembered for folding), comparisons, index casts, integer min/max as
//! compare-and-select, and floor/ceil division (signed and unsigned). An integer division first gets its
//! run-time check (checks.rs).

use super::types::{conv, retype_dense};
use super::{unsupported, LlvmRewriter, R};
use ftuner_dialects::ops;
use ftuner_ir::{Attribute, OpId, Type};

/// The `llvm` op of an `arith` op that converts one to one.
fn one_to_one(name: &str) -> Option<&'static str> {
    Some(match name {
        ops::arith::AddiOp::NAME => ops::llvm::AddOp::NAME,
        ops::arith::SubiOp::NAME => ops::llvm::SubOp::NAME,
        ops::arith::MuliOp::NAME => ops::llvm::MulOp::NAME,
        ops::arith::DivsiOp::NAME => ops::llvm::SdivOp::NAME,
        ops::arith::DivuiOp::NAME => ops::llvm::UdivOp::NAME,
        ops::arith::RemsiOp::NAME => ops::llvm::SremOp::NAME,
        ops::arith::RemuiOp::NAME => ops::llvm::UremOp::NAME,
        ops::arith::AndiOp::NAME => ops::llvm::AndOp::NAME,
        ops::arith::OriOp::NAME => ops::llvm::OrOp::NAME,
        ops::arith::XoriOp::NAME => ops::llvm::XorOp::NAME,
        ops::arith::ShliOp::NAME => ops::llvm::ShlOp::NAME,
        ops::arith::ShrsiOp::NAME => ops::llvm::AshrOp::NAME,
        ops::arith::ShruiOp::NAME => ops::llvm::LshrOp::NAME,
        ops::arith::AddfOp::NAME => ops::llvm::FaddOp::NAME,
        ops::arith::SubfOp::NAME => ops::llvm::FsubOp::NAME,
        ops::arith::MulfOp::NAME => ops::llvm::FmulOp::NAME,
        ops::arith::DivfOp::NAME => ops::llvm::FdivOp::NAME,
        ops::arith::RemfOp::NAME => ops::llvm::FremOp::NAME,
        ops::arith::NegfOp::NAME => ops::llvm::FnegOp::NAME,
        ops::arith::SelectOp::NAME => ops::llvm::SelectOp::NAME,
        ops::arith::ExtfOp::NAME => ops::llvm::FpextOp::NAME,
        ops::arith::TruncfOp::NAME => ops::llvm::FptruncOp::NAME,
        ops::arith::ExtsiOp::NAME => ops::llvm::SextOp::NAME,
        ops::arith::ExtuiOp::NAME => ops::llvm::ZextOp::NAME,
        ops::arith::TrunciOp::NAME => ops::llvm::TruncOp::NAME,
        ops::arith::SitofpOp::NAME => ops::llvm::SitofpOp::NAME,
        ops::arith::UitofpOp::NAME => ops::llvm::UitofpOp::NAME,
        ops::arith::FptosiOp::NAME => ops::llvm::FptosiOp::NAME,
        ops::arith::FptouiOp::NAME => ops::llvm::FptouiOp::NAME,
        ops::arith::BitcastOp::NAME => ops::llvm::BitcastOp::NAME,
        ops::arith::MaximumfOp::NAME => ops::llvm::IntrMaximumOp::NAME,
        ops::arith::MinimumfOp::NAME => ops::llvm::IntrMinimumOp::NAME,
        ops::arith::MaxnumfOp::NAME => ops::llvm::IntrMaxnumOp::NAME,
        ops::arith::MinnumfOp::NAME => ops::llvm::IntrMinnumOp::NAME,
        _ => return None,
    })
}

impl LlvmRewriter<'_> {
    /// Convert an `arith` op.
    pub(super) fn arith(&mut self, op: OpId, name: &'static str) -> R<()> {
        if super::checks::DIVISIONS.contains(&name) {
            self.division_check(op, name)?;
        }
        if let Some(ln) = one_to_one(name) {
            return self.same_operands(op, ln);
        }
        match name {
            ops::arith::ConstantOp::NAME => self.constant(op),
            ops::arith::CmpiOp::NAME | ops::arith::CmpfOp::NAME => self.compare(op, name),
            ops::arith::IndexCastOp::NAME | ops::arith::IndexCastuiOp::NAME => {
                self.index_cast(op, name)
            }
            ops::arith::MinsiOp::NAME
            | ops::arith::MaxsiOp::NAME
            | ops::arith::MinuiOp::NAME
            | ops::arith::MaxuiOp::NAME => self.int_min_max(op, name),
            ops::arith::FloordivsiOp::NAME | ops::arith::CeildivsiOp::NAME => {
                self.floor_ceil_div(op, name)
            }
            ops::arith::CeildivuiOp::NAME => self.ceil_div_unsigned(op),
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
        let ln = if name == ops::arith::CmpiOp::NAME {
            ops::llvm::IcmpOp::NAME
        } else {
            ops::llvm::FcmpOp::NAME
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
            self.val(ops::llvm::TruncOp::NAME, vec![a], to)
        } else if name == ops::arith::IndexCastOp::NAME {
            self.val(ops::llvm::SextOp::NAME, vec![a], to)
        } else {
            self.val(ops::llvm::ZextOp::NAME, vec![a], to)
        };
        self.bind(op, r);
        Ok(())
    }

    fn int_min_max(&mut self, op: OpId, name: &str) -> R<()> {
        let (a, b) = self.two_operands(op)?;
        let pred = match name {
            ops::arith::MinsiOp::NAME => 2,
            ops::arith::MaxsiOp::NAME => 4,
            ops::arith::MinuiOp::NAME => 6,
            _ => 8,
        };
        let ty = self.results_of(op)?[0];
        let c = self.valp(
            ops::llvm::IcmpOp::NAME,
            vec![a, b],
            if ty.is_vector() {
                Type::vector(ty.shape().unwrap_or(&[]).to_vec(), Type::i1())
            } else {
                Type::i1()
            },
            vec![("predicate", Attribute::i64(pred))],
        );
        let r = self.val(ops::llvm::SelectOp::NAME, vec![c, a, b], ty);
        self.bind(op, r);
        Ok(())
    }

    /// q = a / b (truncating); step q toward -inf (+inf) when the remainder is non-zero
    /// and the signs of r and b differ (agree).
    fn floor_ceil_div(&mut self, op: OpId, name: &str) -> R<()> {
        let (a, b) = self.two_operands(op)?;
        let ty = self.results_of(op)?[0];
        let q = self.val(ops::llvm::SdivOp::NAME, vec![a, b], ty);
        let r = self.val(ops::llvm::SremOp::NAME, vec![a, b], ty);
        let zero = self.cst(Attribute::int(0, ty), ty);
        let one = self.cst(Attribute::int(1, ty), ty);
        let nz = self.icmp(1, r, zero);
        let rneg = self.icmp(2, r, zero);
        let bneg = self.icmp(2, b, zero);
        let differ = self.val(ops::llvm::XorOp::NAME, vec![rneg, bneg], Type::i1());
        let cond = if name == ops::arith::FloordivsiOp::NAME {
            differ
        } else {
            let t = self.cst(Attribute::bool(true), Type::i1());
            self.val(ops::llvm::XorOp::NAME, vec![differ, t], Type::i1())
        };
        let adj = self.val(ops::llvm::AndOp::NAME, vec![nz, cond], Type::i1());
        let stepped = if name == ops::arith::FloordivsiOp::NAME {
            self.val(ops::llvm::SubOp::NAME, vec![q, one], ty)
        } else {
            self.val(ops::llvm::AddOp::NAME, vec![q, one], ty)
        };
        let res = self.val(ops::llvm::SelectOp::NAME, vec![adj, stepped, q], ty);
        self.bind(op, res);
        Ok(())
    }

    /// q = a / b (unsigned), plus one when the remainder is non-zero.
    fn ceil_div_unsigned(&mut self, op: OpId) -> R<()> {
        let (a, b) = self.two_operands(op)?;
        let ty = self.results_of(op)?[0];
        let q = self.val(ops::llvm::UdivOp::NAME, vec![a, b], ty);
        let r = self.val(ops::llvm::UremOp::NAME, vec![a, b], ty);
        let zero = self.cst(Attribute::int(0, ty), ty);
        let one = self.cst(Attribute::int(1, ty), ty);
        let nz = self.icmp(1, r, zero);
        let stepped = self.val(ops::llvm::AddOp::NAME, vec![q, one], ty);
        let res = self.val(ops::llvm::SelectOp::NAME, vec![nz, stepped, q], ty);
        self.bind(op, res);
        Ok(())
    }
}
