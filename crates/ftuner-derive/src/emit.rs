//! Instantiation: a derived expression written back as IR. Matched contractions become
//! `linalg.matmul` / `linalg.batch_matmul` on operands transposed (`linalg.transpose`) and
//! collapsed (`tensor.collapse_shape`) to their layout; every other scope becomes an
//! eOperator, a `ta.expr` (lowered by `convert-ta-to-linalg`). A matmul's result stays in
//! its own layout (batch, M, N); the eOperators reading it index it accordingly.
//!
//! The output is the MLIR text of a function `@ollie` taking the op's inputs (and its
//! init) and returning its result; the pass parses it next to the op and inlines it.

use crate::derive::{classify, Contraction, Kind};
use ftuner_dialects::ta::expr::print_scope;
use ftuner_dialects::ta::{Bound, Idx, Iter, Scope, Src, Term};
use ftuner_ir::Type;
use std::fmt::Write;

/// A tensor the emitted code produced: its SSA name, static shape, which traversal
/// iterator each of its dims holds, and the iterators' lower bounds.
#[derive(Clone, Debug)]
struct Stage {
    name: String,
    shape: Vec<i64>,
    /// layout[j] = the traversal position stored in dim j.
    layout: Vec<usize>,
    lows: Vec<i64>,
}

/// What was emitted.
#[derive(Debug, Default)]
pub struct Emitted {
    pub text: String,
    pub matmuls: usize,
    pub eops: usize,
}

struct Em {
    out: String,
    n: usize,
    elem: String,
    inputs: Vec<(String, Vec<i64>)>,
    matmuls: usize,
    eops: usize,
}

pub(crate) fn ty(shape: &[i64], elem: &str) -> String {
    let mut s = "tensor<".to_string();
    for d in shape {
        let _ = write!(s, "{d}x");
    }
    s.push_str(elem);
    s.push('>');
    s
}

