//! GPU uKernels: thread-block, warp and thread tiles from the model's limits, each with
//! an estimated throughput (FTuner, "FTuner: A Fast Dynamic Shape Tensors Program
//! Auto-Tuner for Deep Learning Compilers", 2024; Roller, OSDI 2022).
//!
//! Candidates: thread tiles `tm x tn` in {1,2,4,8}², warps laid out `wy x wx` threads
//! (`wy*wx = warp_size`), blocks of `by x bx` warps, K tiles `bk` whose bytes are a
//! multiple of the memory sector. With tensor cores (f16/bf16 with an MMA shape), warp
//! tiles are multiples of the MMA shape instead. Constraints:
//!
//! * threads per block a multiple of the warp size and `<= max_threads_per_block`;
//! * registers per thread `tm*tn + tm + tn + 16` (accumulators, fragments, addressing)
//!   `<= reg_budget_per_thread`, and per block `<= reg_budget_per_block`;
//! * shared memory `2 * (bm + bn) * bk * S` (double buffered) `<= smem_per_block`;
//! * occupancy: `blocks/SM = min(max_blocks, threads/SM / threads, regs/SM / regs,
//!   smem/SM / smem) >= 1`.
//!
//! Estimated time of one `bk` step of one block on one SM (the SM shared by its resident
//! blocks): compute `2 bm bn bk / (peak/SM * u)` with `u = min(1, warps/SM / 8)` (latency
//! hiding needs about 8 resident warps), global loads `(bm + bn) bk S / (DRAM bw/SM)`,
//! shared loads `threads (tm + tn) bk S / (smem bw/SM)`; the step takes the largest.
//! Throughput is FLOPs over time. For each block shape the best candidate is kept; warp
//! layouts include 1x32 and 32x1 so that blocks one row or column wide exist for edges.

