//! Bufferization of `tensor` ops: `tensor.empty` allocates; views (`extract_slice`,
//! `cast`, reshapes) become memref views; `dim`/`extract` read the buffer; `insert` and
//! `insert_slice` write their destination's buffer (in place, or a copy);
//! `from_elements`/`splat` fill a new buffer. (`tensor.pad` is in `pad.rs`.)

use super::types::{result_memref, subview_type, with_layout};
use super::{dict_entries, BufferRewriter, R};
use crate::runtime_checks::{what, Checks, IN_BOUNDS};
use ftuner_dialects::ops;
use ftuner_ir::{Attribute, BlockId, Ir, OpId, TypeKind, Value};

impl BufferRewriter<'_> {
    /// The run-time check that slice `op` of buffer `m` (its dynamic offsets, sizes and
    /// strides `dyns`, converted) stays inside it, unless a pass vouched for it.
    fn check_slice(&mut self, b: BlockId, op: OpId, m: Value, dyns: &[Value]) {
        if self.ir.attr(op, IN_BOUNDS).is_some() {
            return;
        }
        let msg = format!("{}: the slice leaves its tensor", what(self.ir, op));
        let mut ck = Checks::new(self.ir, b, self.ir.loc(op));
        ck.slice_of(m, op, dyns);
        ck.assert(&msg);
    }

    /// `tensor.empty`: a new buffer.
    pub(super) fn empty(&mut self, op: OpId, b: BlockId) -> R<()> {
        let loc = self.ir.loc(op);
        let ty = result_memref(self.ir, op, 0)?;
        let dyns = self.vs(op, self.ir.operands(op))?;
        let a = self.alloc(b, ty, dyns, loc);
        self.map.insert(self.ir.result(op, 0), a);
        Ok(())
    }

    /// `tensor.dim` / `tensor.extract`: `memref.dim` / `memref.load` of the buffer.
    pub(super) fn dim_or_extract(&mut self, op: OpId, b: BlockId) -> R<()> {
        let loc = self.ir.loc(op);
        let ops = self.vs(op, self.ir.operands(op))?;
        let nm = if self.ir.name(op) == ops::tensor::DimOp::NAME {
            ops::memref::DimOp::NAME
        } else {
            ops::memref::LoadOp::NAME
        };
        let res = self.ir.result(op, 0);
        let t = self.ir.value_type(res);
        let n = self.new_op(b, nm, ops, vec![t], vec![], loc);
        self.map.insert(res, self.ir.result(n, 0));
        Ok(())
    }

    /// `tensor.extract_slice`: a checked `memref.subview` of the source's buffer.
    pub(super) fn extract_slice(&mut self, op: OpId, b: BlockId) -> R<()> {
        let loc = self.ir.loc(op);
        let operands = self.ir.operands(op).to_vec();
        let src = self.v(op, operands[0])?;
        let res = self.ir.result(op, 0);
        let (offs, sizes, steps) = static_slice(self.ir, op);
        let want = self.ir.value_type(res);
        let ty = subview_type(
            self.ir.value_type(src),
            &offs,
            &sizes,
            &steps,
            want.shape().unwrap_or(&[]),
        )
        .ok_or((op, "cannot type the subview of this slice".into()))?;
        let mut ops = vec![src];
        for v in &operands[1..] {
            ops.push(self.v(op, *v)?);
        }
        self.check_slice(b, op, src, &ops[1..]);
        let props = dict_entries(self.ir.op(op).props);
        let n = self.new_op(b, ops::memref::SubviewOp::NAME, ops, vec![ty], props, loc);
        self.map.insert(res, self.ir.result(n, 0));
        Ok(())
    }

    /// `tensor.insert_slice`: the source copied into a checked subview of the
    /// destination's buffer (nothing to copy when the source already is that subview).
    pub(super) fn insert_slice(&mut self, op: OpId, b: BlockId) -> R<()> {
        let loc = self.ir.loc(op);
        let operands = self.ir.operands(op).to_vec();
        let src = self.v(op, operands[0])?;
        let dst = self.dest(b, op, 1, true)?;
        let mut rest = vec![];
        for v in &operands[2..] {
            rest.push(self.v(op, *v)?);
        }
        self.check_slice(b, op, dst, &rest);
        let props = subview_props(self.ir, op);
        // Already there: the source is this very subview of the destination.
        let same = self.ir.defining_op(src).is_some_and(|d| {
            self.ir.name(d) == ops::memref::SubviewOp::NAME
                && self.ir.operand(d, 0) == dst
                && self.ir.operands(d)[1..] == rest[..]
                && ["static_offsets", "static_sizes", "static_strides"]
                    .iter()
                    .all(|a| self.ir.attr(d, a) == self.ir.attr(op, a))
        });
        if !same {
            let (offs, sizes, steps) = static_slice(self.ir, op);
            let want = self.ir.value_type(src);
            let ty = subview_type(
                self.ir.value_type(dst),
                &offs,
                &sizes,
                &steps,
                want.shape().unwrap_or(&[]),
            )
            .ok_or((op, "cannot type the subview of this slice".into()))?;
            let mut ops = vec![dst];
            ops.extend(rest);
            let sv = self.new_op(b, ops::memref::SubviewOp::NAME, ops, vec![ty], props, loc);
            let sv = self.ir.result(sv, 0);
            self.copy(b, src, sv, loc);
        }
        self.map.insert(self.ir.result(op, 0), dst);
        Ok(())
    }

    /// `tensor.insert`: `memref.store` into the destination's buffer.
    pub(super) fn insert(&mut self, op: OpId, b: BlockId) -> R<()> {
        let loc = self.ir.loc(op);
        let (ops, dst) = self.store_operands(b, op)?;
        self.new_op(b, ops::memref::StoreOp::NAME, ops, vec![], vec![], loc);
        self.map.insert(self.ir.result(op, 0), dst);
        Ok(())
    }

    /// `tensor.cast`: `memref.cast` keeping the source's layout.
    pub(super) fn cast(&mut self, op: OpId, b: BlockId) -> R<()> {
        let loc = self.ir.loc(op);
        let src = self.v(op, self.ir.operand(op, 0))?;
        let res = self.ir.result(op, 0);
        let st = self.ir.value_type(src);
        let rt = self.ir.value_type(res);
        let layout = match st.kind() {
            TypeKind::MemRef { layout, .. } => *layout,
            _ => None,
        };
        let ty = with_layout(
            rt.shape().unwrap_or(&[]).to_vec(),
            rt.element_type(),
            layout,
        );
        let n = self.new_op(
            b,
            ops::memref::CastOp::NAME,
            vec![src],
            vec![ty],
            vec![],
            loc,
        );
        self.map.insert(res, self.ir.result(n, 0));
        Ok(())
    }

    /// `tensor.collapse_shape` / `expand_shape` / `reshape`: the memref op of that name on
    /// an identity-layout buffer (the source's, or a copy of it).
    pub(super) fn reshape(&mut self, op: OpId, b: BlockId) -> R<()> {
        let loc = self.ir.loc(op);
        let operands = self.ir.operands(op).to_vec();
        let src = self.v(op, operands[0])?;
        let src = self.identity(b, src, loc);
        let mut ops = vec![src];
        for v in &operands[1..] {
            ops.push(self.v(op, *v)?);
        }
        let ty = result_memref(self.ir, op, 0)?;
        let nm = self.ir.name(op).replacen("tensor.", "memref.", 1);
        let props = dict_entries(self.ir.op(op).props);
        let n = self.new_op(b, &nm, ops, vec![ty], props, loc);
        self.map.insert(self.ir.result(op, 0), self.ir.result(n, 0));
        Ok(())
    }

    /// `tensor.splat`: a new buffer filled with the value.
    pub(super) fn splat(&mut self, op: OpId, b: BlockId) -> R<()> {
        let loc = self.ir.loc(op);
        let operands = self.ir.operands(op).to_vec();
        let ty = result_memref(self.ir, op, 0)?;
        let val = self.v(op, operands[0])?;
        let dyns = self.vs(op, &operands[1..])?;
        let a = self.alloc(b, ty, dyns, loc);
        self.fill(b, val, a, ty.element_type(), loc);
        self.map.insert(self.ir.result(op, 0), a);
        Ok(())
    }

    /// `tensor.from_elements`: a new buffer, its elements stored one by one in row-major
    /// order.
    pub(super) fn tensor_from_elements(&mut self, op: OpId, b: BlockId) -> R<()> {
        let loc = self.ir.loc(op);
        let operands = self.ir.operands(op).to_vec();
        let ty = result_memref(self.ir, op, 0)?;
        let shape = ty.shape().unwrap_or(&[]).to_vec();
        let a = self.alloc(b, ty, vec![], loc);
        let mut point = vec![0i64; shape.len()];
        for v in &operands {
            let val = self.v(op, *v)?;
            let mut ops = vec![val, a];
            for p in point.clone() {
                ops.push(self.index_const(b, p, loc));
            }
            self.new_op(b, ops::memref::StoreOp::NAME, ops, vec![], vec![], loc);
            for d in (0..point.len()).rev() {
                point[d] += 1;
                if point[d] < shape[d] {
                    break;
                }
                point[d] = 0;
            }
        }
        self.map.insert(self.ir.result(op, 0), a);
        Ok(())
    }
}

