// linalg-fuse-elementwise-ops: an elementwise linalg.generic producer with one use, read
// by another generic through a permutation of all its loops, is computed inside it.
// RUN: ftuner-opt %s --split-input-file --linalg-fuse-elementwise-ops | FileCheck %s
// RUN: ftuner-opt %s --split-input-file --linalg-fuse-elementwise-ops --mlir-print-op-generic | %mlir-opt --split-input-file > /dev/null
// REQUIRES: mlir-opt
// RUN: ftuner-run %s --entry bn_relu --shape 0=2x4x3x3 --check --pass-pipeline='builtin.module(linalg-fuse-elementwise-ops)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry transposed --check --pass-pipeline='builtin.module(linalg-fuse-elementwise-ops)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry index --check --pass-pipeline='builtin.module(linalg-fuse-elementwise-ops)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry splat --shape 0=3x5 --shape 1=3x5 --shape 2=3x1 --check --pass-pipeline='builtin.module(linalg-fuse-elementwise-ops)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry splat_kept --check --pass-pipeline='builtin.module(linalg-fuse-elementwise-ops)' | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry splat_kept --check | FileCheck %s --check-prefix=JIT
// JIT: check: ok (every result matches the module as read)
// The BERT layer as exported (LayerNorm in f64, GELU, softmax pieces): fused, then patched
// with uKernels (which still absorb their epilogues), it computes what the layer as read does.
// RUN: ftuner-run %examples/bert_layer_dynamic.mlir --shape 0=1x19x768 --pass-pipeline='builtin.module(canonicalize,cse,linalg-fuse-elementwise-ops,patch-ukernels{target=zen4},lower-ukernels,canonicalize,cse)' --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-opt %examples/bert_layer_dynamic.mlir --pass-pipeline='builtin.module(canonicalize,cse,linalg-fuse-elementwise-ops,patch-ukernels{target=zen4})' --mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=BERT
// BERT: (S) 21 num-fused
// BERT: (S) 9 num-epilogue-ops
//
// The DCGAN generator as torch-mlir exports it: each BatchNorm (subtract, scale, scale,
// shift) and its ReLU become one op, and each variance's epsilon-add its rsqrt: 4 x (4 + 1).
// RUN: ftuner-opt %examples/dcgan_generator.mlir --pass-pipeline='builtin.module(canonicalize,cse,linalg-fuse-elementwise-ops)' --mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// STATS: LinalgElementwiseOpFusion
// STATS-NEXT: (S) 20 num-fused

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>

