//! `tensor`: type inference, verifiers, folders and result names.

mod canonicalize;
pub(crate) mod cast_folds;
mod concat;
pub(crate) mod slices;

pub use canonicalize::*;
pub use concat::{decompose_concat, verify_concat};

use crate::cf::constant_of;
use ftuner_ir::dialect::{FoldResult, TypeEnv};
use ftuner_ir::Context;
use ftuner_ir::{AttrKind, Attribute, Ir, OpId, OpSpec, Type, Value, DYNAMIC};

macro_rules! names {
    ($($f:ident => $n:expr),* $(,)?) => {$(
        pub fn $f(ir: &Ir, op: OpId, f: &mut dyn FnMut(Value, String)) {
            f(ir.result(op, 0), $n.to_string());
        }
    )*};
}
names! {
    asm_names_dim => "dim", asm_names_extract => "extracted", asm_names_insert => "inserted",
    asm_names_from_elements => "from_elements", asm_names_reshape => "reshape",
    asm_names_collapse_shape => "collapsed", asm_names_expand_shape => "expanded", asm_names_cast => "cast",
    asm_names_extract_slice => "extracted_slice", asm_names_insert_slice => "inserted_slice",
    asm_names_pad => "padded", asm_names_generate => "generated", asm_names_splat => "splat",
    asm_names_concat => "concat",
}

pub fn verify_empty(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let t = ir.value_type(ir.result(op, 0));
    let dyns = t
        .shape()
        .map(|s| s.iter().filter(|d| **d == DYNAMIC).count())
        .unwrap_or(0);
    let n = ir.operands(op).len();
    if dyns != n {
        return Err(format!(
            "incorrect number of dynamic sizes, has {n}, expected {dyns}"
        ));
    }
    Ok(())
}

/// Dynamic sizes given by constants become static dims (with a cast back).
fn empty_static_dims(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    let t = ir.value_type(ir.result(op, 0));
    let Some(shape) = t.shape() else { return false };
    let ops = ir.operands(op).to_vec();
    let mut new_shape = shape.to_vec();
    let mut new_ops = vec![];
    let mut changed = false;
    let mut k = 0;
    for d in new_shape.iter_mut() {
        if *d == DYNAMIC {
            let v = ops[k];
            k += 1;
            match constant_of(ctx, ir, v).and_then(|a| a.as_i64()) {
                Some(c) if c >= 0 => {
                    *d = c;
                    changed = true;
                }
                _ => new_ops.push(v),
            }
        }
    }
    if !changed {
        return false;
    }
    let nt = t.with_shape(new_shape);
    let loc = ir.loc(op);
    let e = ir.create_op(
        OpSpec::new(ftuner_ir::intern_name("tensor.empty"), loc)
            .operands(new_ops)
            .results([nt]),
    );
    ir.insert_before(op, e);
    let c = ir.create_op(
        OpSpec::new(ftuner_ir::intern_name("tensor.cast"), loc)
            .operands([ir.result(e, 0)])
            .results([t]),
    );
    ir.insert_before(op, c);
    let r = ir.result(c, 0);
    ir.replace_op(op, &[r]);
    true
}
pub const CANONICALIZE_EMPTY: &[ftuner_ir::dialect::CanonFn] = &[empty_static_dims];

