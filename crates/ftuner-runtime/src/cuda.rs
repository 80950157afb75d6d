//! NVIDIA GPUs through the CUDA driver API, loaded at run time (`libcuda.so.1`, so nothing
//! links against CUDA and machines without it build and run everything else).
//!
//! * [`Cuda::open`]: `Ok(None)` when there is no driver or no device — GPU tests skip.
//! * [`ptx_for`]: the PTX of a module's `gpu.module` (kernels from `lower-ukernels-to-gpu`).
//! * [`CudaLauncher`]: an [`ftuner_interp::Launcher`] that runs each `gpu.launch_func` of
//!   a host function the reference interpreter executes on the device: arguments copied
//!   in (memrefs as MLIR descriptors: allocated and aligned pointer, offset, sizes,
//!   strides), the kernel launched, buffers copied back. The interpreter is the host
//!   program; the kernels are the compiled PTX.

use ftuner_dialects::ops;
use ftuner_interp::{Launcher, RtVal, Tensor};
use ftuner_ir::{Context, Ir, OpId};
use libloading::{Library, Symbol};
use std::ffi::{c_char, c_void, CStr, CString};

type CuResult = i32;
type CuDevice = i32;
type CuContext = *mut c_void;
type CuModule = *mut c_void;
type CuFunction = *mut c_void;
type CuDevicePtr = u64;

/// A CUDA context on device 0.
pub struct Cuda {
    lib: Library,
    ctx: CuContext,
    /// (major, minor) compute capability.
    pub capability: (i32, i32),
    pub name: String,
}

macro_rules! sym {
    ($lib:expr, $name:literal, $ty:ty) => {{
        let s: Result<Symbol<$ty>, _> = unsafe { $lib.get($name) };
        s.map_err(|e| {
            format!(
                "libcuda has no {}: {e}",
                String::from_utf8_lossy(&$name[..$name.len() - 1])
            )
        })?
    }};
}

impl Cuda {
    /// The driver and device 0, or `None` where there is no driver or no device.
    pub fn open() -> Result<Option<Cuda>, String> {
        let lib = match unsafe { Library::new("libcuda.so.1") } {
            Ok(l) => l,
            Err(_) => return Ok(None),
        };
        let init = sym!(lib, b"cuInit\0", unsafe extern "C" fn(u32) -> CuResult);
        if unsafe { init(0) } != 0 {
            return Ok(None);
        }
        let count = sym!(
            lib,
            b"cuDeviceGetCount\0",
            unsafe extern "C" fn(*mut i32) -> CuResult
        );
        let mut n = 0;
        if unsafe { count(&mut n) } != 0 || n == 0 {
            return Ok(None);
        }
        let get = sym!(
            lib,
            b"cuDeviceGet\0",
            unsafe extern "C" fn(*mut CuDevice, i32) -> CuResult
        );
        let mut dev = 0;
        check(&lib, unsafe { get(&mut dev, 0) }, "cuDeviceGet")?;
        let attr = sym!(
            lib,
            b"cuDeviceGetAttribute\0",
            unsafe extern "C" fn(*mut i32, i32, CuDevice) -> CuResult
        );
        // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR
        let (mut major, mut minor) = (0, 0);
        check(
            &lib,
            unsafe { attr(&mut major, 75, dev) },
            "cuDeviceGetAttribute",
        )?;
        check(
            &lib,
            unsafe { attr(&mut minor, 76, dev) },
            "cuDeviceGetAttribute",
        )?;
        let dname = sym!(
            lib,
            b"cuDeviceGetName\0",
            unsafe extern "C" fn(*mut c_char, i32, CuDevice) -> CuResult
        );
        let mut buf = [0 as c_char; 256];
        check(
            &lib,
            unsafe { dname(buf.as_mut_ptr(), 255, dev) },
            "cuDeviceGetName",
        )?;
        let name = unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        let create = sym!(
            lib,
            b"cuCtxCreate_v2\0",
            unsafe extern "C" fn(*mut CuContext, u32, CuDevice) -> CuResult
        );
        let mut ctx = std::ptr::null_mut();
        check(&lib, unsafe { create(&mut ctx, 0, dev) }, "cuCtxCreate")?;
        Ok(Some(Cuda {
            lib,
            ctx,
            capability: (major, minor),
            name,
        }))
    }

    /// `sm_XY` of the device.
    pub fn sm(&self) -> String {
        format!("sm_{}{}", self.capability.0, self.capability.1)
    }

