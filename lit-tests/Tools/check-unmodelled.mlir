// Integers and the oracle (issues 25 and 27): the reference interpreter carries every
// value in a 64-bit word, integers of up to 64 bits exactly (sign-extended), so results
// past 2^53 are checked like any other (its f64 carrier before rounded them: `past_2_53`
// said "cannot check", and the constant 2^63 - 1 was 2^63, so 2 x 2^63 wrapped to 0 where
// the compiled code gives -2). Integers of more than 64 bits are outside its model: it
// says so (`outside the reference interpreter's model`), and `--check` fails with "cannot
// check" rather than rejecting (or passing) a result it cannot know; the fuzzer counts
// these apart. The compiled code runs them as usual.
// RUN: ftuner-run %s --entry=wide_shift | FileCheck %s --check-prefix=JIT
// RUN: not ftuner-run %s --entry=wide_shift --check 2>&1 | FileCheck %s --check-prefix=WIDE
// RUN: not ftuner-run %s --entry=wide_shift --backend=interp 2>&1 | FileCheck %s --check-prefix=WIDE-INTERP
// RUN: ftuner-run %s --entry=past_2_53 --check | FileCheck %s --check-prefix=BIG
// RUN: ftuner-run %s --entry=below_2_53 --check | FileCheck %s --check-prefix=OK
// RUN: ftuner-run %s --entry=huge_constant --check | FileCheck %s --check-prefix=CONST
// RUN: not ftuner-run %s --entry=wide_constant --check 2>&1 | FileCheck %s --check-prefix=WIDE-CONST
// RUN: not ftuner-run %s --entry=wide_global --check 2>&1 | FileCheck %s --check-prefix=WIDE-GLOBAL
// RUN: ftuner-run %s --entry=narrow --check | FileCheck %s --check-prefix=NARROW
// JIT: result #0
// The first i200 value met is the shift amount's constant.
// WIDE: ftuner-run: error: cannot check: {{.*}}check-unmodelled.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'arith.constant' op the constant of type i200 is outside the reference interpreter's model: integers of more than 64 bits are not modelled
// WIDE-INTERP: error: 'arith.constant' op the constant of type i200 is outside the reference interpreter's model
// 2^60 + x, x random in [0, 16): the low bits an f64 drops, compared as words.
// BIG: check: ok
// OK: check: ok
// 2 x (2^63 - 1) wraps to -2 in index; then + i.
// CONST: check: ok
// WIDE-CONST: ftuner-run: error: cannot check: {{.*}}'arith.constant' op the constant of type i65 is outside the reference interpreter's model
// A global's initial value is refused by its own type (it has no result to look at).
// WIDE-GLOBAL: ftuner-run: error: cannot check: {{.*}}'memref.global' op the constant of type tensor<2xi128> is outside the reference interpreter's model
// Random i4 inputs are wrapped to the width (15 is -1), as the compiled code reads them.
// NARROW: result #0: tensor 8xi4 min -{{[1-8]}}.000000
// NARROW: check: ok

func.func @wide_shift(%x: i200) -> i200 {
  %c150 = arith.constant 150 : i200
  %r = arith.shrsi %x, %c150 : i200
  return %r : i200
}

func.func @past_2_53(%x: i64) -> i64 {
  %c = arith.constant 1073741824 : i64
  %s = arith.muli %c, %c : i64
  %r = arith.addi %s, %x : i64
  return %r : i64
}

func.func @below_2_53(%x: i64) -> i64 {
  %c = arith.constant 4503599627370496 : i64
  %r = arith.addi %c, %x : i64
  return %r : i64
}

func.func @huge_constant(%i: index) -> index {
  %k = arith.constant 9223372036854775807 : index
  %c2 = arith.constant 2 : index
  %r = arith.muli %k, %c2 : index
  %s = arith.addi %r, %i : index
  return %s : index
}

func.func @wide_constant(%x: i65) -> i65 {
  %k = arith.constant 1 : i65
  %r = arith.addi %x, %k : i65
  return %r : i65
}

"memref.global"() <{constant, initial_value = dense<[1180591620717411303424, 1]> : tensor<2xi128>, sym_name = "g", sym_visibility = "private", type = memref<2xi128>}> : () -> ()

func.func @wide_global() -> i128 {
  %m = memref.get_global @g : memref<2xi128>
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<2xi128>
  return %v : i128
}

func.func @narrow(%x: tensor<8xi4>) -> tensor<8xi4> {
  return %x : tensor<8xi4>
}
