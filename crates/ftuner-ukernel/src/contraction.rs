//! Which ops are contractions, and their batch, M, N and K dimensions.

use crate::DType;
use ftuner_dialects::linalg::{body, ins_outs};
use ftuner_dialects::ops;
use ftuner_ir::{AffineExpr, Ir, OpId, DYNAMIC};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Matmul,
    BatchMatmul,
    /// A `linalg.generic` whose body multiplies and accumulates.
    Generic,
    /// Convolution as an implicit GEMM: M = N*OH*OW, N = F, K = C*KH*KW.
    Conv2d,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Contraction {
    pub op: OpId,
    pub kind: Kind,
    pub dtype: DType,
    /// Sizes of the loop dims in each role (`DYNAMIC` when unknown before run time).
    pub batch: Vec<i64>,
    pub m: Vec<i64>,
    pub n: Vec<i64>,
    pub k: Vec<i64>,
    pub transposed_a: bool,
    pub transposed_b: bool,
}

fn prod(v: &[i64]) -> i64 {
    if v.contains(&DYNAMIC) {
        DYNAMIC
    } else {
        v.iter().product()
    }
}

impl Contraction {
    pub fn m_size(&self) -> i64 {
        prod(&self.m)
    }
    pub fn n_size(&self) -> i64 {
        prod(&self.n)
    }
    pub fn k_size(&self) -> i64 {
        prod(&self.k)
    }
    pub fn batch_size(&self) -> i64 {
        prod(&self.batch)
    }
}

/// Whether a `linalg.generic`'s body is `out + a * b` (either order).
pub fn body_is_mul_add(ir: &Ir, op: OpId) -> bool {
    let Some(r) = ir.regions_of(op).first() else {
        return false;
    };
    let Some(b) = ir.region_entry(*r) else {
        return false;
    };
    let names: Vec<&str> = ir.block_ops(b).map(|o| ir.name(o)).collect();
    names.contains(&ops::arith::MulfOp::NAME)
        && names.contains(&ops::arith::AddfOp::NAME)
        && names.len() <= 6
}

/// Role of a loop dim of a contraction `C(.., M, N) += A(.., M, K) * B(.., K, N)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Indexed by both inputs and the output.
    B,
    /// By A and the output.
    M,
    /// By B and the output.
    N,
    /// By an input, not the output (a reduction).
    K,
}

/// The role of every loop dim of the three maps (A, B, C); `None` if a dim is indexed by
/// the output alone or by nothing.
pub fn loop_roles(maps: &[ftuner_ir::AffineMap]) -> Option<Vec<Role>> {
    let uses = |mi: usize, d: u32| maps[mi].results.iter().any(|e| e.uses_dim(d));
    (0..maps.first()?.num_dims)
        .map(|d| match (uses(0, d), uses(1, d), uses(2, d)) {
            (true, true, true) => Some(Role::B),
            (true, false, true) => Some(Role::M),
            (false, true, true) => Some(Role::N),
            (true, _, false) | (false, true, false) => Some(Role::K),
            _ => None,
        })
        .collect()
}

/// Size of each loop dim of `maps` (over operands `vals`) from a static operand dim
/// indexed by it alone; `DYNAMIC` where none is.
pub fn loop_sizes(
    ir: &Ir,
    maps: &[ftuner_ir::AffineMap],
    vals: &[ftuner_ir::Value],
) -> Option<Vec<i64>> {
    let nd = maps.first()?.num_dims as usize;
    let mut size = vec![DYNAMIC; nd];
    for (m, v) in maps.iter().zip(vals) {
        let shape = ir.value_type(*v).shape()?.to_vec();
        for (j, e) in m.results.iter().enumerate() {
            if let AffineExpr::Dim(d) = e {
                if shape[j] != DYNAMIC {
                    size[*d as usize] = shape[j];
                }
            }
        }
    }
    Some(size)
}

/// An index expression of dims, constants, sums and products with a constant, none of
/// them negative: never below 0, and greatest at the last point of the loop box, which is
/// where the uKernels' run-time shape checks look (`lower/shape_asserts.rs`). A window
/// that falls as a loop grows (a dilation of -1: `2 * d2 - d5`) is left to the loops,
/// which bound it over the whole box (it read at -2 here; found by the driver fuzzer).
fn windowed(e: &AffineExpr) -> bool {
    ftuner_dialects::linalg::linear_coeffs(e)
        .is_some_and(|(terms, c)| c >= 0 && terms.iter().all(|(_, k)| *k > 0))
}

