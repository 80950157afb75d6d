//! Run-time values.

use crate::word::Word;
use ftuner_ir::{FloatKind, Type};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// A dense row-major n-d array of `elem`s, each a [`Word`].
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub elem: Type,
    pub data: Vec<Word>,
}

/// The value of a float element no op wrote (`tensor.empty`, `memref.alloc`): a NaN whose
/// payload marks it (bits 50..32, which survive rounding to f32 and back), so results
/// that depend on undefined contents are known as such ([`is_undefined`]) — compiled
/// code reads whatever the memory held there. Arithmetic carries the payload of a NaN
/// operand on x86-64.
pub const UNDEFINED: f64 = f64::from_bits(0x7FFD_5A5A_0000_0000);

/// Whether `v` is [`UNDEFINED`] or computed from it (any sign).
pub fn is_undefined(v: f64) -> bool {
    v.to_bits() & 0x7FFF_FFFF_E000_0000 == UNDEFINED.to_bits()
}

/// What an element of type `elem` holds before anything writes it.
pub fn undefined(elem: Type) -> Word {
    if elem.is_float() {
        Word::float(UNDEFINED)
    } else {
        Word::ZERO
    }
}

/// The most elements one tensor or buffer of the interpreter may hold (8 GiB of f64): a
/// larger allocation is an error, not an abort of the process.
pub const MAX_ELEMENTS: usize = 1 << 30;

/// The sizes `dims` (run-time values) checked: none negative, the element count within
/// [`MAX_ELEMENTS`], and the product of the non-zero dims representable (strides).
pub fn checked_sizes(dims: &[i64]) -> Result<Vec<usize>, String> {
    if dims.iter().any(|d| *d < 0) {
        return Err(format!("negative size in {dims:?}"));
    }
    let span = dims
        .iter()
        .try_fold(1i64, |a, d| a.checked_mul((*d).max(1)));
    let count: i64 = if dims.contains(&0) {
        0
    } else {
        span.unwrap_or(i64::MAX)
    };
    if span.is_none() || count as u64 > MAX_ELEMENTS as u64 {
        return Err(format!(
            "a tensor of sizes {dims:?} is larger than the interpreter's budget of {MAX_ELEMENTS} elements"
        ));
    }
    Ok(dims.iter().map(|d| *d as usize).collect())
}

impl Tensor {
    pub fn new(shape: Vec<usize>, elem: Type, data: Vec<Word>) -> Tensor {
        Tensor { shape, elem, data }
    }
    /// A tensor of the numbers `data` as `elem` holds them ([`Word::of_number`]).
    pub fn from_f64(shape: Vec<usize>, elem: Type, data: Vec<f64>) -> Tensor {
        let data = data.into_iter().map(|x| Word::of_number(x, elem)).collect();
        Tensor { shape, elem, data }
    }
    /// A tensor of the integers `data` wrapped to `elem`'s width.
    pub fn from_i64(shape: Vec<usize>, elem: Type, data: Vec<i64>) -> Tensor {
        let data = data
            .into_iter()
            .map(|v| round_to(Word::int(v), elem))
            .collect();
        Tensor { shape, elem, data }
    }
    pub fn zeros(shape: Vec<usize>, elem: Type) -> Tensor {
        let n = shape.iter().product();
        Tensor {
            shape,
            elem,
            data: vec![Word::ZERO; n],
        }
    }
    /// The elements as numbers ([`Word::number`]: integers past 2^53 rounded).
    pub fn to_f64(&self) -> Vec<f64> {
        self.data.iter().map(|w| w.number(self.elem)).collect()
    }
    /// The elements of an integer tensor, exactly.
    pub fn to_i64(&self) -> Vec<i64> {
        self.data.iter().map(|w| w.i()).collect()
    }
    pub fn strides(&self) -> Vec<usize> {
        let mut s = vec![1; self.shape.len()];
        for i in (0..self.shape.len().saturating_sub(1)).rev() {
            s[i] = s[i + 1] * self.shape[i + 1];
        }
        s
    }
    pub fn offset(&self, idx: &[i64]) -> Option<usize> {
        if idx.len() != self.shape.len() {
            return None;
        }
        let mut off = 0usize;
        let st = self.strides();
        for ((i, d), s) in idx.iter().zip(&self.shape).zip(st) {
            if *i < 0 || *i as usize >= *d {
                return None;
            }
            off += *i as usize * s;
        }
        Some(off)
    }
}

/// The storage behind one allocation; `freed` is set by `memref.dealloc`, after which any
/// access through a view is an error (use after free), as is a second dealloc.
#[derive(Debug)]
pub struct Store {
    pub data: RefCell<Vec<Word>>,
    pub freed: Cell<bool>,
}

/// A strided view of a [`Store`]: MLIR's memref descriptor (offset, sizes, strides).
#[derive(Clone, Debug)]
pub struct MemRef {
    pub store: Rc<Store>,
    pub offset: i64,
    pub sizes: Vec<usize>,
    pub strides: Vec<i64>,
    pub elem: Type,
}

/// Row-major strides of `sizes`.
pub fn row_major(sizes: &[usize]) -> Vec<i64> {
    let mut s = vec![1i64; sizes.len()];
    for i in (0..sizes.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * sizes[i + 1] as i64;
    }
    s
}

