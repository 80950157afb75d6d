//! Schedules as data, kernel classes and workload keys (the Transfer-Tuning vocabulary).
//!
//! A [`Schedule`] fixes every knob `patch-ukernels` and `lower-ukernels` expose for one
//! contraction: the main register tile `mr x nr` (the edge family follows from it), the
//! reduction block `kc` (`mc`, `nc` follow from it through the cache model), whether the
//! reduction is blocked at all, whether B is packed into panels, how many tile sizes a
//! patch plan may use per dimension, and the lowering's loop knobs: k steps per iteration
//! of the register tile's k loop, the order of the row and column loops, and whether large
//! A blocks are copied contiguous. Written as text it reads
//! `mr=14,nr=32,kc=144,k_blocking=1,pack_b=0,max_ukernels=8` (the loop knobs only where
//! they are not the lowering's own rule: `k_unroll=2,order=rows,pack_a=0`), which is also
//! what the `schedule` option of `patch-ukernels` takes and what the `ftuner.schedule`
//! attribute of a scheduled `ukernel.patch` shows.
//!
//! A [`KernelClass`] is the key under which schedules transfer between kernels (as an
//! Ansor task description without its sizes): op kind, element type, indexing maps (the
//! layout: transposes, strides, dilations), the fused epilogue (its elementwise ops in
//! order, e.g. `arith.addf+arith.maximumf`) and which of B/M/N/K are
//! dynamic. A [`WorkloadKey`] is a class plus the sizes (`?` for dynamic ones) and the
//! target's fingerprint.
//!
//! Where schedules come from at compile time is a [`ScheduleSource`]: `patch-ukernels`
//! takes one from its `tuning-db` option through the [`TuningDbOpener`] its driver hands
//! it as a pass-registry extension (the tuning database lives in `ftuner-tune`, which
//! this crate does not depend on).

use crate::contraction::{Contraction, Kind};
use ftuner_hw::HardwareModel;
use ftuner_ir::{Ir, DYNAMIC};
use std::fmt;
use std::sync::Arc;

/// Which loops of a tile nest run outside: `lower-ukernels`' rule (`Auto`), the row
/// strips (a matmul's M strips outside its N tiles; a flat-form conv's blocks of output
/// rows outside its filter panels), or the columns (N tiles or filter panels outside).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Order {
    #[default]
    Auto,
    Rows,
    Cols,
}

impl Order {
    /// `None` for the rule, else whether rows run outside.
    pub fn rows_outside(self) -> Option<bool> {
        match self {
            Order::Auto => None,
            Order::Rows => Some(true),
            Order::Cols => Some(false),
        }
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Order::Auto => "auto",
            Order::Rows => "rows",
            Order::Cols => "cols",
        })
    }
}

impl std::str::FromStr for Order {
    type Err = String;
    fn from_str(s: &str) -> Result<Order, String> {
        match s.trim() {
            "auto" => Ok(Order::Auto),
            "rows" => Ok(Order::Rows),
            "cols" => Ok(Order::Cols),
            other => Err(format!("order must be auto, rows or cols, got '{other}'")),
        }
    }
}

/// The most k steps one iteration of a register tile's k loop may take.
pub const MAX_K_UNROLL: u32 = 8;

/// The knobs of one contraction's uKernels and lowering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Schedule {
    pub mr: u32,
    pub nr: u32,
    pub kc: u32,
    pub k_blocking: bool,
    pub pack_b: bool,
    pub max_ukernels: u32,
    /// k steps per iteration of the register tile's k loop (0: the lowering's rule, two
    /// where the k extent allows; a flat-form conv takes it where K and its blocks are
    /// multiples of it).
    pub k_unroll: u32,
    /// Row loops or column loops outside (the lowering's rule by default).
    pub order: Order,
    /// Copy large A blocks contiguous inside the mc loop (the lowering's run-time rule);
    /// false: never.
    pub pack_a: bool,
}

