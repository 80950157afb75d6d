//! The thread pool behind `ftuner_rt_parallel_for`, the runtime call parallel code makes
//! (`convert-parallel-loops-to-runtime` outlines each loop marked `ftuner.parallel`, and
//! `convert-to-llvm` makes its `rt.parallel_for` a call `ftuner_rt_parallel_for(body, ctx,
//! n)` of a `body(ctx, lo, hi)`), and `ftuner_rt_parallel_for_nested`
//! for a marked loop holding marked loops (split only when its iterations split evenly or
//! are many: [`nested_splits`]).
//!
//! * Persistent: `threads - 1` workers, started at the first parallel call. After a job a
//!   worker waits for the next one spinning, by the clock ([`BUSY_SPIN`] on `spin_loop`:
//!   a GEMM forks once per kc x mc block, the next job comes within microseconds; then
//!   yielding the CPU to other runnable threads every 256 turns), [`SPIN_DEFAULT`] in all
//!   (`FTUNER_SPIN_US`), and then sleeps on a condition variable.
//! * The split: `0 .. n` (or what a [`probe`] left of it) in `min(threads, n)` contiguous
//!   chunks of equal size (the loops the compiler marks are over equal tiles or batches),
//!   claimed from a shared counter,
//!   the calling thread included: a worker that is descheduled delays nobody, its chunk is
//!   taken by whoever is free.
//! * A cold pool (a worker asleep) is woken only for enough work: a long loop's first
//!   iterations run on the calling thread, timed, and decide ([`probe`]).
//! * No oversubscription: a parallel call made while the pool is busy (from inside a body,
//!   or from another thread of the application) runs serially on its own thread. A loop
//!   with fewer than two iterations runs inline without taking the pool, so a loop nested
//!   in it can still use the pool.
//! * Threads: `FTUNER_NUM_THREADS` if set, else the machine's available parallelism;
//!   [`set_num_threads`] changes it at run time (1 = every loop serial).

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The outlined body of a parallel loop: runs iterations `lo .. hi`.
pub type BodyFn = unsafe extern "C" fn(*mut c_void, i64, i64);

/// How long a worker waits for the next job, spinning, before it sleeps, unless
/// `FTUNER_SPIN_US` says otherwise (microseconds; 0: sleep at once). Measured on a KVM
/// guest (Xeon family 6 model 167, two vCPUs; the DCGAN generator saved, batch 8, two
/// threads, calls 50 ms apart, `FTUNER_SPIN_US` swept): workers that slept within 5 ms
/// of a call's end made the next call 13.5-17.9 ms; spinning 10-60 ms, 9.7-10.4 ms (back to
/// back: 7.7). ONNX Runtime's workers spin for 20-30 ms after a run by default (the CPU
/// time its process used during a 50 ms sleep after one), and its next call lost 13%
/// against ftuner's 75-130% when ftuner's workers slept at once.
const SPIN_DEFAULT: Duration = Duration::from_millis(20);

/// The first part of the wait spins on `spin_loop` only (the next job of a GEMM comes
/// within microseconds); after it, the worker yields the CPU to any other runnable thread
/// every 256 turns.
const BUSY_SPIN: Duration = Duration::from_micros(100);

/// The spin time [`set_spin`] chose, in nanoseconds; [`SPIN_UNSET`] until then.
static SPIN_SET: AtomicU64 = AtomicU64::new(SPIN_UNSET);
const SPIN_UNSET: u64 = u64::MAX;

/// How long idle workers spin before they sleep from now on (each worker's next wait, not
/// one in progress): `Some(d)` (at most 10 s, as `FTUNER_SPIN_US`) in place of
/// `FTUNER_SPIN_US` or the default, `None` back to them. For a
/// program that knows what runs between its calls (a benchmark that runs other libraries'
/// threads there wants the workers asleep; one whose every system runs on this pool wants
/// them awake).
pub fn set_spin(d: Option<Duration>) {
    let ns = d.map_or(SPIN_UNSET, |d| {
        d.min(Duration::from_secs(10)).as_nanos() as u64
    });
    SPIN_SET.store(ns, SeqCst);
}

