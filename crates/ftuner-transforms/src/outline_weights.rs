//! `outline-weight-preparation`: move the computations that depend only on a function's
//! weights into a function of their own, run once when the weights are known.
//!
//! Frontends export a model with its parameters as arguments (torch-mlir's FX importer
//! after lifting them; ../shared/inputs), and the exported body re-derives what the
//! kernels read from them on every call: `linalg.transpose` of each dense weight, casts,
//! slices of position tables. Arguments marked `{ftuner.weight}` are known at load time,
//! so for `func.func @f` this pass builds
//!
//! * `@f_prepare(all weight arguments of @f, in order) -> (prepared values)`: every pure
//!   op on tensors whose operands derive only from weights and constants, and
//! * `@f(the other arguments, in order, then the prepared values)`: the rest, reading
//!   the prepared values; the weight arguments themselves are gone from it.
//!
//! A prepared value is what the remaining body reads: the result of a hoisted
//! computation, or a weight argument read as it is. Views (reshapes, casts, slices) at
//! that boundary stay in `@f`, so every prepared value that is not a weight is a fresh
//! buffer of static shape; ops whose result is larger than their largest operand
//! (broadcasts) stay too, so preparation never multiplies memory. `@f` records where its
//! arguments come from in `ftuner.prepared = {prepare = @f_prepare, inputs = array<i64:
//! ...>}`: the index, in the old signature, of each argument it kept.
//!
//! Run again on a function it has split (after lower-ukernels has packed a prepared B
//! into the panels its register tiles read), the pass extends the existing preparation:
//! what now derives only from prepared values moves to the end of `@f_prepare`, whose
//! new results become new arguments of `@f`, and prepared values `@f` no longer reads
//! leave both signatures. `inputs` does not change.
//!
//! This is what IREE calls hoisting into globals (const-eval) and what `torch.jit.freeze`
//! does for TorchScript; here the prepared values stay arguments, so one compiled module
//! serves any set of weights of the same shapes.

use crate::effects::is_pure;
use ftuner_dialects::{func_attrs, ops};
use ftuner_ir::{intern_name, Attribute, BlockId, Context, Ir, OpId, OpSpec, Type, Value};
use ftuner_pass::{define_pass, PassContext, PassFailure};
use rustc_hash::{FxHashMap, FxHashSet};

pub use ftuner_dialects::func_attrs::weight_args;

/// Mark arguments `idx` of `f` as weights (`{ftuner.weight}`).
pub fn mark_weights(ir: &mut Ir, f: OpId, idx: &[usize]) {
    let n = ir
        .attr(f, "function_type")
        .and_then(|a| a.as_type())
        .map(|t| t.function_inputs().len())
        .unwrap_or(0);
    let attrs = func_attrs::with_weights_marked(ir, f, n, idx);
    ir.set_inherent(f, "arg_attrs", attrs);
}

const VIEWS: &[&str] = &[
    ops::tensor::ExpandShapeOp::NAME,
    ops::tensor::CollapseShapeOp::NAME,
    ops::tensor::ReshapeOp::NAME,
    ops::tensor::CastOp::NAME,
    ops::tensor::ExtractSliceOp::NAME,
];

/// Every value used inside `op` (operands of nested ops too) defined outside it.
fn free_values(ir: &Ir, op: OpId) -> Vec<Value> {
    let mut out = vec![];
    ir.walk_pre(op, &mut |o| {
        for v in ir.operands(o) {
            if o == op || !ir.defined_inside(*v, op) {
                out.push(*v);
            }
        }
    });
    out
}

fn elements(t: Type) -> Option<i64> {
    t.num_elements().filter(|_| t.has_static_shape())
}

/// What splitting `f` needs: the ops to hoist (in block order) and the prepared values.
struct Split {
    hoisted: Vec<OpId>,
    prepared: Vec<Value>,
}

