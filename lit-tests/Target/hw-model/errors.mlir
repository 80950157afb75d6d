// Unknown targets and bad target files are one clear error.
// RUN: not ftuner-opt --print-hw-model --target=pdp11 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: ftuner-opt: error: unknown target 'pdp11' (expected host, zen4, skylake-avx512
// RUN: echo 'name = "x"' > %t.toml
// RUN: not ftuner-opt --print-hw-model --target=%t.toml 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: ftuner-opt: error: {{.*}}.toml: invalid target description: missing field `kind`
// Targets can come from a file.
// RUN: ftuner-opt --print-hw-model --target=%S/../../../targets/a100.toml | FileCheck %s --check-prefix=FILE
// FILE: kind: gpu sm_80, 108 SMs
