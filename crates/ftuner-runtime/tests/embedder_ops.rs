//! A compiler embedding our passes brings ops of its own through `bufferize` and
//! `convert-to-llvm` by attaching their interfaces in its Context, as MLIR's external
//! models: a `BufferizableOpInterface` model and a `ConvertToLLVMOpInterface` pattern,
//! written with the public rewriters. The passes look an op's handling up only there.

use ftuner_interp::{RtVal, Tensor, Word};
use ftuner_ir::{parse_module, Context, Type};
use ftuner_runtime::Executable;
use ftuner_transforms::bufferize::Bufferizable;
use ftuner_transforms::to_llvm::ConvertToLlvm;
use std::rc::Rc;

/// `test.clone` (a tensor copied into a new one) and `test.twice` (`x + x` on a float),
/// defined like `tensor.cast` and `arith.negf` but with no custom syntax, no hooks and no
/// interfaces of their own.
fn context(models: bool, patterns: bool) -> Context {
    let mut ctx = ftuner_transforms::context();
    let reg = &mut ctx.registry;
    reg.register_dialect("test");
    for (from, name) in [("tensor.cast", "test.clone"), ("arith.negf", "test.twice")] {
        let mut def = reg.op(from).unwrap().clone();
        def.name = name;
        def.format = None;
        (def.parse, def.print, def.verify, def.fold) = (None, None, None, None);
        def.canonicalize = &[];
        def.scalar_eval = None;
        def.llvm = None;
        def.interfaces = Default::default();
        reg.register_op(def);
    }
    if models {
        reg.attach_interface(
            "test.clone",
            Bufferizable::plain(|rw, op, b| {
                let src = rw.buffer(op, rw.ir().operand(op, 0))?;
                let loc = rw.ir().loc(op);
                let dst = rw.alloc_like(b, src, loc);
                rw.copy(b, src, dst, loc);
                rw.bind(rw.ir().result(op, 0), dst);
                Ok(())
            }),
        );
    }
    if patterns {
        reg.attach_interface(
            "test.twice",
            ConvertToLlvm(|rw, op| {
                let x = rw.converted_operands(op)?[0];
                let ty = rw.results_of(op)?[0];
                let r = rw.valp("llvm.fadd", vec![x, x], ty, vec![]);
                rw.bind(op, r);
                Ok(())
            }),
        );
    }
    ctx
}

const SRC: &str = r#"
func.func @f(%a: tensor<?xf32>, %s: f32) -> (tensor<?xf32>, f32) {
  %c = "test.clone"(%a) : (tensor<?xf32>) -> tensor<?xf32>
  %t = "test.twice"(%s) : (f32) -> f32
  return %c, %t : tensor<?xf32>, f32
}
"#;

fn compile(ctx: &Context) -> Result<Executable, String> {
    let mut m = parse_module(ctx, SRC, "embedder.mlir").map_err(|d| d.to_string())?;
    Executable::compile(ctx, &mut m.ir, m.top).map_err(|e| e.to_string())
}

#[test]
fn own_ops_bufferize_and_run_through_their_attached_models() {
    let exe = compile(&context(true, true)).unwrap();
    let a = Tensor::from_f64(vec![3], Type::f32(), vec![1.0, -2.0, 3.5]);
    let out = exe
        .call(
            "f",
            &[RtVal::Tensor(Rc::new(a)), RtVal::Scalar(Word::float(2.25))],
        )
        .unwrap();
    assert_eq!(out[0].tensor().unwrap().to_f64(), vec![1.0, -2.0, 3.5]);
    assert_eq!(out[1].scalar().unwrap().f(), 4.5);
}

#[test]
fn an_op_without_a_model_is_a_located_error() {
    let err = compile(&context(false, true)).err().unwrap();
    assert!(
        err.contains("embedder.mlir:3:8") && err.contains("not supported by bufferize"),
        "{err}"
    );
    let err = compile(&context(true, false)).err().unwrap();
    assert!(
        err.contains("embedder.mlir:4:8")
            && err.contains("'test.twice' op cannot be converted to the llvm dialect"),
        "{err}"
    );
}
