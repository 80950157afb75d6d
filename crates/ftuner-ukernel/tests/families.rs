//! uKernel families: snapshots on fixed targets, and properties on every target and on
//! random machines: every uKernel respects its target's register, cache, shared-memory
//! and thread limits.

use ftuner_hw::{CacheLevel, CpuIsa, CpuModel, GpuModel, HardwareModel};
use ftuner_ukernel::{cpu, gpu, DType, Family};
use proptest::prelude::*;

#[test]
fn snapshots_matmul_f32() {
    for t in ["zen3", "zen4", "zen5", "skylake-avx512", "a100", "h100"] {
        let m = HardwareModel::load(t).unwrap();
        let f = Family::build(&m, DType::F32).unwrap();
        insta::assert_snapshot!(format!("family_{t}_f32"), f.report());
    }
    let m = HardwareModel::load("h100").unwrap();
    insta::assert_snapshot!(
        "family_h100_f16",
        Family::build(&m, DType::F16).unwrap().report()
    );
}

#[test]
fn known_register_tiles() {
    // Hand-chosen micro-kernels for these cores. AVX-512 with two FMA units: 6 rows of
    // four vectors (AMD's AOCL-BLIS row-major LPGEMM kernels are 6x64); BLIS's 32x12 and
    // our former 14x32 are as efficient but issue 16 loads per 28 FMAs against 10 per 24.
    let skx = HardwareModel::load("skylake-avx512").unwrap();
    let k = cpu::register_tile(skx.cpu().unwrap(), DType::F32).unwrap();
    assert_eq!((k.mr, k.nr), (6, 64));
    // Three vectors per row are never chosen (see cpu.rs), even with registers for 9x48.
    assert!(k.nr.is_power_of_two());
    let mut haswell = skx.cpu().unwrap().clone();
    haswell.vector_bits = 256;
    haswell.datapath_bits = 256;
    haswell.vector_registers = 16;
    let k = cpu::register_tile(&haswell, DType::F32).unwrap();
    assert_eq!((k.mr, k.nr), (6, 16));
}

/// A convolution's family takes kc from L2 where the GEMM's keeps B's micro-panel in L1
/// (Zen 3's 6x16: 168 -> 472, the same tile), and is the GEMM's where B already streams
/// from L2 (the AVX-512 cores).
#[test]
fn conv_family_takes_kc_from_l2() {
    let zen3 = HardwareModel::load("zen3").unwrap();
    let c = zen3.cpu().unwrap();
    let f = cpu::build(c, DType::F32).unwrap();
    let conv = cpu::conv_family(c, &f).expect("zen3 convs get their own kc");
    assert_eq!((f.kc, conv.kc), (168, 472));
    assert_eq!((conv.main.mr, conv.main.nr), (f.main.mr, f.main.nr));
    assert!(conv.b_from_l2 && conv.mc < f.mc);
    for t in ["zen4", "zen5", "skylake-avx512", "sapphirerapids"] {
        let m = HardwareModel::load(t).unwrap();
        let c = m.cpu().unwrap();
        let f = cpu::build(c, DType::F32).unwrap();
        assert!(cpu::conv_family(c, &f).is_none(), "{t}");
        // Nor a tile narrowed for a conv's output lines (6x16 keeps its B in L1 there).
        let narrow = cpu::build_with(c, DType::F32, Some((6, 16)), None).unwrap();
        assert!(cpu::conv_family(c, &narrow).is_none(), "{t} 6x16");
    }
}

