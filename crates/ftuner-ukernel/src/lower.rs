//! `lower-ukernels` (first stage): realize the patch plan as loops. Each `ukernel.patch`
//! with a single M and a single N loop dimension becomes
//!
//! * an `scf.for` over the full M tiles and, for the M residue, an `scf.for` over the
//!   residue's tiles read from a constant table (`plan[M mod main]`, a table lookup);
//! * inside each row strip the same over N;
//! * each tile dispatched on its (m, n) size with `scf.index_switch` to a computation of
//!   static shape: a `linalg.generic` on `tensor.extract_slice`s, inserted back with
//!   `tensor.insert_slice`.
//!
//! Semantics are those of the patch (checked against the reference interpreter). The
//! register-level bodies (vector FMAs, packing) replace the per-tile `linalg.generic` in
//! the next stage, together with bufferization.

mod batch;
mod builder;
mod conv;
mod conv_flat;
mod dot;
mod l2;
mod packing;
mod padding;
mod pass;
mod plan_loops;
mod register_tile;
mod shape_asserts;
mod tiles;
mod vector_epilogue;

pub(crate) use conv::{conv_layout, eval_expr};
use ftuner_dialects::linalg::ins_outs;
pub use ftuner_dialects::scf::PARALLEL_ATTR;
use ftuner_dialects::ukernel::read_plan;
use ftuner_ir::{AffineExpr, Attribute, Ir, OpId, Type, Value};
pub(crate) use padding::plan_padding;
pub use pass::LowerUkernelsPass;
use plan_loops::{lower_checked, Knobs};
pub(crate) use register_tile::mul_add_elem;
pub(crate) use shape_asserts::shape_asserts;
pub(crate) use tiles::{layout, residue_tiles};

/// Why lower-ukernels could not lower contraction `op` (one `contraction::classify` took)
/// on the CPU for its operands and maps, if it could not: patch-ukernels asks before it
/// patches for a CPU target and leaves such an op to the loops, so that what it patches
/// with the default options is lowered and does not reach convert-to-llvm (found on
/// upstream's tests: a matmul on buffers, a contraction of three M and three N dims;
/// issue 25's panic was of the same kind). The tests are the ones the lowering applies
/// ([`tiles::plain_dims`], [`conv::conv_dims`], the windowed path's multiply-add body);
/// lower-ukernels' options (`vector-bodies=0`, a padded plan of a windowed patch) can still
/// leave a patch with a remark.
pub fn cpu_unlowerable(ir: &Ir, op: OpId) -> Option<&'static str> {
    let (ins, outs) = ins_outs(ir, op);
    if ins
        .iter()
        .chain(&outs)
        .any(|v| ir.value_type(*v).is_memref())
    {
        return Some("it is on buffers (CPU uKernels are lowered on tensors, before bufferize)");
    }
    let Some(maps) = ftuner_dialects::linalg::body::indexing_maps(ir, op) else {
        return Some("its indexing maps cannot be read");
    };
    if maps.len() == 3 && tiles::plain_dims(&maps).is_some() {
        return None;
    }
    // The windowed path's body is `acc + a * b` on one float type: a named op's (the
    // patch writes its body) when its operands are all of it (no casts), a generic's own.
    let body_ok = if ir.name(op) == ftuner_dialects::ops::linalg::GenericOp::NAME {
        mul_add_elem(ir, op).is_some()
    } else {
        let elem = |v: &Value| ir.value_type(*v).element_type();
        outs.first()
            .map(elem)
            .is_some_and(|c| c.float_kind().is_some() && ins.iter().all(|v| elem(v) == c))
    };
    if maps.len() == 3 && conv::conv_dims(&maps).is_some() && body_ok {
        return None;
    }
    Some("lower-ukernels tiles contractions of one M and one N loop dim indexed by plain dims, or windowed ones of one N dim with a multiply-add body")
}

/// Whether `v` is known when the weights are (a `{ftuner.weight}` argument, a prepared
/// value, or views and arithmetic on those and constants, of static shape): what
/// `lower-ukernels` packs once, in the weight preparation. ftuner-tune marks such operands
/// of an extracted kernel as weights, so the kernel is lowered as it is in its model.
pub fn derives_from_weights(ir: &Ir, v: Value) -> bool {
    packing::prepared(ir, v)
}

