//! `linalg-fuse-elementwise-ops`: producer-consumer fusion of elementwise `linalg.generic`
//! ops on tensors, as upstream MLIR's pass of that name does for the common case.
//!
//! A producer is fused into a consumer when
//! * both are `linalg.generic` ops in the same block, the producer with one result, all
//!   loops parallel, its output written through a permutation map and its output block
//!   argument not read (an init-only output);
//! * the producer reads no buffers (tensor operands; a flat body without `memref` ops,
//!   calls or nested regions), so its computation can move down to the consumer;
//! * the producer's result has exactly one use, an input of the consumer, read through a
//!   permutation of all the consumer's loops (each produced element is computed exactly
//!   once: nothing is recomputed, and broadcasting reads are left alone) — or the
//!   producer is a splat (every input 0-d, a body that only yields: a broadcast of one
//!   value), which is fused into each of its consumers and goes once nothing else
//!   reads it;
//! * every loop of the consumer is still indexed by one of its operands afterwards (a
//!   reduction loop read only through the fused input would lose its extent).
//!
//! The fused op reads the producer's inputs (maps composed with the consumer's read, so
//! the producer's loop `k` becomes the consumer loop that reads its `k`-th output dim),
//! computes the producer's body in place of the fused block argument (its `linalg.index`
//! ops renumbered the same way) and then the consumer's body. The intermediate tensor and
//! its pass over memory disappear. Fusion repeats until no pair qualifies, so a chain
//! (BatchNorm's subtract, scale, shift, then ReLU) becomes one op.
//!
//! Where upstream MLIR (`mlir-opt-22 --linalg-fuse-elementwise-ops`) goes further, it does
//! so by recomputing: it also fuses producers with several uses (keeping the original for
//! the others) and fuses through `tensor.expand_shape`, which on the DCGAN generator moves
//! each BatchNorm's per-channel `rsqrt(var + eps)` into the per-element op (10 generics
//! left of 34 there, 14 here). This pass never computes an element twice (a splat computes nothing).

use ftuner_dialects::linalg::body::all_parallel;
use ftuner_dialects::linalg::ins_outs;
use ftuner_dialects::ops;
use ftuner_ir::{intern_name, AffineExpr, AffineMap, Attribute, Ir, OpId, OpSpec, Value};
use ftuner_pass::{define_pass, PassContext, PassFailure};
use rustc_hash::FxHashMap;

/// The dim each result of `m` is, when `m` is a permutation of all its dims.
fn permutation(m: &AffineMap) -> Option<Vec<u32>> {
    if m.num_symbols != 0 {
        return None;
    }
    m.as_permutation()
}

fn body_of(ir: &Ir, op: OpId) -> Option<ftuner_ir::BlockId> {
    ir.region_entry(*ir.regions_of(op).first()?)
}

/// Whether generic `p` is a broadcast of one value: each input read through a map of no
/// results (a 0-d tensor) and a body that computes nothing (it yields an input's block
/// argument or a value from outside). Such a producer (torch-mlir's broadcast of a scalar
/// constant, e.g. the zeros of a masked softmax, shared by every layer once CSE merges
/// them) is fused into each of its consumers: nothing is recomputed, and the tensor it
/// wrote goes. (A splat that computes would be recomputed per element of each consumer,
/// and a consumer made a splat by it would copy that again: exponential growth.)
fn splat(ir: &Ir, p: OpId) -> bool {
    let (p_ins, _) = ins_outs(ir, p);
    let Some(maps) = ftuner_dialects::linalg::body::indexing_maps(ir, p) else {
        return false;
    };
    maps.len() == p_ins.len() + 1
        && maps[..p_ins.len()].iter().all(|m| m.results.is_empty())
        && body_of(ir, p).is_some_and(|b| {
            let args = &ir.block_args(b)[..p_ins.len().min(ir.block_args(b).len())];
            let ops = ir.block_ops_vec(b);
            ops.len() == 1
                && ir.name(ops[0]) == ops::linalg::YieldOp::NAME
                && ir
                    .operands(ops[0])
                    .iter()
                    .all(|v| args.contains(v) || ir.value_block(*v) != Some(b))
        })
}

