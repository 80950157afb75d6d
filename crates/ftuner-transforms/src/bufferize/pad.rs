//! Bufferization of `tensor.pad`: a new buffer filled with the padding value, the source
//! copied into its interior (a subview at the low padding), checked at run time where the
//! padding is dynamic.

use super::{fill_body, memref_of, subview_type, Rw, R};
use crate::runtime_checks::{what, Checks};
use ftuner_ir::{intern_name, Attribute, BlockId, Ir, OpId, OpSpec, DYNAMIC};

impl Rw<'_> {
    /// `tensor.pad` with a padding value that does not depend on the position: a new
    /// buffer filled with the value, the source copied into its interior.
    pub(super) fn pad(&mut self, op: OpId, b: BlockId) -> R<()> {
        let loc = self.ir.loc(op);
        let operands = self.ir.operands(op).to_vec();
        let src = self.v(op, operands[0])?;
        let st = self.ir.value_type(src);
        let rank = st.rank().unwrap_or(0);
        let res = self.ir.result(op, 0);
        let ty = memref_of(self.ir.value_type(res))
            .ok_or((op, "unranked tensors cannot be bufferized".into()))?;
        // The padding value: yielded from outside the body, or a constant inside it.
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
        let pad = match self.map.get(&y) {
            Some(v) => *v,
            None => {
                let c = self
                    .ir
                    .defining_op(y)
                    .filter(|c| {
                        self.ir.name(*c) == "arith.constant" && self.ir.operands(*c).is_empty()
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
        };
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
                let a1 = self.index_op(b, "arith.addi", vec![s0, l0], loc);
                dyn_sizes.push(self.index_op(b, "arith.addi", vec![a1, h0], loc));
            }
            lows.push(lo);
            src_sizes.push(ssz);
        }
        let out = self.alloc(b, ty, dyn_sizes, loc);
        let f = self.ir.create_op(
            OpSpec::new(intern_name("linalg.fill"), loc)
                .operands(vec![pad, out])
                .prop("operandSegmentSizes", Attribute::dense_i32_array(&[1, 1]))
                .regions(1),
        );
        self.ir.append_op(b, f);
        fill_body(self.ir, f, ty.element_type(), loc);
        // The interior: a subview at the low offsets with the source's sizes.
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
            "memref.subview",
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
        self.map.insert(res, out);
        Ok(())
    }
}