/// The static offsets, sizes and strides of a slice op.
fn static_slice(ir: &Ir, op: OpId) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
    let g = |a: &str| {
        ir.attr(op, a)
            .and_then(|x| x.as_dense_i64s())
            .unwrap_or_default()
    };
    (g("static_offsets"), g("static_sizes"), g("static_strides"))
}

/// The properties of the `memref.subview` for `tensor.insert_slice` `op`: its own, the
/// operand segments without the source (one destination, then the dynamic offsets,
/// sizes and strides).
fn subview_props(ir: &Ir, op: OpId) -> Vec<(String, Attribute)> {
    let mut props = dict_entries(ir.op(op).props);
    for p in props.iter_mut() {
        if p.0 == "operandSegmentSizes" {
            if let Some(s) = p.1.as_dense_i64s() {
                let s: Vec<i32> = std::iter::once(1)
                    .chain(s.iter().skip(2).map(|x| *x as i32))
                    .collect();
                p.1 = Attribute::dense_i32_array(&s);
            }
        }
    }
    props
}

/// Operand 1 (a destination) tied to result 0, where it is a tensor.
pub(super) fn writes_operand_1(ir: &Ir, op: OpId) -> Vec<(usize, Option<Value>)> {
    match ir.operands(op).get(1) {
        Some(v) if ir.value_type(*v).is_tensor() => vec![(1, ir.results(op).first().copied())],
        _ => vec![],
    }
}

