//! `gpu` ops inside kernels to NVVM (MLIR's `convert-gpu-to-nvvm`): thread and block ids
//! and dimensions read from the PTX special registers, `gpu.barrier` as `barrier0`. The
//! kernels themselves (`gpu.module`, `gpu.func`) are converted as symbol tables and
//! functions (to_llvm.rs, func.rs).

use super::{unsupported, LlvmRewriter, R};
use ftuner_dialects::ops;
use ftuner_ir::{AttrKind, OpId, Type};

impl LlvmRewriter<'_> {
    /// Convert a `gpu` op.
    pub(super) fn gpu(&mut self, op: OpId, name: &'static str) -> R<()> {
        match name {
            ops::gpu::ThreadIdOp::NAME
            | ops::gpu::BlockIdOp::NAME
            | ops::gpu::BlockDimOp::NAME
            | ops::gpu::GridDimOp::NAME => self.special_register(op, name),
            ops::gpu::BarrierOp::NAME => {
                self.call("llvm.nvvm.barrier0", "void ()", vec![], None);
                Ok(())
            }
            _ => Err(unsupported(op)),
        }
    }

    /// NVVM special registers, as MLIR's gpu-to-nvvm lowering reads them.
    fn special_register(&mut self, op: OpId, name: &str) -> R<()> {
        let dim = match self.ir.attr(op, "dimension").map(|a| a.kind()) {
            Some(AttrKind::Dialect { body, .. }) => {
                if body.contains('y') {
                    "y"
                } else if body.contains('z') {
                    "z"
                } else {
                    "x"
                }
            }
            _ => return Err((op, "needs a dimension".into())),
        };
        let reg = match name {
            ops::gpu::ThreadIdOp::NAME => "tid",
            ops::gpu::BlockIdOp::NAME => "ctaid",
            ops::gpu::BlockDimOp::NAME => "ntid",
            _ => "nctaid",
        };
        let f = format!("llvm.nvvm.read.ptx.sreg.{reg}.{dim}");
        let r = self
            .call(&f, "i32 ()", vec![], Some(Type::i32()))
            .ok_or_else(|| (op, "no result".to_string()))?;
        let w = self.val(ops::llvm::ZextOp::NAME, vec![r], Type::i64());
        self.bind(op, w);
        Ok(())
    }
}
