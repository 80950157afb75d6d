//! G2BMMs (banded matmuls) emitted as sliding chunks: chunks of A (a reshape where it
//! can be), the overlapping windows of B (a gather), one `batch_matmul`, and the band
//! read back; optionally one batch slice at a time in `scf.for` loops.

use super::{extent, factor_pair, reassociation, ty, Em, Stage, Tensor, CHILD_BASE};
use crate::derive::{g2bmm_by_residue, g2bmm_cols, g2bmm_plan, G2bmm};
use ftuner_dialects::ops::linalg;
use ftuner_dialects::ta::{Idx, Iter, Scope, Src, Term};
use ftuner_ir::DYNAMIC;

/// A batch iterator run as an `scf.for` loop: the iterator, its dim in A and in B.
type Looped = (Iter, usize, usize);

/// The `scf.for` nest of a G2BMM run one batch slice at a time.
struct BatchLoops {
    looped: Vec<Looped>,
    /// Per loop: its induction variable and its result.
    ivs: Vec<(String, String)>,
    /// The innermost loop's iteration argument: the result being filled.
    acc: String,
}

/// The batch iterators of `g` both operands read plainly (one dim each, from 0), given
/// A's and B's physical indices: the loops of [`Em::g2bmm_looped`].
fn loopable_batch(s: &Scope, g: &G2bmm, aph: &[Idx], bph: &[Idx]) -> Result<Vec<Looped>, String> {
    let plain_dim = |ph: &[Idx], v: &str| -> Option<usize> {
        let users: Vec<usize> = (0..ph.len()).filter(|d| ph[*d].uses(v)).collect();
        match users[..] {
            [d] if ph[d].as_var() == Some(v) => Some(d),
            _ => None,
        }
    };
    // (iterator, its dim in A, in B)
    let mut looped: Vec<Looped> = vec![];
    for v in &g.batch {
        let it = s.iter(v).ok_or("a G2BMM iterator is missing")?;
        if it.lo != 0 || (it.hi.dim.is_some() && it.hi.c != 0) {
            continue;
        }
        if let (Some(da), Some(db)) = (plain_dim(aph, v), plain_dim(bph, v)) {
            looped.push((it.clone(), da, db));
        }
    }
    Ok(looped)
}

/// The G2BMM of one batch slice: `s` without the looped iterators, its factors reading
/// the slices of A and B (children `nkids` and `nkids + 1`) at their other dims.
fn slice_g2bmm(
    s: &Scope,
    g: &G2bmm,
    looped: &[Looped],
    (aph, bph): (&[Idx], &[Idx]),
    nkids: usize,
) -> (Scope, G2bmm) {
    let drop = |ph: &[Idx], pick: &dyn Fn(&Looped) -> usize| -> Vec<Idx> {
        (0..ph.len())
            .filter(|d| !looped.iter().any(|l| pick(l) == *d))
            .map(|d| ph[d].clone())
            .collect()
    };
    let ra = Term::Access(Src::Input(CHILD_BASE + nkids), drop(aph, &|l| l.1));
    let rb = Term::Access(Src::Input(CHILD_BASE + nkids + 1), drop(bph, &|l| l.2));
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
    (inner, ig)
}

impl Em {
    /// A G2BMM one batch slice at a time: the batch iterators both operands read plainly
    /// (one dim each, from 0) become `scf.for` loops; each iteration runs the sliding
    /// chunks ([`Em::g2bmm`]) on rank-reduced slices and inserts its band into the result.
    /// The chunk products of one slice stay in cache: over the whole batch at once they go
    /// through DRAM (12 heads x 1024 rows, batch 4: 52 MB). None when no batch iterator
    /// qualifies.
    pub(super) fn g2bmm_looped(
        &mut self,
        s: &Scope,
        g: &G2bmm,
        kids: &[Stage],
    ) -> Result<Option<Stage>, String> {
        let ((sa, ia), (sb, ib)) = factor_pair(s, g.rows)?;
        let (an, ash, aph) = self.source(sa, ia, kids)?;
        let (bn, bsh, bph) = self.source(sb, ib, kids)?;
        let looped = loopable_batch(s, g, &aph, &bph)?;
        if looped.is_empty() {
            return Ok(None);
        }
        let shape: Vec<i64> = s.trav.iter().map(extent).collect();
        let rt = ty(&shape, &self.elem);
        let nest = self.open_batch_loops(s, looped, &shape, &rt)?;
        // Rank-reduced slices of A and B at the loop indices.
        let a_dims: Vec<usize> = nest.looped.iter().map(|l| l.1).collect();
        let b_dims: Vec<usize> = nest.looped.iter().map(|l| l.2).collect();
        let a_slice = self.batch_slice(&an, &ash, &a_dims, &nest);
        let b_slice = self.batch_slice(&bn, &bsh, &b_dims, &nest);
        let mut kids2 = kids.to_vec();
        kids2.push(a_slice);
        kids2.push(b_slice);
        let (inner, ig) = slice_g2bmm(s, g, &nest.looped, (&aph, &bph), kids.len());
        let band = self.g2bmm(&inner, &ig, &kids2)?;
        let ins = self.insert_band(s, &inner, &nest, &band, &shape, &rt);
        let y = self.close_batch_loops(&nest, ins, &rt);
        Ok(Some(Stage {
            name: y,
            shape,
            layout: (0..s.trav.len()).collect(),
            lows: s.trav.iter().map(|i| i.lo).collect(),
        }))
    }

