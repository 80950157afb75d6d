//! `bufferize`: tensors become buffers (memrefs), writing in place wherever that cannot
//! change what the program computes, copying where it could.
//!
//! Two phases per function, as in MLIR's One-Shot Bufferize:
//!
//! 1. **Analysis** on the tensor IR, in program order. Every destination operand of a
//!    destination-passing op (`vector.transfer_write`, `tensor.insert_slice`,
//!    `tensor.insert`, the `outs` of `linalg` ops, the `iter_args` inits of `scf.for`) is a
//!    candidate to write in place. Values that share a buffer form an alias tree
//!    (`extract_slice`/reshapes are views of their source; an in-place write's result
//!    shares its destination's buffer; an `scf.if`/`scf.index_switch` result shares the
//!    buffer all its branches yield). A write into `d` is in place unless some value of
//!    `d`'s tree defined before the write is used (for its data, not its shape) after it
//!    (in a later position, a later iteration of an enclosing loop, or inside the writing
//!    op), or the tree's root is read-only (function arguments, constants). The one
//!    exception is MLIR's matching pair: `insert_slice` of a value written in place into an
//!    `extract_slice` of the same destination at the same offsets, sizes and strides.
//! 2. **Rewrite**: each function body is rebuilt on buffers. `tensor.empty` becomes an
//!    aligned `memref.alloc`; views become `memref.subview`/`collapse_shape`/...; reads
//!    become `memref.load`/`vector.transfer_read`; a write in place writes the destination's
//!    buffer; any other write first copies the destination into a new buffer. Constant
//!    tensors become private `memref.global`s. `scf.for` loses its tensor `iter_args` (the
//!    buffer is updated in place; a yielded buffer that is not the loop's is copied back).
//!    Functions take and return identity-layout memrefs; a returned buffer is always one
//!    the function allocated (else a copy), so callers own results. Every allocation that
//!    does not escape is freed with `memref.dealloc` at the end of its block.

mod index;
mod pad;

use crate::runtime_checks::{what, Checks, IN_BOUNDS};
use ftuner_dialects::linalg::ins_outs;
use ftuner_ir::{
    intern_name, AttrKind, Attribute, BlockId, Diagnostic, Ir, OpId, OpSpec, Type, TypeKind, Value,
    DYNAMIC,
};
use ftuner_pass::{Pass, PassContext, PassFailure, Statistic};
use rustc_hash::{FxHashMap, FxHashSet};

// ----- types -------------------------------------------------------------------------

/// The identity-layout memref of a ranked tensor type.
fn memref_of(t: Type) -> Option<Type> {
    match t.kind() {
        TypeKind::RankedTensor { shape, elem, .. } => Some(Type::memref(shape.clone(), *elem)),
        _ => None,
    }
}

fn with_layout(shape: Vec<i64>, elem: Type, layout: Option<Attribute>) -> Type {
    Type::get(TypeKind::MemRef {
        shape,
        elem,
        layout,
        memory_space: None,
    })
}

/// `(strides, offset)` of a memref type (`DYNAMIC` where unknown).
fn strides_of(t: Type) -> Option<(Vec<i64>, i64)> {
    t.strides_and_offset()
}

fn is_identity(t: Type) -> bool {
    matches!(t.kind(), TypeKind::MemRef { layout: None, .. })
}

fn mul(a: i64, b: i64) -> i64 {
    if a == DYNAMIC || b == DYNAMIC {
        DYNAMIC
    } else {
        a.saturating_mul(b)
    }
}

/// The type of `memref.subview` of `src` with these static offsets/sizes/strides, reduced
/// to `want_rank` by dropping unit dims (left to right) when that is smaller.
fn subview_type(
    src: Type,
    offs: &[i64],
    sizes: &[i64],
    steps: &[i64],
    want: &[i64],
) -> Option<Type> {
    let (st, off0) = strides_of(src)?;
    if st.len() != sizes.len() || offs.len() != sizes.len() || steps.len() != sizes.len() {
        return None;
    }
    let mut offset = off0;
    for (o, s) in offs.iter().zip(&st) {
        offset = if offset == DYNAMIC {
            DYNAMIC
        } else {
            match mul(*o, *s) {
                DYNAMIC => DYNAMIC,
                x => offset.saturating_add(x),
            }
        };
    }
    let mut dims: Vec<(i64, i64)> = sizes
        .iter()
        .zip(steps.iter().zip(&st))
        .map(|(sz, (k, s))| (*sz, mul(*k, *s)))
        .collect();
    if want.len() < dims.len() {
        let sz: Vec<i64> = dims.iter().map(|d| d.0).collect();
        let keep = ftuner_ir::rank_reduction_keep(&sz, want)?;
        dims = dims
            .into_iter()
            .zip(keep)
            .filter_map(|(d, k)| k.then_some(d))
            .collect();
    }
    if dims.len() != want.len() {
        return None;
    }
    let layout = Attribute::get(AttrKind::StridedLayout {
        offset,
        strides: dims.iter().map(|d| d.1).collect(),
    });
    Some(with_layout(
        dims.iter().map(|d| d.0).collect(),
        src.element_type(),
        Some(layout),
    ))
}

fn dict_entries(a: Attribute) -> Vec<(String, Attribute)> {
    match a.kind() {
        AttrKind::Dictionary(e) => e.clone(),
        _ => vec![],
    }
}

// ----- analysis ----------------------------------------------------------------------

/// Destination operands of a destination-passing op: `(operand index, tied result)`.
fn dests(ir: &Ir, op: OpId) -> Vec<(usize, Option<Value>)> {
    let name = ir.name(op);
    let is_t = |v: Value| ir.value_type(v).is_tensor();
    match name {
        "vector.transfer_write" | "tensor.insert_slice" | "tensor.insert" => {
            match ir.operands(op).get(1) {
                Some(v) if is_t(*v) => vec![(1, ir.results(op).first().copied())],
                _ => vec![],
            }
        }
        "scf.for" => {
            let mut out = vec![];
            for (k, v) in ir.operands(op).iter().enumerate().skip(3) {
                if is_t(*v) {
                    out.push((k, ir.results(op).get(k - 3).copied()));
                }
            }
            out
        }
        _ if structured(name) => {
            let (ins, outs) = ins_outs(ir, op);
            let mut out = vec![];
            let mut r = 0;
            for (i, v) in outs.iter().enumerate() {
                if is_t(*v) {
                    out.push((ins.len() + i, ir.results(op).get(r).copied()));
                    r += 1;
                }
            }
            out
        }
        _ => vec![],
    }
}

