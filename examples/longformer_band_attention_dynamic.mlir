// Longformer-style banded attention scores (tools/gen/band_attention.py --heads 12 --dynamic-seq --dim 64 --window 64 --dilation 4).
// Scores of sliding-window attention: query i against keys i + 1*(w - 64), w in [0, 129).
func.func @band_scores(%q: tensor<?x12x?x64xf32>, %k: tensor<?x12x?x64xf32>) -> tensor<?x12x?x129xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %b = tensor.dim %q, %c0 : tensor<?x12x?x64xf32>
  %c2 = arith.constant 2 : index
  %t = tensor.dim %q, %c2 : tensor<?x12x?x64xf32>
  %kp = tensor.pad %k low[0, 0, 64, 0] high[0, 0, 64, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %cst : f32
  } : tensor<?x12x?x64xf32> to tensor<?x12x?x64xf32>
  %e = tensor.empty(%b, %t) : tensor<?x12x?x129xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<?x12x?x129xf32>) -> tensor<?x12x?x129xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, i, w, k) -> (b, h, i, k)>, affine_map<(b, h, i, w, k) -> (b, h, i + w, k)>, affine_map<(b, h, i, w, k) -> (b, h, i, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %kp : tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) outs(%z : tensor<?x12x?x129xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<?x12x?x129xf32>
  return %s : tensor<?x12x?x129xf32>
}

// Scores of dilated (4) sliding-window attention: query i against keys i + 4*(w - 32), w in [0, 65).
func.func @dilated_band_scores(%q: tensor<?x12x?x64xf32>, %k: tensor<?x12x?x64xf32>) -> tensor<?x12x?x65xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %b = tensor.dim %q, %c0 : tensor<?x12x?x64xf32>
  %c2 = arith.constant 2 : index
  %t = tensor.dim %q, %c2 : tensor<?x12x?x64xf32>
  %kp = tensor.pad %k low[0, 0, 128, 0] high[0, 0, 128, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %cst : f32
  } : tensor<?x12x?x64xf32> to tensor<?x12x?x64xf32>
  %e = tensor.empty(%b, %t) : tensor<?x12x?x65xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<?x12x?x65xf32>) -> tensor<?x12x?x65xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, i, w, k) -> (b, h, i, k)>, affine_map<(b, h, i, w, k) -> (b, h, i + w * 4, k)>, affine_map<(b, h, i, w, k) -> (b, h, i, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %kp : tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) outs(%z : tensor<?x12x?x65xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<?x12x?x65xf32>
  return %s : tensor<?x12x?x65xf32>
}
