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

use ftuner_dialects::linalg::ins_outs;
use ftuner_dialects::ukernel::read_plan;
use ftuner_ir::{
    intern_name, AffineExpr, Attribute, BlockId, Diagnostic, Ir, OpId, OpSpec, Type, Value, DYNAMIC,
};
use ftuner_pass::{
    options::OptionKind, OptionSpec, Pass, PassContext, PassFailure, PassOptions, Statistic,
};

struct B<'a> {
    ir: &'a mut Ir,
    loc: Attribute,
    /// Register-level bodies: `Some` when the patch's body is a multiply-accumulate.
    vector: Option<VectorBody>,
    /// Inside the kc loop: the reduction dim and the block's offset and size along it.
    kblock: Option<(u32, Value, Value)>,
}

/// What the register-level body needs to know about a patch.
#[derive(Clone)]
struct VectorBody {
    /// The reduction loop dim.
    dk: u32,
    /// Batch loop dims (in all three operands), looped over around the register tile.
    batch: Vec<u32>,
    elem: Type,
    /// Largest tile (elements) given a vector body: a register file's worth.
    max_elems: i64,
}

fn ir_attr_i64(ir: &Ir, op: OpId, name: &str) -> Option<i64> {
    ir.attr(op, name).and_then(|a| a.as_i64())
}

/// The single reduction dim: read by both inputs, absent from the output.
fn reduction_dim(lay: &Layout) -> Option<u32> {
    let uses = |mi: usize, d: u32| lay.maps[mi].results.iter().any(|e| e.uses_dim(d));
    let ks: Vec<u32> = (0..lay.maps[0].num_dims)
        .filter(|d| uses(0, *d) && uses(1, *d) && !uses(2, *d))
        .collect();
    (ks.len() == 1).then(|| ks[0])
}

/// Position of loop dim `d` among a map's results.
fn res_pos(map: &ftuner_ir::AffineMap, d: u32) -> Option<usize> {
    map.results.iter().position(|e| *e == AffineExpr::Dim(d))
}

/// A patch gets vector bodies when it is a (batched) contraction (b..., m, n, k) with one
/// reduction dim, batch dims in every operand, and the body `acc + a * b` on floats.
fn vector_plan(ir: &Ir, op: OpId, lay: &Layout, max_elems: i64) -> Option<VectorBody> {
    let nd = lay.maps[0].num_dims;
    let dk = reduction_dim(lay)?;
    let batch: Vec<u32> = (0..nd)
        .filter(|d| *d != lay.dm && *d != lay.dn && *d != dk)
        .collect();
    for d in &batch {
        if lay.maps.iter().any(|m| res_pos(m, *d).is_none()) {
            return None;
        }
    }
    // Every operand is indexed by exactly its dims: A (b, m, k), B (b, k, n), C (b, m, n).
    let want = [2 + batch.len(); 3];
    if lay.maps.iter().zip(want).any(|(m, w)| m.results.len() != w) {
        return None;
    }
    let body = ir.region_entry(*ir.regions_of(op).first()?)?;
    let args = ir.block_args(body).to_vec();
    let ops = ir.block_ops_vec(body);
    if args.len() != 3 || ops.len() != 3 {
        return None;
    }
    let elem = ir.value_type(args[2]);
    elem.float_kind()?;
    let (mul, add, y) = (ops[0], ops[1], ops[2]);
    let is = |o: OpId, n: &str| ir.name(o) == n;
    if !is(mul, "arith.mulf") || !is(add, "arith.addf") || !is(y, "ukernel.yield") {
        return None;
    }
    let m = ir.operands(mul);
    if !((m[0] == args[0] && m[1] == args[1]) || (m[0] == args[1] && m[1] == args[0])) {
        return None;
    }
    let p = ir.result(mul, 0);
    let s = ir.operands(add);
    if !((s[0] == args[2] && s[1] == p) || (s[0] == p && s[1] == args[2])) {
        return None;
    }
    if ir.operands(y) != [ir.result(add, 0)] || args.iter().any(|a| ir.value_type(*a) != elem) {
        return None;
    }
    Some(VectorBody {
        dk,
        batch,
        elem,
        max_elems,
    })
}

