//! The kernels of a model: each contraction, with the elementwise ops `patch-ukernels`
//! fuses into its epilogue, taken out into a module of its own, with its workload key, so
//! it can be compiled and measured alone.
//!
//! A kernel is taken where `patch-ukernels` meets it in ftuner's CPU pipeline:
//! [`prepare_model`] first runs what comes before that pass (the weight preparation
//! outlined, elementwise chains fused, 1x1 convolutions as matmuls, padded windows
//! peeled: `ftuner_transforms::pipelines::cpu_prepatch`), so a kernel's workload key is
//! the one `patch-ukernels{tuning-db=...}` looks up when the model is compiled, and what is
//! measured is what runs in the model:
//!
//! * the contraction, and the `linalg.fill` that zeroes its accumulator (the lowering
//!   starts such tiles at zero instead of loading C);
//! * the consumers its epilogue takes (`ftuner_ukernel::epilogue::epilogue_chain`: a
//!   bias-add and an activation, a batch norm, a residual add), so the class says which —
//!   for 2-d contractions: a convolution's lanewise consumer, which the CPU pipeline also
//!   fuses into its patch, is not taken (its key and class say `none`, and it is measured
//!   without it; taking it would change the stored keys of convolutions);
//! * every other operand is an argument of `@kernel`; those the model knows with its
//!   weights (`{ftuner.weight}` arguments, prepared values, views of them) are marked
//!   `{ftuner.weight}` too, so B is packed once, in `@kernel_prepare`, as in the model.
//!
//! Measurement sizes every dynamic dim with the same value (the point: a sequence length,
//! a batch); a dim of an image read through a convolution window is sized from the window
//! expression so the output has the point's size.

use ftuner_dialects::ops;
use ftuner_hw::HardwareModel;
use ftuner_ir::{
    intern_name, AffineExpr, Attribute, Context, Ir, OpBuilder, OpId, OpSpec, Type, Value, DYNAMIC,
};
use ftuner_ukernel::contraction::{find_all, Contraction};
use ftuner_ukernel::schedule::workload_key;
use ftuner_ukernel::{DType, WorkloadKey};
use rustc_hash::FxHashMap;

pub use ftuner_ukernel::contraction::Role;

/// The size of one dim of a kernel argument.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgDim {
    Static(i64),
    /// Given at run time: the point's value.
    Dynamic,
    /// Given at run time, indexed by this expression of the contraction's loops (a
    /// convolution window): the extent that keeps every index in bounds.
    Window(AffineExpr),
}

/// One distinct kernel of a model.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub key: WorkloadKey,
    pub dtype: DType,
    /// `file:line:col` of its first occurrence.
    pub loc: String,
    /// How many ops of the model share this workload key.
    pub count: usize,
    /// A module with `func.func @kernel(...) -> result`: the contraction, its accumulator's
    /// fill and its epilogue's ops.
    pub module: String,
    /// Per argument of `@kernel`, each dim's size.
    pub args: Vec<Vec<ArgDim>>,
    /// The contraction's loops: role and static size (`DYNAMIC` when given at run time).
    pub loops: Vec<(Role, i64)>,
    /// Static size of each role's dims (product), `DYNAMIC` when one is dynamic.
    pub sizes: [(Role, i64); 4],
}

impl Kernel {
    /// The roles that are dynamic.
    pub fn dynamic_roles(&self) -> Vec<Role> {
        let mut v = vec![];
        for (r, s) in &self.loops {
            if *s == DYNAMIC && !v.contains(r) {
                v.push(*r);
            }
        }
        v
    }

    /// Concrete argument shapes when every dynamic dim takes `value`.
    pub fn shapes_at(&self, value: usize) -> Result<Vec<Vec<usize>>, String> {
        let last: Vec<i64> = self
            .loops
            .iter()
            .map(|(_, s)| if *s == DYNAMIC { value as i64 } else { *s } - 1)
            .collect();
        self.args
            .iter()
            .map(|a| {
                a.iter()
                    .map(|d| match d {
                        ArgDim::Static(s) => Ok(*s as usize),
                        ArgDim::Dynamic => Ok(value),
                        ArgDim::Window(e) => match e.eval(&last, &[]) {
                            Some(x) if x >= 0 => Ok(x as usize + 1),
                            _ => Err(format!(
                                "{}: a dynamic dim indexed by {} cannot be sized for measurement",
                                self.loc,
                                {
                                    let mut t = String::new();
                                    ftuner_ir::affine::write_expr(&mut t, e);
                                    t
                                }
                            )),
                        },
                    })
                    .collect()
            })
            .collect()
    }

