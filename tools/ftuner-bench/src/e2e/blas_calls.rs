//! The OpenBLAS variant's callees: `convert-linalg-to-library-calls` turns every f32
//! matmul and batch_matmul into a call of `ftuner_lib_matmul_f32` or
//! `ftuner_lib_batch_matmul_f32` with MLIR's expanded memref descriptors; these run them
//! with `cblas_sgemm` (one thread).

extern "C" {
    pub(crate) fn openblas_set_num_threads(n: i32);
}

/// One f32 matrix as the compiled code passes it: base pointer (aligned + offset), sizes,
/// strides.
#[derive(Clone, Copy)]
struct View {
    p: *mut f32,
    rows: i64,
    cols: i64,
    rs: i64,
    cs: i64,
}

impl View {
    /// cblas operand: (pointer, transpose, leading dim) when one stride is 1.
    fn operand(&self) -> Option<(*mut f32, cblas_sys::CBLAS_TRANSPOSE, i32)> {
        if self.cs == 1 && self.rs >= self.cols.max(1) {
            Some((
                self.p,
                cblas_sys::CBLAS_TRANSPOSE::CblasNoTrans,
                self.rs as i32,
            ))
        } else if self.rs == 1 && self.cs >= self.rows.max(1) {
            Some((
                self.p,
                cblas_sys::CBLAS_TRANSPOSE::CblasTrans,
                self.cs as i32,
            ))
        } else {
            None
        }
    }
    /// A dense row-major copy.
    fn dense(&self) -> Vec<f32> {
        let mut v = Vec::with_capacity((self.rows * self.cols) as usize);
        for i in 0..self.rows {
            for j in 0..self.cols {
                // SAFETY: inside the view the compiled code handed over.
                v.push(unsafe { *self.p.offset((i * self.rs + j * self.cs) as isize) });
            }
        }
        v
    }
}

/// `C += A * B` with OpenBLAS (any strides; copies only a view no BLAS layout fits).
fn gemm(a: View, b: View, c: View) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    if m == 0 || n == 0 {
        return;
    }
    let (a_copy, b_copy);
    let (pa, ta, lda) = match a.operand() {
        Some(x) => x,
        None => {
            a_copy = a.dense();
            (
                a_copy.as_ptr() as *mut f32,
                cblas_sys::CBLAS_TRANSPOSE::CblasNoTrans,
                k.max(1) as i32,
            )
        }
    };
    let (pb, tb, ldb) = match b.operand() {
        Some(x) => x,
        None => {
            b_copy = b.dense();
            (
                b_copy.as_ptr() as *mut f32,
                cblas_sys::CBLAS_TRANSPOSE::CblasNoTrans,
                n.max(1) as i32,
            )
        }
    };
    let direct = c.cs == 1 && c.rs >= n;
    let mut c_copy = if direct { vec![] } else { c.dense() };
    let (pc, ldc) = if direct {
        (c.p, c.rs as i32)
    } else {
        (c_copy.as_mut_ptr(), n as i32)
    };
    // SAFETY: pointers and leading dimensions describe m x k, k x n and m x n matrices
    // inside the buffers the compiled code passed (or the dense copies above).
    unsafe {
        cblas_sys::cblas_sgemm(
            cblas_sys::CBLAS_LAYOUT::CblasRowMajor,
            ta,
            tb,
            m as i32,
            n as i32,
            k as i32,
            1.0,
            pa,
            lda,
            pb,
            ldb,
            1.0,
            pc,
            ldc,
        );
    }
    if !direct {
        for i in 0..m {
            for j in 0..n {
                // SAFETY: inside C's view.
                unsafe {
                    *c.p.offset((i * c.rs + j * c.cs) as isize) = c_copy[(i * n + j) as usize]
                };
            }
        }
    }
}

/// `memref<?x?xf32, strided<[?, ?], offset: ?>>` x 3, as MLIR's expanded descriptors.
#[allow(clippy::too_many_arguments)]
pub(crate) extern "C" fn lib_matmul_f32(
    _a0: *mut f32,
    a: *mut f32,
    ao: i64,
    am: i64,
    ak: i64,
    ars: i64,
    acs: i64,
    _b0: *mut f32,
    b: *mut f32,
    bo: i64,
    bk: i64,
    bn: i64,
    brs: i64,
    bcs: i64,
    _c0: *mut f32,
    c: *mut f32,
    co: i64,
    cm: i64,
    cn: i64,
    crs: i64,
    ccs: i64,
) {
    let _ = (bk, cm, cn);
    // SAFETY: offsets inside the buffers, from the descriptors.
    let (a, b, c) = unsafe {
        (
            a.offset(ao as isize),
            b.offset(bo as isize),
            c.offset(co as isize),
        )
    };
    gemm(
        View {
            p: a,
            rows: am,
            cols: ak,
            rs: ars,
            cs: acs,
        },
        View {
            p: b,
            rows: bk,
            cols: bn,
            rs: brs,
            cs: bcs,
        },
        View {
            p: c,
            rows: cm,
            cols: cn,
            rs: crs,
            cs: ccs,
        },
    );
}

/// The batched form: rank-3 descriptors, one gemm per batch.
#[allow(clippy::too_many_arguments)]
pub(crate) extern "C" fn lib_batch_matmul_f32(
    _a0: *mut f32,
    a: *mut f32,
    ao: i64,
    ab: i64,
    am: i64,
    ak: i64,
    abs: i64,
    ars: i64,
    acs: i64,
    _b0: *mut f32,
    b: *mut f32,
    bo: i64,
    bb: i64,
    bk: i64,
    bn: i64,
    bbs: i64,
    brs: i64,
    bcs: i64,
    _c0: *mut f32,
    c: *mut f32,
    co: i64,
    cb: i64,
    cm: i64,
    cn: i64,
    cbs: i64,
    crs: i64,
    ccs: i64,
) {
    let _ = (bb, cb);
    for i in 0..ab {
        // SAFETY: batch i of each view, inside the buffers.
        let (pa, pb, pc) = unsafe {
            (
                a.offset((ao + i * abs) as isize),
                b.offset((bo + i * bbs) as isize),
                c.offset((co + i * cbs) as isize),
            )
        };
        gemm(
            View {
                p: pa,
                rows: am,
                cols: ak,
                rs: ars,
                cs: acs,
            },
            View {
                p: pb,
                rows: bk,
                cols: bn,
                rs: brs,
                cs: bcs,
            },
            View {
                p: pc,
                rows: cm,
                cols: cn,
                rs: crs,
                cs: ccs,
            },
        );
    }
}
