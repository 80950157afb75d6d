//! `fold-scale-into-conv`: the per-channel affine part of a convolution's elementwise
//! consumer folded into its filter, as inference compilers fold BatchNorm (ONNX Runtime's
//! Conv-BN fusion, TVM's FoldScaleAxis).
//!
//! torch.export'ed CNNs leave BatchNorm in inference form after each conv, and
//! `linalg-fuse-elementwise-ops` makes it one consumer with the activation:
//!
//! ```mlir
//! %c = linalg.conv_2d_nchw_fchw ins(%x, %w) outs(%zero_filled)
//! %y = linalg.generic ins(%c, %mean, %rstd, %gamma, %beta ...) {
//!   %0 = arith.subf %in, %m      // (c - mean) * rstd * gamma + beta, per output channel
//!   %1 = arith.mulf %0, %r
//!   %2 = arith.mulf %1, %g
//!   %3 = arith.addf %2, %b
//!   ... relu / relu6 / a residual add on %3
//! ```
//!
//! Every conv output then costs four more vector ops in the tile's epilogue — as many as
//! a third of a depthwise conv's own nine FMAs. The chain that starts at the conv's value
//! and combines it only with per-channel values known when the weights are (`addf`,
//! `subf`, `mulf`, `divf`, `negf` with a prepared value or a constant) is `c * alpha +
//! beta`; since the conv sums into a zero fill, `conv(x, w) * alpha[f] = conv(x, w *
//! alpha[f])`. The pass computes `alpha` and `beta` per channel (one `linalg.generic`),
//! scales the filter's output-channel rows by `alpha` (another), and leaves the consumer
//! `conv(x, w * alpha) + beta` followed by the rest of its body; the inputs it no longer
//! reads go. Everything it builds derives from weights only: run before
//! `outline-weight-preparation`, which moves it into the prepare function (once per
//! loaded model, not per call).
//!
//! Convs: `linalg.conv_2d_nchw_fchw` (the filter's dim 0 is the output channel) and
//! `linalg.depthwise_conv_2d_nchw_chw` (dim 0 is the channel), on floats, whose init is a
//! fill of zero, at a function's top level, whose filter is known at preparation
//! ([`func_attrs::known_at_preparation`]) and whose one use is a consumer a per-channel
//! loop can take (`nchw_consumer`); f32 and f64 (in f16 or bf16 the scaled filter would
//! round in the narrow type). Rounding: `c * (r * g) + (b - m * r * g)` instead of
//! `(c - m) * r * g + b`, what ONNX Runtime computes after its fusion; a scale that is
//! not finite (a division by a zero channel value) can turn an infinite output into NaN.

use crate::nchw_consumer::{consumer, Consumer, Input};
use crate::tensor_build::{filled, generic_op};
use ftuner_dialects::linalg::body::indexing_maps;
use ftuner_dialects::linalg::ins_outs;
use ftuner_dialects::util::{const_value, rebuild_op, Const};
use ftuner_dialects::{func_attrs, ops};
use ftuner_ir::{AffineExpr, AffineMap, Attribute, BlockId, Ir, OpBuilder, OpId, Type, Value};
use ftuner_pass::{define_pass, PassContext, PassFailure};

/// How one step of the chain combines the running value `v` with a per-channel `p`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Step {
    /// `v + p` (either order).
    Add,
    /// `v - p`.
    Sub,
    /// `p - v`.
    SubFrom,
    /// `v * p` (either order).
    Mul,
    /// `v / p`.
    Div,
    /// `-v`.
    Neg,
}

/// A step's per-channel operand.
#[derive(Clone, Copy, Debug)]
enum Operand {
    /// The block argument of the consumer's input `i` (read per channel).
    Input(usize),
    /// A float constant.
    Const(f64),
}

/// A fold found: the conv, its filter, its consumer and the chain of body ops.
struct Fold {
    conv: OpId,
    filter: Value,
    cons: Consumer,
    /// The consumer's input that is the conv's result.
    producer: usize,
    chain: Vec<(OpId, Step, Option<Operand>)>,
}

