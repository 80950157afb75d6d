//! Thread-pool outlining: an `scf.for` marked `ftuner.parallel` (no results) becomes
//! `void NAME_parK(ptr ctx, i64 lo, i64 hi)` running iterations `lo .. hi`, the values it
//! uses from outside stored in a struct on the stack that `ctx` points to, and the loop
//! becomes `ftuner_rt_parallel_for(@NAME_parK, ctx, trip count)`. Constants are made again
//! inside rather than stored. Buffers that nothing else the body reaches can touch
//! ([`crate::aliasing::noalias_fields`]) come in as `noalias` pointers of a second
//! function, which the pool's entry calls. A marked loop of a dynamic trip count holding
//! marked loops (a batch over GEMM tile loops) calls `ftuner_rt_parallel_for_nested`, and
//! its body outlines those loops in turn (one level): the runtime picks the level.

use super::checks::fails_inside;
use super::func::new_func;
use super::types::{ptr, struct_of};
use super::{Cv, PARALLEL_FOR, PARALLEL_FOR_NESTED, R};
use crate::aliasing;
use ftuner_dialects::ops;
use ftuner_ir::{Attribute, BlockId, Ir, OpId, Type, Value};
use rustc_hash::{FxHashMap, FxHashSet};

/// Where an outlined body gets a value from outside the loop.
enum Source {
    /// Field of the context struct.
    Field(usize),
    /// An index constant the conversion folds with, made again.
    Index(i64),
    /// Another `llvm.mlir.constant`, made again.
    Const(Attribute, Type),
}

/// What an outlined body takes from outside the loop.
struct Captures {
    /// Values used inside, defined outside: the old value and its conversion.
    live: Vec<(Value, Value)>,
    /// The conversions stored in the context struct, in field order, their types and the
    /// struct's type.
    captured: Vec<Value>,
    tys: Vec<Type>,
    sty: Type,
    /// Where the body gets each conversion in `live`, the lower bound and the step.
    sources: FxHashMap<Value, Source>,
}

/// How many of the outlined functions the pool calls (a loop taking `noalias` buffers is
/// a second function, called by its wrapper).
pub(super) fn pool_bodies(ir: &Ir, outlined: &[OpId]) -> usize {
    outlined
        .iter()
        .filter(|f| ir.prop(**f, "arg_attrs").is_none())
        .count()
}

