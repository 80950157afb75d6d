//! Scalar operations, and bodies of structured ops compiled to register programs.

use crate::eval::InterpError;
use crate::tensor::{round_to, RtVal, Tensor};
use crate::word::{width, Word};
use ftuner_dialects::ops;
use ftuner_ir::{AttrKind, Context, Ir, OpId, ScalarEval, Type, Value};
use rustc_hash::FxHashMap;

/// One scalar operation with everything it needs decided up front.
#[derive(Clone, Debug)]
pub enum ScalarOp {
    Const(Word),
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

/// The integer value `v` of type `t`, read signed or unsigned.
fn int_of(v: Word, t: Type, unsigned: bool) -> i128 {
    use ftuner_dialects::util::{sext, zext};
    if unsigned {
        zext(v.i() as i128, width(t))
    } else {
        sext(v.i() as i128, width(t))
    }
}

/// `x * y + z` of type `ty` with one rounding, to the type (through f64, f32 would round
/// twice): `math.fma` and `vector.fma`; the caller rounds other types.
pub(crate) fn fused(x: f64, y: f64, z: f64, ty: Type) -> f64 {
    match ty.float_kind() {
        Some(ftuner_ir::FloatKind::F32) if !crate::tensor::is_wide() => {
            (x as f32).mul_add(y as f32, z as f32) as f64
        }
        _ => x.mul_add(y, z),
    }
}

/// `arith.<kind>` of `x` from type `from` to type `to` (the caller rounds the result to
/// `to`): integers are read signed or unsigned as the cast says and wrapped to the result
/// width, integer-to-float conversions round once, float-to-integer ones are poison (an
/// error) for NaN, infinities and values out of range, bitcasts reinterpret the bits.
fn cast(kind: &str, from: Type, to: Type, x: Word) -> Result<Word, String> {
    let to_float = |v: i128| {
        Word::float(match to.float_kind() {
            // Rounded once from the exact value (through f64 it could round twice).
            Some(ftuner_ir::FloatKind::F32) if !crate::tensor::is_wide() => v as f32 as f64,
            _ => v as f64,
        })
    };
    Ok(match kind {
        "extf" | "truncf" => x,
        "extsi" | "trunci" | "index_cast" => Word::wrapped(int_of(x, from, false), to),
        "extui" | "index_castui" => {
            // Zero-extend when widening; narrowing keeps the low bits either way.
            let unsigned = width(to) > width(from);
            Word::wrapped(int_of(x, from, unsigned), to)
        }
        "sitofp" => to_float(int_of(x, from, false)),
        "uitofp" => to_float(int_of(x, from, true)),
        "fptosi" | "fptoui" => {
            let v =
                ftuner_dialects::arith_semantics::float_to_int(x.f(), width(to), kind == "fptosi")
                    .ok_or_else(|| {
                        format!(
                            "arith.{kind} of {} to {to} is poison (NaN, infinite or out of range)",
                            x.f()
                        )
                    })?;
            // Signless: an unsigned result past the signed maximum reads negative.
            Word::wrapped(v, to)
        }
        "bitcast" => {
            let bits = match from.float_kind() {
                Some(k) => ftuner_ir::float::f64_to_bits(x.f(), from) & ((1u128 << k.width()) - 1),
                None => int_of(x, from, true) as u128,
            };
            match to.float_kind() {
                Some(k) => Word::float(ftuner_ir::float::bits_to_f64(bits, k)),
                None => Word::wrapped(bits as i128, to),
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
                    // Wrapped to the result's width (an i1 to 0 or 1 by `apply`); wider
                    // than 64 bits, `apply` refuses it.
                    AttrKind::Integer { value, .. } => {
                        let t = ir.value_type(ir.result(op, 0)).element_type();
                        ScalarOp::Const(Word::wrapped(*value, t))
                    }
                    AttrKind::Bool(b) => ScalarOp::Const(Word::bool(*b)),
                    AttrKind::Float { bits, ty } => ScalarOp::Const(Word::float(
                        ftuner_ir::float::bits_to_f64(*bits, ty.float_kind()?),
                    )),
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
    pub fn apply(&self, a: &[Word], ty: Type) -> Result<Word, InterpError> {
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
        let float = Word::float;
        let r = match self {
            ScalarOp::Const(c) => *c,
            ScalarOp::Select => {
                if a[0].truth() {
                    a[1]
                } else {
                    a[2]
                }
            }
            ScalarOp::Fma => float(fused(a[0].f(), a[1].f(), a[2].f(), ty)),
            ScalarOp::Eval(e) if e.is_int() => {
                let w = width(ty);
                // Operands read signed at the width (an i1 `true` is carried as 1).
                let args: Vec<i128> = a.iter().map(|x| int_of(*x, ty, false)).collect();
                let r = e
                    .apply_int(&args, w)
                    .ok_or_else(|| err("undefined at these operands (poison)".into()))?;
                Word::wrapped(r, ty)
            }
            ScalarOp::Eval(e) => {
                let mut x = [0f64; 4];
                let n = a.len().min(4);
                for (d, s) in x.iter_mut().zip(a) {
                    *d = s.f();
                }
                float(
                    e.apply(&x[..n])
                        .ok_or_else(|| err("wrong number of operands".into()))?,
                )
            }
            ScalarOp::FPowI => {
                let n = a[1].i().clamp(i32::MIN as i64, i32::MAX as i64) as i32;
                float(a[0].f().powi(n))
            }
            ScalarOp::CmpF(p) => {
                let (x, y) = (a[0].f(), a[1].f());
                let uno = x.is_nan() || y.is_nan();
                Word::bool(match p {
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
                })
            }
            ScalarOp::CmpI(p, t) => {
                let (x, y) = (int_of(a[0], *t, false), int_of(a[1], *t, false));
                let (ux, uy) = (int_of(a[0], *t, true), int_of(a[1], *t, true));
                Word::bool(match p {
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
                })
            }
            ScalarOp::Cast(kind, from) => cast(kind, from.element_type(), ty, a[0]).map_err(err)?,
            ScalarOp::Un(n) => match *n {
                "negf" => float(-a[0].f()),
                // Wrapped: |MIN| is MIN, as LLVM's abs without the poison flag.
                "absi" => Word::wrapped(int_of(a[0], ty, false).abs(), ty),
                _ => {
                    return Err(err(format!(
                        "unary op '{n}' is not supported by the interpreter"
                    )))
                }
            },
            ScalarOp::Bin(n) if ftuner_dialects::arith_semantics::is_int_binary(n) => {
                // The folders' definition (wrapping, signedness, rounding of divisions).
                let (x, y) = (a[0].i(), a[1].i());
                match ftuner_dialects::arith_semantics::int_binary(n, x as i128, y as i128, width(ty))
                {
                    Some(v) => Word::wrapped(v, ty),
                    None => {
                        return Err(err(format!(
                            "arith.{n} of {x} and {y} is undefined (division by zero, signed division overflow, or a shift by the width or more)"
                        )))
                    }
                }
            }
            ScalarOp::Bin(n) if ftuner_dialects::arith_semantics::FLOAT_BINARY_OPS.contains(n) => {
                // The folders' definition (maximumf orders -0 < +0 and propagates NaN).
                float(
                    ftuner_dialects::arith_semantics::float_binary(n, a[0].f(), a[1].f())
                        .ok_or_else(|| err(format!("arith.{n} is not defined")))?,
                )
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
    pub inits: Vec<(usize, Word)>,
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
               inits: &mut Vec<(usize, Word)>|
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
    pub fn run(&self, slots: &mut [Word], point: &[i64]) -> Result<(), InterpError> {
        let mut buf = [Word::ZERO; 4];
        for s in &self.steps {
            match s {
                Step::Op { op, args, dst, ty } => {
                    for (i, a) in args.iter().enumerate().take(4) {
                        buf[i] = slots[*a];
                    }
                    slots[*dst] = op.apply(&buf[..args.len()], *ty)?;
                }
                Step::Index { dim, dst } => slots[*dst] = Word::int(point[*dim]),
                Step::Assert { cond, msg } => {
                    if !slots[*cond].truth() {
                        return Err(InterpError::new(msg.clone()));
                    }
                }
                Step::Dim { shape, idx, dst } => {
                    let i = slots[*idx].i();
                    let d = usize::try_from(i).ok().and_then(|i| shape.get(i));
                    slots[*dst] = Word::int(*d.ok_or_else(|| {
                        InterpError::new(format!("tensor.dim index {i} out of range"))
                    })? as i64);
                }
                Step::Extract { tensor, idx, dst } => {
                    let ix: Vec<i64> = idx.iter().map(|i| slots[*i].i()).collect();
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
    use crate::word::Word;
    use ftuner_ir::Type;

    fn cast(kind: &'static str, from: Type, to: Type, x: Word) -> Result<Word, String> {
        ScalarOp::Cast(kind, from)
            .apply(&[x], to)
            .map_err(|e| e.message)
    }
    fn f(x: f64) -> Word {
        Word::float(x)
    }
    fn i(v: i64) -> Word {
        Word::int(v)
    }

    /// The cases the differential test (ftuner-runtime) found wrong against the folder
    /// and the JIT.
    #[test]
    fn casts_read_their_operand_at_its_width() {
        let (i1, i8, i64) = (Type::i1(), Type::integer(8), Type::i64());
        // An i1 `true` is -1 signed.
        assert_eq!(cast("extsi", i1, i8, i(1)), Ok(i(-1)));
        assert_eq!(cast("sitofp", i1, Type::f32(), i(1)), Ok(f(-1.0)));
        assert_eq!(cast("index_cast", i1, Type::index(), i(1)), Ok(i(-1)));
        assert_eq!(cast("extui", i1, i8, i(1)), Ok(i(1)));
        // Narrowing keeps the low bits (was 0 and 1: 2^64 - 1 does not fit an f64).
        assert_eq!(cast("index_castui", Type::index(), i8, i(-1)), Ok(i(-1)));
        assert_eq!(cast("index_castui", Type::index(), i1, i(-2)), Ok(i(0)));
        // Widening an unsigned i32 to i64 (exact past 2^53 now).
        assert_eq!(
            cast("extui", Type::i32(), i64, i(-1)),
            Ok(i(u32::MAX as i64))
        );
        assert_eq!(
            cast("uitofp", i64, Type::f64(), i(-1)),
            Ok(f(2f64.powi(64)))
        );
        // Poison is an error, not a value; an unsigned result reads signless.
        assert!(cast("fptosi", Type::f32(), Type::i32(), f(f64::NAN)).is_err());
        assert!(cast("fptoui", Type::f64(), i1, f(2.5)).is_err());
        assert_eq!(
            cast("fptoui", Type::f64(), Type::i32(), f(2f64.powi(31))),
            Ok(i(i32::MIN as i64))
        );
        assert_eq!(
            cast("fptoui", Type::f64(), i64, f(2f64.powi(63))),
            Ok(i(i64::MIN))
        );
        // bitcast was not supported.
        assert_eq!(
            cast("bitcast", Type::f32(), Type::i32(), f(-0.0)),
            Ok(i(i32::MIN as i64))
        );
        assert_eq!(
            cast("bitcast", i64, Type::f64(), i(1)),
            Ok(f(f64::from_bits(1)))
        );
        assert_eq!(cast("bitcast", Type::f64(), i64, f(-0.0)), Ok(i(i64::MIN)));
    }

    #[test]
    fn signed_compares_of_i1_and_ieee_maximum_and_fma() {
        let slt = ScalarOp::CmpI(2, Type::i1());
        assert_eq!(slt.apply(&[i(1), i(0)], Type::i1()).unwrap(), i(1));
        let max = ScalarOp::Bin("maximumf").apply(&[f(-0.0), f(0.0)], Type::f32());
        assert_eq!(max.unwrap(), f(0.0));
        let min = ScalarOp::Bin("minimumf").apply(&[f(0.0), f(-0.0)], Type::f64());
        assert_eq!(min.unwrap(), f(-0.0));
        // Fused: (1 + e)(1 - e) - 1 = -e^2, not 0; in f32 rounded once.
        let e = 2f64.powi(-52);
        let r = ScalarOp::Fma.apply(&[f(1.0 + e), f(1.0 - e), f(-1.0)], Type::f64());
        assert_eq!(r.unwrap(), f(-e * e));
        let r = ScalarOp::Fma.apply(&[f(1.5), f(-1e10), f(1e-38)], Type::f32());
        assert_eq!(r.unwrap(), f(-14999999488.0));
    }

    /// 64-bit integers are exact: the f64 carrier rounded 2^63 - 1 to 2^63.
    #[test]
    fn sixty_four_bit_integers_are_exact() {
        let i64t = Type::i64();
        let add = ScalarOp::Bin("addi").apply(&[i(i64::MAX), i(1)], i64t);
        assert_eq!(add.unwrap(), i(i64::MIN));
        let mul = ScalarOp::Bin("muli").apply(&[i(i64::MAX), i(2)], i64t);
        assert_eq!(mul.unwrap(), i(-2));
        let sub = ScalarOp::Bin("subi").apply(&[i((1 << 53) + 1), i(0)], i64t);
        assert_eq!(sub.unwrap(), i((1 << 53) + 1));
        let div = ScalarOp::Bin("divui").apply(&[i(-1), i(2)], i64t);
        assert_eq!(div.unwrap(), i(i64::MAX));
        let absi = ScalarOp::Un("absi").apply(&[i(i64::MIN)], i64t);
        assert_eq!(absi.unwrap(), i(i64::MIN));
        let cmp = ScalarOp::CmpI(6, i64t).apply(&[i(i64::MAX), i(-1)], Type::i1());
        assert_eq!(cmp.unwrap(), i(1));
        // Wider than 64 bits is still outside the model.
        let wide = ScalarOp::Bin("addi").apply(&[i(1), i(1)], Type::integer(65));
        assert!(wide.unwrap_err().message.contains(crate::UNMODELLED));
    }
}
