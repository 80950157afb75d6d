//! `Word`: one scalar as a 64-bit register holds it, the interpreter's carrier of every
//! element and scalar value.
//!
//! What the bits mean is the value's type, which the IR always knows: a float of any kind
//! (`f16`, `bf16`, `f32` rounded to its type, `f64`) is the bits of its value as an f64;
//! an integer of at most 64 bits or an `index` is its value sign-extended to 64 bits from
//! its width (so it is exact: `2^63 - 1`, `i64::MIN` and `divui(-1, 2)` are what the JIT
//! computes), except an `i1`, which is 0 or 1. Integers of more than 64 bits are outside
//! the interpreter's model ([`crate::UNMODELLED`]).

use ftuner_ir::Type;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Word(u64);

impl Word {
    pub const ZERO: Word = Word(0);

    /// A float.
    pub const fn float(x: f64) -> Word {
        Word(x.to_bits())
    }
    /// An integer (already at its width: sign-extended, an `i1` 0 or 1).
    pub const fn int(v: i64) -> Word {
        Word(v as u64)
    }
    /// An `i1`.
    pub const fn bool(b: bool) -> Word {
        Word(b as u64)
    }
    /// The float this word holds.
    pub const fn f(self) -> f64 {
        f64::from_bits(self.0)
    }
    /// The integer this word holds.
    pub const fn i(self) -> i64 {
        self.0 as i64
    }
    /// The integer `v` wrapped to the width of `ty` (an integer or `index`, 64 bits): the
    /// low bits sign-extended, an `i1` 0 or 1. The one definition of an integer word.
    pub fn wrapped(v: i128, ty: Type) -> Word {
        match width(ty) {
            1 => Word::int((v & 1) as i64),
            w => Word::int(ftuner_dialects::util::sext(v, w) as i64),
        }
    }
    /// Whether an `i1` (or any integer) is non-zero.
    pub const fn truth(self) -> bool {
        self.0 != 0
    }
    /// The value of type `ty` as a number: a float as it is, an integer converted (rounded
    /// to the nearest f64 past 2^53). For printing and for comparing with a tolerance.
    pub fn number(self, ty: Type) -> f64 {
        if ty.is_float() {
            self.f()
        } else {
            self.i() as f64
        }
    }
    /// The value `x` as type `ty` holds it: a float rounded to its type (see
    /// [`crate::round_to`]), an integer truncated toward zero (saturating at the 64-bit
    /// range, NaN as 0) and wrapped to its width. What a caller writing numbers
    /// (random inputs, data read as f64) into an interpreter value uses.
    pub fn of_number(x: f64, ty: Type) -> Word {
        if ty.is_float() {
            crate::round_to(Word::float(x), ty)
        } else {
            crate::round_to(Word::int(x as i64), ty)
        }
    }
}

/// The width of integer type `t` (`index`: 64).
pub(crate) fn width(t: Type) -> u32 {
    if t.is_index() {
        64
    } else {
        t.int_width().unwrap_or(64)
    }
}

impl std::fmt::Debug for Word {
    /// Both readings, since the type is not in the word: `int/float`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{:?}", self.i(), self.f())
    }
}
