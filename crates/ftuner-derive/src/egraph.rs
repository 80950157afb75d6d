//! The e-graph of tensor-algebra expressions: the `egg` language, its analysis, and
//! conversion between expression trees and e-nodes.
//!
//! An e-node is one scope (`L<...> Sum<...> { body }`) whose nested scopes are its
//! children: in the node's body, input `$CHILD+k` is child `k`. Iterators are renamed
//! canonically (`i0, i1, ...` for the traversal, `k0, k1, ...` for the summation) before a
//! node is added, so alpha-equivalent scopes are one e-node (the hash-cons is
//! rename-invariant). An e-class is a set of expressions of one tensor: every member
//! traverses the same iterator ranges (the analysis checks it).

use egg::{Id, Language};
use ftuner_dialects::ta::{Bound, Scope, Src, Term};
use std::hash::{Hash, Hasher};
use std::rc::Rc;

/// Input numbers at and above this refer to a node's children.
pub const CHILD: usize = 1 << 20;

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaNode {
    pub head: Rc<Scope>,
    pub kids: Vec<Id>,
}

impl Language for TaNode {
    type Discriminant = Rc<Scope>;
    fn discriminant(&self) -> Rc<Scope> {
        self.head.clone()
    }
    fn matches(&self, other: &Self) -> bool {
        self.head == other.head && self.kids.len() == other.kids.len()
    }
    fn children(&self) -> &[Id] {
        &self.kids
    }
    fn children_mut(&mut self) -> &mut [Id] {
        &mut self.kids
    }
}

impl std::fmt::Display for TaNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&ftuner_dialects::ta::expr::print_scope(&self.head, &|i| {
            if i >= CHILD {
                format!("#{}", i - CHILD)
            } else {
                format!("${i}")
            }
        }))
    }
}

/// What the analysis knows of an e-class.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassData {
    /// The traversal ranges (`lo`, `hi`) every member shares.
    pub ranges: Vec<(i64, Bound)>,
    /// Extents (None where dynamic): the tensor's shape.
    pub shape: Vec<Option<i64>>,
    /// A hash of the first member and its children's fingerprints: equal for
    /// alpha-equivalent expressions.
    pub fingerprint: u64,
}

/// The analysis: input shapes (for boundary rules) and the per-class data.
#[derive(Default)]
pub struct TaAnalysis {
    /// Static shapes of the op's inputs (`DYNAMIC` entries as None).
    pub input_shapes: Vec<Vec<Option<i64>>>,
    /// Set when two merged classes disagreed on their ranges (a rule bug).
    pub range_conflicts: usize,
    /// The class of the expression being derived (for root-only rules).
    pub root: Option<Id>,
}

pub type TaGraph = egg::EGraph<TaNode, TaAnalysis>;

impl egg::Analysis<TaNode> for TaAnalysis {
    type Data = ClassData;
    fn make(egraph: &mut TaGraph, enode: &TaNode, _id: Id) -> ClassData {
        let mut h = rustc_hash::FxHasher::default();
        enode.head.hash(&mut h);
        for k in &enode.kids {
            egraph[*k].data.fingerprint.hash(&mut h);
        }
        ClassData {
            ranges: enode
                .head
                .trav
                .iter()
                .map(|i| (i.lo, i.hi.clone()))
                .collect(),
            shape: enode
                .head
                .trav
                .iter()
                .map(|i| i.static_range().map(|(l, h)| h - l))
                .collect(),
            fingerprint: h.finish(),
        }
    }
    fn merge(&mut self, a: &mut ClassData, b: ClassData) -> egg::DidMerge {
        if a.ranges != b.ranges {
            self.range_conflicts += 1;
        }
        let fp = a.fingerprint.min(b.fingerprint);
        let changed = fp != a.fingerprint;
        a.fingerprint = fp;
        egg::DidMerge(changed, b.fingerprint != fp)
    }
}

/// Rename iterators canonically (`i*` traversal, `k*` summation).
pub fn canonical(s: &Scope) -> Scope {
    let mut map = rustc_hash::FxHashMap::default();
    for (k, i) in s.trav.iter().enumerate() {
        map.insert(i.name.clone(), format!("i{k}"));
    }
    for (k, i) in s.sum.iter().enumerate() {
        map.insert(i.name.clone(), format!("k{k}"));
    }
    let f = |v: &str| map.get(v).cloned().unwrap_or_else(|| v.to_string());
    let mut out = s.clone();
    for i in out.trav.iter_mut().chain(out.sum.iter_mut()) {
        i.name = f(&i.name);
    }
    out.body = s.body.map_idx(&|e| e.rename(&f));
    out
}

/// A new expression: a scope whose child inputs (`$CHILD+k`) are pieces, existing
/// e-classes or new scopes.
#[derive(Clone, Debug)]
pub enum Piece {
    Class(Id),
    New(Scope, Vec<Piece>),
}

/// Add a piece; returns its class.
pub fn add_piece(eg: &mut TaGraph, p: &Piece) -> Id {
    match p {
        Piece::Class(id) => *id,
        Piece::New(s, kids) => {
            let kids: Vec<Id> = kids.iter().map(|k| add_piece(eg, k)).collect();
            eg.add(TaNode {
                head: Rc::new(canonical(s)),
                kids,
            })
        }
    }
}

/// A closed expression tree as a piece: nested scopes become children.
pub fn piece_of(s: &Scope) -> Piece {
    let mut kids = vec![];
    fn go(t: &Term, kids: &mut Vec<Piece>) -> Term {
        match t {
            Term::Access(Src::Scope(inner), idx) => {
                kids.push(piece_of(inner));
                Term::Access(Src::Input(CHILD + kids.len() - 1), idx.clone())
            }
            Term::Access(..) | Term::Const(_) => t.clone(),
            Term::Bin(o, a, b) => Term::Bin(*o, Box::new(go(a, kids)), Box::new(go(b, kids))),
        }
    }
    let body = go(&s.body, &mut kids);
    Piece::New(
        Scope {
            trav: s.trav.clone(),
            sum: s.sum.clone(),
            body,
        },
        kids,
    )
}

/// The expression tree of a node with its children resolved by `pick`.
pub fn tree(eg: &TaGraph, node: &TaNode, pick: &dyn Fn(Id) -> TaNode) -> Scope {
    let kids: Vec<Scope> = node
        .kids
        .iter()
        .map(|k| tree(eg, &pick(eg.find(*k)), pick))
        .collect();
    fn go(t: &Term, kids: &[Scope]) -> Term {
        match t {
            Term::Access(Src::Input(i), idx) if *i >= CHILD => {
                Term::Access(Src::Scope(Box::new(kids[*i - CHILD].clone())), idx.clone())
            }
            Term::Access(..) | Term::Const(_) => t.clone(),
            Term::Bin(o, a, b) => Term::Bin(*o, Box::new(go(a, kids)), Box::new(go(b, kids))),
        }
    }
    Scope {
        trav: node.head.trav.clone(),
        sum: node.head.sum.clone(),
        body: go(&node.head.body, &kids),
    }
}
