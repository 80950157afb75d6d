//! What each named structured op computes: its body region (MLIR's region builders) and
//! its indexing maps.

use ftuner_ir::{AffineExpr, AffineMap, AttrKind, Attribute, Ir, OpId, RegionId, Type, Value};
#[allow(unused_imports)]
use std::ops::{Add, Mul, Neg, Sub};

/// Default indexing maps of contraction ops (matmul-like), if `name` is one.
pub fn default_contraction_maps(name: &str) -> Option<Vec<AffineMap>> {
    let m = |n: u32, d: &[u32]| AffineMap::projection(n, d);
    Some(match name {
        "linalg.matmul" => vec![m(3, &[0, 2]), m(3, &[2, 1]), m(3, &[0, 1])],
        "linalg.batch_matmul" => vec![m(4, &[0, 1, 3]), m(4, &[0, 3, 2]), m(4, &[0, 1, 2])],
        "linalg.batch_reduce_matmul" => vec![m(4, &[0, 1, 3]), m(4, &[0, 3, 2]), m(4, &[1, 2])],
        _ => return None,
    })
}

/// The 2-D convolutions and poolings we model: `strides` and `dilations` of 2 integers.
pub const WINDOW_OPS: [&str; 9] = [
    "linalg.conv_2d_nchw_fchw",
    "linalg.conv_2d_nhwc_hwcf",
    "linalg.pooling_nhwc_max",
    "linalg.pooling_nhwc_min",
    "linalg.pooling_nhwc_sum",
    "linalg.depthwise_conv_2d_nhwc_hwc",
    "linalg.pooling_nchw_max",
    "linalg.pooling_nchw_sum",
    "linalg.depthwise_conv_2d_nchw_chw",
];

/// An op's `n` integers `name` (`strides`, `dilations`: a dense array or a dense vector,
/// splat or not); `n` ones when absent or malformed.
pub fn ints(ir: &Ir, op: OpId, name: &str, n: usize) -> Vec<i64> {
    let a = ir.attr(op, name);
    let v: Option<Vec<i64>> = a.and_then(|a| match a.kind() {
        ftuner_ir::AttrKind::DenseElements {
            splat, elements, ..
        } => {
            let vals: Option<Vec<i64>> = elements
                .iter()
                .map(|e| {
                    if let ftuner_ir::Scalar::Int(v) = e {
                        i64::try_from(*v).ok()
                    } else {
                        None
                    }
                })
                .collect();
            vals.map(|v| if *splat { vec![v[0]; n] } else { v })
        }
        _ => a.as_dense_i64s(),
    });
    v.filter(|v| v.len() == n).unwrap_or(vec![1; n])
}

