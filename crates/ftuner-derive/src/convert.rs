//! linalg contractions as tensor-algebra expressions.
//!
//! A contraction (`linalg.matmul`, `batch_matmul`, the `conv_2d` family, a mul-add
//! `linalg.generic`) with indexing maps `A`, `B` → `C` is
//! `L<parallel dims> Sum<reduction dims> { $0[A(d)] * $1[B(d)] }`, added to its init.
//! The traversal follows the output map (which must be a permutation of the parallel dims:
//! then the result's dim k is traversal iterator k).

use ftuner_dialects::ops;
use ftuner_dialects::ta::{Bound, Idx, Iter, Scope, Src, Term};
use ftuner_ir::{AffineExpr, Ir, OpId, Value, DYNAMIC};

/// A contraction read as an expression.
pub struct FromLinalg {
    /// The expression, with zero-padding producers fused ([`fuse_padding`]).
    pub scope: Scope,
    /// What its accesses read (`$0`, `$1`, ...).
    pub inputs: Vec<Value>,
    /// The op's own expression and operands, before fusion (the op as it is priced, and
    /// what `dim($i, d)` bounds refer to in both).
    pub unfused: Scope,
    pub operands: Vec<Value>,
    /// The init the contraction accumulates into.
    pub init: Value,
}

fn affine_to_idx(e: &AffineExpr, names: &[String]) -> Option<Idx> {
    Some(match e {
        AffineExpr::Dim(d) => Idx::var(names.get(*d as usize)?),
        AffineExpr::Const(c) => Idx::constant(*c),
        AffineExpr::Symbol(_) => return None,
        AffineExpr::Add(a, b) => affine_to_idx(a, names)?.add(&affine_to_idx(b, names)?),
        AffineExpr::Mul(a, b) => {
            let (x, y) = (affine_to_idx(a, names)?, affine_to_idx(b, names)?);
            match (x.as_const(), y.as_const()) {
                (Some(k), _) => y.scale(k),
                (_, Some(k)) => x.scale(k),
                _ => return None,
            }
        }
        AffineExpr::FloorDiv(a, b) => {
            let k = affine_to_idx(b, names)?.as_const().filter(|k| *k > 0)?;
            affine_to_idx(a, names)?.floordiv(k)
        }
        AffineExpr::Mod(a, b) => {
            let k = affine_to_idx(b, names)?.as_const().filter(|k| *k > 0)?;
            affine_to_idx(a, names)?.modulo(k)
        }
        AffineExpr::CeilDiv(..) => return None,
    })
}

/// Iterator names by role: output dims `n f h w ...` read like the op's dims where known.
fn dim_names(ir: &Ir, op: OpId, nd: usize) -> Vec<String> {
    let named: &[&str] = match ir.name(op) {
        ops::linalg::MatmulOp::NAME => &["m", "n", "k"],
        ops::linalg::BatchMatmulOp::NAME => &["b", "m", "n", "k"],
        ops::linalg::Conv2dNchwFchwOp::NAME => &["n", "f", "h", "w", "c", "r", "s"],
        ops::linalg::Conv2dNhwcHwcfOp::NAME => &["n", "h", "w", "f", "r", "s", "c"],
        _ => &[],
    };
    (0..nd)
        .map(|d| named.get(d).map_or(format!("d{d}"), |s| s.to_string()))
        .collect()
}

/// The expression of a contraction op, or why it has none.
pub fn from_linalg(ir: &Ir, op: OpId) -> Result<FromLinalg, String> {
    // A two-input mul-add: a named contraction, or a generic whose body is one (a
    // banded product, whose band iterator reads only one input, is one too, though not a
    // matmul-like contraction).
    let named = ftuner_ukernel::contraction::classify(ir, op).is_some();
    let (ins, outs) = ftuner_dialects::linalg::ins_outs(ir, op);
    let generic = ir.name(op) == ops::linalg::GenericOp::NAME
        && ins.len() == 2
        && outs.len() == 1
        && ftuner_ukernel::contraction::body_is_mul_add(ir, op);
    if !named && !generic {
        return Err("not a two-input mul-add contraction".into());
    }
    let maps =
        ftuner_dialects::linalg::body::indexing_maps(ir, op).ok_or("has no indexing maps")?;
    let nd = maps[0].num_dims as usize;
    let names = dim_names(ir, op, nd);
    // Output map: a permutation of the parallel dims.
    let mut par = vec![];
    for e in &maps[2].results {
        match e {
            AffineExpr::Dim(d) if !par.contains(d) => par.push(*d),
            _ => return Err("output map is not a projected permutation".into()),
        }
    }
    let red: Vec<u32> = (0..nd as u32).filter(|d| !par.contains(d)).collect();
    // Loop bounds: a dim read plainly by some operand.
    let vals = [ins[0], ins[1], outs[0]];
    let bound = |d: u32| -> Option<Bound> {
        for (mi, m) in maps.iter().enumerate() {
            for (j, e) in m.results.iter().enumerate() {
                if *e == AffineExpr::Dim(d) {
                    let sz = ir.value_type(vals[mi]).shape()?[j];
                    if sz != DYNAMIC {
                        return Some(Bound::fixed(sz));
                    }
                    if mi < 2 {
                        return Some(Bound {
                            dim: Some((mi, j)),
                            c: 0,
                        });
                    }
                }
            }
        }
        None
    };
    let iter = |d: u32| -> Result<Iter, String> {
        Ok(Iter {
            name: names[d as usize].clone(),
            lo: 0,
            hi: bound(d).ok_or_else(|| {
                format!(
                    "the extent of loop {} is dynamic and not a dim of an input",
                    names[d as usize]
                )
            })?,
        })
    };
    let trav = par
        .iter()
        .map(|d| iter(*d))
        .collect::<Result<Vec<_>, _>>()?;
    let sum = red
        .iter()
        .map(|d| iter(*d))
        .collect::<Result<Vec<_>, _>>()?;
    let access = |mi: usize| -> Result<Term, String> {
        let idx = maps[mi]
            .results
            .iter()
            .map(|e| affine_to_idx(e, &names).ok_or("non-affine index"))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Term::Access(Src::Input(mi), idx))
    };
    let body = Term::product(access(0)?, access(1)?);
    let unfused = Scope { trav, sum, body };
    let (scope, inputs) = fuse_padding(ir, &unfused, &[ins[0], ins[1]]);
    Ok(FromLinalg {
        scope,
        inputs,
        unfused,
        operands: vec![ins[0], ins[1]],
        init: outs[0],
    })
}

