//! `convert-ta-to-linalg`: each `ta.expr` becomes one `linalg.generic` over its traversal
//! (parallel) and summation (reduction) iterators. An access whose indices are distinct
//! iterators covering the tensor exactly is an indexing map; any other access (offsets,
//! strides, floordiv / mod, reads that can fall outside the tensor) is a `tensor.extract`
//! in the body at computed indices, guarded: out of bounds reads 0, as the expression
//! says. Summation iterators no mapped operand spans get their range from an extra
//! `tensor.empty` operand of their extents (linalg derives loop ranges from operand
//! shapes).
//!
//! Here the generic's loops, operands and maps; its body's code in [`body`].

use ftuner_dialects::ops;
mod body;
mod polyphase;

use crate::emit::ty;
use crate::pass::inline_text;
use ftuner_dialects::ta::{self, Scope, Src};
use ftuner_ir::{OpId, Value};
use ftuner_pass::{define_pass, PassContext, PassFailure};
use std::fmt::Write;

/// The loops of the generic: its iterators (traversal, then summation) and their ranges.
struct Nest<'a> {
    iters: Vec<&'a ta::Iter>,
    /// How many of the iterators are traversal iterators (parallel loops).
    nt: usize,
    /// (lo, hi) per loop; hi is DYNAMIC for a traversal iterator bounded by an input's dim.
    ranges: Vec<(i64, i64)>,
}

impl Nest<'_> {
    /// The loop of iterator `v`.
    fn pos(&self, v: &str) -> Option<usize> {
        self.iters.iter().position(|i| i.name == v)
    }
}

/// The loops of `s`; a dynamic extent (a traversal iterator bounded by an input's dim)
/// is computed in `head`, and its value returned in order (the sizes of the result's
/// `tensor.empty`).
fn loop_nest<'a>(
    s: &'a Scope,
    inputs: &[Vec<i64>],
    elem: &str,
    head: &mut String,
) -> Result<(Nest<'a>, Vec<String>), String> {
    let nt = s.trav.len();
    let iters: Vec<&ta::Iter> = s.trav.iter().chain(&s.sum).collect();
    let mut ranges = vec![];
    let mut dyn_sizes = vec![];
    for (k, i) in iters.iter().enumerate() {
        match (i.static_range(), i.hi.dim) {
            (Some((l, h)), _) => ranges.push((l, h)),
            (None, Some((j, d))) if k < nt => {
                let shape = inputs.get(j).ok_or("a bound names a missing input")?;
                if d >= shape.len() {
                    return Err("a bound names a missing dim".into());
                }
                // extent = dim + c - lo
                let _ = writeln!(head, "    %cd{k} = arith.constant {d} : index");
                let _ = writeln!(
                    head,
                    "    %dim{k} = tensor.dim %in{j}, %cd{k} : {}",
                    ty(shape, elem)
                );
                let _ = writeln!(
                    head,
                    "    %off{k} = arith.constant {} : index",
                    i.hi.c - i.lo
                );
                let _ = writeln!(head, "    %ext{k} = arith.addi %dim{k}, %off{k} : index");
                dyn_sizes.push(format!("%ext{k}"));
                ranges.push((i.lo, ftuner_ir::DYNAMIC));
            }
            _ => {
                return Err(format!(
                    "summation iterator '{}' has a dynamic extent",
                    i.name
                ))
            }
        }
    }
    Ok((Nest { iters, nt, ranges }, dyn_sizes))
}

/// The accesses that become indexing maps: distinct iterators from 0 covering the dims
/// exactly (one per input): (input, the loop of each dim).
fn mapped_accesses(
    s: &Scope,
    inputs: &[Vec<i64>],
    nest: &Nest<'_>,
) -> Result<Vec<(usize, Vec<usize>)>, String> {
    let dynamic = ftuner_ir::DYNAMIC;
    let mut mapped: Vec<(usize, Vec<usize>)> = vec![];
    for (src, idx) in &s.body.accesses() {
        let Src::Input(i) = src else {
            return Err("nested scopes must be emitted first".into());
        };
        let shape = inputs.get(*i).ok_or("access to a missing input")?;
        let ds: Option<Vec<usize>> = idx
            .iter()
            .zip(shape)
            .enumerate()
            .map(|(dpos, (e, d))| {
                let p = nest.pos(e.as_var()?)?;
                let exact = if *d == dynamic {
                    // The iterator is bounded by exactly this dim.
                    nest.iters[p].dim_range() == Some((*i, dpos))
                } else {
                    nest.ranges[p] == (0, *d)
                };
                exact.then_some(p)
            })
            .collect();
        if let Some(ds) = ds {
            let mut u = ds.clone();
            u.sort();
            u.dedup();
            if u.len() == ds.len() && !mapped.iter().any(|(j, _)| j == i) {
                mapped.push((*i, ds));
            }
        }
    }
    Ok(mapped)
}

