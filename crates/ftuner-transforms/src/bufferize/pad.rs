//! Bufferization of `tensor.pad`: a new buffer, the source copied into its interior (a
//! subview at the low padding, checked at run time where the padding is dynamic) and the
//! padding value written around it — only on the border where every padded dim is static
//! (a CNN's pads: 2-4% of the buffer), else over the whole buffer first. A border pad of
//! two or more trailing dims after unpadded ones (a CNN's H and W) runs plane by plane.

use super::types::{memref_of, subview_type};
use super::{BufferRewriter, R};
use crate::runtime_checks::{what, Checks};
use ftuner_dialects::ops;
use ftuner_dialects::tensor::PadValue;
use ftuner_ir::{intern_name, Attribute, BlockId, Ir, OpId, OpSpec, Type, Value, DYNAMIC};

/// The padding of a `tensor.pad`, per dim: the static low padding (`DYNAMIC` where it is
/// dynamic) with its dynamic value, and the source's dynamic size where it has one.
struct Padding {
    static_low: Vec<i64>,
    /// The static high padding (`DYNAMIC` where it is dynamic).
    static_high: Vec<i64>,
    lows: Vec<Option<Value>>,
    /// The dynamic high padding, where it is dynamic.
    highs: Vec<Option<Value>>,
    src_sizes: Vec<Option<Value>>,
    /// The dynamic sizes of the result (source + low + high), in order.
    dyn_sizes: Vec<Value>,
}

