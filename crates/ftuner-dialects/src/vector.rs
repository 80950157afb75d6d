//! `vector`: op definitions come from its spec (ir-specs/vector.toml); this module adds
//! the verifiers a spec cannot state.

use ftuner_ir::{Ir, OpId};

/// `vector.shuffle`: operands of one element type and rank (0-d ones read as one lane)
/// with the same trailing dims; one mask entry per leading row of the result, each naming
/// a row of the two operands concatenated along the leading dim.
pub fn verify_shuffle(ir: &Ir, op: OpId) -> Result<(), String> {
    let (a, b) = (
        ir.value_type(ir.operand(op, 0)),
        ir.value_type(ir.operand(op, 1)),
    );
    let r = ir.value_type(ir.result(op, 0));
    let (Some(sa), Some(sb), Some(sr)) = (a.shape(), b.shape(), r.shape()) else {
        return Err("expects vector operands and result".into());
    };
    if a.element_type() != b.element_type() || a.element_type() != r.element_type() {
        return Err("operands and result must have the same element type".into());
    }
    if sa.len() != sb.len() || sa.get(1..) != sb.get(1..) {
        return Err("operands must have the same rank and trailing dims".into());
    }
    let lead = |s: &[i64]| s.first().copied().unwrap_or(1);
    let (na, nb) = (lead(sa), lead(sb));
    let mask = ir
        .attr(op, "mask")
        .and_then(|m| m.as_dense_i64s())
        .ok_or("requires a `mask` dense i64 array")?;
    if sr.first() != Some(&(mask.len() as i64)) || sr.get(1..) != sa.get(1..).or(Some(&[])) {
        return Err(format!(
            "result must have {} leading rows (the mask's length) and the operands' trailing dims",
            mask.len()
        ));
    }
    if let Some(bad) = mask.iter().find(|m| **m < -1 || **m >= na + nb) {
        return Err(format!(
            "mask entry {bad} is out of range for operands of {na} and {nb} rows"
        ));
    }
    Ok(())
}
