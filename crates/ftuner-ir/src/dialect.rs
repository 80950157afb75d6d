//! Op definitions and the registry: what the parser, printer, verifier and rewriters need
//! to know about each registered op. Definitions are generated from `ir-specs/*.toml` by
//! `ftuner-odsgen`; hooks (custom syntax, verifiers, folders) are written by hand.

use crate::attrs::Attribute;
use crate::ir::{Ir, OpId, RegionId, Value};
use crate::parser::{OperationState, PResult, Parser};
use crate::printer::OpPrinter;
use rustc_hash::FxHashMap;

/// Op traits (MLIR's `OpTrait`s that the infrastructure looks at).
pub mod traits {
    pub const TERMINATOR: u32 = 1 << 0;
    pub const ISOLATED_FROM_ABOVE: u32 = 1 << 1;
    pub const NO_TERMINATOR: u32 = 1 << 2;
    pub const SINGLE_BLOCK: u32 = 1 << 3;
    pub const SYMBOL_TABLE: u32 = 1 << 4;
    pub const SYMBOL: u32 = 1 << 5;
    /// No memory effects (MLIR's `Pure` / `NoMemoryEffect`): dead instances may be erased
    /// and equal instances merged.
    pub const PURE: u32 = 1 << 6;
    pub const CONSTANT_LIKE: u32 = 1 << 7;
    pub const RETURN_LIKE: u32 = 1 << 8;
    pub const COMMUTATIVE: u32 = 1 << 9;
    pub const SAME_OPERANDS_AND_RESULT_TYPE: u32 = 1 << 10;
    pub const ATTR_SIZED_OPERAND_SEGMENTS: u32 = 1 << 11;
    pub const ATTR_SIZED_RESULT_SEGMENTS: u32 = 1 << 12;
    pub const GRAPH_REGION: u32 = 1 << 13;
    /// Effects are those of the nested ops (`RecursiveMemoryEffects`).
    pub const RECURSIVE_MEMORY_EFFECTS: u32 = 1 << 14;
    pub const ELEMENTWISE: u32 = 1 << 15;
    pub const SAME_OPERANDS_ELEMENT_TYPE: u32 = 1 << 16;
    pub const SAME_TYPE_OPERANDS: u32 = 1 << 17;
    pub const SCALAR_BROADCASTABLE: u32 = 1 << 18;
    /// Several variadic operand groups of equal length, with no segment sizes attribute
    /// (MLIR's `SameVariadicOperandSize`, e.g. `linalg.reduce`'s inputs and inits).
    pub const SAME_VARIADIC_OPERAND_SIZE: u32 = 1 << 19;

