// The DCGAN generator's fourth transposed conv after ollie-derive: its two col2im eOperators
// (sum the 4x4 taps of the matmul's output into the 2x upsampled image), alone, for
// measuring eOperator code (docs/ollie.md, "eOperators on the thread pool").
func.func @col2im(%e: tensor<?x16x16x64x4x4xf32>) -> tensor<?x64x32x32xf32> {
  %a = ta.expr L<i0:0:dim(%e, 0), i1:0:64, i2:0:16, i3:0:32, i4:0:4> Sum<k0:0:4> { %e[i0, i2, (i3 + k0 - 2) / 2, i1, i4, k0] } ins(%e : tensor<?x16x16x64x4x4xf32>) -> tensor<?x64x16x32x4xf32>
  %b = ta.expr L<i0:0:dim(%a, 0), i1:0:64, i2:0:32, i3:0:32> Sum<k0:0:4> { %a[i0, i1, (i2 + k0 - 2) / 2, i3, k0] } ins(%a : tensor<?x64x16x32x4xf32>) -> tensor<?x64x32x32xf32>
  return %b : tensor<?x64x32x32xf32>
}
