//! Plan realisation on tensors: the tile loops over M and N (full tiles, then the
//! residue's tiles from a table), each tile's slices, its `linalg.generic` (or register
//! body) and epilogue, and the `scf.index_switch` on tile sizes.

use super::dot::{dot_blocks, nt_dot, DOT_OUTPUTS};
use super::register_tile::vector_body;
use super::{res_pos, Layout, B};
use ftuner_dialects::linalg::ins_outs;
use ftuner_dialects::ops;
use ftuner_dialects::ukernel::{epilogue_block, epilogue_inputs, epilogue_maps};
use ftuner_ir::{
    intern_name, AffineExpr, Attribute, BlockId, Ir, OpId, OpSpec, Type, Value, DYNAMIC,
};

/// Where a tile slice sits in its tensor: what `tensor.insert_slice` needs to put a
/// computed tile back (operands: dynamic offsets then dynamic sizes).
pub(super) struct SliceSpec {
    pub(super) operands: Vec<Value>,
    pub(super) n_offsets: usize,
    pub(super) static_offsets: Vec<i64>,
    pub(super) static_sizes: Vec<i64>,
}

impl SliceSpec {
    /// Properties of an `extract_slice` / `insert_slice` at this place (unit strides);
    /// `leading` are the segment sizes of the operands before the offsets.
    pub(super) fn props(&self, leading: &[i32]) -> Vec<(&'static str, Attribute)> {
        let no = self.n_offsets as i32;
        let ns = self.operands.len() as i32 - no;
        let mut segs = leading.to_vec();
        segs.extend([no, ns, 0]);
        vec![
            (
                "static_offsets",
                Attribute::dense_i64_array(&self.static_offsets),
            ),
            (
                "static_sizes",
                Attribute::dense_i64_array(&self.static_sizes),
            ),
            (
                "static_strides",
                Attribute::dense_i64_array(&vec![1; self.static_offsets.len()]),
            ),
            ("operandSegmentSizes", Attribute::dense_i32_array(&segs)),
        ]
    }
}

/// The patch's three indexing maps.
pub(super) fn patch_maps(ir: &Ir, op: OpId) -> Option<Vec<ftuner_ir::AffineMap>> {
    let maps: Vec<ftuner_ir::AffineMap> = ir
        .attr(op, "indexing_maps")?
        .as_array()?
        .iter()
        .map(|a| a.as_affine_map().cloned())
        .collect::<Option<_>>()?;
    (maps.len() == 3).then_some(maps)
}

/// Loop dims by role: M (A and C), N (B and C), K (an input, not C).
pub(super) fn dim_roles(maps: &[ftuner_ir::AffineMap]) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    use crate::contraction::{loop_roles, Role};
    // Patches come from contractions, whose every loop dim has a role.
    let roles = loop_roles(maps).unwrap_or_default();
    let pick = |want: Role| {
        (0..roles.len() as u32)
            .filter(|d| roles[*d as usize] == want)
            .collect::<Vec<u32>>()
    };
    (pick(Role::M), pick(Role::N), pick(Role::K))
}

/// The M and N loop dims of a plain contraction: one of each, every operand indexed by
/// plain dims (no windows, no constants).
pub(super) fn plain_dims(maps: &[ftuner_ir::AffineMap]) -> Option<(u32, u32)> {
    let (ms, ns, _) = dim_roles(maps);
    if ms.len() != 1 || ns.len() != 1 {
        return None;
    }
    if !maps.iter().all(|m| m.as_permutation_like().is_some()) {
        return None;
    }
    Some((ms[0], ns[0]))
}

pub(crate) fn layout(ir: &Ir, op: OpId) -> Option<Layout> {
    let maps = patch_maps(ir, op)?;
    let (dm, dn) = plain_dims(&maps)?;
    Some(Layout {
        dm,
        dn,
        maps,
        maps_attr: ir.attr(op, "indexing_maps")?,
        iterators_attr: ir.attr(op, "iterator_types")?,
    })
}

