// bufferize: tensors become memrefs; destination-passing writes go in place when no read
// of the old value can follow, else into a copy; constants become memref.globals.
// RUN: ftuner-opt %s --bufferize --split-input-file | FileCheck %s
// RUN: ftuner-opt %s --bufferize --split-input-file --mlir-print-op-generic | %mlir-opt --split-input-file > /dev/null
// REQUIRES: mlir-opt
// Pads (border-only and whole fills, batch 0 included) against the interpreter:
// RUN: ftuner-run %S/Inputs/pads.mlir --entry=border --shape 0=2x3x4x5 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/two_outs.mlir --entry=two --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/pads.mlir --entry=border --shape 0=0x3x4x5 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/pads.mlir --entry=corners --shape 0=3x4 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/pads.mlir --entry=nhwc --shape 0=2x4x5x3 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/pads.mlir --entry=dynamic --shape 0=3x4 --check | FileCheck %s --check-prefix=RUNOK
// RUN: ftuner-run %S/Inputs/pads.mlir --entry=unpadded_mismatch --shape 0=2x4 --check | FileCheck %s --check-prefix=RUNOK
// RUN: not ftuner-run %S/Inputs/pads.mlir --entry=unpadded_mismatch --shape 0=1000x4 2>&1 | FileCheck %s --check-prefix=MISMATCH
// MISMATCH: error: {{.*}}'tensor.pad' op {{.*}}negative padding, or a padded size that is not the result's
// RUN: ftuner-run %S/Inputs/pads.mlir --entry=dynamic_result --shape 0=4x4 --check | FileCheck %s --check-prefix=RUNOK
// RUNOK: check: ok

// A tile loop: the matching extract_slice / insert_slice pair writes the accumulator in
// place; no iter_args, no copy, the result is returned without one.
// CHECK-LABEL: func.func @accumulate(%arg0: memref<?x8xf32>, %arg1: memref<8x16xf32>) -> memref<?x16xf32>
// CHECK: %[[ACC:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x16xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[ACC]] : memref<?x16xf32>)
// CHECK: scf.for %[[I:.*]] = %c0 to %{{.*}} step %c4 {
// CHECK: cf.assert %{{.*}}, "'tensor.extract_slice' op at {{.*}}: the slice leaves its tensor"
// CHECK: %[[A:.*]] = memref.subview %arg0[%[[I]], 0] [4, 8] [1, 1] : memref<?x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
// CHECK: %[[C:.*]] = memref.subview %[[ACC]][%[[I]], 0] [4, 16] [1, 1] : memref<?x16xf32> to memref<4x16xf32, strided<[16, 1], offset: ?>>
// CHECK: linalg.matmul ins(%[[A]], %arg1 : {{.*}}) outs(%[[C]] : memref<4x16xf32, strided<[16, 1], offset: ?>>)
// The slices' offsets are run-time values (a tile of 4 rows leaves %a when its rows are
// not a multiple of 4): each is checked before it is used.
// CHECK: cf.assert %{{.*}}, "'tensor.insert_slice' op at {{.*}}bufferize.mlir:{{[0-9]+}}:{{[0-9]+}}: the slice leaves its tensor"
// CHECK-NEXT: }
// CHECK-NOT: memref.copy
// CHECK: return %[[ACC]] : memref<?x16xf32>
func.func @accumulate(%a: tensor<?x8xf32>, %b: tensor<8x16xf32>) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%m) : tensor<?x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x16xf32>) -> tensor<?x16xf32>
  %r = scf.for %i = %c0 to %m step %c4 iter_args(%acc = %f) -> (tensor<?x16xf32>) {
    %as = tensor.extract_slice %a[%i, 0] [4, 8] [1, 1] : tensor<?x8xf32> to tensor<4x8xf32>
    %cs = tensor.extract_slice %acc[%i, 0] [4, 16] [1, 1] : tensor<?x16xf32> to tensor<4x16xf32>
    %mm = linalg.matmul ins(%as, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%cs : tensor<4x16xf32>) -> tensor<4x16xf32>
    %ins = tensor.insert_slice %mm into %acc[%i, 0] [4, 16] [1, 1] : tensor<4x16xf32> into tensor<?x16xf32>
    scf.yield %ins : tensor<?x16xf32>
  }
  return %r : tensor<?x16xf32>
}

