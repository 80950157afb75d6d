// LLVM's model of the Intel AVX-512 server cores prefers 256-bit vectors in the loops it
// vectorizes itself; Emerald Rapids runs two 512-bit FMAs per cycle, and ftuner's target
// for it (the host on Emerald Rapids, `emeraldrapids`) adds -prefer-256-bit
// (ftuner_codegen::X86_TUNING). Sapphire Rapids (same core, not measured) keeps LLVM's choice.
// RUN: ftuner-translate %s --target=emeraldrapids --emit=asm | FileCheck %s --check-prefix=EMR
// RUN: ftuner-translate %s --target=sapphirerapids --emit=asm | FileCheck %s --check-prefix=SPR

// EMR: scale_nest0:
// EMR: vmulps {{.*}}%zmm
// SPR: scale_nest0:
// SPR-NOT: %zmm
// SPR: vmulps {{.*}}%ymm
func.func @scale(%x: tensor<4096xf32>, %o: tensor<4096xf32>) -> tensor<4096xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4096xf32>) outs(%o : tensor<4096xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4096xf32>
  return %r : tensor<4096xf32>
}