/// Indexing maps of a structured op (attribute for `generic` and contractions, computed
/// for the named ops we model). `None` for ops whose maps we do not model.
pub fn indexing_maps(ir: &Ir, op: OpId) -> Option<Vec<AffineMap>> {
    let name = ir.name(op);
    if let Some(a) = ir
        .attr(op, "indexing_maps")
        .or_else(|| ir.attr(op, "linalg.memoized_indexing_maps"))
    {
        return a
            .as_array()?
            .iter()
            .map(|m| m.as_affine_map().cloned())
            .collect();
    }
    if let Some(m) = default_contraction_maps(name) {
        return Some(m);
    }
    let (ins, outs) = super::ins_outs(ir, op);
    let rank = |v: Value| ir.value_type(v).rank().unwrap_or(0) as u32;
    match name {
        "linalg.fill" => {
            let r = rank(*outs.first()?);
            Some(vec![AffineMap::new(r, 0, vec![]), AffineMap::identity(r)])
        }
        "linalg.copy" => {
            let r = rank(*outs.first()?);
            Some(vec![AffineMap::identity(r), AffineMap::identity(r)])
        }
        "linalg.transpose" => {
            let perm = ir.attr(op, "permutation")?.as_dense_i64s()?;
            let r = perm.len() as u32;
            // out[d0..] = in[perm^-1]: the input is indexed by the inverse permutation.
            let mut inv = vec![0u32; perm.len()];
            for (i, p) in perm.iter().enumerate() {
                *inv.get_mut(usize::try_from(*p).ok()?)? = i as u32;
            }
            Some(vec![AffineMap::projection(r, &inv), AffineMap::identity(r)])
        }
        "linalg.broadcast" => {
            let dims = ir.attr(op, "dimensions")?.as_dense_i64s()?;
            let r = rank(*outs.first()?);
            let kept: Vec<u32> = (0..r).filter(|x| !dims.contains(&(*x as i64))).collect();
            Some(vec![
                AffineMap::projection(r, &kept),
                AffineMap::identity(r),
            ])
        }
        "linalg.matvec" => Some(vec![
            AffineMap::projection(2, &[0, 1]),
            AffineMap::projection(2, &[1]),
            AffineMap::projection(2, &[0]),
        ]),
        "linalg.vecmat" => Some(vec![
            AffineMap::projection(2, &[1]),
            AffineMap::projection(2, &[1, 0]),
            AffineMap::projection(2, &[0]),
        ]),
        "linalg.batch_matvec" => Some(vec![
            AffineMap::projection(3, &[0, 1, 2]),
            AffineMap::projection(3, &[0, 2]),
            AffineMap::projection(3, &[0, 1]),
        ]),
        "linalg.dot" => Some(vec![
            AffineMap::projection(1, &[0]),
            AffineMap::projection(1, &[0]),
            AffineMap::new(1, 0, vec![]),
        ]),
        n if WINDOW_OPS.contains(&n) => Some(window_maps(ir, op, name)),
        n if is_elementwise(n) => {
            let r = rank(*outs.first()?);
            let mut v: Vec<AffineMap> = ins.iter().map(|_| AffineMap::identity(r)).collect();
            v.push(AffineMap::identity(r));
            Some(v)
        }
        _ => None,
    }
}

/// The input position a strided, dilated window reads along the two spatial dims: output
/// dims `oh`, `oh + 1` and window dims `kh`, `kh + 1` (`oh * stride + kh * dilation`).
fn window_dims(ir: &Ir, op: OpId, oh: u32, kh: u32) -> (AffineExpr, AffineExpr) {
    let d = AffineExpr::Dim;
    let s = ints(ir, op, "strides", 2);
    let dl = ints(ir, op, "dilations", 2);
    let h = d(oh)
        .mul(AffineExpr::Const(s[0]))
        .add(d(kh).mul(AffineExpr::Const(dl[0])));
    let w = d(oh + 1)
        .mul(AffineExpr::Const(s[1]))
        .add(d(kh + 1).mul(AffineExpr::Const(dl[1])));
    (h, w)
}

/// Indexing maps of the 2-D convolutions and poolings (input, window or filter, output).
pub fn window_maps(ir: &Ir, op: OpId, name: &str) -> Vec<AffineMap> {
    let d = AffineExpr::Dim;
    match name {
        "linalg.conv_2d_nchw_fchw" => {
            // (n, f, oh, ow, c, kh, kw)
            let (h, w) = window_dims(ir, op, 2, 5);
            vec![
                AffineMap::new(7, 0, vec![d(0), d(4), h, w]),
                AffineMap::projection(7, &[1, 4, 5, 6]),
                AffineMap::projection(7, &[0, 1, 2, 3]),
            ]
        }
        "linalg.conv_2d_nhwc_hwcf" => {
            // (n, oh, ow, f, kh, kw, c)
            let (h, w) = window_dims(ir, op, 1, 4);
            vec![
                AffineMap::new(7, 0, vec![d(0), h, w, d(6)]),
                AffineMap::projection(7, &[4, 5, 6, 3]),
                AffineMap::projection(7, &[0, 1, 2, 3]),
            ]
        }
        "linalg.pooling_nhwc_max"
        | "linalg.pooling_nhwc_min"
        | "linalg.pooling_nhwc_sum"
        | "linalg.depthwise_conv_2d_nhwc_hwc" => {
            // (n, oh, ow, c, kh, kw)
            let (h, w) = window_dims(ir, op, 1, 4);
            let k = if name.starts_with("linalg.depthwise") {
                AffineMap::projection(6, &[4, 5, 3])
            } else {
                AffineMap::projection(6, &[4, 5])
            };
            vec![
                AffineMap::new(6, 0, vec![d(0), h, w, d(3)]),
                k,
                AffineMap::projection(6, &[0, 1, 2, 3]),
            ]
        }
        _ => {
            // NCHW poolings and depthwise convolutions: (n, c, oh, ow, kh, kw)
            let (h, w) = window_dims(ir, op, 2, 4);
            let k = if name.starts_with("linalg.depthwise") {
                AffineMap::projection(6, &[1, 4, 5])
            } else {
                AffineMap::projection(6, &[4, 5])
            };
            vec![
                AffineMap::new(6, 0, vec![d(0), d(1), h, w]),
                k,
                AffineMap::projection(6, &[0, 1, 2, 3]),
            ]
        }
    }
}

