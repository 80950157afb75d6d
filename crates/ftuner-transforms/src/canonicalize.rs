//! `canonicalize`: the greedy driver with every registered folder and pattern.

use crate::greedy::{apply_greedily, GreedyConfig};
use ftuner_ir::OpId;
use ftuner_pass::options::OptionKind;
use ftuner_pass::{define_pass, PassContext, PassFailure};

define_pass! {
    /// `canonicalize`: the dialects' folders and canonicalization patterns, to a fixed
    /// point.
    pub struct CanonicalizerPass {
        argument: "canonicalize",
        name: "Canonicalizer",
        summary: "Canonicalize operations",
        description: "Applies the dialects' folders and canonicalization patterns and removes dead operations, to a fixed point.",
        options: CanonicalizerOptions {
            "max-iterations" => max_iterations: i64 = "10",
                "Max. iterations between applying patterns / simplifying regions";
            "max-num-rewrites" => max_num_rewrites: i64 = "-1",
                "Max. number of pattern rewrites within an iteration";
            "region-simplify" => region_simplify: String = "normal"
                as OptionKind::Enum(&["disabled", "normal", "aggressive"]),
                "Perform control flow optimizations to the region tree";
            "test-convergence" => test_convergence: bool = "false",
                "Test only: Fail pass on non-convergence to detect cyclic pattern";
            "top-down" => top_down: bool = "true",
                "Seed the worklist in general top-down order";
        },
        statistics: {
            folded: "num-folded" => "Number of operations folded",
            patterns: "num-patterns" => "Number of canonicalization patterns applied",
            erased: "num-dce'd" => "Number of operations erased as dead",
        },
    }
}

impl CanonicalizerPass {
    pub fn new() -> CanonicalizerPass {
        CanonicalizerPass::default()
    }
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        op: OpId,
        o: &CanonicalizerOptions,
    ) -> Result<(), PassFailure> {
        let cfg = GreedyConfig {
            max_iterations: o.max_iterations,
            max_num_rewrites: o.max_num_rewrites,
            top_down: o.top_down,
            fold: true,
            region_simplify: o.region_simplify != "disabled",
        };
        let st = apply_greedily(cx.ctx, cx.ir, op, cfg);
        self.folded += st.folded;
        self.patterns += st.patterns;
        self.erased += st.erased;
        if o.test_convergence && !st.converged {
            cx.emit(ftuner_ir::Diagnostic::error(
                cx.ir.loc(op),
                "pattern rewriting did not converge",
            ));
            return Err(PassFailure);
        }
        Ok(())
    }
}
