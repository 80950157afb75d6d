//! [`Buffer`]: memory a compiled function returned, handed to torch and numpy through
//! DLPack without a copy (the legacy `dltensor` capsule, which both accept).

use ftuner_ir::{FloatKind, Type, TypeKind};
use ftuner_runtime::RawOutput;
use pyo3::exceptions::PyBufferError;
use pyo3::prelude::*;
use std::ffi::{c_void, CStr};
use std::sync::Arc;

/// Who frees a buffer's memory.
pub enum Mem {
    /// An allocation of compiled code (`ftuner_runtime::free_output`).
    Compiled(*mut c_void),
    /// A copy made here.
    Owned(Vec<u64>),
    /// Someone else's (a weight the program returned as it is).
    Borrowed,
}

// SAFETY: the memory is only freed (once, on drop); reads through views are the
// consumers' business, as for any tensor.
unsafe impl Send for Mem {}
unsafe impl Sync for Mem {}

impl Mem {
    /// Take over the memory of an output per its owner.
    pub fn adopt(o: &RawOutput) -> Mem {
        match o {
            RawOutput::Buffer {
                alloc,
                owner: ftuner_runtime::Owner::Fresh,
                ..
            } => Mem::Compiled(*alloc),
            _ => Mem::Borrowed,
        }
    }
}

impl Drop for Mem {
    fn drop(&mut self) {
        if let Mem::Compiled(p) = self {
            // SAFETY: a fresh allocation of compiled code, freed only here.
            unsafe { ftuner_runtime::free_output(*p) }
        }
    }
}

/// A tensor's memory returned by a compiled function.
#[pyclass(frozen, module = "ftuner._ftuner")]
pub struct Buffer {
    mem: Arc<Mem>,
    data: usize,
    shape: Vec<i64>,
    strides: Vec<i64>,
    elem: Type,
}

fn dl_dtype(t: Type) -> Option<(u8, u8)> {
    Some(match t.kind() {
        TypeKind::Float(FloatKind::F32) => (2, 32),
        TypeKind::Float(FloatKind::F64) => (2, 64),
        TypeKind::Float(FloatKind::F16) => (2, 16),
        TypeKind::Float(FloatKind::BF16) => (4, 16),
        TypeKind::Integer { width: 1, .. } => (6, 8),
        TypeKind::Integer { width, .. } if [8, 16, 32, 64].contains(width) => (0, *width as u8),
        TypeKind::Index => (0, 64),
        _ => return None,
    })
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device_type: i32,
    device_id: i32,
    ndim: i32,
    code: u8,
    bits: u8,
    lanes: u16,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// What a DLManagedTensor keeps alive.
struct Keep {
    _mem: Arc<Mem>,
    shape: Vec<i64>,
    strides: Vec<i64>,
}

unsafe extern "C" fn dl_deleter(t: *mut DLManagedTensor) {
    if t.is_null() {
        return;
    }
    // SAFETY: `t` and its context were made by `Buffer::__dlpack__` with Box::into_raw,
    // and a consumer calls the deleter once.
    unsafe {
        let t = Box::from_raw(t);
        drop(Box::from_raw(t.manager_ctx as *mut Keep));
    }
}

const DLTENSOR: &CStr = c"dltensor";

unsafe extern "C" fn capsule_destructor(cap: *mut pyo3::ffi::PyObject) {
    // SAFETY: `cap` is the capsule being destroyed. Still named "dltensor", nobody
    // consumed it and the tensor is ours to delete; renamed ("used_dltensor"), the
    // consumer owns it.
    unsafe {
        if pyo3::ffi::PyCapsule_IsValid(cap, DLTENSOR.as_ptr()) == 1 {
            let p = pyo3::ffi::PyCapsule_GetPointer(cap, DLTENSOR.as_ptr()) as *mut DLManagedTensor;
            dl_deleter(p);
        }
    }
}

impl Buffer {
    pub fn from_output(o: RawOutput, mem: fn(&RawOutput) -> Mem) -> Buffer {
        let m = mem(&o);
        match o {
            RawOutput::Buffer {
                data,
                shape,
                strides,
                elem,
                ..
            } => Buffer {
                mem: Arc::new(m),
                data: data as usize,
                shape: shape.iter().map(|d| *d as i64).collect(),
                strides,
                elem,
            },
            RawOutput::Scalar(_) => Buffer {
                mem: Arc::new(Mem::Borrowed),
                data: 0,
                shape: vec![],
                strides: vec![],
                elem: Type::f32(),
            },
        }
    }

    /// A contiguous copy of an output that is a view of memory we do not own.
    pub fn copied(o: &RawOutput) -> Result<Buffer, String> {
        let RawOutput::Buffer {
            data,
            shape,
            strides,
            elem,
            ..
        } = o
        else {
            return Err("not a buffer".into());
        };
        let eb = (elem.bit_width().unwrap_or(8).max(8) / 8) as usize;
        let n: usize = shape.iter().product();
        let bytes = ftuner_runtime::raw::buffer_bytes(shape, *elem).map_err(|e| e.0)?;
        let mut words = vec![0u64; bytes.div_ceil(8).max(1)];
        let dst = words.as_mut_ptr() as *mut u8;
        let mut point = vec![0usize; shape.len()];
        for k in 0..n {
            let off: i64 = point.iter().zip(strides).map(|(i, s)| *i as i64 * s).sum();
            // SAFETY: `off` addresses an element of the output's view (its shape and
            // strides as the compiled code wrote them); `k < n` elements fit in `words`.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    data.offset(off as isize * eb as isize),
                    dst.add(k * eb),
                    eb,
                )
            };
            for d in (0..shape.len()).rev() {
                point[d] += 1;
                if point[d] < shape[d] {
                    break;
                }
                point[d] = 0;
            }
        }
        let data = words.as_ptr() as usize;
        Ok(Buffer {
            mem: Arc::new(Mem::Owned(words)),
            data,
            shape: shape.iter().map(|d| *d as i64).collect(),
            strides: ftuner_interp_row_major(shape),
            elem: *elem,
        })
    }
}

