#![doc = include_str!("../../../docs/embedding.md")]

use ftuner_ir::{Attribute, Diagnostic, OpId};
use ftuner_pass::{
    options::OptionKind, OptionSpec, Pass, PassContext, PassFailure, PassOptions, Statistic,
};

/// `tag-contractions`: our own pass. It marks every contraction with its multiply-add
/// count (`downstream.macs`, when static) and, with `max-macs=N`, fails on one larger than
/// N with an error at the op.
pub struct TagContractionsPass {
    opts: PassOptions,
    tagged: u64,
}

impl Default for TagContractionsPass {
    fn default() -> Self {
        TagContractionsPass {
            opts: PassOptions::new(vec![OptionSpec {
                name: "max-macs",
                kind: OptionKind::UInt,
                default: "0",
                description:
                    "Fail on a contraction with more static multiply-adds than this (0: no limit)",
            }]),
            tagged: 0,
        }
    }
}

impl Pass for TagContractionsPass {
    fn argument(&self) -> &'static str {
        "tag-contractions"
    }
    fn name(&self) -> &'static str {
        "TagContractions"
    }
    fn summary(&self) -> &'static str {
        "Mark contractions with their multiply-add count (a downstream pass)"
    }
    fn options(&mut self) -> Option<&mut PassOptions> {
        Some(&mut self.opts)
    }
    fn options_ref(&self) -> Option<&PassOptions> {
        Some(&self.opts)
    }
    fn run(&mut self, cx: &mut PassContext<'_>, op: OpId) -> Result<(), PassFailure> {
        let limit = self.opts.int("max-macs");
        for c in ftuner_ukernel::contraction::find_all(cx.ir, op) {
            let dims = [c.batch_size(), c.m_size(), c.n_size(), c.k_size()];
            let text = if dims.contains(&ftuner_ir::DYNAMIC) {
                "dynamic".to_string()
            } else {
                let macs: i64 = dims.iter().map(|d| (*d).max(1)).product();
                if limit > 0 && macs > limit {
                    cx.emit(Diagnostic::error(
                        cx.ir.loc(c.op),
                        format!("contraction of {macs} multiply-adds exceeds max-macs={limit}"),
                    ));
                    return Err(PassFailure);
                }
                macs.to_string()
            };
            cx.ir
                .set_attr(c.op, "downstream.macs", Some(Attribute::string(text)));
            self.tagged += 1;
        }
        Ok(())
    }
    fn statistics(&self) -> Vec<Statistic> {
        vec![Statistic {
            name: "num-tagged",
            description: "Contractions tagged",
            value: self.tagged,
        }]
    }
    fn clone_pass(&self) -> Box<dyn Pass> {
        Box::new(TagContractionsPass {
            opts: self.opts.clone(),
            tagged: 0,
        })
    }
}

/// Every ftuner pass plus ours.
pub fn registry() -> ftuner_pass::PassRegistry {
    let mut r = ftuner_opt::default_registry();
    r.register(|| Box::new(TagContractionsPass::default()));
    r
}
