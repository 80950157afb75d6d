// Run-time bounds checks (issue 25): where a slice, a pad or an allocation depends on
// run-time values, the lowering checks it before any access. A failed check is an error
// naming the op and its location: the compiled function returns at once and ftuner-run
// exits 1 (no abort, no out-of-bounds access); the interpreter rejects the same inputs.

// A slice at a run-time offset: in bounds at offset 4 of 20 rows, outside at 5.
// RUN: ftuner-run %s --entry slice --shape 0=20x64 --shape 1=4 --check | FileCheck %s --check-prefix=SLICE-OK
// SLICE-OK: check: ok
// RUN: not ftuner-run %s --entry slice --shape 0=20x64 --shape 1=5 2>&1 | FileCheck %s --check-prefix=SLICE
// SLICE: ftuner-run: error: run-time check failed: 'tensor.extract_slice' op at {{.*}}runtime-checks.mlir:{{[0-9]+}}:8: the slice leaves its tensor
// RUN: not ftuner-run %s --entry slice --shape 0=20x64 --shape 1=5 --backend=interp 2>&1 | FileCheck %s --check-prefix=SLICE-INTERP
// SLICE-INTERP: 'tensor.extract_slice' op slice out of bounds in dimension 0

// Input that promises a slice is in bounds (`ftuner.in_bounds`, what lower-ukernels puts
// on its own tiles) is not taken at its word by the tools that run it.
// RUN: not ftuner-run %s --entry slice_promised --shape 0=20x64 --shape 1=5 2>&1 | FileCheck %s --check-prefix=PROMISED
// PROMISED: run-time check failed: 'tensor.extract_slice' op at {{.*}}: the slice leaves its tensor

// The insert twin: writing 16 rows at row n of a 20-row tensor.
// RUN: not ftuner-run %s --entry insert --shape 0=16x8 --shape 1=20x8 --shape 2=5 2>&1 | FileCheck %s --check-prefix=INSERT
// INSERT: run-time check failed: 'tensor.insert_slice' op at {{.*}}: the slice leaves its tensor
// RUN: ftuner-run %s --entry insert --shape 0=16x8 --shape 1=20x8 --shape 2=4 --check | FileCheck %s --check-prefix=SLICE-OK

// A pad whose low padding is computed at run time (n - 5): negative below 5 rows.
// RUN: not ftuner-run %s --entry pad --shape 0=3x4 2>&1 | FileCheck %s --check-prefix=PAD
// PAD: run-time check failed: 'tensor.pad' op at {{.*}}: negative padding, or a padded size that is not the result's
// RUN: ftuner-run %s --entry pad --shape 0=7x4 --check | FileCheck %s --check-prefix=SLICE-OK
// A pad of a dynamic source to a static result: the source must be exactly the result
// less the padding (a smaller one fitted, and the JIT padded where the interpreter errs;
// found by the driver fuzzer).
// RUN: not ftuner-run %s --entry pad_static --shape 0=4x0 2>&1 | FileCheck %s --check-prefix=PAD
// RUN: not ftuner-run %s --entry pad_static --shape 0=4x10 2>&1 | FileCheck %s --check-prefix=PAD
// RUN: ftuner-run %s --entry pad_static --shape 0=4x3 --check | FileCheck %s --check-prefix=SLICE-OK

