//! The workloads W1, W2, ATTN and W3 (and `ollie`, in its own module): their kernels'
//! MLIR, their shapes, and each shape's [`Case`] (inputs, OpenBLAS on them, the padding
//! baselines) handed to [`measure`].

use crate::blas::Blas;
use crate::kernels::{bmm_nt_src, matmul_src};
use crate::measure::{measure, pad_to, Case, Padded, POW2, TILE};
use crate::{compile, compile_timed, Cli, Out, Rng};

/// The host's main uKernel `(mr, nr)` for f32 (the fixed tile of the `pad-tile` baseline).
fn main_tile() -> Result<(usize, usize), String> {
    let m = ftuner_hw::HardwareModel::load("host")?;
    let cpu = m.cpu().ok_or("the host has no CPU model")?;
    let f = ftuner_ukernel::cpu::build(cpu, ftuner_ukernel::DType::F32)?;
    Ok((f.main.mr as usize, f.main.nr as usize))
}

const DYN_MM: &str = include_str!("../../../examples/kernels/matmul_dynamic.mlir");

/// BERT's attention products, 12 heads: scores Q·Kᵀ (the export materializes Kᵀ) and
/// probabilities·V, all but the heads dynamic.
const BMM_NN: &str = r#"func.func @mm(%a: tensor<12x?x?xf32>, %b: tensor<12x?x?xf32>) -> tensor<12x?x?xf32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c1 : tensor<12x?x?xf32>
  %n = tensor.dim %b, %c2 : tensor<12x?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<12x?x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<12x?x?xf32>) -> tensor<12x?x?xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<12x?x?xf32>, tensor<12x?x?xf32>) outs(%f : tensor<12x?x?xf32>) -> tensor<12x?x?xf32>
  return %r : tensor<12x?x?xf32>
}"#;

/// A bucket's kernel per padded size.
type Buckets = rustc_hash::FxHashMap<usize, ftuner_runtime::Executable>;

/// What the workloads of one run share: the command line, the report being built, the
/// random inputs' generator, the repetitions and W1/W2's lengths T.
pub(crate) struct Workloads<'a> {
    pub(crate) cli: &'a Cli,
    pub(crate) out: Out,
    pub(crate) rng: Rng,
    pub(crate) reps: usize,
    pub(crate) ts: &'static [usize],
}

