//! Detection of the machine we run on: ISA features from cpuid, caches and cores from
//! /sys, the core clock from a timed chain of dependent integer adds, and the FMA units,
//! latency and load ports from the microarchitecture (vendor optimization guides).

use crate::model::{CacheLevel, CpuIsa, CpuModel, HardwareModel, Kind};

fn read_sys(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix('K') {
        (n, 1024)
    } else if let Some(n) = s.strip_suffix('M') {
        (n, 1024 * 1024)
    } else {
        (s, 1)
    };
    num.parse::<u64>().ok().map(|v| v * mult)
}

/// Caches of cpu0 from /sys: (level, data-or-unified) -> CacheLevel.
fn sys_caches() -> Vec<(u32, CacheLevel)> {
    let mut out = vec![];
    for i in 0..8 {
        let base = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
        let Some(level) = read_sys(&format!("{base}/level")).and_then(|s| s.parse::<u32>().ok())
        else {
            break;
        };
        let ty = read_sys(&format!("{base}/type")).unwrap_or_default();
        if ty == "Instruction" {
            continue;
        }
        let size = read_sys(&format!("{base}/size")).and_then(|s| parse_size(&s));
        let ways = read_sys(&format!("{base}/ways_of_associativity")).and_then(|s| s.parse().ok());
        let line = read_sys(&format!("{base}/coherency_line_size")).and_then(|s| s.parse().ok());
        let shared = read_sys(&format!("{base}/shared_cpu_list"))
            .map(|s| count_cpus(&s))
            .unwrap_or(1);
        if let (Some(size), Some(ways), Some(line)) = (size, ways, line) {
            out.push((
                level,
                CacheLevel {
                    size,
                    ways,
                    line,
                    shared_by: shared,
                },
            ));
        }
    }
    out
}

fn count_cpus(list: &str) -> u32 {
    list.split(',')
        .map(|r| match r.split_once('-') {
            Some((a, b)) => {
                b.trim()
                    .parse::<u32>()
                    .unwrap_or(0)
                    .saturating_sub(a.trim().parse::<u32>().unwrap_or(0))
                    + 1
            }
            None => 1,
        })
        .sum()
}

/// Core clock in GHz from a dependent chain of adds (1 cycle each on every x86-64 core):
/// the fastest of several short probes, each timed by this thread's CPU clock, so that
/// time the thread spends descheduled (another process on the core, as under a parallel
/// build or test run) does not count as cycles. (Timed by the wall clock, a probe sharing
/// its core read 1.79 GHz on a Zen 4 whose other core was busy too; this probe reads
/// 3.6 GHz there, busy or idle.)
///
/// The chain adds a register, not an immediate: Intel's Golden Cove and later cores
/// (Sapphire and Emerald Rapids) fold `add reg, imm` chains at rename, several per cycle;
/// the immediate form read 8.6 GHz, or over 10 (then rejected), on an Emerald Rapids
/// (family 6 model 207) of 2.3 GHz nominal.
#[cfg(target_arch = "x86_64")]
fn measure_ghz() -> Option<f64> {
    let iters: u64 = 4_000_000;
    let mut best = f64::MAX;
    for _ in 0..9 {
        let t0 = thread_cpu_seconds()?;
        let mut x: u64 = 0;
        let n = iters;
        // SAFETY: register-only arithmetic; no memory is touched.
        unsafe {
            std::arch::asm!(
                "2:",
                "add {x}, {y}", "add {x}, {y}", "add {x}, {y}", "add {x}, {y}", "add {x}, {y}",
                "add {x}, {y}", "add {x}, {y}", "add {x}, {y}", "add {x}, {y}", "add {x}, {y}",
                "dec {n}",
                "jnz 2b",
                x = inout(reg) x,
                y = in(reg) 1u64,
                n = inout(reg) n => _,
                options(nomem, nostack),
            );
        }
        std::hint::black_box(x);
        let dt = thread_cpu_seconds()? - t0;
        if dt > 0.0 {
            best = best.min(dt);
        }
    }
    let ghz = (iters * 10) as f64 / best / 1e9;
    (0.3..10.0).contains(&ghz).then_some(ghz)
}

/// This thread's CPU time in seconds (`CLOCK_THREAD_CPUTIME_ID`).
#[cfg(all(target_arch = "x86_64", unix))]
fn thread_cpu_seconds() -> Option<f64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then_some(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

/// Elsewhere, wall-clock seconds since the first call (descheduled time counts).
#[cfg(all(target_arch = "x86_64", not(unix)))]
fn thread_cpu_seconds() -> Option<f64> {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    Some(
        START
            .get_or_init(std::time::Instant::now)
            .elapsed()
            .as_secs_f64(),
    )
}

#[cfg(not(target_arch = "x86_64"))]
fn measure_ghz() -> Option<f64> {
    None
}

fn cpuinfo_ghz() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    s.lines()
        .find(|l| l.starts_with("cpu MHz"))
        .and_then(|l| l.split(':').nth(1))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|m| m / 1000.0)
}

