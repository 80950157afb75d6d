//! Aliases (`#map`, `#set`, `#loc`, `!tuple`): which attributes and types get one, the
//! walk that collects them in MLIR's order (`AliasInitializer`), and their names.

use crate::attrs::{AttrKind, Attribute, LocKind};
use crate::types::{Type, TypeKind};
use rustc_hash::FxHashMap;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum AliasKey {
    Attr(Attribute),
    Type(Type),
}

/// Aliases in effect while printing; in a dry run (`record`), the aliasable values in the
/// order the printer meets them.
#[derive(Default)]
pub struct Aliases {
    pub names: FxHashMap<AliasKey, String>,
    pub record: Option<std::cell::RefCell<Vec<AliasKey>>>,
}

/// The alias name MLIR's builtin dialect gives an attribute or type, if any.
pub fn builtin_alias(k: AliasKey) -> Option<&'static str> {
    match k {
        AliasKey::Attr(a) => match a.kind() {
            AttrKind::AffineMap(_) => Some("map"),
            AttrKind::IntegerSet(_) => Some("set"),
            AttrKind::Location(_) => Some("loc"),
            _ => None,
        },
        AliasKey::Type(t) => match t.kind() {
            TypeKind::Tuple(v) if v.len() > 16 => Some("tuple"),
            _ => None,
        },
    }
}

impl Aliases {
    /// Print through an alias if there is one. Returns true if the caller must not print
    /// the value inline.
    pub(super) fn use_alias(&self, out: &mut String, k: AliasKey) -> bool {
        if let Some(r) = &self.record {
            if builtin_alias(k).is_some() {
                let mut r = r.borrow_mut();
                if !r.contains(&k) {
                    r.push(k);
                }
            }
            return false;
        }
        if let Some(n) = self.names.get(&k) {
            out.push_str(n);
            return true;
        }
        false
    }

    /// Assign names (`#map`, `#map1`, ...) in MLIR's order: by nesting depth, types
    /// first, then by alias name, then by first visit.
    pub fn finish(seen: Vec<(AliasKey, usize)>) -> (Aliases, Vec<(String, AliasKey)>) {
        let mut items: Vec<(usize, bool, &'static str, usize, AliasKey)> = seen
            .iter()
            .enumerate()
            .filter_map(|(i, (k, d))| {
                builtin_alias(*k).map(|n| (*d, matches!(k, AliasKey::Attr(_)), n, i, *k))
            })
            .collect();
        items.sort_by(|a, b| (a.0, a.1, a.2, a.3).cmp(&(b.0, b.1, b.2, b.3)));
        let mut counts: FxHashMap<&str, usize> = FxHashMap::default();
        let mut names = FxHashMap::default();
        let mut order = vec![];
        for (_, is_attr, n, _, k) in items {
            let c = counts.entry(n).or_insert(0);
            let name = if *c == 0 {
                n.to_string()
            } else {
                format!("{n}{c}")
            };
            *c += 1;
            let full = format!("{}{}", if is_attr { '#' } else { '!' }, name);
            names.insert(k, full.clone());
            order.push((full, k));
        }
        (
            Aliases {
                names,
                record: None,
            },
            order,
        )
    }
}

/// Walk the IR as MLIR's `AliasInitializer` does (for each op: regions first, then operand
/// types, result types, then all attributes sorted by name) and assign alias names.
pub fn collect_aliases(
    ir: &crate::ir::Ir,
    top: crate::ir::OpId,
    debuginfo: bool,
) -> (Aliases, Vec<(String, AliasKey)>) {
    let mut c = Collector {
        seen: FxHashMap::default(),
        order: vec![],
    };
    let _ = debuginfo;
    c.op(ir, top);
    let seen = c.order.iter().map(|k| (*k, c.seen[k].1)).collect();
    Aliases::finish(seen)
}

struct Collector {
    /// value -> (requirement it passes to an enclosing alias, own depth)
    seen: FxHashMap<AliasKey, (Option<usize>, usize)>,
    order: Vec<AliasKey>,
}

impl Collector {
    fn op(&mut self, ir: &crate::ir::Ir, op: crate::ir::OpId) {
        crate::parser::with_stack(|| self.op_inner(ir, op))
    }

    fn op_inner(&mut self, ir: &crate::ir::Ir, op: crate::ir::OpId) {
        let o = ir.op(op);
        for r in &o.regions {
            for b in &ir.region(*r).blocks {
                for a in ir.block_args(*b) {
                    self.ty(ir.value_type(*a));
                }
                for child in ir.block_ops(*b) {
                    self.op(ir, child);
                }
            }
        }
        for v in &o.operands {
            self.ty(ir.value_type(*v));
        }
        for v in &o.results {
            self.ty(ir.value_type(*v));
        }
        let mut all: Vec<&(String, Attribute)> = o
            .props
            .as_dict()
            .unwrap_or(&[])
            .iter()
            .chain(o.attrs.as_dict().unwrap_or(&[]))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, a) in all {
            self.attr(*a);
        }
    }