/// A 1-d transfer along source dim `along` of a rank-`rank` tensor.
fn transfer_props(rank: usize, along: usize, segments: [i32; 4]) -> Vec<(&'static str, Attribute)> {
    let map = ftuner_ir::AffineMap {
        num_dims: rank as u32,
        num_symbols: 0,
        results: vec![AffineExpr::Dim(along as u32)],
    };
    vec![
        ("in_bounds", Attribute::array(vec![Attribute::bool(true)])),
        ("operandSegmentSizes", Attribute::dense_i32_array(&segments)),
        ("permutation_map", Attribute::affine_map(map)),
    ]
}

/// Indices of an access through `map`, each result dim's value from `at`.
fn indices(map: &ftuner_ir::AffineMap, at: &dyn Fn(u32) -> Value) -> Vec<Value> {
    map.results
        .iter()
        .map(|e| match e {
            AffineExpr::Dim(d) => at(*d),
            _ => unreachable!("checked by layout"),
        })
        .collect()
}

/// The register-level body of an `mt x nt` tile, inside loops over the batch dims: `mt`
/// accumulators of `vector<nt>` live across the k loop; each step loads one row of B,
/// broadcasts one element of A per row and issues `vector.fma`s; the accumulators are
/// read from and written back to C.
#[allow(clippy::too_many_arguments)]
fn vector_body(
    b: &mut B<'_>,
    blk: BlockId,
    lay: &Layout,
    vb: &VectorBody,
    a: Value,
    bm: Value,
    c: Value,
    mt: i64,
    nt: i64,
) -> Value {
    batch_loops(b, blk, lay, vb, (a, bm), c, (mt, nt), &mut vec![])
}

#[allow(clippy::too_many_arguments)]
fn batch_loops(
    b: &mut B<'_>,
    blk: BlockId,
    lay: &Layout,
    vb: &VectorBody,
    ab: (Value, Value),
    c: Value,
    tile: (i64, i64),
    fixed: &mut Vec<(u32, Value)>,
) -> Value {
    let Some(&d) = vb.batch.get(fixed.len()) else {
        return register_tile(b, blk, lay, vb, ab, c, tile, fixed);
    };
    let cty = b.ir.value_type(c);
    let pos = res_pos(&lay.maps[2], d).unwrap_or(0);
    let pv = b.index(blk, pos as i64);
    let ext = b.val(blk, "tensor.dim", vec![c, pv], Type::index(), vec![]);
    let c0 = b.index(blk, 0);
    let c1 = b.index(blk, 1);
    let f = b.op(blk, "scf.for", vec![c0, ext, c1, c], vec![cty], vec![], 1);
    let fr = b.ir.regions_of(f)[0];
    let fb = b.ir.append_block(fr, &[Type::index(), cty]);
    let (iv, acc) = (b.ir.block_args(fb)[0], b.ir.block_args(fb)[1]);
    fixed.push((d, iv));
    let r = batch_loops(b, fb, lay, vb, ab, acc, tile, fixed);
    fixed.pop();
    b.yield_(fb, "scf.yield", vec![r]);
    b.ir.result(f, 0)
}