impl Schedule {
    /// Register tile `mr x nr` and reduction block `kc`, every other knob at its default.
    pub const fn new(mr: u32, nr: u32, kc: u32) -> Schedule {
        Schedule {
            mr,
            nr,
            kc,
            k_blocking: true,
            pack_b: false,
            max_ukernels: 8,
            k_unroll: 0,
            order: Order::Auto,
            pack_a: true,
        }
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "mr={},nr={},kc={},k_blocking={},pack_b={},max_ukernels={}",
            self.mr, self.nr, self.kc, self.k_blocking as u8, self.pack_b as u8, self.max_ukernels
        )?;
        // The loop knobs only where they leave the rule, so the text of every schedule
        // recorded before they existed reads as it did.
        if self.k_unroll != 0 {
            write!(f, ",k_unroll={}", self.k_unroll)?;
        }
        if self.order != Order::Auto {
            write!(f, ",order={}", self.order)?;
        }
        if !self.pack_a {
            f.write_str(",pack_a=0")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for Schedule {
    type Err = String;
    /// `mr=..,nr=..,kc=..[,k_blocking=0|1][,pack_b=0|1][,max_ukernels=..][,k_unroll=..]
    /// [,order=auto|rows|cols][,pack_a=0|1]` (also space-separated); `mr`, `nr` and `kc`
    /// are required.
    fn from_str(s: &str) -> Result<Schedule, String> {
        let mut sc = Schedule::new(0, 0, 0);
        let mut seen = [false; 3];
        for part in s.split([',', ' ']).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("schedule '{s}': expected key=value, got '{part}'"))?;
            let num = || {
                v.trim().parse::<u32>().map_err(|_| {
                    format!("schedule '{s}': {k} must be a non-negative integer, got '{v}'")
                })
            };
            let flag = || match v.trim() {
                "1" | "true" => Ok(true),
                "0" | "false" => Ok(false),
                _ => Err(format!("schedule '{s}': {k} must be 0 or 1, got '{v}'")),
            };
            match k.trim() {
                "mr" => (sc.mr, seen[0]) = (num()?, true),
                "nr" => (sc.nr, seen[1]) = (num()?, true),
                "kc" => (sc.kc, seen[2]) = (num()?, true),
                "k_blocking" => sc.k_blocking = flag()?,
                "pack_b" => sc.pack_b = flag()?,
                "max_ukernels" => sc.max_ukernels = num()?,
                "k_unroll" => sc.k_unroll = num()?,
                "order" => sc.order = v.parse().map_err(|e| format!("schedule '{s}': {e}"))?,
                "pack_a" => sc.pack_a = flag()?,
                other => return Err(format!("schedule '{s}': unknown knob '{other}'")),
            }
        }
        if let Some(i) = seen.iter().position(|x| !x) {
            return Err(format!("schedule '{s}': missing {}", ["mr", "nr", "kc"][i]));
        }
        if sc.mr == 0 || sc.nr == 0 || sc.kc == 0 {
            return Err(format!("schedule '{s}': mr, nr and kc must be positive"));
        }
        if sc.max_ukernels < 2 {
            return Err(format!("schedule '{s}': max_ukernels must be at least 2"));
        }
        if sc.k_unroll > MAX_K_UNROLL {
            return Err(format!(
                "schedule '{s}': k_unroll must be at most {MAX_K_UNROLL} (0: the lowering's rule)"
            ));
        }
        Ok(sc)
    }
}

/// The CPU description of `model`; schedules have no GPU knobs yet.
fn cpu_of(model: &HardwareModel) -> Result<&ftuner_hw::CpuModel, String> {
    model
        .cpu()
        .ok_or_else(|| format!("schedules are for CPU targets; '{}' is not one", model.name))
}

