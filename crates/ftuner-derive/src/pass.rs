//! The passes: `ollie-derive`, `convert-linalg-to-ta`, `convert-ta-to-linalg`.

use crate::convert::{from_linalg, is_zero_fill};
use crate::derive::{derive, price, Costs, Options, Target};
use crate::emit::{emit, Emitted};
use ftuner_dialects::ops;
use ftuner_dialects::ta;
use ftuner_ir::{intern_name, Attribute, Context, Diagnostic, Ir, OpId, OpSpec, Type, Value};
use ftuner_pass::options::OptionKind;
use ftuner_pass::{define_pass, PassContext, PassFailure};
use std::time::Duration;

/// Parse MLIR text `src` next to the IR and inline its function `@ollie` before `anchor`:
/// its parameters are `args`, its result replaces `anchor`'s result 0. The new ops take
/// `anchor`'s location.
pub fn inline_text(
    cx: &mut PassContext<'_>,
    anchor: OpId,
    src: &str,
    args: &[Value],
) -> Result<Value, String> {
    let m = ftuner_ir::parse_into(cx.ctx, cx.ir, src, "<ollie-derive>").map_err(|d| {
        format!(
            "internal error: emitted IR does not parse: {}\n{src}",
            d.message
        )
    })?;
    let ir: &mut Ir = cx.ir;
    let mut func = None;
    ir.walk_pre(m, &mut |o| {
        if ir.name(o) == ops::func::FuncOp::NAME && func.is_none() {
            func = Some(o);
        }
    });
    let func = func.ok_or("internal error: no function in the emitted IR")?;
    let body = ir
        .region_entry(ir.regions_of(func)[0])
        .ok_or("internal error: empty function")?;
    let params = ir.block_args(body).to_vec();
    if params.len() != args.len() {
        return Err("internal error: parameter count".into());
    }
    for (p, a) in params.iter().zip(args) {
        ir.replace_all_uses(*p, *a);
    }
    let loc = ir.loc(anchor);
    let ops = ir.block_ops_vec(body);
    let mut result = None;
    for o in ops {
        if ir.name(o) == ops::func::ReturnOp::NAME {
            result = ir.operands(o).first().copied();
            continue;
        }
        ir.unlink(o);
        ir.insert_before(anchor, o);
        let mut nested = vec![];
        ir.walk_pre(o, &mut |x| nested.push(x));
        for x in nested {
            ir.op_mut(x).loc = loc;
        }
    }
    ir.erase_op(m);
    result.ok_or_else(|| "internal error: no return value".to_string())
}

fn input_shapes(ir: &Ir, vals: &[Value]) -> Vec<Vec<Option<i64>>> {
    vals.iter()
        .map(|v| {
            ir.value_type(*v)
                .shape()
                .unwrap_or(&[])
                .iter()
                .map(|d| (*d != ftuner_ir::DYNAMIC).then_some(*d))
                .collect()
        })
        .collect()
}

/// Which of `vals` (values in the function holding `op`) are computed when the model is
/// loaded, not per call: outline-weight-preparation's own answer
/// ([`ftuner_transforms::outline_weights::load_time_values`]), so a transpose of such a
/// value costs nothing per call.
pub(crate) fn fixed_inputs(ctx: &Context, ir: &Ir, op: OpId, vals: &[Value]) -> Vec<bool> {
    let mut f = Some(op);
    while let Some(o) = f.filter(|o| ir.name(*o) != ops::func::FuncOp::NAME) {
        f = ir.parent_op(o);
    }
    let fixed = f.map(|f| ftuner_transforms::outline_weights::load_time_values(ctx, ir, f));
    vals.iter()
        .map(|v| fixed.as_ref().is_some_and(|s| s.contains(v)))
        .collect()
}

/// The size dynamic dims take in the numeric checks (and in the verification, unless its
/// budget asks for less).
const DYNAMIC_EXTENT: usize = 3;

