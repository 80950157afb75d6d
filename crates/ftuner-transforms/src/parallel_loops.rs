//! `convert-parallel-loops-to-runtime`: the loops marked `ftuner.parallel` go to the
//! runtime's thread pool. Each outermost marked `scf.for` of a function (no results, more
//! than one iteration as far as its constant bounds say) becomes
//!
//! ```mlir
//! func.func private @f_par0(%lo: index, %hi: index, %a: memref<..> {llvm.noalias}, ...) {
//!   %start = lb + lo * step ; %end = lb + hi * step
//!   scf.for %iv = %start to %end step %step { <the loop's body, unchanged> }
//!   return
//! }
//! ...
//! rt.parallel_for @f_par0(%n) args(%a, ... : memref<..>, ...)   // n = ceildiv(ub - lb, step), >= 0
//! ```
//!
//! The body reads what it used from outside as arguments, in first-use order (the lower
//! bound and step too, where they are not constants); the constants it reads are cloned
//! in. A buffer argument is `llvm.noalias` when its memory is an allocation (or a noalias
//! argument) of the enclosing function that no other argument reaches, and no argument's
//! origin is unknown ([`crate::aliasing::noalias_args`]): through the runtime's context the
//! body would otherwise have to assume any store may change any input, and re-load and
//! vectorise less. A step that is not a positive constant is checked first
//! (`cf.assert`), as `scf.for`'s own lowering does.
//!
//! A marked loop of a dynamic trip count holding marked loops (a batch of GEMMs over their
//! tile loops) is `nested`: its body's outermost marked loops are outlined in turn (one
//! level), and the runtime decides which level the pool splits
//! (`ftuner_rt_parallel_for_nested`). Otherwise the marked loops inside a body stay serial
//! loops (a static count keeps them in one function that LLVM optimises whole:
//! MobileNetV2's depthwise planes were 6% slower outlined). `convert-to-llvm` lowers
//! `rt.parallel_for` to the pool's entry, a context struct and a function that unpacks it
//! (`to_llvm/parallel.rs`); without this pass every loop stays serial and the module makes
//! no runtime call.

use crate::aliasing::noalias_args;
use crate::outline_nests::is_constant;
use ftuner_dialects::ops;
use ftuner_dialects::scf::PARALLEL_ATTR;
use ftuner_ir::{intern_name, Attribute, Context, Ir, OpBuilder, OpId, OpSpec, Type, Value};
use ftuner_pass::{define_pass, PassContext, PassFailure};
use rustc_hash::{FxHashMap, FxHashSet};

/// Whether `op` goes to the pool: an `scf.for` marked [`PARALLEL_ATTR`], no results, and not
/// of one iteration at most by its constant bounds. Such a loop (the batch of one of a
/// `1x?x768` generic, marked with the loop inside it) stays in place, so that the marked
/// loop inside it is the outermost and goes to the pool (outlined, the one-iteration loop
/// took the pool and the loop inside ran serially: GPT-2's elementwise ops at two threads).
fn pool_loop(ctx: &Context, ir: &Ir, op: OpId) -> bool {
    ir.name(op) == ops::scf::ForOp::NAME
        && ir.results(op).is_empty()
        && ir.value_type(ir.operand(op, 0)).is_index()
        && ir.attr(op, PARALLEL_ATTR).is_some()
        && !matches!(ftuner_dialects::scf::for_trip_count(ctx, ir, op), Some(n) if n <= 1)
}

/// The outermost pool loops nested in `op` (not `op` itself), in program order.
fn outermost(ctx: &Context, ir: &Ir, op: OpId, out: &mut Vec<OpId>) {
    for r in ir.regions_of(op).to_vec() {
        for b in ir.region(r).blocks.clone() {
            for o in ir.block_ops_vec(b) {
                if pool_loop(ctx, ir, o) {
                    out.push(o);
                } else {
                    outermost(ctx, ir, o, out);
                }
            }
        }
    }
}

/// The values the body of loop `op` reads from outside it, in first-use order.
fn body_inputs(ir: &Ir, op: OpId) -> Vec<Value> {
    let mut seen = FxHashSet::default();
    let mut out = vec![];
    ir.walk_pre(op, &mut |o| {
        if o == op {
            return;
        }
        for v in ir.operands(o) {
            if !ir.defined_inside(*v, op) && seen.insert(*v) {
                out.push(*v);
            }
        }
    });
    out
}

/// The constant integer value of `v`, if a constant defines it.
fn constant(ctx: &Context, ir: &Ir, v: Value) -> Option<i64> {
    ftuner_dialects::cf::constant_of(ctx, ir, v).and_then(|a| a.as_i64())
}

