// Integers the oracle cannot hold (issue 25): the reference interpreter carries values in
// f64, exact for integers up to 64 bits wide that f64 holds exactly (every one up to 2^53
// in magnitude, larger ones with enough trailing zero bits). Past that it says so
// (`outside the reference interpreter's model`), and `--check` fails with "cannot check"
// rather than rejecting (or passing) a result it cannot know; the fuzzer counts these
// apart. The compiled code runs them as usual.
// RUN: ftuner-run %s --entry=wide_shift | FileCheck %s --check-prefix=JIT
// RUN: not ftuner-run %s --entry=wide_shift --check 2>&1 | FileCheck %s --check-prefix=WIDE
// RUN: not ftuner-run %s --entry=wide_shift --backend=interp 2>&1 | FileCheck %s --check-prefix=WIDE-INTERP
// RUN: not ftuner-run %s --entry=past_2_53 --check 2>&1 | FileCheck %s --check-prefix=BIG
// RUN: ftuner-run %s --entry=below_2_53 --check | FileCheck %s --check-prefix=OK
// An operand already rounded: the constant 2^63 - 1 is 2^63 in f64, and 2 x 2^63 wrapped
// to 0 where the compiled code gives -2 (a wrong reference, found by the fuzzer).
// RUN: not ftuner-run %s --entry=huge_constant --check 2>&1 | FileCheck %s --check-prefix=CONST
// CONST: ftuner-run: error: cannot check: {{.*}}'arith.constant' op the constant 9223372036854775807 is outside the reference interpreter's model
// JIT: result #0
// WIDE: ftuner-run: error: cannot check: {{.*}}check-unmodelled.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'arith.shrsi' op i200 is outside the reference interpreter's model: integers of more than 64 bits are not modelled
// WIDE-INTERP: error: 'arith.shrsi' op i200 is outside the reference interpreter's model
// BIG: ftuner-run: error: cannot check: {{.*}}'arith.addi' op 115292150460684697{{[0-9]}} is outside the reference interpreter's model: the f64 carrier does not hold it exactly
// OK: check: ok

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
