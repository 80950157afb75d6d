//! # ftuner-dialects
//!
//! The dialects ftuner understands. Op definitions (operands, results, attributes,
//! traits, assembly formats) come from `ir-specs/*.toml` through `ftuner-odsgen`; this
//! crate adds what a spec cannot say: verifiers, folders, canonicalization patterns,
//! custom parsers/printers and region builders, each in its dialect's module.
//!
//! ```
//! let ctx = ftuner_dialects::context();
//! let src = "func.func @f(%a: f32) -> f32 {\n  %0 = arith.addf %a, %a : f32\n  return %0 : f32\n}";
//! let m = ftuner_ir::parse_module(&ctx, src, "f.mlir").unwrap();
//! assert!(ftuner_ir::verify::verify(&ctx, &m.ir, m.top).is_empty());
//! ```

pub mod affine;
pub mod arith;
pub mod arith_canonicalize;
pub mod arith_semantics;
pub mod builtin;
pub mod cf;
pub mod format;
pub mod func;
pub mod func_attrs;
pub mod gpu;
pub mod linalg;
pub mod llvm;
pub mod math;
pub mod memref;
pub mod rt;
pub mod scf;
pub mod ta;
pub mod tensor;
pub mod ukernel;
pub mod util;
pub mod vector;

#[allow(clippy::all, dead_code, unused)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/generated_ops.rs"));
}
pub use generated::*;

/// The generated typed op wrappers by dialect (`ops::arith::AddfOp`): their `NAME` is how
/// passes name an op (a misspelled op is a compile error), `from` checks an op's kind,
/// `build` creates one with its operands and attributes typed.
pub mod ops {
    pub use crate::generated::gen_affine as affine;
    pub use crate::generated::gen_arith as arith;
    pub use crate::generated::gen_builtin as builtin;
    pub use crate::generated::gen_cf as cf;
    pub use crate::generated::gen_func as func;
    pub use crate::generated::gen_gpu as gpu;
    pub use crate::generated::gen_linalg as linalg;
    pub use crate::generated::gen_llvm as llvm;
    pub use crate::generated::gen_math as math;
    pub use crate::generated::gen_memref as memref;
    pub use crate::generated::gen_rt as rt;
    pub use crate::generated::gen_scf as scf;
    pub use crate::generated::gen_ta as ta;
    pub use crate::generated::gen_tensor as tensor;
    pub use crate::generated::gen_ukernel as ukernel;
    pub use crate::generated::gen_vector as vector;
}

use ftuner_ir::{Ir, OpId, Value};

/// The values of operand (or result) group `index` of `op`, whose groups are `defs` (an
/// op's `OPERANDS`/`RESULTS`, generated with its typed wrapper), using the segment-size
/// property `seg_attr` when the op has several variadic groups; `same`: they have one size
/// (`SameVariadicOperandSize`). Empty when the op's values do not fit its groups (it fails
/// to verify).
pub fn segment<'a>(
    ir: &'a Ir,
    op: OpId,
    defs: &[ftuner_ir::dialect::ArgDef],
    same: bool,
    seg_attr: &str,
    index: usize,
    operands: bool,
) -> &'a [Value] {
    let vals = if operands {
        ir.operands(op)
    } else {
        ir.results(op)
    };
    let sizes = ftuner_ir::verify::segment_sizes(ir, op, defs, vals.len(), seg_attr, same)
        .unwrap_or_default();
    let start: usize = sizes.iter().take(index).sum();
    let len = sizes.get(index).copied().unwrap_or(0);
    vals.get(start..start + len).unwrap_or(&[])
}

/// A registry with every dialect.
pub fn registry() -> ftuner_ir::Registry {
    let mut r = ftuner_ir::Registry::default();
    register_all(&mut r);
    r
}

/// Register every dialect into `reg`.
pub fn register_all(reg: &mut ftuner_ir::Registry) {
    register_all_generated(reg);
    arith::register_extra(reg);
    linalg::register_extra(reg);
    math::register_extra(reg);
    ukernel::register_extra(reg);
    vector::register_extra(reg);
}

/// Fix-ups upstream MLIR applies when it verifies freshly parsed IR, so that the IR we
/// print is the IR `mlir-opt` prints (see [`linalg::memoize_indexing_maps`]).
pub fn after_parse(ir: &mut Ir, top: OpId) {
    linalg::memoize_indexing_maps(ir, top);
}

/// A context with all dialects registered.
pub fn context() -> ftuner_ir::Context {
    ftuner_ir::Context {
        registry: registry(),
        allow_unregistered: false,
    }
}