// -----

// Arguments are read-only and the old value is returned too: the insert goes into a copy,
// and each result is a buffer the caller owns.
// CHECK-LABEL: func.func @conflict(%arg0: memref<4xf32>, %arg1: f32) -> (memref<4xf32>, memref<4xf32>)
// CHECK: %[[W:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK: memref.copy %arg0, %[[W]]
// CHECK: memref.store %arg1, %[[W]][%c1] : memref<4xf32>
// CHECK: %[[R:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK: memref.copy %arg0, %[[R]]
// CHECK: return %[[W]], %[[R]]
func.func @conflict(%a: tensor<4xf32>, %x: f32) -> (tensor<4xf32>, tensor<4xf32>) {
  %c1 = arith.constant 1 : index
  %w = tensor.insert %x into %a[%c1] : tensor<4xf32>
  return %w, %a : tensor<4xf32>, tensor<4xf32>
}

// -----

// Constant tables become private globals; a buffer whose value is dead is reused as the
// destination of a later op, and temporaries are freed right after their last use.
// CHECK: "memref.global"() <{alignment = 64 : i64, constant, initial_value = dense<{{\[\[}}0, 1], [2, 3]]> : tensor<2x2xindex>, sym_name = "__constant_0", sym_visibility = "private", type = memref<2x2xindex>}>
// CHECK-LABEL: func.func @table
// CHECK: %[[T:.*]] = memref.get_global @__constant_0 : memref<2x2xindex>
// CHECK: memref.load %[[T]][%arg0, %c0] : memref<2x2xindex>
// CHECK: %[[E:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : memref<2xf32>)
// CHECK: %[[TMP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2xf32>
// CHECK: linalg.add ins(%[[E]], %[[E]] : memref<2xf32>, memref<2xf32>) outs(%[[TMP]] : memref<2xf32>)
// CHECK: linalg.add ins(%[[TMP]], %[[TMP]] : memref<2xf32>, memref<2xf32>) outs(%[[E]] : memref<2xf32>)
// CHECK-NEXT: memref.dealloc %[[TMP]] : memref<2xf32>
// CHECK-NEXT: return %{{.*}}, %[[E]]
func.func @table(%i: index) -> (index, tensor<2xf32>) {
  %t = arith.constant dense<[[0, 1], [2, 3]]> : tensor<2x2xindex>
  %c0 = arith.constant 0 : index
  %v = tensor.extract %t[%i, %c0] : tensor<2x2xindex>
  %e = tensor.empty() : tensor<2xf32>
  %one = arith.constant 1.0 : f32
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %tmp = tensor.empty() : tensor<2xf32>
  %g = linalg.add ins(%f, %f : tensor<2xf32>, tensor<2xf32>) outs(%tmp : tensor<2xf32>) -> tensor<2xf32>
  %h = linalg.add ins(%g, %g : tensor<2xf32>, tensor<2xf32>) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  return %v, %h : index, tensor<2xf32>
}

// -----

