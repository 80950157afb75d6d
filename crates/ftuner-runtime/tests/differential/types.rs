//! The scalar types under test, their edge values, literals and how results compare.
//! Values are [`Word`]s, as the interpreter and the runtime carry them: integers exact to
//! 64 bits (sign-extended; an i1 is 0 or 1), floats as f64 bits.

use ftuner_interp::Word;

/// A scalar type the test runs ops on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ty {
    I1,
    I8,
    I32,
    I64,
    Index,
    F32,
    F64,
}

pub const INTS: [Ty; 5] = [Ty::I1, Ty::I8, Ty::I32, Ty::I64, Ty::Index];
pub const FLOATS: [Ty; 2] = [Ty::F32, Ty::F64];

impl Ty {
    pub fn name(self) -> &'static str {
        match self {
            Ty::I1 => "i1",
            Ty::I8 => "i8",
            Ty::I32 => "i32",
            Ty::I64 => "i64",
            Ty::Index => "index",
            Ty::F32 => "f32",
            Ty::F64 => "f64",
        }
    }

    pub fn width(self) -> u32 {
        match self {
            Ty::I1 => 1,
            Ty::I8 => 8,
            Ty::I32 | Ty::F32 => 32,
            Ty::I64 | Ty::Index | Ty::F64 => 64,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Ty::F32 | Ty::F64)
    }

    /// Edge values: for integers 0, ±1, ±2, ±7, the width less one, the minimum and the
    /// maximum and their neighbours (exactly: `i64::MAX` is itself, not 2^53).
    pub fn edges(self) -> Vec<Word> {
        match self {
            Ty::I1 => vec![Word::int(0), Word::int(1)],
            Ty::F32 | Ty::F64 => float_edges(self),
            _ => {
                let w = self.width();
                let (min, max) = (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1);
                let v = [
                    0,
                    1,
                    -1,
                    2,
                    -2,
                    7,
                    -7,
                    w as i128 - 1,
                    min,
                    max,
                    min + 1,
                    max - 1,
                ];
                dedup(v.into_iter().map(|x| self.int(x)).collect())
            }
        }
    }

    /// The float `x` rounded to this (float) type.
    pub fn float(self, x: f64) -> Word {
        Word::float(if self == Ty::F32 { x as f32 as f64 } else { x })
    }

    /// The integer `v` wrapped to this type's width (sign-extended; an i1 is 0 or 1).
    pub fn int(self, v: i128) -> Word {
        match self {
            Ty::I1 => Word::int((v & 1) as i64),
            _ => Word::int(ftuner_dialects::util::sext(v, self.width()) as i64),
        }
    }

    /// The typed MLIR literal of `v` (floats as their bit pattern, so every value is
    /// exact): `true`, `-7 : i8`, `0x3F800000 : f32`.
    pub fn literal(self, v: Word) -> String {
        match self {
            Ty::I1 => (if v.truth() { "true" } else { "false" }).to_string(),
            Ty::F32 => format!("0x{:08X} : f32", (v.f() as f32).to_bits()),
            Ty::F64 => format!("0x{:016X} : f64", v.f().to_bits()),
            _ => format!("{} : {}", v.i(), self.name()),
        }
    }

    /// The bit pattern of a value of this type.
    pub fn bits(self, v: Word) -> u64 {
        match self {
            Ty::F32 => (v.f() as f32).to_bits() as u64,
            Ty::F64 => v.f().to_bits(),
            _ => ftuner_dialects::util::zext(v.i() as i128, self.width()) as u64,
        }
    }
}

fn dedup(mut v: Vec<Word>) -> Vec<Word> {
    let mut seen = std::collections::HashSet::new();
    v.retain(|x| seen.insert(*x));
    v
}

/// 0, -0, ±inf, NaN, ±1, ±0.5, ±1.5, ±2.5 (ties of the rounding ops), ±3, ±1e10, the
/// largest finite value, the smallest normal and the smallest subnormal.
fn float_edges(t: Ty) -> Vec<Word> {
    let mut v = vec![
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        3.0,
        -3.0,
        1e10,
        -1e10,
    ];
    if t == Ty::F32 {
        v.extend([
            f32::MAX as f64,
            f32::MIN_POSITIVE as f64,
            f32::from_bits(1) as f64,
        ]);
    } else {
        v.extend([f64::MAX, f64::MIN_POSITIVE, f64::from_bits(1)]);
    }
    dedup(v.into_iter().map(|x| t.float(x)).collect())
}

/// Extra inputs of the float-to-integer casts: values at and just past each integer
/// type's bounds.
pub fn cast_edges(t: Ty) -> Vec<Word> {
    let mut v: Vec<f64> = float_edges(t).into_iter().map(|w| w.f()).collect();
    for x in [
        -0.75, 126.5, 127.0, 128.0, -128.0, -128.5, -129.0, 255.0, 255.5, 256.0,
    ] {
        v.push(x);
    }
    for p in [31, 32, 53, 63, 64] {
        let x = (1u64 << (p - 1) << 1) as f64;
        v.extend([x, -x]);
    }
    // The largest f32 below 2^31 and 2^32, and the largest f64 below 2^63.
    v.extend([2147483520.0, 4294967040.0, 9223372036854774784.0]);
    dedup(v.into_iter().map(|x| t.float(x)).collect())
}

/// How the results of an op are compared.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cmp {
    /// Integers: equal. Floats: the same bits after rounding to the type; every NaN is
    /// equal to every NaN.
    Exact,
    /// As `Exact`, but +0 and -0 are equal (maxnumf/minnumf: LLVM's maxnum/minnum may
    /// return either zero when the operands compare equal).
    AnyZero,
    /// Within this many units in the last place of the type (transcendental functions);
    /// infinities and NaN must match exactly.
    Ulps(u64),
}

/// Whether `a` and `b`, values of type `t`, are the same under `cmp`.
pub fn same(t: Ty, cmp: Cmp, a: Word, b: Word) -> bool {
    if !t.is_float() {
        return a == b;
    }
    let (a, b) = (a.f(), b.f());
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    match cmp {
        Cmp::Exact => t.bits(Word::float(a)) == t.bits(Word::float(b)),
        Cmp::AnyZero => t.bits(Word::float(a)) == t.bits(Word::float(b)) || (a == 0.0 && b == 0.0),
        Cmp::Ulps(n) => {
            if a.is_infinite() || b.is_infinite() {
                return a == b;
            }
            ulps(t, a, b) <= n
        }
    }
}

/// Units in the last place of type `t` between two finite values.
pub fn ulps(t: Ty, a: f64, b: f64) -> u64 {
    let ord = |x: f64| -> i128 {
        let (bits, sign) = match t {
            Ty::F32 => ((x as f32).to_bits() as i128, 1i128 << 31),
            _ => (x.to_bits() as i128, 1i128 << 63),
        };
        if bits & sign != 0 {
            -(bits & (sign - 1))
        } else {
            bits
        }
    };
    (ord(a) - ord(b)).unsigned_abs() as u64
}
