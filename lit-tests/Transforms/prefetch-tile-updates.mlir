// prefetch-tile-updates: before an scf.for with vector results, one memref.prefetch per
// 64-byte line of each vector.transfer_read that follows the loop with buffer and indices
// defined before it (a register tile's C update), and of its last element (a row that
// does not start on a line spans one line more), and of the slices its epilogue reads.
// RUN: ftuner-opt %s --prefetch-tile-updates --split-input-file | FileCheck %s
// RUN: ftuner-opt %s --prefetch-tile-updates --split-input-file --mlir-print-op-generic | %mlir-opt --split-input-file > /dev/null
// REQUIRES: mlir-opt

// vector<32xf32> is two lines, three where j is not a multiple of 16: prefetches at
// columns j, j + 16 and j + 31 (the read's last element), before the loop.
// CHECK-LABEL: func.func @tile
// CHECK: "memref.prefetch"(%arg0, %arg3, %arg4) <{isDataCache = true, isWrite = false, localityHint = 3 : i32}>
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[J16:.*]] = arith.addi %arg4, %[[C16]] : index
// CHECK: "memref.prefetch"(%arg0, %arg3, %[[J16]])
// CHECK: %[[C31:.*]] = arith.constant 31 : index
// CHECK: %[[J31:.*]] = arith.addi %arg4, %[[C31]] : index
// CHECK: "memref.prefetch"(%arg0, %arg3, %[[J31]])
// CHECK-NOT: memref.prefetch
// CHECK: scf.for
// CHECK: "vector.transfer_read"(%arg0, %arg3, %arg4
func.func @tile(%c: memref<?x?xf32>, %b: memref<?x32xf32>, %k: index, %i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %zero = vector.broadcast %z : f32 to vector<32xf32>
  %acc = scf.for %kk = %c0 to %k step %c1 iter_args(%a = %zero) -> (vector<32xf32>) {
    %row = "vector.transfer_read"(%b, %kk, %c0, %z) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 2, 1, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (memref<?x32xf32>, index, index, f32) -> vector<32xf32>
    %s = arith.addf %a, %row : vector<32xf32>
    scf.yield %s : vector<32xf32>
  }
  %old = "vector.transfer_read"(%c, %i, %j, %z) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 2, 1, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (memref<?x?xf32>, index, index, f32) -> vector<32xf32>
  %new = arith.addf %old, %acc : vector<32xf32>
  "vector.transfer_write"(%new, %c, %i, %j) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 1, 2, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (vector<32xf32>, memref<?x?xf32>, index, index) -> ()
  return
}

// -----

// An index computed after the loop, and a loop with no vector results: no prefetch.
// CHECK-LABEL: func.func @late_index
// CHECK-NOT: memref.prefetch
func.func @late_index(%c: memref<?x?xf32>, %k: index, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %zero = vector.broadcast %z : f32 to vector<16xf32>
  %acc = scf.for %kk = %c0 to %k step %c1 iter_args(%a = %zero) -> (vector<16xf32>) {
    scf.yield %a : vector<16xf32>
  }
  %j = arith.addi %i, %c1 : index
  %old = "vector.transfer_read"(%c, %i, %j, %z) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 2, 1, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (memref<?x?xf32>, index, index, f32) -> vector<16xf32>
  scf.for %kk = %c0 to %k step %c1 {
    scf.yield
  }
  %o2 = "vector.transfer_read"(%c, %i, %i, %z) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 2, 1, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (memref<?x?xf32>, index, index, f32) -> vector<16xf32>
  return
}

// -----

