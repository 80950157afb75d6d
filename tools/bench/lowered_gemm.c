// Times the matmul that ftuner lowers (patch-ukernels + lower-ukernels, vector bodies),
// taken to machine code by upstream MLIR 22 (bufferization, vector/scf/memref to LLVM) and
// llc-22, against OpenBLAS sgemm on the same data, one thread, in the same run.
// Driven by lowered_gemm.sh; prints one line per shape with the median times and ratio.
#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  float *alloc, *aligned;
  int64_t offset, sizes[2], strides[2];
} Memref2;

void _mlir_ciface_mm(Memref2 *out, Memref2 *a, Memref2 *b);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static Memref2 view(float *p, int64_t r, int64_t c) {
  Memref2 m = {p, p, 0, {r, c}, {c, 1}};
  return m;
}

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 7;
  int64_t K = 768, N = 2304;
  int64_t Ms[] = {1, 16, 37, 100, 128, 203, 512};
  printf("%6s %6s %6s %12s %12s %8s %10s\n", "M", "N", "K", "ftuner_ms", "openblas_ms",
         "ratio", "max_err");
  for (size_t s = 0; s < sizeof Ms / sizeof Ms[0]; s++) {
    int64_t M = Ms[s];
    float *A = aligned_alloc(64, ((M * K * 4 + 63) / 64) * 64);
    float *B = aligned_alloc(64, K * N * 4);
    float *C = aligned_alloc(64, M * N * 4);
    srand(42);
    for (int64_t i = 0; i < M * K; i++) A[i] = (float)rand() / RAND_MAX - 0.5f;
    for (int64_t i = 0; i < K * N; i++) B[i] = (float)rand() / RAND_MAX - 0.5f;
    double t_ours[64], t_blas[64];
    float err = 0;
    for (int r = 0; r < runs && r < 64; r++) {
      Memref2 a = view(A, M, K), b = view(B, K, N), out;
      double t0 = now();
      _mlir_ciface_mm(&out, &a, &b);
      t_ours[r] = now() - t0;
      t0 = now();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A, K, B, N, 0.0f,
                  C, N);
      t_blas[r] = now() - t0;
      if (r == 0) {
        if (out.sizes[0] != M || out.sizes[1] != N) {
          fprintf(stderr, "bad result shape\n");
          return 1;
        }
        for (int64_t i = 0; i < M; i++)
          for (int64_t j = 0; j < N; j++) {
            float d = fabsf(out.aligned[out.offset + i * out.strides[0] + j * out.strides[1]] -
                            C[i * N + j]);
            if (d > err) err = d;
          }
      }
      free(out.alloc);
    }
    qsort(t_ours, runs, sizeof(double), cmp);
    qsort(t_blas, runs, sizeof(double), cmp);
    double mo = t_ours[runs / 2], mb = t_blas[runs / 2];
    printf("%6ld %6ld %6ld %12.3f %12.3f %8.2f %10.2e\n", (long)M, (long)N, (long)K, mo * 1e3,
           mb * 1e3, mo / mb, err);
    if (err > 1e-3f) {
      fprintf(stderr, "mismatch against OpenBLAS: %g\n", err);
      return 1;
    }
    free(A);
    free(B);
    free(C);
  }
  return 0;
}
