//! `outline-loop-nests`: each top-level loop nest of a function on buffers becomes a
//! private function of its own, and nests that are the same computation become one.
//!
//! A model exported by a frontend is one function with every layer inlined: BERT-base is
//! twelve copies of the same encoder layer, each layer three identical projections. Code
//! generation then compiles each copy again — LLVM's optimizer and code generator are
//! most of the compile time (a 12-layer BERT was a minute) — and works on one function of
//! 50,000+ lines, where its superlinear passes hurt most. This pass is what IREE's dispatch
//! outlining and executable deduplication do:
//!
//! * a nest (an op with regions and no results at the top of a function body, of at least
//!   [`MIN_OPS`] ops) moves into `func.func private @<f>_nest<k>(free values)`; the
//!   constants it reads are cloned in (so its loop bounds stay constants), everything else
//!   it reads from outside (buffers, sizes, scalars) becomes an argument, in first-use
//!   order, and a `func.call` takes its place;
//! * a nest whose function is structurally the same as one already outlined (same ops,
//!   attributes, types and argument order; locations aside: `ftuner_ir::structure_key`)
//!   calls that function instead;
//! * an argument is `llvm.noalias` when at every call it is a view of an allocation of
//!   the caller that no other argument of that call views, and no argument is of unknown
//!   origin: the outlined code then knows what the caller knew
//!   (`convert-parallel-loops-to-runtime` passes such buffers to thread-pool loop bodies as
//!   `noalias` arguments, which made outlined loops 2x faster, docs/codegen.md).
//!
//! Outlined functions are `noinline` (`passthrough = ["noinline"]` once lowered), so LLVM
//! compiles each once and does not paste the copies back.

use crate::aliasing::{root_of, Root};
use ftuner_dialects::{func_attrs, ops};
use ftuner_ir::{intern_name, Attribute, Context, Ir, OpId, OpSpec, Type, Value};
use ftuner_pass::{define_pass, PassContext, PassFailure};
use rustc_hash::{FxHashMap, FxHashSet};

/// Nests smaller than this stay where they are (a call is not worth it).
pub const MIN_OPS: usize = 5;

fn free_values(ir: &Ir, op: OpId) -> Vec<Value> {
    let mut seen = FxHashSet::default();
    let mut out = vec![];
    ir.walk_pre(op, &mut |o| {
        for v in ir.operands(o) {
            if !ir.defined_inside(*v, op) && seen.insert(*v) {
                out.push(*v);
            }
        }
    });
    out
}

/// The constant-like op without operands defining `v`, if one does (what outlining
/// clones into the outlined function).
pub(crate) fn is_constant(ctx: &Context, ir: &Ir, v: Value) -> Option<OpId> {
    let d = ir.defining_op(v)?;
    (ctx.has_trait(ir.name(d), ftuner_ir::traits::CONSTANT_LIKE) && ir.operands(d).is_empty())
        .then_some(d)
}

/// Whether argument `i` of a call with arguments `args` is a view of a caller
/// allocation that no other argument views (none is when some buffer argument's origin
/// is unknown: it may view any allocation).
fn fresh(ir: &Ir, args: &[Value], i: usize) -> bool {
    if !ir.value_type(args[i]).is_memref()
        || args
            .iter()
            .any(|v| ir.value_type(*v).is_memref() && root_of(ir, *v) == Root::Unknown)
    {
        return false;
    }
    let Root::Alloc(a) = root_of(ir, args[i]) else {
        return false;
    };
    args.iter()
        .enumerate()
        .all(|(k, v)| k == i || !ir.value_type(*v).is_memref() || root_of(ir, *v) != Root::Alloc(a))
}

struct Outlined {
    name: String,
    op: OpId,
    /// Per argument: fresh at every call so far.
    noalias: Vec<bool>,
}

