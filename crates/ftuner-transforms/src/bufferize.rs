//! `bufferize`: tensors become buffers (memrefs), writing in place wherever that cannot
//! change what the program computes, copying where it could.
//!
//! Two phases per function, as in MLIR's One-Shot Bufferize:
//!
//! 1. **Analysis** on the tensor IR, in program order. Every destination operand of a
//!    destination-passing op (`vector.transfer_write`, `tensor.insert_slice`,
//!    `tensor.insert`, the `outs` of `linalg` ops, the `iter_args` inits of `scf.for`) is a
//!    candidate to write in place. Values that share a buffer form an alias tree
//!    (`extract_slice`/reshapes are views of their source; an in-place write's result
//!    shares its destination's buffer; an `scf.if`/`scf.index_switch` result shares the
//!    buffer all its branches yield). A write into `d` is in place unless some value of
//!    `d`'s tree defined before the write is used (for its data, not its shape) after it
//!    (in a later position, a later iteration of an enclosing loop, or inside the writing
//!    op), or the tree's root is read-only (function arguments, constants). The one
//!    exception is MLIR's matching pair: `insert_slice` of a value written in place into an
//!    `extract_slice` of the same destination at the same offsets, sizes and strides.
//! 2. **Rewrite**: each function body is rebuilt on buffers. `tensor.empty` becomes an
//!    aligned `memref.alloc`; views become `memref.subview`/`collapse_shape`/...; reads
//!    become `memref.load`/`vector.transfer_read`; a write in place writes the destination's
//!    buffer; any other write first copies the destination into a new buffer. Constant
//!    tensors become private `memref.global`s. `scf.for` loses its tensor `iter_args` (the
//!    buffer is updated in place; a yielded buffer that is not the loop's is copied back).
//!    Functions take and return identity-layout memrefs; a returned buffer is always one
//!    the function allocated (else a copy), so callers own results. Every allocation that
//!    does not escape is freed with `memref.dealloc` at the end of its block.
//!
//! This file is the driver: the pass, and the per-function rewrite that hands each op to
//! its [`Bufferizable`] model in the Context (the analysis asks the same model which
//! operands the op writes and whether it is a view); destination-style ops bufferize
//! generically. [`register_models`] attaches ours, which live with their dialect's
//! conversions (`tensor`, `vector`, `scf`, `func`, constants).

use ftuner_dialects::ops;
mod alloc;
mod analysis;
mod constants;
mod dealloc;
mod func;
mod index;
mod pad;
mod scf;
mod shared_fills;
mod structured;
mod tensor;
mod types;
mod vector;

use analysis::{analyze, Analysis};
use ftuner_ir::{
    intern_name, AttrKind, Attribute, BlockId, Diagnostic, Ir, OpId, OpSpec, Type, Value,
};
use ftuner_pass::{define_pass, PassContext, PassFailure};
use rustc_hash::FxHashMap;

/// The entries of a dictionary attribute (an op's properties or attributes).
fn dict_entries(a: Attribute) -> Vec<(String, Attribute)> {
    match a.kind() {
        AttrKind::Dictionary(e) => e.clone(),
        _ => vec![],
    }
}

// ----- rewrite -----------------------------------------------------------------------

/// The rewrite of one function on buffers (its conversions of op families are in the
/// submodules). A [`Bufferizable`] model reads the op ([`BufferRewriter::ir`]) and its
/// operands' buffers ([`BufferRewriter::buffer`]), creates ops at the end of the block
/// ([`BufferRewriter::new_op`]) and binds the op's tensor results to their buffers
/// ([`BufferRewriter::bind`]).
pub struct BufferRewriter<'a> {
    ctx: &'a ftuner_ir::Context,
    ir: &'a mut Ir,
    an: &'a Analysis,
    /// Old value -> new value (tensors -> their buffers).
    map: FxHashMap<Value, Value>,
    /// New allocations to free at the end of their block unless they escape.
    owned: Vec<(Value, BlockId)>,
    /// Constant tensors turned into globals: (name, value, type).
    globals: &'a mut Vec<(String, Attribute, Type)>,
    /// Where `memref.get_global`s go (the new entry block).
    entry: BlockId,
    copies: u64,
    allocs: u64,
}

