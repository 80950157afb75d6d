//! `convert-to-llvm`: buffer-level IR (`func`, `arith`, `math`, `scf`, `cf.assert`,
//! `memref`, 1-d `vector`) becomes the `llvm` dialect, which `mlir-translate
//! --mlir-to-llvmir` (and ftuner-codegen) turn into LLVM IR.
//!
//! * Types: `index` is `i64`; a ranked memref is MLIR's descriptor
//!   `!llvm.struct<(ptr, ptr, i64, array<R x i64>, array<R x i64>)>` (allocated pointer,
//!   aligned pointer, offset, sizes, strides); vectors stay vectors.
//! * Functions use MLIR's calling convention: each memref argument is passed as its 3 + 2R
//!   descriptor fields; several results are returned as a struct. Every public function
//!   also gets `_mlir_ciface_NAME`, taking descriptors by pointer (a result by pointer
//!   first), so C and our runtime call it the way they call MLIR's.
//! * `scf.for`/`if`/`index_switch` become blocks and branches; `cf.assert` branches to a
//!   block that writes the message to stderr (`write(2, ...)`) and calls `abort`.
//! * `memref.alloc` is `aligned_alloc(64, size rounded up to 64)`, `dealloc` is `free`;
//!   loads and stores address `aligned + offset + sum(index * stride)` with strides taken
//!   from the type when static; `subview`/`collapse_shape`/`expand_shape`/`reshape` build
//!   new descriptors; `copy` is `llvm.memcpy` between identity layouts, else a loop nest;
//!   constant globals become `llvm.mlir.global`s.
//! * `vector.transfer_read/write` (in bounds) are one vector load/store when the minor
//!   dimension is contiguous, a gather/scatter when it is strided (4 lanes or more), else
//!   one scalar access per lane; `vector.fma` is `llvm.intr.fma`; `vector.broadcast` is
//!   insertelement + shufflevector.
//!
//! This file is the pass and the conversion loop (a symbol table's functions and globals,
//! each op converted by the [`ConvertToLlvm`] pattern its definition holds in the Context:
//! [`register_conversions`] attaches ours, per dialect pair); the conversions are the
//! submodules of `to_llvm/`,
//! as MLIR's conversion libraries: `types` (the type converter), `descriptor` (the memref
//! descriptor ABI), `builder` (building `llvm` ops), `arith`, `math`, `vector`, `gpu`,
//! `memref`, `scf_to_cf`, `parallel` (`rt.parallel_for` as the thread pool's call), `func` (the calling
//! convention, functions and calls), `ciface` (C interfaces) and `checks` (run-time checks
//! and failure propagation).

use ftuner_dialects::ops;
mod arith;
mod builder;
mod checks;
mod ciface;
mod descriptor;
mod func;
mod gpu;
mod math;
mod memref;
mod parallel;
mod scf_to_cf;
mod types;
mod vector;

use checks::{failing_functions, message_global, recursive_call};
use ftuner_ir::{Attribute, BlockId, Diagnostic, Ir, OpId, RegionId, Type, Value};
use ftuner_pass::{define_pass, PassContext, PassFailure};
use func::{convert_func, new_func, Shared};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;
use types::conv;

type R<T> = Result<T, (OpId, String)>;

/// The runtime entry running `body(ctx, lo, hi)` over chunks of `0 .. n` on the thread pool.
pub const PARALLEL_FOR: &str = "ftuner_rt_parallel_for";
/// The runtime's entry for a parallel loop whose body holds parallel loops (outlined too):
/// same signature as [`PARALLEL_FOR`]; it splits the loop only when its iterations split
/// evenly among the threads or are many, else runs the body on the calling thread, whose
/// inner loops then use the pool (`ftuner_codegen::parallel::nested_splits`). A serial
/// definition is `body(ctx, 0, n)`.
pub const PARALLEL_FOR_NESTED: &str = "ftuner_rt_parallel_for_nested";
/// The runtime entries of failed checks: `void ftuner_rt_fail(const char *msg)` records
/// one, `int32_t ftuner_rt_failed(void)` says whether one is recorded.
pub const FAIL: &str = "ftuner_rt_fail";
pub const FAILED: &str = "ftuner_rt_failed";
/// `int32_t ftuner_rt_release(void *allocated)`: the input program's own `memref.dealloc`
/// (`runtime_checks::CHECKED_DEALLOC`); 0 when the block is not live.
pub const RELEASE: &str = "ftuner_rt_release";
/// `int32_t ftuner_rt_released(void *allocated)`: 1 when the input program deallocated
/// the block in a call still running (`runtime_checks::CHECK_LIVE` accesses).
pub const RELEASED: &str = "ftuner_rt_released";