impl Schedule {
    /// The analytic default for `dtype` on a CPU target: what `patch-ukernels` does with no
    /// schedule, before it narrows a conv's tile whose output lines collide in L1 (a
    /// database record of this schedule is read as the default, narrowing included).
    pub fn analytic(model: &HardwareModel, dtype: crate::DType) -> Result<Schedule, String> {
        let cpu = cpu_of(model)?;
        let f = crate::cpu::build(cpu, dtype)?;
        Ok(Schedule::new(f.main.mr, f.main.nr, f.kc))
    }
    /// Check the schedule against the target (the register tile must fit).
    pub fn check(&self, model: &HardwareModel, dtype: crate::DType) -> Result<(), String> {
        let cpu = cpu_of(model)?;
        crate::cpu::check_tile(cpu, dtype, self.mr, self.nr)
    }
    /// The uKernel family this schedule fixes.
    pub fn family(
        &self,
        model: &HardwareModel,
        dtype: crate::DType,
    ) -> Result<crate::Family, String> {
        let cpu = cpu_of(model)?;
        crate::cpu::build_with(cpu, dtype, Some((self.mr, self.nr)), Some(self.kc))
            .map(crate::Family::Cpu)
    }
}

/// The class under which schedules transfer: everything about a kernel but its sizes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KernelClass(pub String);

impl fmt::Display for KernelClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl KernelClass {
    /// The class without its epilogue: the text before ` epilogue=` and from ` dynamic=`
    /// on (the contraction itself); `None` for a class text of another form.
    pub fn contraction(&self) -> Option<(&str, &str)> {
        let (head, rest) = self.0.split_once(" epilogue=")?;
        let tail = rest.find(" dynamic=").map(|i| &rest[i + 1..])?;
        Some((head, tail))
    }
    /// The op kind and element type (`conv2d f32`): the text before ` maps=`. Transfer-
    /// Tuning's own classes are this coarse (the ops of a kernel, whatever its strides or
    /// layout); `None` for a class text of another form.
    pub fn kind(&self) -> Option<&str> {
        self.0.split_once(" maps=").map(|(k, _)| k)
    }
}

/// Class plus sizes plus target: the key a measurement is recorded under.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorkloadKey {
    pub class: KernelClass,
    /// `B=12 M=? N=768 K=768` (`?` for a dynamic size).
    pub sizes: String,
    pub target: String,
}

impl fmt::Display for WorkloadKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} | {} | {}", self.class, self.sizes, self.target)
    }
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Matmul => "matmul",
        Kind::BatchMatmul => "batch_matmul",
        Kind::Generic => "generic",
        Kind::Conv2d => "conv2d",
    }
}

fn dim(d: i64) -> String {
    if d == DYNAMIC {
        "?".into()
    } else {
        d.to_string()
    }
}

/// The class of contraction `c` (its op must still be the linalg op or a `ukernel.patch`
/// made from it: the indexing maps are read from it).
pub fn kernel_class(ir: &Ir, c: &Contraction) -> KernelClass {
    let maps = ftuner_dialects::linalg::body::indexing_maps(ir, c.op)
        .or_else(|| {
            ir.attr(c.op, "indexing_maps").and_then(|a| {
                a.as_array().map(|v| {
                    v.iter()
                        .filter_map(|m| m.as_affine_map().cloned())
                        .collect()
                })
            })
        })
        .unwrap_or_default();
    let maps: Vec<String> = maps
        .iter()
        .map(|m| {
            let mut t = String::new();
            m.write(&mut t);
            t
        })
        .collect();
    let dynamic: Vec<&str> = [
        ("B", c.batch_size()),
        ("M", c.m_size()),
        ("N", c.n_size()),
        ("K", c.k_size()),
    ]
    .iter()
    .filter(|(n, s)| *s == DYNAMIC && !(*n == "B" && c.batch.is_empty()))
    .map(|(n, _)| *n)
    .collect();
    KernelClass(format!(
        "{} {} maps=[{}] epilogue={} dynamic=[{}]",
        kind_name(c.kind),
        c.dtype.name(),
        maps.join(", "),
        epilogue_text(ir, c.op),
        dynamic.join(",")
    ))
}