#[allow(clippy::too_many_arguments)]
fn register_tile(
    b: &mut B<'_>,
    blk: BlockId,
    lay: &Layout,
    vb: &VectorBody,
    (a, bm): (Value, Value),
    c: Value,
    (mt, nt): (i64, i64),
    fixed: &[(u32, Value)],
) -> Value {
    let vty = Type::vector(vec![nt], vb.elem);
    let (ma, mb, mc) = (&lay.maps[0], &lay.maps[1], &lay.maps[2]);
    let (rank_b, rank_c) = (mb.results.len(), mc.results.len());
    let bn = res_pos(mb, lay.dn).unwrap_or(0);
    let cn = res_pos(mc, lay.dn).unwrap_or(0);
    let ak = res_pos(ma, vb.dk).unwrap_or(0);
    let batch_of = |d: u32| fixed.iter().find(|(x, _)| *x == d).map(|(_, v)| *v);
    let c0 = b.index(blk, 0);
    let c1 = b.index(blk, 1);
    let pad = b.val(
        blk,
        "arith.constant",
        vec![],
        vb.elem,
        vec![("value", Attribute::float(0.0, vb.elem))],
    );
    let akv = b.index(blk, ak as i64);
    let kext = b.val(blk, "tensor.dim", vec![a, akv], Type::index(), vec![]);
    let rows: Vec<Value> = (0..mt).map(|i| b.index(blk, i)).collect();
    let (dm, dn) = (lay.dm, lay.dn);
    let mut accs = vec![];
    for &iv in &rows {
        let at = |d: u32| {
            if d == dm {
                iv
            } else if d == dn {
                c0
            } else {
                batch_of(d).unwrap_or(c0)
            }
        };
        let mut ops = vec![c];
        ops.extend(indices(mc, &at));
        ops.push(pad);
        let segs = [1, rank_c as i32, 1, 0];
        accs.push(b.val(
            blk,
            "vector.transfer_read",
            ops,
            vty,
            transfer_props(rank_c, cn, segs),
        ));
    }
    let mut fops = vec![c0, kext, c1];
    fops.extend(accs.iter().copied());
    let f = b.op(blk, "scf.for", fops, vec![vty; mt as usize], vec![], 1);
    let fr = b.ir.regions_of(f)[0];
    let mut bargs = vec![Type::index()];
    bargs.extend(std::iter::repeat_n(vty, mt as usize));
    let fb = b.ir.append_block(fr, &bargs);
    let k = b.ir.block_args(fb)[0];
    let inner: Vec<Value> = b.ir.block_args(fb)[1..].to_vec();
    let z = b.index(fb, 0);
    let zp = b.val(
        fb,
        "arith.constant",
        vec![],
        vb.elem,
        vec![("value", Attribute::float(0.0, vb.elem))],
    );
    let dk = vb.dk;
    let at_b = |d: u32| {
        if d == dk {
            k
        } else if d == dn {
            z
        } else {
            batch_of(d).unwrap_or(z)
        }
    };
    let mut ops = vec![bm];
    ops.extend(indices(mb, &at_b));
    ops.push(zp);
    let brow = b.val(
        fb,
        "vector.transfer_read",
        ops,
        vty,
        transfer_props(rank_b, bn, [1, rank_b as i32, 1, 0]),
    );
    let mut next = vec![];
    for (i, acc) in inner.iter().enumerate() {
        let iv = b.index(fb, i as i64);
        let at_a = |d: u32| {
            if d == dk {
                k
            } else if d == dm {
                iv
            } else {
                batch_of(d).unwrap_or(z)
            }
        };
        let mut idx = vec![a];
        idx.extend(indices(ma, &at_a));
        let x = b.val(fb, "tensor.extract", idx, vb.elem, vec![]);
        let xv = b.val(fb, "vector.broadcast", vec![x], vty, vec![]);
        next.push(b.val(fb, "vector.fma", vec![xv, brow, *acc], vty, vec![]));
    }
    b.yield_(fb, "scf.yield", next);
    let cty = b.ir.value_type(c);
    let mut out = c;
    for (i, &iv) in rows.iter().enumerate() {
        let r = b.ir.result(f, i);
        let at = |d: u32| {
            if d == dm {
                iv
            } else if d == dn {
                c0
            } else {
                batch_of(d).unwrap_or(c0)
            }
        };
        let mut ops = vec![r, out];
        ops.extend(indices(mc, &at));
        out = b.val(
            blk,
            "vector.transfer_write",
            ops,
            cty,
            transfer_props(rank_c, cn, [1, 1, rank_c as i32, 0]),
        );
    }
    out
}

