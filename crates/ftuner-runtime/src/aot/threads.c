/* The run-time calls the compiled code of a shared library makes besides allocation, in C
   (the library needs neither Rust nor Python): the protocol of failed run-time checks and
   the thread pool behind ftuner_rt_parallel_for (and ftuner_rt_parallel_for_nested).
   Included at the top of every generated
   wrapper (crates/ftuner-runtime/src/aot/wrapper.rs); every symbol is static or hidden, so
   two libraries in one process (or a library beside the ftuner Python extension, which has
   its own pool: ftuner_codegen::parallel) never share one. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* Failed run-time checks (the protocol of ftuner_codegen::status): the first message of a
   call on this thread; the code returns at once after recording it. */
static _Thread_local const char *FAILED_MSG;
__attribute__((visibility("hidden"))) void ftuner_rt_fail(const char *msg) { if (!FAILED_MSG) FAILED_MSG = msg; }
__attribute__((visibility("hidden"))) int32_t ftuner_rt_failed(void) { return FAILED_MSG != 0; }

/* The thread pool: what ftuner_codegen::parallel does for the JIT, the same way.
   convert-parallel-loops-to-runtime outlines each loop marked ftuner.parallel, and
   convert-to-llvm makes its rt.parallel_for a call ftuner_rt_parallel_for(body, ctx, n)
   of a body(ctx, lo, hi).
   - Persistent: threads - 1 workers, started at the first parallel call. After a job a
     worker waits for the next one spinning, by the clock: 100 us with PAUSE (a GEMM
     forks once per block: the next job comes within microseconds), then yielding the CPU
     to any other runnable thread every 256 turns, 20 ms in all (FTUNER_SPIN_US sets it;
     0: no spin), then it sleeps on a condition variable. Why 20 ms: SPIN_DEFAULT in
     ftuner_codegen::parallel (the JIT's pool, the same policy).
   - The split: 0 .. n (or what a probe left of it) in min(threads, n) contiguous chunks
     of equal size, claimed from a shared counter, the calling thread included.
   - A cold pool (a worker asleep) is woken only for enough work: a long loop's first
     iterations run on the calling thread, timed, and decide (pool_probe).
   - No oversubscription: a call made while the pool is busy (from inside a body, or from
     another thread of the application) runs serially on its own thread.
   - Threads: FTUNER_NUM_THREADS if set, else the CPUs this process may run on (its
     affinity mask; unlike the JIT, a cgroup CPU quota is not read: set the variable in
     such a container), at most 256; <name>_set_num_threads changes it (1: every loop
     serial).
   - The workers are named "ftuner-aot"; they are joined when the library is unloaded or
     the process exits (unless a call is running then); a child process after fork()
     starts its own.
   - A failed check in a chunk is handed to the calling thread (FAILED_MSG) after the job. */
typedef void (*ftuner_body_fn)(void *, int64_t, int64_t);
#define FTUNER_SPIN_US_DEFAULT 20000
#define FTUNER_BUSY_SPIN_NS 100000
#define FTUNER_MAX_WORKERS 255
static atomic_int POOL_THREADS;            /* 0: not read from the environment yet */
static atomic_ullong POOL_STATE;           /* job generation << 32 | next chunk to claim */
static _Atomic(ftuner_body_fn) POOL_F;
static _Atomic(void *) POOL_CTX;
static atomic_llong POOL_BASE;            /* the job's iterations are BASE .. N (after a probe) */
static atomic_llong POOL_N;
static atomic_ullong POOL_PARTS;
static atomic_ullong POOL_DONE;            /* chunks of the current job finished */
static _Atomic(const char *) POOL_FAILED;  /* the first failed check of the job's chunks */
static atomic_int POOL_BUSY;               /* a job is running */
static atomic_int POOL_WORKERS;            /* started (changed only while holding BUSY) */
static atomic_int POOL_SLEEPERS;
static atomic_int POOL_STOP;
static pthread_t POOL_TID[FTUNER_MAX_WORKERS];
static pthread_mutex_t POOL_LOCK = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t POOL_WAKE = PTHREAD_COND_INITIALIZER;
static _Thread_local int IN_JOB;
#if defined(__x86_64__) || defined(__i386__)
#define POOL_PAUSE() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define POOL_PAUSE() __asm__ volatile("yield")
#else
#define POOL_PAUSE() ((void)0)
#endif

