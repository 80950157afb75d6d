//! The run-time shape check `lower-ukernels` puts before a patched contraction's loops.

use super::tiles::patch_maps;
use super::{eval_expr, B};
use ftuner_dialects::linalg::ins_outs;
use ftuner_dialects::ops;
use ftuner_dialects::ukernel::{epilogue_inputs, epilogue_maps};
use ftuner_ir::{AffineExpr, Attribute, Ir, OpBuilder, OpId, Type, Value};

/// Before the loops: `cf.assert` that operand sizes agree with one iteration space —
/// every dimension a loop dimension indexes directly equals the first such one, and every
/// windowed index (`d1 + d4`, `2 * d1 + d4`) of a non-empty space stays inside its
/// dimension — so mismatched run-time shapes stop with a message, never read out of
/// bounds. (The tile loops take each extent from one operand.)
pub(crate) fn shape_asserts(ir: &mut Ir, op: OpId) -> Result<(), String> {
    let mut maps = patch_maps(ir, op).ok_or("the patch needs three indexing maps")?;
    let (ins, outs) = ins_outs(ir, op);
    let mut operands: Vec<Value> = ins.iter().chain(&outs).copied().collect();
    if operands.len() != 3 {
        return Err("the patch needs three operands".into());
    }
    // The epilogue's operands must agree with the loop extents too.
    operands.extend(epilogue_inputs(ir, op));
    maps.extend(epilogue_maps(ir, op));
    let loc = ir.loc(op);
    let nd = maps[0].num_dims;
    let size = |ir: &mut Ir, v: Value, j: usize| {
        let t = ir.value_type(v);
        match t.shape().and_then(|s| s.get(j)).copied() {
            Some(d) if d != ftuner_ir::DYNAMIC => OpBuilder::before(ir, op).index(d),
            _ => {
                let c = OpBuilder::before(ir, op).index(j as i64);
                let dim = if t.is_memref() {
                    ops::memref::DimOp::NAME
                } else {
                    ops::tensor::DimOp::NAME
                };
                OpBuilder::before(ir, op).value(dim, vec![v, c], Type::index(), &[])
            }
        }
    };
    let cmp = |ir: &mut Ir, p: i64, a: Value, b: Value| {
        OpBuilder::before(ir, op).value(
            ops::arith::CmpiOp::NAME,
            vec![a, b],
            Type::i1(),
            &[("predicate", Attribute::i64(p))],
        )
    };
    let i1 = |ir: &mut Ir, name: &str, a: Value, b: Value| {
        OpBuilder::before(ir, op).value(name, vec![a, b], Type::i1(), &[])
    };
    // Extent of each loop dim: the first operand dim it indexes directly.
    let mut ext: Vec<Option<Value>> = vec![None; nd as usize];
    let mut conds = vec![];
    for (m, v) in maps.iter().zip(&operands) {
        for (j, e) in m.results.iter().enumerate() {
            if let AffineExpr::Dim(d) = e {
                let s = size(ir, *v, j);
                match ext[*d as usize] {
                    None => ext[*d as usize] = Some(s),
                    Some(first) => conds.push(cmp(ir, 0, s, first)),
                }
            }
        }
    }
    if ext.iter().all(|x| x.is_some()) {
        let exts: Vec<Value> = ext.iter().flatten().copied().collect();
        let zero = OpBuilder::before(ir, op).index(0);
        let one = OpBuilder::before(ir, op).index(1);
        let mut empty = None;
        for x in &exts {
            let z = cmp(ir, 0, *x, zero);
            empty = Some(match empty {
                None => z,
                Some(p) => i1(ir, ops::arith::OriOp::NAME, p, z),
            });
        }
        let lasts: Vec<Value> = exts
            .iter()
            .map(|x| {
                let ov = Attribute::dialect("arith", "overflow<none>");
                OpBuilder::before(ir, op).value(
                    ops::arith::SubiOp::NAME,
                    vec![*x, one],
                    Type::index(),
                    &[("overflowFlags", ov)],
                )
            })
            .collect();
        for (m, v) in maps.iter().zip(&operands) {
            for (j, e) in m.results.iter().enumerate() {
                if matches!(e, AffineExpr::Dim(_)) || !e.is_pure_affine() {
                    continue;
                }
                // Coefficients are non-negative in windows (strides, dilations).
                let mut b = B::new(&mut *ir, loc);
                let scratch = b.ir.new_block(&[]);
                let hi = eval_expr(&mut b, scratch, e, &|d| lasts[d as usize]);
                for o in ir.block_ops_vec(scratch) {
                    ir.unlink(o);
                    ir.insert_before(op, o);
                }
                let s = size(ir, *v, j);
                let inside = cmp(ir, 6, hi, s);
                if let Some(z) = empty {
                    conds.push(i1(ir, ops::arith::OriOp::NAME, inside, z));
                }
            }
        }
    }
    let mut ok: Option<Value> = None;
    for c in conds {
        ok = Some(match ok {
            None => c,
            Some(p) => i1(ir, ops::arith::AndiOp::NAME, p, c),
        });
    }
    if let Some(ok) = ok {
        let at_loc = ftuner_ir::diag::file_line_col(loc)
            .map(|(f, l, c)| format!(" at {f}:{l}:{c}"))
            .unwrap_or_default();
        let msg = format!("operand shapes of the contraction{at_loc} do not agree");
        OpBuilder::before(ir, op).create(
            ops::cf::AssertOp::NAME,
            vec![ok],
            vec![],
            &[("msg", Attribute::string(msg))],
        );
    }
    Ok(())
}