impl B<'_> {
    fn op(
        &mut self,
        block: BlockId,
        name: &str,
        operands: Vec<Value>,
        results: Vec<Type>,
        props: Vec<(&str, Attribute)>,
        regions: usize,
    ) -> OpId {
        let mut s = OpSpec::new(intern_name(name), self.loc)
            .operands(operands)
            .results(results)
            .regions(regions);
        for (k, v) in props {
            s = s.prop(k, v);
        }
        let o = self.ir.create_op(s);
        self.ir.append_op(block, o);
        o
    }
    fn val(
        &mut self,
        block: BlockId,
        name: &str,
        operands: Vec<Value>,
        ty: Type,
        props: Vec<(&str, Attribute)>,
    ) -> Value {
        let o = self.op(block, name, operands, vec![ty], props, 0);
        self.ir.result(o, 0)
    }
    fn index(&mut self, block: BlockId, v: i64) -> Value {
        self.val(
            block,
            "arith.constant",
            vec![],
            Type::index(),
            vec![("value", Attribute::index(v))],
        )
    }
    fn ibin(&mut self, block: BlockId, name: &str, a: Value, b: Value) -> Value {
        let ov = Attribute::dialect("arith", "overflow<none>");
        let props = if matches!(name, "arith.addi" | "arith.subi" | "arith.muli") {
            vec![("overflowFlags", ov)]
        } else {
            vec![]
        };
        self.val(block, name, vec![a, b], Type::index(), props)
    }
    fn yield_(&mut self, block: BlockId, name: &str, vals: Vec<Value>) {
        self.op(block, name, vals, vec![], vec![], 0);
    }
}

/// Where the M and N loop dims sit in each operand (position or None).
struct Layout {
    dm: u32,
    dn: u32,
    maps: Vec<ftuner_ir::AffineMap>,
}

fn layout(ir: &Ir, op: OpId) -> Option<Layout> {
    let maps: Vec<ftuner_ir::AffineMap> = ir
        .attr(op, "indexing_maps")?
        .as_array()?
        .iter()
        .map(|a| a.as_affine_map().cloned())
        .collect::<Option<_>>()?;
    if maps.len() != 3 {
        return None;
    }
    let uses = |mi: usize, d: u32| maps[mi].results.iter().any(|e| e.uses_dim(d));
    let nd = maps[0].num_dims;
    let ms: Vec<u32> = (0..nd)
        .filter(|d| uses(0, *d) && !uses(1, *d) && uses(2, *d))
        .collect();
    let ns: Vec<u32> = (0..nd)
        .filter(|d| !uses(0, *d) && uses(1, *d) && uses(2, *d))
        .collect();
    if ms.len() != 1 || ns.len() != 1 {
        return None;
    }
    // Every operand indexes by plain dims (no windows).
    if !maps
        .iter()
        .all(|m| m.results.iter().all(|e| matches!(e, AffineExpr::Dim(_))))
    {
        return None;
    }
    Some(Layout {
        dm: ms[0],
        dn: ns[0],
        maps,
    })
}

/// Extract the (mo, ms) x (no, ns) part of operand `v` read through `map`.
fn slice(
    b: &mut B<'_>,
    blk: BlockId,
    v: Value,
    map: &ftuner_ir::AffineMap,
    lay: &Layout,
    tile: (Value, i64, Value, i64),
) -> Value {
    let ty = b.ir.value_type(v);
    let shape = ty.shape().unwrap_or(&[]).to_vec();
    let mut dyn_off = vec![];
    let mut dyn_size = vec![];
    let mut st_off = vec![];
    let mut st_size = vec![];
    let mut new_shape = vec![];
    for (j, e) in map.results.iter().enumerate() {
        let AffineExpr::Dim(d) = e else {
            unreachable!("checked by layout")
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
            dyn_size.push(ks);
            st_size.push(DYNAMIC);
            new_shape.push(DYNAMIC);
        } else {
            st_off.push(0);
            if shape[j] == DYNAMIC {
                let jv = b.index(blk, j as i64);
                let dv = b.val(blk, "tensor.dim", vec![v, jv], Type::index(), vec![]);
                dyn_size.push(dv);
                st_size.push(DYNAMIC);
            } else {
                st_size.push(shape[j]);
            }
            new_shape.push(shape[j]);
        }
    }
    let rank = shape.len();
    let rt = ty.with_shape(new_shape);
    let mut ops = vec![v];
    let (no, ns) = (dyn_off.len(), dyn_size.len());
    ops.extend(dyn_off);
    ops.extend(dyn_size);
    b.val(
        blk,
        "tensor.extract_slice",
        ops,
        rt,
        vec![
            ("static_offsets", Attribute::dense_i64_array(&st_off)),
            ("static_sizes", Attribute::dense_i64_array(&st_size)),
            ("static_strides", Attribute::dense_i64_array(&vec![1; rank])),
            (
                "operandSegmentSizes",
                Attribute::dense_i32_array(&[1, no as i32, ns as i32, 0]),
            ),
        ],
    )
}

