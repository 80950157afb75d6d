// Unknown targets and bad target files are one clear error.
// RUN: not ftuner-opt --print-hw-model --target=pdp11 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: ftuner-opt: error: unknown target 'pdp11' (expected host, zen3, zen4, zen5, skylake-avx512
// RUN: echo 'name = "x"' > %t.toml
// RUN: not ftuner-opt --print-hw-model --target=%t.toml 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: ftuner-opt: error: {{.*}}.toml: invalid target description: missing field `kind`
// Targets can come from a file.
// RUN: ftuner-opt --print-hw-model --target=%S/../../../targets/a100.toml | FileCheck %s --check-prefix=FILE
// FILE: kind: gpu sm_80, 108 SMs
// A target file is a regular file of at most 1 MiB (not a device or a FIFO).
// RUN: not ftuner-opt --print-hw-model --target=/dev/zero 2>&1 | FileCheck %s --check-prefix=DEV
// DEV: ftuner-opt: error: target file '/dev/zero' is not a regular file
// A file named on the command line also serves the module's ftuner.target it sets.
// RUN: ftuner-opt %s --target=%S/../../../targets/zen4.toml --patch-ukernels | FileCheck %s --check-prefix=OPT
// OPT: ukernel.patch
// The IR itself names only built-in targets (issue 25: `ftuner.target = "/dev/zero"` read
// until out of memory, a FIFO forever, and a parse error quoted the file): no file is read.
// RUN: sed 's|^module {|module attributes {ftuner.target = "/dev/zero"} {|' %s > %t.ir.mlir
// RUN: not ftuner-opt %t.ir.mlir --patch-ukernels 2>&1 | FileCheck %s --check-prefix=IR
// IR: error: unknown target '/dev/zero' named in the IR (expected host, zen3, zen4
// RUN: sed 's|^module {|module attributes {ftuner.target = "%S/../../../targets/zen4.toml"} {|' %s > %t.ir2.mlir
// RUN: not ftuner-opt %t.ir2.mlir --patch-ukernels 2>&1 | FileCheck %s --check-prefix=IR2
// IR2: error: unknown target '{{.*}}zen4.toml' named in the IR

module {
  func.func @mm(%a: tensor<?x64xf32>, %b: tensor<64x64xf32>, %c: tensor<?x64xf32>) -> tensor<?x64xf32> {
    %r = linalg.matmul ins(%a, %b : tensor<?x64xf32>, tensor<64x64xf32>) outs(%c : tensor<?x64xf32>) -> tensor<?x64xf32>
    return %r : tensor<?x64xf32>
  }
}
