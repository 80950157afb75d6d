//! GPU host and kernel ops: `gpu.launch_func` (handed to a [`super::Launcher`], or every
//! thread of the grid run in turn) and the thread/block id and dimension queries.

use super::{Env, Interp, InterpError};
use crate::tensor::RtVal;
use crate::word::Word;
use ftuner_dialects::ops;
use ftuner_ir::{OpId, Type};
use rustc_hash::FxHashMap;

impl Interp<'_> {
    /// `gpu.launch_func`: the kernel runs for every block and every thread of the grid, one
    /// thread after another. Kernels without barriers or shared memory (what
    /// `lower-ukernels` emits) compute the same as on a GPU; a kernel with `gpu.barrier`
    /// and more than one thread per block is refused.
    pub(super) fn launch(&mut self, op: OpId, env: &Env) -> Result<Vec<RtVal>, InterpError> {
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
            .filter(|o| ir.name(*o) == ops::gpu::ModuleOp::NAME && ir.symbol_name(*o) == Some(root))
            .flat_map(children)
            .find(|f| ir.name(*f) == ops::gpu::FuncOp::NAME && ir.symbol_name(*f) == Some(nested));
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
        ir.walk_pre(f, &mut |o| {
            barrier |= ir.name(o) == ops::gpu::BarrierOp::NAME
        });
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

    /// `gpu.thread_id`, `gpu.block_id`, `gpu.block_dim`, `gpu.grid_dim`: the current
    /// launch's value along the op's dimension.
    pub(super) fn gpu_id(&self, op: OpId) -> Result<RtVal, InterpError> {
        let ir = self.ir;
        let g = self
            .gpu
            .ok_or_else(|| InterpError::at(ir, op, "is only defined inside a kernel launch"))?;
        let which = match ir.name(op) {
            ops::gpu::ThreadIdOp::NAME => 0,
            ops::gpu::BlockIdOp::NAME => 1,
            ops::gpu::BlockDimOp::NAME => 2,
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
        Ok(RtVal::Scalar(Word::int(g[which][d])))
    }
}
