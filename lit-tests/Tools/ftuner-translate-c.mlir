// An object file from ftuner-translate, linked with a C program that calls it.
// RUN: ftuner-translate %S/Inputs/saxpy.mlir --emit=obj -o %t.o
// RUN: cc %S/Inputs/saxpy-main.c %t.o -o %t.exe
// RUN: %t.exe | FileCheck %s
// REQUIRES: cc
// CHECK: 0 100.5 201 301.5 402 502.5 603