// A read that may run past its row (in_bounds = [false]) is not prefetched: its last
// lane need not be an address of the buffer.
// CHECK-LABEL: func.func @maybe_out_of_bounds
// CHECK-NOT: memref.prefetch
// CHECK: return
func.func @maybe_out_of_bounds(%c: memref<?x?xf32>, %k: index, %i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %zero = vector.broadcast %z : f32 to vector<16xf32>
  %acc = scf.for %kk = %c0 to %k step %c1 iter_args(%a = %zero) -> (vector<16xf32>) {
    scf.yield %a : vector<16xf32>
  }
  %old = "vector.transfer_read"(%c, %i, %j, %z) <{in_bounds = [false], operandSegmentSizes = array<i32: 1, 2, 1, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (memref<?x?xf32>, index, index, f32) -> vector<16xf32>
  return
}

// -----

// A tile of a zero-filled C: written in the first k block, read, added and written in
// the others (an scf.if after the loop). The reads in the branch are prefetched too.
// CHECK-LABEL: func.func @first_block
// CHECK: "memref.prefetch"(%arg0, %arg3, %arg4)
// CHECK: %[[C15:.*]] = arith.constant 15 : index
// CHECK: %[[J15:.*]] = arith.addi %arg4, %[[C15]] : index
// CHECK: "memref.prefetch"(%arg0, %arg3, %[[J15]])
// CHECK-NOT: memref.prefetch
// CHECK: scf.for
// CHECK: scf.if %arg5
func.func @first_block(%c: memref<?x?xf32>, %b: memref<?x16xf32>, %k: index, %i: index, %j: index, %first: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %zero = vector.broadcast %z : f32 to vector<16xf32>
  %acc = scf.for %kk = %c0 to %k step %c1 iter_args(%a = %zero) -> (vector<16xf32>) {
    %row = "vector.transfer_read"(%b, %kk, %c0, %z) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 2, 1, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (memref<?x16xf32>, index, index, f32) -> vector<16xf32>
    %s = arith.addf %a, %row : vector<16xf32>
    scf.yield %s : vector<16xf32>
  }
  scf.if %first {
    "vector.transfer_write"(%acc, %c, %i, %j) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 1, 2, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (vector<16xf32>, memref<?x?xf32>, index, index) -> ()
  } else {
    %old = "vector.transfer_read"(%c, %i, %j, %z) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 2, 1, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (memref<?x?xf32>, index, index, f32) -> vector<16xf32>
    %new = arith.addf %old, %acc : vector<16xf32>
    "vector.transfer_write"(%new, %c, %i, %j) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 1, 2, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (vector<16xf32>, memref<?x?xf32>, index, index) -> ()
  }
  return
}

// -----

// The tile's epilogue reads a 2x32 slice of a residual element by element after the
// loop (the slice taken after it, from a buffer and offsets defined before it): each of
// its rows' two lines (three where a row does not start on a line: columns j, j + 16 and
// j + 31) is prefetched before the loop. A 2x1 per-row slice (less than a line per row)
// and a slice also stored to are not.
// CHECK-LABEL: func.func @epilogue
// CHECK: "memref.prefetch"(%arg1, %arg3, %arg4) <{isDataCache = true, isWrite = false, localityHint = 3 : i32}>
// CHECK: %[[J16:.*]] = arith.addi %arg4, %{{.*}} : index
// CHECK: "memref.prefetch"(%arg1, %arg3, %[[J16]])
// CHECK: %[[C31:.*]] = arith.constant 31 : index
// CHECK: %[[J31:.*]] = arith.addi %arg4, %[[C31]] : index
// CHECK: "memref.prefetch"(%arg1, %arg3, %[[J31]])
// CHECK: %[[I1:.*]] = arith.addi %arg3, %{{.*}} : index
// CHECK: "memref.prefetch"(%arg1, %[[I1]], %arg4)
// CHECK: "memref.prefetch"(%arg1, %{{.*}}, %{{.*}})
// CHECK: "memref.prefetch"(%arg1, %{{.*}}, %{{.*}})
// CHECK-NOT: memref.prefetch
// CHECK: scf.for
func.func @epilogue(%c: memref<?x?xf32>, %res: memref<?x?xf32>, %k: index, %i: index, %j: index, %ch: memref<?x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %z = arith.constant 0.0 : f32
  %zero = vector.broadcast %z : f32 to vector<32xf32>
  %acc = scf.for %kk = %c0 to %k step %c1 iter_args(%a = %zero) -> (vector<32xf32>) {
    scf.yield %a : vector<32xf32>
  }
  "vector.transfer_write"(%acc, %c, %i, %j) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 1, 2, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (vector<32xf32>, memref<?x?xf32>, index, index) -> ()
  %r = memref.subview %res[%i, %j] [2, 32] [1, 1] : memref<?x?xf32> to memref<2x32xf32, strided<[?, 1], offset: ?>>
  %s = memref.subview %ch[%i, 0] [2, 1] [1, 1] : memref<?x1xf32> to memref<2x1xf32, strided<[1, 1], offset: ?>>
  %t = memref.subview %c[%i, %j] [2, 32] [1, 1] : memref<?x?xf32> to memref<2x32xf32, strided<[?, 1], offset: ?>>
  scf.for %a = %c0 to %c2 step %c1 {
    scf.for %b = %c0 to %c32 step %c1 {
      %x = memref.load %r[%a, %b] : memref<2x32xf32, strided<[?, 1], offset: ?>>
      %y = memref.load %s[%a, %c0] : memref<2x1xf32, strided<[1, 1], offset: ?>>
      %w = memref.load %t[%a, %b] : memref<2x32xf32, strided<[?, 1], offset: ?>>
      %u = arith.addf %x, %y : f32
      %v = arith.addf %u, %w : f32
      memref.store %v, %t[%a, %b] : memref<2x32xf32, strided<[?, 1], offset: ?>>
    }
  }
  return
}

// -----

// B read in place (a 2-d view of nr = 32 columns of a 4096 x 1024 B), in a k loop that
// lower-ukernels marked `ftuner.prefetch_next_panel`, of 4 accumulators: each k step
// prefetches the next panel's row k into L2 (localityHint 2), columns min(j + 32, 1024 -
// 32) and 16 further.
// CHECK-LABEL: func.func @in_place_next_panel
// CHECK: %[[LAST:.*]] = arith.constant 992 : index
// CHECK: %[[J32:.*]] = arith.addi %arg2, %{{.*}} : index
// CHECK: %[[NEXT:.*]] = arith.minsi %[[J32]], %[[LAST]] : index
// CHECK: scf.for %[[K:[a-z0-9]+]] =
// CHECK: %[[ROW:.*]] = arith.addi %arg1, %[[K]] : index
// CHECK: "memref.prefetch"(%arg0, %[[ROW]], %[[NEXT]]) <{isDataCache = true, isWrite = false, localityHint = 2 : i32}>
// CHECK: %[[C16:.*]] = arith.addi %[[NEXT]], %{{.*}} : index
// CHECK: "memref.prefetch"(%arg0, %[[ROW]], %[[C16]]) <{isDataCache = true, isWrite = false, localityHint = 2 : i32}>
// CHECK-NEXT: "vector.transfer_read"
// CHECK-NOT: memref.prefetch
// CHECK: return
func.func @in_place_next_panel(%b: memref<4096x1024xf32>, %k0: index, %j: index, %k: index) -> vector<32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %zero = vector.broadcast %z : f32 to vector<32xf32>
  %v = memref.subview %b[%k0, %j] [%k, 32] [1, 1] : memref<4096x1024xf32> to memref<?x32xf32, strided<[1024, 1], offset: ?>>
  %acc:4 = scf.for %kk = %c0 to %k step %c1 iter_args(%a0 = %zero, %a1 = %zero, %a2 = %zero, %a3 = %zero) -> (vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>) {
    %row = "vector.transfer_read"(%v, %kk, %c0, %z) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 2, 1, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (memref<?x32xf32, strided<[1024, 1], offset: ?>>, index, index, f32) -> vector<32xf32>
    %s0 = arith.addf %a0, %row : vector<32xf32>
    %s1 = arith.addf %a1, %row : vector<32xf32>
    %s2 = arith.addf %a2, %row : vector<32xf32>
    %s3 = arith.addf %a3, %row : vector<32xf32>
    scf.yield %s0, %s1, %s2, %s3 : vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>
  } {ftuner.prefetch_next_panel}
  %r = arith.addf %acc#0, %acc#3 : vector<32xf32>
  return %r : vector<32xf32>
}