pub fn infer_dim(env: &mut TypeEnv) -> Result<(), String> {
    env.set("result", vec![Type::index()]);
    Ok(())
}
pub fn infer_rank(env: &mut TypeEnv) -> Result<(), String> {
    env.set("result", vec![Type::index()]);
    Ok(())
}
/// `tensor.dim` of a static dim is a constant; of a `tensor.empty` or
/// `tensor.extract_slice` dynamic dim, its size operand; of a `tensor.insert_slice`, its
/// destination's. A destination-style op's result
/// (`linalg.*`, `ukernel.patch`) has its init's shape: the chain of inits is followed.
pub fn fold_dim(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    let idx = c.get(1).copied().flatten()?.as_i64()?;
    let mut src = ir.operand(op, 0);
    let shape = ir.value_type(src).shape()?.to_vec();
    let d = *shape.get(usize::try_from(idx).ok()?)?;
    if d != DYNAMIC {
        return Some(vec![FoldResult::Attr(Attribute::index(d))]);
    }
    match ir.defining_op(src).map(|d| ir.name(d)) {
        Some("scf.forall") => {
            // A forall result has its shared output's type and shape.
            let f = ir.defining_op(src)?;
            let k = ir.results(f).iter().position(|r| *r == src)?;
            let n = ir.operands(f).len() - ir.results(f).len();
            let out = ir.operand(f, n + k);
            ir.set_operand(op, 0, out);
            return Some(vec![]);
        }
        Some("tensor.cast" | "tensor.insert_slice") => {
            cast_folds::dim_through(ir, op, idx);
            return Some(vec![]);
        }
        Some("tensor.generate") => {
            return cast_folds::dim_through(ir, op, idx).map(|v| vec![FoldResult::Value(v)]);
        }
        _ => {}
    }
    let mut def = ir.defining_op(src)?;
    while ir.name(def).starts_with("linalg.") || ir.name(def) == "ukernel.patch" {
        let k = ir.results(def).iter().position(|r| *r == src)?;
        let (_, outs) = crate::linalg::ins_outs(ir, def);
        let init = *outs.get(k)?;
        if ir.value_type(init) != ir.value_type(src) {
            return None;
        }
        src = init;
        def = ir.defining_op(src)?;
    }
    if ir.name(def) == "tensor.empty" {
        let k = shape[..idx as usize]
            .iter()
            .filter(|x| **x == DYNAMIC)
            .count();
        return Some(vec![FoldResult::Value(ir.operand(def, k))]);
    }
    // A slice's dynamic result dims are its dynamic sizes, in order (dropped unit dims are
    // static).
    if ir.name(def) == "tensor.extract_slice" {
        let k = shape[..idx as usize]
            .iter()
            .filter(|x| **x == DYNAMIC)
            .count();
        let segs = ir.attr(def, "operandSegmentSizes")?.as_dense_i64s()?;
        let (n_off, n_size) = (*segs.get(1)? as usize, *segs.get(2)? as usize);
        if k >= n_size {
            return None;
        }
        return Some(vec![FoldResult::Value(ir.operand(def, 1 + n_off + k))]);
    }
    None
}

pub fn infer_extract(env: &mut TypeEnv) -> Result<(), String> {
    if let Some(t) = env.get1("tensor") {
        env.set("result", vec![t.element_type()]);
    }
    Ok(())
}
pub fn verify_extract(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let t = ir.value_type(ir.operand(op, 0));
    let n = ir.operands(op).len() - 1;
    if t.rank() != Some(n) {
        return Err("incorrect number of indices for extract_element".into());
    }
    Ok(())
}
/// Extract from a splat constant.
pub fn fold_extract(ir: &mut Ir, op: OpId, c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    let a = c.first().copied().flatten()?;
    if let AttrKind::DenseElements {
        ty,
        splat: true,
        elements,
    } = a.kind()
    {
        let e = ty.element_type();
        let r = match elements.first()? {
            ftuner_ir::Scalar::Int(v) => Attribute::int(*v, e),
            ftuner_ir::Scalar::Float(b) => Attribute::get(AttrKind::Float { bits: *b, ty: e }),
            _ => return None,
        };
        let _ = ir;
        let _ = op;
        return Some(vec![FoldResult::Attr(r)]);
    }
    None
}
pub fn infer_insert(env: &mut TypeEnv) -> Result<(), String> {
    if let Some(t) = env.get1("dest") {
        env.set("scalar", vec![t.element_type()]);
    }
    Ok(())
}
pub fn infer_from_elements(env: &mut TypeEnv) -> Result<(), String> {
    if let Some(t) = env.get1("result") {
        let n = env.count("elements");
        env.set("elements", vec![t.element_type(); n.max(1)]);
    }
    Ok(())
}
pub fn verify_from_elements(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let t = ir.value_type(ir.result(op, 0));
    let n = ir.operands(op).len() as i64;
    if t.num_elements() != Some(n) {
        return Err(format!(
            "expected {} operands, but found {n}",
            t.num_elements().unwrap_or(-1)
        ));
    }
    Ok(())
}
pub fn verify_reshape(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let src = ir.value_type(ir.operand(op, 0));
    let shape = ir.value_type(ir.operand(op, 1));
    let res = ir.value_type(ir.result(op, 0));
    if src.element_type() != res.element_type() {
        return Err(
            "element types of source and destination tensor types should be the same".into(),
        );
    }
    if shape.rank() != Some(1) {
        return Err("shape operand must be a 1-d tensor".into());
    }
    if let (Some(r), Some(n)) = (res.rank(), shape.shape().and_then(|s| s.first().copied())) {
        if n != DYNAMIC && n as usize != r {
            return Err("length of shape operand differs from the result's tensor rank".into());
        }
    }
    if let (Some(a), Some(b)) = (src.num_elements(), res.num_elements()) {
        if a != b {
            return Err(
                "source and destination tensor should have the same number of elements".into(),
            );
        }
    }
    Ok(())
}