    /// Multiply-adds at a point (every dynamic dim = `value`).
    pub fn macs_at(&self, value: usize) -> f64 {
        self.sizes
            .iter()
            .map(|(_, s)| {
                if *s == DYNAMIC {
                    value as f64
                } else {
                    *s as f64
                }
            })
            .product()
    }
}

fn roles(ir: &Ir, op: OpId) -> Option<(Vec<ftuner_ir::AffineMap>, Vec<Role>, Vec<i64>)> {
    let maps = ftuner_dialects::linalg::body::indexing_maps(ir, op)?;
    let (ins, outs) = ftuner_dialects::linalg::ins_outs(ir, op);
    let vals = [*ins.first()?, *ins.get(1)?, *outs.first()?];
    let role = ftuner_ukernel::contraction::loop_roles(&maps)?;
    let size = ftuner_ukernel::contraction::loop_sizes(ir, &maps, &vals)?;
    Some((maps, role, size))
}

/// The model's ops a kernel copies, in the order they stand in their block: the fill of
/// the accumulator (when C is one), the contraction, its epilogue chain.
fn kernel_ops(ir: &Ir, c: &Contraction) -> Vec<OpId> {
    let (_, outs) = ftuner_dialects::linalg::ins_outs(ir, c.op);
    let mut set: Vec<OpId> = vec![];
    if let Some(f) = outs
        .first()
        .and_then(|v| ir.defining_op(*v))
        .filter(|f| ir.name(*f) == ops::linalg::FillOp::NAME)
    {
        set.push(f);
    }
    set.push(c.op);
    set.extend(ftuner_ukernel::epilogue::epilogue_chain(ir, c.op));
    let Some(block) = ir.op(c.op).parent else {
        return vec![c.op];
    };
    let order: FxHashMap<OpId, usize> = ir
        .block_ops_vec(block)
        .into_iter()
        .enumerate()
        .map(|(i, o)| (o, i))
        .collect();
    set.retain(|o| order.contains_key(o));
    set.sort_by_key(|o| order[o]);
    set
}

/// The dynamic size operands of `tensor.expand_shape` `e`, each with the source dim whose
/// size it is (the expansion adds unit dims only: `epilogue_chain` checked it).
fn expand_sizes(ir: &Ir, e: OpId) -> Vec<(Value, i64)> {
    let stat = ir
        .attr(e, "static_output_shape")
        .and_then(|a| a.as_dense_i64s())
        .unwrap_or_default();
    let groups = ftuner_dialects::tensor::reassociation(ir, e).unwrap_or_default();
    let sizes = ir.operands(e)[1..].to_vec();
    let dyn_dims = stat
        .iter()
        .enumerate()
        .filter(|(_, s)| **s == DYNAMIC)
        .map(|(d, _)| d as i64);
    sizes
        .into_iter()
        .zip(dyn_dims)
        .map(|(v, d)| {
            let g = groups.iter().position(|g| g.contains(&d)).unwrap_or(0);
            (v, g as i64)
        })
        .collect()
}