impl BufferRewriter<'_> {
    /// `tensor.pad` with a padding value that does not depend on the position: a new
    /// buffer filled with the value, the source copied into its interior.
    pub(super) fn pad(&mut self, op: OpId, b: BlockId) -> R<()> {
        let loc = self.ir.loc(op);
        let src = self.v(op, self.ir.operand(op, 0))?;
        let res = self.ir.result(op, 0);
        let ty = memref_of(self.ir.value_type(res))
            .ok_or((op, "unranked tensors cannot be bufferized".into()))?;
        let pad = self.padding_value(op, b)?;
        let padding = self.padding(op, b, src, ty)?;
        let out = self.alloc(b, ty, padding.dyn_sizes.clone(), loc);
        // The run-time check that the source fits the result comes before any write (the
        // slabs of an unpadded dim span the source's size): with the copy, or before the
        // plane loop.
        match border(&padding, ty, self.ir.value_type(src)) {
            Some(slabs) => match leading_unpadded(&padding) {
                // A CNN's pad of H and W: plane by plane, each plane's interior and border
                // written while its lines are in L1 (as a copy over the whole buffer and
                // then four border passes, each border column brought back from L3).
                Some(lead) => {
                    // The checks; the planes' interiors are views of `out` itself, so the
                    // loop nest reads `src` and writes `out`, two buffers LLVM sees apart
                    // (through a view of `out` beside `out`, it copied element by element).
                    self.check_interior(op, b, out, ty, &padding)?;
                    let lows = padding.static_low.clone();
                    self.per_plane(op, b, (src, out), (pad, &lows), lead, &slabs)?;
                }
                None => {
                    self.copy_interior(op, b, src, out, ty, &padding)?;
                    for s in slabs {
                        self.fill_slab(op, b, pad, (out, ty), &padding, &s)?;
                    }
                }
            },
            None => {
                self.fill(b, pad, out, ty.element_type(), loc);
                self.copy_interior(op, b, src, out, ty, &padding)?;
            }
        }
        self.map.insert(res, out);
        Ok(())
    }

    /// The padding value: yielded from outside the body, or a constant inside it (cloned
    /// into `b`).
    fn padding_value(&mut self, op: OpId, b: BlockId) -> R<Value> {
        match ftuner_dialects::tensor::pad_value(self.ir, op) {
            Some(PadValue::Outside(y)) => self.v(op, y),
            Some(PadValue::Constant(c)) => {
                let k = self.ir.clone_op(c, &mut rustc_hash::FxHashMap::default());
                self.ir.append_op(b, k);
                Ok(self.ir.result(k, 0))
            }
            None => Err((
                op,
                "a padding value that depends on the position is not supported".into(),
            )),
        }
    }

    /// The low padding of `op` (source buffer `src`, result type `ty`) and the sizes it
    /// implies, computed in `b` where dynamic.
    fn padding(&mut self, op: OpId, b: BlockId, src: Value, ty: Type) -> R<Padding> {
        let loc = self.ir.loc(op);
        let operands = self.ir.operands(op).to_vec();
        let st = self.ir.value_type(src);
        let rank = st.rank().unwrap_or(0);
        let arr = |ir: &Ir, a: &str| {
            ir.attr(op, a)
                .and_then(|x| x.as_dense_i64s())
                .unwrap_or_default()
        };
        let (slow, shigh) = (arr(self.ir, "static_low"), arr(self.ir, "static_high"));
        let segs = arr(self.ir, "operandSegmentSizes");
        let nl = segs.get(1).copied().unwrap_or(0) as usize;
        if slow.len() != rank || shigh.len() != rank || operands.len() < 1 + nl {
            return Err((op, "low/high do not match the rank".into()));
        }
        let mut dl = operands[1..1 + nl].iter();
        let mut dh = operands[1 + nl..].iter();
        let mut lows = vec![];
        let mut highs = vec![];
        let mut dyn_sizes = vec![];
        let mut src_sizes = vec![];
        let rshape = ty.shape().unwrap_or(&[]).to_vec();
        for i in 0..rank {
            let lo = if slow[i] == DYNAMIC {
                Some(self.v(op, *dl.next().ok_or((op, "missing low".to_string()))?)?)
            } else {
                None
            };
            let hi = if shigh[i] == DYNAMIC {
                Some(self.v(op, *dh.next().ok_or((op, "missing high".to_string()))?)?)
            } else {
                None
            };
            let ssz = if st.shape().is_some_and(|s| s[i] != DYNAMIC) {
                None
            } else {
                Some(self.dim(b, src, i, loc))
            };
            if rshape[i] == DYNAMIC {
                // size = src + low + high
                let s0 = match ssz {
                    Some(v) => v,
                    None => self.index_const(b, st.shape().map_or(0, |s| s[i]), loc),
                };
                let l0 = match lo {
                    Some(v) => v,
                    None => self.index_const(b, slow[i], loc),
                };
                let h0 = match hi {
                    Some(v) => v,
                    None => self.index_const(b, shigh[i], loc),
                };
                let a1 = self.index_op(b, ops::arith::AddiOp::NAME, vec![s0, l0], loc);
                dyn_sizes.push(self.index_op(b, ops::arith::AddiOp::NAME, vec![a1, h0], loc));
            }
            lows.push(lo);
            highs.push(hi);
            src_sizes.push(ssz);
        }
        Ok(Padding {
            static_low: slow,
            static_high: shigh,
            lows,
            highs,
            src_sizes,
            dyn_sizes,
        })
    }

    /// Fill one slab of the border of `out` (of type `ty`) with `pad`.
    fn fill_slab(
        &mut self,
        op: OpId,
        b: BlockId,
        pad: Value,
        (out, ty): (Value, Type),
        padding: &Padding,
        slab: &Slab,
    ) -> R<()> {
        let loc = self.ir.loc(op);
        let rank = slab.sizes.len();
        let ones = vec![1i64; rank];
        let dyn_sizes: Vec<Value> = (0..rank)
            .filter(|i| slab.sizes[*i] == DYNAMIC)
            .filter_map(|i| padding.src_sizes[i])
            .collect();
        let sv_ty = subview_type(ty, &slab.offsets, &slab.sizes, &ones, &slab.sizes)
            .ok_or((op, "cannot type a slab of the pad".into()))?;
        let sv = self.subview(
            b,
            out,
            sv_ty,
            (&slab.offsets, &[]),
            (&slab.sizes, &dyn_sizes),
            loc,
        );
        self.fill(b, pad, sv, ty.element_type(), loc);
        Ok(())
    }

    /// Copy `src` into the interior of `out` (of type `ty`): a subview at the low offsets
    /// with the source's sizes, checked at run time to fit ([`Self::check_interior`]).
    fn copy_interior(
        &mut self,
        op: OpId,
        b: BlockId,
        src: Value,
        out: Value,
        ty: Type,
        padding: &Padding,
    ) -> R<()> {
        let (offs, sizes) = self.check_interior(op, b, out, ty, padding)?;
        let ones = vec![1i64; sizes.len()];
        let sv_ty = subview_type(ty, &offs, &sizes, &ones, &sizes)
            .ok_or((op, "cannot type the interior of the pad".into()))?;
        let dyn_lows: Vec<Value> = padding.lows.iter().flatten().copied().collect();
        let dyn_sizes: Vec<Value> = padding.src_sizes.iter().flatten().copied().collect();
        let loc = self.ir.loc(op);
        let sv = self.subview(b, out, sv_ty, (&offs, &dyn_lows), (&sizes, &dyn_sizes), loc);
        self.copy(b, src, sv, loc);
        self.copies += 1;
        Ok(())
    }

    /// The run-time check that the source fits the interior of `out` (of type `ty`) at
    /// the low offsets, emitted in `b`; the interior's static offsets and sizes
    /// (`DYNAMIC` where dynamic).
    fn check_interior(
        &mut self,
        op: OpId,
        b: BlockId,
        out: Value,
        ty: Type,
        padding: &Padding,
    ) -> R<(Vec<i64>, Vec<i64>)> {
        let loc = self.ir.loc(op);
        let st = self.ir.value_type(self.ir.operand(op, 0));
        let rank = st.rank().unwrap_or(0);
        let Padding {
            static_low: slow,
            static_high: shigh,
            lows,
            highs,
            src_sizes,
            ..
        } = padding;
        let offs: Vec<i64> = (0..rank)
            .map(|i| if lows[i].is_some() { DYNAMIC } else { slow[i] })
            .collect();
        let sizes: Vec<i64> = (0..rank)
            .map(|i| {
                if src_sizes[i].is_some() {
                    DYNAMIC
                } else {
                    st.shape().map_or(0, |s| s[i])
                }
            })
            .collect();
        let ones = vec![1i64; rank];
        let mut ops = vec![out];
        ops.extend(lows.iter().flatten().copied());
        ops.extend(src_sizes.iter().flatten().copied());
        let msg = format!(
            "{}: negative padding, or a padded size that is not the result's",
            what(self.ir, op)
        );
        let mut ck = Checks::new(self.ir, b, loc);
        ck.slice(out, &offs, &sizes, &ones, &ops[1..]);
        // A static result dim is exactly source + low + high: a smaller source fitted and
        // the JIT padded where the op's semantics (and the interpreter) say error.
        let rshape = ty.shape().unwrap_or(&[]);
        for i in 0..rank {
            let dynamic = lows[i].is_some() || highs[i].is_some() || src_sizes[i].is_some();
            if rshape.get(i).is_some_and(|d| *d != DYNAMIC) && dynamic {
                let src_static = st.shape().map_or(0, |s| s[i]);
                let parts = [
                    (src_static, src_sizes[i]),
                    (slow[i], lows[i]),
                    (shigh[i], highs[i]),
                ];
                ck.sum_equals(&parts, rshape[i]);
            }
        }
        ck.assert(&msg);
        Ok((offs, sizes))
    }

    /// The pad written plane by plane: a loop over each of the `lead` leading (unpadded)
    /// dims of `out`, and in it the plane's interior copied from `src` and its border
    /// slabs (`slabs` over the whole buffer, restricted to the plane) filled with `pad`.
    fn per_plane(
        &mut self,
        op: OpId,
        b: BlockId,
        (src, out): (Value, Value),
        (pad, lows): (Value, &[i64]),
        lead: usize,
        slabs: &[Slab],
    ) -> R<()> {
        let loc = self.ir.loc(op);
        let (c0, c1) = (self.index_const(b, 0, loc), self.index_const(b, 1, loc));
        let ubs: Vec<Value> = (0..lead).map(|d| self.dim(b, out, d, loc)).collect();
        let mut body = b;
        let mut ivs = vec![];
        for ub in ubs {
            let lp = self.ir.create_op(
                OpSpec::new(intern_name(ops::scf::ForOp::NAME), loc)
                    .operands([c0, ub, c1])
                    .regions(1),
            );
            self.ir.append_op(body, lp);
            let region = self.ir.regions_of(lp)[0];
            let blk = self.ir.append_block(region, &[Type::index()]);
            ivs.push(self.ir.block_args(blk)[0]);
            if body != b {
                self.new_op(body, ops::scf::YieldOp::NAME, vec![], vec![], vec![], loc);
            }
            body = blk;
        }
        let plane = |v: Value, ir: &Ir| -> Vec<i64> {
            let sh = ir.value_type(v).shape().unwrap_or(&[]).to_vec();
            (0..sh.len())
                .map(|d| if d < lead { 1 } else { sh[d] })
                .collect()
        };
        let zeros = |n: usize| vec![0i64; n];
        let sp = plane(src, self.ir);
        let from = self.view(op, body, src, (&ivs, &zeros(sp.len()), &sp))?;
        let to = self.view(op, body, out, (&ivs, lows, &sp))?;
        self.copy(body, from, to, loc);
        self.copies += 1;
        let elem = self.ir.value_type(out).element_type();
        for s in slabs {
            let mut sizes = s.sizes.clone();
            sizes[..lead].fill(1);
            let v = self.view(op, body, out, (&ivs, &s.offsets, &sizes))?;
            self.fill(body, pad, v, elem, loc);
        }
        self.new_op(body, ops::scf::YieldOp::NAME, vec![], vec![], vec![], loc);
        Ok(())
    }

    /// `memref.subview` of `buf` at `ivs` along its leading dims and `offs` along the
    /// rest, of static `sizes`, unit strides.
    fn view(
        &mut self,
        op: OpId,
        b: BlockId,
        buf: Value,
        (ivs, offs, sizes): (&[Value], &[i64], &[i64]),
    ) -> R<Value> {
        let ty = self.ir.value_type(buf);
        let mut offsets = offs.to_vec();
        offsets[..ivs.len()].fill(DYNAMIC);
        let ones = vec![1i64; sizes.len()];
        let sv_ty = subview_type(ty, &offsets, sizes, &ones, sizes)
            .ok_or((op, "cannot type a plane of the pad".into()))?;
        let loc = self.ir.loc(op);
        let sv = self.subview(b, buf, sv_ty, (&offsets, ivs), (sizes, &[]), loc);
        Ok(sv)
    }

    /// `memref.subview` of `buf` (result type `ty`) at static `offsets` (`DYNAMIC` where
    /// given by `dyn_offs`, in order) and static `sizes` (likewise `dyn_sizes`), unit
    /// strides.
    fn subview(
        &mut self,
        b: BlockId,
        buf: Value,
        ty: Type,
        (offsets, dyn_offs): (&[i64], &[Value]),
        (sizes, dyn_sizes): (&[i64], &[Value]),
        loc: Attribute,
    ) -> Value {
        let ones = vec![1i64; sizes.len()];
        let mut operands = vec![buf];
        operands.extend_from_slice(dyn_offs);
        operands.extend_from_slice(dyn_sizes);
        let segs = [1, dyn_offs.len() as i32, dyn_sizes.len() as i32, 0];
        let sv = self.new_op(
            b,
            ops::memref::SubviewOp::NAME,
            operands,
            vec![ty],
            vec![
                ("static_offsets".into(), Attribute::dense_i64_array(offsets)),
                ("static_sizes".into(), Attribute::dense_i64_array(sizes)),
                ("static_strides".into(), Attribute::dense_i64_array(&ones)),
                (
                    "operandSegmentSizes".into(),
                    Attribute::dense_i32_array(&segs),
                ),
            ],
            loc,
        );
        self.ir.result(sv, 0)
    }
}

