//! The attributes ftuner puts on functions read back as written, and malformed ones read
//! as absent rather than as something else.

use ftuner_dialects::func_attrs::{self, Prepared};
use ftuner_ir::{parse_module, Ir, OpId};

fn funcs(src: &str) -> (Ir, Vec<OpId>) {
    let ctx = ftuner_dialects::context();
    let m = parse_module(&ctx, src, "t.mlir").expect("parses");
    let mut fs = vec![];
    m.ir.walk_pre(m.top, &mut |o| {
        if m.ir.name(o) == "func.func" {
            fs.push(o);
        }
    });
    (m.ir, fs)
}

#[test]
fn weights_and_preparation() {
    let (ir, fs) = funcs(
        r#"
func.func @f(%x: tensor<?x4xf32>, %w: tensor<4x4xf32> {ftuner.weight}, %y: f32 {other}, %b: tensor<4xf32> {ftuner.weight, more}) {
  return
}
func.func @g(%x: tensor<?x4xf32>, %p: tensor<4x4xf32>) attributes {ftuner.prepared = {inputs = array<i64: 0, 2>, prepare = @g_weights}} {
  return
}
func.func @bad(%x: f32) attributes {ftuner.prepared = {inputs = array<i64: -1>, prepare = @p}} {
  return
}
"#,
    );
    assert_eq!(func_attrs::weight_args(&ir, fs[0]), vec![1, 3]);
    assert!(func_attrs::is_weight_arg(&ir, fs[0], 3));
    assert!(!func_attrs::is_weight_arg(&ir, fs[0], 2));
    assert!(!func_attrs::is_weight_arg(&ir, fs[0], 9));
    assert_eq!(func_attrs::weight_args(&ir, fs[1]), Vec::<usize>::new());
    // The prepare function is the one named, not `<f>_prepare`.
    assert_eq!(
        func_attrs::prepared(&ir, fs[1]),
        Some(Prepared {
            inputs: vec![0, 2],
            prepare: "g_weights".into()
        })
    );
    assert_eq!(func_attrs::prepared(&ir, fs[0]), None);
    assert_eq!(func_attrs::prepared(&ir, fs[2]), None);
    // Marking keeps the other entries and does not mark twice.
    let marked = func_attrs::with_weights_marked(&ir, fs[0], 4, &[0, 1]);
    let marked = marked.as_array().expect("an array");
    let keys = |i: usize| -> Vec<String> {
        marked[i]
            .as_dict()
            .expect("a dictionary")
            .iter()
            .map(|(k, _)| k.clone())
            .collect()
    };
    assert_eq!(keys(0), vec!["ftuner.weight"]);
    assert_eq!(keys(1), vec!["ftuner.weight"]);
    assert_eq!(keys(2), vec!["other"]);
    assert_eq!(keys(3), vec!["ftuner.weight", "more"]);
    // The attribute written is the one read.
    let a = func_attrs::prepared_attr(&[1, 0], "q");
    assert_eq!(a.to_string(), "{inputs = array<i64: 1, 0>, prepare = @q}");
    let mut ir = ir;
    ir.set_attr(fs[0], func_attrs::PREPARED, Some(a));
    assert_eq!(
        func_attrs::prepared(&ir, fs[0]),
        Some(Prepared {
            inputs: vec![1, 0],
            prepare: "q".into()
        })
    );
}