/// The `reassociation` attribute of a `collapse_shape` / `expand_shape` grouping dims
/// as `groups` (`[[0], [1, 2, 3]]`).
pub fn reassociation_attr(groups: &[&[i64]]) -> Attribute {
    Attribute::array(
        groups
            .iter()
            .map(|g| Attribute::array(g.iter().map(|d| Attribute::i64(*d)).collect()))
            .collect(),
    )
}

/// The `reassociation` groups of a `tensor.expand_shape` / `tensor.collapse_shape`.
pub fn reassociation(ir: &Ir, op: OpId) -> Result<Vec<Vec<i64>>, String> {
    let a = ir
        .attr(op, "reassociation")
        .ok_or("requires attribute 'reassociation'")?;
    a.as_array()
        .ok_or("reassociation must be an array")?
        .iter()
        .map(|g| {
            g.as_array()
                .and_then(|v| v.iter().map(|x| x.as_i64()).collect::<Option<Vec<_>>>())
                .ok_or_else(|| "reassociation groups must be arrays of integers".to_string())
        })
        .collect()
}

/// Shared by collapse/expand: `big` has the higher rank.
fn verify_reassoc(ir: &Ir, op: OpId, small: Type, big: Type) -> Result<(), String> {
    let groups = reassociation(ir, op)?;
    let (ss, bs) = (
        small.shape().ok_or("expected ranked types")?,
        big.shape().ok_or("expected ranked types")?,
    );
    if groups.len() != ss.len() {
        return Err(format!(
            "expected rank {} to match the number of reassociation groups {}",
            ss.len(),
            groups.len()
        ));
    }
    let mut next = 0i64;
    for (gi, g) in groups.iter().enumerate() {
        for d in g {
            if *d != next {
                return Err("expected reassociation map #".to_string()
                    + &gi.to_string()
                    + " to be valid and contiguous");
            }
            next += 1;
        }
        let dims: Vec<i64> = g
            .iter()
            .map(|d| bs.get(*d as usize).copied().unwrap_or(DYNAMIC))
            .collect();
        if dims.iter().all(|d| *d != DYNAMIC) && ss[gi] != DYNAMIC {
            // In i128, checked: the product of large static dims overflowed i64.
            let prod = dims
                .iter()
                .try_fold(1i128, |p, d| p.checked_mul(i128::from(*d)));
            match prod {
                Some(p) if p == i128::from(ss[gi]) => {}
                Some(p) => {
                    return Err(format!(
                        "expected dimension {gi} of collapsed type to be static value of {p}"
                    ))
                }
                None => {
                    return Err(format!(
                        "the product of the expanded dimensions of group {gi} overflows"
                    ))
                }
            }
        }
        if dims.contains(&DYNAMIC) && ss[gi] != DYNAMIC {
            return Err(format!("expected dimension {gi} of collapsed type to be dynamic since one or more of the corresponding dimensions in the expanded type is dynamic"));
        }
    }
    // An empty reassociation collapses (expands) unit dims to (from) rank 0.
    let to_rank0 = groups.is_empty() && ss.is_empty() && bs.iter().all(|d| *d == 1);
    if next as usize != bs.len() && !to_rank0 {
        return Err(format!(
            "expected {} dims in the reassociation, got {next}",
            bs.len()
        ));
    }
    if small.element_type() != big.element_type() {
        return Err("expected the same element type".into());
    }
    Ok(())
}
pub fn verify_collapse_shape(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let (s, r) = (
        ir.value_type(ir.operand(op, 0)),
        ir.value_type(ir.result(op, 0)),
    );
    verify_reassoc(ir, op, r, s)
}
pub fn verify_expand_shape(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let (s, r) = (
        ir.value_type(ir.operand(op, 0)),
        ir.value_type(ir.result(op, 0)),
    );
    verify_reassoc(ir, op, s, r)?;
    let stat = ir
        .attr(op, "static_output_shape")
        .and_then(|a| a.as_dense_i64s())
        .ok_or("requires static_output_shape")?;
    let rs = r.shape().unwrap_or(&[]);
    if stat.len() != rs.len() {
        return Err(format!("expected number of static shape dims to be equal to the output rank ({}) but found {} inputs instead", rs.len(), stat.len()));
    }
    let ndyn = stat.iter().filter(|d| **d == DYNAMIC).count();
    if ndyn != ir.operands(op).len() - 1 {
        return Err(format!("mismatch in dynamic dims in output_shape and static_output_shape: static_output_shape has {ndyn} dynamic dims while output_shape has {} values", ir.operands(op).len() - 1));
    }
    for (i, (a, b)) in stat.iter().zip(rs).enumerate() {
        if *a != DYNAMIC && *b != DYNAMIC && a != b {
            return Err(format!("invalid output shape provided at pos {i}"));
        }
    }
    Ok(())
}
pub fn verify_cast(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let (a, b) = (
        ir.value_type(ir.operand(op, 0)),
        ir.value_type(ir.result(op, 0)),
    );
    if !ftuner_ir::types::types_compatible(a, b) {
        return Err(format!(
            "operand type '{a}' and result type '{b}' are cast incompatible"
        ));
    }
    Ok(())
}
/// A cast to the same type, or of a cast back to the original type, disappears.
pub fn fold_cast(ir: &mut Ir, op: OpId, _c: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    let src = ir.operand(op, 0);
    let rt = ir.value_type(ir.result(op, 0));
    if ir.value_type(src) == rt {
        return Some(vec![FoldResult::Value(src)]);
    }
    let d = ir.defining_op(src)?;
    if ir.name(d) == "tensor.cast" && ir.value_type(ir.operand(d, 0)) == rt {
        return Some(vec![FoldResult::Value(ir.operand(d, 0))]);
    }
    None
}

