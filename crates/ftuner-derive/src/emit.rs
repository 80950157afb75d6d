//! Instantiation: a derived expression written back as IR. Matched contractions become
//! `linalg.matmul` / `linalg.batch_matmul` on operands transposed (`linalg.transpose`) and
//! collapsed (`tensor.collapse_shape`) to their layout; every other scope becomes an
//! eOperator, a `ta.expr` (lowered by `convert-ta-to-linalg`). A matmul's result stays in
//! its own layout (batch, M, N); the eOperators reading it index it accordingly.
//!
//! The output is the MLIR text of a function `@ollie(%in0, ..., %init, %op0, ...)`: the
//! expression's inputs, the op's init, and the op's own operands (what `dim($j, d)` bounds
//! refer to); the pass parses it next to the op and inlines it. Dynamic dimensions are
//! read with `tensor.dim`; where a matmul operand's dynamic dim stands for an iterator
//! bounded by another tensor's dim, a `cf.assert` checks they agree at run time.
//!
//! The emitter's pieces: [`builder`] (the IR text primitives: constants, dims, empties,
//! reshapes, asserts), [`matmul`] (contractions), [`g2bmm`] (banded matmuls as sliding
//! chunks, per batch slice), [`conv`] (dense convs on a gathered image) and [`eop`]
//! (eOperators).

mod builder;
mod conv;
mod eop;
mod g2bmm;
mod matmul;

use crate::derive::{classify, Costs, Kind};
use ftuner_dialects::ta::{Idx, Iter, Scope, Src, Term};
use ftuner_ir::{Type, DYNAMIC};
use std::fmt::Write;

/// A tensor the emitted code produced: its SSA name, shape (`DYNAMIC` where unknown),
/// which traversal iterator each of its dims holds, and the iterators' lower bounds.
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
    /// G2BMMs instantiated (each is one batch_matmul, counted in `matmuls` too).
    pub g2bmms: usize,
    /// Dense convs instantiated (`linalg.conv_2d_nchw_fchw` on a gathered image).
    pub convs: usize,
}

struct Em {
    out: String,
    n: usize,
    elem: String,
    inputs: Vec<(String, Vec<i64>)>,
    /// Which inputs are fixed at load time (`pass::fixed_inputs`: what
    /// outline-weight-preparation hoists, so their transposes are not paid per call).
    fixed: Vec<bool>,
    /// Whether the scope being emitted may choose its layout (an eOperator reads it; the
    /// root's is the op's).
    layout_free: bool,
    /// Shapes of the op's operands (`%op{j}`), for `dim($j, d)` bounds.
    operands: Vec<Vec<i64>>,
    matmuls: usize,
    eops: usize,
    g2bmms: usize,
    convs: usize,
    costs: Costs,
}

