//! Where the memory of a buffer comes from, and which buffers may be `noalias`: the
//! analysis `convert-parallel-loops-to-runtime` uses for the thread-pool bodies it
//! outlines, `convert-to-llvm` for the `llvm.noalias` arguments of functions, and
//! `outline-loop-nests` for the arguments of the nests it outlines.

use ftuner_dialects::ops;
use ftuner_ir::{Attribute, Ir, OpId, Type, Value};

/// Where the memory of a memref value comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Root {
    /// A `memref.alloc` / `alloca` of the enclosing function (through view ops), or an
    /// argument the function declares `llvm.noalias` (its caller's allocation, reachable
    /// through nothing else: `outline-loop-nests`).
    Alloc(OpId),
    NoaliasArg(Value),
    /// An argument of the enclosing function or a global: not a fresh allocation.
    External,
    /// Anything else (a loop-carried buffer, a view op not modelled here).
    Unknown,
}

pub fn root_of(ir: &Ir, mut v: Value) -> Root {
    for _ in 0..64 {
        let Some(d) = ir.defining_op(v) else {
            // A block argument: the function's own arguments are external, unless it
            // declares them noalias.
            let Some(b) = ir.value_block(v) else {
                return Root::Unknown;
            };
            let Some(f) = ir.block_parent_op(b).filter(|o| {
                matches!(
                    ir.name(*o),
                    ops::func::FuncOp::NAME | ops::gpu::FuncOp::NAME
                )
            }) else {
                return Root::Unknown;
            };
            let pos = ir.block_args(b).iter().position(|a| *a == v);
            return if pos.is_some_and(|i| arg_is_noalias(ir, f, i)) {
                Root::NoaliasArg(v)
            } else {
                Root::External
            };
        };
        match ir.name(d) {
            ops::memref::AllocOp::NAME | ops::memref::AllocaOp::NAME => return Root::Alloc(d),
            ops::memref::GetGlobalOp::NAME => return Root::External,
            ops::memref::SubviewOp::NAME
            | ops::memref::CollapseShapeOp::NAME
            | ops::memref::ExpandShapeOp::NAME
            | ops::memref::CastOp::NAME
            | ops::memref::ReinterpretCastOp::NAME
            | ops::memref::ReshapeOp::NAME
            | "memref.transpose" => match ir.operands(d).first() {
                Some(x) => v = *x,
                None => return Root::Unknown,
            },
            _ => return Root::Unknown,
        }
    }
    Root::Unknown
}

/// Whether argument `i` of function `f` carries `llvm.noalias`.
pub fn arg_is_noalias(ir: &Ir, f: OpId, i: usize) -> bool {
    ir.attr(f, "arg_attrs")
        .and_then(|a| a.as_array())
        .and_then(|a| a.get(i))
        .and_then(|d| d.as_dict())
        .is_some_and(|d| d.iter().any(|(k, _)| k == "llvm.noalias"))
}

/// Which of `args`, the values a loop body outlined for the thread pool takes, may be
/// `noalias` arguments: a buffer rooted in an allocation (or a noalias argument) of the
/// enclosing function that no other argument is rooted in (a fresh allocation is
/// reachable from nothing else: not from the function's arguments, not from a global).
/// None when some buffer's origin is unknown (it could view any allocation).
pub fn noalias_args(ir: &Ir, args: &[Value]) -> Vec<bool> {
    let roots: Vec<Option<Root>> = args
        .iter()
        .map(|v| ir.value_type(*v).is_memref().then(|| root_of(ir, *v)))
        .collect();
    if roots.contains(&Some(Root::Unknown)) {
        return vec![false; args.len()];
    }
    roots
        .iter()
        .enumerate()
        .map(|(i, r)| {
            matches!(r, Some(Root::Alloc(_) | Root::NoaliasArg(_)))
                && roots.iter().enumerate().all(|(j, x)| j == i || x != r)
        })
        .collect()
}

/// The `arg_attrs` of the LLVM function converted from `f` (inputs `ins`): each memref
/// argument is 3 + 2R descriptor fields, and a `llvm.noalias` memref argument's allocated
/// and aligned pointers are `noalias`. None when no argument is `noalias`.
pub fn expanded_arg_attrs(ir: &Ir, f: OpId, ins: &[Type]) -> Option<Attribute> {
    if !(0..ins.len()).any(|i| arg_is_noalias(ir, f, i)) {
        return None;
    }
    let mut attrs = vec![];
    for (i, t) in ins.iter().enumerate() {
        let n = if t.is_memref() {
            3 + 2 * t.rank().unwrap_or(0)
        } else {
            1
        };
        let na = t.is_memref() && arg_is_noalias(ir, f, i);
        for k in 0..n {
            attrs.push(Attribute::dictionary(if na && k < 2 {
                vec![("llvm.noalias".to_string(), Attribute::unit())]
            } else {
                vec![]
            }));
        }
    }
    Some(Attribute::array(attrs))
}
