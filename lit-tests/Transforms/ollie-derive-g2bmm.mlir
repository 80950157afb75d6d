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
// RUN: %python %S/../../tools/gen/band_attention.py --dynamic-seq | diff - %examples/longformer_band_attention_dynamic.mlir
// RUN: %python %S/../../tools/gen/band_attention.py --heads 1 --seq 256 --dim 16 --window 16 > %t.mlir
// The chunk size m is the model's choice; where chunk sizes cost nearly the same, the
// host model's measured clock (which a loaded machine lowers) can tip it, so the checks of
// m pin a built-in hardware model (the JIT runs below use the host's).
// RUN: ftuner-opt %t.mlir --pass-pipeline='builtin.module(ollie-derive{verify=true hw-target=zen4})' --mlir-pass-statistics 2>&1 | FileCheck %s
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
// Three heads on two threads (the head loop outlined onto the pool):
// RUN: %python %S/../../tools/gen/band_attention.py --heads 3 --seq 96 --dim 8 --window 8 > %t.heads.mlir
// RUN: ftuner-run %t.heads.mlir --entry band_scores --threads 2 --shape 0=2x3x96x8 --shape 1=2x3x96x8 --check --pass-pipeline='builtin.module(canonicalize,cse,ollie-derive,convert-ta-to-linalg,canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %t.heads.mlir --entry dilated_band_scores --threads 2 --shape 0=2x3x96x8 --shape 1=2x3x96x8 --check --pass-pipeline='builtin.module(canonicalize,cse,ollie-derive,convert-ta-to-linalg,canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=JIT
//
// The shipped example (12 heads, 1024 positions, W = 64; dilated W = 32, d = 4) takes
// the same derivations; the e-graph stays small:
// RUN: ftuner-opt %examples/longformer_band_attention.mlir --pass-pipeline='builtin.module(ollie-derive{hw-target=zen4})' --mlir-pass-statistics 2>&1 | FileCheck %s --check-prefix=EX
// EX: linalg.batch_matmul ins({{.*}} : tensor<16x64x64xf32>, tensor<16x64x200xf32>)
// The 12 heads' slices run on the thread pool (the loop with the most static iterations):
// EX: } {ftuner.parallel}
// EX: linalg.batch_matmul ins({{.*}} : tensor<32x32x64xf32>, tensor<32x64x96xf32>)
// EX: } {ftuner.parallel}
// EX-DAG: 2 num-matched-g2bmms
// EX-DAG: 27 max-egraph-nodes
//
// A dynamic sequence length: the chunk count is ceil(L / m) at run time; a tensor.empty
// of that length sizes the chunk eOperators (an input that only bounds an iterator), and
// reads past the last row are zeros. Checked on the interpreter (verify=true) and, below,
// compiled at lengths around the chunk size.
// RUN: %python %S/../../tools/gen/band_attention.py --heads 1 --dim 16 --window 16 --dynamic-seq > %t.dyn.mlir
// (m is priced at a nominal 64 rows; zen4 as above.)
// RUN: ftuner-opt %t.dyn.mlir --pass-pipeline='builtin.module(ollie-derive{verify=true hw-target=zen4})' --mlir-pass-statistics 2>&1 | FileCheck %s --check-prefix=DYN
// DYN-NOT: warning
// DYN-LABEL: func.func @band_scores
// DYN: %[[NQ:.*]] = arith.ceildivsi %{{.*}}, %{{.*}} : index
// DYN: %[[SZ:.*]] = tensor.empty(%[[NQ]]) : tensor<?xf32>
// DYN: ta.expr L<g2q:0:dim(%[[SZ]], 0), g2r:0:64, k0:0:16> { %{{.*}}[64 * g2q + g2r, k0] }
// DYN: ta.expr L<g2q:0:dim(%[[SZ]], 0), k0:0:16, g2j:0:96> { %{{.*}}[g2j + 64 * g2q - 16, k0] }
// DYN: linalg.batch_matmul ins({{.*}} : tensor<?x64x16xf32>, tensor<?x16x96xf32>)
// DYN: ta.expr L<i2:0:dim(%arg0, 2), i3:0:33> { %{{.*}}[i2 floordiv 64, i2 mod 64, i3 + i2 mod 64] }
// The dilated one (d = 4) cannot be split by traversal splitting (each residue's row count
// would not be a dim), so the instantiation chunks it per residue p = i mod 4: rows
// 4*(16*q + r) + p, dense windows of 16 + 16 key rows, ceil(L / (4*16)) chunks per residue:
// DYN-LABEL: func.func @dilated_band_scores
// DYN: %[[NQ4:.*]] = arith.ceildivsi %{{.*}}, %c64{{.*}} : index
// DYN: %[[SZ4:.*]] = tensor.empty(%[[NQ4]]) : tensor<?xf32>
// DYN: ta.expr L<g2p:0:4, g2q:0:dim(%[[SZ4]], 0), g2r:0:16, k0:0:16> { %{{.*}}[g2p + 64 * g2q + 4 * g2r, k0] }
// DYN: ta.expr L<g2p:0:4, g2q:0:dim(%[[SZ4]], 0), k0:0:16, g2j:0:32> { %{{.*}}[4 * g2j + g2p + 64 * g2q - 32, k0] }
// DYN: linalg.batch_matmul ins({{.*}} : tensor<?x16x16xf32>, tensor<?x16x32xf32>)
// DYN: ta.expr L<i2:0:dim(%arg0, 2), i3:0:17> { %{{.*}}[i2 mod 4, i2 floordiv 4 floordiv 16, i2 floordiv 4 mod 16, i3 + i2 floordiv 4 mod 16] }
// DYN-DAG: 2 num-derived
// DYN-DAG: 2 num-matched-g2bmms
// DYN-DAG: 0 num-rejected
// RUN: ftuner-run %t.dyn.mlir --entry band_scores --shape 0=2x1x1x16 --shape 1=2x1x1x16 --check --pass-pipeline='builtin.module(canonicalize,cse,ollie-derive,convert-ta-to-linalg,canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %t.dyn.mlir --entry band_scores --shape 0=2x1x64x16 --shape 1=2x1x64x16 --check --pass-pipeline='builtin.module(canonicalize,cse,ollie-derive,convert-ta-to-linalg,canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %t.dyn.mlir --entry band_scores --shape 0=2x1x65x16 --shape 1=2x1x65x16 --check --pass-pipeline='builtin.module(canonicalize,cse,ollie-derive,convert-ta-to-linalg,canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %t.dyn.mlir --entry band_scores --shape 0=1x1x0x16 --shape 1=1x1x0x16 --check --pass-pipeline='builtin.module(canonicalize,cse,ollie-derive,convert-ta-to-linalg,canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %t.dyn.mlir --entry dilated_band_scores --shape 0=2x1x65x16 --shape 1=2x1x65x16 --check --pass-pipeline='builtin.module(canonicalize,cse,ollie-derive,convert-ta-to-linalg,canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %t.dyn.mlir --entry dilated_band_scores --shape 0=2x1x37x16 --shape 1=2x1x37x16 --check --pass-pipeline='builtin.module(canonicalize,cse,ollie-derive,convert-ta-to-linalg,canonicalize,cse,patch-ukernels{target=host},lower-ukernels,canonicalize,cse)' | FileCheck %s --check-prefix=JIT