// An allocation whose byte size overflows: an empty input of 0 x 2^40 rows asks for a
// 2^40 x 2^40 buffer (before: a wrapped size, then a write out of bounds).
// RUN: not ftuner-run %s --entry square --shape 0=0x1099511627776 2>&1 | FileCheck %s --check-prefix=ALLOC
// ALLOC: run-time check failed: {{.*}}runtime-checks.mlir:{{[0-9]+}}:{{[0-9]+}}: 'memref.alloc' op a size is negative or the memref<?x?xf32> is too large
// RUN: not ftuner-run %s --entry square --shape 0=0x1099511627776 --backend=interp 2>&1 | FileCheck %s --check-prefix=ALLOC-INTERP
// ALLOC-INTERP: larger than the interpreter's budget
// The same check whatever the order of the sizes: an empty 0 x 2^59 x 2^59 allocation
// (its strides wrap) passed, where 2^59 x 2^59 x 0 failed; zero sizes count as 1.
// RUN: not ftuner-run %s --entry empty3 --shape 0=0x576460752303423488 2>&1 | FileCheck %s --check-prefix=ALLOC3
// ALLOC3: run-time check failed: {{.*}}runtime-checks.mlir:{{[0-9]+}}:{{[0-9]+}}: 'memref.alloc' op a size is negative or the memref<?x?x?xf32> is too large
// An empty argument whose other dim no index can hold (2^62 rows of 4-byte elements):
// refused before anything runs (before: its strides wrapped).
// RUN: not ftuner-run %s --entry square --shape 0=0x4611686018427387904 2>&1 | FileCheck %s --check-prefix=HUGE-ARG
// HUGE-ARG: ftuner-run: error: argument #0: a buffer of shape [0, 4611686018427387904] is too large

// Inputs are regular files of bounded size (issue 25: /dev/zero was read until memory ran out).
// RUN: not ftuner-run %s --entry slice --input 0=/dev/zero --shape 1=4 2>&1 | FileCheck %s --check-prefix=DEVZERO
// DEVZERO: ftuner-run: error: /dev/zero is not a regular file

// Undefined arithmetic is a failed check too, not a trap or an endless loop: an integer
// division by a run-time zero, a loop step of zero.
// RUN: not ftuner-run %s --entry div --shape 0=0 2>&1 | FileCheck %s --check-prefix=DIV
// DIV: ftuner-run: error: run-time check failed: {{.*}}runtime-checks.mlir:{{[0-9]+}}:{{[0-9]+}}: 'arith.divui' op division by zero
// RUN: ftuner-run %s --entry div --shape 0=7 | FileCheck %s --check-prefix=DIV-OK
// DIV-OK: result #0: scalar min 14.000000
// RUN: not ftuner-run %s --entry step --shape 0=0 2>&1 | FileCheck %s --check-prefix=STEP
// STEP: run-time check failed: {{.*}}: 'scf.for' op step is not positive

// Standalone code from ftuner-translate has no runtime to report to: its checks print and
// abort (convert-to-llvm{abort-on-failure}); the JIT's return through ftuner_rt_fail.
// RUN: ftuner-translate %s --emit=llvm -O 0 | FileCheck %s --check-prefix=STANDALONE
// STANDALONE-NOT: ftuner_rt_fail
// STANDALONE: run-time check failed: {{.*}}the slice leaves its tensor\0A
// STANDALONE: call void @abort()
// RUN: ftuner-opt %s --pass-pipeline='builtin.module(bufferize,convert-linalg-to-loops,convert-to-llvm)' | FileCheck %s --check-prefix=RETURNS
// RETURNS: "llvm.call"({{.*}}) <{callee = @ftuner_rt_fail,
// RETURNS-NOT: @abort

// A check failing inside a parallel loop, on a worker thread: the failure comes back to
// the caller (the loop's other chunks finish), the same at one thread.
// RUN: not ftuner-run %s --entry parallel --shape 0=64 --threads 2 2>&1 | FileCheck %s --check-prefix=PAR
// RUN: not ftuner-run %s --entry parallel --shape 0=64 --threads 1 2>&1 | FileCheck %s --check-prefix=PAR
// PAR: ftuner-run: error: run-time check failed: {{.*}}runtime-checks.mlir:{{[0-9]+}}:{{[0-9]+}}: iteration 40 or later
// RUN: ftuner-run %s --entry parallel --shape 0=40 --threads 2 | FileCheck %s --check-prefix=PAR-OK
// PAR-OK: result #0: tensor 40xf32

