//! Epilogue fusion: elementwise consumers of a patched contraction (bias-add, GELU, ReLU,
//! residual adds) become the patch's epilogue region, applied to each output element once
//! its reduction is complete — while the tile is still in registers or cache, instead of
//! another pass over C in memory.
//!
//! A consumer is absorbed when
//! * the patch is a plain 2-d contraction (C indexed by the M and N dims, A and B by plain
//!   dims, one reduction dim: `linalg.matmul` and its transposed forms), or, on CPU
//!   targets, a windowed contraction (a convolution as implicit GEMM) whose consumer is
//!   lanewise `arith` on floats, its other operands float tensors read through dims and
//!   constants, the channel dim at most once (`lower/conv.rs` applies it in registers);
//! * the consumer is a `linalg.generic` in the same block, all loops parallel, with one
//!   output of the patch's result type written through the identity map and not read;
//! * it reads the patch's result (its only use) through the identity map;
//! * its other operands are indexed by plain dims. An operand made by a broadcast
//!   (`linalg.generic` copying its one input, e.g. a bias `tensor<768xf32>` spread to
//!   `tensor<?x768xf32>`) used only there is read at its source instead, so the
//!   broadcast buffer disappears.
//!
//! Absorbing repeats while the new result has such a consumer (bias-add, then an
//! activation). The patch moves to just before the consumer (its own operands are defined
//! before it, the consumer's before the consumer).

use ftuner_dialects::linalg::body::all_parallel;
use ftuner_dialects::linalg::ins_outs;
use ftuner_dialects::ops;
use ftuner_dialects::ukernel::{epilogue_block, epilogue_inputs, epilogue_maps};
use ftuner_ir::{intern_name, AffineExpr, AffineMap, Attribute, Ir, OpId, OpSpec, Value};

fn maps_of(ir: &Ir, op: OpId) -> Option<Vec<AffineMap>> {
    ftuner_dialects::linalg::body::indexing_maps(ir, op)
}

/// A patch whose epilogue can take consumers: the positions of its C dims (patch dims),
/// and for a windowed contraction its N dim (the lanes of its register tiles). With
/// `windowed`, a windowed contraction (a convolution as implicit GEMM,
/// `lower::conv_layout`) qualifies too: its tiles apply a lanewise epilogue in registers
/// (`lower::conv`), which only the CPU lowering does.
fn patch_c_dims(ir: &Ir, p: OpId, windowed: bool) -> Option<(Vec<u32>, Option<u32>)> {
    let maps = maps_of(ir, p)?;
    if maps.len() != 3 || ir.results(p).len() != 1 {
        return None;
    }
    let plain = |m: &AffineMap| m.as_permutation_like().is_some();
    let gemm = maps.iter().all(plain) && maps[0].num_dims == 3 && maps[2].results.len() == 2;
    let conv_dn = match gemm {
        true => None,
        false if windowed => Some(crate::lower::conv_layout(ir, p)?.dn),
        false => return None,
    };
    Some((maps[2].result_dims(), conv_dn))
}

/// `op` is a broadcast: a generic copying its one input into its output (identity output
/// map), whose result has one use.
fn broadcast_source(ir: &Ir, op: OpId) -> Option<(Value, AffineMap)> {
    if ir.name(op) != ops::linalg::GenericOp::NAME || !all_parallel(ir, op) {
        return None;
    }
    let (ins, outs) = ins_outs(ir, op);
    if ins.len() != 1 || outs.len() != 1 || ir.results(op).len() != 1 {
        return None;
    }
    if ir.uses(ir.result(op, 0)).len() != 1 {
        return None;
    }
    let maps = maps_of(ir, op)?;
    if !maps[1].is_identity() {
        return None;
    }
    let body = ir.region_entry(*ir.regions_of(op).first()?)?;
    let ops = ir.block_ops_vec(body);
    let args = ir.block_args(body);
    (ops.len() == 1 && ir.operands(ops[0]) == [args[0]]).then(|| (ins[0], maps[0].clone()))
}