// -----

// The same loop unmarked (B's rows collide in L2, or B fits in it), or marked with fewer
// than 4 accumulators (a narrow tile, load-bound already): no prefetch.
// CHECK-LABEL: func.func @in_place_unmarked
// CHECK-NOT: memref.prefetch
// CHECK: return
func.func @in_place_unmarked(%b: memref<4096x1024xf32>, %k0: index, %j: index, %k: index) -> vector<32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %zero = vector.broadcast %z : f32 to vector<32xf32>
  %v = memref.subview %b[%k0, %j] [%k, 32] [1, 1] : memref<4096x1024xf32> to memref<?x32xf32, strided<[1024, 1], offset: ?>>
  %acc:4 = scf.for %kk = %c0 to %k step %c1 iter_args(%a0 = %zero, %a1 = %zero, %a2 = %zero, %a3 = %zero) -> (vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>) {
    %row = "vector.transfer_read"(%v, %kk, %c0, %z) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 2, 1, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (memref<?x32xf32, strided<[1024, 1], offset: ?>>, index, index, f32) -> vector<32xf32>
    %s0 = arith.addf %a0, %row : vector<32xf32>
    scf.yield %s0, %a1, %a2, %a3 : vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>
  }
  %narrow = scf.for %kk = %c0 to %k step %c1 iter_args(%a0 = %zero) -> (vector<32xf32>) {
    %row = "vector.transfer_read"(%v, %kk, %c0, %z) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 2, 1, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (memref<?x32xf32, strided<[1024, 1], offset: ?>>, index, index, f32) -> vector<32xf32>
    %s0 = arith.addf %a0, %row : vector<32xf32>
    scf.yield %s0 : vector<32xf32>
  } {ftuner.prefetch_next_panel}
  %r = arith.addf %acc#0, %narrow : vector<32xf32>
  return %r : vector<32xf32>
}

