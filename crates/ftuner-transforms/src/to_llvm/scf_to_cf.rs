//! `scf` to blocks and branches (MLIR's `convert-scf-to-cf`, done during the conversion):
//! `scf.for` as a header block testing the induction variable, a body branching back and
//! an exit; `scf.if` and `scf.index_switch` as branches to blocks merging into one whose
//! arguments are the results. Also the loop nests the conversion itself makes.

use super::{LlvmRewriter, R};
use ftuner_dialects::ops;
use ftuner_ir::{BlockId, OpId, RegionId, Type, Value};

impl LlvmRewriter<'_> {
    pub(super) fn scf_for(&mut self, op: OpId) -> R<()> {
        let olds = self.ir.operands(op).to_vec();
        if olds.len() < 3 {
            return Err((op, "needs bounds and a step".into()));
        }
        let lb = self.v(op, olds[0])?;
        let ub = self.v(op, olds[1])?;
        let step = self.v(op, olds[2])?;
        self.step_check(step);
        let inits = olds[3..]
            .iter()
            .map(|v| self.v(op, *v))
            .collect::<R<Vec<_>>>()?;
        let mut tys = vec![Type::i64()];
        tys.extend(self.results_of(op)?);
        let header = self.block(&tys);
        let body = self.block(&[]);
        let exit = self.block(&[]);
        let mut args = vec![lb];
        args.extend(inits);
        self.br(header, args);
        self.cur = header;
        let hargs = self.ir.block_args(header).to_vec();
        let unsigned = self.ir.attr(op, "unsignedCmp").is_some();
        let c = self.icmp(if unsigned { 6 } else { 2 }, hargs[0], ub);
        self.cond_br(c, body, vec![], exit, vec![]);
        self.cur = body;
        let ob = self.body(op)?;
        for (a, h) in self.ir.block_args(ob).to_vec().into_iter().zip(&hargs) {
            self.map.insert(a, *h);
        }
        let term = self.ops(ob)?.ok_or((op, "body has no scf.yield".into()))?;
        let ys = self.converted_operands(term)?;
        self.loc = self.ir.loc(op);
        let next = self.val(ops::llvm::AddOp::NAME, vec![hargs[0], step], Type::i64());
        let mut back = vec![next];
        back.extend(ys);
        self.br(header, back);
        self.cur = exit;
        for (r, h) in self.ir.results(op).to_vec().into_iter().zip(&hargs[1..]) {
            self.map.insert(r, *h);
        }
        Ok(())
    }

    /// Convert region `r` into a new block that ends branching to `merge` with its yields.
    fn branch(&mut self, op: OpId, r: Option<RegionId>, merge: BlockId) -> R<BlockId> {
        let b = self.block(&[]);
        self.cur = b;
        let yields = match r.and_then(|r| self.ir.region_entry(r)) {
            Some(ob) => match self.ops(ob)? {
                Some(t) => self.converted_operands(t)?,
                None => vec![],
            },
            None => vec![],
        };
        self.loc = self.ir.loc(op);
        self.br(merge, yields);
        Ok(b)
    }

    /// Continue in `merge`, whose arguments are `op`'s results.
    fn continue_at(&mut self, op: OpId, merge: BlockId) {
        self.cur = merge;
        for (r, a) in self
            .ir
            .results(op)
            .to_vec()
            .into_iter()
            .zip(self.ir.block_args(merge).to_vec())
        {
            self.map.insert(r, a);
        }
    }

    pub(super) fn scf_if(&mut self, op: OpId) -> R<()> {
        let c = self.v(op, self.ir.operand(op, 0))?;
        let tys = self.results_of(op)?;
        let regions = self.ir.regions_of(op).to_vec();
        let start = self.cur;
        let merge = self.block(&tys);
        let then_b = self.branch(op, regions.first().copied(), merge)?;
        let else_b = self.branch(op, regions.get(1).copied(), merge)?;
        self.cur = start;
        self.cond_br(c, then_b, vec![], else_b, vec![]);
        self.continue_at(op, merge);
        Ok(())
    }

    pub(super) fn scf_switch(&mut self, op: OpId) -> R<()> {
        let sel = self.v(op, self.ir.operand(op, 0))?;
        let cases = self
            .ir
            .attr(op, "cases")
            .and_then(|a| a.as_dense_i64s())
            .ok_or((op, "has no cases".into()))?;
        let tys = self.results_of(op)?;
        let regions = self.ir.regions_of(op).to_vec();
        if regions.len() != cases.len() + 1 {
            return Err((op, "needs one region per case and a default".into()));
        }
        let start = self.cur;
        let merge = self.block(&tys);
        let default = self.branch(op, Some(regions[0]), merge)?;
        let mut targets = vec![];
        for r in &regions[1..] {
            targets.push(self.branch(op, Some(*r), merge)?);
        }
        // A chain of compares; LLVM turns it into a switch or a jump table.
        self.cur = start;
        for (k, t) in cases.iter().zip(targets) {
            let kv = self.c64(*k);
            let c = self.icmp(0, sel, kv);
            let next = self.block(&[]);
            self.cond_br(c, t, vec![], next, vec![]);
            self.cur = next;
        }
        self.br(default, vec![]);
        self.continue_at(op, merge);
        Ok(())
    }

    /// `for each point of extents { f(point) }` as blocks.
    pub(super) fn loop_nest(
        &mut self,
        extents: &[Value],
        f: &mut dyn FnMut(&mut Self, &[Value]) -> R<()>,
        ivs: &mut Vec<Value>,
    ) -> R<()> {
        let Some((ub, rest)) = extents.split_first() else {
            return f(self, ivs);
        };
        let zero = self.c64(0);
        let one = self.c64(1);
        let header = self.block(&[Type::i64()]);
        let body = self.block(&[]);
        let exit = self.block(&[]);
        self.br(header, vec![zero]);
        self.cur = header;
        let iv = self.ir.block_args(header)[0];
        let c = self.icmp(2, iv, *ub);
        self.cond_br(c, body, vec![], exit, vec![]);
        self.cur = body;
        ivs.push(iv);
        self.loop_nest(rest, f, ivs)?;
        ivs.pop();
        let next = self.val(ops::llvm::AddOp::NAME, vec![iv, one], Type::i64());
        self.br(header, vec![next]);
        self.cur = exit;
        Ok(())
    }
}
