// convert-to-llvm: an in-bounds vector transfer along a dim that is not the innermost
// (unit-stride) one is one llvm.intr.masked.gather / masked.scatter through a vector of
// lane pointers, `base + lane * stride`, not one scalar access per lane (the NCHW
// convolutions' accumulator tiles: 64 loads, 64 insertelements and their address
// arithmetic each). Static strides give a constant offset vector, dynamic ones a splat
// times the lane numbers. mlir-translate-22 takes the output; the JIT agrees with the
// interpreter.
// RUN: ftuner-opt %s --convert-to-llvm | FileCheck %s
// RUN: ftuner-opt %s --convert-to-llvm | %mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=IR
// RUN: ftuner-run %s --entry columns --shape 0=16x5 --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry columns_dynamic --shape 0=16x7 --check | FileCheck %s --check-prefix=JIT
// REQUIRES: mlir-translate
// JIT: check: ok

// CHECK-LABEL: sym_name = "columns"
// CHECK: llvm.mlir.constant{{.*}}dense<[0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75]> : vector<16xi64>
// CHECK: "llvm.getelementptr"{{.*}}-> vector<16x!llvm.ptr>
// CHECK: "llvm.intr.masked.gather"{{.*}}<{alignment = 4 : i32}> : (vector<16x!llvm.ptr>, vector<16xi1>, vector<16xf32>) -> vector<16xf32>
// CHECK: "llvm.intr.masked.scatter"{{.*}} : (vector<16xf32>, vector<16x!llvm.ptr>, vector<16xi1>) -> ()
// IR: call <16 x float> @llvm.masked.gather.v16f32.v16p0(<16 x ptr> align 4
// IR: call void @llvm.masked.scatter.v16f32.v16p0(<16 x float>
func.func @columns(%a: memref<16x5xf32>) -> memref<16x5xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %pad = arith.constant 0.0 : f32
  %two = arith.constant dense<2.0> : vector<16xf32>
  %out = memref.alloc() : memref<16x5xf32>
  scf.for %j = %c0 to %c5 step %c1 {
    %v = "vector.transfer_read"(%a, %c0, %j, %pad) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 2, 1, 0>, permutation_map = affine_map<(d0, d1) -> (d0)>}> : (memref<16x5xf32>, index, index, f32) -> vector<16xf32>
    %w = arith.mulf %v, %two : vector<16xf32>
    "vector.transfer_write"(%w, %out, %c0, %j) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 1, 2, 0>, permutation_map = affine_map<(d0, d1) -> (d0)>}> : (vector<16xf32>, memref<16x5xf32>, index, index) -> ()
  }
  return %out : memref<16x5xf32>
}

// CHECK-LABEL: sym_name = "columns_dynamic"
// CHECK: llvm.mul{{.*}}vector<16xi64>
// CHECK: "llvm.intr.masked.gather"
func.func @columns_dynamic(%a: memref<16x?xf32>) -> memref<16x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %pad = arith.constant 0.0 : f32
  %n = memref.dim %a, %c1 : memref<16x?xf32>
  %out = memref.alloc(%n) : memref<16x?xf32>
  scf.for %j = %c0 to %n step %c1 {
    %v = "vector.transfer_read"(%a, %c0, %j, %pad) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 2, 1, 0>, permutation_map = affine_map<(d0, d1) -> (d0)>}> : (memref<16x?xf32>, index, index, f32) -> vector<16xf32>
    "vector.transfer_write"(%v, %out, %c0, %j) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 1, 2, 0>, permutation_map = affine_map<(d0, d1) -> (d0)>}> : (vector<16xf32>, memref<16x?xf32>, index, index) -> ()
  }
  return %out : memref<16x?xf32>
}
