//! One `llvm.func` as an LLVM `define` (or a `declare` when it has no body): the signature
//! with its parameter attributes, the blocks in reverse postorder, and block arguments as
//! `phi`s fed by the branches into the block; the control-flow helpers this needs.

use super::types::func_sig;
use super::{err, prop, Fn, FnAttrs, ModuleText, R};
use ftuner_ir::{AttrKind, BlockId, Ir, OpId, Value};
use rustc_hash::{FxHashMap, FxHashSet};
use std::fmt::Write;

/// Function attributes without arguments that `passthrough` may name (MLIR's LLVM dialect);
/// others are left out rather than handed to LLVM's parser.
const PASSTHROUGH: &[&str] = &[
    "noinline",
    "alwaysinline",
    "optnone",
    "cold",
    "hot",
    "minsize",
    "optsize",
];

/// A function's `passthrough` attributes, each with a leading space.
fn passthrough(ir: &Ir, f: OpId) -> String {
    prop(ir, f, "passthrough")
        .and_then(|a| a.as_array())
        .unwrap_or(&[])
        .iter()
        .filter_map(|a| a.as_str())
        .filter(|a| PASSTHROUGH.contains(a))
        .map(|a| format!(" {a}"))
        .collect()
}

/// Incoming edges of a block: each predecessor with the values it passes.
type Incoming = FxHashMap<BlockId, Vec<(BlockId, Vec<Value>)>>;

/// A block argument's `phi`, written with a placeholder: (block, argument index, type).
type PendingPhi = (BlockId, usize, String);

/// Translates the `llvm.func` `op` into `m`: a declaration when it has no body, else a
/// definition (and, for `_mlir_ciface_*` with `attrs.packed`, a packed entry to write).
pub(super) fn function(ir: &Ir, op: OpId, attrs: &FnAttrs, m: &mut ModuleText) -> R<()> {
    let name = ir
        .symbol_name(op)
        .map_or_else(|| err(op, "has no name"), Ok)?;
    let fty = prop(ir, op, "function_type")
        .and_then(|a| a.as_type())
        .map_or_else(|| err(op, "has no function_type"), Ok)?;
    let (ret, params) =
        func_sig(fty).map_or_else(|| err(op, format!("bad function type {fty}")), Ok)?;
    let entry = ir.regions_of(op).first().and_then(|r| ir.region_entry(*r));
    let Some(entry) = entry else {
        m.decls.insert(
            name.to_string(),
            format!("declare {ret} @{name}({})", params.join(", ")),
        );
        return Ok(());
    };
    m.defined.push(name.to_string());
    if let Some(inner) = name.strip_prefix("_mlir_ciface_").filter(|_| attrs.packed) {
        m.packed
            .push((inner.to_string(), ret.clone(), params.clone()));
    }
    let private = prop(ir, op, "linkage").is_some_and(
        |l| matches!(l.kind(), AttrKind::Dialect { body, .. } if body.contains("private")),
    );
    let cc = if attrs.kernels.iter().any(|k| k == name) || ir.attr(op, "nvvm.kernel").is_some() {
        "ptx_kernel "
    } else {
        ""
    };
    let blocks = ir.region(ir.regions_of(op)[0]).blocks.clone();
    let mut f = Fn {
        ir,
        vals: FxHashMap::default(),
        out: String::new(),
        decls: &mut m.decls,
    };
    let sig = signature(&mut f, op, entry, &params)?;
    let text = body(&mut f, op, entry, &blocks)?;
    let link = if private { "internal " } else { "" }; // named in profiles
    let extra = passthrough(ir, op);
    let _ = writeln!(
        m.out,
        "define {link}{cc}{ret} @{name}({}){extra} #0 {{\n{text}}}\n",
        sig.join(", ")
    );
    Ok(())
}

/// The parameters of the definition (`ptr noalias %v0`, ...), naming the entry block's
/// arguments in `f`.
fn signature(f: &mut Fn, op: OpId, entry: BlockId, params: &[String]) -> R<Vec<String>> {
    let ir = f.ir;
    let args = ir.block_args(entry).to_vec();
    if args.len() != params.len() {
        return err(op, "entry block arguments do not match the function type");
    }
    // `arg_attrs`: `llvm.noalias` on a pointer parameter.
    let arg_attrs = prop(ir, op, "arg_attrs").and_then(|a| a.as_array());
    let noalias = |k: usize| {
        arg_attrs
            .and_then(|v| v.get(k))
            .and_then(|d| d.as_dict())
            .is_some_and(|d| d.iter().any(|(n, _)| n == "llvm.noalias"))
    };
    let mut sig = vec![];
    for (k, (a, t)) in args.iter().zip(params).enumerate() {
        let n = f.name(*a);
        let na = if noalias(k) && t == "ptr" {
            " noalias"
        } else {
            ""
        };
        sig.push(format!("{t}{na} {n}"));
        f.vals.insert(*a, n);
    }
    Ok(sig)
}

