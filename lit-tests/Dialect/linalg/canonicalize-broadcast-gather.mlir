// torch-mlir's dynamic aten.expand: a linalg.generic gathering its source through
// tensor.extract, a dim of size 1 read at 0 (`select(D == 1, 0, index)`), the sizes
// guarded by `index_cast(tensor.dim) < 0`. A size is never negative, so the guards fold;
// where loop k runs D times, `select(D == 1, 0, index k)` is `index k`; a gather of every
// element of a source of the output's sizes is the source. Checked against the module as
// read at a unit dim and a larger one (JIT, canonicalized, against the interpreter).
// RUN: ftuner-opt %s --canonicalize | FileCheck %s
// RUN: ftuner-opt %s --canonicalize --mlir-print-op-generic | %mlir-opt --verify-roundtrip -o /dev/null
// RUN: ftuner-run %s --entry expand --shape 0=1x5x4 --pass-pipeline='builtin.module(canonicalize,cse)' --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry expand --shape 0=3x5x4 --pass-pipeline='builtin.module(canonicalize,cse)' --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry expand --shape 0=3x5x1 --pass-pipeline='builtin.module(canonicalize,cse)' --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry expand --shape 0=1x5x1 --pass-pipeline='builtin.module(canonicalize,cse)' --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry expand --shape 0=0x5x0 --pass-pipeline='builtin.module(canonicalize,cse)' --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry select_only --shape 0=1x1 --pass-pipeline='builtin.module(canonicalize,cse)' --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry select_only --shape 0=3x1 --pass-pipeline='builtin.module(canonicalize,cse)' --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry static_unit --shape 0=1x7 --pass-pipeline='builtin.module(canonicalize,cse)' --check | FileCheck %s --check-prefix=JIT
// RUN: ftuner-run %s --entry broadcast_kept --shape 0=1x4 --shape 1=3x4 --pass-pipeline='builtin.module(canonicalize,cse)' --check | FileCheck %s --check-prefix=JIT
// REQUIRES: mlir-opt
// JIT: check: ok

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// The whole expand is its source: the scaled input, returned as it is.
// CHECK-LABEL: func.func @expand
// CHECK: %[[S:.*]] = linalg.generic
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
// CHECK-NOT: tensor.extract
// CHECK: return %[[S]]
func.func @expand(%x: tensor<?x5x?xf32>) -> tensor<?x5x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c0_i64 = arith.constant 0 : i64
  %c7_i64 = arith.constant 7 : i64
  %two = arith.constant 2.0 : f32
  %d0 = tensor.dim %x, %c0 : tensor<?x5x?xf32>
  %d2 = tensor.dim %x, %c2 : tensor<?x5x?xf32>
  %n0 = arith.index_cast %d0 : index to i64
  %n2 = arith.index_cast %d2 : index to i64
  %neg0 = arith.cmpi slt, %n0, %c0_i64 : i64
  %neg2 = arith.cmpi slt, %n2, %c0_i64 : i64
  %s0 = arith.select %neg0, %c7_i64, %n0 : i64
  %s2 = arith.select %neg2, %c7_i64, %n2 : i64
  %D0 = arith.index_cast %s0 : i64 to index
  %D2 = arith.index_cast %s2 : i64 to index
  %e = tensor.empty(%D0, %D2) : tensor<?x5x?xf32>
  %scaled = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<?x5x?xf32>) outs(%e : tensor<?x5x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %two : f32
    linalg.yield %m : f32
  } -> tensor<?x5x?xf32>
  %ok = arith.cmpi sge, %n0, %c0_i64 : i64
  cf.assert %ok, "unimplemented: dynamic negative broadcast sizes"
  %e2 = tensor.empty(%d0, %d2) : tensor<?x5x?xf32>
  %r = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%e2 : tensor<?x5x?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %u0 = arith.cmpi eq, %D0, %c1 : index
    %i0 = arith.select %u0, %c0, %i : index
    %u2 = arith.cmpi eq, %D2, %c1 : index
    %k0 = arith.select %u2, %c0, %k : index
    %v = tensor.extract %scaled[%i0, %j, %k0] : tensor<?x5x?xf32>
    linalg.yield %v : f32
  } -> tensor<?x5x?xf32>
  return %r : tensor<?x5x?xf32>
}