/// What fusing producer `p` into input `i` of consumer `c` needs: the consumer loop each
/// producer loop becomes.
fn plan(ir: &Ir, c: OpId, i: usize) -> Option<(OpId, Vec<u32>)> {
    let (c_ins, _) = ins_outs(ir, c);
    let v = *c_ins.get(i)?;
    let p = ir.defining_op(v)?;
    if ir.name(p) != ops::linalg::GenericOp::NAME
        || ir.results(p).len() != 1
        || !all_parallel(ir, p)
    {
        return None;
    }
    if (ir.uses(v).len() != 1 && !splat(ir, p)) || ir.op(p).parent != ir.op(c).parent {
        return None;
    }
    // Tensors only (a generic on buffers has no result to fuse through).
    ir.value_type(v).shape()?;
    let (p_ins, p_outs) = ins_outs(ir, p);
    if p_outs.len() != 1 {
        return None;
    }
    let p_maps = ftuner_dialects::linalg::body::indexing_maps(ir, p)?;
    let c_maps = ftuner_dialects::linalg::body::indexing_maps(ir, c)?;
    // Well-formed ops only: a map per operand, a block argument per operand.
    let (c_ins_n, c_outs_n) = (c_ins.len(), ins_outs(ir, c).1.len());
    let cb = body_of(ir, c)?;
    if p_maps.len() != p_ins.len() + 1
        || c_maps.len() != c_ins_n + c_outs_n
        || ir.block_args(cb).len() != c_ins_n + c_outs_n
        || ir.block_args(body_of(ir, p)?).len() != p_ins.len() + 1
    {
        return None;
    }
    let p_out = permutation(p_maps.get(p_ins.len())?)?;
    let c_read = permutation(c_maps.get(i)?)?;
    if p_out.len() != c_read.len() {
        return None;
    }
    // Value semantics only: moving the producer's computation down to the consumer must
    // not move a read of memory past a write (no buffer operands, no loads in the body).
    let pb = body_of(ir, p)?;
    // A flat body of computations: no memory access, no calls, no nested regions (whose
    // linalg.index ops the renumbering below would not reach).
    let reads_memory = ir.operands(p).iter().any(|v| ir.value_type(*v).is_memref())
        || ir.block_ops(pb).any(|o| {
            let n = ir.name(o);
            n.starts_with("memref.") || n == ops::func::CallOp::NAME || !ir.regions_of(o).is_empty()
        });
    if reads_memory {
        return None;
    }
    // The producer's output is init-only.
    let out_arg = *ir.block_args(pb).get(p_ins.len())?;
    if ir.has_uses(out_arg) {
        return None;
    }
    // Producer loop p_out[j] writes dim j; the consumer reads dim j at loop c_read[j].
    let mut loop_of = vec![0u32; p_out.len()];
    for (j, pd) in p_out.iter().enumerate() {
        loop_of[*pd as usize] = c_read[j];
    }
    // Every consumer loop keeps an operand that indexes it (its extent): a reduction
    // loop only the fused input read would be lost behind the producer's broadcast
    // inputs (upstream checks the same).
    let nd = c_maps.first()?.num_dims;
    let composed = compose(&p_maps[..p_ins.len()], &loop_of, nd);
    let kept = c_maps
        .iter()
        .enumerate()
        .filter(|(k, _)| *k != i)
        .flat_map(|(_, m)| m.results.iter());
    let all: Vec<&AffineExpr> = kept
        .chain(composed.iter().flat_map(|m| m.results.iter()))
        .collect();
    if !(0..nd).all(|d| all.iter().any(|e| e.uses_dim(d))) {
        return None;
    }
    Some((p, loop_of))
}

/// The producer's input maps in the consumer's `nd` loops: producer loop `k` is
/// consumer loop `loop_of[k]`.
fn compose(p_in_maps: &[AffineMap], loop_of: &[u32], nd: u32) -> Vec<AffineMap> {
    let sub: Vec<AffineExpr> = loop_of.iter().map(|d| AffineExpr::Dim(*d)).collect();
    p_in_maps
        .iter()
        .map(|m| AffineMap {
            num_dims: nd,
            num_symbols: 0,
            results: m.results.iter().map(|e| e.replace(&sub, &[])).collect(),
        })
        .collect()
}

