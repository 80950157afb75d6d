//! The operation graph: arenas of operations, blocks, regions and values addressed by
//! small `Copy` handles, with use-lists and intrusive op lists inside blocks.

use crate::attrs::{AttrKind, Attribute};
use crate::types::Type;
use smallvec::SmallVec;

macro_rules! handle {
    ($name:ident) => {
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
        pub struct $name(pub u32);
        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}
handle!(OpId);
handle!(BlockId);
handle!(RegionId);
handle!(Value);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueDef {
    OpResult(OpId, u32),
    BlockArg(BlockId, u32),
}

/// `OpData::use_at` of an operand whose use was removed (its op destroyed).
const GONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Use {
    pub op: OpId,
    pub operand: u32,
}

#[derive(Clone, Debug)]
pub struct ValueData {
    pub ty: Type,
    pub def: ValueDef,
    pub uses: SmallVec<[Use; 2]>,
    /// Location of a block argument.
    pub loc: Option<Attribute>,
}

#[derive(Clone, Debug)]
pub struct OpData {
    pub name: &'static str,
    pub operands: SmallVec<[Value; 3]>,
    /// Per operand, where its [`Use`] sits in the operand value's use list, so a use is
    /// removed in constant time (MLIR's use lists are intrusive for the same reason).
    use_at: SmallVec<[u32; 3]>,
    pub results: SmallVec<[Value; 1]>,
    /// Inherent attributes (MLIR properties), a dictionary; printed `<{...}>` generically.
    pub props: Attribute,
    /// Discardable attributes, a dictionary.
    pub attrs: Attribute,
    pub regions: SmallVec<[RegionId; 1]>,
    pub successors: SmallVec<[BlockId; 2]>,
    pub loc: Attribute,
    pub parent: Option<BlockId>,
    pub prev: Option<OpId>,
    pub next: Option<OpId>,
    pub alive: bool,
}

#[derive(Clone, Debug, Default)]
pub struct BlockData {
    pub args: Vec<Value>,
    pub parent: Option<RegionId>,
    pub first: Option<OpId>,
    pub last: Option<OpId>,
    pub alive: bool,
}

#[derive(Clone, Debug)]
pub struct RegionData {
    pub blocks: Vec<BlockId>,
    pub parent: Option<OpId>,
}

/// A blob of `dialect_resources` kept byte-exact (the quoted hex string).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resource {
    pub dialect: String,
    pub key: String,
    pub value: String,
}

/// All IR of one module: arenas plus the top-level operation.
#[derive(Clone, Debug, Default)]
pub struct Ir {
    pub ops: Vec<OpData>,
    pub blocks: Vec<BlockData>,
    pub regions: Vec<RegionData>,
    pub values: Vec<ValueData>,
    pub resources: Vec<Resource>,
}

/// Description of an operation to create.
pub struct OpSpec {
    pub name: &'static str,
    pub operands: Vec<Value>,
    pub result_types: Vec<Type>,
    pub props: Vec<(String, Attribute)>,
    pub attrs: Vec<(String, Attribute)>,
    pub num_regions: usize,
    pub successors: Vec<BlockId>,
    pub loc: Attribute,
}

impl OpSpec {
    pub fn new(name: &'static str, loc: Attribute) -> OpSpec {
        OpSpec {
            name,
            operands: vec![],
            result_types: vec![],
            props: vec![],
            attrs: vec![],
            num_regions: 0,
            successors: vec![],
            loc,
        }
    }
    pub fn operands(mut self, v: impl IntoIterator<Item = Value>) -> Self {
        self.operands.extend(v);
        self
    }
    pub fn results(mut self, v: impl IntoIterator<Item = Type>) -> Self {
        self.result_types.extend(v);
        self
    }
    pub fn prop(mut self, name: &str, a: Attribute) -> Self {
        self.props.push((name.to_string(), a));
        self
    }
    pub fn attr(mut self, name: &str, a: Attribute) -> Self {
        self.attrs.push((name.to_string(), a));
        self
    }
    pub fn regions(mut self, n: usize) -> Self {
        self.num_regions = n;
        self
    }
}

