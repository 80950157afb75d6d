//! The verifier, in two stages as in naga: structure first (so that later code may index
//! without checks), then each op's spec and hand-written verifier. All errors are
//! collected; messages use MLIR's wording.

use crate::diag::Diagnostic;
use crate::dialect::{traits, Arity, Context, OpDef};
use crate::ir::{BlockId, Ir, OpId, RegionId, Value, ValueDef};
use rustc_hash::FxHashMap;

fn op_err(ir: &Ir, op: OpId, msg: impl AsRef<str>) -> Diagnostic {
    Diagnostic::error(ir.loc(op), format!("'{}' op {}", ir.name(op), msg.as_ref()))
}

/// Verify `top` and everything nested in it. Returns all errors found (empty if valid).
pub fn verify(ctx: &Context, ir: &Ir, top: OpId) -> Vec<Diagnostic> {
    let mut errs = vec![];
    verify_structure(ctx, ir, top, &mut errs);
    if !errs.is_empty() {
        return errs;
    }
    for op in ir.collect_post(top) {
        if let Some(def) = ctx.op_def(ir.name(op)) {
            if let Err(e) = verify_spec(ir, op, def) {
                errs.push(e);
                continue;
            }
            if let Some(v) = def.verify {
                if let Err(m) = v(ctx, ir, op) {
                    errs.push(op_err(ir, op, m));
                }
            }
        }
    }
    errs
}

// ----- stage 1: structure -------------------------------------------------------------

/// Position of every op in its block (indexed by op), so dominance inside a block is O(1).
fn block_positions(ir: &Ir, top: OpId) -> Vec<u32> {
    let mut pos = vec![0u32; ir.ops.len()];
    ir.walk_pre(top, &mut |o| {
        for r in ir.regions_of(o) {
            for b in &ir.region(*r).blocks {
                for (i, c) in ir.block_ops(*b).enumerate() {
                    pos[c.index()] = i as u32;
                }
            }
        }
    });
    pos
}

fn verify_structure(ctx: &Context, ir: &Ir, top: OpId, errs: &mut Vec<Diagnostic>) {
    let pos = block_positions(ir, top);
    DOMS.with(|d| d.borrow_mut().clear());
    let mut stack = vec![top];
    while let Some(op) = stack.pop() {
        let o = ir.op(op);
        if !ctx.allow_unregistered && ctx.op_def(o.name).is_none() {
            errs.push(op_err(
                ir,
                op,
                "is unregistered: the dialect does not allow unknown operations",
            ));
        }
        for (i, v) in o.operands.iter().enumerate() {
            if v.index() >= ir.values.len() {
                errs.push(op_err(ir, op, format!("operand #{i} is not a valid value")));
                continue;
            }
            if let Err(m) = check_dominance(ctx, ir, &pos, op, *v) {
                errs.push(op_err(ir, op, format!("operand #{i} {m}")));
                break;
            }
        }
        let def = ctx.op_def(o.name);
        if let Some(d) = def {
            if !d.variadic_regions && o.regions.len() != d.num_regions {
                errs.push(op_err(
                    ir,
                    op,
                    format!("requires {} regions", d.num_regions),
                ));
            }
            if let Some(n) = d.num_successors {
                if o.successors.len() != n {
                    errs.push(op_err(
                        ir,
                        op,
                        format!("requires {n} successors but found {}", o.successors.len()),
                    ));
                }
            }
        }
        for s in &o.successors {
            let same_region = o.parent.and_then(|b| ir.block(b).parent) == ir.block(*s).parent;
            if !same_region {
                errs.push(op_err(ir, op, "has a successor in a different region"));
            }
        }
        if def.is_some_and(|d| d.has(traits::SYMBOL_TABLE)) {
            check_symbol_table(ir, op, errs);
        }
        for r in &o.regions {
            verify_region(ctx, ir, op, *r, def, errs);
            for b in &ir.region(*r).blocks {
                for child in ir.block_ops(*b) {
                    stack.push(child);
                }
            }
        }
    }
}

