//! Calls without copies: the caller's buffers go to the compiled code as they are, and
//! the buffers the compiled code returns come back as they are, for the caller to own
//! (what the Python package and the C API need; [`crate::Executable::call`] copies
//! through the interpreter's `f64` tensors instead).
//!
//! An argument is a pointer to row-major contiguous elements of the signature's element
//! type with the shape given; it is checked against the signature (rank, element type,
//! every static dim) and against the element count of the shape (no dim negative, the
//! byte size representable) before any code runs. A result is the memref descriptor the
//! compiled code wrote, classified by who owns its memory ([`Owner`]).

use crate::{e, elem_bytes, Executable, RuntimeError};
use ftuner_ir::{Type, TypeKind, DYNAMIC};
use std::ffi::c_void;

/// One argument of [`Executable::call_raw`].
#[derive(Clone, Debug)]
pub enum RawArg {
    /// Row-major contiguous elements at `data` (element-aligned), `shape` dims.
    Buffer { data: *mut u8, shape: Vec<usize> },
    /// A scalar of the parameter's type, as a number ([`ftuner_interp::Word::of_number`]:
    /// integers exactly up to 2^53).
    Scalar(f64),
}

// SAFETY: a RawArg is plain data (an address and a shape); who may touch the memory it
// names is the caller's contract with `call_raw`.
unsafe impl Send for RawArg {}
// SAFETY: as for Send: shared references to a RawArg only read its fields.
unsafe impl Sync for RawArg {}

/// Who owns the memory of a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// A fresh allocation of the compiled code: the caller frees it with
    /// [`free_output`] (exactly once) when the last view of it goes.
    Fresh,
    /// A view into argument `i`'s buffer (the function returned its argument, or a
    /// reshape of it): valid as long as that buffer.
    Argument(usize),
    /// A constant of the module (a global): valid as long as the executable; read-only.
    Constant,
}

/// A result of [`Executable::call_raw`].
#[derive(Debug)]
pub enum RawOutput {
    Buffer {
        /// What [`free_output`] takes (for [`Owner::Fresh`]).
        alloc: *mut c_void,
        /// The first element.
        data: *mut u8,
        shape: Vec<usize>,
        /// In elements.
        strides: Vec<i64>,
        elem: Type,
        owner: Owner,
    },
    /// A scalar result as a number ([`ftuner_interp::Word::number`]).
    Scalar(f64),
}

// SAFETY: an output is plain data; the memory it names belongs to whoever `owner` says.
unsafe impl Send for RawOutput {}

impl RawOutput {
    /// Bytes from the first element to one past the last (0 for an empty buffer).
    pub fn span_bytes(&self) -> usize {
        match self {
            RawOutput::Buffer {
                shape,
                strides,
                elem,
                ..
            } => {
                if shape.contains(&0) {
                    return 0;
                }
                let last: i64 = shape
                    .iter()
                    .zip(strides)
                    .map(|(d, s)| (*d as i64 - 1) * s)
                    .sum();
                (last as usize + 1) * elem_bytes(*elem).unwrap_or(1)
            }
            RawOutput::Scalar(_) => 0,
        }
    }
}

/// Free the memory of an [`Owner::Fresh`] output.
///
/// # Safety
/// `alloc` must be the `alloc` of a `Fresh` output not yet freed, with no view of it left.
pub unsafe fn free_output(alloc: *mut c_void) {
    // SAFETY: the caller's contract; compiled code allocates through the counted allocator.
    unsafe { ftuner_codegen::memstats::counted_free(alloc) }
}

/// Bytes of `shape` elements of `elem`, checked for overflow. The product of the non-zero
/// dims must be representable too (an empty tensor of shape 0x2^40x2^40 has strides
/// and sizes of derived tensors no 64-bit index can hold): the compiled code computes
/// strides and allocation sizes from them.
pub fn buffer_bytes(shape: &[usize], elem: Type) -> Result<usize, RuntimeError> {
    let eb = elem_bytes(elem)?;
    let span = shape
        .iter()
        .try_fold(eb, |acc, d| acc.checked_mul((*d).max(1)))
        .filter(|b| *b <= isize::MAX as usize);
    match span {
        Some(_) if shape.contains(&0) => Ok(0),
        Some(b) => Ok(b),
        None => Err(e(format!("a buffer of shape {shape:?} is too large"))),
    }
}