// -----

// Packed panels [8][256][64] read at [p, k, 0] by a k loop inside the loop over row strips
// (step 6, marked ftuner.row_strips by lower-ukernels): the next panel's row is prefetched
// into L2 by the first four strips only, the loop split at min(lb + 4 * 6, ub); its copy
// runs the other strips without those prefetches (each strip prefetched the whole next
// panel again) and keeps the C tile's prefetch (localityHint 3) before its k loop.
// CHECK-LABEL: func.func @strips
// CHECK: %[[FOUR:.*]] = arith.constant 4 : index
// CHECK: %[[SPAN:.*]] = arith.muli %{{.*}}, %[[FOUR]] : index
// CHECK: %[[END:.*]] = arith.addi %arg2, %[[SPAN]] : index
// CHECK: %[[SPLIT:.*]] = arith.minsi %[[END]], %arg3 : index
// CHECK: scf.for %{{.*}} = %arg2 to %[[SPLIT]] step
// CHECK: scf.for
// CHECK: localityHint = 2
// CHECK: scf.for %{{.*}} = %[[SPLIT]] to %arg3 step
// CHECK-NOT: localityHint = 2
// CHECK: localityHint = 3
// CHECK-NOT: localityHint = 2
// CHECK: return
func.func @strips(%p: memref<8x256x64xf32>, %panel: index, %lb: index, %ub: index, %k: index, %out: memref<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %z = arith.constant 0.0 : f32
  %zero = vector.broadcast %z : f32 to vector<64xf32>
  scf.for %m = %lb to %ub step %c6 {
    %acc:4 = scf.for %kk = %c0 to %k step %c1 iter_args(%a0 = %zero, %a1 = %zero, %a2 = %zero, %a3 = %zero) -> (vector<64xf32>, vector<64xf32>, vector<64xf32>, vector<64xf32>) {
      %row = "vector.transfer_read"(%p, %panel, %kk, %c0, %z) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 3, 1, 0>, permutation_map = affine_map<(d0, d1, d2) -> (d2)>}> : (memref<8x256x64xf32>, index, index, index, f32) -> vector<64xf32>
      %s0 = arith.addf %a0, %row : vector<64xf32>
      %s1 = arith.addf %a1, %row : vector<64xf32>
      %s2 = arith.addf %a2, %row : vector<64xf32>
      %s3 = arith.addf %a3, %row : vector<64xf32>
      scf.yield %s0, %s1, %s2, %s3 : vector<64xf32>, vector<64xf32>, vector<64xf32>, vector<64xf32>
    }
    %old = "vector.transfer_read"(%out, %m, %c0, %z) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 2, 1, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (memref<?x64xf32>, index, index, f32) -> vector<64xf32>
    %r = arith.addf %old, %acc#3 : vector<64xf32>
    "vector.transfer_write"(%r, %out, %m, %c0) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 1, 2, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (vector<64xf32>, memref<?x64xf32>, index, index) -> ()
  } {ftuner.row_strips}
  return
}

// -----

// The same k loop in a loop over panels (what is left around it when canonicalization
// folds a one-strip loop away: no ftuner.row_strips): every panel keeps its successor's
// prefetch, nothing is split.
// CHECK-LABEL: func.func @panels
// CHECK-NOT: arith.minsi
// CHECK: scf.for
// CHECK: localityHint = 2
// CHECK-NOT: arith.minsi
// CHECK: return
func.func @panels(%p: memref<8x256x64xf32>, %k: index, %np: index, %out: memref<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %zero = vector.broadcast %z : f32 to vector<64xf32>
  scf.for %panel = %c0 to %np step %c1 {
    %acc:4 = scf.for %kk = %c0 to %k step %c1 iter_args(%a0 = %zero, %a1 = %zero, %a2 = %zero, %a3 = %zero) -> (vector<64xf32>, vector<64xf32>, vector<64xf32>, vector<64xf32>) {
      %row = "vector.transfer_read"(%p, %panel, %kk, %c0, %z) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 3, 1, 0>, permutation_map = affine_map<(d0, d1, d2) -> (d2)>}> : (memref<8x256x64xf32>, index, index, index, f32) -> vector<64xf32>
      %s0 = arith.addf %a0, %row : vector<64xf32>
      %s1 = arith.addf %a1, %row : vector<64xf32>
      %s2 = arith.addf %a2, %row : vector<64xf32>
      %s3 = arith.addf %a3, %row : vector<64xf32>
      scf.yield %s0, %s1, %s2, %s3 : vector<64xf32>, vector<64xf32>, vector<64xf32>, vector<64xf32>
    }
    %r = arith.addf %acc#0, %acc#3 : vector<64xf32>
    "vector.transfer_write"(%r, %out, %panel, %c0) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 1, 2, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (vector<64xf32>, memref<?x64xf32>, index, index) -> ()
  }
  return
}