/// A result whose error is an op and what is wrong with it.
type R<T> = Result<T, (OpId, String)>;

/// An op's `BufferizableOpInterface` model: what the in-place analysis asks of it and how
/// the rewrite rebuilds it on buffers. Attached to ops in the Context
/// ([`register_models`], or a compiler embedding the pass for its own ops); a
/// destination-style op needs none (its inits are its destinations).
#[derive(Clone, Copy)]
pub struct Bufferizable {
    /// The tensor operands it writes, each with the result tied to it
    /// (`(operand index, result)`): candidates to write in place.
    pub destinations: DestinationsFn,
    /// Its (first) result is a view of operand 0: it shares that buffer and writes nothing.
    pub view: bool,
    /// Its tensor results are what its regions yield (`scf.if`-like): a result shares the
    /// buffer every region yields a view or in-place write of.
    pub yields_results: bool,
    /// Rebuild the op on buffers at the end of the block, binding its tensor results to
    /// their buffers ([`BufferRewriter::bind`]).
    pub bufferize: BufferizeFn,
}

/// The tensor operands an op writes, each `(operand index, the result tied to it)`.
pub type DestinationsFn = fn(&Ir, OpId) -> Vec<(usize, Option<Value>)>;

/// A bufferization model's rewrite of one op, appending at the end of a block.
pub type BufferizeFn = fn(&mut BufferRewriter<'_>, OpId, BlockId) -> Result<(), (OpId, String)>;

impl Bufferizable {
    /// A model of an op that writes no operand, is no view and has no regions.
    pub fn plain(bufferize: BufferizeFn) -> Bufferizable {
        Bufferizable {
            destinations: |_, _| vec![],
            view: false,
            yields_results: false,
            bufferize,
        }
    }
}

/// Attach the bufferization models of our dialects' ops (MLIR's
/// `register*BufferizableOpInterfaceExternalModels`): `arith.constant`, the `tensor` ops,
/// `vector.transfer_read/write`, `scf.for/if/index_switch`, `func.call`.
pub fn register_models(reg: &mut ftuner_ir::Registry) {
    constants::register(reg);
    tensor::register(reg);
    vector::register(reg);
    scf::register(reg);
    func::register(reg);
}

impl BufferRewriter<'_> {
    /// The IR being rewritten.
    pub fn ir(&self) -> &Ir {
        self.ir
    }

    /// The buffer (or value) that stands for `v`, an operand of `old`.
    pub fn buffer(&self, old: OpId, v: Value) -> Result<Value, (OpId, String)> {
        self.v(old, v)
    }

    /// The old value `old` (a result of the op being rewritten) is `new` on buffers.
    pub fn bind(&mut self, old: Value, new: Value) {
        self.map.insert(old, new);
    }

    /// Op `name` (with these operands, result types and properties), appended to `b`.
    pub fn new_op(
        &mut self,
        b: BlockId,
        name: &str,
        operands: Vec<Value>,
        results: Vec<Type>,
        props: Vec<(String, Attribute)>,
        loc: Attribute,
    ) -> OpId {
        let mut s = OpSpec::new(intern_name(name), loc)
            .operands(operands)
            .results(results);
        s.props = props;
        let o = self.ir.create_op(s);
        self.ir.append_op(b, o);
        o
    }

    /// The new value of `v`, an operand of `old`.
    fn v(&self, old: OpId, v: Value) -> R<Value> {
        self.map
            .get(&v)
            .copied()
            .ok_or((old, "uses a value bufferization has not seen".into()))
    }

    /// The new values of `vals`, operands of `old`.
    fn vs(&self, old: OpId, vals: &[Value]) -> R<Vec<Value>> {
        vals.iter().map(|v| self.v(old, *v)).collect()
    }

    /// Rebuild the ops of block `old` into `new`, all but its terminator, which is
    /// returned.
    fn block(&mut self, old: BlockId, new: BlockId) -> R<Option<OpId>> {
        let ops = self.ir.block_ops_vec(old);
        let mut term = None;
        for op in ops {
            let name = self.ir.name(op);
            if name == ops::func::ReturnOp::NAME || name == ops::scf::YieldOp::NAME {
                term = Some(op);
                continue;
            }
            self.op(op, new)?;
        }
        Ok(term)
    }

    /// Rebuild the regions of `old` into those of `new` (block arguments keep their
    /// types), emitting each block's terminator as it is.
    fn plain_regions(&mut self, old: OpId, new: OpId) -> R<()> {
        let olds = self.ir.regions_of(old).to_vec();
        let news = self.ir.regions_of(new).to_vec();
        for (ro, rn) in olds.into_iter().zip(news) {
            for ob in self.ir.region(ro).blocks.clone() {
                let types: Vec<Type> = self
                    .ir
                    .block_args(ob)
                    .iter()
                    .map(|a| self.ir.value_type(*a))
                    .collect();
                if types.iter().any(|t| t.is_tensor()) {
                    return Err((old, "has a region with tensor arguments".into()));
                }
                let nb = self.ir.append_block(rn, &types);
                for (a, n) in self
                    .ir
                    .block_args(ob)
                    .to_vec()
                    .into_iter()
                    .zip(self.ir.block_args(nb).to_vec())
                {
                    self.map.insert(a, n);
                }
                let ops = self.ir.block_ops_vec(ob);
                for op in ops {
                    self.op(op, nb)?;
                }
            }
        }
        Ok(())
    }

    /// A copy of `op` with mapped operands, the given result types and rebuilt regions.
    fn clone_like(
        &mut self,
        op: OpId,
        b: BlockId,
        operands: Vec<Value>,
        results: Vec<Type>,
    ) -> R<OpId> {
        let od = self.ir.op(op);
        let mut s = OpSpec::new(od.name, od.loc)
            .operands(operands)
            .results(results)
            .regions(od.regions.len());
        s.props = dict_entries(od.props);
        s.attrs = dict_entries(od.attrs);
        s.successors = od.successors.to_vec();
        let n = self.ir.create_op(s);
        self.ir.append_op(b, n);
        self.plain_regions(op, n)?;
        Ok(n)
    }

    /// Rebuild `op` on buffers at the end of `b`: a copy when it does not touch tensors
    /// (and has no region its model rebuilds), else by its [`Bufferizable`] model in the
    /// Context; a destination-style op without one bufferizes as one (it writes its inits
    /// and has no results: MLIR's `DstBufferizableOpInterfaceExternalModel`).
    fn op(&mut self, op: OpId, b: BlockId) -> R<()> {
        let name = self.ir.name(op);
        let model = self.ctx.interface::<Bufferizable>(name).copied();
        let touches_tensors = self
            .ir
            .operands(op)
            .iter()
            .chain(self.ir.results(op))
            .any(|v| self.ir.value_type(*v).is_tensor());
        if !touches_tensors && (model.is_none() || self.ir.regions_of(op).is_empty()) {
            return self.clone_plain(op, b);
        }
        match model {
            Some(m) => (m.bufferize)(self, op, b),
            None if self.ctx.is_destination_style(name) => self.structured_op(op, b),
            None => Err((
                op,
                "on tensors is not supported by bufferize (lower it to linalg, tensor, scf or vector ops first)".into(),
            )),
        }
    }

    /// An op that neither takes nor yields tensors: a copy with mapped operands (its
    /// regions rebuilt, as they may hold ops on tensors).
    fn clone_plain(&mut self, op: OpId, b: BlockId) -> R<()> {
        let results = self.ir.results(op).to_vec();
        let ops = self.vs(op, self.ir.operands(op))?;
        let tys: Vec<Type> = results.iter().map(|v| self.ir.value_type(*v)).collect();
        let n = self.clone_like(op, b, ops, tys)?;
        for (o, r) in results.iter().zip(self.ir.results(n).to_vec()) {
            self.map.insert(*o, r);
        }
        Ok(())
    }
}