/// `sh` with each dynamic dim `dynamic`.
fn concrete_shapes(sh: &[Vec<Option<i64>>], dynamic: usize) -> Vec<Vec<usize>> {
    sh.iter()
        .map(|s| {
            s.iter()
                .map(|d| d.map_or(dynamic, |d| d.max(0) as usize))
                .collect()
        })
        .collect()
}

impl OllieDerivePass {
    /// Interpret the inlined replacement (a standalone copy) and compare it with the
    /// original expression on random inputs.
    #[allow(clippy::too_many_arguments)]
    fn verify(
        cx: &mut PassContext<'_>,
        text: &str,
        scope: &ta::Scope,
        shapes: &[Vec<usize>],
        init_shape: &[usize],
        operand_shapes: &[Vec<usize>],
        add_init: bool,
    ) -> Result<(), String> {
        let m = ftuner_ir::parse_module(cx.ctx, text, "<ollie-derive verify>")
            .map_err(|d| d.message)?;
        let mut rng = crate::check::Rng::new(7);
        let elem = Type::f32();
        let mk = |sh: &[usize], rng: &mut crate::check::Rng| {
            let n = sh.iter().product();
            ftuner_interp::Tensor::from_f64(sh.to_vec(), elem, (0..n).map(|_| rng.unit()).collect())
        };
        let ins: Vec<ftuner_interp::Tensor> = shapes.iter().map(|s| mk(s, &mut rng)).collect();
        let init = mk(init_shape, &mut rng);
        let rt =
            |t: &ftuner_interp::Tensor| ftuner_interp::RtVal::Tensor(std::rc::Rc::new(t.clone()));
        let mut args: Vec<ftuner_interp::RtVal> = ins.iter().map(rt).collect();
        args.push(rt(&init));
        // The op's operands only size dynamic dims.
        for s in operand_shapes {
            args.push(rt(&mk(s, &mut rng)));
        }
        let out = ftuner_interp::run(cx.ctx, &m.ir, m.top, "ollie", args)
            .map_err(|e| format!("the interpreter failed on the derived IR: {}", e.message))?;
        let got = out
            .first()
            .and_then(|v| v.tensor())
            .ok_or("the derived IR returned no tensor")?;
        let numbers: Vec<Vec<f64>> = ins.iter().map(|t| t.to_f64()).collect();
        let inputs = ta::expr::Inputs {
            shapes: shapes.to_vec(),
            data: numbers.iter().map(|d| d.as_slice()).collect(),
        };
        let (_, want) = ta::expr::evaluate(scope, &inputs)?;
        if got.data.len() != want.len() {
            return Err(format!(
                "the derived IR returned {} elements, the expression has {}",
                got.data.len(),
                want.len()
            ));
        }
        for (i, (g, w)) in got.to_f64().into_iter().zip(&want).enumerate() {
            let w = if add_init { w + init.data[i].f() } else { *w };
            if (g - w).abs() > 1e-3 * (1.0 + w.abs()) {
                return Err(format!("element {i}: derived {g}, original {w}"));
            }
        }
        Ok(())
    }

    /// The costs of the hardware model and the pass's options.
    fn setup(
        &self,
        cx: &mut PassContext<'_>,
        top: OpId,
        o: &OllieDeriveOptions,
    ) -> Result<Setup, PassFailure> {
        let model = ftuner_ukernel::target_model(cx, top, &o.hw_target)?;
        let costs = Costs::from_model(&model);
        let opts = Options {
            iter_limit: o.depth.max(1) as usize,
            node_limit: o.node_limit.max(16) as usize,
            time_limit: Duration::from_secs_f64(o.time_limit.clamp(0.001, 3600.0)),
            target: match o.target.as_str() {
                "matmul" => Target::Matmul,
                "dense-conv" => Target::DenseConv,
                _ => Target::Auto,
            },
            guided: o.guided,
            split_expressions: o.split_expressions,
        };
        let verify = o.verify;
        Ok(Setup {
            costs,
            opts,
            verify,
            weights_as_rows: o.weights_as_rows,
            verify_budget: if o.verify_budget.is_nan() {
                0.0
            } else {
                o.verify_budget.max(0.0)
            },
        })
    }

