#![doc = include_str!("../../../docs/embedding.md")]

use ftuner_ir::{Attribute, Diagnostic, OpId};
use ftuner_pass::{define_pass, PassContext, PassFailure};

define_pass! {
    /// `tag-contractions`: our own pass. It marks every contraction with its multiply-add
    /// count (`downstream.macs`, when static) and, with `max-macs=N`, fails on one larger
    /// than N with an error at the op.
    pub struct TagContractionsPass {
        argument: "tag-contractions",
        name: "TagContractions",
        summary: "Mark contractions with their multiply-add count (a downstream pass)",
        options: TagContractionsOptions {
            "max-macs" => max_macs: u64 = "0",
                "Fail on a contraction with more static multiply-adds than this (0: no limit)";
        },
        statistics: {
            tagged: "num-tagged" => "Contractions tagged",
        },
    }
}

impl TagContractionsPass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        op: OpId,
        o: &TagContractionsOptions,
    ) -> Result<(), PassFailure> {
        let limit = o.max_macs as i64;
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
}

/// Every ftuner pass plus ours.
pub fn registry() -> ftuner_pass::PassRegistry {
    let mut r = ftuner_opt::default_registry();
    r.register(|| Box::new(TagContractionsPass::default()));
    r
}