impl MemRef {
    /// A fresh allocation. Floats start as [`UNDEFINED`] (uninitialised memory that a
    /// test reads shows up), integers as 0.
    pub fn alloc(sizes: Vec<usize>, elem: Type) -> MemRef {
        let n = sizes.iter().product();
        MemRef::over(sizes, elem, vec![undefined(elem); n])
    }
    fn over(sizes: Vec<usize>, elem: Type, data: Vec<Word>) -> MemRef {
        MemRef {
            store: Rc::new(Store {
                data: RefCell::new(data),
                freed: Cell::new(false),
            }),
            offset: 0,
            strides: row_major(&sizes),
            sizes,
            elem,
        }
    }
    /// A new buffer holding a copy of `t`.
    pub fn from_tensor(t: &Tensor) -> MemRef {
        MemRef::over(t.shape.clone(), t.elem, t.data.clone())
    }
    pub fn alive(&self) -> Result<(), String> {
        if self.store.freed.get() {
            Err("accesses a buffer after memref.dealloc".into())
        } else {
            Ok(())
        }
    }
    /// The storage index of `idx`, or None when out of bounds.
    pub fn index_of(&self, idx: &[i64]) -> Option<usize> {
        if idx.len() != self.sizes.len() {
            return None;
        }
        let mut off = self.offset;
        for ((i, d), s) in idx.iter().zip(&self.sizes).zip(&self.strides) {
            if *i < 0 || *i as usize >= *d {
                return None;
            }
            off += i * s;
        }
        usize::try_from(off).ok()
    }
    /// Storage indices of every element in row-major order.
    pub fn positions(&self) -> Vec<usize> {
        let n: usize = self.sizes.iter().product();
        let mut out = Vec::with_capacity(n);
        let mut point = vec![0i64; self.sizes.len()];
        for _ in 0..n {
            let off: i64 = self.offset
                + point
                    .iter()
                    .zip(&self.strides)
                    .map(|(p, s)| p * s)
                    .sum::<i64>();
            out.push(off.max(0) as usize);
            for d in (0..point.len()).rev() {
                point[d] += 1;
                if (point[d] as usize) < self.sizes[d] {
                    break;
                }
                point[d] = 0;
            }
        }
        out
    }
    /// The elements as a tensor (a copy).
    pub fn to_tensor(&self) -> Result<Tensor, String> {
        self.alive()?;
        let data = self.store.data.borrow();
        let vals = self
            .positions()
            .into_iter()
            .map(|p| data.get(p).copied().ok_or("view exceeds its buffer"))
            .collect::<Result<Vec<Word>, _>>()?;
        Ok(Tensor::new(self.sizes.clone(), self.elem, vals))
    }
    /// Overwrite the elements with `t`'s (same number of elements, row-major order).
    pub fn write(&self, t: &Tensor) -> Result<(), String> {
        self.alive()?;
        let pos = self.positions();
        if pos.len() != t.data.len() {
            return Err(format!(
                "cannot write {} elements into a view of {}",
                t.data.len(),
                pos.len()
            ));
        }
        let mut data = self.store.data.borrow_mut();
        for (p, v) in pos.into_iter().zip(&t.data) {
            *data.get_mut(p).ok_or("view exceeds its buffer")? = round_to(*v, self.elem);
        }
        Ok(())
    }
}

/// A value: a tensor, a buffer view or a scalar (its type is the IR value's).
#[derive(Clone, Debug)]
pub enum RtVal {
    Tensor(Rc<Tensor>),
    MemRef(MemRef),
    Scalar(Word),
}

impl RtVal {
    pub fn tensor(&self) -> Option<&Tensor> {
        match self {
            RtVal::Tensor(t) => Some(t),
            _ => None,
        }
    }
    pub fn memref(&self) -> Option<&MemRef> {
        match self {
            RtVal::MemRef(m) => Some(m),
            _ => None,
        }
    }
    /// A tensor, or a buffer's current contents as one.
    pub fn to_tensor(&self) -> Option<Result<Tensor, String>> {
        match self {
            RtVal::Tensor(t) => Some(Ok((**t).clone())),
            RtVal::MemRef(m) => Some(m.to_tensor()),
            RtVal::Scalar(_) => None,
        }
    }
    pub fn scalar(&self) -> Option<Word> {
        match self {
            RtVal::Scalar(s) => Some(*s),
            _ => None,
        }
    }
}

thread_local! {
    static WIDE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run `f` with the floats of narrower types (f32, f16, bf16) computed in f64, never
/// rounded to their type: the wide reference beside which `--check` measures the error
/// of the single-precision one. Integers are unchanged. For this thread, until `f`
/// returns.
pub fn wide<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            WIDE.with(|w| w.set(self.0));
        }
    }
    let _restore = Restore(WIDE.with(|w| w.replace(true)));
    f()
}

/// Whether this thread computes in [`wide`] mode.
pub(crate) fn is_wide() -> bool {
    WIDE.with(|w| w.get())
}

/// Round a value to the precision of `ty` (floats; not in [`wide`] mode) or wrap it to
/// its width (integers: sign-extended, an `i1` to 0 or 1).
pub fn round_to(v: Word, ty: Type) -> Word {
    let f = |x: f64| Word::float(x);
    match ty.float_kind() {
        Some(_) if is_wide() => v,
        Some(FloatKind::F32) => f(v.f() as f32 as f64),
        Some(k @ (FloatKind::F16 | FloatKind::BF16)) => f(ftuner_ir::float::bits_to_f64(
            ftuner_ir::float::f64_to_bits(v.f(), ty),
            k,
        )),
        Some(_) => v,
        None => Word::wrapped(v.i() as i128, ty),
    }
}