    pub const NAMES: &[(&str, u32)] = &[
        ("Terminator", TERMINATOR),
        ("IsolatedFromAbove", ISOLATED_FROM_ABOVE),
        ("NoTerminator", NO_TERMINATOR),
        ("SingleBlock", SINGLE_BLOCK),
        ("SymbolTable", SYMBOL_TABLE),
        ("Symbol", SYMBOL),
        ("Pure", PURE),
        ("ConstantLike", CONSTANT_LIKE),
        ("ReturnLike", RETURN_LIKE),
        ("Commutative", COMMUTATIVE),
        ("SameOperandsAndResultType", SAME_OPERANDS_AND_RESULT_TYPE),
        ("AttrSizedOperandSegments", ATTR_SIZED_OPERAND_SEGMENTS),
        ("AttrSizedResultSegments", ATTR_SIZED_RESULT_SEGMENTS),
        ("GraphRegion", GRAPH_REGION),
        ("RecursiveMemoryEffects", RECURSIVE_MEMORY_EFFECTS),
        ("Elementwise", ELEMENTWISE),
        ("SameOperandsElementType", SAME_OPERANDS_ELEMENT_TYPE),
        ("SameTypeOperands", SAME_TYPE_OPERANDS),
        ("SameVariadicOperandSize", SAME_VARIADIC_OPERAND_SIZE),
    ];
    pub fn from_name(n: &str) -> Option<u32> {
        NAMES.iter().find(|(k, _)| *k == n).map(|(_, v)| *v)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    Single,
    Optional,
    Variadic,
}

/// An operand or result of an op definition.
#[derive(Clone, Copy, Debug)]
pub struct ArgDef {
    pub name: &'static str,
    pub arity: Arity,
    /// A type constraint name understood by [`crate::constraints::type_satisfies`].
    pub constraint: &'static str,
}

/// An inherent attribute of an op definition.
#[derive(Clone, Copy, Debug)]
pub struct AttrDef {
    pub name: &'static str,
    pub constraint: &'static str,
    pub optional: bool,
}

pub type ParseFn = fn(&mut Parser<'_>, &mut OperationState) -> PResult<()>;
pub type PrintFn = fn(&mut OpPrinter<'_>, OpId);
/// Returns an error message; the verifier prefixes it with `'op.name' op `.
pub type VerifyFn = fn(&crate::Context, &Ir, OpId) -> Result<(), String>;

/// What a folder produces for one result.
#[derive(Clone, Copy, Debug)]
pub enum FoldResult {
    Attr(Attribute),
    Value(Value),
}
/// Folds an op given the constant values of its operands (`None` where not constant).
/// An in-place fold (the op was updated) returns `Some(vec![])`.
pub type FoldFn = fn(&mut Ir, OpId, &[Option<Attribute>]) -> Option<Vec<FoldResult>>;
/// A canonicalization pattern: rewrites around `op`, returns whether anything changed.
pub type CanonFn = fn(&crate::Context, &mut Ir, OpId) -> bool;
pub type AsmNamesFn = fn(&Ir, OpId, &mut dyn FnMut(Value, String));
pub type BlockArgNamesFn = fn(&Ir, OpId, RegionId, &mut dyn FnMut(Value, String));
/// Materialize a constant of `ty` with value `attr` as an op of this dialect.
pub type MaterializeFn = fn(&mut Ir, Attribute, crate::types::Type, Attribute) -> Option<OpId>;

/// Types of an op's operand/result groups while its custom syntax is parsed: the name
/// of each group, its number of values, and its types where the syntax gave them.
#[derive(Debug, Default)]
pub struct TypeEnv {
    pub groups: Vec<(&'static str, usize, Option<Vec<crate::types::Type>>)>,
    pub attrs: Vec<(String, Attribute)>,
}

impl TypeEnv {
    pub fn get(&self, name: &str) -> Option<&Vec<crate::types::Type>> {
        self.groups
            .iter()
            .find(|g| g.0 == name)
            .and_then(|g| g.2.as_ref())
    }
    pub fn get1(&self, name: &str) -> Option<crate::types::Type> {
        self.get(name).and_then(|v| v.first().copied())
    }
    pub fn count(&self, name: &str) -> usize {
        self.groups
            .iter()
            .find(|g| g.0 == name)
            .map(|g| g.1)
            .unwrap_or(0)
    }
    pub fn set(&mut self, name: &str, tys: Vec<crate::types::Type>) {
        if let Some(g) = self.groups.iter_mut().find(|g| g.0 == name) {
            if g.2.is_none() {
                g.2 = Some(tys);
            }
        }
    }
    pub fn attr(&self, name: &str) -> Option<Attribute> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| *v)
    }
}

/// Fills in operand and result types a custom syntax leaves implicit
/// (`InferTypeOpInterface`, `TypesMatchWith`).
pub type InferFn = fn(&mut TypeEnv) -> Result<(), String>;

#[derive(Clone)]
pub struct OpDef {
    pub name: &'static str,
    pub summary: &'static str,
    pub description: &'static str,
    /// The declarative assembly format (MLIR's format language), if the op has one.
    pub format: Option<&'static str>,
    /// Groups of operands/results whose types are equal (`AllTypesMatch`).
    pub type_groups: &'static [&'static [&'static str]],
    /// Infers result types from the parsed operands (`InferTypeOpInterface`).
    pub infer_results: Option<InferFn>,
    /// Inherent attributes with a default value (`DefaultValuedAttr`), in attribute syntax.
    pub defaults: &'static [(&'static str, &'static str)],
    pub traits: u32,
    pub operands: &'static [ArgDef],
    pub results: &'static [ArgDef],
    pub attributes: &'static [AttrDef],
    pub num_regions: usize,
    pub variadic_regions: bool,
    pub num_successors: Option<usize>,
    pub parse: Option<ParseFn>,
    pub print: Option<PrintFn>,
    pub verify: Option<VerifyFn>,
    pub fold: Option<FoldFn>,
    pub canonicalize: &'static [CanonFn],
    pub asm_names: Option<AsmNamesFn>,
    pub block_arg_names: Option<BlockArgNamesFn>,
    pub default_dialect: Option<&'static str>,
    /// Inherent attributes are properties (`<{...}>` in generic form); false for the few
    /// upstream ops that keep them in the attribute dictionary (`gpu.func`).
    pub uses_properties: bool,
    /// The op's `MemoryEffectOpInterface` where its effects depend on its operands (a
    /// destination-style op reads and writes memory on buffers, not on tensors); `None`:
    /// the traits say (`Pure`, `RecursiveMemoryEffects`), else unknown effects. Set by the
    /// op's dialect when it registers ([`Registry::op_mut`]).
    pub memory_effects: Option<MemoryEffectsFn>,
    /// The op's value on scalar operands ([`ScalarEval`]), the one definition its folder
    /// and the interpreter use; set by the op's dialect when it registers.
    pub scalar_eval: Option<ScalarEval>,
    /// How an elementwise op becomes LLVM when it is one call ([`LlvmLowering`]); declared
    /// in the op's spec (`llvm = { intrinsic = ".." }` or `llvm = { libm = ".." }`).
    pub llvm: Option<LlvmLowering>,
    /// `DestinationStyleOpInterface`: the op's inputs and its inits (the outputs it writes,
    /// on buffers in place); set by the op's dialect (linalg's structured ops,
    /// `ukernel.patch`).
    pub destination_style: Option<DpsFn>,
    /// Interfaces a crate above the dialects attaches to the op (MLIR's external models,
    /// `Op::attachInterface`): the conversion to LLVM, bufferization. Looked up by type
    /// through [`Context::interface`].
    pub interfaces: Interfaces,
}

/// The external models attached to one op, keyed by the model's type (one per type).
#[derive(Clone, Default)]
pub struct Interfaces(
    Vec<(
        std::any::TypeId,
        std::sync::Arc<dyn std::any::Any + Send + Sync>,
    )>,
);

impl Interfaces {
    /// Attach `model`, replacing a model of the same type.
    pub fn attach<I: std::any::Any + Send + Sync>(&mut self, model: I) {
        let id = std::any::TypeId::of::<I>();
        self.0.retain(|(t, _)| *t != id);
        self.0.push((id, std::sync::Arc::new(model)));
    }
    /// The model of type `I`, if one is attached.
    pub fn get<I: std::any::Any>(&self) -> Option<&I> {
        let id = std::any::TypeId::of::<I>();
        self.0
            .iter()
            .find(|(t, _)| *t == id)
            .and_then(|(_, m)| m.downcast_ref::<I>())
    }
}

/// A destination-style op's (inputs, inits).
pub type DpsFn = fn(&crate::Ir, crate::OpId) -> (Vec<crate::Value>, Vec<crate::Value>);

/// The scalar semantics of an elementwise float op (a `ScalarEvalOpInterface`; MLIR spreads
/// this over the folder, `MathToLLVM` and the execution engine — here the folder and the
/// interpreter call the same function, and the JIT's libm or LLVM intrinsic is tested
/// against it). Computed in f64 and rounded to the result type by the caller.
#[derive(Clone, Copy, Debug)]
pub enum ScalarEval {
    FloatUnary(fn(f64) -> f64),
    FloatBinary(fn(f64, f64) -> f64),
    /// On a `w`-bit integer (signed value in, any representative out: the caller wraps it
    /// to `w` bits).
    IntUnary(fn(i128, u32) -> i128),
    /// `None`: undefined (poison) at these operands.
    IntBinary(fn(i128, i128, u32) -> Option<i128>),
}

impl ScalarEval {
    /// The value of a float op at `args`; `None` when their number does not fit or the op
    /// is an integer op.
    pub fn apply(&self, args: &[f64]) -> Option<f64> {
        match (self, args) {
            (ScalarEval::FloatUnary(f), [x]) => Some(f(*x)),
            (ScalarEval::FloatBinary(f), [x, y]) => Some(f(*x, *y)),
            _ => None,
        }
    }

    /// Whether the op computes on integers ([`ScalarEval::apply_int`]).
    pub fn is_int(&self) -> bool {
        matches!(self, ScalarEval::IntUnary(_) | ScalarEval::IntBinary(..))
    }

    /// The value of an integer op at `args` (signed, of width `w`): any representative
    /// modulo 2^w (callers wrap to the type, as for every integer op); `None` when
    /// undefined, when their number does not fit, or above 128 bits (integer constants are
    /// i128: wider values are not computed).
    pub fn apply_int(&self, args: &[i128], w: u32) -> Option<i128> {
        if w > 128 {
            return None;
        }
        match (self, args) {
            (ScalarEval::IntUnary(f), [x]) => Some(f(*x, w)),
            (ScalarEval::IntBinary(f), [x, y]) => f(*x, *y, w),
            _ => None,
        }
    }
}

/// The LLVM form of an elementwise op that is one call (`ConvertToLLVMOpInterface` for the
/// ops `MathToLLVM` and `MathToLibm` handle by table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LlvmLowering {
    /// An LLVM intrinsic of the same operands and result (`llvm.intr.exp`).
    Intrinsic(&'static str),
    /// A C math library function: `NAME` on f64, `NAMEf` on f32.
    Libm(&'static str),
    /// An LLVM intrinsic whose immediate flag (the property named here, e.g.
    /// `is_zero_poison`) is false: the op is defined where LLVM's would be poison.
    IntrinsicDefined(&'static str, &'static str),
}

/// What an op does to memory by itself (MLIR's `MemoryEffectOpInterface`, as far as we
/// model it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryEffects {
    /// None: a value computation.
    None,
    /// None of its own; the ops in its regions decide (`RecursiveMemoryEffects`).
    Nested,
    /// It reads or writes memory.
    ReadWrite,
}

/// An op's [`MemoryEffects`] as used at `op`.
pub type MemoryEffectsFn = fn(&crate::Ir, crate::OpId) -> MemoryEffects;

impl OpDef {
    pub fn has(&self, t: u32) -> bool {
        self.traits & t != 0
    }
    pub fn is_inherent(&self, attr: &str) -> bool {
        self.attributes.iter().any(|a| a.name == attr)
            || (attr == "operandSegmentSizes" && self.has(traits::ATTR_SIZED_OPERAND_SEGMENTS))
            || (attr == "resultSegmentSizes" && self.has(traits::ATTR_SIZED_RESULT_SEGMENTS))
    }
}

/// All registered dialects and ops.
#[derive(Default, Clone)]
pub struct Registry {
    ops: FxHashMap<&'static str, OpDef>,
    dialects: Vec<&'static str>,
    pub materializers: FxHashMap<&'static str, MaterializeFn>,
    /// Dialect interfaces (MLIR's `DialectInterface`s, e.g. `ConvertToLLVMPatternInterface`):
    /// what serves every op of the dialect, unregistered ones included, unless the op has
    /// a model of its own.
    dialect_interfaces: FxHashMap<String, Interfaces>,
}

impl Registry {
    pub fn register_dialect(&mut self, name: &'static str) {
        if !self.dialects.contains(&name) {
            self.dialects.push(name);
        }
    }
    pub fn register_op(&mut self, def: OpDef) {
        self.ops.insert(def.name, def);
    }
    pub fn op(&self, name: &str) -> Option<&OpDef> {
        self.ops.get(name)
    }
    pub fn op_mut(&mut self, name: &str) -> Option<&mut OpDef> {
        self.ops.get_mut(name)
    }
    /// Every registered op of `dialect`.
    pub fn ops_of_mut<'a>(
        &'a mut self,
        dialect: &'a str,
    ) -> impl Iterator<Item = &'a mut OpDef> + 'a {
        self.ops
            .values_mut()
            .filter(move |d| d.name.split_once('.').is_some_and(|(x, _)| x == dialect))
    }
    /// Attach an external model to the op `name` (MLIR's `attachInterface`); false when no
    /// such op is registered.
    pub fn attach_interface<I: std::any::Any + Send + Sync>(
        &mut self,
        name: &str,
        model: I,
    ) -> bool {
        match self.ops.get_mut(name) {
            Some(d) => {
                d.interfaces.attach(model);
                true
            }
            None => false,
        }
    }
    /// Attach a dialect interface to `dialect` ([`Context::interface`] falls back on it
    /// for the dialect's ops).
    pub fn attach_dialect_interface<I: std::any::Any + Send + Sync>(
        &mut self,
        dialect: &str,
        model: I,
    ) {
        self.dialect_interfaces
            .entry(dialect.to_string())
            .or_default()
            .attach(model);
    }
    pub fn has_dialect(&self, name: &str) -> bool {
        self.dialects.contains(&name)
    }
    pub fn dialects(&self) -> &[&'static str] {
        &self.dialects
    }
    pub fn ops(&self) -> impl Iterator<Item = &OpDef> {
        self.ops.values()
    }
}

/// The context: registered dialects and global options.
#[derive(Default, Clone)]
pub struct Context {
    pub registry: Registry,
    pub allow_unregistered: bool,
}

impl Context {
    pub fn new() -> Context {
        Context::default()
    }
    pub fn op_def(&self, name: &str) -> Option<&OpDef> {
        self.registry.op(name)
    }
    /// The (inputs, inits) of a destination-style op (`DestinationStyleOpInterface`);
    /// `None` for other ops.
    pub fn dps_operands(
        &self,
        ir: &crate::Ir,
        op: crate::OpId,
    ) -> Option<(Vec<crate::Value>, Vec<crate::Value>)> {
        let f = self.registry.op(ir.name(op))?.destination_style?;
        Some(f(ir, op))
    }
    /// Whether `name` is a destination-style op.
    pub fn is_destination_style(&self, name: &str) -> bool {
        self.registry
            .op(name)
            .is_some_and(|d| d.destination_style.is_some())
    }
    /// The model of interface `I` for the op `name`: its own
    /// ([`Registry::attach_interface`]), else its dialect's
    /// ([`Registry::attach_dialect_interface`], which serves unregistered ops too); `None`
    /// when neither has one.
    pub fn interface<I: std::any::Any>(&self, name: &str) -> Option<&I> {
        self.registry
            .op(name)
            .and_then(|d| d.interfaces.get::<I>())
            .or_else(|| {
                let (dialect, _) = name.split_once('.')?;
                self.registry.dialect_interfaces.get(dialect)?.get::<I>()
            })
    }
    /// Whether an op has a trait; unregistered ops have none.
    pub fn has_trait(&self, name: &str, t: u32) -> bool {
        self.registry.op(name).is_some_and(|d| d.has(t))
    }
}