/// The generic's inputs, indexing maps and block arguments: the mapped accesses, then, if
/// some loop no mapped operand or the output spans, an operand of their extents (made in
/// `head`; linalg derives loop ranges from operand shapes); the output's map last.
struct Operands {
    /// (SSA name, type) per input.
    ins: Vec<(String, String)>,
    maps: Vec<String>,
    args: Vec<String>,
}

fn operands(
    mapped: &[(usize, Vec<usize>)],
    inputs: &[Vec<i64>],
    elem: &str,
    nest: &Nest<'_>,
    head: &mut String,
) -> Operands {
    let (nt, nd) = (nest.nt, nest.iters.len());
    let dims = (0..nd)
        .map(|d| format!("d{d}"))
        .collect::<Vec<_>>()
        .join(", ");
    let map_of = |ds: &mut dyn Iterator<Item = usize>| {
        format!(
            "affine_map<({dims}) -> ({})>",
            ds.map(|d| format!("d{d}")).collect::<Vec<_>>().join(", ")
        )
    };
    // Loop dims no mapped operand or the output spans: an extra operand of their extents.
    let spanned = |d: usize| d < nt || mapped.iter().any(|(_, ds)| ds.contains(&d));
    let extra: Vec<usize> = (0..nd).filter(|d| !spanned(*d)).collect();
    let mut ins = vec![];
    let mut maps = vec![];
    let mut args = vec![];
    for (k, (i, ds)) in mapped.iter().enumerate() {
        ins.push((format!("%in{i}"), ty(&inputs[*i], elem)));
        maps.push(map_of(&mut ds.iter().copied()));
        args.push(format!("%a{k}"));
    }
    if !extra.is_empty() {
        let sh: Vec<i64> = extra
            .iter()
            .map(|d| nest.ranges[*d].1 - nest.ranges[*d].0)
            .collect();
        let _ = writeln!(head, "    %extents = tensor.empty() : {}", ty(&sh, elem));
        ins.push(("%extents".into(), ty(&sh, elem)));
        maps.push(map_of(&mut extra.iter().copied()));
        args.push("%unused".into());
    }
    maps.push(map_of(&mut (0..nt)));
    Operands { ins, maps, args }
}

/// The MLIR text of `@ollie(%in0, ...) -> result` computing `s` with one linalg.generic
/// (its strided summations split into phases first, [`polyphase`], the result collapsed
/// back to `s`'s shape).
pub fn generic_text(s: &Scope, inputs: &[Vec<i64>], elem: &str) -> Result<String, String> {
    // A split that cannot be written as one generic falls back to the scope as it is.
    polyphase::split(s)
        .and_then(|sp| one_generic(&sp.scope, inputs, elem, Some(&sp.groups)).ok())
        .map_or_else(|| one_generic(s, inputs, elem, None), Ok)
}

