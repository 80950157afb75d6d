// The oracle (issue 25): `--check` runs the module as read on the interpreter twice — in
// single precision as its types say, and wide (f64) — and accepts a result when every
// element lies within 8 x (the single-precision reference's own error there + the worst
// relative error it shows in that output, at the element's magnitude plus the output's
// mean magnitude); ftuner_interp::check. It passes the GPT-2 block and the BERT layer at
// T = 2, 37 and 128 with default random inputs, and fails on a lowering that scales the
// layers' float constants (the attention scale, LayerNorm's 1/768, GELU's 0.5) by 1e-3
// (`test-perturb-float-constants`: 6 constants in BERT); 1e-5 is inside single
// precision's own error for these layers (about 3.5e-5 relative) and passes.
// RUN: ftuner-run %examples/bert_layer_dynamic.mlir --shape 0=1x2x768 --check | FileCheck %s
// RUN: ftuner-run %examples/bert_layer_dynamic.mlir --shape 0=1x37x768 --check | FileCheck %s
// RUN: ftuner-run %examples/bert_layer_dynamic.mlir --shape 0=1x128x768 --check | FileCheck %s
// RUN: ftuner-run %examples/gpt2_block_dynamic.mlir --shape 0=1x2x768 --check | FileCheck %s
// RUN: ftuner-run %examples/gpt2_block_dynamic.mlir --shape 0=1x37x768 --check | FileCheck %s
// RUN: ftuner-run %examples/gpt2_block_dynamic.mlir --shape 0=1x128x768 --check | FileCheck %s
// CHECK: check: ok
// RUN: not ftuner-run %examples/bert_layer_dynamic.mlir --shape 0=1x37x768 --check --pass-pipeline='builtin.module(test-perturb-float-constants{relative-ppm=1000},ftuner-cpu-pipeline{target=host})' 2>&1 | FileCheck %s --check-prefix=WRONG
// RUN: not ftuner-run %examples/gpt2_block_dynamic.mlir --shape 0=1x37x768 --check --pass-pipeline='builtin.module(test-perturb-float-constants{relative-ppm=1000},ftuner-cpu-pipeline{target=host})' 2>&1 | FileCheck %s --check-prefix=WRONG
// WRONG: ftuner-run: check failed: result #0: worst element [0, {{[0-9]+}}, {{[0-9]+}}]: {{.*}} vs reference {{.*}} (f64 reference {{.*}}; tolerance {{.*}}: 8 x (the reference's own error {{.*}}))
// RUN: ftuner-run %examples/bert_layer_dynamic.mlir --shape 0=1x37x768 --check --pass-pipeline='builtin.module(test-perturb-float-constants{relative-ppm=10},ftuner-cpu-pipeline{target=host})' | FileCheck %s
// The perturbation pass itself: what it changes.
// RUN: ftuner-opt %examples/bert_layer_dynamic.mlir --pass-pipeline='builtin.module(test-perturb-float-constants{relative-ppm=1000})' --mlir-pass-statistics 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: 6 num-perturbed
