//! The JIT: a module compiled on every core and linked in process by LLVM's ORC (LLJIT).
//!
//! LLVM optimizes and generates code for one module on one thread. [`OrcJit::compile`]
//! splits the module ([`crate::split::partition`]), compiles the parts to object code on
//! as many threads (each with its own LLVM context, `default<On>` then the code
//! generator), and links the objects into one JIT dylib. Symbols the code calls resolve
//! to ftuner's runtime and the functions registered with [`crate::add_symbol`] first (by
//! address), then to the process (libc, libm: what LLVM's intrinsics lower to). A module
//! declaring an external function ftuner does not provide is refused unless
//! [`crate::allow_native_calls`] is on (a module from untrusted input could otherwise
//! declare and call `system`).

use crate::{e, CodegenError, Compiler, Emit, PackedFn, Target};
use inkwell::llvm_sys::core::LLVMCreateMemoryBufferWithMemoryRangeCopy;
use inkwell::llvm_sys::error::{LLVMDisposeErrorMessage, LLVMErrorRef, LLVMGetErrorMessage};
use inkwell::llvm_sys::orc2::lljit::{
    LLVMOrcCreateLLJIT, LLVMOrcCreateLLJITBuilder, LLVMOrcDisposeLLJIT, LLVMOrcLLJITAddObjectFile,
    LLVMOrcLLJITGetGlobalPrefix, LLVMOrcLLJITGetMainJITDylib, LLVMOrcLLJITLookup,
    LLVMOrcLLJITMangleAndIntern, LLVMOrcLLJITRef,
};
use inkwell::llvm_sys::orc2::{
    LLVMJITEvaluatedSymbol, LLVMJITSymbolFlags, LLVMJITSymbolGenericFlags, LLVMOrcAbsoluteSymbols,
    LLVMOrcCSymbolMapPair, LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess,
    LLVMOrcDefinitionGeneratorRef, LLVMOrcJITDylibAddGenerator, LLVMOrcJITDylibDefine,
};
use std::ffi::{CStr, CString};

/// An LLVM error as ours (consumed).
fn check(err: LLVMErrorRef) -> Result<(), CodegenError> {
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: a non-null error from the ORC C API; its message is ours to dispose.
    unsafe {
        let m = LLVMGetErrorMessage(err);
        let s = CStr::from_ptr(m).to_string_lossy().into_owned();
        LLVMDisposeErrorMessage(m);
        Err(e(format!("JIT: {s}")))
    }
}

/// JIT-compiled code: alive as long as this value.
pub struct OrcJit {
    jit: LLVMOrcLLJITRef,
}

// SAFETY: the LLJIT instance is used for lookups only after construction (ORC's session
// is thread-safe); the code it holds is immutable.
unsafe impl Send for OrcJit {}
unsafe impl Sync for OrcJit {}

impl Drop for OrcJit {
    fn drop(&mut self) {
        // SAFETY: created by LLVMOrcCreateLLJIT, disposed once.
        let _ = check(unsafe { LLVMOrcDisposeLLJIT(self.jit) });
    }
}

/// What one part compiled to: its object code and the functions it declares (defined in
/// another part, or external).
struct Part {
    object: Vec<u8>,
    defined: Vec<String>,
    declared: Vec<String>,
}

fn compile_part(text: &str, target: &Target, opt_level: u8) -> Result<Part, CodegenError> {
    let c = Compiler::new();
    let m = c.parse(text, target, opt_level)?;
    let (mut defined, mut declared) = (vec![], vec![]);
    let mut f = m.get_first_function();
    while let Some(func) = f {
        let name = func.get_name().to_string_lossy().into_owned();
        if func.count_basic_blocks() > 0 {
            defined.push(name);
        } else if !name.starts_with("llvm.") {
            declared.push(name);
        }
        f = func.get_next_function();
    }
    let object = c.emit(&m, target, Emit::Obj)?;
    Ok(Part {
        object,
        defined,
        declared,
    })
}

