//! `rt.parallel_for @body(%n) args(...)` (what `convert-parallel-loops-to-runtime` makes
//! of a loop marked `ftuner.parallel`) as a call of the runtime's thread pool:
//! `ftuner_rt_parallel_for(@body_pool, ctx, n)` (`ftuner_rt_parallel_for_nested` when the op
//! is `nested`). The arguments travel in a struct on the stack that `ctx` points to (a
//! buffer as its descriptor), and `void body_pool(ptr ctx, i64 lo, i64 hi)`, made once per
//! callee, takes them out and calls `@body(lo, hi, args...)` with MLIR's calling convention
//! (a buffer as its 3 + 2R descriptor fields, `noalias` pointers where the body declares
//! the buffer `llvm.noalias`). The body is private and called once, so LLVM inlines it
//! into its pool entry, the `noalias` arguments becoming scoped alias metadata. After a
//! body that may fail a run-time check, the failure is propagated.

use super::func::new_func;
use super::types::{ptr, struct_of};
use super::{LlvmRewriter, PARALLEL_FOR, PARALLEL_FOR_NESTED, R};
use ftuner_dialects::ops;
use ftuner_ir::{Attribute, Ir, OpId, Type, Value};
use rustc_hash::{FxHashMap, FxHashSet};

/// The pool entries of a symbol table: the one made for each callee, and every name the
/// table holds (an entry takes the first of `<callee>_pool`, `<callee>_pool1`, ... that
/// no function of the input has).
#[derive(Default)]
pub(super) struct Pools {
    made: FxHashMap<String, String>,
    taken: FxHashSet<String>,
}

impl Pools {
    /// For the symbol table whose body is `body`.
    pub(super) fn new(ir: &Ir, body: ftuner_ir::BlockId) -> Pools {
        let taken = ir
            .block_ops(body)
            .filter_map(|o| ir.symbol_name(o).map(str::to_string))
            .collect();
        Pools {
            made: FxHashMap::default(),
            taken,
        }
    }
}

impl LlvmRewriter<'_> {
    /// Convert `rt.parallel_for` `op`; see the module's doc.
    pub(super) fn parallel_for(&mut self, op: OpId) -> R<()> {
        let callee = self.symbol(op, "callee")?;
        let olds = self.ir.operands(op).to_vec();
        let n = self.v(op, olds[0])?;
        let fields = self.converted_operands(op)?.split_off(1);
        let tys: Vec<Type> = fields.iter().map(|f| self.ir.value_type(*f)).collect();
        let sty = struct_of(&tys);
        let ranks: Vec<Option<usize>> = olds[1..]
            .iter()
            .map(|v| {
                let t = self.ir.value_type(*v);
                t.is_memref().then(|| t.rank().unwrap_or(0))
            })
            .collect();
        let pool = self.pool_entry(&callee, &tys, &ranks, sty);
        let ctx = self.context(&fields, sty);
        let fp = self.address_of(&pool);
        let entry = if self.ir.attr(op, "nested").is_some() {
            PARALLEL_FOR_NESTED
        } else {
            PARALLEL_FOR
        };
        self.call(entry, "void (ptr, ptr, i64)", vec![fp, ctx, n], None);
        if self.may_fail.contains(&callee) {
            self.propagate_failure();
        }
        Ok(())
    }

    /// `<callee>_pool` (or the first free `<callee>_pool<k>`), what the pool calls for
    /// `callee`, made the first time: the fields of
    /// the context struct `sty` (of types `tys`; a buffer of rank R where `ranks` says),
    /// then the call of `callee` over `lo .. hi` with them.
    fn pool_entry(
        &mut self,
        callee: &str,
        tys: &[Type],
        ranks: &[Option<usize>],
        sty: Type,
    ) -> String {
        if let Some(name) = self.pools.made.get(callee) {
            return name.clone();
        }
        let mut name = format!("{callee}_pool");
        let mut k = 0;
        while !self.pools.taken.insert(name.clone()) {
            k += 1;
            name = format!("{callee}_pool{k}");
        }
        self.pools.made.insert(callee.to_string(), name.clone());
        let wf = new_func(self.ir, &name, "void (ptr, i64, i64)", self.loc, true);
        self.outlined.push(wf);
        let region = self.ir.regions_of(wf)[0];
        let entry = self
            .ir
            .append_block(region, &[ptr(), Type::i64(), Type::i64()]);
        let params = self.ir.block_args(entry).to_vec();
        let mut w = self.inner(entry, region);
        let mut args = params[1..].to_vec();
        if !tys.is_empty() {
            let st = w.load(params[0], sty, 8);
            for (i, (t, rank)) in tys.iter().zip(ranks).enumerate() {
                let f = w.extract(st, &[i as i64], *t);
                match rank {
                    Some(r) => args.extend(w.unpack(f, *r)),
                    None => args.push(f),
                }
            }
        }
        w.call_sym(callee, args, None);
        w.llvm_return(vec![]);
        name
    }

    /// The context struct on the stack (a null pointer when nothing is captured).
    fn context(&mut self, fields: &[Value], sty: Type) -> Value {
        if fields.is_empty() {
            return self.val(ops::llvm::MlirZeroOp::NAME, vec![], ptr());
        }
        let mut agg = self.val(ops::llvm::MlirUndefOp::NAME, vec![], sty);
        for (i, c) in fields.iter().enumerate() {
            agg = self.insert(agg, *c, &[i as i64]);
        }
        let one = self.c64(1);
        let p = self.valp(
            ops::llvm::AllocaOp::NAME,
            vec![one],
            ptr(),
            vec![
                ("elem_type", Attribute::type_attr(sty)),
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
}
