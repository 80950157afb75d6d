//! The thread pool of the shared libraries (`src/aot/threads.c`), compiled with the system
//! C compiler into a test program: every iteration runs once (also in a job of more
//! chunks right after one of fewer), nested and concurrent calls
//! run serially, the nested entry splits a loop only when its iterations divide evenly or
//! are many, a failed check in any chunk reaches the caller, and the workers start,
//! work and stop (counted by their name, ftuner-aot), sleeping workers are woken for a
//! job, whether they spin between jobs or sleep after each (`FTUNER_SPIN_US`, read as
//! the JIT's pool reads it), a cold pool is woken only for a loop with enough work.
//! Skipped (with a line) where there is no C compiler.

use std::path::PathBuf;
use std::process::Command;

const THREADS_C: &str = include_str!("../src/aot/threads.c");

const MAIN_C: &str = r#"
#include <stdio.h>
#include <string.h>
#include <dirent.h>

typedef struct { atomic_int *hits; int64_t n; int nested; int fail_at; } job;

static void body(void *p, int64_t lo, int64_t hi) {
  job *j = p;
  for (int64_t i = lo; i < hi; i++) {
    atomic_fetch_add(&j->hits[i], 1);
    if (i == j->fail_at) { ftuner_rt_fail("check failed in a chunk"); return; }
    if (j->nested) {
      atomic_int inner_hits[5] = {0};
      job inner = {inner_hits, 5, 0, -1};
      ftuner_rt_parallel_for(body, &inner, 5);
      for (int k = 0; k < 5; k++) if (atomic_load(&inner_hits[k]) != 1) { printf("FAIL nested\n"); exit(1); }
    }
  }
}

static int run(int64_t n, int nested, int fail_at) {
  static atomic_int hits[4096];
  for (int64_t i = 0; i < n; i++) atomic_store(&hits[i], 0);
  job j = {hits, n, nested, fail_at};
  ftuner_rt_parallel_for(body, &j, n);
  for (int64_t i = 0; i < n; i++) {
    int want = fail_at >= 0 ? -1 : 1;
    int h = atomic_load(&hits[i]);
    if (want == 1 && h != 1) { printf("FAIL n=%lld i=%lld hits=%d\n", (long long)n, (long long)i, h); exit(1); }
    if (h > 1) { printf("FAIL twice n=%lld i=%lld\n", (long long)n, (long long)i); exit(1); }
  }
  return 0;
}

/* Spin for `us` microseconds: work enough that a cold pool is worth waking. */
static void work(int64_t us) {
  int64_t end = pool_now_ns() + us * 1000;
  while (pool_now_ns() < end) POOL_PAUSE();
}

/* The nested entry: a body run inside a pool job (IN_JOB) means the outer loop was split. */
static atomic_int SPLIT_SEEN;
static void nested_body(void *p, int64_t lo, int64_t hi) {
  job *j = p;
  for (int64_t i = lo; i < hi; i++) {
    atomic_fetch_add(&j->hits[i], 1);
    work(20); /* a cold pool's probe splits the loop */
    if (IN_JOB) atomic_store(&SPLIT_SEEN, 1);
    atomic_int inner_hits[5] = {0};
    job inner = {inner_hits, 5, 0, -1};
    ftuner_rt_parallel_for(body, &inner, 5);
    for (int k = 0; k < 5; k++) if (atomic_load(&inner_hits[k]) != 1) { printf("FAIL nested inner\n"); exit(1); }
  }
}

/* With 3 threads: split when n is a multiple of 3 or at least 24. */
static void run_nested(int64_t n) {
  static atomic_int hits[64];
  for (int64_t i = 0; i < n; i++) atomic_store(&hits[i], 0);
  atomic_store(&SPLIT_SEEN, 0);
  job j = {hits, n, 0, -1};
  ftuner_rt_parallel_for_nested(nested_body, &j, n);
  for (int64_t i = 0; i < n; i++)
    if (atomic_load(&hits[i]) != 1) { printf("FAIL nested n=%lld i=%lld\n", (long long)n, (long long)i); exit(1); }
  int want = n > 0 && (n % 3 == 0 || n >= 24);
  if (atomic_load(&SPLIT_SEEN) != want) { printf("FAIL nested split n=%lld\n", (long long)n); exit(1); }
}

