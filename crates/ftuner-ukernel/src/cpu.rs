//! CPU uKernels: register tile, cache tiles and the edge family, from the model.
//!
//! Register tile (per k step the kernel does `mr * nr / N_vec` vector FMAs, loads
//! `nr / N_vec` vectors of B and `mr` broadcasts of A):
//!
//! * registers: `mr * nr/N_vec` accumulators + `nr/N_vec` B vectors + 1 A broadcast
//!   `<= R` (the vector register file);
//! * time per k step: `t = max(mr*nr/N_vec / F, (nr/N_vec + mr*b) / P, L)` where `F` is
//!   full-width FMAs per cycle, `P` full-width loads per cycle, `b` the cost of one A
//!   element (1 broadcast; `1/N_vec` where FMAs take a lane operand, as NEON's `fmla`),
//!   and `L` the FMA latency (each accumulator is updated once per k step, so at least
//!   `L * F` independent accumulators are needed to keep the FMA units busy — the
//!   latency x throughput condition of Low et al., §3);
//! * efficiency `= (mr*nr/N_vec / F) / t`; the tile with the highest efficiency wins,
//!   then the most FMAs per load instruction `(mr*nr/N_vec) / (nr/N_vec + mr*b)` (the
//!   register tile's arithmetic intensity in instructions: the load ports' headroom for
//!   the misses, prefetches and C traffic the model does not count, and fewer rows, whose
//!   A elements and C lines can share one L1 set when a leading dimension is a multiple
//!   of 4 KiB), then the largest `mr*nr` (fewer C updates per FLOP);
//! * a row holds a power-of-two number of vectors (1, 2 or 4): LLVM splits a
//!   `vector<3 x N_vec>` accumulator carried by a loop into pieces and reassembles it
//!   every iteration (measured: 35x slower than two vectors).
//!
//! Cache tiles (Low et al., §4, with `N`, `W`, `C` the sets, ways and line size of a
//! level and `S` the element size):
//!
//! * `kc`: the `kc x nr` micro-panel of B and an `mr x kc` micro-panel of A share L1 with
//!   one way left for C: `C_A = floor((W1 - 1) / (1 + nr/mr))`, `kc = C_A N1 C1 / (mr S)`;
//!   unless the tile's k step leaves the load ports idle half its cycles: then B's
//!   micro-panel streams from L2 and kc comes from L2 ([`kc_from_l2`]);
//! * `mc`: the `mc x kc` block of A lives in L2 beside the B micro-panel and one way:
//!   `C_B = ceil(kc nr S / (N2 C2))`, `mc = (W2 - 1 - C_B) N2 C2 / (kc S)`, a multiple of `mr`;
//! * `nc`: the `kc x nc` panel of B lives in L3 beside the A block and one way:
//!   `C_A3 = ceil(mc kc S / (N3 C3))`, `nc = (W3 - 1 - C_A3) N3 C3 / (kc S)`, a multiple of `nr`.