/// The values of `body` that derive from its arguments `weights` only (those arguments
/// included), and the ops computing them, in block order: pure ops on tensors of static
/// shape that do not grow their largest input, reading weights, such values and
/// constants.
fn weight_derived(
    ctx: &Context,
    ir: &Ir,
    body: BlockId,
    weights: &[usize],
) -> (FxHashSet<Value>, Vec<OpId>) {
    let args = ir.block_args(body);
    // Values that derive from weights only, and those that derive from nothing (constants).
    let mut derived: FxHashSet<Value> = weights
        .iter()
        .filter_map(|i| args.get(*i))
        .copied()
        .collect();
    let mut constant: FxHashSet<Value> = FxHashSet::default();
    let mut hoisted: Vec<OpId> = vec![];
    for op in ir.block_ops(body) {
        if ir.results(op).is_empty() || !is_pure(ctx, ir, op) {
            continue;
        }
        let free = free_values(ir, op);
        if !free
            .iter()
            .all(|v| derived.contains(v) || constant.contains(v))
        {
            continue;
        }
        if !free.iter().any(|v| derived.contains(v)) {
            constant.extend(ir.results(op).iter().copied());
            continue;
        }
        // Tensors of static shape that do not grow: what is worth keeping prepared.
        let biggest = free
            .iter()
            .filter_map(|v| elements(ir.value_type(*v)))
            .max()
            .unwrap_or(0);
        let fits = ir.results(op).iter().all(|r| {
            let t = ir.value_type(*r);
            t.is_tensor() && elements(t).is_some_and(|n| n <= biggest.max(1))
        });
        if !fits {
            continue;
        }
        derived.extend(ir.results(op).iter().copied());
        hoisted.push(op);
    }
    (derived, hoisted)
}

/// The values of function `f` that this pass would compute once, when the weights are
/// loaded, rather than on every call: its `{ftuner.weight}` arguments, the prepared
/// values of a function it has split, and what derives from them alone (views at the
/// boundary included, which cost nothing per call). Empty for a function without weights
/// or of several blocks. What ollie-derive asks before choosing a layout whose transposes
/// fall on such values, and convert-1x1-conv-to-matmul before transposing a filter.
pub fn load_time_values(ctx: &Context, ir: &Ir, f: OpId) -> FxHashSet<Value> {
    let Some(body) = ir.regions_of(f).first().and_then(|r| ir.region_entry(*r)) else {
        return FxHashSet::default();
    };
    let mut weights = weight_args(ir, f);
    if let Some((kept, _)) = prepared_of(ir, f) {
        weights.extend(kept..ir.block_args(body).len());
    }
    if weights.is_empty() || ir.region(ir.regions_of(f)[0]).blocks.len() != 1 {
        return FxHashSet::default();
    }
    weight_derived(ctx, ir, body, &weights).0
}

fn plan(ctx: &Context, ir: &Ir, f: OpId, body: BlockId, weights: &[usize]) -> Option<Split> {
    let args = ir.block_args(body).to_vec();
    let (derived, mut hoisted) = weight_derived(ctx, ir, body, weights);
    // The boundary: hoisted results or weights read by ops that stay. Views at the
    // boundary stay in @f (their operands become the boundary), until none is left.
    loop {
        let set: FxHashSet<OpId> = hoisted.iter().copied().collect();
        let stays = |o: OpId| {
            let mut top = o;
            while let Some(p) = ir.parent_op(top) {
                if p == f {
                    break;
                }
                top = p;
            }
            !set.contains(&top)
        };
        let mut prepared: Vec<Value> = vec![];
        let mut seen = FxHashSet::default();
        let mut views = vec![];
        for v in args
            .iter()
            .copied()
            .chain(hoisted.iter().flat_map(|o| ir.results(*o).to_vec()))
        {
            if !derived.contains(&v) || !ir.uses(v).iter().any(|u| stays(u.op)) {
                continue;
            }
            if let Some(d) = ir.defining_op(v) {
                if VIEWS.contains(&ir.name(d)) {
                    views.push(d);
                    continue;
                }
            }
            if seen.insert(v) {
                prepared.push(v);
            }
        }
        if views.is_empty() {
            return (!hoisted.is_empty()).then_some(Split { hoisted, prepared });
        }
        hoisted.retain(|o| !views.contains(o));
    }
}