/// The function's body text: every reachable block, with its phis filled.
fn body(f: &mut Fn, op: OpId, entry: BlockId, blocks: &[BlockId]) -> R<String> {
    let ir = f.ir;
    let block_of: FxHashMap<BlockId, String> = blocks
        .iter()
        .enumerate()
        .map(|(i, b)| (*b, format!("bb{i}")))
        .collect();
    let incoming = incoming_edges(ir, blocks);
    // Names of block arguments first (phis may refer to later definitions).
    for b in blocks.iter().skip(1) {
        for a in ir.block_args(*b).to_vec() {
            let n = f.name(a);
            f.vals.insert(a, n);
        }
    }
    let order = rpo(ir, blocks);
    let pending_phis = emit_blocks(f, op, entry, &order, &block_of)?;
    let reachable: FxHashSet<BlockId> = order.iter().copied().collect();
    fill_phis(f, op, pending_phis, &incoming, &reachable, &block_of)
}

/// Incoming edges of every block argument.
fn incoming_edges(ir: &Ir, blocks: &[BlockId]) -> Incoming {
    let mut incoming: Incoming = FxHashMap::default();
    for b in blocks {
        if let Some(t) = ir.terminator(*b) {
            for (k, s) in ir.op(t).successors.iter().enumerate() {
                incoming
                    .entry(*s)
                    .or_default()
                    .push((*b, succ_operands(ir, t, k)));
            }
        }
    }
    incoming
}

/// Writes the blocks in `order` into `f.out`, block arguments as `phi`s with placeholders;
/// returns the phis to fill.
fn emit_blocks(
    f: &mut Fn,
    op: OpId,
    entry: BlockId,
    order: &[BlockId],
    block_of: &FxHashMap<BlockId, String>,
) -> R<Vec<PendingPhi>> {
    let ir = f.ir;
    // All op results get names up front too, for phis fed from later blocks.
    let mut pending_phis = vec![];
    for b in order {
        let label = &block_of[b];
        let _ = writeln!(f.out, "{label}:");
        if *b != entry {
            for (i, a) in ir.block_args(*b).iter().enumerate() {
                let t = f.vty(op, *a)?;
                let n = f.name(*a);
                let _ = writeln!(f.out, "  {n} = phi {t} @@PHI{}_{i}@@", b.index());
                pending_phis.push((*b, i, t));
            }
        }
        for o in ir.block_ops(*b) {
            f.op(o, block_of)?;
        }
    }
    Ok(pending_phis)
}

/// Fills the phis now that every value has its text: the placeholders appear in the order
/// they were written, so one forward pass does it.
fn fill_phis(
    f: &Fn,
    op: OpId,
    pending_phis: Vec<PendingPhi>,
    incoming: &Incoming,
    reachable: &FxHashSet<BlockId>,
    block_of: &FxHashMap<BlockId, String>,
) -> R<String> {
    let mut text = String::with_capacity(f.out.len());
    let mut rest = f.out.as_str();
    for (b, i, _) in pending_phis {
        let mut parts = vec![];
        for (pred, vals) in incoming.get(&b).map(|v| v.as_slice()).unwrap_or(&[]) {
            let Some(v) = vals.get(i) else {
                return err(op, "a branch passes too few block arguments");
            };
            if !reachable.contains(pred) {
                continue; // unreachable: not a predecessor in LLVM's CFG
            }
            let vt = f.get(op, *v)?;
            parts.push(format!("[ {vt}, %{} ]", block_of[pred]));
        }
        let marker = format!("@@PHI{}_{i}@@", b.index());
        let Some(at) = rest.find(&marker) else {
            return err(op, "lost a phi while translating");
        };
        text.push_str(&rest[..at]);
        text.push_str(&parts.join(", "));
        rest = &rest[at + marker.len()..];
    }
    text.push_str(rest);
    Ok(text)
}

/// Successor operands of a branch into successor `k`.
fn succ_operands(ir: &Ir, op: OpId, k: usize) -> Vec<Value> {
    let ops = ir.operands(op);
    match ir.name(op) {
        "llvm.br" => ops.to_vec(),
        "llvm.cond_br" => {
            let seg = ir
                .attr(op, "operandSegmentSizes")
                .and_then(|a| a.as_dense_i64s())
                .unwrap_or_default();
            let nt = seg.get(1).copied().unwrap_or(0) as usize;
            let nf = seg.get(2).copied().unwrap_or(0) as usize;
            if k == 0 {
                ops.get(1..1 + nt).unwrap_or(&[]).to_vec()
            } else {
                ops.get(1 + nt..1 + nt + nf).unwrap_or(&[]).to_vec()
            }
        }
        _ => vec![],
    }
}

/// Blocks in reverse postorder from the entry (so definitions come before uses).
fn rpo(ir: &Ir, blocks: &[BlockId]) -> Vec<BlockId> {
    let index: FxHashMap<BlockId, usize> =
        blocks.iter().enumerate().map(|(i, b)| (*b, i)).collect();
    let mut seen = vec![false; blocks.len()];
    let mut post = vec![];
    if blocks.is_empty() {
        return post;
    }
    let succs = |b: BlockId| -> Vec<BlockId> {
        ir.terminator(b)
            .map(|t| ir.op(t).successors.to_vec())
            .unwrap_or_default()
    };
    let mut stack = vec![(blocks[0], 0usize)];
    seen[0] = true;
    while let Some((b, k)) = stack.pop() {
        let ss = succs(b);
        if k < ss.len() {
            stack.push((b, k + 1));
            if let Some(&j) = index.get(&ss[k]) {
                if !seen[j] {
                    seen[j] = true;
                    stack.push((ss[k], 0));
                }
            }
        } else {
            post.push(b);
        }
    }
    post.reverse();
    post
}
