//! Canonicalization of the ops with mixed static / dynamic index lists
//! (`tensor.extract_slice`, `tensor.insert_slice`, `tensor.pad`), each pattern named
//! after the upstream folder or pattern it follows (`mlir/lib/Dialect/Tensor/IR/TensorOps.cpp`).
//!
//! Every rewrite that makes an index list or a type more static runs the op's verifier
//! afterwards and undoes itself when the op no longer verifies: a constant offset that
//! leaves a static dim was a run-time error before and must stay one, not become IR the
//! verifier rejects.

use super::{verify_extract_slice, verify_insert_slice, verify_pad};
use crate::cf::constant_of;
use ftuner_ir::Context;
use ftuner_ir::{intern_name, AttrKind, Attribute, Ir, OpId, OpSpec, Type, Value, DYNAMIC};

/// One entry of an index list: static, or an SSA value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Ofr {
    S(i64),
    V(Value),
}

/// The index lists of an op: its leading operands (source, dest), then one list per
/// attribute name, static where the attribute holds a number and the next operand where
/// it holds `DYNAMIC`.
#[derive(Clone, PartialEq, Debug)]
pub(super) struct Mixed {
    pub prefix: Vec<Value>,
    pub lists: Vec<Vec<Ofr>>,
    names: &'static [&'static str],
}

pub(super) const SLICE: &[&str] = &["static_offsets", "static_sizes", "static_strides"];
const PAD: &[&str] = &["static_low", "static_high"];

impl Mixed {
    pub fn read(ir: &Ir, op: OpId, prefix: usize, names: &'static [&'static str]) -> Option<Mixed> {
        let ops = ir.operands(op);
        let (lists, used) = read_lists(ir, op, ops.get(prefix..)?, names)?;
        (prefix + used == ops.len()).then(|| Mixed {
            prefix: ops[..prefix].to_vec(),
            lists,
            names,
        })
    }
    /// The lists of a slice op (`tensor.extract_slice`: 1 leading operand,
    /// `tensor.insert_slice`: 2).
    pub fn slice(ir: &Ir, op: OpId) -> Option<Mixed> {
        let prefix = if matches!(
            ir.name(op),
            "tensor.insert_slice" | "tensor.parallel_insert_slice"
        ) {
            2
        } else {
            1
        };
        Mixed::read(ir, op, prefix, SLICE)
    }
    pub fn write(&self, ir: &mut Ir, op: OpId) {
        let (dyns, segs) = write_lists(ir, op, &self.lists, self.names);
        let mut operands = self.prefix.clone();
        operands.extend(dyns);
        let mut all: Vec<i32> = vec![1; self.prefix.len()];
        all.extend(segs);
        ir.set_operands(op, operands);
        ir.set_prop(
            op,
            "operandSegmentSizes",
            Some(Attribute::dense_i32_array(&all)),
        );
    }
}

/// The mixed static / dynamic lists `names` of `op`: static where the attribute holds a
/// number, the next of `ops` where it holds `DYNAMIC`; with how many of `ops` they took.
pub(crate) fn read_lists(
    ir: &Ir,
    op: OpId,
    ops: &[Value],
    names: &[&str],
) -> Option<(Vec<Vec<Ofr>>, usize)> {
    let mut k = 0;
    let mut lists = vec![];
    for n in names {
        let mut l = vec![];
        for x in ir.attr(op, n)?.as_dense_i64s()? {
            if x == DYNAMIC {
                l.push(Ofr::V(*ops.get(k)?));
                k += 1;
            } else {
                l.push(Ofr::S(x));
            }
        }
        lists.push(l);
    }
    Some((lists, k))
}

