//! `lower-affine`: `affine.apply` expanded into `arith` ops (upstream's pass of that name,
//! for the one affine op ftuner reads; the expansion lives with the op,
//! `ftuner_dialects::affine::expand_apply`).

use ftuner_ir::OpId;
use ftuner_pass::{Pass, PassContext, PassFailure, Statistic};

#[derive(Default)]
pub struct LowerAffinePass {
    lowered: u64,
}

impl Pass for LowerAffinePass {
    fn argument(&self) -> &'static str {
        "lower-affine"
    }
    fn name(&self) -> &'static str {
        "LowerAffinePass"
    }
    fn summary(&self) -> &'static str {
        "Lower affine.apply to arith ops"
    }
    fn run(&mut self, cx: &mut PassContext<'_>, top: OpId) -> Result<(), PassFailure> {
        let mut applies = vec![];
        cx.ir.walk_pre(top, &mut |o| {
            if cx.ir.name(o) == "affine.apply" {
                applies.push(o);
            }
        });
        for a in applies {
            if ftuner_dialects::affine::expand_apply(cx.ir, a) {
                self.lowered += 1;
            }
        }
        Ok(())
    }
    fn statistics(&self) -> Vec<Statistic> {
        vec![Statistic {
            name: "num-lowered",
            description: "affine.apply ops expanded into arith",
            value: self.lowered,
        }]
    }
    fn clone_pass(&self) -> Box<dyn Pass> {
        Box::new(LowerAffinePass::default())
    }
}
