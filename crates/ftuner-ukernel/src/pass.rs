//! `annotate-ukernels`: attach the uKernel family to each contraction, and the report
//! behind `ftuner-opt --print-ukernels`.

use crate::contraction::{find_all, Contraction, Kind};
use crate::Family;
use ftuner_hw::HardwareModel;
use ftuner_ir::{Attribute, Context, Diagnostic, Ir, OpId};
use ftuner_pass::{define_pass, PassContext, PassFailure};
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
        let f = crate::patch::default_family(ir, model, &c)?;
        for l in f.report().lines() {
            let _ = writeln!(s, "  {l}");
        }
    }
    Ok(s)
}

define_pass! {
    /// `annotate-ukernels`: attach the analytic uKernel family to every contraction.
    pub struct AnnotateUkernelsPass {
        argument: "annotate-ukernels",
        name: "AnnotateUkernels",
        summary: "Attach the analytic uKernel family to every contraction",
        options: AnnotateUkernelsOptions {
            "target" => target: String = "",
                "Target (host, a built-in name, cuda:sm_XX, or a .toml file); empty: the module's ftuner.target or host";
        },
        statistics: {
            annotated: "num-contractions" => "Contractions annotated with uKernels",
        },
    }
}

impl AnnotateUkernelsPass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        op: OpId,
        o: &AnnotateUkernelsOptions,
    ) -> Result<(), PassFailure> {
        let t = o.target.clone();
        let model = crate::target_model(cx, op, &t)?;
        let found = find_all(cx.ir, op);
        for c in found {
            let text = match crate::patch::default_family(cx.ir, &model, &c) {
                Ok(f) => summary(&f),
                Err(e) => {
                    cx.emit(Diagnostic::error(cx.ir.loc(c.op), e));
                    return Err(PassFailure);
                }
            };
            cx.ir
                .set_attr(c.op, "ftuner.ukernels", Some(Attribute::string(text)));
            self.annotated += 1;
        }
        cx.preserved.preserve::<ftuner_hw::HwModelAnalysis>();
        Ok(())
    }
}