// Branches that yield different tensors yield fresh buffers.
// CHECK-LABEL: func.func @select
// CHECK: %[[R:.*]] = scf.if %arg0 -> (memref<4xf32>) {
// CHECK: %[[X:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK: memref.copy %arg1, %[[X]]
// CHECK: scf.yield %[[X]] : memref<4xf32>
// CHECK: } else {
// CHECK: memref.copy %arg2
// CHECK: return %[[R]] : memref<4xf32>
func.func @select(%c: i1, %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = scf.if %c -> (tensor<4xf32>) {
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %b : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// tensor.pad: a new buffer filled with the padding value, the source copied into the
// interior (a subview at the low offsets).
// CHECK-LABEL: func.func @pad
// CHECK: %[[D:.*]] = memref.dim %arg0, %c0{{.*}} : memref<?x4xf32>
// CHECK: %[[S:.*]] = arith.addi
// CHECK: %[[S2:.*]] = arith.addi %[[S]]
// CHECK: %[[P:.*]] = memref.alloc(%[[S2]]) {alignment = 64 : i64} : memref<?x7xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[P]] : memref<?x7xf32>)
// CHECK: %[[I:.*]] = memref.subview %[[P]][1, 2] [%[[D]], 4] [1, 1] : memref<?x7xf32> to memref<?x4xf32, strided<[7, 1], offset: 9>>
// CHECK: memref.copy %arg0, %[[I]]
// CHECK: return %[[P]]
func.func @pad(%a: tensor<?x4xf32>) -> tensor<?x7xf32> {
  %z = arith.constant 0.5 : f32
  %p = tensor.pad %a low[1, 2] high[2, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } : tensor<?x4xf32> to tensor<?x7xf32>
  return %p : tensor<?x7xf32>
}

// -----

// A pad whose padded dims are static (a CNN's, batch dynamic): the padding value is written
// on the border only — for each padded dim its low and high slabs, over the interior of the
// dims before it — not over the whole buffer the copy overwrites. The padded dims trail
// unpadded ones: plane by plane, in a loop over the leading dims, each plane's interior
// copied and its border filled while its lines are in cache; the run-time check (the
// source fits) comes before the loop, and with it any write. The planes are views of the
// new buffer itself (not of a view of it passed beside it: LLVM then copied element by
// element, unable to tell the two apart).
// CHECK-LABEL: func.func @pad_border
// CHECK: %[[D:.*]] = memref.dim %arg0, %c0{{.*}} : memref<?x3x4x5xf32>
// CHECK: %[[P:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x3x7x6xf32>
// CHECK-NOT: outs(%[[P]]
// CHECK: cf.assert
// CHECK-NOT: memref.subview
// CHECK: %[[DN:.*]] = memref.dim %[[P]], %c0
// CHECK: %[[DC:.*]] = memref.dim %[[P]], %c1
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %[[DN]] step
// CHECK-NEXT: scf.for %[[C:.*]] = %{{.*}} to %[[DC]] step
// CHECK-NEXT: %[[S:.*]] = memref.subview %arg0[%[[N]], %[[C]], 0, 0] [1, 1, 4, 5] [1, 1, 1, 1]
// CHECK-NEXT: %[[J:.*]] = memref.subview %[[P]][%[[N]], %[[C]], 1, 0] [1, 1, 4, 5] [1, 1, 1, 1]
// CHECK-NEXT: memref.copy %[[S]], %[[J]]
// CHECK-NEXT: %[[T:.*]] = memref.subview %[[P]][%[[N]], %[[C]], 0, 0] [1, 1, 1, 6] [1, 1, 1, 1]
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[T]]
// CHECK: %[[B:.*]] = memref.subview %[[P]][%[[N]], %[[C]], 5, 0] [1, 1, 2, 6] [1, 1, 1, 1]
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[B]]
// CHECK: %[[R:.*]] = memref.subview %[[P]][%[[N]], %[[C]], 1, 5] [1, 1, 4, 1] [1, 1, 1, 1]
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[R]]
// CHECK-NOT: linalg.fill
// CHECK: return
func.func @pad_border(%a: tensor<?x3x4x5xf32>) -> tensor<?x3x7x6xf32> {
  %z = arith.constant 0.5 : f32
  %p = tensor.pad %a low[0, 0, 1, 0] high[0, 0, 2, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %z : f32
  } : tensor<?x3x4x5xf32> to tensor<?x3x7x6xf32>
  return %p : tensor<?x3x7x6xf32>
}

// -----

// A padded leading dim: no plane loop, the copy and the slabs over the whole buffer.
// CHECK-LABEL: func.func @pad_border_leading
// CHECK: %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x7xf32>
// CHECK-NOT: scf.for
// CHECK: %[[I:.*]] = memref.subview %[[P]][1, 2] [2, 4] [1, 1]
// CHECK: memref.copy %arg0, %[[I]]
// CHECK: %[[T:.*]] = memref.subview %[[P]][0, 0] [1, 7] [1, 1]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[T]]
// CHECK-NOT: scf.for
// CHECK: return
func.func @pad_border_leading(%a: tensor<2x4xf32>) -> tensor<4x7xf32> {
  %z = arith.constant 0.5 : f32
  %p = tensor.pad %a low[1, 2] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } : tensor<2x4xf32> to tensor<4x7xf32>
  return %p : tensor<4x7xf32>
}

// -----