/// Extract the (mo, ms) x (no, ns) part of operand `v` read through `map`.
pub(super) fn slice(
    b: &mut B<'_>,
    blk: BlockId,
    v: Value,
    map: &ftuner_ir::AffineMap,
    lay: &Layout,
    tile: (Value, i64, Value, i64),
) -> (Value, SliceSpec) {
    let ty = b.ir.value_type(v);
    let shape = ty.shape().unwrap_or(&[]).to_vec();
    let mut dyn_off = vec![];
    let mut dyn_size = vec![];
    let mut st_off = vec![];
    let mut st_size = vec![];
    let mut new_shape = vec![];
    for (j, e) in map.results.iter().enumerate() {
        let d = match e {
            AffineExpr::Dim(d) => d,
            // A fixed index (an epilogue operand's unit dim): one element.
            AffineExpr::Const(c) => {
                st_off.push(*c);
                st_size.push(1);
                new_shape.push(1);
                continue;
            }
            _ => unreachable!("checked by layout and the epilogue fusion"),
        };
        if *d == lay.dm || *d == lay.dn {
            let (o, s) = if *d == lay.dm {
                (tile.0, tile.1)
            } else {
                (tile.2, tile.3)
            };
            dyn_off.push(o);
            st_off.push(DYNAMIC);
            st_size.push(s);
            new_shape.push(s);
        } else if let Some((_, k0, ks)) = b.kblock.filter(|kb| kb.0 == *d) {
            dyn_off.push(k0);
            st_off.push(DYNAMIC);
            // A whole block of a static K: its size static too.
            let n = b.const_index(ks).unwrap_or(DYNAMIC);
            if n == DYNAMIC {
                dyn_size.push(ks);
            }
            st_size.push(n);
            new_shape.push(n);
        } else {
            st_off.push(0);
            if shape[j] == DYNAMIC {
                let jv = b.index(blk, j as i64);
                let dv = b.dim(blk, v, jv);
                dyn_size.push(dv);
                st_size.push(DYNAMIC);
            } else {
                st_size.push(shape[j]);
            }
            new_shape.push(shape[j]);
        }
    }
    let rt = ty.with_shape(new_shape);
    let no = dyn_off.len();
    let spec = SliceSpec {
        operands: dyn_off.into_iter().chain(dyn_size).collect(),
        n_offsets: no,
        static_offsets: st_off,
        static_sizes: st_size,
    };
    let mut ops = vec![v];
    ops.extend(spec.operands.iter().copied());
    let sl = b.val(
        blk,
        ops::tensor::ExtractSliceOp::NAME,
        ops,
        rt,
        spec.props(&[1]),
    );
    (sl, spec)
}

/// The tile computation at static sizes, inserted into the accumulator `acc`.
pub(super) fn tile(
    b: &mut B<'_>,
    blk: BlockId,
    patch: OpId,
    lay: &Layout,
    acc: Value,
    t: (Value, i64, Value, i64),
) -> Value {
    let (ins, _) = ins_outs(b.ir, patch);
    let (a, _) = match (b.apacked, b.kblock) {
        // The tile's rows of the packed A block: all of its k columns.
        (Some((ap, m0)), Some((_, _, ks))) => {
            let r = b.ibin(blk, ops::arith::SubiOp::NAME, t.0, m0);
            let elem = b.ir.value_type(ap).element_type();
            // A whole block of a static K: its size static.
            let (kn, operands) = match b.const_index(ks) {
                Some(n) => (n, vec![r]),
                None => (DYNAMIC, vec![r, ks]),
            };
            let rt = Type::tensor(vec![t.1, kn], elem);
            let all: Vec<Value> = std::iter::once(ap)
                .chain(operands.iter().copied())
                .collect();
            let spec = SliceSpec {
                operands,
                n_offsets: 1,
                static_offsets: vec![DYNAMIC, 0],
                static_sizes: vec![t.1, kn],
            };
            let sl = b.val(
                blk,
                ops::tensor::ExtractSliceOp::NAME,
                all,
                rt,
                spec.props(&[1]),
            );
            (sl, spec)
        }
        _ => slice(b, blk, ins[0], &lay.maps[0], lay, t),
    };
    let (bb, _) = slice(b, blk, ins[1], &lay.maps[1], lay, t);
    let (c, cspec) = slice(b, blk, acc, &lay.maps[2], lay, t);
    let cty = b.ir.value_type(c);
    if let Some(vb) = b.vector.clone() {
        if t.1 * t.3 <= vb.max_elems {
            let mut vb = vb;
            vb.panel = b
                .packed
                .filter(|(_, nr)| *nr == t.3 && vb.batch.is_empty())
                .map(|(p, _)| (p, t.2));
            let r = if nt_dot(lay, &vb) && t.1 * t.3 > DOT_OUTPUTS {
                dot_blocks(b, blk, lay, &vb, (a, bb), c, (t.1, t.3))
            } else {
                b.tile_epilogue = super::vector_epilogue::prepare(b, blk, patch, lay, t);
                let ready = b.tile_epilogue.is_some();
                let r = vector_body(b, blk, lay, &vb, a, bb, c, t.1, t.3);
                // Taken by the register tile: applied to its rows.
                if ready && b.tile_epilogue.take().is_none() {
                    return insert_back(b, blk, r, &cspec, acc);
                }
                r
            };
            let r = epilogue_tile(b, blk, patch, lay, r, t);
            return insert_back(b, blk, r, &cspec, acc);
        }
    }
    let (maps, its) = (lay.maps_attr, lay.iterators_attr);
    let g = b.op(
        blk,
        ops::linalg::GenericOp::NAME,
        vec![a, bb, c],
        vec![cty],
        vec![
            ("indexing_maps", maps),
            ("iterator_types", its),
            ("operandSegmentSizes", Attribute::dense_i32_array(&[2, 1])),
        ],
        1,
    );
    let src = b.ir.regions_of(patch)[0];
    let dst = b.ir.regions_of(g)[0];
    let mut map = Default::default();
    let mut bmap = Default::default();
    b.ir.clone_region_into(src, dst, &mut map, &mut bmap);
    for blk2 in b.ir.region(dst).blocks.clone() {
        if let Some(term) = b.ir.terminator(blk2) {
            if b.ir.name(term) == ops::ukernel::YieldOp::NAME {
                let vals = b.ir.operands(term).to_vec();
                ftuner_ir::OpBuilder::before(&mut *b.ir, term).insert(
                    OpSpec::new(intern_name(ops::linalg::YieldOp::NAME), b.loc).operands(vals),
                );
                b.ir.erase_op(term);
            }
        }
    }
    let gr = b.ir.result(g, 0);
    let gr = epilogue_tile(b, blk, patch, lay, gr, t);
    insert_back(b, blk, gr, &cspec, acc)
}