    /// Load PTX (the driver compiles it for the device).
    pub fn load(&self, ptx: &str) -> Result<CudaModule<'_>, String> {
        let load = sym!(
            self.lib,
            b"cuModuleLoadData\0",
            unsafe extern "C" fn(*mut CuModule, *const c_void) -> CuResult
        );
        let text = CString::new(ptx).map_err(|_| "PTX with a NUL byte".to_string())?;
        let mut m = std::ptr::null_mut();
        check(
            &self.lib,
            unsafe { load(&mut m, text.as_ptr() as *const c_void) },
            "cuModuleLoadData",
        )?;
        Ok(CudaModule {
            cuda: self,
            module: m,
        })
    }

    fn alloc(&self, bytes: usize) -> Result<CuDevicePtr, String> {
        let f = sym!(
            self.lib,
            b"cuMemAlloc_v2\0",
            unsafe extern "C" fn(*mut CuDevicePtr, usize) -> CuResult
        );
        let mut p = 0;
        check(&self.lib, unsafe { f(&mut p, bytes.max(4)) }, "cuMemAlloc")?;
        Ok(p)
    }
    fn free(&self, p: CuDevicePtr) {
        let f: Result<Symbol<unsafe extern "C" fn(CuDevicePtr) -> CuResult>, _> =
            unsafe { self.lib.get(b"cuMemFree_v2\0") };
        if let Ok(f) = f {
            unsafe { f(p) };
        }
    }
    fn to_device(&self, p: CuDevicePtr, data: &[u8]) -> Result<(), String> {
        let f = sym!(
            self.lib,
            b"cuMemcpyHtoD_v2\0",
            unsafe extern "C" fn(CuDevicePtr, *const c_void, usize) -> CuResult
        );
        check(
            &self.lib,
            unsafe { f(p, data.as_ptr() as *const c_void, data.len()) },
            "cuMemcpyHtoD",
        )
    }
    fn to_host(&self, data: &mut [u8], p: CuDevicePtr) -> Result<(), String> {
        let f = sym!(
            self.lib,
            b"cuMemcpyDtoH_v2\0",
            unsafe extern "C" fn(*mut c_void, CuDevicePtr, usize) -> CuResult
        );
        check(
            &self.lib,
            unsafe { f(data.as_mut_ptr() as *mut c_void, p, data.len()) },
            "cuMemcpyDtoH",
        )
    }
}

impl Drop for Cuda {
    fn drop(&mut self) {
        let f: Result<Symbol<unsafe extern "C" fn(CuContext) -> CuResult>, _> =
            unsafe { self.lib.get(b"cuCtxDestroy_v2\0") };
        if let Ok(f) = f {
            unsafe { f(self.ctx) };
        }
    }
}

fn check(lib: &Library, r: CuResult, what: &str) -> Result<(), String> {
    if r == 0 {
        return Ok(());
    }
    let name: Result<Symbol<unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult>, _> =
        unsafe { lib.get(b"cuGetErrorString\0") };
    let mut msg = std::ptr::null();
    let text = match name {
        Ok(f) if unsafe { f(r, &mut msg) } == 0 && !msg.is_null() => unsafe { CStr::from_ptr(msg) }
            .to_string_lossy()
            .into_owned(),
        _ => "unknown error".into(),
    };
    Err(format!("{what} failed: CUDA error {r} ({text})"))
}

/// A loaded PTX module.
pub struct CudaModule<'c> {
    cuda: &'c Cuda,
    module: CuModule,
}

impl Drop for CudaModule<'_> {
    fn drop(&mut self) {
        let f: Result<Symbol<unsafe extern "C" fn(CuModule) -> CuResult>, _> =
            unsafe { self.cuda.lib.get(b"cuModuleUnload\0") };
        if let Ok(f) = f {
            unsafe { f(self.module) };
        }
    }
}

/// One kernel parameter, as the kernel's LLVM signature takes it.
enum Param {
    U64(u64),
    F32(f32),
}

/// Runs the interpreter's launches on the device (see the module docs).
pub struct CudaLauncher<'c> {
    module: CudaModule<'c>,
    /// Launches run so far.
    pub launches: usize,
}