/// How an input reads its source when it only pads it with zeros: per dim, `(offset,
/// stride)`: element `i` of the input is element `(i - offset) / stride` of the source
/// (exact division; 0 elsewhere). `tensor.pad` with a zero yield (stride 1, offset = low
/// padding) and `tensor.insert_slice` into a zero fill (zero insertion, as transposed
/// convolutions are exported) qualify.
fn zero_padding(ir: &Ir, v: Value) -> Option<(Value, Vec<(i64, i64)>)> {
    let d = ir.defining_op(v)?;
    let arr = |k: &str| ir.attr(d, k).and_then(|a| a.as_dense_i64s());
    match ir.name(d) {
        ops::tensor::PadOp::NAME => {
            let low = arr("static_low")?;
            if low.contains(&DYNAMIC) {
                return None;
            }
            let body = ir.region_entry(*ir.regions_of(d).first()?)?;
            let y = ir.block_ops(body).last()?;
            if !is_zero(ir, *ir.operands(y).first()?) {
                return None;
            }
            Some((ir.operand(d, 0), low.iter().map(|l| (*l, 1)).collect()))
        }
        ops::tensor::InsertSliceOp::NAME => {
            let (offs, strides) = (arr("static_offsets")?, arr("static_strides")?);
            if offs.contains(&DYNAMIC) || strides.iter().any(|s| *s <= 0) {
                return None;
            }
            if !is_zero_fill(ir, ir.operand(d, 1)) {
                return None;
            }
            Some((ir.operand(d, 0), offs.into_iter().zip(strides).collect()))
        }
        _ => None,
    }
}

/// Inter-expression fusion of zero padding: each input that only pads its source with
/// zeros is replaced by the source, read at `(i - offset) / stride` (out-of-range and
/// inexact reads are 0, as the padding was). Bounds keep referring to the op's operands.
pub fn fuse_padding(ir: &Ir, s: &Scope, ins: &[Value]) -> (Scope, Vec<Value>) {
    let mut inputs = ins.to_vec();
    let mut body = s.body.clone();
    for (i, v) in ins.iter().enumerate() {
        let Some((src, dims)) = zero_padding(ir, *v) else {
            continue;
        };
        if ir.value_type(src).rank() != Some(dims.len()) {
            continue;
        }
        inputs[i] = src;
        body = map_access(&body, i, &|idx: &[Idx]| {
            idx.iter()
                .zip(&dims)
                .map(|(e, (off, st))| e.offset(-off).exact_div(*st))
                .collect()
        });
    }
    // Two inputs that became one value are still two inputs (the verifier wants each
    // read; the expression does not care).
    (
        Scope {
            trav: s.trav.clone(),
            sum: s.sum.clone(),
            body,
        },
        inputs,
    )
}

fn map_access(t: &Term, input: usize, f: &dyn Fn(&[Idx]) -> Vec<Idx>) -> Term {
    match t {
        Term::Access(Src::Input(i), idx) if *i == input => Term::Access(Src::Input(*i), f(idx)),
        Term::Bin(o, a, b) => Term::Bin(
            *o,
            Box::new(map_access(a, input, f)),
            Box::new(map_access(b, input, f)),
        ),
        _ => t.clone(),
    }
}

fn is_zero(ir: &Ir, v: Value) -> bool {
    ir.defining_op(v).is_some_and(|c| {
        ir.name(c) == ops::arith::ConstantOp::NAME
            && ir.attr(c, "value").is_some_and(
                |a| matches!(a.kind(), ftuner_ir::AttrKind::Float { bits, .. } if *bits == 0),
            )
    })
}

/// Whether `v` is a `linalg.fill` of 0 (so the contraction's result is the expression).
pub fn is_zero_fill(ir: &Ir, v: Value) -> bool {
    let Some(d) = ir.defining_op(v) else {
        return false;
    };
    if ir.name(d) != ops::linalg::FillOp::NAME {
        return false;
    }
    let Some(c) = ir.operands(d).first().and_then(|x| ir.defining_op(*x)) else {
        return false;
    };
    ir.name(c) == ops::arith::ConstantOp::NAME
        && ir.attr(c, "value").is_some_and(
            |a| matches!(a.kind(), ftuner_ir::AttrKind::Float { bits, .. } if *bits == 0),
        )
}