fn verify_region(
    ctx: &Context,
    ir: &Ir,
    op: OpId,
    r: RegionId,
    def: Option<&OpDef>,
    errs: &mut Vec<Diagnostic>,
) {
    let blocks = &ir.region(r).blocks;
    if def.is_some_and(|d| d.has(traits::SINGLE_BLOCK)) && blocks.len() > 1 {
        errs.push(op_err(ir, op, "expects region to have 0 or 1 blocks"));
    }
    let needs_term =
        def.is_some_and(|d| !d.has(traits::NO_TERMINATOR) && !d.has(traits::GRAPH_REGION));
    for (bi, b) in blocks.iter().enumerate() {
        let ops: Vec<OpId> = ir.block_ops(*b).collect();
        for (i, o) in ops.iter().enumerate() {
            let is_term = ctx.has_trait(ir.name(*o), traits::TERMINATOR);
            if is_term && i + 1 != ops.len() {
                errs.push(op_err(
                    ir,
                    *o,
                    "must be the last operation in the parent block",
                ));
            }
        }
        if needs_term {
            match ops.last() {
                None => {
                    errs.push(Diagnostic::error(
                        ir.loc(op),
                        "empty block: expect at least a terminator",
                    ));
                }
                Some(last) => {
                    let lname = ir.name(*last);
                    if ctx.op_def(lname).is_some() && !ctx.has_trait(lname, traits::TERMINATOR) {
                        errs.push(
                            Diagnostic::error(
                                ir.loc(*last),
                                "block with no terminator, has ".to_string()
                                    + &crate::printer::print_op_standalone(ir, ctx, *last, true),
                            )
                            .with_note(ir.loc(op), "see current operation"),
                        );
                    }
                }
            }
        }
        if bi > 0 && blocks.len() > 1 {
            // Only the entry block may have no predecessors implicitly; others are fine too.
        }
    }
}

fn check_symbol_table(ir: &Ir, op: OpId, errs: &mut Vec<Diagnostic>) {
    let mut seen: FxHashMap<&str, OpId> = FxHashMap::default();
    for r in ir.regions_of(op) {
        for b in &ir.region(*r).blocks {
            for o in ir.block_ops(*b) {
                if let Some(n) = ir.symbol_name(o) {
                    if let Some(prev) = seen.insert(n, o) {
                        errs.push(
                            Diagnostic::error(
                                ir.loc(o),
                                format!("redefinition of symbol named '{n}'"),
                            )
                            .with_note(ir.loc(prev), "see existing symbol definition here"),
                        );
                    }
                }
            }
        }
    }
}

/// The ancestor of `op` (or `op` itself) whose parent block is `b`.
fn ancestor_in_block(ir: &Ir, mut op: OpId, b: BlockId) -> Option<OpId> {
    loop {
        let pb = ir.op(op).parent?;
        if pb == b {
            return Some(op);
        }
        op = ir.block_parent_op(pb)?;
    }
}

fn position(pos: &[u32], op: OpId) -> u32 {
    pos.get(op.index()).copied().unwrap_or(0)
}

