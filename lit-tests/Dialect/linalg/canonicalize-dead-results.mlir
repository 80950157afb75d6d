// A linalg.generic result nothing reads goes, with its output, block argument, map and
// yielded value, when its output is read in the body only on the way to that result:
// torch-mlir's softmax takes the maximum of aten.max.dim and leaves its index unused.
// The rewritten softmax row maximum is checked against the module as read on the JIT.
// RUN: ftuner-opt %s --canonicalize | FileCheck %s
// RUN: ftuner-opt %s --canonicalize --mlir-print-op-generic | %mlir-opt --verify-roundtrip -o /dev/null
// RUN: ftuner-run %s --entry max_and_index --shape 0=3x37 --pass-pipeline='builtin.module(canonicalize,cse)' --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry first_dead --shape 0=3x37 --pass-pipeline='builtin.module(canonicalize,cse)' --check | FileCheck %s --check-prefix=JIT
// REQUIRES: mlir-opt
// JIT: check: ok

#in = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @max_and_index
// CHECK: %[[M:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<?x?xf32>) outs(%{{.*}} : tensor<?xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[V:.*]] = arith.maximumf %[[IN]], %[[OUT]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK-NEXT: } -> tensor<?xf32>
// CHECK: return %[[M]]
func.func @max_and_index(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %lo = arith.constant 0xFF800000 : f32
  %z = arith.constant 0 : i64
  %e = tensor.empty(%n) : tensor<?xf32>
  %m0 = linalg.fill ins(%lo : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %ei = tensor.empty(%n) : tensor<?xi64>
  %i0 = linalg.fill ins(%z : i64) outs(%ei : tensor<?xi64>) -> tensor<?xi64>
  %r:2 = linalg.generic {indexing_maps = [#in, #red, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%m0, %i0 : tensor<?xf32>, tensor<?xi64>) {
  ^bb0(%a: f32, %m: f32, %i: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %v = arith.maximumf %a, %m : f32
    %c = arith.cmpf ogt, %a, %m : f32
    %s = arith.select %c, %ki, %i : i64
    linalg.yield %v, %s : f32, i64
  } -> (tensor<?xf32>, tensor<?xi64>)
  return %r#0 : tensor<?xf32>
}

// The index is read: both results stay.
// CHECK-LABEL: func.func @index_used
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<?xf32>, tensor<?xi64>)
func.func @index_used(%x: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xi64>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %lo = arith.constant 0xFF800000 : f32
  %z = arith.constant 0 : i64
  %e = tensor.empty(%n) : tensor<?xf32>
  %m0 = linalg.fill ins(%lo : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %ei = tensor.empty(%n) : tensor<?xi64>
  %i0 = linalg.fill ins(%z : i64) outs(%ei : tensor<?xi64>) -> tensor<?xi64>
  %r:2 = linalg.generic {indexing_maps = [#in, #red, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%m0, %i0 : tensor<?xf32>, tensor<?xi64>) {
  ^bb0(%a: f32, %m: f32, %i: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %v = arith.maximumf %a, %m : f32
    %c = arith.cmpf ogt, %a, %m : f32
    %s = arith.select %c, %ki, %i : i64
    linalg.yield %v, %s : f32, i64
  } -> (tensor<?xf32>, tensor<?xi64>)
  return %r#0, %r#1 : tensor<?xf32>, tensor<?xi64>
}

// The dead result's output feeds the live one (a maximum that counts how often it moved
// and stops at 3): it stays.
// CHECK-LABEL: func.func @output_feeds_live
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<?xf32>, tensor<?xi64>)
func.func @output_feeds_live(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %lo = arith.constant 0xFF800000 : f32
  %z = arith.constant 0 : i64
  %three = arith.constant 3 : i64
  %one = arith.constant 1 : i64
  %e = tensor.empty(%n) : tensor<?xf32>
  %m0 = linalg.fill ins(%lo : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %ei = tensor.empty(%n) : tensor<?xi64>
  %i0 = linalg.fill ins(%z : i64) outs(%ei : tensor<?xi64>) -> tensor<?xi64>
  %r:2 = linalg.generic {indexing_maps = [#in, #red, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%m0, %i0 : tensor<?xf32>, tensor<?xi64>) {
  ^bb0(%a: f32, %m: f32, %i: i64):
    %room = arith.cmpi slt, %i, %three : i64
    %c = arith.cmpf ogt, %a, %m : f32
    %take = arith.andi %room, %c : i1
    %v = arith.select %take, %a, %m : f32
    %i1 = arith.addi %i, %one : i64
    %s = arith.select %take, %i1, %i : i64
    linalg.yield %v, %s : f32, i64
  } -> (tensor<?xf32>, tensor<?xi64>)
  return %r#0 : tensor<?xf32>
}

// The first result is the dead one (the index is read): it goes, and the maps, block
// arguments and results after it shift down.
// CHECK-LABEL: func.func @first_dead
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<?x?xf32>) outs(%{{.*}} : tensor<?xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[V:.*]] = arith.addf %[[IN]], %[[OUT]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK-NEXT: } -> tensor<?xf32>
// CHECK: return %[[R]]
func.func @first_dead(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %lo = arith.constant 0xFF800000 : f32
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?xf32>
  %m0 = linalg.fill ins(%lo : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %s0 = linalg.fill ins(%z : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %r:2 = linalg.generic {indexing_maps = [#in, #red, #red], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%m0, %s0 : tensor<?xf32>, tensor<?xf32>) {
  ^bb0(%a: f32, %m: f32, %s: f32):
    %v = arith.maximumf %a, %m : f32
    %t = arith.addf %a, %s : f32
    linalg.yield %v, %t : f32, f32
  } -> (tensor<?xf32>, tensor<?xf32>)
  return %r#1 : tensor<?xf32>
}

// The dead output is the only operand that indexes d1 (its extent): it stays.
// CHECK-LABEL: func.func @only_extent
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4x5xf32>)
#d0 = affine_map<(d0, d1) -> (d0)>
func.func @only_extent(%x: tensor<4xf32>, %acc: tensor<4xf32>, %b: tensor<4x5xf32>) -> tensor<4xf32> {
  %r:2 = linalg.generic {indexing_maps = [#d0, #d0, #in], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4xf32>) outs(%acc, %b : tensor<4xf32>, tensor<4x5xf32>) {
  ^bb0(%in: f32, %o: f32, %ob: f32):
    %s = arith.addf %o, %in : f32
    linalg.yield %s, %in : f32, f32
  } -> (tensor<4xf32>, tensor<4x5xf32>)
  return %r#0 : tensor<4xf32>
}