/// Unit attribute on a `tensor.extract_slice` / `tensor.insert_slice` that a compiler
/// pass made inside bounds it established itself (a tile of an iteration space it sized):
/// bufferization emits no run-time bounds check for it. Like `in_bounds` on vector
/// transfers it is a promise (out of bounds with it is undefined): the tools that run
/// what they read (`ftuner_opt::parse_for_execution`: ftuner-run, ftuner-translate, the
/// Python package) drop it from their input ([`forget_in_bounds`]); ftuner-opt keeps it,
/// printing what it was given.
pub const IN_BOUNDS: &str = "ftuner.in_bounds";

/// Drop [`IN_BOUNDS`] from every op under `top` (input from outside: checked again).
pub fn forget_in_bounds(ir: &mut Ir, top: OpId) {
    ir.remove_attr_under(top, IN_BOUNDS);
}

/// Check the static offsets, sizes and strides of a slice (`tensor.extract_slice`,
/// `tensor.insert_slice`, `memref.subview`) of a value of shape `shape` (returns the static
/// sizes, for the callers' type checks): one of
/// each per dim, and wherever a dim, its offset, size and stride are all known, the slice
/// lies inside it (`0 <= offset`, `0 <= size`, and for a non-empty slice
/// `0 <= offset + (size - 1) * stride < dim`; an empty one may start at `dim`). A slice
/// that leaves its value is an out-of-bounds access at run time: rejected here, and where
/// a bound is known only at run time, checked by the lowering.
pub fn verify_slice_bounds(ir: &Ir, op: OpId, shape: &[i64]) -> Result<Vec<i64>, String> {
    let get = |k: &str| {
        ir.attr(op, k)
            .and_then(|a| a.as_dense_i64s())
            .ok_or(format!("requires attribute '{k}'"))
    };
    let (off, size, stride) = (
        get("static_offsets")?,
        get("static_sizes")?,
        get("static_strides")?,
    );
    let rank = shape.len();
    for (what, v) in [("offsets", &off), ("sizes", &size), ("strides", &stride)] {
        if v.len() != rank {
            return Err(format!("expected {rank} {what} values, got {}", v.len()));
        }
    }
    for i in 0..rank {
        let known = |x: i64| x != DYNAMIC;
        if known(off[i]) && off[i] < 0 {
            return Err(format!("offset {} of dim {i} is negative", off[i]));
        }
        if known(size[i]) && size[i] < 0 {
            return Err(format!("size {} of dim {i} is negative", size[i]));
        }
        if !(known(off[i]) && known(size[i]) && known(stride[i]) && known(shape[i])) {
            continue;
        }
        let (o, n, st, d) = (
            off[i] as i128,
            size[i] as i128,
            stride[i] as i128,
            shape[i] as i128,
        );
        let inside = if n == 0 {
            o <= d
        } else {
            let last = o + (n - 1) * st;
            o < d && (0..d).contains(&last)
        };
        if !inside {
            return Err(format!(
                "slice of dim {i} (offset {o}, size {n}, stride {st}) leaves the dim of size {d}"
            ));
        }
    }
    Ok(size)
}

