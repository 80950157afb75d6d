//! The host JIT's packed entries: `_ftuner_packed_NAME(ptr %args)` loads each argument of
//! `_mlir_ciface_NAME` from an array of pointers and stores a returned value through the
//! last one, so every signature is called through one function-pointer type.

use std::fmt::Write;

/// Writes `_ftuner_packed_{name}` for `_mlir_ciface_{name}` (returning `ret`, taking
/// `params`) into `out`.
pub(super) fn packed_entry(out: &mut String, name: &str, ret: &str, params: &[String]) {
    let mut body = String::new();
    let mut args = vec![];
    for (i, p) in params.iter().enumerate() {
        let _ = writeln!(
            body,
            "  %p{i} = getelementptr ptr, ptr %args, i64 {i}\n  %a{i} = load ptr, ptr %p{i}"
        );
        if p == "ptr" {
            args.push(format!("ptr %a{i}"));
        } else {
            let _ = writeln!(body, "  %s{i} = load {p}, ptr %a{i}");
            args.push(format!("{p} %s{i}"));
        }
    }
    let n = params.len();
    if ret == "void" {
        let _ = writeln!(
            body,
            "  call void @_mlir_ciface_{name}({})",
            args.join(", ")
        );
    } else {
        let _ = writeln!(
            body,
            "  %r = call {ret} @_mlir_ciface_{name}({})\n  %rp = getelementptr ptr, ptr %args, i64 {n}\n  %ra = load ptr, ptr %rp\n  store {ret} %r, ptr %ra",
            args.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "define void @_ftuner_packed_{name}(ptr %args) noinline optnone #0 {{\n{body}  ret void\n}}\n"
    );
}