/// The value of `v` when an `arith.constant` float scalar defines it.
fn float_const(ir: &Ir, v: Value) -> Option<f64> {
    let o = ir
        .defining_op(v)
        .filter(|o| ir.name(*o) == ops::arith::ConstantOp::NAME)?;
    match const_value(ir.attr(o, "value")?)? {
        (Const::Float(x), t) if !t.is_shaped() => Some(x),
        _ => None,
    }
}

/// `p` as a step's per-channel operand: the argument of an input read per channel and
/// known at preparation, or a float constant.
fn channel_operand(ir: &Ir, cons: &Consumer, body: BlockId, p: Value) -> Option<Operand> {
    if let Some(x) = float_const(ir, p) {
        return Some(Operand::Const(x));
    }
    let i = ir.block_args(body).iter().position(|a| *a == p)?;
    match cons.ins.get(i)? {
        Input::Channel(t, _) if func_attrs::known_at_preparation(ir, *t) => Some(Operand::Input(i)),
        _ => None,
    }
}

/// The step `op` takes on the running value `v`, when it is affine in `v` with a
/// per-channel operand.
fn step_of(
    ir: &Ir,
    cons: &Consumer,
    body: BlockId,
    op: OpId,
    v: Value,
) -> Option<(Step, Option<Operand>)> {
    use ops::arith::{AddfOp, DivfOp, MulfOp, NegfOp, SubfOp};
    let name = ir.name(op);
    let xs = ir.operands(op);
    if ir.results(op).len() != 1 || ir.value_type(ir.result(op, 0)) != ir.value_type(v) {
        return None;
    }
    if name == NegfOp::NAME {
        return (xs == [v]).then_some((Step::Neg, None));
    }
    let &[x, y] = xs else {
        return None;
    };
    let (first, p) = match (x == v, y == v) {
        (true, false) => (true, y),
        (false, true) => (false, x),
        _ => return None,
    };
    let step = match (name, first) {
        (n, _) if n == AddfOp::NAME => Step::Add,
        (n, _) if n == MulfOp::NAME => Step::Mul,
        (n, true) if n == SubfOp::NAME => Step::Sub,
        (n, false) if n == SubfOp::NAME => Step::SubFrom,
        (n, true) if n == DivfOp::NAME => Step::Div,
        _ => return None,
    };
    Some((step, Some(channel_operand(ir, cons, body, p)?)))
}

/// The fold of `conv`, when it has one (see the module's doc).
fn find(ir: &Ir, conv: OpId) -> Option<Fold> {
    let name = ir.name(conv);
    if name != ops::linalg::Conv2dNchwFchwOp::NAME
        && name != ops::linalg::DepthwiseConv2dNchwChwOp::NAME
    {
        return None;
    }
    let (ins, outs) = ins_outs(ir, conv);
    let (&[_, filter], &[init]) = (ins.as_slice(), outs.as_slice()) else {
        return None;
    };
    let (_, z, _) = filled(ir, init)?;
    let wty = ir.value_type(filter);
    let elem = wty.element_type();
    // At a function's top level only: outline-weight-preparation hoists from there (in a
    // loop the scaling would run on every iteration).
    let top = ir
        .parent_block(conv)
        .and_then(|blk| ir.block_parent_op(blk))
        .is_some_and(|f| ir.name(f) == ops::func::FuncOp::NAME);
    // f32 and f64 only: in f16 or bf16 the scaled filter would round in the narrow type.
    if !top
        || float_const(ir, z) != Some(0.0)
        || !(elem == Type::f32() || elem == Type::f64())
        || elem != ir.value_type(init).element_type()
        || !wty.has_static_shape()
        || !func_attrs::known_at_preparation(ir, filter)
    {
        return None;
    }
    let cons = consumer(ir, conv)?;
    let producers: Vec<usize> = (0..cons.ins.len())
        .filter(|i| matches!(cons.ins[*i], Input::Producer))
        .collect();
    let &[producer] = producers.as_slice() else {
        return None;
    };
    let body = ir.region_entry(*ir.regions_of(cons.g).first()?)?;
    let mut v = ir.block_args(body)[producer];
    let mut chain = vec![];
    while let [u] = ir.uses(v) {
        if ir.parent_block(u.op) != Some(body) {
            break;
        }
        let Some((step, p)) = step_of(ir, &cons, body, u.op, v) else {
            break;
        };
        chain.push((u.op, step, p));
        v = ir.result(u.op, 0);
    }
    // Only a chain that scales has something to fold into the filter.
    if !chain
        .iter()
        .any(|(_, s, _)| matches!(s, Step::Mul | Step::Div | Step::Neg | Step::SubFrom))
    {
        return None;
    }
    Some(Fold {
        conv,
        filter,
        cons,
        producer,
        chain,
    })
}