/* A thread count within 1 .. the most the pool can start (its workers and the caller). */
static int pool_clamp(long n) { return n < 1 ? 1 : n > FTUNER_MAX_WORKERS + 1 ? FTUNER_MAX_WORKERS + 1 : (int)n; }

static int ftuner_aot_num_threads(void) {
  int n = atomic_load(&POOL_THREADS);
  if (n > 0) return n;
  const char *env = getenv("FTUNER_NUM_THREADS");
  long v = env ? strtol(env, 0, 10) : 0;
  if (v < 1) {
    cpu_set_t set;
    v = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
  }
  n = pool_clamp(v);
  /* A set_num_threads made meanwhile wins over the environment. */
  int unset = 0;
  if (!atomic_compare_exchange_strong(&POOL_THREADS, &unset, n)) n = unset;
  return n;
}

static void ftuner_aot_set_num_threads(int n) {
  atomic_store(&POOL_THREADS, pool_clamp(n));
}

/* Chunk c of parts over 0 .. n: n * c / parts without overflow (n = q * parts + r, and
   r * c < parts^2 <= 2^16). */
static int64_t pool_bound(int64_t n, uint64_t parts, uint64_t c) {
  int64_t q = n / (int64_t)parts, r = n % (int64_t)parts;
  return q * (int64_t)c + r * (int64_t)c / (int64_t)parts;
}
static void pool_chunk(int64_t n, uint64_t parts, uint64_t c, int64_t *lo, int64_t *hi) {
  *lo = pool_bound(n, parts, c);
  *hi = pool_bound(n, parts, c + 1);
}

/* The chunk counter of a generation whose job is still being written: nothing to claim.
   A call opens its generation closed, writes the job, then opens it (chunk 0), so a
   claim that succeeds in generation g read g's job: the next job's fields are written
   only after its generation is current. (Writing them first let a worker still in the
   previous generation, its counter exhausted, read the new chunk count and claim a
   chunk against the old generation before the new one began: that chunk ran twice,
   and its count let the caller return while the chunk's second run was still going.) */
#define POOL_CLOSED 0xffffffffu

/* Claim and run chunks of generation g until none is left. */
static void pool_run_chunks(uint64_t g) {
  for (unsigned turns = 1;; turns++) {
    unsigned long long s = atomic_load(&POOL_STATE);
    if ((s >> 32) != g) return;
    /* Closed: the caller is between two stores; yield now and then in case it was
       preempted there. */
    if ((s & 0xffffffffu) == POOL_CLOSED) {
      if (turns % 256 == 0) sched_yield(); else POOL_PAUSE();
      continue;
    }
    uint64_t parts = atomic_load(&POOL_PARTS);
    if ((s & 0xffffffffu) >= parts) return;
    /* Read the job before claiming: a claim succeeds only while generation g is current
       and open, so what was read is g's. */
    ftuner_body_fn f = atomic_load(&POOL_F);
    void *ctx = atomic_load(&POOL_CTX);
    int64_t base = atomic_load(&POOL_BASE);
    int64_t n = atomic_load(&POOL_N);
    if (!atomic_compare_exchange_strong(&POOL_STATE, &s, s + 1)) continue;
    int64_t lo, hi;
    pool_chunk(n - base, parts, s & 0xffffffffu, &lo, &hi);
    f(ctx, base + lo, base + hi);
    const char *msg = FAILED_MSG;
    FAILED_MSG = 0;
    if (msg) {
      const char *none = 0;
      atomic_compare_exchange_strong(&POOL_FAILED, &none, msg);
    }
    atomic_fetch_add(&POOL_DONE, 1);
  }
}

/* Nanoseconds on the monotonic clock. */
static int64_t pool_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* How long a worker waits for the next job before it sleeps: FTUNER_SPIN_US if it is a
   number of microseconds (digits, an optional +, blanks around; at most 10 s; 0: sleep
   at once), else FTUNER_SPIN_US_DEFAULT; the rule of ftuner_codegen::parallel. Read by
   the caller that starts the workers (pool_ensure_workers), not on a worker thread. */
static int64_t pool_spin_ns(void) {
  static _Atomic int64_t SPIN_NS = -1;
  int64_t ns = atomic_load(&SPIN_NS);
  if (ns >= 0) return ns;
  const char *env = getenv("FTUNER_SPIN_US");
  long us = FTUNER_SPIN_US_DEFAULT;
  if (env) {
    const char *p = env;
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    if (*p == '+') p++;
    const char *q = p;
    while (*q >= '0' && *q <= '9') q++;
    const char *r = q;
    while (*r == ' ' || *r == '\t' || *r == '\n') r++;
    if (q > p && *r == 0) {
      errno = 0;
      long v = strtol(p, 0, 10);
      if (errno == 0) us = v;
    }
  }
  ns = (int64_t)(us > 10000000 ? 10000000 : us) * 1000;
  atomic_store(&SPIN_NS, ns);
  return ns;
}