/// (datapath bits, FMA units, FMA latency, load ports, microarchitecture) by vendor/family.
#[cfg(target_arch = "x86_64")]
fn microarch(avx512: bool, avx2: bool) -> (u32, u32, u32, u32, String) {
    // cpuid is available on every x86-64 processor.
    let (vendor, family, model) = {
        let v = std::arch::x86_64::__cpuid(0);
        let mut name = Vec::new();
        for r in [v.ebx, v.edx, v.ecx] {
            name.extend_from_slice(&r.to_le_bytes());
        }
        let f = std::arch::x86_64::__cpuid(1).eax;
        let base_family = (f >> 8) & 0xF;
        let family = if base_family == 0xF {
            base_family + ((f >> 20) & 0xFF)
        } else {
            base_family
        };
        let model = ((f >> 4) & 0xF) | (((f >> 16) & 0xF) << 4);
        (String::from_utf8_lossy(&name).to_string(), family, model)
    };
    if vendor.contains("AMD") {
        // AMD Software Optimization Guides for Zen 2..5 (pubs 56305, 56665, 57647, 58455).
        return match family {
            0x1A => (512, 2, 4, 2, "AMD Zen 5".into()),
            0x19 if avx512 => (256, 2, 4, 2, "AMD Zen 4".into()),
            0x19 => (256, 2, 4, 2, "AMD Zen 3".into()),
            0x17 => (256, 2, 5, 2, "AMD Zen 2".into()),
            _ => (
                if avx2 { 256 } else { 128 },
                2,
                5,
                2,
                format!("AMD family {family:#x} (assumed)"),
            ),
        };
    }
    if vendor.contains("Intel") {
        // Intel Optimization Reference Manual: Skylake-SP and later server cores with
        // AVX-512 have two 512-bit FMA units; client cores two 256-bit units.
        if avx512 {
            let name = match (family, model) {
                (6, 0x55) => "Intel Skylake-SP / Cascade Lake",
                (6, 0x6A | 0x6C) => "Intel Ice Lake-SP",
                (6, 0x8F) => "Intel Sapphire Rapids",
                (6, 0xCF) => "Intel Emerald Rapids",
                (6, 0xAD | 0xAE) => "Intel Granite Rapids",
                _ => "Intel with AVX-512",
            };
            return (
                512,
                2,
                4,
                2,
                format!("{name} (family {family} model {model})"),
            );
        }
        return (256, 2, 4, 2, "Intel with AVX2".into());
    }
    (
        if avx512 {
            512
        } else if avx2 {
            256
        } else {
            128
        },
        2,
        4,
        2,
        format!("{vendor} (assumed)"),
    )
}

/// Detect the host CPU.
/// Detection runs once per process (it measures the clock, ~150 ms); later calls clone it.
pub fn detect_host() -> HardwareModel {
    static HOST: std::sync::OnceLock<HardwareModel> = std::sync::OnceLock::new();
    HOST.get_or_init(detect_host_uncached).clone()
}

fn detect_host_uncached() -> HardwareModel {
    let mut notes = vec![];
    #[cfg(target_arch = "x86_64")]
    let (isa, vector_bits, regs, datapath, fma_units, lat, loads, uarch, f16, bf16) = {
        let avx512 = std::arch::is_x86_feature_detected!("avx512f");
        let avx2 = std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma");
        let (dp, units, lat, loads, uarch) = microarch(avx512, avx2);
        let (isa, bits, regs) = if avx512 {
            (CpuIsa::Avx512, 512, 32)
        } else if avx2 {
            (CpuIsa::Avx2, 256, 16)
        } else {
            (CpuIsa::Sse, 128, 16)
        };
        (
            isa,
            bits,
            regs,
            dp.min(bits),
            units,
            lat,
            loads,
            uarch,
            std::arch::is_x86_feature_detected!("avx512fp16"),
            std::arch::is_x86_feature_detected!("avx512bf16"),
        )
    };
    #[cfg(not(target_arch = "x86_64"))]
    let (isa, vector_bits, regs, datapath, fma_units, lat, loads, uarch, f16, bf16) = {
        notes.push("not x86-64: a generic 128-bit NEON-like model is assumed".to_string());
        tracing::warn!("host is not x86-64; using a generic CPU model");
        (
            CpuIsa::Generic,
            128u32,
            32u32,
            128u32,
            2u32,
            4u32,
            2u32,
            "generic".to_string(),
            false,
            false,
        )
    };
    let caches = sys_caches();
    let find = |lvl: u32| {
        caches
            .iter()
            .find(|(l, _)| *l == lvl)
            .map(|(_, c)| c.clone())
    };
    let l1d = find(1).unwrap_or_else(|| {
        notes.push("L1d not readable from /sys: 32 KiB 8-way assumed".into());
        CacheLevel {
            size: 32 * 1024,
            ways: 8,
            line: 64,
            shared_by: 1,
        }
    });
    let l2 = find(2).unwrap_or_else(|| {
        notes.push("L2 not readable from /sys: 1 MiB 8-way assumed".into());
        CacheLevel {
            size: 1 << 20,
            ways: 8,
            line: 64,
            shared_by: 1,
        }
    });
    let l3 = find(3);
    let cores = std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1);
    let freq = match measure_ghz() {
        Some(g) => g,
        None => {
            notes.push("clock not measurable: /proc/cpuinfo MHz used".into());
            cpuinfo_ghz().unwrap_or(2.0)
        }
    };
    notes.push(format!("microarchitecture: {uarch}"));
    notes.push("DRAM bandwidth is not detected: 20 GB/s per core assumed".into());
    HardwareModel {
        name: "host".into(),
        kind: Kind::Cpu,
        description: format!("this machine ({uarch})"),
        cpu: Some(CpuModel {
            isa,
            vector_bits,
            vector_registers: regs,
            datapath_bits: datapath,
            fma_units,
            fma_latency: lat,
            load_ports: loads,
            cores,
            freq_ghz: (freq * 100.0).round() / 100.0,
            dram_bw_gbs: 20.0 * cores as f64,
            has_f16: f16,
            has_bf16: bf16,
            l1d,
            l2,
            l3,
        }),
        gpu: None,
        notes,
    }
}
