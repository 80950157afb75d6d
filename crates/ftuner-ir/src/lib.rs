//! # ftuner-ir
//!
//! ftuner's IR, built the way MLIR's is: one generic operation stored in arenas and
//! addressed by `Copy` handles ([`OpId`], [`BlockId`], [`RegionId`], [`Value`]);
//! uniqued [`Type`]s and [`Attribute`]s; MLIR's textual syntax (generic form and custom
//! forms through per-op hooks); a two-stage verifier; diagnostics with locations.
//!
//! ```
//! use ftuner_ir::{parse_module, print_module, Context, PrintOptions};
//! let mut ctx = Context::new();
//! ctx.allow_unregistered = true;
//! let m = parse_module(&ctx, "\"test.op\"() {a = 1 : i32} : () -> ()", "x.mlir").unwrap();
//! let text = print_module(&m.ir, &ctx, m.top, PrintOptions { generic: true, debuginfo: false });
//! assert!(text.contains("\"test.op\"() {a = 1 : i32} : () -> ()"));
//! ```

pub mod affine;
pub mod attrs;
pub mod builder;
pub mod constraints;
pub mod diag;
pub mod dialect;
pub mod equivalence;
pub mod float;
mod intern;
pub mod ir;
pub mod lexer;
pub mod parser;
pub mod printer;
pub mod types;
pub mod verify;

pub use affine::{AffineExpr, AffineMap, IntegerSet};
pub use attrs::{AttrKind, Attribute, LocKind, Scalar};
pub use builder::{InsertPoint, OpBuilder};
pub use diag::{Diagnostic, Severity, SourceMap};
pub use dialect::{
    traits, Context, Interfaces, LlvmLowering, MemoryEffects, MemoryEffectsFn, OpDef, Registry,
    ScalarEval, TypeEnv,
};
pub use equivalence::structure_key;
pub use ir::{intern_name, BlockId, Ir, OpId, OpSpec, RegionId, Use, Value, ValueDef};
pub use parser::{parse_into, parse_module, OperationState, PResult, ParsedModule, Parser};
pub use printer::{print_module, print_module_to, print_op_standalone, OpPrinter, PrintOptions};
pub use types::{rank_reduction_keep, FloatKind, Signedness, Type, TypeKind, DYNAMIC};
