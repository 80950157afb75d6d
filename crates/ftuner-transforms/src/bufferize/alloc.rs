//! Buffer allocation and copies: aligned `memref.alloc`s owned by their block, the buffer
//! a destination-passing write goes to (its destination's own, or a copy), identity-layout
//! copies of views, and `linalg.fill`s.

use super::types::is_identity;
use super::{BufferRewriter, R};
use ftuner_dialects::ops;
use ftuner_ir::{intern_name, Attribute, BlockId, Ir, OpId, OpSpec, Type, Value, DYNAMIC};

impl BufferRewriter<'_> {
    /// A new identity-layout buffer shaped like `like` (a memref value), owned by `b`.
    pub fn alloc_like(&mut self, b: BlockId, like: Value, loc: Attribute) -> Value {
        let t = self.ir.value_type(like);
        let shape = t.shape().unwrap_or(&[]).to_vec();
        let mut dyns = vec![];
        for (i, d) in shape.iter().enumerate() {
            if *d == DYNAMIC {
                dyns.push(self.dim(b, like, i, loc));
            }
        }
        self.alloc(b, Type::memref(shape, t.element_type()), dyns, loc)
    }

    /// A new buffer of type `ty` (its dynamic sizes `dyns`), 64-byte aligned, owned by `b`.
    pub(super) fn alloc(
        &mut self,
        b: BlockId,
        ty: Type,
        dyns: Vec<Value>,
        loc: Attribute,
    ) -> Value {
        let n = dyns.len() as i32;
        let o = self.new_op(
            b,
            ops::memref::AllocOp::NAME,
            dyns,
            vec![ty],
            vec![
                ("alignment".into(), Attribute::i64(64)),
                (
                    "operandSegmentSizes".into(),
                    Attribute::dense_i32_array(&[n, 0]),
                ),
            ],
            loc,
        );
        let v = self.ir.result(o, 0);
        self.owned.push((v, b));
        self.allocs += 1;
        v
    }

    /// `memref.copy` of `src` into `dst`, appended to `b`.
    pub fn copy(&mut self, b: BlockId, src: Value, dst: Value, loc: Attribute) {
        self.new_op(
            b,
            ops::memref::CopyOp::NAME,
            vec![src, dst],
            vec![],
            vec![],
            loc,
        );
    }

    /// The operands of a store of a value into a destination (`tensor.insert`,
    /// `vector.transfer_write`: value, destination, indices...) on buffers: the value, the
    /// destination's buffer (which becomes the op's result), the indices.
    pub(super) fn store_operands(&mut self, b: BlockId, op: OpId) -> R<(Vec<Value>, Value)> {
        let operands = self.ir.operands(op).to_vec();
        let val = self.v(op, operands[0])?;
        let dst = self.dest(b, op, 1, true)?;
        let mut ops = vec![val, dst];
        for v in &operands[2..] {
            ops.push(self.v(op, *v)?);
        }
        Ok((ops, dst))
    }

    /// The buffer an op writes for destination operand `idx`: the destination's own when
    /// the analysis allows, else a copy of it (filled with its old contents when
    /// `need_old`). A [`super::Bufferizable`] model writes its destinations through this,
    /// never into [`super::BufferRewriter::buffer`] directly.
    pub fn dest(&mut self, b: BlockId, op: OpId, idx: usize, need_old: bool) -> R<Value> {
        let d = self.v(op, self.ir.operand(op, idx))?;
        if self.an.in_place.contains(&(op, idx)) {
            return Ok(d);
        }
        let loc = self.ir.loc(op);
        let n = self.alloc_like(b, d, loc);
        let old = self.ir.operand(op, idx);
        if need_old && !undefined_contents(self.ir, old) {
            // A filled tensor is filled again rather than copied.
            let fill = self.ir.defining_op(old).filter(|f| {
                self.ir.name(*f) == ops::linalg::FillOp::NAME && self.ir.operands(*f).len() == 2
            });
            match fill.map(|f| self.v(f, self.ir.operand(f, 0))) {
                Some(Ok(val)) => {
                    let elem = self.ir.value_type(n).element_type();
                    self.fill(b, val, n, elem, loc);
                }
                _ => {
                    self.copy(b, d, n, loc);
                    self.copies += 1;
                }
            }
        }
        Ok(n)
    }

    /// `buf` with an identity layout: itself, or a copy.
    pub(super) fn identity(&mut self, b: BlockId, buf: Value, loc: Attribute) -> Value {
        if is_identity(self.ir.value_type(buf)) {
            return buf;
        }
        let n = self.alloc_like(b, buf, loc);
        self.copy(b, buf, n, loc);
        self.copies += 1;
        n
    }

    /// `linalg.fill` of buffer `buf` (elements of type `elem`) with `val`, appended to `b`.
    pub(super) fn fill(&mut self, b: BlockId, val: Value, buf: Value, elem: Type, loc: Attribute) {
        let f = self.ir.create_op(
            OpSpec::new(intern_name(ops::linalg::FillOp::NAME), loc)
                .operands(vec![val, buf])
                .prop("operandSegmentSizes", Attribute::dense_i32_array(&[1, 1]))
                .regions(1),
        );
        self.ir.append_op(b, f);
        fill_body(self.ir, f, elem, loc);
    }
}

/// `v` is a `tensor.empty` or a reshape of one: its contents are undefined, so a writer
/// that cannot take its buffer needs no copy of it. (CSE merges equal `tensor.empty`s and
/// their reshapes: three 1x1 convs of MobileNetV2 writing one shape share one
/// `collapse_shape(tensor.empty)`, and all but the first copied it whole.)
fn undefined_contents(ir: &Ir, mut v: Value) -> bool {
    while let Some(d) = ir.defining_op(v) {
        match ir.name(d) {
            ops::tensor::EmptyOp::NAME => return true,
            ops::tensor::CollapseShapeOp::NAME
            | ops::tensor::ExpandShapeOp::NAME
            | ops::tensor::CastOp::NAME => v = ir.operand(d, 0),
            _ => return false,
        }
    }
    false
}

/// The body of a `linalg.fill` on elements of type `elem`: yield the fill value.
fn fill_body(ir: &mut Ir, fill: OpId, elem: Type, loc: Attribute) {
    let r = ir.regions_of(fill)[0];
    let blk = ir.append_block(r, &[elem, elem]);
    let a = ir.block_args(blk)[0];
    let y =
        ir.create_op(OpSpec::new(intern_name(ops::linalg::YieldOp::NAME), loc).operands(vec![a]));
    ir.append_op(blk, y);
}
