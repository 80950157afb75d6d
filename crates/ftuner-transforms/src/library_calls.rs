//! `convert-linalg-to-library-calls`: contractions on buffers become calls to external
//! functions (as upstream's `convert-linalg-to-std` does), so a vendor library can do them.
//!
//! `linalg.matmul` and `linalg.batch_matmul` on f32 memrefs (default indexing, `C += A·B`)
//! become
//!
//! ```mlir
//! %a = memref.cast %A : memref<?x768xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
//! ...
//! func.call @ftuner_lib_matmul_f32(%a, %b, %c) : (...) -> ()
//! ```
//!
//! with a private declaration of the callee added to the module. The callee receives each
//! memref as MLIR's expanded descriptor (allocated pointer, aligned pointer, offset, sizes,
//! strides), so any strided view is passed without a copy. A runner links the symbols (e.g.
//! `ftuner_codegen::add_symbol`); `ftuner-e2e --blas` maps them to OpenBLAS. Contractions
//! on tensors are left alone: run `bufferize` first.

use ftuner_dialects::ops;
use ftuner_ir::{intern_name, AttrKind, Attribute, Ir, OpId, OpSpec, Type, DYNAMIC};
use ftuner_pass::{define_pass, PassContext, PassFailure};

/// The fully dynamic strided memref of `rank` f32 elements.
fn any_strided(rank: usize) -> Type {
    Type::get(ftuner_ir::TypeKind::MemRef {
        shape: vec![DYNAMIC; rank],
        elem: Type::f32(),
        layout: Some(Attribute::get(AttrKind::StridedLayout {
            offset: DYNAMIC,
            strides: vec![DYNAMIC; rank],
        })),
        memory_space: None,
    })
}

/// The callee name for `op`, if it is a contraction this pass converts.
fn callee(ir: &Ir, op: OpId, prefix: &str) -> Option<(String, usize)> {
    let (kind, rank) = match ir.name(op) {
        ops::linalg::MatmulOp::NAME => ("matmul", 2),
        ops::linalg::BatchMatmulOp::NAME => ("batch_matmul", 3),
        _ => return None,
    };
    // Only the default maps (given `indexing_maps` may transpose or broadcast).
    let want: &[&str] = if rank == 2 {
        &[
            "(d0, d1, d2) -> (d0, d2)",
            "(d0, d1, d2) -> (d2, d1)",
            "(d0, d1, d2) -> (d0, d1)",
        ]
    } else {
        &[
            "(d0, d1, d2, d3) -> (d0, d1, d3)",
            "(d0, d1, d2, d3) -> (d0, d3, d2)",
            "(d0, d1, d2, d3) -> (d0, d1, d2)",
        ]
    };
    if let Some(maps) = ir.attr(op, "indexing_maps").and_then(|a| a.as_array()) {
        let text: Vec<String> = maps
            .iter()
            .filter_map(|m| m.as_affine_map())
            .map(|m| {
                let mut t = String::new();
                m.write(&mut t);
                t
            })
            .collect();
        if text != want {
            return None;
        }
    }
    let vals = ir.operands(op);
    let ok = vals.len() == 3
        && ir.results(op).is_empty()
        && vals.iter().all(|v| {
            let t = ir.value_type(*v);
            t.is_memref() && t.element_type() == Type::f32() && t.rank() == Some(rank)
        });
    ok.then(|| (format!("{prefix}{kind}_f32"), rank))
}

define_pass! {
    /// `convert-linalg-to-library-calls`: replace f32 matmul / batch_matmul on buffers by calls to external library functions.
    pub struct LibraryCallsPass {
        argument: "convert-linalg-to-library-calls",
        name: "ConvertLinalgToLibraryCalls",
        summary: "Replace f32 matmul / batch_matmul on buffers by calls to external library functions",
        anchor: ops::builtin::ModuleOp::NAME,
        options: LibraryCallsOptions {
            "prefix" => prefix: String = "ftuner_lib_",
                "Prefix of the callees (`<prefix>matmul_f32`, `<prefix>batch_matmul_f32`)";
        },
        statistics: {
            converted: "num-calls" => "Contractions turned into library calls",
        },
    }
}

impl LibraryCallsPass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        module: OpId,
        o: &LibraryCallsOptions,
    ) -> Result<(), PassFailure> {
        let prefix = o.prefix.clone();
        let mut found = vec![];
        cx.ir.walk_pre(module, &mut |o| {
            if let Some(c) = callee(cx.ir, o, &prefix) {
                found.push((o, c));
            }
        });
        let Some(body) = cx
            .ir
            .regions_of(module)
            .first()
            .and_then(|r| cx.ir.region_entry(*r))
        else {
            return Ok(());
        };
        let mut declared: Vec<String> = vec![];
        for (op, (name, rank)) in found {
            let loc = cx.ir.loc(op);
            let ty = any_strided(rank);
            let mut args = vec![];
            for v in cx.ir.operands(op).to_vec() {
                if cx.ir.value_type(v) == ty {
                    args.push(v);
                    continue;
                }
                let cast = cx.ir.create_op(
                    OpSpec::new(intern_name(ops::memref::CastOp::NAME), loc)
                        .operands([v])
                        .results([ty]),
                );
                cx.ir.insert_before(op, cast);
                args.push(cx.ir.result(cast, 0));
            }
            let call = cx.ir.create_op(
                OpSpec::new(intern_name(ops::func::CallOp::NAME), loc)
                    .operands(args)
                    .prop("callee", Attribute::symbol_ref(name.clone())),
            );
            cx.ir.insert_before(op, call);
            cx.ir.erase_op(op);
            self.converted += 1;
            let exists = cx
                .ir
                .block_ops(body)
                .any(|o| cx.ir.symbol_name(o) == Some(name.as_str()));
            if !exists && !declared.contains(&name) {
                let decl = cx.ir.create_op(
                    OpSpec::new(intern_name(ops::func::FuncOp::NAME), loc)
                        .prop("sym_name", Attribute::string(name.clone()))
                        .prop(
                            "function_type",
                            Attribute::type_attr(Type::function(vec![ty; 3], vec![])),
                        )
                        .prop("sym_visibility", Attribute::string("private"))
                        .regions(1),
                );
                cx.ir.prepend_op(body, decl);
                declared.push(name);
            }
        }
        Ok(())
    }
}