/// `func.func @kernel(...)` around copies of `c` and the ops that go with it, printed as a
/// module, and each argument's dims.
fn standalone(
    ctx: &Context,
    ir: &mut Ir,
    c: &Contraction,
    maps: &[ftuner_ir::AffineMap],
    loop_sizes: &[i64],
) -> (String, Vec<Vec<ArgDim>>) {
    let kops = kernel_ops(ir, c);
    let (ins, outs) = ftuner_dialects::linalg::ins_outs(ir, c.op);
    let contraction_vals = [ins[0], ins[1], outs[0]];
    // The accumulator's fill writes into a tensor of C's shape.
    let fill_dest = kops
        .first()
        .filter(|f| ir.name(**f) == ops::linalg::FillOp::NAME)
        .map(|f| *ir.operands(*f).last().expect("fill has an init"));
    // Arguments: every operand not made by a copied op, nor a constant, nor an expand's
    // size (rebuilt from its source).
    let made: Vec<Value> = kops.iter().flat_map(|o| ir.results(*o).to_vec()).collect();
    let mut rebuilt: Vec<Value> = vec![];
    for o in &kops {
        if ir.name(*o) == ops::tensor::ExpandShapeOp::NAME {
            rebuilt.extend(expand_sizes(ir, *o).into_iter().map(|(v, _)| v));
        }
    }
    let mut args: Vec<Value> = vec![];
    for o in &kops {
        for v in ir.operands(*o).to_vec() {
            let constant = ir
                .defining_op(v)
                .is_some_and(|d| ir.name(d) == ops::arith::ConstantOp::NAME);
            if !made.contains(&v) && !constant && !rebuilt.contains(&v) && !args.contains(&v) {
                args.push(v);
            }
        }
    }
    let dims: Vec<Vec<ArgDim>> = args
        .iter()
        .map(|v| {
            let shape = ir.value_type(*v).shape().unwrap_or(&[]).to_vec();
            let role_map = contraction_vals
                .iter()
                .position(|x| x == v)
                .or_else(|| (Some(*v) == fill_dest).then_some(2))
                .map(|i| &maps[i]);
            shape
                .iter()
                .enumerate()
                .map(
                    |(i, s)| match (*s, role_map.and_then(|m| m.results.get(i))) {
                        (s, _) if s != DYNAMIC => ArgDim::Static(s),
                        (_, Some(AffineExpr::Dim(d)))
                            if loop_sizes.get(*d as usize) == Some(&DYNAMIC) =>
                        {
                            ArgDim::Dynamic
                        }
                        (_, Some(e)) if !matches!(e, AffineExpr::Dim(_)) => {
                            ArgDim::Window(e.clone())
                        }
                        _ => ArgDim::Dynamic,
                    },
                )
                .collect()
        })
        .collect();
    let weights: Vec<usize> = args
        .iter()
        .enumerate()
        .filter(|(_, v)| ftuner_ukernel::lower::derives_from_weights(ir, **v))
        .map(|(i, _)| i)
        .collect();
    let last = *kops.last().expect("the contraction");
    let result = ir.result(last, 0);
    let arg_types: Vec<Type> = args.iter().map(|v| ir.value_type(*v)).collect();
    let loc = ir.loc(c.op);
    let f = ir.create_op(
        OpSpec::new(intern_name(ops::func::FuncOp::NAME), loc)
            .attr("sym_name", Attribute::string("kernel"))
            .attr(
                "function_type",
                Attribute::type_attr(Type::function(
                    arg_types.clone(),
                    vec![ir.value_type(result)],
                )),
            )
            .regions(1),
    );
    let region = ir.regions_of(f)[0];
    let blk = ir.append_block(region, &arg_types);
    let mut map: FxHashMap<Value, Value> = FxHashMap::default();
    for (v, a) in args.iter().zip(ir.block_args(blk).to_vec()) {
        map.insert(*v, a);
    }
    for o in &kops {
        // Constants first, then an expand's sizes from its (copied) source.
        for v in ir.operands(*o).to_vec() {
            if let Some(d) = ir
                .defining_op(v)
                .filter(|d| ir.name(*d) == ops::arith::ConstantOp::NAME)
            {
                if !map.contains_key(&v) {
                    let cl = ir.clone_op(d, &mut map);
                    ir.append_op(blk, cl);
                }
            }
        }
        if ir.name(*o) == ops::tensor::ExpandShapeOp::NAME {
            let src = map[&ir.operand(*o, 0)];
            for (v, g) in expand_sizes(ir, *o) {
                let mut b = OpBuilder::at_end(ir, blk, loc);
                let gi = b.index(g);
                let d = b.value(ops::tensor::DimOp::NAME, vec![src, gi], Type::index(), &[]);
                map.insert(v, d);
            }
        }
        let cl = ir.clone_op(*o, &mut map);
        ir.append_op(blk, cl);
    }
    let ret = ir.create_op(
        OpSpec::new(intern_name(ops::func::ReturnOp::NAME), loc).operands(vec![map[&result]]),
    );
    ir.append_op(blk, ret);
    ftuner_transforms::outline_weights::mark_weights(ir, f, &weights);
    let text = ftuner_ir::print_op_standalone(ir, ctx, f, false);
    ir.erase_op(f);
    (format!("module {{\n{text}\n}}\n"), dims)
}

/// The passes a kernel's extraction and measurement run (ftuner-transforms' and
/// ftuner-ukernel's).
pub(crate) fn registry() -> ftuner_pass::PassRegistry {
    let mut reg = ftuner_pass::PassRegistry::default();
    ftuner_transforms::register_passes(&mut reg);
    ftuner_ukernel::register_passes(&mut reg);
    reg
}

