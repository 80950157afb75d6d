//! Execution of functions, regions and ops: the interpreter's state, values and errors,
//! and the dispatch of each op to the module of its family.
//!
//! The op families live in submodules: [`constant`] (`arith.constant`, dense constants),
//! [`scalar`] (`affine.apply`, elementwise `arith`/`math`), [`control`] (calls, asserts,
//! `scf`), [`tensor_ops`] (`tensor`), [`vector`] (`vector` transfers and value ops),
//! [`structured`] (`linalg`, `ukernel.patch`, `ta.expr`) and [`gpu`] (kernel launches).
//! `memref` ops are in the crate's `memref` module.

use ftuner_dialects::ops;
mod constant;
mod contraction;
mod control;
mod gpu;
mod scalar;
mod structured;
mod tensor_ops;
mod vector;

use crate::body::ScalarOp;
use crate::tensor::{RtVal, Tensor};
use crate::word::Word;
use ftuner_ir::{Context, Ir, OpId, Type, Value, DYNAMIC};
use rustc_hash::FxHashMap;
use std::rc::Rc;

/// A run-time error with the location of the op that raised it.
#[derive(Clone, Debug)]
pub struct InterpError {
    pub message: String,
}

impl InterpError {
    pub fn new(m: impl Into<String>) -> InterpError {
        InterpError { message: m.into() }
    }
    pub fn at(ir: &Ir, op: OpId, m: impl Into<String>) -> InterpError {
        let m = m.into();
        match ftuner_ir::diag::file_line_col(ir.loc(op)) {
            Some((f, l, c)) => {
                InterpError::new(format!("{f}:{l}:{c}: error: '{}' op {m}", ir.name(op)))
            }
            None => InterpError::new(format!("error: '{}' op {m}", ir.name(op))),
        }
    }
}

impl std::fmt::Display for InterpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub(crate) fn is_yield(name: &str) -> bool {
    matches!(
        name,
        ops::linalg::YieldOp::NAME
            | ops::ukernel::YieldOp::NAME
            | ops::tensor::YieldOp::NAME
            | ops::scf::YieldOp::NAME
    )
}

pub(crate) type Env = FxHashMap<Value, RtVal>;

/// Runs the kernels of `gpu.launch_func`s somewhere else (a GPU, through its driver): the
/// interpreter is then the host program, and the kernels' writes come back into its
/// buffers.
pub trait Launcher {
    /// Launch `kernel` (`@module::@func`) over `grid` blocks of `block` threads with
    /// these arguments (of the kernel's parameter `types`); return once its results are in
    /// the argument buffers.
    fn launch(
        &mut self,
        kernel: (&str, &str),
        grid: [i64; 3],
        block: [i64; 3],
        args: &[RtVal],
        types: &[Type],
    ) -> Result<(), String>;
}

pub(crate) struct Interp<'a> {
    ctx: &'a Context,
    launcher: Option<&'a mut dyn Launcher>,
    pub(crate) ir: &'a Ir,
    pub(crate) module: OpId,
    depth: usize,
    /// `memref.global` contents, made once per run.
    pub(crate) globals: FxHashMap<String, crate::tensor::MemRef>,
    /// Inside a kernel launch: thread id, block id, block dims, grid dims (x, y, z).
    gpu: Option<[[i64; 3]; 4]>,
}

/// Run function `name` of `module` on `args`; returns its results.
pub fn run(
    ctx: &Context,
    ir: &Ir,
    module: OpId,
    name: &str,
    args: Vec<RtVal>,
) -> Result<Vec<RtVal>, InterpError> {
    run_inner(ctx, ir, module, name, args, None)
}

/// [`run`], with kernel launches handed to `launcher` instead of interpreted.
pub fn run_with_launcher<'a>(
    ctx: &'a Context,
    ir: &'a Ir,
    module: OpId,
    name: &str,
    args: Vec<RtVal>,
    launcher: &'a mut dyn Launcher,
) -> Result<Vec<RtVal>, InterpError> {
    run_inner(ctx, ir, module, name, args, Some(launcher))
}

fn run_inner<'a>(
    ctx: &'a Context,
    ir: &'a Ir,
    module: OpId,
    name: &str,
    args: Vec<RtVal>,
    launcher: Option<&'a mut dyn Launcher>,
) -> Result<Vec<RtVal>, InterpError> {
    let mut it = Interp {
        ctx,
        launcher,
        ir,
        module,
        depth: 0,
        globals: FxHashMap::default(),
        gpu: None,
    };
    // Buffers a bufferized function returns are read back as tensors.
    it.call(name, args)?
        .into_iter()
        .map(|v| match v {
            RtVal::MemRef(m) => m
                .to_tensor()
                .map(|t| RtVal::Tensor(Rc::new(t)))
                .map_err(|e| InterpError::new(format!("@{name} returns a buffer that {e}"))),
            other => Ok(other),
        })
        .collect()
}