pub fn is_elementwise(name: &str) -> bool {
    matches!(
        name,
        "linalg.add"
            | "linalg.sub"
            | "linalg.mul"
            | "linalg.div"
            | "linalg.max"
            | "linalg.min"
            | "linalg.powf"
            | "linalg.exp"
            | "linalg.log"
            | "linalg.abs"
            | "linalg.ceil"
            | "linalg.floor"
            | "linalg.negf"
            | "linalg.sqrt"
            | "linalg.rsqrt"
            | "linalg.tanh"
            | "linalg.erf"
            | "linalg.reciprocal"
            | "linalg.square"
    )
}

/// Which loops of an op with an `iterator_types` attribute (a `linalg.generic`) are
/// parallel, whether written `#linalg.iterator_type<parallel>` or `"parallel"`.
pub fn parallel_iterators(ir: &Ir, op: OpId) -> Option<Vec<bool>> {
    let its = ir.attr(op, "iterator_types")?;
    Some(
        its.as_array()?
            .iter()
            .map(|a| {
                a.dialect_body()
                    .is_some_and(|(_, b)| b.contains("parallel"))
                    || a.as_str() == Some("parallel")
            })
            .collect(),
    )
}

/// Every loop of `op` is parallel (per [`parallel_iterators`]).
pub fn all_parallel(ir: &Ir, op: OpId) -> bool {
    parallel_iterators(ir, op).is_some_and(|p| p.iter().all(|x| *x))
}

/// Iterator types (true = reduction) of the named ops whose maps we model.
pub fn reduction_dims(ir: &Ir, op: OpId) -> Option<Vec<bool>> {
    if let Some(a) = ir.attr(op, "iterator_types") {
        return a
            .as_array()?
            .iter()
            .map(|x| x.dialect_body().map(|(_, b)| b.contains("reduction")))
            .collect();
    }
    let maps = indexing_maps(ir, op)?;
    let n = maps.first()?.num_dims;
    let out = maps.last()?;
    Some(
        (0..n)
            .map(|d| !out.results.iter().any(|e| e.uses_dim(d)))
            .collect(),
    )
}

/// The hidden body's builder: ftuner-ir's `OpBuilder` at the end of the body block, and
/// how integers are read where they are converted.
struct B<'a> {
    ob: ftuner_ir::OpBuilder<'a>,
    /// `cast_unsigned`: integers are read as unsigned where they are converted.
    unsigned: bool,
}