/// The elementwise ops fused after the contraction (or that `patch-ukernels` will fuse):
/// a patch's epilogue region, or the consumers its epilogue would absorb.
fn epilogue_text(ir: &Ir, op: ftuner_ir::OpId) -> String {
    if let Some(b) = ftuner_dialects::ukernel::epilogue_block(ir, op) {
        let names: Vec<&str> = ir
            .block_ops_vec(b)
            .into_iter()
            .map(|o| ir.name(o))
            .filter(|n| *n != ftuner_dialects::ops::ukernel::YieldOp::NAME)
            .collect();
        if !names.is_empty() {
            return names.join("+");
        }
    }
    crate::epilogue::describe_chain(ir, &crate::epilogue::epilogue_chain(ir, op))
}

/// `B=12 M=? N=768 K=768` (no `B` without batch dims).
pub fn sizes_text(c: &Contraction) -> String {
    let mut s = format!(
        "M={} N={} K={}",
        dim(c.m_size()),
        dim(c.n_size()),
        dim(c.k_size())
    );
    if !c.batch.is_empty() {
        s = format!("B={} {s}", dim(c.batch_size()));
    }
    s
}

/// What identifies a target for measurements: its name and the figures the uKernels are
/// built from.
pub fn target_fingerprint(model: &HardwareModel) -> String {
    match model.cpu() {
        Some(c) => format!(
            "{} {:?}/{}b/{}regs/L1={}/L2={}/L3={}",
            model.name,
            c.isa,
            c.vector_bits,
            c.vector_registers,
            c.l1d.size,
            c.l2.size,
            c.l3.as_ref().map(|l| l.size).unwrap_or(0)
        ),
        None => model.name.clone(),
    }
}

pub fn workload_key(ir: &Ir, c: &Contraction, model: &HardwareModel) -> WorkloadKey {
    WorkloadKey {
        class: kernel_class(ir, c),
        sizes: sizes_text(c),
        target: target_fingerprint(model),
    }
}

/// Where `patch-ukernels` gets tuned schedules from.
pub trait ScheduleSource: Send + Sync {
    /// The best recorded schedule for this workload that `valid` accepts (records made by
    /// another version of the search space may not be legal for the target any more), and
    /// how many faster ones it rejected.
    fn best(
        &self,
        key: &WorkloadKey,
        valid: &dyn Fn(&Schedule) -> bool,
    ) -> Result<(Option<Schedule>, usize), String>;
}

/// Opens a tuning database named by the `tuning-db` option.
pub type DbOpener = fn(&str) -> Result<Arc<dyn ScheduleSource>, String>;

/// The hook a driver gives `patch-ukernels` (a [`ftuner_pass::PassRegistry`] extension:
/// `registry.add_extension(TuningDbOpener(open))`) so that `tuning-db` files can be read;
/// `ftuner_tune::register` adds it (the database lives in `ftuner-tune`, which this crate
/// does not link).
#[derive(Clone, Copy)]
pub struct TuningDbOpener(pub DbOpener);

