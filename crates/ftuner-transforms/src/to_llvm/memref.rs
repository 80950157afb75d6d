//! `memref` to `llvm` (MLIR's `FinalizeMemRefToLLVM`): `alloc` through `aligned_alloc`
//! (sizes from run time checked), `dealloc` as `free`, element loads, stores and
//! prefetches, views (`cast`, `subview`, `collapse_shape`, `expand_shape`, `reshape`) as
//! new descriptors, `copy` as `llvm.memcpy` between identity layouts else a loop nest, and
//! globals (`memref.global` as `llvm.mlir.global`, `get_global`).

use super::descriptor::{is_identity_layout, layout_of, Desc};
use super::types::{array_type, conv, elem_bytes, llvm_ty, ptr, retype_dense};
use super::{unsupported, LlvmRewriter, R, RELEASE};
use crate::runtime_checks::CHECKED_DEALLOC;
use ftuner_dialects::ops;
use ftuner_ir::{
    intern_name, AttrKind, Attribute, Diagnostic, Ir, OpId, OpSpec, Type, Value, DYNAMIC,
};

impl LlvmRewriter<'_> {
    /// Convert a `memref` op.
    pub(super) fn memref(&mut self, op: OpId) -> R<()> {
        let name = self.ir.name(op);
        match name {
            ops::memref::AllocOp::NAME | ops::memref::AllocaOp::NAME => self.alloc(op, name),
            ops::memref::DeallocOp::NAME => {
                let d = self.desc(op, self.ir.operand(op, 0))?;
                let p = self.extract(d.v, &[0], ptr());
                if self.ir.attr(op, CHECKED_DEALLOC).is_some() {
                    // The input program's own dealloc: only a live block of ours.
                    let r = self
                        .call(RELEASE, "i32 (ptr)", vec![p], Some(Type::i32()))
                        .expect("a call with a result");
                    let zero = self.cst(Attribute::int(0, Type::i32()), Type::i32());
                    let ok = self.icmp(1, r, zero);
                    self.check(
                        ok,
                        "memref.dealloc of a buffer that is not live (deallocated before, or not allocated by the program)",
                    );
                } else {
                    self.call("free", "void (ptr)", vec![p], None);
                }
                Ok(())
            }
            ops::memref::DimOp::NAME => self.dim(op),
            ops::memref::PrefetchOp::NAME => self.prefetch(op),
            ops::memref::LoadOp::NAME | ops::memref::StoreOp::NAME => self.load_store(op, name),
            ops::memref::CastOp::NAME => {
                let d = self.desc(op, self.ir.operand(op, 0))?;
                self.bind(op, d.v);
                Ok(())
            }
            ops::memref::GetGlobalOp::NAME => self.get_global(op),
            ops::memref::SubviewOp::NAME => self.subview(op),
            ops::memref::CollapseShapeOp::NAME
            | ops::memref::ExpandShapeOp::NAME
            | ops::memref::ReshapeOp::NAME => self.reshape(op, name),
            ops::memref::CopyOp::NAME => self.copy(op),
            _ => Err(unsupported(op)),
        }
    }

    /// The dense `i64` array attribute `a` of `op` (empty when absent).
    fn i64s(&self, op: OpId, a: &str) -> Vec<i64> {
        self.ir
            .attr(op, a)
            .and_then(|x| x.as_dense_i64s())
            .unwrap_or_default()
    }

    /// Static values, each `DYNAMIC` one taken in order from `dynv` (`missing`: the error
    /// when there are too few).
    fn mixed(&mut self, op: OpId, stat: &[i64], dynv: &[Value], missing: &str) -> R<Vec<Value>> {
        let mut dyns = dynv.iter();
        let mut out = vec![];
        for s in stat {
            out.push(if *s == DYNAMIC {
                let v = *dyns.next().ok_or_else(|| (op, missing.to_string()))?;
                self.v(op, v)?
            } else {
                self.c64(*s)
            });
        }
        Ok(out)
    }

    /// `aligned_alloc(64, size rounded up to 64)` and a descriptor of identity layout.
    /// Sizes from run time are checked: none negative, the byte count representable, the
    /// allocation made (MLIR leaves all three undefined; here they are failed checks).
    fn alloc(&mut self, op: OpId, name: &str) -> R<()> {
        let err = |m: String| (op, m);
        let olds = self.ir.operands(op).to_vec();
        let ty = self.ir.value_type(self.ir.result(op, 0));
        if !is_identity_layout(ty) {
            return Err(err("allocations need an identity layout".into()));
        }
        let shape = ty.shape().unwrap_or(&[]).to_vec();
        let sizes = self.mixed(op, &shape, &olds, "missing dynamic size")?;
        let strides = self.row_major_strides(&sizes);
        let total = match sizes.first() {
            Some(s) => self.mul(strides[0], *s),
            None => self.c64(1),
        };
        let eb =
            elem_bytes(ty.element_type()).ok_or_else(|| err(format!("element type of {ty}")))?;
        let ebv = self.c64(eb);
        let bytes = self.mul(total, ebv);
        let checked = !olds.is_empty() || static_alloc_too_large(ty);
        if checked {
            let ok = self.size_ok(&sizes, eb);
            self.check(
                ok,
                &format!("'{name}' op a size is negative or the {ty} is too large"),
            );
        }
        // aligned_alloc needs a multiple of the alignment.
        let c63 = self.c64(63);
        let up = self.add(bytes, c63);
        let mask = self.c64(!63);
        let rounded = self.val(ops::llvm::AndOp::NAME, vec![up, mask], Type::i64());
        let align = self.c64(64);
        let p = self
            .call(
                "aligned_alloc",
                "ptr (i64, i64)",
                vec![align, rounded],
                Some(ptr()),
            )
            .ok_or_else(|| err("no pointer".into()))?;
        if checked {
            let null = self.val(ops::llvm::MlirZeroOp::NAME, vec![], ptr());
            let got = self.icmp(1, p, null);
            let zero = self.c64(0);
            let empty = self.icmp(0, rounded, zero);
            let ok = self.val(ops::llvm::OrOp::NAME, vec![got, empty], Type::i1());
            self.check(ok, &format!("'{name}' op out of memory allocating {ty}"));
        }
        let zero = self.c64(0);
        let d = self.pack(p, p, zero, &sizes, &strides);
        self.bind(op, d);
        Ok(())
    }

    fn dim(&mut self, op: OpId) -> R<()> {
        let olds = self.ir.operands(op).to_vec();
        let d = self.desc(op, olds[0])?;
        self.live_check(op, d.v);
        let i = self
            .ir
            .defining_op(olds[1])
            .filter(|c| self.ir.name(*c) == ops::arith::ConstantOp::NAME)
            .and_then(|c| self.ir.attr(c, "value"))
            .and_then(|a| a.as_i64())
            .ok_or_else(|| (op, "needs a constant dimension index".to_string()))?;
        let rank = d.ty.rank().unwrap_or(0);
        if i < 0 || i as usize >= rank {
            return Err((op, format!("dimension {i} out of range")));
        }
        let s = self.size(&d, i as usize);
        self.bind(op, s);
        Ok(())
    }

    /// The memref operand `m` of `op` and the address of the element its index operands
    /// from `first` on select.
    fn element(&mut self, op: OpId, m: usize, first: usize) -> R<(Desc, Value)> {
        let olds = self.ir.operands(op).to_vec();
        let d = self.desc(op, olds[m])?;
        self.live_check(op, d.v);
        let idx = olds[first..]
            .iter()
            .map(|v| self.v(op, *v))
            .collect::<R<Vec<_>>>()?;
        let p = self.elem_ptr(&d, &idx);
        Ok((d, p))
    }

    fn prefetch(&mut self, op: OpId) -> R<()> {
        let (_, p) = self.element(op, 0, 1)?;
        let flag = |k: &str| {
            matches!(
                self.ir.attr(op, k).map(|a| a.kind().clone()),
                Some(AttrKind::Bool(true))
            )
        };
        let hint = self.ir.attr(op, "localityHint").and_then(|a| a.as_i64());
        let i32a = |v: i64| Attribute::int(v as i128, Type::i32());
        let props = vec![
            ("rw", i32a(flag("isWrite") as i64)),
            ("hint", i32a(hint.unwrap_or(3))),
            ("cache", i32a(flag("isDataCache") as i64)),
        ];
        self.emit(
            ops::llvm::IntrPrefetchOp::NAME,
            vec![p],
            vec![],
            props,
            vec![],
        );
        Ok(())
    }

    fn load_store(&mut self, op: OpId, name: &str) -> R<()> {
        let load = name == ops::memref::LoadOp::NAME;
        let (d, p) = if load {
            self.element(op, 0, 1)?
        } else {
            self.element(op, 1, 2)?
        };
        let et = d.ty.element_type();
        let eb = elem_bytes(et).unwrap_or(1);
        if load {
            let ty = conv(et).ok_or_else(|| (op, format!("element type {et}")))?;
            let r = self.load(p, ty, eb);
            self.bind(op, r);
        } else {
            let v = self.v(op, self.ir.operand(op, 0))?;
            self.store(v, p, eb);
        }
        Ok(())
    }

    fn get_global(&mut self, op: OpId) -> R<()> {
        let ty = self.ir.value_type(self.ir.result(op, 0));
        let g = self.symbol(op, "name")?;
        let p = self.address_of(&g);
        // As MLIR does: a recognisable bad pointer as the allocated pointer, so a free of a
        // global fails loudly.
        let bad = self.c64(0xdead_beef);
        let ap = self.val(ops::llvm::InttoptrOp::NAME, vec![bad], ptr());
        let shape = ty.shape().unwrap_or(&[]).to_vec();
        let (st, _) = layout_of(ty).ok_or_else(|| (op, "layout".to_string()))?;
        let sizes: Vec<Value> = shape.iter().map(|s| self.c64(*s)).collect();
        let strides: Vec<Value> = st.iter().map(|s| self.c64(*s)).collect();
        let zero = self.c64(0);
        let d = self.pack(ap, p, zero, &sizes, &strides);
        self.bind(op, d);
        Ok(())
    }

    /// A view's descriptor: the source's pointers, the offset moved to the view's first
    /// element, the strides scaled by the view's steps, the unit dimensions a rank-reduced
    /// result drops left out.
    fn subview(&mut self, op: OpId) -> R<()> {
        let err = |m: &str| (op, m.to_string());
        let olds = self.ir.operands(op).to_vec();
        let d = self.desc(op, olds[0])?;
        let rank = d.ty.rank().unwrap_or(0);
        let segs = self.i64s(op, "operandSegmentSizes");
        let (no, ns) = (
            segs.get(1).copied().unwrap_or(0) as usize,
            segs.get(2).copied().unwrap_or(0) as usize,
        );
        if olds.len() < 1 + no + ns {
            return Err(err("operand segments do not match"));
        }
        let missing = "missing operand";
        let stat_sizes = self.i64s(op, "static_sizes");
        let offs = self.mixed(
            op,
            &self.i64s(op, "static_offsets"),
            &olds[1..1 + no],
            missing,
        )?;
        let sizes = self.mixed(op, &stat_sizes, &olds[1 + no..1 + no + ns], missing)?;
        let steps = self.mixed(
            op,
            &self.i64s(op, "static_strides"),
            &olds[1 + no + ns..],
            missing,
        )?;
        if offs.len() != rank || sizes.len() != rank || steps.len() != rank {
            return Err(err("offsets, sizes and strides must match the rank"));
        }
        let mut off = self.offset(&d);
        let mut dims = vec![];
        for i in 0..rank {
            let s = self.stride(&d, i);
            let t = self.mul(offs[i], s);
            off = self.add(off, t);
            let st = self.mul(s, steps[i]);
            dims.push((sizes[i], st, stat_sizes.get(i).copied()));
        }
        let rty = self.ir.value_type(self.ir.result(op, 0));
        let want = rty.shape().unwrap_or(&[]).to_vec();
        if want.len() < dims.len() {
            let sz: Vec<i64> = dims.iter().map(|x| x.2.unwrap_or(DYNAMIC)).collect();
            let keep = ftuner_ir::rank_reduction_keep(&sz, &want)
                .ok_or_else(|| err("cannot match the rank-reduced result"))?;
            dims = dims
                .into_iter()
                .zip(keep)
                .filter_map(|(d, k)| k.then_some(d))
                .collect();
        }
        if dims.len() != want.len() {
            return Err(err("cannot match the rank-reduced result"));
        }
        let a = self.extract(d.v, &[0], ptr());
        let al = self.extract(d.v, &[1], ptr());
        let sz: Vec<Value> = dims.iter().map(|x| x.0).collect();
        let st: Vec<Value> = dims.iter().map(|x| x.1).collect();
        let nd = self.pack(a, al, off, &sz, &st);
        self.bind(op, nd);
        Ok(())
    }

    /// `collapse_shape`, `expand_shape` and `reshape`: the source's pointers and offset,
    /// new sizes and strides.
    fn reshape(&mut self, op: OpId, name: &str) -> R<()> {
        let d = self.desc(op, self.ir.operand(op, 0))?;
        let groups = ftuner_dialects::memref::reassociation(self.ir, op);
        let (sizes, strides) = match name {
            ops::memref::CollapseShapeOp::NAME => self.collapsed(op, &d, &groups)?,
            ops::memref::ExpandShapeOp::NAME => self.expanded(op, &d, &groups)?,
            _ => self.reshaped(op)?,
        };
        let a = self.extract(d.v, &[0], ptr());
        let al = self.extract(d.v, &[1], ptr());
        let off = self.offset(&d);
        let nd = self.pack(a, al, off, &sizes, &strides);
        self.bind(op, nd);
        Ok(())
    }

    /// Each group of dimensions becomes one: the product of its sizes, its last stride.
    fn collapsed(
        &mut self,
        op: OpId,
        d: &Desc,
        groups: &[Vec<usize>],
    ) -> R<(Vec<Value>, Vec<Value>)> {
        let rank = d.ty.rank().unwrap_or(0);
        let mut sz = vec![];
        let mut st = vec![];
        for g in groups {
            let last = *g.last().ok_or((op, "empty group".to_string()))?;
            if last >= rank {
                return Err((op, "reassociation exceeds the rank".into()));
            }
            let mut p = self.c64(1);
            for i in g {
                let s = self.size(d, *i);
                p = self.mul(p, s);
            }
            sz.push(p);
            st.push(self.stride(d, last));
        }
        Ok((sz, st))
    }

    /// Each dimension becomes a group: the sizes of `static_output_shape` (and operands),
    /// strides row-major within the group from the source's stride.
    fn expanded(
        &mut self,
        op: OpId,
        d: &Desc,
        groups: &[Vec<usize>],
    ) -> R<(Vec<Value>, Vec<Value>)> {
        let rank = d.ty.rank().unwrap_or(0);
        let stat = self.i64s(op, "static_output_shape");
        let olds = self.ir.operands(op).to_vec();
        let sz = self.mixed(op, &stat, olds.get(1..).unwrap_or(&[]), "missing size")?;
        let mut st = vec![self.c64(0); sz.len()];
        for (src, g) in groups.iter().enumerate() {
            if src >= rank || g.iter().any(|x| *x >= sz.len()) {
                return Err((op, "reassociation does not match".into()));
            }
            let mut s = self.stride(d, src);
            for x in g.iter().rev() {
                st[*x] = s;
                s = self.mul(s, sz[*x]);
            }
        }
        Ok((sz, st))
    }

    /// `memref.reshape`: the sizes loaded from the shape operand, strides row-major.
    fn reshaped(&mut self, op: OpId) -> R<(Vec<Value>, Vec<Value>)> {
        let sd = self.desc(op, self.ir.operand(op, 1))?;
        let n = self
            .ir
            .value_type(self.ir.result(op, 0))
            .rank()
            .unwrap_or(0);
        let et = sd.ty.element_type();
        let mut sz = vec![];
        for i in 0..n {
            let iv = self.c64(i as i64);
            let p = self.elem_ptr(&sd, &[iv]);
            let x = self.load(
                p,
                conv(et).unwrap_or(Type::i64()),
                elem_bytes(et).unwrap_or(8),
            );
            let x = match et.int_width() {
                Some(w) if w < 64 => self.val(ops::llvm::SextOp::NAME, vec![x], Type::i64()),
                _ => x,
            };
            sz.push(x);
        }
        let st = self.row_major_strides(&sz);
        Ok((sz, st))
    }

    /// `llvm.memcpy` of the whole buffer between identity layouts, else a loop nest of
    /// element loads and stores.
    fn copy(&mut self, op: OpId) -> R<()> {
        let (s, t) = (
            self.desc(op, self.ir.operand(op, 0))?,
            self.desc(op, self.ir.operand(op, 1))?,
        );
        self.live_check(op, s.v);
        self.live_check(op, t.v);
        let rank = s.ty.rank().unwrap_or(0);
        // Shapes known only at run time must agree before anything is copied (upstream:
        // undefined; a slice's source larger than the slice wrote past the buffer).
        let mut same = None;
        for i in dynamic_copy_dims(s.ty, t.ty) {
            let (a, b) = (self.size(&s, i), self.size(&t, i));
            let eq = self.icmp(0, a, b);
            same = Some(match same {
                Some(c) => self.val(ops::llvm::AndOp::NAME, vec![c, eq], Type::i1()),
                None => eq,
            });
        }
        if let Some(ok) = same {
            self.check(ok, "memref.copy between buffers of different shapes");
        }
        if is_identity_layout(s.ty) && is_identity_layout(t.ty) {
            let mut n = self.c64(1);
            for i in 0..rank {
                let x = self.size(&s, i);
                n = self.mul(n, x);
            }
            let eb = self.c64(elem_bytes(s.ty.element_type()).unwrap_or(1));
            let bytes = self.mul(n, eb);
            let dp = self.extract(t.v, &[1], ptr());
            let sp = self.extract(s.v, &[1], ptr());
            self.emit(
                ops::llvm::IntrMemcpyOp::NAME,
                vec![dp, sp, bytes],
                vec![],
                vec![("isVolatile", Attribute::bool(false))],
                vec![],
            );
            return Ok(());
        }
        let ext: Vec<Value> = (0..rank).map(|i| self.size(&s, i)).collect();
        let et = s.ty.element_type();
        let ty = conv(et).ok_or_else(|| (op, format!("element type {et}")))?;
        let eb = elem_bytes(et).unwrap_or(1);
        let mut body = |cv: &mut Self, ivs: &[Value]| -> R<()> {
            let p = cv.elem_ptr(&s, ivs);
            let x = cv.load(p, ty, eb);
            let q = cv.elem_ptr(&t, ivs);
            cv.store(x, q, eb);
            Ok(())
        };
        self.loop_nest(&ext, &mut body, &mut vec![])
    }
}