// A static unit dim indexed by the constant 0 (GPT-2's batch of 1).
// CHECK-LABEL: func.func @static_unit
// CHECK-NOT: linalg.generic
// CHECK: return %arg0
func.func @static_unit(%x: tensor<1x?xf32>) -> tensor<1x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d1 = tensor.dim %x, %c1 : tensor<1x?xf32>
  %e = tensor.empty(%d1) : tensor<1x?xf32>
  %r = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<1x?xf32>) {
  ^bb0(%out: f32):
    %j = linalg.index 1 : index
    %v = tensor.extract %x[%c0, %j] : tensor<1x?xf32>
    linalg.yield %v : f32
  } -> tensor<1x?xf32>
  return %r : tensor<1x?xf32>
}

// A real broadcast stays: the output's dim 0 is another tensor's, not the source's, so
// the select is kept (the source's dim 0 may be 1 where the loop runs 3 times) and so is
// the gather.
// CHECK-LABEL: func.func @broadcast_kept
// CHECK: linalg.generic
// CHECK: arith.select
// CHECK: tensor.extract
func.func @broadcast_kept(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %dx = tensor.dim %x, %c0 : tensor<?x4xf32>
  %dy = tensor.dim %y, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%dy) : tensor<?x4xf32>
  %r = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<?x4xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %u = arith.cmpi eq, %dx, %c1 : index
    %i0 = arith.select %u, %c0, %i : index
    %v = tensor.extract %x[%i0, %j] : tensor<?x4xf32>
    linalg.yield %v : f32
  } -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// A gather in another order (a transpose) is not a copy.
// CHECK-LABEL: func.func @transposed_kept
// CHECK: linalg.generic
// CHECK: tensor.extract %arg0[%{{.*}}, %{{.*}}] : tensor<?x?xf32>
func.func @transposed_kept(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%d0, %d1) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<?x?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %v = tensor.extract %x[%j, %i] : tensor<?x?xf32>
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// A gather into an output of other sizes is not the source (the sizes differ at run
// time: ftuner-run checks the extract's bounds there).
// CHECK-LABEL: func.func @other_sizes_kept
// CHECK: linalg.generic
// CHECK: tensor.extract
func.func @other_sizes_kept(%x: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %v = tensor.extract %x[%i] : tensor<?xf32>
    linalg.yield %v : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// The select of a dim the loop runs over goes; the gather stays, as dim 1 is a real
// broadcast (1 -> 4).
// CHECK-LABEL: func.func @select_only
// CHECK: linalg.generic
// CHECK-NOT: arith.select
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK-NOT: arith.select
// CHECK: tensor.extract %arg0[%[[I]], %c0{{.*}}] : tensor<?x1xf32>
func.func @select_only(%x: tensor<?x1xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x1xf32>
  %e = tensor.empty(%d0) : tensor<?x4xf32>
  %r = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<?x4xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %u = arith.cmpi eq, %d0, %c1 : index
    %i0 = arith.select %u, %c0, %i : index
    %v = tensor.extract %x[%i0, %c0] : tensor<?x1xf32>
    linalg.yield %v : f32
  } -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// A gather over a reduction loop is left as it is (only all-parallel gathers are
// copies by this pattern).
// CHECK-LABEL: func.func @reduction_kept
// CHECK: linalg.generic
// CHECK: tensor.extract
func.func @reduction_kept(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %c0 = arith.constant 0 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x3xf32>
  %e = tensor.empty(%d0) : tensor<?x3xf32>
  %r = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "reduction"]} outs(%e : tensor<?x3xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %v = tensor.extract %x[%i, %j] : tensor<?x3xf32>
    linalg.yield %v : f32
  } -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}
