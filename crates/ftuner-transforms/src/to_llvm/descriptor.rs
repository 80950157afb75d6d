//! MLIR's memref descriptor ABI (its `MemRefDescriptor`): a ranked memref is
//! `!llvm.struct<(ptr, ptr, i64, array<R x i64>, array<R x i64>)>` (allocated pointer,
//! aligned pointer, offset, sizes, strides). Reading a field (a constant where the type
//! knows it), building a descriptor, unpacking it into the 3 + 2R values a call passes,
//! and the address of an element.

use super::types::{conv, llvm_ty, ptr};
use super::{LlvmRewriter, R};
use ftuner_dialects::ops;
use ftuner_ir::{OpId, Type, TypeKind, Value, DYNAMIC};

fn desc_body(rank: usize) -> String {
    if rank == 0 {
        "struct<(ptr, ptr, i64)>".into()
    } else {
        format!("struct<(ptr, ptr, i64, array<{rank} x i64>, array<{rank} x i64>)>")
    }
}

pub(super) fn desc_ty(rank: usize) -> Type {
    llvm_ty(&desc_body(rank))
}

/// Static strides and offset of a memref type (`DYNAMIC` where unknown).
pub(super) fn layout_of(t: Type) -> Option<(Vec<i64>, i64)> {
    t.strides_and_offset()
}

pub(super) fn is_identity_layout(t: Type) -> bool {
    matches!(t.kind(), TypeKind::MemRef { layout: None, .. })
}

/// One memref value: its descriptor and static knowledge from its type.
#[derive(Clone)]
pub(super) struct Desc {
    pub(super) v: Value,
    pub(super) ty: Type,
}

impl LlvmRewriter<'_> {
    pub(super) fn desc(&self, op: OpId, v: Value) -> R<Desc> {
        let ty = self.ir.value_type(v);
        if !ty.is_memref() || ty.rank().is_none() {
            return Err((op, format!("expected a ranked memref, got {ty}")));
        }
        Ok(Desc {
            v: self.v(op, v)?,
            ty,
        })
    }
    pub(super) fn size(&mut self, d: &Desc, i: usize) -> Value {
        match d.ty.shape().and_then(|s| s.get(i)).copied() {
            Some(s) if s != DYNAMIC => self.c64(s),
            _ => self.extract(d.v, &[3, i as i64], Type::i64()),
        }
    }
    pub(super) fn stride(&mut self, d: &Desc, i: usize) -> Value {
        match layout_of(d.ty).and_then(|(s, _)| s.get(i).copied()) {
            Some(s) if s != DYNAMIC => self.c64(s),
            _ => self.extract(d.v, &[4, i as i64], Type::i64()),
        }
    }
    pub(super) fn offset(&mut self, d: &Desc) -> Value {
        match layout_of(d.ty).map(|(_, o)| o) {
            Some(o) if o != DYNAMIC => self.c64(o),
            _ => self.extract(d.v, &[2], Type::i64()),
        }
    }
    pub(super) fn pack(
        &mut self,
        alloc: Value,
        aligned: Value,
        offset: Value,
        sizes: &[Value],
        strides: &[Value],
    ) -> Value {
        let ty = desc_ty(sizes.len());
        let mut d = self.val(ops::llvm::MlirUndefOp::NAME, vec![], ty);
        d = self.insert(d, alloc, &[0]);
        d = self.insert(d, aligned, &[1]);
        d = self.insert(d, offset, &[2]);
        for (i, s) in sizes.iter().enumerate() {
            d = self.insert(d, *s, &[3, i as i64]);
        }
        for (i, s) in strides.iter().enumerate() {
            d = self.insert(d, *s, &[4, i as i64]);
        }
        d
    }
    /// The 3 + 2R fields of a descriptor, as MLIR passes a memref argument.
    pub(super) fn unpack(&mut self, d: Value, rank: usize) -> Vec<Value> {
        let mut out = vec![
            self.extract(d, &[0], ptr()),
            self.extract(d, &[1], ptr()),
            self.extract(d, &[2], Type::i64()),
        ];
        for f in [3, 4] {
            for i in 0..rank {
                out.push(self.extract(d, &[f, i as i64], Type::i64()));
            }
        }
        out
    }
    /// The strides of a row-major (identity layout) memref of `sizes`.
    pub(super) fn row_major_strides(&mut self, sizes: &[Value]) -> Vec<Value> {
        let mut strides = vec![self.c64(1); sizes.len()];
        for i in (0..sizes.len().saturating_sub(1)).rev() {
            strides[i] = self.mul(strides[i + 1], sizes[i + 1]);
        }
        strides
    }
    /// Address of element `idx` of `d`.
    pub(super) fn elem_ptr(&mut self, d: &Desc, idx: &[Value]) -> Value {
        let mut lin = self.offset(d);
        for (i, x) in idx.iter().enumerate() {
            let s = self.stride(d, i);
            let t = self.mul(*x, s);
            lin = self.add(lin, t);
        }
        let base = self.extract(d.v, &[1], ptr());
        let elem = conv(d.ty.element_type()).unwrap_or(Type::i64());
        self.gep(base, lin, ptr(), elem)
    }
}
