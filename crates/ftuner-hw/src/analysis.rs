//! The `hw-model` analysis: the model for the target a module is compiled for, computed
//! once per op through the AnalysisManager. The target is the `ftuner.target` attribute of
//! the op (or of an enclosing module), as `ftuner-opt --target=` sets it; `host` otherwise.

use crate::model::HardwareModel;
use ftuner_ir::{Context, Ir, OpId};

/// The discardable attribute naming a module's target (`ftuner.target = "a100"`).
pub const TARGET_ATTR: &str = "ftuner.target";

pub struct HwModelAnalysis {
    pub model: HardwareModel,
}

/// The target named on `op` or its ancestors.
pub fn target_of(ir: &Ir, mut op: OpId) -> Option<String> {
    loop {
        if let Some(t) = ir.attr(op, TARGET_ATTR).and_then(|a| a.as_str()) {
            return Some(t.to_string());
        }
        op = ir.parent_op(op)?;
    }
}

impl ftuner_pass::Analysis for HwModelAnalysis {
    fn name() -> &'static str {
        "HwModel"
    }
    fn compute(_ctx: &Context, ir: &Ir, op: OpId) -> Result<Self, String> {
        let t = target_of(ir, op).unwrap_or_else(|| "host".to_string());
        Ok(HwModelAnalysis {
            model: HardwareModel::load_named(&t)?,
        })
    }
}