/// The tile computation at static sizes, inserted into the accumulator `acc`.
fn tile(
    b: &mut B<'_>,
    blk: BlockId,
    patch: OpId,
    lay: &Layout,
    acc: Value,
    t: (Value, i64, Value, i64),
) -> Value {
    let (ins, _) = ins_outs(b.ir, patch);
    let a = slice(b, blk, ins[0], &lay.maps[0].clone(), lay, t);
    let bb = slice(b, blk, ins[1], &lay.maps[1].clone(), lay, t);
    let c = slice(b, blk, acc, &lay.maps[2].clone(), lay, t);
    let cty = b.ir.value_type(c);
    if let Some(vb) = b.vector.clone() {
        if t.1 * t.3 <= vb.max_elems {
            let r = vector_body(b, blk, lay, &vb, a, bb, c, t.1, t.3);
            return insert_back(b, blk, r, c, acc);
        }
    }
    let maps = b.ir.attr(patch, "indexing_maps").expect("maps");
    let its = b.ir.attr(patch, "iterator_types").expect("iterators");
    let g = b.op(
        blk,
        "linalg.generic",
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
            if b.ir.name(term) == "ukernel.yield" {
                let vals = b.ir.operands(term).to_vec();
                let y =
                    b.ir.create_op(OpSpec::new(intern_name("linalg.yield"), b.loc).operands(vals));
                b.ir.insert_before(term, y);
                b.ir.erase_op(term);
            }
        }
    }
    let gr = b.ir.result(g, 0);
    insert_back(b, blk, gr, c, acc)
}

/// `tensor.insert_slice %r into %acc` at the offsets and sizes of the slice `c`.
fn insert_back(b: &mut B<'_>, blk: BlockId, gr: Value, c: Value, acc: Value) -> Value {
    let cslice_op = b.ir.defining_op(c).expect("slice");
    let sl = b.ir.op(cslice_op).clone();
    let mut ops = vec![gr, acc];
    ops.extend(sl.operands[1..].iter().copied());
    let seg =
        b.ir.attr(cslice_op, "operandSegmentSizes")
            .and_then(|a| a.as_dense_i64s())
            .unwrap_or_default();
    let accty = b.ir.value_type(acc);
    b.val(
        blk,
        "tensor.insert_slice",
        ops,
        accty,
        vec![
            (
                "static_offsets",
                b.ir.attr(cslice_op, "static_offsets").expect("offsets"),
            ),
            (
                "static_sizes",
                b.ir.attr(cslice_op, "static_sizes").expect("sizes"),
            ),
            (
                "static_strides",
                b.ir.attr(cslice_op, "static_strides").expect("strides"),
            ),
            (
                "operandSegmentSizes",
                Attribute::dense_i32_array(&[
                    1,
                    1,
                    seg.get(1).copied().unwrap_or(0) as i32,
                    seg.get(2).copied().unwrap_or(0) as i32,
                    0,
                ]),
            ),
        ],
    )
}

/// `scf.index_switch %sel` over `cases`, each case built by `f`, default yielding `acc`.
fn switch(
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
        "scf.index_switch",
        vec![sel],
        vec![ty],
        vec![("cases", Attribute::dense_i64_array(cases))],
        cases.len() + 1,
    );
    let regions = b.ir.regions_of(sw).to_vec();
    let d = b.ir.append_block(regions[0], &[]);
    b.yield_(d, "scf.yield", vec![acc]);
    for (i, c) in cases.iter().enumerate() {
        let cb = b.ir.append_block(regions[i + 1], &[]);
        let r = f(b, cb, *c);
        b.yield_(cb, "scf.yield", vec![r]);
    }
    b.ir.result(sw, 0)
}