    /// Derive `op`'s expression; when a cheaper form passes the numeric check and is
    /// emitted (and verified, if asked), replace the op by it.
    fn derive_op(
        &mut self,
        cx: &mut PassContext<'_>,
        op: OpId,
        c: Candidate,
        su: &Setup,
    ) -> Result<(), PassFailure> {
        let shapes = input_shapes(cx.ir, &c.inputs);
        let Some(best) = self.cheaper_form(cx, op, &c, &shapes, su) else {
            return Ok(());
        };
        let add_init = c.init.is_some_and(|v| !is_zero_fill(cx.ir, v));
        let in_tys: Vec<Type> = c.inputs.iter().map(|v| cx.ir.value_type(*v)).collect();
        let op_tys: Vec<Type> = c.operands.iter().map(|v| cx.ir.value_type(*v)).collect();
        let rty = cx.ir.value_type(cx.ir.result(op, 0));
        let fixed = if su.weights_as_rows {
            fixed_inputs(cx.ctx, cx.ir, op, &c.inputs)
        } else {
            vec![false; c.inputs.len()]
        };
        let em = match emit(&best, &in_tys, &fixed, &op_tys, rty, add_init, &su.costs) {
            Ok(e) => e,
            Err(e) => {
                cx.emit(Diagnostic::remark(
                    cx.ir.loc(op),
                    format!("ollie-derive: kept: the derived form cannot be emitted: {e}"),
                ));
                self.kept += 1;
                return Ok(());
            }
        };
        if su.opts.target == Target::Matmul && em.matmuls == 0 {
            cx.emit(Diagnostic::remark(
                cx.ir.loc(op),
                "ollie-derive: kept: target=matmul and the derived form has no matmul",
            ));
            self.kept += 1;
            return Ok(());
        }
        if su.verify {
            let sizes = |dynamic: usize| {
                let ishape = concrete_type_shape(rty, dynamic);
                let oshapes: Vec<Vec<usize>> = op_tys
                    .iter()
                    .map(|t| concrete_type_shape(*t, dynamic))
                    .collect();
                (concrete_shapes(&shapes, dynamic), ishape, oshapes)
            };
            let work = |dynamic: usize| {
                let (cshapes, ishape, oshapes) = sizes(dynamic);
                let mut others = oshapes;
                others.push(ishape.clone());
                others.push(ishape); // the result
                crate::check::verify_work(&c.scope, &best, &cshapes, &others)
            };
            let Some(dynamic) =
                self.verify_sizes(cx, op, &shapes, &in_tys, &op_tys, rty, su, &work)
            else {
                return self.replace(cx, op, &c, rty, &em);
            };
            let (cshapes, ishape, oshapes) = sizes(dynamic);
            if let Err(e) = Self::verify(
                cx, &em.text, &c.scope, &cshapes, &ishape, &oshapes, add_init,
            ) {
                cx.emit(Diagnostic::warning(
                    cx.ir.loc(op),
                    format!("ollie-derive{{verify=true}}: the rewritten IR failed on the interpreter and was dropped: {e}"),
                ));
                self.rejected += 1;
                return Ok(());
            }
        }
        self.replace(cx, op, &c, rty, &em)
    }

