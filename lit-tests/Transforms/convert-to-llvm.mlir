// convert-to-llvm: buffers, loops and vectors to the llvm dialect with MLIR's memref
// descriptor ABI; upstream's translation to LLVM IR accepts the result.
// RUN: ftuner-opt %s --convert-to-llvm | FileCheck %s
// RUN: ftuner-opt %s --convert-to-llvm | %mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=IR
// REQUIRES: mlir-translate

// Each memref argument is passed as its descriptor fields; the descriptor is rebuilt.
// CHECK: "llvm.func"() <{function_type = !llvm.func<void (ptr, ptr, i64, i64, i64, i64, i64, ptr, ptr, i64, i64, i64, i64, i64)>, sym_name = "tile"}>
// CHECK: ^bb0(%[[A0:.*]]: !llvm.ptr, %[[A1:.*]]: !llvm.ptr, %{{.*}}: i64,
// CHECK: "llvm.mlir.undef"() : () -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// The loop: a header with the induction variable, a compare, the body, the latch.
// CHECK: "llvm.br"(%{{.*}})[^[[H:bb[0-9]+]]]
// CHECK: ^[[H]](%[[IV:.*]]: i64):
// CHECK: "llvm.icmp"(%[[IV]], %{{.*}}) <{predicate = 2 : i64}>
// CHECK: "llvm.cond_br"
// A contiguous vector read is one vector load through the aligned pointer.
// CHECK: "llvm.getelementptr"
// CHECK: "llvm.load"(%{{.*}}) <{alignment = 4 : i64}> : (!llvm.ptr) -> vector<16xf32>
// CHECK: "llvm.intr.fma"
// CHECK: "llvm.store"(%{{.*}}, %{{.*}}) <{alignment = 4 : i64}> : (vector<16xf32>, !llvm.ptr) -> ()
// The C interface takes descriptors by pointer; it only moves them, unoptimized.
// CHECK: passthrough = ["noinline", "optnone"], sym_name = "_mlir_ciface_tile"
// IR: define void @tile(ptr %0, ptr %1, i64 %2, i64 %3, i64 %4, i64 %5, i64 %6, ptr %7,
// IR: phi i64
// IR: load <16 x float>, ptr %{{.*}}, align 4
// IR: call <16 x float> @llvm.fma.v16f32(
// IR: define void @_mlir_ciface_tile(ptr %0, ptr %1)
func.func @tile(%a: memref<?x16xf32>, %c: memref<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %pad = arith.constant 0.0 : f32
  %n = memref.dim %a, %c0 : memref<?x16xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = "vector.transfer_read"(%a, %i, %c0, %pad) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 2, 1, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (memref<?x16xf32>, index, index, f32) -> vector<16xf32>
    %y = "vector.transfer_read"(%c, %i, %c0, %pad) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 2, 1, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (memref<?x16xf32>, index, index, f32) -> vector<16xf32>
    %z = vector.fma %x, %x, %y : vector<16xf32>
    "vector.transfer_write"(%z, %c, %i, %c0) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 1, 2, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (vector<16xf32>, memref<?x16xf32>, index, index) -> ()
  }
  return
}

// A call passes each memref as its descriptor fields.
// CHECK: sym_name = "caller"
// CHECK: "llvm.call"(%{{.*}}) <{callee = @tile, op_bundle_sizes = array<i32>, operandSegmentSizes = array<i32: 14, 0>}> : (!llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64) -> ()
// IR: define void @caller(
// IR: call void @tile(ptr
func.func @caller(%a: memref<?x16xf32>) {
  call @tile(%a, %a) : (memref<?x16xf32>, memref<?x16xf32>) -> ()
  return
}
