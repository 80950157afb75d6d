// RUN: ftuner-opt %s --bufferize --split-input-file --verify-diagnostics

func.func @pad(%a: tensor<4xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{'tensor.pad' op a padding value that depends on the position is not supported}}
  %p = tensor.pad %a low[1] high[1] {
  ^bb0(%i: index):
    %v = arith.index_cast %i : index to i64
    %f = arith.sitofp %v : i64 to f32
    tensor.yield %f : f32
  } : tensor<4xf32> to tensor<6xf32>
  return %p : tensor<6xf32>
}

// -----

// expected-error @+1 {{'func.func' op unranked tensor argument}}
func.func @unranked(%a: tensor<*xf32>) -> tensor<*xf32> {
  return %a : tensor<*xf32>
}