/// The patch's epilogue on a finished C tile `r`: a `linalg.generic` over the tile that
/// reads the matching slices of the epilogue operands; inside the kc loop, only in the
/// last k block (`scf.if`).
fn epilogue_tile(
    b: &mut B<'_>,
    blk: BlockId,
    patch: OpId,
    lay: &Layout,
    r: Value,
    t: (Value, i64, Value, i64),
) -> Value {
    let Some(eb) = epilogue_block(b.ir, patch) else {
        return r;
    };
    b.in_last_k_block(blk, &[r], |b, inner| {
        vec![generic_epilogue(b, inner, patch, lay, (eb, r), t)]
    })[0]
}

/// The epilogue block `eb` as a `linalg.generic` over the tile `r`, in `inner`.
fn generic_epilogue(
    b: &mut B<'_>,
    inner: BlockId,
    patch: OpId,
    lay: &Layout,
    (eb, r): (BlockId, Value),
    t: (Value, i64, Value, i64),
) -> Value {
    let cty = b.ir.value_type(r);
    let cmap = &lay.maps[2];
    let rank = cmap.results.len() as u32;
    // Tile loops are C's dims in order: patch dim d is tile dim (position of d in C).
    let tile_map = |m: &ftuner_ir::AffineMap| ftuner_ir::AffineMap {
        num_dims: rank,
        num_symbols: 0,
        results: m
            .results
            .iter()
            .map(|e| match e {
                AffineExpr::Dim(d) => AffineExpr::Dim(res_pos(cmap, *d).unwrap_or(0) as u32),
                other => other.clone(),
            })
            .collect(),
    };
    let extras = epilogue_inputs(b.ir, patch);
    let emaps = epilogue_maps(b.ir, patch);
    let mut ops = vec![];
    let mut maps = vec![];
    for (v, m) in extras.iter().zip(&emaps) {
        let (s, _) = slice(b, inner, *v, m, lay, t);
        ops.push(s);
        maps.push(Attribute::affine_map(tile_map(m)));
    }
    maps.push(Attribute::affine_map(ftuner_ir::AffineMap::identity(rank)));
    let n = ops.len();
    ops.push(r);
    let par = Attribute::dialect("linalg", "iterator_type<parallel>");
    let g = b.op(
        inner,
        ops::linalg::GenericOp::NAME,
        ops,
        vec![cty],
        vec![
            ("indexing_maps", Attribute::array(maps)),
            ("iterator_types", Attribute::array(vec![par; rank as usize])),
            (
                "operandSegmentSizes",
                Attribute::dense_i32_array(&[n as i32, 1]),
            ),
        ],
        1,
    );
    // Body: linalg's argument order (inputs, then the output) from the epilogue's
    // (output element, inputs).
    let eargs = b.ir.block_args(eb).to_vec();
    let mut tys: Vec<Type> = eargs[1..].iter().map(|a| b.ir.value_type(*a)).collect();
    tys.push(b.ir.value_type(eargs[0]));
    let gr = b.ir.regions_of(g)[0];
    let gb = b.ir.append_block(gr, &tys);
    let gargs = b.ir.block_args(gb).to_vec();
    let mut vmap: rustc_hash::FxHashMap<Value, Value> = Default::default();
    vmap.insert(eargs[0], gargs[n]);
    for j in 0..n {
        vmap.insert(eargs[1 + j], gargs[j]);
    }
    let eops = b.ir.block_ops_vec(eb);
    if let Some((y, rest)) = eops.split_last() {
        for o in rest {
            let c = b.ir.clone_op(*o, &mut vmap);
            b.ir.append_op(gb, c);
        }
        let yv = b.ir.operands(*y)[0];
        let yv = *vmap.get(&yv).unwrap_or(&yv);
        b.yield_(gb, ops::linalg::YieldOp::NAME, vec![yv]);
    }
    b.ir.result(g, 0)
}