pub(crate) struct B<'a> {
    pub(crate) ir: &'a mut Ir,
    pub(crate) loc: Attribute,
    /// Register-level bodies: `Some` when the patch's body is a multiply-accumulate.
    pub(crate) vector: Option<VectorBody>,
    /// Inside the kc loop: the reduction dim and the block's offset and size along it.
    pub(crate) kblock: Option<(u32, Value, Value)>,
    /// B packed into panels `[N / nr][K][nr]` (contiguous rows of the main tile width).
    pub(crate) packed: Option<(Value, i64)>,
    /// Inside the kc loop: whether this is the last k block (epilogues run then).
    pub(crate) klast: Option<Value>,
    /// The mc loop, A packing (run-time rule in `loops`) and parallel loop marking.
    pub(crate) blocking: Blocking,
    /// Inside the mc loop: A's mc x kc block copied contiguous, and the block's first row.
    pub(crate) apacked: Option<(Value, Value)>,
    /// C starts at zero (its init was a zero `linalg.fill`): register tiles store their
    /// sums in the first k block instead of adding them to C, and C is never read first.
    pub(crate) zero_init: bool,
    /// Inside the kc loop with `zero_init`: whether this is the first k block.
    pub(crate) kfirst: Option<Value>,
    /// Whether a tile nest's N loops are marked parallel (else its M loops, inside them,
    /// are the outermost parallel ones): false when there are too few N tiles to share.
    pub(crate) parallel_n: bool,
    /// Row strips outside the N tiles ([`plan_loops::rows_outside`]).
    pub(crate) rows_outside: bool,
    /// The patch's epilogue prepared for the next register tile's rows (`tiles` sets it,
    /// the register tile takes it); the general epilogue runs when it is not taken.
    pub(crate) tile_epilogue: Option<vector_epilogue::TileEpilogue>,
}

/// The CPU lowering's knobs beyond the tile bodies.
#[derive(Clone, Copy, Debug, Default)]
pub struct Blocking {
    /// Split a dynamic M into blocks of the patch's `mc`.
    pub mc: bool,
    /// Copy large A blocks contiguous inside the mc loop.
    pub pack_a: bool,
    /// Mark independent loops `ftuner.parallel` ([`PARALLEL_ATTR`]).
    pub parallel: bool,
    /// k steps per iteration of a register tile's k loop; 0: [`CONV_K_UNROLL`] for
    /// flat-form convolutions, `register_tile::MATMUL_K_UNROLL` for other tiles whose k
    /// extent is static and a multiple of it, one for the rest.
    pub k_unroll: i64,
    /// Row strips (a flat-form conv's blocks of output rows) outside the N tiles (its
    /// filter panels): `None` leaves it to the rules ([`plan_loops::rows_outside`],
    /// `conv_flat::block_rows`), `Some` forces it where the nest can run that way.
    pub rows_outside: Option<bool>,
}

/// k steps per iteration of a flat-form conv tile's k loop by default (`k-unroll=0`). One
/// NCHW 3x3 conv + bias + ReLU, batch 1, one thread, 1/2/4/8 steps compiled in one
/// process, alternated, 21 rounds (Xeon family 6 model 167): 64 channels at 56x56
/// 1.505/1.426/1.439/1.440 ms, 256 at 14x14 1.579/1.523/1.521/1.512, 512 at 7x7
/// 1.843/1.799/1.807/1.897, 128 at 28x28 stride 2 0.416/0.404/0.405/0.401. Other
/// tiles: `register_tile::MATMUL_K_UNROLL`.
pub(crate) const CONV_K_UNROLL: i64 = 2;

/// What the register-level body needs to know about a patch.
#[derive(Clone)]
pub(crate) struct VectorBody {
    /// The reduction loop dim.
    dk: u32,
    /// Batch loop dims (in all three operands), looped over around the register tile.
    batch: Vec<u32>,
    elem: Type,
    /// Largest tile (elements) given a vector body: a register file's worth.
    max_elems: i64,
    /// For a full-width tile with B packed: the packed panels and this tile's N offset.
    panel: Option<(Value, Value)>,
    /// Independent FMA chains the core needs to be busy (FMA latency x FMAs per cycle,
    /// from the hardware model) and the lanes of one vector register.
    chains: i64,
    lanes: i64,
    /// Vector registers of the target (the split of a small tile's k loop over several
    /// sets of accumulators must leave the sets, their B vectors and broadcasts room).
    registers: i64,
    /// Width of the target's vector registers in bits (0: no hardware model).
    vector_bits: i64,
}