use crate::DType;
use ftuner_hw::GpuModel;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq)]
pub struct GpuUkernel {
    pub bm: u32,
    pub bn: u32,
    pub bk: u32,
    pub wm: u32,
    pub wn: u32,
    /// Per-thread tile (for tensor cores, the MMA shape's m and n).
    pub tm: u32,
    pub tn: u32,
    pub threads: u32,
    pub regs_per_thread: u32,
    pub smem_bytes: u64,
    pub blocks_per_sm: u32,
    pub tensor_cores: bool,
    /// Estimated GFLOP/s of a large GEMM made of this tile.
    pub est_gflops: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GpuFamily {
    pub dtype: DType,
    pub tiles: Vec<GpuUkernel>,
}

struct Cand {
    tm: u32,
    tn: u32,
    wy: u32,
    wx: u32,
    by: u32,
    bx: u32,
    bk: u32,
}

fn evaluate(
    g: &GpuModel,
    dtype: DType,
    c: &Cand,
    mma: Option<(u32, u32, u32)>,
) -> Option<GpuUkernel> {
    let s = dtype.bytes() as u64;
    let threads = g.warp_size * c.by * c.bx;
    if threads > g.max_threads_per_block || !threads.is_multiple_of(g.warp_size) {
        return None;
    }
    let (wm, wn, regs) = match mma {
        None => (c.tm * c.wy, c.tn * c.wx, c.tm * c.tn + c.tm + c.tn + 16),
        Some((mm, mn, _)) => {
            // c.tm x c.tn MMA tiles per warp; f32 accumulators spread over the warp.
            let wm = mm * c.tm;
            let wn = mn * c.tn;
            let acc = wm * wn / g.warp_size;
            (wm, wn, acc + (wm + wn) * c.bk / g.warp_size / 2 + 16)
        }
    };
    let (bm, bn) = (wm * c.by, wn * c.bx);
    if regs > g.reg_budget_per_thread.min(g.regs_per_thread)
        || regs * threads > g.reg_budget_per_block.min(g.regs_per_block)
    {
        return None;
    }
    if !(c.bk as u64 * s).is_multiple_of(g.sector_bytes() as u64) {
        return None;
    }
    let smem = 2 * (bm + bn) as u64 * c.bk as u64 * s;
    if smem > g.smem_per_block {
        return None;
    }
    let regs_alloc = regs.div_ceil(8) * 8; // allocation granularity
    let bps = g
        .max_blocks_per_sm
        .min(g.max_threads_per_sm / threads)
        .min(g.regs_per_sm / (regs_alloc * threads))
        .min((g.smem_per_sm / smem.max(1)) as u32);
    if bps == 0 {
        return None;
    }
    let warps = bps * threads / g.warp_size;
    let peak = match (mma, dtype) {
        (Some(_), DType::F16) => g
            .tensor_gflops
            .get("f16")
            .copied()
            .unwrap_or(g.peak_fp32_gflops),
        (Some(_), DType::BF16) => g
            .tensor_gflops
            .get("bf16")
            .copied()
            .unwrap_or(g.peak_fp32_gflops),
        _ => g.peak_fp32_gflops,
    };
    let sm_peak = peak / g.sm_count as f64 * (warps as f64 / 8.0).min(1.0);
    let flops = 2.0 * bm as f64 * bn as f64 * c.bk as f64;
    // Resident blocks share the SM: per block, a 1/bps share of each resource.
    let t_compute = flops * bps as f64 / sm_peak;
    let t_dram = (bm + bn) as f64 * c.bk as f64 * s as f64 * bps as f64
        / (g.dram_bw_gbs / g.sm_count as f64);
    let smem_reads = match mma {
        None => threads as f64 * (c.tm + c.tn) as f64 * c.bk as f64 * s as f64,
        Some(_) => (c.by * c.bx) as f64 * (wm + wn) as f64 * c.bk as f64 * s as f64,
    };
    let t_smem = smem_reads * bps as f64 / (g.smem_bw_gbs / g.sm_count as f64);
    let t = t_compute.max(t_dram).max(t_smem);
    let est = flops * bps as f64 / t * g.sm_count as f64;
    Some(GpuUkernel {
        bm,
        bn,
        bk: c.bk,
        wm,
        wn,
        tm: c.tm,
        tn: c.tn,
        threads,
        regs_per_thread: regs,
        smem_bytes: smem,
        blocks_per_sm: bps,
        tensor_cores: mma.is_some(),
        est_gflops: est,
    })
}

/// Build the family for `dtype` on `g`: for each block shape, its best tiling.
pub fn build(g: &GpuModel, dtype: DType) -> Result<GpuFamily, String> {
    let mma = match dtype {
        DType::F32 => None,
        DType::F16 => g.mma_shape("f16"),
        DType::BF16 => g.mma_shape("bf16"),
    };
    let mut best: Vec<GpuUkernel> = vec![];
    let layouts: Vec<(u32, u32)> = [(4u32, 8u32), (8, 4), (2, 16), (16, 2), (1, 32), (32, 1)]
        .into_iter()
        .filter(|(a, b)| a * b == g.warp_size)
        .collect();
    let layouts = if layouts.is_empty() {
        vec![(1, g.warp_size)]
    } else {
        layouts
    };
    let tiles: &[u32] = &[1, 2, 4, 8];
    for &tm in tiles {
        for &tn in tiles {
            for &(wy, wx) in &layouts {
                for by in [1u32, 2, 4] {
                    for bx in [1u32, 2, 4] {
                        for bk in [8u32, 16, 32, 64] {
                            let c = Cand {
                                tm,
                                tn,
                                wy,
                                wx,
                                by,
                                bx,
                                bk,
                            };
                            let Some(k) = evaluate(g, dtype, &c, mma) else {
                                continue;
                            };
                            match best.iter_mut().find(|b| b.bm == k.bm && b.bn == k.bn) {
                                Some(b) => {
                                    if k.est_gflops > b.est_gflops * (1.0 + 1e-9) {
                                        *b = k;
                                    }
                                }
                                None => best.push(k),
                            }
                        }
                    }
                }
            }
        }
    }
    if best.is_empty() {
        return Err("no thread-block tile satisfies the target's limits".into());
    }
    // Keep power-of-two block shapes up to 256 (the patch planner combines them; the
    // narrow ones cover small residues exactly instead of padding them).
    best.retain(|k| k.bm.is_power_of_two() && k.bn.is_power_of_two() && k.bm <= 256 && k.bn <= 256);
    best.sort_by(|a, b| {
        (b.bm * b.bn, b.bm)
            .cmp(&(a.bm * a.bn, a.bm))
            .then(b.est_gflops.total_cmp(&a.est_gflops))
    });
    Ok(GpuFamily { dtype, tiles: best })
}

impl GpuFamily {
    /// The largest tile within 1% of the highest estimated throughput (larger tiles reuse
    /// more data per load; the estimate saturates at the peak).
    pub fn main(&self) -> &GpuUkernel {
        let best = self.tiles.iter().map(|k| k.est_gflops).fold(0.0, f64::max);
        self.tiles
            .iter()
            .find(|k| k.est_gflops >= 0.99 * best)
            .unwrap_or(&self.tiles[0])
    }
    pub fn report(&self) -> String {
        let mut s = String::new();
        let m = self.main();
        let _ = writeln!(
            s,
            "gpu uKernels ({}): main block {}x{}x{} ({} threads, {:.0} GFLOP/s est.)",
            self.dtype.name(),
            m.bm,
            m.bn,
            m.bk,
            m.threads,
            m.est_gflops
        );
        let _ = writeln!(
            s,
            "  {:>11} {:>8} {:>6} {:>7} {:>5} {:>8} {:>4} {:>3} {:>10}",
            "block", "warp", "thread", "threads", "regs", "smem", "occ", "tc", "est GFLOP/s"
        );
        for k in &self.tiles {
            let _ = writeln!(
                s,
                "  {:>11} {:>8} {:>6} {:>7} {:>5} {:>8} {:>4} {:>3} {:>10.0}",
                format!("{}x{}x{}", k.bm, k.bn, k.bk),
                format!("{}x{}", k.wm, k.wn),
                format!("{}x{}", k.tm, k.tn),
                k.threads,
                k.regs_per_thread,
                k.smem_bytes,
                k.blocks_per_sm,
                if k.tensor_cores { "y" } else { "n" },
                k.est_gflops
            );
        }
        s
    }
}
