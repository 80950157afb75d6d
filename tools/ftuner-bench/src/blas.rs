//! The BLAS side of each comparison: the same problems as ftuner's, run by the OpenBLAS
//! ftuner-bench links (Debian's) or by a library opened at run time ([`crate::libs`]).

use crate::libs;
use cblas_sys::{cblas_sgemm, CBLAS_LAYOUT, CBLAS_TRANSPOSE};
use ftuner_interp::Tensor;

/// f32 elements whose first lies on a page boundary (4096 bytes): every system reads the
/// same operands at the same alignment, the one a large allocation of ftuner's own gets.
pub(crate) struct Aligned {
    v: Vec<f32>,
    off: usize,
    len: usize,
}

impl Aligned {
    pub(crate) fn new(values: impl ExactSizeIterator<Item = f32>) -> Aligned {
        let len = values.len();
        let mut v = vec![0f32; len + 1024];
        // The heap buffer never moves: `v` is not grown after this.
        let off = v.as_ptr().align_offset(4096).min(1024);
        for (d, x) in v[off..].iter_mut().zip(values) {
            *d = x;
        }
        Aligned { v, off, len }
    }
}

impl std::ops::Deref for Aligned {
    type Target = [f32];
    fn deref(&self) -> &[f32] {
        &self.v[self.off..self.off + self.len]
    }
}

impl std::ops::DerefMut for Aligned {
    fn deref_mut(&mut self) -> &mut [f32] {
        &mut self.v[self.off..self.off + self.len]
    }
}

fn f32s(t: &Tensor) -> Aligned {
    Aligned::new(t.data.iter().map(|x| x.f() as f32))
}

/// OpenBLAS on the same problem: C = A(MxK) * B, B as KxN (NN) or NxK (NT), `batch`
/// independent problems laid out back to back.
pub(crate) struct Blas {
    pub(crate) a: Aligned,
    pub(crate) b: Aligned,
    pub(crate) c: Aligned,
    pub(crate) m: usize,
    pub(crate) n: usize,
    pub(crate) k: usize,
    pub(crate) batch: usize,
    pub(crate) nt: bool,
}

impl Blas {
    /// `batch` problems of (m, n, k); B is KxN (NN) or NxK (NT).
    pub(crate) fn new(
        a: &Tensor,
        b: &Tensor,
        (m, n, k): (usize, usize, usize),
        batch: usize,
        nt: bool,
    ) -> Blas {
        Blas {
            a: f32s(a),
            b: f32s(b),
            c: Aligned::new(std::iter::repeat_n(0.0, batch * m * n)),
            m,
            n,
            k,
            batch,
            nt,
        }
    }
    pub(crate) fn flops(&self) -> f64 {
        2.0 * (self.batch * self.m * self.n * self.k) as f64
    }
    /// All `batch` problems; with `threads` > 1 and several problems, the problems are
    /// spread over the threads (ftuner's pool, each sgemm single-threaded — see
    /// [`use_threads`] — how a batched GEMM is best run on a BLAS without a batched
    /// interface), else one call after the other with OpenBLAS's own threads.
    pub(crate) fn run(&mut self, threads: usize) {
        self.run_with(threads, linked_sgemm);
    }
    /// [`Blas::run`] with another library's `cblas_sgemm` ([`libs`]).
    pub(crate) fn run_with(&mut self, threads: usize, f: libs::SgemmFn) {
        let c = self.c.as_mut_ptr();
        if threads > 1 && self.batch > 1 {
            // SAFETY: `blas_range` on this `Blas`; chunks are disjoint batches, each
            // writing only its own part of `c`.
            let job = (&*self, c, f);
            unsafe {
                ftuner_codegen::parallel::ftuner_rt_parallel_for(
                    blas_range,
                    &job as *const (&Blas, *mut f32, libs::SgemmFn) as *mut std::ffi::c_void,
                    self.batch as i64,
                )
            };
        } else {
            for i in 0..self.batch {
                self.one(i, c, f);
            }
        }
    }
    /// Problem `i`, writing its part of `c` (this `Blas`'s result buffer).
    fn one(&self, i: usize, c: *mut f32, f: libs::SgemmFn) {
        let (m, n, k) = (self.m as i32, self.n as i32, self.k as i32);
        let (a, b) = (
            &self.a[i * self.m * self.k..],
            &self.b[i * self.k * self.n..],
        );
        // Problems write disjoint ranges of `c` (and may run on several threads).
        // SAFETY: i < batch, so the offset stays inside the buffer.
        let c = unsafe { c.add(i * self.m * self.n) };
        // SAFETY: the slices hold at least the m*k, k*n and m*n elements cblas reads
        // and writes, with the leading dimensions given.
        unsafe {
            f(
                libs::ROW_MAJOR,
                libs::NO_TRANS,
                if self.nt { libs::TRANS } else { libs::NO_TRANS },
                m,
                n,
                k,
                1.0,
                a.as_ptr(),
                k,
                b.as_ptr(),
                if self.nt { k } else { n },
                0.0,
                c,
                n,
            );
        }
    }
}

/// The OpenBLAS ftuner-bench links (Debian's), as a [`libs::SgemmFn`].
unsafe extern "C" fn linked_sgemm(
    _layout: std::ffi::c_int,
    transa: std::ffi::c_int,
    transb: std::ffi::c_int,
    m: std::ffi::c_int,
    n: std::ffi::c_int,
    k: std::ffi::c_int,
    alpha: f32,
    a: *const f32,
    lda: std::ffi::c_int,
    b: *const f32,
    ldb: std::ffi::c_int,
    beta: f32,
    c: *mut f32,
    ldc: std::ffi::c_int,
) {
    let t = |x| {
        if x == libs::TRANS {
            CBLAS_TRANSPOSE::CblasTrans
        } else {
            CBLAS_TRANSPOSE::CblasNoTrans
        }
    };
    // SAFETY: the caller's contract is cblas_sgemm's (row major).
    unsafe {
        cblas_sgemm(
            CBLAS_LAYOUT::CblasRowMajor,
            t(transa),
            t(transb),
            m,
            n,
            k,
            alpha,
            a,
            lda,
            b,
            ldb,
            beta,
            c,
            ldc,
        )
    }
}

/// Problems `lo .. hi` of the `Blas` at `ctx`.
unsafe extern "C" fn blas_range(ctx: *mut std::ffi::c_void, lo: i64, hi: i64) {
    // SAFETY: `Blas::run` passes itself and its result buffer; the problems touch
    // disjoint parts of the buffer.
    let (b, c, f) = unsafe { *(ctx as *const (&Blas, *mut f32, libs::SgemmFn)) };
    for i in lo..hi {
        b.one(i as usize, c, f);
    }
}