// -----

// An unrolled k loop (two steps per iteration) and its remainder, which starts from the
// loop's accumulators (lower-ukernels{k-unroll=2} over a dynamic K): one chain. The C
// tile read after the remainder is prefetched before the first loop, not between the
// two; each loop prefetches the next panel's rows, and the strips are split once.
// CHECK-LABEL: func.func @unrolled_chain
// CHECK: %[[SPLIT:.*]] = arith.minsi
// CHECK: scf.for %{{.*}} = %arg2 to %[[SPLIT]] step
// CHECK: "memref.prefetch"(%arg5, %{{.*}}, %{{.*}}) <{{.*}}localityHint = 3
// CHECK-NOT: scf.for
// CHECK: %[[MAIN:.*]] = scf.for
// CHECK: localityHint = 2
// CHECK: localityHint = 2
// CHECK: scf.yield
// CHECK-NOT: memref.prefetch
// CHECK: scf.for %{{.*}} = %{{.*}} to %arg4 step %{{.*}} iter_args(%{{.*}} = %[[MAIN]])
// CHECK: localityHint = 2
// CHECK: scf.for %{{.*}} = %[[SPLIT]] to %arg3 step
// CHECK-NOT: localityHint = 2
// CHECK: localityHint = 3
// CHECK-NOT: localityHint = 2
// CHECK: return
func.func @unrolled_chain(%p: memref<8x256x64xf32>, %panel: index, %lb: index, %ub: index, %k: index, %out: memref<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c6 = arith.constant 6 : index
  %z = arith.constant 0.0 : f32
  %zero = vector.broadcast %z : f32 to vector<64xf32>
  %half = arith.divui %k, %c2 : index
  %even = arith.muli %half, %c2 : index
  scf.for %m = %lb to %ub step %c6 {
    %acc = scf.for %kk = %c0 to %even step %c2 iter_args(%a0 = %zero) -> (vector<64xf32>) {
      %row = "vector.transfer_read"(%p, %panel, %kk, %c0, %z) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 3, 1, 0>, permutation_map = affine_map<(d0, d1, d2) -> (d2)>}> : (memref<8x256x64xf32>, index, index, index, f32) -> vector<64xf32>
      %s0 = arith.addf %a0, %row : vector<64xf32>
      %k1 = arith.addi %kk, %c1 : index
      %row1 = "vector.transfer_read"(%p, %panel, %k1, %c0, %z) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 3, 1, 0>, permutation_map = affine_map<(d0, d1, d2) -> (d2)>}> : (memref<8x256x64xf32>, index, index, index, f32) -> vector<64xf32>
      %s1 = arith.addf %s0, %row1 : vector<64xf32>
      scf.yield %s1 : vector<64xf32>
    }
    %rest = scf.for %kk = %even to %k step %c1 iter_args(%a0 = %acc) -> (vector<64xf32>) {
      %row = "vector.transfer_read"(%p, %panel, %kk, %c0, %z) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 3, 1, 0>, permutation_map = affine_map<(d0, d1, d2) -> (d2)>}> : (memref<8x256x64xf32>, index, index, index, f32) -> vector<64xf32>
      %s0 = arith.addf %a0, %row : vector<64xf32>
      scf.yield %s0 : vector<64xf32>
    }
    %old = "vector.transfer_read"(%out, %m, %c0, %z) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 2, 1, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (memref<?x64xf32>, index, index, f32) -> vector<64xf32>
    %r = arith.addf %old, %rest : vector<64xf32>
    "vector.transfer_write"(%r, %out, %m, %c0) <{in_bounds = [true], operandSegmentSizes = array<i32: 1, 1, 2, 0>, permutation_map = affine_map<(d0, d1) -> (d1)>}> : (vector<64xf32>, memref<?x64xf32>, index, index) -> ()
  } {ftuner.row_strips}
  return
}
