//! NVIDIA GPUs through the CUDA driver API, loaded at run time (`libcuda.so.1`, so nothing
//! links against CUDA and machines without it build and run everything else).
//!
//! * [`Cuda::open`]: `Ok(None)` when there is no driver or no device — GPU tests skip.
//! * [`ptx_for`]: the PTX of a module's `gpu.module` (kernels from `lower-ukernels-to-gpu`).
//! * [`CudaLauncher`]: an [`ftuner_interp::Launcher`] that runs each `gpu.launch_func` of
//!   a host function the reference interpreter executes on the device: arguments copied
//!   in (memrefs as MLIR descriptors: allocated and aligned pointer, offset, sizes,
//!   strides), the kernel launched, buffers copied back. The interpreter is the host
//!   program; the kernels are the compiled PTX. Recording ([`CudaLauncher::recording`])
//!   keeps the launches, and [`Replay`] runs them again on buffers that stay on the
//!   device, for timing ([`Cuda::time`], CUDA events) against a library on the same
//!   [`DeviceBuffer`]s.

use ftuner_dialects::ops;
use ftuner_interp::{Launcher, RtVal, Tensor};
use ftuner_ir::{Context, Ir, OpId};
use libloading::{Library, Symbol};
use std::ffi::{c_char, c_void, CStr, CString};
use std::rc::Rc;

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

    /// `data` copied to a new device buffer.
    pub fn upload(&self, data: &[f32]) -> Result<DeviceBuffer<'_>, String> {
        let ptr = self.alloc(data.len() * 4)?;
        let buf = DeviceBuffer {
            cuda: self,
            ptr,
            len: data.len(),
        };
        let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.to_device(ptr, &bytes)?;
        Ok(buf)
    }

    /// Wait for everything queued on the context.
    pub fn synchronize(&self) -> Result<(), String> {
        let sync = sym!(
            self.lib,
            b"cuCtxSynchronize\0",
            unsafe extern "C" fn() -> CuResult
        );
        check(&self.lib, unsafe { sync() }, "cuCtxSynchronize")
    }

    /// Milliseconds per call of `work` (which queues device work on the default stream),
    /// `reps` calls between two events: device time, launch gaps included.
    pub fn time(
        &self,
        reps: usize,
        work: &mut dyn FnMut() -> Result<(), String>,
    ) -> Result<f64, String> {
        type Ev = *mut c_void;
        let create = sym!(
            self.lib,
            b"cuEventCreate\0",
            unsafe extern "C" fn(*mut Ev, u32) -> CuResult
        );
        let record = sym!(
            self.lib,
            b"cuEventRecord\0",
            unsafe extern "C" fn(Ev, *mut c_void) -> CuResult
        );
        let wait = sym!(
            self.lib,
            b"cuEventSynchronize\0",
            unsafe extern "C" fn(Ev) -> CuResult
        );
        let elapsed = sym!(
            self.lib,
            b"cuEventElapsedTime\0",
            unsafe extern "C" fn(*mut f32, Ev, Ev) -> CuResult
        );
        let destroy = sym!(
            self.lib,
            b"cuEventDestroy_v2\0",
            unsafe extern "C" fn(Ev) -> CuResult
        );
        let (mut start, mut stop) = (std::ptr::null_mut(), std::ptr::null_mut());
        check(&self.lib, unsafe { create(&mut start, 0) }, "cuEventCreate")?;
        check(&self.lib, unsafe { create(&mut stop, 0) }, "cuEventCreate")?;
        let result = (|| {
            let null = std::ptr::null_mut();
            check(&self.lib, unsafe { record(start, null) }, "cuEventRecord")?;
            for _ in 0..reps {
                work()?;
            }
            check(&self.lib, unsafe { record(stop, null) }, "cuEventRecord")?;
            check(&self.lib, unsafe { wait(stop) }, "cuEventSynchronize")?;
            let mut ms = 0f32;
            check(
                &self.lib,
                unsafe { elapsed(&mut ms, start, stop) },
                "cuEventElapsedTime",
            )?;
            Ok(ms as f64 / reps.max(1) as f64)
        })();
        unsafe {
            destroy(start);
            destroy(stop);
        }
        result
    }

    /// Queue `func` over `grid` x `block` with these parameter words (each passed by its
    /// 8 bytes; an f32 parameter reads the low 4) on the default stream.
    fn launch(
        &self,
        func: CuFunction,
        grid: [u32; 3],
        block: [u32; 3],
        words: &[u64],
    ) -> Result<(), String> {
        let launch = sym!(
            self.lib,
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
        let mut store = words.to_vec();
        let mut ptrs: Vec<*mut c_void> = store
            .iter_mut()
            .map(|v| v as *mut u64 as *mut c_void)
            .collect();
        check(
            &self.lib,
            unsafe {
                launch(
                    func,
                    grid[0],
                    grid[1],
                    grid[2],
                    block[0],
                    block[1],
                    block[2],
                    0,
                    std::ptr::null_mut(),
                    ptrs.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            },
            "cuLaunchKernel",
        )
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

/// f32 data on the device, freed on drop.
pub struct DeviceBuffer<'c> {
    cuda: &'c Cuda,
    ptr: CuDevicePtr,
    len: usize,
}

impl DeviceBuffer<'_> {
    /// The device address (what a kernel or a library takes).
    pub fn ptr(&self) -> u64 {
        self.ptr
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Its contents, copied back (waits for queued work).
    pub fn download(&self) -> Result<Vec<f32>, String> {
        let mut bytes = vec![0u8; self.len * 4];
        self.cuda.to_host(&mut bytes, self.ptr)?;
        Ok(bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
    /// Queue setting every element to 0.0 on the default stream.
    pub fn zero(&self) -> Result<(), String> {
        let f = sym!(
            self.cuda.lib,
            b"cuMemsetD32Async\0",
            unsafe extern "C" fn(CuDevicePtr, u32, usize, *mut c_void) -> CuResult
        );
        check(
            &self.cuda.lib,
            unsafe { f(self.ptr, 0, self.len, std::ptr::null_mut()) },
            "cuMemsetD32Async",
        )
    }
}

impl Drop for DeviceBuffer<'_> {
    fn drop(&mut self) {
        self.cuda.free(self.ptr);
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

impl CudaModule<'_> {
    /// The kernel `name` of the module.
    fn function(&self, name: &str) -> Result<CuFunction, String> {
        let lib = &self.cuda.lib;
        let get = sym!(
            lib,
            b"cuModuleGetFunction\0",
            unsafe extern "C" fn(*mut CuFunction, CuModule, *const c_char) -> CuResult
        );
        let cname = CString::new(name).map_err(|_| "bad kernel name".to_string())?;
        let mut func = std::ptr::null_mut();
        check(
            lib,
            unsafe { get(&mut func, self.module, cname.as_ptr()) },
            &format!("cuModuleGetFunction({name})"),
        )?;
        Ok(func)
    }
}

/// One kernel launch as the host program made it, kept by a recording [`CudaLauncher`]
/// so that the same launches can be replayed on buffers that stay on the device
/// ([`Replay`]).
#[derive(Clone, Debug)]
pub struct Launch {
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub params: Vec<LaunchParam>,
}

/// A kernel parameter of a [`Launch`].
#[derive(Clone, Copy, Debug)]
pub enum LaunchParam {
    /// The memref descriptor of recorded buffer `i`: allocated and aligned pointer,
    /// offset 0, sizes, row-major strides (each buffer travels contiguous).
    Buffer(usize),
    /// A scalar parameter's bits (an f32 in the low 32 bits; integers and index as 64).
    Word(u64),
}

/// What a recording [`CudaLauncher`] saw: the launches of the host calls run so far, and
/// each distinct buffer they passed (a memref view: store, offset, sizes, strides) with
/// its shape and contents when a kernel first received it.
#[derive(Default)]
pub struct Recording {
    pub launches: Vec<Launch>,
    pub buffers: Vec<(Vec<usize>, Vec<f32>)>,
    /// Each buffer's view; holding the store keeps its address from being reused.
    keys: Vec<View>,
}

/// A memref view: store, offset, sizes, strides.
type View = (Rc<ftuner_interp::Store>, i64, Vec<usize>, Vec<i64>);

impl Recording {
    fn buffer(&mut self, m: &ftuner_interp::MemRef, data: &[f32]) -> usize {
        if let Some(i) = self.keys.iter().position(|(s, o, z, t)| {
            Rc::ptr_eq(s, &m.store) && *o == m.offset && *z == m.sizes && *t == m.strides
        }) {
            return i;
        }
        self.keys.push((
            m.store.clone(),
            m.offset,
            m.sizes.clone(),
            m.strides.clone(),
        ));
        self.buffers.push((m.sizes.clone(), data.to_vec()));
        self.buffers.len() - 1
    }
}

/// Runs the interpreter's launches on the device (see the module docs).
pub struct CudaLauncher<'c> {
    module: CudaModule<'c>,
    /// Launches run so far.
    pub launches: usize,
    /// Where launches are kept, when recording ([`CudaLauncher::recording`]).
    pub recording: Option<Recording>,
}

impl<'c> CudaLauncher<'c> {
    pub fn new(module: CudaModule<'c>) -> CudaLauncher<'c> {
        CudaLauncher {
            module,
            launches: 0,
            recording: None,
        }
    }

    /// A launcher that also keeps every launch (for [`Replay`]).
    pub fn recording(module: CudaModule<'c>) -> CudaLauncher<'c> {
        CudaLauncher {
            recording: Some(Recording::default()),
            ..CudaLauncher::new(module)
        }
    }

    pub fn module(&self) -> &CudaModule<'c> {
        &self.module
    }
}

/// The descriptor words of a contiguous buffer of `shape` at `p`.
fn descriptor(words: &mut Vec<u64>, p: CuDevicePtr, shape: &[usize]) {
    words.extend([p, p, 0]);
    words.extend(shape.iter().map(|s| *s as u64));
    words.extend(ftuner_interp::row_major(shape).iter().map(|s| *s as u64));
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
        let func = self.module.function(kernel)?;
        let u = |x: i64| u32::try_from(x).map_err(|_| format!("launch size {x}"));
        let grid = [u(grid[0])?, u(grid[1])?, u(grid[2])?];
        let block = [u(block[0])?, u(block[1])?, u(block[2])?];
        // Arguments: each buffer copied to the device whole (contiguous, row-major).
        let mut words = vec![];
        let mut params = vec![];
        let mut buffers: Vec<(DeviceBuffer<'_>, usize)> = vec![];
        for (i, a) in args.iter().enumerate() {
            match a {
                RtVal::MemRef(m) => {
                    if m.elem != ftuner_ir::Type::f32() {
                        return Err(format!("argument #{i}: only f32 buffers are copied"));
                    }
                    let t = m.to_tensor()?;
                    let data: Vec<f32> = t.data.iter().map(|x| x.f() as f32).collect();
                    let buf = cuda.upload(&data)?;
                    descriptor(&mut words, buf.ptr, &t.shape);
                    if let Some(r) = &mut self.recording {
                        params.push(LaunchParam::Buffer(r.buffer(m, &data)));
                    }
                    buffers.push((buf, i));
                }
                // Scalars as the kernel's parameter type says: f32 by its bits, index and
                // integers as 64-bit (a narrower integer reads the low bytes).
                RtVal::Scalar(s) => {
                    let w = match types.get(i).and_then(|t| t.float_kind()) {
                        Some(ftuner_ir::FloatKind::F32) => (s.f() as f32).to_bits() as u64,
                        Some(_) => s.f().to_bits(),
                        None => s.i() as u64,
                    };
                    words.push(w);
                    params.push(LaunchParam::Word(w));
                }
                RtVal::Tensor(_) => return Err(format!("argument #{i} is a tensor")),
            }
        }
        cuda.launch(func, grid, block, &words)?;
        cuda.synchronize()?;
        // Results back into the interpreter's buffers.
        for (buf, i) in &buffers {
            let RtVal::MemRef(m) = &args[*i] else {
                continue;
            };
            let t = m.to_tensor()?;
            let data = buf
                .download()?
                .into_iter()
                .map(|x| ftuner_interp::Word::float(x as f64))
                .collect();
            m.write(&Tensor::new(t.shape.clone(), t.elem, data))?;
        }
        self.launches += 1;
        if let Some(r) = &mut self.recording {
            r.launches.push(Launch {
                kernel: kernel.to_string(),
                grid,
                block,
                params,
            });
        }
        Ok(())
    }
}

/// Recorded launches replayed on device-resident buffers: each recorded buffer uploaded
/// once with its recorded contents; a buffer that reached its first kernel all zeros (the
/// host's `linalg.fill` of an accumulator) is set to zero again before every run, and that
/// memset is part of the run. Nothing is copied back unless asked ([`Replay::buffer`]).
pub struct Replay<'c> {
    cuda: &'c Cuda,
    funcs: Vec<CuFunction>,
    launches: Vec<Launch>,
    buffers: Vec<(DeviceBuffer<'c>, Vec<usize>)>,
    zeroed: Vec<usize>,
}

impl<'c> Replay<'c> {
    pub fn new(module: &CudaModule<'c>, rec: &Recording) -> Result<Replay<'c>, String> {
        let cuda = module.cuda;
        let mut buffers = vec![];
        let mut zeroed = vec![];
        for (i, (shape, data)) in rec.buffers.iter().enumerate() {
            if data.iter().all(|x| *x == 0.0) {
                zeroed.push(i);
            }
            buffers.push((cuda.upload(data)?, shape.clone()));
        }
        let funcs = rec
            .launches
            .iter()
            .map(|l| module.function(&l.kernel))
            .collect::<Result<_, _>>()?;
        Ok(Replay {
            cuda,
            funcs,
            launches: rec.launches.clone(),
            buffers,
            zeroed,
        })
    }

    /// Queue one run (the memsets, then every launch) on the default stream.
    pub fn run(&self) -> Result<(), String> {
        for i in &self.zeroed {
            self.buffers[*i].0.zero()?;
        }
        let mut words = vec![];
        for (l, f) in self.launches.iter().zip(&self.funcs) {
            words.clear();
            for p in &l.params {
                match p {
                    LaunchParam::Buffer(i) => {
                        let (b, shape) = &self.buffers[*i];
                        descriptor(&mut words, b.ptr, shape);
                    }
                    LaunchParam::Word(w) => words.push(*w),
                }
            }
            self.cuda.launch(*f, l.grid, l.block, &words)?;
        }
        Ok(())
    }

    /// Recorded buffer `i` on the device.
    pub fn buffer(&self, i: usize) -> Option<&DeviceBuffer<'c>> {
        self.buffers.get(i).map(|b| &b.0)
    }

    /// Kernel launches per run.
    pub fn launches(&self) -> usize {
        self.launches.len()
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
