//! Printing operations: the generic form, custom forms through each op's print hook,
//! SSA value naming as MLIR's `SSANameState`, aliases and resources.

use super::{
    write_attr, write_named_attrs, write_result_types, write_type, write_type_list, AliasKey,
    Aliases,
};
use crate::attrs::{AttrKind, Attribute};
use crate::dialect::Context;
use crate::ir::{BlockId, Ir, OpId, RegionId, Value, ValueDef};
use rustc_hash::{FxHashMap, FxHashSet};
use std::fmt::Write;

#[derive(Clone, Copy, Debug, Default)]
pub struct PrintOptions {
    /// `--mlir-print-op-generic`
    pub generic: bool,
    /// `--mlir-print-debuginfo`
    pub debuginfo: bool,
}

/// How a value is spelled: `%12`, `%arg3`, or a suggested name (`%c0`, `%cst_1`); with a
/// result number for ops with several results (`%5#1`).
#[derive(Clone, Copy, Default)]
struct Slot {
    /// 0: unnamed, 1: number, 2: `arg` number, 3: text.
    kind: u8,
    id: u32,
    group: Option<u32>,
}

/// Names of values, indexed by value (dense), without a string per value.
#[derive(Default)]
struct ValueNames {
    slots: Vec<Slot>,
    texts: Vec<String>,
}

impl ValueNames {
    fn contains_key(&self, v: &Value) -> bool {
        self.slots.get(v.index()).is_some_and(|s| s.kind != 0)
    }
    fn set(&mut self, v: Value, slot: Slot) {
        if self.slots.len() <= v.index() {
            self.slots.resize(v.index() + 1, Slot::default());
        }
        self.slots[v.index()] = slot;
    }
    fn num(&mut self, v: Value, n: u32, group: Option<u32>) {
        self.set(
            v,
            Slot {
                kind: 1,
                id: n,
                group,
            },
        );
    }
    fn arg(&mut self, v: Value, n: u32) {
        self.set(
            v,
            Slot {
                kind: 2,
                id: n,
                group: None,
            },
        );
    }
    fn text(&mut self, v: Value, t: String) {
        self.texts.push(t);
        let id = (self.texts.len() - 1) as u32;
        self.set(
            v,
            Slot {
                kind: 3,
                id,
                group: None,
            },
        );
    }
    /// Write the name without `%` and without a result number.
    fn write_base(&self, out: &mut String, v: Value) -> Option<Option<u32>> {
        let s = self.slots.get(v.index()).copied().filter(|s| s.kind != 0)?;
        match s.kind {
            1 => {
                let _ = write!(out, "{}", s.id);
            }
            2 => {
                let _ = write!(out, "arg{}", s.id);
            }
            _ => out.push_str(&self.texts[s.id as usize]),
        }
        Some(s.group)
    }
}

#[derive(Default)]
struct Names {
    values: ValueNames,
    blocks: FxHashMap<BlockId, String>,
    next_value: u32,
    next_arg: u32,
    next_conflict: u32,
    /// Names in use, per scope (innermost last).
    used: Vec<FxHashSet<String>>,
}

impl Names {
    fn is_used(&self, n: &str) -> bool {
        self.used.iter().any(|s| s.contains(n))
    }
    fn unique(&mut self, base: &str) -> String {
        let mut name = sanitize(base);
        if self.is_used(&name) || name.is_empty() {
            let b = name.clone();
            loop {
                name = format!("{b}_{}", self.next_conflict);
                self.next_conflict += 1;
                if !self.is_used(&name) {
                    break;
                }
            }
        }
        if let Some(s) = self.used.last_mut() {
            s.insert(name.clone());
        }
        name
    }
}

fn sanitize(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

pub struct OpPrinter<'a> {
    pub ir: &'a Ir,
    pub ctx: &'a Context,
    pub out: String,
    pub opts: PrintOptions,
    indent: usize,
    names: Names,
    aliases: Aliases,
    default_dialects: Vec<&'static str>,
    /// Where full lines go once `out` holds enough (streaming large modules).
    sink: Option<&'a mut dyn std::io::Write>,
    io_error: Option<std::io::Error>,
}

