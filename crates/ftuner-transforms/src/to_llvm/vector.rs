//! 1-d `vector` to `llvm` (MLIR's `VectorToLLVM`): `fma` as the intrinsic, `broadcast` of
//! a scalar as insertelement + shufflevector, `shuffle`, and in-bounds
//! `transfer_read`/`transfer_write` as one vector load/store where the minor dimension is
//! contiguous, a gather/scatter where it is strided (4 lanes or more), else one scalar
//! access per lane.

use super::descriptor::{layout_of, Desc};
use super::types::{conv, elem_bytes, ptr};
use super::{unsupported, LlvmRewriter, R};
use ftuner_dialects::ops;
use ftuner_ir::{AffineExpr, Attribute, OpId, Scalar, Type, Value, DYNAMIC};

/// A `vector.transfer_read`/`transfer_write`, its operands converted.
struct Transfer {
    op: OpId,
    read: bool,
    /// The memref and the indices of the first lane.
    d: Desc,
    idx: Vec<Value>,
    /// The memref dimension the lanes run along.
    along: usize,
    /// Lanes, the LLVM vector type, its element type and size in bytes.
    n: usize,
    vt: Type,
    elem: Type,
    eb: i64,
}

impl LlvmRewriter<'_> {
    /// Convert a `vector` op.
    pub(super) fn vector(&mut self, op: OpId, name: &'static str) -> R<()> {
        match name {
            ops::vector::FmaOp::NAME => self.same_operands(op, ops::llvm::IntrFmaOp::NAME),
            ops::vector::BroadcastOp::NAME | "vector.splat" => self.broadcast(op),
            ops::vector::ShuffleOp::NAME => self.shuffle(op),
            ops::vector::TransferReadOp::NAME | ops::vector::TransferWriteOp::NAME => {
                self.transfer(op)
            }
            _ => Err(unsupported(op)),
        }
    }

    fn broadcast(&mut self, op: OpId) -> R<()> {
        let old = self.ir.operand(op, 0);
        let a = self.v(op, old)?;
        let ty = self.results_of(op)?[0];
        let r = if self.ir.value_type(old).is_vector() {
            if self.ir.value_type(old) != self.ir.value_type(self.ir.result(op, 0)) {
                return Err((
                    op,
                    "broadcasts between vector shapes are not supported".into(),
                ));
            }
            a
        } else {
            self.splat(a, ty)
        };
        self.bind(op, r);
        Ok(())
    }

    fn shuffle(&mut self, op: OpId) -> R<()> {
        let (a, b) = self.two_operands(op)?;
        let mask: Vec<i32> = self
            .ir
            .attr(op, "mask")
            .and_then(|m| m.as_dense_i64s())
            .ok_or_else(|| (op, "has no mask".to_string()))?
            .iter()
            .map(|x| *x as i32)
            .collect();
        let rt = conv(self.ir.value_type(self.ir.result(op, 0)))
            .ok_or_else(|| (op, "vector type".to_string()))?;
        let r = self.valp(
            ops::llvm::ShufflevectorOp::NAME,
            vec![a, b],
            rt,
            vec![("mask", Attribute::dense_i32_array(&mask))],
        );
        self.bind(op, r);
        Ok(())
    }

    fn transfer(&mut self, op: OpId) -> R<()> {
        let t = self.transfer_operands(op)?;
        let contiguous = t.along + 1 == t.d.ty.rank().unwrap_or(0)
            && layout_of(t.d.ty).is_some_and(|(s, _)| s.last() == Some(&1));
        if contiguous {
            self.transfer_contiguous(&t)
        } else if t.n >= 4 {
            self.transfer_gather(&t)
        } else {
            self.transfer_lanes(&t)
        }
    }

    /// Check that a transfer is one this conversion handles (in bounds, unmasked, 1-d,
    /// along one dimension) and convert its operands.
    fn transfer_operands(&mut self, op: OpId) -> R<Transfer> {
        let name = self.ir.name(op);
        let read = name == ops::vector::TransferReadOp::NAME;
        let err = |m: &str| (op, m.to_string());
        let olds = self.ir.operands(op).to_vec();
        let segs = self
            .ir
            .attr(op, "operandSegmentSizes")
            .and_then(|a| a.as_dense_i64s())
            .unwrap_or_default();
        if ftuner_dialects::vector::transfer_masked(self.ir, op) {
            return Err(err("masked transfers are not supported"));
        }
        if !ftuner_dialects::vector::transfer_in_bounds(self.ir, op) {
            return Err(err("only in-bounds transfers are supported"));
        }
        let (src_i, vec_ty) = if read {
            (0, self.ir.value_type(self.ir.result(op, 0)))
        } else {
            (1, self.ir.value_type(olds[0]))
        };
        let n_idx = segs.get(if read { 1 } else { 2 }).copied().unwrap_or(0) as usize;
        let idx_start = src_i + 1;
        if olds.len() < idx_start + n_idx || vec_ty.rank() != Some(1) {
            return Err(err("only 1-d vector transfers are supported"));
        }
        let d = self.desc(op, olds[src_i])?;
        self.live_check(op, d.v);
        let rank = d.ty.rank().unwrap_or(0);
        let map = self
            .ir
            .attr(op, "permutation_map")
            .and_then(|a| a.as_affine_map())
            .ok_or_else(|| err("has no permutation_map"))?;
        let along = match map.results.as_slice() {
            [AffineExpr::Dim(k)] if (*k as usize) < rank => *k as usize,
            _ => return Err(err("only single-dimension permutation maps are supported")),
        };
        let idx: Vec<Value> = olds[idx_start..idx_start + n_idx]
            .iter()
            .map(|v| self.v(op, *v))
            .collect::<R<_>>()?;
        let n = vec_ty.shape().and_then(|s| s.first()).copied().unwrap_or(0) as usize;
        let vt = conv(vec_ty).ok_or_else(|| err("vector type"))?;
        let elem = conv(vec_ty.element_type()).ok_or_else(|| err("element type"))?;
        let eb = elem_bytes(vec_ty.element_type()).unwrap_or(4);
        Ok(Transfer {
            op,
            read,
            d,
            idx,
            along,
            n,
            vt,
            elem,
            eb,
        })
    }

    /// The vector written by a `transfer_write`.
    fn written(&self, t: &Transfer) -> R<Value> {
        self.v(t.op, self.ir.operand(t.op, 0))
    }

    /// A contiguous minor dimension: one vector load (store).
    fn transfer_contiguous(&mut self, t: &Transfer) -> R<()> {
        let p = self.elem_ptr(&t.d, &t.idx);
        if t.read {
            let r = self.load(p, t.vt, t.eb);
            self.bind(t.op, r);
        } else {
            let v = self.written(t)?;
            self.store(v, p, t.eb);
        }
        Ok(())
    }

    /// A strided vector: one gather (scatter) through a vector of lane pointers,
    /// `base + lane * stride`. LLVM lowers it to the target's gather (AVX-512, AVX2) or to
    /// scalar accesses; either way the IR stays one op per transfer, not one per lane (a
    /// 64-lane NCHW accumulator read was 64 loads, 64 insertelements and their address
    /// arithmetic).
    fn transfer_gather(&mut self, t: &Transfer) -> R<()> {
        let n = t.n;
        let p0 = self.elem_ptr(&t.d, &t.idx);
        let offs = self.lane_offsets(t);
        let ptrs_ty = Type::vector(vec![n as i64], ptr());
        let ptrs = self.gep(p0, offs, ptrs_ty, t.elem);
        let mty = Type::vector(vec![n as i64], Type::i1());
        let mask = self.cst(Attribute::dense(mty, vec![Scalar::Int(1)]), mty);
        let align = ("alignment", Attribute::int(t.eb as i128, Type::i32()));
        if t.read {
            let pass = self.val(ops::llvm::MlirPoisonOp::NAME, vec![], t.vt);
            let r = self.valp(
                ops::llvm::IntrMaskedGatherOp::NAME,
                vec![ptrs, mask, pass],
                t.vt,
                vec![align],
            );
            self.bind(t.op, r);
        } else {
            let v = self.written(t)?;
            self.emit(
                ops::llvm::IntrMaskedScatterOp::NAME,
                vec![v, ptrs, mask],
                vec![],
                vec![align],
                vec![],
            );
        }
        Ok(())
    }

    /// `lane * stride` for each lane: a constant vector when the stride is static.
    fn lane_offsets(&mut self, t: &Transfer) -> Value {
        let n = t.n as i64;
        let lanes = Type::vector(vec![n], Type::i64());
        match layout_of(t.d.ty).and_then(|(s, _)| s.get(t.along).copied()) {
            Some(st) if st != DYNAMIC => {
                let vals = (0..n).map(|l| Scalar::Int((l * st) as i128)).collect();
                self.cst(Attribute::dense(lanes, vals), lanes)
            }
            _ => {
                let st = self.stride(&t.d, t.along);
                let sv = self.splat(st, lanes);
                let vals = (0..n).map(|l| Scalar::Int(l as i128)).collect();
                let iota = self.cst(Attribute::dense(lanes, vals), lanes);
                self.val(ops::llvm::MulOp::NAME, vec![sv, iota], lanes)
            }
        }
    }

    /// One scalar access per lane.
    fn transfer_lanes(&mut self, t: &Transfer) -> R<()> {
        let mut acc = if t.read {
            Some(self.val(ops::llvm::MlirPoisonOp::NAME, vec![], t.vt))
        } else {
            None
        };
        let vin = if t.read { None } else { Some(self.written(t)?) };
        for lane in 0..t.n {
            let mut at = t.idx.clone();
            let l = self.c64(lane as i64);
            at[t.along] = self.add(at[t.along], l);
            let p = self.elem_ptr(&t.d, &at);
            let li = self.cst(Attribute::int(lane as i128, Type::i32()), Type::i32());
            if let Some(a) = acc {
                let x = self.load(p, t.elem, t.eb);
                acc = Some(self.val(ops::llvm::InsertelementOp::NAME, vec![a, x, li], t.vt));
            } else if let Some(v) = vin {
                let x = self.val(ops::llvm::ExtractelementOp::NAME, vec![v, li], t.elem);
                self.store(x, p, t.eb);
            }
        }
        if let Some(a) = acc {
            self.bind(t.op, a);
        }
        Ok(())
    }
}