fn check_dominance(
    ctx: &Context,
    ir: &Ir,
    pos: &[u32],
    user: OpId,
    v: Value,
) -> Result<(), String> {
    let def_block = match ir.value(v).def {
        ValueDef::OpResult(d, _) => {
            if !ir.is_alive(d) {
                return Err("refers to an erased operation".into());
            }
            match ir.op(d).parent {
                Some(b) => b,
                None => return Err("does not dominate this use".into()),
            }
        }
        ValueDef::BlockArg(b, _) => b,
    };
    let Some(anc) = ancestor_in_block(ir, user, def_block) else {
        // Not in a nested region of the defining block: maybe a sibling block.
        let Some(user_block) = ir.op(user).parent else {
            return Err("does not dominate this use".into());
        };
        // Find the ancestor of the user in the region of the def block.
        let def_region = ir.block(def_block).parent;
        let mut cur = user;
        let mut ub = user_block;
        loop {
            if ir.block(ub).parent == def_region {
                break;
            }
            match ir.block_parent_op(ub) {
                Some(p) => {
                    cur = p;
                    match ir.op(p).parent {
                        Some(b) => ub = b,
                        None => return Err("does not dominate this use".into()),
                    }
                }
                None => return Err("does not dominate this use".into()),
            }
        }
        let _ = cur;
        let Some(region) = def_region else {
            return Err("does not dominate this use".into());
        };
        if isolated_between(ctx, ir, user, def_block) {
            return Err("is defined outside the isolated region of its use".into());
        }
        if block_dominates(ir, region, def_block, ub) {
            return Ok(());
        }
        return Err("does not dominate this use".into());
    };
    if isolated_between(ctx, ir, user, def_block) {
        return Err("is defined outside the isolated region of its use".into());
    }
    if let ValueDef::OpResult(d, _) = ir.value(v).def {
        if d == anc {
            return Err("does not dominate this use".into());
        }
        let parent_op = ir.block_parent_op(def_block);
        let graph = parent_op.is_some_and(|p| {
            ctx.has_trait(ir.name(p), traits::GRAPH_REGION)
                || ctx.has_trait(ir.name(p), traits::NO_TERMINATOR)
                    && ir.name(p) == "builtin.module"
        });
        if !graph && position(pos, d) > position(pos, anc) {
            return Err("does not dominate this use".into());
        }
    }
    Ok(())
}

fn isolated_between(ctx: &Context, ir: &Ir, user: OpId, def_block: BlockId) -> bool {
    let mut b = match ir.op(user).parent {
        Some(b) => b,
        None => return false,
    };
    loop {
        if b == def_block {
            return false;
        }
        let Some(p) = ir.block_parent_op(b) else {
            return false;
        };
        if ir
            .block(def_block)
            .parent
            .is_some_and(|r| ir.region(r).parent == Some(p))
        {
            // def block is in a region of p: fine unless p isolates... regions of p
            // itself see values of p's own regions.
            return false;
        }
        if ctx.has_trait(ir.name(p), traits::ISOLATED_FROM_ABOVE) {
            return true;
        }
        match ir.op(p).parent {
            Some(pb) => b = pb,
            None => return false,
        }
    }
}

/// Dominator tree of one region's CFG: immediate dominators by the Cooper-Harvey-Kennedy
/// iteration over reverse postorder, then DFS intervals so a query is O(1).
struct DomTree {
    index: FxHashMap<BlockId, usize>,
    /// DFS entry/exit numbers in the dominator tree; None for unreachable blocks.
    interval: Vec<Option<(u32, u32)>>,
}

