//! `symbol-dce`: erase private symbols that nothing references.

use ftuner_ir::{traits, AttrKind, Attribute, Ir, OpId};
use ftuner_pass::{define_pass, PassContext, PassFailure};
use rustc_hash::FxHashSet;

fn collect_refs(a: Attribute, out: &mut FxHashSet<String>) {
    match a.kind() {
        AttrKind::SymbolRef { root, nested } => {
            out.insert(root.clone());
            for n in nested {
                out.insert(n.clone());
            }
        }
        AttrKind::Array(v) => v.iter().for_each(|x| collect_refs(*x, out)),
        AttrKind::Dictionary(v) => v.iter().for_each(|(_, x)| collect_refs(*x, out)),
        _ => {}
    }
}

fn referenced(ir: &Ir, top: OpId) -> FxHashSet<String> {
    let mut refs = FxHashSet::default();
    ir.walk_pre(top, &mut |o| {
        let od = ir.op(o);
        collect_refs(od.props, &mut refs);
        collect_refs(od.attrs, &mut refs);
    });
    refs
}

define_pass! {
    /// `symbol-dce`: eliminate dead symbols.
    pub struct SymbolDcePass {
        argument: "symbol-dce",
        name: "SymbolDCE",
        summary: "Eliminate dead symbols",
        description: "Erases symbol operations with private visibility that are not referenced from anywhere in the symbol table.",
        options: SymbolDceOptions {},
        statistics: {
            erased: "num-dce'd" => "Number of symbols DCE'd",
        },
    }
}

impl SymbolDcePass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        op: OpId,
        _: &SymbolDceOptions,
    ) -> Result<(), PassFailure> {
        loop {
            let refs = referenced(cx.ir, op);
            let mut dead = vec![];
            cx.ir.walk_pre(op, &mut |o| {
                let name = cx.ir.name(o);
                if o == op || !cx.ctx.has_trait(name, traits::SYMBOL) {
                    return;
                }
                let parent_is_table = cx
                    .ir
                    .parent_op(o)
                    .is_some_and(|p| cx.ctx.has_trait(cx.ir.name(p), traits::SYMBOL_TABLE));
                let private =
                    cx.ir.attr(o, "sym_visibility").and_then(|a| a.as_str()) == Some("private");
                if parent_is_table && private {
                    if let Some(n) = cx.ir.symbol_name(o) {
                        if !refs.contains(n) {
                            dead.push(o);
                        }
                    }
                }
            });
            if dead.is_empty() {
                return Ok(());
            }
            for d in dead {
                if cx.ir.is_alive(d) {
                    cx.ir.erase_op(d);
                    self.erased += 1;
                }
            }
        }
    }
}
