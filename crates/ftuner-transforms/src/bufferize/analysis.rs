//! The in-place analysis: which destination operands can be written in place, on the
//! tensor IR in program order, with the alias trees of values that share a buffer.

use super::structured::linalg_reads_outs;
use ftuner_dialects::linalg::ins_outs;
use ftuner_dialects::ops;
use ftuner_ir::{BlockId, Context, Ir, OpId, Value};
use rustc_hash::{FxHashMap, FxHashSet};

/// Destination operands of a destination-passing op: `(operand index, tied result)`, as
/// its [`super::Bufferizable`] model says, or its inits for a destination-style op.
pub(super) fn dests(ctx: &Context, ir: &Ir, op: OpId) -> Vec<(usize, Option<Value>)> {
    let name = ir.name(op);
    if let Some(m) = ctx.interface::<super::Bufferizable>(name) {
        return (m.destinations)(ir, op);
    }
    if !ctx.is_destination_style(name) {
        return vec![];
    }
    let (ins, outs) = ins_outs(ir, op);
    let mut out = vec![];
    let mut r = 0;
    for (i, v) in outs.iter().enumerate() {
        if ir.value_type(*v).is_tensor() {
            out.push((ins.len() + i, ir.results(op).get(r).copied()));
            r += 1;
        }
    }
    out
}

fn is_loop(name: &str) -> bool {
    matches!(
        name,
        ops::scf::ForOp::NAME
            | ops::scf::WhileOp::NAME
            | ops::scf::ParallelOp::NAME
            | ops::scf::ForallOp::NAME
    )
}

pub(super) struct Analysis {
    /// Pre-order position of every op of the function.
    order: FxHashMap<OpId, usize>,
    /// The value each value shares its buffer with (an alias tree's edges, child -> parent).
    pub(super) parent: FxHashMap<Value, Value>,
    children: FxHashMap<Value, Vec<Value>>,
    /// Destination operands `(op, operand index)` written in place.
    pub(super) in_place: FxHashSet<(OpId, usize)>,
    read_only: FxHashSet<Value>,
    /// Values linked to their parent as views (slices, reshapes).
    views: FxHashSet<Value>,
}

impl Analysis {
    fn new(ir: &Ir, func: OpId) -> Analysis {
        let mut order = FxHashMap::default();
        for (i, o) in ir.collect_pre(func).into_iter().enumerate() {
            order.insert(o, i);
        }
        let mut read_only = FxHashSet::default();
        if let Some(b) = ir
            .regions_of(func)
            .first()
            .and_then(|r| ir.region_entry(*r))
        {
            read_only.extend(ir.block_args(b).iter().copied());
        }
        Analysis {
            order,
            parent: FxHashMap::default(),
            children: FxHashMap::default(),
            in_place: FxHashSet::default(),
            read_only,
            views: FxHashSet::default(),
        }
    }

    fn link(&mut self, child: Value, parent: Value) {
        self.parent.insert(child, parent);
        self.children.entry(parent).or_default().push(child);
    }

    /// `v` is a whole buffer: no view between it and its root.
    fn whole(&self, v: Value) -> bool {
        self.chain(v).iter().all(|c| !self.views.contains(c))
    }

    fn root(&self, mut v: Value) -> Value {
        while let Some(p) = self.parent.get(&v) {
            v = *p;
        }
        v
    }

    fn chain(&self, mut v: Value) -> Vec<Value> {
        let mut out = vec![v];
        while let Some(p) = self.parent.get(&v) {
            v = *p;
            out.push(v);
        }
        out
    }

    fn tree(&self, root: Value) -> Vec<Value> {
        let mut out = vec![root];
        let mut i = 0;
        while i < out.len() {
            if let Some(c) = self.children.get(&out[i]) {
                out.extend(c.iter().copied());
            }
            i += 1;
        }
        out
    }

    /// Position at which `v` comes into existence (its op, or its block's op).
    fn def_pos(&self, ir: &Ir, v: Value) -> usize {
        let op = ir
            .defining_op(v)
            .or_else(|| ir.value_block(v).and_then(|b| ir.block_parent_op(b)));
        op.and_then(|o| self.order.get(&o).copied()).unwrap_or(0)
    }

    fn pos(&self, op: OpId) -> usize {
        self.order.get(&op).copied().unwrap_or(0)
    }
}

/// Ancestor ops of `op` from the function body down to `op` itself.
fn path(ir: &Ir, func: OpId, op: OpId) -> Vec<OpId> {
    let mut p = vec![op];
    let mut o = op;
    while let Some(q) = ir.parent_op(o) {
        if q == func {
            break;
        }
        p.push(q);
        o = q;
    }
    p.reverse();
    p
}

