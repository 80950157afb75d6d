//! `test-perturb-float-constants`: a deliberately wrong lowering, for the tests of the
//! oracle (issue 25: `--check` must fail on a perturbed lowering, and pass on the right
//! one). Scales every scalar float `arith.constant` other than 0 and ±1 by
//! `1 + relative-ppm / 10^6`. Like MLIR's `-test-*` passes: never in a pipeline.

use ftuner_dialects::ops;
use ftuner_ir::{AttrKind, Attribute, OpId};
use ftuner_pass::{define_pass, PassContext, PassFailure};

define_pass! {
    /// `test-perturb-float-constants`: scale float constants (a wrong lowering for tests).
    pub struct PerturbFloatConstantsPass {
        argument: "test-perturb-float-constants",
        name: "PerturbFloatConstants",
        summary: "Scale every scalar float constant other than 0 and +-1 (a deliberately wrong lowering, for the oracle's tests)",
        description: "Multiplies the value of each scalar float `arith.constant` that is not 0, 1 or -1 by 1 + relative-ppm / 10^6; for testing that `ftuner-run --check` notices a lowering that is slightly wrong.",
        options: PerturbFloatConstantsOptions {
            "relative-ppm" => relative_ppm: i64 = "1000",
                "The relative change, in parts per million";
        },
        statistics: {
            perturbed: "num-perturbed" => "Number of constants changed",
        },
    }
}

impl PerturbFloatConstantsPass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        top: OpId,
        opts: &PerturbFloatConstantsOptions,
    ) -> Result<(), PassFailure> {
        let factor = 1.0 + opts.relative_ppm as f64 * 1e-6;
        let mut found = vec![];
        cx.ir.walk_pre(top, &mut |o| {
            if cx.ir.name(o) != ops::arith::ConstantOp::NAME {
                return;
            }
            let Some(a) = cx.ir.attr(o, "value") else {
                return;
            };
            if let AttrKind::Float { bits, ty } = a.kind() {
                let Some(kind) = ty.float_kind() else { return };
                let v = ftuner_ir::float::bits_to_f64(*bits, kind);
                if v != 0.0 && v.abs() != 1.0 && v.is_finite() {
                    found.push((o, Attribute::float(v * factor, *ty)));
                }
            }
        });
        for (o, a) in found {
            if cx.ir.prop(o, "value").is_some() {
                cx.ir.set_prop(o, "value", Some(a));
            } else {
                cx.ir.set_attr(o, "value", Some(a));
            }
            self.perturbed += 1;
        }
        Ok(())
    }
}
