//! `tensor.concat`: verifier and its decomposition into `tensor.empty` plus one
//! `tensor.insert_slice` per input (upstream's `decomposeTensorConcatOp`), which is how
//! bufferization and the interpreter give it meaning.

use ftuner_ir::Context;
use ftuner_ir::{intern_name, Attribute, Ir, OpId, OpSpec, Type, Value, DYNAMIC};

fn dim_of(ir: &Ir, op: OpId) -> Result<usize, String> {
    let d = ir
        .attr(op, "dim")
        .and_then(|a| a.as_i64())
        .ok_or("requires attribute 'dim'")?;
    usize::try_from(d).map_err(|_| format!("concatenation dim must be non-negative, got {d}"))
}

pub fn verify_concat(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let ins = ir.operands(op);
    if ins.is_empty() {
        return Err("requires at least one input".into());
    }
    let d = dim_of(ir, op)?;
    let rt = ir.value_type(ir.result(op, 0));
    let rs = rt.shape().ok_or("result must be a ranked tensor")?;
    if d >= rs.len() {
        return Err(format!(
            "concatenation dim must be in the range [0, {})",
            rs.len()
        ));
    }
    let mut total: Option<i64> = Some(0);
    for (i, v) in ins.iter().enumerate() {
        let t = ir.value_type(*v);
        let s = t.shape().ok_or("inputs must be ranked tensors")?;
        if s.len() != rs.len() {
            return Err(format!(
                "rank of concatenated inputs must match result rank, input {i} has rank {}",
                s.len()
            ));
        }
        if t.element_type() != rt.element_type() {
            return Err(format!(
                "input {i} element type does not match the result's"
            ));
        }
        for (k, (a, b)) in s.iter().zip(rs).enumerate() {
            if k != d && *a != DYNAMIC && *b != DYNAMIC && a != b {
                return Err(format!(
                    "static concatenation size mismatch along non-concatenated dimension {k}"
                ));
            }
        }
        total = match (total, s[d]) {
            (Some(t), x) if x != DYNAMIC => t.checked_add(x),
            _ => None,
        };
    }
    if let Some(t) = total {
        if rs[d] != DYNAMIC && rs[d] != t {
            return Err(format!(
                "result type {rt} does not match the inferred size {t} along dim {d}"
            ));
        }
    }
    Ok(())
}

fn index_op(
    ir: &mut Ir,
    before: OpId,
    name: &str,
    operands: Vec<Value>,
    value: Option<i64>,
) -> Value {
    let mut spec = OpSpec::new(intern_name(name), ir.loc(before))
        .operands(operands)
        .results([Type::index()]);
    if let Some(v) = value {
        spec = spec.prop("value", Attribute::index(v));
    }
    let o = ir.create_op(spec);
    ir.insert_before(before, o);
    ir.result(o, 0)
}

/// Dim `k` of `v` as an index value: a constant when static.
fn size(ir: &mut Ir, before: OpId, v: Value, k: usize) -> Value {
    let s = ir.value_type(v).shape().map(|s| s[k]).unwrap_or(DYNAMIC);
    if s != DYNAMIC {
        return index_op(ir, before, "arith.constant", vec![], Some(s));
    }
    let c = index_op(ir, before, "arith.constant", vec![], Some(k as i64));
    index_op(ir, before, "tensor.dim", vec![v, c], None)
}

/// Replace `op` by `tensor.empty` and one `tensor.insert_slice` per input; false when
/// `op` is not a verified concat.
pub fn decompose_concat(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    if ir.name(op) != "tensor.concat" || verify_concat(ctx, ir, op).is_err() {
        return false;
    }
    let Ok(d) = dim_of(ir, op) else { return false };
    let ins = ir.operands(op).to_vec();
    let res = ir.result(op, 0);
    let rt = ir.value_type(res);
    let rank = rt.rank().unwrap_or(0);
    let rs = rt.shape().unwrap_or(&[]).to_vec();
    // The result's dynamic sizes: the concatenated dim is the sum of the inputs'.
    let mut dyn_sizes = vec![];
    for (k, s) in rs.iter().enumerate() {
        if *s != DYNAMIC {
            continue;
        }
        if k == d {
            let mut acc = size(ir, op, ins[0], k);
            for v in &ins[1..] {
                let x = size(ir, op, *v, k);
                acc = index_op(ir, op, "arith.addi", vec![acc, x], None);
            }
            dyn_sizes.push(acc);
        } else {
            dyn_sizes.push(size(ir, op, ins[0], k));
        }
    }
    let e = ir.create_op(
        OpSpec::new(intern_name("tensor.empty"), ir.loc(op))
            .operands(dyn_sizes)
            .results([rt]),
    );
    ir.insert_before(op, e);
    let mut dest = ir.result(e, 0);
    let mut offset: Option<Value> = None;
    let mut static_offset = Some(0i64);
    for v in &ins {
        let t = ir.value_type(*v);
        let s = t.shape().unwrap_or(&[]).to_vec();
        // Offsets: zero but along `d`; sizes: the input's; strides: one.
        let mut offs_dyn = vec![];
        let mut static_offs = vec![0i64; rank];
        match static_offset {
            Some(o) => static_offs[d] = o,
            None => {
                static_offs[d] = DYNAMIC;
                offs_dyn.extend(offset);
            }
        }
        let mut sizes_dyn = vec![];
        for (k, x) in s.iter().enumerate() {
            if *x == DYNAMIC {
                sizes_dyn.push(size(ir, op, *v, k));
            }
        }
        let mut operands = vec![*v, dest];
        operands.extend(offs_dyn.iter().copied());
        operands.extend(sizes_dyn.iter().copied());
        let ins_op = ir.create_op(
            OpSpec::new(intern_name("tensor.insert_slice"), ir.loc(op))
                .operands(operands)
                .results([rt])
                .prop("static_offsets", Attribute::dense_i64_array(&static_offs))
                .prop("static_sizes", Attribute::dense_i64_array(&s))
                .prop("static_strides", Attribute::dense_i64_array(&vec![1; rank]))
                .prop(
                    "operandSegmentSizes",
                    Attribute::dense_i32_array(&[
                        1,
                        1,
                        offs_dyn.len() as i32,
                        sizes_dyn.len() as i32,
                        0,
                    ]),
                ),
        );
        ir.insert_before(op, ins_op);
        dest = ir.result(ins_op, 0);
        // The next offset.
        static_offset = match (static_offset, s[d]) {
            (Some(o), x) if x != DYNAMIC => Some(o + x),
            _ => None,
        };
        if static_offset.is_none() {
            let here = match offset {
                Some(o) => o,
                None => {
                    let o = static_offs[d];
                    index_op(
                        ir,
                        op,
                        "arith.constant",
                        vec![],
                        Some(if o == DYNAMIC { 0 } else { o }),
                    )
                }
            };
            let x = size(ir, op, *v, d);
            offset = Some(index_op(ir, op, "arith.addi", vec![here, x], None));
        }
    }
    ir.replace_all_uses(res, dest);
    ir.erase_op(op);
    true
}