fn dict_get(d: Attribute, name: &str) -> Option<Attribute> {
    d.as_dict()?
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| *v)
}

fn dict_set(d: Attribute, name: &str, value: Option<Attribute>) -> Attribute {
    let mut v: Vec<(String, Attribute)> = d.as_dict().unwrap_or(&[]).to_vec();
    v.retain(|(k, _)| k != name);
    if let Some(value) = value {
        v.push((name.to_string(), value));
    }
    Attribute::dictionary(v)
}

/// Interned operation names.
pub fn intern_name(name: &str) -> &'static str {
    use std::sync::{LazyLock, Mutex};
    static NAMES: LazyLock<Mutex<rustc_hash::FxHashSet<&'static str>>> =
        LazyLock::new(Default::default);
    let mut set = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = set.get(name) {
        return s;
    }
    let s: &'static str = Box::leak(name.to_string().into_boxed_str());
    set.insert(s);
    s
}

impl Ir {
    pub fn new() -> Ir {
        Ir::default()
    }

    // ----- accessors -------------------------------------------------------------------
    pub fn op(&self, op: OpId) -> &OpData {
        &self.ops[op.index()]
    }
    pub fn op_mut(&mut self, op: OpId) -> &mut OpData {
        &mut self.ops[op.index()]
    }
    pub fn block(&self, b: BlockId) -> &BlockData {
        &self.blocks[b.index()]
    }
    pub fn region(&self, r: RegionId) -> &RegionData {
        &self.regions[r.index()]
    }
    pub fn value(&self, v: Value) -> &ValueData {
        &self.values[v.index()]
    }
    pub fn name(&self, op: OpId) -> &'static str {
        self.ops[op.index()].name
    }
    pub fn value_type(&self, v: Value) -> Type {
        self.values[v.index()].ty
    }
    pub fn set_value_type(&mut self, v: Value, t: Type) {
        self.values[v.index()].ty = t;
    }
    pub fn operands(&self, op: OpId) -> &[Value] {
        &self.ops[op.index()].operands
    }
    pub fn operand(&self, op: OpId, i: usize) -> Value {
        self.ops[op.index()].operands[i]
    }
    pub fn results(&self, op: OpId) -> &[Value] {
        &self.ops[op.index()].results
    }
    pub fn result(&self, op: OpId, i: usize) -> Value {
        self.ops[op.index()].results[i]
    }
    pub fn regions_of(&self, op: OpId) -> &[RegionId] {
        &self.ops[op.index()].regions
    }
    pub fn loc(&self, op: OpId) -> Attribute {
        self.ops[op.index()].loc
    }
    /// An inherent attribute (property) or, failing that, a discardable one.
    pub fn attr(&self, op: OpId, name: &str) -> Option<Attribute> {
        let o = &self.ops[op.index()];
        dict_get(o.props, name).or_else(|| dict_get(o.attrs, name))
    }
    pub fn prop(&self, op: OpId, name: &str) -> Option<Attribute> {
        dict_get(self.ops[op.index()].props, name)
    }
    pub fn discardable_attr(&self, op: OpId, name: &str) -> Option<Attribute> {
        dict_get(self.ops[op.index()].attrs, name)
    }
    pub fn set_prop(&mut self, op: OpId, name: &str, value: Option<Attribute>) {
        let o = &mut self.ops[op.index()];
        o.props = dict_set(o.props, name, value);
    }
    pub fn set_attr(&mut self, op: OpId, name: &str, value: Option<Attribute>) {
        let o = &mut self.ops[op.index()];
        o.attrs = dict_set(o.attrs, name, value);
    }
    /// Set the inherent attribute `name` of `op` where `op` keeps it: as a property, unless
    /// it carries `name` as a discardable attribute only (an op parsed from the generic
    /// form of a dialect we do not model).
    pub fn set_inherent(&mut self, op: OpId, name: &str, value: Attribute) {
        if self.prop(op, name).is_none() && self.discardable_attr(op, name).is_some() {
            self.set_attr(op, name, Some(value));
        } else {
            self.set_prop(op, name, Some(value));
        }
    }
    /// Remove the discardable attribute `name` from `top` and every op nested in it.
    pub fn remove_attr_under(&mut self, top: OpId, name: &str) {
        let mut marked = vec![];
        self.walk_pre(top, &mut |o| {
            if self.discardable_attr(o, name).is_some() {
                marked.push(o);
            }
        });
        for o in marked {
            self.set_attr(o, name, None);
        }
    }
    pub fn defining_op(&self, v: Value) -> Option<OpId> {
        match self.values[v.index()].def {
            ValueDef::OpResult(op, _) => Some(op),
            ValueDef::BlockArg(..) => None,
        }
    }
    pub fn uses(&self, v: Value) -> &[Use] {
        &self.values[v.index()].uses
    }
    pub fn has_uses(&self, v: Value) -> bool {
        !self.values[v.index()].uses.is_empty()
    }
    /// The block that holds a value's definition.
    pub fn value_block(&self, v: Value) -> Option<BlockId> {
        match self.values[v.index()].def {
            ValueDef::OpResult(op, _) => self.ops[op.index()].parent,
            ValueDef::BlockArg(b, _) => Some(b),
        }
    }
    /// Whether `v` is defined inside `op`'s regions (an op result or a block argument
    /// there, at any depth).
    pub fn defined_inside(&self, v: Value, op: OpId) -> bool {
        let mut b = self.value_block(v);
        while let Some(blk) = b {
            let Some(p) = self.block_parent_op(blk) else {
                return false;
            };
            if p == op {
                return true;
            }
            b = self.ops[p.index()].parent;
        }
        false
    }
    /// The block that holds `op` (none for a detached or top-level op).
    pub fn parent_block(&self, op: OpId) -> Option<BlockId> {
        self.ops[op.index()].parent
    }
    pub fn parent_op(&self, op: OpId) -> Option<OpId> {
        let b = self.ops[op.index()].parent?;
        self.block_parent_op(b)
    }
    pub fn block_parent_op(&self, b: BlockId) -> Option<OpId> {
        let r = self.blocks[b.index()].parent?;
        self.regions[r.index()].parent
    }
    pub fn region_entry(&self, r: RegionId) -> Option<BlockId> {
        self.regions[r.index()].blocks.first().copied()
    }
    /// Operations of a block in order.
    pub fn block_ops(&self, b: BlockId) -> BlockOps<'_> {
        BlockOps {
            ir: self,
            next: self.blocks[b.index()].first,
        }
    }
    pub fn block_ops_vec(&self, b: BlockId) -> Vec<OpId> {
        self.block_ops(b).collect()
    }
    pub fn block_args(&self, b: BlockId) -> &[Value] {
        &self.blocks[b.index()].args
    }
    pub fn terminator(&self, b: BlockId) -> Option<OpId> {
        self.blocks[b.index()].last
    }
    pub fn is_ancestor(&self, ancestor: OpId, mut op: OpId) -> bool {
        loop {
            if op == ancestor {
                return true;
            }
            match self.parent_op(op) {
                Some(p) => op = p,
                None => return false,
            }
        }
    }

    // ----- creation --------------------------------------------------------------------
    pub fn new_value(&mut self, ty: Type, def: ValueDef) -> Value {
        let v = Value(self.values.len() as u32);
        self.values.push(ValueData {
            ty,
            def,
            uses: SmallVec::new(),
            loc: None,
        });
        v
    }

    /// Create a detached operation (no parent). Regions are created empty.
    pub fn create_op(&mut self, spec: OpSpec) -> OpId {
        let id = OpId(self.ops.len() as u32);
        let mut results = SmallVec::new();
        for (i, t) in spec.result_types.iter().enumerate() {
            results.push(self.new_value(*t, ValueDef::OpResult(id, i as u32)));
        }
        let mut regions = SmallVec::new();
        for _ in 0..spec.num_regions {
            let r = RegionId(self.regions.len() as u32);
            self.regions.push(RegionData {
                blocks: vec![],
                parent: Some(id),
            });
            regions.push(r);
        }
        let mut use_at = SmallVec::new();
        for (i, v) in spec.operands.iter().enumerate() {
            use_at.push(self.push_use(*v, id, i));
        }
        self.ops.push(OpData {
            name: spec.name,
            operands: spec.operands.into_iter().collect(),
            use_at,
            results,
            props: Attribute::dictionary(spec.props),
            attrs: Attribute::dictionary(spec.attrs),
            regions,
            successors: spec.successors.into_iter().collect(),
            loc: spec.loc,
            parent: None,
            prev: None,
            next: None,
            alive: true,
        });
        id
    }

    pub fn new_region(&mut self, parent: Option<OpId>) -> RegionId {
        let r = RegionId(self.regions.len() as u32);
        self.regions.push(RegionData {
            blocks: vec![],
            parent,
        });
        r
    }

    /// Create a block with arguments and append it to `region`.
    pub fn append_block(&mut self, region: RegionId, arg_types: &[Type]) -> BlockId {
        let b = self.new_block(arg_types);
        self.blocks[b.index()].parent = Some(region);
        self.regions[region.index()].blocks.push(b);
        b
    }

    pub fn new_block(&mut self, arg_types: &[Type]) -> BlockId {
        let b = BlockId(self.blocks.len() as u32);
        self.blocks.push(BlockData {
            alive: true,
            ..Default::default()
        });
        for (i, t) in arg_types.iter().enumerate() {
            let v = self.new_value(*t, ValueDef::BlockArg(b, i as u32));
            self.blocks[b.index()].args.push(v);
        }
        b
    }

    /// Append a detached block (from [`Ir::new_block`]) to `region`.
    pub fn region_attach_block(&mut self, region: RegionId, b: BlockId) {
        self.blocks[b.index()].parent = Some(region);
        self.regions[region.index()].blocks.push(b);
    }

    /// Move every block of region `from` to the end of region `to` (MLIR's
    /// `Region::takeBody` when `to` is empty).
    pub fn take_body(&mut self, to: RegionId, from: RegionId) {
        for b in std::mem::take(&mut self.regions[from.index()].blocks) {
            self.region_attach_block(to, b);
        }
    }

    pub fn add_block_arg(&mut self, b: BlockId, ty: Type) -> Value {
        let i = self.blocks[b.index()].args.len() as u32;
        let v = self.new_value(ty, ValueDef::BlockArg(b, i));
        self.blocks[b.index()].args.push(v);
        v
    }

    /// Remove argument `i` of block `b`, which must have no uses (MLIR's
    /// `Block::eraseArgument`); the arguments after it shift down by one.
    pub fn erase_block_arg(&mut self, b: BlockId, i: usize) {
        let v = self.blocks[b.index()].args.remove(i);
        debug_assert!(self.values[v.index()].uses.is_empty());
        for (k, a) in self.blocks[b.index()].args.clone().into_iter().enumerate() {
            self.values[a.index()].def = ValueDef::BlockArg(b, k as u32);
        }
    }

    // ----- placement -------------------------------------------------------------------
    pub fn append_op(&mut self, block: BlockId, op: OpId) {
        let last = self.blocks[block.index()].last;
        self.link(block, last, None, op);
    }
    pub fn insert_before(&mut self, anchor: OpId, op: OpId) {
        let a = &self.ops[anchor.index()];
        let (block, prev) = (a.parent.expect("anchor in a block"), a.prev);
        self.link(block, prev, Some(anchor), op);
    }
    pub fn insert_after(&mut self, anchor: OpId, op: OpId) {
        let a = &self.ops[anchor.index()];
        let (block, next) = (a.parent.expect("anchor in a block"), a.next);
        self.link(block, Some(anchor), next, op);
    }
    pub fn prepend_op(&mut self, block: BlockId, op: OpId) {
        let first = self.blocks[block.index()].first;
        self.link(block, None, first, op);
    }
    fn link(&mut self, block: BlockId, prev: Option<OpId>, next: Option<OpId>, op: OpId) {
        {
            let o = &mut self.ops[op.index()];
            o.parent = Some(block);
            o.prev = prev;
            o.next = next;
        }
        match prev {
            Some(p) => self.ops[p.index()].next = Some(op),
            None => self.blocks[block.index()].first = Some(op),
        }
        match next {
            Some(n) => self.ops[n.index()].prev = Some(op),
            None => self.blocks[block.index()].last = Some(op),
        }
    }
    /// Remove an op from its block without destroying it.
    pub fn unlink(&mut self, op: OpId) {
        let (block, prev, next) = {
            let o = &self.ops[op.index()];
            match o.parent {
                Some(b) => (b, o.prev, o.next),
                None => return,
            }
        };
        match prev {
            Some(p) => self.ops[p.index()].next = next,
            None => self.blocks[block.index()].first = next,
        }
        match next {
            Some(n) => self.ops[n.index()].prev = prev,
            None => self.blocks[block.index()].last = prev,
        }
        let o = &mut self.ops[op.index()];
        o.parent = None;
        o.prev = None;
        o.next = None;
    }

    // ----- use-lists -------------------------------------------------------------------
    // A value's uses are in no particular order: removing one moves the last into its
    // place (and updates that use's position in its op's `use_at`).
    fn push_use(&mut self, v: Value, op: OpId, operand: usize) -> u32 {
        let uses = &mut self.values[v.index()].uses;
        uses.push(Use {
            op,
            operand: operand as u32,
        });
        (uses.len() - 1) as u32
    }
    /// Remove the use of operand `i` of `op` from its value's use list.
    fn remove_use(&mut self, op: OpId, i: usize) {
        let v = self.ops[op.index()].operands[i];
        let at = std::mem::replace(&mut self.ops[op.index()].use_at[i], GONE) as usize;
        if at == GONE as usize {
            return; // an operand of a destroyed op: its use is gone already
        }
        let uses = &mut self.values[v.index()].uses;
        debug_assert_eq!(
            uses[at],
            Use {
                op,
                operand: i as u32
            }
        );
        uses.swap_remove(at);
        if let Some(moved) = uses.get(at).copied() {
            self.ops[moved.op.index()].use_at[moved.operand as usize] = at as u32;
        }
    }
    pub fn set_operand(&mut self, op: OpId, i: usize, v: Value) {
        self.remove_use(op, i);
        self.ops[op.index()].operands[i] = v;
        let at = self.push_use(v, op, i);
        self.ops[op.index()].use_at[i] = at;
    }
    pub fn set_operands(&mut self, op: OpId, vals: Vec<Value>) {
        self.drop_operand_uses(op);
        let mut use_at = SmallVec::new();
        for (i, v) in vals.iter().enumerate() {
            use_at.push(self.push_use(*v, op, i));
        }
        let o = &mut self.ops[op.index()];
        o.operands = vals.into_iter().collect();
        o.use_at = use_at;
    }
    /// Remove the uses `op`'s operands make (the operands stay readable).
    fn drop_operand_uses(&mut self, op: OpId) {
        for i in 0..self.ops[op.index()].operands.len() {
            self.remove_use(op, i);
        }
    }
    /// Replace every use of `from` with `to`.
    pub fn replace_all_uses(&mut self, from: Value, to: Value) {
        if from == to {
            return;
        }
        let uses = std::mem::take(&mut self.values[from.index()].uses);
        for u in &uses {
            let at = self.push_use(to, u.op, u.operand as usize);
            let o = &mut self.ops[u.op.index()];
            o.operands[u.operand as usize] = to;
            o.use_at[u.operand as usize] = at;
        }
    }
    /// Replace the results of `op` with `new` values and erase `op`.
    pub fn replace_op(&mut self, op: OpId, new: &[Value]) {
        let results = self.ops[op.index()].results.clone();
        for (r, n) in results.iter().zip(new) {
            self.replace_all_uses(*r, *n);
        }
        self.erase_op(op);
    }

    /// Erase an operation and everything nested in it. Its results must be unused
    /// (uses left inside erased regions are dropped with them).
    pub fn erase_op(&mut self, op: OpId) {
        self.unlink(op);
        self.destroy(op);
    }
    /// Destroy `ops` and everything nested in them (iteratively: nesting depth is not
    /// bounded by the stack), removing the uses they make.
    fn destroy_all(&mut self, mut stack: Vec<OpId>) {
        while let Some(o) = stack.pop() {
            self.drop_operand_uses(o);
            self.ops[o.index()].alive = false;
            for r in self.ops[o.index()].regions.clone() {
                for b in std::mem::take(&mut self.regions[r.index()].blocks) {
                    stack.extend(self.kill_block(b));
                }
            }
        }
    }
    fn destroy(&mut self, op: OpId) {
        self.destroy_all(vec![op]);
    }
    /// Mark block `b` dead and empty; its ops (still to destroy).
    fn kill_block(&mut self, b: BlockId) -> Vec<OpId> {
        let ops = self.block_ops_vec(b);
        let blk = &mut self.blocks[b.index()];
        (blk.first, blk.last, blk.alive) = (None, None, false);
        ops
    }
    pub fn erase_block(&mut self, b: BlockId) {
        if let Some(r) = self.blocks[b.index()].parent {
            self.regions[r.index()].blocks.retain(|x| *x != b);
        }
        let ops = self.kill_block(b);
        self.destroy_all(ops);
        self.blocks[b.index()].parent = None;
    }

    /// Move all operations of `from` to the end of `to` (before nothing).
    pub fn move_block_ops(&mut self, from: BlockId, to: BlockId, before: Option<OpId>) {
        let ops = self.block_ops_vec(from);
        for o in ops {
            self.unlink(o);
            match before {
                Some(a) => self.insert_before(a, o),
                None => self.append_op(to, o),
            }
        }
    }

    /// Deep-copy `op` (detached), remapping operands through `map` (values not in the map
    /// are used as they are). Results and block arguments of the clone are added to `map`.
    pub fn clone_op(&mut self, op: OpId, map: &mut rustc_hash::FxHashMap<Value, Value>) -> OpId {
        crate::parser::with_stack(|| self.clone_op_inner(op, map))
    }
    fn clone_op_inner(&mut self, op: OpId, map: &mut rustc_hash::FxHashMap<Value, Value>) -> OpId {
        let src = self.ops[op.index()].clone();
        let operands: Vec<Value> = src
            .operands
            .iter()
            .map(|v| *map.get(v).unwrap_or(v))
            .collect();
        let types: Vec<Type> = src
            .results
            .iter()
            .map(|v| self.values[v.index()].ty)
            .collect();
        let new = self.create_op(OpSpec {
            name: src.name,
            operands,
            result_types: types,
            props: vec![],
            attrs: vec![],
            num_regions: src.regions.len(),
            successors: vec![],
            loc: src.loc,
        });
        self.ops[new.index()].props = src.props;
        self.ops[new.index()].attrs = src.attrs;
        for (a, b) in src
            .results
            .iter()
            .zip(self.ops[new.index()].results.clone())
        {
            map.insert(*a, b);
        }
        let new_regions = self.ops[new.index()].regions.clone();
        let mut block_map = rustc_hash::FxHashMap::default();
        for (sr, nr) in src.regions.iter().zip(new_regions) {
            self.clone_region_into(*sr, nr, map, &mut block_map);
        }
        let succs: SmallVec<[BlockId; 2]> = src
            .successors
            .iter()
            .map(|b| *block_map.get(b).unwrap_or(b))
            .collect();
        self.ops[new.index()].successors = succs;
        new
    }

    pub fn clone_region_into(
        &mut self,
        src: RegionId,
        dst: RegionId,
        map: &mut rustc_hash::FxHashMap<Value, Value>,
        block_map: &mut rustc_hash::FxHashMap<BlockId, BlockId>,
    ) {
        let blocks = self.regions[src.index()].blocks.clone();
        for b in &blocks {
            let tys: Vec<Type> = self.blocks[b.index()]
                .args
                .iter()
                .map(|v| self.values[v.index()].ty)
                .collect();
            let nb = self.append_block(dst, &tys);
            for (a, n) in self.blocks[b.index()]
                .args
                .clone()
                .iter()
                .zip(self.blocks[nb.index()].args.clone())
            {
                map.insert(*a, n);
                self.values[n.index()].loc = self.values[a.index()].loc;
            }
            block_map.insert(*b, nb);
        }
        for b in &blocks {
            let nb = block_map[b];
            for o in self.block_ops_vec(*b) {
                let c = self.clone_op(o, map);
                self.append_op(nb, c);
            }
        }
        // Successors of cloned terminators were cloned before all blocks existed when a
        // branch targets a later block: remap them now.
        for b in &blocks {
            let nb = block_map[b];
            for o in self.block_ops_vec(nb) {
                let succ: SmallVec<[BlockId; 2]> = self.ops[o.index()]
                    .successors
                    .iter()
                    .map(|s| *block_map.get(s).unwrap_or(s))
                    .collect();
                self.ops[o.index()].successors = succ;
            }
        }
    }

    /// Inline the single block of `region` before `before`, replacing its arguments with
    /// `args`; returns the (moved) terminator of the inlined block, if any.
    pub fn inline_block_before(
        &mut self,
        block: BlockId,
        before: OpId,
        args: &[Value],
    ) -> Option<OpId> {
        let bargs = self.blocks[block.index()].args.clone();
        for (a, v) in bargs.iter().zip(args) {
            self.replace_all_uses(*a, *v);
        }
        let term = self.terminator(block);
        let target = self.ops[before.index()].parent.expect("in block");
        self.move_block_ops(block, target, Some(before));
        term
    }

    pub fn is_alive(&self, op: OpId) -> bool {
        self.ops[op.index()].alive
    }
    /// Number of live operations nested in `op` (inclusive).
    pub fn count_ops(&self, op: OpId) -> usize {
        let mut n = 0;
        self.walk_pre(op, &mut |_| n += 1);
        n
    }
    /// The `sym_name` of a symbol op.
    pub fn symbol_name(&self, op: OpId) -> Option<&'static str> {
        match self.attr(op, "sym_name")?.kind() {
            AttrKind::String { value, .. } => Some(value),
            _ => None,
        }
    }
}

pub struct BlockOps<'a> {
    ir: &'a Ir,
    next: Option<OpId>,
}
impl Iterator for BlockOps<'_> {
    type Item = OpId;
    fn next(&mut self) -> Option<OpId> {
        let cur = self.next?;
        self.next = self.ir.ops[cur.index()].next;
        Some(cur)
    }
}

#[cfg(test)]
#[path = "ir_tests.rs"]
mod tests;

#[path = "ir_walk.rs"]
mod walk;

#[path = "ir_blocks.rs"]
mod blocks;