    /// The size of dynamic dims at which the verification of a derivation stays within
    /// `verify-budget`, its work estimated from the loop bounds before anything runs
    /// ([`crate::check::verify_work`]): the usual 3, else the largest smaller size that
    /// fits (only when some dim is dynamic), else `None`: the derivation is kept
    /// unverified (it passed the sampled numeric check). Either outcome other than the
    /// usual one is a remark at the op.
    #[allow(clippy::too_many_arguments)]
    fn verify_sizes(
        &mut self,
        cx: &mut PassContext<'_>,
        op: OpId,
        shapes: &[Vec<Option<i64>>],
        in_tys: &[Type],
        op_tys: &[Type],
        rty: Type,
        su: &Setup,
        work: &dyn Fn(usize) -> f64,
    ) -> Option<usize> {
        let budget = su.verify_budget;
        let full = work(DYNAMIC_EXTENT);
        if full <= budget {
            return Some(DYNAMIC_EXTENT);
        }
        let dynamic = shapes.iter().flatten().any(|d| d.is_none())
            || in_tys
                .iter()
                .chain(op_tys)
                .chain([&rty])
                .any(|t| t.shape().is_some_and(|s| s.contains(&ftuner_ir::DYNAMIC)));
        let reduced = if dynamic {
            (1..DYNAMIC_EXTENT).rev().find(|d| work(*d) <= budget)
        } else {
            None
        };
        match reduced {
            Some(d) => {
                cx.emit(Diagnostic::remark(
                    cx.ir.loc(op),
                    format!(
                        "ollie-derive: derivation verified with its dynamic dims {d} instead of {DYNAMIC_EXTENT}: at {DYNAMIC_EXTENT} the check would take {full:.3e} operations, over the budget {budget:.3e} (verify-budget=... raises it)"
                    ),
                ));
                self.reduced += 1;
                Some(d)
            }
            None => {
                cx.emit(Diagnostic::remark(
                    cx.ir.loc(op),
                    format!(
                        "ollie-derive: derivation not verified: the check would take {:.3e} operations{}, over the budget {budget:.3e} (verify-budget=... raises it); it passed the sampled numeric check",
                        if dynamic { work(1) } else { full },
                        if dynamic { " even with its dynamic dims 1" } else { "" }
                    ),
                ));
                self.unverified += 1;
                None
            }
        }
    }

    /// The cheapest derived form of `c` when it beats the op as it stands (or the target
    /// asks for a matched form) and agrees numerically with the original; the statistics
    /// count what was kept or rejected.
    fn cheaper_form(
        &mut self,
        cx: &mut PassContext<'_>,
        op: OpId,
        c: &Candidate,
        shapes: &[Vec<Option<i64>>],
        su: &Setup,
    ) -> Option<ta::Scope> {
        let (costs, opts) = (&su.costs, &su.opts);
        let op_shapes = input_shapes(cx.ir, &c.operands);
        let out = derive(&c.scope, shapes, costs, opts);
        self.time_us += out.elapsed.as_micros() as u64;
        self.max_nodes = self.max_nodes.max(out.nodes as u64);
        // The op as it stands (before fusing its padding) is what a derivation beats; one
        // reading a zero-inserted image does the zeros' work, which a derivation skips.
        let op_costs = Costs {
            flat_dense_convs: !reads_zero_insertion(&c.scope),
            ..costs.clone()
        };
        let as_is = out
            .original_cost
            .min(price(&c.unfused, &op_shapes, &op_costs, opts.target));
        tracing::info!(
            op = cx.ir.name(op),
            stop = %out.stop_reason,
            nodes = out.nodes,
            ms = out.elapsed.as_secs_f64() * 1e3,
            "derived {} (cost {:.3e} s, as is {:.3e} s)",
            out.best,
            out.best_cost,
            as_is
        );
        let better = out.best_cost < as_is * 0.95
            || (opts.target == Target::Matmul && out.best_cost.is_finite());
        if !better || out.best == c.unfused {
            self.kept += 1;
            // Said at a named contraction (a linalg.generic that is a contraction is said
            // in the statistics only: models hold many).
            if cx.ir.name(op) != ops::linalg::GenericOp::NAME {
                let why = if out.best == c.unfused {
                    "no derivation found a form other than the op's own".to_string()
                } else {
                    format!(
                        "the cheapest derived form ({:.3e} s by the cost model) is not 5% cheaper than the op as it is ({:.3e} s)",
                        out.best_cost, as_is
                    )
                };
                cx.emit(Diagnostic::remark(
                    cx.ir.loc(op),
                    format!("ollie-derive: kept: {why}"),
                ));
            }
            return None;
        }
        // Numeric check of the expressions (always).
        let cshapes = concrete_shapes(shapes, DYNAMIC_EXTENT);
        if let Err(e) = crate::check::equivalent(&c.scope, &out.best, &cshapes, 64, 1) {
            cx.emit(Diagnostic::warning(
                cx.ir.loc(op),
                format!("ollie-derive: a derivation failed the numeric check and was dropped: {e}"),
            ));
            self.rejected += 1;
            return None;
        }
        Some(out.best)
    }

