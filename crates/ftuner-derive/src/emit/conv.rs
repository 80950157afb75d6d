//! Dense convs emitted as a gather of the image (an eOperator) and a
//! `linalg.conv_2d_nchw_fchw` with unit strides and dilations.
use super::{factor_pair, Em, Stage};
use crate::derive::DenseConv;
use ftuner_dialects::ta::{Idx, Iter, Scope, Term};
use ftuner_ir::DYNAMIC;

impl Em {
    /// A dense conv: the image gathered as `G[batch.., c, t_h, t_w]` (`t = o + r`, the
    /// window's positions, zero outside the image), the batch flattened into N, then
    /// `linalg.conv_2d_nchw_fchw` (unit strides and dilations) with the filter as it is;
    /// the result expanded to (batch.., f, oh, ow).
    pub(super) fn dense_conv(
        &mut self,
        s: &Scope,
        d: &DenseConv,
        kids: &[Stage],
    ) -> Result<Stage, String> {
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
            true,
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
}