impl<'a> OpPrinter<'a> {
    fn flush_if_large(&mut self, force: bool) {
        if let Some(w) = self.sink.as_mut() {
            if force || self.out.len() > (1 << 16) {
                if let Err(e) = w.write_all(self.out.as_bytes()) {
                    self.io_error.get_or_insert(e);
                }
                self.out.clear();
            }
        }
    }

    fn new(ir: &'a Ir, ctx: &'a Context, opts: PrintOptions, aliases: Aliases) -> OpPrinter<'a> {
        OpPrinter {
            ir,
            ctx,
            out: String::new(),
            opts,
            indent: 0,
            names: Names::default(),
            aliases,
            default_dialects: vec!["builtin"],
            sink: None,
            io_error: None,
        }
    }

    // ----- naming ------------------------------------------------------------------------
    fn number_op(&mut self, op: OpId) {
        let results = self.ir.results(op);
        if results.is_empty() {
            return;
        }
        if results.len() == 1 {
            if !self.opts.generic && !self.names.values.contains_key(&results[0]) {
                if let Some(f) = self.ctx.op_def(self.ir.name(op)).and_then(|d| d.asm_names) {
                    let mut hint = None;
                    f(self.ir, op, &mut |_, n| hint = Some(n));
                    if let Some(n) = hint {
                        let u = self.names.unique(&n);
                        self.names.values.text(results[0], u);
                    }
                }
            }
            if !self.names.values.contains_key(&results[0]) {
                let id = self.names.next_value;
                self.names.next_value += 1;
                self.names.values.num(results[0], id, None);
            }
            return;
        }
        // One name per result (`%sum, %overflow = arith.addui_extended ...`).
        if !self.opts.generic && !results.iter().any(|r| self.names.values.contains_key(r)) {
            if let Some(f) = self.ctx.op_def(self.ir.name(op)).and_then(|d| d.asm_names) {
                let mut hints = vec![];
                f(self.ir, op, &mut |v, n| hints.push((v, n)));
                if hints.len() == results.len() {
                    for (v, n) in hints {
                        let u = self.names.unique(&n);
                        self.names.values.text(v, u);
                    }
                    return;
                }
            }
        }
        let id = self.names.next_value;
        self.names.next_value += 1;
        for (i, r) in results.iter().enumerate() {
            self.names.values.num(*r, id, Some(i as u32));
        }
    }

    fn number_region(&mut self, r: RegionId) {
        if !self.opts.generic {
            let parent = self.ir.region(r).parent;
            if let Some(p) = parent {
                if let Some(f) = self
                    .ctx
                    .op_def(self.ir.name(p))
                    .and_then(|d| d.block_arg_names)
                {
                    let mut hints = vec![];
                    f(self.ir, p, r, &mut |v, n| hints.push((v, n)));
                    for (v, n) in hints {
                        if !self.names.values.contains_key(&v) {
                            let u = self.names.unique(&n);
                            self.names.values.text(v, u);
                        }
                    }
                }
            }
        }
        let blocks = self.ir.region(r).blocks.clone();
        for (i, b) in blocks.iter().enumerate() {
            self.names.blocks.insert(*b, format!("^bb{i}"));
            let entry = i == 0;
            for a in self.ir.block_args(*b) {
                if self.names.values.contains_key(a) {
                    continue;
                }
                if entry {
                    let n = self.names.next_arg;
                    self.names.next_arg += 1;
                    self.names.values.arg(*a, n);
                } else {
                    let id = self.names.next_value;
                    self.names.next_value += 1;
                    self.names.values.num(*a, id, None);
                }
            }
            for o in self.ir.block_ops(*b) {
                self.number_op(o);
            }
        }
    }

    /// MLIR's `SSANameState` constructor: regions are numbered from a stack, so nested
    /// regions are visited last-first; in the generic form numbering continues across
    /// regions, in the custom form each region restarts from its parent's counters.
    fn number_from(&mut self, top: OpId) {
        self.names.used.push(FxHashSet::default());
        let mut stack: Vec<(RegionId, u32, u32, u32, usize)> = vec![];
        for r in self.ir.regions_of(top) {
            stack.push((
                *r,
                self.names.next_value,
                self.names.next_arg,
                self.names.next_conflict,
                1,
            ));
        }
        self.number_op(top);
        while let Some((r, nv, na, nc, depth)) = stack.pop() {
            if !self.opts.generic {
                self.names.next_value = nv;
                self.names.next_arg = na;
                self.names.next_conflict = nc;
            }
            self.names.used.truncate(depth);
            self.names.used.push(FxHashSet::default());
            self.number_region(r);
            let d = self.names.used.len();
            for b in self.ir.region(r).blocks.clone() {
                for o in self.ir.block_ops(b) {
                    for nr in self.ir.regions_of(o) {
                        stack.push((
                            *nr,
                            self.names.next_value,
                            self.names.next_arg,
                            self.names.next_conflict,
                            d,
                        ));
                    }
                }
            }
        }
    }

    // ----- API for print hooks -----------------------------------------------------------
    pub fn write(&mut self, s: &str) {
        self.out.push_str(s);
    }
    pub fn value_name(&self, v: Value) -> String {
        let mut s = String::new();
        Self::write_value(&self.names.values, &mut s, v);
        s
    }
    fn write_value(names: &ValueNames, out: &mut String, v: Value) {
        out.push('%');
        match names.write_base(out, v) {
            Some(Some(i)) => {
                let _ = write!(out, "#{i}");
            }
            Some(None) => {}
            None => {
                out.pop();
                let _ = write!(out, "<<UNKNOWN SSA VALUE {}>>", v.0);
            }
        }
    }
    pub fn print_operand(&mut self, v: Value) {
        Self::write_value(&self.names.values, &mut self.out, v);
    }
    pub fn print_operands(&mut self, vs: &[Value]) {
        for (i, v) in vs.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.print_operand(*v);
        }
    }
    pub fn print_type(&mut self, t: crate::types::Type) {
        write_type(&mut self.out, t, Some(&self.aliases));
    }
    pub fn print_types(&mut self, ts: &[crate::types::Type]) {
        write_type_list(&mut self.out, ts, Some(&self.aliases));
    }
    pub fn print_types_of(&mut self, vs: &[Value]) {
        let ts: Vec<_> = vs.iter().map(|v| self.ir.value_type(*v)).collect();
        self.print_types(&ts);
    }
    pub fn print_result_types(&mut self, ts: &[crate::types::Type]) {
        write_result_types(&mut self.out, ts, Some(&self.aliases));
    }
    pub fn print_attr(&mut self, a: Attribute) {
        write_attr(&mut self.out, a, Some(&self.aliases));
    }
    /// An attribute without its `: type` suffix (integers and floats).
    pub fn print_attr_without_type(&mut self, a: Attribute) {
        match a.kind() {
            AttrKind::Integer { .. } | AttrKind::Float { .. } => {
                let mut s = String::new();
                write_attr(&mut s, a, Some(&self.aliases));
                let cut = s.rfind(" : ").unwrap_or(s.len());
                self.out.push_str(&s[..cut]);
            }
            _ => self.print_attr(a),
        }
    }
    /// ` {a = ...}` of all attributes (inherent and discardable) minus `elided`.
    pub fn print_optional_attr_dict(&mut self, op: OpId, elided: &[&str]) {
        let v = self.attrs_for_dict(op, elided);
        if !v.is_empty() {
            self.out.push_str(" {");
            write_named_attrs(&mut self.out, &v, Some(&self.aliases));
            self.out.push('}');
        }
    }
    pub fn print_optional_attr_dict_with_keyword(&mut self, op: OpId, elided: &[&str]) {
        let v = self.attrs_for_dict(op, elided);
        if !v.is_empty() {
            self.out.push_str(" attributes {");
            write_named_attrs(&mut self.out, &v, Some(&self.aliases));
            self.out.push('}');
        }
    }
    fn attrs_for_dict(&self, op: OpId, elided: &[&str]) -> Vec<(String, Attribute)> {
        let o = self.ir.op(op);
        let mut v: Vec<(String, Attribute)> = o
            .props
            .as_dict()
            .unwrap_or(&[])
            .iter()
            .chain(o.attrs.as_dict().unwrap_or(&[]))
            .filter(|(k, _)| !elided.contains(&k.as_str()))
            .cloned()
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }
    pub fn print_successor(&mut self, b: BlockId) {
        let n = self
            .names
            .blocks
            .get(&b)
            .cloned()
            .unwrap_or_else(|| "^INVALIDBLOCK".into());
        self.out.push_str(&n);
    }
    /// `%arg0: type` for a block argument, with its location when printing debug info.
    pub fn print_arg_decl(&mut self, v: Value) {
        self.print_operand(v);
        self.out.push_str(": ");
        self.print_type(self.ir.value_type(v));
        if self.opts.debuginfo {
            if let Some(l) = self.ir.value(v).loc {
                self.out.push(' ');
                super::write_attr_body(&mut self.out, l, None, false);
            }
        }
    }
    pub fn newline(&mut self) {
        self.out.push('\n');
        for _ in 0..self.indent {
            self.out.push(' ');
        }
    }
    pub fn print_escaped(&mut self, s: &str) {
        super::write_escaped_string(&mut self.out, s);
    }

    /// `{ ... }`: `print_entry_args` prints the entry block label with its arguments;
    /// `print_terminators` false elides a terminator without operands.
    pub fn print_region(&mut self, r: RegionId, print_entry_args: bool, print_terminators: bool) {
        self.print_region_impl(r, print_entry_args, print_terminators, false);
    }

    fn print_region_impl(
        &mut self,
        r: RegionId,
        print_entry_args: bool,
        print_terminators: bool,
        print_empty_block: bool,
    ) {
        self.out.push_str("{\n");
        let blocks = &self.ir.region(r).blocks;
        if let Some(&entry) = blocks.first() {
            let parent = self.ir.region(r).parent;
            let dd = parent
                .and_then(|p| self.ctx.op_def(self.ir.name(p)))
                .and_then(|d| d.default_dialect)
                .unwrap_or("");
            self.default_dialects.push(dd);
            let eb = self.ir.block(entry);
            let header = (print_empty_block && eb.first.is_none())
                || (print_entry_args && !eb.args.is_empty());
            self.print_block(entry, header, print_terminators);
            for b in blocks.iter().skip(1) {
                self.print_block(*b, true, true);
            }
            self.default_dialects.pop();
        }
        for _ in 0..self.indent {
            self.out.push(' ');
        }
        self.out.push('}');
    }

    fn predecessors(&self, b: BlockId) -> Vec<BlockId> {
        let mut preds = vec![];
        let Some(r) = self.ir.block(b).parent else {
            return preds;
        };
        for pb in &self.ir.region(r).blocks {
            if let Some(t) = self.ir.terminator(*pb) {
                for s in &self.ir.op(t).successors {
                    if *s == b {
                        preds.push(*pb);
                    }
                }
            }
        }
        preds
    }

    fn print_block(&mut self, b: BlockId, header: bool, print_terminator: bool) {
        if header {
            for _ in 0..self.indent {
                self.out.push(' ');
            }
            self.print_successor(b);
            let args = self.ir.block_args(b).to_vec();
            if !args.is_empty() {
                self.out.push('(');
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.print_arg_decl(*a);
                }
                self.out.push(')');
            }
            self.out.push(':');
            let preds = self.predecessors(b);
            let is_entry = self
                .ir
                .block(b)
                .parent
                .and_then(|r| self.ir.region_entry(r))
                == Some(b);
            if preds.is_empty() {
                if !is_entry {
                    self.out.push_str("  // no predecessors");
                }
            } else {
                if preds.len() == 1 {
                    self.out.push_str("  // pred: ");
                    self.print_successor(preds[0]);
                } else {
                    let order: FxHashMap<BlockId, usize> = self
                        .ir
                        .region(self.ir.block(b).parent.expect("parent"))
                        .blocks
                        .iter()
                        .enumerate()
                        .map(|(i, b)| (*b, i))
                        .collect();
                    let mut ps = preds.clone();
                    ps.sort_by_key(|p| order[p]);
                    let _ = write!(self.out, "  // {} preds: ", ps.len());
                    for (i, p) in ps.iter().enumerate() {
                        if i > 0 {
                            self.out.push_str(", ");
                        }
                        self.print_successor(*p);
                    }
                }
            }
            self.out.push('\n');
        }
        self.indent += 2;
        let ops: Vec<OpId> = self.ir.block_ops(b).collect();
        for (i, o) in ops.iter().enumerate() {
            let is_last = i + 1 == ops.len();
            if is_last && !print_terminator {
                let od = self.ir.op(*o);
                let is_term = self
                    .ctx
                    .has_trait(od.name, crate::dialect::traits::TERMINATOR);
                // An elided terminator must carry nothing: no values, attributes or ops.
                let holds_ops = od.regions.iter().any(|r| {
                    self.ir
                        .region(*r)
                        .blocks
                        .iter()
                        .any(|b| self.ir.block_ops(*b).next().is_some())
                });
                if is_term
                    && od.operands.is_empty()
                    && od.results.is_empty()
                    && od.attrs.as_dict().is_some_and(|d| d.is_empty())
                    && !holds_ops
                {
                    continue;
                }
            }
            self.print_op_line(*o);
        }
        self.indent -= 2;
    }

    fn print_op_line(&mut self, op: OpId) {
        for _ in 0..self.indent {
            self.out.push(' ');
        }
        self.print_op(op);
        self.out.push('\n');
        self.flush_if_large(false);
    }

    /// One operation (no indentation, no newline).
    pub fn print_op(&mut self, op: OpId) {
        crate::parser::with_stack(|| self.print_op_inner(op))
    }

    fn print_op_inner(&mut self, op: OpId) {
        let results = self.ir.results(op);
        if !results.is_empty() {
            let first = results[0];
            self.out.push('%');
            let group = self.names.values.write_base(&mut self.out, first);
            if results.len() > 1 && group == Some(None) {
                for r in &results[1..] {
                    self.out.push_str(", %");
                    self.names.values.write_base(&mut self.out, *r);
                }
            } else if results.len() > 1 {
                let _ = write!(self.out, ":{}", results.len());
            }
            self.out.push_str(" = ");
        }
        let name = self.ir.name(op);
        let def = self.ctx.op_def(name);
        match def.and_then(|d| d.print) {
            Some(print) if !self.opts.generic => {
                let dd = self.default_dialects.last().copied().unwrap_or("");
                let short = if !dd.is_empty()
                    && name.len() > dd.len() + 1
                    && name.starts_with(dd)
                    && name.as_bytes()[dd.len()] == b'.'
                {
                    &name[dd.len() + 1..]
                } else {
                    name
                };
                self.out.push_str(short);
                print(self, op);
            }
            _ => self.print_generic(op),
        }
        if self.opts.debuginfo {
            self.out.push(' ');
            super::write_attr_body(&mut self.out, self.ir.loc(op), None, false);
        }
    }

    pub fn print_generic(&mut self, op: OpId) {
        let o = self.ir.op(op);
        super::write_escaped_string(&mut self.out, o.name);
        self.out.push('(');
        self.print_operands(&o.operands.clone());
        self.out.push(')');
        if !o.successors.is_empty() {
            self.out.push('[');
            for (i, s) in o.successors.clone().iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.print_successor(*s);
            }
            self.out.push(']');
        }
        if o.props.as_dict().is_some_and(|d| !d.is_empty()) {
            self.out.push_str(" <");
            self.print_attr(o.props);
            self.out.push('>');
        }
        if !o.regions.is_empty() {
            self.out.push_str(" (");
            for (i, r) in o.regions.clone().iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.print_region_impl(*r, true, true, true);
            }
            self.out.push(')');
        }
        let attrs = o.attrs.as_dict().unwrap_or(&[]);
        if !attrs.is_empty() {
            self.out.push_str(" {");
            write_named_attrs(&mut self.out, attrs, Some(&self.aliases));
            self.out.push('}');
        }
        self.out.push_str(" : (");
        let ins: Vec<_> = o.operands.iter().map(|v| self.ir.value_type(*v)).collect();
        self.print_types(&ins);
        self.out.push_str(") -> ");
        let outs: Vec<_> = o.results.iter().map(|v| self.ir.value_type(*v)).collect();
        self.print_result_types(&outs);
    }

    /// Whether a value is defined by a block argument (for hooks).
    pub fn is_block_arg(&self, v: Value) -> bool {
        matches!(self.ir.value(v).def, ValueDef::BlockArg(..))
    }
}

