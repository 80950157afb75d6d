//! Memory the JIT-compiled code allocates: its `aligned_alloc` and `free` go through
//! these functions, which count what is live (so a runner can report the peak of a call)
//! and keep freed large blocks for the next allocation of about their size.
//!
//! Why the cache: a model's temporaries are allocated and freed on every call, and the
//! large ones (MobileNetV2's activations at batch 8 are 13–39 MB each) are beyond glibc's
//! mmap threshold, so each call mapped them afresh and faulted every page in again: a
//! third of MobileNetV2's time at batch 8 was the kernel's page faults (`perf record`).
//! Smaller blocks live on glibc's heap, whose top goes back to the system when a free
//! leaves enough of it unused, so they are cached too (from 256 KiB).
//! Blocks of at least [`CACHED_MIN`] bytes are kept on free, up to [`CACHE_LIMIT`] bytes in
//! all (the oldest are returned to libc first), and an allocation takes the most recently
//! freed block that holds it with at most a quarter to spare (likely still in cache). `FTUNER_ALLOC_CACHE=0` turns
//! the cache off (read once).
//!
//! The deallocations an untrusted program asks for itself (`memref.dealloc` in the IR a
//! tool reads: `ftuner_transforms::runtime_checks::guard_input` marks them) go through
//! [`ftuner_rt_release`] instead of `free`: a block that is not live — freed twice, an
//! argument, any other pointer — is a failed run-time check, not a corrupted heap; a live
//! one is held back (quarantined) until no call is running ([`enter_call`]), so a load
//! after the dealloc still reads memory the process owns, and the runtime refuses to hand
//! out a result that was deallocated ([`is_released`]).

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{LazyLock, Mutex};

/// Blocks at least this large are kept when freed.
pub const CACHED_MIN: usize = 256 << 10;
/// The most bytes kept in freed blocks.
pub const CACHE_LIMIT: usize = 1 << 30;
/// Alignment of the blocks the cache holds (any request up to it can take one).
const BLOCK_ALIGN: usize = 64;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

#[derive(Default)]
struct State {
    /// Live blocks: address -> (requested size, whether it is a cache block of that
    /// capacity).
    live: HashMap<usize, (usize, Option<usize>)>,
    /// Freed large blocks, oldest first: (address, capacity).
    kept: Vec<(usize, usize)>,
    kept_bytes: usize,
    /// Blocks the program deallocated itself ([`ftuner_rt_release`]): address -> cache
    /// capacity, freed when no call is running.
    released: HashMap<usize, Option<usize>>,
}

static ACTIVE_CALLS: AtomicUsize = AtomicUsize::new(0);
static STATE: LazyLock<Mutex<State>> = LazyLock::new(Default::default);
static ENABLED: LazyLock<bool> =
    LazyLock::new(|| std::env::var("FTUNER_ALLOC_CACHE").map_or(true, |v| v != "0"));

extern "C" {
    fn aligned_alloc(align: usize, size: usize) -> *mut c_void;
    fn free(p: *mut c_void);
}

/// What compiled code calls for `aligned_alloc`.
pub extern "C" fn counted_aligned_alloc(align: usize, size: usize) -> *mut c_void {
    let cacheable = *ENABLED && size >= CACHED_MIN && align <= BLOCK_ALIGN;
    // libc is called without the lock held (threads of a parallel loop allocate their
    // packing buffers at once); the lock guards the bookkeeping only.
    let kept = if cacheable {
        let Ok(mut st) = STATE.lock() else {
            return std::ptr::null_mut();
        };
        // The most recently freed kept block that holds `size` with at most a quarter
        // to spare (likely still in cache).
        let fit = st
            .kept
            .iter()
            .rposition(|(_, cap)| *cap >= size && *cap - size <= size / 4);
        fit.map(|i| {
            let (a, cap) = st.kept.remove(i);
            st.kept_bytes -= cap;
            (a as *mut c_void, Some(cap))
        })
    } else {
        None
    };
    let (p, capacity) = match kept {
        Some(k) => k,
        None if cacheable => {
            // A multiple of the alignment, as aligned_alloc wants.
            let cap = size.div_ceil(BLOCK_ALIGN).saturating_mul(BLOCK_ALIGN);
            // SAFETY: libc's allocator; a power-of-two alignment, a size it divides.
            (unsafe { aligned_alloc(BLOCK_ALIGN, cap) }, Some(cap))
        }
        // SAFETY: forwards to libc with the caller's arguments.
        None => (unsafe { aligned_alloc(align, size) }, None),
    };
    let Ok(mut st) = STATE.lock() else {
        return p;
    };
    if !p.is_null() {
        st.live.insert(p as usize, (size, capacity));
        let now = CURRENT.fetch_add(size, Ordering::Relaxed) + size;
        PEAK.fetch_max(now, Ordering::Relaxed);
    }
    p
}

