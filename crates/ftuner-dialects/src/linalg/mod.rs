//! `linalg`: the structured ops' syntax (`ins(...) outs(...)`), body builders for named
//! ops, and verifiers checking indexing maps against operand ranks and static sizes.

pub mod batch_matmul;
pub mod body;
mod broadcast_gather;
mod dead_results;
mod masked_softmax;
pub mod named;
mod windows;

pub use batch_matmul::CANONICALIZE_BATCH_MATMUL;
use ftuner_ir::Context;
use windows::verify_windows;
pub use windows::{linear_coeffs, linear_range};

use ftuner_ir::lexer::Tok;
use ftuner_ir::parser::{OperationState, PResult, Parser};
use ftuner_ir::{
    traits, AttrKind, Attribute, Ir, MemoryEffects, OpId, OpPrinter, Type, Value, DYNAMIC,
};

/// A destination-style op's memory effects (MLIR's `DestinationStyleOpInterface` ops):
/// on buffers it reads its inputs and writes its outputs; on tensors it has none of its
/// own, and its body decides.
pub fn destination_style_effects(ir: &Ir, op: OpId) -> MemoryEffects {
    if ir
        .operands(op)
        .iter()
        .any(|v| ir.value_type(*v).is_memref())
    {
        MemoryEffects::ReadWrite
    } else {
        MemoryEffects::Nested
    }
}

/// linalg's interfaces: every structured op (those with a body, `RecursiveMemoryEffects`
/// in the spec) is destination-style ([`ins_outs`]) and has destination-style effects.
pub fn register_extra(reg: &mut ftuner_ir::Registry) {
    for def in reg.ops_of_mut("linalg") {
        if def.has(traits::RECURSIVE_MEMORY_EFFECTS) {
            def.memory_effects = Some(destination_style_effects);
            def.destination_style = Some(ins_outs);
        }
    }
}

/// Inputs and outputs of a structured op (its first two operand groups, `ins(...)` and
/// `outs(...)`, as its definition declares them); none for an op no spec defines.
pub fn ins_outs(ir: &Ir, op: OpId) -> (Vec<Value>, Vec<Value>) {
    let Some((defs, same)) = crate::operand_groups(ir.name(op)) else {
        return (vec![], vec![]);
    };
    let group = |i| crate::segment(ir, op, defs, same, "operandSegmentSizes", i, true).to_vec();
    (group(0), group(1))
}

/// `ins(%a, %b : ta, tb)` / `outs(...)`; returns resolved values.
fn parse_operand_clause(p: &mut Parser<'_>, kw: &str) -> PResult<Vec<Value>> {
    Ok(parse_named_operand_clause(p, kw)?.1)
}

/// [`parse_operand_clause`], also returning the operands' SSA names as written (for ops
/// whose syntax refers to them again, like `ta.expr`).
pub fn parse_named_operand_clause(
    p: &mut Parser<'_>,
    kw: &str,
) -> PResult<(Vec<String>, Vec<Value>)> {
    if !p.parse_optional_keyword(kw) {
        return Ok((vec![], vec![]));
    }
    p.expect(Tok::LParen, "'('")?;
    let ops = p.parse_operand_list()?;
    let at = p.current_offset();
    let tys = if ops.is_empty() {
        vec![]
    } else {
        p.expect(Tok::Colon, "':'")?;
        p.parse_type_list_no_parens()?
    };
    p.expect(Tok::RParen, "')'")?;
    let names = ops.iter().map(|o| o.name.clone()).collect();
    Ok((names, p.resolve_operands(&ops, &tys, at)?))
}

fn add_attrs(st: &mut OperationState, v: Vec<(String, Attribute)>) {
    for (k, a) in v {
        st.add_attr(&k, a);
    }
}

/// Optional `-> type, ...` result list.
fn parse_results(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    if p.consume_if(Tok::Arrow) {
        if p.peek() == Tok::LParen {
            st.result_types.extend(p.parse_paren_type_list()?);
        } else {
            st.result_types.extend(p.parse_type_list_no_parens()?);
        }
    }
    Ok(())
}

pub(crate) fn iterator_attr(kind: &str) -> Attribute {
    Attribute::dialect("linalg", &format!("iterator_type<{kind}>"))
}

