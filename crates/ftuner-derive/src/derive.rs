//! Explorative derivation: equality saturation with the rules, always under node,
//! iteration and time limits, then extraction priced by the hardware model.
//!
//! What an expression is instantiated as (a contraction, a G2BMM, a dense conv, an
//! eOperator) is decided in [`classify()`]; what it costs, in the cost model
//! ([`Costs`], [`node_cost`], [`price`]); here, the saturation and the extraction.

mod classify;
mod cost;
#[cfg(test)]
mod tests;

pub use classify::{classify, Contraction, DenseConv, G2bmm, Kind};
pub use cost::{g2bmm_by_residue, g2bmm_chunk, g2bmm_cols, g2bmm_plan, node_cost, price, Costs};

use crate::egraph::{add_piece, piece_of, tree, TaAnalysis, TaGraph, TaNode, CHILD};
use crate::rules::{self, RuleRewrite};
use egg::Id;
use ftuner_dialects::ta::{Scope, Src};
use rustc_hash::{FxHashMap, FxHashSet};
use std::time::{Duration, Instant};

/// Which operators a derivation may end in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Whatever the cost model prefers (a conv may stay an implicit-GEMM conv).
    Auto,
    /// Contractions must become matmul / batch_matmul (plus eOperators).
    Matmul,
    /// Strided and dilated convs must become dense convs (unit stride and dilation),
    /// matmuls and eOperators: for targets whose conv kernels handle only dense windows
    /// well (OLLIE's dilated conv → dense conv through reshapes).
    DenseConv,
}

#[derive(Clone, Debug)]
pub struct Options {
    pub iter_limit: usize,
    pub node_limit: usize,
    pub time_limit: Duration,
    pub target: Target,
    /// Guided derivation: summation splitting only along the iterator table.
    pub guided: bool,
    /// Add expression splitting (gathers of compound accesses, im2col) to the rules.
    pub split_expressions: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            iter_limit: 8,
            node_limit: 20_000,
            time_limit: Duration::from_secs(5),
            target: Target::Auto,
            guided: false,
            split_expressions: false,
        }
    }
}

/// The result of a derivation.
#[derive(Debug)]
pub struct Outcome {
    /// The cheapest equivalent expression (nested scopes are the intermediate tensors).
    pub best: Scope,
    pub best_cost: f64,
    pub original_cost: f64,
    pub stop_reason: String,
    pub iterations: usize,
    pub nodes: usize,
    pub classes: usize,
    pub elapsed: Duration,
}

/// Derive `s` (reading inputs of `input_shapes`) and extract the cheapest form.
pub fn derive(
    s: &Scope,
    input_shapes: &[Vec<Option<i64>>],
    costs: &Costs,
    opts: &Options,
) -> Outcome {
    let start = Instant::now();
    let mut eg = TaGraph::new(TaAnalysis {
        input_shapes: input_shapes.to_vec(),
        range_conflicts: 0,
        root: None,
    });
    let root = add_piece(&mut eg, &piece_of(s));
    eg.analysis.root = Some(root);
    let mut rule_set = if opts.guided {
        rules::guided()
    } else {
        rules::all()
    };
    if opts.split_expressions {
        rule_set.push(rules::splitting());
    }
    // Rules bind no pattern variables, so building a rewrite cannot fail; a rule that
    // could not be built is left out rather than stopping the derivation.
    let rewrites: Vec<egg::Rewrite<TaNode, TaAnalysis>> = rule_set
        .into_iter()
        .filter_map(|r| {
            let rw = RuleRewrite {
                apply: r.apply,
                node_limit: opts.node_limit,
                root_only: r.root_only,
            };
            egg::Rewrite::new(r.name, rw.clone(), rw).ok()
        })
        .collect();
    let runner = egg::Runner::default()
        .with_egraph(eg)
        .with_iter_limit(opts.iter_limit)
        .with_node_limit(opts.node_limit)
        .with_time_limit(opts.time_limit)
        .with_scheduler(egg::SimpleScheduler)
        .run(&rewrites);
    let stop_reason = match &runner.stop_reason {
        Some(egg::StopReason::Saturated) => "saturated".to_string(),
        Some(egg::StopReason::IterationLimit(n)) => format!("iteration limit ({n})"),
        Some(egg::StopReason::NodeLimit(n)) => format!("node limit ({n})"),
        Some(egg::StopReason::TimeLimit(t)) => format!("time limit ({t} s)"),
        Some(egg::StopReason::Other(o)) => o.clone(),
        None => "not run".into(),
    };
    let eg = runner.egraph;
    let root = eg.find(root);
    let (best, best_cost) = extract(&eg, root, costs, opts.target);
    let original_cost = price(s, input_shapes, costs, opts.target);
    Outcome {
        best,
        best_cost,
        original_cost,
        stop_reason,
        iterations: runner.iterations.len(),
        nodes: eg.total_number_of_nodes(),
        classes: eg.number_of_classes(),
        elapsed: start.elapsed(),
    }
}