/// Argument `a` of a parameter of type `ty` with its integers wrapped to the parameter's
/// width (a caller may pass 15 for an i4, which is -1): scalars and integer tensors; a
/// tensor already normalized is not copied. A buffer is passed as it is (the caller's
/// storage, written by the interpreter's own stores, which wrap).
fn normalize(a: RtVal, ty: Type) -> RtVal {
    let elem = ty.element_type();
    if elem.is_float() {
        return a;
    }
    match a {
        RtVal::Scalar(w) => RtVal::Scalar(crate::round_to(w, elem)),
        RtVal::Tensor(t) if t.data.iter().any(|w| crate::round_to(*w, elem) != *w) => {
            let mut t = (*t).clone();
            t.data
                .iter_mut()
                .for_each(|w| *w = crate::round_to(*w, elem));
            RtVal::Tensor(Rc::new(t))
        }
        other => other,
    }
}

fn check_type(ir: &Ir, op: OpId, ty: Type, t: &Tensor) -> Result<(), InterpError> {
    if let Some(s) = ty.shape() {
        if s.len() != t.shape.len()
            || s.iter()
                .zip(&t.shape)
                .any(|(a, b)| *a != DYNAMIC && *a as usize != *b)
        {
            return Err(InterpError::at(
                ir,
                op,
                format!("result shape {:?} does not match its type {ty}", t.shape),
            ));
        }
    }
    Ok(())
}

impl<'a> Interp<'a> {
    fn call(&mut self, name: &str, args: Vec<RtVal>) -> Result<Vec<RtVal>, InterpError> {
        let ir = self.ir;
        let mut func = None;
        ir.walk_pre(self.module, &mut |o| {
            if func.is_none()
                && ir.name(o) == ops::func::FuncOp::NAME
                && ir.symbol_name(o) == Some(name)
            {
                func = Some(o);
            }
        });
        let f = func.ok_or_else(|| InterpError::new(format!("no function @{name}")))?;
        let entry = ir
            .regions_of(f)
            .first()
            .and_then(|r| ir.region_entry(*r))
            .ok_or_else(|| InterpError::at(ir, f, "function has no body"))?;
        let params = ir.block_args(entry).to_vec();
        if params.len() != args.len() {
            return Err(InterpError::at(
                ir,
                f,
                format!("expects {} arguments, got {}", params.len(), args.len()),
            ));
        }
        let mut env: Env = FxHashMap::default();
        for (i, (p, a)) in params.iter().zip(args).enumerate() {
            let ty = ir.value_type(*p);
            if let RtVal::Tensor(t) = &a {
                if let Some(s) = ty.shape() {
                    if s.len() != t.shape.len()
                        || s.iter()
                            .zip(&t.shape)
                            .any(|(d, x)| *d != DYNAMIC && *d as usize != *x)
                    {
                        return Err(InterpError::at(
                            ir,
                            f,
                            format!(
                                "argument #{i} has shape {:?}, which does not match {ty}",
                                t.shape
                            ),
                        ));
                    }
                }
            }
            // Integers wrapped to the parameter's width, so that every word the program
            // computes on is normalized (sign-extended; an i1 0 or 1) whoever made it.
            let a = normalize(a, ty);
            // A tensor passed for a buffer parameter becomes a fresh buffer.
            let a = match a {
                RtVal::Tensor(t) if ty.is_memref() => {
                    RtVal::MemRef(crate::tensor::MemRef::from_tensor(&t))
                }
                other => other,
            };
            env.insert(*p, a);
        }
        self.depth += 1;
        if self.depth > 64 {
            return Err(InterpError::at(ir, f, "call depth exceeds 64"));
        }
        let r = self.exec_block(entry, &mut env);
        self.depth -= 1;
        r
    }

    /// Execute a block; returns the values of its terminator.
    fn exec_block(
        &mut self,
        b: ftuner_ir::BlockId,
        env: &mut Env,
    ) -> Result<Vec<RtVal>, InterpError> {
        let ir = self.ir;
        for op in ir.block_ops(b) {
            let name = ir.name(op);
            if name == ops::func::ReturnOp::NAME
                || name == ops::gpu::ReturnOp::NAME
                || is_yield(name)
            {
                return ir
                    .operands(op)
                    .iter()
                    .map(|v| self.get(env, *v, op))
                    .collect();
            }
            let results = self.exec_op(op, env)?;
            for (v, r) in ir.results(op).iter().zip(results) {
                env.insert(*v, r);
            }
        }
        Ok(vec![])
    }