/// The slice's shape `slice` (a slice result or an inserted source) against its static
/// sizes: the dims a rank reduction keeps match wherever both are known.
fn verify_slice_type(sizes: &[i64], slice: Type, what: &str) -> Result<(), String> {
    let want = slice.shape().unwrap_or(&[]);
    let keep = ftuner_ir::rank_reduction_keep(sizes, want).ok_or(format!(
        "the {what} {slice} is not a (rank-reduced) slice of sizes {sizes:?}"
    ))?;
    let kept = sizes
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(s, _)| *s);
    for (j, (s, w)) in kept.zip(want).enumerate() {
        if s != DYNAMIC && *w != DYNAMIC && s != *w {
            return Err(format!(
                "the {what} {slice} has {w} at dim {j} where the slice size is {s}"
            ));
        }
    }
    Ok(())
}

pub fn verify_extract_slice(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let src = ir.value_type(ir.operand(op, 0));
    let sizes = verify_slice_bounds(ir, op, src.shape().unwrap_or(&[]))?;
    let res = ir.value_type(ir.result(op, 0));
    if res.element_type() != src.element_type() {
        return Err("expected the same element type for source and result".into());
    }
    verify_slice_type(&sizes, res, "result type")
}
pub fn verify_insert_slice(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let dst = ir.value_type(ir.operand(op, 1));
    let sizes = verify_slice_bounds(ir, op, dst.shape().unwrap_or(&[]))?;
    let src = ir.value_type(ir.operand(op, 0));
    if src.element_type() != dst.element_type() {
        return Err("expected the same element type for source and destination".into());
    }
    verify_slice_type(&sizes, src, "source type")
}
/// An insert into a shared output of the `scf.forall` whose `scf.forall.in_parallel`
/// holds it, otherwise as `tensor.insert_slice`.
pub fn verify_parallel_insert_slice(ctx: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let Some(p) = ir
        .parent_op(op)
        .filter(|p| ir.name(*p) == "scf.forall.in_parallel")
    else {
        return Err("expected 'scf.forall.in_parallel' parent".into());
    };
    let dest = ir.operand(op, 1);
    let loop_body = ir.op(p).parent;
    let outputs_from = ir
        .parent_op(p)
        .and_then(|f| Some(ir.attr(f, "staticLowerBound")?.as_dense_i64s()?.len()));
    let is_output = match (ir.value(dest).def, loop_body, outputs_from) {
        (ftuner_ir::ValueDef::BlockArg(b, i), Some(lb), Some(rank)) => {
            b == lb && i as usize >= rank
        }
        _ => false,
    };
    if !is_output {
        return Err("may only insert into a shared output block argument of the loop".into());
    }
    verify_insert_slice(ctx, ir, op)
}
pub fn verify_pad(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let src = ir.value_type(ir.operand(op, 0));
    let res = ir.value_type(ir.result(op, 0));
    let r = src.rank().unwrap_or(0);
    let lo = ir
        .attr(op, "static_low")
        .and_then(|a| a.as_dense_i64s())
        .ok_or("requires static_low")?;
    let hi = ir
        .attr(op, "static_high")
        .and_then(|a| a.as_dense_i64s())
        .ok_or("requires static_high")?;
    if lo.len() != r || hi.len() != r {
        return Err(format!("expected {r} low and high padding values"));
    }
    let (ss, rs) = (src.shape().unwrap_or(&[]), res.shape().unwrap_or(&[]));
    if rs.len() != r {
        return Err("expected the result rank to match the source rank".into());
    }
    if src.element_type() != res.element_type() {
        return Err(format!(
            "expected the result element type {} to be the source's, {}",
            res.element_type(),
            src.element_type()
        ));
    }
    index_block_args(ir, op, r, "expected the block to have {r} arguments", |i| {
        format!("expected block argument {i} to be an index")
    })?;
    yield_is_element(ir, op, res)?;
    for i in 0..r {
        for (what, p) in [("low", lo[i]), ("high", hi[i])] {
            if p != DYNAMIC && p < 0 {
                return Err(format!("{what} padding {p} of dim {i} is negative"));
            }
        }
        let sum = [ss[i], lo[i], hi[i]].iter().try_fold(0i64, |a, x| {
            if *x == DYNAMIC {
                None
            } else {
                a.checked_add(*x)
            }
        });
        if ss[i] != DYNAMIC && lo[i] != DYNAMIC && hi[i] != DYNAMIC && sum.is_none() {
            return Err(format!("the padded size of dim {i} overflows"));
        }
        if sum.is_some_and(|x| rs[i] != DYNAMIC && x != rs[i]) {
            return Err(format!(
                "specified type {res} does not match the inferred type {}",
                src.with_shape(
                    (0..r)
                        .map(
                            |j| if ss[j] == DYNAMIC || lo[j] == DYNAMIC || hi[j] == DYNAMIC {
                                DYNAMIC
                            } else {
                                ss[j].saturating_add(lo[j]).saturating_add(hi[j])
                            }
                        )
                        .collect()
                )
            ));
        }
    }
    Ok(())
}
/// The body of `tensor.pad` / `tensor.generate` takes one index per dim (`{r}` in
/// `count_msg` is the rank): a body without them verified, and the interpreter indexed
/// past its slots.
fn index_block_args(
    ir: &Ir,
    op: OpId,
    r: usize,
    count_msg: &str,
    arg_msg: fn(usize) -> String,
) -> Result<(), String> {
    let Some(b) = ir.regions_of(op).first().and_then(|g| ir.region_entry(*g)) else {
        return Err("expected a body".into());
    };
    let args = ir.block_args(b);
    if args.len() != r {
        return Err(count_msg.replace("{r}", &r.to_string()));
    }
    match args.iter().position(|a| !ir.value_type(*a).is_index()) {
        Some(i) => Err(arg_msg(i + 1)),
        None => Ok(()),
    }
}