/// Bufferize one function; returns the counters (allocations, copies, in-place writes,
/// fills cloned for their writers).
fn bufferize_func(
    ctx: &ftuner_ir::Context,
    ir: &mut Ir,
    func: OpId,
    globals: &mut Vec<(String, Attribute, Type)>,
) -> R<(u64, u64, u64, u64)> {
    let Some(region) = ir.regions_of(func).first().copied() else {
        return Ok((0, 0, 0, 0));
    };
    let Some(old_entry) = ir.region_entry(region) else {
        return Ok((0, 0, 0, 0)); // a declaration: only its type changes
    };
    if ir.region(region).blocks.len() != 1 {
        return Err((
            func,
            "functions with several blocks are not bufferized".into(),
        ));
    }
    let refills = shared_fills::split_shared_fills(ctx, ir, func);
    let an = analyze(ctx, ir, func, old_entry);
    let arg_types = func::arg_types(ir, func, old_entry)?;
    let entry = ir.new_block(&arg_types);
    let mut rw = BufferRewriter {
        ctx,
        map: FxHashMap::default(),
        an: &an,
        owned: vec![],
        globals,
        entry,
        copies: 0,
        allocs: 0,
        ir,
    };
    for (a, n) in rw
        .ir
        .block_args(old_entry)
        .to_vec()
        .into_iter()
        .zip(rw.ir.block_args(entry).to_vec())
    {
        rw.map.insert(a, n);
    }
    let term = rw
        .block(old_entry, entry)?
        .ok_or((func, "function body has no func.return".into()))?;
    let loc = rw.ir.loc(term);
    let res_types = rw.func_return(term, entry)?;
    rw.free_owned(loc);
    let (allocs, copies) = (rw.allocs, rw.copies);
    // Swap bodies and the signature.
    ir.erase_block(old_entry);
    ir.region_attach_block(region, entry);
    let fty = Type::function(arg_types, res_types);
    ir.set_prop(func, "function_type", Some(Attribute::type_attr(fty)));
    Ok((allocs, copies, an.in_place.len() as u64, refills))
}