#[test]
fn conv_whole_k_where_the_panel_takes_half_of_l2() {
    let f32 = DType::F32;
    let zen5 = HardwareModel::load("zen5").unwrap();
    let c = zen5.cpu().unwrap();
    // 6x64 f32: 256 bytes of panel per k; half of a 1 MiB L2 is K = 2048.
    assert!(cpu::conv_whole_k(c, f32, (6, 64), 1152));
    assert!(cpu::conv_whole_k(c, f32, (6, 64), 2048));
    assert!(!cpu::conv_whole_k(c, f32, (6, 64), 2056));
    assert!(!cpu::conv_whole_k(c, f32, (6, 64), 4608));
    // A 6x16 tile keeps its B in L1 on Zen 5: its blocks stay.
    assert!(!cpu::conv_whole_k(c, f32, (6, 16), 576));
    assert!(!cpu::conv_whole_k(c, f32, (0, 64), 576));
    let spr = HardwareModel::load("sapphirerapids").unwrap();
    let c = spr.cpu().unwrap();
    assert!(cpu::conv_whole_k(c, f32, (6, 64), 4096));
    assert!(!cpu::conv_whole_k(c, f32, (6, 64), 4104));
    // Zen 3's 6x16 reads B from L1: never.
    let zen3 = HardwareModel::load("zen3").unwrap();
    assert!(!cpu::conv_whole_k(zen3.cpu().unwrap(), f32, (6, 16), 576));
}

fn check_cpu(c: &CpuModel, f: &cpu::CpuFamily) {
    for k in f.all() {
        assert!(
            k.registers <= c.vector_registers,
            "{}x{} uses {} > {} registers",
            k.mr,
            k.nr,
            k.registers,
            c.vector_registers
        );
        assert!(k.efficiency > 0.0 && k.efficiency <= 1.0 + 1e-9);
        assert!(k.nr.is_power_of_two() && (k.nr.is_multiple_of(f.lanes) || k.nr < f.lanes));
    }
    // The main tile hides the FMA latency.
    let acc = f.main.mr * f.main.nr / f.lanes;
    assert!(
        acc as f64 >= c.fma_latency as f64 * c.vector_fmas_per_cycle() - 1e-9
            || f.main.efficiency < 1.0
    );
    let s = (c.vector_bits / f.lanes / 8) as u64;
    // A and B micro-panels fit L1 (or L2, where B streams from there); the A block fits
    // L2; the B panel fits L3.
    let panels = f.kc as u64 * (f.main.mr + f.main.nr) as u64 * s;
    if f.b_from_l2 {
        assert!(panels <= c.l2.size, "kc={} overflows L2", f.kc);
        assert!(f.kc >= 8 && f.mc >= f.main.mr);
    } else {
        assert!(panels <= c.l1d.size, "kc={} overflows L1", f.kc);
    }
    assert!(
        (f.mc as u64 * f.kc as u64 * s) <= c.l2.size,
        "mc*kc overflows L2"
    );
    if let Some(l3) = &c.l3 {
        assert!(
            (f.nc as u64 * f.kc as u64 * s) <= l3.size,
            "nc*kc overflows L3"
        );
    }
    assert!(f.mc.is_multiple_of(f.main.mr) && f.nc.is_multiple_of(f.main.nr));
}

fn check_gpu(g: &GpuModel, f: &gpu::GpuFamily) {
    assert!(!f.tiles.is_empty());
    for k in &f.tiles {
        assert!(k.threads % g.warp_size == 0 && k.threads <= g.max_threads_per_block);
        assert!(k.regs_per_thread <= g.regs_per_thread.min(g.reg_budget_per_thread));
        assert!(k.regs_per_thread * k.threads <= g.regs_per_block);
        assert!(k.smem_bytes <= g.smem_per_block);
        assert!(k.blocks_per_sm >= 1 && k.blocks_per_sm <= g.max_blocks_per_sm);
        assert!(k.blocks_per_sm * k.threads <= g.max_threads_per_sm);
        assert!(k.smem_bytes * k.blocks_per_sm as u64 <= g.smem_per_sm);
        assert!(
            (k.bk * f.dtype.bytes()).is_multiple_of(g.sector_bytes()),
            "K tile not sector aligned"
        );
        assert!(k.est_gflops > 0.0);
    }
}

#[test]
fn every_builtin_target_respects_its_limits() {
    for (t, _) in ftuner_hw::BUILTIN_TARGETS
        .iter()
        .copied()
        .chain([("host", "")])
    {
        let m = HardwareModel::load(t).unwrap();
        for d in [DType::F32, DType::F16, DType::BF16] {
            match Family::build(&m, d).unwrap() {
                Family::Cpu(f) => {
                    check_cpu(m.cpu().unwrap(), &f);
                    if let Some(conv) = cpu::conv_family(m.cpu().unwrap(), &f) {
                        check_cpu(m.cpu().unwrap(), &conv);
                    }
                }
                Family::Gpu(f) => check_gpu(m.gpu().unwrap(), &f),
            }
        }
    }
}