/// Substitute the dims of `m` (the consumer's loops) by `by` (patch dims; `None`: a unit
/// dim, always 0).
fn in_patch_dims(m: &AffineMap, by: &[Option<u32>], nd: u32) -> Option<AffineMap> {
    let results = m
        .results
        .iter()
        .map(|e| match e {
            AffineExpr::Dim(d) => by.get(*d as usize).map(|x| match x {
                Some(x) => AffineExpr::Dim(*x),
                None => AffineExpr::Const(0),
            }),
            AffineExpr::Const(c) => Some(AffineExpr::Const(*c)),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(AffineMap {
        num_dims: nd,
        num_symbols: 0,
        results,
    })
}

/// Compose `inner` (over the consumer's loops, results = a producer's loops in order)
/// with the producer's input map `outer`.
fn compose(outer: &AffineMap, inner: &AffineMap) -> Option<AffineMap> {
    let results = outer
        .results
        .iter()
        .map(|e| match e {
            AffineExpr::Dim(d) => inner.results.get(*d as usize).cloned(),
            AffineExpr::Const(c) => Some(AffineExpr::Const(*c)),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(AffineMap {
        num_dims: inner.num_dims,
        num_symbols: 0,
        results,
    })
}

/// Absorb the consumers of patch `p` into its epilogue; returns how many were absorbed.
/// `windowed`: a convolution's patch takes lanewise consumers too (CPU targets).
pub fn fuse_epilogues(ir: &mut Ir, p: OpId, windowed: bool) -> usize {
    let mut n = 0;
    while fuse_one(ir, p, windowed) {
        n += 1;
    }
    n
}

/// A consumer of a patch that can move into its epilogue, with what the move needs.
struct Consumer {
    /// The consumer (`linalg.generic`), the value of the patch it reads (the result or a
    /// unit-dim view of it), and the view.
    g: OpId,
    read: Value,
    expand: Option<OpId>,
    /// Which of the consumer's inputs is `read`.
    pos: usize,
    gins: Vec<Value>,
    gargs: Vec<Value>,
    /// The consumer's body: its ops before the yield, and the yield.
    gbody_ops: Vec<OpId>,
    gy: OpId,
    /// The other operands: source (a broadcast's input where possible), map over the
    /// patch's dims, and the broadcast that may die.
    extras: Vec<(Value, AffineMap, Option<OpId>)>,
}

fn fuse_one(ir: &mut Ir, p: OpId, windowed: bool) -> bool {
    match fusable_consumer(ir, p, windowed) {
        Some(c) => absorb(ir, p, c),
        None => false,
    }
}

/// The single elementwise consumer of `p` that its epilogue can take (checked here so
/// that nothing changes otherwise).
fn fusable_consumer(ir: &Ir, p: OpId, windowed: bool) -> Option<Consumer> {
    let (cdims, conv_dn) = patch_c_dims(ir, p, windowed)?;
    let nd = maps_of(ir, p)?[0].num_dims;
    let r = ir.result(p, 0);
    let u = single_user(ir, r)?;
    // The consumer reads the result, or a `tensor.expand_shape` of it that only adds unit
    // dims (torch-mlir's `1 x T x F` views of a `T x F` matmul).
    let (g, read, expand, by) = if ir.name(u) == ops::tensor::ExpandShapeOp::NAME {
        let by = unit_expansion(ir, u, &cdims)?;
        let e = ir.result(u, 0);
        let g = single_user(ir, e)?;
        (g, e, Some(u), by)
    } else {
        (u, r, None, cdims.iter().map(|d| Some(*d)).collect())
    };
    let c = consumer_at(ir, ir.op(p).parent, nd, g, read, expand, &by)?;
    // A windowed contraction's tiles apply the epilogue in registers only: lanewise
    // `arith` on floats, every operand read through dims and constants.
    if let Some(dn) = conv_dn {
        let body = ir
            .regions_of(c.g)
            .first()
            .and_then(|r| ir.region_entry(*r))?;
        let extras = c.extras.iter().map(|(v, m, _)| (*v, m));
        if !lanewise_epilogue(ir, body, extras, dn) {
            return None;
        }
    }
    // An existing epilogue ends in one `ukernel.yield` (verified; checked here so nothing
    // changes otherwise).
    if let Some(eb) = epilogue_block(ir, p) {
        match ir.terminator(eb) {
            Some(t) if ir.name(t) == ops::ukernel::YieldOp::NAME && ir.operands(t).len() == 1 => {}
            _ => return None,
        }
    }
    Some(c)
}

/// The ops the epilogue of contraction `op` (a linalg contraction about to be patched, or
/// a patch) would absorb, in order, as `fuse_epilogues` takes them: the unit-dim view of
/// the result if one is read, then each consumer followed by the broadcasts it reads whose
/// only use it is. Nothing is changed. ftuner-tune takes these with the contraction when
/// it extracts a kernel, and the kernel class names them ([`describe_chain`]).
pub fn epilogue_chain(ir: &Ir, op: OpId) -> Vec<OpId> {
    let mut out = vec![];
    let Some((cdims, _)) = patch_c_dims(ir, op, false) else {
        return out;
    };
    let Some(nd) = maps_of(ir, op).map(|m| m[0].num_dims) else {
        return out;
    };
    let parent = ir.op(op).parent;
    let r = ir.result(op, 0);
    let Some(u) = single_user(ir, r) else {
        return out;
    };
    let (mut read, expand, by) = if ir.name(u) == ops::tensor::ExpandShapeOp::NAME {
        let Some(by) = unit_expansion(ir, u, &cdims) else {
            return out;
        };
        (ir.result(u, 0), Some(u), by)
    } else {
        (r, None, cdims.iter().map(|d| Some(*d)).collect())
    };
    // After the first consumer the view (if any) stands after the patch and the consumers
    // read the patch's new result through it: the next consumer reads the last one's.
    while let Some(g) = single_user(ir, read) {
        let Some(c) = consumer_at(ir, parent, nd, g, read, expand, &by) else {
            break;
        };
        if out.is_empty() {
            out.extend(expand);
        }
        out.push(g);
        out.extend(c.extras.iter().filter_map(|e| e.2));
        read = ir.result(g, 0);
    }
    out
}

/// Whether an epilogue body `body` (a consumer's, or a patch's epilogue block) with
/// operands `extras` (and their maps over the patch's dims) can run in the register tiles
/// of a windowed contraction whose lanes run along patch dim `dn`: a lanewise body on
/// floats (`vector::is_lanewise_body`), the operands float tensors read through dims and
/// constants, `dn` at most once ([`plain_reading_once`]). patch-ukernels absorbs only
/// such consumers into a conv's patch, and `lower/conv.rs` lowers only such epilogues.
pub(crate) fn lanewise_epilogue<'a>(
    ir: &Ir,
    body: ftuner_ir::BlockId,
    mut extras: impl Iterator<Item = (Value, &'a AffineMap)>,
    dn: u32,
) -> bool {
    ftuner_dialects::vector::is_lanewise_body(ir, body)
        && ir
            .block_args(body)
            .iter()
            .all(|a| ir.value_type(*a).is_float())
        && extras.all(|(v, m)| {
            let t = ir.value_type(v);
            t.is_tensor() && t.element_type().is_float() && plain_reading_once(m, dn)
        })
}

/// Map `m` reads through dims and constants only, and dim `dn` at most once (a row's
/// lanes are read as one vector along it).
fn plain_reading_once(m: &AffineMap, dn: u32) -> bool {
    m.results
        .iter()
        .all(|e| matches!(e, AffineExpr::Dim(_) | AffineExpr::Const(_)))
        && m.results.iter().filter(|e| e.uses_dim(dn)).count() <= 1
}

/// The epilogue part of a kernel class: the consumers' body ops in order, `none` without.
pub fn describe_chain(ir: &Ir, chain: &[OpId]) -> String {
    let mut names = vec![];
    for &o in chain {
        if ir.name(o) != ops::linalg::GenericOp::NAME || broadcast_source(ir, o).is_some() {
            continue;
        }
        let Some(b) = ir.regions_of(o).first().and_then(|r| ir.region_entry(*r)) else {
            continue;
        };
        for x in ir.block_ops_vec(b) {
            if ir.name(x) != ops::linalg::YieldOp::NAME {
                names.push(ir.name(x).to_string());
            }
        }
    }
    if names.is_empty() {
        "none".into()
    } else {
        names.join("+")
    }
}

/// Consumer `g` of `read` (the patch's result, or `expand`'s view of it; `by`: the patch
/// dim of each of `read`'s dims) when the epilogue can take it.
fn consumer_at(
    ir: &Ir,
    parent: Option<ftuner_ir::BlockId>,
    nd: u32,
    g: OpId,
    read: Value,
    expand: Option<OpId>,
    by: &[Option<u32>],
) -> Option<Consumer> {
    if ir.name(g) != ops::linalg::GenericOp::NAME || !all_parallel(ir, g) {
        return None;
    }
    if ir.op(g).parent != parent {
        return None;
    }
    if expand.is_some_and(|e| ir.op(e).parent != parent) {
        return None;
    }
    let (gins, gouts) = ins_outs(ir, g);
    if gouts.len() != 1 || ir.results(g).len() != 1 {
        return None;
    }
    if ir.value_type(ir.result(g, 0)) != ir.value_type(read) {
        return None;
    }
    let gmaps = maps_of(ir, g)?;
    let pos = gins.iter().position(|v| *v == read)?;
    if gins.iter().filter(|v| **v == read).count() != 1
        || !gmaps[pos].is_identity()
        || !gmaps[gins.len()].is_identity()
    {
        return None;
    }
    let gbody = ir.regions_of(g).first().and_then(|x| ir.region_entry(*x))?;
    let gargs = ir.block_args(gbody).to_vec();
    if gargs.len() != gins.len() + 1 || ir.has_uses(gargs[gins.len()]) {
        return None;
    }
    // The body must not use values from outside (it moves into the patch's region), but
    // constants (hoisted by canonicalize) are cloned in.
    let closed = body_is_closed(ir, g, true);
    if !closed {
        return None;
    }
    // The other operands, read at their broadcast sources where possible, over patch dims.
    let mut extras: Vec<(Value, AffineMap, Option<OpId>)> = vec![];
    for (i, v) in gins.iter().enumerate() {
        if i == pos {
            continue;
        }
        let (src, m, dead) = match ir.defining_op(*v).and_then(|d| {
            broadcast_source(ir, d).and_then(|(s, pm)| compose(&pm, &gmaps[i]).map(|m| (s, m, d)))
        }) {
            Some((s, m, d)) => (s, m, Some(d)),
            None => (*v, gmaps[i].clone(), None),
        };
        let pm = in_patch_dims(&m, by, nd)?;
        // The source must be defined before the patch's new place (before the consumer).
        extras.push((src, pm, dead));
    }
    // The consumer's body ends in one yielded value.
    let gops = ir.block_ops_vec(gbody);
    let (&gy, gbody_ops) = gops.split_last()?;
    if ir.name(gy) != ops::linalg::YieldOp::NAME || ir.operands(gy).len() != 1 {
        return None;
    }
    Some(Consumer {
        g,
        read,
        expand,
        pos,
        gins,
        gargs,
        gbody_ops: gbody_ops.to_vec(),
        gy,
        extras,
    })
}

/// Move consumer `c` into `p`'s epilogue: the old epilogue's result feeds the consumer's
/// body, the consumer's other operands become epilogue operands, and the patch takes the
/// consumer's place.
fn absorb(ir: &mut Ir, p: OpId, c: Consumer) -> bool {
    let Consumer {
        g,
        read,
        expand,
        pos,
        gins,
        gargs,
        gbody_ops,
        gy,
        extras,
    } = c;
    let r = ir.result(p, 0);
    let loc = ir.loc(g);
    let out_elem = ir.value_type(r).element_type();
    let old_inputs = epilogue_inputs(ir, p);
    let mut maps: Vec<AffineMap> = epilogue_maps(ir, p);
    let eblk = match epilogue_block(ir, p) {
        Some(b) => b,
        None => {
            let region = ir.new_region(Some(p));
            ir.op_mut(p).regions.push(region);
            let b = ir.append_block(region, &[out_elem]);
            let acc = ir.block_args(b)[0];
            let y = ir.create_op(
                OpSpec::new(intern_name(ops::ukernel::YieldOp::NAME), loc).operands(vec![acc]),
            );
            ir.append_op(b, y);
            b
        }
    };
    let Some(term) = ir.terminator(eblk) else {
        return false;
    };
    let prev = ir.operands(term)[0];
    let mut vmap: rustc_hash::FxHashMap<Value, Value> = Default::default();
    vmap.insert(gargs[pos], prev);
    let mut k = 0;
    for (i, a) in gargs[..gins.len()].iter().enumerate() {
        if i == pos {
            continue;
        }
        let ty = ir.value_type(*a);
        let na = ir.add_block_arg(eblk, ty);
        vmap.insert(*a, na);
        maps.push(extras[k].1.clone());
        k += 1;
    }
    for o in &gbody_ops {
        for v in ir.operands(*o).to_vec() {
            if vmap.contains_key(&v) {
                continue;
            }
            if let Some(d) = ir
                .defining_op(v)
                .filter(|d| ir.name(*d) == ops::arith::ConstantOp::NAME)
            {
                if !ir.is_ancestor(g, d) {
                    let c = ir.clone_op(d, &mut vmap);
                    ir.insert_before(term, c);
                }
            }
        }
    }
    for o in &gbody_ops {
        let c = ir.clone_op(*o, &mut vmap);
        ir.insert_before(term, c);
    }
    let yv = ir.operands(gy)[0];
    let yv = *vmap.get(&yv).unwrap_or(&yv);
    ir.set_operands(term, vec![yv]);
    // Operands and maps.
    let (ins, outs) = ins_outs(ir, p);
    let mut ops = ins.clone();
    ops.extend(outs.iter().copied());
    ops.extend(old_inputs.iter().copied());
    ops.extend(extras.iter().map(|e| e.0));
    let epi_n = old_inputs.len() + extras.len();
    ir.set_operands(p, ops);
    ir.set_prop(
        p,
        "operandSegmentSizes",
        Some(Attribute::dense_i32_array(&[
            ins.len() as i32,
            outs.len() as i32,
            epi_n as i32,
        ])),
    );
    ir.set_prop(
        p,
        "epilogue_maps",
        Some(Attribute::array(
            maps.into_iter().map(Attribute::affine_map).collect(),
        )),
    );
    // The patch now stands where the consumer was (the view, if any, right after it).
    ir.unlink(p);
    ir.insert_before(g, p);
    let gr = ir.result(g, 0);
    if let Some(e) = expand {
        ir.unlink(e);
        ir.insert_before(g, e);
    }
    ir.replace_all_uses(gr, read);
    ir.erase_op(g);
    for (_, _, dead) in extras {
        if let Some(d) = dead {
            if ir.is_alive(d) && !ir.has_uses(ir.result(d, 0)) {
                ir.erase_op(d);
            }
        }
    }
    true
}

/// Whether every value the regions of `op` use is defined inside `op` (or, with
/// `constants`, is an `arith.constant` from outside, which can be cloned in).
pub(crate) fn body_is_closed(ir: &Ir, op: OpId, constants: bool) -> bool {
    let mut ok = true;
    ir.walk_pre(op, &mut |o| {
        if o == op {
            return;
        }
        for v in ir.operands(o) {
            let def = ir.defining_op(*v);
            let inside = match def {
                Some(d) => d != op && ir.is_ancestor(op, d),
                None => ir
                    .value_block(*v)
                    .and_then(|b| ir.block_parent_op(b))
                    .is_some_and(|p| ir.is_ancestor(op, p)),
            };
            let constant =
                constants && def.is_some_and(|d| ir.name(d) == ops::arith::ConstantOp::NAME);
            ok &= inside || constant;
        }
    });
    ok
}

/// The one op using `v` (once), if so.
fn single_user(ir: &Ir, v: Value) -> Option<OpId> {
    match ir.uses(v) {
        [u] => Some(u.op),
        _ => None,
    }
}

/// For `tensor.expand_shape` `e` of the patch result whose groups each hold one non-unit
/// dim: for each result dim, the patch dim it is (`None` for the added unit dims). The
/// expand's size operands must be defined before it in its block or outside (they stay
/// valid when the view moves later).
fn unit_expansion(ir: &Ir, e: OpId, cdims: &[u32]) -> Option<Vec<Option<u32>>> {
    let groups = ir.attr(e, "reassociation")?.as_array()?.to_vec();
    let shape = ir.value_type(ir.result(e, 0)).shape()?.to_vec();
    if groups.len() != cdims.len() {
        return None;
    }
    let mut by = vec![None; shape.len()];
    for (src, g) in groups.iter().enumerate() {
        let dims: Vec<usize> = g
            .as_array()?
            .iter()
            .map(|x| x.as_i64().map(|v| v as usize))
            .collect::<Option<_>>()?;
        let big: Vec<usize> = dims
            .iter()
            .copied()
            .filter(|d| shape.get(*d) != Some(&1))
            .collect();
        match big.as_slice() {
            [d] => by[*d] = Some(cdims[src]),
            // A group of unit dims only: the source dim is 1 too; keep it as its first.
            [] => by[*dims.first()?] = Some(cdims[src]),
            _ => return None,
        }
    }
    Some(by)
}