/// [`generic_text`] of `s` as it is; `groups` folds its result's dims into the returned
/// type's (a `tensor.collapse_shape`).
fn one_generic(
    s: &Scope,
    inputs: &[Vec<i64>],
    elem: &str,
    groups: Option<&[Vec<usize>]>,
) -> Result<String, String> {
    let mut head = String::new();
    let (nest, dyn_sizes) = loop_nest(s, inputs, elem, &mut head)?;
    let (nt, nd) = (nest.nt, nest.iters.len());
    let dynamic = ftuner_ir::DYNAMIC;
    let rshape: Vec<i64> = nest.ranges[..nt]
        .iter()
        .map(|(l, h)| if *h == dynamic { dynamic } else { h - l })
        .collect();
    let rt = ty(&rshape, elem);
    let mapped = mapped_accesses(s, inputs, &nest)?;
    let Operands { ins, maps, args } = operands(&mapped, inputs, elem, &nest, &mut head);
    let _ = writeln!(
        head,
        "    %empty = tensor.empty({}) : {rt}",
        dyn_sizes.join(", ")
    );
    let init = if s.sum.is_empty() {
        "%empty".to_string()
    } else {
        let _ = writeln!(head, "    %zero = arith.constant 0.000000e+00 : {elem}");
        let _ = writeln!(
            head,
            "    %init0 = linalg.fill ins(%zero : {elem}) outs(%empty : {rt}) -> {rt}"
        );
        "%init0".to_string()
    };
    let body = body::body_text(s, inputs, elem, &nest, &mapped)?;
    let mut bargs: Vec<String> = args.iter().map(|a| format!("{a}: {elem}")).collect();
    bargs.push(format!("%acc: {elem}"));
    let its: Vec<&str> = (0..nd)
        .map(|d| {
            if d < nt {
                "\"parallel\""
            } else {
                "\"reduction\""
            }
        })
        .collect();
    let params: Vec<String> = inputs
        .iter()
        .enumerate()
        .map(|(i, s)| format!("%in{i}: {}", ty(s, elem)))
        .collect();
    let ins_txt = if ins.is_empty() {
        String::new()
    } else {
        format!(
            "ins({} : {}) ",
            ins.iter()
                .map(|x| x.0.clone())
                .collect::<Vec<_>>()
                .join(", "),
            ins.iter()
                .map(|x| x.1.clone())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    // The result collapsed back: each group's extents multiplied (dynamic if any is).
    let (ret, ret_ty, collapse) = match groups {
        Some(gs) => {
            let shape: Vec<i64> = gs
                .iter()
                .map(|g| {
                    g.iter()
                        .try_fold(1i64, |a, d| match rshape.get(*d) {
                            Some(&x) if x != dynamic => a.checked_mul(x),
                            _ => None,
                        })
                        .unwrap_or(dynamic)
                })
                .collect();
            let cty = ty(&shape, elem);
            let assoc: Vec<String> = gs
                .iter()
                .map(|g| {
                    let ds: Vec<String> = g.iter().map(|d| d.to_string()).collect();
                    format!("[{}]", ds.join(", "))
                })
                .collect();
            let text = format!(
                "    %c = tensor.collapse_shape %r [{}] : {rt} into {cty}\n",
                assoc.join(", ")
            );
            ("%c", cty, text)
        }
        None => ("%r", rt.clone(), String::new()),
    };
    Ok(format!(
        "func.func @ollie({}) -> {ret_ty} {{\n{head}    %r = linalg.generic {{indexing_maps = [{}], iterator_types = [{}]}} {ins_txt}outs({init} : {rt}) {{\n    ^bb0({}):\n{}    }} -> {rt}\n{collapse}    return {ret} : {ret_ty}\n}}\n",
        params.join(", "),
        maps.join(", "),
        its.join(", "),
        bargs.join(", "),
        body
    ))
}

define_pass! {
    /// `convert-ta-to-linalg`: `ta.expr` eOperators as `linalg.generic`s.
    pub struct ConvertTaToLinalgPass {
        argument: "convert-ta-to-linalg",
        name: "ConvertTaToLinalg",
        summary: "Lower ta.expr (eOperators) to linalg.generic",
        description: "Each ta.expr becomes a linalg.generic over its traversal (parallel) and summation (reduction) iterators: accesses by distinct iterators covering a tensor exactly are indexing maps, other accesses are guarded tensor.extracts at computed indices (out-of-bounds reads are 0). Static shapes; a nested scope must have been split into its own ta.expr first.",
        options: ConvertTaToLinalgOptions {
        },
        statistics: {
            lowered: "num-lowered" => "ta.expr ops lowered to linalg.generic",
        },
    }
}

impl ConvertTaToLinalgPass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        top: OpId,
        _: &ConvertTaToLinalgOptions,
    ) -> Result<(), PassFailure> {
        // Nested scopes are first split into their own ops (as ollie-derive emits them),
        // which the next round lowers.
        for _round in 0..16 {
            let mut ops = vec![];
            cx.ir.walk_pre(top, &mut |o| {
                if cx.ir.name(o) == ops::ta::ExprOp::NAME {
                    ops.push(o);
                }
            });
            if ops.is_empty() {
                return Ok(());
            }
            self.lower_all(cx, top, ops)?;
        }
        Ok(())
    }
}