impl DomTree {
    fn new(ir: &Ir, region: RegionId) -> DomTree {
        let blocks = &ir.region(region).blocks;
        let n = blocks.len();
        let index: FxHashMap<BlockId, usize> =
            blocks.iter().enumerate().map(|(i, b)| (*b, i)).collect();
        let mut succs: Vec<Vec<usize>> = vec![vec![]; n];
        for (i, bl) in blocks.iter().enumerate() {
            if let Some(t) = ir.terminator(*bl) {
                for s in &ir.op(t).successors {
                    if let Some(&j) = index.get(s) {
                        succs[i].push(j);
                    }
                }
            }
        }
        // Postorder from the entry (iterative DFS).
        let mut post = vec![];
        let mut seen = vec![false; n];
        if n > 0 {
            let mut stack = vec![(0usize, 0usize)];
            seen[0] = true;
            while let Some((b, k)) = stack.pop() {
                if k < succs[b].len() {
                    stack.push((b, k + 1));
                    let c = succs[b][k];
                    if !seen[c] {
                        seen[c] = true;
                        stack.push((c, 0));
                    }
                } else {
                    post.push(b);
                }
            }
        }
        let mut po_num = vec![usize::MAX; n];
        for (i, b) in post.iter().enumerate() {
            po_num[*b] = i;
        }
        let mut preds: Vec<Vec<usize>> = vec![vec![]; n];
        for (i, ss) in succs.iter().enumerate() {
            for j in ss {
                preds[*j].push(i);
            }
        }
        let mut idom: Vec<Option<usize>> = vec![None; n];
        if n > 0 {
            idom[0] = Some(0);
        }
        let intersect = |idom: &[Option<usize>], mut a: usize, mut b: usize| -> usize {
            while a != b {
                while po_num[a] < po_num[b] {
                    a = idom[a].unwrap_or(0);
                }
                while po_num[b] < po_num[a] {
                    b = idom[b].unwrap_or(0);
                }
            }
            a
        };
        let mut changed = true;
        while changed {
            changed = false;
            for &b in post.iter().rev() {
                if b == 0 {
                    continue;
                }
                let mut new: Option<usize> = None;
                for &p in &preds[b] {
                    if idom[p].is_none() {
                        continue;
                    }
                    new = Some(match new {
                        None => p,
                        Some(x) => intersect(&idom, p, x),
                    });
                }
                if new.is_some() && idom[b] != new {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        // DFS intervals over the dominator tree.
        let mut kids: Vec<Vec<usize>> = vec![vec![]; n];
        for (b, d) in idom.iter().enumerate().skip(1) {
            if let Some(d) = d {
                kids[*d].push(b);
            }
        }
        let mut interval = vec![None; n];
        if n > 0 {
            let mut clock = 0u32;
            let mut stack = vec![(0usize, 0usize)];
            let mut enter = vec![0u32; n];
            while let Some((b, k)) = stack.pop() {
                if k == 0 {
                    enter[b] = clock;
                    clock += 1;
                }
                if k < kids[b].len() {
                    stack.push((b, k + 1));
                    stack.push((kids[b][k], 0));
                } else {
                    interval[b] = Some((enter[b], clock));
                    clock += 1;
                }
            }
        }
        DomTree { index, interval }
    }

    fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        if a == b {
            return true;
        }
        match (self.index.get(&a), self.index.get(&b)) {
            (Some(&ia), Some(&ib)) => match (self.interval[ia], self.interval[ib]) {
                (Some((ea, xa)), Some((eb, xb))) => ea <= eb && xb <= xa,
                // Unreachable code is dominated by everything, as in MLIR.
                (_, None) => true,
                _ => false,
            },
            _ => false,
        }
    }
}

thread_local! {
    static DOMS: std::cell::RefCell<FxHashMap<RegionId, std::rc::Rc<DomTree>>> =
        std::cell::RefCell::new(FxHashMap::default());
}

/// Whether block `a` dominates block `b` in `region`'s CFG (dominator trees are built
/// once per region per verification).
fn block_dominates(ir: &Ir, region: RegionId, a: BlockId, b: BlockId) -> bool {
    if a == b {
        return true;
    }
    let tree = DOMS.with(|d| {
        d.borrow_mut()
            .entry(region)
            .or_insert_with(|| std::rc::Rc::new(DomTree::new(ir, region)))
            .clone()
    });
    tree.dominates(a, b)
}

// ----- stage 2: spec --------------------------------------------------------------------

/// Sizes of each operand (or result) group given the flat count and the defs.
pub fn segment_sizes(
    ir: &Ir,
    op: OpId,
    defs: &[crate::dialect::ArgDef],
    total: usize,
    seg_attr: &str,
    same_size: bool,
) -> Result<Vec<usize>, String> {
    let variadic = defs.iter().filter(|d| d.arity != Arity::Single).count();
    if variadic > 1 && same_size {
        let fixed = defs.len() - variadic;
        let n = total.checked_sub(fixed).unwrap_or(usize::MAX);
        if n == usize::MAX || !n.is_multiple_of(variadic) {
            return Err(format!(
                "expected {fixed} fixed operands and {variadic} variadic groups of equal size, but found {total} operands"
            ));
        }
        return Ok(defs
            .iter()
            .map(|d| {
                if d.arity == Arity::Single {
                    1
                } else {
                    n / variadic
                }
            })
            .collect());
    }
    if variadic > 1 {
        let seg = ir
            .attr(op, seg_attr)
            .and_then(|a| a.as_dense_i64s())
            .ok_or_else(|| format!("missing segment sizes attribute '{seg_attr}'"))?;
        if seg.len() != defs.len() {
            return Err(format!("'{seg_attr}' attribute for specifying {} segments must have {} elements, but got {}", if seg_attr.starts_with("operand") { "operand" } else { "result" }, defs.len(), seg.len()));
        }
        if seg.iter().any(|&s| s < 0) {
            return Err(format!(
                "'{seg_attr}' attribute cannot have negative elements"
            ));
        }
        // In i128: segments of i64::MAX overflowed the sum.
        let sum: i128 = seg.iter().map(|&s| i128::from(s)).sum();
        if sum != total as i128 {
            return Err(format!(
                "{} count ({}) does not match with the total size ({}) specified in attribute '{}'",
                if seg_attr.starts_with("operand") {
                    "operand"
                } else {
                    "result"
                },
                total,
                sum,
                seg_attr
            ));
        }
        return Ok(seg.iter().map(|&s| s as usize).collect());
    }
    let fixed = defs.len() - variadic;
    if variadic == 0 {
        if total != fixed {
            return Err(format!("expected {fixed} but found {total}"));
        }
        return Ok(vec![1; defs.len()]);
    }
    if total < fixed {
        return Err(format!("expected {fixed} or more but found {total}"));
    }
    Ok(defs
        .iter()
        .map(|d| {
            if d.arity == Arity::Single {
                1
            } else {
                total - fixed
            }
        })
        .collect())
}

fn verify_spec(ir: &Ir, op: OpId, def: &OpDef) -> Result<(), Diagnostic> {
    verify_operands(ir, op, def)?;
    verify_results(ir, op, def)?;
    verify_attributes(ir, op, def)?;
    verify_type_traits(ir, op, def)
}

/// The operand groups: their count (or segment sizes) and each operand's constraint.
fn verify_operands(ir: &Ir, op: OpId, def: &OpDef) -> Result<(), Diagnostic> {
    let o = ir.op(op);
    let variadic_ops = def
        .operands
        .iter()
        .filter(|d| d.arity != Arity::Single)
        .count();
    let sizes = if variadic_ops == 0 {
        if o.operands.len() != def.operands.len() {
            return Err(op_err(
                ir,
                op,
                format!(
                    "expected {} operands, but found {}",
                    def.operands.len(),
                    o.operands.len()
                ),
            ));
        }
        vec![1; def.operands.len()]
    } else {
        segment_sizes(
            ir,
            op,
            def.operands,
            o.operands.len(),
            "operandSegmentSizes",
            def.has(crate::dialect::traits::SAME_VARIADIC_OPERAND_SIZE),
        )
        .map_err(|m| op_err(ir, op, m))?
    };
    let mut i = 0;
    for (d, n) in def.operands.iter().zip(&sizes) {
        if d.arity == Arity::Optional && *n > 1 {
            return Err(op_err(
                ir,
                op,
                format!("operand group '{}' takes at most one value", d.name),
            ));
        }
        for k in 0..*n {
            let t = ir.value_type(o.operands[i + k]);
            if crate::constraints::type_satisfies(d.constraint, t) == Some(false) {
                return Err(op_err(
                    ir,
                    op,
                    format!(
                        "operand #{} must be {}, but got '{}'",
                        i + k,
                        describe(d.constraint),
                        t
                    ),
                ));
            }
        }
        i += n;
    }
    Ok(())
}

/// The result groups: their count (or segment sizes) and each result's constraint.
fn verify_results(ir: &Ir, op: OpId, def: &OpDef) -> Result<(), Diagnostic> {
    let o = ir.op(op);
    let variadic_res = def
        .results
        .iter()
        .filter(|d| d.arity != Arity::Single)
        .count();
    let rsizes = if variadic_res == 0 {
        if o.results.len() != def.results.len() {
            return Err(op_err(
                ir,
                op,
                format!(
                    "requires {} result{}",
                    def.results.len(),
                    if def.results.len() == 1 { "" } else { "s" }
                ),
            ));
        }
        vec![1; def.results.len()]
    } else {
        segment_sizes(
            ir,
            op,
            def.results,
            o.results.len(),
            "resultSegmentSizes",
            false,
        )
        .map_err(|m| op_err(ir, op, m))?
    };
    let mut i = 0;
    for (d, n) in def.results.iter().zip(&rsizes) {
        for k in 0..*n {
            let t = ir.value_type(o.results[i + k]);
            if crate::constraints::type_satisfies(d.constraint, t) == Some(false) {
                return Err(op_err(
                    ir,
                    op,
                    format!(
                        "result #{} must be {}, but got '{}'",
                        i + k,
                        describe(d.constraint),
                        t
                    ),
                ));
            }
        }
        i += n;
    }
    Ok(())
}

/// Required attributes present, and every attribute satisfying its constraint.
fn verify_attributes(ir: &Ir, op: OpId, def: &OpDef) -> Result<(), Diagnostic> {
    for a in def.attributes {
        match ir.attr(op, a.name) {
            None if !a.optional => {
                return Err(op_err(ir, op, format!("requires attribute '{}'", a.name)))
            }
            None => {}
            Some(v) if crate::constraints::attr_satisfies(a.constraint, v) == Some(false) => {
                return Err(op_err(
                    ir,
                    op,
                    format!(
                        "attribute '{}' failed to satisfy constraint: {}",
                        a.name,
                        describe(a.constraint)
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// `SameOperandsAndResultType`, `SameTypeOperands` and `Terminator`.
fn verify_type_traits(ir: &Ir, op: OpId, def: &OpDef) -> Result<(), Diagnostic> {
    let o = ir.op(op);
    if def.has(traits::SAME_OPERANDS_AND_RESULT_TYPE) {
        let mut tys = o
            .operands
            .iter()
            .chain(o.results.iter())
            .map(|v| ir.value_type(*v));
        if let Some(first) = tys.next() {
            if tys.any(|t| t != first) {
                return Err(op_err(
                    ir,
                    op,
                    "requires the same type for all operands and results",
                ));
            }
        }
    }
    if def.has(traits::SAME_TYPE_OPERANDS) {
        let mut tys = o.operands.iter().map(|v| ir.value_type(*v));
        if let Some(first) = tys.next() {
            if tys.any(|t| t != first) {
                return Err(op_err(
                    ir,
                    op,
                    "requires all operands to have the same type",
                ));
            }
        }
    }
    if def.has(traits::TERMINATOR) {
        if let Some(b) = o.parent {
            if ir.terminator(b) != Some(op) {
                return Err(op_err(
                    ir,
                    op,
                    "must be the last operation in the parent block",
                ));
            }
        }
    }
    Ok(())
}

/// ODS-like description of a constraint for messages.
pub fn describe(c: &str) -> &str {
    match c {
        "AnyTensor" => "tensor of any type values",
        "AnyRankedTensor" => "ranked tensor of any type values",
        "AnyMemRef" => "memref of any type values",
        "AnyVector" => "vector of any type values",
        "Index" => "index",
        "I1" => "1-bit signless integer",
        "AnyFloat" => "floating-point",
        "FloatLike" => "floating-point-like",
        "SignlessIntegerLike" => "signless-integer-like",
        "SignlessIntegerOrIndexLike" => "signless-integer-or-index-like",
        "BoolLike" => "bool-like",
        "AnyInteger" => "integer",
        _ => c,
    }
}
