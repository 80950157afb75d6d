// REQUIRES: mlir-opt
// Our canonicalized output is accepted by upstream mlir-opt.
// RUN: ftuner-opt %examples/dcgan_generator.mlir --canonicalize --cse --mlir-print-op-generic | %mlir-opt | FileCheck %s
// CHECK: func.func @dcgan_generator
// CHECK: linalg.conv_2d_nchw_fchw