/// `linalg.generic {trait attrs} ins(...) outs(...) [attrs = {...}] { body } [-> types]`
pub fn parse_generic(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    let mut dict = vec![];
    if p.peek() == Tok::HashIdent {
        // The trait dictionary given through an alias: `linalg.generic #trait ins(...)`.
        let a = p.parse_attribute(None)?;
        dict = a
            .as_dict()
            .ok_or_else(|| {
                p.err_here("expected a dictionary attribute for the linalg.generic trait")
            })?
            .to_vec();
    } else {
        p.parse_optional_attr_dict(&mut dict)?;
    }
    for (k, v) in dict {
        if k == "iterator_types" {
            let arr = v
                .as_array()
                .ok_or_else(|| p.err_here("expected iterator_types array"))?;
            let mut out = vec![];
            for it in arr {
                match it.kind() {
                    AttrKind::String { value, .. } => out.push(iterator_attr(value)),
                    AttrKind::Dialect { .. } => out.push(*it),
                    _ => return Err(p.err_here("expected iterator type string")),
                }
            }
            st.add_attr(&k, Attribute::array(out));
        } else {
            st.add_attr(&k, v);
        }
    }
    let ins = parse_operand_clause(p, "ins")?;
    let outs = parse_operand_clause(p, "outs")?;
    if p.parse_optional_keyword("attrs") {
        p.expect(Tok::Equal, "'='")?;
        let mut v = vec![];
        p.parse_optional_attr_dict(&mut v)?;
        add_attrs(st, v);
    }
    let r = p.parse_region()?;
    st.regions.push(r);
    parse_results(p, st)?;
    st.props.push((
        "operandSegmentSizes".into(),
        Attribute::dense_i32_array(&[ins.len() as i32, outs.len() as i32]),
    ));
    st.operands.extend(ins);
    st.operands.extend(outs);
    Ok(())
}

fn print_clause(pr: &mut OpPrinter<'_>, kw: &str, vals: &[Value]) {
    if vals.is_empty() {
        return;
    }
    pr.write(&format!(" {kw}("));
    pr.print_operands(vals);
    pr.write(" : ");
    pr.print_types_of(vals);
    pr.write(")");
}

fn print_results(pr: &mut OpPrinter<'_>, op: OpId) {
    let rs: Vec<Type> = pr
        .ir
        .results(op)
        .iter()
        .map(|v| pr.ir.value_type(*v))
        .collect();
    if !rs.is_empty() {
        pr.write(" -> ");
        pr.print_result_types(&rs);
    }
}

pub fn print_generic(pr: &mut OpPrinter<'_>, op: OpId) {
    let ir = pr.ir;
    let mut trait_attrs: Vec<(String, Attribute)> = vec![];
    for k in ["doc", "indexing_maps", "iterator_types", "library_call"] {
        if let Some(a) = ir.attr(op, k) {
            let a = if k == "iterator_types" {
                let v = a
                    .as_array()
                    .unwrap_or(&[])
                    .iter()
                    .map(|x| match x.dialect_body() {
                        Some((_, b)) => Attribute::string(
                            b.trim_start_matches("iterator_type<").trim_end_matches('>'),
                        ),
                        None => *x,
                    });
                Attribute::array(v.collect())
            } else {
                a
            };
            trait_attrs.push((k.to_string(), a));
        }
    }
    pr.write(" ");
    pr.print_attr(Attribute::dictionary(trait_attrs));
    let (ins, outs) = ins_outs(ir, op);
    print_clause(pr, "ins", &ins);
    print_clause(pr, "outs", &outs);
    let elided = [
        "doc",
        "indexing_maps",
        "iterator_types",
        "library_call",
        "operandSegmentSizes",
    ];
    let mut rest = String::new();
    {
        let before = pr.out.len();
        pr.print_optional_attr_dict(op, &elided);
        rest.push_str(&pr.out[before..]);
        pr.out.truncate(before);
    }
    if !rest.is_empty() {
        pr.write(" attrs = ");
        pr.write(rest.trim_start());
    }
    pr.write(" ");
    let r = ir.regions_of(op)[0];
    pr.print_region(r, true, true);
    print_results(pr, op);
}

pub fn block_arg_names_generic(
    ir: &Ir,
    op: OpId,
    r: ftuner_ir::RegionId,
    f: &mut dyn FnMut(Value, String),
) {
    let (ins, _) = ins_outs(ir, op);
    if let Some(b) = ir.region_entry(r) {
        for (i, a) in ir.block_args(b).iter().enumerate() {
            f(
                *a,
                if i < ins.len() {
                    "in".into()
                } else {
                    "out".into()
                },
            );
        }
    }
}

