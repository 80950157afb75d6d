//! Scalar operations, and bodies of structured ops compiled to register programs.

use crate::eval::InterpError;
use crate::tensor::{round_to, RtVal, Tensor};
use ftuner_dialects::ops;
use ftuner_ir::{AttrKind, Context, Ir, OpId, ScalarEval, Type, Value};
use rustc_hash::FxHashMap;

/// One scalar operation with everything it needs decided up front.
#[derive(Clone, Debug)]
pub enum ScalarOp {
    Const(f64),
    /// An integer constant the f64 carrier cannot hold exactly: an error when evaluated.
    Inexact(i128),
    Bin(&'static str),
    Un(&'static str),
    /// The predicate and the operands' type (signed predicates sign-extend from its
    /// width: an i1 `true` is -1).
    CmpI(i64, Type),
    CmpF(i64),
    Select,
    Cast(&'static str, Type),
    FPowI,
    Fma,
    /// An op with a [`ScalarEval`] (the `math` float functions): the folder's definition.
    Eval(ScalarEval),
}

fn width(t: Type) -> u32 {
    if t.is_index() {
        64
    } else {
        t.int_width().unwrap_or(64)
    }
}

/// The integer value `v` of type `t`, read signed or unsigned.
fn int_of(v: f64, t: Type, unsigned: bool) -> i128 {
    use ftuner_dialects::util::{sext, zext};
    if unsigned {
        zext(v as i128, width(t))
    } else {
        sext(v as i128, width(t))
    }
}

/// `arith.<kind>` of `x` from type `from` to type `to` (the caller rounds the result to
/// `to`): integers are read signed or unsigned as the cast says and wrapped to the result
/// width, integer-to-float conversions round once, float-to-integer ones are poison (an
/// error) for NaN, infinities and values out of range, bitcasts reinterpret the bits.
fn cast(kind: &str, from: Type, to: Type, x: f64) -> Result<f64, String> {
    let to_float = |v: i128| match to.float_kind() {
        // Rounded once from the exact value (through f64 it could round twice).
        Some(ftuner_ir::FloatKind::F32) if !crate::tensor::is_wide() => v as f32 as f64,
        _ => v as f64,
    };
    Ok(match kind {
        "extf" | "truncf" => x,
        "extsi" | "trunci" | "index_cast" => int_of(x, from, false) as f64,
        "extui" | "index_castui" => {
            // Zero-extend when widening; narrowing keeps the low bits either way.
            let unsigned = width(to) > width(from);
            int_of(x, from, unsigned) as f64
        }
        "sitofp" => to_float(int_of(x, from, false)),
        "uitofp" => to_float(int_of(x, from, true)),
        "fptosi" | "fptoui" => {
            let v = ftuner_dialects::arith_semantics::float_to_int(x, width(to), kind == "fptosi")
                .ok_or_else(|| {
                    format!("arith.{kind} of {x} to {to} is poison (NaN, infinite or out of range)")
                })?;
            // Signless: an unsigned result past the signed maximum reads negative.
            int_of(v as f64, to, false) as f64
        }
        "bitcast" => {
            let bits = match from.float_kind() {
                Some(k) => ftuner_ir::float::f64_to_bits(x, from) & ((1u128 << k.width()) - 1),
                None => int_of(x, from, true) as u128,
            };
            match to.float_kind() {
                Some(k) => ftuner_ir::float::bits_to_f64(bits, k),
                None => ftuner_dialects::util::sext(bits as i128, width(to)) as f64,
            }
        }
        _ => return Err(format!("arith.{kind} is not supported by the interpreter")),
    })
}

impl ScalarOp {
    /// The scalar semantics of `op`, if it is a scalar arith/math op.
    pub fn of(ctx: &Context, ir: &Ir, op: OpId) -> Option<ScalarOp> {
        let name = ir.name(op);
        if let Some(eval) = ctx.op_def(name).and_then(|d| d.scalar_eval) {
            return Some(ScalarOp::Eval(eval));
        }
        let (dialect, short) = name.split_once('.')?;
        if dialect != "arith" && dialect != "math" {
            return None;
        }
        Some(match short {
            "constant" => {
                let a = ir.attr(op, "value")?;
                match a.kind() {
                    AttrKind::Integer { value, .. } => match exact_int(*value) {
                        Ok(c) => ScalarOp::Const(c),
                        Err(_) => ScalarOp::Inexact(*value),
                    },
                    AttrKind::Bool(b) => ScalarOp::Const(*b as i64 as f64),
                    AttrKind::Float { bits, ty } => {
                        ScalarOp::Const(ftuner_ir::float::bits_to_f64(*bits, ty.float_kind()?))
                    }
                    _ => return None,
                }
            }
            "cmpi" => ScalarOp::CmpI(
                ir.attr(op, "predicate")?.as_i64()?,
                ir.value_type(ir.operand(op, 0)).element_type(),
            ),
            "cmpf" => ScalarOp::CmpF(ir.attr(op, "predicate")?.as_i64()?),
            "select" => ScalarOp::Select,
            "fpowi" => ScalarOp::FPowI,
            "fma" => ScalarOp::Fma,
            "extf" | "truncf" | "extsi" | "extui" | "trunci" | "sitofp" | "uitofp" | "fptosi"
            | "fptoui" | "index_cast" | "index_castui" | "bitcast" => ScalarOp::Cast(
                ftuner_ir::intern_name(short),
                ir.value_type(ir.operand(op, 0)),
            ),
            _ => match ir.operands(op).len() {
                1 => ScalarOp::Un(ftuner_ir::intern_name(short)),
                2 => ScalarOp::Bin(ftuner_ir::intern_name(short)),
                _ => return None,
            },
        })
    }

    /// Apply to scalar operands; `ty` is the result type (element type for tensors).
    pub fn apply(&self, a: &[f64], ty: Type) -> Result<f64, InterpError> {
        let err = |m: String| InterpError::new(m);
        // Integers of more than 64 bits are not modelled (their operands' type for a
        // compare or a cast, which may narrow them).
        let operand_ty = match self {
            ScalarOp::CmpI(_, t) => *t,
            ScalarOp::Cast(_, from) => from.element_type(),
            _ => ty,
        };
        for t in [operand_ty, ty] {
            if let Some(m) = wide_int(t) {
                return Err(err(m));
            }
        }
        let r = match self {
            ScalarOp::Const(c) => *c,
            ScalarOp::Inexact(v) => {
                return Err(err(exact_int(*v).map(|_| ()).unwrap_err()));
            }
            ScalarOp::Select => {
                if a[0] != 0.0 {
                    a[1]
                } else {
                    a[2]
                }
            }
            // One rounding, to the result type (through f64, f32 would round twice).
            ScalarOp::Fma => match ty.float_kind() {
                Some(ftuner_ir::FloatKind::F32) if !crate::tensor::is_wide() => {
                    (a[0] as f32).mul_add(a[1] as f32, a[2] as f32) as f64
                }
                _ => a[0].mul_add(a[1], a[2]),
            },
            ScalarOp::Eval(e) if e.is_int() => {
                let w = if ty.is_index() {
                    64
                } else {
                    ty.int_width().unwrap_or(64)
                };
                // Operands read signed at the width (an i1 `true` is carried as 1).
                let args: Vec<i128> = a
                    .iter()
                    .map(|x| ftuner_dialects::util::sext(*x as i128, w))
                    .collect();
                let r = e
                    .apply_int(&args, w)
                    .ok_or_else(|| err("undefined at these operands (poison)".into()))?;
                exact_int(ftuner_dialects::util::sext(r, w)).map_err(err)?
            }
            ScalarOp::Eval(e) => e
                .apply(a)
                .ok_or_else(|| err("wrong number of operands".into()))?,
            ScalarOp::FPowI => a[0].powi(a[1].clamp(i32::MIN as f64, i32::MAX as f64) as i32),
            ScalarOp::CmpF(p) => {
                let (x, y) = (a[0], a[1]);
                let uno = x.is_nan() || y.is_nan();
                (match p {
                    0 => false,
                    1 => !uno && x == y,
                    2 => !uno && x > y,
                    3 => !uno && x >= y,
                    4 => !uno && x < y,
                    5 => !uno && x <= y,
                    6 => !uno && x != y,
                    7 => !uno,
                    8 => uno || x == y,
                    9 => uno || x > y,
                    10 => uno || x >= y,
                    11 => uno || x < y,
                    12 => uno || x <= y,
                    13 => uno || x != y,
                    14 => uno,
                    _ => true,
                }) as i64 as f64
            }
            ScalarOp::CmpI(p, t) => {
                let (x, y) = (int_of(a[0], *t, false), int_of(a[1], *t, false));
                let (ux, uy) = (int_of(a[0], *t, true), int_of(a[1], *t, true));
                (match p {
                    0 => x == y,
                    1 => x != y,
                    2 => x < y,
                    3 => x <= y,
                    4 => x > y,
                    5 => x >= y,
                    6 => ux < uy,
                    7 => ux <= uy,
                    8 => ux > uy,
                    _ => ux >= uy,
                }) as i64 as f64
            }
            ScalarOp::Cast(kind, from) => cast(kind, from.element_type(), ty, a[0]).map_err(err)?,
            ScalarOp::Un(n) => {
                let x = a[0];
                match *n {
                    "negf" => -x,
                    "absi" => x.abs(),
                    _ => {
                        return Err(err(format!(
                            "unary op '{n}' is not supported by the interpreter"
                        )))
                    }
                }
            }
            ScalarOp::Bin(n) if ftuner_dialects::arith_semantics::is_int_binary(n) => {
                // The folders' definition (wrapping, signedness, rounding of divisions).
                let w = if ty.is_index() {
                    64
                } else {
                    ty.int_width().unwrap_or(64)
                };
                let (x, y) = (a[0], a[1]);
                match ftuner_dialects::arith_semantics::int_binary(n, x as i128, y as i128, w) {
                    Some(v) => exact_int(v).map_err(err)?,
                    None => {
                        return Err(err(format!(
                            "arith.{n} of {x} and {y} is undefined (division by zero, signed division overflow, or a shift by the width or more)"
                        )))
                    }
                }
            }
            ScalarOp::Bin(n) if ftuner_dialects::arith_semantics::FLOAT_BINARY_OPS.contains(n) => {
                // The folders' definition (maximumf orders -0 < +0 and propagates NaN).
                ftuner_dialects::arith_semantics::float_binary(n, a[0], a[1])
                    .ok_or_else(|| err(format!("arith.{n} is not defined")))?
            }
            ScalarOp::Bin(n) => {
                return Err(err(format!(
                    "binary op '{n}' is not supported by the interpreter"
                )))
            }
        };
        Ok(round_to(r, ty))
    }
}

/// `v` as the f64 carrier holds it, when it holds it exactly (every integer up to 2^53
/// in magnitude, and larger ones with enough trailing zero bits, as 2^62); otherwise why
/// not, as an error outside the interpreter's model. Constants and integer results are
/// checked, so every integer the interpreter computes on is exact.
pub(crate) fn exact_int(v: i128) -> Result<f64, String> {
    let x = v as f64;
    if x as i128 == v {
        Ok(x)
    } else {
        Err(format!(
            "{v} is {}: the f64 carrier does not hold it exactly (nor every integer beyond 2^53)",
            crate::UNMODELLED
        ))
    }
}

/// Why an integer type is outside the interpreter's model (more than 64 bits), if it is.
fn wide_int(t: Type) -> Option<String> {
    let w = t.element_type().int_width()?;
    (w > 64).then(|| {
        format!(
            "i{w} is {}: integers of more than 64 bits are not modelled",
            crate::UNMODELLED
        )
    })
}

/// A structured op's body as a register program.
pub struct Program {
    /// Slots: block args first, then captured outer scalars, then op results.
    pub num_slots: usize,
    pub inits: Vec<(usize, f64)>,
    pub steps: Vec<Step>,
    pub yields: Vec<usize>,
}

pub enum Step {
    Op {
        op: ScalarOp,
        args: Vec<usize>,
        dst: usize,
        ty: Type,
    },
    Index {
        dim: usize,
        dst: usize,
    },
    Extract {
        tensor: std::rc::Rc<Tensor>,
        idx: Vec<usize>,
        dst: usize,
    },
    Dim {
        shape: Vec<usize>,
        idx: usize,
        dst: usize,
    },
    /// `cf.assert` (a run-time check `guard_input` put before a `memref.load` in a body):
    /// fails with `msg`, located, when the condition is false.
    Assert {
        cond: usize,
        msg: String,
    },
}

/// Compile the single-block body of `op`. `env` holds the values defined outside.
pub fn compile(
    ctx: &Context,
    ir: &Ir,
    op: OpId,
    env: &FxHashMap<Value, RtVal>,
) -> Result<Program, InterpError> {
    compile_region(ctx, ir, op, 0, env)
}

/// [`compile`] for region `index` of `op` (a `ukernel.patch` epilogue is region 1).
pub fn compile_region(
    ctx: &Context,
    ir: &Ir,
    op: OpId,
    index: usize,
    env: &FxHashMap<Value, RtVal>,
) -> Result<Program, InterpError> {
    let r = ir
        .regions_of(op)
        .get(index)
        .copied()
        .ok_or_else(|| InterpError::at(ir, op, "structured op without a body"))?;
    let b = ir
        .region_entry(r)
        .ok_or_else(|| InterpError::at(ir, op, "structured op with an empty body"))?;
    let mut slot: FxHashMap<Value, usize> = FxHashMap::default();
    for (i, a) in ir.block_args(b).iter().enumerate() {
        slot.insert(*a, i);
    }
    let mut n = ir.block_args(b).len();
    let mut inits = vec![];
    let mut steps = vec![];
    let mut yields = vec![];
    let get = |v: Value,
               slot: &mut FxHashMap<Value, usize>,
               n: &mut usize,
               inits: &mut Vec<(usize, f64)>|
     -> Result<usize, InterpError> {
        if let Some(s) = slot.get(&v) {
            return Ok(*s);
        }
        match env.get(&v) {
            Some(RtVal::Scalar(x)) => {
                let s = *n;
                *n += 1;
                inits.push((s, *x));
                slot.insert(v, s);
                Ok(s)
            }
            _ => Err(InterpError::at(
                ir,
                op,
                "body uses a value that is not a scalar defined before the op",
            )),
        }
    };
    for o in ir.block_ops(b) {
        let name = ir.name(o);
        if ir.op(o).successors.is_empty() && crate::eval::is_yield(name) {
            for v in ir.operands(o) {
                yields.push(get(*v, &mut slot, &mut n, &mut inits)?);
            }
            continue;
        }
        if name == ops::linalg::IndexOp::NAME {
            let dim = ir.attr(o, "dim").and_then(|a| a.as_i64()).unwrap_or(0) as usize;
            steps.push(Step::Index { dim, dst: n });
            slot.insert(ir.result(o, 0), n);
            n += 1;
            continue;
        }
        if name == ops::tensor::DimOp::NAME || name == ops::memref::DimOp::NAME {
            let shape = match env.get(&ir.operand(o, 0)) {
                Some(RtVal::Tensor(t)) => t.shape.clone(),
                Some(RtVal::MemRef(m)) => m.sizes.clone(),
                _ => {
                    return Err(InterpError::at(
                        ir,
                        o,
                        "tensor.dim in a body must read a tensor defined outside",
                    ))
                }
            };
            let idx = get(ir.operand(o, 1), &mut slot, &mut n, &mut inits)?;
            steps.push(Step::Dim { shape, idx, dst: n });
            slot.insert(ir.result(o, 0), n);
            n += 1;
            continue;
        }
        if name == ops::tensor::ExtractOp::NAME || name == ops::memref::LoadOp::NAME {
            let t = match env.get(&ir.operand(o, 0)) {
                Some(RtVal::Tensor(t)) => t.clone(),
                Some(RtVal::MemRef(m)) => {
                    std::rc::Rc::new(m.to_tensor().map_err(|e| InterpError::at(ir, o, e))?)
                }
                _ => {
                    return Err(InterpError::at(
                        ir,
                        o,
                        "tensor.extract in a body must read a tensor defined outside",
                    ))
                }
            };
            let mut idx = vec![];
            for v in &ir.operands(o)[1..] {
                idx.push(get(*v, &mut slot, &mut n, &mut inits)?);
            }
            steps.push(Step::Extract {
                tensor: t,
                idx,
                dst: n,
            });
            slot.insert(ir.result(o, 0), n);
            n += 1;
            continue;
        }
        if name == ops::cf::AssertOp::NAME {
            let cond = get(ir.operand(o, 0), &mut slot, &mut n, &mut inits)?;
            let msg = ir.attr(o, "msg").and_then(|a| a.as_str()).unwrap_or("");
            let msg = InterpError::at(ir, o, format!("assertion failed: {msg}")).message;
            steps.push(Step::Assert { cond, msg });
            continue;
        }
        let sop = ScalarOp::of(ctx, ir, o).ok_or_else(|| {
            InterpError::at(
                ir,
                o,
                format!("'{name}' is not supported inside a structured op body"),
            )
        })?;
        let mut args = vec![];
        for v in ir.operands(o) {
            args.push(get(*v, &mut slot, &mut n, &mut inits)?);
        }
        let ty = ir.value_type(ir.result(o, 0));
        steps.push(Step::Op {
            op: sop,
            args,
            dst: n,
            ty,
        });
        slot.insert(ir.result(o, 0), n);
        n += 1;
    }
    Ok(Program {
        num_slots: n,
        inits,
        steps,
        yields,
    })
}

impl Program {
    /// Run with `slots[..num_args]` already set and the loop point `point`.
    pub fn run(&self, slots: &mut [f64], point: &[i64]) -> Result<(), InterpError> {
        let mut buf = [0f64; 4];
        for s in &self.steps {
            match s {
                Step::Op { op, args, dst, ty } => {
                    for (i, a) in args.iter().enumerate().take(4) {
                        buf[i] = slots[*a];
                    }
                    slots[*dst] = op.apply(&buf[..args.len()], *ty)?;
                }
                Step::Index { dim, dst } => slots[*dst] = point[*dim] as f64,
                Step::Assert { cond, msg } => {
                    if slots[*cond] == 0.0 {
                        return Err(InterpError::new(msg.clone()));
                    }
                }
                Step::Dim { shape, idx, dst } => {
                    let i = slots[*idx] as usize;
                    slots[*dst] = *shape.get(i).ok_or_else(|| {
                        InterpError::new(format!("tensor.dim index {i} out of range"))
                    })? as f64;
                }
                Step::Extract { tensor, idx, dst } => {
                    let ix: Vec<i64> = idx.iter().map(|i| slots[*i] as i64).collect();
                    let off = tensor.offset(&ix).ok_or_else(|| {
                        InterpError::new(format!(
                            "tensor.extract index {ix:?} out of bounds for shape {:?}",
                            tensor.shape
                        ))
                    })?;
                    slots[*dst] = tensor.data[off];
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::ScalarOp;
    use ftuner_ir::Type;

    fn cast(kind: &'static str, from: Type, to: Type, x: f64) -> Result<f64, String> {
        ScalarOp::Cast(kind, from)
            .apply(&[x], to)
            .map_err(|e| e.message)
    }

    /// The cases the differential test (ftuner-runtime) found wrong against the folder
    /// and the JIT.
    #[test]
    fn casts_read_their_operand_at_its_width() {
        let (i1, i8, i64) = (Type::i1(), Type::integer(8), Type::i64());
        // An i1 `true` is -1 signed.
        assert_eq!(cast("extsi", i1, i8, 1.0), Ok(-1.0));
        assert_eq!(cast("sitofp", i1, Type::f32(), 1.0), Ok(-1.0));
        assert_eq!(cast("index_cast", i1, Type::index(), 1.0), Ok(-1.0));
        assert_eq!(cast("extui", i1, i8, 1.0), Ok(1.0));
        // Narrowing keeps the low bits (was 0 and 1: 2^64 - 1 does not fit an f64).
        assert_eq!(cast("index_castui", Type::index(), i8, -1.0), Ok(-1.0));
        assert_eq!(cast("index_castui", Type::index(), i1, -2.0), Ok(0.0));
        // Poison is an error, not a value; an unsigned result reads signless.
        assert!(cast("fptosi", Type::f32(), Type::i32(), f64::NAN).is_err());
        assert!(cast("fptoui", Type::f64(), i1, 2.5).is_err());
        assert_eq!(
            cast("fptoui", Type::f64(), Type::i32(), 2f64.powi(31)),
            Ok(-(2f64.powi(31)))
        );
        assert_eq!(
            cast("fptoui", Type::f64(), i64, 2f64.powi(63)),
            Ok(-(2f64.powi(63)))
        );
        // bitcast was not supported.
        assert_eq!(
            cast("bitcast", Type::f32(), Type::i32(), -0.0),
            Ok(i32::MIN as f64)
        );
        assert_eq!(
            cast("bitcast", i64, Type::f64(), 1.0),
            Ok(f64::from_bits(1))
        );
    }

    #[test]
    fn signed_compares_of_i1_and_ieee_maximum_and_fma() {
        let slt = ScalarOp::CmpI(2, Type::i1());
        assert_eq!(slt.apply(&[1.0, 0.0], Type::i1()).unwrap(), 1.0);
        let max = ScalarOp::Bin("maximumf").apply(&[-0.0, 0.0], Type::f32());
        assert_eq!(max.unwrap().to_bits(), 0f64.to_bits());
        let min = ScalarOp::Bin("minimumf").apply(&[0.0, -0.0], Type::f64());
        assert_eq!(min.unwrap().to_bits(), (-0f64).to_bits());
        // Fused: (1 + e)(1 - e) - 1 = -e^2, not 0; in f32 rounded once.
        let e = 2f64.powi(-52);
        let r = ScalarOp::Fma.apply(&[1.0 + e, 1.0 - e, -1.0], Type::f64());
        assert_eq!(r.unwrap(), -e * e);
        let r = ScalarOp::Fma.apply(&[1.5, -1e10, 1e-38], Type::f32());
        assert_eq!(r.unwrap(), -14999999488.0);
    }
}