/// The spin [`set_spin`] set, else [`env_spin`].
fn spin_time() -> Duration {
    match SPIN_SET.load(SeqCst) {
        SPIN_UNSET => env_spin(),
        ns => Duration::from_nanos(ns),
    }
}

/// `FTUNER_SPIN_US` when it is a number of microseconds (digits, an optional `+`, blanks
/// around; at most 10 s; 0: sleep at once), else [`SPIN_DEFAULT`]; the rule of the shared
/// libraries' pool (`ftuner-runtime/src/aot/threads.c`). First read by the caller that
/// starts the workers ([`Pool::ensure_workers`]), not on a worker thread.
fn env_spin() -> Duration {
    static SPIN: OnceLock<Duration> = OnceLock::new();
    *SPIN.get_or_init(|| {
        std::env::var("FTUNER_SPIN_US")
            .ok()
            .and_then(|v| parse_spin_us(&v))
            .map_or(SPIN_DEFAULT, |us| Duration::from_micros(us.min(10_000_000)))
    })
}

/// `FTUNER_SPIN_US`'s value as microseconds, if it is one.
fn parse_spin_us(v: &str) -> Option<u64> {
    let t = v.trim_matches([' ', '\t', '\n']);
    let digits = t.strip_prefix('+').unwrap_or(t);
    // Digits only (`parse` would also take a sign), and no more than C's `long` holds.
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<i64>().ok()?.try_into().ok()
}

struct Pool {
    /// Job generation (high 32 bits) and the next chunk to claim (low 32 bits).
    state: AtomicU64,
    /// The current job: body, context, iteration count, chunks.
    f: AtomicUsize,
    ctx: AtomicUsize,
    /// The job's iterations are `base .. n` (`base` > 0 after a [`probe`] ran the first).
    base: AtomicU64,
    n: AtomicU64,
    parts: AtomicU64,
    /// Chunks of the current job finished.
    done: AtomicUsize,
    /// The first failed run-time check of the current job's chunks (a message pointer,
    /// [`crate::status`]), handed to the thread that started the job.
    failed: AtomicUsize,
    /// A thread is running a job on the pool.
    busy: AtomicBool,
    /// Workers started (changed only by the thread holding `busy`), and workers asleep.
    workers: AtomicUsize,
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

static POOL: OnceLock<Pool> = OnceLock::new();
static THREADS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Set on a thread while it runs chunks of a pool job.
    static IN_JOB: Cell<bool> = const { Cell::new(false) };
}

fn pool() -> &'static Pool {
    POOL.get_or_init(|| Pool {
        state: AtomicU64::new(0),
        f: AtomicUsize::new(0),
        ctx: AtomicUsize::new(0),
        base: AtomicU64::new(0),
        n: AtomicU64::new(0),
        parts: AtomicU64::new(0),
        done: AtomicUsize::new(0),
        failed: AtomicUsize::new(0),
        busy: AtomicBool::new(false),
        workers: AtomicUsize::new(0),
        sleepers: AtomicUsize::new(0),
        lock: Mutex::new(()),
        wake: Condvar::new(),
    })
}

/// The number of threads parallel loops use (the caller included).
pub fn num_threads() -> usize {
    match THREADS.load(SeqCst) {
        0 => {
            let n = std::env::var("FTUNER_NUM_THREADS")
                .ok()
                .and_then(|s| s.trim().parse::<usize>().ok())
                .filter(|n| *n >= 1)
                .unwrap_or_else(|| {
                    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
                });
            THREADS.store(n, SeqCst);
            n
        }
        n => n,
    }
}

/// Use `n` threads (at least 1) from now on.
pub fn set_num_threads(n: usize) {
    THREADS.store(n.max(1), SeqCst);
}

/// The chunk counter of a generation whose job is still being written: nothing to claim.
/// A call opens its generation closed, writes the job, then opens it (chunk 0), so a claim
/// that succeeds in generation `g` read `g`'s job: the next job's fields are written only
/// after its generation is current. (Writing them first let a worker still in the
/// previous generation, its counter exhausted, read the new chunk count and claim a chunk
/// against the old generation before the new one began: that chunk ran twice, and its
/// count let the caller return while the chunk's second run was still going — found by
/// the shared libraries' pool test under load, which has the same protocol.)
const CLOSED: u64 = 0xffff_ffff;

