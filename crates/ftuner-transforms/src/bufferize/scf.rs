//! Bufferization of `scf` ops: `scf.for` loses its tensor `iter_args` (the loop updates
//! their buffers in place, copying back a yielded buffer that is not the loop's), and
//! `scf.if`/`scf.index_switch` results share the buffer all branches yield, or are fresh
//! copies.

use super::types::memref_of;
use super::{dict_entries, BufferRewriter, R};
use ftuner_dialects::ops;
use ftuner_ir::{BlockId, OpId, OpSpec, Value};

impl BufferRewriter<'_> {
    /// `scf.for`: each tensor `iter_arg` becomes the buffer the loop writes (its init's,
    /// or a copy); the other `iter_args` stay.
    pub(super) fn scf_for(&mut self, op: OpId, b: BlockId) -> R<()> {
        let loc = self.ir.loc(op);
        let operands = self.ir.operands(op).to_vec();
        let results = self.ir.results(op).to_vec();
        if operands.len() < 3 {
            return Err((op, "needs bounds and a step".into()));
        }
        let mut bufs: Vec<Option<Value>> = vec![];
        let mut new_ops = vec![];
        for v in &operands[..3] {
            new_ops.push(self.v(op, *v)?);
        }
        let mut kept_types = vec![];
        for (k, v) in operands.iter().enumerate().skip(3) {
            if self.ir.value_type(*v).is_tensor() {
                bufs.push(Some(self.dest(b, op, k, true)?));
            } else {
                bufs.push(None);
                new_ops.push(self.v(op, *v)?);
                kept_types.push(self.ir.value_type(*v));
            }
        }
        let od = self.ir.op(op);
        let mut s = OpSpec::new(od.name, loc)
            .operands(new_ops)
            .results(kept_types.clone())
            .regions(1);
        s.props = dict_entries(od.props);
        s.attrs = dict_entries(od.attrs);
        let n = self.ir.create_op(s);
        self.ir.append_op(b, n);
        let ob = self
            .ir
            .regions_of(op)
            .first()
            .and_then(|r| self.ir.region_entry(*r))
            .ok_or((op, "has no body".into()))?;
        let old_args = self.ir.block_args(ob).to_vec();
        if old_args.len() != bufs.len() + 1 {
            return Err((op, "body arguments do not match the iter_args".into()));
        }
        let mut arg_types = vec![self.ir.value_type(old_args[0])];
        arg_types.extend(kept_types);
        let rn = self.ir.regions_of(n)[0];
        let nb = self.ir.append_block(rn, &arg_types);
        let new_args = self.ir.block_args(nb).to_vec();
        self.map.insert(old_args[0], new_args[0]);
        let mut k = 1;
        for (i, buf) in bufs.iter().enumerate() {
            match buf {
                Some(buf) => {
                    self.map.insert(old_args[i + 1], *buf);
                }
                None => {
                    self.map.insert(old_args[i + 1], new_args[k]);
                    k += 1;
                }
            }
        }
        let term = self
            .block(ob, nb)?
            .ok_or((op, "body has no scf.yield".into()))?;
        let mut yields = vec![];
        for (i, v) in self.ir.operands(term).to_vec().into_iter().enumerate() {
            let nv = self.v(term, v)?;
            match bufs.get(i).copied().flatten() {
                Some(buf) => {
                    if nv != buf {
                        self.copy(nb, nv, buf, loc);
                        self.copies += 1;
                    }
                }
                None => yields.push(nv),
            }
        }
        self.new_op(nb, ops::scf::YieldOp::NAME, yields, vec![], vec![], loc);
        let new_res = self.ir.results(n).to_vec();
        let mut k = 0;
        for (i, r) in results.iter().enumerate() {
            match bufs.get(i).copied().flatten() {
                Some(buf) => {
                    self.map.insert(*r, buf);
                }
                None => {
                    self.map.insert(*r, new_res[k]);
                    k += 1;
                }
            }
        }
        Ok(())
    }

    /// `scf.if` / `scf.index_switch`: a tensor result whose branches all yield the buffer
    /// of the value the analysis found becomes that buffer; otherwise every branch yields
    /// a fresh copy (an identity memref result owned by the enclosing block).
    pub(super) fn branches(&mut self, op: OpId, b: BlockId) -> R<()> {
        let loc = self.ir.loc(op);
        let operands = self
            .ir
            .operands(op)
            .iter()
            .map(|v| self.v(op, *v))
            .collect::<R<Vec<_>>>()?;
        let results = self.ir.results(op).to_vec();
        // The buffer each tensor result shares, when the analysis found one.
        let shared: Vec<Option<Value>> = results
            .iter()
            .map(|r| self.an.parent.get(r).and_then(|p| self.map.get(p).copied()))
            .collect();
        // Rebuild the branches first into a detached holder, then decide.
        let mut branch_blocks = vec![];
        let mut branch_yields = vec![];
        for r in self.ir.regions_of(op).to_vec() {
            let ob = self
                .ir
                .region_entry(r)
                .ok_or((op, "has an empty region".into()))?;
            let nb = self.ir.new_block(&[]);
            let term = self
                .block(ob, nb)?
                .ok_or((op, "branch has no scf.yield".into()))?;
            let ys = self
                .ir
                .operands(term)
                .iter()
                .map(|v| self.v(term, *v))
                .collect::<R<Vec<_>>>()?;
            branch_blocks.push(nb);
            branch_yields.push(ys);
        }
        let mut res_types = vec![];
        let mut fresh = vec![];
        for (i, r) in results.iter().enumerate() {
            let t = self.ir.value_type(*r);
            if !t.is_tensor() {
                res_types.push(Some(t));
                fresh.push(false);
                continue;
            }
            let all_shared =
                shared[i].is_some_and(|s| branch_yields.iter().all(|ys| ys.get(i) == Some(&s)));
            if all_shared {
                res_types.push(None);
                fresh.push(false);
            } else {
                res_types.push(Some(
                    memref_of(t).ok_or((op, "unranked tensor result".into()))?,
                ));
                fresh.push(true);
            }
        }
        for (nb, ys) in branch_blocks.iter().zip(branch_yields.iter_mut()) {
            let mut out = vec![];
            for (i, y) in ys.iter().enumerate() {
                match (res_types[i], fresh[i]) {
                    (None, _) => {}
                    (Some(_), false) => out.push(*y),
                    (Some(_), true) => {
                        let n = self.alloc_like(*nb, *y, loc);
                        // Yielded, so owned by the op's result, not by the branch.
                        self.owned.pop();
                        self.copy(*nb, *y, n, loc);
                        self.copies += 1;
                        out.push(n);
                    }
                }
            }
            self.new_op(*nb, ops::scf::YieldOp::NAME, out, vec![], vec![], loc);
        }
        let od = self.ir.op(op);
        let mut s = OpSpec::new(od.name, loc)
            .operands(operands)
            .results(res_types.iter().flatten().copied())
            .regions(od.regions.len());
        s.props = dict_entries(od.props);
        s.attrs = dict_entries(od.attrs);
        let n = self.ir.create_op(s);
        self.ir.append_op(b, n);
        for (r, nb) in self
            .ir
            .regions_of(n)
            .to_vec()
            .into_iter()
            .zip(branch_blocks)
        {
            self.ir.region_attach_block(r, nb);
        }
        let new_res = self.ir.results(n).to_vec();
        let mut k = 0;
        for (i, r) in results.iter().enumerate() {
            match res_types[i] {
                None => {
                    let s = shared[i].ok_or((op, "lost a shared buffer".into()))?;
                    self.map.insert(*r, s);
                }
                Some(_) => {
                    self.map.insert(*r, new_res[k]);
                    if fresh[i] {
                        self.owned.push((new_res[k], b));
                    }
                    k += 1;
                }
            }
        }
        Ok(())
    }
}

/// `scf.for`'s tensor `iter_args` (operands 3..) tied to its results.
fn loop_destinations(ir: &ftuner_ir::Ir, op: OpId) -> Vec<(usize, Option<Value>)> {
    let mut out = vec![];
    for (k, v) in ir.operands(op).iter().enumerate().skip(3) {
        if ir.value_type(*v).is_tensor() {
            out.push((k, ir.results(op).get(k - 3).copied()));
        }
    }
    out
}

/// The `scf` ops' bufferization models.
pub(super) fn register(reg: &mut ftuner_ir::Registry) {
    use super::Bufferizable;
    reg.attach_interface(
        ops::scf::ForOp::NAME,
        Bufferizable {
            destinations: loop_destinations,
            ..Bufferizable::plain(|rw, op, b| rw.scf_for(op, b))
        },
    );
    for name in [ops::scf::IfOp::NAME, ops::scf::IndexSwitchOp::NAME] {
        reg.attach_interface(
            name,
            Bufferizable {
                yields_results: true,
                ..Bufferizable::plain(|rw, op, b| rw.branches(op, b))
            },
        );
    }
}