/// Print a module (or any op) with alias definitions first and resources last.
pub fn print_module(ir: &Ir, ctx: &Context, top: OpId, opts: PrintOptions) -> String {
    let mut buf = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = print_module_to(ir, ctx, top, opts, &mut buf);
    String::from_utf8(buf).unwrap_or_default()
}

/// Like [`print_module`], streaming to `w` (large modules are never held as one string).
pub fn print_module_to(
    ir: &Ir,
    ctx: &Context,
    top: OpId,
    opts: PrintOptions,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let (aliases, order) = if opts.generic {
        // MLIR's alias initializer: regions first, then types, then attributes.
        super::collect_aliases(ir, top, opts.debuginfo)
    } else {
        // Custom forms print only some attributes: collect in a dry run of the printer.
        let rec = Aliases {
            names: Default::default(),
            record: Some(Default::default()),
        };
        let mut discard = std::io::sink();
        let mut dry = OpPrinter::new(ir, ctx, opts, rec);
        dry.sink = Some(&mut discard);
        dry.number_from(top);
        dry.print_op(top);
        let seen: Vec<(AliasKey, usize)> = dry
            .aliases
            .record
            .take()
            .map(|c| c.into_inner())
            .unwrap_or_default()
            .into_iter()
            .map(|k| (k, 0))
            .collect();
        Aliases::finish(seen)
    };
    let mut out = String::new();
    for (name, k) in &order {
        out.push_str(name);
        out.push_str(" = ");
        match k {
            AliasKey::Attr(a) => super::write_attr_body(&mut out, *a, Some(&aliases), false),
            AliasKey::Type(t) => super::write_type_body(&mut out, *t, Some(&aliases)),
        }
        out.push('\n');
    }
    w.write_all(out.as_bytes())?;
    out.clear();
    {
        let mut p = OpPrinter::new(ir, ctx, opts, aliases);
        p.sink = Some(&mut *w);
        p.number_from(top);
        p.print_op(top);
        p.out.push('\n');
        p.flush_if_large(true);
        if let Some(e) = p.io_error.take() {
            return Err(e);
        }
    }
    if !ir.resources.is_empty() {
        out.push_str("\n{-#\n  dialect_resources: {\n");
        let mut dialects: Vec<&str> = vec![];
        for r in &ir.resources {
            if !dialects.contains(&r.dialect.as_str()) {
                dialects.push(&r.dialect);
            }
        }
        for (di, d) in dialects.iter().enumerate() {
            let _ = writeln!(out, "    {d}: {{");
            let entries: Vec<_> = ir.resources.iter().filter(|r| r.dialect == *d).collect();
            for (i, r) in entries.iter().enumerate() {
                let _ = write!(out, "      {}: {}", r.key, r.value);
                out.push_str(if i + 1 < entries.len() { ",\n" } else { "\n" });
            }
            out.push_str(if di + 1 < dialects.len() {
                "    },\n"
            } else {
                "    }\n"
            });
        }
        out.push_str("  }\n#-}\n");
    }
    w.write_all(out.as_bytes())
}

/// One op printed on its own (aliases inline), e.g. for diagnostics.
pub fn print_op_standalone(ir: &Ir, ctx: &Context, op: OpId, generic: bool) -> String {
    let mut p = OpPrinter::new(
        ir,
        ctx,
        PrintOptions {
            generic,
            debuginfo: false,
        },
        Aliases::default(),
    );
    // Number from the closest isolated ancestor so operand names are meaningful.
    let mut root = op;
    while let Some(parent) = ir.parent_op(root) {
        root = parent;
    }
    p.number_from(root);
    p.print_op(op);
    p.out
}