/// Set `op`'s attributes `names` to the static parts of `lists`; returns their dynamic
/// values in order and how many each list has (its `operandSegmentSizes` entries).
pub(crate) fn write_lists(
    ir: &mut Ir,
    op: OpId,
    lists: &[Vec<Ofr>],
    names: &[&str],
) -> (Vec<Value>, Vec<i32>) {
    let mut dyns = vec![];
    let mut segs = vec![];
    for (l, n) in lists.iter().zip(names) {
        let d = dynamics(l);
        segs.push(d.len() as i32);
        dyns.extend(d);
        ir.set_prop(op, n, Some(Attribute::dense_i64_array(&statics(l))));
    }
    (dyns, segs)
}

/// A list's SSA values, in order.
pub(crate) fn dynamics(l: &[Ofr]) -> Vec<Value> {
    l.iter()
        .filter_map(|x| match x {
            Ofr::V(v) => Some(*v),
            Ofr::S(_) => None,
        })
        .collect()
}

/// A list's static values, `DYNAMIC` for its operands.
pub(crate) fn statics(l: &[Ofr]) -> Vec<i64> {
    l.iter()
        .map(|x| match x {
            Ofr::S(s) => *s,
            Ofr::V(_) => DYNAMIC,
        })
        .collect()
}

/// Write `new` into `op`, keep it if `verify` accepts the op, else write `old` back.
pub(super) fn try_write(
    ctx: &Context,
    ir: &mut Ir,
    op: OpId,
    new: &Mixed,
    old: &Mixed,
    verify: ftuner_ir::dialect::VerifyFn,
) -> bool {
    new.write(ir, op);
    if verify(ctx, ir, op).is_ok() {
        return true;
    }
    old.write(ir, op);
    false
}

/// Give `op`'s only result type `ty` and a `tensor.cast` back to its old type for its
/// users (upstream's rewrite-then-cast pattern).
pub(super) fn retype_with_cast(ir: &mut Ir, op: OpId, ty: Type) {
    let r = ir.result(op, 0);
    let old = ir.value_type(r);
    let c = ir.create_op(
        OpSpec::new(intern_name("tensor.cast"), ir.loc(op))
            .operands([r])
            .results([old]),
    );
    ir.insert_after(op, c);
    let cr = ir.result(c, 0);
    ir.replace_all_uses(r, cr);
    ir.set_operand(c, 0, r);
    ir.set_value_type(r, ty);
}

/// A new `tensor.cast` of `v` to `ty` before `at` (at `at`'s location).
pub(crate) fn cast_before(ir: &mut Ir, at: OpId, v: Value, ty: Type) -> Value {
    let c = ir.create_op(
        OpSpec::new(intern_name("tensor.cast"), ir.loc(at))
            .operands([v])
            .results([ty]),
    );
    ir.insert_before(at, c);
    ir.result(c, 0)
}

/// Index operands that are constants become static entries (upstream's
/// `OpWithOffsetSizesAndStridesConstantArgumentFolder`, `FoldStaticPadding`'s first
/// half); `ok(list, value)` says which constants may.
fn fold_constants(
    ctx: &Context,
    ir: &Ir,
    m: &Mixed,
    ok: &dyn Fn(usize, i64) -> bool,
) -> Option<Mixed> {
    let mut new = m.clone();
    let mut changed = false;
    for (li, l) in new.lists.iter_mut().enumerate() {
        for x in l.iter_mut() {
            if let Ofr::V(v) = *x {
                if let Some(c) = constant_of(ctx, ir, v).and_then(|a| a.as_i64()) {
                    if c != DYNAMIC && ok(li, c) {
                        *x = Ofr::S(c);
                        changed = true;
                    }
                }
            }
        }
    }
    changed.then_some(new)
}

/// The pairs (size index, shape index) of the dims a rank-reducing slice of `sizes` with
/// shape `shape` keeps; `None` when the shape is not such a slice.
pub(super) fn kept_dims(sizes: &[i64], shape: &[i64]) -> Option<Vec<(usize, usize)>> {
    let keep = ftuner_ir::rank_reduction_keep(sizes, shape)?;
    Some(
        keep.iter()
            .enumerate()
            .filter(|(_, k)| **k)
            .map(|(i, _)| i)
            .enumerate()
            .map(|(j, i)| (i, j))
            .collect(),
    )
}