impl OrcJit {
    /// Compile `text` (what [`crate::module_to_llvm_ir`] wrote for the host) on up to
    /// `threads` threads and link it.
    pub fn compile(
        text: &str,
        target: &Target,
        opt_level: u8,
        threads: usize,
    ) -> Result<OrcJit, CodegenError> {
        crate::register_runtime_symbols();
        let parts = crate::split::partition(text, threads.max(1));
        let compiled: Vec<Result<Part, CodegenError>> = std::thread::scope(|s| {
            let handles: Vec<_> = parts
                .iter()
                .map(|p| s.spawn(move || compile_part(p, target, opt_level)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(e("a code generation thread panicked")))
                })
                .collect()
        });
        let compiled = compiled.into_iter().collect::<Result<Vec<_>, _>>()?;
        let provided = crate::provided_symbols();
        let defined: std::collections::HashSet<&str> = compiled
            .iter()
            .flat_map(|p| p.defined.iter().map(String::as_str))
            .collect();
        if !crate::native_calls_allowed() {
            for name in compiled.iter().flat_map(|p| &p.declared) {
                if !defined.contains(name.as_str()) && !provided.iter().any(|(n, _)| n == name) {
                    return Err(e(format!(
                        "the module calls the external function @{name}, which ftuner does not provide: calls into the process are off for modules ftuner runs (ftuner-run --allow-native-calls, ftuner_codegen::allow_native_calls)"
                    )));
                }
            }
        }
        let mut jit: LLVMOrcLLJITRef = std::ptr::null_mut();
        // SAFETY: the ORC C API as documented: the builder is consumed by CreateLLJIT, the
        // symbol map pairs and memory buffers are handed over, names are C strings.
        unsafe {
            check(LLVMOrcCreateLLJIT(&mut jit, LLVMOrcCreateLLJITBuilder()))?;
            let out = OrcJit { jit };
            let jd = LLVMOrcLLJITGetMainJITDylib(jit);
            let mut pairs = vec![];
            for (name, addr) in &provided {
                let c = CString::new(name.as_str()).map_err(|_| e("a symbol name with NUL"))?;
                pairs.push(LLVMOrcCSymbolMapPair {
                    Name: LLVMOrcLLJITMangleAndIntern(jit, c.as_ptr()),
                    Sym: LLVMJITEvaluatedSymbol {
                        Address: *addr as u64,
                        Flags: LLVMJITSymbolFlags {
                            GenericFlags:
                                LLVMJITSymbolGenericFlags::LLVMJITSymbolGenericFlagsExported as u8
                                    | LLVMJITSymbolGenericFlags::LLVMJITSymbolGenericFlagsCallable
                                        as u8,
                            TargetFlags: 0,
                        },
                    },
                });
            }
            let mu = LLVMOrcAbsoluteSymbols(pairs.as_mut_ptr(), pairs.len());
            check(LLVMOrcJITDylibDefine(jd, mu))?;
            let mut generator: LLVMOrcDefinitionGeneratorRef = std::ptr::null_mut();
            check(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
                &mut generator,
                LLVMOrcLLJITGetGlobalPrefix(jit),
                None,
                std::ptr::null_mut(),
            ))?;
            LLVMOrcJITDylibAddGenerator(jd, generator);
            for (i, p) in compiled.iter().enumerate() {
                let name = CString::new(format!("ftuner-part-{i}")).unwrap_or_default();
                let buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(
                    p.object.as_ptr().cast(),
                    p.object.len(),
                    name.as_ptr(),
                );
                check(LLVMOrcLLJITAddObjectFile(jit, jd, buf))?;
            }
            Ok(out)
        }
    }

    /// The packed entry of public function `name` (linking what it needs first).
    pub fn packed(&self, name: &str) -> Result<PackedFn, CodegenError> {
        let sym = CString::new(format!("_ftuner_packed_{name}"))
            .map_err(|_| e("a function name with NUL"))?;
        let mut addr = 0u64;
        // SAFETY: a live LLJIT and a C string.
        check(unsafe { LLVMOrcLLJITLookup(self.jit, &mut addr, sym.as_ptr()) })
            .map_err(|x| e(format!("no compiled function @{name}: {x}")))?;
        if addr == 0 {
            return Err(e(format!("no compiled function @{name}")));
        }
        // SAFETY: the symbol was emitted by `module_to_llvm_ir` with exactly this type.
        Ok(unsafe { std::mem::transmute::<usize, PackedFn>(addr as usize) })
    }
}