impl OutlineLoopNestsPass {
    fn outline_func(
        &mut self,
        ctx: &Context,
        ir: &mut Ir,
        f: OpId,
        by_key: &mut FxHashMap<Vec<usize>, usize>,
        funcs: &mut Vec<Outlined>,
    ) {
        let Some(body) = ir.regions_of(f).first().and_then(|r| ir.region_entry(*r)) else {
            return;
        };
        let fname = ir.symbol_name(f).unwrap_or("f").to_string();
        let loc = ir.loc(f);
        for op in ir.block_ops_vec(body) {
            if ir.regions_of(op).is_empty()
                || !ir.results(op).is_empty()
                || ctx.has_trait(ir.name(op), ftuner_ir::traits::TERMINATOR)
                || ir.count_ops(op) < MIN_OPS
            {
                continue;
            }
            let free = free_values(ir, op);
            let (consts, args): (Vec<Value>, Vec<Value>) = free
                .iter()
                .partition(|v| is_constant(ctx, ir, **v).is_some());
            let types: Vec<Type> = args.iter().map(|v| ir.value_type(*v)).collect();
            if types.iter().any(|t| t.is_tensor()) {
                continue; // tensors have no calling convention here: buffers only
            }
            // The candidate function (named for printing; renamed if kept).
            let nf = ir.create_op(
                OpSpec::new(intern_name(ops::func::FuncOp::NAME), loc)
                    .prop("sym_name", Attribute::string("nest"))
                    .prop("sym_visibility", Attribute::string("private"))
                    .prop(
                        "function_type",
                        Attribute::type_attr(Type::function(types.clone(), vec![])),
                    )
                    .regions(1),
            );
            let region = ir.regions_of(nf)[0];
            let blk = ir.append_block(region, &types);
            let mut map: FxHashMap<Value, Value> = FxHashMap::default();
            for (v, a) in args.iter().zip(ir.block_args(blk).to_vec()) {
                map.insert(*v, a);
            }
            for c in &consts {
                if let Some(d) = is_constant(ctx, ir, *c) {
                    let n = ir.clone_op(d, &mut map);
                    ir.append_op(blk, n);
                }
            }
            let copy = ir.clone_op(op, &mut map);
            ir.append_op(blk, copy);
            let ret = ir.create_op(OpSpec::new(intern_name(ops::func::ReturnOp::NAME), loc));
            ir.append_op(blk, ret);
            let key = ftuner_ir::structure_key(ir, nf);
            let k = match by_key.get(&key) {
                Some(k) => {
                    ir.erase_op(nf);
                    self.deduplicated += 1;
                    *k
                }
                None => {
                    let name = format!("{fname}_nest{}", funcs.len());
                    ir.set_prop(nf, "sym_name", Some(Attribute::string(name.clone())));
                    ir.insert_after(f, nf);
                    funcs.push(Outlined {
                        name,
                        op: nf,
                        noalias: vec![true; args.len()],
                    });
                    by_key.insert(key, funcs.len() - 1);
                    self.outlined += 1;
                    funcs.len() - 1
                }
            };
            for (i, na) in funcs[k].noalias.iter_mut().enumerate() {
                *na &= fresh(ir, &args, i);
            }
            let call = ir.create_op(
                OpSpec::new(intern_name(ops::func::CallOp::NAME), ir.loc(op))
                    .operands(args)
                    .prop("callee", Attribute::symbol_ref(funcs[k].name.clone())),
            );
            ir.insert_before(op, call);
            ir.erase_op(op);
        }
    }
}

define_pass! {
    /// `outline-loop-nests`: outline the top-level loop nests of functions on buffers into private functions, one per distinct nest.
    pub struct OutlineLoopNestsPass {
        argument: "outline-loop-nests",
        name: "OutlineLoopNests",
        summary: "Outline the top-level loop nests of functions on buffers into private functions, one per distinct nest",
        description: "Each op with regions and no results at the top of a function body (a loop nest, at least 5 ops) moves into a private noinline function taking what it reads from outside (constants are cloned in); nests that print the same share one function. An argument is llvm.noalias when at every call it views a caller allocation no other argument views.",
        options: OutlineLoopNestsOptions {},
        statistics: {
            outlined: "num-outlined" => "Loop nests outlined into functions of their own",
            deduplicated: "num-deduplicated" => "Loop nests that call a function outlined for an identical nest",
        },
    }
}

impl OutlineLoopNestsPass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        top: OpId,
        _: &OutlineLoopNestsOptions,
    ) -> Result<(), PassFailure> {
        let originals = crate::outline_weights::module_funcs(cx.ir, top);
        let mut by_key = FxHashMap::default();
        let mut funcs = vec![];
        for f in originals {
            // Functions on buffers only, with one block.
            let single = cx
                .ir
                .regions_of(f)
                .first()
                .is_some_and(|r| cx.ir.region(*r).blocks.len() == 1);
            let on_buffers = cx
                .ir
                .attr(f, "function_type")
                .and_then(|a| a.as_type())
                .is_some_and(|t| {
                    !t.function_inputs()
                        .iter()
                        .chain(t.function_results())
                        .any(|x| x.is_tensor())
                });
            if single && on_buffers {
                self.outline_func(cx.ctx, cx.ir, f, &mut by_key, &mut funcs);
            }
        }
        for o in &funcs {
            let attrs: Vec<Attribute> = o
                .noalias
                .iter()
                .map(|na| {
                    Attribute::dictionary(if *na {
                        vec![("llvm.noalias".to_string(), Attribute::unit())]
                    } else {
                        vec![]
                    })
                })
                .collect();
            if o.noalias.iter().any(|x| *x) {
                cx.ir
                    .set_prop(o.op, "arg_attrs", Some(Attribute::array(attrs)));
            }
            cx.ir
                .set_attr(o.op, func_attrs::NOINLINE, Some(Attribute::unit()));
        }
        Ok(())
    }
}
