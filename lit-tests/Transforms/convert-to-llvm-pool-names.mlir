// convert-to-llvm names the pool's entry of an rt.parallel_for callee @body `body_pool`
// unless the input has a function of that name: then the first free `body_pool<k>`
// (here the input's own @body_pool, called directly, stays what it is). Before, the two
// definitions collided ("redefinition of symbol named 'body_pool'"). The JIT agrees with
// the interpreter.
// RUN: ftuner-opt %s --convert-to-llvm | FileCheck %s
// RUN: ftuner-run %s --shape 0=8 --check --threads 2 | FileCheck %s --check-prefix=JIT
// JIT: check: ok

// CHECK-LABEL: sym_name = "main"
// CHECK: "llvm.mlir.addressof"() <{global_name = @body_pool1}>
// CHECK: <{callee = @ftuner_rt_parallel_for,
// CHECK: <{callee = @body_pool,
// CHECK-DAG: sym_name = "body_pool"
// CHECK-DAG: sym_name = "body_pool1"
func.func @main(%a: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  rt.parallel_for @body(%n) args(%a : memref<?xf32>)
  %c1 = arith.constant 1 : index
  func.call @body_pool(%c0, %c1, %a) : (index, index, memref<?xf32>) -> ()
  return
}
func.func private @body(%lo: index, %hi: index, %a: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %lo to %hi step %c1 {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %a[%i] : memref<?xf32>
  }
  return
}
func.func private @body_pool(%lo: index, %hi: index, %a: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %lo to %hi step %c1 {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.addf %x, %one : f32
    memref.store %y, %a[%i] : memref<?xf32>
  }
  return
}
