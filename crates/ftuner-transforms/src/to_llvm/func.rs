//! `func` to `llvm` with MLIR's calling convention: each memref argument passed as its
//! 3 + 2R descriptor fields, several results returned as a struct. Converting a whole
//! `func.func` (or `gpu.func` kernel): its `llvm.func`, the descriptors rebuilt from the
//! expanded arguments, its body, its return, its C interface (ciface.rs) and the pool's
//! entries of its `rt.parallel_for`s (parallel.rs); and `func.call`.

use super::ciface::ciface;
use super::descriptor::is_identity_layout;
use super::types::{conv, llvm_ty, ptr, struct_of, text};
use super::{LlvmRewriter, R};
use crate::aliasing;
use ftuner_dialects::{func_attrs, ops};
use ftuner_ir::{intern_name, Attribute, BlockId, Ir, OpId, OpSpec, Type, Value};
use rustc_hash::FxHashSet;
use std::collections::BTreeMap;

/// The expanded LLVM parameter types of a function's inputs.
fn expand_params(inputs: &[Type]) -> Option<Vec<Type>> {
    let mut out = vec![];
    for t in inputs {
        if t.is_memref() {
            let r = t.rank()?;
            out.extend([ptr(), ptr(), Type::i64()]);
            out.extend(std::iter::repeat_n(Type::i64(), 2 * r));
        } else {
            out.push(conv(*t)?);
        }
    }
    Some(out)
}

/// The LLVM result type of a function returning `results` (`None`: void; several: a
/// struct); `None` when one has no LLVM type.
fn ret_type(results: &[Type]) -> Option<Option<Type>> {
    let conv_all: Option<Vec<Type>> = results.iter().map(|t| conv(*t)).collect();
    let c = conv_all?;
    Some(match c.len() {
        0 => None,
        1 => Some(c[0]),
        _ => Some(struct_of(&c)),
    })
}