fn verify_region_args(ir: &Ir, op: OpId, ins: &[Value], outs: &[Value]) -> Result<(), String> {
    let r = ir.regions_of(op)[0];
    let Some(b) = ir.region_entry(r) else {
        return Err("expects to have 1 region with 1 block".into());
    };
    let args = ir.block_args(b);
    if args.len() != ins.len() + outs.len() {
        return Err("expected as many non-induction variable region arguments as the number of input/output operands".into());
    }
    for (i, (a, v)) in args.iter().zip(ins.iter().chain(outs)).enumerate() {
        // Tensors and memrefs give their element type; other operands (scalars, vectors)
        // their own type, as upstream's getElementTypeOrSelf on non-buffer operands.
        let t = ir.value_type(*v);
        let want = if t.is_tensor() || t.is_memref() {
            t.element_type()
        } else {
            t
        };
        if ir.value_type(*a) != want {
            return Err(format!("expected type of bb argument #{i} ('{}') to match element or self type of the corresponding operand ('{}')", ir.value_type(*a), want));
        }
    }
    Ok(())
}

/// Checks shared by every structured op.
pub fn verify_structured(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let (ins, outs) = ins_outs(ir, op);
    if outs.is_empty() {
        return Err("expected at least one output operand".into());
    }
    let tensor_outs: Vec<Type> = outs
        .iter()
        .map(|v| ir.value_type(*v))
        .filter(|t| t.is_tensor())
        .collect();
    let res: Vec<Type> = ir.results(op).iter().map(|v| ir.value_type(*v)).collect();
    if tensor_outs.len() != res.len() {
        return Err(format!("expected the number of tensor results ({}) to be equal to the number of output tensors ({})", res.len(), tensor_outs.len()));
    }
    for (i, (a, b)) in tensor_outs.iter().zip(&res).enumerate() {
        if a != b {
            return Err(format!(
                "expected type of operand #{} ({a}) to match type of corresponding result ({b})",
                ins.len() + i
            ));
        }
    }
    verify_region_args(ir, op, &ins, &outs)?;
    if let Some(maps) = body::indexing_maps(ir, op) {
        let all: Vec<Value> = ins.iter().chain(&outs).copied().collect();
        if maps.len() != all.len() {
            return Err(format!("expected the number of indexing_map ({}) to be equal to the number of input/output operands ({})", maps.len(), all.len()));
        }
        let nd = maps.first().map(|m| m.num_dims).unwrap_or(0);
        if let Some(it) = ir.attr(op, "iterator_types").and_then(|a| a.as_array()) {
            if it.len() as u32 != nd {
                return Err(format!(
                    "expected indexing_map #0 to have {} dim(s) to match the number of loops",
                    it.len()
                ));
            }
        }
        let mut loop_size: Vec<Option<(i64, usize, usize)>> = vec![None; nd as usize];
        for (i, (m, v)) in maps.iter().zip(&all).enumerate() {
            if m.num_dims != nd {
                return Err(format!(
                    "expected indexing_map #{i} to have {nd} dim(s) to match the number of loops"
                ));
            }
            let t = ir.value_type(*v);
            // Only tensors and memrefs are indexed; a scalar or vector operand is one value.
            let rank = if t.is_tensor() || t.is_memref() {
                t.rank().unwrap_or(0)
            } else {
                0
            };
            if m.results.len() != rank {
                return Err(format!("expected operand rank ({rank}) to match the result rank of indexing_map #{i} ({})", m.results.len()));
            }
            let shape = t.shape().unwrap_or(&[]);
            for (j, e) in m.results.iter().enumerate() {
                if let ftuner_ir::AffineExpr::Dim(d) = e {
                    let s = shape[j];
                    if s == DYNAMIC {
                        continue;
                    }
                    match loop_size[*d as usize] {
                        None => loop_size[*d as usize] = Some((s, i, j)),
                        Some((prev, _, _)) if prev != s => {
                            return Err(format!("inferred input/output operand #{i} has shape's dimension #{j} to be {prev}, but found {s}"));
                        }
                        _ => {}
                    }
                }
            }
        }
        verify_windows(ir, &maps, &all, &loop_size)?;
    }
    Ok(())
}

