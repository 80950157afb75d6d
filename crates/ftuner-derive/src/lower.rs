//! `convert-ta-to-linalg`: each `ta.expr` becomes one `linalg.generic` over its traversal
//! (parallel) and summation (reduction) iterators. An access whose indices are distinct
//! iterators covering the tensor exactly is an indexing map; any other access (offsets,
//! strides, floordiv / mod, reads that can fall outside the tensor) is a `tensor.extract`
//! in the body at computed indices, guarded: out of bounds reads 0, as the expression
//! says. Summation iterators no mapped operand spans get their range from an extra
//! `tensor.empty` operand of their extents (linalg derives loop ranges from operand
//! shapes).

use crate::emit::ty;
use crate::pass::inline_text;
use ftuner_dialects::ta::{self, Atom, BinOp, Idx, Scope, Src, Term};
use ftuner_ir::{OpId, Value};
use ftuner_pass::{Pass, PassContext, PassFailure, Statistic};
use std::fmt::Write;

struct Body {
    out: String,
    n: usize,
    elem: String,
    /// Conditions of exact divisions met while computing indices (the access reads 0
    /// unless they all hold).
    exact: Vec<String>,
}

impl Body {
    fn fresh(&mut self) -> String {
        self.n += 1;
        format!("%b{}", self.n)
    }
    fn line(&mut self, s: String) {
        let _ = writeln!(self.out, "      {s}");
    }
    fn cst(&mut self, v: i64) -> String {
        let c = self.fresh();
        self.line(format!("{c} = arith.constant {v} : index"));
        c
    }
    fn bin(&mut self, op: &str, a: &str, b: &str, ty: &str) -> String {
        let r = self.fresh();
        self.line(format!("{r} = {op} {a}, {b} : {ty}"));
        r
    }
    fn idx(&mut self, e: &Idx, var: &dyn Fn(&str) -> String) -> String {
        let mut acc: Option<String> = None;
        for (a, k) in &e.terms {
            let v = match a {
                Atom::Var(x) => var(x),
                Atom::FloorDiv(inner, d) => {
                    let x = self.idx(inner, var);
                    let c = self.cst(*d);
                    self.bin("arith.floordivsi", &x, &c, "index")
                }
                Atom::Mod(inner, d) => {
                    let x = self.idx(inner, var);
                    let c = self.cst(*d);
                    let q = self.bin("arith.floordivsi", &x, &c, "index");
                    let qk = self.bin("arith.muli", &q, &c, "index");
                    self.bin("arith.subi", &x, &qk, "index")
                }
                Atom::Div(inner, d) => {
                    let x = self.idx(inner, var);
                    let c = self.cst(*d);
                    let q = self.bin("arith.floordivsi", &x, &c, "index");
                    let qk = self.bin("arith.muli", &q, &c, "index");
                    let ok = self.fresh();
                    self.line(format!("{ok} = arith.cmpi eq, {qk}, {x} : index"));
                    self.exact.push(ok);
                    q
                }
            };
            let t = if *k == 1 {
                v
            } else {
                let c = self.cst(*k);
                self.bin("arith.muli", &v, &c, "index")
            };
            acc = Some(match acc {
                None => t,
                Some(a) => self.bin("arith.addi", &a, &t, "index"),
            });
        }
        match acc {
            None => self.cst(e.c),
            Some(a) if e.c == 0 => a,
            Some(a) => {
                let c = self.cst(e.c);
                self.bin("arith.addi", &a, &c, "index")
            }
        }
    }
}

