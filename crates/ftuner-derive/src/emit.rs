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

use crate::derive::{
    classify, g2bmm_by_residue, g2bmm_cols, g2bmm_plan, Contraction, Costs, DenseConv, G2bmm, Kind,
};
use ftuner_dialects::ta::expr::print_scope;
use ftuner_dialects::ta::{Bound, Idx, Iter, Scope, Src, Term};
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

/// Marks lifted children in a flattened body (above [`crate::egraph::CHILD`]'s range).
const CHILD_BASE: usize = 1 << 24;

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
    fn cst(&mut self, v: i64) -> String {
        let c = self.fresh();
        self.line(format!("{c} = arith.constant {v} : index"));
        c
    }
    /// Dim `d` of tensor `t` (of `shape`) as an SSA index.
    fn dim(&mut self, t: &str, shape: &[i64], d: usize) -> String {
        if shape[d] != DYNAMIC {
            return self.cst(shape[d]);
        }
        let c = self.cst(d as i64);
        let v = self.fresh();
        let tt = ty(shape, &self.elem);
        self.line(format!("{v} = tensor.dim {t}, {c} : {tt}"));
        v
    }
    /// The dynamic dims of `shape` read from tensor `t` (for `tensor.empty`).
    fn dyn_dims(&mut self, t: &str, tshape: &[i64], dims: &[usize]) -> Vec<String> {
        dims.iter()
            .filter(|d| tshape[**d] == DYNAMIC)
            .map(|d| self.dim(t, tshape, *d))
            .collect()
    }
    fn empty(&mut self, shape: &[i64], dyn_vals: &[String]) -> String {
        let e = self.fresh();
        let t = ty(shape, &self.elem);
        self.line(format!("{e} = tensor.empty({}) : {t}", dyn_vals.join(", ")));
        e
    }
    /// `t` (of `shape`) with consecutive dims collapsed in groups of the given sizes
    /// (`tensor.collapse_shape`; `t` itself when every group is one dim).
    fn collapse_groups(&mut self, t: &str, shape: &[i64], groups: &[usize]) -> (String, Vec<i64>) {
        if groups.iter().all(|n| *n == 1) {
            return (t.to_string(), shape.to_vec());
        }
        let mut cs = vec![];
        let mut at = 0;
        for n in groups {
            let part = &shape[at..at + n];
            cs.push(if part.contains(&DYNAMIC) {
                DYNAMIC
            } else {
                part.iter().product()
            });
            at += n;
        }
        let v = self.fresh();
        self.line(format!(
            "{v} = tensor.collapse_shape {t} [{}] : {} into {}",
            reassociation(groups.iter().copied()),
            ty(shape, &self.elem),
            ty(&cs, &self.elem)
        ));
        (v, cs)
    }
    /// `t` (of `shape`, its dim 0 the flattened leading `nb` dims of `like`) with that dim
    /// expanded back to them (`tensor.expand_shape`; `t` itself when `nb` is 1).
    fn expand_leading(
        &mut self,
        t: &str,
        shape: &[i64],
        like: &Stage,
        nb: usize,
    ) -> (String, Vec<i64>) {
        if nb == 1 {
            return (t.to_string(), shape.to_vec());
        }
        let mut fshape: Vec<i64> = like.shape[..nb].to_vec();
        fshape.extend_from_slice(&shape[1..]);
        let mut vals = vec![];
        for (j, e) in fshape.iter().enumerate() {
            vals.push(if *e != DYNAMIC {
                e.to_string()
            } else {
                self.dim(&like.name, &like.shape, j)
            });
        }
        let mut groups = vec![nb];
        groups.extend(std::iter::repeat_n(1, shape.len() - 1));
        let v = self.fresh();
        self.line(format!(
            "{v} = tensor.expand_shape {t} [{}] output_shape [{}] : {} into {}",
            reassociation(groups.into_iter()),
            vals.join(", "),
            ty(shape, &self.elem),
            ty(&fshape, &self.elem)
        ));
        (v, fshape)
    }
    /// A matched operator `op` (a linalg op with two inputs) of `x` and `y` into a
    /// zero-filled tensor of `shape` (its dynamic dims given); returns its result.
    fn onto_zeros(
        &mut self,
        op: &str,
        (x, xs): (&str, &[i64]),
        (y, ys): (&str, &[i64]),
        shape: &[i64],
        dyn_vals: &[String],
    ) -> String {
        let z = self.empty(shape, dyn_vals);
        let rt = ty(shape, &self.elem);
        let (zero, f, r) = (self.fresh(), self.fresh(), self.fresh());
        self.line(format!(
            "{zero} = arith.constant 0.000000e+00 : {}",
            self.elem
        ));
        self.line(format!(
            "{f} = linalg.fill ins({zero} : {}) outs({z} : {rt}) -> {rt}",
            self.elem
        ));
        self.line(format!(
            "{r} = {op} ins({x}, {y} : {}, {}) outs({f} : {rt}) -> {rt}",
            ty(xs, &self.elem),
            ty(ys, &self.elem)
        ));
        r
    }
    /// For each dynamic dim `d` of tensor `t` (read by iterator `vars[d]`), a run-time
    /// check that it equals the iterator's extent (else the operator would read outside).
    fn assert_extents(
        &mut self,
        s: &Scope,
        t: &str,
        shape: &[i64],
        vars: &[String],
        what: &str,
    ) -> Result<(), String> {
        for (d, v) in vars.iter().enumerate() {
            if shape[d] != DYNAMIC {
                continue;
            }
            let it = s.iter(v).ok_or("a dim is not read by an iterator")?.clone();
            let have = self.dim(t, shape, d);
            let want = self.bound(&it.hi)?;
            let ok = self.fresh();
            self.line(format!("{ok} = arith.cmpi eq, {have}, {want} : index"));
            self.line(format!(
                "cf.assert {ok}, \"ollie-derive: {what}'s dim {d} differs from the extent of '{}'\"",
                it.name
            ));
        }
        Ok(())
    }
    /// The value of a `dim($j, d) + c` bound, from the op's operands.
    fn bound(&mut self, b: &Bound) -> Result<String, String> {
        let (j, d) = b.dim.ok_or("not a dynamic bound")?;
        let shape = self
            .operands
            .get(j)
            .ok_or("a bound names a missing operand")?
            .clone();
        let v = self.dim(&format!("%op{j}"), &shape, d);
        if b.c == 0 {
            return Ok(v);
        }
        let c = self.cst(b.c);
        let r = self.fresh();
        self.line(format!("{r} = arith.addi {v}, {c} : index"));
        Ok(r)
    }

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
        let mut kids: Vec<Stage> = vec![];
        let body = lift(&s.body, self, &mut kids)?;
        let flat = Scope {
            trav: s.trav.clone(),
            sum: s.sum.clone(),
            body,
        };
        let inputs = self.inputs.clone();
        // Logical shapes of what accesses read (children: their traversal extents).
        let dynamic = |d: i64| (d != DYNAMIC).then_some(d);
        let logical = |src: &Src| -> Option<Vec<Option<i64>>> {
            match src {
                Src::Input(i) if *i >= CHILD_BASE => {
                    let k = &kids[*i - CHILD_BASE];
                    let mut v = vec![None; k.layout.len()];
                    for (j, p) in k.layout.iter().enumerate() {
                        v[*p] = dynamic(k.shape[j]);
                    }
                    // A child read must start at 0 for plain-iterator matching.
                    k.lows.iter().all(|l| *l == 0).then_some(v)
                }
                Src::Input(i) => Some(inputs.get(*i)?.1.iter().map(|d| dynamic(*d)).collect()),
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
            _ => self.eop(&flat, &kids),
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

    /// One operand of a matmul: sliced at constant indices, transposed to the groups'
    /// order, dynamic dims checked against their iterators' bounds, collapsed. Returns the
    /// collapsed tensor and its shape, and the transposed (uncollapsed) one.
    fn operand(
        &mut self,
        s: &Scope,
        src: &Src,
        idx: &[Idx],
        kids: &[Stage],
        groups: &[&[String]],
    ) -> Result<(Tensor, Tensor), String> {
        let (mut name, mut shape, phys) = self.source(src, idx, kids)?;
        // Constant indices: a rank-reducing slice.
        if phys.iter().any(|e| e.as_const().is_some()) {
            let offs: Vec<i64> = phys.iter().map(|e| e.as_const().unwrap_or(0)).collect();
            let mut sizes = vec![];
            for (d, e) in phys.iter().enumerate() {
                sizes.push(if e.as_const().is_some() {
                    "1".to_string()
                } else if shape[d] == DYNAMIC {
                    self.dim(&name, &shape, d)
                } else {
                    shape[d].to_string()
                });
            }
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
                sizes.join(", "),
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
        // Dynamic dims: equal to their iterators' bounds, or the matmul reads outside.
        self.assert_extents(s, &name, &shape, &vars, "a matmul operand")?;
        let order: Vec<&String> = groups.iter().flat_map(|g| g.iter()).collect();
        let perm: Vec<usize> = order
            .iter()
            .map(|v| vars.iter().position(|x| x == *v))
            .collect::<Option<Vec<_>>>()
            .ok_or("operand does not hold an iterator of its group")?;
        if perm.iter().enumerate().any(|(j, p)| j != *p) {
            let tshape: Vec<i64> = perm.iter().map(|p| shape[*p]).collect();
            let dyns = self.dyn_dims(&name, &shape, &perm);
            let e = self.empty(&tshape, &dyns);
            let v = self.fresh();
            self.line(format!(
                "{v} = linalg.transpose ins({name} : {}) outs({e} : {}) permutation = [{}]",
                ty(&shape, &self.elem),
                ty(&tshape, &self.elem),
                list(&perm.iter().map(|p| *p as i64).collect::<Vec<_>>())
            ));
            name = v;
            shape = tshape;
        }
        let full = (name.clone(), shape.clone());
        let sizes: Vec<usize> = groups.iter().map(|g| g.len()).filter(|n| *n > 0).collect();
        let (name, shape) = self.collapse_groups(&name, &shape, &sizes);
        Ok(((name, shape), full))
    }

    fn contraction(&mut self, s: &Scope, c: &Contraction, kids: &[Stage]) -> Result<Stage, String> {
        // X holds the M iterators, Y the N ones.
        let ((_, ia), _) = factor_pair(s, 0)?;
        let a_has_m = ia
            .iter()
            .any(|e| e.as_var().is_some_and(|v| c.m.iter().any(|m| m == v)));
        let ((sx, ix), (sy, iy)) = factor_pair(s, usize::from(!a_has_m))?;
        let ((x, xs), xfull) = self.operand(s, sx, ix, kids, &[&c.batch, &c.m, &c.k])?;
        let ((y, ys), yfull) = self.operand(s, sy, iy, kids, &[&c.batch, &c.k, &c.n])?;
        let batched = !c.batch.is_empty();
        // Result (b, m, n): b and m from X, n from Y.
        let (rs, rdyn) = {
            let nb = usize::from(batched);
            let mut rs = xs[..nb + 1].to_vec();
            rs.push(ys[nb + 1]);
            let mut dyns = self.dyn_dims(&x, &xs, &(0..nb + 1).collect::<Vec<_>>());
            if ys[nb + 1] == DYNAMIC {
                dyns.push(self.dim(&y, &ys, nb + 1));
            }
            (rs, dyns)
        };
        let op = if batched {
            "linalg.batch_matmul"
        } else {
            "linalg.matmul"
        };
        let mm = self.onto_zeros(op, (&x, &xs), (&y, &ys), &rs, &rdyn);
        let rt = ty(&rs, &self.elem);
        self.matmuls += 1;
        // Expanded to (batch..., m..., n...): sizes from the transposed operands.
        let groups: Vec<&Vec<String>> = [&c.batch, &c.m, &c.n]
            .into_iter()
            .filter(|g| !g.is_empty())
            .collect();
        let full: Vec<&String> = groups.iter().flat_map(|g| g.iter()).collect();
        let mut fshape = vec![];
        let mut fvals = vec![];
        for v in &full {
            let ext = extent(s.iter(v).ok_or("matmul dim is not an iterator")?);
            fshape.push(ext);
            let (t, tshape, pos) = if c.n.contains(v) {
                let p = c.batch.len() + c.k.len() + c.n.iter().position(|x| x == *v).unwrap_or(0);
                (&yfull.0, &yfull.1, p)
            } else {
                let p = c
                    .batch
                    .iter()
                    .chain(&c.m)
                    .position(|x| x == *v)
                    .unwrap_or(0);
                (&xfull.0, &xfull.1, p)
            };
            let (t, tshape) = (t.clone(), tshape.clone());
            fvals.push(if ext == DYNAMIC {
                self.dim(&t, &tshape, pos)
            } else {
                ext.to_string()
            });
        }
        let mut name = mm;
        let mut shape = rs;
        if groups.iter().any(|g| g.len() > 1) {
            let v = self.fresh();
            self.line(format!(
                "{v} = tensor.expand_shape {name} [{}] output_shape [{}] : {rt} into {}",
                reassociation(groups.iter().map(|g| g.len())),
                fvals.join(", "),
                ty(&fshape, &self.elem)
            ));
            name = v;
            shape = fshape;
        }
        let layout: Vec<usize> = full
            .iter()
            .map(|v| s.trav.iter().position(|i| &i.name == *v))
            .collect::<Option<_>>()
            .ok_or("a matmul dim is not a traversal iterator")?;
        Ok(Stage {
            name,
            shape,
            layout,
            lows: s.trav.iter().map(|i| i.lo).collect(),
        })
    }

    /// A G2BMM one batch slice at a time: the batch iterators both operands read plainly
    /// (one dim each, from 0) become `scf.for` loops; each iteration runs the sliding
    /// chunks ([`Em::g2bmm`]) on rank-reduced slices and inserts its band into the result.
    /// The chunk products of one slice stay in cache: over the whole batch at once they go
    /// through DRAM (12 heads x 1024 rows, batch 4: 52 MB). None when no batch iterator
    /// qualifies.
    fn g2bmm_looped(
        &mut self,
        s: &Scope,
        g: &G2bmm,
        kids: &[Stage],
    ) -> Result<Option<Stage>, String> {
        let ((sa, ia), (sb, ib)) = factor_pair(s, g.rows)?;
        let (an, ash, aph) = self.source(sa, ia, kids)?;
        let (bn, bsh, bph) = self.source(sb, ib, kids)?;
        let plain_dim = |ph: &[Idx], v: &str| -> Option<usize> {
            let users: Vec<usize> = (0..ph.len()).filter(|d| ph[*d].uses(v)).collect();
            match users[..] {
                [d] if ph[d].as_var() == Some(v) => Some(d),
                _ => None,
            }
        };
        // (iterator, its dim in A, in B)
        let mut looped: Vec<(Iter, usize, usize)> = vec![];
        for v in &g.batch {
            let it = s.iter(v).ok_or("a G2BMM iterator is missing")?;
            if it.lo != 0 || (it.hi.dim.is_some() && it.hi.c != 0) {
                continue;
            }
            if let (Some(da), Some(db)) = (plain_dim(&aph, v), plain_dim(&bph, v)) {
                looped.push((it.clone(), da, db));
            }
        }
        if looped.is_empty() {
            return Ok(None);
        }
        let shape: Vec<i64> = s.trav.iter().map(extent).collect();
        let rt = ty(&shape, &self.elem);
        // The result, filled slice by slice: sizes from the loop bounds.
        let mut bounds = vec![];
        for (it, _, _) in &looped {
            bounds.push(match it.static_range() {
                Some((_, h)) => self.cst(h),
                None => self.bound(&it.hi)?,
            });
        }
        let mut dyn_sizes = vec![];
        for (p, it) in s.trav.iter().enumerate() {
            if shape[p] != DYNAMIC {
                continue;
            }
            match looped.iter().position(|(l, _, _)| l.name == it.name) {
                Some(j) => dyn_sizes.push(bounds[j].clone()),
                None => dyn_sizes.push(self.bound(&it.hi)?),
            }
        }
        let init = self.empty(&shape, &dyn_sizes);
        let (c0, c1) = (self.cst(0), self.cst(1));
        let mut ivs = vec![];
        let mut accs = vec![init];
        for (j, _) in looped.iter().enumerate() {
            let (iv, acc, r) = (self.fresh(), self.fresh(), self.fresh());
            self.line(format!(
                "{r} = scf.for {iv} = {c0} to {} step {c1} iter_args({acc} = {}) -> ({rt}) {{",
                bounds[j], accs[j]
            ));
            ivs.push((iv, r));
            accs.push(acc);
        }
        // Rank-reduced slices of A and B at the loop indices.
        let slice =
            |em: &mut Em, name: &str, sh: &[i64], dims: Vec<usize>| -> Result<Stage, String> {
                let mut offs = vec![];
                let mut sizes = vec![];
                let mut kept = vec![];
                for d in 0..sh.len() {
                    match dims.iter().position(|x| *x == d) {
                        Some(j) => {
                            offs.push(ivs[j].0.clone());
                            sizes.push("1".to_string());
                        }
                        None => {
                            offs.push("0".into());
                            sizes.push(if sh[d] == DYNAMIC {
                                em.dim(name, sh, d)
                            } else {
                                sh[d].to_string()
                            });
                            kept.push(sh[d]);
                        }
                    }
                }
                let v = em.fresh();
                em.line(format!(
                    "{v} = tensor.extract_slice {name}[{}] [{}] [{}] : {} to {}",
                    offs.join(", "),
                    sizes.join(", "),
                    vec!["1"; sh.len()].join(", "),
                    ty(sh, &em.elem),
                    ty(&kept, &em.elem)
                ));
                Ok(Stage {
                    name: v,
                    layout: (0..kept.len()).collect(),
                    lows: vec![0; kept.len()],
                    shape: kept,
                })
            };
        let a_slice = slice(self, &an, &ash, looped.iter().map(|l| l.1).collect())?;
        let b_slice = slice(self, &bn, &bsh, looped.iter().map(|l| l.2).collect())?;
        let drop = |ph: &[Idx], pick: &dyn Fn(&(Iter, usize, usize)) -> usize| -> Vec<Idx> {
            (0..ph.len())
                .filter(|d| !looped.iter().any(|l| pick(l) == *d))
                .map(|d| ph[d].clone())
                .collect()
        };
        let mut kids2 = kids.to_vec();
        kids2.push(a_slice);
        kids2.push(b_slice);
        let ra = Term::Access(Src::Input(CHILD_BASE + kids.len()), drop(&aph, &|l| l.1));
        let rb = Term::Access(
            Src::Input(CHILD_BASE + kids.len() + 1),
            drop(&bph, &|l| l.2),
        );
        let body = if g.rows == 0 {
            Term::product(ra, rb)
        } else {
            Term::product(rb, ra)
        };
        let is_looped = |v: &str| looped.iter().any(|l| l.0.name == v);
        let inner = Scope {
            trav: s
                .trav
                .iter()
                .filter(|t| !is_looped(&t.name))
                .cloned()
                .collect(),
            sum: s.sum.clone(),
            body,
        };
        let ig = G2bmm {
            batch: g.batch.iter().filter(|v| !is_looped(v)).cloned().collect(),
            ..g.clone()
        };
        let band = self.g2bmm(&inner, &ig, &kids2)?;
        // Insert the band at the loop indices.
        let mut offs = vec![];
        let mut sizes = vec![];
        for (p, it) in s.trav.iter().enumerate() {
            match looped.iter().position(|l| l.0.name == it.name) {
                Some(j) => {
                    offs.push(ivs[j].0.clone());
                    sizes.push("1".to_string());
                }
                None => {
                    offs.push("0".into());
                    let q = inner
                        .trav
                        .iter()
                        .position(|t| t.name == it.name)
                        .unwrap_or(0);
                    sizes.push(if shape[p] == DYNAMIC {
                        self.dim(&band.name, &band.shape, q)
                    } else {
                        shape[p].to_string()
                    });
                }
            }
        }
        let n = looped.len();
        let ins = self.fresh();
        self.line(format!(
            "{ins} = tensor.insert_slice {} into {}[{}] [{}] [{}] : {} into {rt}",
            band.name,
            accs[n],
            offs.join(", "),
            sizes.join(", "),
            vec!["1"; shape.len()].join(", "),
            ty(&band.shape, &self.elem)
        ));
        let mut y = ins;
        // The slices are independent (each writes its own part of the result and reads
        // only inputs): the loop with the most static iterations (heads, say) runs on the
        // thread pool (`ftuner.parallel`). Only the outermost marked loop of a nest is
        // outlined, so the batch_matmul's own marked loops then run serially per slice;
        // with no static loop of 2 or more (a dynamic batch alone) nothing is marked and
        // the batch_matmul keeps the pool.
        let par = (0..n)
            .filter_map(|j| looped[j].0.static_range().map(|(l, h)| (h - l, j)))
            .filter(|(e, _)| *e >= 2)
            .max()
            .map(|(_, j)| j);
        for j in (0..n).rev() {
            self.line(format!("scf.yield {y} : {rt}"));
            let mark = if par == Some(j) {
                " {ftuner.parallel}"
            } else {
                ""
            };
            self.line(format!("}}{mark}"));
            y = ivs[j].1.clone();
        }
        Ok(Some(Stage {
            name: y,
            shape,
            layout: (0..s.trav.len()).collect(),
            lows: s.trav.iter().map(|i| i.lo).collect(),
        }))
    }

    /// A G2BMM as sliding chunks: rows `i` in chunks of `m` (`i = lo + m·q + r`); chunk
    /// `q` of A (`m` rows, zero beyond the end) is multiplied by the `m + δ·(W - 1)` rows
    /// of B its band touches (gathered transposed: `j = r + δ·(w - w_lo)`), one
    /// batch_matmul over (batch, q); the band is read back from the products at
    /// `[q, r, r + δ·(w - w_lo)]`.
    fn g2bmm(&mut self, s: &Scope, g: &G2bmm, kids: &[Stage]) -> Result<Stage, String> {
        let ((sa, ia), (sb, ib)) = factor_pair(s, g.rows)?;
        let it = |v: &str| s.iter(v).cloned().ok_or("a G2BMM iterator is missing");
        let (iit, wit) = (it(&g.i)?, it(&g.w)?);
        let (wlo, whi) = wit.static_range().ok_or("a G2BMM with a dynamic band")?;
        let m = g2bmm_plan(s, g, &self.costs).0;
        // Per residue (see `g2bmm_by_residue`): rows `δ·(m·q + r) + p`, dense windows.
        let dil = if g2bmm_by_residue(s, g) { g.delta } else { 1 };
        let jn = g2bmm_cols(m, whi - wlo, g.delta / dil);
        let (q, r, j, p) = ("g2q", "g2r", "g2j", "g2p");
        if [q, r, j, p].iter().any(|v| s.iter(v).is_some()) {
            return Err("iterator names clash".into());
        }
        // The chunk count: static, or ceil(L / m) of a dynamic row count L (rows [0, L),
        // L a dim of an operand). A dynamic count sizes the chunk tensors through a
        // `tensor.empty` of that length (the eOperators' bound for q); the band read back
        // is sized by L's own tensor.
        let mut sizing: Vec<(String, Tensor, usize)> = vec![];
        let (ilo, q_iter) = match iit.static_range() {
            Some((ilo, ihi)) => (ilo, Iter::new(q, 0, (ihi - ilo + m - 1) / m)),
            None => {
                let (oj, od) = iit
                    .dim_range()
                    .ok_or("a G2BMM whose dynamic rows do not start at 0 and end at a dim")?;
                let len = self.bound(&iit.hi)?;
                let mc = self.cst(m * dil);
                let nq = self.fresh();
                self.line(format!("{nq} = arith.ceildivsi {len}, {mc} : index"));
                let sz = self.empty(&[DYNAMIC], std::slice::from_ref(&nq));
                sizing.push((q.to_string(), (sz, vec![DYNAMIC]), 0));
                let shape = self
                    .operands
                    .get(oj)
                    .ok_or("a bound names a missing operand")?;
                let operand = (format!("%op{oj}"), shape.clone());
                sizing.push((g.i.clone(), operand, od));
                // Dynamic; `eop_sized` binds the bound to `sz`.
                (0, Iter::over_dim(q, usize::MAX, 0))
            }
        };
        let mut batch: Vec<Iter> = g.batch.iter().map(|v| it(v)).collect::<Result<_, _>>()?;
        if dil > 1 {
            batch.push(Iter::new(p, 0, dil));
        }
        let ks: Vec<Iter> = g.k.iter().map(|v| it(v)).collect::<Result<_, _>>()?;
        let row = |by: &str| {
            let x = Idx::var(q).scale(m).add(&Idx::var(by));
            if dil > 1 {
                x.scale(dil).add(&Idx::var(p))
            } else {
                x.offset(ilo)
            }
        };
        // Chunks of A: (batch, q, r, k).
        let mut trav = batch.clone();
        trav.push(q_iter.clone());
        trav.push(Iter::new(r, 0, m));
        trav.extend(ks.iter().cloned());
        let reshaped = if dil == 1 {
            self.chunks_by_reshape(s, g, sa, ia, kids, m, &trav)?
        } else {
            None
        };
        let ga = match reshaped {
            Some(st) => st,
            None => {
                let ra = row(r);
                let body =
                    Term::Access(sa.clone(), ia.iter().map(|e| e.subst(&g.i, &ra)).collect());
                self.eop_sized(
                    &Scope {
                        trav,
                        sum: vec![],
                        body,
                    },
                    kids,
                    &sizing,
                )?
            }
        };
        // Windows of B, transposed: (batch, q, k, j).
        let mut trav = batch.clone();
        trav.push(q_iter);
        trav.extend(ks.iter().cloned());
        trav.push(Iter::new(j, 0, jn));
        let rb = row(j);
        let wl = Idx::constant(wlo);
        let body = Term::Access(
            sb.clone(),
            ib.iter()
                .map(|e| e.subst(&g.i, &rb).subst(&g.w, &wl))
                .collect(),
        );
        let gb = self.eop_sized(
            &Scope {
                trav,
                sum: vec![],
                body,
            },
            kids,
            &sizing,
        )?;
        // Collapsed to (batch·q, m, k) x (batch·q, k, j).
        let nb = batch.len() + 1;
        let nk = ks.len();
        let (xa, xs) = self.collapse_groups(&ga.name, &ga.shape, &[nb, 1, nk]);
        let (yb, ys) = self.collapse_groups(&gb.name, &gb.shape, &[nb, nk, 1]);
        let rs = vec![xs[0], m, jn];
        let dyns = self.dyn_dims(&xa, &xs, &[0]);
        let mm = self.onto_zeros("linalg.batch_matmul", (&xa, &xs), (&yb, &ys), &rs, &dyns);
        self.matmuls += 1;
        self.g2bmms += 1;
        // Expanded to (batch, q, m, j).
        let (name, shape) = self.expand_leading(&mm, &rs, &ga, nb);
        let prod = Stage {
            layout: (0..shape.len()).collect(),
            lows: vec![0; shape.len()],
            name,
            shape,
        };
        // The band: out[.., i, .., w, ..] = P[batch, (i - lo) / m, (i - lo) % m,
        // (i - lo) % m + δ·(w - w_lo)].
        let mut kids2 = kids.to_vec();
        kids2.push(prod);
        let mut idx: Vec<Idx> = g.batch.iter().map(|v| Idx::var(v)).collect();
        let rel = if dil > 1 {
            // Row i is chunk row (i floordiv δ) of residue i mod δ.
            idx.push(Idx::var(&g.i).modulo(dil));
            Idx::var(&g.i).floordiv(dil)
        } else {
            Idx::var(&g.i).offset(-ilo)
        };
        idx.push(rel.floordiv(m));
        idx.push(rel.modulo(m));
        idx.push(
            rel.modulo(m)
                .add(&Idx::var(&g.w).offset(-wlo).scale(g.delta / dil)),
        );
        let band = Scope {
            trav: s.trav.clone(),
            sum: vec![],
            body: Term::Access(Src::Input(CHILD_BASE + kids.len()), idx),
        };
        self.eop_sized(&band, &kids2, &sizing)
    }

    /// A dense conv: the image gathered as `G[batch.., c, t_h, t_w]` (`t = o + r`, the
    /// window's positions, zero outside the image), the batch flattened into N, then
    /// `linalg.conv_2d_nchw_fchw` (unit strides and dilations) with the filter as it is;
    /// the result expanded to (batch.., f, oh, ow).
    fn dense_conv(&mut self, s: &Scope, d: &DenseConv, kids: &[Stage]) -> Result<Stage, String> {
        let ((sx, ix), (sw, iw)) = factor_pair(s, d.image)?;
        let it = |v: &str| s.iter(v).cloned().ok_or("a conv iterator is missing");
        // The filter, read plainly in FCHW order.
        let (wname, wshape, wphys) = self.source(sw, iw, kids)?;
        let order = [&d.f, &d.c, &d.windows[0].1, &d.windows[1].1];
        if wphys
            .iter()
            .zip(order)
            .any(|(e, v)| e.as_var() != Some(v.as_str()))
            || wshape.contains(&DYNAMIC)
        {
            return Err("the filter is not read plainly in FCHW order".into());
        }
        // The gathered image.
        let mut trav: Vec<Iter> = d.batch.iter().map(|v| it(v)).collect::<Result<_, _>>()?;
        trav.push(it(&d.c)?);
        let mut idx = ix.to_vec();
        let mut outs = vec![];
        for (j, (o, w)) in d.windows.iter().enumerate() {
            let (oi, wi) = (it(o)?, it(w)?);
            let ((olo, ohi), (wlo, whi)) = oi
                .static_range()
                .zip(wi.static_range())
                .ok_or("a conv window with a dynamic extent")?;
            let t = format!("dct{j}");
            if s.iter(&t).is_some() {
                return Err("iterator names clash".into());
            }
            trav.push(Iter::new(&t, olo + wlo, ohi + whi - 1));
            let tv = Idx::var(&t);
            let zero = Idx::constant(0);
            idx = idx
                .iter()
                .map(|e| e.subst(o, &tv).subst(w, &zero))
                .collect();
            outs.push(ohi - olo);
        }
        let body = Term::Access(sx.clone(), idx);
        let g = self.eop(
            &Scope {
                trav,
                sum: vec![],
                body,
            },
            kids,
        )?;
        // (batch.., c, th, tw) → (N, c, th, tw).
        let nb = d.batch.len();
        let (gname, gshape) = self.collapse_groups(&g.name, &g.shape, &[nb, 1, 1, 1]);
        let rs = vec![gshape[0], wshape[0], outs[0], outs[1]];
        let dyns = self.dyn_dims(&gname, &gshape, &[0]);
        let cv = self.onto_zeros(
            "linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}",
            (&gname, &gshape),
            (&wname, &wshape),
            &rs,
            &dyns,
        );
        self.convs += 1;
        let (name, shape) = self.expand_leading(&cv, &rs, &g, nb);
        let dims: Vec<&String> = d
            .batch
            .iter()
            .chain([&d.f, &d.windows[0].0, &d.windows[1].0])
            .collect();
        let layout: Vec<usize> = dims
            .iter()
            .map(|v| s.trav.iter().position(|i| &i.name == *v))
            .collect::<Option<_>>()
            .ok_or("a conv dim is not a traversal iterator")?;
        Ok(Stage {
            name,
            shape,
            layout,
            lows: s.trav.iter().map(|i| i.lo).collect(),
        })
    }

    /// The chunks of a G2BMM's A as a reshape (no copy) where A's tensor holds exactly
    /// (batch, i, k) in that order, from 0, with `m` dividing the rows: its `i` dim
    /// expanded to (q, r). `trav` is the chunk tensor's traversal (batch, q, r, k).
    #[allow(clippy::too_many_arguments)]
    fn chunks_by_reshape(
        &mut self,
        s: &Scope,
        g: &G2bmm,
        src: &Src,
        idx: &[Idx],
        kids: &[Stage],
        m: i64,
        trav: &[Iter],
    ) -> Result<Option<Stage>, String> {
        let (name, shape, phys) = self.source(src, idx, kids)?;
        let want: Vec<&String> = g.batch.iter().chain([&g.i]).chain(&g.k).collect();
        let vars: Vec<Option<&str>> = phys.iter().map(|e| e.as_var()).collect();
        if vars.len() != want.len() || vars.iter().zip(&want).any(|(v, w)| *v != Some(w.as_str())) {
            return Ok(None);
        }
        // Every dim covered exactly by its iterator (dynamic: the bound is that dim).
        for (d, v) in want.iter().enumerate() {
            let it = s.iter(v).ok_or("a G2BMM iterator is missing")?;
            let exact = match it.static_range() {
                Some((l, h)) => l == 0 && shape[d] == h,
                None => false,
            };
            let dynamic_ok = shape[d] == DYNAMIC && it.dim_range().is_some();
            if !(exact || dynamic_ok) {
                return Ok(None);
            }
        }
        let nb = g.batch.len();
        if shape[nb] == DYNAMIC || shape[nb] % m != 0 {
            return Ok(None);
        }
        // Dynamic batch dims: the bound names an op operand; check the tensor agrees.
        let want: Vec<String> = want.into_iter().cloned().collect();
        self.assert_extents(s, &name, &shape, &want, "a G2BMM operand")?;
        let fshape: Vec<i64> = trav.iter().map(extent).collect();
        let mut vals = vec![];
        for (d, e) in fshape.iter().enumerate() {
            vals.push(if *e == DYNAMIC {
                self.dim(&name, &shape, d)
            } else {
                e.to_string()
            });
        }
        let mut groups = vec![1; nb];
        groups.push(2);
        groups.extend(std::iter::repeat_n(1, g.k.len()));
        let v = self.fresh();
        self.line(format!(
            "{v} = tensor.expand_shape {name} [{}] output_shape [{}] : {} into {}",
            reassociation(groups.into_iter()),
            vals.join(", "),
            ty(&shape, &self.elem),
            ty(&fshape, &self.elem)
        ));
        Ok(Some(Stage {
            name: v,
            layout: (0..fshape.len()).collect(),
            lows: vec![0; fshape.len()],
            shape: fshape,
        }))
    }

    fn eop(&mut self, s: &Scope, kids: &[Stage]) -> Result<Stage, String> {
        self.eop_sized(s, kids, &[])
    }

    /// An eOperator; `sizing` names, for dynamic traversal iterators no input it reads
    /// spans plainly, a tensor and the dim that bounds them (an extra operand).
    fn eop_sized(
        &mut self,
        s: &Scope,
        kids: &[Stage],
        sizing: &[(String, Tensor, usize)],
    ) -> Result<Stage, String> {
        // Inputs of the ta.expr: distinct sources in order of first access.
        let mut names: Vec<(String, Vec<i64>)> = vec![];
        fn go(
            t: &Term,
            em: &Em,
            kids: &[Stage],
            names: &mut Vec<(String, Vec<i64>)>,
        ) -> Result<Term, String> {
            Ok(match t {
                Term::Access(src, idx) => {
                    let (n, sh, phys) = em.source(src, idx, kids)?;
                    let p = match names.iter().position(|(x, _)| *x == n) {
                        Some(p) => p,
                        None => {
                            names.push((n, sh));
                            names.len() - 1
                        }
                    };
                    Term::Access(Src::Input(p), phys)
                }
                Term::Bin(o, a, b) => Term::Bin(
                    *o,
                    Box::new(go(a, em, kids, names)?),
                    Box::new(go(b, em, kids, names)?),
                ),
                _ => t.clone(),
            })
        }
        let body = go(&s.body, self, kids, &mut names)?;
        if s.sum.iter().any(|i| i.hi.dim.is_some()) {
            return Err("a summation with a dynamic extent".into());
        }
        // Dynamic traversal bounds: a dim of an input this expression reads plainly by
        // the iterator (lows 0).
        let mut trav = s.trav.clone();
        for it in &mut trav {
            if it.hi.dim.is_none() {
                continue;
            }
            if it.lo != 0 || it.hi.c != 0 {
                return Err(format!("dynamic iterator '{}' with an offset", it.name));
            }
            let mut found = None;
            for (src, idx) in body.accesses() {
                let Src::Input(p) = src else { continue };
                if let Some(d) = idx.iter().position(|e| e.as_var() == Some(&it.name)) {
                    if names[*p].1[d] == DYNAMIC {
                        found = Some((*p, d));
                        break;
                    }
                }
            }
            if found.is_none() {
                if let Some((_, (n, sh), d)) = sizing.iter().find(|(v, _, _)| *v == it.name) {
                    let p = match names.iter().position(|(x, _)| x == n) {
                        Some(p) => p,
                        None => {
                            names.push((n.clone(), sh.clone()));
                            names.len() - 1
                        }
                    };
                    found = Some((p, *d));
                }
            }
            let (p, d) = found.ok_or_else(|| {
                format!(
                    "no input of the eOperator spans dynamic iterator '{}'",
                    it.name
                )
            })?;
            it.hi = Bound {
                dim: Some((p, d)),
                c: 0,
            };
        }
        let e = Scope {
            trav,
            sum: s.sum.clone(),
            body,
        };
        let shape: Vec<i64> = s.trav.iter().map(extent).collect();
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

/// The function `@ollie(%in..., %init, %op...) -> result` computing `best` (plus the init
/// when `add_init`): `inputs` are the types of what the expression reads, `operands` those
/// of the op's own operands (its bounds' reference).
pub fn emit(
    best: &Scope,
    inputs: &[Type],
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