// A `memref.load` inside a generic's body, at the loop index: checked like any other
// (the interpreter evaluates the check in the body; it refused the body before, so
// `--check` failed on a program the compiled code ran correctly — found by the fuzzer).
// RUN: ftuner-run %s --entry body_load --shape 0=4 --shape 1=4 --check | FileCheck %s --check-prefix=SLICE-OK
// RUN: not ftuner-run %s --entry body_load --shape 0=4 --shape 1=3 2>&1 | FileCheck %s --check-prefix=BODY
// RUN: not ftuner-run %s --entry body_load --shape 0=4 --shape 1=3 --backend=interp 2>&1 | FileCheck %s --check-prefix=BODY-INTERP
// BODY: run-time check failed: {{.*}}memref.load{{.*}}out of bounds
// BODY-INTERP: 'cf.assert' op assertion failed: {{.*}}memref.load{{.*}}out of bounds

// A window whose index falls as a loop grows (`d0 - d1 + 2`): its greatest index is at
// d0's end and d1's start, which the check at the loops' last point missed (before: the
// compiled code read x[7] of a 7-element x; found by the driver fuzzer).
// RUN: ftuner-run %s --entry flipped_window --shape 0=8 --check | FileCheck %s --check-prefix=SLICE-OK
// RUN: not ftuner-run %s --entry flipped_window --shape 0=7 2>&1 | FileCheck %s --check-prefix=FLIPPED
// FLIPPED: run-time check failed: operand shapes of 'linalg.generic' at {{.*}}runtime-checks.mlir:{{[0-9]+}}:8 do not agree with its iteration space

// A non-linear index (`d0 mod 3963` into 3 rows, the loop running to 12) is checked where
// it is computed (before: the compiled code read rows 3..11 of a 3-row tensor; found by
// the driver fuzzer). `d0 mod 3` stays in bounds and runs.
// RUN: not ftuner-run %s --entry nonlinear_index --shape 0=3x8 --shape 1=8x16 --shape 2=12x16 2>&1 | FileCheck %s --check-prefix=NONLINEAR
// NONLINEAR: run-time check failed: operand #0 of 'linalg.generic' at {{.*}}runtime-checks.mlir:{{[0-9]+}}:8 is indexed outside dim 0 (a non-linear index)

// A dilation of -1 with run-time spatial dims: the uKernel path (whose checks look at the
// loop box's last point) read the input at -2; such windows are left to the loops now,
// which bound them over the whole box (found by the driver fuzzer).
// RUN: not ftuner-run %s --entry negative_dilation --shape 0=1x8x9x9 --shape 1=1x4x4x4 2>&1 | FileCheck %s --check-prefix=NEGDIL
// NEGDIL: run-time check failed: operand shapes of 'linalg.conv_2d_nchw_fchw' at {{.*}}runtime-checks.mlir:{{[0-9]+}}:8 do not agree with its iteration space

func.func @div(%u: tensor<?xf32>) -> index {
  %c0 = arith.constant 0 : index
  %c100 = arith.constant 100 : index
  %n = tensor.dim %u, %c0 : tensor<?xf32>
  %q = arith.divui %c100, %n : index
  return %q : index
}

func.func @step(%a: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  %n = memref.dim %a, %c0 : memref<?xf32>
  scf.for %i = %c0 to %c8 step %n {
    memref.store %one, %a[%c0] : memref<?xf32>
  }
  return %a : memref<?xf32>
}

