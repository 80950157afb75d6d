// x^3, x^-2 and x^n with n = the tensor's length (not a constant).
#id = affine_map<(d0) -> (d0)>
func.func @powi(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : i64
  %cm2 = arith.constant -2 : i32
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %ni = arith.index_cast %n : index to i64
  %e = tensor.empty(%n) : tensor<?xf32>
  %cube = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.fpowi %a, %c3 : f32, i64
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %inv = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.fpowi %a, %cm2 : f32, i32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %dyn = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.fpowi %a, %ni : f32, i64
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %cube, %inv, %dyn : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}