fn ir_attr_i64(ir: &Ir, op: OpId, name: &str) -> Option<i64> {
    ir.attr(op, name).and_then(|a| a.as_i64())
}

/// The single reduction dim: read by both inputs, absent from the output.
pub(crate) fn reduction_dim(lay: &Layout) -> Option<u32> {
    let uses = |mi: usize, d: u32| lay.maps[mi].results.iter().any(|e| e.uses_dim(d));
    let ks: Vec<u32> = (0..lay.maps[0].num_dims)
        .filter(|d| uses(0, *d) && uses(1, *d) && !uses(2, *d))
        .collect();
    (ks.len() == 1).then(|| ks[0])
}

/// Position of loop dim `d` among a map's results.
pub(crate) fn res_pos(map: &ftuner_ir::AffineMap, d: u32) -> Option<usize> {
    map.results.iter().position(|e| *e == AffineExpr::Dim(d))
}

/// Where the M and N loop dims sit in each operand (position or None).
pub(crate) struct Layout {
    pub(crate) dm: u32,
    pub(crate) dn: u32,
    pub(crate) maps: Vec<ftuner_ir::AffineMap>,
    /// The patch's `indexing_maps` and `iterator_types`, for per-tile `linalg.generic`s.
    maps_attr: Attribute,
    iterators_attr: Attribute,
}

/// One dimension's plan: the main tile, the static extent if there is one, and the tiles
/// that cover each residue of the main tile.
pub(crate) type Plan = (i64, Option<i64>, Vec<Vec<i64>>);

/// The M and N plans of a patch: main tile, static extent, tiles per residue.
#[derive(Clone)]
pub(crate) struct Plans {
    pub(crate) m: Plan,
    pub(crate) n: Plan,
}

/// Lower one patch; `Err` explains why it was left alone.
///
/// `vector_bodies`: tiles of at most this many elements get register-level vector bodies
/// (when the patch's body allows); larger ones, or `None`, keep a `linalg.generic`.
/// `k_blocking`: split the reduction into blocks of the patch's `kc`. `blocking`: the
/// mc loop, A packing and parallel loop marking.
pub fn lower(
    ir: &mut Ir,
    op: OpId,
    vector_bodies: Option<i64>,
    k_blocking: bool,
    pack_b: Option<bool>,
    blocking: Blocking,
) -> Result<(), String> {
    let plans = read_plans(ir, op)?;
    let (_, outs) = ins_outs(ir, op);
    if outs.len() != 1 || ir.results(op).len() != 1 {
        return Err("expects one tensor output".into());
    }
    shape_asserts(ir, op)?;
    let knobs = Knobs {
        vector_bodies,
        k_blocking,
        pack_b,
        blocking,
        skinny_done: false,
        parallel_n: true,
    };
    lower_checked(ir, op, plans, knobs)
}

/// The patch's M and N plans, checked: one entry per residue, each covering it exactly.
pub(crate) fn read_plans(ir: &Ir, op: OpId) -> Result<Plans, String> {
    let m = ir
        .attr(op, "m_plan")
        .and_then(read_plan)
        .ok_or("malformed m_plan")?;
    let n = ir
        .attr(op, "n_plan")
        .and_then(read_plan)
        .ok_or("malformed n_plan")?;
    for (main, st, res) in [&m, &n] {
        let (main, st) = (*main, *st);
        if main <= 0 || res.len() != main as usize {
            return Err(format!(
                "plan table has {} entries for main tile {main}",
                res.len()
            ));
        }
        for (r, v) in res.iter().enumerate() {
            // A static extent only ever meets one residue.
            if st.is_some_and(|s| s % main != r as i64) {
                continue;
            }
            if v.iter().sum::<i64>() < r as i64 {
                return Err(format!("the plan does not cover residue {r} of {main}"));
            }
        }
    }
    Ok(Plans { m, n })
}