    pub(crate) fn get(&self, env: &Env, v: Value, op: OpId) -> Result<RtVal, InterpError> {
        env.get(&v)
            .cloned()
            .ok_or_else(|| InterpError::at(self.ir, op, "uses a value that was not computed"))
    }
    pub(crate) fn tensor(&self, env: &Env, v: Value, op: OpId) -> Result<Rc<Tensor>, InterpError> {
        match self.get(env, v, op)? {
            RtVal::Tensor(t) => Ok(t),
            _ => Err(InterpError::at(self.ir, op, "expected a tensor operand")),
        }
    }
    pub(crate) fn scalar(&self, env: &Env, v: Value, op: OpId) -> Result<Word, InterpError> {
        match self.get(env, v, op)? {
            RtVal::Scalar(s) => Ok(s),
            _ => Err(InterpError::at(self.ir, op, "expected a scalar operand")),
        }
    }
    /// Index operands, evaluated.
    pub(crate) fn indices(
        &self,
        env: &Env,
        op: OpId,
        vals: &[Value],
    ) -> Result<Vec<i64>, InterpError> {
        vals.iter().map(|v| self.index(env, *v, op)).collect()
    }
    pub(crate) fn index(&self, env: &Env, v: Value, op: OpId) -> Result<i64, InterpError> {
        Ok(self.scalar(env, v, op)?.i())
    }

    /// Static values with `?` replaced by the dynamic operands, in order.
    pub(crate) fn mixed(
        &self,
        env: &Env,
        op: OpId,
        stat: &[i64],
        dynv: &[Value],
    ) -> Result<Vec<i64>, InterpError> {
        let mut k = 0;
        stat.iter()
            .map(|s| {
                if *s == DYNAMIC {
                    let v = dynv
                        .get(k)
                        .ok_or_else(|| InterpError::at(self.ir, op, "missing dynamic size"))?;
                    k += 1;
                    self.index(env, *v, op)
                } else {
                    Ok(*s)
                }
            })
            .collect()
    }

    /// Execute one op (not a terminator); returns its results. Dispatches to the op's
    /// family; the order of the checks is the order of precedence.
    fn exec_op(&mut self, op: OpId, env: &mut Env) -> Result<Vec<RtVal>, InterpError> {
        let ir = self.ir;
        let name = ir.name(op);
        match name {
            ops::func::CallOp::NAME => return self.func_call(op, env),
            ops::rt::ParallelForOp::NAME => return self.parallel_for(op, env),
            ops::cf::AssertOp::NAME => return self.cf_assert(op, env),
            // Hints without effect on values.
            ops::memref::PrefetchOp::NAME => return Ok(vec![]),
            ops::affine::ApplyOp::NAME => return self.affine_apply(op, env).map(|v| vec![v]),
            ops::arith::ConstantOp::NAME => {
                let a = ir
                    .attr(op, "value")
                    .ok_or_else(|| InterpError::at(ir, op, "missing value"))?;
                return Ok(vec![self.constant(op, a)?]);
            }
            _ => {}
        }
        if let Some(sop) = ScalarOp::of(self.ctx, ir, op) {
            return self.elementwise(op, sop, env).map(|v| vec![v]);
        }
        if name == ops::ta::ExprOp::NAME {
            return self.ta_expr(op, env).map(|t| vec![t]);
        }
        if self.ctx.is_destination_style(name) {
            return self.structured(op, env);
        }
        if let Some(short) = name.strip_prefix("tensor.") {
            return self.tensor_op(op, short, env).map(|v| vec![v]);
        }
        if let Some(short) = name.strip_prefix("vector.") {
            return self.vector_op(op, short, env);
        }
        if let Some(short) = name.strip_prefix("memref.") {
            return self.memref_op(op, short, env);
        }
        match name {
            ops::scf::ForOp::NAME => self.scf_for(op, env),
            ops::scf::IfOp::NAME => self.scf_if(op, env),
            ops::scf::IndexSwitchOp::NAME => self.scf_index_switch(op, env),
            ops::gpu::LaunchFuncOp::NAME => self.launch(op, env),
            ops::gpu::ThreadIdOp::NAME
            | ops::gpu::BlockIdOp::NAME
            | ops::gpu::BlockDimOp::NAME
            | ops::gpu::GridDimOp::NAME => self.gpu_id(op).map(|v| vec![v]),
            ops::builtin::UnrealizedConversionCastOp::NAME => ir
                .operands(op)
                .iter()
                .map(|v| self.get(env, *v, op))
                .collect(),
            _ => Err(InterpError::at(
                ir,
                op,
                "is not supported by the interpreter",
            )),
        }
    }
}

/// Row-major index `k` of a space of `sizes` into `point`.
fn unravel(mut k: usize, sizes: &[i64], point: &mut [i64]) {
    for d in (0..sizes.len()).rev() {
        let s = sizes[d].max(1) as usize;
        point[d] = (k % s) as i64;
        k /= s;
    }
}