/// What compiled code (and the runtime, for results) calls for `free`.
///
/// # Safety
/// `p` must be null or a pointer from [`counted_aligned_alloc`] not yet freed.
pub unsafe extern "C" fn counted_free(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    let mut to_free = vec![];
    if let Ok(mut st) = STATE.lock() {
        match st.live.remove(&(p as usize)) {
            Some((size, capacity)) => {
                CURRENT.fetch_sub(size, Ordering::Relaxed);
                retire(&mut st, p as usize, capacity, &mut to_free);
            }
            // Deallocated by the program itself: freed when no call runs.
            None if st.released.contains_key(&(p as usize)) => {}
            // Not ours to count (allocated before the counters, or by libc directly).
            None => to_free.push(p as usize),
        }
    } else {
        to_free.push(p as usize);
    }
    free_all(to_free);
}

/// A block no longer in use: kept for reuse if it is a cache block, else to be freed
/// (pushed on `to_free`, freed after the lock is released).
fn retire(st: &mut State, p: usize, capacity: Option<usize>, to_free: &mut Vec<usize>) {
    match capacity {
        Some(cap) => {
            st.kept.push((p, cap));
            st.kept_bytes += cap;
            while st.kept_bytes > CACHE_LIMIT {
                let (a, c) = st.kept.remove(0);
                st.kept_bytes -= c;
                to_free.push(a);
            }
        }
        None => to_free.push(p),
    }
}

fn free_all(to_free: Vec<usize>) {
    for a in to_free {
        // SAFETY: every address here came from aligned_alloc and is no longer used.
        unsafe { free(a as *mut c_void) }
    }
}

/// What compiled code calls for a `memref.dealloc` of the program it was given (not one
/// ftuner's lowerings made): 1 when `p` is a live block of the counted allocator, which is
/// then quarantined until no call runs; 0 (the caller fails a run-time check) for any
/// other pointer — a block freed before, an argument's buffer, a view's base.
pub extern "C" fn ftuner_rt_release(p: *mut c_void) -> i32 {
    let Ok(mut st) = STATE.lock() else {
        return 0;
    };
    match st.live.remove(&(p as usize)) {
        Some((size, capacity)) => {
            CURRENT.fetch_sub(size, Ordering::Relaxed);
            st.released.insert(p as usize, capacity);
            1
        }
        None => 0,
    }
}

/// What compiled code calls before an access of the input program in a function that
/// deallocates buffers itself (`runtime_checks::CHECK_LIVE`): 1 (the caller fails a
/// run-time check) when `p` was deallocated by the program and is still held back.
pub extern "C" fn ftuner_rt_released(p: *mut c_void) -> i32 {
    is_released(p) as i32
}

/// Whether `p` was deallocated by the program ([`ftuner_rt_release`]) and not yet freed:
/// such a block must not be returned to a caller.
pub fn is_released(p: *const c_void) -> bool {
    STATE
        .lock()
        .is_ok_and(|st| st.released.contains_key(&(p as usize)))
}

/// A call of compiled code in progress (see [`enter_call`]).
pub struct CallScope(());