/* The pool's workers alive: threads named ftuner-aot. */
static int workers(void) {
  DIR *d = opendir("/proc/self/task");
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[300], comm[64] = {0};
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    if (fgets(comm, sizeof comm, f) && strncmp(comm, "ftuner-aot", 10) == 0) n++;
    fclose(f);
  }
  closedir(d);
  return n;
}

/* A joined thread may still be listed for a moment: wait up to a second for `want`. */
static int workers_settled(int want) {
  int n = workers();
  for (int i = 0; i < 100 && n != want; i++) { usleep(10000); n = workers(); }
  return n;
}

/* Workers woken for a job: its three chunks each wait (up to 2 s) until all three have
   started, which only three threads at once can bring about; the jobs come 30 ms apart
   (past the default 20 ms of spinning: the workers sleep between them) and then back to
   back (they spin). */
static atomic_int STARTED, TIMED_OUT;
static void gather_body(void *p, int64_t lo, int64_t hi) {
  (void)p;
  for (int64_t i = lo; i < hi; i++) {
    atomic_fetch_add(&STARTED, 1);
    int64_t end = pool_now_ns() + 2000000000LL;
    while (atomic_load(&STARTED) < 3)
      if (pool_now_ns() > end) { atomic_store(&TIMED_OUT, 1); break; }
  }
}
static int woken(void) {
  for (int r = 0; r < 5; r++) {
    if (r < 3) usleep(30000);
    atomic_store(&STARTED, 0);
    ftuner_rt_parallel_for(gather_body, 0, 3);
    if (atomic_load(&TIMED_OUT) || atomic_load(&STARTED) != 3) return 0;
  }
  return 1;
}

/* A cold pool (the workers asleep) is woken only for enough work: a loop of 64 short
   iterations runs on the caller (no chunk in a job), one of 64 x 20 us goes to the pool
   after its probe; every iteration once. Needs the workers asleep: skipped where they
   spin longer than the test waits. */
static atomic_int JOB_SEEN;
typedef struct { atomic_int *hits; int64_t us; } timed_job;
static void timed_body(void *p, int64_t lo, int64_t hi) {
  timed_job *j = p;
  if (IN_JOB) atomic_store(&JOB_SEEN, 1);
  for (int64_t i = lo; i < hi; i++) {
    atomic_fetch_add(&j->hits[i], 1);
    work(j->us);
  }
}
static int probe_case(int64_t us) {
  static atomic_int hits[64];
  for (int i = 0; i < 64; i++) atomic_store(&hits[i], 0);
  usleep((useconds_t)(pool_spin_ns() / 1000 + 30000));
  atomic_store(&JOB_SEEN, 0);
  timed_job j = {hits, us};
  ftuner_rt_parallel_for(timed_body, &j, 64);
  for (int i = 0; i < 64; i++) if (atomic_load(&hits[i]) != 1) { printf("FAIL probe i=%d\n", i); exit(1); }
  return atomic_load(&JOB_SEEN);
}
static int probed(void) {
  if (pool_spin_ns() > 50000000) return 1;
  int short_split = 1, long_split = 0;
  for (int r = 0; r < 5 && short_split; r++) short_split = probe_case(0);
  for (int r = 0; r < 5 && !long_split; r++) long_split = probe_case(20);
  return !short_split && long_split;
}

static void *other_caller(void *arg) {
  (void)arg;
  for (int r = 0; r < 200; r++) {
    static _Thread_local atomic_int h[300];
    for (int i = 0; i < 300; i++) atomic_store(&h[i], 0);
    job j = {h, 300, 0, -1};
    ftuner_rt_parallel_for(body, &j, 300);
    for (int i = 0; i < 300; i++) if (atomic_load(&h[i]) != 1) { printf("FAIL concurrent\n"); exit(1); }
  }
  return 0;
}

