//! `annotate-ukernels`: attach the uKernel family to each contraction, and the report
//! behind `ftuner-opt --print-ukernels`.

use crate::contraction::{find_all, Contraction, Kind};
use crate::{DType, Family};
use ftuner_hw::HardwareModel;
use ftuner_ir::{Attribute, Context, Diagnostic, Ir, OpId};
use ftuner_pass::{
    options::OptionKind, OptionSpec, Pass, PassContext, PassFailure, PassOptions, Statistic,
};
use std::fmt::Write;

fn shape_of(c: &Contraction) -> String {
    let mut s = crate::schedule::sizes_text(c);
    if c.transposed_a {
        s.push_str(" A^T");
    }
    if c.transposed_b {
        s.push_str(" B^T");
    }
    if c.kind == Kind::Conv2d {
        s.push_str(" (implicit GEMM)");
    }
    s
}

/// A one-line summary of a family, as the `ftuner.ukernels` attribute value.
pub fn summary(f: &Family) -> String {
    match f {
        Family::Cpu(c) => {
            let edges: Vec<String> = c
                .edges
                .iter()
                .map(|k| format!("{}x{}", k.mr, k.nr))
                .collect();
            format!(
                "cpu main={}x{} kc={} mc={} nc={} edges=[{}]",
                c.main.mr,
                c.main.nr,
                c.kc,
                c.mc,
                c.nc,
                edges.join(",")
            )
        }
        Family::Gpu(g) => {
            let m = g.main();
            let tiles: Vec<String> = g
                .tiles
                .iter()
                .map(|k| format!("{}x{}", k.bm, k.bn))
                .collect();
            format!(
                "gpu main={}x{}x{} warp={}x{} threads={} tiles=[{}]",
                m.bm,
                m.bn,
                m.bk,
                m.wm,
                m.wn,
                m.threads,
                tiles.join(",")
            )
        }
    }
}

/// The report `--print-ukernels` prints: each contraction with its family.
pub fn describe_module(
    _ctx: &Context,
    ir: &Ir,
    top: OpId,
    model: &HardwareModel,
) -> Result<String, String> {
    let mut s = String::new();
    let _ = writeln!(s, "// uKernels for target {}", model.name);
    for c in find_all(ir, top) {
        let (file, line, col) = ftuner_ir::diag::file_line_col(ir.loc(c.op)).unwrap_or(("?", 0, 0));
        let _ = writeln!(
            s,
            "{file}:{line}:{col}: {} {} {}",
            ir.name(c.op),
            c.dtype.name(),
            shape_of(&c)
        );
        let f = Family::build(model, c.dtype)?;
        for l in f.report().lines() {
            let _ = writeln!(s, "  {l}");
        }
    }
    Ok(s)
}

pub struct AnnotateUkernelsPass {
    opts: PassOptions,
    annotated: u64,
}

impl Default for AnnotateUkernelsPass {
    fn default() -> Self {
        AnnotateUkernelsPass {
            opts: PassOptions::new(vec![OptionSpec {
                name: "target",
                kind: OptionKind::String,
                default: "",
                description: "Target (host, a built-in name, cuda:sm_XX, or a .toml file); empty: the module's ftuner.target or host",
            }]),
            annotated: 0,
        }
    }
}

impl Pass for AnnotateUkernelsPass {
    fn argument(&self) -> &'static str {
        "annotate-ukernels"
    }
    fn name(&self) -> &'static str {
        "AnnotateUkernels"
    }
    fn summary(&self) -> &'static str {
        "Attach the analytic uKernel family to every contraction"
    }
    fn options(&mut self) -> Option<&mut PassOptions> {
        Some(&mut self.opts)
    }
    fn options_ref(&self) -> Option<&PassOptions> {
        Some(&self.opts)
    }
    fn run(&mut self, cx: &mut PassContext<'_>, op: OpId) -> Result<(), PassFailure> {
        let t = self.opts.str("target");
        let model = crate::target_model(cx, op, &t)?;
        let found = find_all(cx.ir, op);
        let mut cache: Vec<(DType, String)> = vec![];
        for c in found {
            let text = match cache.iter().find(|(d, _)| *d == c.dtype) {
                Some((_, t)) => t.clone(),
                None => match Family::build(&model, c.dtype) {
                    Ok(f) => {
                        let t = summary(&f);
                        cache.push((c.dtype, t.clone()));
                        t
                    }
                    Err(e) => {
                        cx.emit(Diagnostic::error(cx.ir.loc(c.op), e));
                        return Err(PassFailure);
                    }
                },
            };
            cx.ir
                .set_attr(c.op, "ftuner.ukernels", Some(Attribute::string(text)));
            self.annotated += 1;
        }
        cx.preserved.preserve::<ftuner_hw::HwModelAnalysis>();
        Ok(())
    }
    fn statistics(&self) -> Vec<Statistic> {
        vec![Statistic {
            name: "num-contractions",
            description: "Contractions annotated with uKernels",
            value: self.annotated,
        }]
    }
    fn clone_pass(&self) -> Box<dyn Pass> {
        Box::new(AnnotateUkernelsPass {
            opts: self.opts.clone(),
            annotated: 0,
        })
    }
}
