// torch-mlir's masked softmax tests whether a row is all -inf with an i1 tensor the size
// of the scores and an and-reduction over it; the row's maximumf (computed anyway, init
// -inf) is -inf exactly then (a NaN makes both false), so the and-reduction becomes a
// comparison of the maximum. Checked against the module as read on rows that are all
// -inf, -inf with one NaN, partly -inf, and ordinary, and on empty rows (the row test is
// a result too: JIT, canonicalized). A repeated dim in the output map is left alone.
// RUN: ftuner-opt %s --canonicalize --cse | FileCheck %s
// RUN: ftuner-opt %s --canonicalize --mlir-print-op-generic | %mlir-opt --verify-roundtrip -o /dev/null
// RUN: ftuner-run %s --entry safe_softmax --shape 0=5x7 --pass-pipeline='builtin.module(canonicalize,cse)' --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry safe_softmax --shape 0=5x0 --pass-pipeline='builtin.module(canonicalize,cse)' --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry maxnum_kept --shape 0=5x7 --pass-pipeline='builtin.module(canonicalize,cse)' --check | FileCheck %s --check-prefix=JIT
// REQUIRES: mlir-opt
// JIT: check: ok

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#keep = affine_map<(d0, d1) -> (d0, 0)>
#r1 = affine_map<(d1) -> (d1)>