/// `tensor.insert_slice %r into %acc` at the place described by `spec`.
pub(super) fn insert_back(
    b: &mut B<'_>,
    blk: BlockId,
    r: Value,
    spec: &SliceSpec,
    acc: Value,
) -> Value {
    let mut ops = vec![r, acc];
    ops.extend(spec.operands.iter().copied());
    let accty = b.ir.value_type(acc);
    b.val(
        blk,
        ops::tensor::InsertSliceOp::NAME,
        ops,
        accty,
        spec.props(&[1, 1]),
    )
}

/// `scf.index_switch %sel` over `cases`, each case built by `f`, default yielding `acc`.
pub(super) fn switch(
    b: &mut B<'_>,
    blk: BlockId,
    sel: Value,
    cases: &[i64],
    acc: Value,
    f: &mut dyn FnMut(&mut B<'_>, BlockId, i64) -> Value,
) -> Value {
    let ty = b.ir.value_type(acc);
    let sw = b.op(
        blk,
        ops::scf::IndexSwitchOp::NAME,
        vec![sel],
        vec![ty],
        vec![("cases", Attribute::dense_i64_array(cases))],
        cases.len() + 1,
    );
    let regions = b.ir.regions_of(sw).to_vec();
    let d = b.ir.append_block(regions[0], &[]);
    b.yield_(d, ops::scf::YieldOp::NAME, vec![acc]);
    for (i, c) in cases.iter().enumerate() {
        let cb = b.ir.append_block(regions[i + 1], &[]);
        let r = f(b, cb, *c);
        b.yield_(cb, ops::scf::YieldOp::NAME, vec![r]);
    }
    b.ir.result(sw, 0)
}

/// The dimension whose full tiles a [`cover`] loop runs over, which says how the loop is
/// marked.
#[derive(Clone, Copy)]
pub(super) enum Along {
    /// M's row strips: parallel (`ftuner.parallel`, when the lowering marks loops) and
    /// `ftuner.row_strips`.
    Rows,
    /// N's column tiles: parallel when `parallel`.
    Columns { parallel: bool },
}

/// Loop over the tiles of one dimension: full tiles, then the residue's tiles from the
/// plan table. `body(b, block, offset, size_value, acc) -> acc`. `along`: which
/// dimension, and so how the full tiles' loop is marked.
#[allow(clippy::too_many_arguments)]
pub(super) fn cover(
    b: &mut B<'_>,
    blk: BlockId,
    total: Value,
    main: i64,
    residues: &[Vec<i64>],
    static_extent: Option<i64>,
    along: Along,
    acc: Value,
    body: &mut dyn FnMut(&mut B<'_>, BlockId, Value, Value, Value) -> Value,
) -> Value {
    let c0 = b.index(blk, 0);
    let cm = b.index(blk, main);
    let q = b.ibin(blk, ops::arith::DivuiOp::NAME, total, cm);
    let full = b.ibin(blk, ops::arith::MuliOp::NAME, q, cm);
    let rem = b.ibin(blk, ops::arith::SubiOp::NAME, total, full);
    // Full tiles.
    let (f, fb, iv, a) = b.for_loop(blk, (c0, full, cm), vec![acc]);
    if matches!(along, Along::Rows | Along::Columns { parallel: true }) {
        b.mark_parallel(f);
    }
    if matches!(along, Along::Rows) {
        b.ir.set_attr(
            f,
            ftuner_dialects::scf::ROW_STRIPS_ATTR,
            Some(ftuner_ir::Attribute::unit()),
        );
    }
    let cmain = b.index(fb, main);
    let r = body(b, fb, iv, cmain, a[0]);
    b.yield_(fb, ops::scf::YieldOp::NAME, vec![r]);
    let acc1 = b.ir.result(f, 0);
    if let Some(st) = static_extent {
        // A static extent has one residue, known now: its tiles are emitted in line.
        let mut acc = acc1;
        let mut off = st - st % main;
        for &t in &residues[(st % main) as usize] {
            let (ov, tv) = (b.index(blk, off), b.index(blk, t));
            acc = body(b, blk, ov, tv, acc);
            off += t;
        }
        return acc;
    }
    // Residue: the plan's tiles for `rem`, from a constant table.
    let len = residues.iter().map(|v| v.len()).max().unwrap_or(0).max(1);
    let mut flat = vec![];
    for r in residues {
        for k in 0..len {
            flat.push(ftuner_ir::Scalar::Int(
                r.get(k).copied().unwrap_or(0) as i128
            ));
        }
    }
    let table = b.index_table(blk, vec![main, len as i64], flat);
    let r = residue_tiles(
        b,
        blk,
        len as i64,
        full,
        vec![acc1],
        &mut |b, lb, k| {
            b.val(
                lb,
                ops::tensor::ExtractOp::NAME,
                vec![table, rem, k],
                Type::index(),
                vec![],
            )
        },
        &mut |b, tb, off, t, a| vec![body(b, tb, off, t, a[0])],
    );
    r[0]
}

/// `scf.for k < len` over a residue's plan tiles: `size(b, block, k)` reads the k-th tile
/// size (0 past the last); each tile runs `body(b, block, offset, size, accs) -> accs`,
/// the offset starting at `start` and advancing by the tile. Returns the final `accs`.
#[allow(clippy::type_complexity)]
pub(crate) fn residue_tiles(
    b: &mut B<'_>,
    blk: BlockId,
    len: i64,
    start: Value,
    accs: Vec<Value>,
    size: &mut dyn FnMut(&mut B<'_>, BlockId, Value) -> Value,
    body: &mut dyn FnMut(&mut B<'_>, BlockId, Value, Value, Vec<Value>) -> Vec<Value>,
) -> Vec<Value> {
    let tys: Vec<Type> = accs.iter().map(|a| b.ir.value_type(*a)).collect();
    let n = accs.len();
    let c0 = b.index(blk, 0);
    let c1 = b.index(blk, 1);
    let clen = b.index(blk, len);
    let mut inits = accs;
    inits.push(start);
    let (l, lb, k, args) = b.for_loop(blk, (c0, clen, c1), inits);
    let (a, off) = (args[..n].to_vec(), args[n]);
    let mut rtys = tys;
    rtys.push(Type::index());
    let t = size(b, lb, k);
    let zero = b.index(lb, 0);
    let pos = b.cmpi(lb, 4, t, zero);
    let iff = b.op(lb, ops::scf::IfOp::NAME, vec![pos], rtys, vec![], 2);
    let (tr, er) = (b.ir.regions_of(iff)[0], b.ir.regions_of(iff)[1]);
    let tb = b.ir.append_block(tr, &[]);
    let mut r = body(b, tb, off, t, a.clone());
    let noff = b.ibin(tb, ops::arith::AddiOp::NAME, off, t);
    r.push(noff);
    b.yield_(tb, ops::scf::YieldOp::NAME, r);
    let eb = b.ir.append_block(er, &[]);
    let mut keep = a;
    keep.push(off);
    b.yield_(eb, ops::scf::YieldOp::NAME, keep);
    let rs = b.ir.results(iff).to_vec();
    b.yield_(lb, ops::scf::YieldOp::NAME, rs);
    b.ir.results(l)[..n].to_vec()
}

/// A tile: (m offset, m size, n offset, n size).
type Tile = (Value, i64, Value, i64);

/// Builds one tile into the accumulator: `f(b, block, acc, tile) -> acc`.
pub(super) type TileFn<'f> = dyn FnMut(&mut B<'_>, BlockId, Value, Tile) -> Value + 'f;
