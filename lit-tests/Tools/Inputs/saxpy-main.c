/* Calls the compiled saxpy through MLIR's C interface (descriptors by pointer). */
#include <stdint.h>
#include <stdio.h>

typedef struct {
  float *allocated, *aligned;
  int64_t offset, size, stride;
} Desc1D;

void _mlir_ciface_saxpy(Desc1D *x, Desc1D *y, float a);

int main(void) {
  float xs[7], ys[7];
  for (int i = 0; i < 7; i++) {
    xs[i] = (float)i;
    ys[i] = 100.0f * (float)i;
  }
  Desc1D x = {xs, xs, 0, 7, 1}, y = {ys, ys, 0, 7, 1};
  _mlir_ciface_saxpy(&x, &y, 0.5f);
  for (int i = 0; i < 7; i++) printf("%g ", ys[i]);
  printf("\n");
  return 0;
}
