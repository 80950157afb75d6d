//! Execution of functions, regions and ops.

use crate::body::{compile, ScalarOp};
use crate::tensor::{round_to, RtVal, Tensor};
use ftuner_dialects::linalg::{body as lbody, ins_outs};
use ftuner_ir::{AffineExpr, AttrKind, Context, Ir, OpId, Scalar, Type, Value, DYNAMIC};
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

fn name_is_patch_with_epilogue(ir: &Ir, op: OpId) -> bool {
    ir.name(op) == "ukernel.patch" && ir.regions_of(op).len() > 1
}

pub(crate) fn is_yield(name: &str) -> bool {
    matches!(
        name,
        "linalg.yield" | "ukernel.yield" | "tensor.yield" | "scf.yield"
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
    _ctx: &'a Context,
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
        _ctx: ctx,
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
            if func.is_none() && ir.name(o) == "func.func" && ir.symbol_name(o) == Some(name) {
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
            if name == "func.return" || name == "gpu.return" || is_yield(name) {
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
    pub(crate) fn scalar(&self, env: &Env, v: Value, op: OpId) -> Result<f64, InterpError> {
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
        Ok(self.scalar(env, v, op)? as i64)
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

    /// `ta.expr`: the expression evaluated over its inputs (out-of-bounds reads are 0).
    fn ta_expr(&mut self, op: OpId, env: &mut Env) -> Result<RtVal, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let scope = ftuner_dialects::ta::scope_of(ir, op)
            .ok_or_else(|| err("has a malformed expression".into()))?;
        let mut ins = vec![];
        for v in ir.operands(op) {
            match self.get(env, *v, op)? {
                RtVal::Tensor(t) => ins.push(t),
                _ => return Err(err("takes tensors".into())),
            }
        }
        let inputs = ftuner_dialects::ta::expr::Inputs {
            shapes: ins.iter().map(|t| t.shape.clone()).collect(),
            data: ins.iter().map(|t| t.data.as_slice()).collect(),
        };
        let (shape, data) = ftuner_dialects::ta::expr::evaluate(&scope, &inputs).map_err(err)?;
        let ty = ir.value_type(ir.result(op, 0));
        Ok(RtVal::Tensor(Rc::new(Tensor::new(
            shape,
            ty.element_type(),
            data,
        ))))
    }

    fn exec_op(&mut self, op: OpId, env: &mut Env) -> Result<Vec<RtVal>, InterpError> {
        let ir = self.ir;
        let name = ir.name(op);
        let err = |m: String| InterpError::at(ir, op, m);
        let res_ty = |i: usize| ir.value_type(ir.result(op, i));
        match name {
            "func.call" => {
                let callee = ir
                    .attr(op, "callee")
                    .and_then(|a| a.as_symbol())
                    .ok_or_else(|| err("missing callee".into()))?;
                let args: Result<Vec<RtVal>, _> = ir
                    .operands(op)
                    .iter()
                    .map(|v| self.get(env, *v, op))
                    .collect();
                return self.call(callee, args?);
            }
            "cf.assert" => {
                if self.scalar(env, ir.operand(op, 0), op)? == 0.0 {
                    let msg = ir.attr(op, "msg").and_then(|a| a.as_str()).unwrap_or("");
                    return Err(err(format!("assertion failed: {msg}")));
                }
                return Ok(vec![]);
            }
            // Hints without effect on values.
            "memref.prefetch" => return Ok(vec![]),
            "affine.apply" => {
                let m = ir
                    .attr(op, "map")
                    .and_then(|a| a.as_affine_map())
                    .ok_or_else(|| err("missing map".into()))?;
                let vals: Vec<i64> = ir
                    .operands(op)
                    .iter()
                    .map(|v| self.scalar(env, *v, op).map(|x| x as i64))
                    .collect::<Result<_, _>>()?;
                let nd = (m.num_dims as usize).min(vals.len());
                let r = m
                    .results
                    .first()
                    .and_then(|e| e.eval(&vals[..nd], &vals[nd..]))
                    .ok_or_else(|| err("the map has no value here (division by zero?)".into()))?;
                return Ok(vec![RtVal::Scalar(r as f64)]);
            }
            "arith.constant" => {
                let a = ir
                    .attr(op, "value")
                    .ok_or_else(|| err("missing value".into()))?;
                return Ok(vec![self.constant(op, a)?]);
            }
            _ => {}
        }
        if let Some(sop) = ScalarOp::of(ir, op) {
            // Scalars, or elementwise over tensors of one shape.
            let vals: Result<Vec<RtVal>, _> = ir
                .operands(op)
                .iter()
                .map(|v| self.get(env, *v, op))
                .collect();
            let vals = vals?;
            let ty = res_ty(0);
            if vals.iter().all(|v| matches!(v, RtVal::Scalar(_))) {
                let a: Vec<f64> = vals.iter().filter_map(|v| v.scalar()).collect();
                return Ok(vec![RtVal::Scalar(
                    sop.apply(&a, ty).map_err(|e| err(e.message))?,
                )]);
            }
            let shape = vals
                .iter()
                .find_map(|v| v.tensor().map(|t| t.shape.clone()))
                .unwrap_or_default();
            let n: usize = shape.iter().product();
            let mut out = Tensor::zeros(shape.clone(), ty.element_type());
            let mut a = vec![0.0; vals.len()];
            for i in 0..n {
                for (k, v) in vals.iter().enumerate() {
                    a[k] = match v {
                        RtVal::Scalar(s) => *s,
                        RtVal::Tensor(t) => {
                            if t.shape != shape {
                                return Err(err("elementwise operands of different shapes".into()));
                            }
                            t.data[i]
                        }
                        RtVal::MemRef(_) => {
                            return Err(err("elementwise ops do not take memrefs".into()))
                        }
                    };
                }
                out.data[i] = sop
                    .apply(&a, ty.element_type())
                    .map_err(|e| err(e.message))?;
            }
            return Ok(vec![RtVal::Tensor(Rc::new(out))]);
        }
        if name == "ta.expr" {
            return self.ta_expr(op, env).map(|t| vec![t]);
        }
        if name.starts_with("linalg.") || name == "ukernel.patch" {
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
            "scf.for" => self.scf_for(op, env),
            "scf.if" => {
                let c = self.scalar(env, ir.operand(op, 0), op)?;
                let r = ir.regions_of(op)[if c != 0.0 { 0 } else { 1 }];
                match ir.region_entry(r) {
                    Some(b) => {
                        let mut inner = env.clone();
                        self.exec_block(b, &mut inner)
                    }
                    None => Ok(vec![]),
                }
            }
            "scf.index_switch" => {
                let sel = self.scalar(env, ir.operand(op, 0), op)? as i64;
                let cases = ir
                    .attr(op, "cases")
                    .and_then(|a| a.as_dense_i64s())
                    .ok_or_else(|| err("has no 'cases' array".into()))?;
                // Region 0 is the default; region i + 1 belongs to cases[i].
                let idx = cases.iter().position(|c| *c == sel).map_or(0, |i| i + 1);
                let r = *ir
                    .regions_of(op)
                    .get(idx)
                    .ok_or_else(|| err("has fewer regions than cases".into()))?;
                match ir.region_entry(r) {
                    Some(b) => {
                        let mut inner = env.clone();
                        self.exec_block(b, &mut inner)
                    }
                    None => Ok(vec![]),
                }
            }
            "gpu.launch_func" => self.launch(op, env),
            "gpu.thread_id" | "gpu.block_id" | "gpu.block_dim" | "gpu.grid_dim" => {
                let g = self
                    .gpu
                    .ok_or_else(|| err("is only defined inside a kernel launch".into()))?;
                let which = match name {
                    "gpu.thread_id" => 0,
                    "gpu.block_id" => 1,
                    "gpu.block_dim" => 2,
                    _ => 3,
                };
                let body = ir
                    .attr(op, "dimension")
                    .and_then(|a| a.dialect_body())
                    .map(|(_, b)| b)
                    .unwrap_or("");
                let d = if body.contains('z') {
                    2
                } else if body.contains('y') {
                    1
                } else {
                    0
                };
                Ok(vec![RtVal::Scalar(g[which][d] as f64)])
            }
            "builtin.unrealized_conversion_cast" => ir
                .operands(op)
                .iter()
                .map(|v| self.get(env, *v, op))
                .collect(),
            _ => Err(err("is not supported by the interpreter".into())),
        }
    }

    /// A `ukernel.patch` epilogue: once the reduction is complete, every output element
    /// `c` becomes `epilogue(c, operands at their maps)`.
    fn epilogue(
        &mut self,
        op: OpId,
        env: &Env,
        cmap: &ftuner_ir::AffineMap,
        sizes: &[i64],
        out: &mut Tensor,
    ) -> Result<(), InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let operands = ftuner_dialects::ukernel::epilogue_inputs(ir, op);
        let emaps = ftuner_dialects::ukernel::epilogue_maps(ir, op);
        let extras: Vec<Tensor> = operands
            .iter()
            .map(|v| match self.get(env, *v, op)? {
                RtVal::Tensor(t) => Ok((*t).clone()),
                RtVal::MemRef(m) => m.to_tensor().map_err(&err),
                RtVal::Scalar(_) => Err(err("epilogue operands must be shaped".into())),
            })
            .collect::<Result<_, _>>()?;
        let prog = crate::body::compile_region(ir, op, 1, env)?;
        // The epilogue maps use no reduction dim: walk the parallel dims only.
        let red: Vec<bool> = ir
            .attr(op, "iterator_types")
            .and_then(|a| a.as_array())
            .unwrap_or(&[])
            .iter()
            .map(|a| {
                a.dialect_body()
                    .is_some_and(|(_, b)| b.contains("reduction"))
            })
            .collect();
        let psizes: Vec<i64> = sizes
            .iter()
            .enumerate()
            .map(|(d, s)| if red.get(d) == Some(&true) { 1 } else { *s })
            .collect();
        let total: i64 = psizes.iter().product();
        if total == 0 {
            return Ok(());
        }
        let mut slots = vec![0.0; prog.num_slots];
        for (s, v) in &prog.inits {
            slots[*s] = *v;
        }
        let elem = out.elem;
        let mut point = vec![0i64; psizes.len()];
        for k in 0..total {
            unravel(k as usize, &psizes, &mut point);
            let at =
                |m: &ftuner_ir::AffineMap, t: &Tensor, what: &str| -> Result<usize, InterpError> {
                    let idx = m
                        .eval(&point, &[])
                        .ok_or_else(|| err("cannot evaluate an epilogue map".into()))?;
                    t.offset(&idx)
                        .ok_or_else(|| err(format!("{what} accessed out of bounds at {idx:?}")))
                };
            let c = at(cmap, out, "the output")?;
            slots[0] = out.data[c];
            for (j, (m, t)) in emaps.iter().zip(&extras).enumerate() {
                slots[1 + j] = t.data[at(m, t, &format!("epilogue operand #{j}"))?];
            }
            prog.run(&mut slots, &point)?;
            let y = *prog
                .yields
                .first()
                .ok_or_else(|| err("the epilogue yields nothing".into()))?;
            out.data[c] = round_to(slots[y], elem);
        }
        Ok(())
    }

    /// `gpu.launch_func`: the kernel runs for every block and every thread of the grid, one
    /// thread after another. Kernels without barriers or shared memory (what
    /// `lower-ukernels` emits) compute the same as on a GPU; a kernel with `gpu.barrier`
    /// and more than one thread per block is refused.
    fn launch(&mut self, op: OpId, env: &Env) -> Result<Vec<RtVal>, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let (root, nested) = match ir.attr(op, "kernel").map(|a| a.kind()) {
            Some(ftuner_ir::AttrKind::SymbolRef { root, nested }) if nested.len() == 1 => {
                (root.as_str(), nested[0].as_str())
            }
            _ => return Err(err("needs a kernel symbol @module::@func".into())),
        };
        // The symbol's gpu.module is a child of the module; the kernel a child of it.
        let children = |op: OpId| {
            ir.regions_of(op)
                .first()
                .and_then(|r| ir.region_entry(*r))
                .map(|b| ir.block_ops_vec(b))
                .unwrap_or_default()
        };
        let kernel = children(self.module)
            .into_iter()
            .filter(|o| ir.name(*o) == "gpu.module" && ir.symbol_name(*o) == Some(root))
            .flat_map(children)
            .find(|f| ir.name(*f) == "gpu.func" && ir.symbol_name(*f) == Some(nested));
        let f = kernel.ok_or_else(|| err(format!("kernel @{root}::@{nested} not found")))?;
        let entry = ir
            .regions_of(f)
            .first()
            .and_then(|r| ir.region_entry(*r))
            .ok_or_else(|| err("kernel has no body".into()))?;
        let segs = ir
            .attr(op, "operandSegmentSizes")
            .and_then(|a| a.as_dense_i64s())
            .ok_or_else(|| err("has no operandSegmentSizes".into()))?;
        if segs.len() != 13 || segs[0] != 0 || segs[1..7].iter().any(|s| *s != 1) {
            return Err(err(
                "the interpreter runs synchronous launches with grid and block sizes".into(),
            ));
        }
        let ops = ir.operands(op);
        // Operands: grid x/y/z, block x/y/z, cluster sizes, shared memory, kernel operands.
        let first = 6 + segs[7..11].iter().sum::<i64>() as usize;
        let dims = self.indices(env, op, &ops[0..6])?;
        let (grid, block) = ([dims[0], dims[1], dims[2]], [dims[3], dims[4], dims[5]]);
        if grid.iter().chain(&block).any(|d| *d < 1) {
            return Err(err(format!(
                "grid {grid:?} and block {block:?} must be at least 1 in every dimension"
            )));
        }
        if block.iter().product::<i64>() > 1024 {
            return Err(err(format!("block {block:?} has more than 1024 threads")));
        }
        let args: Vec<RtVal> = ops[first..first + segs[11] as usize]
            .iter()
            .map(|v| self.get(env, *v, op))
            .collect::<Result<_, _>>()?;
        let params = ir.block_args(entry).to_vec();
        if params.len() != args.len() {
            return Err(err(format!(
                "kernel takes {} arguments, the launch passes {}",
                params.len(),
                args.len()
            )));
        }
        if let Some(l) = self.launcher.as_mut() {
            let types: Vec<Type> = params.iter().map(|p| ir.value_type(*p)).collect();
            return l
                .launch((root, nested), grid, block, &args, &types)
                .map(|()| vec![])
                .map_err(err);
        }
        let mut barrier = false;
        ir.walk_pre(f, &mut |o| barrier |= ir.name(o) == "gpu.barrier");
        if barrier && block.iter().product::<i64>() > 1 {
            return Err(err(
                "kernels with gpu.barrier are not run by the interpreter".into(),
            ));
        }
        let saved = self.gpu;
        for bz in 0..grid[2] {
            for by in 0..grid[1] {
                for bx in 0..grid[0] {
                    for tz in 0..block[2] {
                        for ty in 0..block[1] {
                            for tx in 0..block[0] {
                                self.gpu = Some([[tx, ty, tz], [bx, by, bz], block, grid]);
                                let mut kenv: Env = FxHashMap::default();
                                for (p, a) in params.iter().zip(&args) {
                                    kenv.insert(*p, a.clone());
                                }
                                let r = self.exec_block(entry, &mut kenv);
                                if let Err(e) = r {
                                    self.gpu = saved;
                                    return Err(e);
                                }
                            }
                        }
                    }
                }
            }
        }
        self.gpu = saved;
        Ok(vec![])
    }

    pub(crate) fn constant(&self, op: OpId, a: ftuner_ir::Attribute) -> Result<RtVal, InterpError> {
        let ir = self.ir;
        let ty = ir
            .results(op)
            .first()
            .map(|v| ir.value_type(*v).to_string())
            .unwrap_or_default();
        let scalar = |s: &Scalar, e: Type| -> f64 {
            match s {
                Scalar::Int(v) => *v as f64,
                Scalar::Float(b) => ftuner_ir::float::bits_to_f64(
                    *b,
                    e.float_kind().unwrap_or(ftuner_ir::FloatKind::F64),
                ),
                _ => f64::NAN,
            }
        };
        Ok(match a.kind() {
            AttrKind::Integer { value, .. } => RtVal::Scalar(*value as f64),
            AttrKind::Bool(b) => RtVal::Scalar(*b as i64 as f64),
            AttrKind::Float { bits, ty } => RtVal::Scalar(ftuner_ir::float::bits_to_f64(
                *bits,
                ty.float_kind().unwrap_or(ftuner_ir::FloatKind::F64),
            )),
            AttrKind::DenseElements {
                ty: t,
                splat,
                elements,
            } => {
                let shape: Vec<usize> = t
                    .shape()
                    .unwrap_or(&[])
                    .iter()
                    .map(|d| *d as usize)
                    .collect();
                let n: usize = shape.iter().product();
                let e = t.element_type();
                let data = if *splat {
                    vec![elements.first().map(|s| scalar(s, e)).unwrap_or(0.0); n]
                } else {
                    elements.iter().map(|s| scalar(s, e)).collect()
                };
                RtVal::Tensor(Rc::new(Tensor::new(shape, e, data)))
            }
            AttrKind::DenseResource { ty: t, handle } => {
                let r = ir
                    .resources
                    .iter()
                    .find(|r| r.key == *handle)
                    .ok_or_else(|| {
                        InterpError::at(ir, op, format!("no resource blob '{handle}'"))
                    })?;
                let hex = r.value.trim_matches('"').trim_start_matches("0x");
                let bytes: Vec<u8> = (0..hex.len() / 2)
                    .filter_map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
                    .collect();
                let e = t.element_type();
                if e != Type::f32() {
                    return Err(InterpError::at(
                        ir,
                        op,
                        "dense_resource blobs other than f32 are not supported",
                    ));
                }
                // The blob starts with a 4-byte alignment header.
                let data: Vec<f64> = bytes
                    .get(4..)
                    .unwrap_or(&[])
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64)
                    .collect();
                let shape: Vec<usize> = t
                    .shape()
                    .unwrap_or(&[])
                    .iter()
                    .map(|d| *d as usize)
                    .collect();
                if data.len() != shape.iter().product::<usize>() {
                    return Err(InterpError::at(
                        ir,
                        op,
                        format!(
                            "blob '{handle}' holds {} elements, the type needs {}",
                            data.len(),
                            shape.iter().product::<usize>()
                        ),
                    ));
                }
                RtVal::Tensor(Rc::new(Tensor::new(shape, e, data)))
            }
            _ => {
                return Err(InterpError::at(
                    ir,
                    op,
                    format!("unsupported constant of type {ty}"),
                ))
            }
        })
    }

    /// Per vector position, the source index a transfer reads or writes: `base` with each
    /// vector dim added along the source dim its permutation map names (a `0` result
    /// broadcasts).
    fn transfer_indices(
        &self,
        op: OpId,
        base: &[i64],
        vshape: &[usize],
    ) -> Result<Vec<Vec<i64>>, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let map = ir
            .attr(op, "permutation_map")
            .and_then(|a| a.as_affine_map())
            .ok_or_else(|| err("has no permutation_map".into()))?;
        if map.results.len() != vshape.len() {
            return Err(err("permutation_map does not match the vector rank".into()));
        }
        let n: usize = vshape.iter().product();
        let mut out = Vec::with_capacity(n);
        for flat in 0..n {
            let mut idx = base.to_vec();
            let mut rest = flat;
            for (t, e) in map.results.iter().enumerate().rev() {
                let j = (rest % vshape[t]) as i64;
                rest /= vshape[t];
                match e {
                    AffineExpr::Dim(d) if (*d as usize) < idx.len() => idx[*d as usize] += j,
                    AffineExpr::Const(0) => {}
                    _ => return Err(err(format!("unsupported permutation_map result {e:?}"))),
                }
            }
            out.push(idx);
        }
        Ok(out)
    }

    /// The index operands of a transfer (segment `seg`, after `seg` leading operands),
    /// evaluated; masked transfers and malformed segments are errors. Returns the indices
    /// and how many there are.
    fn transfer_base(
        &self,
        env: &Env,
        op: OpId,
        segs: &[i64],
        seg: usize,
    ) -> Result<(Vec<i64>, usize), InterpError> {
        let ir = self.ir;
        let err = |m: &str| InterpError::at(ir, op, m);
        if segs.get(3).copied().unwrap_or(0) != 0 {
            return Err(err("masked transfers are not supported"));
        }
        let n = segs.get(seg).copied().unwrap_or(0) as usize;
        let ops = ir.operands(op);
        // A read also needs its padding operand after the indices.
        let need = seg + n + usize::from(seg == 1);
        if ops.len() < need {
            return Err(err("operand segments do not match the operands"));
        }
        let base = self.indices(env, op, &ops[seg..seg + n])?;
        Ok((base, n))
    }

    fn vector_op(
        &mut self,
        op: OpId,
        short: &str,
        env: &mut Env,
    ) -> Result<Vec<RtVal>, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let ops = ir.operands(op);
        let segs = ir
            .attr(op, "operandSegmentSizes")
            .and_then(|a| a.as_dense_i64s())
            .unwrap_or_default();
        // Transfers on buffers; the tensor forms below.
        let on = match short {
            "transfer_read" => ops.first(),
            "transfer_write" => ops.get(1),
            _ => None,
        };
        let Some(RtVal::MemRef(m)) = on.map(|v| self.get(env, *v, op)).transpose()? else {
            return self.vector_value_op(op, short, env).map(|v| vec![v]);
        };
        m.alive().map_err(&err)?;
        if short == "transfer_read" {
            let (base, n_idx) = self.transfer_base(env, op, &segs, 1)?;
            let pad = self.scalar(env, ops[1 + n_idx], op)?;
            let ty = ir.value_type(ir.result(op, 0));
            let shape: Vec<usize> = ty
                .shape()
                .unwrap_or(&[])
                .iter()
                .map(|d| *d as usize)
                .collect();
            let data = m.store.data.borrow();
            let vals = self
                .transfer_indices(op, &base, &shape)?
                .iter()
                .map(|idx| {
                    m.index_of(idx)
                        .and_then(|o| data.get(o).copied())
                        .unwrap_or(pad)
                })
                .collect();
            return Ok(vec![RtVal::Tensor(Rc::new(Tensor::new(
                shape,
                ty.element_type(),
                vals,
            )))]);
        }
        let (base, _) = self.transfer_base(env, op, &segs, 2)?;
        let v = self.tensor(env, ops[0], op)?;
        let mut data = m.store.data.borrow_mut();
        for (k, idx) in self
            .transfer_indices(op, &base, &v.shape)?
            .iter()
            .enumerate()
        {
            if let Some(slot) = m.index_of(idx).and_then(|o| data.get_mut(o)) {
                *slot = round_to(v.data[k], m.elem);
            }
        }
        Ok(vec![])
    }

    fn vector_value_op(
        &mut self,
        op: OpId,
        short: &str,
        env: &mut Env,
    ) -> Result<RtVal, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let ops = ir.operands(op).to_vec();
        let segs = ir
            .attr(op, "operandSegmentSizes")
            .and_then(|a| a.as_dense_i64s())
            .unwrap_or_default();
        let vec_shape = |t: Type| -> Vec<usize> {
            t.shape()
                .unwrap_or(&[])
                .iter()
                .map(|d| *d as usize)
                .collect()
        };
        match short {
            "broadcast" => {
                let ty = ir.value_type(ir.result(op, 0));
                let shape = vec_shape(ty);
                let n: usize = shape.iter().product();
                let data = match self.get(env, ops[0], op)? {
                    RtVal::Scalar(x) => vec![x; n],
                    RtVal::Tensor(t) => {
                        // Trailing dims align; leading ones repeat.
                        let m = t.data.len().max(1);
                        if !n.is_multiple_of(m) || !shape.ends_with(&t.shape) {
                            return Err(err(format!(
                                "cannot broadcast {:?} to {:?}",
                                t.shape, shape
                            )));
                        }
                        (0..n).map(|i| t.data[i % m]).collect()
                    }
                    RtVal::MemRef(_) => return Err(err("cannot broadcast a memref".into())),
                };
                Ok(RtVal::Tensor(Rc::new(Tensor::new(
                    shape,
                    ty.element_type(),
                    data,
                ))))
            }
            "fma" => {
                let a = self.tensor(env, ops[0], op)?;
                let b = self.tensor(env, ops[1], op)?;
                let c = self.tensor(env, ops[2], op)?;
                if a.shape != b.shape || a.shape != c.shape {
                    return Err(err("operand shapes differ".into()));
                }
                let data = (0..a.data.len())
                    .map(|i| round_to(a.data[i] * b.data[i] + c.data[i], a.elem))
                    .collect();
                Ok(RtVal::Tensor(Rc::new(Tensor::new(
                    a.shape.clone(),
                    a.elem,
                    data,
                ))))
            }
            "shuffle" => {
                let a = self.tensor(env, ops[0], op)?;
                let b = self.tensor(env, ops[1], op)?;
                let mask = ir
                    .attr(op, "mask")
                    .and_then(|m| m.as_dense_i64s())
                    .ok_or_else(|| err("has no mask".into()))?;
                // Rows along the leading dim (a 0-d vector is one row of one lane).
                let row = a.shape.iter().skip(1).product::<usize>().max(1);
                let na = (a.data.len() / row) as i64;
                let nb = (b.data.len() / row) as i64;
                let mut data = Vec::with_capacity(mask.len() * row);
                for &i in &mask {
                    let (src, j) = match i {
                        i if (0..na).contains(&i) => (&a.data, i),
                        i if (na..na + nb).contains(&i) => (&b.data, i - na),
                        // -1: an undefined row.
                        -1 => {
                            data.extend(std::iter::repeat_n(0.0, row));
                            continue;
                        }
                        i => return Err(err(format!("mask entry {i} is out of range"))),
                    };
                    let j = j as usize * row;
                    data.extend_from_slice(&src[j..j + row]);
                }
                let mut shape = vec![mask.len()];
                shape.extend(a.shape.iter().skip(1));
                Ok(RtVal::Tensor(Rc::new(Tensor::new(shape, a.elem, data))))
            }
            "transfer_read" => {
                let (base, n_idx) = self.transfer_base(env, op, &segs, 1)?;
                let src = self.tensor(env, ops[0], op)?;
                let pad = self.scalar(env, ops[1 + n_idx], op)?;
                let ty = ir.value_type(ir.result(op, 0));
                let shape = vec_shape(ty);
                let data = self
                    .transfer_indices(op, &base, &shape)?
                    .iter()
                    .map(|idx| src.offset(idx).map_or(pad, |o| src.data[o]))
                    .collect();
                Ok(RtVal::Tensor(Rc::new(Tensor::new(
                    shape,
                    ty.element_type(),
                    data,
                ))))
            }
            "transfer_write" => {
                let (base, _) = self.transfer_base(env, op, &segs, 2)?;
                let v = self.tensor(env, ops[0], op)?;
                let mut dst = (*self.tensor(env, ops[1], op)?).clone();
                for (k, idx) in self
                    .transfer_indices(op, &base, &v.shape)?
                    .iter()
                    .enumerate()
                {
                    if let Some(o) = dst.offset(idx) {
                        dst.data[o] = v.data[k];
                    }
                }
                Ok(RtVal::Tensor(Rc::new(dst)))
            }
            _ => Err(err("is not supported by the interpreter".into())),
        }
    }

    fn scf_for(&mut self, op: OpId, env: &mut Env) -> Result<Vec<RtVal>, InterpError> {
        let ir = self.ir;
        let ops = ir.operands(op).to_vec();
        let (lb, ub, step) = (
            self.index(env, ops[0], op)?,
            self.index(env, ops[1], op)?,
            self.index(env, ops[2], op)?,
        );
        if step <= 0 {
            return Err(InterpError::at(
                ir,
                op,
                format!("step must be positive, got {step}"),
            ));
        }
        let mut iters: Vec<RtVal> = ops[3..]
            .iter()
            .map(|v| self.get(env, *v, op))
            .collect::<Result<_, _>>()?;
        let b = ir
            .region_entry(ir.regions_of(op)[0])
            .ok_or_else(|| InterpError::at(ir, op, "empty body"))?;
        let args = ir.block_args(b).to_vec();
        let mut i = lb;
        while i < ub {
            let mut inner = env.clone();
            inner.insert(args[0], RtVal::Scalar(i as f64));
            for (a, v) in args[1..].iter().zip(&iters) {
                inner.insert(*a, v.clone());
            }
            iters = self.exec_block(b, &mut inner)?;
            i += step;
        }
        Ok(iters)
    }

    fn tensor_op(&mut self, op: OpId, short: &str, env: &mut Env) -> Result<RtVal, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let rt = ir.value_type(ir.result(op, 0));
        let ops = ir.operands(op).to_vec();
        let arr = |a: &str| {
            ir.attr(op, a)
                .and_then(|x| x.as_dense_i64s())
                .unwrap_or_default()
        };
        let out = match short {
            "empty" => {
                let shape = self.mixed(env, op, rt.shape().unwrap_or(&[]), &ops)?;
                Tensor::zeros(
                    crate::tensor::checked_sizes(&shape).map_err(err)?,
                    rt.element_type(),
                )
            }
            "dim" => {
                let t = self.tensor(env, ops[0], op)?;
                let i = self.index(env, ops[1], op)?;
                let d = t
                    .shape
                    .get(usize::try_from(i).unwrap_or(usize::MAX))
                    .ok_or_else(|| err(format!("dimension {i} out of range")))?;
                return Ok(RtVal::Scalar(*d as f64));
            }
            "rank" => {
                return Ok(RtVal::Scalar(
                    self.tensor(env, ops[0], op)?.shape.len() as f64
                ))
            }
            "extract" => {
                let t = self.tensor(env, ops[0], op)?;
                let idx: Vec<i64> = self.indices(env, op, &ops[1..])?;
                let off = t.offset(&idx).ok_or_else(|| {
                    err(format!(
                        "index {idx:?} out of bounds for shape {:?}",
                        t.shape
                    ))
                })?;
                return Ok(RtVal::Scalar(t.data[off]));
            }
            "insert" => {
                let v = self.scalar(env, ops[0], op)?;
                let mut t = (*self.tensor(env, ops[1], op)?).clone();
                let idx: Vec<i64> = self.indices(env, op, &ops[2..])?;
                let off = t.offset(&idx).ok_or_else(|| {
                    err(format!(
                        "index {idx:?} out of bounds for shape {:?}",
                        t.shape
                    ))
                })?;
                t.data[off] = v;
                t
            }
            "from_elements" => {
                let data: Vec<f64> = ops
                    .iter()
                    .map(|v| self.scalar(env, *v, op))
                    .collect::<Result<_, _>>()?;
                Tensor::new(
                    rt.shape()
                        .unwrap_or(&[])
                        .iter()
                        .map(|d| *d as usize)
                        .collect(),
                    rt.element_type(),
                    data,
                )
            }
            "splat" => {
                let v = self.scalar(env, ops[0], op)?;
                let shape = self.mixed(env, op, rt.shape().unwrap_or(&[]), &ops[1..])?;
                let mut t = Tensor::zeros(
                    crate::tensor::checked_sizes(&shape).map_err(err)?,
                    rt.element_type(),
                );
                t.data.iter_mut().for_each(|x| *x = v);
                t
            }
            "cast" => {
                let t = self.tensor(env, ops[0], op)?;
                check_type(ir, op, rt, &t)?;
                return Ok(RtVal::Tensor(t));
            }
            "reshape" => {
                let t = self.tensor(env, ops[0], op)?;
                let s = self.tensor(env, ops[1], op)?;
                let shape: Vec<usize> = s
                    .data
                    .iter()
                    .map(|d| *d as i64)
                    .map(|d| if d < 0 { usize::MAX } else { d as usize })
                    .collect();
                if shape
                    .iter()
                    .copied()
                    .try_fold(1usize, |a, b| a.checked_mul(b))
                    != Some(t.data.len())
                {
                    return Err(err(format!(
                        "cannot reshape {:?} into {:?}",
                        t.shape, s.data
                    )));
                }
                Tensor::new(shape, t.elem, t.data.clone())
            }
            "collapse_shape" | "expand_shape" => {
                let t = self.tensor(env, ops[0], op)?;
                let shape: Vec<i64> = if short == "expand_shape" {
                    self.mixed(env, op, &arr("static_output_shape"), &ops[1..])?
                } else {
                    let groups = ir
                        .attr(op, "reassociation")
                        .and_then(|a| a.as_array())
                        .unwrap_or(&[]);
                    groups
                        .iter()
                        .map(|g| {
                            g.as_array()
                                .unwrap_or(&[])
                                .iter()
                                .map(|d| {
                                    t.shape
                                        .get(d.as_i64().unwrap_or(0) as usize)
                                        .copied()
                                        .unwrap_or(1) as i64
                                })
                                .product()
                        })
                        .collect()
                };
                if shape.iter().product::<i64>() as usize != t.data.len() {
                    return Err(err(format!("cannot reshape {:?} into {shape:?}", t.shape)));
                }
                Tensor::new(
                    shape.iter().map(|d| *d as usize).collect(),
                    t.elem,
                    t.data.clone(),
                )
            }
            "concat" => {
                // The inputs one after another along `dim` (row-major blocks: each input
                // contributes `inner * its size along dim` elements per outer index).
                let d = ir.attr(op, "dim").and_then(|a| a.as_i64()).unwrap_or(-1);
                let ts = ops
                    .iter()
                    .map(|v| self.tensor(env, *v, op))
                    .collect::<Result<Vec<_>, _>>()?;
                let first = ts.first().ok_or_else(|| err("no inputs".into()))?;
                let rank = first.shape.len();
                let d = usize::try_from(d)
                    .ok()
                    .filter(|d| *d < rank)
                    .ok_or_else(|| err("concatenation dim out of range".into()))?;
                for t in &ts {
                    if t.shape.len() != rank
                        || (0..rank).any(|k| k != d && t.shape[k] != first.shape[k])
                    {
                        return Err(err(format!(
                            "concatenated shapes {:?} and {:?} differ outside dim {d}",
                            first.shape, t.shape
                        )));
                    }
                }
                let mut shape = first.shape.clone();
                shape[d] = ts.iter().map(|t| t.shape[d]).sum();
                let outer: usize = shape[..d].iter().product();
                let inner: usize = shape[d + 1..].iter().product();
                let mut data = Vec::with_capacity(outer * shape[d] * inner);
                for o in 0..outer {
                    for t in &ts {
                        let blk = t.shape[d] * inner;
                        data.extend_from_slice(&t.data[o * blk..(o + 1) * blk]);
                    }
                }
                Tensor::new(shape, first.elem, data)
            }
            "extract_slice" | "insert_slice" => {
                let (src, dst_opt, rest) = if short == "extract_slice" {
                    (self.tensor(env, ops[0], op)?, None, 1)
                } else {
                    (
                        self.tensor(env, ops[0], op)?,
                        Some(self.tensor(env, ops[1], op)?),
                        2,
                    )
                };
                let seg = ir
                    .attr(op, "operandSegmentSizes")
                    .and_then(|a| a.as_dense_i64s())
                    .unwrap_or_default();
                let (no, ns) = (
                    seg.get(rest).copied().unwrap_or(0) as usize,
                    seg.get(rest + 1).copied().unwrap_or(0) as usize,
                );
                let dyn_o = &ops[rest..rest + no];
                let dyn_s = &ops[rest + no..rest + no + ns];
                let dyn_t = &ops[rest + no + ns..];
                let offs = self.mixed(env, op, &arr("static_offsets"), dyn_o)?;
                let sizes = self.mixed(env, op, &arr("static_sizes"), dyn_s)?;
                let strides = self.mixed(env, op, &arr("static_strides"), dyn_t)?;
                let big = dst_opt.clone().unwrap_or_else(|| src.clone());
                // Check bounds on the larger tensor.
                for d in 0..sizes.len() {
                    let last = offs[d] + (sizes[d] - 1).max(0) * strides[d];
                    if sizes[d] < 0
                        || offs[d] < 0
                        || (sizes[d] > 0 && last as usize >= big.shape[d])
                    {
                        return Err(err(format!("slice out of bounds in dimension {d}: offset {} size {} stride {} of {}", offs[d], sizes[d], strides[d], big.shape[d])));
                    }
                }
                let n: usize = sizes.iter().map(|s| *s as usize).product();
                let mut point = vec![0i64; sizes.len()];
                match dst_opt {
                    None => {
                        let mut out =
                            Tensor::zeros(sizes.iter().map(|s| *s as usize).collect(), src.elem);
                        for (k, slot) in out.data.iter_mut().enumerate().take(n) {
                            unravel(k, &sizes, &mut point);
                            let idx: Vec<i64> = (0..sizes.len())
                                .map(|d| offs[d] + point[d] * strides[d])
                                .collect();
                            *slot = src.data[big
                                .offset(&idx)
                                .ok_or_else(|| err("slice index out of bounds".into()))?];
                        }
                        // A rank-reducing slice drops unit dims (the data order is the same).
                        let want = ir
                            .value_type(ir.results(op)[0])
                            .rank()
                            .unwrap_or(out.shape.len());
                        while out.shape.len() > want {
                            match out.shape.iter().position(|d| *d == 1) {
                                Some(i) => {
                                    out.shape.remove(i);
                                }
                                None => break,
                            }
                        }
                        out
                    }
                    Some(dst) => {
                        let mut out = (*dst).clone();
                        if src.data.len() != n {
                            return Err(err(format!(
                                "source of {} elements does not fill the {n}-element slice",
                                src.data.len()
                            )));
                        }
                        for k in 0..n {
                            unravel(k, &sizes, &mut point);
                            let idx: Vec<i64> = (0..sizes.len())
                                .map(|d| offs[d] + point[d] * strides[d])
                                .collect();
                            let o = out
                                .offset(&idx)
                                .ok_or_else(|| err("slice index out of bounds".into()))?;
                            out.data[o] = src.data[k];
                        }
                        out
                    }
                }
            }
            "pad" | "generate" => {
                let (src, shape) = if short == "pad" {
                    let src = self.tensor(env, ops[0], op)?;
                    let seg = ir
                        .attr(op, "operandSegmentSizes")
                        .and_then(|a| a.as_dense_i64s())
                        .unwrap_or_default();
                    let nl = seg.get(1).copied().unwrap_or(0) as usize;
                    let lo = self.mixed(env, op, &arr("static_low"), &ops[1..1 + nl])?;
                    let hi = self.mixed(env, op, &arr("static_high"), &ops[1 + nl..])?;
                    let shape: Vec<i64> = (0..src.shape.len())
                        .map(|d| src.shape[d] as i64 + lo[d] + hi[d])
                        .collect();
                    (Some((src, lo)), shape)
                } else {
                    (None, self.mixed(env, op, rt.shape().unwrap_or(&[]), &ops)?)
                };
                if shape.iter().any(|d| *d < 0) {
                    return Err(err(format!("negative result size {shape:?}")));
                }
                let prog = compile(ir, op, env)?;
                let mut out = Tensor::zeros(
                    shape.iter().map(|d| *d as usize).collect(),
                    rt.element_type(),
                );
                let mut slots = vec![0.0; prog.num_slots];
                for (s, v) in &prog.inits {
                    slots[*s] = *v;
                }
                let mut point = vec![0i64; shape.len()];
                for k in 0..out.data.len() {
                    unravel(k, &shape, &mut point);
                    if let Some((src, lo)) = &src {
                        let sidx: Vec<i64> = point.iter().zip(lo).map(|(p, l)| p - l).collect();
                        if let Some(o) = src.offset(&sidx) {
                            out.data[k] = src.data[o];
                            continue;
                        }
                    }
                    for (d, p) in point.iter().enumerate() {
                        slots[d] = *p as f64;
                    }
                    prog.run(&mut slots, &point)?;
                    out.data[k] = slots[*prog
                        .yields
                        .first()
                        .ok_or_else(|| err("body yields nothing".into()))?];
                }
                out
            }
            _ => return Err(err("is not supported by the interpreter".into())),
        };
        check_type(ir, op, rt, &out)?;
        Ok(RtVal::Tensor(Rc::new(out)))
    }

    /// Structured ops (named, generic, ukernel.patch): iterate the loop space.
    fn structured(&mut self, op: OpId, env: &mut Env) -> Result<Vec<RtVal>, InterpError> {
        let ir = self.ir;
        let err = |m: String| InterpError::at(ir, op, m);
        let maps = lbody::indexing_maps(ir, op)
            .ok_or_else(|| err("indexing maps unknown to the interpreter".into()))?;
        let (ins, outs) = ins_outs(ir, op);
        let all: Vec<Value> = ins.iter().chain(&outs).copied().collect();
        let raw: Vec<RtVal> = all
            .iter()
            .map(|v| self.get(env, *v, op))
            .collect::<Result<_, _>>()?;
        // On buffers: read every operand's current contents, compute as on tensors, then
        // write the outputs back into their buffers.
        let vals: Vec<RtVal> = raw
            .iter()
            .map(|v| match v {
                RtVal::MemRef(m) => m
                    .to_tensor()
                    .map(|t| RtVal::Tensor(Rc::new(t)))
                    .map_err(&err),
                other => Ok(other.clone()),
            })
            .collect::<Result<_, _>>()?;
        let nd = maps.first().map(|m| m.num_dims as usize).unwrap_or(0);
        // Loop sizes from operand dims indexed by a single loop dim.
        let mut size: Vec<Option<i64>> = vec![None; nd];
        for (m, v) in maps.iter().zip(&vals) {
            if let RtVal::Tensor(t) = v {
                for (j, e) in m.results.iter().enumerate() {
                    if let AffineExpr::Dim(d) = e {
                        let s = t.shape[j] as i64;
                        match size[*d as usize] {
                            None => size[*d as usize] = Some(s),
                            Some(p) if p != s => {
                                return Err(err(format!(
                                "loop dimension d{d} is {p} for one operand and {s} for another"
                            )))
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
        // Loop dims that only appear in compound expressions (convolution windows): derive
        // from the output size and the input size is not needed; the filter gives them.
        let sizes: Vec<i64> = size
            .iter()
            .enumerate()
            .map(|(d, s)| {
                s.ok_or_else(|| err(format!("cannot infer the size of loop dimension d{d}")))
            })
            .collect::<Result<_, _>>()?;
        // Linear access: offset = base + sum(coeff[d] * p[d]) for each operand.
        let mut access: Vec<Option<Access>> = vec![];
        for (m, v) in maps.iter().zip(&vals) {
            match v {
                RtVal::Scalar(_) | RtVal::MemRef(_) => access.push(None),
                RtVal::Tensor(t) => {
                    if m.results.len() != t.shape.len() {
                        return Err(err("operand rank does not match its indexing map".into()));
                    }
                    let st = t.strides();
                    let zero = vec![0i64; nd];
                    let base_idx = m
                        .eval(&zero, &[])
                        .ok_or_else(|| err("cannot evaluate indexing map".into()))?;
                    let base: i64 = base_idx.iter().zip(&st).map(|(i, s)| i * *s as i64).sum();
                    let mut coeff = vec![0i64; nd];
                    for (d, c) in coeff.iter_mut().enumerate() {
                        let mut unit = vec![0i64; nd];
                        unit[d] = 1;
                        let idx = m
                            .eval(&unit, &[])
                            .ok_or_else(|| err("cannot evaluate indexing map".into()))?;
                        *c = idx
                            .iter()
                            .zip(&base_idx)
                            .zip(&st)
                            .map(|((i, b), s)| (i - b) * *s as i64)
                            .sum();
                    }
                    // Per-result linear coefficients for bounds checks.
                    let mut rc = vec![];
                    for e in &m.results {
                        let b0 = e.eval(&zero, &[]).unwrap_or(0);
                        rc.push(b0);
                        for d in 0..nd {
                            let mut unit = vec![0i64; nd];
                            unit[d] = 1;
                            rc.push(e.eval(&unit, &[]).unwrap_or(0) - b0);
                        }
                    }
                    if !m.results.iter().all(|e| e.is_pure_affine() && !has_div(e)) {
                        return Err(err(
                            "indexing maps with div/mod are not supported by the interpreter"
                                .into(),
                        ));
                    }
                    access.push(Some((base, coeff, rc, t.clone())));
                }
            }
        }
        let prog = compile(ir, op, env)?;
        let nin = ins.len();
        let mut outs_t: Vec<Tensor> = vals[nin..]
            .iter()
            .map(|v| {
                v.tensor()
                    .cloned()
                    .ok_or_else(|| err("outputs must be tensors".into()))
            })
            .collect::<Result<_, _>>()?;
        let mut slots = vec![0.0; prog.num_slots];
        for (s, v) in &prog.inits {
            slots[*s] = *v;
        }
        let total: i64 = sizes.iter().product();
        let mut point = vec![0i64; nd];
        let out_ty: Vec<Type> = outs
            .iter()
            .map(|v| ir.value_type(*v).element_type())
            .collect();
        for k in 0..total {
            unravel(k as usize, &sizes, &mut point);
            for (i, a) in access.iter().enumerate() {
                match a {
                    None => slots[i] = vals[i].scalar().unwrap_or(0.0),
                    Some((base, coeff, rc, t)) => {
                        // Bounds: every result index within its dim.
                        let r = t.shape.len();
                        for j in 0..r {
                            let row = &rc[j * (nd + 1)..(j + 1) * (nd + 1)];
                            let idx = row[0]
                                + row[1..].iter().zip(&point).map(|(c, p)| c * p).sum::<i64>();
                            if idx < 0 || idx as usize >= t.shape[j] {
                                return Err(err(format!(
                                    "operand #{i} accessed at {idx} in dimension {j} of size {}",
                                    t.shape[j]
                                )));
                            }
                        }
                        let off = base + coeff.iter().zip(&point).map(|(c, p)| c * p).sum::<i64>();
                        slots[i] = if i < nin {
                            t.data[off as usize]
                        } else {
                            outs_t[i - nin].data[off as usize]
                        };
                    }
                }
            }
            prog.run(&mut slots, &point)?;
            for (o, y) in prog.yields.iter().enumerate() {
                if let Some(Some((base, coeff, _, _))) = access.get(nin + o) {
                    let off = base + coeff.iter().zip(&point).map(|(c, p)| c * p).sum::<i64>();
                    outs_t[o].data[off as usize] = round_to(slots[*y], out_ty[o]);
                }
            }
        }
        if name_is_patch_with_epilogue(ir, op) {
            self.epilogue(op, env, &maps[nin], &sizes, &mut outs_t[0])?;
        }
        let mut results = vec![];
        for (i, t) in outs_t.into_iter().enumerate() {
            if let Some(RtVal::MemRef(m)) = raw.get(nin + i) {
                m.write(&t).map_err(&err)?;
                continue;
            }
            if let Some(r) = ir.results(op).get(i) {
                check_type(ir, op, ir.value_type(*r), &t)?;
                results.push(RtVal::Tensor(Rc::new(t)));
            }
        }
        Ok(results)
    }
}

/// How an operand is read at a loop point: `offset = base + sum(coeff[d] * p[d])`, with the
/// per-result coefficients (`[b0, c_0 .. c_nd]` per result) for bounds checks.
type Access = (i64, Vec<i64>, Vec<i64>, Rc<Tensor>);

fn has_div(e: &AffineExpr) -> bool {
    match e {
        AffineExpr::Mod(..) | AffineExpr::FloorDiv(..) | AffineExpr::CeilDiv(..) => true,
        AffineExpr::Add(a, b) | AffineExpr::Mul(a, b) => has_div(a) || has_div(b),
        _ => false,
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
