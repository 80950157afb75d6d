// Zen 4 runs gathers in microcode; LLVM costs them as cheap on every AVX-512 core and
// vectorizes strided loops with them (MobileNetV2's depthwise border columns took ~100
// cycles per gather on Zen 4; the DCGAN generator's col2im phases ran 3-5x slower with
// gathers on Zen 5). ftuner's targets for znver4 and znver5 (the host on Zen 4 / Zen 5,
// `zen4`, `zen5`) add +prefer-no-gather (ftuner_codegen::X86_TUNING); other AVX-512 cores
// keep LLVM's choice.
// RUN: ftuner-translate %s --target=znver4 --emit=asm | FileCheck %s --check-prefix=ZEN4
// RUN: ftuner-translate %s --target=zen4 --emit=asm | FileCheck %s --check-prefix=ZEN4
// RUN: ftuner-translate %s --target=znver5 --emit=asm | FileCheck %s --check-prefix=ZEN4
// RUN: ftuner-translate %s --target=zen5 --emit=asm | FileCheck %s --check-prefix=ZEN4
// RUN: ftuner-translate %s --target=skylake-avx512 --emit=asm | FileCheck %s --check-prefix=SKX

// The loop is outlined (column_nest0): no gather anywhere in the output.
// ZEN4: column_nest0:
// ZEN4-NOT: vgather
// SKX: column_nest0:
// SKX: vgatherdps
func.func @column(%x: tensor<256x64xf32>, %o: tensor<256xf32>) -> tensor<256xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i, 0)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<256x64xf32>) outs(%o : tensor<256xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  return %r : tensor<256xf32>
}
