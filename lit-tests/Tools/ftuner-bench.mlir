// ftuner-bench smoke run: every workload compiles and runs against OpenBLAS and the
// results agree; no time is checked.
// RUN: ftuner-bench --smoke --workloads w1,w2,w3,attn --deepbench %S/Inputs/gemm_problems.csv --json %t.jsonl | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.jsonl
// Each W1 and W2 shape also runs the two padding baselines (built by ftuner, checked
// against OpenBLAS): the next power-of-two bucket and one fixed tile.
// CHECK: pow2_ms {{ *}}tile_ms
// CHECK: W1 {{ *}}16x768x768 {{.*}} {{[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+}}
// CHECK: W2 {{ *}}192x5x5x64 {{.*}} {{[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+}}
// CHECK: ATTN {{ *}}12x5x5x64
// CHECK: ATTN {{ *}}12x5x64x5
// CHECK: W3 {{ *}}127x127x127
// The compile time of each dynamic kernel, in the summary and the JSON.
// CHECK: W1: compiled once per kernel: 1 kernel in {{[0-9.]+}} s (?x768 * 768x768
// CHECK: W1 (1 thread): geomean GFLOP/s ftuner
// CHECK: W1 (1 thread) library-time/ftuner-time median: openblas {{[0-9.]+}} (min {{[0-9.]+}}, 2)
// CHECK: W1 (1 thread) padding baselines: pad-pow2-time/ftuner-time median {{[0-9.]+}} (min {{[0-9.]+}}), T <= 24: median {{[0-9.]+}}; pad-tile-time/ftuner-time median
// CHECK: W2 (1 thread) padding baselines: pad-pow2-time/ftuner-time
// JSON: {"system": "ftuner", "workload": "W1", "kernel": "?x768 * 768x768", "compile_s":
// JSON: {"system": "ftuner", "workload": "W1", "shape": "16x768x768", "t": 1, "threads": 1, "median_s":
// JSON: {"system": "openblas", "workload": "W1", "shape": "16x768x768", "t": 1, "threads": 1, "median_s":
// JSON: {"system": "pad-pow2", "workload": "W1", "shape": "16x768x768", "t": 1, "threads": 1, "median_s":
// JSON: {"system": "pad-tile", "workload": "W1", "shape": "16x768x768", "t": 1, "threads": 1, "median_s":
// JSON: {"system": "pad-tile", "workload": "W2", "shape": "192x5x5x64", "t": 5, "threads": 1, "median_s":
// JSON: {"system": "openblas", "workload": "W3", "shape": "127x127x127", "threads": 1, "median_s":
// Two thread counts: every shape at each, ftuner's pool and OpenBLAS's threads.
// RUN: ftuner-bench --smoke --workloads w1,w2 --threads 1,2 --json %t.thr.jsonl | FileCheck %s --check-prefix=THREADS
// RUN: FileCheck %s --check-prefix=THRJSON < %t.thr.jsonl
// RUN: not ftuner-bench --smoke --workloads w1 --threads 0 2>&1 | FileCheck %s --check-prefix=BADTHREADS
// MKL and the current OpenBLAS are opened at run time (libs.rs): one that cannot be
// opened is a skipped column, said once, and the run goes on.
// RUN: env FTUNER_MKL=%t.no-such-lib.so FTUNER_OPENBLAS=%t.no-such-lib.so ftuner-bench --smoke --workloads w1 2>&1 | FileCheck %s --check-prefix=NOLIB
// NOLIB-COUNT-1: ftuner-bench: mkl skipped: {{.*}}no-such-lib.so
// NOLIB-COUNT-1: ftuner-bench: openblas-new skipped: {{.*}}no-such-lib.so
// NOLIB: W1 (1 thread) library-time/ftuner-time median: openblas
// NOLIB-NOT: mkl
// THREADS: W1 {{ *}}16x768x768 {{ *}}1
// THREADS: W1 {{ *}}16x768x768 {{ *}}2
// THREADS: W2 {{ *}}192x5x5x64 {{ *}}2
// THREADS: W1 (1 thread): geomean
// THREADS: W1 (2 threads): geomean
// THREADS: W2 (2 threads): geomean
// THRJSON: {"system": "ftuner", "workload": "W1", "shape": "16x768x768", "t": 1, "threads": 2, "median_s":
// BADTHREADS: --threads: '0' is not a thread count
// The ollie workload (issue 7): a conv layer compiled three ways, the results compared.
// RUN: ftuner-bench --smoke --workloads ollie --inputs %S/Inputs --json %t.ollie.jsonl | FileCheck %s --check-prefix=OLLIE
// RUN: FileCheck %s --check-prefix=OLLIEJSON < %t.ollie.jsonl
// OLLIE: dilated_conv 1
// OLLIE: OLLIE: geomean speedup of derived over direct loops
// OLLIEJSON: {"system": "loops", "workload": "OLLIE", "shape": "dilated_conv@1", "threads": 1, "median_s":
// OLLIEJSON: {"system": "derived", "workload": "OLLIE", "shape": "dilated_conv@1", "threads": 1, "median_s":
// The plot and the generated section of docs/benchmarks.md (between its markers; a file
// without them is an error and stays as it was).
// RUN: printf 'before\n<!-- ftuner-bench:begin -->\nold\n<!-- ftuner-bench:end -->\nafter\n' > %t.md
// RUN: ftuner-bench --smoke --workloads w1,w2 --svg %t.svg --doc %t.md > /dev/null
// RUN: FileCheck %s --check-prefix=SVG < %t.svg
// RUN: FileCheck %s --check-prefix=DOC < %t.md
// SVG: <svg
// SVG: W1 dense, M = 16 T
// SVG: pad-pow2
// SVG: W2 batch matmul
// DOC: before
// DOC-NEXT: <!-- ftuner-bench:begin -->
// DOC-NEXT: ### Latest run: {{[0-9-]+}} (generated)
// DOC-NOT: old
// DOC: | W1 | 1 | 2 |
// DOC: | W2 | 1 | {{[0-9.]+ \(min [0-9.]+\)}} |
// DOC: | T | ftuner | openblas | pad-pow2 | pad-tile |
// DOC: <!-- ftuner-bench:end -->
// DOC-NEXT: after
// RUN: printf 'no markers\n' > %t.bad.md
// RUN: not ftuner-bench --smoke --workloads w1 --doc %t.bad.md 2>&1 | FileCheck %s --check-prefix=NODOC
// RUN: FileCheck %s --check-prefix=KEPT < %t.bad.md
// NODOC: ftuner-bench: error: --doc {{.*}}bad.md: no '<!-- ftuner-bench:begin -->' ... '<!-- ftuner-bench:end -->' section to regenerate
// KEPT: no markers
