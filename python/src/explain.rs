//! What `ftuner.explain` shows: per patched contraction, its location, uKernels, patch
//! plans and the padding the plans leave.

use ftuner_ir::{Ir, OpId};
use ftuner_ukernel::patch::plan_from_attr;
use serde_json::{json, Value};

/// Executed over useful rows of a plan, averaged over sizes `1..=upto` (a dynamic dim)
/// or at the static size.
fn padding(p: &ftuner_ukernel::plan::DimPlan, upto: u64) -> f64 {
    if let Some(s) = p.static_size {
        return if s == 0 {
            1.0
        } else {
            p.executed(s) as f64 / s as f64
        };
    }
    let (mut exec, mut useful) = (0u64, 0u64);
    for x in 1..=upto {
        exec += p.executed(x);
        useful += x;
    }
    exec as f64 / useful.max(1) as f64
}

/// JSON list of the `ukernel.patch` ops under `top`.
pub fn patches(ir: &Ir, top: OpId) -> String {
    let mut out: Vec<Value> = vec![];
    ir.walk_pre(top, &mut |o| {
        if ir.name(o) != "ukernel.patch" {
            return;
        }
        let func = {
            let mut p = ir.parent_op(o);
            while let Some(x) = p {
                if ir.name(x) == "func.func" {
                    break;
                }
                p = ir.parent_op(x);
            }
            p.and_then(|f| ir.symbol_name(f)).unwrap_or("")
        };
        let loc = ftuner_ir::diag::file_line_col(ir.loc(o))
            .map(|(f, l, c)| format!("{f}:{l}:{c}"))
            .unwrap_or_default();
        let tiles = ir
            .attr(o, "tiles")
            .and_then(|a| a.as_dense_i64s())
            .unwrap_or_default();
        let tiles: Vec<String> = tiles
            .chunks(2)
            .map(|c| format!("{}x{}", c[0], c.get(1).unwrap_or(&0)))
            .collect();
        let mp = ir.attr(o, "m_plan").and_then(plan_from_attr);
        let np = ir.attr(o, "n_plan").and_then(plan_from_attr);
        let int = |n: &str| ir.attr(o, n).and_then(|a| a.as_i64()).unwrap_or(0);
        let types: Vec<String> = ir
            .operands(o)
            .iter()
            .map(|v| ir.value_type(*v).to_string())
            .collect();
        let (pm, pn) = match (&mp, &np) {
            (Some(m), Some(n)) => (padding(m, 512), padding(n, 512)),
            _ => (1.0, 1.0),
        };
        out.push(json!({
            "function": func,
            "loc": loc,
            "kind": ir.attr(o, "kind").and_then(|a| a.as_str()).unwrap_or(""),
            "operands": types,
            "ukernels": tiles,
            "kc": int("kc"), "mc": int("mc"), "nc": int("nc"),
            "m_plan": mp.as_ref().map(|p| p.describe()),
            "n_plan": np.as_ref().map(|p| p.describe()),
            "padding": pm * pn - 1.0,
        }));
    });
    serde_json::to_string(&out).unwrap_or_else(|_| "[]".into())
}
