// y[i] = a * x[i] + y[i] for every i: called from C through _mlir_ciface_saxpy.
func.func @saxpy(%x: memref<?xf32>, %y: memref<?xf32>, %a: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf32>
    %w = memref.load %y[%i] : memref<?xf32>
    %m = arith.mulf %v, %a : f32
    %s = arith.addf %m, %w : f32
    memref.store %s, %y[%i] : memref<?xf32>
  }
  return
}
