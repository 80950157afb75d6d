#![no_main]
//! ftuner-run's `.npy` reader on arbitrary bytes: an error or a tensor whose data matches
//! its shape, never a panic; what it reads writes back and reads again with the same shape.
//! The reader is compiled from ftuner-run's own source file (ftuner-run's library links
//! LLVM; the reader needs only the interpreter's `Tensor`).
use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../tools/ftuner-run/src/npy.rs"]
mod npy;

fuzz_target!(|data: &[u8]| {
    let Ok(t) = npy::read(data) else { return };
    let n: usize = t.shape.iter().product();
    assert_eq!(
        n,
        t.data.len(),
        "shape {:?} holds {} elements",
        t.shape,
        t.data.len()
    );
    let bytes = npy::write(&t).expect("a tensor read from .npy writes back");
    let back = npy::read(&bytes).expect("written .npy reads back");
    assert_eq!(back.shape, t.shape);
    assert_eq!(back.data.len(), t.data.len());
});
