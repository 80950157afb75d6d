//! `_mlir_ciface_NAME`, the C interface of a public function (MLIR's
//! `llvm.emit_c_interface` wrappers): memref arguments as pointers to their descriptors,
//! a memref or multiple result through a pointer passed first. The wrapper only moves
//! descriptors and is `optnone`: a model's wrapper stores hundreds of result fields in one
//! block, where LLVM's optimizing instruction selection (its store merging is quadratic in
//! a block) spent 1.8 s of BERT-base's compile.

use super::{conv, desc_ty, func_type_body, new_func, ptr, Cv};
use ftuner_ir::{Attribute, Ir, OpId, Type};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;

/// `_mlir_ciface_NAME`: memref arguments and a memref/multiple result by pointer.
pub(super) fn ciface(
    ir: &mut Ir,
    name: &str,
    ins: &[Type],
    outs: &[Type],
    ret: Option<Type>,
    params: &[Type],
    loc: Attribute,
) -> OpId {
    let by_ptr_result = ret.is_some() && (outs.len() > 1 || outs.iter().any(|t| t.is_memref()));
    let mut cparams = vec![];
    if by_ptr_result {
        cparams.push(ptr());
    }
    for t in ins {
        cparams.push(if t.is_memref() {
            ptr()
        } else {
            conv(*t).unwrap_or(*t)
        });
    }
    let cret = if by_ptr_result { None } else { ret };
    let wf = new_func(
        ir,
        &format!("_mlir_ciface_{name}"),
        &func_type_body(cret, &cparams),
        loc,
        false,
    );
    // Only moves descriptors: O0 (see the module's doc).
    ir.set_prop(
        wf,
        "passthrough",
        Some(Attribute::array(vec![
            Attribute::string("noinline"),
            Attribute::string("optnone"),
        ])),
    );
    let region = ir.regions_of(wf)[0];
    let entry = ir.append_block(region, &cparams);
    let wargs = ir.block_args(entry).to_vec();
    let mut decls = BTreeMap::new();
    let mut strings = vec![];
    let mut outlined = vec![];
    let none = FxHashSet::default();
    let mut cv = Cv {
        ir,
        map: FxHashMap::default(),
        consts: FxHashMap::default(),
        cur: entry,
        region,
        loc,
        decls: &mut decls,
        strings: &mut strings,
        outline: false,
        outlined: &mut outlined,
        fname: name,
        ret: cret,
        may_fail: &none,
        abort_on_failure: false,
    };
    let mut args = vec![];
    for (k, t) in (usize::from(by_ptr_result)..).zip(ins.iter()) {
        if t.is_memref() {
            let r = t.rank().unwrap_or(0);
            let d = cv.load(wargs[k], desc_ty(r), 8);
            let fields = cv.unpack(d, r);
            args.extend(fields);
        } else {
            args.push(wargs[k]);
        }
    }
    debug_assert_eq!(args.len(), params.len());
    let r = cv.call_sym(name, args, ret);
    match (by_ptr_result, r) {
        (true, Some(r)) => {
            cv.store(r, wargs[0], 8);
            cv.emit("llvm.return", vec![], vec![], vec![], vec![]);
        }
        (false, Some(r)) => {
            cv.emit("llvm.return", vec![r], vec![], vec![], vec![]);
        }
        _ => {
            cv.emit("llvm.return", vec![], vec![], vec![], vec![]);
        }
    }
    wf
}
