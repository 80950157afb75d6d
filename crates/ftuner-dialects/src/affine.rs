//! `affine`: `affine.apply` (syntax, verifier, folder) and its expansion into `arith`
//! ops ([`expand_apply`], what `lower-affine` runs), with upstream's semantics: floordiv
//! and ceildiv round toward -inf and +inf, `mod` is non-negative for a positive divisor.

use ftuner_ir::dialect::FoldResult;
use ftuner_ir::lexer::Tok;
use ftuner_ir::parser::{OperationState, PResult, Parser};
use ftuner_ir::Context;
use ftuner_ir::{
    intern_name, AffineExpr, AffineMap, Attribute, Ir, OpId, OpPrinter, OpSpec, Type, Value,
};

fn map_of(ir: &Ir, op: OpId) -> Option<AffineMap> {
    ir.attr(op, "map")?.as_affine_map().cloned()
}

/// `affine.apply #map(%d0, ...)[%s0, ...]`
pub fn parse_apply(p: &mut Parser<'_>, st: &mut OperationState) -> PResult<()> {
    let at = p.current_loc();
    let a = p.parse_attribute(None)?;
    let m = a
        .as_affine_map()
        .cloned()
        .ok_or_else(|| p.err_here("expected an affine map"))?;
    let dims = p.parse_paren_operand_list()?;
    let mut syms = vec![];
    if p.consume_if(Tok::LSquare) {
        syms = p.parse_operand_list()?;
        p.expect(Tok::RSquare, "']'")?;
    }
    if dims.len() != m.num_dims as usize || syms.len() != m.num_symbols as usize {
        return Err(p.err_here(format!(
            "the map takes {} dims and {} symbols, got {} and {}",
            m.num_dims,
            m.num_symbols,
            dims.len(),
            syms.len()
        )));
    }
    let _ = at;
    for o in dims.iter().chain(&syms) {
        let v = p.resolve_operand(o, Type::index())?;
        st.operands.push(v);
    }
    st.add_attr("map", a);
    let mut attrs = vec![];
    p.parse_optional_attr_dict(&mut attrs)?;
    for (k, v) in attrs {
        st.add_attr(&k, v);
    }
    st.result_types.push(Type::index());
    Ok(())
}

pub fn print_apply(pr: &mut OpPrinter<'_>, op: OpId) {
    let Some(a) = pr.ir.attr(op, "map") else {
        return;
    };
    let nd = a.as_affine_map().map_or(0, |m| m.num_dims as usize);
    let ops = pr.ir.operands(op).to_vec();
    pr.write(" ");
    pr.print_attr(a);
    pr.write("(");
    pr.print_operands(&ops[..nd.min(ops.len())]);
    pr.write(")");
    if ops.len() > nd {
        pr.write("[");
        pr.print_operands(&ops[nd..]);
        pr.write("]");
    }
    pr.print_optional_attr_dict(op, &["map"]);
}

pub fn verify_apply(_: &Context, ir: &Ir, op: OpId) -> Result<(), String> {
    let m = map_of(ir, op).ok_or("requires an affine map 'map'")?;
    if m.results.len() != 1 {
        return Err("mapping must produce one value".into());
    }
    let n = (m.num_dims + m.num_symbols) as usize;
    if ir.operands(op).len() != n {
        return Err("operand count and affine map dimension and symbol count must match".into());
    }
    Ok(())
}

pub fn fold_apply(ir: &mut Ir, op: OpId, consts: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    let m = map_of(ir, op)?;
    let vals: Option<Vec<i64>> = consts.iter().map(|c| c.and_then(|a| a.as_i64())).collect();
    let nd = m.num_dims as usize;
    let e = m.results.first()?;
    if let Some(v) = vals {
        let r = e.eval(&v[..nd], &v[nd..])?;
        return Some(vec![FoldResult::Attr(Attribute::index(r))]);
    }
    // A map that is one of its operands.
    let k = match e {
        AffineExpr::Dim(d) => *d as usize,
        AffineExpr::Symbol(s) => nd + *s as usize,
        _ => return None,
    };
    Some(vec![FoldResult::Value(*ir.operands(op).get(k)?)])
}