fn ftuner_interp_row_major(shape: &[usize]) -> Vec<i64> {
    let mut s = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1] as i64;
    }
    s
}

#[pymethods]
impl Buffer {
    #[getter]
    fn shape(&self) -> Vec<i64> {
        self.shape.clone()
    }
    /// In elements.
    #[getter]
    fn strides(&self) -> Vec<i64> {
        self.strides.clone()
    }
    #[getter]
    fn dtype(&self) -> String {
        self.elem.to_string()
    }
    #[getter]
    fn data_ptr(&self) -> usize {
        self.data
    }
    /// Whether this buffer owns its memory (false: a view of a weight).
    #[getter]
    fn owned(&self) -> bool {
        !matches!(*self.mem, Mem::Borrowed)
    }
    fn __dlpack_device__(&self) -> (i32, i32) {
        (1, 0)
    }
    #[pyo3(signature = (*_args, **_kwargs))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        _args: &Bound<'_, pyo3::types::PyTuple>,
        _kwargs: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let (code, bits) = dl_dtype(self.elem)
            .ok_or_else(|| PyBufferError::new_err(format!("{} has no DLPack type", self.elem)))?;
        let mut keep = Box::new(Keep {
            _mem: self.mem.clone(),
            shape: self.shape.clone(),
            strides: self.strides.clone(),
        });
        let t = Box::new(DLManagedTensor {
            tensor: DLTensor {
                data: self.data as *mut c_void,
                device_type: 1,
                device_id: 0,
                ndim: self.shape.len() as i32,
                code,
                bits,
                lanes: 1,
                shape: keep.shape.as_mut_ptr(),
                strides: keep.strides.as_mut_ptr(),
                byte_offset: 0,
            },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(dl_deleter),
        });
        let t = Box::into_raw(t);
        // SAFETY: `t` was just allocated; the context outlives it until the deleter.
        unsafe { (*t).manager_ctx = Box::into_raw(keep) as *mut c_void };
        // SAFETY: a valid pointer, a static name and a destructor of the right type; on
        // failure the tensor is deleted here.
        let cap = unsafe {
            pyo3::ffi::PyCapsule_New(
                t as *mut c_void,
                DLTENSOR.as_ptr(),
                Some(capsule_destructor),
            )
        };
        if cap.is_null() {
            // SAFETY: not handed to anyone.
            unsafe { dl_deleter(t) };
            return Err(PyErr::fetch(py));
        }
        // SAFETY: a new reference just returned by PyCapsule_New.
        Ok(unsafe { Bound::from_owned_ptr(py, cap) }.unbind())
    }
}