/// How many leading dims of a pad are unpadded, when at least one is, at least two dims
/// follow them (a plane, not a row of a few elements per iteration), and every dim after
/// the first padded one is static: the pad then runs plane by plane ([`BufferRewriter::per_plane`]).
fn leading_unpadded(p: &Padding) -> Option<usize> {
    let rank = p.static_low.len();
    let padded = |i: usize| p.static_low[i] != 0 || p.static_high[i] != 0;
    let lead = (0..rank).find(|i| padded(*i))?;
    (lead >= 1 && rank - lead >= 2 && (lead..rank).all(|i| p.src_sizes[i].is_none()))
        .then_some(lead)
}

/// A box of the padded buffer: static offsets, sizes (`DYNAMIC` where the size is the
/// source's dynamic size of an unpadded dim).
#[derive(Debug, PartialEq)]
struct Slab {
    offsets: Vec<i64>,
    sizes: Vec<i64>,
}

/// The border of a pad as disjoint boxes — for each padded dim `i`, the low and the high
/// side, over the interior of the dims before `i` and the whole of the dims after it — when
/// every padded dim has a static source size and static low/high padding (dims without
/// padding may be dynamic). `None` otherwise: the caller fills the whole buffer.
fn border(p: &Padding, ty: Type, src: Type) -> Option<Vec<Slab>> {
    let (rank, static_high) = (p.static_low.len(), &p.static_high);
    let (rshape, sshape) = (ty.shape()?, src.shape()?);
    if static_high.len() != rank || rshape.len() != rank || sshape.len() != rank {
        return None;
    }
    let padded = |i: usize| p.static_low[i] != 0 || static_high[i] != 0;
    for i in (0..rank).filter(|i| padded(*i)) {
        let (lo, hi) = (p.static_low[i], static_high[i]);
        if lo == DYNAMIC || hi == DYNAMIC || lo < 0 || hi < 0 || sshape[i] == DYNAMIC {
            return None;
        }
    }
    // A padded dim: its static source size (interior) or padded size (whole). An unpadded
    // dim: the result's size where static, else the source's (dynamic: its `memref.dim`);
    // the copy's run-time check, before the fills, makes them equal.
    let mut whole = vec![0; rank];
    let mut inner = vec![0; rank];
    for j in 0..rank {
        (whole[j], inner[j]) = if padded(j) {
            let w = sshape[j]
                .checked_add(p.static_low[j])?
                .checked_add(static_high[j])?;
            (w, sshape[j])
        } else if rshape[j] != DYNAMIC {
            (rshape[j], rshape[j])
        } else {
            (sshape[j], sshape[j])
        };
    }
    let mut slabs = vec![];
    for i in (0..rank).filter(|i| padded(*i)) {
        let sides = [
            (0, p.static_low[i]),
            (p.static_low[i] + sshape[i], static_high[i]),
        ];
        for (at, len) in sides.into_iter().filter(|(_, len)| *len > 0) {
            let mut offsets = vec![0; rank];
            let mut sizes = whole.clone();
            offsets[..i].copy_from_slice(&p.static_low[..i]);
            sizes[..i].copy_from_slice(&inner[..i]);
            offsets[i] = at;
            sizes[i] = len;
            slabs.push(Slab { offsets, sizes });
        }
    }
    Some(slabs)
}
