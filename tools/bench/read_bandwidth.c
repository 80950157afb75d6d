// Single-thread read bandwidth: the roofline a GEMV reading A from memory is held to
// (docs/benchmarks.md). Sums a float array larger than the caches with four AVX-512
// accumulators, best of 7 passes, and prints GB/s.
//   gcc -O2 -mavx512f -o /tmp/read_bandwidth tools/bench/read_bandwidth.c
//   /tmp/read_bandwidth [bytes, default 256 MiB]
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <immintrin.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  size_t n = (argc>1? atol(argv[1]) : 256L<<20)/4; // bytes -> floats
  float *a = aligned_alloc(64, n*4);
  for(size_t i=0;i<n;i++) a[i]=1.0f;
  double best=1e9; float s=0;
  for(int r=0;r<7;r++){
    double t=now();
    __m512 acc0=_mm512_setzero_ps(),acc1=acc0,acc2=acc0,acc3=acc0;
    for(size_t i=0;i<n;i+=64){
      acc0=_mm512_add_ps(acc0,_mm512_load_ps(a+i));
      acc1=_mm512_add_ps(acc1,_mm512_load_ps(a+i+16));
      acc2=_mm512_add_ps(acc2,_mm512_load_ps(a+i+32));
      acc3=_mm512_add_ps(acc3,_mm512_load_ps(a+i+48));
    }
    s+=_mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc0,acc1),_mm512_add_ps(acc2,acc3)));
    t=now()-t; if(t<best)best=t;
  }
  printf("%zu MiB: best %.2f GB/s (sum %g)\n", n*4>>20, n*4/best/1e9, s);
}
