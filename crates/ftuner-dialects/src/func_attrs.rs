//! The attributes ftuner puts on a `func.func` and its arguments, read and written here
//! only (before: the `{ftuner.weight}` test and the parsing of `ftuner.prepared` were
//! spelled out in outline-weight-preparation, the uKernel lowering's packing, the runtime's
//! ahead-of-time wrapper and the Python extension, and the last two assumed the prepare
//! function's name instead of reading it).
//!
//! * `{ftuner.weight}` on an argument: its value is known when the model is loaded (a
//!   parameter or buffer); outline-weight-preparation hoists what derives from it.
//! * `ftuner.prepared = {inputs = array<i64: ...>, prepare = @f_prepare}` on a function
//!   that pass split: the indices, in the signature before the split, of the arguments it
//!   kept (the prepared values follow them), and the function that prepares the rest.
//! * `ftuner.run_once` on a function run once per loaded model (the prepare function).
//! * `ftuner.noinline` on a function outlined from a loop nest.

use crate::ops;
use ftuner_ir::{Attribute, Ir, OpId, Value};

/// The unit attribute of a weight argument (in the function's `arg_attrs`).
pub const WEIGHT: &str = "ftuner.weight";
/// The dictionary attribute of a function whose weight preparation was outlined.
pub const PREPARED: &str = "ftuner.prepared";
/// The unit attribute of a function run once per loaded model. convert-to-llvm compiles
/// such a function `noinline optnone` when its body is straight-line (its loop nests
/// outlined into functions of their own, which are optimized as usual): the prepare
/// function of BERT-base returns 201 buffers, and LLVM's optimizing instruction selection
/// spent 1.8 s on the block that builds that result (its store and token-factor combining
/// is quadratic in a block), for code that runs once.
pub const RUN_ONCE: &str = "ftuner.run_once";
/// The unit attribute of a function LLVM must not inline (`passthrough = ["noinline"]`
/// once lowered).
pub const NOINLINE: &str = "ftuner.noinline";

/// Whether the `arg_attrs` dictionary `d` (of one argument) marks a weight.
fn marks_weight(d: &Attribute) -> bool {
    d.as_dict()
        .is_some_and(|d| d.iter().any(|(k, _)| k == WEIGHT))
}

/// `f`'s argument dictionaries as they are (none when it has none).
fn arg_dicts(ir: &Ir, f: OpId) -> &[Attribute] {
    ir.attr(f, "arg_attrs")
        .and_then(|a| a.as_array())
        .unwrap_or(&[])
}

/// Whether argument `i` of function `f` is a weight (`{ftuner.weight}`).
pub fn is_weight_arg(ir: &Ir, f: OpId, i: usize) -> bool {
    arg_dicts(ir, f).get(i).is_some_and(marks_weight)
}

/// The weight arguments of `f`, in order.
pub fn weight_args(ir: &Ir, f: OpId) -> Vec<usize> {
    let dicts = arg_dicts(ir, f);
    (0..dicts.len())
        .filter(|i| marks_weight(&dicts[*i]))
        .collect()
}

/// `f`'s argument dictionaries as they are (empty when it has none).
pub fn arg_attrs(ir: &Ir, f: OpId) -> Vec<Attribute> {
    arg_dicts(ir, f).to_vec()
}

/// The argument dictionaries of `f` (`n` of them) with arguments `idx` marked as weights.
pub fn with_weights_marked(ir: &Ir, f: OpId, n: usize, idx: &[usize]) -> Attribute {
    let old = arg_attrs(ir, f);
    let mut attrs = vec![];
    for i in 0..n {
        let mut d: Vec<(String, Attribute)> = old
            .get(i)
            .and_then(|a| a.as_dict())
            .map(|d| d.to_vec())
            .unwrap_or_default();
        if idx.contains(&i) && !d.iter().any(|(k, _)| k == WEIGHT) {
            d.push((WEIGHT.into(), Attribute::unit()));
        }
        attrs.push(Attribute::dictionary(d));
    }
    Attribute::array(attrs)
}

/// What `ftuner.prepared` records about a split function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prepared {
    /// The indices, in the signature before the split, of the arguments the function kept.
    pub inputs: Vec<usize>,
    /// The prepare function's name.
    pub prepare: String,
}

/// `f`'s `ftuner.prepared`, when it is well formed (non-negative indices, a symbol).
pub fn prepared(ir: &Ir, f: OpId) -> Option<Prepared> {
    let d = ir.attr(f, PREPARED)?.as_dict()?;
    let inputs = d.iter().find(|(k, _)| k == "inputs")?.1.as_dense_i64s()?;
    let inputs = inputs
        .into_iter()
        .map(|i| usize::try_from(i).ok())
        .collect::<Option<Vec<_>>>()?;
    let prepare = d.iter().find(|(k, _)| k == "prepare")?.1.as_symbol()?;
    Some(Prepared {
        inputs,
        prepare: prepare.to_string(),
    })
}

/// The `ftuner.prepared` attribute of a function that kept arguments `inputs` and is
/// prepared by `prepare`.
pub fn prepared_attr(inputs: &[i64], prepare: &str) -> Attribute {
    Attribute::dictionary(vec![
        ("inputs".into(), Attribute::dense_i64_array(inputs)),
        ("prepare".into(), Attribute::symbol_ref(prepare.to_string())),
    ])
}

/// Whether `v` is known when the weights are: an argument marked `{ftuner.weight}`, an
/// argument of a function that `outline-weight-preparation` split, past the arguments it
/// kept (a prepared value), or a pure op's result on such values and constants (at least
/// one of them not a constant), of static shape: what outline-weight-preparation hoists
/// when it runs (again) over the ops that read it.
pub fn known_at_preparation(ir: &Ir, v: Value) -> bool {
    // (known at preparation, reads a weight or prepared value)
    fn go(ir: &Ir, v: Value, depth: u32) -> (bool, bool) {
        if let Some(op) = ir.defining_op(v) {
            let name = ir.name(op);
            if name == ops::arith::ConstantOp::NAME {
                return (true, false);
            }
            if depth >= 8
                || !ir.regions_of(op).is_empty()
                || !(name.starts_with("tensor.") || name.starts_with("arith."))
                || ir.operands(op).is_empty()
            {
                return (false, false);
            }
            let (mut known, mut weight) = (true, false);
            for o in ir.operands(op) {
                let (k, w) = go(ir, *o, depth + 1);
                known &= k;
                weight |= w;
            }
            return (known, weight);
        }
        let Some(block) = ir.value_block(v) else {
            return (false, false);
        };
        let Some(i) = ir.block_args(block).iter().position(|a| *a == v) else {
            return (false, false);
        };
        let Some(f) = ir
            .block_parent_op(block)
            .filter(|f| ir.name(*f) == ops::func::FuncOp::NAME)
        else {
            return (false, false);
        };
        let kept = prepared(ir, f).map(|p| p.inputs.len());
        // A weight argument itself (a function with nothing to prepare before: GPT-2's
        // Conv1D weights are read as they are).
        let weight = is_weight_arg(ir, f, i);
        let known = weight || kept.is_some_and(|k| i >= k);
        (known, known)
    }
    // Constants alone are not hoisted by outline-weight-preparation (nothing derives from
    // a weight), and a dynamic shape is not kept prepared: either would pack per call.
    go(ir, v, 0) == (true, true) && ir.value_type(v).has_static_shape()
}