impl B<'_> {
    fn op(
        &mut self,
        name: &str,
        operands: Vec<Value>,
        ty: Type,
        props: Vec<(&str, Attribute)>,
    ) -> Value {
        self.ob.value(name, operands, ty, &props)
    }
    fn fm() -> Attribute {
        Attribute::dialect("arith", "fastmath<none>")
    }
    fn ov() -> Attribute {
        Attribute::dialect("arith", "overflow<none>")
    }
    /// Convert `v` to `to` as MLIR's region builders do: `cast_signed` (the default) or,
    /// with `#linalg.type_fn<cast_unsigned>`, integers read as unsigned.
    fn cast(&mut self, v: Value, to: Type) -> Value {
        let from = self.ob.ir.value_type(v);
        if from == to {
            return v;
        }
        let name = match (from.is_float(), to.is_float()) {
            (true, true) => {
                if from.bit_width() < to.bit_width() {
                    "arith.extf"
                } else {
                    "arith.truncf"
                }
            }
            (false, true) if self.unsigned => "arith.uitofp",
            (false, true) => "arith.sitofp",
            (true, false) if self.unsigned => "arith.fptoui",
            (true, false) => "arith.fptosi",
            (false, false) => {
                if from.is_index() || to.is_index() {
                    if self.unsigned {
                        "arith.index_castui"
                    } else {
                        "arith.index_cast"
                    }
                } else if from.bit_width() < to.bit_width() {
                    if self.unsigned {
                        "arith.extui"
                    } else {
                        "arith.extsi"
                    }
                } else {
                    "arith.trunci"
                }
            }
        };
        self.op(name, vec![v], to, vec![])
    }
    fn bin(&mut self, fop: &str, iop: &str, a: Value, b: Value) -> Value {
        let t = self.ob.ir.value_type(a);
        if t.is_float() {
            self.op(fop, vec![a, b], t, vec![("fastmath", Self::fm())])
        } else if iop.ends_with("addi") || iop.ends_with("muli") || iop.ends_with("subi") {
            self.op(iop, vec![a, b], t, vec![("overflowFlags", Self::ov())])
        } else {
            self.op(iop, vec![a, b], t, vec![])
        }
    }
    fn un(&mut self, name: &str, a: Value) -> Value {
        let t = self.ob.ir.value_type(a);
        self.op(name, vec![a], t, vec![("fastmath", Self::fm())])
    }
    fn yield_(&mut self, v: Value) {
        self.ob.create("linalg.yield", vec![v], vec![], &[]);
    }
}

/// Element type of an operand (the type itself for scalars).
fn elem_of(ir: &Ir, v: Value) -> Type {
    let t = ir.value_type(v);
    if t.is_tensor() || t.is_memref() {
        t.element_type()
    } else {
        t
    }
}

/// Whether a named op's `cast` attribute asks for unsigned casts
/// (`#linalg.type_fn<cast_unsigned>`; the default is `cast_signed`).
pub fn casts_unsigned(cast: Option<Attribute>) -> bool {
    cast.is_some_and(
        |a| matches!(a.kind(), AttrKind::Dialect { body, .. } if body.contains("cast_unsigned")),
    )
}

