//! Contractions emitted as `linalg.matmul` / `linalg.batch_matmul`: each operand sliced
//! at constant indices, transposed to its groups' order, checked and collapsed.
use super::{extent, factor_pair, list, reassociation, ty, Em, Stage, Tensor};
use crate::derive::Contraction;
use ftuner_dialects::ops;
use ftuner_dialects::ta::{Idx, Scope, Src};
use ftuner_ir::DYNAMIC;

impl Em {
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

    /// Whether the matmul should take its rows from the weights: when the factor that
    /// would give the rows (`x_first`) is an activation whose innermost dim is one of
    /// those rows (an NCHW image's width, as in a derived transposed conv
    /// `X[n, c, i, j] * K[c, f, r, s]`) and the other factor is fixed at load time.
    /// Rows from the image would transpose it to NHWC on every call and leave the
    /// result in (n, i, j, f, r, s) order, which the col2im eOperators after it read
    /// 4 KB apart per step; rows from the weights (transposed once, when loaded) read
    /// the image as a `c x (n, i, j)` matrix (planes moved whole) and leave the result
    /// in (f, r, s, n, i, j) order, read along `j` (what ONNX Runtime's ConvTranspose
    /// does: a GEMM into columns, then col2im).
    fn weights_as_rows(
        &self,
        s: &Scope,
        c: &Contraction,
        x_first: usize,
        kids: &[Stage],
    ) -> Result<bool, String> {
        let ((sx, ix), (sy, _)) = factor_pair(s, x_first)?;
        let fixed = |src: &Src| match src {
            Src::Input(i) => self.fixed.get(*i).copied().unwrap_or(false),
            Src::Scope(_) => false,
        };
        if fixed(sx) || !fixed(sy) {
            return Ok(false);
        }
        let (_, _, phys) = self.source(sx, ix, kids)?;
        let Some(inner) = phys.iter().rev().find(|e| e.as_const().is_none()) else {
            return Ok(false);
        };
        let Some(v) = inner.as_var() else {
            return Ok(false);
        };
        // A row dim of some length (8: half a vector of f32 at 512 bits; the DCGAN
        // generator's 4x4 input stays as it was, measured level either way): a 1x1 image
        // (the generator's first layer) keeps the batch as its rows.
        let long = s
            .iter(v)
            .is_some_and(|it| extent(it) == DYNAMIC || extent(it) >= 8);
        Ok(c.m.iter().any(|m| m == v) && long)
    }

    pub(super) fn contraction(
        &mut self,
        s: &Scope,
        c: &Contraction,
        kids: &[Stage],
    ) -> Result<Stage, String> {
        // X holds the M iterators, Y the N ones.
        let ((_, ia), _) = factor_pair(s, 0)?;
        let a_has_m = ia
            .iter()
            .any(|e| e.as_var().is_some_and(|v| c.m.iter().any(|m| m == v)));
        let mut x_first = usize::from(!a_has_m);
        let swapped;
        let c = if self.weights_as_rows(s, c, x_first, kids)? {
            x_first = 1 - x_first;
            swapped = Contraction {
                batch: c.batch.clone(),
                m: c.n.clone(),
                n: c.m.clone(),
                k: c.k.clone(),
            };
            &swapped
        } else {
            c
        };
        let ((sx, ix), (sy, iy)) = factor_pair(s, x_first)?;
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
            ops::linalg::BatchMatmulOp::NAME
        } else {
            ops::linalg::MatmulOp::NAME
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
}