    /// Replace `op` by the emitted function, inlined on the expression's inputs, the
    /// init (a `tensor.empty` for a static `ta.expr`) and the op's operands.
    fn replace(
        &mut self,
        cx: &mut PassContext<'_>,
        op: OpId,
        c: &Candidate,
        rty: Type,
        em: &Emitted,
    ) -> Result<(), PassFailure> {
        let mut args = c.inputs.clone();
        // The init (or, for a ta.expr, a placeholder of the result type).
        let init_v = match c.init {
            Some(v) => v,
            None if rty.shape().is_some_and(|s| s.contains(&ftuner_ir::DYNAMIC)) => {
                // A dynamic ta.expr has no init to size its result by.
                self.kept += 1;
                return Ok(());
            }
            None => {
                let e = cx.ir.create_op(
                    OpSpec::new(intern_name(ops::tensor::EmptyOp::NAME), cx.ir.loc(op))
                        .results([rty]),
                );
                cx.ir.insert_before(op, e);
                cx.ir.result(e, 0)
            }
        };
        args.push(init_v);
        args.extend(c.operands.iter().copied());
        match inline_text(cx, op, &em.text, &args) {
            Ok(v) => {
                let r = cx.ir.result(op, 0);
                cx.ir.replace_all_uses(r, v);
                cx.ir.erase_op(op);
                self.derived += 1;
                self.matmuls += em.matmuls as u64;
                self.g2bmms += em.g2bmms as u64;
                self.convs += em.convs as u64;
                self.eops += em.eops as u64;
                Ok(())
            }
            Err(e) => {
                cx.emit(Diagnostic::error(cx.ir.loc(op), e));
                Err(PassFailure)
            }
        }
    }
}

/// A candidate op's expression and what it reads: the scope (its zero padding fused),
/// its inputs, the op's init (none for a `ta.expr`), the scope before fusion, and the
/// op's own operands (what its bounds refer to).
struct Candidate {
    scope: ta::Scope,
    inputs: Vec<Value>,
    init: Option<Value>,
    unfused: ta::Scope,
    operands: Vec<Value>,
}

/// Whether `s` reads an input at an exact division (`(h - 2) / 2`: zero padding fused
/// from a strided `tensor.insert_slice`, as transposed convolutions are exported).
fn reads_zero_insertion(s: &ta::Scope) -> bool {
    fn has_div(i: &ta::expr::Idx) -> bool {
        i.terms.iter().any(|(a, _)| match a {
            ta::expr::Atom::Div(..) => true,
            ta::expr::Atom::FloorDiv(e, _) | ta::expr::Atom::Mod(e, _) => has_div(e),
            ta::expr::Atom::Var(_) => false,
        })
    }
    s.body
        .accesses()
        .iter()
        .any(|(_, idx)| idx.iter().any(has_div))
}

/// The ops `ollie-derive` tries (contractions and `ta.expr`s), in walk order.
fn candidates(ir: &Ir, top: OpId) -> Vec<OpId> {
    let mut cands = vec![];
    ir.walk_pre(top, &mut |o| {
        if matches!(
            ir.name(o),
            ops::linalg::Conv2dNchwFchwOp::NAME
                | ops::linalg::Conv2dNhwcHwcfOp::NAME
                | ops::linalg::MatmulOp::NAME
                | ops::linalg::BatchMatmulOp::NAME
                | ops::linalg::GenericOp::NAME
                | ops::ta::ExprOp::NAME
        ) {
            cands.push(o);
        }
    });
    cands
}

