// A module declaring a function of the process does not get to call it (issue 25:
// `func.func private @getpid` was resolved by the dynamic linker and called) unless asked.
// RUN: not ftuner-run %s 2>&1 | FileCheck %s --check-prefix=NATIVE
// NATIVE: ftuner-run: error: compilation failed {{.*}}: the module calls the external function @getpid, which ftuner does not provide
// RUN: ftuner-run %s --allow-native-calls | FileCheck %s --check-prefix=NATIVE-OK
// NATIVE-OK: result #0: scalar
func.func private @getpid() -> i32
func.func @native() -> i32 {
  %p = func.call @getpid() : () -> i32
  return %p : i32
}