/// Chunk `c` of `parts` over `0 .. n`.
fn chunk(n: i64, parts: u64, c: u64) -> (i64, i64) {
    let (n128, p, c) = (n as i128, parts as i128, c as i128);
    ((n128 * c / p) as i64, (n128 * (c + 1) / p) as i64)
}

impl Pool {
    /// Start workers up to `want`. Only the thread holding `busy` calls this.
    fn ensure_workers(&'static self, want: usize) {
        let _ = env_spin(); // the environment read here, not by the workers
        let mut started = self.workers.load(SeqCst);
        while started < want {
            let spawned = std::thread::Builder::new()
                .name(format!("ftuner-worker-{}", started + 1))
                .spawn(move || self.worker());
            if spawned.is_err() {
                break;
            }
            started += 1;
            self.workers.store(started, SeqCst);
        }
    }

    /// Claim and run chunks of generation `g` until none is left.
    fn run_chunks(&self, g: u64) {
        let mut turns = 0u32;
        loop {
            let s = self.state.load(SeqCst);
            if s >> 32 != g {
                return;
            }
            if s & 0xffff_ffff == CLOSED {
                // The caller is between two stores; yield now and then in case it was
                // preempted there.
                turns = turns.wrapping_add(1);
                if turns.is_multiple_of(256) {
                    std::thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
                continue;
            }
            let parts = self.parts.load(SeqCst);
            if (s & 0xffff_ffff) >= parts {
                return;
            }
            // Read the job before claiming: a claim succeeds only while generation `g`
            // is current and open, so what was read is `g`'s ([`CLOSED`]).
            let f = self.f.load(SeqCst);
            let ctx = self.ctx.load(SeqCst);
            let base = self.base.load(SeqCst) as i64;
            let n = self.n.load(SeqCst) as i64;
            if self
                .state
                .compare_exchange(s, s + 1, SeqCst, SeqCst)
                .is_err()
            {
                continue;
            }
            let (lo, hi) = chunk(n - base, parts, s & 0xffff_ffff);
            let (lo, hi) = (base + lo, base + hi);
            // SAFETY: `f` is the body `parallel_for` published for generation `g` (a
            // function of type BodyFn); its caller waits for every chunk, so `ctx` is alive.
            unsafe {
                let body: BodyFn = std::mem::transmute::<usize, BodyFn>(f);
                body(ctx as *mut c_void, lo, hi);
            }
            let f = crate::status::take_raw();
            if !f.is_null() {
                let _ = self.failed.compare_exchange(0, f as usize, SeqCst, SeqCst);
            }
            self.done.fetch_add(1, SeqCst);
        }
    }

    fn worker(&'static self) {
        IN_JOB.with(|j| j.set(true));
        let mut seen = self.state.load(SeqCst) >> 32;
        loop {
            let spin = spin_time();
            let mut start = Instant::now();
            let mut turns = 0u32;
            let g = loop {
                let g = self.state.load(SeqCst) >> 32;
                if g != seen {
                    break g;
                }
                turns = turns.wrapping_add(1);
                if !turns.is_multiple_of(256) {
                    std::hint::spin_loop();
                    continue;
                }
                let waited = start.elapsed();
                if waited < spin {
                    if waited >= BUSY_SPIN {
                        std::thread::yield_now();
                    }
                    continue;
                }
                let Ok(mut guard) = self.lock.lock() else {
                    return;
                };
                self.sleepers.fetch_add(1, SeqCst);
                while self.state.load(SeqCst) >> 32 == seen {
                    guard = match self.wake.wait(guard) {
                        Ok(g) => g,
                        Err(_) => return,
                    };
                }
                self.sleepers.fetch_sub(1, SeqCst);
                start = Instant::now();
            };
            seen = g;
            self.run_chunks(g);
        }
    }
}

/// Loops of at least this many iterations are [`probe`]d when the pool is cold.
const PROBE_MIN: i64 = 16;

/// A probe runs the first `1 / PROBE_PARTS` of the iterations (at least one).
const PROBE_PARTS: i64 = 32;

/// What starting a job costs when the workers sleep: the wake-up of a worker (a system call
/// and an interrupt to the other vCPU of a KVM guest) before it takes a chunk, and the
/// caller's wait for it. Measured on a KVM guest (Zen 5, family 26 model 2, two vCPUs):
/// W2's `Q · Kᵀ` of 192 heads at T = 1 took 17-24 µs at two threads in ftuner-bench's
/// alternated rounds (the workers asleep at each call: `FTUNER_SPIN_US=200`) against 3-4 µs
/// at one thread.
const WAKE_COST: Duration = Duration::from_micros(20);

/// With the pool cold (a worker asleep or not started), a loop of [`PROBE_MIN`] or more
/// iterations first runs `ceil(n / PROBE_PARTS)` of them on the calling thread, timed: if
/// the rest would take less than twice [`WAKE_COST`] at that rate (two threads save less
/// than the wake-up costs), it runs them too and returns `None`; otherwise the iterations
/// left start at the returned index. A warm pool (every worker spinning) or a short loop
/// starts at 0 with no probe: a job then costs about a microsecond, and a probe of a loop
/// of few, large iterations would hold back a large share of its work. Iterations are
/// independent, so the result does not depend on the choice. A run-time check failing
/// in the probe ends the loop there (`None`). Called holding the pool (`busy`): a
/// parallel loop inside the probed iterations runs serially.
///
/// # Safety
/// As [`ftuner_rt_parallel_for`].
unsafe fn probe(body: BodyFn, ctx: *mut c_void, n: i64, cold: bool) -> Option<i64> {
    if !cold || n < PROBE_MIN {
        return Some(0);
    }
    let first = n / PROBE_PARTS + i64::from(n % PROBE_PARTS != 0);
    let t0 = Instant::now();
    // SAFETY: the caller's contract; `0 .. first` is a prefix of `0 .. n`.
    unsafe { body(ctx, 0, first) };
    let took = t0.elapsed().as_nanos();
    if crate::status::ftuner_rt_failed() != 0 {
        // A run-time check failed: the loop's results are undefined, its failure is
        // the caller's first (not displaced by a chunk's), and the rest need not run.
        return None;
    }
    let rest = took.saturating_mul((n - first) as u128) / first as u128;
    if rest < 2 * WAKE_COST.as_nanos() {
        // SAFETY: as above; the rest of `0 .. n`.
        unsafe { body(ctx, first, n) };
        return None;
    }
    Some(first)
}

/// Run `body(ctx, lo, hi)` over chunks covering `0 .. n` on the pool; returns when all
/// have run.
///
/// # Safety
/// `body` must be safe to call on disjoint ranges of `0 .. n` from several threads at
/// once with `ctx` (what `convert-to-llvm` emits for an `rt.parallel_for`).
pub unsafe extern "C" fn ftuner_rt_parallel_for(body: BodyFn, ctx: *mut c_void, n: i64) {
    if n <= 0 {
        return;
    }
    let threads = num_threads();
    let parts = (threads as i64).min(n);
    if parts <= 1 || parts >= CLOSED as i64 || IN_JOB.with(Cell::get) {
        // SAFETY: the caller's contract.
        unsafe { body(ctx, 0, n) };
        return;
    }
    let p = pool();
    if p.busy
        .compare_exchange(false, true, SeqCst, SeqCst)
        .is_err()
    {
        // Another thread of the application holds the pool: no oversubscription.
        // SAFETY: the caller's contract.
        unsafe { body(ctx, 0, n) };
        return;
    }
    let cold = p.workers.load(SeqCst) < threads - 1 || p.sleepers.load(SeqCst) > 0;
    // SAFETY: the caller's contract (the probe runs a prefix of `0 .. n`).
    let base = match unsafe { probe(body, ctx, n, cold) } {
        Some(base) => base,
        None => {
            p.busy.store(false, SeqCst);
            return;
        }
    };
    let parts = (threads as i64).min(n - base);
    p.ensure_workers(threads - 1);
    // The new generation, closed while its job is written ([`CLOSED`]), then open.
    let g = (p.state.load(SeqCst) >> 32).wrapping_add(1) & 0xffff_ffff;
    p.state.store(g << 32 | CLOSED, SeqCst);
    p.f.store(body as usize, SeqCst);
    p.ctx.store(ctx as usize, SeqCst);
    p.base.store(base as u64, SeqCst);
    p.n.store(n as u64, SeqCst);
    p.parts.store(parts as u64, SeqCst);
    p.done.store(0, SeqCst);
    p.failed.store(0, SeqCst);
    p.state.store(g << 32, SeqCst);
    if p.sleepers.load(SeqCst) > 0 {
        if let Ok(_guard) = p.lock.lock() {
            p.wake.notify_all();
        }
    }
    IN_JOB.with(|j| j.set(true));
    p.run_chunks(g);
    IN_JOB.with(|j| j.set(false));
    let mut spins = 0u32;
    while p.done.load(SeqCst) < parts as usize {
        spins += 1;
        if spins < 1 << 20 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
    crate::status::put_raw(p.failed.swap(0, SeqCst) as *const std::ffi::c_char);
    p.busy.store(false, SeqCst);
}

/// The most iterations per thread below which [`ftuner_rt_parallel_for_nested`] splits a
/// loop only when its iterations divide evenly among the threads.
const NESTED_EVEN_BELOW: i64 = 8;

/// Whether a loop of `n` iterations holding parallel loops goes to a pool of `threads`:
/// when its iterations split evenly or are many (at least [`NESTED_EVEN_BELOW`] per
/// thread); otherwise its body runs on the calling thread and the loops inside use the
/// pool (a batch of 3 on 2 threads would run 2 images against 1).
pub fn nested_splits(n: i64, threads: i64) -> bool {
    threads > 1 && n > 0 && (n % threads == 0 || n >= NESTED_EVEN_BELOW * threads)
}

/// Run `body(ctx, lo, hi)` over `0 .. n` for a loop whose body holds parallel loops (a
/// batch of GEMMs with their tile loops, outlined too: `rt.parallel_for {nested}`): on the
/// pool as [`ftuner_rt_parallel_for`] when [`nested_splits`] (each thread then keeps its
/// batches' data in its own cache and forks once), else on the calling thread, whose
/// inner loops use the pool. Inside a pool job it runs serially.
///
/// # Safety
/// As [`ftuner_rt_parallel_for`].
pub unsafe extern "C" fn ftuner_rt_parallel_for_nested(body: BodyFn, ctx: *mut c_void, n: i64) {
    if n <= 0 {
        return;
    }
    if !IN_JOB.with(Cell::get) && nested_splits(n, num_threads() as i64) {
        // SAFETY: the caller's contract.
        unsafe { ftuner_rt_parallel_for(body, ctx, n) };
    } else {
        // SAFETY: the caller's contract.
        unsafe { body(ctx, 0, n) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicI64;

    /// `FTUNER_SPIN_US` as the shared libraries' pool reads it (tests/aot_threads.rs in
    /// ftuner-runtime runs the same values through the C pool).
    #[test]
    fn spin_us_is_read_like_the_c_pool() {
        for (v, want) in [
            ("0", Some(0)),
            (" +7 ", Some(7)),
            ("20\n", Some(20)),
            ("-5", None),
            ("-0", None),
            ("7us", None),
            ("+", None),
            ("", None),
            ("99999999999", Some(99_999_999_999)),
            ("99999999999999999999", None),
        ] {
            assert_eq!(parse_spin_us(v), want, "{v:?}");
        }
    }

    struct Ctx {
        hits: Vec<AtomicI64>,
        nested: bool,
    }

    unsafe extern "C" fn body(ctx: *mut c_void, lo: i64, hi: i64) {
        // SAFETY: the tests pass a `Ctx`.
        let c = unsafe { &*(ctx as *const Ctx) };
        for i in lo..hi {
            c.hits[i as usize].fetch_add(1, SeqCst);
            if c.nested {
                let inner = Ctx {
                    hits: (0..3).map(|_| AtomicI64::new(0)).collect(),
                    nested: false,
                };
                // SAFETY: `body` on a `Ctx`.
                unsafe { ftuner_rt_parallel_for(body, &inner as *const Ctx as *mut c_void, 3) };
                assert!(inner.hits.iter().all(|h| h.load(SeqCst) == 1));
            }
        }
    }

    fn run(n: i64, nested: bool) -> Vec<i64> {
        let c = Ctx {
            hits: (0..n.max(0)).map(|_| AtomicI64::new(0)).collect(),
            nested,
        };
        // SAFETY: `body` on a `Ctx` of n counters.
        unsafe { ftuner_rt_parallel_for(body, &c as *const Ctx as *mut c_void, n) };
        c.hits.iter().map(|h| h.load(SeqCst)).collect()
    }

    /// The tests that set the thread count run one at a time (the harness runs tests on
    /// threads of its own, and the count is global).
    static THREADS: Mutex<()> = Mutex::new(());

    #[test]
    fn every_iteration_runs_once() {
        let _one = THREADS.lock().unwrap_or_else(|e| e.into_inner());
        set_num_threads(3);
        for n in [0, 1, 2, 3, 7, 64, 1000] {
            for _ in 0..50 {
                assert!(run(n, false).iter().all(|h| *h == 1), "n = {n}");
            }
        }
        // A job of more chunks right after one of fewer: a worker still in the smaller
        // job's generation must not claim a chunk of the larger one ([`CLOSED`]).
        for _ in 0..3000 {
            assert!(run(2, false).iter().all(|h| *h == 1));
            assert!(run(3, false).iter().all(|h| *h == 1), "n = 3 after n = 2");
        }
        // Nested calls run serially inside the job.
        assert!(run(17, true).iter().all(|h| *h == 1));
        set_num_threads(1);
        assert!(run(9, false).iter().all(|h| *h == 1));
    }

    static SPLIT_SEEN: AtomicBool = AtomicBool::new(false);

    /// Spin for `us` microseconds: work enough that a cold pool is worth waking.
    fn work(us: u64) {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_micros(us) {
            std::hint::spin_loop();
        }
    }

    unsafe extern "C" fn nested_body(ctx: *mut c_void, lo: i64, hi: i64) {
        if IN_JOB.with(Cell::get) {
            SPLIT_SEEN.store(true, SeqCst);
        }
        // Enough per iteration that a cold pool's probe splits the loop.
        work(20 * (hi - lo) as u64);
        // SAFETY: `body` on the same `Ctx` (nested: every iteration calls the pool again).
        unsafe { body(ctx, lo, hi) };
    }

    #[test]
    fn nested_entry_splits_even_or_many_iterations() {
        assert!(nested_splits(4, 2) && nested_splits(16, 2) && nested_splits(17, 2));
        assert!(!nested_splits(3, 2) && !nested_splits(15, 2) && !nested_splits(1, 2));
        assert!(!nested_splits(4, 1) && !nested_splits(0, 2));
        let _one = THREADS.lock().unwrap_or_else(|e| e.into_inner());
        set_num_threads(3);
        for n in 0..=30i64 {
            let want = nested_splits(n, 3);
            SPLIT_SEEN.store(false, SeqCst);
            // A split may find the pool held by another test's call (then it runs
            // serially, correctly): a few tries.
            for _ in 0..if want { 50 } else { 3 } {
                let c = Ctx {
                    hits: (0..n).map(|_| AtomicI64::new(0)).collect(),
                    nested: true,
                };
                // SAFETY: `nested_body` on a `Ctx` of n counters.
                unsafe {
                    ftuner_rt_parallel_for_nested(nested_body, &c as *const Ctx as *mut c_void, n)
                };
                assert!(c.hits.iter().all(|h| h.load(SeqCst) == 1), "n = {n}");
                if SPLIT_SEEN.load(SeqCst) {
                    break;
                }
            }
            assert_eq!(SPLIT_SEEN.load(SeqCst), want, "n = {n}");
        }
        set_num_threads(1);
    }

    #[test]
    fn chunks_cover_the_range() {
        for n in [1i64, 2, 5, 97] {
            for parts in 1..=(n.min(8) as u64) {
                let mut next = 0;
                for c in 0..parts {
                    let (lo, hi) = chunk(n, parts, c);
                    assert_eq!(lo, next);
                    assert!(hi >= lo);
                    next = hi;
                }
                assert_eq!(next, n);
            }
        }
    }

    static IN_JOB_SEEN: AtomicBool = AtomicBool::new(false);

    /// `body` that notes whether it ran as a pool job and works `ctx.1` µs per iteration.
    unsafe extern "C" fn timed_body(ctx: *mut c_void, lo: i64, hi: i64) {
        // SAFETY: the test passes a `(Ctx, u64)`.
        let (c, us) = unsafe { &*(ctx as *const (Ctx, u64)) };
        if IN_JOB.with(Cell::get) {
            IN_JOB_SEEN.store(true, SeqCst);
        }
        for i in lo..hi {
            c.hits[i as usize].fetch_add(1, SeqCst);
            work(*us);
        }
    }

    /// Run `n` iterations of `us` µs each; (every iteration ran once, a pool job ran some).
    fn run_timed(n: i64, us: u64) -> (bool, bool) {
        let c = (
            Ctx {
                hits: (0..n).map(|_| AtomicI64::new(0)).collect(),
                nested: false,
            },
            us,
        );
        IN_JOB_SEEN.store(false, SeqCst);
        // SAFETY: `timed_body` on a `(Ctx, u64)` of n counters.
        unsafe { ftuner_rt_parallel_for(timed_body, &c as *const (Ctx, u64) as *mut c_void, n) };
        let once = c.0.hits.iter().all(|h| h.load(SeqCst) == 1);
        (once, IN_JOB_SEEN.load(SeqCst))
    }

    /// With the workers asleep, a loop whose probe says it is short runs on the calling
    /// thread (no worker is woken); a long one goes to the pool after its probe, every
    /// iteration once.
    #[test]
    fn a_cold_pool_is_woken_only_for_enough_work() {
        let _one = THREADS.lock().unwrap_or_else(|e| e.into_inner());
        if spin_time() > Duration::from_millis(50) {
            return; // FTUNER_SPIN_US keeps the workers awake longer than the test waits
        }
        set_num_threads(2);
        for (n, us, split) in [
            (64, 0, false),
            (17, 0, false),
            (64, 20, true),
            (16, 50, true),
        ] {
            let mut seen = false;
            for _ in 0..5 {
                run_timed(64, 20); // the worker started
                std::thread::sleep(spin_time());
                // The worker asleep (a loaded machine may schedule it late: wait for it).
                let p = pool();
                let deadline = Instant::now() + Duration::from_secs(2);
                while p.workers.load(SeqCst) > 0
                    && p.sleepers.load(SeqCst) == 0
                    && Instant::now() < deadline
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                let (once, job) = run_timed(n, us);
                assert!(once, "n = {n}, {us} µs");
                seen = job;
                if job == split {
                    break;
                }
            }
            assert_eq!(seen, split, "n = {n}, {us} µs per iteration");
        }
        // Below the probe's length the loop goes to the pool as before, cold or not.
        std::thread::sleep(spin_time() + Duration::from_millis(30));
        assert!(run_timed(8, 0).0);
    }

    /// `set_spin` changes how long idle workers spin from their next wait on: at 10 s a
    /// worker stays awake after a job, then at zero it falls asleep after the next one
    /// (without `set_spin` the 10 s would keep it awake); `None` goes back to
    /// `FTUNER_SPIN_US` or the default.
    #[test]
    fn set_spin_changes_the_idle_workers_wait() {
        let _one = THREADS.lock().unwrap_or_else(|e| e.into_inner());
        set_num_threads(2);
        let p = pool();
        // Until `done` holds (a loaded machine may schedule the worker late), up to 2 s.
        let within = |done: &dyn Fn() -> bool| {
            let deadline = Instant::now() + Duration::from_secs(2);
            while !done() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            done()
        };
        set_spin(Some(Duration::from_secs(10)));
        // A job the worker takes part in (it reads the spin when it waits after it).
        let mut awake = false;
        for _ in 0..5 {
            run_timed(64, 20);
            std::thread::sleep(Duration::from_millis(100));
            if p.sleepers.load(SeqCst) == 0 {
                awake = true;
                break;
            }
        }
        set_spin(Some(Duration::ZERO));
        run_timed(64, 20);
        let slept = within(&|| p.sleepers.load(SeqCst) > 0);
        set_spin(None);
        assert_eq!(spin_time(), env_spin());
        assert!(awake, "the worker slept while set to spin 10 s");
        assert!(slept, "the worker still spun after set to spin 0");
    }
}