/// An all-parallel `linalg.generic` over `ins` into `outs` with `maps`, before `at`, and
/// its body block (arguments of the operands' element types, still empty).
fn generic_shell(
    ir: &mut Ir,
    at: OpId,
    (ins, outs): (&[Value], &[Value]),
    maps: Vec<AffineMap>,
) -> (OpId, BlockId) {
    let iters = vec!["parallel"; maps[0].num_dims as usize];
    let g = generic_op(&mut OpBuilder::before(ir, at), (ins, outs), &maps, &iters);
    let elems: Vec<Type> = ins
        .iter()
        .chain(outs)
        .map(|v| ir.value_type(*v).element_type())
        .collect();
    let region = ir.regions_of(g)[0];
    (g, ir.append_block(region, &elems))
}

/// `alpha` and (when the chain adds anything) `beta` per output channel, computed from
/// the chain's operands by one generic over the `f` channels, before `at`.
fn alpha_beta(ir: &mut Ir, fold: &Fold, at: OpId, f: i64, elem: Type) -> (Value, Option<Value>) {
    let mut used: Vec<usize> = vec![];
    for (_, _, p) in &fold.chain {
        if let Some(Operand::Input(i)) = p {
            if !used.contains(i) {
                used.push(*i);
            }
        }
    }
    let (gins, _) = ins_outs(ir, fold.cons.g);
    let mut maps = vec![];
    let mut ins = vec![];
    for i in &used {
        let Input::Channel(_, m) = &fold.cons.ins[*i] else {
            unreachable!("a chain operand is a channel input")
        };
        ins.push(gins[*i]);
        maps.push(AffineMap::new(1, 0, m.results.clone()));
    }
    let adds = fold
        .chain
        .iter()
        .any(|(_, s, _)| matches!(s, Step::Add | Step::Sub | Step::SubFrom));
    let loc = ir.loc(at);
    let vty = Type::tensor(vec![f], elem);
    let mut b = OpBuilder::before(ir, at);
    let outs: Vec<Value> = (0..1 + adds as usize)
        .map(|_| b.value(ops::tensor::EmptyOp::NAME, vec![], vty, &[]))
        .collect();
    let id = AffineMap::new(1, 0, vec![AffineExpr::Dim(0)]);
    maps.extend(outs.iter().map(|_| id.clone()));
    let (g, blk) = generic_shell(ir, at, (&ins, &outs), maps);
    let args = ir.block_args(blk).to_vec();
    let mut b = OpBuilder::at_end(ir, blk, loc);
    let bin =
        |b: &mut OpBuilder<'_>, n: &str, x: Value, y: Value| b.value(n, vec![x, y], elem, &[]);
    let konst = |b: &mut OpBuilder<'_>, x: f64| {
        b.value(
            ops::arith::ConstantOp::NAME,
            vec![],
            elem,
            &[("value", Attribute::float(x, elem))],
        )
    };
    use ops::arith::{AddfOp, DivfOp, MulfOp, NegfOp, SubfOp};
    let neg = |b: &mut OpBuilder<'_>, x: Value| b.value(NegfOp::NAME, vec![x], elem, &[]);
    let (mut a, mut c): (Option<Value>, Option<Value>) = (None, None);
    for (_, step, p) in &fold.chain {
        let p = match p {
            Some(Operand::Input(i)) => Some(args[used.iter().position(|u| u == i).unwrap()]),
            Some(Operand::Const(x)) => Some(konst(&mut b, *x)),
            None => None,
        };
        match (step, p) {
            (Step::Add, Some(p)) => c = Some(c.map_or(p, |c| bin(&mut b, AddfOp::NAME, c, p))),
            (Step::Sub, Some(p)) => {
                c = Some(match c {
                    Some(c) => bin(&mut b, SubfOp::NAME, c, p),
                    None => neg(&mut b, p),
                })
            }
            (Step::SubFrom, Some(p)) => {
                a = Some(match a {
                    Some(a) => neg(&mut b, a),
                    None => konst(&mut b, -1.0),
                });
                c = Some(c.map_or(p, |c| bin(&mut b, SubfOp::NAME, p, c)));
            }
            (Step::Mul, Some(p)) => {
                a = Some(a.map_or(p, |a| bin(&mut b, MulfOp::NAME, a, p)));
                c = c.map(|c| bin(&mut b, MulfOp::NAME, c, p));
            }
            (Step::Div, Some(p)) => {
                let one = a.unwrap_or_else(|| konst(&mut b, 1.0));
                a = Some(bin(&mut b, DivfOp::NAME, one, p));
                c = c.map(|c| bin(&mut b, DivfOp::NAME, c, p));
            }
            (Step::Neg, None) => {
                a = Some(match a {
                    Some(a) => neg(&mut b, a),
                    None => konst(&mut b, -1.0),
                });
                c = c.map(|c| neg(&mut b, c));
            }
            _ => unreachable!("steps carry an operand except negf"),
        }
    }
    let a = a.expect("the chain scales");
    let ys = match c {
        Some(c) if adds => vec![a, c],
        _ => vec![a],
    };
    b.create(ops::linalg::YieldOp::NAME, ys, vec![], &[]);
    (ir.result(g, 0), adds.then(|| ir.result(g, 1)))
}