func.func @slice(%t: tensor<?x64xf32>, %u: tensor<?xf32>) -> tensor<16x64xf32> {
  %c0 = arith.constant 0 : index
  %o = tensor.dim %u, %c0 : tensor<?xf32>
  %r = tensor.extract_slice %t[%o, 0] [16, 64] [1, 1] : tensor<?x64xf32> to tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

func.func @slice_promised(%t: tensor<?x64xf32>, %u: tensor<?xf32>) -> tensor<16x64xf32> {
  %c0 = arith.constant 0 : index
  %o = tensor.dim %u, %c0 : tensor<?xf32>
  %r = tensor.extract_slice %t[%o, 0] [16, 64] [1, 1] {ftuner.in_bounds} : tensor<?x64xf32> to tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

func.func @insert(%s: tensor<16x8xf32>, %t: tensor<?x8xf32>, %u: tensor<?xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %o = tensor.dim %u, %c0 : tensor<?xf32>
  %r = tensor.insert_slice %s into %t[%o, 0] [16, 8] [1, 1] : tensor<16x8xf32> into tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

func.func @pad(%t: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %n = tensor.dim %t, %c0 : tensor<?x4xf32>
  %lo = arith.subi %n, %c5 : index
  %cst = arith.constant 0.0 : f32
  %p = tensor.pad %t low[%lo, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<?x4xf32> to tensor<?x4xf32>
  return %p : tensor<?x4xf32>
}

func.func @square(%t: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %t, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%n, %n) : tensor<?x?xf32>
  %cst = arith.constant 1.0 : f32
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %f : tensor<?x?xf32>
}

func.func @parallel(%a: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c40 = arith.constant 40 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %out = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %ok = arith.cmpi ult, %i, %c40 : index
    cf.assert %ok, "iteration 40 or later"
    %v = memref.load %a[%i] : memref<?xf32>
    memref.store %v, %out[%i] : memref<?xf32>
  } {ftuner.parallel}
  return %out : memref<?xf32>
}


// Found by the differential test of dynamic sizes (ftuner-runtime oob_random::): an
// element of the input read or written at a run-time index is checked (before: an
// unchecked load, garbage or SIGSEGV; the interpreter refused).
// RUN: not ftuner-run %s --entry element --shape 0=3x4 --shape 1=3 2>&1 | FileCheck %s --check-prefix=ELEMENT
// ELEMENT: ftuner-run: error: run-time check failed: 'tensor.extract' op at {{.*}}runtime-checks.mlir:{{[0-9]+}}:8: out of bounds
// RUN: ftuner-run %s --entry element --shape 0=3x4 --shape 1=2 --check | FileCheck %s --check-prefix=SLICE-OK
// RUN: not ftuner-run %s --entry insert_element --shape 0=4 --shape 1=4 2>&1 | FileCheck %s --check-prefix=INSERT-ELEMENT
// INSERT-ELEMENT: run-time check failed: 'tensor.insert' op at {{.*}}: out of bounds
// RUN: ftuner-run %s --entry insert_element --shape 0=4 --shape 1=3 --check | FileCheck %s --check-prefix=SLICE-OK
// A slice whose `offset + (size - 1) * stride` wraps around to an index inside its tensor
// (stride 2^63 - 1; size 2^62 at stride 4) leaves it all the same (before: the check
// passed, the copy wrote at wrapped addresses, the sum read 2^62 elements).
// RUN: not ftuner-run %s --entry wrapping_stride --shape 0=3 --shape 1=3 --shape 2=1 2>&1 | FileCheck %s --check-prefix=WRAP-INSERT
// WRAP-INSERT: run-time check failed: 'tensor.insert_slice' op at {{.*}}: the slice leaves its tensor
// At stride 0 it runs (not --check: the interpreter cannot hold 2^63 - 1 exactly, and says so).
// RUN: ftuner-run %s --entry wrapping_stride --shape 0=3 --shape 1=3 --shape 2=0 | FileCheck %s --check-prefix=WRAP-ZERO
// WRAP-ZERO: result #0: tensor 3xf32
// RUN: not ftuner-run %s --entry wrapping_size --shape 0=10 --shape 1=1 2>&1 | FileCheck %s --check-prefix=WRAP-EXTRACT
// WRAP-EXTRACT: run-time check failed: 'tensor.extract_slice' op at {{.*}}: the slice leaves its tensor
// RUN: ftuner-run %s --entry wrapping_size --shape 0=10 --shape 1=0 --check | FileCheck %s --check-prefix=SLICE-OK

func.func @element(%t: tensor<?x4xf32>, %u: tensor<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %i = tensor.dim %u, %c0 : tensor<?xf32>
  %v = tensor.extract %t[%i, %c1] : tensor<?x4xf32>
  return %v : f32
}

func.func @insert_element(%t: tensor<?xf32>, %u: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %i = tensor.dim %u, %c0 : tensor<?xf32>
  %v = arith.constant 9.0 : f32
  %r = tensor.insert %v into %t[%i] : tensor<?xf32>
  return %r : tensor<?xf32>
}

func.func @wrapping_stride(%s: tensor<3xf32>, %t: tensor<?xf32>, %u: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %max = arith.constant 9223372036854775807 : index
  %n = tensor.dim %u, %c0 : tensor<?xf32>
  %st = arith.muli %n, %max : index
  %r = tensor.insert_slice %s into %t[2] [3] [%st] : tensor<3xf32> into tensor<?xf32>
  return %r : tensor<?xf32>
}

func.func @wrapping_size(%t: tensor<?xf32>, %u: tensor<?xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %big = arith.constant 4611686018427387904 : index
  %n = tensor.dim %u, %c0 : tensor<?xf32>
  %size = arith.muli %n, %big : index
  %s = tensor.extract_slice %t[4] [%size] [4] : tensor<?xf32> to tensor<?xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%s : tensor<?xf32>) outs(%f : tensor<f32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.addf %x, %o : f32
    linalg.yield %y : f32
  } -> tensor<f32>
  return %sum : tensor<f32>
}

func.func @body_load(%x: tensor<?xf32>, %buf: memref<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %b = memref.load %buf[%i] : memref<?xf32>
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %p : tensor<?xf32>
}

func.func @empty3(%t: tensor<?x?xf32>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tensor.dim %t, %c0 : tensor<?x?xf32>
  %b = tensor.dim %t, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%a, %b, %b) : tensor<?x?x?xf32>
  %cst = arith.constant 1.0 : f32
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %f : tensor<?x?x?xf32>
}
func.func @flipped_window(%x: tensor<?xf32>, %k: tensor<3xf32>, %o: tensor<6xf32>) -> tensor<6xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 - d1 + 2)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %k : tensor<?xf32>, tensor<3xf32>) outs(%o : tensor<6xf32>) {
  ^bb0(%a: f32, %w: f32, %b: f32):
    %m = arith.mulf %a, %w : f32
    %s = arith.addf %m, %b : f32
    linalg.yield %s : f32
  } -> tensor<6xf32>
  return %r : tensor<6xf32>
}

func.func @nonlinear_index(%a: tensor<3x8xf32>, %b: tensor<8x16xf32>, %c: tensor<12x16xf32>) -> tensor<12x16xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0 mod 3963, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<3x8xf32>, tensor<8x16xf32>) outs(%c : tensor<12x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<12x16xf32>
  return %r : tensor<12x16xf32>
}

func.func @negative_dilation(%x: tensor<1x8x?x?xf32>, %o: tensor<1x4x?x?xf32>) -> tensor<1x4x?x?xf32> {
  %k = arith.constant dense<1.0> : tensor<4x8x3x3xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<-1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %k : tensor<1x8x?x?xf32>, tensor<4x8x3x3xf32>) outs(%o : tensor<1x4x?x?xf32>) -> tensor<1x4x?x?xf32>
  return %r : tensor<1x4x?x?xf32>
}

func.func @pad_static(%t: tensor<?x?xf32>) -> tensor<4x4xf32> {
  %cst = arith.constant 0.0 : f32
  %p = tensor.pad %t low[0, 0] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<?x?xf32> to tensor<4x4xf32>
  return %p : tensor<4x4xf32>
}
