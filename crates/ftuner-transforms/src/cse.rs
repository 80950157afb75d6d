//! `cse`: eliminate common sub-expressions among side-effect-free ops, scoped by
//! dominance (a value defined in a block is visible in that block after its definition
//! and in the regions of later ops, unless they are isolated from above).

use crate::effects::{is_pure, is_trivially_dead};
use ftuner_ir::{traits, Attribute, Context, Ir, OpId, RegionId, Type, Value};
use ftuner_pass::{define_pass, PassContext, PassFailure};
use rustc_hash::FxHashMap;

#[derive(PartialEq, Eq, Hash, Clone)]
struct Key {
    name: &'static str,
    props: Attribute,
    attrs: Attribute,
    operands: Vec<Value>,
    types: Vec<Type>,
    /// For an op with regions, its whole structure (`ftuner_ir::structure_key`: nested
    /// values numbered, outer ones by identity).
    regions: Vec<usize>,
}

fn key_of(ir: &Ir, op: OpId) -> Option<Key> {
    let o = ir.op(op);
    if o.regions.iter().any(|r| ir.region(*r).blocks.len() > 1) {
        return None;
    }
    let regions = if o.regions.is_empty() {
        vec![]
    } else {
        ftuner_ir::structure_key(ir, op)
    };
    Some(Key {
        name: o.name,
        props: o.props,
        attrs: o.attrs,
        operands: o.operands.to_vec(),
        types: o.results.iter().map(|v| ir.value_type(*v)).collect(),
        regions,
    })
}

impl CsePass {
    fn run_region(
        &mut self,
        ctx: &Context,
        ir: &mut Ir,
        r: RegionId,
        scopes: &mut Vec<FxHashMap<Key, OpId>>,
    ) {
        ftuner_ir::parser::with_stack(|| self.run_region_inner(ctx, ir, r, scopes))
    }

    fn run_region_inner(
        &mut self,
        ctx: &Context,
        ir: &mut Ir,
        r: RegionId,
        scopes: &mut Vec<FxHashMap<Key, OpId>>,
    ) {
        let blocks = ir.region(r).blocks.clone();
        let single = blocks.len() == 1;
        for b in blocks {
            // Values of one block are visible to later ops of the block and their regions;
            // sibling blocks of a CFG region do not share (conservative).
            scopes.push(FxHashMap::default());
            for op in ir.block_ops_vec(b) {
                if !ir.is_alive(op) {
                    continue;
                }
                if is_trivially_dead(ctx, ir, op) {
                    ir.erase_op(op);
                    self.dce += 1;
                    continue;
                }
                let nested = ir.regions_of(op).to_vec();
                if !nested.is_empty() {
                    let isolated = ctx.has_trait(ir.name(op), traits::ISOLATED_FROM_ABOVE);
                    let mut inner = if isolated {
                        vec![]
                    } else {
                        std::mem::take(scopes)
                    };
                    for nr in &nested {
                        self.run_region(ctx, ir, *nr, &mut inner);
                    }
                    if !isolated {
                        *scopes = inner;
                    }
                }
                if ir.results(op).is_empty() || !is_pure(ctx, ir, op) {
                    continue;
                }
                let Some(key) = key_of(ir, op) else { continue };
                let found = scopes.iter().rev().find_map(|s| s.get(&key).copied());
                match found {
                    Some(prev) if ir.is_alive(prev) => {
                        let new = ir.results(prev).to_vec();
                        ir.replace_op(op, &new);
                        self.cse += 1;
                    }
                    _ => {
                        if let Some(s) = scopes.last_mut() {
                            s.insert(key, op);
                        }
                    }
                }
            }
            if !single {
                scopes.pop();
            } else {
                // Keep the single block's scope only while its region is processed.
                scopes.pop();
            }
        }
    }
}

define_pass! {
    /// `cse`: eliminate common sub-expressions.
    pub struct CsePass {
        argument: "cse",
        name: "CSE",
        summary: "Eliminate common sub-expressions",
        description: "Replaces side-effect-free operations equal to a dominating one (same name, attributes, operands, result types and structurally equal regions) by that one's results.",
        options: CseOptions {},
        statistics: {
            cse: "num-cse'd" => "Number of operations CSE'd",
            dce: "num-dce'd" => "Number of operations DCE'd",
        },
    }
}

impl CsePass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        op: OpId,
        _: &CseOptions,
    ) -> Result<(), PassFailure> {
        let regions = cx.ir.regions_of(op).to_vec();
        for r in regions {
            let mut scopes = vec![];
            self.run_region(cx.ctx, cx.ir, r, &mut scopes);
        }
        Ok(())
    }
}
