//! `ukernel.patch`: readable syntax for tiles and patch plans, and its verifier.

use crate::linalg::ins_outs;
use ftuner_ir::lexer::Tok;
use ftuner_ir::parser::{OperationState, PResult, Parser};
use ftuner_ir::Context;
use ftuner_ir::{AttrKind, Attribute, Ir, OpId, OpPrinter, Scalar, Type};

/// `ukernel.patch` is destination-style, as the linalg ops it replaces: on buffers it
/// writes its output (and must not be erased as dead for having no results).
pub fn register_extra(reg: &mut ftuner_ir::Registry) {
    if let Some(def) = reg.op_mut("ukernel.patch") {
        def.memory_effects = Some(crate::linalg::destination_style_effects);
        def.destination_style = Some(crate::linalg::ins_outs);
    }
}

/// A plan attribute: `[array<main, static>, array<residue 0 tiles>, array<residue 1>, ...]`
/// (`static` is -1 for a dynamic dimension).
pub fn plan_attr(main: i64, static_size: Option<i64>, residues: &[Vec<i64>]) -> Attribute {
    let mut v = vec![Attribute::dense_i64_array(&[
        main,
        static_size.unwrap_or(-1),
    ])];
    v.extend(residues.iter().map(|r| Attribute::dense_i64_array(r)));
    Attribute::array(v)
}

/// (main, static size, residue tiles) of a plan attribute.
pub fn read_plan(a: Attribute) -> Option<(i64, Option<i64>, Vec<Vec<i64>>)> {
    let arr = a.as_array()?;
    let head = arr.first()?.as_dense_i64s()?;
    let (main, st) = (*head.first()?, *head.get(1)?);
    let res: Option<Vec<Vec<i64>>> = arr[1..].iter().map(|x| x.as_dense_i64s()).collect();
    Some((main, (st >= 0).then_some(st), res?))
}

/// The largest main tile the custom syntax of a plan takes (tiles are register or thread
/// block tiles, far smaller).
pub const MAX_PLAN_TILE: i64 = 1 << 16;

fn parse_plan(p: &mut Parser<'_>, kw: &str) -> PResult<Attribute> {
    p.parse_keyword(kw)?;
    p.expect(Tok::LParen, "'('")?;
    let main_at = p.current_offset();
    let main = p.parse_i64()?;
    let st = if p.parse_optional_keyword("static") {
        Some(p.parse_i64()?)
    } else {
        None
    };
    p.expect(Tok::Pipe, "'|'")?;
    // One residue per remainder: a main tile in the billions allocated them all.
    if main > MAX_PLAN_TILE {
        return Err(p.err_at(
            main_at,
            format!("main tile {main} of '{kw}' is out of range (at most {MAX_PLAN_TILE})"),
        ));
    }
    let mut residues: Vec<Vec<i64>> = vec![vec![]; main.max(0) as usize];
    while !p.consume_if(Tok::RParen) {
        let at = p.current_offset();
        let r = p.parse_i64()?;
        p.expect(Tok::Colon, "':'")?;
        let mut tiles = vec![];
        if !p.consume_if(Tok::Minus) {
            loop {
                tiles.push(p.parse_i64()?);
                if !p.consume_if(Tok::Plus) {
                    break;
                }
            }
        }
        let slot = residues
            .get_mut(usize::try_from(r).unwrap_or(usize::MAX))
            .ok_or_else(|| {
                p.err_at(at, format!("residue {r} out of range for main tile {main}"))
            })?;
        *slot = tiles;
    }
    Ok(plan_attr(main, st, &residues))
}

fn print_plan(pr: &mut OpPrinter<'_>, kw: &str, a: Attribute) {
    let Some((main, st, res)) = read_plan(a) else {
        pr.write(&format!(" {kw}("));
        pr.print_attr(a);
        pr.write(")");
        return;
    };
    pr.write(&format!(" {kw}({main}"));
    if let Some(s) = st {
        pr.write(&format!(" static {s}"));
    }
    pr.write(" |");
    for (r, tiles) in res.iter().enumerate() {
        if let Some(s) = st {
            if r as i64 != s % main.max(1) {
                continue;
            }
        }
        let t = if tiles.is_empty() {
            "-".to_string()
        } else {
            tiles
                .iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join("+")
        };
        pr.write(&format!(" {r}:{t}"));
    }
    pr.write(")");
}

