//! Derivation rules (OLLIE §4), grouped by topic. See README.md for the rule policy.
//!
//! Each rule is a function from one e-node (a scope, with its children's e-classes) to
//! equivalent expressions ([`Piece`]s); `egg` runs them to saturation (or a limit) through
//! [`RuleRewrite`], which adds each result and unions it with the node's class. Rules that
//! change a child change how the parent reads it, so every rule keeps the parent's
//! traversal (an e-class is one tensor).

//!
//! The rules by topic: [`summation`] (summation splitting, unit summations),
//! [`substitution`] (variable, shift and division substitution), [`boundary`]
//! (tightening and relaxing), [`traversal`] (traversal splitting and merging) and
//! [`expression`] (expression splitting); [`helpers`] holds what they share.

mod boundary;
mod expression;
mod helpers;
mod substitution;
mod summation;
#[cfg(test)]
mod tests;
mod traversal;

use boundary::{relax, tighten};
use expression::split_access;
use substitution::{div_subst, shift, var_subst};
use summation::{sum_split, sum_split_guided, unit_sum};
use traversal::{trav_merge, trav_split};

use crate::egraph::{add_piece, Piece, TaGraph, TaNode};
use egg::{Id, Searcher};

/// A rule: a name, a topic, and the function producing equivalent expressions of a node.
pub struct Rule {
    pub name: &'static str,
    pub topic: &'static str,
    pub apply: fn(&TaGraph, &TaNode) -> Vec<Piece>,
    /// Applied to the root class only (the expression being derived): a rule whose
    /// results every other rule would derive again, as a whole new family.
    pub root_only: bool,
}

/// Expression splitting (opt-in: it multiplies the e-graph by about 2.5 and finds hybrid
/// im2col forms the model rarely prefers).
pub fn splitting() -> Rule {
    Rule {
        name: "expression-splitting",
        topic: "inter-expression",
        apply: split_access,
        root_only: false,
    }
}

/// The rules of guided derivation: summation splitting only along the iterator table
/// ([`sum_split_guided`]), the rest as in [`all`].
pub fn guided() -> Vec<Rule> {
    let mut v = all();
    v[0] = Rule {
        name: "summation-splitting-guided",
        topic: "intra-expression",
        apply: sum_split_guided,
        root_only: false,
    };
    v
}

/// Every rule, by topic.
pub fn all() -> Vec<Rule> {
    vec![
        Rule {
            name: "summation-splitting",
            topic: "intra-expression",
            apply: sum_split,
            root_only: false,
        },
        Rule {
            name: "variable-substitution",
            topic: "intra-expression",
            apply: var_subst,
            root_only: false,
        },
        Rule {
            name: "boundary-tightening",
            topic: "intra-expression",
            apply: tighten,
            root_only: false,
        },
        Rule {
            name: "boundary-relaxing",
            topic: "intra-expression",
            apply: relax,
            root_only: false,
        },
        Rule {
            name: "traversal-shift",
            topic: "intra-expression",
            apply: shift,
            root_only: false,
        },
        Rule {
            name: "division-substitution",
            topic: "intra-expression",
            apply: div_subst,
            root_only: false,
        },
        Rule {
            name: "unit-summation",
            topic: "intra-expression",
            apply: unit_sum,
            root_only: false,
        },
        Rule {
            name: "traversal-merging",
            topic: "intra-expression",
            apply: trav_merge,
            root_only: false,
        },
        Rule {
            name: "traversal-splitting",
            topic: "intra-expression",
            apply: trav_split,
            root_only: true,
        },
    ]
}

/// A rule as an `egg` rewrite: searches every class with a node the rule changes, applies
/// it to each node, and stops adding once the e-graph holds `node_limit` nodes.
#[derive(Clone)]
pub struct RuleRewrite {
    pub apply: fn(&TaGraph, &TaNode) -> Vec<Piece>,
    pub node_limit: usize,
    pub root_only: bool,
}

impl Searcher<TaNode, crate::egraph::TaAnalysis> for RuleRewrite {
    fn search_eclass_with_limit(
        &self,
        egraph: &TaGraph,
        eclass: Id,
        limit: usize,
    ) -> Option<egg::SearchMatches<'_, TaNode>> {
        if limit == 0
            || (self.root_only
                && egraph.analysis.root.map(|r| egraph.find(r)) != Some(egraph.find(eclass)))
        {
            return None;
        }
        let hit = egraph[eclass]
            .nodes
            .iter()
            .any(|n| !(self.apply)(egraph, n).is_empty());
        hit.then(|| egg::SearchMatches {
            eclass,
            substs: vec![egg::Subst::default()],
            ast: None,
        })
    }
    fn vars(&self) -> Vec<egg::Var> {
        vec![]
    }
}

impl egg::Applier<TaNode, crate::egraph::TaAnalysis> for RuleRewrite {
    fn apply_one(
        &self,
        egraph: &mut TaGraph,
        eclass: Id,
        _subst: &egg::Subst,
        _ast: Option<&egg::PatternAst<TaNode>>,
        _rule: egg::Symbol,
    ) -> Vec<Id> {
        let nodes = egraph[eclass].nodes.clone();
        let mut changed = vec![];
        for n in nodes {
            for p in (self.apply)(egraph, &n) {
                if egraph.total_number_of_nodes() >= self.node_limit {
                    return changed;
                }
                let id = add_piece(egraph, &p);
                if egraph.union(eclass, id) {
                    changed.push(id);
                }
            }
        }
        changed
    }
}
