// Bad usage gives one clear error line and exit code 1.
// RUN: not ftuner-opt %s --pass-pipeline='builtin.module(no-such-pass)' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: ftuner-opt: error: invalid pass pipeline: 'no-such-pass' does not refer to a registered pass or pass pipeline
// RUN: not ftuner-opt %s --canonicalize=max-iterations=lots 2>&1 | FileCheck %s --check-prefix=BADOPT
// BADOPT: ftuner-opt: error: pass 'canonicalize': invalid value 'lots' for option 'max-iterations': expected an integer
// RUN: not ftuner-opt %s --canonicalize=no-such-option=1 2>&1 | FileCheck %s --check-prefix=NOOPT
// NOOPT: ftuner-opt: error: pass 'canonicalize': no such option 'no-such-option'
// RUN: not ftuner-opt %s --pass-pipeline='builtin.module(cse' 2>&1 | FileCheck %s --check-prefix=MALFORMED
// MALFORMED: ftuner-opt: error: invalid pass pipeline: expected ')' to close the pipeline of 'builtin.module'
// RUN: not ftuner-opt %t.does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: ftuner-opt: error: could not open input file
// RUN: not ftuner-opt %s --no-such-flag 2>&1 | FileCheck %s --check-prefix=FLAG
// FLAG: ftuner-opt: error: unexpected argument '--no-such-flag' found
// RUN: not ftuner-opt %s --pass-pipeline='func.func(cse)' 2>&1 | FileCheck %s --check-prefix=ANCHOR
// ANCHOR: ftuner-opt: error: can't run 'func.func' pass manager on 'builtin.module' op
// RUN: ftuner-opt --help | FileCheck %s --check-prefix=HELP
// HELP: Passes:
// HELP: --canonicalize
// HELP: max-iterations=<int>
// HELP: --cse
// HELP: --symbol-dce

func.func @f() {
  return
}
