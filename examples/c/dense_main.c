/* A C program serving the dense layer compiled by ftuner as a shared library (no Python,
 * no ftuner): builds libdense.so with
 *   ftuner-translate ../dense_dynamic.mlir --emit=shared -o libdense.so
 * then
 *   cc dense_main.c -I. -L. -ldense -Wl,-rpath,. -o dense_main && ./dense_main
 * It runs the layer (y = x W^T + b, W: 2304x768) at several batch sizes on one thread and
 * on three (the library's own thread pool), compares every element with a plain C loop,
 * and shows the error code and message of a wrong call. */
#include "dense.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static float frand(unsigned *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)((*s >> 8) & 0xffff) / 65536.0f - 0.5f;
}

int main(void) {
  const int K = 768, N = 2304;
  unsigned seed = 1;
  float *w = malloc(sizeof(float) * N * K), *b = malloc(sizeof(float) * N);
  for (int i = 0; i < N * K; i++) w[i] = frand(&seed) * 0.05f;
  for (int i = 0; i < N; i++) b[i] = frand(&seed);
  int batches[] = {1, 7, 37, 64};
  char err[256];
  for (int run = 0; run < 8; run++) {
    int M = batches[run % 4], threads = run < 4 ? 1 : 3;
    dense_set_num_threads(threads);
    float *x = malloc(sizeof(float) * M * K);
    for (int i = 0; i < M * K; i++) x[i] = frand(&seed);
    ftuner_tensor in[3] = {
        {x, 0, FTUNER_F32, 2, {M, K}},
        {w, 0, FTUNER_F32, 2, {N, K}},
        {b, 0, FTUNER_F32, 1, {N}},
    };
    ftuner_tensor out[1];
    int rc = dense_run(in, 3, out, 1, err, sizeof err);
    if (rc) { printf("error %d: %s\n", rc, err); return 1; }
    double worst = 0;
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        double r = b[j];
        for (int k = 0; k < K; k++) r += (double)x[i * K + k] * w[j * K + k];
        double d = fabs(r - ((float *)out[0].data)[i * N + j]);
        if (d > worst) worst = d;
      }
    printf("%d thread%s, batch %d: output %lldx%lld, max error %.2e\n", dense_num_threads(), threads > 1 ? "s" : "", M, (long long)out[0].shape[0], (long long)out[0].shape[1], worst);
    if (worst > 1e-3) return 1;
    dense_free(&out[0]);
    free(x);
  }
  /* A wrong shape: an error code and a message, nothing runs. */
  float x1[767];
  ftuner_tensor bad[3] = {{x1, 0, FTUNER_F32, 2, {1, 767}}, {w, 0, FTUNER_F32, 2, {N, K}}, {b, 0, FTUNER_F32, 1, {N}}};
  ftuner_tensor out[1];
  int rc = dense_run(bad, 3, out, 1, err, sizeof err);
  printf("wrong shape: error %d: %s\n", rc, err);
  printf("signature: %s\n", dense_signature());
  return rc == 1 ? 0 : 1;
}