/// Ops whose tensor result is a view of operand 0.
fn is_view(name: &str) -> bool {
    matches!(
        name,
        "tensor.extract_slice"
            | "tensor.cast"
            | "tensor.collapse_shape"
            | "tensor.expand_shape"
            | "tensor.reshape"
    )
}

fn is_loop(name: &str) -> bool {
    matches!(
        name,
        "scf.for" | "scf.while" | "scf.parallel" | "scf.forall"
    )
}

struct Analysis {
    /// Pre-order position of every op of the function.
    order: FxHashMap<OpId, usize>,
    parent: FxHashMap<Value, Value>,
    children: FxHashMap<Value, Vec<Value>>,
    in_place: FxHashSet<(OpId, usize)>,
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
        return !owner.is_some_and(|o| matches!(ir.name(o), "scf.if" | "scf.index_switch"));
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
fn dps_origin(ir: &Ir, mut v: Value) -> Value {
    for _ in 0..100_000 {
        let Some(d) = ir.defining_op(v) else {
            return v;
        };
        if matches!(ir.name(d), "scf.if" | "scf.index_switch") {
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
                let o = dps_origin(ir, y);
                match origin {
                    None => origin = Some(o),
                    Some(p) if p != o => return v,
                    _ => {}
                }
            }
            return origin.unwrap_or(v);
        }
        let Some((i, _)) = dests(ir, d).into_iter().find(|(_, r)| *r == Some(v)) else {
            return v;
        };
        v = ir.operand(d, i);
    }
    v
}

/// `u` is `insert_slice` into `dest` of a value that was written in place into an
/// `extract_slice` of `dest` with the same offsets, sizes and strides (one on `chain`).
fn matching_insert(ir: &Ir, u: OpId, dest: Value, chain: &[Value]) -> bool {
    if ir.name(u) != "tensor.insert_slice" || ir.operands(u).get(1) != Some(&dest) {
        return false;
    }
    let origin = dps_origin(ir, ir.operand(u, 0));
    chain.iter().any(|c| {
        *c == origin
            && ir.defining_op(*c).is_some_and(|e| {
                ir.name(e) == "tensor.extract_slice"
                    && ir.operand(e, 0) == dest
                    && slice_key(ir, e, 1) == slice_key(ir, u, 2)
            })
    })
}

/// Operand `k` of `op` is a destination the op overwrites without reading.
fn only_overwrites(ir: &Ir, op: OpId, k: u32) -> bool {
    let name = ir.name(op);
    if !structured(name) || linalg_reads_outs(ir, op) {
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
            a == b
                && a.as_permutation_like()
                    .is_some_and(|p| p.len() == a.num_dims as usize)
        }
        _ => false,
    }
}

/// Whether writing into `d` (operand `idx` of `w`) in place could change the program.
fn conflicts(ir: &Ir, func: OpId, an: &Analysis, w: OpId, idx: usize, d: Value) -> bool {
    let root = an.root(d);
    if an.read_only.contains(&root)
        || ir
            .defining_op(root)
            .is_some_and(|o| ir.name(o) == "arith.constant")
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
    let self_match = ir.name(w) == "tensor.insert_slice"
        && matching_insert(ir, w, d, &[dps_origin(ir, ir.operand(w, 0))]);
    for v in an.tree(root) {
        if an.def_pos(ir, v) >= wpos && v != d {
            continue;
        }
        for u in ir.uses(v) {
            if u.op == w {
                if u.operand as usize == idx
                    || self_match
                    || same_point(ir, an, w, u.operand as usize, idx, v, d)
                {
                    continue;
                }
                return true;
            }
            let un = ir.name(u.op);
            if un == "tensor.dim" || un == "memref.dim" || only_overwrites(ir, u.op, u.operand) {
                continue;
            }
            if !may_follow(ir, func, u.op, w, v) {
                continue;
            }
            if matching_insert(ir, u.op, v, &chain) {
                continue;
            }
            return true;
        }
    }
    false
}

fn analyze_block(ir: &Ir, func: OpId, an: &mut Analysis, b: BlockId) {
    for op in ir.block_ops_vec(b) {
        for (idx, res) in dests(ir, op) {
            let d = ir.operand(op, idx);
            if !conflicts(ir, func, an, op, idx, d) {
                an.in_place.insert((op, idx));
                if let Some(r) = res {
                    an.link(r, d);
                }
            }
        }
        let name = ir.name(op);
        if is_view(name) {
            if let (Some(r), Some(s)) = (ir.results(op).first(), ir.operands(op).first()) {
                an.link(*r, *s);
                an.views.insert(*r);
            }
        }
        for r in ir.regions_of(op).to_vec() {
            for blk in ir.region(r).blocks.clone() {
                analyze_block(ir, func, an, blk);
            }
        }
        if matches!(name, "scf.if" | "scf.index_switch") {
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
    }
}

// ----- rewrite -----------------------------------------------------------------------

struct Rw<'a> {
    ir: &'a mut Ir,
    an: &'a Analysis,
    /// Old value -> new value (tensors -> their buffers).
    map: FxHashMap<Value, Value>,
    /// New allocations to free at the end of their block unless they escape.
    owned: Vec<(Value, BlockId)>,
    /// Constant tensors turned into globals: (name, value, type).
    globals: &'a mut Vec<(String, Attribute, Type)>,
    /// Where `memref.get_global`s go (the new entry block).
    entry: BlockId,
    copies: u64,
    allocs: u64,
}

type R<T> = Result<T, (OpId, String)>;

