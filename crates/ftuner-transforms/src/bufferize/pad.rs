//! Bufferization of `tensor.pad`: a new buffer filled with the padding value, the source
//! copied into its interior (a subview at the low padding), checked at run time where the
//! padding is dynamic.

use super::types::{memref_of, subview_type};
use super::{Rw, R};
use crate::runtime_checks::{what, Checks};
use ftuner_dialects::ops;
use ftuner_ir::{Attribute, BlockId, Ir, OpId, Type, Value, DYNAMIC};

/// The padding of a `tensor.pad`, per dim: the static low padding (`DYNAMIC` where it is
/// dynamic) with its dynamic value, and the source's dynamic size where it has one.
struct Padding {
    static_low: Vec<i64>,
    lows: Vec<Option<Value>>,
    src_sizes: Vec<Option<Value>>,
    /// The dynamic sizes of the result (source + low + high), in order.
    dyn_sizes: Vec<Value>,
}

impl Rw<'_> {
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
        self.fill(b, pad, out, ty.element_type(), loc);
        self.copy_interior(op, b, src, out, ty, &padding)?;
        self.map.insert(res, out);
        Ok(())
    }

    /// The padding value: yielded from outside the body, or a constant inside it (cloned
    /// into `b`).
    fn padding_value(&mut self, op: OpId, b: BlockId) -> R<Value> {
        let body = self
            .ir
            .regions_of(op)
            .first()
            .and_then(|r| self.ir.region_entry(*r))
            .ok_or((op, "has no body".into()))?;
        let y = self
            .ir
            .terminator(body)
            .and_then(|t| self.ir.operands(t).first().copied())
            .ok_or((op, "body yields nothing".into()))?;
        Ok(match self.map.get(&y) {
            Some(v) => *v,
            None => {
                let c = self
                    .ir
                    .defining_op(y)
                    .filter(|c| {
                        self.ir.name(*c) == ops::arith::ConstantOp::NAME
                            && self.ir.operands(*c).is_empty()
                    })
                    .ok_or((
                        op,
                        "a padding value that depends on the position is not supported".into(),
                    ))?;
                let mut m = rustc_hash::FxHashMap::default();
                let k = self.ir.clone_op(c, &mut m);
                self.ir.append_op(b, k);
                self.ir.result(k, 0)
            }
        })
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
            src_sizes.push(ssz);
        }
        Ok(Padding {
            static_low: slow,
            lows,
            src_sizes,
            dyn_sizes,
        })
    }

    /// Copy `src` into the interior of `out` (of type `ty`): a subview at the low offsets
    /// with the source's sizes, checked at run time to fit.
    fn copy_interior(
        &mut self,
        op: OpId,
        b: BlockId,
        src: Value,
        out: Value,
        ty: Type,
        padding: &Padding,
    ) -> R<()> {
        let loc = self.ir.loc(op);
        let st = self.ir.value_type(src);
        let rank = st.rank().unwrap_or(0);
        let Padding {
            static_low: slow,
            lows,
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
        let sv_ty = subview_type(ty, &offs, &sizes, &ones, &sizes)
            .ok_or((op, "cannot type the interior of the pad".into()))?;
        let mut ops = vec![out];
        ops.extend(lows.iter().flatten().copied());
        ops.extend(src_sizes.iter().flatten().copied());
        let msg = format!(
            "{}: negative padding, or a padded size that is not the result's",
            what(self.ir, op)
        );
        let mut ck = Checks::new(self.ir, b, loc);
        ck.slice(out, &offs, &sizes, &ones, &ops[1..]);
        ck.assert(&msg);
        let nlo = lows.iter().flatten().count() as i32;
        let nsz = src_sizes.iter().flatten().count() as i32;
        let sv = self.new_op(
            b,
            ops::memref::SubviewOp::NAME,
            ops,
            vec![sv_ty],
            vec![
                ("static_offsets".into(), Attribute::dense_i64_array(&offs)),
                ("static_sizes".into(), Attribute::dense_i64_array(&sizes)),
                ("static_strides".into(), Attribute::dense_i64_array(&ones)),
                (
                    "operandSegmentSizes".into(),
                    Attribute::dense_i32_array(&[1, nlo, nsz, 0]),
                ),
            ],
            loc,
        );
        let sv = self.ir.result(sv, 0);
        self.copy(b, src, sv, loc);
        self.copies += 1;
        Ok(())
    }
}
