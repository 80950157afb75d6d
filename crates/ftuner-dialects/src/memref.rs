//! `memref`: verifiers, type inference and result names.

use ftuner_ir::dialect::TypeEnv;
use ftuner_ir::Context;
use ftuner_ir::{Ir, OpId, Type, Value, DYNAMIC};

macro_rules! names {
    ($($f:ident => $n:expr),* $(,)?) => {$(
        pub fn $f(ir: &Ir, op: OpId, f: &mut dyn FnMut(Value, String)) {
            f(ir.result(op, 0), $n.to_string());
        }
    )*};
}
names! {
    asm_names_alloc => "alloc", asm_names_alloca => "alloca", asm_names_dim => "dim", asm_names_cast => "cast",
    asm_names_subview => "subview", asm_names_collapse_shape => "collapse_shape", asm_names_expand_shape => "expand_shape",
    asm_names_reshape => "reshape",
}

fn verify_alloc_like(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let t = ir.value_type(ir.result(op, 0));
    let dyns = t
        .shape()
        .map(|s| s.iter().filter(|d| **d == DYNAMIC).count())
        .unwrap_or(0);
    // alloc and alloca have the same operand groups.
    let n = crate::ops::memref::AllocOp(op).dynamicsizes(ir).len();
    if dyns != n {
        return Err("dimension operand count does not equal memref dynamic dimension count".into());
    }
    if let Some(a) = ir.attr(op, "alignment").and_then(|a| a.as_i64()) {
        if a <= 0 || (a & (a - 1)) != 0 {
            return Err("attribute 'alignment' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive and whose value is a power of two > 0".into());
        }
    }
    Ok(())
}
pub fn verify_alloc(ctx: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    verify_alloc_like(ctx, ir, op)
}
pub fn verify_alloca(ctx: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    verify_alloc_like(ctx, ir, op)
}
pub fn infer_load(env: &mut TypeEnv) -> Result<(), String> {
    if let Some(t) = env.get1("memref") {
        env.set("result", vec![t.element_type()]);
    }
    Ok(())
}
pub fn infer_store(env: &mut TypeEnv) -> Result<(), String> {
    if let Some(t) = env.get1("memref") {
        env.set("value", vec![t.element_type()]);
    }
    Ok(())
}
pub fn infer_dim(env: &mut TypeEnv) -> Result<(), String> {
    env.set("result", vec![Type::index()]);
    Ok(())
}
fn check_indices(ir: &Ir, m: Value, n: usize) -> Result<(), String> {
    let t = ir.value_type(m);
    if t.rank().is_some_and(|r| r != n) {
        return Err(format!(
            "incorrect number of indices for load, expected {}, but got {n}",
            t.rank().unwrap_or(0)
        ));
    }
    Ok(())
}
pub fn verify_load(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    check_indices(ir, ir.operand(op, 0), ir.operands(op).len() - 1)
}
pub fn verify_store(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let m = ir.operand(op, 1);
    if ir.value_type(ir.operand(op, 0)) != ir.value_type(m).element_type() {
        return Err(
            "failed to verify that type of 'value' matches element type of 'memref'".into(),
        );
    }
    check_indices(ir, m, ir.operands(op).len() - 2)
}

/// The `reassociation` groups of a `collapse_shape`/`expand_shape` (dims as indices;
/// malformed entries read as 0, which the op verifier rejects).
pub fn reassociation(ir: &Ir, op: OpId) -> Vec<Vec<usize>> {
    ir.attr(op, "reassociation")
        .and_then(|a| a.as_array())
        .unwrap_or(&[])
        .iter()
        .map(|g| {
            g.as_array()
                .unwrap_or(&[])
                .iter()
                .map(|d| d.as_i64().unwrap_or(0).max(0) as usize)
                .collect()
        })
        .collect()
}

/// `memref.dim`: a static dim is a constant; a dynamic dim of an allocation (or of an
/// `expand_shape` with its output sizes) is the size operand it was made with (upstream's
/// `DimOfMemRefReshape`-style folds), so shape checks between buffers of one size fold.
pub fn fold_dim(
    ir: &mut Ir,
    op: OpId,
    c: &[Option<ftuner_ir::Attribute>],
) -> Option<Vec<ftuner_ir::dialect::FoldResult>> {
    use ftuner_ir::dialect::FoldResult;
    use ftuner_ir::{Attribute, DYNAMIC};
    let idx = usize::try_from(c.get(1).copied().flatten()?.as_i64()?).ok()?;
    let src = ir.operand(op, 0);
    let shape = ir.value_type(src).shape()?.to_vec();
    let d = *shape.get(idx)?;
    if d != DYNAMIC {
        return Some(vec![FoldResult::Attr(Attribute::index(d))]);
    }
    let def = ir.defining_op(src)?;
    let k = shape[..idx].iter().filter(|x| **x == DYNAMIC).count();
    let first = match ir.name(def) {
        // alloc(dynamic sizes...) [symbol operands]: the sizes come first.
        "memref.alloc" | "memref.alloca" => 0,
        // expand_shape(src, output sizes...)
        "memref.expand_shape" => 1,
        _ => return None,
    };
    let v = *ir.operands(def).get(first + k)?;
    Some(vec![FoldResult::Value(v)])
}

pub fn verify_subview(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let src = ir.value_type(ir.operand(op, 0));
    let res = ir.value_type(ir.result(op, 0));
    if src.element_type() != res.element_type() {
        return Err("expected the same element type for source and result".into());
    }
    crate::tensor::verify_slice_bounds(ir, op, src.shape().unwrap_or(&[])).map(|_| ())
}
