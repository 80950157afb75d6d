// approximate-math: f32 math.tanh / math.erf become clamped rational functions of arith
// ops, f32 math.exp a polynomial scaled by a power of two built from its exponent bits (so
// a loop around them vectorizes); f64 stays a libm call. The runtime's lowering
// runs it: the JIT's results agree with the interpreter's libm ones within ftuner-run's
// check, at every size (GELU over a dynamic row).
// RUN: ftuner-opt %s --approximate-math --mlir-pass-statistics 2>&1 | FileCheck %s
// RUN: ftuner-run %s --entry=gelu --shape 0=1000 --check | FileCheck %s --check-prefix=RUN1
// RUN: ftuner-run %s --entry=gelu_tanh --shape 0=77 --check | FileCheck %s --check-prefix=RUN1
// RUN: ftuner-run %s --entry=exp_wide --shape 0=1000 --check | FileCheck %s --check-prefix=RUN1

// CHECK-LABEL: func.func @scalars
// CHECK-NOT: math.tanh %{{.*}} : f32
// CHECK-NOT: math.erf %{{.*}} : f32
// CHECK: arith.maximumf
// CHECK: math.fma
// CHECK: arith.divf
// CHECK: arith.select
// CHECK: math.erf %{{.*}} : f64
// CHECK: vector<16xf32>
// CHECK: math.fma {{.*}} : vector<16xf32>
// CHECK-NOT: math.exp %{{.*}} : f32
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.shrsi
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.*}} : i32 to f32
// CHECK: math.exp %{{.*}} : f64
// CHECK: arith.bitcast %{{.*}} : vector<8xf32> to vector<8xi32>
// CHECK: arith.bitcast %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: 8 num-expanded
func.func @scalars(%x: f32, %y: f32, %z: f64, %v: vector<16xf32>, %e: f32, %w: vector<8xf32>) -> (f32, f32, f64, vector<16xf32>, f32, f64, vector<8xf32>) {
  %a = math.tanh %x : f32
  %b = math.erf %y : f32
  %c = math.erf %z : f64
  %d = math.tanh %v : vector<16xf32>
  %f = math.exp %e : f32
  %g = math.exp %z : f64
  %h = math.exp %w : vector<8xf32>
  return %a, %b, %c, %d, %f, %g, %h : f32, f32, f64, vector<16xf32>, f32, f64, vector<8xf32>
}

// exp over [-80, 80] times the input (a softmax's exponent ranges over less).
func.func @exp_wide(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.constant 80.0 : f32
    %w = arith.mulf %a, %s : f32
    %y = math.exp %w : f32
    linalg.yield %y : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// 0.5 * x * (1 + erf(x / sqrt(2))), as torch-mlir exports nn.GELU.
func.func @gelu(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.constant 4.0 : f32
    %h = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %r2 = arith.constant 0.70710678 : f32
    %w = arith.mulf %a, %s : f32
    %u = arith.mulf %w, %r2 : f32
    %f = math.erf %u : f32
    %p = arith.addf %f, %one : f32
    %q = arith.mulf %w, %p : f32
    %y = arith.mulf %q, %h : f32
    linalg.yield %y : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// GPT-2's gelu_new: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
func.func @gelu_tanh(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.constant 6.0 : f32
    %h = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %k = arith.constant 0.044715 : f32
    %c = arith.constant 0.7978845608 : f32
    %w = arith.mulf %a, %s : f32
    %w2 = arith.mulf %w, %w : f32
    %w3 = arith.mulf %w2, %w : f32
    %t = arith.mulf %w3, %k : f32
    %u = arith.addf %w, %t : f32
    %v = arith.mulf %u, %c : f32
    %f = math.tanh %v : f32
    %p = arith.addf %f, %one : f32
    %q = arith.mulf %w, %p : f32
    %y = arith.mulf %q, %h : f32
    linalg.yield %y : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}
// RUN1: check: ok
