// scf.execute_region in upstream's custom syntax (read back by ftuner-opt and mlir-opt-22)
// and its two inliners (crates/ftuner-dialects/src/scf/execute_region.rs).
// RUN: ftuner-opt %s --allow-unregistered-dialect --split-input-file | ftuner-opt --allow-unregistered-dialect --split-input-file | FileCheck %s --check-prefix=RT
// RUN: ftuner-opt %s --allow-unregistered-dialect --split-input-file | %mlir-opt --allow-unregistered-dialect --split-input-file | FileCheck %s --check-prefix=RT
// RUN: ftuner-opt %s --allow-unregistered-dialect --split-input-file --canonicalize --cse | FileCheck %s
// RUN: ftuner-opt %s --allow-unregistered-dialect --split-input-file --canonicalize --cse | %mlir-opt --allow-unregistered-dialect --split-input-file -o /dev/null
// REQUIRES: mlir-opt

// Several blocks in a function: spliced in, each yield a branch to the rest.
// RT-LABEL: func.func @multi
// RT: %[[V:.*]] = scf.execute_region -> i64 {
// RT: cf.cond_br
// RT: scf.yield %{{.*}} : i64
// RT: scf.yield %{{.*}} : i64
// CHECK-LABEL: func.func @multi
// CHECK: "test.foo"() : () -> ()
// CHECK-NEXT: %[[C:.*]] = "test.cmp"() : () -> i1
// CHECK-NEXT: cf.cond_br %[[C]], ^bb1, ^bb2
// CHECK: ^bb1:
// CHECK-NEXT: %[[X:.*]] = "test.val1"() : () -> i64
// CHECK-NEXT: cf.br ^bb3(%[[X]] : i64)
// CHECK: ^bb2:
// CHECK-NEXT: %[[Y:.*]] = "test.val2"() : () -> i64
// CHECK-NEXT: cf.br ^bb3(%[[Y]] : i64)
// CHECK: ^bb3(%[[Z:.*]]: i64):
// CHECK-NEXT: "test.bar"(%[[Z]]) : (i64) -> ()
// CHECK-NEXT: return
func.func @multi() {
  "test.foo"() : () -> ()
  %v = scf.execute_region -> i64 {
    %c = "test.cmp"() : () -> i1
    cf.cond_br %c, ^bb1, ^bb2
  ^bb1:
    %x = "test.val1"() : () -> i64
    scf.yield %x : i64
  ^bb2:
    %y = "test.val2"() : () -> i64
    scf.yield %y : i64
  }
  "test.bar"(%v) : (i64) -> ()
  return
}

// -----

// One block: runs in place; `no_inline` stays, and so does a region of several blocks
// that is not directly in a function.
// RT-LABEL: func.func @single
// RT: scf.execute_region -> i32 no_inline {
// CHECK-LABEL: func.func @single
// CHECK-NEXT: %[[A:.*]] = "test.a"() : () -> i32
// CHECK-NEXT: %[[B:.*]] = scf.execute_region -> i32 no_inline {
// CHECK: scf.for
// CHECK-NEXT: scf.execute_region {
// CHECK: cf.cond_br
// CHECK: ^bb1:
// CHECK: ^bb2:
// CHECK: return %[[A]], %[[B]]
func.func @single(%n: index) -> (i32, i32) {
  %a = scf.execute_region -> i32 {
    %x = "test.a"() : () -> i32
    scf.yield %x : i32
  }
  %b = scf.execute_region -> i32 no_inline {
    %y = "test.b"() : () -> i32
    scf.yield %y : i32
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    scf.execute_region {
      %c = "test.c"() : () -> i1
      cf.cond_br %c, ^bb1, ^bb2
    ^bb1:
      "test.d"() : () -> ()
      scf.yield
    ^bb2:
      scf.yield
    }
  }
  return %a, %b : i32, i32
}