    fn finish(&mut self, k: AliasKey, children: Option<usize>) -> Option<usize> {
        let aliased = builtin_alias(k).is_some();
        let depth = if aliased {
            children.map(|d| d + 1).unwrap_or(0)
        } else {
            0
        };
        let req = if aliased { Some(depth) } else { children };
        self.seen.insert(k, (req, depth));
        req
    }

    fn ty(&mut self, t: Type) -> Option<usize> {
        crate::parser::with_stack(|| self.ty_inner(t))
    }

    fn ty_inner(&mut self, t: Type) -> Option<usize> {
        let k = AliasKey::Type(t);
        if let Some((r, _)) = self.seen.get(&k) {
            return *r;
        }
        self.seen.insert(k, (None, 0));
        self.order.push(k);
        let mut m: Option<usize> = None;
        let mut acc = |x: Option<usize>| {
            if let Some(x) = x {
                m = Some(m.map_or(x, |y: usize| y.max(x)));
            }
        };
        match t.kind() {
            TypeKind::Function { inputs, results } => {
                for x in inputs.iter().chain(results) {
                    acc(self.ty(*x));
                }
            }
            TypeKind::Tuple(v) => {
                for x in v {
                    acc(self.ty(*x));
                }
            }
            TypeKind::RankedTensor { elem, encoding, .. } => {
                acc(self.ty(*elem));
                if let Some(e) = encoding {
                    acc(self.attr(*e));
                }
            }
            TypeKind::UnrankedTensor { elem }
            | TypeKind::Complex(elem)
            | TypeKind::Vector { elem, .. } => acc(self.ty(*elem)),
            TypeKind::MemRef {
                elem,
                layout,
                memory_space,
                ..
            } => {
                acc(self.ty(*elem));
                if let Some(l) = layout {
                    acc(self.attr(*l));
                }
                if let Some(s) = memory_space {
                    acc(self.attr(*s));
                }
            }
            TypeKind::UnrankedMemRef { elem, memory_space } => {
                acc(self.ty(*elem));
                if let Some(s) = memory_space {
                    acc(self.attr(*s));
                }
            }
            _ => {}
        }
        self.finish(k, m)
    }

    fn attr(&mut self, a: Attribute) -> Option<usize> {
        crate::parser::with_stack(|| self.attr_inner(a))
    }

    fn attr_inner(&mut self, a: Attribute) -> Option<usize> {
        let k = AliasKey::Attr(a);
        if let Some((r, _)) = self.seen.get(&k) {
            return *r;
        }
        self.seen.insert(k, (None, 0));
        self.order.push(k);
        let mut m: Option<usize> = None;
        let mut acc = |x: Option<usize>| {
            if let Some(x) = x {
                m = Some(m.map_or(x, |y: usize| y.max(x)));
            }
        };
        match a.kind() {
            AttrKind::Integer { ty, .. } | AttrKind::Float { ty, .. } => acc(self.ty(*ty)),
            AttrKind::String { ty: Some(ty), .. } => acc(self.ty(*ty)),
            AttrKind::Array(v) => {
                for x in v {
                    acc(self.attr(*x));
                }
            }
            AttrKind::Dictionary(v) => {
                for (_, x) in v {
                    acc(self.attr(*x));
                }
            }
            AttrKind::Type(t) => acc(self.ty(*t)),
            AttrKind::DenseArray { elem, .. } => acc(self.ty(*elem)),
            AttrKind::DenseElements { ty, .. }
            | AttrKind::DenseStrings { ty, .. }
            | AttrKind::DenseResource { ty, .. } => acc(self.ty(*ty)),
            AttrKind::Sparse(sp) => acc(self.ty(sp.ty)),
            AttrKind::Location(l) => match l {
                LocKind::Name { child: Some(c), .. } => acc(self.attr(*c)),
                LocKind::CallSite { callee, caller } => {
                    acc(self.attr(*callee));
                    acc(self.attr(*caller));
                }
                LocKind::Fused { metadata, locs } => {
                    if let Some(md) = metadata {
                        acc(self.attr(*md));
                    }
                    for l in locs {
                        acc(self.attr(*l));
                    }
                }
                _ => {}
            },
            _ => {}
        }
        self.finish(k, m)
    }
}