use crate::DType;
use ftuner_hw::{CpuIsa, CpuModel};
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq)]
pub struct CpuUkernel {
    pub mr: u32,
    pub nr: u32,
    /// Vector registers the kernel holds live.
    pub registers: u32,
    /// Cycles of one k step.
    pub cycles_per_k: f64,
    /// Fraction of the FMA units' peak the k loop reaches.
    pub efficiency: f64,
    /// Estimated cycles of one call over `kc` (k loop plus loading and storing C).
    pub cycles_per_call: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CpuFamily {
    pub dtype: DType,
    /// f32 lanes the arithmetic uses (f16/bf16 are widened where the target has no native
    /// arithmetic for them).
    pub lanes: u32,
    pub main: CpuUkernel,
    pub kc: u32,
    pub mc: u32,
    /// Where the `kc x nr` micro-panel of B is meant to live: L2 when the main tile's k
    /// step leaves the load ports enough slack to stream it from there (kc then set by L2),
    /// else L1 (Low et al.).
    pub b_from_l2: bool,
    pub nc: u32,
    /// Smaller kernels for edges: every `m` of {mr, powers of two below mr} with every
    /// `n` of {nr, nr/2, ..., 1}.
    pub edges: Vec<CpuUkernel>,
}

struct Rates {
    lanes: u32,
    regs: u32,
    f: f64,
    p: f64,
    lat: f64,
    bcast: f64,
}

fn kernel(r: &Rates, mr: u32, nr: u32, kc: u32) -> CpuUkernel {
    let nv = nr.div_ceil(r.lanes);
    let fmas = (mr * nv) as f64;
    let t_fma = fmas / r.f;
    let t_load = (nv as f64 + mr as f64 * r.bcast) / r.p;
    let t = t_fma.max(t_load).max(r.lat);
    // C tile: load and store every accumulator once per call.
    let c_traffic = 2.0 * fmas / r.p;
    CpuUkernel {
        mr,
        nr,
        registers: tile_registers(mr, nv),
        cycles_per_k: t,
        efficiency: t_fma / t,
        cycles_per_call: kc as f64 * t + c_traffic,
    }
}

fn rates(cpu: &CpuModel, dtype: DType) -> Rates {
    // Targets without native f16/bf16 arithmetic widen to f32.
    let native = match dtype {
        DType::F32 => true,
        DType::F16 => cpu.has_f16,
        DType::BF16 => false,
    };
    let bytes = if native { dtype.bytes() } else { 4 };
    Rates {
        lanes: cpu.lanes(bytes),
        regs: cpu.vector_registers,
        f: cpu.vector_fmas_per_cycle(),
        p: cpu.vector_loads_per_cycle(),
        lat: cpu.fma_latency as f64,
        bcast: if matches!(cpu.isa, CpuIsa::Neon | CpuIsa::Sve) {
            1.0 / cpu.lanes(bytes) as f64
        } else {
            1.0
        },
    }
}

/// The register tile alone.
pub fn register_tile(cpu: &CpuModel, dtype: DType) -> Result<CpuUkernel, String> {
    let r = rates(cpu, dtype);
    let round = |x: f64| (x * 1e6).round() / 1e6;
    let mut best: Option<((f64, f64, u32, u32), CpuUkernel)> = None;
    for nv in [1u32, 2, 4] {
        for mr in 1..=r.regs {
            if tile_registers(mr, nv) > r.regs {
                break;
            }
            let k = kernel(&r, mr, nv * r.lanes, 1);
            let fmas_per_load = (mr * nv) as f64 / (nv as f64 + mr as f64 * r.bcast);
            let key = (
                round(k.efficiency),
                round(fmas_per_load),
                mr * nv * r.lanes,
                nv,
            );
            if best.as_ref().is_none_or(|(b, _)| key > *b) {
                best = Some((key, k));
            }
        }
    }
    best.map(|b| b.1)
        .ok_or_else(|| format!("no register tile fits {} vector registers", r.regs))
}

/// Whether the main tile's k step leaves the load ports idle at least half its cycles
/// (`t_load <= t_fma / 2`; AVX-512's 6x64 on Zen 4 and Zen 5 and Skylake-X, not AVX2's
/// 6x16): then its B row (nr elements, 4 lines for 6x64 f32, ~11 B per cycle on Zen 4)
/// can come from L2, whose hit latency the out-of-order core overlaps with the FMAs of
/// the previous k steps, and the kc x nr micro-panel of B need not stay in L1.
fn b_streams_from_l2(r: &Rates, mr: u32, nr: u32) -> bool {
    let nv = nr.div_ceil(r.lanes) as f64;
    let t_fma = mr as f64 * nv / r.f;
    let t_load = (nv + mr as f64 * r.bcast) / r.p;
    t_load <= 0.5 * t_fma
}

/// Whether a convolution's whole reduction (`k` = C x kh x kw, static) runs as one k block
/// with the register tile `mr x nr`: where B's micro-panel streams from L2
/// ([`b_streams_from_l2`]) and the whole `k x nr` panel takes at most half of L2. The GEMM
/// splits K so that an `mc x kc` block of packed A shares L2 with the panel; a conv packs
/// no A per k block (it reads the image, or rows packed whole along K), and each of its k
/// blocks is one more pass over all of C — an NCHW output read and written across the
/// tile's channels — with every tile's setup. Measured on Zen 5 (AMD EPYC family 26 model
/// 2, 1 MiB L2), one thread, ResNet-50's 3x3 layers (`tools/bench/conv_layers.py
/// --variant` with `lower-ukernels{k-blocking=false}`, two sittings of 9 and 11 alternated
/// rounds, docs/bench/zen5-2026-12-07/): K = 1152 (a 288 KiB panel) 5-7% faster in one
/// block than in two of 576, K = 2304 (576 KiB) 2-12% faster than in four, K = 4608 (1.1
/// MiB, over L2) 14-23% slower. Half of L2, not more: on a Xeon with a 2 MiB L2 (family 6
/// model 167) the 512-channel conv's 1.1 MiB panel in one block was what the k blocks were
/// introduced for (57% of that nest's samples on B's loads), and on Zen 3 a panel at the
/// same share of its L2 (K = 4608 at nr = 16) ran 4% slower in one block; K = 2304 on Zen 5
/// is left to its blocks by this bound. Cores whose B stays in L1 (Zen 3's 6x16) keep their
/// blocks whatever K.
pub fn conv_whole_k(cpu: &CpuModel, dtype: DType, (mr, nr): (u32, u32), k: u64) -> bool {
    let r = rates(cpu, dtype);
    if mr == 0 || nr == 0 || !b_streams_from_l2(&r, mr, nr) {
        return false;
    }
    let s = (cpu.vector_bits / r.lanes / 8) as u64;
    k.saturating_mul(nr as u64).saturating_mul(s) <= cpu.l2.size / 2
}

/// A convolution's family `f` with its whole reduction `k` as one k block where
/// [`conv_whole_k`] says so and `k` is longer than `f`'s kc (None otherwise): kc is `k`
/// rounded up to 8, mc shrinks so that `mc x kc` stays `f`'s (the L2 area a flat-form
/// conv's row blocks are sized from, `lower::conv_flat::block_rows`), nc stays `f`'s.
pub fn conv_one_block(cpu: &CpuModel, f: &CpuFamily, k: u64) -> Option<CpuFamily> {
    let (mr, nr) = (f.main.mr, f.main.nr);
    let kc = u32::try_from(k.checked_add(7)? / 8 * 8).ok()?;
    if kc <= f.kc || !conv_whole_k(cpu, f.dtype, (mr, nr), k) {
        return None;
    }
    let mut one = build_with(cpu, f.dtype, Some((mr, nr)), Some(kc)).ok()?;
    let area = f.mc as u64 * f.kc as u64;
    let mr = mr.max(1) as u64;
    one.mc = u32::try_from((area / kc as u64 / mr * mr).max(mr)).unwrap_or(f.mc);
    one.nc = f.nc;
    Some(one)
}

/// `kc` when B's micro-panel streams from L2: the `mc x kc` block of A fills L2's
/// `W2 - 1` ways (`X = (W2 - 1) N2 C2 / S` elements, `mc kc = X`). Per multiply-add, C
/// is read and written once per kc (`2 / kc` elements) and B's `kc x N` panel is read
/// from L3 once per mc rows (`1 / mc`); `2 / kc + 1 / mc` with `mc kc = X` is smallest
/// at `kc = sqrt(2 X)`. (On Zen 4: X = 7 * 2048 * 64 / 4 = 229,376, kc = 677 -> 672,
/// against 96 from L1. Measured on W1, one thread, library-time / ftuner-time median:
/// kc = 96 0.92, 192 0.98, 256 1.02, 384 1.01, 472 1.02, 512 1.01, 672 1.01 — flat from
/// 256 up; OpenBLAS's own kc is 384-448 on these cores.) `mc` then follows as before,
/// leaving B's micro-panel its ways too, so `mc kc` ends a little below X (240 * 672 =
/// 161,280 on Zen 4).
fn kc_from_l2(l2: &ftuner_hw::CacheLevel, s: f64) -> f64 {
    let x = l2.ways.saturating_sub(1).max(1) as f64 * l2.sets() as f64 * l2.line as f64 / s;
    (2.0 * x).sqrt()
}

fn round_down(v: f64, m: u32) -> u32 {
    let v = v.max(0.0) as u32;
    (v / m.max(1)) * m.max(1)
}

/// Vector registers an `mr`-row register tile of `nv` vectors per row holds live: its
/// `mr * nv` accumulators, a row of B (`nv` vectors) and one A broadcast. (A k loop split
/// over several accumulator sets holds this once per set: `lower-ukernels`.)
pub fn tile_registers(mr: u32, nv: u32) -> u32 {
    mr * nv + nv + 1
}

/// Whether a register tile whose output rows are `streams` lines `stride` bytes apart (an
/// NCHW conv's tile: one line per output channel, the channel stride between them) keeps
/// them all in L1 while its rows fill them: no set of `W` ways receives more than `W - 2`
/// of them (two ways left to A and B; `CacheLevel::most_lines_in_a_set`). ResNet-50's
/// 112x112 stem writes 64 channels 50,176 bytes (784 lines) apart: 4 sets, 16 lines each
/// against 10, so each tile's partial lines were evicted and fetched again by the next
/// (6x64: 71 GFLOP/s; 6x32, 8 lines a set: 120, Emerald Rapids).
pub fn c_streams_fit(cpu: &CpuModel, stride: u64, streams: u32) -> bool {
    let l1 = &cpu.l1d;
    let room = l1.ways.saturating_sub(2).max(1) as u64;
    l1.most_lines_in_a_set(stride, streams as u64) <= room
}

/// The family an implicit-GEMM convolution takes where the target's GEMM family keeps B's
/// micro-panel in L1 (`!b_from_l2` for the model's own tile: AVX2's 6x16, kc = 168 on
/// Zen 3): `f`'s register tile (the model's, or one narrowed for the conv's output lines)
/// with kc from L2 ([`kc_from_l2`]), `mc` and `nc` following; `None` where it would not
/// change. (A tile narrowed on an AVX-512 core can leave its own B in L1 — Zen 4's 6x16 —
/// but that core's convs were measured with its L2 kc: the gate is the model's tile.)
///
/// The GEMM's small kc is for its packed A: an `mc x kc` block in L2 that B's
/// micro-panel crosses from L1. A conv packs no A per k block (it reads the image, or rows
/// packed whole along K); its k-block loop is outermost, each block a sweep over all of C
/// with every tile's setup, so a short kc buys nothing and costs C round trips. Measured
/// on Zen 3 (AMD EPYC family 25 model 1), ResNet-50's 3x3 convs, one thread
/// (`tools/bench/conv_layers.py --variant`, alternated, medians): kc = 168 12-25% slower
/// than no k blocks, 4-22% slower than kc = 472 on four of the five layers
/// (docs/bench/zen3-2026-12-07b/conv-layers-kc.txt, docs/hw-model.md).
pub fn conv_family(cpu: &CpuModel, f: &CpuFamily) -> Option<CpuFamily> {
    if f.b_from_l2 || build(cpu, f.dtype).ok()?.b_from_l2 {
        return None;
    }
    let r = rates(cpu, f.dtype);
    let s = (cpu.vector_bits / r.lanes / 8) as f64;
    let kc = round_down(kc_from_l2(&cpu.l2, s), 8);
    if kc <= f.kc {
        return None;
    }
    let mut conv = build_with(cpu, f.dtype, Some((f.main.mr, f.main.nr)), Some(kc)).ok()?;
    conv.b_from_l2 = true;
    Some(conv)
}

/// Build the family for `dtype` on `cpu`.
pub fn build(cpu: &CpuModel, dtype: DType) -> Result<CpuFamily, String> {
    build_with(cpu, dtype, None, None)
}

/// Whether `mr x nr` is a register tile the target can hold and the lowering can emit:
/// `nr` a multiple of the vector lanes (or a power of two below them) and the accumulators,
/// B vectors and the A broadcast within the vector register file.
pub fn check_tile(cpu: &CpuModel, dtype: DType, mr: u32, nr: u32) -> Result<(), String> {
    let r = rates(cpu, dtype);
    if mr == 0 || nr == 0 {
        return Err(format!("register tile {mr}x{nr} is empty"));
    }
    if !nr.is_power_of_two() || (nr > r.lanes && !nr.is_multiple_of(r.lanes)) {
        return Err(format!(
            "register tile {mr}x{nr}: nr must be a power of two (a power-of-two number of vectors of {} lanes, or a part of one)",
            r.lanes
        ));
    }
    let nv = nr.div_ceil(r.lanes);
    if tile_registers(mr, nv) > r.regs {
        return Err(format!(
            "register tile {mr}x{nr} needs {} vector registers; the target has {}",
            tile_registers(mr, nv),
            r.regs
        ));
    }
    Ok(())
}

/// Build the family around a given main tile and `kc` (a schedule's), or the model's
/// choice of each when `None`; `mc` and `nc` follow from `kc` as in [`build`].
pub fn build_with(
    cpu: &CpuModel,
    dtype: DType,
    tile: Option<(u32, u32)>,
    kc_override: Option<u32>,
) -> Result<CpuFamily, String> {
    let r = rates(cpu, dtype);
    let main = match tile {
        Some((mr, nr)) => {
            check_tile(cpu, dtype, mr, nr)?;
            kernel(&r, mr, nr, 1)
        }
        None => register_tile(cpu, dtype)?,
    };
    let s = (cpu.vector_bits / r.lanes / 8) as f64; // bytes per element as computed
    let (mr, nr) = (main.mr as f64, main.nr as f64);
    // kc from L1.
    let l1 = &cpu.l1d;
    let c_a = ((l1.ways.saturating_sub(1)) as f64 / (1.0 + nr / mr)).floor();
    let kc = if c_a >= 1.0 {
        c_a * l1.sets() as f64 * l1.line as f64 / (mr * s)
    } else {
        // Too few ways to give A and B whole ways: they share W1 - 1 ways.
        (l1.ways.saturating_sub(1)).max(1) as f64 * l1.sets() as f64 * l1.line as f64
            / ((mr + nr) * s)
    };
    let b_from_l2 = b_streams_from_l2(&r, main.mr, main.nr);
    let kc = if b_from_l2 {
        kc.max(kc_from_l2(&cpu.l2, s))
    } else {
        kc
    };
    let kc = match kc_override {
        Some(0) => return Err("kc must be positive".into()),
        Some(k) => k,
        None => round_down(kc, 8).max(8),
    };
    // mc from L2.
    let l2 = &cpu.l2;
    let c_b = ((kc as f64 * nr * s) / (l2.sets() as f64 * l2.line as f64)).ceil();
    let ways_a = (l2.ways as f64 - 1.0 - c_b).max(1.0);
    let mc = round_down(
        ways_a * l2.sets() as f64 * l2.line as f64 / (kc as f64 * s),
        main.mr,
    )
    .max(main.mr);
    // nc from L3 (or a fixed multiple of L2 when there is none).
    let nc = match &cpu.l3 {
        Some(l3) => {
            let c_a3 = ((mc as f64 * kc as f64 * s) / (l3.sets() as f64 * l3.line as f64)).ceil();
            let ways_b = (l3.ways as f64 - 1.0 - c_a3).max(1.0);
            round_down(
                ways_b * l3.sets() as f64 * l3.line as f64 / (kc as f64 * s),
                main.nr,
            )
            .max(main.nr)
        }
        None => round_down(4.0 * l2.size as f64 / (kc as f64 * s), main.nr).max(main.nr),
    };
    let main = kernel(&r, main.mr, main.nr, kc);
    let mut ms = vec![main.mr];
    let mut p = 1u32;
    while p < main.mr {
        ms.push(p);
        p *= 2;
    }
    ms.sort_unstable_by(|a, b| b.cmp(a));
    ms.dedup();
    let mut edges = vec![];
    for m in &ms {
        // Columns halving from nr down to scalars: whole power-of-two vector counts (see
        // the module comment), then half, quarter ... vectors, so any N is covered
        // exactly without masked lanes.
        let mut n = main.nr;
        while n >= 1 {
            if !(*m == main.mr && n == main.nr) {
                edges.push(kernel(&r, *m, n, kc));
            }
            n /= 2;
        }
    }
    Ok(CpuFamily {
        dtype,
        lanes: r.lanes,
        main,
        kc,
        mc,
        b_from_l2,
        nc,
        edges,
    })
}

impl CpuFamily {
    /// Every kernel of the family (main first).
    pub fn all(&self) -> Vec<&CpuUkernel> {
        std::iter::once(&self.main)
            .chain(self.edges.iter())
            .collect()
    }
    pub fn report(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "cpu uKernels ({}, {} lanes): main {}x{}, kc={} mc={} nc={} (B micro-panel in {})",
            self.dtype.name(),
            self.lanes,
            self.main.mr,
            self.main.nr,
            self.kc,
            self.mc,
            self.nc,
            if self.b_from_l2 { "L2" } else { "L1" }
        );
        let _ = writeln!(
            s,
            "  {:>6} {:>5} {:>9} {:>10} {:>15}",
            "tile", "regs", "cyc/k", "efficiency", "cycles/call(kc)"
        );
        for k in self.all() {
            let _ = writeln!(
                s,
                "  {:>6} {:>5} {:>9.2} {:>10.3} {:>15.1}",
                format!("{}x{}", k.mr, k.nr),
                k.registers,
                k.cycles_per_k,
                k.efficiency,
                k.cycles_per_call
            );
        }
        s
    }
}
