//! What each named structured op computes: its body region (MLIR's region builders) and
//! its indexing maps.

use super::named::BodyBuilder;
use crate::ops::linalg;
use ftuner_ir::{AffineMap, AttrKind, Attribute, Ir, OpId, RegionId, Type, Value};

/// Default indexing maps of contraction ops (matmul-like), if `name` is one.
pub fn default_contraction_maps(name: &str) -> Option<Vec<AffineMap>> {
    if ![
        linalg::MatmulOp::NAME,
        linalg::BatchMatmulOp::NAME,
        linalg::BatchReduceMatmulOp::NAME,
    ]
    .contains(&name)
    {
        return None;
    }
    crate::named_structured(name)?.static_maps()
}

/// An op's `n` integers `name` (`strides`, `dilations`: a dense array or a dense vector,
/// splat or not); `n` ones when absent or malformed.
pub fn ints(ir: &Ir, op: OpId, name: &str, n: usize) -> Vec<i64> {
    let a = ir.attr(op, name);
    let v: Option<Vec<i64>> = a.and_then(|a| match a.kind() {
        ftuner_ir::AttrKind::DenseElements {
            splat, elements, ..
        } => {
            let vals: Option<Vec<i64>> = elements
                .iter()
                .map(|e| {
                    if let ftuner_ir::Scalar::Int(v) = e {
                        i64::try_from(*v).ok()
                    } else {
                        None
                    }
                })
                .collect();
            vals.map(|v| if *splat { vec![v[0]; n] } else { v })
        }
        _ => a.as_dense_i64s(),
    });
    v.filter(|v| v.len() == n).unwrap_or(vec![1; n])
}

/// Indexing maps of a structured op (attribute for `generic` and contractions, computed
/// for the named ops we model). `None` for ops whose maps we do not model.
pub fn indexing_maps(ir: &Ir, op: OpId) -> Option<Vec<AffineMap>> {
    let name = ir.name(op);
    if let Some(a) = ir
        .attr(op, "indexing_maps")
        .or_else(|| ir.attr(op, "linalg.memoized_indexing_maps"))
    {
        return a
            .as_array()?
            .iter()
            .map(|m| m.as_affine_map().cloned())
            .collect();
    }
    if let Some(maps) = definition_maps(ir, op) {
        return Some(maps);
    }
    // `Maps::Hook`: from the op's attributes, as upstream's C++ builders.
    let (_, outs) = super::ins_outs(ir, op);
    let rank = |v: Value| ir.value_type(v).rank().unwrap_or(0) as u32;
    match name {
        linalg::TransposeOp::NAME => {
            let perm = ir.attr(op, "permutation")?.as_dense_i64s()?;
            let r = perm.len() as u32;
            // out[d0..] = in[perm^-1]: the input is indexed by the inverse permutation.
            let mut inv = vec![0u32; perm.len()];
            for (i, p) in perm.iter().enumerate() {
                *inv.get_mut(usize::try_from(*p).ok()?)? = i as u32;
            }
            Some(vec![AffineMap::projection(r, &inv), AffineMap::identity(r)])
        }
        linalg::BroadcastOp::NAME => {
            let dims = ir.attr(op, "dimensions")?.as_dense_i64s()?;
            let r = rank(*outs.first()?);
            let kept: Vec<u32> = (0..r).filter(|x| !dims.contains(&(*x as i64))).collect();
            Some(vec![
                AffineMap::projection(r, &kept),
                AffineMap::identity(r),
            ])
        }
        _ => None,
    }
}

/// The maps a named op's definition gives it ([`crate::named_structured`], its attributes
/// read), whatever maps the op carries of its own; `None` where its spec gives none.
pub fn definition_maps(ir: &Ir, op: OpId) -> Option<Vec<AffineMap>> {
    crate::named_structured(ir.name(op))?.maps(ir, op)
}

/// Which loops of an op with an `iterator_types` attribute (a `linalg.generic`) are
/// parallel, whether written `#linalg.iterator_type<parallel>` or `"parallel"`.
pub fn parallel_iterators(ir: &Ir, op: OpId) -> Option<Vec<bool>> {
    let its = ir.attr(op, "iterator_types")?;
    Some(
        its.as_array()?
            .iter()
            .map(|a| {
                a.dialect_body()
                    .is_some_and(|(_, b)| b.contains("parallel"))
                    || a.as_str() == Some("parallel")
            })
            .collect(),
    )
}

/// Every loop of `op` is parallel (per [`parallel_iterators`]).
pub fn all_parallel(ir: &Ir, op: OpId) -> bool {
    parallel_iterators(ir, op).is_some_and(|p| p.iter().all(|x| *x))
}

/// Iterator types (true = reduction) of the named ops whose maps we model.
pub fn reduction_dims(ir: &Ir, op: OpId) -> Option<Vec<bool>> {
    if let Some(a) = ir.attr(op, "iterator_types") {
        return a
            .as_array()?
            .iter()
            .map(|x| x.dialect_body().map(|(_, b)| b.contains("reduction")))
            .collect();
    }
    let maps = indexing_maps(ir, op)?;
    let n = maps.first()?.num_dims;
    let out = maps.last()?;
    Some(
        (0..n)
            .map(|d| !out.results.iter().any(|e| e.uses_dim(d)))
            .collect(),
    )
}

/// Element type of an operand (the type itself for scalars).
fn elem_of(ir: &Ir, v: Value) -> Type {
    let t = ir.value_type(v);
    if t.is_tensor() || t.is_memref() {
        t.element_type()
    } else {
        t
    }
}

/// Whether a named op's `cast` attribute asks for unsigned casts
/// (`#linalg.type_fn<cast_unsigned>`; the default is `cast_signed`).
pub fn casts_unsigned(cast: Option<Attribute>) -> bool {
    cast.is_some_and(
        |a| matches!(a.kind(), AttrKind::Dialect { body, .. } if body.contains("cast_unsigned")),
    )
}

/// Build the body region of named op `name` into `region` (which must be empty); its
/// casts are unsigned when `unsigned` (see [`casts_unsigned`]).
pub fn build_body(
    ir: &mut Ir,
    name: &str,
    region: RegionId,
    ins: &[Value],
    outs: &[Value],
    loc: Attribute,
    unsigned: bool,
) -> Result<(), String> {
    if outs.len() != 1 {
        return Err(format!(
            "expects 1 output operand, but found {}",
            outs.len()
        ));
    }
    let mut tys: Vec<Type> = ins.iter().map(|v| elem_of(ir, *v)).collect();
    tys.extend(outs.iter().map(|v| elem_of(ir, *v)));
    let block = ir.append_block(region, &tys);
    let args = ir.block_args(block).to_vec();
    let nin = ins.len();
    let out_ty = *tys.last().ok_or("structured op needs an output")?;
    let def = crate::named_structured(name).ok_or(format!("no region builder for '{name}'"))?;
    let want = def.num_inputs();
    if nin != want {
        return Err(format!("expects {want} input operand(s), but found {nin}"));
    }
    let mut b = BodyBuilder {
        ob: ftuner_ir::OpBuilder::at_end(ir, block, loc),
        unsigned,
        args,
        out_ty,
        casts: vec![None; nin],
    };
    let v = b.eval(&def.body);
    b.yield_(v);
    Ok(())
}