/// Shapes of what a node's accesses read: op inputs, or the node's children's classes.
fn shape_fn<'a>(
    eg: &'a TaGraph,
    input_shapes: &'a [Vec<Option<i64>>],
    kids: &'a [Id],
) -> impl Fn(&Src) -> Option<Vec<Option<i64>>> + 'a {
    move |src: &Src| match src {
        Src::Input(i) if *i >= CHILD => kids.get(*i - CHILD).map(|k| eg[*k].data.shape.clone()),
        Src::Input(i) => input_shapes.get(*i).cloned(),
        Src::Scope(s) => Some(
            s.trav
                .iter()
                .map(|i| i.static_range().map(|(l, h)| h - l))
                .collect(),
        ),
    }
}

/// DAG-aware greedy extraction: each class's best node minimises the summed cost of the
/// distinct classes below it (a class shared by two parents is paid once). A node is only
/// chosen when none of its children's choices contains its own class, so the result is
/// acyclic.
fn extract(eg: &TaGraph, root: Id, costs: &Costs, target: Target) -> (Scope, f64) {
    let input_shapes = &eg.analysis.input_shapes;
    // Own cost of every node.
    let mut own: FxHashMap<(Id, usize), f64> = FxHashMap::default();
    for c in eg.classes() {
        for (j, n) in c.nodes.iter().enumerate() {
            let shape = shape_fn(eg, input_shapes, &n.kids);
            own.insert((c.id, j), node_cost(&n.head, &shape, costs, target, false));
        }
    }
    // best[class] = (total, node index, classes below including itself with their cost).
    let mut best: FxHashMap<Id, (f64, usize, FxHashMap<Id, f64>)> = FxHashMap::default();
    for _round in 0..64 {
        let mut changed = false;
        for c in eg.classes() {
            for (j, n) in c.nodes.iter().enumerate() {
                let mut set: FxHashMap<Id, f64> = FxHashMap::default();
                let mut ok = true;
                for k in &n.kids {
                    let k = eg.find(*k);
                    match best.get(&k) {
                        Some((_, _, s)) if !s.contains_key(&c.id) => {
                            set.extend(s.iter().map(|(a, b)| (*a, *b)));
                        }
                        _ => {
                            ok = false;
                            break;
                        }
                    }
                }
                if !ok {
                    continue;
                }
                let o = own[&(c.id, j)];
                set.insert(c.id, o);
                let total: f64 = set.values().sum();
                if !total.is_finite() {
                    continue;
                }
                let better = best
                    .get(&c.id)
                    .is_none_or(|(t, _, _)| total < *t * (1.0 - 1e-9));
                if better {
                    best.insert(c.id, (total, j, set));
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let Some((total, j, _)) = best.get(&root) else {
        // Nothing finite (e.g. target=matmul and no matmul form found): the original.
        let n = &eg[root].nodes[0];
        return (tree(eg, n, &|id| eg[id].nodes[0].clone()), f64::INFINITY);
    };
    let pick = |id: Id| -> TaNode {
        let id = eg.find(id);
        let j = best.get(&id).map_or(0, |b| b.1);
        eg[id].nodes[j].clone()
    };
    let node = eg[root].nodes[*j].clone();
    let mut seen = FxHashSet::default();
    seen.insert(root);
    (tree(eg, &node, &pick), *total)
}