pub fn verify_generic(ctx: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    if let Some(it) = ir.attr(op, "iterator_types").and_then(|a| a.as_array()) {
        for x in it {
            let ok = x.dialect_body().is_some_and(|(d, b)| {
                d == "linalg" && (b == "iterator_type<parallel>" || b == "iterator_type<reduction>")
            });
            if !ok {
                return Err(format!("unexpected iterator_type ({x})"));
            }
        }
    }
    verify_structured(ctx, ir, op)?;
    // The body must yield one value per output, of the output element types.
    let (_, outs) = ins_outs(ir, op);
    let r = ir.regions_of(op)[0];
    if let Some(b) = ir.region_entry(r) {
        if let Some(t) = ir.terminator(b) {
            if ir.name(t) == "linalg.yield" {
                let ys = ir.operands(t);
                if ys.len() != outs.len() {
                    return Err(format!("expected number of yield values ({}) to match the number of inits / outs operands of the enclosing LinalgOp ({})", ys.len(), outs.len()));
                }
                for (i, (y, o)) in ys.iter().zip(&outs).enumerate() {
                    let (yt, et) = (ir.value_type(*y), ir.value_type(*o).element_type());
                    if yt != et {
                        return Err(format!("'linalg.yield' type of yield operand {} ({yt}) doesn't match the element type of the enclosing linalg.generic op ({et})", i + 1));
                    }
                }
            }
        }
    }
    Ok(())
}

/// A `linalg.generic` with no inputs whose body yields its output is the identity: fold.
fn generic_identity(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let (ins, outs) = ins_outs(ir, op);
    let Some(maps) = body::indexing_maps(ir, op) else {
        return false;
    };
    if ins.len() != 1 || outs.len() != 1 || ir.results(op).len() != 1 {
        return false;
    }
    if !maps.iter().all(|m| m.is_identity()) {
        return false;
    }
    let r = ir.regions_of(op)[0];
    let Some(b) = ir.region_entry(r) else {
        return false;
    };
    let ops = ir.block_ops_vec(b);
    if ops.len() != 1
        || ir.name(ops[0]) != "linalg.yield"
        || ir.operands(ops[0]) != [ir.block_args(b)[0]]
    {
        return false;
    }
    let (it, rt) = (ir.value_type(ins[0]), ir.value_type(ir.result(op, 0)));
    if it != rt {
        return false;
    }
    let res = ir.result(op, 0);
    ir.replace_all_uses(res, ins[0]);
    ir.erase_op(op);
    true
}
pub const CANONICALIZE_GENERIC: &[ftuner_ir::dialect::CanonFn] = &[
    generic_identity,
    dead_results::generic_dead_result,
    broadcast_gather::generic_broadcast_gather,
    masked_softmax::all_neg_inf_rows,
];

/// A transpose with the identity permutation, or a broadcast adding no dimension, on
/// tensors of the same type is its input.
fn identity_data_movement(_: &Context, ir: &mut Ir, op: OpId) -> bool {
    let attr = if ir.name(op) == "linalg.transpose" {
        "permutation"
    } else {
        "dimensions"
    };
    let Some(v) = ir.attr(op, attr).and_then(|a| a.as_dense_i64s()) else {
        return false;
    };
    let identity = if attr == "permutation" {
        v.iter().enumerate().all(|(i, p)| *p == i as i64)
    } else {
        v.is_empty()
    };
    if !identity || ir.results(op).len() != 1 {
        return false;
    }
    let input = ir.operand(op, 0);
    let res = ir.result(op, 0);
    if ir.value_type(input) != ir.value_type(res) {
        return false;
    }
    ir.replace_all_uses(res, input);
    ir.erase_op(op);
    true
}
pub const CANONICALIZE_TRANSPOSE: &[ftuner_ir::dialect::CanonFn] = &[identity_data_movement];
pub const CANONICALIZE_BROADCAST: &[ftuner_ir::dialect::CanonFn] = &[identity_data_movement];

pub fn verify_index(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let dim = ir.attr(op, "dim").and_then(|a| a.as_i64()).unwrap_or(-1);
    let Some(parent) = ir.parent_op(op) else {
        return Err("expected parent op with LinalgOp interface".into());
    };
    if !ir.name(parent).starts_with("linalg.") {
        return Err("expected parent op with LinalgOp interface".into());
    }
    if let Some(maps) = body::indexing_maps(ir, parent) {
        let n = maps.first().map(|m| m.num_dims).unwrap_or(0) as i64;
        if dim < 0 || dim >= n {
            return Err(format!("expected dim ({dim}) to be lower than the number of loops ({n}) of the enclosing LinalgOp"));
        }
    }
    Ok(())
}