pub(crate) fn open_db(
    opener: Option<&TuningDbOpener>,
    path: &str,
) -> Result<Arc<dyn ScheduleSource>, String> {
    match opener {
        Some(f) => (f.0)(path),
        None => Err(format!(
            "tuning-db '{path}': this tool was built without the tuning database (ftuner-tune)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_text_round_trips() {
        let s: Schedule = "mr=8,nr=48,kc=256,k_blocking=0,pack_b=1,max_ukernels=4"
            .parse()
            .unwrap();
        assert_eq!(
            (s.mr, s.nr, s.kc, s.k_blocking, s.pack_b, s.max_ukernels),
            (8, 48, 256, false, true, 4)
        );
        assert_eq!(s.to_string().parse::<Schedule>().unwrap(), s);
        let d: Schedule = "mr=14 nr=32 kc=144".parse().unwrap();
        assert!(d.k_blocking && !d.pack_b && d.max_ukernels == 8);
        assert_eq!(d, Schedule::new(14, 32, 144));
        // The loop knobs print only where they leave the rule: a schedule recorded before
        // they existed reads back as the same text.
        assert_eq!(
            d.to_string(),
            "mr=14,nr=32,kc=144,k_blocking=1,pack_b=0,max_ukernels=8"
        );
        let l: Schedule = "mr=6,nr=16,kc=472,k_unroll=4,order=rows,pack_a=0"
            .parse()
            .unwrap();
        assert_eq!((l.k_unroll, l.order, l.pack_a), (4, Order::Rows, false));
        assert_eq!(
            l.to_string(),
            "mr=6,nr=16,kc=472,k_blocking=1,pack_b=0,max_ukernels=8,k_unroll=4,order=rows,pack_a=0"
        );
        assert_eq!(l.to_string().parse::<Schedule>().unwrap(), l);
        let c: Schedule = "mr=6,nr=16,kc=472,order=cols".parse().unwrap();
        assert_eq!(c.order.rows_outside(), Some(false));
    }

    #[test]
    fn bad_schedules_are_errors() {
        for (t, want) in [
            ("mr=8,nr=32", "missing kc"),
            ("mr=8,nr=32,kc=x", "non-negative integer"),
            ("mr=8,nr=32,kc=64,unroll=2", "unknown knob 'unroll'"),
            ("mr=8,nr=32,kc=64,pack_b=2", "0 or 1"),
            ("mr=0,nr=32,kc=64", "positive"),
            ("mr=8 nr=32 kc=64 max_ukernels=1", "at least 2"),
            ("mr8", "key=value"),
            ("mr=8,nr=32,kc=64,k_unroll=16", "at most 8"),
            ("mr=8,nr=32,kc=64,order=diagonal", "auto, rows or cols"),
            ("mr=8,nr=32,kc=64,pack_a=yes", "0 or 1"),
        ] {
            let e = t.parse::<Schedule>().unwrap_err();
            assert!(e.contains(want), "{t}: {e}");
        }
    }

    #[test]
    fn register_tiles_are_checked_against_the_target() {
        let m = HardwareModel::load("skylake-avx512").unwrap();
        let ok: Schedule = "mr=14,nr=32,kc=144".parse().unwrap();
        ok.check(&m, crate::DType::F32).unwrap();
        let too_big: Schedule = "mr=16,nr=64,kc=144".parse().unwrap();
        assert!(too_big
            .check(&m, crate::DType::F32)
            .unwrap_err()
            .contains("vector registers"));
        let ragged: Schedule = "mr=4,nr=24,kc=144".parse().unwrap();
        assert!(ragged
            .check(&m, crate::DType::F32)
            .unwrap_err()
            .contains("lanes"));
        // Three vectors per row: LLVM splits such loop-carried vectors badly.
        let three: Schedule = "mr=8,nr=48,kc=144".parse().unwrap();
        assert!(three
            .check(&m, crate::DType::F32)
            .unwrap_err()
            .contains("power of two"));
        let a = Schedule::analytic(&m, crate::DType::F32).unwrap();
        let f = crate::cpu::build(m.cpu().unwrap(), crate::DType::F32).unwrap();
        assert_eq!((a.mr, a.nr, a.kc), (f.main.mr, f.main.nr, f.kc));
        // The family a schedule fixes is the analytic one when the knobs agree.
        match a.family(&m, crate::DType::F32).unwrap() {
            crate::Family::Cpu(g) => assert_eq!(g, f),
            crate::Family::Gpu(_) => unreachable!(),
        }
    }
}