/// The filter with its dim-0 rows scaled by `alpha`, before `at`.
fn scaled_filter(ir: &mut Ir, at: OpId, w: Value, alpha: Value) -> Value {
    let wty = ir.value_type(w);
    let (elem, rank) = (
        wty.element_type(),
        wty.shape().map_or(0, |s| s.len()) as u32,
    );
    let mut b = OpBuilder::before(ir, at);
    let empty = b.value(ops::tensor::EmptyOp::NAME, vec![], wty, &[]);
    let id = AffineMap::new(rank, 0, (0..rank).map(AffineExpr::Dim).collect());
    let row = AffineMap::new(rank, 0, vec![AffineExpr::Dim(0)]);
    let loc = ir.loc(at);
    let (g, blk) = generic_shell(ir, at, (&[w, alpha], &[empty]), vec![id.clone(), row, id]);
    let args = ir.block_args(blk).to_vec();
    let mut b = OpBuilder::at_end(ir, blk, loc);
    let m = b.value(ops::arith::MulfOp::NAME, vec![args[0], args[1]], elem, &[]);
    b.create(ops::linalg::YieldOp::NAME, vec![m], vec![], &[]);
    ir.result(g, 0)
}

/// Apply `fold`: the scaled conv before its consumer, the consumer adding `beta` where the
/// chain ended, its unread inputs dropped.
fn apply(ir: &mut Ir, fold: Fold) {
    let g = fold.cons.g;
    let wty = ir.value_type(fold.filter);
    let (f, elem) = (wty.shape().expect("static filter")[0], wty.element_type());
    let (alpha, beta) = alpha_beta(ir, &fold, g, f, elem);
    let w2 = scaled_filter(ir, g, fold.filter, alpha);
    let mut map = std::iter::once((fold.filter, w2)).collect();
    let conv2 = ir.clone_op(fold.conv, &mut map);
    ir.insert_before(g, conv2);
    let c2 = ir.result(conv2, 0);
    ir.set_operand(g, fold.producer, c2);

    // The body: `beta` as a new input's argument (before the output's), the chain's value
    // replaced by the producer's plus beta.
    let body = ir
        .region_entry(ir.regions_of(g)[0])
        .expect("a generic's body");
    let (gins, gouts) = ins_outs(ir, g);
    let nin = gins.len();
    let p = ir.block_args(body)[fold.producer];
    let (last, _, _) = *fold.chain.last().expect("a chain");
    let end = ir.result(last, 0);
    let beta_arg = beta.map(|_| {
        let a = ir.add_block_arg(body, elem);
        ir.add_block_arg(body, elem);
        ir.erase_block_arg(body, nin);
        a
    });
    let new = match beta_arg {
        Some(bv) => {
            let mut b = OpBuilder::before(ir, last);
            b.value(ops::arith::AddfOp::NAME, vec![p, bv], elem, &[])
        }
        None => p,
    };
    ir.replace_all_uses(end, new);
    for (o, _, _) in fold.chain.iter().rev() {
        ir.erase_op(*o);
    }

    // Inputs the body no longer reads go.
    let maps = indexing_maps(ir, g).expect("the consumer's maps");
    let keep: Vec<usize> = (0..nin)
        .filter(|i| ir.has_uses(ir.block_args(body)[*i]))
        .collect();
    let mut operands: Vec<Value> = keep.iter().map(|i| gins[*i]).collect();
    let mut new_maps: Vec<AffineMap> = keep.iter().map(|i| maps[*i].clone()).collect();
    if let Some(bv) = beta {
        operands.push(bv);
        new_maps.push(AffineMap::new(4, 0, vec![AffineExpr::Dim(1)]));
    }
    operands.extend(gouts.iter().copied());
    new_maps.extend(maps[nin..].iter().cloned());
    for i in (0..nin).rev() {
        if !keep.contains(&i) {
            ir.erase_block_arg(body, i);
        }
    }
    let nins = operands.len() - gouts.len();
    let ty = ir.value_type(ir.result(g, 0));
    let g2 = rebuild_op(ir, g, operands, vec![ty]);
    ir.set_inherent(
        g2,
        "indexing_maps",
        Attribute::array(new_maps.into_iter().map(Attribute::affine_map).collect()),
    );
    ir.set_inherent(
        g2,
        "operandSegmentSizes",
        Attribute::dense_i32_array(&[nins as i32, gouts.len() as i32]),
    );
    let (r, r2) = (ir.result(g, 0), ir.result(g2, 0));
    ir.replace_all_uses(r, r2);
    ir.erase_op(g);
    ir.erase_op(fold.conv);
}