/// Mark a call of compiled code as running until the scope is dropped; when the last
/// running call ends, the blocks its program deallocated are freed.
pub fn enter_call() -> CallScope {
    ACTIVE_CALLS.fetch_add(1, Ordering::AcqRel);
    CallScope(())
}

impl Drop for CallScope {
    fn drop(&mut self) {
        if ACTIVE_CALLS.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        let mut to_free = vec![];
        if let Ok(mut st) = STATE.lock() {
            // Checked under the lock: a call that started since may have released blocks
            // its program can still reach; they wait for the last call to end.
            if ACTIVE_CALLS.load(Ordering::Acquire) == 0 {
                let released: Vec<(usize, Option<usize>)> = st.released.drain().collect();
                for (p, cap) in released {
                    retire(&mut st, p, cap, &mut to_free);
                }
            }
        }
        free_all(to_free);
    }
}

/// Return every kept block to libc.
pub fn release_cache() {
    let kept = STATE
        .lock()
        .map(|mut st| {
            st.kept_bytes = 0;
            std::mem::take(&mut st.kept)
        })
        .unwrap_or_default();
    free_all(kept.into_iter().map(|(a, _)| a).collect());
}

/// Bytes kept in freed blocks for reuse.
pub fn cached() -> usize {
    STATE.lock().map_or(0, |st| st.kept_bytes)
}

/// Start a new peak at what is live now.
pub fn reset_peak() {
    PEAK.store(CURRENT.load(Ordering::Relaxed), Ordering::Relaxed);
}
/// The most bytes live since the last `reset_peak`.
pub fn peak() -> usize {
    PEAK.load(Ordering::Relaxed)
}
/// Bytes live now.
pub fn current() -> usize {
    CURRENT.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_large_blocks_are_reused_and_small_ones_are_not_kept() {
        if !*ENABLED {
            return;
        }
        let big = counted_aligned_alloc(64, 12 << 20);
        assert!(!big.is_null());
        assert_eq!(big as usize % 64, 0);
        // SAFETY: a block of 12 MiB from the allocator above, then freed once.
        unsafe {
            std::ptr::write_bytes(big as *mut u8, 1, 12 << 20);
            counted_free(big);
        }
        assert!(cached() >= 12 << 20);
        // Slightly smaller: the same block; much smaller: not it.
        let again = counted_aligned_alloc(64, (12 << 20) - 4096);
        assert_eq!(again, big);
        let other = counted_aligned_alloc(64, 8 << 20);
        assert_ne!(other, big);
        let small = counted_aligned_alloc(64, 4096);
        // Half a MiB lives on glibc's heap, whose top goes back to the system on free:
        // kept too.
        let mid = counted_aligned_alloc(64, 512 << 10);
        let kept = cached();
        // SAFETY: each pointer from the allocator above, freed once.
        unsafe {
            counted_free(again);
            counted_free(other);
            counted_free(small);
            counted_free(mid);
        }
        assert_eq!(cached(), kept + (12 << 20) + (8 << 20) + (512 << 10));
        release_cache();
        assert_eq!(cached(), 0);
    }

    #[test]
    fn a_program_dealloc_is_checked_and_held_until_the_call_ends() {
        // Small blocks only: the other test counts the cache exactly.
        let call = enter_call();
        let a = counted_aligned_alloc(64, 4096);
        assert!(!a.is_null());
        assert_eq!(ftuner_rt_release(a), 1);
        assert!(is_released(a));
        // A second dealloc, and a pointer that was never ours: refused.
        assert_eq!(ftuner_rt_release(a), 0);
        let mut local = 0u64;
        assert_eq!(ftuner_rt_release(&mut local as *mut u64 as *mut c_void), 0);
        // The runtime's free of a released block leaves it for the end of the call.
        // SAFETY: `a` is released, so counted_free must not hand it to libc.
        unsafe { counted_free(a) };
        assert!(is_released(a));
        drop(call);
        assert!(!is_released(a));
    }
}
