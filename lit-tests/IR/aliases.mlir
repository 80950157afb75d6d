// RUN: ftuner-opt %s --mlir-print-op-generic --allow-unregistered-dialect | FileCheck %s
// Aliases: maps and sets, numbered in MLIR's order (types first, by name, by first use;
// nested regions before the op's own attributes). User alias names are not kept.
// CHECK: #map = affine_map<(d0) -> (d0 * 2)>
// CHECK-NEXT: #map1 = affine_map<(d0, d1) -> (d0 - d1 + 4)>
// CHECK-NEXT: #set = affine_set<(d0)[s0] : (d0 - s0 >= 0, d0 == 0)>
// CHECK-NEXT: "builtin.module"
#user = affine_map<(i, j) -> (4 + i - j)>
"test.outer"() ({
  "test.inner"() {m = affine_map<(d0) -> (2 * d0)>} : () -> ()
}) {a = #user, s = affine_set<(x)[n] : (x - n >= 0, x == 0)>} : () -> ()