fn list(v: &[i64]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn static_ext(i: &Iter) -> Result<i64, String> {
    i.static_range()
        .map(|(l, h)| h - l)
        .ok_or_else(|| format!("iterator '{}' has a dynamic extent", i.name))
}

impl Em {
    fn fresh(&mut self) -> String {
        self.n += 1;
        format!("%o{}", self.n)
    }
    fn line(&mut self, s: String) {
        self.out.push_str("    ");
        self.out.push_str(&s);
        self.out.push('\n');
    }

    /// Emit `s` (post-order: nested scopes first); returns the tensor holding it.
    fn scope(&mut self, s: &Scope) -> Result<Stage, String> {
        // Children first, in access order.
        let mut kids: Vec<Stage> = vec![];
        let mut body = s.body.clone();
        let mut next = 0usize;
        fn lift(
            t: &Term,
            em: &mut Em,
            kids: &mut Vec<Stage>,
            next: &mut usize,
        ) -> Result<Term, String> {
            Ok(match t {
                Term::Access(Src::Scope(inner), idx) => {
                    let st = em.scope(inner)?;
                    kids.push(st);
                    *next += 1;
                    Term::Access(Src::Input(CHILD_BASE + kids.len() - 1), idx.clone())
                }
                Term::Bin(o, a, b) => Term::Bin(
                    *o,
                    Box::new(lift(a, em, kids, next)?),
                    Box::new(lift(b, em, kids, next)?),
                ),
                _ => t.clone(),
            })
        }
        body = lift(&body, self, &mut kids, &mut next)?;
        let flat = Scope {
            trav: s.trav.clone(),
            sum: s.sum.clone(),
            body,
        };
        let inputs = self.inputs.clone();
        let kshapes: Vec<Vec<i64>> = kids
            .iter()
            .map(|k| k.layout.iter().map(|_| 0).collect())
            .collect();
        let _ = kshapes;
        // Logical shapes of what accesses read (children: their traversal extents).
        let logical = |src: &Src| -> Option<Vec<Option<i64>>> {
            match src {
                Src::Input(i) if *i >= CHILD_BASE => {
                    let k = &kids[*i - CHILD_BASE];
                    let mut v = vec![None; k.layout.len()];
                    for (j, p) in k.layout.iter().enumerate() {
                        v[*p] = Some(k.shape[j]);
                    }
                    // A child read must start at 0 for plain-iterator matching.
                    k.lows.iter().all(|l| *l == 0).then_some(v)
                }
                Src::Input(i) => Some(inputs.get(*i)?.1.iter().map(|d| Some(*d)).collect()),
                Src::Scope(_) => None,
            }
        };
        match classify(&flat, &logical) {
            Kind::Contraction(c) => self.contraction(&flat, &c, &kids),
            _ => self.eop(&flat, &kids),
        }
    }

    /// The SSA name and physical shape of an access's source, and its indices in
    /// physical order (children: permuted by their layout, shifted by their lows).
    fn source(&self, src: &Src, idx: &[Idx], kids: &[Stage]) -> (String, Vec<i64>, Vec<Idx>) {
        match src {
            Src::Input(i) if *i >= CHILD_BASE => {
                let k = &kids[*i - CHILD_BASE];
                let phys = k
                    .layout
                    .iter()
                    .map(|p| idx[*p].offset(-k.lows[*p]))
                    .collect();
                (k.name.clone(), k.shape.clone(), phys)
            }
            Src::Input(i) => (
                self.inputs[*i].0.clone(),
                self.inputs[*i].1.clone(),
                idx.to_vec(),
            ),
            Src::Scope(_) => unreachable!("nested scopes were lifted"),
        }
    }

    /// One operand of a matmul: sliced at constant indices, transposed to `order`,
    /// collapsed to the groups' sizes.
    fn operand(
        &mut self,
        src: &Src,
        idx: &[Idx],
        kids: &[Stage],
        groups: &[&[String]],
        s: &Scope,
    ) -> Result<String, String> {
        let (mut name, mut shape, phys) = self.source(src, idx, kids);
        // Constant indices: a rank-reducing slice.
        if phys.iter().any(|e| e.as_const().is_some()) {
            let offs: Vec<i64> = phys.iter().map(|e| e.as_const().unwrap_or(0)).collect();
            let sizes: Vec<i64> = phys
                .iter()
                .zip(&shape)
                .map(|(e, d)| if e.as_const().is_some() { 1 } else { *d })
                .collect();
            let kept: Vec<i64> = phys
                .iter()
                .zip(&shape)
                .filter(|(e, _)| e.as_const().is_none())
                .map(|(_, d)| *d)
                .collect();
            let v = self.fresh();
            let ones = vec![1; shape.len()];
            self.line(format!(
                "{v} = tensor.extract_slice {name}[{}] [{}] [{}] : {} to {}",
                list(&offs),
                list(&sizes),
                list(&ones),
                ty(&shape, &self.elem),
                ty(&kept, &self.elem)
            ));
            name = v;
            shape = kept;
        }
        let vars: Vec<String> = phys
            .iter()
            .filter_map(|e| e.as_var().map(str::to_string))
            .collect();
        let order: Vec<&String> = groups.iter().flat_map(|g| g.iter()).collect();
        let perm: Vec<usize> = order
            .iter()
            .map(|v| vars.iter().position(|x| x == *v))
            .collect::<Option<Vec<_>>>()
            .ok_or("operand does not hold an iterator of its group")?;
        if perm.iter().enumerate().any(|(j, p)| j != *p) {
            let tshape: Vec<i64> = perm.iter().map(|p| shape[*p]).collect();
            let (e, v) = (self.fresh(), self.fresh());
            self.line(format!(
                "{e} = tensor.empty() : {}",
                ty(&tshape, &self.elem)
            ));
            self.line(format!(
                "{v} = linalg.transpose ins({name} : {}) outs({e} : {}) permutation = [{}]",
                ty(&shape, &self.elem),
                ty(&tshape, &self.elem),
                list(&perm.iter().map(|p| *p as i64).collect::<Vec<_>>())
            ));
            name = v;
            shape = tshape;
        }
        let nonempty: Vec<&[String]> = groups.iter().copied().filter(|g| !g.is_empty()).collect();
        if nonempty.iter().any(|g| g.len() > 1) {
            let mut reassoc = vec![];
            let mut cshape = vec![];
            let mut at = 0usize;
            for g in &nonempty {
                reassoc.push(format!(
                    "[{}]",
                    (at..at + g.len())
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                cshape.push(shape[at..at + g.len()].iter().product::<i64>());
                at += g.len();
            }
            let v = self.fresh();
            self.line(format!(
                "{v} = tensor.collapse_shape {name} [{}] : {} into {}",
                reassoc.join(", "),
                ty(&shape, &self.elem),
                ty(&cshape, &self.elem)
            ));
            name = v;
        }
        let _ = s;
        Ok(name)
    }

    fn contraction(&mut self, s: &Scope, c: &Contraction, kids: &[Stage]) -> Result<Stage, String> {
        let (Term::Bin(_, a, b), true) = (&s.body, true) else {
            return Err("not a product".into());
        };
        let (Term::Access(sa, ia), Term::Access(sb, ib)) = (&**a, &**b) else {
            return Err("not a product of accesses".into());
        };
        // X holds the M iterators, Y the N ones.
        let a_has_m = ia
            .iter()
            .any(|e| e.as_var().is_some_and(|v| c.m.iter().any(|m| m == v)));
        let ((sx, ix), (sy, iy)) = if a_has_m {
            ((sa, ia), (sb, ib))
        } else {
            ((sb, ib), (sa, ia))
        };
        let ext = |v: &String| s.iter(v).map(static_ext).transpose();
        let size = |g: &[String]| -> Result<i64, String> {
            g.iter().map(|v| ext(v).map(|e| e.unwrap_or(1))).product()
        };
        let x = self.operand(sx, ix, kids, &[&c.batch, &c.m, &c.k], s)?;
        let y = self.operand(sy, iy, kids, &[&c.batch, &c.k, &c.n], s)?;
        let (bs, ms, ns, ks) = (size(&c.batch)?, size(&c.m)?, size(&c.n)?, size(&c.k)?);
        let batched = !c.batch.is_empty();
        let (xs, ys, rs) = if batched {
            (vec![bs, ms, ks], vec![bs, ks, ns], vec![bs, ms, ns])
        } else {
            (vec![ms, ks], vec![ks, ns], vec![ms, ns])
        };
        let (z, zero, f, mm) = (self.fresh(), self.fresh(), self.fresh(), self.fresh());
        let rt = ty(&rs, &self.elem);
        self.line(format!("{z} = tensor.empty() : {rt}"));
        self.line(format!(
            "{zero} = arith.constant 0.000000e+00 : {}",
            self.elem
        ));
        self.line(format!(
            "{f} = linalg.fill ins({zero} : {}) outs({z} : {rt}) -> {rt}",
            self.elem
        ));
        self.line(format!(
            "{mm} = linalg.{} ins({x}, {y} : {}, {}) outs({f} : {rt}) -> {rt}",
            if batched { "batch_matmul" } else { "matmul" },
            ty(&xs, &self.elem),
            ty(&ys, &self.elem)
        ));
        self.matmuls += 1;
        // Expanded to (batch..., m..., n...).
        let groups: Vec<&Vec<String>> = [&c.batch, &c.m, &c.n]
            .into_iter()
            .filter(|g| !g.is_empty())
            .collect();
        let full: Vec<&String> = groups.iter().flat_map(|g| g.iter()).collect();
        let fshape: Vec<i64> = full
            .iter()
            .map(|v| ext(v).map(|e| e.unwrap_or(1)))
            .collect::<Result<_, _>>()?;
        let mut name = mm;
        if groups.iter().any(|g| g.len() > 1) {
            let mut reassoc = vec![];
            let mut at = 0usize;
            for g in &groups {
                reassoc.push(format!(
                    "[{}]",
                    (at..at + g.len())
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                at += g.len();
            }
            let v = self.fresh();
            self.line(format!(
                "{v} = tensor.expand_shape {name} [{}] output_shape [{}] : {rt} into {}",
                reassoc.join(", "),
                list(&fshape),
                ty(&fshape, &self.elem)
            ));
            name = v;
        }
        let layout: Vec<usize> = full
            .iter()
            .map(|v| s.trav.iter().position(|i| &i.name == *v))
            .collect::<Option<_>>()
            .ok_or("a matmul dim is not a traversal iterator")?;
        Ok(Stage {
            name,
            shape: fshape,
            layout,
            lows: s.trav.iter().map(|i| i.lo).collect(),
        })
    }

    fn eop(&mut self, s: &Scope, kids: &[Stage]) -> Result<Stage, String> {
        // Inputs of the ta.expr: distinct sources in order of first access.
        let mut names: Vec<(String, Vec<i64>)> = vec![];
        let mut map_src = |name: String, shape: Vec<i64>| -> usize {
            match names.iter().position(|(n, _)| *n == name) {
                Some(p) => p,
                None => {
                    names.push((name, shape));
                    names.len() - 1
                }
            }
        };
        fn go(
            t: &Term,
            em: &Em,
            kids: &[Stage],
            map_src: &mut dyn FnMut(String, Vec<i64>) -> usize,
        ) -> Term {
            match t {
                Term::Access(src, idx) => {
                    let (n, sh, phys) = em.source(src, idx, kids);
                    Term::Access(Src::Input(map_src(n, sh)), phys)
                }
                Term::Bin(o, a, b) => Term::Bin(
                    *o,
                    Box::new(go(a, em, kids, map_src)),
                    Box::new(go(b, em, kids, map_src)),
                ),
                _ => t.clone(),
            }
        }
        let body = go(&s.body, self, kids, &mut map_src);
        let mut trav = s.trav.clone();
        for i in trav.iter_mut().chain(&mut s.sum.clone()) {
            if i.hi.dim.is_some() {
                return Err(format!("iterator '{}' has a dynamic extent", i.name));
            }
        }
        for i in &mut trav {
            i.hi = Bound::fixed(i.hi.c);
        }
        let e = Scope {
            trav,
            sum: s.sum.clone(),
            body,
        };
        let shape: Vec<i64> = s.trav.iter().map(static_ext).collect::<Result<_, _>>()?;
        let text = print_scope(&e, &|i| names[i].0.clone());
        let v = self.fresh();
        let ins: Vec<String> = names.iter().map(|(n, _)| n.clone()).collect();
        let tys: Vec<String> = names.iter().map(|(_, s)| ty(s, &self.elem)).collect();
        self.line(format!(
            "{v} = ta.expr {text} ins({} : {}) -> {}",
            ins.join(", "),
            tys.join(", "),
            ty(&shape, &self.elem)
        ));
        self.eops += 1;
        Ok(Stage {
            name: v,
            shape,
            layout: (0..s.trav.len()).collect(),
            lows: s.trav.iter().map(|i| i.lo).collect(),
        })
    }
}

/// Marks lifted children in a flattened body (below [`crate::egraph::CHILD`]'s range).
const CHILD_BASE: usize = 1 << 24;

/// The function `@ollie(%in0, ..., [%init]) -> result` computing `best` (plus the init
/// when `add_init`), for inputs of the given static types.
pub fn emit(
    best: &Scope,
    inputs: &[Type],
    result: Type,
    add_init: bool,
) -> Result<Emitted, String> {
    let elem = result.element_type().to_string();
    let static_shape = |t: Type| -> Result<Vec<i64>, String> {
        let s = t.shape().ok_or("not a ranked tensor")?;
        if s.contains(&ftuner_ir::DYNAMIC) {
            return Err("dynamic shapes are not derived yet".into());
        }
        Ok(s.to_vec())
    };
    let mut em = Em {
        out: String::new(),
        n: 0,
        elem: elem.clone(),
        inputs: inputs
            .iter()
            .enumerate()
            .map(|(i, t)| Ok((format!("%in{i}"), static_shape(*t)?)))
            .collect::<Result<_, String>>()?,
        matmuls: 0,
        eops: 0,
    };
    let rshape = static_shape(result)?;
    let root = em.scope(best)?;
    let mut name = root.name.clone();
    let rt = ty(&rshape, &elem);
    if root.layout.iter().enumerate().any(|(j, p)| j != *p) {
        // Back to the traversal order: dim p of the result is the root's dim with layout p.
        let perm: Vec<i64> = (0..root.layout.len())
            .map(|p| root.layout.iter().position(|x| *x == p).unwrap_or(p) as i64)
            .collect();
        let (e, v) = (em.fresh(), em.fresh());
        em.line(format!("{e} = tensor.empty() : {rt}"));
        em.line(format!(
            "{v} = linalg.transpose ins({name} : {}) outs({e} : {rt}) permutation = [{}]",
            ty(&root.shape, &elem),
            list(&perm)
        ));
        name = v;
    }
    if add_init {
        let rank = rshape.len();
        let dims = (0..rank)
            .map(|d| format!("d{d}"))
            .collect::<Vec<_>>()
            .join(", ");
        let id = format!("affine_map<({dims}) -> ({dims})>");
        let (e, v) = (em.fresh(), em.fresh());
        em.line(format!("{e} = tensor.empty() : {rt}"));
        em.line(format!(
            "{v} = linalg.generic {{indexing_maps = [{id}, {id}, {id}], iterator_types = [{}]}} ins({name}, %init : {rt}, {rt}) outs({e} : {rt}) {{\n    ^bb0(%a: {elem}, %b: {elem}, %o: {elem}):\n      %s = arith.addf %a, %b : {elem}\n      linalg.yield %s : {elem}\n    }} -> {rt}",
            vec!["\"parallel\""; rank].join(", ")
        ));
        name = v;
    }
    let mut params: Vec<String> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| format!("%in{i}: {t}"))
        .collect();
    params.push(format!("%init: {rt}"));
    let text = format!(
        "func.func @ollie({}) -> {rt} {{\n{}    return {name} : {rt}\n}}\n",
        params.join(", "),
        em.out
    );
    Ok(Emitted {
        text,
        matmuls: em.matmuls,
        eops: em.eops,
    })
}