/// Classify `op`; `None` if it is not a contraction we build uKernels for.
pub fn classify(ir: &Ir, op: OpId) -> Option<Contraction> {
    let name = ir.name(op);
    let kind = match name {
        ops::linalg::MatmulOp::NAME => Kind::Matmul,
        ops::linalg::BatchMatmulOp::NAME => Kind::BatchMatmul,
        ops::linalg::GenericOp::NAME => Kind::Generic,
        ops::linalg::Conv2dNchwFchwOp::NAME | ops::linalg::Conv2dNhwcHwcfOp::NAME => Kind::Conv2d,
        _ => return None,
    };
    let (ins, outs) = ins_outs(ir, op);
    if ins.len() != 2 || outs.len() != 1 {
        return None;
    }
    let dtype = DType::from_type(ir.value_type(outs[0]).element_type())?;
    // Unsigned integer operands (`cast_unsigned`) are not what the uKernels convert.
    if body::casts_unsigned(ir.attr(op, "cast")) {
        return None;
    }
    if kind == Kind::Generic && !body_is_mul_add(ir, op) {
        return None;
    }
    let maps = body::indexing_maps(ir, op)?;
    // What lower-ukernels indexes with: dims, constants, sums and products by a constant
    // (convolution windows). `d0 mod 3`, divisions or symbols stay loops (issue 25: they
    // were patched, then lower-ukernels hit an unreachable arm).
    if !maps.iter().all(|m| m.results.iter().all(windowed)) {
        return None;
    }
    // B and the output by plain dims, as lower-ukernels reads them (`lower::tiles::layout`,
    // `lower::conv::conv_layout`; the GPU lowering alike): a unit dim indexed at a constant
    // (`(0, d1, d2)`, a 1 x K x N B the frontend kept: a cumsum written as a masked sum)
    // stays a loop nest. It was patched, then left unlowered, and convert-to-llvm failed.
    if !maps[1..].iter().all(|m| m.as_permutation_like().is_some()) {
        return None;
    }
    let vals = [ins[0], ins[1], outs[0]];
    let size = loop_sizes(ir, &maps, &vals)?;
    let uses = |mi: usize, d: u32| maps[mi].results.iter().any(|e| e.uses_dim(d));
    let (mut batch, mut m, mut n, mut k) = (vec![], vec![], vec![], vec![]);
    for (d, r) in loop_roles(&maps)?.into_iter().enumerate() {
        match r {
            Role::B => batch.push(size[d]),
            Role::M => m.push(size[d]),
            Role::N => n.push(size[d]),
            Role::K => k.push(size[d]),
        }
    }
    if m.is_empty() || n.is_empty() || k.is_empty() {
        return None;
    }
    if kind == Kind::Conv2d {
        // Output spatial dims: sizes from the output operand.
        return Some(Contraction {
            op,
            kind,
            dtype,
            batch: vec![],
            m,
            n,
            k,
            transposed_a: false,
            transposed_b: false,
        });
    }
    let last_dim = |mi: usize| match maps[mi].results.last() {
        Some(AffineExpr::Dim(d)) => Some(*d),
        _ => None,
    };
    let is_k = |d: Option<u32>| d.is_some_and(|d| uses(0, d) && uses(1, d) && !uses(2, d));
    let transposed_a = !is_k(last_dim(0));
    let transposed_b = is_k(last_dim(1));
    Some(Contraction {
        op,
        kind,
        dtype,
        batch,
        m,
        n,
        k,
        transposed_a,
        transposed_b,
    })
}

/// The output's stride (elements) between consecutive values of the contraction's N dim,
/// when there is one N dim, it is not the output's innermost and the dims after it are
/// static (an NCHW conv's channel stride, `H * W`); None otherwise.
pub fn output_n_stride(ir: &Ir, op: OpId) -> Option<i64> {
    let maps = body::indexing_maps(ir, op)?;
    let roles = loop_roles(&maps)?;
    let mut ns = (0..roles.len()).filter(|d| roles[*d] == Role::N);
    let (dn, None) = (ns.next()?, ns.next()) else {
        return None;
    };
    let pos = maps[2]
        .results
        .iter()
        .position(|e| *e == AffineExpr::Dim(dn as u32))?;
    let (_, outs) = ins_outs(ir, op);
    let shape = ir.value_type(*outs.first()?).shape()?.to_vec();
    let after = shape.get(pos + 1..)?;
    if after.is_empty() || after.contains(&DYNAMIC) {
        return None;
    }
    after.iter().try_fold(1i64, |p, d| p.checked_mul(*d))
}

/// Every contraction under `top`.
pub fn find_all(ir: &Ir, top: OpId) -> Vec<Contraction> {
    let mut v = vec![];
    ir.walk_pre(top, &mut |o| {
        if let Some(c) = classify(ir, o) {
            v.push(c);
        }
    });
    v
}