/// Whether a static allocation of `ty` asks for more than 2^62 bytes (or a size no
/// 64-bit count holds): it is converted with the run-time check of dynamic ones, which
/// then always fails (before: the byte count wrapped and the buffer was too small).
pub(super) fn static_alloc_too_large(ty: Type) -> bool {
    let Some(shape) = ty.shape() else {
        return false;
    };
    let eb = elem_bytes(ty.element_type()).unwrap_or(1);
    shape
        .iter()
        .filter(|d| **d != DYNAMIC)
        .try_fold(eb, |acc, d| acc.checked_mul((*d).max(1)))
        .is_none_or(|b| b > 1 << 62)
}

/// The dims of a `memref.copy` from `s` to `t` whose sizes are not both static: checked
/// to agree at run time.
pub(super) fn dynamic_copy_dims(s: Type, t: Type) -> Vec<usize> {
    match (s.shape(), t.shape()) {
        (Some(a), Some(b)) if a.len() == b.len() => (0..a.len())
            .filter(|i| a[*i] == DYNAMIC || b[*i] == DYNAMIC)
            .collect(),
        _ => vec![],
    }
}

fn dict_get(a: Attribute, k: &str) -> Option<Attribute> {
    match a.kind() {
        AttrKind::Dictionary(e) => e.iter().find(|(n, _)| n == k).map(|(_, v)| *v),
        _ => None,
    }
}