impl Executable {
    /// Call `name` on the caller's buffers, without copying; results are returned as the
    /// compiled code wrote them.
    ///
    /// # Safety
    /// Every [`RawArg::Buffer`] must point at `shape`'s element count of valid, initialized
    /// elements of the signature's element type, not written by anyone else during the
    /// call (the compiled code reads them; it writes only memory it allocates). Buffers
    /// returned as [`Owner::Argument`] views stay valid only as long as those buffers.
    pub unsafe fn call_raw(
        &self,
        name: &str,
        args: &[RawArg],
    ) -> Result<Vec<RawOutput>, RuntimeError> {
        let (f, sig) = self.entry(name)?;
        if args.len() != sig.inputs.len() {
            return Err(e(format!(
                "@{name} takes {} arguments, got {}",
                sig.inputs.len(),
                args.len()
            )));
        }
        // Descriptors (allocated, aligned, offset, sizes, strides) and scalar slots, kept
        // alive across the call.
        let mut descs: Vec<Vec<i64>> = Vec::with_capacity(args.len());
        let mut bases: Vec<(usize, usize, usize)> = vec![];
        for (i, (a, t)) in args.iter().zip(&sig.inputs).enumerate() {
            descs.push(arg_slot(i, a, *t, &mut bases)?);
        }
        let by_ptr = !sig.results.is_empty()
            && (sig.results.len() > 1 || sig.results.iter().any(|t| t.is_memref()));
        let mut offsets = vec![];
        let mut size = 0usize;
        for t in &sig.results {
            let (sz, al) = crate::field_layout(*t)?;
            size = size.div_ceil(al) * al;
            offsets.push(size);
            size += sz;
        }
        // i64 words: 8-byte aligned, which every field needs at most.
        let mut result = vec![0i64; size.div_ceil(8).max(1)];
        let rptr = result.as_mut_ptr() as *mut c_void;
        let mut ptrs: Vec<*mut c_void> = Vec::with_capacity(args.len() + 1);
        if by_ptr {
            ptrs.push(rptr);
        }
        for d in &mut descs {
            ptrs.push(d.as_mut_ptr() as *mut c_void);
        }
        if !by_ptr && !sig.results.is_empty() {
            ptrs.push(rptr);
        }
        // Until the outputs are taken: blocks the program deallocates stay allocated.
        let _call = ftuner_codegen::memstats::enter_call();
        ftuner_codegen::status::clear();
        // SAFETY: the packed entry reads one pointer per parameter (descriptors and scalar
        // slots above, shapes checked against the signature; the buffers are the caller's
        // contract) and writes the results into `result`, which is large enough.
        unsafe { f(ptrs.as_mut_ptr()) };
        if let Some(m) = ftuner_codegen::status::take() {
            // The results are undefined: not read, not freed.
            return Err(e(format!("run-time check failed: {m}")));
        }
        let mut out = Vec::with_capacity(sig.results.len());
        for (t, off) in sig.results.iter().zip(offsets) {
            // SAFETY: the callee wrote a value of type `t` at `off`.
            out.push(unsafe { output_at((rptr as *const u8).add(off), *t, &bases)? });
        }
        Ok(out)
    }
}

/// The descriptor (or scalar slot) of argument `i`; records a buffer's byte range in
/// `bases` as (start, end, argument index).
fn arg_slot(
    i: usize,
    a: &RawArg,
    t: Type,
    bases: &mut Vec<(usize, usize, usize)>,
) -> Result<Vec<i64>, RuntimeError> {
    match a {
        RawArg::Buffer { data, shape } => {
            let Some(want) = t.shape().filter(|_| t.is_memref()) else {
                return Err(e(format!("argument #{i} must be a scalar of type {t}")));
            };
            if !matches!(t.kind(), TypeKind::MemRef { layout: None, .. }) {
                return Err(e(format!(
                    "argument #{i}: only identity-layout memref arguments can be passed, got {t}"
                )));
            }
            if want.len() != shape.len()
                || want
                    .iter()
                    .zip(shape)
                    .any(|(d, x)| *d != DYNAMIC && *d as usize != *x)
            {
                return Err(e(format!(
                    "argument #{i} has shape {shape:?}, which does not match {t}"
                )));
            }
            let elem = t.element_type();
            let bytes = buffer_bytes(shape, elem)?;
            if shape.iter().any(|d| *d > i64::MAX as usize) {
                return Err(e(format!("argument #{i}: a dim of {shape:?} is too large")));
            }
            let eb = elem_bytes(elem)?;
            if !(*data as usize).is_multiple_of(eb) || (data.is_null() && bytes > 0) {
                return Err(e(format!(
                    "argument #{i}: the data pointer is not aligned to its {eb}-byte elements"
                )));
            }
            let p = *data as i64;
            let mut d = vec![p, p, 0];
            d.extend(shape.iter().map(|x| *x as i64));
            d.extend(ftuner_interp::row_major(shape));
            bases.push((*data as usize, *data as usize + bytes.max(1), i));
            Ok(d)
        }
        RawArg::Scalar(x) => {
            if t.is_memref() {
                return Err(e(format!("argument #{i} must be a buffer of type {t}")));
            }
            let mut slot = vec![0i64];
            // SAFETY: 8 bytes hold any scalar.
            let w = ftuner_interp::Word::of_number(*x, t);
            unsafe { crate::put(slot.as_mut_ptr() as *mut u8, w, t) };
            Ok(slot)
        }
    }
}

/// Read the result of type `t` at `p`.
///
/// # Safety
/// `p` must point at a value of type `t` written by compiled code.
unsafe fn output_at(
    p: *const u8,
    t: Type,
    bases: &[(usize, usize, usize)],
) -> Result<RawOutput, RuntimeError> {
    unsafe {
        if !t.is_memref() {
            return Ok(RawOutput::Scalar(crate::get(p, t).number(t)));
        }
        let r = t.rank().unwrap_or(0);
        let d = std::slice::from_raw_parts(p as *const i64, 3 + 2 * r);
        let (alloc, aligned, offset) = (d[0] as usize, d[1] as usize, d[2]);
        crate::released_result(alloc)?;
        let elem = t.element_type();
        let eb = elem_bytes(elem)? as i64;
        let mut shape = Vec::with_capacity(r);
        for x in &d[3..3 + r] {
            shape.push(usize::try_from(*x).map_err(|_| {
                e(format!(
                    "the compiled code returned a negative dim {x} for {t}"
                ))
            })?);
        }
        let strides = d[3 + r..3 + 2 * r].to_vec();
        let data = (aligned as i64).wrapping_add(offset.wrapping_mul(eb)) as usize;
        let owner = if alloc == 0xdead_beef {
            Owner::Constant
        } else if let Some((_, _, i)) = bases
            .iter()
            .find(|(lo, hi, _)| (*lo..*hi).contains(&alloc) || (*lo..*hi).contains(&data))
        {
            Owner::Argument(*i)
        } else {
            Owner::Fresh
        };
        Ok(RawOutput::Buffer {
            alloc: alloc as *mut c_void,
            data: data as *mut u8,
            shape,
            strides,
            elem,
            owner,
        })
    }
}