/// Build the body region of named op `name` into `region` (which must be empty); its
/// casts are unsigned when `unsigned` (see [`casts_unsigned`]).
pub fn build_body(
    ir: &mut Ir,
    name: &str,
    region: RegionId,
    ins: &[Value],
    outs: &[Value],
    loc: Attribute,
    unsigned: bool,
) -> Result<(), String> {
    if outs.len() != 1 {
        return Err(format!(
            "expects 1 output operand, but found {}",
            outs.len()
        ));
    }
    let mut tys: Vec<Type> = ins.iter().map(|v| elem_of(ir, *v)).collect();
    tys.extend(outs.iter().map(|v| elem_of(ir, *v)));
    let block = ir.append_block(region, &tys);
    let args = ir.block_args(block).to_vec();
    let nin = ins.len();
    let out_ty = *tys.last().ok_or("structured op needs an output")?;
    let mut b = B {
        ob: ftuner_ir::OpBuilder::at_end(ir, block, loc),
        unsigned,
    };
    let need = |n: usize| {
        if nin == n {
            Ok(())
        } else {
            Err(format!("expects {n} input operand(s), but found {nin}"))
        }
    };
    match name {
        "linalg.fill" | "linalg.copy" | "linalg.transpose" | "linalg.broadcast" => {
            need(1)?;
            let v = b.cast(args[0], out_ty);
            b.yield_(v);
        }
        "linalg.matmul"
        | "linalg.batch_matmul"
        | "linalg.batch_reduce_matmul"
        | "linalg.matvec"
        | "linalg.vecmat"
        | "linalg.batch_matvec"
        | "linalg.dot" => {
            need(2)?;
            let a = b.cast(args[0], out_ty);
            let c = b.cast(args[1], out_ty);
            let m = b.bin("arith.mulf", "arith.muli", a, c);
            let s = b.bin("arith.addf", "arith.addi", args[2], m);
            b.yield_(s);
        }
        n if n.starts_with("linalg.conv_") || n.starts_with("linalg.depthwise_conv_") => {
            need(2)?;
            let a = b.cast(args[0], out_ty);
            let c = b.cast(args[1], out_ty);
            let m = b.bin("arith.mulf", "arith.muli", a, c);
            let s = b.bin("arith.addf", "arith.addi", args[2], m);
            b.yield_(s);
        }
        n if n.starts_with("linalg.pooling_") => {
            need(2)?;
            let a = b.cast(args[0], out_ty);
            let r = if n.ends_with("_max") {
                b.bin("arith.maximumf", "arith.maxsi", args[2], a)
            } else if n.ends_with("_min") {
                b.bin("arith.minimumf", "arith.minsi", args[2], a)
            } else {
                b.bin("arith.addf", "arith.addi", args[2], a)
            };
            b.yield_(r);
        }
        "linalg.add" | "linalg.sub" | "linalg.mul" | "linalg.div" | "linalg.max" | "linalg.min"
        | "linalg.powf" => {
            need(2)?;
            let (x, y) = (b.cast(args[0], out_ty), b.cast(args[1], out_ty));
            let r = match name {
                "linalg.add" => b.bin("arith.addf", "arith.addi", x, y),
                "linalg.sub" => b.bin("arith.subf", "arith.subi", x, y),
                "linalg.mul" => b.bin("arith.mulf", "arith.muli", x, y),
                "linalg.div" => b.bin("arith.divf", "arith.divsi", x, y),
                "linalg.max" => b.bin("arith.maximumf", "arith.maxsi", x, y),
                "linalg.min" => b.bin("arith.minimumf", "arith.minsi", x, y),
                _ => b.bin("math.powf", "math.ipowi", x, y),
            };
            b.yield_(r);
        }
        "linalg.exp" | "linalg.log" | "linalg.abs" | "linalg.ceil" | "linalg.floor"
        | "linalg.negf" | "linalg.sqrt" | "linalg.rsqrt" | "linalg.tanh" | "linalg.erf"
        | "linalg.reciprocal" | "linalg.square" => {
            need(1)?;
            let x = b.cast(args[0], out_ty);
            let r = match name {
                "linalg.exp" => b.un("math.exp", x),
                "linalg.log" => b.un("math.log", x),
                "linalg.abs" => b.un("math.absf", x),
                "linalg.ceil" => b.un("math.ceil", x),
                "linalg.floor" => b.un("math.floor", x),
                "linalg.negf" => b.un("arith.negf", x),
                "linalg.sqrt" => b.un("math.sqrt", x),
                "linalg.rsqrt" => b.un("math.rsqrt", x),
                "linalg.tanh" => b.un("math.tanh", x),
                "linalg.erf" => b.un("math.erf", x),
                "linalg.square" => b.bin("arith.mulf", "arith.muli", x, x),
                _ => {
                    let one = Attribute::float(1.0, out_ty);
                    let c = b.op("arith.constant", vec![], out_ty, vec![("value", one)]);
                    b.bin("arith.divf", "arith.divsi", c, x)
                }
            };
            b.yield_(r);
        }
        _ => return Err(format!("no region builder for '{name}'")),
    }
    Ok(())
}