/// The convolutions and poolings the pass does not read (depthwise, grouped, 1-d and
/// other layouts; poolings are no contractions): each gets a remark saying so.
fn unread_windows(ir: &Ir, top: OpId) -> Vec<OpId> {
    use ops::linalg as l;
    let names = [
        l::Conv1dNwcWcfOp::NAME,
        l::Conv1dNcwFcwOp::NAME,
        l::Conv2dNhwcFhwcOp::NAME,
        l::Conv2dNgchwFgchwOp::NAME,
        l::Conv2dNgchwGfchwOp::NAME,
        l::DepthwiseConv2dNhwcHwcOp::NAME,
        l::DepthwiseConv2dNchwChwOp::NAME,
        l::PoolingNchwMaxOp::NAME,
        l::PoolingNchwSumOp::NAME,
        l::PoolingNhwcMaxOp::NAME,
        l::PoolingNhwcMinOp::NAME,
        l::PoolingNhwcSumOp::NAME,
    ];
    let mut out = vec![];
    ir.walk_pre(top, &mut |o| {
        if names.contains(&ir.name(o)) {
            out.push(o);
        }
    });
    out
}

/// The expression of candidate `op`, or why it has none.
fn candidate(ir: &Ir, op: OpId) -> Result<Candidate, String> {
    if ir.name(op) == ops::ta::ExprOp::NAME {
        let s = ta::scope_of(ir, op).ok_or("its expression attribute does not parse")?;
        let ins = ir.operands(op).to_vec();
        Ok(Candidate {
            scope: s.clone(),
            inputs: ins.clone(),
            init: None,
            unfused: s,
            operands: ins,
        })
    } else {
        let f = from_linalg(ir, op)?;
        Ok(Candidate {
            scope: f.scope,
            inputs: f.inputs,
            init: Some(f.init),
            unfused: f.unfused,
            operands: f.operands,
        })
    }
}

/// The shape of `t` with each dynamic dim `dynamic` (what the verification runs on).
fn concrete_type_shape(t: Type, dynamic: usize) -> Vec<usize> {
    t.shape()
        .unwrap_or(&[])
        .iter()
        .map(|d| {
            if *d == ftuner_ir::DYNAMIC {
                dynamic
            } else {
                (*d).max(0) as usize
            }
        })
        .collect()
}

/// What every derivation of a run shares: the costs, the derivation options, whether to
/// verify rewrites on the interpreter, and the work one verification may take.
struct Setup {
    costs: Costs,
    opts: Options,
    verify: bool,
    verify_budget: f64,
    weights_as_rows: bool,
}

