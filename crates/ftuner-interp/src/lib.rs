//! # ftuner-interp
//!
//! The reference interpreter: executes `func`, `arith`, `math`, `cf`, `tensor`, `memref`
//! (strided views of shared storage, every access bounds-checked, use after `dealloc` an
//! error), `vector` transfers, `linalg` (on tensors and on buffers)
//! (named ops through their indexing maps and bodies), `scf` and `ukernel.patch` directly on
//! n-d arrays. It is written for clarity, not speed (bodies of structured ops are compiled
//! to a small register program, which keeps test sizes practical), and it is the oracle of
//! every numerical test: compiled code and rewritten IR are compared against it.
//!
//! Every scalar and element is a [`Word`], 64 bits read as the value's type says: floats as
//! f64 bits, integers up to 64 bits exactly (sign-extended); results of `f32`/`f16`/`bf16`
//! operations are rounded to their type after each operation, so the interpreter computes
//! what single-precision code computes, operation by operation. [`wide`] runs the same
//! program with those floats kept in f64: the reference beside which `--check` measures
//! the single-precision one's own rounding error.
//!
//! ```
//! let ctx = ftuner_dialects::context();
//! let src = "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %e = tensor.empty() : tensor<2xf32>\n  %r = linalg.add ins(%a, %a : tensor<2xf32>, tensor<2xf32>) outs(%e : tensor<2xf32>) -> tensor<2xf32>\n  return %r : tensor<2xf32>\n}";
//! let m = ftuner_ir::parse_module(&ctx, src, "f.mlir").unwrap();
//! let a = ftuner_interp::Tensor::from_f64(vec![2], ftuner_ir::Type::f32(), vec![1.5, -2.0]);
//! let out = ftuner_interp::run(&ctx, &m.ir, m.top, "f", vec![ftuner_interp::RtVal::Tensor(a.into())]).unwrap();
//! assert_eq!(out[0].tensor().unwrap().to_f64(), vec![3.0, -4.0]);
//! ```

use ftuner_dialects::ops;
mod body;
pub mod check;
mod eval;
mod memref;
mod tensor;
mod word;

pub use eval::{run, run_with_launcher, InterpError, Launcher};

/// The phrase of an error about a program outside what the interpreter models (integers
/// of more than 64 bits), not about the program: a tool comparing against the
/// interpreter says it could not check, rather than that the program is wrong.
pub const UNMODELLED: &str = "outside the reference interpreter's model";
pub use tensor::{
    is_undefined, round_to, row_major, wide, MemRef, RtVal, Store, Tensor, UNDEFINED,
};
pub use word::Word;

/// The type of `func` (a `func.func` under `top`).
fn function_type(ir: &ftuner_ir::Ir, top: ftuner_ir::OpId, func: &str) -> Option<ftuner_ir::Type> {
    let mut f = None;
    ir.walk_pre(top, &mut |o| {
        if f.is_none() && ir.name(o) == ops::func::FuncOp::NAME && ir.symbol_name(o) == Some(func) {
            f = Some(o);
        }
    });
    ir.attr(f?, "function_type")?.as_type()
}

/// The types of `func`'s results: what a scalar result's [`Word`] holds.
pub fn result_types(
    ir: &ftuner_ir::Ir,
    top: ftuner_ir::OpId,
    func: &str,
) -> Option<Vec<ftuner_ir::Type>> {
    Some(function_type(ir, top, func)?.function_results().to_vec())
}

/// The shapes of `func`'s parameters (`DYNAMIC` for `?`; empty for scalars), as the
/// signature gives them: what tests and runners fill in to make arguments.
pub fn param_shapes(ir: &ftuner_ir::Ir, top: ftuner_ir::OpId, func: &str) -> Option<Vec<Vec<i64>>> {
    let t = function_type(ir, top, func)?;
    Some(
        t.function_inputs()
            .iter()
            .map(|p| p.shape().map(|s| s.to_vec()).unwrap_or_default())
            .collect(),
    )
}