impl Rw<'_> {
    fn new_op(
        &mut self,
        b: BlockId,
        name: &str,
        operands: Vec<Value>,
        results: Vec<Type>,
        props: Vec<(String, Attribute)>,
        loc: Attribute,
    ) -> OpId {
        let mut s = OpSpec::new(intern_name(name), loc)
            .operands(operands)
            .results(results);
        s.props = props;
        let o = self.ir.create_op(s);
        self.ir.append_op(b, o);
        o
    }

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

    fn v(&self, old: OpId, v: Value) -> R<Value> {
        self.map
            .get(&v)
            .copied()
            .ok_or((old, "uses a value bufferization has not seen".into()))
    }

    /// A new identity-layout buffer shaped like `like` (a memref value), owned by `b`.
    fn alloc_like(&mut self, b: BlockId, like: Value, loc: Attribute) -> Value {
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

    fn alloc(&mut self, b: BlockId, ty: Type, dyns: Vec<Value>, loc: Attribute) -> Value {
        let n = dyns.len() as i32;
        let o = self.new_op(
            b,
            "memref.alloc",
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

    fn copy(&mut self, b: BlockId, src: Value, dst: Value, loc: Attribute) {
        self.new_op(b, "memref.copy", vec![src, dst], vec![], vec![], loc);
    }

    /// The buffer an op writes for destination operand `idx`: the destination's own when
    /// the analysis allows, else a copy of it.
    fn dest(&mut self, b: BlockId, op: OpId, idx: usize, need_old: bool) -> R<Value> {
        let d = self.v(op, self.ir.operand(op, idx))?;
        if self.an.in_place.contains(&(op, idx)) {
            return Ok(d);
        }
        let loc = self.ir.loc(op);
        let n = self.alloc_like(b, d, loc);
        if need_old {
            // A filled tensor is filled again rather than copied.
            let old = self.ir.operand(op, idx);
            let fill = self
                .ir
                .defining_op(old)
                .filter(|f| self.ir.name(*f) == "linalg.fill" && self.ir.operands(*f).len() == 2);
            match fill.map(|f| self.v(f, self.ir.operand(f, 0))) {
                Some(Ok(val)) => {
                    let elem = self.ir.value_type(n).element_type();
                    let f = self.ir.create_op(
                        OpSpec::new(intern_name("linalg.fill"), loc)
                            .operands(vec![val, n])
                            .prop("operandSegmentSizes", Attribute::dense_i32_array(&[1, 1]))
                            .regions(1),
                    );
                    self.ir.append_op(b, f);
                    fill_body(self.ir, f, elem, loc);
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
    fn identity(&mut self, b: BlockId, buf: Value, loc: Attribute) -> Value {
        if is_identity(self.ir.value_type(buf)) {
            return buf;
        }
        let n = self.alloc_like(b, buf, loc);
        self.copy(b, buf, n, loc);
        self.copies += 1;
        n
    }

    fn block(&mut self, old: BlockId, new: BlockId) -> R<Option<OpId>> {
        let ops = self.ir.block_ops_vec(old);
        let mut term = None;
        for op in ops {
            let name = self.ir.name(op);
            if name == "func.return" || name == "scf.yield" {
                term = Some(op);
                continue;
            }
            self.op(op, new)?;
        }
        Ok(term)
    }

    /// Rebuild the regions of `old` into those of `new` (block arguments keep their
    /// types), emitting each block's terminator as it is.
    fn plain_regions(&mut self, old: OpId, new: OpId) -> R<()> {
        let olds = self.ir.regions_of(old).to_vec();
        let news = self.ir.regions_of(new).to_vec();
        for (ro, rn) in olds.into_iter().zip(news) {
            for ob in self.ir.region(ro).blocks.clone() {
                let types: Vec<Type> = self
                    .ir
                    .block_args(ob)
                    .iter()
                    .map(|a| self.ir.value_type(*a))
                    .collect();
                if types.iter().any(|t| t.is_tensor()) {
                    return Err((old, "has a region with tensor arguments".into()));
                }
                let nb = self.ir.append_block(rn, &types);
                for (a, n) in self
                    .ir
                    .block_args(ob)
                    .to_vec()
                    .into_iter()
                    .zip(self.ir.block_args(nb).to_vec())
                {
                    self.map.insert(a, n);
                }
                let ops = self.ir.block_ops_vec(ob);
                for op in ops {
                    self.op(op, nb)?;
                }
            }
        }
        Ok(())
    }

    /// A copy of `op` with mapped operands, the given result types and rebuilt regions.
    fn clone_like(
        &mut self,
        op: OpId,
        b: BlockId,
        operands: Vec<Value>,
        results: Vec<Type>,
    ) -> R<OpId> {
        let od = self.ir.op(op);
        let mut s = OpSpec::new(od.name, od.loc)
            .operands(operands)
            .results(results)
            .regions(od.regions.len());
        s.props = dict_entries(od.props);
        s.attrs = dict_entries(od.attrs);
        s.successors = od.successors.to_vec();
        let n = self.ir.create_op(s);
        self.ir.append_op(b, n);
        self.plain_regions(op, n)?;
        Ok(n)
    }

    fn op(&mut self, op: OpId, b: BlockId) -> R<()> {
        let ir_name = self.ir.name(op);
        let loc = self.ir.loc(op);
        let operands = self.ir.operands(op).to_vec();
        let results = self.ir.results(op).to_vec();
        let touches_tensors = operands
            .iter()
            .chain(&results)
            .any(|v| self.ir.value_type(*v).is_tensor());
        let res_memref = |ir: &Ir, i: usize| -> R<Type> {
            memref_of(ir.value_type(ir.result(op, i)))
                .ok_or((op, "unranked tensors cannot be bufferized".into()))
        };
        if !touches_tensors && !matches!(ir_name, "scf.for" | "scf.if" | "scf.index_switch") {
            let ops: Vec<Value> = operands.iter().map(|v| self.v(op, *v)).collect::<R<_>>()?;
            let tys: Vec<Type> = results.iter().map(|v| self.ir.value_type(*v)).collect();
            let n = self.clone_like(op, b, ops, tys)?;
            for (o, r) in results.iter().zip(self.ir.results(n).to_vec()) {
                self.map.insert(*o, r);
            }
            return Ok(());
        }
        match ir_name {
            "arith.constant" => {
                let ty = res_memref(self.ir, 0)?;
                let value = self
                    .ir
                    .attr(op, "value")
                    .ok_or((op, "has no value".into()))?;
                let name = match self.globals.iter().find(|g| g.1 == value && g.2 == ty) {
                    Some(g) => g.0.clone(),
                    None => {
                        let n = format!("__constant_{}", self.globals.len());
                        self.globals.push((n.clone(), value, ty));
                        n
                    }
                };
                let g = self.ir.create_op(
                    OpSpec::new(intern_name("memref.get_global"), loc)
                        .results(vec![ty])
                        .prop("name", Attribute::symbol_ref(name)),
                );
                self.ir.prepend_op(self.entry, g);
                self.map.insert(results[0], self.ir.result(g, 0));
            }
            "tensor.empty" => {
                let ty = res_memref(self.ir, 0)?;
                let dyns = operands
                    .iter()
                    .map(|v| self.v(op, *v))
                    .collect::<R<_>>()?;
                let a = self.alloc(b, ty, dyns, loc);
                self.map.insert(results[0], a);
            }
            "tensor.dim" | "tensor.extract" => {
                let ops = operands
                    .iter()
                    .map(|v| self.v(op, *v))
                    .collect::<R<_>>()?;
                let nm = if ir_name == "tensor.dim" {
                    "memref.dim"
                } else {
                    "memref.load"
                };
                let t = self.ir.value_type(results[0]);
                let n = self.new_op(b, nm, ops, vec![t], vec![], loc);
                self.map.insert(results[0], self.ir.result(n, 0));
            }
            "tensor.extract_slice" => {
                let src = self.v(op, operands[0])?;
                let (offs, sizes, steps) = static_slice(self.ir, op);
                let want = self.ir.value_type(results[0]);
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
                let n = self.new_op(b, "memref.subview", ops, vec![ty], props, loc);
                self.map.insert(results[0], self.ir.result(n, 0));
            }
            "tensor.insert_slice" => {
                let src = self.v(op, operands[0])?;
                let dst = self.dest(b, op, 1, true)?;
                let mut rest = vec![];
                for v in &operands[2..] {
                    rest.push(self.v(op, *v)?);
                }
                self.check_slice(b, op, dst, &rest);
                let mut props = dict_entries(self.ir.op(op).props);
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
                // Already there: the source is this very subview of the destination.
                let same = self.ir.defining_op(src).is_some_and(|d| {
                    self.ir.name(d) == "memref.subview"
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
                    let sv = self.new_op(b, "memref.subview", ops, vec![ty], props, loc);
                    let sv = self.ir.result(sv, 0);
                    self.copy(b, src, sv, loc);
                }
                self.map.insert(results[0], dst);
            }
            "tensor.insert" => {
                let val = self.v(op, operands[0])?;
                let dst = self.dest(b, op, 1, true)?;
                let mut ops = vec![val, dst];
                for v in &operands[2..] {
                    ops.push(self.v(op, *v)?);
                }
                self.new_op(b, "memref.store", ops, vec![], vec![], loc);
                self.map.insert(results[0], dst);
            }
            "tensor.cast" => {
                let src = self.v(op, operands[0])?;
                let st = self.ir.value_type(src);
                let rt = self.ir.value_type(results[0]);
                let layout = match st.kind() {
                    TypeKind::MemRef { layout, .. } => *layout,
                    _ => None,
                };
                let ty = with_layout(
                    rt.shape().unwrap_or(&[]).to_vec(),
                    rt.element_type(),
                    layout,
                );
                let n = self.new_op(b, "memref.cast", vec![src], vec![ty], vec![], loc);
                self.map.insert(results[0], self.ir.result(n, 0));
            }
            "tensor.collapse_shape" | "tensor.expand_shape" | "tensor.reshape" => {
                let src = self.v(op, operands[0])?;
                let src = self.identity(b, src, loc);
                let mut ops = vec![src];
                for v in &operands[1..] {
                    ops.push(self.v(op, *v)?);
                }
                let ty = res_memref(self.ir, 0)?;
                let nm = ir_name.replacen("tensor.", "memref.", 1);
                let props = dict_entries(self.ir.op(op).props);
                let n = self.new_op(b, &nm, ops, vec![ty], props, loc);
                self.map.insert(results[0], self.ir.result(n, 0));
            }
            "tensor.pad" => self.pad(op, b)?,
            "tensor.from_elements" | "tensor.splat" => {
                let ty = res_memref(self.ir, 0)?;
                let shape = ty.shape().unwrap_or(&[]).to_vec();
                if ir_name == "tensor.splat" {
                    let val = self.v(op, operands[0])?;
                    let dyns = operands[1..]
                        .iter()
                        .map(|v| self.v(op, *v))
                        .collect::<R<_>>()?;
                    let a = self.alloc(b, ty, dyns, loc);
                    let f = self.ir.create_op(
                        OpSpec::new(intern_name("linalg.fill"), loc)
                            .operands(vec![val, a])
                            .prop("operandSegmentSizes", Attribute::dense_i32_array(&[1, 1]))
                            .regions(1),
                    );
                    self.ir.append_op(b, f);
                    fill_body(self.ir, f, ty.element_type(), loc);
                    self.map.insert(results[0], a);
                } else {
                    let a = self.alloc(b, ty, vec![], loc);
                    let mut point = vec![0i64; shape.len()];
                    for v in &operands {
                        let val = self.v(op, *v)?;
                        let mut ops = vec![val, a];
                        for p in point.clone() {
                            ops.push(self.index_const(b, p, loc));
                        }
                        self.new_op(b, "memref.store", ops, vec![], vec![], loc);
                        for d in (0..point.len()).rev() {
                            point[d] += 1;
                            if point[d] < shape[d] {
                                break;
                            }
                            point[d] = 0;
                        }
                    }
                    self.map.insert(results[0], a);
                }
            }
            "vector.transfer_read" => {
                let ops = operands
                    .iter()
                    .map(|v| self.v(op, *v))
                    .collect::<R<_>>()?;
                let t = self.ir.value_type(results[0]);
                let props = dict_entries(self.ir.op(op).props);
                let n = self.new_op(b, ir_name, ops, vec![t], props, loc);
                self.map.insert(results[0], self.ir.result(n, 0));
            }
            "vector.transfer_write" => {
                let val = self.v(op, operands[0])?;
                let dst = self.dest(b, op, 1, true)?;
                let mut ops = vec![val, dst];
                for v in &operands[2..] {
                    ops.push(self.v(op, *v)?);
                }
                let props = dict_entries(self.ir.op(op).props);
                self.new_op(b, ir_name, ops, vec![], props, loc);
                self.map.insert(results[0], dst);
            }
            "scf.for" => self.scf_for(op, b)?,
            "scf.if" | "scf.index_switch" => self.branches(op, b)?,
            "func.call" => {
                let ops = operands
                    .iter()
                    .map(|v| self.v(op, *v))
                    .collect::<R<_>>()?;
                let tys = results
                    .iter()
                    .map(|r| {
                        let t = self.ir.value_type(*r);
                        if t.is_tensor() {
                            memref_of(t).ok_or((op, "unranked tensor result".into()))
                        } else {
                            Ok(t)
                        }
                    })
                    .collect::<R<Vec<_>>>()?;
                let n = self.clone_like(op, b, ops, tys)?;
                for (i, (o, r)) in results
                    .iter()
                    .zip(self.ir.results(n).to_vec())
                    .enumerate()
                {
                    self.map.insert(*o, r);
                    if self.ir.value_type(results[i]).is_tensor() {
                        self.owned.push((r, b));
                    }
                }
            }
            _ if structured(ir_name) => {
                let (ins, outs) = ins_outs(self.ir, op);
                let mut ops = vec![];
                for v in &ins {
                    ops.push(self.v(op, *v)?);
                }
                let reads_out = linalg_reads_outs(self.ir, op);
                for (i, v) in outs.iter().enumerate() {
                    if self.ir.value_type(*v).is_tensor() {
                        ops.push(self.dest(b, op, ins.len() + i, reads_out)?);
                    } else {
                        ops.push(self.v(op, *v)?);
                    }
                }
                // A patch's epilogue operands are read like its inputs.
                for v in ftuner_dialects::ukernel::epilogue_inputs(self.ir, op) {
                    ops.push(self.v(op, v)?);
                }
                let n = self.clone_like(op, b, ops.clone(), vec![])?;
                let _ = n;
                let mut r = 0;
                for (i, v) in outs.iter().enumerate() {
                    if self.ir.value_type(*v).is_tensor() {
                        self.map.insert(results[r], ops[ins.len() + i]);
                        r += 1;
                    }
                }
            }
            _ => {
                return Err((
                    op,
                    "on tensors is not supported by bufferize (lower it to linalg, tensor, scf or vector ops first)".into(),
                ))
            }
        }
        Ok(())
    }

    fn scf_for(&mut self, op: OpId, b: BlockId) -> R<()> {
        let loc = self.ir.loc(op);
        let operands = self.ir.operands(op).to_vec();
        let results = self.ir.results(op).to_vec();
        if operands.len() < 3 {
            return Err((op, "needs bounds and a step".into()));
        }
        let mut bufs: Vec<Option<Value>> = vec![];
        let mut new_ops = vec![];
        for v in &operands[..3] {
            new_ops.push(self.v(op, *v)?);
        }
        let mut kept_types = vec![];
        for (k, v) in operands.iter().enumerate().skip(3) {
            if self.ir.value_type(*v).is_tensor() {
                bufs.push(Some(self.dest(b, op, k, true)?));
            } else {
                bufs.push(None);
                new_ops.push(self.v(op, *v)?);
                kept_types.push(self.ir.value_type(*v));
            }
        }
        let od = self.ir.op(op);
        let mut s = OpSpec::new(od.name, loc)
            .operands(new_ops)
            .results(kept_types.clone())
            .regions(1);
        s.props = dict_entries(od.props);
        s.attrs = dict_entries(od.attrs);
        let n = self.ir.create_op(s);
        self.ir.append_op(b, n);
        let ob = self
            .ir
            .regions_of(op)
            .first()
            .and_then(|r| self.ir.region_entry(*r))
            .ok_or((op, "has no body".into()))?;
        let old_args = self.ir.block_args(ob).to_vec();
        if old_args.len() != bufs.len() + 1 {
            return Err((op, "body arguments do not match the iter_args".into()));
        }
        let mut arg_types = vec![self.ir.value_type(old_args[0])];
        arg_types.extend(kept_types);
        let rn = self.ir.regions_of(n)[0];
        let nb = self.ir.append_block(rn, &arg_types);
        let new_args = self.ir.block_args(nb).to_vec();
        self.map.insert(old_args[0], new_args[0]);
        let mut k = 1;
        for (i, buf) in bufs.iter().enumerate() {
            match buf {
                Some(buf) => {
                    self.map.insert(old_args[i + 1], *buf);
                }
                None => {
                    self.map.insert(old_args[i + 1], new_args[k]);
                    k += 1;
                }
            }
        }
        let term = self
            .block(ob, nb)?
            .ok_or((op, "body has no scf.yield".into()))?;
        let mut yields = vec![];
        for (i, v) in self.ir.operands(term).to_vec().into_iter().enumerate() {
            let nv = self.v(term, v)?;
            match bufs.get(i).copied().flatten() {
                Some(buf) => {
                    if nv != buf {
                        self.copy(nb, nv, buf, loc);
                        self.copies += 1;
                    }
                }
                None => yields.push(nv),
            }
        }
        self.new_op(nb, "scf.yield", yields, vec![], vec![], loc);
        let new_res = self.ir.results(n).to_vec();
        let mut k = 0;
        for (i, r) in results.iter().enumerate() {
            match bufs.get(i).copied().flatten() {
                Some(buf) => {
                    self.map.insert(*r, buf);
                }
                None => {
                    self.map.insert(*r, new_res[k]);
                    k += 1;
                }
            }
        }
        Ok(())
    }

    /// `scf.if` / `scf.index_switch`: a tensor result whose branches all yield the buffer
    /// of the value the analysis found becomes that buffer; otherwise every branch yields
    /// a fresh copy (an identity memref result owned by the enclosing block).
    fn branches(&mut self, op: OpId, b: BlockId) -> R<()> {
        let loc = self.ir.loc(op);
        let operands = self
            .ir
            .operands(op)
            .iter()
            .map(|v| self.v(op, *v))
            .collect::<R<Vec<_>>>()?;
        let results = self.ir.results(op).to_vec();
        // The buffer each tensor result shares, when the analysis found one.
        let shared: Vec<Option<Value>> = results
            .iter()
            .map(|r| self.an.parent.get(r).and_then(|p| self.map.get(p).copied()))
            .collect();
        // Rebuild the branches first into a detached holder, then decide.
        let mut branch_blocks = vec![];
        let mut branch_yields = vec![];
        for r in self.ir.regions_of(op).to_vec() {
            let ob = self
                .ir
                .region_entry(r)
                .ok_or((op, "has an empty region".into()))?;
            let nb = self.ir.new_block(&[]);
            let term = self
                .block(ob, nb)?
                .ok_or((op, "branch has no scf.yield".into()))?;
            let ys = self
                .ir
                .operands(term)
                .iter()
                .map(|v| self.v(term, *v))
                .collect::<R<Vec<_>>>()?;
            branch_blocks.push(nb);
            branch_yields.push(ys);
        }
        let mut res_types = vec![];
        let mut fresh = vec![];
        for (i, r) in results.iter().enumerate() {
            let t = self.ir.value_type(*r);
            if !t.is_tensor() {
                res_types.push(Some(t));
                fresh.push(false);
                continue;
            }
            let all_shared =
                shared[i].is_some_and(|s| branch_yields.iter().all(|ys| ys.get(i) == Some(&s)));
            if all_shared {
                res_types.push(None);
                fresh.push(false);
            } else {
                res_types.push(Some(
                    memref_of(t).ok_or((op, "unranked tensor result".into()))?,
                ));
                fresh.push(true);
            }
        }
        for (nb, ys) in branch_blocks.iter().zip(branch_yields.iter_mut()) {
            let mut out = vec![];
            for (i, y) in ys.iter().enumerate() {
                match (res_types[i], fresh[i]) {
                    (None, _) => {}
                    (Some(_), false) => out.push(*y),
                    (Some(_), true) => {
                        let n = self.alloc_like(*nb, *y, loc);
                        // Yielded, so owned by the op's result, not by the branch.
                        self.owned.pop();
                        self.copy(*nb, *y, n, loc);
                        self.copies += 1;
                        out.push(n);
                    }
                }
            }
            self.new_op(*nb, "scf.yield", out, vec![], vec![], loc);
        }
        let od = self.ir.op(op);
        let mut s = OpSpec::new(od.name, loc)
            .operands(operands)
            .results(res_types.iter().flatten().copied())
            .regions(od.regions.len());
        s.props = dict_entries(od.props);
        s.attrs = dict_entries(od.attrs);
        let n = self.ir.create_op(s);
        self.ir.append_op(b, n);
        for (r, nb) in self
            .ir
            .regions_of(n)
            .to_vec()
            .into_iter()
            .zip(branch_blocks)
        {
            self.ir.region_attach_block(r, nb);
        }
        let new_res = self.ir.results(n).to_vec();
        let mut k = 0;
        for (i, r) in results.iter().enumerate() {
            match res_types[i] {
                None => {
                    let s = shared[i].ok_or((op, "lost a shared buffer".into()))?;
                    self.map.insert(*r, s);
                }
                Some(_) => {
                    self.map.insert(*r, new_res[k]);
                    if fresh[i] {
                        self.owned.push((new_res[k], b));
                    }
                    k += 1;
                }
            }
        }
        Ok(())
    }
}

/// Destination-passing structured ops: linalg ops and `ukernel.patch` (ins, outs, a body
/// over their elements); on buffers they write their outputs and have no results.
fn structured(name: &str) -> bool {
    name.starts_with("linalg.") || name == "ukernel.patch"
}

/// Whether a linalg op reads its outputs' old contents (its body uses an output block
/// argument); `linalg.fill`/`transpose`/`copy`-like ops that only write do not.
fn linalg_reads_outs(ir: &Ir, op: OpId) -> bool {
    let (ins, _) = ins_outs(ir, op);
    let Some(b) = ir.regions_of(op).first().and_then(|r| ir.region_entry(*r)) else {
        return true;
    };
    let args = ir.block_args(b);
    if args.is_empty() {
        return true;
    }
    args.iter().skip(ins.len()).any(|a| ir.has_uses(*a))
}

fn fill_body(ir: &mut Ir, fill: OpId, elem: Type, loc: Attribute) {
    let r = ir.regions_of(fill)[0];
    let blk = ir.append_block(r, &[elem, elem]);
    let a = ir.block_args(blk)[0];
    let y = ir.create_op(OpSpec::new(intern_name("linalg.yield"), loc).operands(vec![a]));
    ir.append_op(blk, y);
}

fn static_slice(ir: &Ir, op: OpId) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
    let g = |a: &str| {
        ir.attr(op, a)
            .and_then(|x| x.as_dense_i64s())
            .unwrap_or_default()
    };
    (g("static_offsets"), g("static_sizes"), g("static_strides"))
}

/// Bufferize one function; returns the counters (allocations, copies, in-place writes).
fn bufferize_func(
    ir: &mut Ir,
    func: OpId,
    globals: &mut Vec<(String, Attribute, Type)>,
) -> R<(u64, u64, u64)> {
    let Some(region) = ir.regions_of(func).first().copied() else {
        return Ok((0, 0, 0));
    };
    let Some(old_entry) = ir.region_entry(region) else {
        return Ok((0, 0, 0)); // a declaration: only its type changes
    };
    if ir.region(region).blocks.len() != 1 {
        return Err((
            func,
            "functions with several blocks are not bufferized".into(),
        ));
    }
    let mut an = Analysis::new(ir, func);
    analyze_block(ir, func, &mut an, old_entry);
    let arg_types: Vec<Type> = ir
        .block_args(old_entry)
        .iter()
        .map(|a| {
            let t = ir.value_type(*a);
            if t.is_tensor() {
                memref_of(t).ok_or((func, "unranked tensor argument".to_string()))
            } else {
                Ok(t)
            }
        })
        .collect::<R<_>>()?;
    let entry = ir.new_block(&arg_types);
    let mut rw = Rw {
        map: FxHashMap::default(),
        an: &an,
        owned: vec![],
        globals,
        entry,
        copies: 0,
        allocs: 0,
        ir,
    };
    for (a, n) in rw
        .ir
        .block_args(old_entry)
        .to_vec()
        .into_iter()
        .zip(rw.ir.block_args(entry).to_vec())
    {
        rw.map.insert(a, n);
    }
    let term = rw
        .block(old_entry, entry)?
        .ok_or((func, "function body has no func.return".into()))?;
    let loc = rw.ir.loc(term);
    let mut rets = vec![];
    let owned_here: FxHashSet<Value> = rw
        .owned
        .iter()
        .filter(|(_, blk)| *blk == entry)
        .map(|(v, _)| *v)
        .collect();
    let mut returned = FxHashSet::default();
    for v in rw.ir.operands(term).to_vec() {
        let nv = rw.v(term, v)?;
        if !rw.ir.value_type(nv).is_memref() {
            rets.push(nv);
            continue;
        }
        // Callers own what we return: a buffer allocated here (or a reshaped view of all
        // of one), returned once, with identity layout.
        let mut root = nv;
        while let Some(d) = rw.ir.defining_op(root).filter(|d| {
            matches!(
                rw.ir.name(*d),
                "memref.reshape" | "memref.collapse_shape" | "memref.expand_shape" | "memref.cast"
            )
        }) {
            root = rw.ir.operand(d, 0);
        }
        let mine = owned_here.contains(&root) && is_identity(rw.ir.value_type(nv));
        if mine && returned.insert(root) {
            rets.push(nv);
        } else {
            let n = rw.alloc_like(entry, nv, loc);
            rw.copy(entry, nv, n, loc);
            rw.copies += 1;
            returned.insert(n);
            rets.push(n);
        }
    }
    let res_types: Vec<Type> = rets.iter().map(|v| rw.ir.value_type(*v)).collect();
    let r = rw
        .ir
        .create_op(OpSpec::new(intern_name("func.return"), loc).operands(rets));
    rw.ir.append_op(entry, r);
    // Free what does not escape, at the end of the block that allocated it.
    let owned = std::mem::take(&mut rw.owned);
    let mut freed = vec![];
    for (v, blk) in owned {
        if escapes(rw.ir, v) {
            continue;
        }
        let d = rw
            .ir
            .create_op(OpSpec::new(intern_name("memref.dealloc"), loc).operands(vec![v]));
        freed.push((v, d));
        match last_use(rw.ir, v, blk) {
            Some(u) if !is_terminator(rw.ir.name(u)) => rw.ir.insert_after(u, d),
            Some(u) => rw.ir.insert_before(u, d),
            None => match rw.ir.terminator(blk) {
                Some(t) if is_terminator(rw.ir.name(t)) => rw.ir.insert_before(t, d),
                _ => rw.ir.append_op(blk, d),
            },
        }
    }
    for (v, d) in freed {
        hoist_out_of_loops(rw.ir, v, d);
    }
    let (allocs, copies) = (rw.allocs, rw.copies);
    // Swap bodies and the signature.
    ir.erase_block(old_entry);
    ir.region_attach_block(region, entry);
    let fty = Type::function(arg_types, res_types);
    ir.set_prop(func, "function_type", Some(Attribute::type_attr(fty)));
    Ok((allocs, copies, an.in_place.len() as u64))
}

/// A buffer allocated and freed in the body of an `scf.for`, its sizes defined outside
/// the loop, holds nothing from one iteration to the next: it is allocated once before
/// the loop and freed after it (as upstream's buffer-loop-hoisting), out of every loop
/// nest level where that holds — through `scf.if`s between the loops too (a branch's
/// buffer then exists whichever branch runs; it is never read before it is written).
/// Never out of a loop marked `ftuner.parallel`: its iterations run at once.
fn hoist_out_of_loops(ir: &mut Ir, v: Value, dealloc: OpId) {
    let Some(a) = ir.defining_op(v).filter(|a| ir.name(*a) == "memref.alloc") else {
        return;
    };
    if ir.op(a).parent != ir.op(dealloc).parent {
        return;
    }
    let mut target = None;
    let mut blk = ir.op(a).parent;
    while let Some(p) = blk.and_then(|b| ir.block_parent_op(b)) {
        // Iterations of a parallel loop run at once: each keeps its own buffer.
        if !matches!(ir.name(p), "scf.for" | "scf.if")
            || ir.operands(a).iter().any(|x| ir.defined_inside(*x, p))
            || ir.attr(p, ftuner_dialects::scf::PARALLEL_ATTR).is_some()
        {
            break;
        }
        if ir.name(p) == "scf.for" {
            target = Some(p);
        }
        blk = ir.op(p).parent;
    }
    if let Some(lp) = target {
        ir.unlink(a);
        ir.insert_before(lp, a);
        ir.unlink(dealloc);
        ir.insert_after(lp, dealloc);
    }
}

/// The last op of `blk` that uses `v` or a view of it (uses in nested regions count as
/// their ancestor in `blk`), so the buffer can be freed right after it.
fn last_use(ir: &Ir, v: Value, blk: BlockId) -> Option<OpId> {
    let mut work = vec![v];
    let mut seen = FxHashSet::default();
    let mut users = FxHashSet::default();
    while let Some(x) = work.pop() {
        if !seen.insert(x) {
            continue;
        }
        for u in ir.uses(x) {
            // Lift to the ancestor that sits in `blk`.
            let mut o = u.op;
            while ir.op(o).parent != Some(blk) {
                match ir.parent_op(o) {
                    Some(p) => o = p,
                    None => break,
                }
            }
            users.insert(o);
            if is_view_op(ir.name(u.op)) && u.operand == 0 {
                work.extend(ir.results(u.op).iter().copied());
            }
        }
    }
    let mut last = None;
    for o in ir.block_ops(blk) {
        if users.contains(&o) {
            last = Some(o);
        }
    }
    last
}

fn is_view_op(name: &str) -> bool {
    matches!(
        name,
        "memref.subview"
            | "memref.cast"
            | "memref.collapse_shape"
            | "memref.expand_shape"
            | "memref.reshape"
    )
}

fn is_terminator(name: &str) -> bool {
    matches!(name, "func.return" | "scf.yield")
}

/// Whether a buffer (or a view of it) is returned from the function.
fn escapes(ir: &Ir, v: Value) -> bool {
    let mut work = vec![v];
    let mut seen = FxHashSet::default();
    while let Some(x) = work.pop() {
        if !seen.insert(x) {
            continue;
        }
        for u in ir.uses(x) {
            match ir.name(u.op) {
                "func.return" | "scf.yield" => return true,
                n if is_view_op(n) && u.operand == 0 => {
                    work.extend(ir.results(u.op).iter().copied())
                }
                _ => {}
            }
        }
    }
    false
}

/// Update the types of declarations (no body) and of `func.call` results elsewhere.
fn convert_signature(ir: &mut Ir, func: OpId) {
    let Some(fty) = ir.attr(func, "function_type").and_then(|a| a.as_type()) else {
        return;
    };
    let conv = |t: &Type| {
        if t.is_tensor() {
            memref_of(*t).unwrap_or(*t)
        } else {
            *t
        }
    };
    let ins: Vec<Type> = fty.function_inputs().iter().map(conv).collect();
    let outs: Vec<Type> = fty.function_results().iter().map(conv).collect();
    ir.set_prop(
        func,
        "function_type",
        Some(Attribute::type_attr(Type::function(ins, outs))),
    );
}

#[derive(Default)]
pub struct BufferizePass {
    allocs: u64,
    copies: u64,
    in_place: u64,
}

impl Pass for BufferizePass {
    fn argument(&self) -> &'static str {
        "bufferize"
    }
    fn name(&self) -> &'static str {
        "Bufferize"
    }
    fn summary(&self) -> &'static str {
        "Turn tensors into buffers, writing in place where an alias analysis proves it safe"
    }
    fn description(&self) -> &'static str {
        "One-shot bufferization of func/scf/tensor/linalg/vector IR with function boundaries: memref arguments and results with identity layouts, in-place destination-passing writes where no read of the old value can follow, copies elsewhere, constants as memref.global, deallocation of buffers that do not escape."
    }
    fn run(&mut self, cx: &mut PassContext<'_>, op: OpId) -> Result<(), PassFailure> {
        // Ops defined by their decomposition into ops bufferized below.
        let mut concats = vec![];
        cx.ir.walk_pre(op, &mut |o| {
            if cx.ir.name(o) == "tensor.concat" {
                concats.push(o);
            }
        });
        for c in concats {
            ftuner_dialects::tensor::decompose_concat(cx.ir, c);
        }
        let mut funcs = vec![];
        cx.ir.walk_pre(op, &mut |o| {
            if cx.ir.name(o) == "func.func" {
                funcs.push(o);
            }
        });
        let mut globals = vec![];
        let mut failed = false;
        for f in funcs {
            let has_body = cx
                .ir
                .regions_of(f)
                .first()
                .is_some_and(|r| cx.ir.region_entry(*r).is_some());
            if !has_body {
                convert_signature(cx.ir, f);
                continue;
            }
            match bufferize_func(cx.ir, f, &mut globals) {
                Ok((a, c, i)) => {
                    self.allocs += a;
                    self.copies += c;
                    self.in_place += i;
                }
                Err((at, m)) => {
                    let at = if cx.ir.is_alive(at) { at } else { f };
                    cx.emit(Diagnostic::error(
                        cx.ir.loc(at),
                        format!("'{}' op {m}", cx.ir.name(at)),
                    ));
                    failed = true;
                }
            }
        }
        if failed {
            return Err(PassFailure);
        }
        // Globals go first in the module body.
        let body = cx
            .ir
            .regions_of(op)
            .first()
            .and_then(|r| cx.ir.region_entry(*r));
        if let Some(body) = body {
            let loc = cx.ir.loc(op);
            for (name, value, ty) in globals.into_iter().rev() {
                let g = cx.ir.create_op(
                    OpSpec::new(intern_name("memref.global"), loc)
                        .prop("sym_name", Attribute::string(name))
                        .prop("sym_visibility", Attribute::string("private"))
                        .prop("type", Attribute::type_attr(ty))
                        .prop("initial_value", value)
                        .prop("constant", Attribute::unit())
                        .prop("alignment", Attribute::i64(64)),
                );
                cx.ir.prepend_op(body, g);
            }
        }
        Ok(())
    }
    fn statistics(&self) -> Vec<Statistic> {
        vec![
            Statistic {
                name: "num-allocs",
                description: "Buffers allocated",
                value: self.allocs,
            },
            Statistic {
                name: "num-copies",
                description: "Buffer copies (writes that could not be in place)",
                value: self.copies,
            },
            Statistic {
                name: "num-in-place",
                description: "Destination-passing writes done in place",
                value: self.in_place,
            },
        ]
    }
    fn clone_pass(&self) -> Box<dyn Pass> {
        Box::new(BufferizePass::default())
    }
}