/// The MLIR text of `@ollie(%in0, ...) -> result` computing `s` with one linalg.generic.
pub fn generic_text(s: &Scope, inputs: &[Vec<i64>], elem: &str) -> Result<String, String> {
    let nt = s.trav.len();
    let iters: Vec<&ta::Iter> = s.trav.iter().chain(&s.sum).collect();
    let nd = iters.len();
    // (lo, hi); hi is DYNAMIC for a traversal iterator bounded by an input's dim.
    let mut ranges = vec![];
    let mut head = String::new();
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
    let dynamic = ftuner_ir::DYNAMIC;
    let pos = |v: &str| iters.iter().position(|i| i.name == v);
    let dims = (0..nd)
        .map(|d| format!("d{d}"))
        .collect::<Vec<_>>()
        .join(", ");
    let rshape: Vec<i64> = ranges[..nt]
        .iter()
        .map(|(l, h)| if *h == dynamic { dynamic } else { h - l })
        .collect();
    let rt = ty(&rshape, elem);
    // Mapped accesses: distinct iterators from 0 covering the dims exactly.
    let accesses = s.body.accesses();
    let mut mapped: Vec<(usize, Vec<usize>)> = vec![];
    for (src, idx) in &accesses {
        let Src::Input(i) = src else {
            return Err("nested scopes must be emitted first".into());
        };
        let shape = inputs.get(*i).ok_or("access to a missing input")?;
        let ds: Option<Vec<usize>> = idx
            .iter()
            .zip(shape)
            .enumerate()
            .map(|(dpos, (e, d))| {
                let p = pos(e.as_var()?)?;
                let exact = if *d == dynamic {
                    // The iterator is bounded by exactly this dim.
                    iters[p].dim_range() == Some((*i, dpos))
                } else {
                    ranges[p] == (0, *d)
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
    // Loop dims no mapped operand or the output spans: an extra operand of their extents.
    let spanned = |d: usize| d < nt || mapped.iter().any(|(_, ds)| ds.contains(&d));
    let extra: Vec<usize> = (0..nd).filter(|d| !spanned(*d)).collect();
    let mut b = Body {
        out: String::new(),
        n: 0,
        elem: elem.to_string(),
        exact: vec![],
    };
    let mut ins = vec![];
    let mut maps = vec![];
    let mut args = vec![];
    for (k, (i, ds)) in mapped.iter().enumerate() {
        ins.push((format!("%in{i}"), ty(&inputs[*i], elem)));
        maps.push(format!(
            "affine_map<({dims}) -> ({})>",
            ds.iter()
                .map(|d| format!("d{d}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        args.push(format!("%a{k}"));
    }
    if !extra.is_empty() {
        let sh: Vec<i64> = extra.iter().map(|d| ranges[*d].1 - ranges[*d].0).collect();
        let _ = writeln!(head, "    %extents = tensor.empty() : {}", ty(&sh, elem));
        ins.push(("%extents".into(), ty(&sh, elem)));
        maps.push(format!(
            "affine_map<({dims}) -> ({})>",
            extra
                .iter()
                .map(|d| format!("d{d}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        args.push("%unused".into());
    }
    maps.push(format!(
        "affine_map<({dims}) -> ({})>",
        (0..nt)
            .map(|d| format!("d{d}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
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
    // Iterator values inside the body.
    let mut var_val: Vec<Option<String>> = vec![None; nd];
    let mut used = vec![];
    for (_, idx) in &accesses {
        for e in idx.iter() {
            e.vars(&mut used);
        }
    }
    for v in &used {
        let Some(p) = pos(v) else {
            return Err(format!("'{v}' is not an iterator"));
        };
        let ix = b.fresh();
        b.line(format!("{ix} = linalg.index {p} : index"));
        let val = if ranges[p].0 == 0 {
            ix
        } else {
            let c = b.cst(ranges[p].0);
            b.bin("arith.addi", &ix, &c, "index")
        };
        var_val[p] = Some(val);
    }
    let var = |v: &str| -> String {
        pos(v)
            .and_then(|p| var_val[p].clone())
            .unwrap_or_else(|| "%undefined".into())
    };
    let range_of = |v: &str| pos(v).map(|p| ranges[p]).filter(|r| r.1 != dynamic);
    // Whether iterator `v` runs over exactly dim `d` of input `i` (a dynamic bound).
    let by_dim =
        |v: &str, i: usize, d: usize| pos(v).is_some_and(|p| iters[p].dim_range() == Some((i, d)));
    fn term(
        t: &Term,
        b: &mut Body,
        inputs: &[Vec<i64>],
        var: &dyn Fn(&str) -> String,
        range_of: &dyn Fn(&str) -> Option<(i64, i64)>,
        by_dim: &dyn Fn(&str, usize, usize) -> bool,
    ) -> String {
        match t {
            Term::Const(bits) => {
                let r = b.fresh();
                let e = b.elem.clone();
                let mut lit = format!("{:?}", f64::from_bits(*bits));
                if !lit.contains('.') && !lit.contains("inf") && !lit.contains("NaN") {
                    match lit.find('e') {
                        Some(p) => lit.insert_str(p, ".0"),
                        None => lit.push_str(".0"),
                    }
                }
                b.line(format!("{r} = arith.constant {lit} : {e}"));
                r
            }
            Term::Bin(op, x, y) => {
                let xa = term(x, b, inputs, var, range_of, by_dim);
                let ya = term(y, b, inputs, var, range_of, by_dim);
                let name = match op {
                    BinOp::Add => "arith.addf",
                    BinOp::Sub => "arith.subf",
                    BinOp::Mul => "arith.mulf",
                };
                let e = b.elem.clone();
                b.bin(name, &xa, &ya, &e)
            }
            Term::Access(src, idx) => {
                let Src::Input(i) = src else {
                    return "%unreachable".into();
                };
                if *i >= ARG_BASE {
                    // A mapped access: its block argument.
                    return format!("%a{}", i - ARG_BASE);
                }
                let shape = &inputs[*i];
                let mut ixs = vec![];
                b.exact.clear();
                let mut guard: Option<String> = None;
                for (dpos, (e, d)) in idx.iter().zip(shape).enumerate() {
                    let v = b.idx(e, var);
                    // The range of the index as computed (an exact division is a
                    // floordiv here, its guard applied to the value read).
                    let inside = as_computed(e)
                        .range(range_of)
                        .is_some_and(|(l, h)| l >= 0 && h <= *d)
                        || e.as_var().is_some_and(|x| by_dim(x, *i, dpos));
                    if inside {
                        ixs.push(v);
                        continue;
                    }
                    let z = b.cst(0);
                    let dd = if *d == ftuner_ir::DYNAMIC {
                        let c = b.cst(ixs.len() as i64);
                        let r = b.fresh();
                        let e = b.elem.clone();
                        b.line(format!("{r} = tensor.dim %in{i}, {c} : {}", ty(shape, &e)));
                        r
                    } else {
                        b.cst(*d)
                    };
                    let ge = b.fresh();
                    b.line(format!("{ge} = arith.cmpi sge, {v}, {z} : index"));
                    let lt = b.fresh();
                    b.line(format!("{lt} = arith.cmpi slt, {v}, {dd} : index"));
                    let ok = b.bin("arith.andi", &ge, &lt, "i1");
                    let cl = b.fresh();
                    b.line(format!("{cl} = arith.select {ok}, {v}, {z} : index"));
                    ixs.push(cl);
                    guard = Some(match guard {
                        None => ok,
                        Some(g) => b.bin("arith.andi", &g, &ok, "i1"),
                    });
                }
                for ok in std::mem::take(&mut b.exact) {
                    guard = Some(match guard {
                        None => ok,
                        Some(g) => b.bin("arith.andi", &g, &ok, "i1"),
                    });
                }
                let e = b.elem.clone();
                let x = b.fresh();
                b.line(format!(
                    "{x} = tensor.extract %in{i}[{}] : {}",
                    ixs.join(", "),
                    ty(shape, &e)
                ));
                match guard {
                    None => x,
                    Some(g) => {
                        let z = b.fresh();
                        b.line(format!("{z} = arith.constant 0.000000e+00 : {e}"));
                        let r = b.fresh();
                        b.line(format!("{r} = arith.select {g}, {x}, {z} : {e}"));
                        r
                    }
                }
            }
        }
    }
    // Mapped accesses read their block argument; replace them before generating.
    let mut body_t = s.body.clone();
    // An access reads its block argument when it is exactly the access its map was made
    // for (same input, same iterators in the same dims).
    fn use_args(
        t: &Term,
        mapped: &[(usize, Vec<usize>)],
        pos: &dyn Fn(&str) -> Option<usize>,
    ) -> Term {
        match t {
            Term::Access(Src::Input(i), idx) => {
                let dims: Option<Vec<usize>> = idx.iter().map(|e| pos(e.as_var()?)).collect();
                match mapped
                    .iter()
                    .position(|(j, ds)| j == i && Some(ds) == dims.as_ref())
                {
                    // A marker input number: the block argument k.
                    Some(k) => Term::Access(Src::Input(ARG_BASE + k), idx.clone()),
                    None => t.clone(),
                }
            }
            Term::Bin(o, a, b) => Term::Bin(
                *o,
                Box::new(use_args(a, mapped, pos)),
                Box::new(use_args(b, mapped, pos)),
            ),
            _ => t.clone(),
        }
    }
    body_t = use_args(&body_t, &mapped, &pos);
    let v = term(&body_t, &mut b, inputs, &var, &range_of, &by_dim);
    let res = if s.sum.is_empty() {
        v
    } else {
        b.bin("arith.addf", "%acc", &v, elem)
    };
    b.line(format!("linalg.yield {res} : {elem}"));
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
    Ok(format!(
        "func.func @ollie({}) -> {rt} {{\n{head}    %r = linalg.generic {{indexing_maps = [{}], iterator_types = [{}]}} {ins_txt}outs({init} : {rt}) {{\n    ^bb0({}):\n{}    }} -> {rt}\n    return %r : {rt}\n}}\n",
        params.join(", "),
        maps.join(", "),
        its.join(", "),
        bargs.join(", "),
        b.out
    ))
}

/// `e` with each exact division `x / k` written as the `x floordiv k` the body computes
/// for it: [`Idx::range`] gives an exact division the range of its exact values only,
/// but the index is computed (and must be in bounds) at the other points too.
fn as_computed(e: &Idx) -> Idx {
    Idx {
        terms: e
            .terms
            .iter()
            .map(|(a, k)| {
                let a = match a {
                    Atom::Div(x, d) | Atom::FloorDiv(x, d) => {
                        Atom::FloorDiv(Box::new(as_computed(x)), *d)
                    }
                    Atom::Mod(x, d) => Atom::Mod(Box::new(as_computed(x)), *d),
                    Atom::Var(v) => Atom::Var(v.clone()),
                };
                (a, *k)
            })
            .collect(),
        c: e.c,
    }
}

/// Block-argument markers while generating a body.
const ARG_BASE: usize = 1 << 28;

#[derive(Default)]
pub struct ConvertTaToLinalgPass {
    lowered: u64,
}

impl Pass for ConvertTaToLinalgPass {
    fn argument(&self) -> &'static str {
        "convert-ta-to-linalg"
    }
    fn name(&self) -> &'static str {
        "ConvertTaToLinalg"
    }
    fn summary(&self) -> &'static str {
        "Lower ta.expr (eOperators) to linalg.generic"
    }
    fn description(&self) -> &'static str {
        "Each ta.expr becomes a linalg.generic over its traversal (parallel) and summation (reduction) iterators: accesses by distinct iterators covering a tensor exactly are indexing maps, other accesses are guarded tensor.extracts at computed indices (out-of-bounds reads are 0). Static shapes; a nested scope must have been split into its own ta.expr first."
    }
    fn run(&mut self, cx: &mut PassContext<'_>, top: OpId) -> Result<(), PassFailure> {
        // Nested scopes are first split into their own ops (as ollie-derive emits them),
        // which the next round lowers.
        for _round in 0..16 {
            let mut ops = vec![];
            cx.ir.walk_pre(top, &mut |o| {
                if cx.ir.name(o) == "ta.expr" {
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
    fn statistics(&self) -> Vec<Statistic> {
        vec![Statistic {
            name: "num-lowered",
            description: "ta.expr ops lowered to linalg.generic",
            value: self.lowered,
        }]
    }
    fn clone_pass(&self) -> Box<dyn Pass> {
        Box::new(ConvertTaToLinalgPass::default())
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
                let em = match crate::emit::emit(&s, &tys, &tys, rty, false, &c) {
                    Ok(e) => e,
                    Err(e) => return Err(fail(cx, e)),
                };
                let e = cx.ir.create_op(
                    ftuner_ir::OpSpec::new(ftuner_ir::intern_name("tensor.empty"), cx.ir.loc(op))
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