/// Clone `hoisted` (ops of `body`, in block order) and the constants they read before
/// `anchor` (the prepare function's `func.return`), operands through `map`. Returns the
/// constants, in block order.
fn clone_hoisted(
    ir: &mut Ir,
    body: BlockId,
    hoisted: &[OpId],
    map: &mut FxHashMap<Value, Value>,
    anchor: OpId,
) -> Vec<OpId> {
    let hoisted_set: FxHashSet<OpId> = hoisted.iter().copied().collect();
    let mut needed: FxHashSet<OpId> = FxHashSet::default();
    let mut stack: Vec<Value> = hoisted.iter().flat_map(|o| free_values(ir, *o)).collect();
    while let Some(v) = stack.pop() {
        if let Some(d) = ir.defining_op(v) {
            if !hoisted_set.contains(&d) && needed.insert(d) {
                stack.extend(free_values(ir, d));
            }
        }
    }
    let mut constants = vec![];
    for op in ir.block_ops_vec(body) {
        if hoisted_set.contains(&op) || needed.contains(&op) {
            let c = ir.clone_op(op, map);
            ir.insert_before(anchor, c);
            if needed.contains(&op) {
                constants.push(op);
            }
        }
    }
    constants
}

/// Erase the constants only hoisted ops read (their copies are in the prepare function).
fn erase_unused(ir: &mut Ir, constants: &[OpId]) {
    for op in constants.iter().rev() {
        if ir.results(*op).iter().all(|r| !ir.has_uses(*r)) {
            ir.erase_op(*op);
        }
    }
}

/// `body` reads each of `prepared` from a new argument (appended, in order) wherever an
/// op that stays reads it; the hoisted ops go. Returns the new arguments.
fn take_prepared(ir: &mut Ir, body: BlockId, hoisted: &[OpId], prepared: &[Value]) -> Vec<Value> {
    let hoisted_set: FxHashSet<OpId> = hoisted.iter().copied().collect();
    let mut new_args = vec![];
    for v in prepared {
        let a = ir.add_block_arg(body, ir.value_type(*v));
        new_args.push(a);
    }
    for (v, a) in prepared.iter().zip(&new_args) {
        let uses: Vec<_> = ir.uses(*v).to_vec();
        for u in uses {
            if !hoisted_set.contains(&u.op) && !hoisted.iter().any(|h| ir.is_ancestor(*h, u.op)) {
                ir.set_operand(u.op, u.operand as usize, *a);
            }
        }
    }
    for op in hoisted.iter().rev() {
        ir.erase_op(*op);
    }
    new_args
}

/// `f`'s preparation, when the pass has split it before: the number of arguments it kept
/// (the prepared values follow them) and the prepare function.
fn prepared_of(ir: &Ir, f: OpId) -> Option<(usize, OpId)> {
    let p = func_attrs::prepared(ir, f)?;
    let block = ir.op(f).parent?;
    let pf = ir.block_ops(block).find(|o| {
        ir.name(*o) == ops::func::FuncOp::NAME && ir.symbol_name(*o) == Some(p.prepare.as_str())
    })?;
    Some((p.inputs.len(), pf))
}