define_pass! {
    /// `bufferize`: tensors to buffers, one function at a time.
    pub struct BufferizePass {
        argument: "bufferize",
        name: "Bufferize",
        summary: "Turn tensors into buffers, writing in place where an alias analysis proves it safe",
        description: "One-shot bufferization of func/scf/tensor/linalg/vector IR with function boundaries: memref arguments and results with identity layouts, in-place destination-passing writes where no read of the old value can follow, copies elsewhere, constants as memref.global, deallocation of buffers that do not escape.",
        options: BufferizeOptions {},
        statistics: {
            allocs: "num-allocs" => "Buffers allocated",
            copies: "num-copies" => "Buffer copies (writes that could not be in place)",
            in_place: "num-in-place" => "Destination-passing writes done in place",
            refills: "num-refills" => "Shared linalg.fills cloned, one per writer (instead of copies)",
        },
    }
}

impl BufferizePass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        op: OpId,
        _: &BufferizeOptions,
    ) -> Result<(), PassFailure> {
        // Ops defined by their decomposition into ops bufferized below.
        let mut concats = vec![];
        cx.ir.walk_pre(op, &mut |o| {
            if cx.ir.name(o) == ops::tensor::ConcatOp::NAME {
                concats.push(o);
            }
        });
        for c in concats {
            ftuner_dialects::tensor::decompose_concat(cx.ctx, cx.ir, c);
        }
        let mut funcs = vec![];
        cx.ir.walk_pre(op, &mut |o| {
            if cx.ir.name(o) == ops::func::FuncOp::NAME {
                funcs.push(o);
            }
        });
        let mut globals = vec![];
        let mut failed = false;
        for f in funcs {
            let has_body = cx
                .ir
                .regions_of(f)
                .first()
                .is_some_and(|r| cx.ir.region_entry(*r).is_some());
            if !has_body {
                func::convert_signature(cx.ir, f);
                continue;
            }
            match bufferize_func(cx.ctx, cx.ir, f, &mut globals) {
                Ok((a, c, i, r)) => {
                    self.refills += r;
                    self.allocs += a;
                    self.copies += c;
                    self.in_place += i;
                }
                Err((at, m)) => {
                    let at = if cx.ir.is_alive(at) { at } else { f };
                    cx.emit(Diagnostic::error(
                        cx.ir.loc(at),
                        format!("'{}' op {m}", cx.ir.name(at)),
                    ));
                    failed = true;
                }
            }
        }
        if failed {
            return Err(PassFailure);
        }
        // Globals go first in the module body.
        constants::emit_globals(cx.ir, op, globals);
        Ok(())
    }
}
