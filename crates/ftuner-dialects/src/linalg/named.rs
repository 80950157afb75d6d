//! What a named structured op computes, as data (MLIR's OpDSL): each op's spec declares
//! its indexing maps and the scalar body of one output element (`structured` in
//! `ir-specs/linalg.toml`, read by `ftuner-odsgen`, which checks it and generates a
//! [`Named`] constant per op, found with [`crate::named_structured`]). This file turns
//! that data into IR: the maps of an op (its `strides`/`dilations` read where the maps
//! use them) and the body region.

use crate::ops::{arith, linalg, math};
use ftuner_ir::{AffineExpr, AffineMap, Attribute, Ir, OpId, Type, Value};

/// A named op's definition.
#[derive(Debug)]
pub struct Named {
    pub maps: Maps,
    /// The value of one output element.
    pub body: Expr,
}

/// How a named op's operands are indexed.
#[derive(Debug)]
pub enum Maps {
    /// One map per operand (inputs, then the output) over `dims` loops; each result a sum
    /// of [`Term`]s.
    Affine {
        dims: u32,
        maps: &'static [&'static [&'static [Term]]],
    },
    /// Rank polymorphic: every operand by the identity of the output's rank, one of rank 0
    /// (a scalar, a 0-d tensor) by no dims (`linalg.add`, `fill`, `copy`).
    Elementwise,
    /// From the op's attributes, by its dialect's code (`transpose`, `broadcast`).
    Hook,
}

/// A loop dim, times 1 or an element of an integer-array attribute (`strides[0]`).
#[derive(Debug)]
pub struct Term {
    pub dim: u32,
    pub coef: Option<(&'static str, usize)>,
}

/// A body expression.
#[derive(Debug)]
pub enum Expr {
    /// Block argument `i` (input `i`).
    In(usize),
    /// The output's current element.
    Out,
    /// Converted to the output's element type (signed, or as the op's `cast` says).
    Cast(&'static Expr),
    Unary(Unary, &'static Expr),
    Binary(Binary, &'static Expr, &'static Expr),
}

#[derive(Clone, Copy, Debug)]
pub enum Unary {
    Exp,
    Log,
    Abs,
    Ceil,
    Floor,
    Negf,
    Sqrt,
    Rsqrt,
    Tanh,
    Erf,
    /// `1 / x`.
    Reciprocal,
    /// `x * x`.
    Square,
}

#[derive(Clone, Copy, Debug)]
pub enum Binary {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
    Pow,
}

impl Binary {
    /// The op on floats and on integers.
    fn ops(self) -> (&'static str, &'static str) {
        match self {
            Binary::Add => (arith::AddfOp::NAME, arith::AddiOp::NAME),
            Binary::Sub => (arith::SubfOp::NAME, arith::SubiOp::NAME),
            Binary::Mul => (arith::MulfOp::NAME, arith::MuliOp::NAME),
            Binary::Div => (arith::DivfOp::NAME, arith::DivsiOp::NAME),
            Binary::Max => (arith::MaximumfOp::NAME, arith::MaxsiOp::NAME),
            Binary::Min => (arith::MinimumfOp::NAME, arith::MinsiOp::NAME),
            Binary::Pow => (math::PowfOp::NAME, math::IpowiOp::NAME),
        }
    }
}

impl Named {
    /// The number of inputs: one per map but the output's, else what the body reads.
    pub fn num_inputs(&self) -> usize {
        if let Maps::Affine { maps, .. } = self.maps {
            return maps.len().saturating_sub(1);
        }
        fn max_in(e: &Expr) -> usize {
            match e {
                Expr::In(i) => i + 1,
                Expr::Out => 0,
                Expr::Cast(a) | Expr::Unary(_, a) => max_in(a),
                Expr::Binary(_, a, b) => max_in(a).max(max_in(b)),
            }
        }
        max_in(&self.body)
    }

    /// The integer-array attributes the maps read (`strides`, `dilations`), each with its
    /// length: one element per spatial dim the maps index.
    pub fn attributes(&self) -> Vec<(&'static str, usize)> {
        let Maps::Affine { maps, .. } = self.maps else {
            return vec![];
        };
        let mut out: Vec<(&'static str, usize)> = vec![];
        for (a, k) in maps
            .iter()
            .flat_map(|m| m.iter())
            .flat_map(|r| r.iter())
            .filter_map(|t| t.coef)
        {
            match out.iter_mut().find(|(x, _)| *x == a) {
                Some((_, n)) => *n = (*n).max(k + 1),
                None => out.push((a, k + 1)),
            }
        }
        out
    }

    /// The maps the definition fixes for `op` (its attributes read where they appear);
    /// `None` for [`Maps::Hook`] or an op without an output.
    pub fn maps(&self, ir: &Ir, op: OpId) -> Option<Vec<AffineMap>> {
        match self.maps {
            Maps::Affine { dims, maps } => {
                // `ints` gives ones for an absent or malformed attribute (the verifier
                // refuses a malformed one).
                let attrs: Vec<(&str, Vec<i64>)> = self
                    .attributes()
                    .into_iter()
                    .map(|(a, n)| (a, super::body::ints(ir, op, a, n)))
                    .collect();
                Some(affine_maps(dims, maps, |a, i| {
                    attrs.iter().find(|(x, _)| *x == a).map_or(1, |(_, v)| v[i])
                }))
            }
            Maps::Elementwise => {
                let (ins, outs) = super::ins_outs(ir, op);
                let r = ir.value_type(*outs.first()?).rank().unwrap_or(0) as u32;
                // As upstream: an operand of rank 0 (a scalar, a 0-d tensor) by no dims.
                let map = |v: &Value| match ir.value_type(*v).rank() {
                    None | Some(0) => AffineMap::new(r, 0, vec![]),
                    Some(_) => AffineMap::identity(r),
                };
                Some(ins.iter().chain(outs.iter()).map(map).collect())
            }
            Maps::Hook => None,
        }
    }

    /// The maps when they read no attribute (a contraction's), without an op.
    pub fn static_maps(&self) -> Option<Vec<AffineMap>> {
        match self.maps {
            Maps::Affine { dims, maps } if self.attributes().is_empty() => {
                Some(affine_maps(dims, maps, |_, _| 1))
            }
            _ => None,
        }
    }
}

/// [`Maps::Affine`]'s maps, `coef(attr, i)` the value of a term's `attr[i]`.
fn affine_maps(
    dims: u32,
    maps: &[&[&[Term]]],
    coef: impl Fn(&str, usize) -> i64,
) -> Vec<AffineMap> {
    let term = |t: &Term| {
        let d = AffineExpr::Dim(t.dim);
        match t.coef {
            None => d,
            Some((a, i)) => d * AffineExpr::Const(coef(a, i)),
        }
    };
    let sum = |ts: &[Term]| {
        let mut it = ts.iter();
        let first = it.next().map_or(AffineExpr::Const(0), term);
        it.fold(first, |acc, t| acc + term(t))
    };
    maps.iter()
        .map(|results| AffineMap::new(dims, 0, results.iter().map(|r| sum(r)).collect()))
        .collect()
}

/// The body's builder: ftuner-ir's `OpBuilder` at the end of the body block, how integers
/// are read where they are converted, and the conversions made (one per input).
pub(super) struct BodyBuilder<'a> {
    pub(super) ob: ftuner_ir::OpBuilder<'a>,
    /// `cast_unsigned`: integers are read as unsigned where they are converted.
    pub(super) unsigned: bool,
    pub(super) args: Vec<Value>,
    pub(super) out_ty: Type,
    pub(super) casts: Vec<Option<Value>>,
}

impl BodyBuilder<'_> {
    /// Convert `v` to `to` as MLIR's region builders do: `cast_signed` (the default) or,
    /// with `#linalg.type_fn<cast_unsigned>`, integers read as unsigned.
    fn cast(&mut self, v: Value, to: Type) -> Value {
        let from = self.ob.ir.value_type(v);
        if from == to {
            return v;
        }
        let u = self.unsigned;
        let name = match (from.is_float(), to.is_float()) {
            (true, true) if from.bit_width() < to.bit_width() => arith::ExtfOp::NAME,
            (true, true) => arith::TruncfOp::NAME,
            (false, true) if u => arith::UitofpOp::NAME,
            (false, true) => arith::SitofpOp::NAME,
            (true, false) if u => arith::FptouiOp::NAME,
            (true, false) => arith::FptosiOp::NAME,
            (false, false) if from.is_index() || to.is_index() => {
                if u {
                    arith::IndexCastuiOp::NAME
                } else {
                    arith::IndexCastOp::NAME
                }
            }
            (false, false) if from.bit_width() < to.bit_width() => {
                if u {
                    arith::ExtuiOp::NAME
                } else {
                    arith::ExtsiOp::NAME
                }
            }
            (false, false) => arith::TrunciOp::NAME,
        };
        self.ob.value(name, vec![v], to, &[])
    }

    fn binary(&mut self, (fop, iop): (&str, &str), a: Value, b: Value) -> Value {
        let t = self.ob.ir.value_type(a);
        if t.is_float() {
            self.ob
                .value(fop, vec![a, b], t, &[("fastmath", fastmath())])
        } else if [
            arith::AddiOp::NAME,
            arith::SubiOp::NAME,
            arith::MuliOp::NAME,
        ]
        .contains(&iop)
        {
            let ov = Attribute::dialect("arith", "overflow<none>");
            self.ob.value(iop, vec![a, b], t, &[("overflowFlags", ov)])
        } else {
            self.ob.value(iop, vec![a, b], t, &[])
        }
    }

    fn unary(&mut self, f: Unary, x: Value) -> Value {
        let t = self.ob.ir.value_type(x);
        let name = match f {
            Unary::Exp => math::ExpOp::NAME,
            Unary::Log => math::LogOp::NAME,
            Unary::Abs => math::AbsfOp::NAME,
            Unary::Ceil => math::CeilOp::NAME,
            Unary::Floor => math::FloorOp::NAME,
            Unary::Negf => arith::NegfOp::NAME,
            Unary::Sqrt => math::SqrtOp::NAME,
            Unary::Rsqrt => math::RsqrtOp::NAME,
            Unary::Tanh => math::TanhOp::NAME,
            Unary::Erf => math::ErfOp::NAME,
            Unary::Square => return self.binary(Binary::Mul.ops(), x, x),
            Unary::Reciprocal => {
                let one = Attribute::float(1.0, t);
                let c = self
                    .ob
                    .value(arith::ConstantOp::NAME, vec![], t, &[("value", one)]);
                return self.binary(Binary::Div.ops(), c, x);
            }
        };
        self.ob.value(name, vec![x], t, &[("fastmath", fastmath())])
    }

    /// The value of `e`, its ops appended in evaluation order (operands first, left to
    /// right; each input converted once).
    pub(super) fn eval(&mut self, e: &Expr) -> Value {
        match e {
            Expr::In(i) => self.args[*i],
            Expr::Out => *self.args.last().expect("a body has its output's argument"),
            Expr::Cast(a) => {
                if let Expr::In(i) = a {
                    if let Some(v) = self.casts[*i] {
                        return v;
                    }
                    let v = self.cast(self.args[*i], self.out_ty);
                    self.casts[*i] = Some(v);
                    return v;
                }
                let v = self.eval(a);
                self.cast(v, self.out_ty)
            }
            Expr::Unary(f, a) => {
                let x = self.eval(a);
                self.unary(*f, x)
            }
            Expr::Binary(f, a, b) => {
                let x = self.eval(a);
                let y = self.eval(b);
                self.binary(f.ops(), x, y)
            }
        }
    }

    pub(super) fn yield_(&mut self, v: Value) {
        self.ob.create(linalg::YieldOp::NAME, vec![v], vec![], &[]);
    }
}

fn fastmath() -> Attribute {
    Attribute::dialect("arith", "fastmath<none>")
}