/// `tensor<AxBx...xelem>` (`?` for `DYNAMIC`).
pub(crate) fn ty(shape: &[i64], elem: &str) -> String {
    let mut s = "tensor<".to_string();
    for d in shape {
        if *d == DYNAMIC {
            s.push_str("?x");
        } else {
            let _ = write!(s, "{d}x");
        }
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

/// `[0, 1], [2], ...` for consecutive groups of the given sizes.
fn reassociation(sizes: impl Iterator<Item = usize>) -> String {
    let mut at = 0usize;
    sizes
        .map(|n| {
            let g = (at..at + n).map(|x| x.to_string()).collect::<Vec<_>>();
            at += n;
            format!("[{}]", g.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// An iterator's extent: static, or DYNAMIC when bounded by a dim.
fn extent(i: &Iter) -> i64 {
    i.static_range().map_or(DYNAMIC, |(l, h)| h - l)
}

/// The two accesses of a product body, factor `first` (0 or 1) first.
type Access<'a> = (&'a Src, &'a [Idx]);
fn factor_pair(s: &Scope, first: usize) -> Result<(Access<'_>, Access<'_>), String> {
    let Term::Bin(_, a, b) = &s.body else {
        return Err("not a product".into());
    };
    let (Term::Access(sa, ia), Term::Access(sb, ib)) = (&**a, &**b) else {
        return Err("not a product of accesses".into());
    };
    let (x, y) = ((sa, ia.as_slice()), (sb, ib.as_slice()));
    Ok(if first == 0 { (x, y) } else { (y, x) })
}

/// An SSA tensor and its shape.
type Tensor = (String, Vec<i64>);

/// The shape classification matches a read of a child stage against: its extents in
/// traversal order (`None` for a dynamic one), or nothing when a traversal does not start
/// at 0 (plain-iterator matching needs reads from 0). One definition for the children
/// already emitted and for those about to be (so both agree on what a scope becomes).
fn logical_shape(
    extents: impl Iterator<Item = i64>,
    mut lows: impl Iterator<Item = i64>,
) -> Option<Vec<Option<i64>>> {
    lows.all(|l| l == 0)
        .then(|| extents.map(|d| (d != DYNAMIC).then_some(d)).collect())
}

/// The shape of input `i` of the expression (`None` for a dynamic dim).
fn input_shape(inputs: &[(String, Vec<i64>)], i: usize) -> Option<Vec<Option<i64>>> {
    Some(
        inputs
            .get(i)?
            .1
            .iter()
            .map(|d| (*d != DYNAMIC).then_some(*d))
            .collect(),
    )
}

/// Marks lifted children in a flattened body (above [`crate::egraph::CHILD`]'s range).
const CHILD_BASE: usize = 1 << 24;

impl Em {
    /// Emit `s` (post-order: nested scopes first); returns the tensor holding it.
    fn scope(&mut self, s: &Scope) -> Result<Stage, String> {
        fn lift(t: &Term, em: &mut Em, kids: &mut Vec<Stage>) -> Result<Term, String> {
            Ok(match t {
                Term::Access(Src::Scope(inner), idx) => {
                    let st = em.scope(inner)?;
                    kids.push(st);
                    Term::Access(Src::Input(CHILD_BASE + kids.len() - 1), idx.clone())
                }
                Term::Bin(o, a, b) => Term::Bin(
                    *o,
                    Box::new(lift(a, em, kids)?),
                    Box::new(lift(b, em, kids)?),
                ),
                _ => t.clone(),
            })
        }
        // Whether this scope's own layout is free (its reader is an eOperator, which reads
        // any layout as cheaply), and whether its children's are: what `s` is matched as,
        // its children's logical shapes taken from their traversals.
        let mine = self.layout_free;
        self.layout_free = {
            let inputs = &self.inputs;
            let pre = |src: &Src| -> Option<Vec<Option<i64>>> {
                match src {
                    // What the emitted child will hold: its traversal extents.
                    Src::Scope(inner) => logical_shape(
                        inner.trav.iter().map(extent),
                        inner.trav.iter().map(|i| i.lo),
                    ),
                    Src::Input(i) => input_shape(inputs, *i),
                }
            };
            matches!(classify(s, &pre), Kind::EOp)
        };
        let mut kids: Vec<Stage> = vec![];
        let body = lift(&s.body, self, &mut kids);
        self.layout_free = mine;
        let body = body?;
        let flat = Scope {
            trav: s.trav.clone(),
            sum: s.sum.clone(),
            body,
        };
        let inputs = self.inputs.clone();
        // Logical shapes of what accesses read (children: their traversal extents).
        let logical = |src: &Src| -> Option<Vec<Option<i64>>> {
            match src {
                Src::Input(i) if *i >= CHILD_BASE => {
                    let k = &kids[*i - CHILD_BASE];
                    let mut by_trav = vec![DYNAMIC; k.layout.len()];
                    for (j, p) in k.layout.iter().enumerate() {
                        by_trav[*p] = k.shape[j];
                    }
                    logical_shape(by_trav.into_iter(), k.lows.iter().copied())
                }
                Src::Input(i) => input_shape(&inputs, *i),
                Src::Scope(_) => None,
            }
        };
        match classify(&flat, &logical) {
            Kind::Contraction(c) => self.contraction(&flat, &c, &kids),
            Kind::G2bmm(g) => match self.g2bmm_looped(&flat, &g, &kids)? {
                Some(st) => Ok(st),
                None => self.g2bmm(&flat, &g, &kids),
            },
            Kind::DenseConv(d) => self.dense_conv(&flat, &d, &kids),
            _ => self.eop(&flat, &kids, !mine),
        }
    }

    /// The SSA name and physical shape of an access's source, and its indices in
    /// physical order (children: permuted by their layout, shifted by their lows).
    fn source(
        &self,
        src: &Src,
        idx: &[Idx],
        kids: &[Stage],
    ) -> Result<(String, Vec<i64>, Vec<Idx>), String> {
        match src {
            Src::Input(i) if *i >= CHILD_BASE => {
                let k = &kids[*i - CHILD_BASE];
                let phys = k
                    .layout
                    .iter()
                    .map(|p| idx[*p].offset(-k.lows[*p]))
                    .collect();
                Ok((k.name.clone(), k.shape.clone(), phys))
            }
            Src::Input(i) => {
                let (n, sh) = self.inputs.get(*i).ok_or("access to a missing input")?;
                Ok((n.clone(), sh.clone(), idx.to_vec()))
            }
            Src::Scope(_) => Err("internal error: nested scope not lifted".into()),
        }
    }
}

/// The function `@ollie(%in..., %init, %op...) -> result` computing `best` (plus the init
/// when `add_init`): `inputs` are the types of what the expression reads (`fixed`: which
/// of them derive from weights only), `operands` those of the op's own operands (its
/// bounds' reference).
pub fn emit(
    best: &Scope,
    inputs: &[Type],
    fixed: &[bool],
    operands: &[Type],
    result: Type,
    add_init: bool,
    costs: &Costs,
) -> Result<Emitted, String> {
    let elem = result.element_type().to_string();
    let shape_of = |t: Type| -> Result<Vec<i64>, String> {
        Ok(t.shape().ok_or("not a ranked tensor")?.to_vec())
    };
    let mut em = Em {
        out: String::new(),
        n: 0,
        elem: elem.clone(),
        inputs: inputs
            .iter()
            .enumerate()
            .map(|(i, t)| Ok((format!("%in{i}"), shape_of(*t)?)))
            .collect::<Result<_, String>>()?,
        fixed: fixed.to_vec(),
        layout_free: false,
        operands: operands
            .iter()
            .map(|t| shape_of(*t))
            .collect::<Result<_, String>>()?,
        matmuls: 0,
        eops: 0,
        g2bmms: 0,
        convs: 0,
        costs: costs.clone(),
    };
    let rshape = shape_of(result)?;
    let root = em.scope(best)?;
    let mut name = root.name.clone();
    let rt = ty(&rshape, &elem);
    let all: Vec<usize> = (0..rshape.len()).collect();
    if root.layout.iter().enumerate().any(|(j, p)| j != *p) {
        // Back to the traversal order: dim p of the result is the root's dim with layout p.
        let perm: Vec<i64> = (0..root.layout.len())
            .map(|p| root.layout.iter().position(|x| *x == p).unwrap_or(p) as i64)
            .collect();
        let dyns = em.dyn_dims("%init", &rshape, &all);
        let e = em.empty(&rshape, &dyns);
        let v = em.fresh();
        em.line(format!(
            "{v} = linalg.transpose ins({name} : {}) outs({e} : {rt}) permutation = [{}]",
            ty(&root.shape, &elem),
            list(&perm)
        ));
        name = v;
    } else if root.shape != rshape {
        // Same layout, more static knowledge on one side: a cast.
        let v = em.fresh();
        em.line(format!(
            "{v} = tensor.cast {name} : {} to {rt}",
            ty(&root.shape, &elem)
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
        let dyns = em.dyn_dims("%init", &rshape, &all);
        let e = em.empty(&rshape, &dyns);
        let v = em.fresh();
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
    params.extend(
        operands
            .iter()
            .enumerate()
            .map(|(j, t)| format!("%op{j}: {t}")),
    );
    let text = format!(
        "func.func @ollie({}) -> {rt} {{\n{}    return {name} : {rt}\n}}\n",
        params.join(", "),
        em.out
    );
    Ok(Emitted {
        text,
        matmuls: em.matmuls,
        eops: em.eops,
        g2bmms: em.g2bmms,
        convs: em.convs,
    })
}
