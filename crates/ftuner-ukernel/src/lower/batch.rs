//! Batched contractions: the batch dims become loops outermost, each batch a GEMM of its
//! own (`split_batch`), and the loop-nest builders it uses.

use super::plan_loops::zero_fill;
use super::tiles::{cover, insert_back, layout, switch, Along, SliceSpec, TileFn};
use super::{res_pos, Blocking, Plans, B};
use ftuner_dialects::linalg::ins_outs;
use ftuner_dialects::ops::{arith, scf, tensor, ukernel};
use ftuner_dialects::ukernel::epilogue_block;
use ftuner_ir::{intern_name, AffineExpr, Attribute, BlockId, Ir, OpId, OpSpec, Value, DYNAMIC};

/// The tile loops of a patch: N tiles outside, M strips inside (BLIS's jr/ir, so one
/// kc x nr panel of B stays in cache (L1, or L2 where it streams from there: cpu.rs) while
/// the row strips of A pass over it) — or M strips outside when `B::rows_outside` —, each tile
/// dispatched on its (m, n) size to `f(b, block, acc, (m_off, m_size, n_off, n_size))`.
pub(super) fn nest(
    b: &mut B<'_>,
    blk: BlockId,
    (msz, nsz): (Value, Value),
    plans: &Plans,
    acc: Value,
    f: &mut TileFn<'_>,
) -> Value {
    nest_from(b, blk, (msz, nsz), plans, acc, None, f)
}

/// [`nest`] over the rows `m0 .. m0 + msz` (an mc block) when `m0` is given.
pub(super) fn nest_from(
    b: &mut B<'_>,
    blk: BlockId,
    (msz, nsz): (Value, Value),
    plans: &Plans,
    acc: Value,
    m0: Option<Value>,
    f: &mut TileFn<'_>,
) -> Value {
    let (mmain, mst, mres) = &plans.m;
    let (nmain, nst, nres) = &plans.n;
    let sizes = |res: &[Vec<i64>], main: i64| {
        let mut v: Vec<i64> = res.iter().flatten().copied().chain([main]).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (msizes, nsizes) = (sizes(mres, *mmain), sizes(nres, *nmain));
    // One tile at rows (moff, mval) and columns (noff, nval), dispatched on its sizes.
    let mut tile = |b: &mut B<'_>, blk: BlockId, (moff, mval), (noff, nval), acc: Value| {
        let moff = match m0 {
            Some(m0) => b.ibin(blk, arith::AddiOp::NAME, m0, moff),
            None => moff,
        };
        switch(b, blk, mval, &msizes, acc, &mut |b, mb, mi| {
            switch(b, mb, nval, &nsizes, acc, &mut |b, nb, nj| {
                f(b, nb, acc, (moff, mi, noff, nj))
            })
        })
    };
    let (mm, nn) = ((msz, *mmain, mres, *mst), (nsz, *nmain, nres, *nst));
    if b.rows_outside && m0.is_none() {
        // Row strips outside (`rows_outside`): each strip's rows are written in order.
        let (sz, main, res, st) = mm;
        return cover(
            b,
            blk,
            sz,
            main,
            res,
            st,
            Along::Rows,
            acc,
            &mut |b, cb, moff, mval, acc| {
                let (sz, main, res, st) = nn;
                let pn = b.parallel_n;
                cover(
                    b,
                    cb,
                    sz,
                    main,
                    res,
                    st,
                    Along::Columns { parallel: pn },
                    acc,
                    &mut |b, rb, noff, nval, acc| tile(b, rb, (moff, mval), (noff, nval), acc),
                )
            },
        );
    }
    let (sz, main, res, st) = nn;
    let pn = b.parallel_n;
    cover(
        b,
        blk,
        sz,
        main,
        res,
        st,
        Along::Columns { parallel: pn },
        acc,
        &mut |b, rb, noff, nval, acc| {
            let (sz, main, res, st) = mm;
            cover(
                b,
                rb,
                sz,
                main,
                res,
                st,
                Along::Rows,
                acc,
                &mut |b, cb, moff, mval, acc| tile(b, cb, (moff, mval), (noff, nval), acc),
            )
        },
    )
}

/// A copy of `fill` (a `linalg.fill`) writing `dest` instead, appended to `blk`.
fn fill_slice(ir: &mut Ir, blk: BlockId, fill: OpId, dest: Value) -> Value {
    let old = ins_outs(ir, fill).1[0];
    let mut map = std::iter::once((old, dest)).collect();
    let f = ir.clone_op(fill, &mut map);
    ir.append_op(blk, f);
    let r = ir.result(f, 0);
    let ty = ir.value_type(dest);
    ir.set_value_type(r, ty);
    r
}

