//! cuBLAS, loaded at run time (nothing links it; a machine without it runs the benchmark
//! with ftuner's column alone): `cublasSgemm_v2` and `cublasSgemmStridedBatched` on the
//! same device buffers as ftuner's kernels, in default math mode (plain FP32, no TF32).

use libloading::{Library, Symbol};
use std::ffi::{c_int, c_void};

type Status = c_int;
type Handle = *mut c_void;
const OP_N: c_int = 0;
const OP_T: c_int = 1;

type Sgemm = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const f32,
    *const f32,
    c_int,
    *const f32,
    c_int,
    *const f32,
    *mut f32,
    c_int,
) -> Status;

type SgemmBatched = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const f32,
    *const f32,
    c_int,
    i64,
    *const f32,
    c_int,
    i64,
    *const f32,
    *mut f32,
    c_int,
    i64,
    c_int,
) -> Status;

pub struct Cublas {
    lib: Library,
    handle: Handle,
    /// Which file was loaded, and cuBLAS's version number.
    pub path: String,
    pub version: i32,
}

fn i(x: usize) -> Result<c_int, String> {
    c_int::try_from(x).map_err(|_| format!("{x} does not fit cuBLAS's int"))
}

impl Cublas {
    /// `$FTUNER_CUBLAS`, else the first of `libcublas.so.13/.12/.11/.so` the loader finds;
    /// `Ok(None)` where there is none. Needs a current CUDA context (cuBLAS uses it).
    pub fn open() -> Result<Option<Cublas>, String> {
        let mut names: Vec<String> = std::env::var("FTUNER_CUBLAS").into_iter().collect();
        names.extend(
            [
                "libcublas.so.13",
                "libcublas.so.12",
                "libcublas.so.11",
                "libcublas.so",
            ]
            .map(String::from),
        );
        let Some((lib, path)) = names
            .into_iter()
            .find_map(|n| unsafe { Library::new(&n) }.ok().map(|l| (l, n)))
        else {
            return Ok(None);
        };
        let mut handle = std::ptr::null_mut();
        let create: Symbol<unsafe extern "C" fn(*mut Handle) -> Status> =
            unsafe { lib.get(b"cublasCreate_v2\0") }.map_err(|e| e.to_string())?;
        status(unsafe { create(&mut handle) }, "cublasCreate")?;
        let mut version = 0;
        let get: Symbol<unsafe extern "C" fn(Handle, *mut c_int) -> Status> =
            unsafe { lib.get(b"cublasGetVersion_v2\0") }.map_err(|e| e.to_string())?;
        status(unsafe { get(handle, &mut version) }, "cublasGetVersion")?;
        let mode: Symbol<unsafe extern "C" fn(Handle, c_int) -> Status> =
            unsafe { lib.get(b"cublasSetMathMode\0") }.map_err(|e| e.to_string())?;
        status(unsafe { mode(handle, 0) }, "cublasSetMathMode(DEFAULT)")?;
        Ok(Some(Cublas {
            lib,
            handle,
            path,
            version,
        }))
    }

    /// Row-major `C[m,n] = A[m,k] · B[k,n]` (queued on the default stream): column-major
    /// `Cᵀ = Bᵀ · Aᵀ`, where each row-major matrix is its column-major transpose.
    pub fn gemm(&self, m: usize, n: usize, k: usize, a: u64, b: u64, c: u64) -> Result<(), String> {
        let f: Symbol<Sgemm> =
            unsafe { self.lib.get(b"cublasSgemm_v2\0") }.map_err(|e| e.to_string())?;
        let (one, zero) = (1f32, 0f32);
        let s = unsafe {
            f(
                self.handle,
                OP_N,
                OP_N,
                i(n)?,
                i(m)?,
                i(k)?,
                &one,
                b as *const f32,
                i(n)?,
                a as *const f32,
                i(k)?,
                &zero,
                c as *mut f32,
                i(n)?,
            )
        };
        status(s, "cublasSgemm")
    }

    /// Row-major `S[b] = Q[b] · K[b]ᵀ` for `batch` pairs of `t x d` matrices (`S` is
    /// `t x t`): column-major `S[b]ᵀ = K[b] · Q[b]ᵀ`, with `K[b]` read transposed.
    pub fn gemm_nt_batched(
        &self,
        batch: usize,
        t: usize,
        d: usize,
        q: u64,
        kmat: u64,
        s: u64,
    ) -> Result<(), String> {
        let f: Symbol<SgemmBatched> =
            unsafe { self.lib.get(b"cublasSgemmStridedBatched\0") }.map_err(|e| e.to_string())?;
        let (one, zero) = (1f32, 0f32);
        let st = unsafe {
            f(
                self.handle,
                OP_T,
                OP_N,
                i(t)?,
                i(t)?,
                i(d)?,
                &one,
                kmat as *const f32,
                i(d)?,
                (t * d) as i64,
                q as *const f32,
                i(d)?,
                (t * d) as i64,
                &zero,
                s as *mut f32,
                i(t)?,
                (t * t) as i64,
                i(batch)?,
            )
        };
        status(st, "cublasSgemmStridedBatched")
    }
}

impl Drop for Cublas {
    fn drop(&mut self) {
        let f: Result<Symbol<unsafe extern "C" fn(Handle) -> Status>, _> =
            unsafe { self.lib.get(b"cublasDestroy_v2\0") };
        if let Ok(f) = f {
            unsafe { f(self.handle) };
        }
    }
}

fn status(s: Status, what: &str) -> Result<(), String> {
    match s {
        0 => Ok(()),
        _ => Err(format!("{what} failed: cuBLAS status {s}")),
    }
}