impl Workloads<'_> {
    /// W1: the dense layer `16T x K * K x N` for BERT's four (K, N).
    pub(crate) fn w1(&mut self) -> Result<(), String> {
        let cli = self.cli;
        let kn: &[(usize, usize)] = if cli.smoke {
            &[(768, 768)]
        } else {
            &[(768, 2304), (768, 768), (3072, 768), (768, 3072)]
        };
        let (mr, nr) = main_tile()?;
        for &(k, n) in kn {
            let (exe, secs) = compile_timed(&matmul_src(None, k, n), &cli.pipeline)?;
            self.out.compiled("W1", format!("?x{k} * {k}x{n}"), secs);
            // N is static: the fixed tile pads it with a kernel of its own when needed.
            let np = n.next_multiple_of(nr);
            let tile_exe = match np == n {
                true => None,
                false => Some(compile(&matmul_src(None, k, np), &cli.pipeline)?),
            };
            let mut buckets: Buckets = Default::default();
            for &t in self.ts {
                let m = 16 * t;
                let (a, b) = (self.rng.tensor(vec![m, k]), self.rng.tensor(vec![k, n]));
                let blas = Blas::new(&a, &b, (m, n, k), 1, false);
                let mb = m.next_power_of_two();
                if let std::collections::hash_map::Entry::Vacant(v) = buckets.entry(mb) {
                    v.insert(compile(&matmul_src(Some(mb), k, n), &cli.pipeline)?);
                }
                let pads = vec![
                    Padded {
                        system: POW2,
                        exe: &buckets[&mb],
                        args: [pad_to(&a, &[mb, k]), b.clone()],
                    },
                    Padded {
                        system: TILE,
                        exe: tile_exe.as_ref().unwrap_or(&exe),
                        args: [
                            pad_to(&a, &[m.next_multiple_of(mr), k]),
                            pad_to(&b, &[k, np]),
                        ],
                    },
                ];
                let case = Case {
                    workload: "W1",
                    shape: format!("{m}x{n}x{k}"),
                    t: Some(t),
                    args: [a, b],
                    blas,
                    pads,
                };
                measure(&mut self.out, &exe, case, self.reps)?;
            }
        }
        Ok(())
    }

    /// W2: `Q · Kᵀ` over 192 heads at each T.
    pub(crate) fn w2(&mut self) -> Result<(), String> {
        let cli = self.cli;
        let (exe, secs) = compile_timed(&bmm_nt_src(None), &cli.pipeline)?;
        self.out
            .compiled("W2", "192x?x64 * (192x?x64)^T".into(), secs);
        let (mr, nr) = main_tile()?;
        let mut buckets: Buckets = Default::default();
        for &t in self.ts {
            let (q, kk) = (
                self.rng.tensor(vec![192, t, 64]),
                self.rng.tensor(vec![192, t, 64]),
            );
            let blas = Blas::new(&q, &kk, (t, t, 64), 192, true);
            let tb = t.next_power_of_two();
            if let std::collections::hash_map::Entry::Vacant(v) = buckets.entry(tb) {
                v.insert(compile(&bmm_nt_src(Some(tb)), &cli.pipeline)?);
            }
            let pads = vec![
                Padded {
                    system: POW2,
                    exe: &buckets[&tb],
                    args: [pad_to(&q, &[192, tb, 64]), pad_to(&kk, &[192, tb, 64])],
                },
                Padded {
                    system: TILE,
                    exe: &exe,
                    args: [
                        pad_to(&q, &[192, t.next_multiple_of(mr), 64]),
                        pad_to(&kk, &[192, t.next_multiple_of(nr), 64]),
                    ],
                },
            ];
            let case = Case {
                workload: "W2",
                shape: format!("192x{t}x{t}x64"),
                t: Some(t),
                args: [q, kk],
                blas,
                pads,
            };
            measure(&mut self.out, &exe, case, self.reps)?;
        }
        Ok(())
    }

    /// ATTN: not one of issue 10's workloads: the BERT layer's attention products
    /// (issue 6).
    pub(crate) fn attn(&mut self) -> Result<(), String> {
        let exe = compile(BMM_NN, &self.cli.pipeline)?;
        let ts: &[usize] = if self.cli.smoke {
            &[5]
        } else {
            &[32, 128, 256, 384, 512]
        };
        for &t in ts {
            for (m, n, k) in [(t, t, 64), (t, 64, t)] {
                let (a, b) = (
                    self.rng.tensor(vec![12, m, k]),
                    self.rng.tensor(vec![12, k, n]),
                );
                let blas = Blas::new(&a, &b, (m, n, k), 12, false);
                let case = Case {
                    workload: "ATTN",
                    shape: format!("12x{m}x{n}x{k}"),
                    t: Some(t),
                    args: [a, b],
                    blas,
                    pads: vec![],
                };
                measure(&mut self.out, &exe, case, self.reps)?;
            }
        }
        Ok(())
    }

    /// W3: DeepBench's inference-server GEMMs and the cubes, one dynamic kernel.
    pub(crate) fn w3(&mut self) -> Result<(), String> {
        let cli = self.cli;
        let shapes = deepbench_shapes(&cli.deepbench, cli.smoke)?;
        let (exe, secs) = compile_timed(DYN_MM, &cli.pipeline)?;
        self.out.compiled("W3", "?x? * ?x?".into(), secs);
        for (m, n, k) in shapes {
            let (a, b) = (self.rng.tensor(vec![m, k]), self.rng.tensor(vec![k, n]));
            let blas = Blas::new(&a, &b, (m, n, k), 1, false);
            let case = Case {
                workload: "W3",
                shape: format!("{m}x{n}x{k}"),
                t: None,
                args: [a, b],
                blas,
                pads: vec![],
            };
            measure(&mut self.out, &exe, case, self.reps)?;
        }
        Ok(())
    }
}

/// W3's shapes (M, N, K): DeepBench's inference-server GEMMs from its CSV, then 127^3,
/// 1000^3 and 2048^3; with `smoke`, 127^3 and the first.
fn deepbench_shapes(path: &str, smoke: bool) -> Result<Vec<(usize, usize, usize)>, String> {
    let csv =
        std::fs::read_to_string(path).map_err(|e| format!("{}: {e} (--deepbench FILE)", path))?;
    let mut shapes: Vec<(usize, usize, usize)> = csv
        .lines()
        .skip(1)
        .filter(|l| l.starts_with("inference_server,"))
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Some((
                f.get(2)?.parse().ok()?,
                f.get(3)?.parse().ok()?,
                f.get(4)?.parse().ok()?,
            ))
        })
        .collect();
    // Shapes whose operands hold more than 2^26 elements (DeepBench's K = 500000
    // GEMVs) are left out: the harness keeps several copies of each operand.
    let big = shapes.len();
    shapes.retain(|(m, n, k)| m * k <= 1 << 26 && k * n <= 1 << 26);
    if shapes.len() < big {
        eprintln!(
            "ftuner-bench: W3: {} of {big} DeepBench shapes have operands over 2^26 elements; left out",
            big - shapes.len()
        );
    }
    shapes.push((127, 127, 127));
    shapes.push((1000, 1000, 1000));
    shapes.push((2048, 2048, 2048));
    if smoke {
        shapes = vec![(127, 127, 127), shapes[0]];
    }
    Ok(shapes)
}