/* Wait until generation `seen` is over (returns the new one) or the pool stops (returns
   `seen`): pause-spin for FTUNER_BUSY_SPIN_NS, then spin yielding the CPU to any other
   runnable thread every 256 turns until the spin time is up, then sleep on the condition
   variable. */
static uint64_t pool_wait(uint64_t seen) {
  int64_t start = pool_now_ns(), spin = pool_spin_ns();
  for (unsigned k = 1;; k++) {
    if (atomic_load(&POOL_STOP)) return seen;
    uint64_t g = atomic_load(&POOL_STATE) >> 32;
    if (g != seen) return g;
    if (k % 256 != 0) {
      POOL_PAUSE();
      continue;
    }
    int64_t waited = pool_now_ns() - start;
    if (waited < spin) {
      if (waited >= FTUNER_BUSY_SPIN_NS) sched_yield();
      continue;
    }
    pthread_mutex_lock(&POOL_LOCK);
    atomic_fetch_add(&POOL_SLEEPERS, 1);
    while (atomic_load(&POOL_STATE) >> 32 == seen && !atomic_load(&POOL_STOP))
      pthread_cond_wait(&POOL_WAKE, &POOL_LOCK);
    atomic_fetch_sub(&POOL_SLEEPERS, 1);
    pthread_mutex_unlock(&POOL_LOCK);
    start = pool_now_ns();
  }
}

static void *pool_worker(void *arg) {
  (void)arg;
  IN_JOB = 1;
  uint64_t seen = atomic_load(&POOL_STATE) >> 32;
  for (;;) {
    uint64_t g = pool_wait(seen);
    if (g == seen) return 0;
    seen = g;
    pool_run_chunks(g);
  }
}

/* Start workers up to want; only the thread holding BUSY calls this. */
static void pool_ensure_workers(int want) {
  (void)pool_spin_ns(); /* the environment read here, not by the workers */
  int started = atomic_load(&POOL_WORKERS);
  while (started < want && started < FTUNER_MAX_WORKERS) {
    if (pthread_create(&POOL_TID[started], 0, pool_worker, 0) != 0) break;
    /* Named here, not by the worker, so that the name is there when this returns. */
    pthread_setname_np(POOL_TID[started], "ftuner-aot");
    started++;
    atomic_store(&POOL_WORKERS, started);
  }
}

/* A cold pool (a worker asleep or not started) is woken only for enough work: a loop of
   FTUNER_PROBE_MIN or more iterations first runs ceil(n / FTUNER_PROBE_PARTS) of them on
   the calling thread, timed; when at that rate the rest would take less than twice
   FTUNER_WAKE_NS (the wake-up of a sleeping worker), it runs them there too and returns
   -1, else the index the rest starts at. A warm pool or a shorter loop starts at 0. The
   rule of ftuner_codegen::parallel::probe. */
#define FTUNER_PROBE_MIN 16
#define FTUNER_PROBE_PARTS 32
#define FTUNER_WAKE_NS 20000
static int64_t pool_probe(ftuner_body_fn body, void *ctx, int64_t n, int cold) {
  if (!cold || n < FTUNER_PROBE_MIN) return 0;
  int64_t first = n / FTUNER_PROBE_PARTS + (n % FTUNER_PROBE_PARTS != 0);
  int64_t t0 = pool_now_ns();
  body(ctx, 0, first);
  int64_t took = pool_now_ns() - t0;
  /* A run-time check failed: the results are undefined, the failure is the caller's first,
     and the rest need not run. */
  if (FAILED_MSG) return -1;
  /* The rest's time at the probe's rate, saturating. */
  double rest = (double)took * (double)(n - first) / (double)first;
  if (rest < 2.0 * FTUNER_WAKE_NS) {
    body(ctx, first, n);
    return -1;
  }
  return first;
}