/// Whether op `u` may run after op `w` while the value `v` it reads still holds data
/// from before `w` (program order, loop iterations, exclusive branches).
fn may_follow(ir: &Ir, func: OpId, u: OpId, w: OpId, v: Value) -> bool {
    let pu = path(ir, func, u);
    let pw = path(ir, func, w);
    let mut k = 0;
    while k < pu.len() && k < pw.len() && pu[k] == pw[k] {
        k += 1;
    }
    // A loop around both whose iterations see the same `v`: the next iteration follows.
    let carried = pu[..k]
        .iter()
        .any(|l| is_loop(ir.name(*l)) && !ir.defined_inside(v, *l));
    if carried {
        return true;
    }
    if k == pu.len() && k == pw.len() {
        return false; // u == w
    }
    if k == pw.len() {
        return true; // u inside the writing op
    }
    if k == pu.len() {
        return false; // w inside u: u's operands are read before its regions run
    }
    let (a, b) = (pu[k], pw[k]);
    let (ba, bb) = (ir.op(a).parent, ir.op(b).parent);
    if ba != bb {
        // Different regions of the op at pu[k-1]: exclusive branches, or sequential.
        let owner = if k > 0 { Some(pu[k - 1]) } else { None };
        return !owner.is_some_and(|o| {
            matches!(
                ir.name(o),
                ops::scf::IfOp::NAME | ops::scf::IndexSwitchOp::NAME
            )
        });
    }
    // `u` follows `w` when it comes later in their common block.
    let mut o = ir.op(b).next;
    while let Some(x) = o {
        if x == a {
            return true;
        }
        o = ir.op(x).next;
    }
    false
}

fn slice_key(ir: &Ir, op: OpId, skip: usize) -> (Vec<Value>, Vec<Option<Vec<i64>>>) {
    let vals = ir.operands(op).get(skip..).unwrap_or(&[]).to_vec();
    let attrs = ["static_offsets", "static_sizes", "static_strides"]
        .iter()
        .map(|a| ir.attr(op, a).and_then(|x| x.as_dense_i64s()))
        .collect();
    (vals, attrs)
}

/// Follow destination-passing ops back from `v` to the value they started writing into.
fn dps_origin(ctx: &Context, ir: &Ir, mut v: Value) -> Value {
    for _ in 0..100_000 {
        let Some(d) = ir.defining_op(v) else {
            return v;
        };
        if matches!(
            ir.name(d),
            ops::scf::IfOp::NAME | ops::scf::IndexSwitchOp::NAME
        ) {
            // A branch result: the origin every branch's yield shares (an epilogue applied
            // in one branch and skipped in the other writes the same slice).
            let Some(j) = ir.results(d).iter().position(|r| *r == v) else {
                return v;
            };
            let mut origin = None;
            for r in ir.regions_of(d) {
                let Some(y) = ir
                    .region_entry(*r)
                    .and_then(|b| ir.terminator(b))
                    .and_then(|t| ir.operands(t).get(j).copied())
                else {
                    return v;
                };
                let o = dps_origin(ctx, ir, y);
                match origin {
                    None => origin = Some(o),
                    Some(p) if p != o => return v,
                    _ => {}
                }
            }
            return origin.unwrap_or(v);
        }
        let Some((i, _)) = dests(ctx, ir, d).into_iter().find(|(_, r)| *r == Some(v)) else {
            return v;
        };
        v = ir.operand(d, i);
    }
    v
}

/// `u` is `insert_slice` into `dest` of a value that was written in place into an
/// `extract_slice` of `dest` with the same offsets, sizes and strides (one on `chain`).
pub(super) fn matching_insert(
    ctx: &Context,
    ir: &Ir,
    u: OpId,
    dest: Value,
    chain: &[Value],
) -> bool {
    if ir.name(u) != ops::tensor::InsertSliceOp::NAME || ir.operands(u).get(1) != Some(&dest) {
        return false;
    }
    let origin = dps_origin(ctx, ir, ir.operand(u, 0));
    chain.iter().any(|c| {
        *c == origin
            && ir.defining_op(*c).is_some_and(|e| {
                ir.name(e) == ops::tensor::ExtractSliceOp::NAME
                    && ir.operand(e, 0) == dest
                    && slice_key(ir, e, 1) == slice_key(ir, u, 2)
            })
    })
}

/// Operand `k` of `op` is a destination the op overwrites without reading.
pub(super) fn only_overwrites(ctx: &Context, ir: &Ir, op: OpId, k: u32) -> bool {
    let name = ir.name(op);
    if !ctx.is_destination_style(name) || linalg_reads_outs(ir, op) {
        return false;
    }
    let (ins, outs) = ins_outs(ir, op);
    (k as usize) >= ins.len() && (k as usize) < ins.len() + outs.len()
}

/// A linalg op reading input `k` (value `v`) and writing output `idx` (value `d`) where
/// both are the whole of one buffer and are indexed by the same map: every point reads the
/// element it then writes, so sharing the buffer is safe.
fn same_point(ir: &Ir, an: &Analysis, w: OpId, k: usize, idx: usize, v: Value, d: Value) -> bool {
    if !ir.name(w).starts_with("linalg.") || !an.whole(v) || !an.whole(d) {
        return false;
    }
    let Some(maps) = ftuner_dialects::linalg::body::indexing_maps(ir, w) else {
        return false;
    };
    match (maps.get(k), maps.get(idx)) {
        (Some(a), Some(b)) => {
            // A permutation: a map repeating a dim (`(d0, d0)`) reads, at some point, an
            // element another point has already written.
            a == b && a.as_permutation().is_some()
        }
        _ => false,
    }
}

