//! The kernels of a model: each contraction taken out into a module of its own, with its
//! workload key, so it can be compiled and measured alone.

use ftuner_dialects::ops;
use ftuner_hw::HardwareModel;
use ftuner_ir::{intern_name, AffineExpr, Attribute, Context, Ir, OpId, OpSpec, Type, DYNAMIC};
use ftuner_ukernel::contraction::{find_all, Contraction};
use ftuner_ukernel::schedule::workload_key;
use ftuner_ukernel::{DType, WorkloadKey};

pub use ftuner_ukernel::contraction::Role;

/// One distinct kernel of a model.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub key: WorkloadKey,
    pub dtype: DType,
    /// `file:line:col` of its first occurrence.
    pub loc: String,
    /// How many ops of the model share this workload key.
    pub count: usize,
    /// A module with `func.func @kernel(A, B, C) -> C`: the contraction alone.
    pub module: String,
    /// Per argument: each dim's loop dim role and static size (`DYNAMIC` when it is given
    /// at run time); `None` for a dim indexed by an expression (a convolution window).
    pub args: Vec<Vec<(Option<Role>, i64)>>,
    /// Static size of each role's dims (product), `DYNAMIC` when one is dynamic.
    pub sizes: [(Role, i64); 4],
}

impl Kernel {
    /// The roles that are dynamic.
    pub fn dynamic_roles(&self) -> Vec<Role> {
        let mut v = vec![];
        for a in &self.args {
            for (r, s) in a {
                if let (Some(r), DYNAMIC) = (r, *s) {
                    if !v.contains(r) {
                        v.push(*r);
                    }
                }
            }
        }
        v
    }

    /// Concrete argument shapes when every dynamic dim takes `value`.
    pub fn shapes_at(&self, value: usize) -> Result<Vec<Vec<usize>>, String> {
        self.args
            .iter()
            .map(|a| {
                a.iter()
                    .map(|(r, s)| match (r, *s) {
                        (_, s) if s != DYNAMIC => Ok(s as usize),
                        (Some(_), _) => Ok(value),
                        (None, _) => Err(format!(
                            "{}: a dynamic dim indexed by a window expression cannot be sized for measurement",
                            self.loc
                        )),
                    })
                    .collect()
            })
            .collect()
    }

    /// Multiply-adds at a point (every dynamic dim = `value`).
    pub fn macs_at(&self, value: usize) -> f64 {
        self.sizes
            .iter()
            .map(|(_, s)| {
                if *s == DYNAMIC {
                    value as f64
                } else {
                    *s as f64
                }
            })
            .product()
    }
}

fn roles(ir: &Ir, op: OpId) -> Option<(Vec<ftuner_ir::AffineMap>, Vec<Role>, Vec<i64>)> {
    let maps = ftuner_dialects::linalg::body::indexing_maps(ir, op)?;
    let (ins, outs) = ftuner_dialects::linalg::ins_outs(ir, op);
    let vals = [*ins.first()?, *ins.get(1)?, *outs.first()?];
    let role = ftuner_ukernel::contraction::loop_roles(&maps)?;
    let size = ftuner_ukernel::contraction::loop_sizes(ir, &maps, &vals)?;
    Some((maps, role, size))
}

/// `func.func @kernel(...)` around a copy of `c`'s op, printed as a module.
fn standalone(ctx: &Context, ir: &mut Ir, c: &Contraction) -> String {
    let op = c.op;
    let operands = ir.operands(op).to_vec();
    let arg_types: Vec<Type> = operands.iter().map(|v| ir.value_type(*v)).collect();
    let result_types: Vec<Type> = ir.results(op).iter().map(|v| ir.value_type(*v)).collect();
    let loc = ir.loc(op);
    let f = ir.create_op(
        OpSpec::new(intern_name(ops::func::FuncOp::NAME), loc)
            .attr("sym_name", Attribute::string("kernel"))
            .attr(
                "function_type",
                Attribute::type_attr(Type::function(arg_types.clone(), result_types)),
            )
            .regions(1),
    );
    let region = ir.regions_of(f)[0];
    let blk = ir.append_block(region, &arg_types);
    let mut map = rustc_hash::FxHashMap::default();
    for (v, a) in operands.iter().zip(ir.block_args(blk).to_vec()) {
        map.insert(*v, a);
    }
    let new = ir.clone_op(op, &mut map);
    ir.append_op(blk, new);
    let res = ir.results(new).to_vec();
    let ret = ir.create_op(OpSpec::new(intern_name(ops::func::ReturnOp::NAME), loc).operands(res));
    ir.append_op(blk, ret);
    let text = ftuner_ir::print_op_standalone(ir, ctx, f, false);
    ir.erase_op(f);
    format!("module {{\n{text}\n}}\n")
}

/// The distinct kernels (by workload key) of a module, in order of first occurrence.
pub fn extract(ctx: &Context, ir: &mut Ir, top: OpId, model: &HardwareModel) -> Vec<Kernel> {
    let mut out: Vec<Kernel> = vec![];
    for c in find_all(ir, top) {
        let key = workload_key(ir, &c, model);
        if let Some(k) = out.iter_mut().find(|k| k.key == key) {
            k.count += 1;
            continue;
        }
        let Some((maps, role, size)) = roles(ir, c.op) else {
            continue;
        };
        let (ins, outs) = ftuner_dialects::linalg::ins_outs(ir, c.op);
        let vals = [ins[0], ins[1], outs[0]];
        let args: Vec<Vec<(Option<Role>, i64)>> = maps
            .iter()
            .zip(vals)
            .map(|(m, v)| {
                let shape = ir.value_type(v).shape().unwrap_or(&[]).to_vec();
                m.results
                    .iter()
                    .zip(shape)
                    .map(|(e, s)| match e {
                        AffineExpr::Dim(d) => (Some(role[*d as usize]), s),
                        _ => (None, s),
                    })
                    .collect()
            })
            .collect();
        let prod = |r: Role| {
            let mut p = 1i64;
            for (d, rr) in role.iter().enumerate() {
                if *rr == r {
                    if size[d] == DYNAMIC {
                        return DYNAMIC;
                    }
                    p *= size[d];
                }
            }
            p
        };
        let (file, line, col) = ftuner_ir::diag::file_line_col(ir.loc(c.op)).unwrap_or(("?", 0, 0));
        let module = standalone(ctx, ir, &c);
        out.push(Kernel {
            key,
            dtype: c.dtype,
            loc: format!("{file}:{line}:{col}"),
            count: 1,
            module,
            args,
            sizes: [
                (Role::B, prod(Role::B)),
                (Role::M, prod(Role::M)),
                (Role::N, prod(Role::N)),
                (Role::K, prod(Role::K)),
            ],
        });
    }
    out
}

/// Parse and verify a module (errors are rendered diagnostics).
pub fn load(ctx: &Context, text: &str, file: &str) -> Result<ftuner_ir::ParsedModule, String> {
    let mut m = ftuner_ir::parse_module(ctx, text, file).map_err(|d| d.to_string())?;
    ftuner_dialects::after_parse(&mut m.ir, m.top);
    let errs = ftuner_ir::verify::verify(ctx, &m.ir, m.top);
    if let Some(d) = errs.first() {
        return Err(d.to_string());
    }
    Ok(m)
}