/// A patch with a batch dim (indexed by all three operands) becomes an `scf.for` over that
/// dim around the same patch on the batch's rank-reduced slices (`tensor.extract_slice`,
/// result put back with `tensor.insert_slice`); returns the inner patch, to be lowered.
pub(super) fn split_batch(
    ir: &mut Ir,
    op: OpId,
    blocking: Blocking,
) -> Result<Option<OpId>, String> {
    let Some(lay) = layout(ir, op) else {
        return Ok(None);
    };
    let nd = lay.maps[0].num_dims;
    let Some(bd) = (0..nd).find(|d| lay.maps.iter().all(|m| res_pos(m, *d).is_some())) else {
        return Ok(None);
    };
    let (ins, outs) = ins_outs(ir, op);
    if ins.len() != 2 || outs.len() != 1 {
        return Ok(None);
    }
    if epilogue_block(ir, op).is_some() {
        return Err("epilogues of batched contractions are not lowered".into());
    }
    let loc = ir.loc(op);
    let scratch = ir.new_block(&[]);
    let mut b = B::new(ir, loc);
    b.blocking = blocking;
    // A zero fill of the whole output becomes a fill of each batch's slice, just before
    // its GEMM: the slice is then zero in cache, or no fill is left at all when the inner
    // patch's register tiles start from zero (`take_zero_fill`). Filled whole first, the
    // output went out to memory and came back once per batch (attention's scores).
    let fill = zero_fill(b.ir, outs[0]);
    let out = fill.map_or(outs[0], |f| ins_outs(b.ir, f).1[0]);
    let cpos = res_pos(&lay.maps[2], bd).unwrap_or(0);
    let pv = b.index(scratch, cpos as i64);
    let ext = b.dim(scratch, out, pv);
    let c0 = b.index(scratch, 0);
    let c1 = b.index(scratch, 1);
    let (f, fb, iv, acc) = b.for_loop(scratch, (c0, ext, c1), vec![out]);
    b.mark_parallel(f);
    let acc = acc[0];
    // The batch's slice of each operand, the batch dim dropped.
    let mut slices = vec![];
    let mut c_spec = None;
    for (i, v) in [ins[0], ins[1], acc].into_iter().enumerate() {
        let ty = b.ir.value_type(v);
        let shape = ty.shape().unwrap_or(&[]).to_vec();
        let p = res_pos(&lay.maps[i], bd).unwrap_or(0);
        let mut dyn_size = vec![];
        let mut st_off = vec![];
        let mut st_size = vec![];
        let mut new_shape = vec![];
        for (j, d) in shape.iter().enumerate() {
            if j == p {
                st_off.push(DYNAMIC);
                st_size.push(1);
                continue;
            }
            st_off.push(0);
            if *d == DYNAMIC {
                let jv = b.index(fb, j as i64);
                dyn_size.push(b.dim(fb, v, jv));
            }
            st_size.push(*d);
            new_shape.push(*d);
        }
        let spec = SliceSpec {
            operands: std::iter::once(iv).chain(dyn_size).collect(),
            n_offsets: 1,
            static_offsets: st_off,
            static_sizes: st_size,
        };
        let mut ops = vec![v];
        ops.extend(spec.operands.iter().copied());
        let rt = ty.with_shape(new_shape);
        let mut slice = b.val(fb, tensor::ExtractSliceOp::NAME, ops, rt, spec.props(&[1]));
        if i == 2 {
            c_spec = Some(spec);
            if let Some(f) = fill {
                slice = fill_slice(b.ir, fb, f, slice);
            }
        }
        slices.push(slice);
    }
    // The same patch without the batch dim.
    let drop_dim = |m: &ftuner_ir::AffineMap| ftuner_ir::AffineMap {
        num_dims: m.num_dims - 1,
        num_symbols: m.num_symbols,
        results: m
            .results
            .iter()
            .filter(|e| **e != AffineExpr::Dim(bd))
            .map(|e| match e {
                AffineExpr::Dim(d) if *d > bd => AffineExpr::Dim(d - 1),
                other => other.clone(),
            })
            .collect(),
    };
    let maps: Vec<Attribute> = lay
        .maps
        .iter()
        .map(|m| Attribute::affine_map(drop_dim(m)))
        .collect();
    let its: Vec<Attribute> = lay
        .iterators_attr
        .as_array()
        .unwrap_or(&[])
        .iter()
        .enumerate()
        .filter(|(i, _)| *i as u32 != bd)
        .map(|(_, a)| *a)
        .collect();
    let data = b.ir.op(op).clone();
    let mut props: Vec<(String, Attribute)> = data
        .props
        .as_dict()
        .unwrap_or(&[])
        .iter()
        .filter(|(k, _)| k != "indexing_maps" && k != "iterator_types")
        .cloned()
        .collect();
    props.push(("indexing_maps".into(), Attribute::array(maps)));
    props.push(("iterator_types".into(), Attribute::array(its)));
    let attrs: Vec<(String, Attribute)> = data.attrs.as_dict().unwrap_or(&[]).to_vec();
    let c2 = b.ir.value_type(slices[2]);
    let inner = ftuner_ir::OpBuilder::at_end(&mut *b.ir, fb, loc).insert(OpSpec {
        name: intern_name(ukernel::PatchOp::NAME),
        operands: slices.clone(),
        result_types: vec![c2],
        props,
        attrs,
        num_regions: 1,
        successors: vec![],
        loc,
    });
    let (src_r, dst_r) = (b.ir.regions_of(op)[0], b.ir.regions_of(inner)[0]);
    let (mut map, mut bmap) = (Default::default(), Default::default());
    b.ir.clone_region_into(src_r, dst_r, &mut map, &mut bmap);
    let r = b.ir.result(inner, 0);
    let spec = c_spec.ok_or("no output slice")?;
    let back = insert_back(&mut b, fb, r, &spec, acc);
    b.yield_(fb, scf::YieldOp::NAME, vec![back]);
    let result = b.ir.result(f, 0);
    for o in ir.block_ops_vec(scratch) {
        ir.unlink(o);
        ir.insert_before(op, o);
    }
    ir.replace_op(op, &[result]);
    Ok(Some(inner))
}