define_pass! {
    /// `ollie-derive`: OLLIE's derivations of contractions, by equality saturation.
    pub struct OllieDerivePass {
        argument: "ollie-derive",
        name: "OllieDerive",
        summary: "Derive contractions as tensor-algebra expressions (OLLIE) and rewrite them to matched operators plus eOperators when cheaper",
        description: "Each contraction (conv_2d, matmul, batch_matmul, mul-add linalg.generic, banded products included) and each ta.expr is read as a tensor-algebra expression and derived by equality saturation (egg) with summation splitting, variable and division substitution, boundary tightening, traversal shifts, unit summations and traversal splitting and merging, under the depth / node-limit / time-limit options. The cheapest equivalent form under the hardware model is extracted; when it beats the original (or target=matmul / dense-conv asks for such forms) and agrees numerically with the original on random inputs, the op is replaced by matched operators (linalg.matmul / batch_matmul, G2BMMs as sliding-chunk batch_matmuls, dense linalg.conv_2d_nchw_fchw) and ta.expr eOperators. Dynamic dims only where they are traversal iterators read plainly (a batch).",
        options: OllieDeriveOptions {
            "depth" => depth: u64 = "8",
                "Most equality-saturation iterations per expression";
            "node-limit" => node_limit: u64 = "20000",
                "Most e-nodes per expression's e-graph";
            "time-limit" => time_limit: f64 = "5",
                "Most seconds of saturation per expression";
            "target" => target: String = "auto"
                as OptionKind::Enum(&["auto", "matmul", "dense-conv"]),
                "auto: keep the form the hardware model prices cheapest (a conv may stay an implicit-GEMM conv); matmul: derive contractions to matmul / batch_matmul plus eOperators; dense-conv: derive strided and dilated convs to dense convs (through reshapes), matmuls and eOperators";
            "guided" => guided: bool = "false",
                "Guided derivation: split summations only along the iterator table (toward a contraction) instead of every way, for a smaller e-graph";
            "split-expressions" => split_expressions: bool = "false",
                "Also split compound accesses into gather eOperators (im2col forms); a larger e-graph";
            "weights-as-rows" => weights_as_rows: bool = "true",
                "A matmul whose rows would come from an image's width (a derived transposed conv: NCHW input times weights) takes its rows from the weights instead, when they are fixed at load time (derived from {ftuner.weight} arguments and constants): the image is read as a channels x positions matrix and the result lies along the width for the col2im eOperators after it. convert-ta-to-linalg, lowering ta.expr ops of its input, always does so";
            "verify" => verify: bool = "false",
                "Also run the rewritten IR on the reference interpreter against the original expression (random inputs) before keeping it";
            "verify-budget" => verify_budget: f64 = "2e8",
                "Most work one verification may take, in iteration points (the loop domains of the original expression and of the derived operators, plus the random inputs' elements), estimated from the bounds before it runs; over it, dynamic dims are verified smaller (2, 1 instead of 3), or the derivation is kept unverified with a remark at the op; inf: no limit";
            "hw-target" => hw_target: String = "",
                "Hardware model for the costs (host, a built-in name, a .toml file); empty: the module's ftuner.target or host";
        },
        statistics: {
            derived: "num-derived" => "Ops rewritten by a derivation",
            matmuls: "num-matched-matmuls" => "Matched operators emitted (matmul / batch_matmul)",
            g2bmms: "num-matched-g2bmms" => "Banded matmuls matched as G2BMM (sliding-chunk batch_matmuls, counted in num-matched-matmuls too)",
            convs: "num-matched-convs" => "Dense convs emitted in derived programs (linalg.conv_2d_nchw_fchw on a gathered image)",
            eops: "num-eoperators" => "eOperators emitted (ta.expr)",
            kept: "num-kept" => "Ops left as they are (kept by the cost model, or not an expression the pass reads)",
            rejected: "num-rejected" => "Derivations dropped by the numeric check",
            reduced: "num-verified-reduced" => "Derivations verified with smaller dynamic dims to stay within verify-budget",
            unverified: "num-unverified" => "Derivations kept without the interpreter check (over verify-budget even at the smallest sizes)",
            max_nodes: "max-egraph-nodes" => "Largest e-graph (nodes)",
            time_us: "derivation-time-us" => "Time spent deriving (microseconds)",
        },
    }
}

impl OllieDerivePass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        top: OpId,
        o: &OllieDeriveOptions,
    ) -> Result<(), PassFailure> {
        let su = self.setup(cx, top, o)?;
        for op in unread_windows(cx.ir, top) {
            let name = cx.ir.name(op);
            cx.emit(Diagnostic::remark(
                cx.ir.loc(op),
                format!("ollie-derive: not derived: '{name}' is not among the ops it reads (linalg.conv_2d_nchw_fchw and conv_2d_nhwc_hwcf, matmul, batch_matmul, mul-add linalg.generic, ta.expr)"),
            ));
            self.kept += 1;
        }
        for op in candidates(cx.ir, top) {
            match candidate(cx.ir, op) {
                Ok(c) => self.derive_op(cx, op, c, &su)?,
                // A named contraction the pass cannot read says why; a linalg.generic
                // that is no mul-add contraction (most are elementwise) is not one to try.
                Err(e) if cx.ir.name(op) != ops::linalg::GenericOp::NAME => {
                    cx.emit(Diagnostic::remark(
                        cx.ir.loc(op),
                        format!("ollie-derive: not derived: {e}"),
                    ));
                    self.kept += 1;
                }
                Err(_) => {}
            }
        }
        Ok(())
    }
}

define_pass! {
    /// `convert-linalg-to-ta`: contractions as `ta.expr` (plus the init when it is not zero).
    pub struct ConvertLinalgToTaPass {
        argument: "convert-linalg-to-ta",
        name: "ConvertLinalgToTa",
        summary: "Write contractions (conv_2d, matmul, batch_matmul, mul-add linalg.generic) as ta.expr tensor-algebra expressions",
        description: "Each two-input mul-add contraction becomes `ta.expr L<parallel loops> Sum<reduction loops> { A[...] * B[...] }`; a non-zero init is added back by an elementwise linalg.generic. Loop extents are static or dims of an input.",
        options: ConvertLinalgToTaOptions {
        },
        statistics: {
            converted: "num-converted" => "Contractions written as ta.expr",
        },
    }
}

