//! The BLAS libraries ftuner-bench measures beside the OpenBLAS it links (Debian's): Intel
//! MKL (`libmkl_rt`, PyPI's `mkl`) and a current OpenBLAS (PyPI's `scipy-openblas32`,
//! symbols prefixed `scipy_`), each opened at run time with libloading, so nothing links
//! them and a machine without them runs the rest (the column is skipped, said once).
//!
//! Where they are looked for: `FTUNER_MKL` / `FTUNER_OPENBLAS` (a library path), else
//! the Python environment the Makefile creates (`$FTUNER_VENV`, default
//! `~/.cache/ftuner/venv`; `pip install -r tools/bench/requirements.txt` puts both there).

use std::ffi::c_int;
use std::path::PathBuf;

/// `cblas_sgemm` with its enums as the C ints they are.
pub(crate) type SgemmFn = unsafe extern "C" fn(
    layout: c_int,
    transa: c_int,
    transb: c_int,
    m: c_int,
    n: c_int,
    k: c_int,
    alpha: f32,
    a: *const f32,
    lda: c_int,
    b: *const f32,
    ldb: c_int,
    beta: f32,
    c: *mut f32,
    ldc: c_int,
);
type SetThreadsFn = unsafe extern "C" fn(c_int);

/// CBLAS's row-major layout and transpose flags.
pub(crate) const ROW_MAJOR: c_int = 101;
pub(crate) const NO_TRANS: c_int = 111;
pub(crate) const TRANS: c_int = 112;

/// A BLAS opened at run time.
pub(crate) struct BlasLib {
    /// The column's name: `mkl`, `openblas-new`.
    pub name: &'static str,
    pub sgemm: SgemmFn,
    set_threads: SetThreadsFn,
    /// Where it was found (for the report).
    pub path: PathBuf,
    _lib: libloading::Library,
}

impl BlasLib {
    pub fn set_threads(&self, n: usize) {
        // SAFETY: the library's own thread-count setter, called between calls.
        unsafe { (self.set_threads)(n as c_int) }
    }
}

fn venv() -> PathBuf {
    std::env::var_os("FTUNER_VENV")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/ftuner/venv")))
        .unwrap_or_default()
}

/// The first existing path among `env`'s value and `candidates`.
fn find(env: &str, candidates: Vec<PathBuf>) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env) {
        return Some(PathBuf::from(p));
    }
    candidates.into_iter().find(|p| p.is_file())
}

/// `lib/python3.*/site-packages` folders of the environment.
fn site_packages(venv: &std::path::Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(venv.join("lib")) else {
        return vec![];
    };
    rd.flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
        .map(|e| e.path().join("site-packages"))
        .collect()
}

fn open(
    name: &'static str,
    path: PathBuf,
    sgemm: &[u8],
    threads: &[u8],
) -> Result<BlasLib, String> {
    // SAFETY: loading a BLAS runs its initializers, which set up its thread pool only.
    let lib = unsafe { libloading::Library::new(&path) }
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // SAFETY: the symbols have the C signatures of CBLAS and of the thread setters.
    let (sgemm, set_threads) = unsafe {
        let s: libloading::Symbol<SgemmFn> = lib
            .get(sgemm)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let t: libloading::Symbol<SetThreadsFn> = lib
            .get(threads)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        // MKL's cblas takes 64-bit integers under MKL_INTERFACE_LAYER=ILP64: ask for LP64
        // (MKL_INTERFACE_LP64 = 0), the C ints SgemmFn passes.
        if let Ok(layer) =
            lib.get::<unsafe extern "C" fn(c_int) -> c_int>(b"MKL_Set_Interface_Layer\0")
        {
            layer(0);
        }
        (*s, *t)
    };
    Ok(BlasLib {
        name,
        sgemm,
        set_threads,
        path,
        _lib: lib,
    })
}

/// A library to open: its column, where it was found, its sgemm and thread-setter
/// symbols, how to get it.
type Wanted = (
    &'static str,
    Option<PathBuf>,
    &'static [u8],
    &'static [u8],
    &'static str,
);

/// MKL and the current OpenBLAS, those found; one line on stderr for each one missing.
pub(crate) fn load() -> Vec<BlasLib> {
    let venv = venv();
    let sites = site_packages(&venv);
    let mkl = find(
        "FTUNER_MKL",
        ["libmkl_rt.so.3", "libmkl_rt.so.2", "libmkl_rt.so"]
            .iter()
            .map(|n| venv.join("lib").join(n))
            .collect(),
    );
    let openblas = find(
        "FTUNER_OPENBLAS",
        sites
            .iter()
            .map(|s| s.join("scipy_openblas32/lib/libscipy_openblas.so"))
            .collect(),
    );
    let mut out = vec![];
    let wanted: [Wanted; 2] = [
        (
            "mkl",
            mkl,
            b"cblas_sgemm\0",
            b"MKL_Set_Num_Threads\0",
            "pip install mkl, or FTUNER_MKL=<libmkl_rt.so>",
        ),
        (
            "openblas-new",
            openblas,
            b"scipy_cblas_sgemm\0",
            b"scipy_openblas_set_num_threads\0",
            "pip install scipy-openblas32, or FTUNER_OPENBLAS=<libscipy_openblas.so>",
        ),
    ];
    for (name, path, sgemm, threads, hint) in wanted {
        match path.map(|p| open(name, p, sgemm, threads)) {
            Some(Ok(l)) => out.push(l),
            Some(Err(e)) => eprintln!("ftuner-bench: {name} skipped: {e}"),
            None => eprintln!(
                "ftuner-bench: {name} not found in {} ({hint}): column skipped",
                venv.display()
            ),
        }
    }
    out
}
