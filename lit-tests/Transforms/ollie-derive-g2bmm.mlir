// Banded attention (Longformer's sliding window) → G2BMM. tools/gen/band_attention.py
// writes the scores as a tensor.pad of the keys and a mul-add linalg.generic reading them
// at i + d*w; ollie-derive fuses the padding, matches the product to a G2BMM
// (`L<b, h, i, w> Sum<k> { Q[b, h, i, k] * K[b, h, i + d*w - d*W, k] }`) and instantiates it
// as sliding chunks: m-row chunks of Q (a reshape where m divides the rows, else a
// gather), a gather of the m + d*(2W) key rows each chunk's band touches (transposed), one
// batch_matmul, and the band read back; m is the chunk the hardware model prices cheapest.
// The batch iterators both operands read plainly (batch, head) are loops around it.
// The dilated product (d = 4) is first derived by traversal splitting,
// i → (i floordiv 4, i mod 4): per residue p = i mod 4 the band is dense (d = 1) over rows
// 4*i' + p, so the chunks multiply 24 + 16 key rows instead of 72 + 64.
// RUN: %python %S/../../tools/gen/band_attention.py | diff - %examples/longformer_band_attention.mlir
// RUN: %python %S/../../tools/gen/band_attention.py --heads 1 --seq 256 --dim 16 --window 16 > %t.mlir
// RUN: ftuner-opt %t.mlir --pass-pipeline='builtin.module(ollie-derive{verify=true})' --mlir-pass-statistics 2>&1 | FileCheck %s
// CHECK-NOT: warning
// CHECK-LABEL: func.func @band_scores
// CHECK-NOT: linalg.generic
// One (batch, head) slice at a time, so the chunk products stay in cache:
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[Q:.*]] = tensor.extract_slice %arg0[%[[B]], %[[H]], 0, 0] [1, 1, 256, 16] [1, 1, 1, 1] : tensor<?x1x256x16xf32> to tensor<256x16xf32>
// CHECK: %[[K:.*]] = tensor.extract_slice %arg1[%[[B]], %[[H]], 0, 0] [1, 1, 256, 16] [1, 1, 1, 1] : tensor<?x1x256x16xf32> to tensor<256x16xf32>
// The chunks of Q are a reshape (64 divides 256), the key windows a gather:
// CHECK: tensor.expand_shape %[[Q]] {{\[}}[0, 1], [2]] output_shape [4, 64, 16] : tensor<256x16xf32> into tensor<4x64x16xf32>
// CHECK: ta.expr L<g2q:0:4, k0:0:16, g2j:0:96> { %[[K]][g2j + 64 * g2q - 16, k0] }
// CHECK: linalg.batch_matmul ins({{.*}} : tensor<4x64x16xf32>, tensor<4x16x96xf32>)
// CHECK: ta.expr L<i2:0:256, i3:0:33> { %{{.*}}[i2 floordiv 64, i2 mod 64, i3 + i2 mod 64] }
// CHECK: tensor.insert_slice {{.*}}[%[[B]], %[[H]], 0, 0] [1, 1, 256, 33]
// CHECK-LABEL: func.func @dilated_band_scores
// CHECK-NOT: linalg.generic
// CHECK: ta.expr L<i3:0:4, g2q:0:2, g2r:0:32, k0:0:16> { %{{.*}}[128 * g2q + 4 * g2r + i3, k0] }
// CHECK: ta.expr L<i3:0:4, g2q:0:2, k0:0:16, g2j:0:48> { %{{.*}}[4 * g2j + 128 * g2q + i3 - 32, k0] }
// CHECK: linalg.batch_matmul ins({{.*}} : tensor<8x32x16xf32>, tensor<8x16x48xf32>)
// CHECK: ta.expr L<i2:0:64, i3:0:4, i4:0:17> { %{{.*}}[i3, i2 floordiv 32, i2 mod 32, i4 + i2 mod 32] }
// CHECK: ta.expr L<{{.*}}i2:0:256, i3:0:17> { %{{.*}}[i0, i1, i2 floordiv 4, i2 mod 4, i3] }
// CHECK: OllieDerive
// CHECK-DAG: 2 num-derived
// CHECK-DAG: 2 num-matched-g2bmms
// CHECK-DAG: 0 num-rejected
//
// Compiled to the JIT, the derived functions agree with the module as read (interpreter):
// RUN: ftuner-run %t.mlir --entry band_scores --shape 0=2x1x256x16 --shape 1=2x1x256x16 --check --pass-pipeline='builtin.module(canonicalize,cse,ollie-derive,convert-ta-to-linalg,canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %t.mlir --entry dilated_band_scores --shape 0=2x1x256x16 --shape 1=2x1x256x16 --check --pass-pipeline='builtin.module(canonicalize,cse,ollie-derive,convert-ta-to-linalg,canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=JIT
// JIT: check: ok
//
// The shipped example (12 heads, 1024 positions, W = 64; dilated W = 32, d = 4) takes
// the same derivations; the e-graph stays small:
// RUN: ftuner-opt %examples/longformer_band_attention.mlir --pass-pipeline='builtin.module(ollie-derive)' --mlir-pass-statistics 2>&1 | FileCheck %s --check-prefix=EX
// EX: linalg.batch_matmul ins({{.*}} : tensor<8x128x64xf32>, tensor<8x64x264xf32>)
// EX: linalg.batch_matmul ins({{.*}} : tensor<16x64x64xf32>, tensor<16x64x136xf32>)
// EX-DAG: 2 num-matched-g2bmms
// EX-DAG: 27 max-egraph-nodes
//
// Bad input: a banded product whose rows are dynamic stays as it is (the chunk count
// would be a run-time value); no error, no derivation.
// RUN: %python %S/../../tools/gen/band_attention.py --heads 1 --dim 16 --window 16 --dynamic-seq > %t.dyn.mlir
// RUN: ftuner-opt %t.dyn.mlir --pass-pipeline='builtin.module(ollie-derive)' --mlir-pass-statistics 2>&1 | FileCheck %s --check-prefix=DYN
// DYN-NOT: batch_matmul
// DYN: 0 num-derived
// DYN: 2 num-kept
// And it runs as loops, correctly (seq 37):
// RUN: ftuner-run %t.dyn.mlir --entry dilated_band_scores --shape 0=2x1x37x16 --shape 1=2x1x37x16 --check --pass-pipeline='builtin.module(canonicalize,cse,ollie-derive,convert-ta-to-linalg,canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=JIT