/// Run what comes before `patch-ukernels` in ftuner's CPU pipeline on the module, so the
/// contractions are the ones `patch-ukernels` meets; weight arguments (`{ftuner.weight}`,
/// see [`mark_weights`]) are outlined into a preparation as they are when the model is
/// compiled.
pub fn prepare_model(ctx: &Context, ir: &mut Ir, top: OpId, target: &str) -> Result<(), String> {
    let reg = registry();
    let p = format!(
        "builtin.module({})",
        ftuner_transforms::pipelines::cpu_prepatch(target, false)
    );
    let mut pm = ftuner_pass::PassManager::from_pipeline(&reg, &p).map_err(|e| e.to_string())?;
    pm.run(ctx, ir, top).map_err(|e| {
        let d: Vec<String> = e.diagnostics.iter().map(|d| d.to_string()).collect();
        format!("{}\n{}", e.message, d.join(""))
    })
}

/// Mark arguments `spec` of the module's public functions as weights: `1..` (from the
/// second on), `2,5..7` (end exclusive), `..3`; indices past a function's arguments are
/// ignored.
pub fn mark_weights(ir: &mut Ir, top: OpId, spec: &str) -> Result<(), String> {
    let mut ranges: Vec<(usize, usize)> = vec![];
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let num = |t: &str| {
            t.trim()
                .parse::<usize>()
                .map_err(|_| format!("--weights '{spec}': '{t}' is not an argument index"))
        };
        ranges.push(match part.split_once("..") {
            Some((a, b)) => (
                if a.is_empty() { 0 } else { num(a)? },
                if b.is_empty() { usize::MAX } else { num(b)? },
            ),
            None => {
                let i = num(part)?;
                (i, i + 1)
            }
        });
    }
    let mut funcs = vec![];
    ir.walk_pre(top, &mut |o| {
        if ir.name(o) == ops::func::FuncOp::NAME
            && ir.attr(o, "sym_visibility").and_then(|a| a.as_str()) != Some("private")
        {
            funcs.push(o);
        }
    });
    for f in funcs {
        let n = ir
            .attr(f, "function_type")
            .and_then(|a| a.as_type())
            .map(|t| t.function_inputs().len())
            .unwrap_or(0);
        let idx: Vec<usize> = (0..n)
            .filter(|i| ranges.iter().any(|(a, b)| a <= i && i < b))
            .collect();
        ftuner_transforms::outline_weights::mark_weights(ir, f, &idx);
    }
    Ok(())
}

/// The distinct kernels (by workload key) of a module, in order of first occurrence.
pub fn extract(ctx: &Context, ir: &mut Ir, top: OpId, model: &HardwareModel) -> Vec<Kernel> {
    let mut out: Vec<Kernel> = vec![];
    for c in find_all(ir, top) {
        let key = workload_key(ir, &c, model);
        if let Some(k) = out.iter_mut().find(|k| k.key == key) {
            k.count += 1;
            continue;
        }
        let Some((maps, role, size)) = roles(ir, c.op) else {
            continue;
        };
        let prod = |r: Role| {
            let mut p = 1i64;
            for (d, rr) in role.iter().enumerate() {
                if *rr == r {
                    if size[d] == DYNAMIC {
                        return DYNAMIC;
                    }
                    p *= size[d];
                }
            }
            p
        };
        let (file, line, col) = ftuner_ir::diag::file_line_col(ir.loc(c.op)).unwrap_or(("?", 0, 0));
        let (module, args) = standalone(ctx, ir, &c, &maps, &size);
        out.push(Kernel {
            key,
            dtype: c.dtype,
            loc: format!("{file}:{line}:{col}"),
            count: 1,
            module,
            args,
            loops: role.iter().copied().zip(size.iter().copied()).collect(),
            sizes: [
                (Role::B, prod(Role::B)),
                (Role::M, prod(Role::M)),
                (Role::N, prod(Role::N)),
                (Role::K, prod(Role::K)),
            ],
        });
    }
    out
}

/// Parse and verify a module (errors are rendered diagnostics).
pub fn load(ctx: &Context, text: &str, file: &str) -> Result<ftuner_ir::ParsedModule, String> {
    let mut m = ftuner_ir::parse_module(ctx, text, file).map_err(|d| d.to_string())?;
    ftuner_dialects::after_parse(&mut m.ir, m.top);
    let errs = ftuner_ir::verify::verify(ctx, &m.ir, m.top);
    if let Some(d) = errs.first() {
        return Err(d.to_string());
    }
    Ok(m)
}