/// Split `f` again, after later passes made more of it depend on prepared values only
/// (lower-ukernels' packing of a prepared B into panels): what derives from the prepared
/// arguments moves to the end of the existing prepare function, whose new results become
/// new arguments of `f`; prepared values `f` no longer reads leave both signatures.
fn extend(ctx: &Context, ir: &mut Ir, f: OpId, kept: usize, pf: OpId) -> usize {
    let Some(body) = ir.regions_of(f).first().and_then(|r| ir.region_entry(*r)) else {
        return 0;
    };
    let Some(pblock) = ir.regions_of(pf).first().and_then(|r| ir.region_entry(*r)) else {
        return 0;
    };
    let Some(ret) = ir
        .terminator(pblock)
        .filter(|r| ir.name(*r) == ops::func::ReturnOp::NAME)
    else {
        return 0;
    };
    let args = ir.block_args(body).to_vec();
    if ir.region(ir.regions_of(f)[0]).blocks.len() != 1
        || ir.operands(ret).len() + kept != args.len()
    {
        return 0;
    }
    let from: Vec<usize> = (kept..args.len()).collect();
    let Some(Split { hoisted, prepared }) = plan(ctx, ir, f, body, &from) else {
        return 0;
    };
    let mut map: FxHashMap<Value, Value> = FxHashMap::default();
    for (a, r) in args[kept..].iter().zip(ir.operands(ret).to_vec()) {
        map.insert(*a, r);
    }
    let constants = clone_hoisted(ir, body, &hoisted, &mut map, ret);
    // Values already prepared stay where they are; the others are new results.
    let fresh: Vec<Value> = prepared
        .iter()
        .copied()
        .filter(|v| !args[kept..].contains(v))
        .collect();
    let mut rets = ir.operands(ret).to_vec();
    rets.extend(fresh.iter().map(|v| *map.get(v).unwrap_or(v)));
    take_prepared(ir, body, &hoisted, &fresh);
    erase_unused(ir, &constants);
    // Prepared values nothing reads any more leave @f and @f_prepare.
    for i in (kept..ir.block_args(body).len()).rev() {
        if ir.uses(ir.block_args(body)[i]).is_empty() {
            ir.erase_block_arg(body, i);
            rets.remove(i - kept);
        }
    }
    ir.set_operands(ret, rets);
    let ptype = ir.attr(pf, "function_type").and_then(|a| a.as_type());
    let ftype = ir.attr(f, "function_type").and_then(|a| a.as_type());
    let (Some(ptype), Some(ftype)) = (ptype, ftype) else {
        return hoisted.len();
    };
    let rtypes: Vec<Type> = ir.operands(ret).iter().map(|v| ir.value_type(*v)).collect();
    let ptype = Type::function(ptype.function_inputs().to_vec(), rtypes);
    ir.set_inherent(pf, "function_type", Attribute::type_attr(ptype));
    let atypes: Vec<Type> = ir
        .block_args(body)
        .iter()
        .map(|v| ir.value_type(*v))
        .collect();
    let mut attrs = func_attrs::arg_attrs(ir, f);
    attrs.truncate(kept);
    attrs.resize(atypes.len(), Attribute::dictionary(vec![]));
    let ftype = Type::function(atypes, ftype.function_results().to_vec());
    ir.set_inherent(f, "function_type", Attribute::type_attr(ftype));
    ir.set_inherent(f, "arg_attrs", Attribute::array(attrs));
    hoisted.len()
}

