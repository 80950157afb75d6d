//! Human-readable report of a model and its derived figures (`--print-hw-model`).

use crate::model::HardwareModel;
use std::fmt::Write;

fn bytes(b: u64) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else if b >= 1024 && b.is_multiple_of(1024) {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b} B")
    }
}

impl HardwareModel {
    pub fn report(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "target: {} ({})", self.name, self.description);
        if let Some(c) = self.cpu() {
            let _ = writeln!(s, "  kind: cpu, isa {:?}", c.isa);
            let _ = writeln!(
                s,
                "  vector: {} bits, {} registers, {} f32 lanes",
                c.vector_bits,
                c.vector_registers,
                c.lanes(4)
            );
            let _ = writeln!(
                s,
                "  fma: {} units x {} bits, latency {} cycles -> {:.2} full-width FMAs/cycle",
                c.fma_units,
                c.datapath_bits,
                c.fma_latency,
                c.vector_fmas_per_cycle()
            );
            let _ = writeln!(
                s,
                "  loads: {} ports -> {:.2} full-width loads/cycle",
                c.load_ports,
                c.vector_loads_per_cycle()
            );
            for (n, l) in [
                ("L1d", Some(&c.l1d)),
                ("L2", Some(&c.l2)),
                ("L3", c.l3.as_ref()),
            ] {
                if let Some(l) = l {
                    let _ = writeln!(
                        s,
                        "  {n}: {}, {}-way, {} B lines, {} sets, shared by {}",
                        bytes(l.size),
                        l.ways,
                        l.line,
                        l.sets(),
                        l.shared_by
                    );
                }
            }
            let _ = writeln!(
                s,
                "  cores: {}, clock {:.2} GHz, DRAM {:.1} GB/s",
                c.cores, c.freq_ghz, c.dram_bw_gbs
            );
            let _ = writeln!(s, "  f16 arithmetic: {}, bf16: {}", c.has_f16, c.has_bf16);
            let _ = writeln!(
                s,
                "  derived: {:.0} f32 FLOP/cycle/core",
                c.flops_per_cycle(4)
            );
            let _ = writeln!(
                s,
                "  derived: peak FP32 {:.1} GFLOP/s per core, {:.1} GFLOP/s per chip",
                c.peak_gflops_core(4),
                c.peak_gflops_chip(4)
            );
            let _ = writeln!(
                s,
                "  derived: machine balance {:.1} FLOP/byte",
                c.machine_balance(4)
            );
        }
        if let Some(g) = self.gpu() {
            let _ = writeln!(
                s,
                "  kind: gpu {}, {} SMs, warp {}",
                g.compute_capability, g.sm_count, g.warp_size
            );
            let _ = writeln!(
                s,
                "  threads: {} per SM, {} per block, {} blocks per SM",
                g.max_threads_per_sm, g.max_threads_per_block, g.max_blocks_per_sm
            );
            let _ = writeln!(s, "  registers: {} per thread, {} per block, {} per SM (budget {} per block, {} per thread)", g.regs_per_thread, g.regs_per_block, g.regs_per_sm, g.reg_budget_per_block, g.reg_budget_per_thread);
            let _ = writeln!(
                s,
                "  shared memory: {} per block, {} per SM, {} banks x {} B",
                bytes(g.smem_per_block),
                bytes(g.smem_per_sm),
                g.smem_banks,
                g.smem_bank_bytes
            );
            let _ = writeln!(
                s,
                "  L2: {}, DRAM {:.0} GB/s, shared memory {:.0} GB/s, transactions {:?} B",
                bytes(g.l2_bytes),
                g.dram_bw_gbs,
                g.smem_bw_gbs,
                g.transaction_bytes
            );
            let _ = writeln!(
                s,
                "  clock {:.2} GHz, peak FP32 {:.0} GFLOP/s",
                g.clock_ghz, g.peak_fp32_gflops
            );
            for (t, v) in &g.tensor_gflops {
                let shape = g.mma_shapes.get(t).map(|x| x.as_str()).unwrap_or("-");
                let _ = writeln!(s, "  tensor cores {t}: {v:.0} GFLOP/s, mma {shape}");
            }
            let _ = writeln!(
                s,
                "  derived: {:.0} GFLOP/s per SM, machine balance {:.1} FLOP/byte",
                g.peak_fp32_gflops / g.sm_count as f64,
                g.machine_balance()
            );
        }
        for n in &self.notes {
            let _ = writeln!(s, "  note: {n}");
        }
        s
    }
}