/// Loop over the tiles of one dimension: full tiles, then the residue's tiles from the
/// plan table. `body(b, block, offset, size_value, acc) -> acc`.
#[allow(clippy::too_many_arguments)]
fn cover(
    b: &mut B<'_>,
    blk: BlockId,
    total: Value,
    main: i64,
    residues: &[Vec<i64>],
    static_extent: Option<i64>,
    acc: Value,
    body: &mut dyn FnMut(&mut B<'_>, BlockId, Value, Value, Value) -> Value,
) -> Value {
    let ty = b.ir.value_type(acc);
    let c0 = b.index(blk, 0);
    let c1 = b.index(blk, 1);
    let cm = b.index(blk, main);
    let q = b.ibin(blk, "arith.divui", total, cm);
    let full = b.ibin(blk, "arith.muli", q, cm);
    let rem = b.ibin(blk, "arith.subi", total, full);
    // Full tiles.
    let f = b.op(blk, "scf.for", vec![c0, full, cm, acc], vec![ty], vec![], 1);
    let fr = b.ir.regions_of(f)[0];
    let fb = b.ir.append_block(fr, &[Type::index(), ty]);
    let (iv, a) = (b.ir.block_args(fb)[0], b.ir.block_args(fb)[1]);
    let cmain = b.index(fb, main);
    let r = body(b, fb, iv, cmain, a);
    b.yield_(fb, "scf.yield", vec![r]);
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
    let tty = Type::tensor(vec![main, len as i64], Type::index());
    let table = b.val(
        blk,
        "arith.constant",
        vec![],
        tty,
        vec![("value", Attribute::dense(tty, flat))],
    );
    let clen = b.index(blk, len as i64);
    let l = b.op(
        blk,
        "scf.for",
        vec![c0, clen, c1, acc1, full],
        vec![ty, Type::index()],
        vec![],
        1,
    );
    let lr = b.ir.regions_of(l)[0];
    let lb = b.ir.append_block(lr, &[Type::index(), ty, Type::index()]);
    let (k, a, off) = (
        b.ir.block_args(lb)[0],
        b.ir.block_args(lb)[1],
        b.ir.block_args(lb)[2],
    );
    let t = b.val(
        lb,
        "tensor.extract",
        vec![table, rem, k],
        Type::index(),
        vec![],
    );
    let zero = b.index(lb, 0);
    let pos = b.val(
        lb,
        "arith.cmpi",
        vec![t, zero],
        Type::i1(),
        vec![("predicate", Attribute::i64(4))],
    );
    let iff = b.op(lb, "scf.if", vec![pos], vec![ty, Type::index()], vec![], 2);
    let (tr, er) = (b.ir.regions_of(iff)[0], b.ir.regions_of(iff)[1]);
    let tb = b.ir.append_block(tr, &[]);
    let r = body(b, tb, off, t, a);
    let noff = b.ibin(tb, "arith.addi", off, t);
    b.yield_(tb, "scf.yield", vec![r, noff]);
    let eb = b.ir.append_block(er, &[]);
    b.yield_(eb, "scf.yield", vec![a, off]);
    let (r0, r1) = (b.ir.result(iff, 0), b.ir.result(iff, 1));
    b.yield_(lb, "scf.yield", vec![r0, r1]);
    b.ir.result(l, 0)
}

/// Lower one patch; `Err` explains why it was left alone.
/// `vector_bodies`: tiles of at most this many elements get register-level vector bodies
/// (when the patch's body allows); larger ones, or `None`, keep a `linalg.generic`.
/// `k_blocking`: split the reduction into blocks of the patch's `kc`.
pub fn lower(
    ir: &mut Ir,
    op: OpId,
    vector_bodies: Option<i64>,
    k_blocking: bool,
) -> Result<(), String> {
    let lay = layout(ir, op)
        .ok_or("only patches with one M and one N loop dimension and plain indexing are lowered")?;
    let (mmain, mst, mres) = ir
        .attr(op, "m_plan")
        .and_then(read_plan)
        .ok_or("malformed m_plan")?;
    let (nmain, nst, nres) = ir
        .attr(op, "n_plan")
        .and_then(read_plan)
        .ok_or("malformed n_plan")?;
    for (main, st, res) in [(mmain, mst, &mres), (nmain, nst, &nres)] {
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
            if v.iter().sum::<i64>() != r as i64 {
                return Err(format!(
                    "padded plans are not lowered yet (residue {r} of {main})"
                ));
            }
        }
    }
    let (_, outs) = ins_outs(ir, op);
    if outs.len() != 1 || ir.results(op).len() != 1 {
        return Err("expects one tensor output".into());
    }
    let loc = ir.loc(op);
    let blk = ir.op(op).parent.ok_or("patch not in a block")?;
    // Build in a scratch block, then move the ops before the patch.
    let scratch = ir.new_block(&[]);
    let vector = vector_bodies.and_then(|max| vector_plan(ir, op, &lay, max));
    let mut b = B {
        ir,
        loc,
        vector,
        kblock: None,
    };
    let out = outs[0];
    let omap = lay.maps[2].clone();
    let pos = |d: u32| {
        omap.results
            .iter()
            .position(|e| *e == AffineExpr::Dim(d))
            .unwrap_or(0) as i64
    };
    let (pm, pn) = (pos(lay.dm), pos(lay.dn));
    let pmv = b.index(scratch, pm);
    let msz = b.val(scratch, "tensor.dim", vec![out, pmv], Type::index(), vec![]);
    let pnv = b.index(scratch, pn);
    let nsz = b.val(scratch, "tensor.dim", vec![out, pnv], Type::index(), vec![]);
    let mut msizes: Vec<i64> = mres.iter().flatten().copied().chain([mmain]).collect();
    msizes.sort_unstable();
    msizes.dedup();
    let mut nsizes: Vec<i64> = nres.iter().flatten().copied().chain([nmain]).collect();
    nsizes.sort_unstable();
    nsizes.dedup();
    // The kc loop: the reduction is split into blocks of kc (from the cache model) so
    // that a kc x N panel of B stays in L2 while every row strip of A passes over it.
    // Each element still sums its k in order, so results do not change.
    let kc = ir_attr_i64(b.ir, op, "kc").unwrap_or(0);
    let (ins, _) = ins_outs(b.ir, op);
    let kdim = reduction_dim(&lay);
    let mut kloop = None;
    let mut body_blk = scratch;
    let mut acc0 = out;
    if let (Some(dk), true) = (kdim, k_blocking && kc > 0) {
        let kp = res_pos(&lay.maps[0], dk).unwrap_or(0);
        let a_shape = b.ir.value_type(ins[0]).shape().unwrap_or(&[]).to_vec();
        let kstatic = a_shape.get(kp).copied().unwrap_or(DYNAMIC);
        if kstatic == DYNAMIC || kstatic > kc {
            let kpv = b.index(scratch, kp as i64);
            let kext = b.val(
                scratch,
                "tensor.dim",
                vec![ins[0], kpv],
                Type::index(),
                vec![],
            );
            let c0 = b.index(scratch, 0);
            let ckc = b.index(scratch, kc);
            let oty = b.ir.value_type(out);
            let f = b.op(
                scratch,
                "scf.for",
                vec![c0, kext, ckc, out],
                vec![oty],
                vec![],
                1,
            );
            let fr = b.ir.regions_of(f)[0];
            let fb = b.ir.append_block(fr, &[Type::index(), oty]);
            let (k0, acc) = (b.ir.block_args(fb)[0], b.ir.block_args(fb)[1]);
            let left = b.ibin(fb, "arith.subi", kext, k0);
            let ckc2 = b.index(fb, kc);
            let ks = b.val(fb, "arith.minsi", vec![ckc2, left], Type::index(), vec![]);
            b.kblock = Some((dk, k0, ks));
            kloop = Some((f, fb));
            body_blk = fb;
            acc0 = acc;
        }
    }
    // Loop order: N tiles outside, M strips inside (BLIS's jr/ir): one kc x nr panel of B
    // stays in L1 while every row strip of A (kc x M, in L2) passes over it.
    let result = cover(
        &mut b,
        body_blk,
        nsz,
        nmain,
        &nres,
        nst,
        acc0,
        &mut |b, rb, noff, nval, acc| {
            cover(
                b,
                rb,
                msz,
                mmain,
                &mres,
                mst,
                acc,
                &mut |b, cb, moff, mval, acc2| {
                    switch(b, cb, mval, &msizes, acc2, &mut |b, mb, mi| {
                        switch(b, mb, nval, &nsizes, acc2, &mut |b, nb, nj| {
                            tile(b, nb, op, &lay, acc2, (moff, mi, noff, nj))
                        })
                    })
                },
            )
        },
    );
    let result = match kloop {
        Some((f, fb)) => {
            b.yield_(fb, "scf.yield", vec![result]);
            b.ir.result(f, 0)
        }
        None => result,
    };
    let ops = ir.block_ops_vec(scratch);
    for o in ops {
        ir.unlink(o);
        ir.insert_before(op, o);
    }
    let _ = blk;
    ir.replace_op(op, &[result]);
    Ok(())
}

