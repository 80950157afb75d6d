//! linalg contractions as tensor-algebra expressions.
//!
//! A contraction (`linalg.matmul`, `batch_matmul`, the `conv_2d` family, a mul-add
//! `linalg.generic`) with indexing maps `A`, `B` → `C` is
//! `L<parallel dims> Sum<reduction dims> { $0[A(d)] * $1[B(d)] }`, added to its init.
//! The traversal follows the output map (which must be a permutation of the parallel dims:
//! then the result's dim k is traversal iterator k).

use ftuner_dialects::ta::{Bound, Idx, Iter, Scope, Src, Term};
use ftuner_ir::{AffineExpr, Ir, OpId, Value, DYNAMIC};

/// A contraction read as an expression.
pub struct FromLinalg {
    pub scope: Scope,
    /// The two inputs (`$0`, `$1`).
    pub inputs: Vec<Value>,
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
        "linalg.matmul" => &["m", "n", "k"],
        "linalg.batch_matmul" => &["b", "m", "n", "k"],
        "linalg.conv_2d_nchw_fchw" => &["n", "f", "h", "w", "c", "r", "s"],
        "linalg.conv_2d_nhwc_hwcf" => &["n", "h", "w", "f", "r", "s", "c"],
        _ => &[],
    };
    (0..nd)
        .map(|d| named.get(d).map_or(format!("d{d}"), |s| s.to_string()))
        .collect()
}

/// The expression of a contraction op, or why it has none.
pub fn from_linalg(ir: &Ir, op: OpId) -> Result<FromLinalg, String> {
    if ftuner_ukernel::contraction::classify(ir, op).is_none() {
        return Err("not a two-input mul-add contraction".into());
    }
    let (ins, outs) = ftuner_dialects::linalg::ins_outs(ir, op);
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
        let mut from_out = None;
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
                    from_out = Some(());
                }
            }
        }
        let _ = from_out;
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
    Ok(FromLinalg {
        scope: Scope { trav, sum, body },
        inputs: vec![ins[0], ins[1]],
        init: outs[0],
    })
}

/// Whether `v` is a `linalg.fill` of 0 (so the contraction's result is the expression).
pub fn is_zero_fill(ir: &Ir, v: Value) -> bool {
    let Some(d) = ir.defining_op(v) else {
        return false;
    };
    if ir.name(d) != "linalg.fill" {
        return false;
    }
    let Some(c) = ir.operands(d).first().and_then(|x| ir.defining_op(*x)) else {
        return false;
    };
    ir.name(c) == "arith.constant"
        && ir.attr(c, "value").is_some_and(
            |a| matches!(a.kind(), ftuner_ir::AttrKind::Float { bits, .. } if *bits == 0),
        )
}