define_pass! {
    /// `convert-parallel-loops-to-runtime`: loops marked `ftuner.parallel` become
    /// functions run by the runtime's thread pool.
    pub struct ConvertParallelLoopsToRuntimePass {
        argument: "convert-parallel-loops-to-runtime",
        name: "ConvertParallelLoopsToRuntime",
        summary: "Outline the loops marked 'ftuner.parallel' into functions the runtime's thread pool runs (rt.parallel_for)",
        description: "Each outermost scf.for marked 'ftuner.parallel' (no results, more than one iteration) moves into a private function over an iteration range [lo, hi), taking what it reads from outside (constants cloned in; buffers no other argument reaches marked llvm.noalias), and an rt.parallel_for of its trip count takes its place. A marked loop of a dynamic trip count holding marked loops is 'nested': the outermost marked loops of its body are outlined in turn (one level) and the runtime picks the level that splits. convert-to-llvm lowers rt.parallel_for to ftuner_rt_parallel_for(_nested).",
        options: ConvertParallelLoopsToRuntimeOptions {},
        statistics: {
            outlined: "num-parallel-loops" => "Parallel loops outlined to run on the thread pool",
            nested: "num-nested" => "Outlined loops whose bodies' parallel loops were outlined too",
        },
    }
}

/// Where the functions outlined from one function go, and what they are named.
struct Outliner {
    /// `<function>_par<k>`: the function's name, and the next `k` to try.
    fname: String,
    next: usize,
    /// The names the module's symbol table holds (an outlined function takes the first
    /// `<function>_par<k>` not among them: the input may have been through this pass).
    taken: FxHashSet<String>,
    /// The op the next outlined function is inserted after (they follow their function
    /// in the order they are made).
    last: OpId,
}

impl ConvertParallelLoopsToRuntimePass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        top: OpId,
        _: &ConvertParallelLoopsToRuntimeOptions,
    ) -> Result<(), PassFailure> {
        let mut taken: FxHashSet<String> = FxHashSet::default();
        if let Some(body) = cx
            .ir
            .regions_of(top)
            .first()
            .and_then(|r| cx.ir.region_entry(*r))
        {
            for o in cx.ir.block_ops_vec(body) {
                if let Some(n) = cx.ir.symbol_name(o) {
                    taken.insert(n.to_string());
                }
            }
        }
        for f in crate::outline_weights::module_funcs(cx.ir, top) {
            let mut loops = vec![];
            outermost(cx.ctx, cx.ir, f, &mut loops);
            let mut o = Outliner {
                fname: cx.ir.symbol_name(f).unwrap_or("f").to_string(),
                next: 0,
                taken,
                last: f,
            };
            for l in loops {
                self.outline(cx.ctx, cx.ir, l, &mut o, true);
            }
            taken = o.taken;
        }
        Ok(())
    }

    /// Outline pool loop `op` (see the module's doc); `may_nest`: its body may outline its
    /// own marked loops (a loop of a function's body, not of an outlined one).
    fn outline(&mut self, ctx: &Context, ir: &mut Ir, op: OpId, o: &mut Outliner, may_nest: bool) {
        let (lb, ub, step) = (ir.operand(op, 0), ir.operand(op, 1), ir.operand(op, 2));
        let loc = ir.loc(op);
        let nested = may_nest && ftuner_dialects::scf::for_trip_count(ctx, ir, op).is_none() && {
            let mut inner = vec![];
            outermost(ctx, ir, op, &mut inner);
            !inner.is_empty()
        };
        // What the body reads from outside, the lower bound and step too.
        let mut inputs = body_inputs(ir, op);
        for v in [lb, step] {
            if !inputs.contains(&v) {
                inputs.push(v);
            }
        }
        let (consts, args): (Vec<Value>, Vec<Value>) = inputs
            .into_iter()
            .partition(|v| is_constant(ctx, ir, *v).is_some());
        let noalias = noalias_args(ir, &args);
        let mut types = vec![Type::index(), Type::index()];
        types.extend(args.iter().map(|v| ir.value_type(*v)));
        let name = loop {
            let n = format!("{}_par{}", o.fname, o.next);
            o.next += 1;
            if o.taken.insert(n.clone()) {
                break n;
            }
        };
        let mut spec = OpSpec::new(intern_name(ops::func::FuncOp::NAME), loc)
            .prop("sym_name", Attribute::string(name.clone()))
            .prop("sym_visibility", Attribute::string("private"))
            .prop(
                "function_type",
                Attribute::type_attr(Type::function(types.clone(), vec![])),
            )
            .regions(1);
        if noalias.iter().any(|x| *x) {
            let unit = || vec![("llvm.noalias".to_string(), Attribute::unit())];
            let mut attrs = vec![Attribute::dictionary(vec![]); 2];
            attrs.extend(
                noalias
                    .iter()
                    .map(|na| Attribute::dictionary(if *na { unit() } else { vec![] })),
            );
            spec = spec.prop("arg_attrs", Attribute::array(attrs));
        }
        // At the loop: the step checked, the trip count, the call.
        let mut b = OpBuilder::before(ir, op);
        let n = trip_count(ctx, &mut b, [lb, ub, step]);
        let mut call = OpSpec::new(intern_name(ops::rt::ParallelForOp::NAME), loc)
            .operands(std::iter::once(n).chain(args.iter().copied()))
            .prop("callee", Attribute::symbol_ref(name));
        if nested {
            call = call.prop("nested", Attribute::unit());
        }
        b.insert(call);
        // The function: constants cloned in, iterations lo .. hi of the loop (iv = lb +
        // i * step), the loop itself cloned in with its body as it was.
        let nf = ir.create_op(spec);
        ir.insert_after(o.last, nf);
        o.last = nf;
        let region = ir.regions_of(nf)[0];
        let blk = ir.append_block(region, &types);
        let params = ir.block_args(blk).to_vec();
        let mut map: FxHashMap<Value, Value> = FxHashMap::default();
        for (v, a) in args.iter().zip(&params[2..]) {
            map.insert(*v, *a);
        }
        for c in &consts {
            if let Some(d) = is_constant(ctx, ir, *c) {
                let n = ir.clone_op(d, &mut map);
                ir.append_op(blk, n);
            }
        }
        let (lb_in, step_in) = (map[&lb], map[&step]);
        let (lb_k, step_k) = (constant(ctx, ir, lb), constant(ctx, ir, step));
        let mut b = OpBuilder::at_end(ir, blk, loc);
        let at = |b: &mut OpBuilder<'_>, i: Value| {
            let off = index_op(
                b,
                ops::arith::MuliOp::NAME,
                [i, step_in],
                (step_k == Some(1)).then_some(i),
            );
            index_op(
                b,
                ops::arith::AddiOp::NAME,
                [lb_in, off],
                (lb_k == Some(0)).then_some(off),
            )
        };
        let start = at(&mut b, params[0]);
        let end = at(&mut b, params[1]);
        // The loop, cloned in (what it reads from outside mapped to the arguments and the
        // cloned constants), over the range.
        let moved = ir.clone_op(op, &mut map);
        ir.append_op(blk, moved);
        ir.set_operands(moved, vec![start, end, step_in]);
        ir.set_attr(moved, PARALLEL_ATTR, None);
        ir.erase_op(op);
        let ret = ir.create_op(OpSpec::new(intern_name(ops::func::ReturnOp::NAME), loc));
        ir.append_op(blk, ret);
        self.outlined += 1;
        if nested {
            self.nested += 1;
            let mut inner = vec![];
            outermost(ctx, ir, nf, &mut inner);
            for l in inner {
                self.outline(ctx, ir, l, o, false);
            }
        }
        // What stays marked in the body runs serially: unmarked, so that running the pass
        // again (a pipeline after `ftuner-opt --convert-parallel-loops-to-runtime`) keeps
        // it so.
        ir.remove_attr_under(nf, PARALLEL_ATTR);
    }
}