pub struct LowerUkernelsPass {
    opts: PassOptions,
    lowered: u64,
    skipped: u64,
}

impl Default for LowerUkernelsPass {
    fn default() -> Self {
        LowerUkernelsPass {
            opts: PassOptions::new(vec![
                OptionSpec {
                    name: "vector-bodies",
                    kind: OptionKind::Int,
                    default: "512",
                    description: "Tiles of at most this many elements get register-level vector bodies (vector.fma over vector<n>); 0 keeps linalg.generic tiles",
                },
                OptionSpec {
                    name: "k-blocking",
                    kind: OptionKind::Bool,
                    default: "true",
                    description: "Split the reduction into blocks of the patch's kc (an scf.for around the tile loops)",
                },
            ]),
            lowered: 0,
            skipped: 0,
        }
    }
}

impl Pass for LowerUkernelsPass {
    fn argument(&self) -> &'static str {
        "lower-ukernels"
    }
    fn name(&self) -> &'static str {
        "LowerUkernels"
    }
    fn summary(&self) -> &'static str {
        "Realize ukernel.patch plans as loops over statically shaped tiles (tensor level)"
    }
    fn options(&mut self) -> Option<&mut PassOptions> {
        Some(&mut self.opts)
    }
    fn options_ref(&self) -> Option<&PassOptions> {
        Some(&self.opts)
    }
    fn run(&mut self, cx: &mut PassContext<'_>, op: OpId) -> Result<(), PassFailure> {
        let vb = self.opts.int("vector-bodies");
        let vector_bodies = (vb > 0).then_some(vb);
        let k_blocking = self.opts.bool("k-blocking");
        let mut patches = vec![];
        cx.ir.walk_pre(op, &mut |o| {
            if cx.ir.name(o) == "ukernel.patch" {
                patches.push(o);
            }
        });
        for p in patches {
            match lower(cx.ir, p, vector_bodies, k_blocking) {
                Ok(()) => self.lowered += 1,
                Err(e) => {
                    cx.emit(Diagnostic::remark(
                        cx.ir.loc(p),
                        format!("not lowered: {e}"),
                    ));
                    self.skipped += 1;
                }
            }
        }
        Ok(())
    }
    fn statistics(&self) -> Vec<Statistic> {
        vec![
            Statistic {
                name: "num-lowered",
                description: "Patches lowered to loops",
                value: self.lowered,
            },
            Statistic {
                name: "num-skipped",
                description: "Patches left as they are",
                value: self.skipped,
            },
        ]
    }
    fn clone_pass(&self) -> Box<dyn Pass> {
        Box::new(LowerUkernelsPass {
            opts: self.opts.clone(),
            ..LowerUkernelsPass::default()
        })
    }
}
