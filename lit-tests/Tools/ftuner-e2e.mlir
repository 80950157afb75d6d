// The end-to-end sweep, on a CI-sized sample: the BERT layer compiled once, run at T = 2
// and 15, checked against the layer lowered without patch-ukernels and (T = 2) against the
// reference interpreter, and timed against a bucket compiled for T = 32. Times are printed,
// never checked. The full sweep: docs/end-to-end.md.
// RUN: ftuner-e2e %examples/bert_layer_dynamic.mlir --seq 2,15 --check-loops --check-interp 2 --reps 1 --buckets 32 --blas --json %t.jsonl | FileCheck %s
// CHECK: T   ftuner ms  bucket   bucket ms   ratio   blas ms   ratio  check
// CHECK-NEXT: {{^ +2 +[0-9.]+ +32 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+  loops ok; interpreter ok$}}
// CHECK-NEXT: {{^ +15 +[0-9.]+ +32 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+  loops ok$}}
// CHECK: summary: 2 lengths; compile once {{.*}} (buckets: 1 compilations
// CHECK: summary: OpenBLAS-contractions / ftuner latency, median over T: {{[0-9.]+}}x (2 lengths)
// CHECK: summary: checked 2 lengths against the loop lowering, 1 against the interpreter: all agree
// RUN: FileCheck %s --check-prefix=JSON < %t.jsonl
// JSON: {"layer": "bert_layer_dynamic", "T": 2, "ftuner_ms": {{[0-9.]+}}, "bucket": 32,

// A GPT-2 block (tools/gen/gpt2_block.py: written as torch-mlir exports it; causal mask,
// tanh GELU through math.fpowi, Conv1D weights without transposes), with realistic
// weight magnitudes (its output is the residual stream, not normalized).
// RUN: ftuner-e2e %examples/gpt2_block_dynamic.mlir --seq 2,15 --weight-scale 0.036 --check-loops --check-interp 2 --reps 1 --buckets 32 --blas | FileCheck %s --check-prefix=GPT2
// GPT2: {{^ +2 +[0-9.]+ +32 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+  loops ok; interpreter ok$}}
// GPT2-NEXT: {{^ +15 +[0-9.]+ +32 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+  loops ok$}}
// GPT2: summary: checked 2 lengths against the loop lowering, 1 against the interpreter: all agree
// RUN: not ftuner-e2e %examples/gpt2_block_dynamic.mlir --seq 2 --weight-scale 0 2>&1 | FileCheck %s --check-prefix=SCALE
// SCALE: ftuner-e2e: error: --weight-scale 0: expected a positive number

// The plot, redrawn from the JSON lines: one line per system.
// RUN: ftuner-e2e --replot %t.jsonl --svg %t.svg && FileCheck %s --check-prefix=SVG < %t.svg
// SVG: @bert_layer_dynamic: latency against sequence length
// SVG-COUNT-3: <polyline
// SVG: contractions by OpenBLAS

// --tuning-db reaches patch-ukernels (a missing database is its error).
// RUN: not ftuner-e2e %examples/bert_layer_dynamic.mlir --seq 2 --no-buckets --tuning-db %t.none.db 2>&1 | FileCheck %s --check-prefix=DB
// DB: ftuner-e2e: error: {{.*}}none.db: no such file

// Bad input: a layer without a dynamic dimension, an empty range.
// RUN: not ftuner-e2e %S/Inputs/static-add.mlir 2>&1 | FileCheck %s --check-prefix=STATIC
// STATIC: ftuner-e2e: error: {{.*}}static-add.mlir: @add has no dynamic dimension
// RUN: not ftuner-e2e %examples/bert_layer_dynamic.mlir --seq 9..3 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: ftuner-e2e: error: --seq 9..3: expected 1 <= A <= B
