//! Bufferization of `vector` transfers: `vector.transfer_read` reads the buffer,
//! `vector.transfer_write` writes its destination's buffer (in place, or a copy).

use super::{dict_entries, BufferRewriter, R};
use ftuner_ir::{BlockId, OpId};

impl BufferRewriter<'_> {
    /// `vector.transfer_read` of the source's buffer.
    pub(super) fn transfer_read(&mut self, op: OpId, b: BlockId) -> R<()> {
        let loc = self.ir.loc(op);
        let ops = self.vs(op, self.ir.operands(op))?;
        let res = self.ir.result(op, 0);
        let t = self.ir.value_type(res);
        let props = dict_entries(self.ir.op(op).props);
        let n = self.new_op(b, self.ir.name(op), ops, vec![t], props, loc);
        self.map.insert(res, self.ir.result(n, 0));
        Ok(())
    }

    /// `vector.transfer_write` into the destination's buffer, which becomes its result.
    pub(super) fn transfer_write(&mut self, op: OpId, b: BlockId) -> R<()> {
        let loc = self.ir.loc(op);
        let (ops, dst) = self.store_operands(b, op)?;
        let props = dict_entries(self.ir.op(op).props);
        self.new_op(b, self.ir.name(op), ops, vec![], props, loc);
        self.map.insert(self.ir.result(op, 0), dst);
        Ok(())
    }
}

/// The `vector` transfers' bufferization models.
pub(super) fn register(reg: &mut ftuner_ir::Registry) {
    use super::Bufferizable;
    reg.attach_interface(
        ftuner_dialects::ops::vector::TransferReadOp::NAME,
        Bufferizable::plain(|rw, op, b| rw.transfer_read(op, b)),
    );
    reg.attach_interface(
        ftuner_dialects::ops::vector::TransferWriteOp::NAME,
        Bufferizable {
            destinations: super::tensor::writes_operand_1,
            ..Bufferizable::plain(|rw, op, b| rw.transfer_write(op, b))
        },
    );
}