// Two loops writing into one (CSE-merged) reshape of a tensor.empty: the first takes its
// buffer, the second a new one — not a copy of the first's, whose contents are undefined.
// CHECK-LABEL: func.func @shared_empty
// CHECK: %[[A:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x4x2xf32>
// CHECK: %[[V:.*]] = memref.collapse_shape %[[A]]
// CHECK: %[[B:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x8xf32>
// CHECK-NOT: memref.copy %[[V]]
// CHECK: scf.for
// CHECK: return %[[B]], %[[V]]
func.func @shared_empty(%a: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %a, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x4x2xf32>
  %v = tensor.collapse_shape %e [[0], [1, 2]] : tensor<?x4x2xf32> into tensor<?x8xf32>
  %x = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %v) -> (tensor<?x8xf32>) {
    %s = tensor.extract_slice %a[%i, 0] [1, 8] [1, 1] : tensor<?x8xf32> to tensor<1x8xf32>
    %r = tensor.insert_slice %s into %acc[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<?x8xf32>
    scf.yield %r : tensor<?x8xf32>
  }
  %y = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %v) -> (tensor<?x8xf32>) {
    %s = tensor.extract_slice %a[%i, 0] [1, 8] [1, 1] : tensor<?x8xf32> to tensor<1x8xf32>
    %t = linalg.add ins(%s, %s : tensor<1x8xf32>, tensor<1x8xf32>) outs(%s : tensor<1x8xf32>) -> tensor<1x8xf32>
    %r = tensor.insert_slice %t into %acc[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<?x8xf32>
    scf.yield %r : tensor<?x8xf32>
  }
  return %x, %y : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// A buffer allocated and freed in each iteration, its size defined outside the loop, is
// allocated once before the loop and freed after it — through an scf.if in the body too.
// CHECK-LABEL: func.func @hoisted
// CHECK: %[[T:.*]] = memref.alloc(%arg1) {alignment = 64 : i64} : memref<?xf32>
// CHECK-NEXT: scf.for
// CHECK-NOT: memref.alloc
// CHECK: memref.dealloc %[[T]] : memref<?xf32>
// CHECK-NEXT: return
func.func @hoisted(%a: tensor<8xf32>, %n: index, %c: i1) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %a) -> (tensor<8xf32>) {
    %v = scf.if %c -> (f32) {
      %t = tensor.empty(%n) : tensor<?xf32>
      %z = arith.constant 1.0 : f32
      %f = linalg.fill ins(%z : f32) outs(%t : tensor<?xf32>) -> tensor<?xf32>
      %x = tensor.extract %f[%c0] : tensor<?xf32>
      scf.yield %x : f32
    } else {
      %y = arith.constant 0.0 : f32
      scf.yield %y : f32
    }
    %u = tensor.insert %v into %acc[%i] : tensor<8xf32>
    scf.yield %u : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// A size computed in the loop keeps the buffer inside it.
// CHECK-LABEL: func.func @not_hoisted
// CHECK: scf.for
// CHECK: memref.alloc
// CHECK: memref.dealloc
func.func @not_hoisted(%a: tensor<8xf32>, %n: index) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %a) -> (tensor<8xf32>) {
    %m = arith.addi %n, %i : index
    %t = tensor.empty(%m) : tensor<?xf32>
    %z = arith.constant 1.0 : f32
    %f = linalg.fill ins(%z : f32) outs(%t : tensor<?xf32>) -> tensor<?xf32>
    %x = tensor.extract %f[%c0] : tensor<?xf32>
    %u = tensor.insert %x into %acc[%i] : tensor<8xf32>
    scf.yield %u : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// One tensor as two outputs of a generic: the first writes it in place, the second gets a
// buffer of its own (both were written into one, and the first result read the second's
// values).
// CHECK-LABEL: func.func @one_empty_two_outs
// CHECK: %[[A:.*]] = memref.alloc()
// CHECK: %[[B:.*]] = memref.alloc()
// CHECK: linalg.generic {{.*}} outs(%[[A]], %[[B]] :
// CHECK-NOT: memref.dealloc
// CHECK: return %[[A]], %[[B]]
func.func @one_empty_two_outs(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e, %e : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%in: f32, %o1: f32, %o2: f32):
    %n = arith.negf %in : f32
    linalg.yield %in, %n : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