/// The shape `old` (a slice's result) with the static sizes of `sizes` in the dims a
/// rank reduction keeps.
fn sharpen_slice_shape(old: &[i64], old_sizes: &[i64], sizes: &[i64]) -> Option<Vec<i64>> {
    let mut out = old.to_vec();
    for (i, j) in kept_dims(old_sizes, old)? {
        if sizes[i] != DYNAMIC {
            out[j] = sizes[i];
        }
    }
    Some(out)
}

pub(super) fn slice_constants(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let Some(old) = Mixed::slice(ir, op) else {
        return false;
    };
    let Some(new) = fold_constants(ctx, ir, &old, &|l, c| l == 2 || c >= 0) else {
        return false;
    };
    let extract = ir.name(op) == "tensor.extract_slice";
    let verify = if extract {
        verify_extract_slice
    } else {
        verify_insert_slice
    };
    if !try_write(ctx, ir, op, &new, &old, verify) {
        return false;
    }
    let (os, ns) = (statics(&old.lists[1]), statics(&new.lists[1]));
    if extract {
        let rt = ir.value_type(ir.result(op, 0));
        let shape = rt.shape().unwrap_or(&[]).to_vec();
        if let Some(sharp) = sharpen_slice_shape(&shape, &os, &ns).filter(|s| *s != shape) {
            retype_with_cast(ir, op, rt.with_shape(sharp));
        }
    } else {
        // The inserted value is cast to the static sizes (upstream's verifier requires the
        // source type to match them).
        let src = ir.operand(op, 0);
        let st = ir.value_type(src);
        let shape = st.shape().unwrap_or(&[]).to_vec();
        if let Some(sharp) = sharpen_slice_shape(&shape, &os, &ns).filter(|s| *s != shape) {
            // A parallel insert's cast goes before its `scf.forall.in_parallel`, which holds
            // nothing else.
            let at = match ir.parent_op(op) {
                Some(p) if ir.name(op) == "tensor.parallel_insert_slice" => p,
                _ => op,
            };
            let v = cast_before(ir, at, src, st.with_shape(sharp));
            ir.set_operand(op, 0, v);
        }
    }
    true
}

/// `tensor.pad`'s constant low / high become static, and the result type as static as
/// the source and padding make it (upstream's `FoldStaticPadding`).
pub(super) fn pad_constants(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let Some(old) = Mixed::read(ir, op, 1, PAD) else {
        return false;
    };
    let Some(new) = fold_constants(ctx, ir, &old, &|_, c| c >= 0) else {
        return false;
    };
    if !try_write(ctx, ir, op, &new, &old, verify_pad) {
        return false;
    }
    sharpen_pad(ir, op);
    true
}

/// The result type of a `tensor.pad` made as static as its source and static padding
/// make it, with a cast back (upstream's verifier requires it).
pub(super) fn sharpen_pad(ir: &mut Ir, op: OpId) {
    let Some(new) = Mixed::read(ir, op, 1, PAD) else {
        return;
    };
    let src = ir.value_type(ir.operand(op, 0));
    let rt = ir.value_type(ir.result(op, 0));
    let (Some(ss), Some(rs)) = (src.shape(), rt.shape()) else {
        return;
    };
    let (lo, hi) = (statics(&new.lists[0]), statics(&new.lists[1]));
    let sharp: Vec<i64> = (0..rs.len())
        .map(|i| {
            let known = rs[i] == DYNAMIC && ![ss[i], lo[i], hi[i]].contains(&DYNAMIC);
            match known.then(|| ss[i].checked_add(lo[i])?.checked_add(hi[i])) {
                Some(Some(d)) => d,
                _ => rs[i],
            }
        })
        .collect();
    if sharp != rs {
        retype_with_cast(ir, op, rt.with_shape(sharp));
    }
}