/// The converter of one function body: where it appends, what it has converted, and what
/// it shares with the rest of the module. A [`ConvertToLlvm`] pattern reads the op
/// ([`LlvmRewriter::ir`]), its converted operands ([`LlvmRewriter::converted_operands`]) and
/// result types ([`LlvmRewriter::results_of`]), creates `llvm` ops at the insertion point
/// ([`LlvmRewriter::valp`], [`LlvmRewriter::same_operands`]) and binds the op's results
/// ([`LlvmRewriter::bind`]).
pub struct LlvmRewriter<'a> {
    /// The registry: ops' interfaces (their [`ftuner_ir::LlvmLowering`]).
    ctx: &'a ftuner_ir::Context,
    ir: &'a mut Ir,
    map: FxHashMap<Value, Value>,
    /// Constants we made (to fold index arithmetic at conversion time).
    consts: FxHashMap<Value, i64>,
    cur: BlockId,
    region: RegionId,
    loc: Attribute,
    /// External functions the module needs: name -> `!llvm.func<...>` body.
    decls: &'a mut BTreeMap<String, String>,
    /// Assertion messages: (global name, bytes with the trailing NUL).
    strings: &'a mut Vec<(String, String)>,
    /// The functions this conversion made beside the converted one (the thread pool's
    /// entries of `rt.parallel_for` callees), and their names in the whole symbol table.
    outlined: &'a mut Vec<OpId>,
    pools: &'a mut parallel::Pools,
    /// The function being converted.
    fname: &'a str,
    /// The LLVM result type of the function being built (`None`: void), what a failed
    /// run-time check returns undefined.
    ret: Option<Type>,
    /// Functions of the module that may fail a run-time check (theirs or a callee's).
    may_fail: &'a FxHashSet<String>,
    /// A failed check aborts the process instead of returning (`abort-on-failure`).
    abort_on_failure: bool,
}

/// An `arith`/`math` op's `fastmath` flags as the llvm dialect's (`#arith.fastmath<nnan,
/// ninf>` -> `#llvm.fastmath<nnan, ninf>`); `None` for none.
fn fastmath_flags(ir: &Ir, op: OpId) -> Option<Attribute> {
    let flags = ftuner_dialects::util::fastmath_flags(ir.attr(op, "fastmath")?, "arith");
    (!flags.is_empty()).then(|| {
        Attribute::get(ftuner_ir::AttrKind::Dialect {
            dialect: "llvm".into(),
            body: format!("fastmath<{}>", flags.join(", ")),
        })
    })
}

/// The error of an op no conversion handles.
fn unsupported(op: OpId) -> (OpId, String) {
    (op, "cannot be converted to the llvm dialect".into())
}

impl LlvmRewriter<'_> {
    /// A converter for the body of a function made during the conversion (block `cur` of
    /// `region`: a pool entry, a C interface): the module's declarations and strings
    /// shared.
    fn inner(&mut self, cur: BlockId, region: RegionId) -> LlvmRewriter<'_> {
        LlvmRewriter {
            ctx: self.ctx,
            ir: &mut *self.ir,
            map: FxHashMap::default(),
            consts: FxHashMap::default(),
            cur,
            region,
            loc: self.loc,
            decls: &mut *self.decls,
            strings: &mut *self.strings,
            outlined: &mut *self.outlined,
            pools: &mut *self.pools,
            fname: self.fname,
            ret: None,
            may_fail: self.may_fail,
            abort_on_failure: self.abort_on_failure,
        }
    }

    /// The conversion of `v`, an operand of `op`.
    fn v(&self, op: OpId, v: Value) -> R<Value> {
        self.map
            .get(&v)
            .copied()
            .ok_or((op, "uses a value the conversion has not seen".into()))
    }

    /// The IR being converted.
    pub fn ir(&self) -> &Ir {
        self.ir
    }

    /// The conversions of `op`'s operands.
    pub fn converted_operands(&self, op: OpId) -> R<Vec<Value>> {
        self.ir
            .operands(op)
            .iter()
            .map(|v| self.v(op, *v))
            .collect()
    }

    /// The conversions of `op`'s first two operands.
    fn two_operands(&self, op: OpId) -> R<(Value, Value)> {
        let olds = self.ir.operands(op);
        Ok((self.v(op, olds[0])?, self.v(op, olds[1])?))
    }

    /// `op`'s (first) result is `r`.
    pub fn bind(&mut self, op: OpId, r: Value) {
        let res = self.ir.result(op, 0);
        self.map.insert(res, r);
    }

    /// `op`'s result types converted to LLVM's; an error at `op` for one LLVM cannot hold.
    pub fn results_of(&self, op: OpId) -> R<Vec<Type>> {
        self.ir
            .results(op)
            .iter()
            .map(|r| {
                let t = self.ir.value_type(*r);
                conv(t).ok_or((
                    op,
                    format!("has a result of type {t} that LLVM cannot hold"),
                ))
            })
            .collect()
    }

    /// `op` as the `llvm` op `ln` of the same operands, its result type converted.
    pub fn same_operands(&mut self, op: OpId, ln: &str) -> R<()> {
        let ops = self.converted_operands(op)?;
        let tys = self.results_of(op)?;
        let ty = *tys.first().ok_or((op, "has no result".to_string()))?;
        let props = fastmath_flags(self.ir, op)
            .map(|f| vec![("fastmathFlags", f)])
            .unwrap_or_default();
        let r = self.valp(ln, ops, ty, props);
        self.bind(op, r);
        Ok(())
    }

    /// Convert the ops of `b` except its terminator, which is returned.
    fn ops(&mut self, b: BlockId) -> R<Option<OpId>> {
        let ops = self.ir.block_ops_vec(b);
        let mut term = None;
        for op in ops {
            let n = self.ir.name(op);
            if n == ops::scf::YieldOp::NAME
                || n == ops::func::ReturnOp::NAME
                || n == ops::gpu::ReturnOp::NAME
            {
                term = Some(op);
                continue;
            }
            self.op(op)?;
        }
        Ok(term)
    }

    /// Convert one op by the pattern its definition holds in the Context.
    fn op(&mut self, op: OpId) -> R<()> {
        self.loc = self.ir.loc(op);
        match self.ctx.interface::<ConvertToLlvm>(self.ir.name(op)) {
            Some(&ConvertToLlvm(pattern)) => pattern(self, op),
            None => Err(unsupported(op)),
        }
    }
}

