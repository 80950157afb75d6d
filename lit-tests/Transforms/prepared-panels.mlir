// A dense layer's weight, prepared once: lower-ukernels packs the prepared (transposed)
// weight into the [N / nr][K][nr] panels its register tiles read, whatever M (no
// run-time choice), and outline-weight-preparation, run again, moves that packing into
// the existing @dense_prepare, whose result becomes the panels; @dense no longer takes
// the unpacked weight. After bufferization, each register tile prefetches the next
// panel's row into L2 (localityHint = 2) while it computes.
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=skylake-avx512})' | FileCheck %s
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=skylake-avx512},bufferize,lower-affine,convert-linalg-to-loops,prefetch-tile-updates)' | FileCheck %s --check-prefix=PF
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(ftuner-cpu-pipeline{target=skylake-avx512})' | ftuner-run --entry=dense --shape 0=5x256 --check --pass-pipeline='builtin.module()' - | FileCheck %s --check-prefix=EXEC

// CHECK: func.func @dense_prepare(%arg0: tensor<512x256xf32>) -> tensor<[[P:[0-9]+]]x256x[[NR:[0-9]+]]xf32>
// CHECK: linalg.transpose
// CHECK: tensor.empty() : tensor<[[P]]x256x[[NR]]xf32>
// CHECK: scf.for
// CHECK: return
// CHECK: func.func @dense(%arg0: tensor<?x256xf32>, %arg1: tensor<[[P]]x256x[[NR]]xf32>)
// CHECK-SAME: ftuner.prepared = {inputs = array<i64: 0>, prepare = @dense_prepare}
// CHECK-NOT: tensor.empty() : tensor<[[P]]x256x[[NR]]xf32>
// CHECK-NOT: linalg.transpose
// CHECK: return

// PF-LABEL: func.func @dense(
// PF: "memref.prefetch"(%arg1, {{.*}}localityHint = 2 : i32}> : (memref<8x256x64xf32>
func.func @dense(%x: tensor<?x256xf32>, %w: tensor<512x256xf32> {ftuner.weight}) -> tensor<?x512xf32> {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : f32
  %d = tensor.dim %x, %c0 : tensor<?x256xf32>
  %e = tensor.empty() : tensor<256x512xf32>
  %t = linalg.transpose ins(%w : tensor<512x256xf32>) outs(%e : tensor<256x512xf32>) permutation = [1, 0]
  %o = tensor.empty(%d) : tensor<?x512xf32>
  %f = linalg.fill ins(%cst : f32) outs(%o : tensor<?x512xf32>) -> tensor<?x512xf32>
  %m = linalg.matmul ins(%x, %t : tensor<?x256xf32>, tensor<256x512xf32>) outs(%f : tensor<?x512xf32>) -> tensor<?x512xf32>
  return %m : tensor<?x512xf32>
}
// EXEC: check: ok

// A constant B is not a weight: nothing would hoist its packing, so it is packed per call
// only where that pays, as any contiguous [k][n] B: when at least one mc block of rows
// reads it (M >= 282 on skylake-avx512), decided at run time; else read in place.
// CHECK-LABEL: func.func @constant_b(
// CHECK-NOT: x256x64xf32>
// CHECK: %[[MANY:.*]] = arith.cmpi sge, %{{.*}}, %c282 : index
// CHECK-NEXT: scf.if %[[MANY]]
// CHECK: tensor.empty() : tensor<8x256x64xf32>
// CHECK: } else {
// CHECK-NOT: x256x64xf32>
// CHECK: return
func.func @constant_b(%x: tensor<?x256xf32>) -> tensor<?x512xf32> {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.0 : f32
  %w = arith.constant dense<0.5> : tensor<256x512xf32>
  %d = tensor.dim %x, %c0 : tensor<?x256xf32>
  %o = tensor.empty(%d) : tensor<?x512xf32>
  %f = linalg.fill ins(%cst : f32) outs(%o : tensor<?x512xf32>) -> tensor<?x512xf32>
  %m = linalg.matmul ins(%x, %w : tensor<?x256xf32>, tensor<256x512xf32>) outs(%f : tensor<?x512xf32>) -> tensor<?x512xf32>
  return %m : tensor<?x512xf32>
}
