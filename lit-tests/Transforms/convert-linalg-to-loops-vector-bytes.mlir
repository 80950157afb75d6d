// convert-linalg-to-loops{vector-bytes=N}: a permuted copy's blocks fill one vector
// register of the target per row. The runtime passes the machine's width (64 bytes with
// AVX-512, 32 with AVX2); 16 x 16 f32 blocks on AVX2 are two registers per row, and the
// network's 32 live rows spill (Zen 3: 192 transposes of 128 x 64, 2.03 -> 0.97 ms).
// RUN: ftuner-opt %s --convert-linalg-to-loops="vector-bytes=32" | FileCheck %s --check-prefix=AVX2
// RUN: ftuner-opt %s --convert-linalg-to-loops | FileCheck %s --check-prefix=AVX512
// RUN: not ftuner-opt %s --convert-linalg-to-loops="vector-bytes=48" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not ftuner-opt %s --convert-linalg-to-loops="vector-bytes=128" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD128
// One f32 per register: the plain nest, no vectors.
// RUN: ftuner-opt %s --convert-linalg-to-loops="vector-bytes=4" | FileCheck %s --check-prefix=ONE
// AVX2-LABEL: func.func @transpose
// AVX2: %[[C8:.*]] = arith.constant 8 : index
// AVX2: scf.for %[[D0:.*]] = %{{.*}} to %{{.*}} step %[[C8]] {
// AVX2: scf.for %[[S0:.*]] = %{{.*}} to %{{.*}} step %[[C8]] {
// AVX2: "vector.transfer_read"(%arg0, %[[D0]], %[[S0]], %{{.*}}) {{.*}} -> vector<8xf32>
// AVX2-COUNT-7: "vector.transfer_read"(%arg0
// AVX2-COUNT-24: "vector.shuffle"({{.*}}> : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// AVX2-NOT: "vector.shuffle"
// AVX2: "vector.transfer_write"(%{{.*}}, %arg1, %[[S0]], %[[D0]]) {{.*}} : (vector<8xf32>, memref<40x?xf32>, index, index) -> ()
// AVX2-COUNT-7: "vector.transfer_write"(%{{.*}}, %arg1
// AVX2-NOT: vector<16xf32>
// AVX512: "vector.transfer_read"(%arg0, {{.*}} -> vector<16xf32>
// AVX512-COUNT-64: "vector.shuffle"
// BAD128: error: convert-linalg-to-loops: vector-bytes=128 is not a power of two from 4 to 64
// ONE-NOT: vector.{{transfer|shuffle}}
// ONE: memref.load %arg0
// ONE-NOT: vector.{{transfer|shuffle}}
// BAD: error: convert-linalg-to-loops: vector-bytes=48 is not a power of two from 4 to 64
func.func @transpose(%a: memref<?x40xf32>, %b: memref<40x?xf32>) {
  linalg.transpose ins(%a : memref<?x40xf32>) outs(%b : memref<40x?xf32>) permutation = [1, 0]
  return
}