impl ConvertLinalgToTaPass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        top: OpId,
        _: &ConvertLinalgToTaOptions,
    ) -> Result<(), PassFailure> {
        let mut cands = vec![];
        cx.ir.walk_pre(top, &mut |o| {
            if cx.ir.name(o).starts_with("linalg.") {
                cands.push(o);
            }
        });
        for op in cands {
            let Ok(f) = from_linalg(cx.ir, op) else {
                continue;
            };
            let rty = cx.ir.value_type(cx.ir.result(op, 0));
            let e = cx.ir.create_op(
                OpSpec::new(intern_name(ops::ta::ExprOp::NAME), cx.ir.loc(op))
                    .operands(f.inputs.clone())
                    .results([rty])
                    .attr("expr", ta::expr_attr(&f.scope)),
            );
            cx.ir.insert_before(op, e);
            let mut v = cx.ir.result(e, 0);
            if !is_zero_fill(cx.ir, f.init) {
                let rank = rty.rank().unwrap_or(0);
                let elem = rty.element_type();
                let id = Attribute::affine_map(ftuner_ir::AffineMap::projection(
                    rank as u32,
                    &(0..rank as u32).collect::<Vec<_>>(),
                ));
                let par = Attribute::dialect("linalg", "iterator_type<parallel>");
                let g = cx.ir.create_op(
                    OpSpec::new(intern_name(ops::linalg::GenericOp::NAME), cx.ir.loc(op))
                        .operands([v, f.init, f.init])
                        .results([rty])
                        .prop("indexing_maps", Attribute::array(vec![id, id, id]))
                        .prop("iterator_types", Attribute::array(vec![par; rank]))
                        .prop("operandSegmentSizes", Attribute::dense_i32_array(&[2, 1]))
                        .regions(1),
                );
                cx.ir.insert_before(op, g);
                let r = cx.ir.regions_of(g)[0];
                let b = cx.ir.append_block(r, &[elem, elem, elem]);
                let args = cx.ir.block_args(b).to_vec();
                let add = cx.ir.create_op(
                    OpSpec::new(intern_name(ops::arith::AddfOp::NAME), cx.ir.loc(op))
                        .operands([args[0], args[1]])
                        .results([elem]),
                );
                cx.ir.append_op(b, add);
                let s = cx.ir.result(add, 0);
                let y = cx.ir.create_op(
                    OpSpec::new(intern_name(ops::linalg::YieldOp::NAME), cx.ir.loc(op))
                        .operands([s]),
                );
                cx.ir.append_op(b, y);
                v = cx.ir.result(g, 0);
            }
            let r = cx.ir.result(op, 0);
            cx.ir.replace_all_uses(r, v);
            cx.ir.erase_op(op);
            self.converted += 1;
        }
        Ok(())
    }
}

pub use crate::lower::ConvertTaToLinalgPass;

#[cfg(test)]
mod tests {
    use super::reads_zero_insertion;
    use ftuner_dialects::ta::expr::{parse_scope, positional};

    #[test]
    fn zero_insertion_is_an_exact_division_in_an_access() {
        let read = |text: &str| reads_zero_insertion(&parse_scope(text, &positional).unwrap());
        assert!(read(
            "L<f:0:4, y:0:6> Sum<c:0:3, r:0:4> { $0[c, (y + r - 2) / 2] * $1[f, c, r] }"
        ));
        assert!(!read(
            "L<f:0:4, y:0:6> Sum<c:0:3, r:0:4> { $0[c, y + r - 1] * $1[f, c, r] }"
        ));
        assert!(!read(
            "L<f:0:4, y:0:6> Sum<c:0:3, r:0:4> { $0[c, (y + r) floordiv 2] * $1[f, c, r] }"
        ));
    }
}