#[test]
fn construction_is_fast() {
    // Not a timing assertion on the result, a guard against accidental blow-ups:
    // construction for every target must finish (the figure is reported by the bench).
    for (t, _) in ftuner_hw::BUILTIN_TARGETS {
        let m = HardwareModel::load(t).unwrap();
        Family::build(&m, DType::F32).unwrap();
    }
}

fn cache(size_kb: u64, ways: u32) -> CacheLevel {
    CacheLevel {
        size: size_kb * 1024,
        ways,
        line: 64,
        shared_by: 1,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn random_cpus(vb in prop::sample::select(vec![128u32, 256, 512]), regs in prop::sample::select(vec![16u32, 32]),
                   units in 1u32..5, lat in 3u32..7, ports in 1u32..4, l1 in prop::sample::select(vec![32u64, 48, 64]),
                   l1w in prop::sample::select(vec![4u32, 8, 12]), l2 in prop::sample::select(vec![256u64, 512, 1024, 2048]),
                   l2w in prop::sample::select(vec![4u32, 8, 16]), l3 in prop::option::of(prop::sample::select(vec![8192u64, 32768])),
                   dp_half in any::<bool>()) {
        let dp = if dp_half && vb > 128 { vb / 2 } else { vb };
        let c = CpuModel {
            isa: if vb == 128 { CpuIsa::Neon } else if vb == 256 { CpuIsa::Avx2 } else { CpuIsa::Avx512 },
            vector_bits: vb, vector_registers: regs, datapath_bits: dp, fma_units: units, fma_latency: lat, load_ports: ports,
            cores: 8, freq_ghz: 3.0, dram_bw_gbs: 100.0, has_f16: false, has_bf16: false,
            l1d: cache(l1, l1w), l2: cache(l2, l2w), l3: l3.map(|s| cache(s, 16)),
        };
        let f = cpu::build(&c, DType::F32).unwrap();
        check_cpu(&c, &f);
        if let Some(conv) = cpu::conv_family(&c, &f) {
            check_cpu(&c, &conv);
            prop_assert!(!f.b_from_l2 && conv.kc > f.kc);
            prop_assert_eq!((conv.main.mr, conv.main.nr), (f.main.mr, f.main.nr));
        }
    }

    #[test]
    fn random_gpus(sms in 8u32..200, tpsm in prop::sample::select(vec![1024u32, 1536, 2048]), bps in prop::sample::select(vec![16u32, 24, 32]),
                   rpt in prop::sample::select(vec![64u32, 128, 255]), smem_kb in prop::sample::select(vec![48u64, 64, 100, 164, 228]),
                   bw in 100.0f64..5000.0, peak in 1000.0f64..80000.0) {
        let g = GpuModel {
            compute_capability: "sm_80".into(), sm_count: sms, warp_size: 32, max_threads_per_sm: tpsm, max_threads_per_block: 1024,
            max_blocks_per_sm: bps, regs_per_thread: 255, regs_per_block: 65536, regs_per_sm: 65536,
            reg_budget_per_block: 65536, reg_budget_per_thread: rpt, smem_per_block: smem_kb * 1024 - 1024, smem_per_sm: smem_kb * 1024,
            l2_bytes: 1 << 22, dram_bw_gbs: bw, smem_bw_gbs: bw * 10.0, clock_ghz: 1.5, peak_fp32_gflops: peak,
            transaction_bytes: vec![32, 128], smem_banks: 32, smem_bank_bytes: 4,
            tensor_gflops: [("f16".to_string(), peak * 8.0)].into_iter().collect(),
            mma_shapes: [("f16".to_string(), "m16n8k16".to_string())].into_iter().collect(),
        };
        for d in [DType::F32, DType::F16] {
            let f = gpu::build(&g, d).unwrap();
            check_gpu(&g, &f);
        }
    }
}