/// `tensor.generate`: one dynamic extent per `?` of the result, one index argument of
/// the body per dim.
pub fn verify_generate(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let res = ir.value_type(ir.result(op, 0));
    let shape = res.shape().unwrap_or(&[]);
    let dynamic = shape.iter().filter(|d| **d == DYNAMIC).count();
    if ir.operands(op).len() != dynamic {
        return Err(
            "must have as many index operands as dynamic extents in the result type".into(),
        );
    }
    index_block_args(
        ir,
        op,
        shape.len(),
        "must have one body argument per input dimension",
        |_| "all body arguments must be index".into(),
    )?;
    yield_is_element(ir, op, res)
}

/// The body of `tensor.pad` / `tensor.generate` yields one value of the result's element
/// type (upstream: "body must be terminated with a `yield` operation of the tensor
/// element type"); a mismatched one verified, and its value was stored as the wrong type.
fn yield_is_element(ir: &Ir, op: OpId, res: Type) -> Result<(), String> {
    let t = ir
        .regions_of(op)
        .first()
        .and_then(|r| ir.region_entry(*r))
        .and_then(|b| ir.terminator(b));
    let yielded: Vec<Type> = t
        .map(|t| ir.operands(t).iter().map(|v| ir.value_type(*v)).collect())
        .unwrap_or_default();
    if yielded != [res.element_type()] {
        return Err(format!(
            "body must be terminated with a `yield` operation of the tensor element type {}",
            res.element_type()
        ));
    }
    Ok(())
}

/// The value a `tensor.pad` writes, when it does not depend on the position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PadValue {
    /// Yielded from outside the body.
    Outside(Value),
    /// A constant defined in the body (its `arith.constant`).
    Constant(OpId),
}

/// The padding value of `tensor.pad` `op`: yielded from outside its body, or an
/// `arith.constant` inside it; `None` when it depends on the position (or the body is
/// malformed).
pub fn pad_value(ir: &Ir, op: OpId) -> Option<PadValue> {
    let body = ir
        .regions_of(op)
        .first()
        .and_then(|r| ir.region_entry(*r))?;
    let &y = ir.terminator(body).and_then(|t| ir.operands(t).first())?;
    match ir.defining_op(y) {
        Some(d) if ir.op(d).parent == Some(body) => {
            (ir.name(d) == crate::ops::arith::ConstantOp::NAME && ir.operands(d).is_empty())
                .then_some(PadValue::Constant(d))
        }
        Some(_) => Some(PadValue::Outside(y)),
        None => (ir.value_block(y) != Some(body)).then_some(PadValue::Outside(y)),
    }
}

pub fn infer_splat(env: &mut TypeEnv) -> Result<(), String> {
    if let Some(t) = env.get1("aggregate") {
        env.set("input", vec![t.element_type()]);
    }
    Ok(())
}