__attribute__((visibility("hidden"))) void ftuner_rt_parallel_for(ftuner_body_fn body, void *ctx, int64_t n) {
  if (n <= 0) return;
  int64_t threads = ftuner_aot_num_threads();
  int64_t parts = threads < n ? threads : n;
  if (parts <= 1 || IN_JOB) { body(ctx, 0, n); return; }
  int idle = 0;
  if (!atomic_compare_exchange_strong(&POOL_BUSY, &idle, 1)) { body(ctx, 0, n); return; }
  int cold = atomic_load(&POOL_WORKERS) < threads - 1 || atomic_load(&POOL_SLEEPERS) > 0;
  int64_t base = pool_probe(body, ctx, n, cold);
  if (base < 0) {
    atomic_store(&POOL_BUSY, 0);
    return;
  }
  parts = threads < n - base ? threads : n - base;
  pool_ensure_workers((int)threads - 1);
  /* The new generation, closed while its job is written (POOL_CLOSED), then open. */
  uint64_t g = ((atomic_load(&POOL_STATE) >> 32) + 1) & 0xffffffffu;
  atomic_store(&POOL_STATE, (unsigned long long)g << 32 | POOL_CLOSED);
  atomic_store(&POOL_F, body);
  atomic_store(&POOL_CTX, ctx);
  atomic_store(&POOL_BASE, base);
  atomic_store(&POOL_N, n);
  atomic_store(&POOL_PARTS, (uint64_t)parts);
  atomic_store(&POOL_DONE, 0);
  atomic_store(&POOL_FAILED, (const char *)0);
  atomic_store(&POOL_STATE, (unsigned long long)g << 32);
  if (atomic_load(&POOL_SLEEPERS) > 0) {
    pthread_mutex_lock(&POOL_LOCK);
    pthread_cond_broadcast(&POOL_WAKE);
    pthread_mutex_unlock(&POOL_LOCK);
  }
  IN_JOB = 1;
  pool_run_chunks(g);
  IN_JOB = 0;
  unsigned spins = 0;
  while (atomic_load(&POOL_DONE) < (uint64_t)parts) {
    if (++spins < (1u << 20)) POOL_PAUSE();
    else sched_yield();
  }
  const char *failed = atomic_exchange(&POOL_FAILED, (const char *)0);
  if (failed) ftuner_rt_fail(failed);
  atomic_store(&POOL_BUSY, 0);
}

/* A parallel loop whose body holds parallel loops (a batch of GEMMs, each with its tile
   loops): its iterations are split across the pool when they split evenly or are many
   (n a multiple of the threads, or at least 8 per thread: each thread keeps its batches'
   data in its own cache, one fork per loop); otherwise (a batch of 3 on 2 threads would
   run 2 against 1) the body runs here over all of 0 .. n and the loops inside use the
   pool. The rule of ftuner_codegen::parallel::ftuner_rt_parallel_for_nested. */
__attribute__((visibility("hidden"))) void ftuner_rt_parallel_for_nested(ftuner_body_fn body, void *ctx, int64_t n) {
  if (n <= 0) return;
  int64_t threads = ftuner_aot_num_threads();
  if (threads > 1 && !IN_JOB && (n % threads == 0 || n >= 8 * threads)) {
    ftuner_rt_parallel_for(body, ctx, n);
    return;
  }
  body(ctx, 0, n);
}

/* A child process after fork() has none of the parent's workers (only the forking
   thread): it starts afresh. */
static void pool_after_fork_child(void) {
  atomic_store(&POOL_WORKERS, 0);
  atomic_store(&POOL_SLEEPERS, 0);
  atomic_store(&POOL_BUSY, 0);
  atomic_store(&POOL_STOP, 0);
  IN_JOB = 0;
  pthread_mutex_init(&POOL_LOCK, 0);
  pthread_cond_init(&POOL_WAKE, 0);
}
__attribute__((constructor)) static void pool_start(void) { pthread_atfork(0, 0, pool_after_fork_child); }

/* The workers stop and are joined when the library is unloaded (dlclose) or the process
   exits, so no worker is left running code that is gone. */
__attribute__((destructor)) static void pool_stop(void) {
  int idle = 0;
  /* A job still running on another thread at exit keeps its workers. */
  if (!atomic_compare_exchange_strong(&POOL_BUSY, &idle, 1)) return;
  atomic_store(&POOL_STOP, 1);
  pthread_mutex_lock(&POOL_LOCK);
  pthread_cond_broadcast(&POOL_WAKE);
  pthread_mutex_unlock(&POOL_LOCK);
  int n = atomic_load(&POOL_WORKERS);
  for (int k = 0; k < n; k++) pthread_join(POOL_TID[k], 0);
  atomic_store(&POOL_WORKERS, 0);
}