int main(void) {
  ftuner_aot_set_num_threads(3);
  for (int r = 0; r < 50; r++) {
    int64_t ns[] = {0, 1, 2, 3, 7, 64, 1000};
    for (int k = 0; k < 7; k++) run(ns[k], 0, -1);
  }
  /* A job of more chunks right after one of fewer: a worker still in the smaller job's
     generation must not claim a chunk of the larger one (it ran twice). */
  for (int r = 0; r < 3000; r++) { run(2, 0, -1); run(3, 0, -1); }
  printf("workers started: %d\n", workers_settled(2));
  run(17, 1, -1);
  printf("nested: ok\n");
  for (int64_t n = 0; n <= 30; n++) run_nested(n);
  printf("nested entry: ok\n");
  /* A check failing in one chunk: the caller sees it after the job, once. */
  for (int fail_at = 0; fail_at < 64; fail_at += 21) {
    if (ftuner_rt_failed()) { printf("FAIL stale\n"); return 1; }
    run(64, 0, fail_at);
    if (!ftuner_rt_failed()) { printf("FAIL lost at %d\n", fail_at); return 1; }
    printf("failed at %d: %s\n", fail_at, FAILED_MSG);
    FAILED_MSG = 0;
  }
  pthread_t t;
  pthread_create(&t, 0, other_caller, 0);
  other_caller(0);
  pthread_join(t, 0);
  printf("concurrent: ok\n");
  printf("woken: %s\n", woken() ? "ok" : "FAIL");
  printf("probe: %s\n", probed() ? "ok" : "FAIL");
  printf("spin: %lld ns\n", (long long)pool_spin_ns());
  ftuner_aot_set_num_threads(1);
  run(9, 0, -1);
  printf("threads: %d\n", ftuner_aot_num_threads());
  pool_stop();
  printf("after stop: %d\n", workers_settled(0));
  return 0;
}
"#;

fn cc() -> Option<String> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    Command::new(&cc)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| cc)
}

#[test]
fn pool_runs_every_iteration_once_and_hands_failures_to_the_caller() {
    let Some(cc) = cc() else {
        eprintln!("skipped: no C compiler");
        return;
    };
    let dir: PathBuf =
        std::env::temp_dir().join(format!("ftuner-aot-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("main.c");
    std::fs::write(&src, format!("{THREADS_C}\n{MAIN_C}")).unwrap();
    let exe = dir.join("main");
    let out = Command::new(&cc)
        .args(["-std=gnu11", "-O2", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-lpthread")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Workers waiting the default 20 ms between jobs, and sleeping after every job
    // (FTUNER_SPIN_US=0); the variable read as the JIT's pool reads it (a number of
    // microseconds, blanks around, at most 10 s; anything else: the default).
    let runs: Vec<_> = [
        (None, 20_000_000i64),
        (Some("0"), 0),
        (Some(" +7 "), 7_000),
        (Some("-5"), 20_000_000),
        (Some("7us"), 20_000_000),
        (Some("99999999999"), 10_000_000_000),
        (Some("99999999999999999999"), 20_000_000),
    ]
    .into_iter()
    .map(|(spin, ns)| {
        let mut cmd = Command::new(&exe);
        match spin {
            Some(us) => cmd.env("FTUNER_SPIN_US", us),
            None => cmd.env_remove("FTUNER_SPIN_US"),
        };
        let run = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&run.stdout).to_string();
        (spin, ns, run.status.success(), text)
    })
    .collect();
    let _ = std::fs::remove_dir_all(&dir);
    let want = [
        "workers started: 2",
        "nested: ok",
        "nested entry: ok",
        "failed at 0: check failed in a chunk",
        "failed at 21: check failed in a chunk",
        "failed at 42: check failed in a chunk",
        "failed at 63: check failed in a chunk",
        "concurrent: ok",
        "woken: ok",
        "probe: ok",
        "spin: NS ns",
        "threads: 1",
        "after stop: 0",
    ];
    for (spin, ns, ok, text) in runs {
        assert!(ok, "FTUNER_SPIN_US={spin:?}: {text}");
        let want: Vec<String> = want
            .iter()
            .map(|l| l.replace("NS", &ns.to_string()))
            .collect();
        assert_eq!(
            text.lines().collect::<Vec<_>>(),
            want,
            "FTUNER_SPIN_US={spin:?}: {text}"
        );
    }
}