// CHECK-LABEL: func.func @safe_softmax
// CHECK-NOT: arith.andi
// CHECK: %[[M:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK-NOT: arith.andi
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel"]} ins(%[[M]] : tensor<?xf32>) outs(%{{.*}} : tensor<?x1xi1>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: i1):
// CHECK-NEXT: %[[T:.*]] = arith.cmpf oeq, %[[IN]], %{{.*}} : f32
// CHECK-NEXT: linalg.yield %[[T]] : i1
// CHECK-NOT: arith.andi
func.func @safe_softmax(%a: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x1xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ninf = arith.constant 0xFF800000 : f32
  %ninf64 = arith.constant 0xFFF0000000000000 : f64
  %zero = arith.constant 0.0 : f32
  %true = arith.constant true
  %n = tensor.dim %a, %c0 : tensor<?x?xf32>
  %k = tensor.dim %a, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%n, %k) : tensor<?x?xf32>
  // Row 0 all -inf, row 1 -inf but one NaN, row 2 -inf in its first half.
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %r0 = arith.cmpi eq, %i, %c0 : index
    %r1 = arith.cmpi eq, %i, %c1 : index
    %r2 = arith.cmpi eq, %i, %c2 : index
    %j0 = arith.cmpi eq, %j, %c0 : index
    %half = arith.divui %k, %c2 : index
    %lo = arith.cmpi ult, %j, %half : index
    %nan = arith.divf %zero, %zero : f32
    %v1 = arith.select %j0, %nan, %ninf : f32
    %v2 = arith.select %lo, %ninf, %in : f32
    %s2 = arith.select %r2, %v2, %in : f32
    %s1 = arith.select %r1, %v1, %s2 : f32
    %s0 = arith.select %r0, %ninf, %s1 : f32
    linalg.yield %s0 : f32
  } -> tensor<?x?xf32>
  %er = tensor.empty(%n) : tensor<?xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<?xf32>) -> tensor<?xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%fm : tensor<?xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.maximumf %in, %o : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %m : tensor<?x?xf32>, tensor<?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%in: f32, %mx: f32, %o: f32):
    %d = arith.subf %in, %mx : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%er : tensor<?xf32>) -> tensor<?xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%ex : tensor<?x?xf32>) outs(%fz : tensor<?xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.addf %in, %o : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %eb = tensor.empty(%n, %k) : tensor<?x?xi1>
  %isinf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x?xf32>) outs(%eb : tensor<?x?xi1>) {
  ^bb0(%in: f32, %o: i1):
    %w = arith.extf %in : f32 to f64
    %t = arith.cmpf oeq, %w, %ninf64 : f64
    linalg.yield %t : i1
  } -> tensor<?x?xi1>
  %ek = tensor.empty(%n) : tensor<?x1xi1>
  %ft = linalg.fill ins(%true : i1) outs(%ek : tensor<?x1xi1>) -> tensor<?x1xi1>
  %all = linalg.generic {indexing_maps = [#id, #keep], iterator_types = ["parallel", "reduction"]} ins(%isinf : tensor<?x?xi1>) outs(%ft : tensor<?x1xi1>) {
  ^bb0(%in: i1, %o: i1):
    %r = arith.andi %in, %o : i1
    linalg.yield %r : i1
  } -> tensor<?x1xi1>
  %p = linalg.generic {indexing_maps = [#keep, #id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%all, %ex, %sum : tensor<?x1xi1>, tensor<?x?xf32>, tensor<?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%c: i1, %v: f32, %s: f32, %o: f32):
    %q = arith.divf %v, %s : f32
    %r = arith.select %c, %zero, %q : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  return %p, %all : tensor<?x?xf32>, tensor<?x1xi1>
}

// A maxnumf maximum ignores NaN (a row of -inf and one NaN has maximum -inf, yet is not
// all -inf): the and-reduction stays.
// CHECK-LABEL: func.func @maxnum_kept
// CHECK: arith.maxnumf
// CHECK: arith.andi
func.func @maxnum_kept(%a: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?x1xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %true = arith.constant true
  %n = tensor.dim %a, %c0 : tensor<?x?xf32>
  %k = tensor.dim %a, %c1 : tensor<?x?xf32>
  %er = tensor.empty(%n) : tensor<?xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<?xf32>) -> tensor<?xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<?x?xf32>) outs(%fm : tensor<?xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.maxnumf %in, %o : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %eb = tensor.empty(%n, %k) : tensor<?x?xi1>
  %isinf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<?x?xf32>) outs(%eb : tensor<?x?xi1>) {
  ^bb0(%in: f32, %o: i1):
    %t = arith.cmpf oeq, %in, %ninf : f32
    linalg.yield %t : i1
  } -> tensor<?x?xi1>
  %ek = tensor.empty(%n) : tensor<?x1xi1>
  %ft = linalg.fill ins(%true : i1) outs(%ek : tensor<?x1xi1>) -> tensor<?x1xi1>
  %all = linalg.generic {indexing_maps = [#id, #keep], iterator_types = ["parallel", "reduction"]} ins(%isinf : tensor<?x?xi1>) outs(%ft : tensor<?x1xi1>) {
  ^bb0(%in: i1, %o: i1):
    %r = arith.andi %in, %o : i1
    linalg.yield %r : i1
  } -> tensor<?x1xi1>
  return %m, %all : tensor<?xf32>, tensor<?x1xi1>
}

// CHECK-LABEL: func.func @repeated_dim_kept
// CHECK: arith.andi
#diag = affine_map<(d0, d1) -> (d0, d0)>
func.func @repeated_dim_kept(%a: tensor<4x6xf32>) -> (tensor<4xf32>, tensor<4x4xi1>) {
  %ninf = arith.constant 0xFF800000 : f32
  %true = arith.constant true
  %er = tensor.empty() : tensor<4xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<4x6xf32>) outs(%fm : tensor<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.maximumf %in, %o : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %eb = tensor.empty() : tensor<4x6xi1>
  %isinf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x6xf32>) outs(%eb : tensor<4x6xi1>) {
  ^bb0(%in: f32, %o: i1):
    %t = arith.cmpf oeq, %in, %ninf : f32
    linalg.yield %t : i1
  } -> tensor<4x6xi1>
  %ek = tensor.empty() : tensor<4x4xi1>
  %ft = linalg.fill ins(%true : i1) outs(%ek : tensor<4x4xi1>) -> tensor<4x4xi1>
  %all = linalg.generic {indexing_maps = [#id, #diag], iterator_types = ["parallel", "reduction"]} ins(%isinf : tensor<4x6xi1>) outs(%ft : tensor<4x4xi1>) {
  ^bb0(%in: i1, %o: i1):
    %r = arith.andi %in, %o : i1
    linalg.yield %r : i1
  } -> tensor<4x4xi1>
  return %m, %all : tensor<4xf32>, tensor<4x4xi1>
}
