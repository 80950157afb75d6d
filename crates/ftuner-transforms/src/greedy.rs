//! The greedy pattern-rewrite driver: folds ops (with the dialects' folders), applies
//! canonicalization patterns and erases dead ops until a fixed point or an iteration
//! limit, as MLIR's `applyPatternsGreedily`.

use crate::effects::is_trivially_dead;
use ftuner_dialects::ops;
use ftuner_ir::dialect::FoldResult;
use ftuner_ir::{traits, Attribute, Context, Ir, OpId, OpSpec};

#[derive(Clone, Copy, Debug)]
pub struct GreedyConfig {
    pub max_iterations: i64,
    pub max_num_rewrites: i64,
    pub top_down: bool,
    pub fold: bool,
    /// Erase blocks no branch from the entry reaches (MLIR's `simplifyRegions`, its
    /// unreachable-block part).
    pub region_simplify: bool,
}

impl Default for GreedyConfig {
    fn default() -> Self {
        GreedyConfig {
            max_iterations: 10,
            max_num_rewrites: -1,
            top_down: true,
            fold: true,
            region_simplify: true,
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
pub struct GreedyStats {
    pub iterations: u64,
    pub folded: u64,
    pub patterns: u64,
    pub erased: u64,
    pub converged: bool,
}

fn materialize(
    ir: &mut Ir,
    ctx: &Context,
    before: OpId,
    value: Attribute,
    ty: ftuner_ir::Type,
) -> Option<ftuner_ir::Value> {
    let loc = ir.loc(before);
    let dialect = ir.name(before).split('.').next().unwrap_or("");
    let mat = ctx
        .registry
        .materializers
        .get(dialect)
        .or_else(|| ctx.registry.materializers.get("arith"))?;
    let c = mat(ir, value, ty, loc)?;
    ir.insert_before(before, c);
    Some(ir.result(c, 0))
}

/// Try to fold `op`; returns true if the IR changed.
pub fn try_fold(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let name = ir.name(op);
    let Some(def) = ctx.op_def(name) else {
        return false;
    };
    if def.has(traits::CONSTANT_LIKE) || (def.fold.is_none() && def.scalar_eval.is_none()) {
        return false;
    }
    let consts: Vec<Option<Attribute>> = ir
        .operands(op)
        .iter()
        .map(|v| ftuner_dialects::cf::constant_of(ctx, ir, *v))
        .collect();
    let folded = match (def.fold, def.scalar_eval) {
        (Some(fold), _) => fold(ir, op, &consts),
        // The op's ScalarEval interface: its value on constant operands.
        (None, Some(eval)) => ftuner_dialects::util::fold_scalar_eval(ir, op, &consts, eval),
        (None, None) => None,
    };
    let Some(results) = folded else {
        return false;
    };
    if results.is_empty() {
        return true; // folded in place
    }
    let old = ir.results(op).to_vec();
    if results.len() != old.len() {
        return false;
    }
    let mut new = vec![];
    for (r, o) in results.iter().zip(&old) {
        match r {
            FoldResult::Value(v) => {
                if ir.value_type(*v) != ir.value_type(*o) {
                    return false;
                }
                new.push(*v)
            }
            FoldResult::Attr(a) => {
                let ty = ir.value_type(*o);
                match materialize(ir, ctx, op, *a, ty) {
                    Some(v) => new.push(v),
                    None => return false,
                }
            }
        }
    }
    if new == old {
        return false;
    }
    ir.replace_op(op, &new);
    true
}

/// Run folding, patterns and dead-code removal on everything nested in `root`.
pub fn apply_greedily(ctx: &Context, ir: &mut Ir, root: OpId, cfg: GreedyConfig) -> GreedyStats {
    let mut stats = GreedyStats::default();
    let mut rewrites: i64 = 0;
    loop {
        if cfg.max_iterations >= 0 && stats.iterations as i64 >= cfg.max_iterations {
            return stats;
        }
        stats.iterations += 1;
        let mut changed = false;
        let mut ops = ir.collect_post(root);
        ops.retain(|o| *o != root);
        if cfg.top_down {
            ops = ir.collect_pre(root);
            ops.retain(|o| *o != root);
        }
        for op in ops {
            if !ir.is_alive(op) || ir.op(op).parent.is_none() {
                continue;
            }
            if cfg.max_num_rewrites >= 0 && rewrites >= cfg.max_num_rewrites {
                return stats;
            }
            if is_trivially_dead(ctx, ir, op) {
                ir.erase_op(op);
                stats.erased += 1;
                rewrites += 1;
                changed = true;
                continue;
            }
            if cfg.fold && try_fold(ctx, ir, op) {
                stats.folded += 1;
                rewrites += 1;
                changed = true;
                continue;
            }
            let pats = ctx
                .op_def(ir.name(op))
                .map(|d| d.canonicalize)
                .unwrap_or(&[]);
            for p in pats {
                if p(ctx, ir, op) {
                    stats.patterns += 1;
                    rewrites += 1;
                    changed = true;
                    break;
                }
            }
        }
        // Ops made dead by later rewrites in this sweep (e.g. producers) go too.
        for op in ir.collect_post(root) {
            if op != root
                && ir.is_alive(op)
                && ir.op(op).parent.is_some()
                && is_trivially_dead(ctx, ir, op)
            {
                ir.erase_op(op);
                stats.erased += 1;
                changed = true;
            }
        }
        if cfg.region_simplify {
            let n = erase_unreachable_blocks(ir, root);
            stats.erased += n;
            changed |= n > 0;
        }
        if !changed {
            stats.converged = true;
            return stats;
        }
    }
}

/// Erase the blocks of every multi-block region under `root` that no chain of branches
/// from the region's entry reaches; returns how many ops went with them.
fn erase_unreachable_blocks(ir: &mut Ir, root: OpId) -> u64 {
    let mut regions = vec![];
    ir.walk_pre(root, &mut |o| {
        for r in ir.regions_of(o) {
            if ir.region(*r).blocks.len() > 1 {
                regions.push(*r);
            }
        }
    });
    let mut erased = 0;
    for r in regions {
        let blocks = ir.region(r).blocks.clone();
        let mut seen = vec![blocks[0]];
        let mut stack = vec![blocks[0]];
        while let Some(b) = stack.pop() {
            let Some(t) = ir.terminator(b) else { continue };
            for s in ir.op(t).successors.clone() {
                if !seen.contains(&s) {
                    seen.push(s);
                    stack.push(s);
                }
            }
        }
        for b in blocks {
            if !seen.contains(&b) {
                erased += ir.block_ops(b).count() as u64;
                ir.erase_block(b);
            }
        }
    }
    erased
}

/// Create a constant op (helper for patterns).
pub fn make_constant(ir: &mut Ir, loc: Attribute, value: Attribute, ty: ftuner_ir::Type) -> OpId {
    ir.create_op(
        OpSpec::new(ftuner_ir::intern_name(ops::arith::ConstantOp::NAME), loc)
            .prop("value", value)
            .results([ty]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `cf.assert` is left after canonicalizing a function that asserts the value
    /// of a `test.constant` op, under `ctx`.
    fn assert_left(ctx: &Context) -> bool {
        let src = r#"func.func @f() {
  %t = "test.constant"() <{value = true}> : () -> i1
  cf.assert %t, "never"
  return
}"#;
        let mut m = ftuner_ir::parser::parse_module(ctx, src, "t.mlir").unwrap();
        apply_greedily(ctx, &mut m.ir, m.top, GreedyConfig::default());
        m.ir.collect_post(m.top)
            .iter()
            .any(|o| m.ir.name(*o) == "cf.assert")
    }

    /// The dialects' patterns read an op's traits from the context the driver is given,
    /// not from a registry of their own: a constant-like op that a compiler embedding our
    /// passes registers (a copy of `arith.constant`'s definition, named `test.constant`)
    /// is a constant to them, and `cf.assert` of its `true` goes; left unregistered, the
    /// op is opaque and the assert stays.
    #[test]
    fn patterns_read_traits_from_the_context() {
        let mut opaque = ftuner_dialects::context();
        opaque.allow_unregistered = true;
        assert!(assert_left(&opaque));
        let mut registry = ftuner_dialects::registry();
        let mut def = registry.op("arith.constant").unwrap().clone();
        def.name = "test.constant";
        (def.parse, def.print, def.verify, def.fold) = (None, None, None, None);
        registry.register_dialect("test");
        registry.register_op(def);
        let ctx = Context {
            registry,
            allow_unregistered: false,
        };
        assert!(!assert_left(&ctx));
    }
}