impl ConvertTaToLinalgPass {
    fn lower_all(
        &mut self,
        cx: &mut PassContext<'_>,
        top: OpId,
        ops: Vec<OpId>,
    ) -> Result<(), PassFailure> {
        // The hardware model's costs (a G2BMM's chunk size), looked up only when a nested
        // expression is emitted.
        let mut costs: Option<crate::derive::Costs> = None;
        for op in ops {
            let fail = |cx: &mut PassContext<'_>, m: String| {
                cx.emit(ftuner_ir::Diagnostic::error(
                    cx.ir.loc(op),
                    format!("convert-ta-to-linalg: {m}"),
                ));
                PassFailure
            };
            let Some(s) = ta::scope_of(cx.ir, op) else {
                return Err(fail(cx, "malformed expression".into()));
            };
            let ins: Vec<Value> = cx.ir.operands(op).to_vec();
            let mut shapes = vec![];
            for v in &ins {
                match cx.ir.value_type(*v).shape() {
                    Some(sh) => shapes.push(sh.to_vec()),
                    None => return Err(fail(cx, "inputs must be ranked tensors".into())),
                }
            }
            let rty = cx.ir.value_type(cx.ir.result(op, 0));
            let nested = s
                .body
                .accesses()
                .iter()
                .any(|(src, _)| matches!(src, ta::Src::Scope(_)));
            if nested {
                if rty
                    .shape()
                    .is_none_or(|sh| sh.contains(&ftuner_ir::DYNAMIC))
                {
                    return Err(fail(
                        cx,
                        "a ta.expr with nested scopes needs a static result type".into(),
                    ));
                }
                let tys: Vec<ftuner_ir::Type> = ins.iter().map(|v| cx.ir.value_type(*v)).collect();
                let c = match costs.clone() {
                    Some(c) => c,
                    None => {
                        let model = ftuner_ukernel::target_model(cx, top, "")?;
                        let c = crate::derive::Costs::from_model(&model);
                        costs = Some(c.clone());
                        c
                    }
                };
                let fixed = crate::pass::fixed_inputs(cx.ctx, cx.ir, op, &ins);
                let em = match crate::emit::emit(&s, &tys, &fixed, &tys, rty, false, &c) {
                    Ok(e) => e,
                    Err(e) => return Err(fail(cx, e)),
                };
                let e = cx.ir.create_op(
                    ftuner_ir::OpSpec::new(
                        ftuner_ir::intern_name(ops::tensor::EmptyOp::NAME),
                        cx.ir.loc(op),
                    )
                    .results([rty]),
                );
                cx.ir.insert_before(op, e);
                let mut args = ins.clone();
                args.push(cx.ir.result(e, 0));
                args.extend(ins.iter().copied());
                match inline_text(cx, op, &em.text, &args) {
                    Ok(v) => {
                        let r = cx.ir.result(op, 0);
                        cx.ir.replace_all_uses(r, v);
                        cx.ir.erase_op(op);
                        if !cx.ir.has_uses(cx.ir.result(e, 0)) {
                            cx.ir.erase_op(e);
                        }
                    }
                    Err(m) => return Err(fail(cx, m)),
                }
                continue;
            }
            let elem = rty.element_type().to_string();
            let text = match generic_text(&s, &shapes, &elem) {
                Ok(t) => t,
                Err(e) => return Err(fail(cx, e)),
            };
            match inline_text(cx, op, &text, &ins) {
                Ok(v) => {
                    let r = cx.ir.result(op, 0);
                    cx.ir.replace_all_uses(r, v);
                    cx.ir.erase_op(op);
                    self.lowered += 1;
                }
                Err(m) => return Err(fail(cx, m)),
            }
        }
        Ok(())
    }
}