impl<'c> CudaLauncher<'c> {
    pub fn new(module: CudaModule<'c>) -> CudaLauncher<'c> {
        CudaLauncher {
            module,
            launches: 0,
        }
    }
}

impl Launcher for CudaLauncher<'_> {
    fn launch(
        &mut self,
        (_, kernel): (&str, &str),
        grid: [i64; 3],
        block: [i64; 3],
        args: &[RtVal],
        types: &[ftuner_ir::Type],
    ) -> Result<(), String> {
        let cuda = self.module.cuda;
        let get = sym!(
            cuda.lib,
            b"cuModuleGetFunction\0",
            unsafe extern "C" fn(*mut CuFunction, CuModule, *const c_char) -> CuResult
        );
        let cname = CString::new(kernel).map_err(|_| "bad kernel name".to_string())?;
        let mut func = std::ptr::null_mut();
        check(
            &cuda.lib,
            unsafe { get(&mut func, self.module.module, cname.as_ptr()) },
            "cuModuleGetFunction",
        )?;
        // Arguments: each buffer copied to the device whole (contiguous, row-major).
        let mut params = vec![];
        let mut buffers: Vec<(CuDevicePtr, usize)> = vec![];
        let result = (|| -> Result<(), String> {
            for (i, a) in args.iter().enumerate() {
                match a {
                    RtVal::MemRef(m) => {
                        if m.elem != ftuner_ir::Type::f32() {
                            return Err(format!("argument #{i}: only f32 buffers are copied"));
                        }
                        let t = m.to_tensor()?;
                        let bytes: Vec<u8> = t
                            .data
                            .iter()
                            .flat_map(|x| (*x as f32).to_le_bytes())
                            .collect();
                        let p = cuda.alloc(bytes.len())?;
                        buffers.push((p, i));
                        cuda.to_device(p, &bytes)?;
                        params.push(Param::U64(p));
                        params.push(Param::U64(p));
                        params.push(Param::U64(0));
                        for s in &t.shape {
                            params.push(Param::U64(*s as u64));
                        }
                        for s in ftuner_interp::row_major(&t.shape) {
                            params.push(Param::U64(s as u64));
                        }
                    }
                    // Scalars as the kernel's parameter type says: f32 by its bits,
                    // index and integers as 64-bit (a narrower integer reads the low
                    // bytes).
                    RtVal::Scalar(s) => {
                        params.push(match types.get(i).and_then(|t| t.float_kind()) {
                            Some(ftuner_ir::FloatKind::F32) => Param::F32(*s as f32),
                            Some(_) => Param::U64(s.to_bits()),
                            None => Param::U64(*s as i64 as u64),
                        })
                    }
                    RtVal::Tensor(_) => return Err(format!("argument #{i} is a tensor")),
                }
            }
            let mut store: Vec<u64> = params
                .iter()
                .map(|p| match p {
                    Param::U64(v) => *v,
                    Param::F32(f) => f.to_bits() as u64,
                })
                .collect();
            let mut ptrs: Vec<*mut c_void> = store
                .iter_mut()
                .map(|v| v as *mut u64 as *mut c_void)
                .collect();
            let launch = sym!(
                cuda.lib,
                b"cuLaunchKernel\0",
                unsafe extern "C" fn(
                    CuFunction,
                    u32,
                    u32,
                    u32,
                    u32,
                    u32,
                    u32,
                    u32,
                    *mut c_void,
                    *mut *mut c_void,
                    *mut *mut c_void,
                ) -> CuResult
            );
            let u = |x: i64| u32::try_from(x).map_err(|_| format!("launch size {x}"));
            check(
                &cuda.lib,
                unsafe {
                    launch(
                        func,
                        u(grid[0])?,
                        u(grid[1])?,
                        u(grid[2])?,
                        u(block[0])?,
                        u(block[1])?,
                        u(block[2])?,
                        0,
                        std::ptr::null_mut(),
                        ptrs.as_mut_ptr(),
                        std::ptr::null_mut(),
                    )
                },
                "cuLaunchKernel",
            )?;
            let sync = sym!(
                cuda.lib,
                b"cuCtxSynchronize\0",
                unsafe extern "C" fn() -> CuResult
            );
            check(&cuda.lib, unsafe { sync() }, "cuCtxSynchronize")?;
            // Results back into the interpreter's buffers.
            for (p, i) in &buffers {
                let RtVal::MemRef(m) = &args[*i] else {
                    continue;
                };
                let t = m.to_tensor()?;
                let mut bytes = vec![0u8; t.data.len() * 4];
                cuda.to_host(&mut bytes, *p)?;
                let data = bytes
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64)
                    .collect();
                m.write(&Tensor::new(t.shape.clone(), t.elem, data))?;
            }
            Ok(())
        })();
        for (p, _) in buffers {
            cuda.free(p);
        }
        self.launches += 1;
        result
    }
}

/// The PTX of the (one) `gpu.module` of a buffer-level module, for `sm` (`sm_90`): the
/// module is copied, its host code dropped, the kernels lowered to the llvm dialect and
/// compiled by NVPTX.
pub fn ptx_for(ctx: &Context, ir: &Ir, top: OpId, sm: &str) -> Result<String, String> {
    let text = ftuner_ir::print_module(ir, ctx, top, ftuner_ir::PrintOptions::default());
    let mut m = ftuner_ir::parse_module(ctx, &text, "ptx").map_err(|d| d.message)?;
    let body =
        m.ir.regions_of(m.top)
            .first()
            .and_then(|r| m.ir.region_entry(*r))
            .ok_or("empty module")?;
    let ops = m.ir.block_ops_vec(body);
    let gms: Vec<OpId> = ops
        .iter()
        .copied()
        .filter(|o| m.ir.name(*o) == ops::gpu::ModuleOp::NAME)
        .collect();
    let [gm] = gms.as_slice() else {
        return Err(format!("expected one gpu.module, found {}", gms.len()));
    };
    for o in ops {
        if o != *gm {
            m.ir.erase_op(o);
        }
    }
    crate::run_pipeline(ctx, &mut m.ir, m.top, ftuner_transforms::BUFFERS_TO_LLVM)
        .map_err(|e| e.to_string())?;
    let compiler = ftuner_codegen::Compiler::new();
    let target = ftuner_codegen::Target::nvptx(sm);
    let module = compiler
        .module(&m.ir, *gm, &target, 3, &[])
        .map_err(|e| e.0)?;
    let bytes = compiler
        .emit(&module, &target, ftuner_codegen::Emit::Asm)
        .map_err(|e| e.0)?;
    String::from_utf8(bytes).map_err(|_| "PTX is not UTF-8".into())
}