/// A `tensor.pad` that adds nothing is its source, or a cast of it to the result type
/// (upstream's `PadOp::fold` and `FoldStaticZeroPadding`); one whose static result type
/// is its source's is its source too (the padding can only be zero).
pub(super) fn pad_nothing(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    if ir.attr(op, "nofold").is_some() {
        return false;
    }
    let src = ir.operand(op, 0);
    let (st, rt) = (ir.value_type(src), ir.value_type(ir.result(op, 0)));
    if st == rt && rt.has_static_shape() {
        ir.replace_op(op, &[src]);
        return true;
    }
    let Some(m) = Mixed::read(ir, op, 1, PAD) else {
        return false;
    };
    if !m.lists.iter().flatten().all(|x| *x == Ofr::S(0)) {
        return false;
    }
    if st == rt {
        ir.replace_op(op, &[src]);
        return true;
    }
    let v = cast_before(ir, op, src, rt);
    ir.replace_op(op, &[v]);
    true
}

/// `extract_slice(insert_slice(s into d, P), P)` is `s` (upstream's
/// `foldExtractAfterInsertSlice`).
pub(super) fn extract_after_insert(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let Some(ins) = ir
        .defining_op(ir.operand(op, 0))
        .filter(|d| ir.name(*d) == "tensor.insert_slice")
    else {
        return false;
    };
    let (Some(a), Some(b)) = (Mixed::slice(ir, op), Mixed::slice(ir, ins)) else {
        return false;
    };
    let s = ir.operand(ins, 0);
    if a.lists != b.lists || ir.value_type(s) != ir.value_type(ir.result(op, 0)) {
        return false;
    }
    ir.replace_op(op, &[s]);
    true
}

/// `extract_slice` of a splat constant is a splat constant (upstream's
/// `ExtractSliceOp::fold` of a splat).
pub(super) fn extract_of_splat(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let rt = ir.value_type(ir.result(op, 0));
    if !rt.has_static_shape() {
        return false;
    }
    let Some(AttrKind::DenseElements {
        splat: true,
        elements,
        ..
    }) = constant_of(ctx, ir, ir.operand(op, 0)).map(|a| a.kind())
    else {
        return false;
    };
    let a = Attribute::dense(rt, elements.clone());
    let v = crate::arith_canonicalize::cst_attr(ir, op, a, rt);
    ir.replace_op(op, &[v]);
    true
}

/// `insert_slice(extract_slice(d, P) into d, P)` is `d`, and an insert over the same
/// slice of a previous insert makes that one dead: `insert_slice(s2 into
/// insert_slice(s1 into d, P), P)` is `insert_slice(s2 into d, P)` (upstream's
/// `foldInsertAfterExtractSlice`, `foldInsertAfterInsertSlice`).
pub(super) fn insert_over_same_slice(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let Some(m) = Mixed::slice(ir, op) else {
        return false;
    };
    let (src, dest) = (m.prefix[0], m.prefix[1]);
    if let Some(ext) = ir
        .defining_op(src)
        .filter(|d| ir.name(*d) == "tensor.extract_slice")
    {
        let same = Mixed::slice(ir, ext).is_some_and(|e| e.lists == m.lists);
        if same && ir.operand(ext, 0) == dest {
            ir.replace_op(op, &[dest]);
            return true;
        }
    }
    if let Some(prev) = ir
        .defining_op(dest)
        .filter(|d| ir.name(*d) == "tensor.insert_slice")
    {
        let same = Mixed::slice(ir, prev).is_some_and(|p| p.lists == m.lists);
        let s1 = ir.operand(prev, 0);
        if same && ir.value_type(s1) == ir.value_type(src) {
            let d = ir.operand(prev, 1);
            ir.set_operand(op, 1, d);
            return true;
        }
    }
    false
}
