//! `_mlir_ciface_NAME`, the C interface of a public function (MLIR's
//! `llvm.emit_c_interface` wrappers): memref arguments as pointers to their descriptors,
//! a memref or multiple result through a pointer passed first. The wrapper only moves
//! descriptors and is `optnone`: a model's wrapper stores hundreds of result fields in one
//! block, where LLVM's optimizing instruction selection (its store merging is quadratic in
//! a block) spent 1.8 s of BERT-base's compile.

use super::descriptor::desc_ty;
use super::func::{func_type_body, new_func};
use super::types::{conv, ptr};
use super::LlvmRewriter;
use ftuner_ir::{Attribute, OpId, Type};

/// `_mlir_ciface_NAME` of the function `cv` converted (`NAME`: its `fname`): memref
/// arguments and a memref/multiple result by pointer. `params` and `ret` are the
/// function's expanded LLVM signature, `ins` and `outs` its own.
pub(super) fn ciface(
    cv: &mut LlvmRewriter<'_>,
    ins: &[Type],
    outs: &[Type],
    ret: Option<Type>,
    params: &[Type],
    loc: Attribute,
) -> OpId {
    let name = cv.fname;
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
        cv.ir,
        &format!("_mlir_ciface_{name}"),
        &func_type_body(cret, &cparams),
        loc,
        false,
    );
    // Only moves descriptors: O0 (see the module's doc).
    cv.ir.set_prop(
        wf,
        "passthrough",
        Some(Attribute::array(vec![
            Attribute::string("noinline"),
            Attribute::string("optnone"),
        ])),
    );
    let region = cv.ir.regions_of(wf)[0];
    let entry = cv.ir.append_block(region, &cparams);
    let wargs = cv.ir.block_args(entry).to_vec();
    // Converted like an outlined body (it neither calls runtime functions nor checks).
    let mut w = cv.inner(entry, region);
    w.loc = loc;
    w.ret = cret;
    let mut args = vec![];
    for (k, t) in (usize::from(by_ptr_result)..).zip(ins.iter()) {
        if t.is_memref() {
            let r = t.rank().unwrap_or(0);
            let d = w.load(wargs[k], desc_ty(r), 8);
            let fields = w.unpack(d, r);
            args.extend(fields);
        } else {
            args.push(wargs[k]);
        }
    }
    debug_assert_eq!(args.len(), params.len());
    let r = w.call_sym(name, args, ret);
    match (by_ptr_result, r) {
        (true, Some(r)) => {
            w.store(r, wargs[0], 8);
            w.llvm_return(vec![]);
        }
        (false, Some(r)) => w.llvm_return(vec![r]),
        _ => w.llvm_return(vec![]),
    }
    wf
}