/// Fuse producer `p` (per [`plan`]) into input `i` of consumer `c`; returns the new op.
fn fuse(ir: &mut Ir, c: OpId, i: usize, p: OpId, loop_of: &[u32]) -> Option<OpId> {
    let (c_ins, c_outs) = ins_outs(ir, c);
    let (p_ins, _) = ins_outs(ir, p);
    let p_maps = ftuner_dialects::linalg::body::indexing_maps(ir, p)?;
    let c_maps = ftuner_dialects::linalg::body::indexing_maps(ir, c)?;
    let nd = c_maps.first()?.num_dims;
    let composed = compose(&p_maps[..p_ins.len()], loop_of, nd);
    let mut ins: Vec<Value> = c_ins[..i].to_vec();
    ins.extend(&p_ins);
    ins.extend(&c_ins[i + 1..]);
    let mut maps: Vec<AffineMap> = c_maps[..i].to_vec();
    maps.extend(composed);
    maps.extend(c_maps[i + 1..].iter().cloned());
    let loc = ir.loc(c);
    let mut operands = ins.clone();
    operands.extend(&c_outs);
    let result_types: Vec<_> = ir.results(c).iter().map(|r| ir.value_type(*r)).collect();
    let new = ir.create_op(
        OpSpec::new(intern_name(ops::linalg::GenericOp::NAME), loc)
            .operands(operands.clone())
            .results(result_types)
            .regions(1),
    );
    // Everything the consumer carried (iterator types, attributes), then the new maps
    // and segment sizes.
    ir.op_mut(new).props = ir.op(c).props;
    ir.op_mut(new).attrs = ir.op(c).attrs;
    let map_attrs = maps.into_iter().map(Attribute::affine_map).collect();
    for (name, a) in [
        ("indexing_maps", Attribute::array(map_attrs)),
        (
            "operandSegmentSizes",
            Attribute::dense_i32_array(&[ins.len() as i32, c_outs.len() as i32]),
        ),
    ] {
        ir.set_inherent(new, name, a);
    }
    let elem_tys: Vec<_> = operands
        .iter()
        .map(|v| ir.value_type(*v).element_type())
        .collect();
    let region = ir.regions_of(new)[0];
    let block = ir.append_block(region, &elem_tys);
    let args = ir.block_args(block).to_vec();
    let pb = body_of(ir, p)?;
    let cb = body_of(ir, c)?;
    // The producer's body on its inputs' arguments.
    let mut map: FxHashMap<Value, Value> = FxHashMap::default();
    for (k, a) in ir.block_args(pb)[..p_ins.len()].iter().enumerate() {
        map.insert(*a, args[i + k]);
    }
    let mut produced = None;
    for o in ir.block_ops_vec(pb) {
        if ir.name(o) == ops::linalg::YieldOp::NAME {
            let y = *ir.operands(o).first()?;
            produced = Some(*map.get(&y).unwrap_or(&y));
            continue;
        }
        let n = ir.clone_op(o, &mut map);
        if ir.name(o) == ops::linalg::IndexOp::NAME {
            let d = ir.attr(o, "dim").and_then(|a| a.as_i64())?;
            let to = *loop_of.get(usize::try_from(d).ok()?)?;
            ir.set_prop(n, "dim", Some(Attribute::i64(to as i64)));
        }
        ir.append_op(block, n);
    }
    // The consumer's body, its fused argument replaced by the produced value.
    let c_args = ir.block_args(cb).to_vec();
    let shift = p_ins.len();
    for (k, a) in c_args.iter().enumerate() {
        let to = match k.cmp(&i) {
            std::cmp::Ordering::Less => args[k],
            std::cmp::Ordering::Equal => produced?,
            std::cmp::Ordering::Greater => args[k + shift - 1],
        };
        map.insert(*a, to);
    }
    for o in ir.block_ops_vec(cb) {
        let n = ir.clone_op(o, &mut map);
        ir.append_op(block, n);
    }
    Some(new)
}

/// Fuse one producer into one consumer somewhere under `top`; whether anything changed.
fn fuse_one(ir: &mut Ir, top: OpId) -> bool {
    let mut generics = vec![];
    ir.walk_pre(top, &mut |o| {
        if ir.name(o) == ops::linalg::GenericOp::NAME {
            generics.push(o);
        }
    });
    for c in generics {
        let n_in = ins_outs(ir, c).0.len();
        for i in 0..n_in {
            let Some((p, loop_of)) = plan(ir, c, i) else {
                continue;
            };
            let Some(new) = fuse(ir, c, i, p, &loop_of) else {
                continue;
            };
            ir.insert_before(c, new);
            let olds = ir.results(c).to_vec();
            let news = ir.results(new).to_vec();
            for (a, b) in olds.iter().zip(news) {
                ir.replace_all_uses(*a, b);
            }
            ir.erase_op(c);
            // A splat with other consumers stays for them.
            if !ir.has_uses(ir.result(p, 0)) {
                ir.erase_op(p);
            }
            return true;
        }
    }
    false
}

define_pass! {
    /// `linalg-fuse-elementwise-ops`: fuse elementwise linalg.generic producers into their consumers.
    pub struct FuseElementwisePass {
        argument: "linalg-fuse-elementwise-ops",
        name: "LinalgElementwiseOpFusion",
        summary: "Fuse elementwise linalg.generic producers into their consumers",
        description: "A linalg.generic producer on tensors (all loops parallel, one result written through a permutation, its output not read) whose result has one use, an input of another linalg.generic read through a permutation of all its loops, is computed inside that consumer: the producer's inputs become the consumer's (maps composed), its body runs in place of the fused argument. A splat producer (every input 0-d, a body that only yields: a broadcast of one value) is fused into each of its consumers and goes once nothing else reads it. Every consumer loop must stay indexed by some operand. Repeats until no pair qualifies; nothing is recomputed.",
        options: FuseElementwiseOptions {},
        statistics: {
            fused: "num-fused" => "Producers fused into their consumers",
        },
    }
}

impl FuseElementwisePass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        top: OpId,
        _: &FuseElementwiseOptions,
    ) -> Result<(), PassFailure> {
        while fuse_one(cx.ir, top) {
            self.fused += 1;
        }
        Ok(())
    }
}