fn parse_clause(p: &mut Parser<'_>, kw: &str) -> PResult<Vec<ftuner_ir::Value>> {
    if !p.parse_optional_keyword(kw) {
        return Ok(vec![]);
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
    p.resolve_operands(&ops, &tys, at)
}

pub fn parse_patch(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    st.add_attr("kind", Attribute::string(p.parse_string()?));
    p.parse_keyword("target")?;
    p.expect(Tok::LParen, "'('")?;
    st.add_attr("target", Attribute::string(p.parse_string()?));
    p.expect(Tok::RParen, "')'")?;
    p.parse_keyword("tiles")?;
    p.expect(Tok::LSquare, "'['")?;
    let mut tiles = vec![];
    if !p.consume_if(Tok::RSquare) {
        loop {
            // `14x32` lexes as an integer followed by the identifier `x32`.
            let m = p.parse_i64()?;
            let at = p.current_offset();
            let rest = p
                .parse_optional_any_keyword()
                .ok_or_else(|| p.err_here("expected 'x' in tile size"))?;
            let n = rest
                .strip_prefix('x')
                .and_then(|s| s.parse::<i64>().ok())
                .ok_or_else(|| p.err_at(at, "expected a tile 'MxN'"))?;
            tiles.push(m);
            tiles.push(n);
            if p.consume_if(Tok::RSquare) {
                break;
            }
            p.expect(Tok::Comma, "','")?;
        }
    }
    st.add_attr("tiles", Attribute::dense_i64_array(&tiles));
    p.parse_keyword("cache")?;
    p.expect(Tok::LParen, "'('")?;
    for (i, k) in ["kc", "mc", "nc"].iter().enumerate() {
        if i > 0 {
            p.expect(Tok::Comma, "','")?;
        }
        p.parse_keyword(k)?;
        p.expect(Tok::Equal, "'='")?;
        st.add_attr(k, Attribute::i64(p.parse_i64()?));
    }
    p.expect(Tok::RParen, "')'")?;
    let mp = parse_plan(p, "m_plan")?;
    st.add_attr("m_plan", mp);
    let np = parse_plan(p, "n_plan")?;
    st.add_attr("n_plan", np);
    p.parse_keyword("maps")?;
    st.add_attr("indexing_maps", p.parse_attribute(None)?);
    p.parse_keyword("iterators")?;
    let it = p.parse_attribute(None)?;
    let its: Vec<Attribute> = it
        .as_array()
        .ok_or_else(|| p.err_here("expected an array of iterator types"))?
        .iter()
        .map(|x| match x.kind() {
            AttrKind::String { value, .. } => {
                Attribute::dialect("linalg", &format!("iterator_type<{value}>"))
            }
            _ => *x,
        })
        .collect();
    st.add_attr("iterator_types", Attribute::array(its));
    let ins = parse_clause(p, "ins")?;
    let outs = parse_clause(p, "outs")?;
    if p.parse_optional_keyword("attrs") {
        p.expect(Tok::Equal, "'='")?;
        let mut attrs = vec![];
        p.parse_optional_attr_dict(&mut attrs)?;
        for (k, v) in attrs {
            st.add_attr(&k, v);
        }
    }
    st.regions.push(p.parse_region()?);
    // `epilogue(ins(%x : t, ...) maps [#m, ...]) { region }`
    let mut epi = vec![];
    if p.parse_optional_keyword("epilogue") {
        p.expect(Tok::LParen, "'('")?;
        epi = parse_clause(p, "ins")?;
        p.parse_keyword("maps")?;
        st.add_attr("epilogue_maps", p.parse_attribute(None)?);
        p.expect(Tok::RParen, "')'")?;
        st.regions.push(p.parse_region()?);
    }
    if p.consume_if(Tok::Arrow) {
        st.result_types.extend(p.parse_type_list_no_parens()?);
    }
    st.props.push((
        "operandSegmentSizes".into(),
        Attribute::dense_i32_array(&[ins.len() as i32, outs.len() as i32, epi.len() as i32]),
    ));
    st.operands.extend(ins);
    st.operands.extend(outs);
    st.operands.extend(epi);
    Ok(())
}

/// The operands of a patch's fused epilogue (after its inputs and outputs).
pub fn epilogue_inputs(ir: &Ir, op: OpId) -> Vec<ftuner_ir::Value> {
    crate::ops::ukernel::PatchOp(op).epilogue_inputs(ir)
}

/// The maps of a patch's epilogue operands (over the patch's loop dims).
pub fn epilogue_maps(ir: &Ir, op: OpId) -> Vec<ftuner_ir::AffineMap> {
    ir.attr(op, "epilogue_maps")
        .and_then(|a| a.as_array())
        .unwrap_or(&[])
        .iter()
        .filter_map(|a| a.as_affine_map().cloned())
        .collect()
}

/// The epilogue region's entry block, when the patch has one.
pub fn epilogue_block(ir: &Ir, op: OpId) -> Option<ftuner_ir::BlockId> {
    ir.regions_of(op).get(1).and_then(|r| ir.region_entry(*r))
}

pub fn print_patch(pr: &mut OpPrinter<'_>, op: OpId) {
    let ir = pr.ir;
    let s = |k: &str| {
        ir.attr(op, k)
            .and_then(|a| a.as_str())
            .unwrap_or("")
            .to_string()
    };
    pr.write(" ");
    pr.print_escaped(&s("kind"));
    pr.write(" target(");
    pr.print_escaped(&s("target"));
    pr.write(") tiles [");
    let tiles = ir
        .attr(op, "tiles")
        .and_then(|a| a.as_dense_i64s())
        .unwrap_or_default();
    let parts: Vec<String> = tiles
        .chunks(2)
        .map(|c| format!("{}x{}", c[0], c.get(1).copied().unwrap_or(0)))
        .collect();
    pr.write(&parts.join(", "));
    pr.write("] cache(");
    let i = |k: &str| ir.attr(op, k).and_then(|a| a.as_i64()).unwrap_or(0);
    pr.write(&format!(
        "kc = {}, mc = {}, nc = {})",
        i("kc"),
        i("mc"),
        i("nc")
    ));
    if let Some(a) = ir.attr(op, "m_plan") {
        print_plan(pr, "m_plan", a);
    }
    if let Some(a) = ir.attr(op, "n_plan") {
        print_plan(pr, "n_plan", a);
    }
    pr.write(" maps ");
    if let Some(a) = ir.attr(op, "indexing_maps") {
        pr.print_attr(a);
    }
    pr.write(" iterators ");
    let its: Vec<Attribute> = ir
        .attr(op, "iterator_types")
        .and_then(|a| a.as_array())
        .unwrap_or(&[])
        .iter()
        .map(|x| match x.dialect_body() {
            Some((_, b)) => {
                Attribute::string(b.trim_start_matches("iterator_type<").trim_end_matches('>'))
            }
            None => *x,
        })
        .collect();
    pr.print_attr(Attribute::array(its));
    let (ins, outs) = ins_outs(ir, op);
    for (kw, vals) in [("ins", ins), ("outs", outs)] {
        if !vals.is_empty() {
            pr.write(&format!(" {kw}("));
            pr.print_operands(&vals);
            pr.write(" : ");
            pr.print_types_of(&vals);
            pr.write(")");
        }
    }
    let elided = [
        "kind",
        "target",
        "tiles",
        "kc",
        "mc",
        "nc",
        "m_plan",
        "n_plan",
        "indexing_maps",
        "iterator_types",
        "operandSegmentSizes",
        "epilogue_maps",
    ];
    let before = pr.out.len();
    pr.print_optional_attr_dict(op, &elided);
    if pr.out.len() > before {
        let rest = pr.out.split_off(before);
        pr.write(" attrs = ");
        pr.write(rest.trim_start());
    }
    pr.write(" ");
    let r = ir.regions_of(op)[0];
    pr.print_region(r, true, true);
    if let Some(er) = ir.regions_of(op).get(1).copied() {
        let epi = epilogue_inputs(ir, op);
        pr.write(" epilogue(");
        if !epi.is_empty() {
            pr.write("ins(");
            pr.print_operands(&epi);
            pr.write(" : ");
            pr.print_types_of(&epi);
            pr.write(") ");
        }
        pr.write("maps ");
        pr.print_attr(
            ir.attr(op, "epilogue_maps")
                .unwrap_or_else(|| Attribute::array(vec![])),
        );
        pr.write(") ");
        pr.print_region(er, true, true);
    }
    let rs: Vec<Type> = ir.results(op).iter().map(|v| ir.value_type(*v)).collect();
    if !rs.is_empty() {
        pr.write(" -> ");
        pr.print_types(&rs);
    }
}

pub fn verify_patch(ctx: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let tiles = ir
        .attr(op, "tiles")
        .and_then(|a| a.as_dense_i64s())
        .ok_or("requires 'tiles'")?;
    if tiles.is_empty() || tiles.len() % 2 != 0 || tiles.iter().any(|t| *t <= 0) {
        return Err("expects 'tiles' to hold positive (m, n) pairs".into());
    }
    let ms: Vec<i64> = tiles.iter().step_by(2).copied().collect();
    let ns: Vec<i64> = tiles.iter().skip(1).step_by(2).copied().collect();
    for (k, sizes) in [("m_plan", &ms), ("n_plan", &ns)] {
        let (main, _, res) = ir
            .attr(op, k)
            .and_then(read_plan)
            .ok_or(format!("requires a well-formed '{k}'"))?;
        if !sizes.contains(&main) {
            return Err(format!("'{k}' main tile {main} is not a tile size"));
        }
        if res.len() != main as usize {
            return Err(format!(
                "'{k}' must list {main} residues, found {}",
                res.len()
            ));
        }
        for (r, v) in res.iter().enumerate() {
            if let Some(t) = v.iter().find(|t| !sizes.contains(t)) {
                return Err(format!(
                    "'{k}' residue {r} uses tile {t}, which is not a tile size"
                ));
            }
        }
    }
    // The structured part (maps against operand ranks, results against outputs).
    crate::linalg::verify_structured(ctx, ir, op)?;
    verify_epilogue(ctx, ir, op)?;
    let _ = Scalar::Int(0);
    Ok(())
}

/// The fused epilogue: one map per operand, over the patch's loop dims but no reduction
/// dim, ranks matching; a region taking (output element, one element per operand) and
/// yielding one output element.
fn verify_epilogue(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let epi = epilogue_inputs(ir, op);
    let maps = epilogue_maps(ir, op);
    let regions = ir.regions_of(op).len();
    if regions > 2 {
        return Err("expects a body and at most an epilogue region".into());
    }
    if regions == 1 {
        if !epi.is_empty() || ir.attr(op, "epilogue_maps").is_some() {
            return Err("has epilogue operands or maps but no epilogue region".into());
        }
        return Ok(());
    }
    if maps.len() != epi.len() {
        return Err(format!(
            "expects one epilogue map per epilogue operand ({}), found {}",
            epi.len(),
            maps.len()
        ));
    }
    let body = crate::linalg::body::indexing_maps(ir, op).unwrap_or_default();
    let nd = body.first().map(|m| m.num_dims).unwrap_or(0);
    let its = ir
        .attr(op, "iterator_types")
        .and_then(|a| a.as_array())
        .unwrap_or(&[])
        .to_vec();
    for (i, (m, v)) in maps.iter().zip(&epi).enumerate() {
        if m.num_dims != nd {
            return Err(format!(
                "epilogue map #{i} has {} dims, the patch {nd}",
                m.num_dims
            ));
        }
        let rank = ir.value_type(*v).shape().map(|s| s.len()).unwrap_or(0);
        if m.results.len() != rank {
            return Err(format!(
                "epilogue map #{i} has {} results for an operand of rank {rank}",
                m.results.len()
            ));
        }
        for d in 0..nd {
            let red = its
                .get(d as usize)
                .and_then(|a| a.dialect_body().map(|(_, b)| b.contains("reduction")))
                .unwrap_or(false);
            if red && m.results.iter().any(|e| e.uses_dim(d)) {
                return Err(format!("epilogue map #{i} uses reduction dim d{d}"));
            }
        }
    }
    let blk = epilogue_block(ir, op).ok_or("the epilogue region has no block")?;
    let (_, outs) = ins_outs(ir, op);
    let out_elem = outs
        .first()
        .map(|v| ir.value_type(*v).element_type())
        .ok_or("expects an output")?;
    let args = ir.block_args(blk);
    if args.len() != 1 + epi.len() {
        return Err(format!(
            "the epilogue takes {} arguments, expected {} (the output element, then one per operand)",
            args.len(),
            1 + epi.len()
        ));
    }
    if ir.value_type(args[0]) != out_elem {
        return Err("the epilogue's first argument must have the output element type".into());
    }
    for (i, (a, v)) in args[1..].iter().zip(&epi).enumerate() {
        if ir.value_type(*a) != ir.value_type(*v).element_type() {
            return Err(format!(
                "epilogue argument #{} must have the element type of its operand",
                i + 1
            ));
        }
    }
    match ir.terminator(blk) {
        Some(t) if ir.name(t) == "ukernel.yield" && ir.operands(t).len() == 1 => {
            if ir.value_type(ir.operands(t)[0]) != out_elem {
                return Err("the epilogue must yield an output element".into());
            }
        }
        _ => return Err("the epilogue must end with one 'ukernel.yield'".into()),
    }
    Ok(())
}