impl Cv<'_> {
    /// Outline the parallel loop `op`; see the module's doc.
    pub(super) fn outline_parallel(&mut self, op: OpId) -> R<()> {
        let olds = self.ir.operands(op).to_vec();
        if olds.len() != 3 {
            return Err((op, "a parallel loop carries no values".into()));
        }
        let (lb, ub, step) = (
            self.v(op, olds[0])?,
            self.v(op, olds[1])?,
            self.v(op, olds[2])?,
        );
        self.step_check(step);
        let ob = self.body(op)?;
        let caps = self.captures(op, lb, step)?;
        let nested = self.nested_loop(op);
        // In the enclosing function LLVM knew a fresh allocation aliases nothing, and
        // through the context struct it would not (every store to an output could change
        // any input: the body re-loads and vectorises less).
        let safe = aliasing::noalias_fields(self.ir, &caps.live, &caps.captured);
        let name = format!("{}_par{}", self.fname, pool_bodies(self.ir, self.outlined));
        let loop_name = if safe.is_empty() {
            name.clone()
        } else {
            format!("{name}_noalias")
        };
        let nf = self.loop_func(&loop_name, &safe);
        // The wrapper first: named, it counts before the loops the body outlines.
        if !safe.is_empty() {
            self.pool_wrapper(&name, &loop_name, caps.sty, &safe);
        }
        self.outlined_body(op, ob, nf, &caps, &safe, (lb, step))?;
        // At the loop: the context, the trip count, the call.
        self.loc = self.ir.loc(op);
        let ctx = self.context(&caps);
        let fp = self.address_of(&name);
        let n = self.trip_count(lb, ub, step);
        let entry = if nested {
            PARALLEL_FOR_NESTED
        } else {
            PARALLEL_FOR
        };
        self.call(entry, "void (ptr, ptr, i64)", vec![fp, ctx, n], None);
        if fails_inside(self.ir, op, self.may_fail) {
            self.propagate_failure();
        }
        Ok(())
    }

    /// Whether parallel loop `op` is outlined with [`PARALLEL_FOR_NESTED`], its body's marked
    /// loops outlined in turn.
    fn nested_loop(&self, op: OpId) -> bool {
        // A loop of a dynamic trip count holding marked loops (a batch of GEMMs and their
        // tile loops): its body outlines them too, and the runtime decides which level goes
        // to the pool. A static count keeps the marked loops inside as plain loops (LLVM
        // then optimizes the body as one function: MobileNetV2's depthwise planes, whose
        // channel loop holds the planes' marked loops, were 6% slower outlined).
        self.may_nest(op) && self.holds_parallel_loop(op)
    }

    /// Whether the body of parallel loop `op` outlines its own marked loops: a loop of a
    /// dynamic trip count in a function's body ([`Cv::nested_loop`] when it holds any).
    fn may_nest(&self, op: OpId) -> bool {
        self.nested && ftuner_dialects::scf::for_trip_count(self.ctx, self.ir, op).is_none()
    }

    /// Whether a loop the conversion would outline ([`Cv::parallel_loop`]) is nested in
    /// loop `op`.
    fn holds_parallel_loop(&self, op: OpId) -> bool {
        let mut found = false;
        self.ir.walk_pre(op, &mut |o| {
            found |= o != op && self.ir.name(o) == ops::scf::ForOp::NAME && self.parallel_loop(o);
        });
        found
    }

    /// The values loop `op` uses from outside, and where its outlined body gets them
    /// (`lb` and `step` travel too: the body computes iv = lb + i * step).
    fn captures(&self, op: OpId, lb: Value, step: Value) -> R<Captures> {
        let mut live: Vec<(Value, Value)> = vec![];
        let mut seen = FxHashSet::default();
        let mut inner = vec![];
        self.ir.walk_pre(op, &mut |o| inner.push(o));
        for o in inner.into_iter().skip(1) {
            for x in self.ir.operands(o).to_vec() {
                if !self.ir.defined_inside(x, op) && seen.insert(x) {
                    live.push((x, self.v(o, x)?));
                }
            }
        }
        // Constants are made again inside; everything else is a field of the context.
        let mut captured: Vec<Value> = vec![];
        let mut sources: FxHashMap<Value, Source> = FxHashMap::default();
        for c in live.iter().map(|(_, c)| *c).chain([lb, step]) {
            if sources.contains_key(&c) {
                continue;
            }
            let src = match (self.known(c), self.constant_attr(c)) {
                (Some(k), _) => Source::Index(k),
                (None, Some(a)) => Source::Const(a, self.ir.value_type(c)),
                (None, None) => {
                    captured.push(c);
                    Source::Field(captured.len() - 1)
                }
            };
            sources.insert(c, src);
        }
        let tys: Vec<Type> = captured.iter().map(|c| self.ir.value_type(*c)).collect();
        let sty = struct_of(&tys);
        Ok(Captures {
            live,
            captured,
            tys,
            sty,
            sources,
        })
    }

    /// The function running the loop's iterations `lo .. hi`:
    /// `void (ptr ctx, i64 lo, i64 hi, ptr noalias...)`, one pointer per field in `safe`.
    fn loop_func(&mut self, loop_name: &str, safe: &[usize]) -> OpId {
        let mut fty = String::from("void (ptr, i64, i64");
        for _ in safe {
            fty.push_str(", ptr");
        }
        fty.push(')');
        let nf = new_func(self.ir, loop_name, &fty, self.loc, true);
        if !safe.is_empty() {
            let mut attrs = vec![Attribute::dictionary(vec![]); 3];
            attrs.extend(safe.iter().map(|_| {
                Attribute::dictionary(vec![("llvm.noalias".to_string(), Attribute::unit())])
            }));
            self.ir
                .set_prop(nf, "arg_attrs", Some(Attribute::array(attrs)));
        }
        self.outlined.push(nf);
        nf
    }

    /// The body of `nf`: the captured values taken from the context (the noalias
    /// buffers' descriptors addressing through the parameters), then a loop over
    /// `lo .. hi` running `op`'s body `ob` at iv = lb + i * step.
    fn outlined_body(
        &mut self,
        op: OpId,
        ob: BlockId,
        nf: OpId,
        caps: &Captures,
        safe: &[usize],
        (lb, step): (Value, Value),
    ) -> R<()> {
        let region = self.ir.regions_of(nf)[0];
        let mut params = vec![ptr(), Type::i64(), Type::i64()];
        params.extend(safe.iter().map(|_| ptr()));
        let entry = self.ir.append_block(region, &params);
        let fargs = self.ir.block_args(entry).to_vec();
        // (A body holding no marked loop outlines nothing either way: no second walk.)
        let nests = self.may_nest(op);
        let mut cv = self.inner(entry, region);
        cv.outline = nests;
        let inside = cv.unpack_context(caps, safe, fargs[0], &fargs[3..], [lb, step]);
        let (lb_in, step_in) = (inside[&lb], inside[&step]);
        let header = cv.block(&[Type::i64()]);
        let body = cv.block(&[]);
        let exit = cv.block(&[]);
        cv.br(header, vec![fargs[1]]);
        cv.cur = header;
        let i = cv.ir.block_args(header)[0];
        let c = cv.icmp(2, i, fargs[2]);
        cv.cond_br(c, body, vec![], exit, vec![]);
        cv.cur = body;
        let off = cv.mul(i, step_in);
        let iv = cv.add(lb_in, off);
        let old_iv = cv.ir.block_args(ob)[0];
        cv.map.insert(old_iv, iv);
        cv.ops(ob)?;
        cv.loc = cv.ir.loc(op);
        let one = cv.c64(1);
        let next = cv.val(ops::llvm::AddOp::NAME, vec![i, one], Type::i64());
        cv.br(header, vec![next]);
        cv.cur = exit;
        cv.llvm_return(vec![]);
        Ok(())
    }

    /// In an outlined body: the captured values from the context struct `ctx` (the
    /// aligned pointers of the fields in `safe` replaced by `noalias` parameters), the
    /// constants made again; maps the live values to them and returns the value inside
    /// of each conversion (`extra` too).
    fn unpack_context(
        &mut self,
        caps: &Captures,
        safe: &[usize],
        ctx: Value,
        noalias: &[Value],
        extra: [Value; 2],
    ) -> FxHashMap<Value, Value> {
        let mut fields: Vec<Value> = if caps.captured.is_empty() {
            vec![]
        } else {
            let st = self.load(ctx, caps.sty, 8);
            caps.tys
                .iter()
                .enumerate()
                .map(|(i, t)| self.extract(st, &[i as i64], *t))
                .collect()
        };
        for (j, i) in safe.iter().enumerate() {
            fields[*i] = self.insert(fields[*i], noalias[j], &[1]);
        }
        // In the order of first use (the output does not depend on hashing).
        let mut inside: FxHashMap<Value, Value> = FxHashMap::default();
        for c in caps.live.iter().map(|(_, c)| *c).chain(extra) {
            if inside.contains_key(&c) {
                continue;
            }
            let v = match &caps.sources[&c] {
                Source::Field(i) => fields[*i],
                Source::Index(k) => self.c64(*k),
                Source::Const(a, t) => self.cst(*a, *t),
            };
            inside.insert(c, v);
        }
        for (old, c) in &caps.live {
            self.map.insert(*old, inside[c]);
        }
        inside
    }

    /// `name`, the function the pool calls when the loop takes noalias buffers: their
    /// aligned pointers from the context, then a call of `loop_name`.
    fn pool_wrapper(&mut self, name: &str, loop_name: &str, sty: Type, safe: &[usize]) {
        let wf = new_func(self.ir, name, "void (ptr, i64, i64)", self.loc, true);
        self.outlined.push(wf);
        let region = self.ir.regions_of(wf)[0];
        let entry = self
            .ir
            .append_block(region, &[ptr(), Type::i64(), Type::i64()]);
        let mut args = self.ir.block_args(entry).to_vec();
        let mut w = self.inner(entry, region);
        let st = w.load(args[0], sty, 8);
        for i in safe {
            args.push(w.extract(st, &[*i as i64, 1], ptr()));
        }
        w.call_sym(loop_name, args, None);
        w.llvm_return(vec![]);
    }

    /// The context struct on the stack (a null pointer when nothing is captured).
    fn context(&mut self, caps: &Captures) -> Value {
        if caps.captured.is_empty() {
            return self.val(ops::llvm::MlirZeroOp::NAME, vec![], ptr());
        }
        let mut agg = self.val(ops::llvm::MlirUndefOp::NAME, vec![], caps.sty);
        for (i, c) in caps.captured.iter().enumerate() {
            agg = self.insert(agg, *c, &[i as i64]);
        }
        let one = self.c64(1);
        let p = self.valp(
            ops::llvm::AllocaOp::NAME,
            vec![one],
            ptr(),
            vec![
                ("elem_type", Attribute::type_attr(caps.sty)),
                ("alignment", Attribute::i64(8)),
            ],
        );
        self.hoist_to_entry(&[one, p]);
        self.store(agg, p, 8);
        p
    }

    /// Moves the ops defining `vals` (in order, operands first) to the start of the entry
    /// block of the function being built. An `alloca` there takes its stack slot once per
    /// call; where the call of a parallel loop sits in a loop (an image loop in a nested
    /// loop's body, a serial loop around a marked one), an `alloca` in place would take a
    /// new slot at every iteration, and nothing frees them before the function returns.
    fn hoist_to_entry(&mut self, vals: &[Value]) {
        let Some(entry) = self.ir.region_entry(self.region) else {
            return;
        };
        let ops: Vec<OpId> = vals
            .iter()
            .filter_map(|v| self.ir.defining_op(*v))
            .collect();
        for o in &ops {
            self.ir.unlink(*o);
        }
        match self.ir.block_ops(entry).next() {
            Some(first) => {
                for o in ops {
                    self.ir.insert_before(first, o);
                }
            }
            None => {
                for o in ops {
                    self.ir.append_op(entry, o);
                }
            }
        }
    }

    /// n = ub > lb ? (ub - lb + step - 1) / step : 0 (a positive step, as scf.for's).
    fn trip_count(&mut self, lb: Value, ub: Value, step: Value) -> Value {
        let span = self.val(ops::llvm::SubOp::NAME, vec![ub, lb], Type::i64());
        let one = self.c64(1);
        let sm1 = self.val(ops::llvm::SubOp::NAME, vec![step, one], Type::i64());
        let num = self.val(ops::llvm::AddOp::NAME, vec![span, sm1], Type::i64());
        let q = self.val(ops::llvm::SdivOp::NAME, vec![num, step], Type::i64());
        let pos = self.icmp(4, ub, lb);
        let zero = self.c64(0);
        self.val(ops::llvm::SelectOp::NAME, vec![pos, q, zero], Type::i64())
    }
}