// ----- named ops -----------------------------------------------------------------------

/// `linalg.<named> [indexing_maps = [...]] [{attrs}] ins(...) outs(...) [-> types]`
/// (transpose/broadcast: `permutation = [..]` / `dimensions = [..]` after outs).
pub fn parse_named(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    if p.parse_optional_keyword("indexing_maps") {
        p.expect(Tok::Equal, "'='")?;
        let a = p.parse_attribute(None)?;
        st.add_attr("indexing_maps", a);
    }
    let mut attrs = vec![];
    p.parse_optional_attr_dict(&mut attrs)?;
    add_attrs(st, attrs);
    let ins = parse_operand_clause(p, "ins")?;
    let outs = parse_operand_clause(p, "outs")?;
    for kw in ["permutation", "dimensions"] {
        if p.parse_optional_keyword(kw) {
            p.expect(Tok::Equal, "'='")?;
            p.expect(Tok::LSquare, "'['")?;
            let mut v = vec![];
            if !p.consume_if(Tok::RSquare) {
                loop {
                    v.push(p.parse_i64()?);
                    if p.consume_if(Tok::RSquare) {
                        break;
                    }
                    p.expect(Tok::Comma, "','")?;
                }
            }
            st.add_attr(kw, Attribute::dense_i64_array(&v));
        }
    }
    let mut attrs = vec![];
    p.parse_optional_attr_dict(&mut attrs)?;
    add_attrs(st, attrs);
    parse_results(p, st)?;
    if matches!(st.name, "linalg.transpose" | "linalg.broadcast") && st.result_types.is_empty() {
        st.result_types.extend(
            outs.iter()
                .map(|v| p.ir.value_type(*v))
                .filter(|t| t.is_tensor()),
        );
    }
    if let Some(m) = body::default_contraction_maps(st.name) {
        if st.get_attr("indexing_maps").is_none() {
            st.add_attr(
                "indexing_maps",
                Attribute::array(m.into_iter().map(Attribute::affine_map).collect()),
            );
        }
    }
    let region = p.ir.new_region(None);
    let unsigned = body::casts_unsigned(st.get_attr("cast"));
    body::build_body(p.ir, st.name, region, &ins, &outs, st.loc, unsigned)
        .map_err(|m| p.err_here(format!("'{}' op {m}", st.name)))?;
    st.regions.push(region);
    if p.ctx
        .op_def(st.name)
        .is_some_and(|d| d.has(ftuner_ir::traits::ATTR_SIZED_OPERAND_SEGMENTS))
    {
        st.props.push((
            "operandSegmentSizes".into(),
            Attribute::dense_i32_array(&[ins.len() as i32, outs.len() as i32]),
        ));
    }
    st.operands.extend(ins);
    st.operands.extend(outs);
    Ok(())
}

/// Ops MLIR defines in OpDSL with fixed (attribute-dependent) indexing maps: upstream
/// caches their maps in `linalg.memoized_indexing_maps` when the verifier first asks for
/// them, and prints the cache. We add it after parsing so the IR we print is the IR
/// `mlir-opt` prints.
pub fn memoizes_maps(name: &str) -> bool {
    name.starts_with("linalg.conv_")
        || name.starts_with("linalg.depthwise_conv_")
        || name.starts_with("linalg.pooling_")
        || matches!(
            name,
            "linalg.dot"
                | "linalg.matvec"
                | "linalg.vecmat"
                | "linalg.batch_matvec"
                | "linalg.mmt4d"
                | "linalg.batch_mmt4d"
        )
}

/// Add `linalg.memoized_indexing_maps` to every op under `top` that upstream memoizes.
pub fn memoize_indexing_maps(ir: &mut Ir, top: OpId) {
    for op in ir.collect_pre(top) {
        let name = ir.name(op);
        if !memoizes_maps(name) || ir.attr(op, "linalg.memoized_indexing_maps").is_some() {
            continue;
        }
        if let Some(maps) = body::indexing_maps(ir, op) {
            let a = Attribute::array(maps.into_iter().map(Attribute::affine_map).collect());
            ir.set_attr(op, "linalg.memoized_indexing_maps", Some(a));
        }
    }
}

