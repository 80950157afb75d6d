// Files ftuner's parser rejects for a reason other than operations it does not model never
// reach upstream MLIR, which runs in-process and crashes on some of them (issue 25): a
// linalg.transpose whose permutation array is not closed segfaults mlir-opt-22 itself.
// ftuner-opt, ftuner-run and ftuner-translate report our own located error and exit 1.
// RUN: not ftuner-opt %s 2>&1 | FileCheck %s
// RUN: not ftuner-run %s 2>&1 | FileCheck %s
// RUN: not ftuner-translate %s 2>&1 | FileCheck %s
// CHECK: upstream-fallback-contained.mlir:{{[0-9]+}}:{{[0-9]+}}: error:

// Past an op of a dialect only upstream knows (tosa.abs in its custom syntax), the rest
// of the file is upstream's to read, and the same unclosed array segfaults it: upstream
// runs in a child process, so that is a note on our error, never a crash of the driver.
// RUN: sed -n '/^func.func @f/,$p' %s | sed 's|^  %%t = linalg.transpose ins(%%a|  %%x = tosa.abs %%a : (tensor<2x3xf32>) -> tensor<2x3xf32>\n  %%t = linalg.transpose ins(%%x|' > %t.tosa.mlir
// RUN: not ftuner-opt %t.tosa.mlir 2>&1 | FileCheck %s --check-prefix=CHILD
// RUN: not ftuner-run %t.tosa.mlir 2>&1 | FileCheck %s --check-prefix=CHILD
// CHILD: error: {{.*}}tosa
// CHILD: note: upstream MLIR could not read it either: upstream MLIR crashed reading this file (signal 11)

// A NUL byte: our error, not a panic of the upstream bridge.
// RUN: printf 'func.func @f() {\000}\n' > %t.nul.mlir
// RUN: not ftuner-opt %t.nul.mlir 2>&1 | FileCheck %s --check-prefix=NUL
// NUL: error:
// NUL-NOT: panicked

func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %t = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%b : tensor<3x2xf32>) permutation = [1, 0
  return %t : tensor<3x2xf32>
}