pub(super) fn func_type_body(ret: Option<Type>, params: &[Type]) -> String {
    format!(
        "{} ({})",
        ret.map_or("void".to_string(), text),
        params
            .iter()
            .map(|t| text(*t))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

pub(super) fn new_func(ir: &mut Ir, name: &str, fty: &str, loc: Attribute, private: bool) -> OpId {
    let mut s = OpSpec::new(intern_name(ops::llvm::FuncOp::NAME), loc)
        .prop("sym_name", Attribute::string(name))
        .prop(
            "function_type",
            Attribute::type_attr(llvm_ty(&format!("func<{fty}>"))),
        )
        .regions(1);
    if private {
        s = s.prop("linkage", Attribute::dialect("llvm", "linkage<private>"));
    }
    ir.create_op(s)
}

/// A function's signature, in its own types and in LLVM's.
struct Signature {
    name: String,
    ins: Vec<Type>,
    outs: Vec<Type>,
    /// The expanded parameters and the result type (`None`: void).
    params: Vec<Type>,
    ret: Option<Type>,
}

fn signature(ir: &Ir, f: OpId) -> R<Signature> {
    let name = ir
        .symbol_name(f)
        .ok_or((f, "has no name".to_string()))?
        .to_string();
    let fty = ir
        .attr(f, "function_type")
        .and_then(|a| a.as_type())
        .ok_or((f, "has no function_type".to_string()))?;
    let ins = fty.function_inputs().to_vec();
    let outs = fty.function_results().to_vec();
    let params = expand_params(&ins).ok_or((f, "has an argument LLVM cannot hold".to_string()))?;
    let ret = ret_type(&outs).ok_or((f, "has a result LLVM cannot hold".to_string()))?;
    Ok(Signature {
        name,
        ins,
        outs,
        params,
        ret,
    })
}

/// The `llvm.func` of `f`: private linkage for a private definition, `noalias` pointers
/// for noalias memref arguments, `noinline` when `f` asks for it, `noinline optnone` for
/// straight-line code run once.
fn declare(ir: &mut Ir, f: OpId, sig: &Signature, private_body: bool) -> OpId {
    let loc = ir.loc(f);
    let nf = new_func(
        ir,
        &sig.name,
        &func_type_body(sig.ret, &sig.params),
        loc,
        false,
    );
    if private_body {
        ir.set_prop(
            nf,
            "linkage",
            Some(Attribute::dialect("llvm", "linkage<private>")),
        );
    }
    // A noalias memref argument: its allocated and aligned pointers are noalias.
    if let Some(attrs) = aliasing::expanded_arg_attrs(ir, f, &sig.ins) {
        ir.set_prop(nf, "arg_attrs", Some(attrs));
    }
    let optnone = run_once_straight_line(ir, f);
    let mut passthrough = vec![];
    if ir.attr(f, func_attrs::NOINLINE).is_some() || optnone {
        passthrough.push(Attribute::string("noinline"));
    }
    if optnone {
        passthrough.push(Attribute::string("optnone"));
    }
    if !passthrough.is_empty() {
        ir.set_prop(nf, "passthrough", Some(Attribute::array(passthrough)));
    }
    nf
}

/// `f` runs once per loaded model ([`func_attrs::RUN_ONCE`]) and its body
/// is one block holding no op with regions and no `memref.copy` this conversion turns into
/// a loop nest (one with a non-identity layout): no loop left in it, so it is compiled
/// without optimization.
fn run_once_straight_line(ir: &Ir, f: OpId) -> bool {
    if ir.attr(f, func_attrs::RUN_ONCE).is_none() {
        return false;
    }
    let mut nested = false;
    for r in ir.regions_of(f) {
        // Several blocks may hold a loop of branches.
        nested |= ir.region(*r).blocks.len() > 1;
        for b in &ir.region(*r).blocks {
            for op in ir.block_ops(*b) {
                nested |= !ir.regions_of(op).is_empty();
                nested |= ir.name(op) == ops::memref::CopyOp::NAME
                    && !ir
                        .operands(op)
                        .iter()
                        .all(|v| is_identity_layout(ir.value_type(*v)));
            }
        }
    }
    !nested
}

/// What the conversion of every function of a symbol table shares.
pub(super) struct Shared<'a> {
    pub(super) ctx: &'a ftuner_ir::Context,
    /// External functions the module needs: name -> `!llvm.func<...>` body.
    pub(super) decls: &'a mut BTreeMap<String, String>,
    /// Assertion messages: (global name, bytes with the trailing NUL).
    pub(super) strings: &'a mut Vec<(String, String)>,
    /// The thread pool's entries made so far (`rt.parallel_for` callees').
    pub(super) pools: &'a mut super::parallel::Pools,
    /// Functions of the module that may fail a run-time check.
    pub(super) may_fail: &'a FxHashSet<String>,
    /// A failed check aborts the process instead of returning.
    pub(super) abort_on_failure: bool,
}

/// Convert one `func.func`; returns the new ops to put in its place (the function, its
/// C interface, the thread pool's entries of the `rt.parallel_for`s it holds).
pub(super) fn convert_func(ir: &mut Ir, f: OpId, m: Shared<'_>) -> R<Vec<OpId>> {
    let sig = signature(ir, f)?;
    let loc = ir.loc(f);
    let private = ir.attr(f, "sym_visibility").and_then(|a| a.as_str()) == Some("private");
    let body_region = ir.regions_of(f).first().copied();
    let old_entry = body_region.and_then(|r| ir.region_entry(r));
    let nf = declare(ir, f, &sig, private && old_entry.is_some());
    let Some(old_entry) = old_entry else {
        return Ok(vec![nf]);
    };
    if ir
        .region(body_region.unwrap_or_else(|| ir.regions_of(f)[0]))
        .blocks
        .len()
        != 1
    {
        return Err((
            f,
            "functions with several blocks are not converted yet".into(),
        ));
    }
    let region = ir.regions_of(nf)[0];
    let entry = ir.append_block(region, &sig.params);
    let mut outlined = vec![];
    let mut cv = LlvmRewriter {
        ctx: m.ctx,
        ir,
        map: Default::default(),
        consts: Default::default(),
        cur: entry,
        region,
        loc,
        decls: m.decls,
        strings: m.strings,
        outlined: &mut outlined,
        pools: m.pools,
        fname: &sig.name,
        ret: sig.ret,
        may_fail: m.may_fail,
        abort_on_failure: m.abort_on_failure,
    };
    cv.bind_arguments(old_entry, entry, &sig.ins);
    let term = cv
        .ops(old_entry)?
        .ok_or((f, "has no func.return".to_string()))?;
    cv.return_values(term)?;
    let mut out = vec![nf];
    if cv.ir.name(f) == ops::gpu::FuncOp::NAME {
        // A kernel: NVPTX's kernel calling convention, no host C interface.
        if cv.ir.attr(f, "gpu.kernel").is_some() {
            cv.ir.set_attr(nf, "nvvm.kernel", Some(Attribute::unit()));
        }
    } else if !private {
        out.push(ciface(
            &mut cv,
            &sig.ins,
            &sig.outs,
            sig.ret,
            &sig.params,
            loc,
        ));
    }
    out.extend(outlined);
    Ok(out)
}

impl LlvmRewriter<'_> {
    /// Map the arguments of `old_entry` (of types `ins`) to the expanded arguments of
    /// `entry`, rebuilding each memref's descriptor from its fields.
    fn bind_arguments(&mut self, old_entry: BlockId, entry: BlockId, ins: &[Type]) {
        let pargs = self.ir.block_args(entry).to_vec();
        let mut k = 0;
        for (a, t) in self.ir.block_args(old_entry).to_vec().into_iter().zip(ins) {
            if t.is_memref() {
                let r = t.rank().unwrap_or(0);
                let sizes = pargs[k + 3..k + 3 + r].to_vec();
                let strides = pargs[k + 3 + r..k + 3 + 2 * r].to_vec();
                let d = self.pack(pargs[k], pargs[k + 1], pargs[k + 2], &sizes, &strides);
                self.map.insert(a, d);
                k += 3 + 2 * r;
            } else {
                self.map.insert(a, pargs[k]);
                k += 1;
            }
        }
    }

    /// `llvm.return` of the values `func.return` `term` returns (several: as a struct).
    fn return_values(&mut self, term: OpId) -> R<()> {
        let vals = self.converted_operands(term)?;
        self.loc = self.ir.loc(term);
        let rv = match (self.ret, vals.len()) {
            (None, _) => vec![],
            (Some(_), 1) => vals,
            (Some(rt), _) => {
                let mut s = self.val(ops::llvm::MlirUndefOp::NAME, vec![], rt);
                for (i, v) in vals.into_iter().enumerate() {
                    s = self.insert(s, v, &[i as i64]);
                }
                vec![s]
            }
        };
        self.llvm_return(rv);
        Ok(())
    }

    /// The arguments of a call passing `olds`: each memref's descriptor fields.
    fn call_args(&mut self, op: OpId, olds: &[Value]) -> R<Vec<Value>> {
        let mut args = vec![];
        for v in olds {
            let t = self.ir.value_type(*v);
            if t.is_memref() {
                let d = self.desc(op, *v)?;
                let fields = self.unpack(d.v, t.rank().unwrap_or(0));
                args.extend(fields);
            } else {
                conv(t).ok_or_else(|| (op, format!("argument of type {t}")))?;
                args.push(self.v(op, *v)?);
            }
        }
        Ok(args)
    }

    /// The symbol `op`'s attribute `attr` names (`callee`, a global's `name`).
    pub(super) fn symbol(&self, op: OpId, attr: &str) -> R<String> {
        self.ir
            .attr(op, attr)
            .and_then(|a| a.as_symbol())
            .map(str::to_string)
            .ok_or_else(|| (op, format!("has no '{attr}' symbol")))
    }

    /// `func.call`: the call with expanded arguments, several results taken out of the
    /// returned struct; after a callee that may fail, the failure propagated.
    pub(super) fn func_call(&mut self, op: OpId) -> R<()> {
        let callee = self.symbol(op, "callee")?;
        let olds = self.ir.operands(op).to_vec();
        let args = self.call_args(op, &olds)?;
        let rtys = self.results_of(op)?;
        let ret = ret_type(&rtys).ok_or_else(|| (op, "result types".to_string()))?;
        let r = self.call_sym(&callee, args, ret);
        if self.may_fail.contains(&callee) {
            self.propagate_failure();
        }
        let results = self.ir.results(op).to_vec();
        match (rtys.len(), r) {
            (1, Some(r)) => {
                self.map.insert(results[0], r);
            }
            (_, Some(r)) => {
                for (i, (res, t)) in results.iter().zip(rtys).enumerate() {
                    let x = self.extract(r, &[i as i64], t);
                    self.map.insert(*res, x);
                }
            }
            _ => {}
        }
        Ok(())
    }
}
