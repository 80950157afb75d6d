//! The layer under test: its signature, loading and compiling it (optionally specialized
//! to a bucket size, every dynamic dim fixed), and its inputs (random, zero-padded).

use ftuner_interp::Tensor;
use ftuner_ir::{intern_name, Attribute, Ir, OpId, OpSpec, Type, DYNAMIC};
use ftuner_run::Rng;
use std::time::Instant;

/// The layer's signature.
pub(crate) struct Layer {
    pub(crate) name: String,
    /// Argument shapes with `DYNAMIC` for the length.
    pub(crate) shapes: Vec<Vec<i64>>,
    pub(crate) elems: Vec<Type>,
}

impl Layer {
    /// The signature of `f`, the entry of `m`.
    pub(crate) fn of(m: &ftuner_ir::ParsedModule, f: OpId) -> Result<Layer, String> {
        let blk =
            m.ir.regions_of(f)
                .first()
                .and_then(|r| m.ir.region_entry(*r))
                .ok_or("no body")?;
        let args = m.ir.block_args(blk);
        Ok(Layer {
            name: m.ir.symbol_name(f).unwrap_or_default().to_string(),
            shapes: args
                .iter()
                .map(|a| m.ir.value_type(*a).shape().unwrap_or(&[]).to_vec())
                .collect(),
            elems: args
                .iter()
                .map(|a| m.ir.value_type(*a).element_type())
                .collect(),
        })
    }

    /// The largest static extent (R of the checks' tolerance).
    pub(crate) fn extent(&self) -> usize {
        self.shapes
            .iter()
            .flatten()
            .copied()
            .filter(|d| *d > 0)
            .max()
            .unwrap_or(1) as usize
    }

    /// Argument `i`'s shape with its dynamic dims at `t`.
    pub(crate) fn shape_at(&self, i: usize, t: usize) -> Vec<usize> {
        self.shapes[i]
            .iter()
            .map(|d| if *d == DYNAMIC { t } else { *d as usize })
            .collect()
    }
}

pub(crate) fn load(
    src: &str,
    file: &str,
) -> Result<(ftuner_ir::Context, ftuner_ir::ParsedModule), String> {
    let ctx = ftuner_transforms::context();
    let m = ftuner_opt::parse_and_verify(&ctx, src, file).map_err(|d| {
        d.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    Ok((ctx, m))
}

pub(crate) fn entry(ir: &Ir, top: OpId) -> Result<OpId, String> {
    let mut fs = vec![];
    ir.walk_pre(top, &mut |o| {
        if ir.name(o) == "func.func"
            && ir
                .regions_of(o)
                .first()
                .and_then(|r| ir.region_entry(*r))
                .is_some()
        {
            fs.push(o);
        }
    });
    fs.into_iter()
        .next()
        .ok_or_else(|| "no function with a body".to_string())
}

/// Fix every dynamic dim of every argument of `f` to `t`: the argument gets the static
/// type and a `tensor.cast` back to the dynamic one feeds the body, so the body is
/// unchanged and canonicalization folds the now-constant sizes.
fn specialize(ir: &mut Ir, f: OpId, t: i64) {
    let blk = ir
        .regions_of(f)
        .first()
        .and_then(|r| ir.region_entry(*r))
        .expect("function with a body");
    let args = ir.block_args(blk).to_vec();
    let mut inputs = vec![];
    for a in args.iter().rev() {
        let ty = ir.value_type(*a);
        let Some(shape) = ty.shape().map(|s| s.to_vec()) else {
            inputs.push(ty);
            continue;
        };
        if !shape.contains(&DYNAMIC) || !ty.is_tensor() {
            inputs.push(ty);
            continue;
        }
        let fixed: Vec<i64> = shape
            .iter()
            .map(|d| if *d == DYNAMIC { t } else { *d })
            .collect();
        let st = Type::tensor(fixed, ty.element_type());
        let loc = ir.loc(f);
        let cast = ir.create_op(
            OpSpec::new(intern_name("tensor.cast"), loc)
                .operands([*a])
                .results([ty]),
        );
        ir.prepend_op(blk, cast);
        let r = ir.result(cast, 0);
        ir.replace_all_uses(*a, r);
        ir.set_operand(cast, 0, *a);
        ir.set_value_type(*a, st);
        inputs.push(st);
    }
    inputs.reverse();
    let results: Vec<Type> = ir
        .attr(f, "function_type")
        .and_then(|a| a.as_type())
        .map(|t| t.function_results().to_vec())
        .unwrap_or_default();
    let ft = Some(Attribute::type_attr(Type::function(inputs, results)));
    if ir.prop(f, "function_type").is_some() {
        ir.set_prop(f, "function_type", ft);
    } else {
        ir.set_attr(f, "function_type", ft);
    }
}

pub(crate) fn compile(
    src: &str,
    file: &str,
    pipeline: &str,
    fix: Option<i64>,
) -> Result<(ftuner_runtime::Executable, f64), String> {
    let t0 = Instant::now();
    let (ctx, mut m) = load(src, file)?;
    if let Some(t) = fix {
        let f = entry(&m.ir, m.top)?;
        specialize(&mut m.ir, f, t);
        let errs = ftuner_ir::verify::verify(&ctx, &m.ir, m.top);
        if let Some(e) = errs.first() {
            return Err(format!("specialized to {t}: {e}"));
        }
    }
    let reg = ftuner_opt::default_registry();
    let mut pm =
        ftuner_pass::PassManager::from_pipeline(&reg, pipeline).map_err(|e| e.to_string())?;
    pm.run(&ctx, &mut m.ir, m.top).map_err(|e| e.to_string())?;
    let exe = ftuner_runtime::Executable::compile(&ctx, &mut m.ir, m.top).map_err(|e| e.0)?;
    Ok((exe, t0.elapsed().as_secs_f64()))
}

pub(crate) fn tensor(shape: &[usize], elem: Type, rng: &mut Rng) -> Tensor {
    let n: usize = shape.iter().product();
    Tensor::new(
        shape.to_vec(),
        elem,
        (0..n).map(|_| rng.value(elem)).collect(),
    )
}

/// `x` zero-padded along every dim where `from` differs from `to`.
pub(crate) fn pad(x: &Tensor, to: &[usize]) -> Tensor {
    let mut out = Tensor::zeros(to.to_vec(), x.elem);
    let (xs, os) = (x.strides(), out.strides());
    for (i, v) in x.data.iter().enumerate() {
        let mut o = 0;
        for (d, s) in xs.iter().enumerate() {
            o += ((i / s) % x.shape[d]) * os[d];
        }
        out.data[o] = *v;
    }
    out
}