/// `max(ceildiv(ub - lb, step), 0)` at the builder's point (a constant when the bounds
/// are), after a check that `step` is positive where it is not a positive constant.
fn trip_count(ctx: &Context, b: &mut OpBuilder<'_>, [lb, ub, step]: [Value; 3]) -> Value {
    let [kl, ku, ks] = [lb, ub, step].map(|v| constant(ctx, b.ir, v));
    if let (Some(l), Some(u), Some(s)) = (kl, ku, ks) {
        if s > 0 {
            let n = u.saturating_sub(l).max(0);
            return b.index(n / s + i64::from(n % s != 0));
        }
    }
    if ks.is_none_or(|s| s <= 0) {
        let zero = b.index(0);
        let pos = b.value(
            ops::arith::CmpiOp::NAME,
            vec![step, zero],
            Type::i1(),
            &[("predicate", Attribute::i64(4))],
        );
        b.create(
            ops::cf::AssertOp::NAME,
            vec![pos],
            vec![],
            &[(
                "msg",
                Attribute::string("'scf.for' op step is not positive"),
            )],
        );
    }
    let span = index_op(
        b,
        ops::arith::SubiOp::NAME,
        [ub, lb],
        (kl == Some(0)).then_some(ub),
    );
    let q = index_op(
        b,
        ops::arith::CeildivsiOp::NAME,
        [span, step],
        (ks == Some(1)).then_some(span),
    );
    let zero = b.index(0);
    b.value(ops::arith::MaxsiOp::NAME, vec![q, zero], Type::index(), &[])
}

/// `name(x, y)` on `index` values at the builder's point, or `same` where the result is
/// known to be that operand (a product or quotient by 1, a sum or difference of 0).
fn index_op(b: &mut OpBuilder<'_>, name: &str, [x, y]: [Value; 2], same: Option<Value>) -> Value {
    same.unwrap_or_else(|| b.value(name, vec![x, y], Type::index(), &[]))
}
