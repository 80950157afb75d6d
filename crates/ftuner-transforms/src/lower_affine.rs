//! `lower-affine`: `affine.apply` expanded into `arith` ops (upstream's pass of that name,
//! for the one affine op ftuner reads; the expansion lives with the op,
//! `ftuner_dialects::affine::expand_apply`).

use ftuner_dialects::ops;
use ftuner_ir::OpId;
use ftuner_pass::{define_pass, PassContext, PassFailure};

define_pass! {
    /// `lower-affine`: lower affine.apply to arith ops.
    pub struct LowerAffinePass {
        argument: "lower-affine",
        name: "LowerAffinePass",
        summary: "Lower affine.apply to arith ops",
        options: LowerAffineOptions {},
        statistics: {
            lowered: "num-lowered" => "affine.apply ops expanded into arith",
        },
    }
}

impl LowerAffinePass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        top: OpId,
        _: &LowerAffineOptions,
    ) -> Result<(), PassFailure> {
        let mut applies = vec![];
        cx.ir.walk_pre(top, &mut |o| {
            if cx.ir.name(o) == ops::affine::ApplyOp::NAME {
                applies.push(o);
            }
        });
        for a in applies {
            if ftuner_dialects::affine::expand_apply(cx.ctx, cx.ir, a) {
                self.lowered += 1;
            }
        }
        Ok(())
    }
}