/// Whether writing into `d` (operand `idx` of `w`) in place could change the program.
fn conflicts(
    ctx: &Context,
    ir: &Ir,
    func: OpId,
    an: &Analysis,
    w: OpId,
    idx: usize,
    d: Value,
) -> bool {
    let root = an.root(d);
    if an.read_only.contains(&root)
        || ir
            .defining_op(root)
            .is_some_and(|o| ir.name(o) == ops::arith::ConstantOp::NAME)
    {
        return true;
    }
    let chain = an.chain(d);
    // The write itself repeats in a loop that does not redefine the buffer.
    let wp = path(ir, func, w);
    for v in &chain {
        if wp[..wp.len() - 1]
            .iter()
            .any(|l| is_loop(ir.name(*l)) && !ir.defined_inside(*v, *l))
        {
            return true;
        }
    }
    let wpos = an.pos(w);
    // An insert_slice whose source was written in place into the same slice of `d`.
    let self_match = ir.name(w) == ops::tensor::InsertSliceOp::NAME
        && matching_insert(ctx, ir, w, d, &[dps_origin(ctx, ir, ir.operand(w, 0))]);
    for v in an.tree(root) {
        if an.def_pos(ir, v) >= wpos && v != d {
            continue;
        }
        for u in ir.uses(v) {
            if u.op == w {
                // Another operand `w` writes in place already (a generic with one tensor
                // as two outputs): two results would share one buffer.
                let k = u.operand as usize;
                let written = || an.in_place.contains(&(w, k));
                if k == idx || self_match || (!written() && same_point(ir, an, w, k, idx, v, d)) {
                    continue;
                }
                return true;
            }
            let un = ir.name(u.op);
            if un == ops::tensor::DimOp::NAME
                || un == ops::memref::DimOp::NAME
                || only_overwrites(ctx, ir, u.op, u.operand)
            {
                continue;
            }
            if !may_follow(ir, func, u.op, w, v) {
                continue;
            }
            if matching_insert(ctx, ir, u.op, v, &chain) {
                continue;
            }
            return true;
        }
    }
    false
}

/// The analysis of function `func`, whose body is block `entry`.
pub(super) fn analyze(ctx: &Context, ir: &Ir, func: OpId, entry: BlockId) -> Analysis {
    let mut an = Analysis::new(ir, func);
    analyze_block(ctx, ir, func, &mut an, entry);
    an
}

fn analyze_block(ctx: &Context, ir: &Ir, func: OpId, an: &mut Analysis, b: BlockId) {
    for op in ir.block_ops_vec(b) {
        for (idx, res) in dests(ctx, ir, op) {
            let d = ir.operand(op, idx);
            if !conflicts(ctx, ir, func, an, op, idx, d) {
                an.in_place.insert((op, idx));
                if let Some(r) = res {
                    an.link(r, d);
                }
            }
        }
        let model = ctx.interface::<super::Bufferizable>(ir.name(op));
        if model.is_some_and(|m| m.view) {
            if let (Some(r), Some(s)) = (ir.results(op).first(), ir.operands(op).first()) {
                an.link(*r, *s);
                an.views.insert(*r);
            }
        }
        for r in ir.regions_of(op).to_vec() {
            for blk in ir.region(r).blocks.clone() {
                analyze_block(ctx, ir, func, an, blk);
            }
        }
        if model.is_some_and(|m| m.yields_results) {
            link_branch_results(ir, an, op);
        }
    }
}

/// A tensor result of `scf.if`/`scf.index_switch` `op` shares the buffer of the value
/// (defined outside `op`) that every branch yields a view or in-place write of.
fn link_branch_results(ir: &Ir, an: &mut Analysis, op: OpId) {
    for (i, res) in ir.results(op).to_vec().into_iter().enumerate() {
        if !ir.value_type(res).is_tensor() {
            continue;
        }
        let mut common: Option<Option<Value>> = None;
        for r in ir.regions_of(op) {
            let x = ir
                .region_entry(*r)
                .and_then(|blk| ir.terminator(blk))
                .and_then(|t| ir.operands(t).get(i).copied())
                .and_then(|mut v| {
                    while ir
                        .defining_op(v)
                        .or_else(|| ir.value_block(v).and_then(|b| ir.block_parent_op(b)))
                        .is_some_and(|o| o != op && ir.is_ancestor(op, o))
                    {
                        v = *an.parent.get(&v)?;
                    }
                    Some(v)
                });
            common = match common {
                None => Some(x),
                Some(c) if c == x => Some(c),
                Some(_) => Some(None),
            };
        }
        if let Some(Some(x)) = common {
            an.link(res, x);
        }
    }
}