pub fn print_named(pr: &mut OpPrinter<'_>, op: OpId) {
    let ir = pr.ir;
    let name = ir.name(op);
    let mut elided = vec![
        "operandSegmentSizes",
        "permutation",
        "dimensions",
        "linalg.memoized_indexing_maps",
    ];
    let default_maps = body::default_contraction_maps(name)
        .map(|m| Attribute::array(m.into_iter().map(Attribute::affine_map).collect()));
    match (ir.attr(op, "indexing_maps"), default_maps) {
        (Some(a), Some(d)) if a == d => elided.push("indexing_maps"),
        (Some(a), _) => {
            pr.write(" indexing_maps = ");
            pr.print_attr(a);
            elided.push("indexing_maps");
        }
        _ => {}
    }
    pr.print_optional_attr_dict(op, &elided);
    let (ins, outs) = ins_outs(ir, op);
    print_clause(pr, "ins", &ins);
    print_clause(pr, "outs", &outs);
    for kw in ["permutation", "dimensions"] {
        if let Some(v) = ir.attr(op, kw).and_then(|a| a.as_dense_i64s()) {
            pr.write(&format!(
                " {kw} = [{}] ",
                v.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    if !matches!(name, "linalg.transpose" | "linalg.broadcast") {
        print_results(pr, op);
    }
}

pub fn asm_names_named(ir: &Ir, op: OpId, f: &mut dyn FnMut(Value, String)) {
    let n = match ir.name(op) {
        "linalg.transpose" => "transposed",
        "linalg.broadcast" => "broadcasted",
        _ => return,
    };
    if let Some(r) = ir.results(op).first() {
        f(*r, n.into());
    }
}

pub fn verify_named(ctx: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    verify_structured(ctx, ir, op)?;
    let (ins, outs) = ins_outs(ir, op);
    // The attributes the op's maps read (`strides`, `dilations`: one per spatial dim), as
    // upstream's ODS constraint: read as ones otherwise (found by the fuzzer).
    let attrs = crate::named_structured(ir.name(op)).map_or(vec![], |n| n.attributes());
    for (a, n) in attrs {
        if let Some(v) = ir.attr(op, a) {
            let ok = match v.kind() {
                ftuner_ir::AttrKind::DenseElements { ty, .. } => ty
                    .shape()
                    .is_some_and(|s| s == [n as i64] && ty.element_type() == Type::i64()),
                _ => false,
            };
            if !ok {
                return Err(format!(
                    "attribute '{a}' failed to satisfy constraint: 64-bit signless int elements attribute of shape [{n}]"
                ));
            }
        }
    }
    match ir.name(op) {
        "linalg.transpose" => {
            let perm = ir
                .attr(op, "permutation")
                .and_then(|a| a.as_dense_i64s())
                .ok_or("requires attribute 'permutation'")?;
            let (it, ot) = (ir.value_type(ins[0]), ir.value_type(outs[0]));
            let (is, os) = (it.shape().unwrap_or(&[]), ot.shape().unwrap_or(&[]));
            if perm.len() != is.len() || is.len() != os.len() {
                return Err("permutation is not valid".into());
            }
            let mut seen = vec![false; perm.len()];
            for p in &perm {
                if *p < 0 || *p as usize >= perm.len() || seen[*p as usize] {
                    return Err("permutation is not valid".into());
                }
                seen[*p as usize] = true;
            }
            for (i, p) in perm.iter().enumerate() {
                let (a, b) = (is[*p as usize], os[i]);
                if a != DYNAMIC && b != DYNAMIC && a != b {
                    return Err(format!(
                        "dim(result, {i}) = {b} doesn't match dim(input, permutation[{i}]) = {a}"
                    ));
                }
            }
        }
        "linalg.broadcast" => {
            let dims = ir
                .attr(op, "dimensions")
                .and_then(|a| a.as_dense_i64s())
                .ok_or("requires attribute 'dimensions'")?;
            let (ir_, or_) = (
                ir.value_type(ins[0]).rank().unwrap_or(0),
                ir.value_type(outs[0]).rank().unwrap_or(0),
            );
            if ir_ + dims.len() != or_ {
                return Err(format!("input rank plus added dimensions does not match init rank. input rank: {ir_}, dimensions size: {}, init rank: {or_}", dims.len()));
            }
        }
        _ => {}
    }
    Ok(())
}