/// Replace a `memref.global` with an `llvm.mlir.global` of its array type.
pub(super) fn convert_global(ir: &mut Ir, op: OpId) -> Result<(), Diagnostic> {
    let loc = ir.loc(op);
    let props = ir.op(op).props;
    let ty = dict_get(props, "type").and_then(|a| a.as_type());
    let name = ir.symbol_name(op).map(str::to_string);
    let (Some(ty), Some(name)) = (ty, name) else {
        return Err(Diagnostic::error(
            loc,
            "'memref.global' op needs a name and a type",
        ));
    };
    let mut s = OpSpec::new(intern_name(ops::llvm::MlirGlobalOp::NAME), loc)
        .prop("sym_name", Attribute::string(name))
        .prop(
            "global_type",
            Attribute::type_attr(llvm_ty(&array_type(
                ty.shape().unwrap_or(&[]),
                ty.element_type(),
            ))),
        )
        .prop("linkage", Attribute::dialect("llvm", "linkage<private>"))
        .regions(1);
    if dict_get(props, "constant").is_some() {
        s = s.prop("constant", Attribute::unit());
    }
    if let Some(v) = dict_get(props, "initial_value") {
        s = s.prop("value", retype_dense(v));
    }
    if let Some(a) = dict_get(props, "alignment") {
        s = s.prop("alignment", a);
    }
    ftuner_ir::OpBuilder::before(ir, op).insert(s);
    ir.erase_op(op);
    Ok(())
}