/// Split `f` (per the module doc); returns the number of hoisted ops.
fn split(ctx: &Context, ir: &mut Ir, f: OpId) -> usize {
    if let Some((kept, pf)) = prepared_of(ir, f) {
        return extend(ctx, ir, f, kept, pf);
    }
    let weights = weight_args(ir, f);
    let Some(body) = ir.regions_of(f).first().and_then(|r| ir.region_entry(*r)) else {
        return 0;
    };
    if weights.is_empty() || ir.region(ir.regions_of(f)[0]).blocks.len() != 1 {
        return 0;
    }
    let Some(Split { hoisted, prepared }) = plan(ctx, ir, f, body, &weights) else {
        return 0;
    };
    let name = ir.symbol_name(f).unwrap_or("main").to_string();
    let loc = ir.loc(f);
    let args = ir.block_args(body).to_vec();
    let ftype = ir.attr(f, "function_type").and_then(|a| a.as_type());
    let Some(ftype) = ftype else { return 0 };
    let in_types = ftype.function_inputs().to_vec();
    let w_types: Vec<Type> = weights.iter().map(|i| in_types[*i]).collect();
    let p_types: Vec<Type> = prepared.iter().map(|v| ir.value_type(*v)).collect();
    // @f_prepare: the hoisted ops (and the constants they read) on the weights.
    let pname = format!("{name}_prepare");
    let pf = ir.create_op(
        OpSpec::new(intern_name(ops::func::FuncOp::NAME), loc)
            .prop("sym_name", Attribute::string(pname.clone()))
            .prop(
                "function_type",
                Attribute::type_attr(Type::function(w_types.clone(), p_types.clone())),
            )
            .regions(1),
    );
    // Run once per set of weights: convert-to-llvm compiles it without optimization
    // once its loops are outlined (see `func_attrs::RUN_ONCE`).
    ir.set_attr(pf, func_attrs::RUN_ONCE, Some(Attribute::unit()));
    let pregion = ir.regions_of(pf)[0];
    let pblock = ir.append_block(pregion, &w_types);
    let mut map: FxHashMap<Value, Value> = FxHashMap::default();
    for (k, i) in weights.iter().enumerate() {
        map.insert(args[*i], ir.block_args(pblock)[k]);
    }
    let ret = ir.create_op(OpSpec::new(intern_name(ops::func::ReturnOp::NAME), loc));
    ir.append_op(pblock, ret);
    let constants = clone_hoisted(ir, body, &hoisted, &mut map, ret);
    let rets: Vec<Value> = prepared.iter().map(|v| *map.get(v).unwrap_or(v)).collect();
    ir.set_operands(ret, rets);
    ir.insert_before(f, pf);
    // @f: the prepared values become arguments; the hoisted ops and weights go.
    let new_args = take_prepared(ir, body, &hoisted, &prepared);
    erase_unused(ir, &constants);
    let old_attrs = func_attrs::arg_attrs(ir, f);
    let mut kept = vec![];
    let mut kept_attrs = vec![];
    let mut kept_types = vec![];
    for (i, t) in in_types.iter().enumerate() {
        if !weights.contains(&i) {
            kept.push(i as i64);
            kept_types.push(*t);
            kept_attrs.push(
                old_attrs
                    .get(i)
                    .copied()
                    .unwrap_or(Attribute::dictionary(vec![])),
            );
        }
    }
    for i in weights.iter().rev() {
        // A weight still read directly is a prepared value (an argument at the end now).
        let a = ir.block_args(body)[*i];
        let uses: Vec<_> = ir.uses(a).to_vec();
        if let Some(k) = prepared.iter().position(|p| *p == a) {
            for u in uses {
                ir.set_operand(u.op, u.operand as usize, new_args[k]);
            }
        }
        ir.erase_block_arg(body, *i);
    }
    kept_types.extend(p_types.iter().copied());
    kept_attrs.extend(p_types.iter().map(|_| Attribute::dictionary(vec![])));
    ir.set_inherent(
        f,
        "function_type",
        Attribute::type_attr(Type::function(
            kept_types,
            ftype.function_results().to_vec(),
        )),
    );
    ir.set_inherent(f, "arg_attrs", Attribute::array(kept_attrs));
    ir.set_attr(
        f,
        func_attrs::PREPARED,
        Some(func_attrs::prepared_attr(&kept, &pname)),
    );
    hoisted.len()
}

/// The `func.func` ops directly in module `top`'s body, in order.
pub(crate) fn module_funcs(ir: &Ir, top: OpId) -> Vec<OpId> {
    let Some(body) = ir.regions_of(top).first().and_then(|r| ir.region_entry(*r)) else {
        return vec![];
    };
    ir.block_ops(body)
        .filter(|o| ir.name(*o) == ops::func::FuncOp::NAME)
        .collect()
}

define_pass! {
    /// `outline-weight-preparation`: move computations on {ftuner.weight} arguments into a @<f>_prepare function run once.
    pub struct OutlineWeightPreparationPass {
        argument: "outline-weight-preparation",
        name: "OutlineWeightPreparation",
        summary: "Move computations on {ftuner.weight} arguments into a @<f>_prepare function run once",
        description: "For each func.func with arguments marked {ftuner.weight}: the pure tensor ops whose operands derive only from weights and constants (transposes of dense weights, casts, slices of tables; not views at the boundary, not ops that grow their input) move into @<f>_prepare(weights) -> (prepared values); @f then takes its other arguments followed by the prepared values, and records the mapping in ftuner.prepared.",
        options: OutlineWeightPreparationOptions {},
        statistics: {
            hoisted: "num-hoisted" => "Ops moved into a weight-preparation function",
        },
    }
}

impl OutlineWeightPreparationPass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        top: OpId,
        _: &OutlineWeightPreparationOptions,
    ) -> Result<(), PassFailure> {
        for f in module_funcs(cx.ir, top) {
            self.hoisted += split(cx.ctx, cx.ir, f) as u64;
        }
        Ok(())
    }
}