// BatchNorm then ReLU: four ops become one, reading x and the three parameters; the
// bodies run in order.
// CHECK-LABEL: func.func @bn_relu
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %arg1, %arg2, %arg3 : tensor<?x4x3x3xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>)
// CHECK: arith.subf
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: arith.cmpf ugt
// CHECK-NEXT: arith.select
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @bn_relu(%x: tensor<?x4x3x3xf32>, %mean: tensor<4x1x1xf32>, %scale: tensor<4x1x1xf32>, %shift: tensor<4x1x1xf32>) -> tensor<?x4x3x3xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4x3x3xf32>
  %e = tensor.empty(%n) : tensor<?x4x3x3xf32>
  %0 = linalg.generic {indexing_maps = [#id4, #ch, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %mean : tensor<?x4x3x3xf32>, tensor<4x1x1xf32>) outs(%e : tensor<?x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<?x4x3x3xf32>
  %1 = linalg.generic {indexing_maps = [#id4, #ch, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%0, %scale : tensor<?x4x3x3xf32>, tensor<4x1x1xf32>) outs(%e : tensor<?x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<?x4x3x3xf32>
  %2 = linalg.generic {indexing_maps = [#id4, #ch, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1, %shift : tensor<?x4x3x3xf32>, tensor<4x1x1xf32>) outs(%e : tensor<?x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<?x4x3x3xf32>
  %3 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2 : tensor<?x4x3x3xf32>) outs(%e : tensor<?x4x3x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.cmpf ugt, %a, %zero : f32
    %r = arith.select %p, %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x4x3x3xf32>
  return %3 : tensor<?x4x3x3xf32>
}

// -----

// A producer writing through a permutation (a transpose that also scales): the consumer
// reads x transposed directly.
// CHECK-DAG: #[[T:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[I:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @transposed
// CHECK: linalg.generic {indexing_maps = [#[[T]], #[[I]], #[[I]]], {{.*}} ins(%arg0, %arg1 : tensor<3x5xf32>, tensor<5x3xf32>)
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NOT: linalg.generic
func.func @transposed(%x: tensor<3x5xf32>, %y: tensor<5x3xf32>) -> tensor<5x3xf32> {
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<5x3xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<3x5xf32>) outs(%e : tensor<5x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %two : f32
    linalg.yield %r : f32
  } -> tensor<5x3xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t, %y : tensor<5x3xf32>, tensor<5x3xf32>) outs(%e : tensor<5x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<5x3xf32>
  return %s : tensor<5x3xf32>
}

// -----

// The producer's linalg.index follows its loop into the consumer: the consumer reads the
// producer's result transposed, so the producer's loop 0 is the consumer's loop 1.
// CHECK-LABEL: func.func @index
// CHECK: linalg.generic
// CHECK: linalg.index 1
// CHECK-NOT: linalg.index 0
// CHECK: linalg.yield
func.func @index(%y: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %e = tensor.empty() : tensor<6x4xf32>
  %o = tensor.empty() : tensor<4x6xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<6x4xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %i64 = arith.index_cast %i : index to i64
    %f = arith.sitofp %i64 : i64 to f32
    linalg.yield %f : f32
  } -> tensor<6x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%p, %y : tensor<6x4xf32>, tensor<4x6xf32>) outs(%o : tensor<4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  return %s : tensor<4x6xf32>
}

// -----

// Left alone: a producer with two uses (fusing would compute it twice), a consumer that
// broadcasts the producer's result (each element read many times), a producer that reads
// its output (an accumulation), a producer with a reduction loop.
// CHECK-LABEL: func.func @not_fused
// CHECK-COUNT-8: linalg.generic
// CHECK-NOT: linalg.generic
#v = affine_map<(d0) -> (d0)>
func.func @not_fused(%x: tensor<4xf32>, %m: tensor<3x4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %e2 = tensor.empty() : tensor<3x4xf32>
  %twice = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %u1 = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%twice : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %p2 = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %bc = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%p2 : tensor<4xf32>) outs(%e2 : tensor<3x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<3x4xf32>
  %acc = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%x : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %au = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%acc : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %cst0 = arith.constant 0.0 : f32
  %z = linalg.fill ins(%cst0 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%m : tensor<3x4xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %neg = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%sum : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %twice, %u1, %bc, %au, %neg : tensor<4xf32>, tensor<4xf32>, tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A splat (a 0-d constant broadcast: the zeros torch-mlir's masked softmax selects,
// shared by every layer once CSE merges them) is fused into each consumer, its value
// recomputed there; it goes with the last one.
// CHECK-LABEL: func.func @splat
// CHECK-NOT: linalg.generic
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%cst{{.*}}, %arg0 : tensor<f32>, tensor<?x5xf32>)
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%arg2, %cst{{.*}}, %arg1 : tensor<?x1xi1>, tensor<f32>, tensor<?x5xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[A]], %[[B]]
#s0 = affine_map<(d0, d1) -> ()>
#s2 = affine_map<(d0, d1) -> (d0, d1)>
#s1 = affine_map<(d0, d1) -> (d0, 0)>
func.func @splat(%x: tensor<?x5xf32>, %y: tensor<?x5xf32>, %m: tensor<?x1xi1>) -> (tensor<?x5xf32>, tensor<?x5xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<2.5> : tensor<f32>
  %d = tensor.dim %x, %c0 : tensor<?x5xf32>
  %e = tensor.empty(%d) : tensor<?x5xf32>
  %z = linalg.generic {indexing_maps = [#s0, #s2], iterator_types = ["parallel", "parallel"]} ins(%zero : tensor<f32>) outs(%e : tensor<?x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<?x5xf32>
  %u = linalg.generic {indexing_maps = [#s2, #s2, #s2], iterator_types = ["parallel", "parallel"]} ins(%z, %x : tensor<?x5xf32>, tensor<?x5xf32>) outs(%e : tensor<?x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<?x5xf32>
  %v = linalg.generic {indexing_maps = [#s1, #s2, #s2, #s2], iterator_types = ["parallel", "parallel"]} ins(%m, %z, %y : tensor<?x1xi1>, tensor<?x5xf32>, tensor<?x5xf32>) outs(%e : tensor<?x5xf32>) {
  ^bb0(%c: i1, %a: f32, %b: f32, %o: f32):
    %r = arith.select %c, %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<?x5xf32>
  return %u, %v : tensor<?x5xf32>, tensor<?x5xf32>
}

// -----

// A splat stays where fusing it would leave a loop unindexed (the row sum's reduction
// loop is read only through it), and a splat that computes (the square) is not copied
// into its two consumers; the add takes the broadcast.
// CHECK-LABEL: func.func @splat_kept
// CHECK: %[[Z:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<f32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: linalg.yield
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<f32>)
// CHECK: arith.mulf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[Z]] : tensor<4x5xf32>)
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<f32>, tensor<4x5xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[SQ]], %[[SQ]] : tensor<4x5xf32>, tensor<4x5xf32>)
#z2 = affine_map<(d0, d1) -> ()>
#i2 = affine_map<(d0, d1) -> (d0, d1)>
#r2 = affine_map<(d0, d1) -> (d0)>
func.func @splat_kept(%s: tensor<f32>, %x: tensor<4x5xf32>) -> (tensor<4xf32>, tensor<4x5xf32>, tensor<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %er = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %z = linalg.generic {indexing_maps = [#z2, #i2], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<f32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x5xf32>
  %sq = linalg.generic {indexing_maps = [#z2, #i2], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<f32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x5xf32>
  %sum = linalg.generic {indexing_maps = [#i2, #r2], iterator_types = ["parallel", "reduction"]} ins(%z : tensor<4x5xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %u = linalg.generic {indexing_maps = [#i2, #i2, #i2], iterator_types = ["parallel", "parallel"]} ins(%z, %x : tensor<4x5xf32>, tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x5xf32>
  %v = linalg.generic {indexing_maps = [#i2, #i2, #i2], iterator_types = ["parallel", "parallel"]} ins(%sq, %sq : tensor<4x5xf32>, tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x5xf32>
  return %sum, %u, %v : tensor<4xf32>, tensor<4x5xf32>, tensor<4x5xf32>
}

// -----

// Left alone: a producer that loads from a buffer, which the program writes before the
// consumer runs (the producer must read the old value).
// CHECK-LABEL: func.func @reads_buffer
// CHECK: linalg.generic
// CHECK: memref.store
// CHECK: linalg.generic
#w = affine_map<(d0) -> (d0)>
func.func @reads_buffer(%x: tensor<4xf32>, %buf: memref<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %p = linalg.generic {indexing_maps = [#w, #w], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %b = memref.load %buf[%i] : memref<4xf32>
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  memref.store %one, %buf[%c0] : memref<4xf32>
  %c = linalg.generic {indexing_maps = [#w, #w], iterator_types = ["parallel"]} ins(%p : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %c : tensor<4xf32>
}