    /// The result of a looped G2BMM (of `shape`, type `rt`; sized from the loop bounds)
    /// and the `scf.for` headers of its loops, outermost first.
    fn open_batch_loops(
        &mut self,
        s: &Scope,
        looped: Vec<Looped>,
        shape: &[i64],
        rt: &str,
    ) -> Result<BatchLoops, String> {
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
        let init = self.empty(shape, &dyn_sizes);
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
        let acc = accs.pop().unwrap_or_default();
        Ok(BatchLoops { looped, ivs, acc })
    }

    /// Tensor `name` (of shape `sh`) sliced at the loop indices in its `dims` (one per
    /// loop, rank-reduced), whole in the others.
    fn batch_slice(&mut self, name: &str, sh: &[i64], dims: &[usize], nest: &BatchLoops) -> Stage {
        let mut offs = vec![];
        let mut sizes = vec![];
        let mut kept = vec![];
        for d in 0..sh.len() {
            match dims.iter().position(|x| *x == d) {
                Some(j) => {
                    offs.push(nest.ivs[j].0.clone());
                    sizes.push("1".to_string());
                }
                None => {
                    offs.push("0".into());
                    sizes.push(if sh[d] == DYNAMIC {
                        self.dim(name, sh, d)
                    } else {
                        sh[d].to_string()
                    });
                    kept.push(sh[d]);
                }
            }
        }
        let v = self.fresh();
        self.line(format!(
            "{v} = tensor.extract_slice {name}[{}] [{}] [{}] : {} to {}",
            offs.join(", "),
            sizes.join(", "),
            vec!["1"; sh.len()].join(", "),
            ty(sh, &self.elem),
            ty(&kept, &self.elem)
        ));
        Stage {
            name: v,
            layout: (0..kept.len()).collect(),
            lows: vec![0; kept.len()],
            shape: kept,
        }
    }

    /// The band of one slice (`inner`'s result) inserted into the result at the loop
    /// indices; returns the updated result.
    fn insert_band(
        &mut self,
        s: &Scope,
        inner: &Scope,
        nest: &BatchLoops,
        band: &Stage,
        shape: &[i64],
        rt: &str,
    ) -> String {
        let mut offs = vec![];
        let mut sizes = vec![];
        for (p, it) in s.trav.iter().enumerate() {
            match nest.looped.iter().position(|l| l.0.name == it.name) {
                Some(j) => {
                    offs.push(nest.ivs[j].0.clone());
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
        let ins = self.fresh();
        self.line(format!(
            "{ins} = tensor.insert_slice {} into {}[{}] [{}] [{}] : {} into {rt}",
            band.name,
            nest.acc,
            offs.join(", "),
            sizes.join(", "),
            vec!["1"; shape.len()].join(", "),
            ty(&band.shape, &self.elem)
        ));
        ins
    }

    /// Yield `y` (the innermost result) through the loops and close them, innermost
    /// first; returns the outermost loop's result.
    fn close_batch_loops(&mut self, nest: &BatchLoops, mut y: String, rt: &str) -> String {
        let n = nest.looped.len();
        // The slices are independent (each writes its own part of the result and reads
        // only inputs): the loop with the most static iterations (heads, say) runs on the
        // thread pool (`ftuner.parallel`). Only the outermost marked loop of a nest is
        // outlined, so the batch_matmul's own marked loops then run serially per slice;
        // with no static loop of 2 or more (a dynamic batch alone) nothing is marked and
        // the batch_matmul keeps the pool.
        let par = (0..n)
            .filter_map(|j| nest.looped[j].0.static_range().map(|(l, h)| (h - l, j)))
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
            y = nest.ivs[j].1.clone();
        }
        y
    }

    /// A G2BMM as sliding chunks: rows `i` in chunks of `m` (`i = lo + m·q + r`); chunk
    /// `q` of A (`m` rows, zero beyond the end) is multiplied by the `m + δ·(W - 1)` rows
    /// of B its band touches (gathered transposed: `j = r + δ·(w - w_lo)`), one
    /// batch_matmul over (batch, q); the band is read back from the products at
    /// `[q, r, r + δ·(w - w_lo)]`.
    pub(super) fn g2bmm(&mut self, s: &Scope, g: &G2bmm, kids: &[Stage]) -> Result<Stage, String> {
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
        let bmm = linalg::BatchMatmulOp::NAME;
        let mm = self.onto_zeros(bmm, (&xa, &xs), (&yb, &ys), &rs, &dyns);
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
}