/// The `tensor` ops' bufferization models.
pub(super) fn register(reg: &mut ftuner_ir::Registry) {
    use super::Bufferizable;
    let view = |bufferize: super::BufferizeFn| Bufferizable {
        view: true,
        ..Bufferizable::plain(bufferize)
    };
    let writes = |bufferize: super::BufferizeFn| Bufferizable {
        destinations: writes_operand_1,
        ..Bufferizable::plain(bufferize)
    };
    for (name, model) in [
        (
            ops::tensor::EmptyOp::NAME,
            Bufferizable::plain(|rw, op, b| rw.empty(op, b)),
        ),
        (
            ops::tensor::DimOp::NAME,
            Bufferizable::plain(|rw, op, b| rw.dim_or_extract(op, b)),
        ),
        (
            ops::tensor::ExtractOp::NAME,
            Bufferizable::plain(|rw, op, b| rw.dim_or_extract(op, b)),
        ),
        (
            ops::tensor::ExtractSliceOp::NAME,
            view(|rw, op, b| rw.extract_slice(op, b)),
        ),
        (ops::tensor::CastOp::NAME, view(|rw, op, b| rw.cast(op, b))),
        (
            ops::tensor::CollapseShapeOp::NAME,
            view(|rw, op, b| rw.reshape(op, b)),
        ),
        (
            ops::tensor::ExpandShapeOp::NAME,
            view(|rw, op, b| rw.reshape(op, b)),
        ),
        (
            ops::tensor::ReshapeOp::NAME,
            view(|rw, op, b| rw.reshape(op, b)),
        ),
        (
            ops::tensor::InsertSliceOp::NAME,
            writes(|rw, op, b| rw.insert_slice(op, b)),
        ),
        (
            ops::tensor::InsertOp::NAME,
            writes(|rw, op, b| rw.insert(op, b)),
        ),
        (
            ops::tensor::PadOp::NAME,
            Bufferizable::plain(|rw, op, b| rw.pad(op, b)),
        ),
        (
            ops::tensor::FromElementsOp::NAME,
            Bufferizable::plain(|rw, op, b| rw.tensor_from_elements(op, b)),
        ),
        (
            ops::tensor::SplatOp::NAME,
            Bufferizable::plain(|rw, op, b| rw.splat(op, b)),
        ),
    ] {
        reg.attach_interface(name, model);
    }
}