/// An op's `ConvertToLLVMOpInterface` model: the pattern that builds its `llvm` form at the
/// rewriter's insertion point and binds its results ([`LlvmRewriter::bind`]), or says why
/// it cannot (`Err((op, message))`, emitted at the op). Attached to ops in the Context
/// ([`register_conversions`], or a compiler embedding our passes for its own ops); an op
/// without one is an error of `convert-to-llvm`.
#[derive(Clone, Copy)]
pub struct ConvertToLlvm(pub PatternFn);

/// A [`ConvertToLlvm`] pattern: `Err((op, message))` when it cannot convert the op.
pub type PatternFn = fn(&mut LlvmRewriter<'_>, OpId) -> Result<(), (OpId, String)>;

/// Attach `pattern` to `dialect`, for every op of it without a pattern of its own,
/// unregistered ones included (`vector.splat`): a conversion by table, which refuses the
/// ops it does not convert (MLIR's `ConvertToLLVMPatternInterface` is a dialect
/// interface too).
fn attach_dialect(reg: &mut ftuner_ir::Registry, dialect: &str, pattern: PatternFn) {
    reg.attach_dialect_interface(dialect, ConvertToLlvm(pattern));
}

/// Attach `pattern` to the ops `names`.
fn attach_ops(reg: &mut ftuner_ir::Registry, names: &[&str], pattern: PatternFn) {
    for n in names {
        reg.attach_interface(n, ConvertToLlvm(pattern));
    }
}

/// Attach the conversion patterns of our dialects (MLIR's `populate*ToLLVMConversionPatterns`
/// per dialect pair, registered as `ConvertToLLVMOpInterface` models): `arith`, `math`,
/// `vector`, `gpu` and `memref` by table, the `scf` ops to control flow, `cf.assert`,
/// `func.call` and `rt.parallel_for`.
pub fn register_conversions(reg: &mut ftuner_ir::Registry) {
    attach_dialect(reg, "arith", |rw, op| rw.arith(op, rw.ir.name(op)));
    attach_dialect(reg, "math", |rw, op| rw.math(op, rw.ir.name(op)));
    attach_dialect(reg, "vector", |rw, op| rw.vector(op, rw.ir.name(op)));
    attach_dialect(reg, "gpu", |rw, op| rw.gpu(op, rw.ir.name(op)));
    attach_dialect(reg, "memref", |rw, op| rw.memref(op));
    attach_ops(reg, &[ops::scf::ForOp::NAME], |rw, op| rw.scf_for(op));
    attach_ops(reg, &[ops::scf::IfOp::NAME], |rw, op| rw.scf_if(op));
    attach_ops(reg, &[ops::scf::IndexSwitchOp::NAME], |rw, op| {
        rw.scf_switch(op)
    });
    attach_ops(reg, &[ops::cf::AssertOp::NAME], |rw, op| rw.cf_assert(op));
    attach_ops(reg, &[ops::func::CallOp::NAME], |rw, op| rw.func_call(op));
    attach_ops(reg, &[ops::rt::ParallelForOp::NAME], |rw, op| {
        rw.parallel_for(op)
    });
}

define_pass! {
    /// `convert-to-llvm`: buffer-level IR to the llvm dialect.
    pub struct ConvertToLlvmPass {
        argument: "convert-to-llvm",
        name: "ConvertToLLVM",
        summary: "Convert buffer-level func/arith/math/scf/cf/memref/vector IR to the llvm dialect",
        description: "Lowers the output of bufferize and convert-linalg-to-loops to the llvm dialect with MLIR's memref descriptor ABI and _mlir_ciface_ wrappers; what ftuner-codegen and mlir-translate take.",
        options: ConvertToLlvmOptions {
            "abort-on-failure" => abort_on_failure: bool = "false",
                "A failed run-time check writes its message to stderr and aborts (code with no ftuner runtime to report to: a standalone object); false records it through ftuner_rt_fail and returns (the JIT, the AOT library)";
        },
        statistics: {
            funcs: "num-functions" => "Functions converted",
        },
    }
}

impl ConvertToLlvmPass {
    /// Convert the functions and globals of one symbol table (the module, or a
    /// `gpu.module` whose `gpu.func` kernels become `llvm.func`s marked `nvvm.kernel`);
    /// false after errors (emitted).
    fn convert_table(
        &mut self,
        cx: &mut PassContext<'_>,
        top: OpId,
        o: &ConvertToLlvmOptions,
    ) -> bool {
        let Some(body) = cx
            .ir
            .regions_of(top)
            .first()
            .and_then(|r| cx.ir.region_entry(*r))
        else {
            return true;
        };
        let gpu = cx.ir.name(top) == ops::gpu::ModuleOp::NAME;
        let mut decls = BTreeMap::new();
        let mut strings = vec![];
        let mut failed = false;
        let mut defined = vec![];
        if let Some(call) = recursive_call(cx.ir, body) {
            cx.emit(Diagnostic::error(
                cx.ir.loc(call),
                format!(
                    "'{}' op is a recursive call (a cycle of calls): compiled code does not support recursion",
                    cx.ir.name(call)
                ),
            ));
            return false;
        }
        let may_fail = failing_functions(cx.ir, body);
        let mut pools = parallel::Pools::new(cx.ir, body);
        for op in cx.ir.block_ops_vec(body) {
            match cx.ir.name(op) {
                ops::func::FuncOp::NAME | ops::gpu::FuncOp::NAME => {
                    let shared = Shared {
                        ctx: cx.ctx,
                        decls: &mut decls,
                        strings: &mut strings,
                        pools: &mut pools,
                        may_fail: &may_fail,
                        abort_on_failure: o.abort_on_failure,
                    };
                    match convert_func(cx.ir, op, shared) {
                        Ok(new) => {
                            for n in new {
                                if let Some(s) = cx.ir.symbol_name(n) {
                                    defined.push(s.to_string());
                                }
                                cx.ir.insert_before(op, n);
                            }
                            cx.ir.erase_op(op);
                            self.funcs += 1;
                        }
                        Err((at, m)) => {
                            let at = if cx.ir.is_alive(at) { at } else { op };
                            cx.emit(Diagnostic::error(
                                cx.ir.loc(at),
                                format!("'{}' op {m}", cx.ir.name(at)),
                            ));
                            failed = true;
                        }
                    }
                }
                ops::memref::GlobalOp::NAME => {
                    if let Err(d) = memref::convert_global(cx.ir, op) {
                        cx.emit(d);
                        failed = true;
                    }
                }
                _ => {}
            }
        }
        if failed {
            return false;
        }
        let loc = cx.ir.loc(top);
        if gpu && !strings.is_empty() {
            cx.emit(Diagnostic::error(
                loc,
                "'gpu.module' op run-time assertions in GPU kernels are not supported",
            ));
            return false;
        }
        for (name, bytes) in strings {
            let g = message_global(cx.ir, loc, name, bytes);
            cx.ir.prepend_op(body, g);
        }
        for (name, fty) in decls {
            if defined.contains(&name) {
                continue;
            }
            let d = new_func(cx.ir, &name, &fty, loc, false);
            cx.ir.append_op(body, d);
        }
        true
    }
}

impl ConvertToLlvmPass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        top: OpId,
        o: &ConvertToLlvmOptions,
    ) -> Result<(), PassFailure> {
        let mut failed = false;
        let mut tables = vec![top];
        cx.ir.walk_pre(top, &mut |o| {
            if cx.ir.name(o) == ops::gpu::ModuleOp::NAME {
                tables.push(o);
            }
        });
        for t in tables {
            failed |= !self.convert_table(cx, t, o);
        }
        if failed {
            Err(PassFailure)
        } else {
            Ok(())
        }
    }
}
