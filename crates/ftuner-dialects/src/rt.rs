//! `rt`: the verifier of `rt.parallel_for` (host code: not in a GPU module; its callee is a
//! function of the enclosing symbol table taking the iteration range then the op's
//! arguments).

use crate::ops;
use ftuner_ir::{Context, Ir, OpId, Type};

/// `rt.parallel_for` is not in a GPU module (it runs on the host's thread pool), and its
/// callee exists in the nearest enclosing symbol table and takes `(index, index, args...)`
/// with no results.
pub fn verify_parallel_for(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let mut up = ir.parent_op(op);
    while let Some(p) = up {
        if ir.name(p) == ops::gpu::ModuleOp::NAME {
            return Err("cannot run on the host's thread pool in a GPU module".into());
        }
        up = ir.parent_op(p);
    }
    let name = ir
        .attr(op, "callee")
        .and_then(|a| a.as_symbol())
        .ok_or("expects a 'callee' symbol")?;
    let mut table = ir.parent_op(op);
    let callee = loop {
        let Some(t) = table else {
            return Err(format!("'{name}' does not reference a function"));
        };
        let found = ir.regions_of(t).iter().find_map(|r| {
            let b = ir.region_entry(*r)?;
            ir.block_ops(b).find(|o| ir.symbol_name(*o) == Some(name))
        });
        if let Some(f) = found {
            break f;
        }
        table = ir.parent_op(t);
    };
    if ir.name(callee) != ops::func::FuncOp::NAME {
        return Err(format!("'{name}' does not reference a function"));
    }
    let fty = ir
        .attr(callee, "function_type")
        .and_then(|a| a.as_type())
        .ok_or("callee has no function type")?;
    let mut want = vec![Type::index(), Type::index()];
    want.extend(ir.operands(op)[1..].iter().map(|v| ir.value_type(*v)));
    if fty.function_inputs() != want.as_slice() || !fty.function_results().is_empty() {
        let args: Vec<String> = want.iter().map(|t| t.to_string()).collect();
        return Err(format!(
            "callee '{name}' must take ({}) and return nothing; it is {fty}",
            args.join(", ")
        ));
    }
    Ok(())
}