struct Emit<'a> {
    ir: &'a mut Ir,
    before: OpId,
}

impl Emit<'_> {
    fn op(&mut self, name: &str, operands: Vec<Value>, props: Vec<(&str, Attribute)>) -> Value {
        let mut s = OpSpec::new(intern_name(name), self.ir.loc(self.before))
            .operands(operands)
            .results([Type::index()]);
        for (k, v) in props {
            s = s.prop(k, v);
        }
        let o = self.ir.create_op(s);
        self.ir.insert_before(self.before, o);
        self.ir.result(o, 0)
    }
    fn c(&mut self, v: i64) -> Value {
        self.op(
            "arith.constant",
            vec![],
            vec![("value", Attribute::index(v))],
        )
    }
    fn bin(&mut self, name: &str, a: Value, b: Value) -> Value {
        self.op(name, vec![a, b], vec![])
    }
    fn expr(&mut self, e: &AffineExpr, dims: &[Value], syms: &[Value]) -> Option<Value> {
        Some(match e {
            AffineExpr::Dim(d) => *dims.get(*d as usize)?,
            AffineExpr::Symbol(s) => *syms.get(*s as usize)?,
            AffineExpr::Const(c) => self.c(*c),
            AffineExpr::Add(a, b)
            | AffineExpr::Mul(a, b)
            | AffineExpr::FloorDiv(a, b)
            | AffineExpr::CeilDiv(a, b) => {
                let name = match e {
                    AffineExpr::Add(..) => "arith.addi",
                    AffineExpr::Mul(..) => "arith.muli",
                    AffineExpr::FloorDiv(..) => "arith.floordivsi",
                    _ => "arith.ceildivsi",
                };
                let (x, y) = (self.expr(a, dims, syms)?, self.expr(b, dims, syms)?);
                self.bin(name, x, y)
            }
            AffineExpr::Mod(a, b) => {
                // r = a rem b; r < 0 ? r + b : r (upstream's lowering for b > 0).
                let (x, y) = (self.expr(a, dims, syms)?, self.expr(b, dims, syms)?);
                let r = self.bin("arith.remsi", x, y);
                let z = self.c(0);
                let neg = {
                    let s = OpSpec::new(intern_name("arith.cmpi"), self.ir.loc(self.before))
                        .operands([r, z])
                        .results([Type::i1()])
                        .prop("predicate", Attribute::i64(2));
                    let o = self.ir.create_op(s);
                    self.ir.insert_before(self.before, o);
                    self.ir.result(o, 0)
                };
                let plus = self.bin("arith.addi", r, y);
                let s = OpSpec::new(intern_name("arith.select"), self.ir.loc(self.before))
                    .operands([neg, plus, r])
                    .results([Type::index()]);
                let o = self.ir.create_op(s);
                self.ir.insert_before(self.before, o);
                self.ir.result(o, 0)
            }
        })
    }
}

/// Replace `affine.apply` `op` by the `arith` ops computing it; false if it is malformed.
pub fn expand_apply(ctx: &Context, ir: &mut Ir, op: OpId) -> bool {
    if ir.name(op) != "affine.apply" || verify_apply(ctx, ir, op).is_err() {
        return false;
    }
    let Some(m) = map_of(ir, op) else {
        return false;
    };
    let ops = ir.operands(op).to_vec();
    let nd = m.num_dims as usize;
    let mut e = Emit { ir, before: op };
    let Some(v) = e.expr(&m.results[0], &ops[..nd], &ops[nd..]) else {
        return false;
    };
    let r = ir.result(op, 0);
    ir.replace_all_uses(r, v);
    ir.erase_op(op);
    true
}