define_pass! {
    /// `fold-scale-into-conv`: a convolution's per-channel scale and shift (inference
    /// BatchNorm) folded into its filter and one bias.
    pub struct FoldScaleIntoConvPass {
        argument: "fold-scale-into-conv",
        name: "FoldScaleIntoConv",
        summary: "Fold the per-channel affine start of a convolution's elementwise consumer (inference BatchNorm) into its filter and one per-channel bias",
        description: "A linalg.conv_2d_nchw_fchw or linalg.depthwise_conv_2d_nchw_chw on floats whose init is a fill of zero, whose filter is known when the weights are (a {ftuner.weight} argument, a prepared value, views of them), and whose one use is an all-parallel linalg.generic reading the conv's result elementwise: the chain of that body's ops starting at the conv's value that each combine it with a value read per output channel and known when the weights are, or a constant (addf, subf, mulf, divf by, negf), is c * alpha + beta. When it scales, alpha and beta are computed per channel by one linalg.generic, the filter's output-channel rows are multiplied by alpha by another, and the consumer reads the conv of the scaled filter plus beta where the chain ended; the inputs it no longer reads are dropped. What the pass builds reads weights and constants only, so outline-weight-preparation (run after it) makes what reads a weight once per loaded model. Only convs at a function's top level, of f32 or f64. Results change by rounding (for finite scales).",
        options: FoldScaleIntoConvOptions {},
        statistics: {
            folded: "num-folded" => "Convolutions whose consumer's scale was folded into the filter",
        },
    }
}

impl FoldScaleIntoConvPass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        top: OpId,
        _: &FoldScaleIntoConvOptions,
    ) -> Result<(), PassFailure> {
        let mut convs = vec![];
        cx.ir.walk_pre(top, &mut |o| {
            let n = cx.ir.name(o);
            if n == ops::linalg::Conv2dNchwFchwOp::NAME
                || n == ops::linalg::DepthwiseConv2dNchwChwOp::NAME
            {
                convs.push(o);
            }
        });
        for c in convs {
            if let Some(fold) = find(cx.ir, c) {
                apply(cx.ir, fold);
                self.folded += 1;
            }
        }
        Ok(())
    }
}
