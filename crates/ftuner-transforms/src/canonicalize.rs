//! `canonicalize`: the greedy driver with every registered folder and pattern.

use crate::greedy::{apply_greedily, GreedyConfig};
use ftuner_pass::{options::OptionKind, OptionSpec, Pass, PassContext, PassOptions, Statistic};

pub struct CanonicalizerPass {
    opts: PassOptions,
    folded: u64,
    patterns: u64,
    erased: u64,
}

impl CanonicalizerPass {
    pub fn new() -> CanonicalizerPass {
        CanonicalizerPass {
            opts: PassOptions::new(vec![
                OptionSpec {
                    name: "max-iterations",
                    kind: OptionKind::Int,
                    default: "10",
                    description: "Max. iterations between applying patterns / simplifying regions",
                },
                OptionSpec {
                    name: "max-num-rewrites",
                    kind: OptionKind::Int,
                    default: "-1",
                    description: "Max. number of pattern rewrites within an iteration",
                },
                OptionSpec {
                    name: "region-simplify",
                    kind: OptionKind::Enum(&["disabled", "normal", "aggressive"]),
                    default: "normal",
                    description: "Perform control flow optimizations to the region tree",
                },
                OptionSpec {
                    name: "test-convergence",
                    kind: OptionKind::Bool,
                    default: "false",
                    description: "Test only: Fail pass on non-convergence to detect cyclic pattern",
                },
                OptionSpec {
                    name: "top-down",
                    kind: OptionKind::Bool,
                    default: "true",
                    description: "Seed the worklist in general top-down order",
                },
            ]),
            folded: 0,
            patterns: 0,
            erased: 0,
        }
    }
}

impl Default for CanonicalizerPass {
    fn default() -> Self {
        Self::new()
    }
}

impl Pass for CanonicalizerPass {
    fn argument(&self) -> &'static str {
        "canonicalize"
    }
    fn name(&self) -> &'static str {
        "Canonicalizer"
    }
    fn summary(&self) -> &'static str {
        "Canonicalize operations"
    }
    fn description(&self) -> &'static str {
        "Applies the dialects' folders and canonicalization patterns and removes dead operations, to a fixed point."
    }
    fn options(&mut self) -> Option<&mut PassOptions> {
        Some(&mut self.opts)
    }
    fn options_ref(&self) -> Option<&PassOptions> {
        Some(&self.opts)
    }
    fn run(
        &mut self,
        cx: &mut PassContext<'_>,
        op: ftuner_ir::OpId,
    ) -> Result<(), ftuner_pass::PassFailure> {
        let cfg = GreedyConfig {
            max_iterations: self.opts.int("max-iterations"),
            max_num_rewrites: self.opts.int("max-num-rewrites"),
            top_down: self.opts.bool("top-down"),
            fold: true,
        };
        let st = apply_greedily(cx.ctx, cx.ir, op, cfg);
        self.folded += st.folded;
        self.patterns += st.patterns;
        self.erased += st.erased;
        if self.opts.bool("test-convergence") && !st.converged {
            cx.emit(ftuner_ir::Diagnostic::error(
                cx.ir.loc(op),
                "pattern rewriting did not converge",
            ));
            return Err(ftuner_pass::PassFailure);
        }
        Ok(())
    }
    fn statistics(&self) -> Vec<Statistic> {
        vec![
            Statistic {
                name: "num-folded",
                description: "Number of operations folded",
                value: self.folded,
            },
            Statistic {
                name: "num-patterns",
                description: "Number of canonicalization patterns applied",
                value: self.patterns,
            },
            Statistic {
                name: "num-dce'd",
                description: "Number of operations erased as dead",
                value: self.erased,
            },
        ]
    }
    fn clone_pass(&self) -> Box<dyn Pass> {
        Box::new(CanonicalizerPass {
            opts: self.opts.clone(),
            folded: 0,
            patterns: 0,
            erased: 0,
        })
    }
}
