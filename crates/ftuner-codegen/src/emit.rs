//! The `llvm` dialect as LLVM's textual IR, op by op (what `mlir-translate --mlir-to-llvmir`
//! does for these ops): block arguments become `phi`s fed by the branches into the block,
//! `llvm.mlir.constant`s are inlined as literals, intrinsics are declared on first use.
//! Pure Rust: no LLVM here; [`crate::Compiler`] parses the text with LLVM.

use crate::literals::{const_lit, resource_lit};
use ftuner_ir::{AttrKind, Attribute, BlockId, FloatKind, Ir, OpId, Type, TypeKind, Value};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::fmt::Write;

/// A translation error at an op.
#[derive(Debug, Clone)]
pub struct EmitError {
    pub op: Option<OpId>,
    pub message: String,
}

type R<T> = Result<T, EmitError>;

fn err<T>(op: OpId, m: impl Into<String>) -> R<T> {
    Err(EmitError {
        op: Some(op),
        message: m.into(),
    })
}

// ----- types -------------------------------------------------------------------------

/// LLVM type text of a body such as `struct<(ptr, array<2 x i64>)>` or `f32`.
fn body_type(s: &str) -> Option<String> {
    let s = s.trim();
    if let Some(inner) = s
        .strip_prefix("struct<(")
        .and_then(|x| x.strip_suffix(")>"))
    {
        let parts = split_top(inner);
        let conv: Option<Vec<String>> = parts.iter().map(|p| body_type(p)).collect();
        return Some(format!("{{ {} }}", conv?.join(", ")));
    }
    if let Some(inner) = s.strip_prefix("array<").and_then(|x| x.strip_suffix('>')) {
        let (n, t) = inner.split_once(" x ")?;
        return Some(format!("[{} x {}]", n.trim(), body_type(t)?));
    }
    if let Some(inner) = s.strip_prefix("vector<").and_then(|x| x.strip_suffix('>')) {
        let (n, t) = inner.split_once('x')?;
        return Some(format!("<{} x {}>", n.trim(), body_type(t)?));
    }
    Some(match s {
        "ptr" => "ptr".into(),
        "void" => "void".into(),
        "f16" => "half".into(),
        "bf16" => "bfloat".into(),
        "f32" => "float".into(),
        "f64" => "double".into(),
        "index" => "i64".into(),
        _ if s.starts_with('i') && s[1..].parse::<u32>().is_ok() => s.into(),
        _ => return None,
    })
}

/// Split at commas not nested in brackets.
fn split_top(s: &str) -> Vec<&str> {
    let mut out = vec![];
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '<' | '(' | '[' | '{' => depth += 1,
            '>' | ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        out.push(s[start..].trim());
    }
    out
}

/// LLVM type text of one of our types.
pub fn ty(t: Type) -> Option<String> {
    match t.kind() {
        TypeKind::Integer { width, .. } => Some(format!("i{width}")),
        TypeKind::Index => Some("i64".into()),
        TypeKind::Float(k) => Some(
            match k {
                FloatKind::F16 => "half",
                FloatKind::BF16 => "bfloat",
                FloatKind::F32 => "float",
                FloatKind::F64 => "double",
                _ => return None,
            }
            .into(),
        ),
        TypeKind::Vector { shape, elem, .. } if shape.len() == 1 => {
            Some(format!("<{} x {}>", shape[0], ty(*elem)?))
        }
        TypeKind::Dialect { dialect, body } if dialect == "llvm" => body_type(body),
        _ => None,
    }
}

/// `(return type, parameter types)` of an `!llvm.func<R (A, B)>` body.
fn func_sig(t: Type) -> Option<(String, Vec<String>)> {
    let TypeKind::Dialect { dialect, body } = t.kind() else {
        return None;
    };
    if dialect != "llvm" {
        return None;
    }
    let inner = body.strip_prefix("func<")?.strip_suffix('>')?;
    // The return type ends at the top-level " (".
    let mut depth = 0i32;
    let mut split = None;
    for (i, c) in inner.char_indices() {
        match c {
            '<' | '[' | '{' => depth += 1,
            '>' | ']' | '}' => depth -= 1,
            '(' if depth == 0 => {
                split = Some(i);
                break;
            }
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
    }
    let i = split?;
    let ret = body_type(&inner[..i])?;
    let params = inner[i + 1..].trim_end().strip_suffix(')')?;
    let ps: Option<Vec<String>> = split_top(params).iter().map(|p| body_type(p)).collect();
    Some((ret, ps?))
}

// ----- constants ---------------------------------------------------------------------

/// Function attributes without arguments that `passthrough` may name (MLIR's LLVM dialect);
/// others are left out rather than handed to LLVM's parser.
const PASSTHROUGH: &[&str] = &[
    "noinline",
    "alwaysinline",
    "optnone",
    "cold",
    "hot",
    "minsize",
    "optsize",
];

/// A function's `passthrough` attributes, each with a leading space.
fn passthrough(ir: &Ir, f: OpId) -> String {
    prop(ir, f, "passthrough")
        .and_then(|a| a.as_array())
        .unwrap_or(&[])
        .iter()
        .filter_map(|a| a.as_str())
        .filter(|a| PASSTHROUGH.contains(a))
        .map(|a| format!(" {a}"))
        .collect()
}

fn prop(ir: &Ir, op: OpId, k: &str) -> Option<Attribute> {
    ir.attr(op, k)
}

fn intrinsic_suffix(t: &str) -> String {
    // <16 x float> -> v16f32, float -> f32, double -> f64, half -> f16.
    fn scalar(s: &str) -> String {
        match s {
            "float" => "f32".into(),
            "double" => "f64".into(),
            "half" => "f16".into(),
            "bfloat" => "bf16".into(),
            "ptr" => "p0".into(),
            other => other.into(),
        }
    }
    if let Some(inner) = t.strip_prefix('<').and_then(|x| x.strip_suffix('>')) {
        if let Some((n, e)) = inner.split_once(" x ") {
            return format!("v{}{}", n.trim(), scalar(e.trim()));
        }
    }
    scalar(t)
}

struct Fn<'a> {
    ir: &'a Ir,
    /// Value -> operand text (`%vN`, or a literal for constants).
    vals: FxHashMap<Value, String>,
    out: String,
    decls: &'a mut BTreeMap<String, String>,
}

impl Fn<'_> {
    fn name(&mut self, v: Value) -> String {
        format!("%v{}", v.index())
    }
    fn get(&self, op: OpId, v: Value) -> R<String> {
        self.vals
            .get(&v)
            .cloned()
            .map_or_else(|| err(op, "uses a value that is not defined before it"), Ok)
    }
    fn vty(&self, op: OpId, v: Value) -> R<String> {
        let t = self.ir.value_type(v);
        ty(t).map_or_else(|| err(op, format!("type {t} has no LLVM equivalent")), Ok)
    }
    fn typed(&self, op: OpId, v: Value) -> R<String> {
        Ok(format!("{} {}", self.vty(op, v)?, self.get(op, v)?))
    }
    fn def(&mut self, op: OpId, text: String) -> R<()> {
        let r = *self.ir.results(op).first().ok_or(EmitError {
            op: Some(op),
            message: "has no result".into(),
        })?;
        let n = self.name(r);
        let _ = writeln!(self.out, "  {n} = {text}");
        self.vals.insert(r, n);
        Ok(())
    }

    /// `llvm.intr.masked.gather %ptrs, %mask, %pass` / `llvm.intr.masked.scatter %v,
    /// %ptrs, %mask` (`alignment` an attribute, as in MLIR's LLVM dialect; LLVM 22 takes
    /// it as the `align` attribute of the pointer vector).
    fn gather_scatter(&mut self, op: OpId, gather: bool) -> R<()> {
        let ops = self.ir.operands(op).to_vec();
        if ops.len() != 3 {
            return err(op, "expects three operands");
        }
        let align = prop(self.ir, op, "alignment")
            .and_then(|a| a.as_i64())
            .unwrap_or(1);
        let (data, ptrs) = if gather {
            (self.ir.result(op, 0), ops[0])
        } else {
            (ops[0], ops[1])
        };
        let dt = self.vty(op, data)?;
        let pt = self.vty(op, ptrs)?;
        let sfx = format!("{}.{}", intrinsic_suffix(&dt), intrinsic_suffix(&pt));
        let mt = self.vty(op, if gather { ops[1] } else { ops[2] })?;
        if gather {
            let f = format!("llvm.masked.gather.{sfx}");
            self.decls
                .insert(f.clone(), format!("declare {dt} @{f}({pt}, {mt}, {dt})"));
            let (p, m, pass) = (
                format!("{pt} align {align} {}", self.get(op, ops[0])?),
                self.typed(op, ops[1])?,
                self.typed(op, ops[2])?,
            );
            self.def(op, format!("call {dt} @{f}({p}, {m}, {pass})"))
        } else {
            let f = format!("llvm.masked.scatter.{sfx}");
            self.decls
                .insert(f.clone(), format!("declare void @{f}({dt}, {pt}, {mt})"));
            let (v, p, m) = (
                self.typed(op, ops[0])?,
                format!("{pt} align {align} {}", self.get(op, ops[1])?),
                self.typed(op, ops[2])?,
            );
            let _ = writeln!(self.out, "  call void @{f}({v}, {p}, {m})");
            Ok(())
        }
    }

    fn op(&mut self, op: OpId, block_of: &FxHashMap<BlockId, String>) -> R<()> {
        let ir = self.ir;
        let name = ir.name(op);
        let ops = ir.operands(op).to_vec();
        let short = name.strip_prefix("llvm.").unwrap_or(name);
        let res_ty = || -> R<String> {
            let r = *ir.results(op).first().ok_or(EmitError {
                op: Some(op),
                message: "has no result".into(),
            })?;
            let t = ir.value_type(r);
            ty(t).map_or_else(|| err(op, format!("type {t} has no LLVM equivalent")), Ok)
        };
        let bin = |s: &str| -> Option<&'static str> {
            Some(match s {
                "add" => "add",
                "sub" => "sub",
                "mul" => "mul",
                "sdiv" => "sdiv",
                "udiv" => "udiv",
                "srem" => "srem",
                "urem" => "urem",
                "and" => "and",
                "or" => "or",
                "xor" => "xor",
                "shl" => "shl",
                "lshr" => "lshr",
                "ashr" => "ashr",
                "fadd" => "fadd",
                "fsub" => "fsub",
                "fmul" => "fmul",
                "fdiv" => "fdiv",
                "frem" => "frem",
                _ => return None,
            })
        };
        if let Some(i) = bin(short) {
            let a = self.typed(op, ops[0])?;
            let b = self.get(op, ops[1])?;
            return self.def(op, format!("{i} {a}, {b}"));
        }
        let cast = |s: &str| -> Option<&'static str> {
            Some(match s {
                "sext" => "sext",
                "zext" => "zext",
                "trunc" => "trunc",
                "sitofp" => "sitofp",
                "uitofp" => "uitofp",
                "fptosi" => "fptosi",
                "fptoui" => "fptoui",
                "fpext" => "fpext",
                "fptrunc" => "fptrunc",
                "bitcast" => "bitcast",
                "ptrtoint" => "ptrtoint",
                "inttoptr" => "inttoptr",
                _ => return None,
            })
        };
        if let Some(c) = cast(short) {
            let a = self.typed(op, ops[0])?;
            let t = res_ty()?;
            return self.def(op, format!("{c} {a} to {t}"));
        }
        if let Some(intr) = short.strip_prefix("intr.") {
            if intr == "memcpy" {
                self.decls.insert(
                    "llvm.memcpy.p0.p0.i64".into(),
                    "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)".into(),
                );
                let (d, s, n) = (
                    self.typed(op, ops[0])?,
                    self.typed(op, ops[1])?,
                    self.typed(op, ops[2])?,
                );
                let _ = writeln!(
                    self.out,
                    "  call void @llvm.memcpy.p0.p0.i64({d}, {s}, {n}, i1 false)"
                );
                return Ok(());
            }
            if intr == "prefetch" {
                self.decls.insert(
                    "llvm.prefetch.p0".into(),
                    "declare void @llvm.prefetch.p0(ptr, i32, i32, i32)".into(),
                );
                let a = self.typed(op, ops[0])?;
                let imm = |k: &str| prop(ir, op, k).and_then(|x| x.as_i64()).unwrap_or(0);
                let _ = writeln!(
                    self.out,
                    "  call void @llvm.prefetch.p0({a}, i32 {}, i32 {}, i32 {})",
                    imm("rw"),
                    imm("hint"),
                    imm("cache")
                );
                return Ok(());
            }
            if intr == "masked.gather" || intr == "masked.scatter" {
                return self.gather_scatter(op, intr == "masked.gather");
            }
            let t = res_ty()?;
            let f = format!("llvm.{intr}.{}", intrinsic_suffix(&t));
            let params = vec![t.clone(); ops.len()].join(", ");
            self.decls
                .insert(f.clone(), format!("declare {t} @{f}({params})"));
            let args = ops
                .iter()
                .map(|v| self.typed(op, *v))
                .collect::<R<Vec<_>>>()?
                .join(", ");
            return self.def(op, format!("call {t} @{f}({args})"));
        }
        match short {
            "mlir.constant" => {
                let t = res_ty()?;
                let a = prop(ir, op, "value").ok_or(EmitError {
                    op: Some(op),
                    message: "has no value".into(),
                })?;
                let lit = const_lit(a, &t).map_or_else(
                    || err(op, format!("constant {a:?} of type {t} is not supported")),
                    Ok,
                )?;
                let r = ir.result(op, 0);
                self.vals.insert(r, lit);
            }
            "mlir.undef" | "mlir.poison" | "mlir.zero" => {
                let t = res_ty()?;
                let lit = match short {
                    "mlir.undef" => "undef",
                    "mlir.poison" => "poison",
                    _ if t == "ptr" => "null",
                    _ => "zeroinitializer",
                };
                self.vals.insert(ir.result(op, 0), lit.into());
            }
            "mlir.addressof" => {
                let g = prop(ir, op, "global_name")
                    .and_then(|a| a.as_symbol())
                    .map_or_else(|| err(op, "has no global_name"), Ok)?;
                self.vals.insert(ir.result(op, 0), format!("@{g}"));
            }
            "fneg" => {
                let a = self.typed(op, ops[0])?;
                self.def(op, format!("fneg {a}"))?;
            }
            "icmp" | "fcmp" => {
                let p = prop(ir, op, "predicate")
                    .and_then(|a| a.as_i64())
                    .map_or_else(|| err(op, "has no predicate"), Ok)?;
                let names: &[&str] = if short == "icmp" {
                    &[
                        "eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge",
                    ]
                } else {
                    &[
                        "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt",
                        "uge", "ult", "ule", "une", "uno", "true",
                    ]
                };
                let pn = names
                    .get(p as usize)
                    .map_or_else(|| err(op, format!("unknown predicate {p}")), Ok)?;
                let a = self.typed(op, ops[0])?;
                let b = self.get(op, ops[1])?;
                self.def(op, format!("{short} {pn} {a}, {b}"))?;
            }
            "select" => {
                let c = self.typed(op, ops[0])?;
                let a = self.typed(op, ops[1])?;
                let b = self.typed(op, ops[2])?;
                self.def(op, format!("select {c}, {a}, {b}"))?;
            }
            "extractvalue" | "insertvalue" => {
                let pos = prop(ir, op, "position")
                    .and_then(|a| a.as_dense_i64s())
                    .map_or_else(|| err(op, "has no position"), Ok)?;
                let p = pos
                    .iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                let agg = self.typed(op, ops[0])?;
                if short == "extractvalue" {
                    self.def(op, format!("extractvalue {agg}, {p}"))?;
                } else {
                    let v = self.typed(op, ops[1])?;
                    self.def(op, format!("insertvalue {agg}, {v}, {p}"))?;
                }
            }
            "insertelement" => {
                let (v, x, i) = (
                    self.typed(op, ops[0])?,
                    self.typed(op, ops[1])?,
                    self.typed(op, ops[2])?,
                );
                self.def(op, format!("insertelement {v}, {x}, {i}"))?;
            }
            "extractelement" => {
                let (v, i) = (self.typed(op, ops[0])?, self.typed(op, ops[1])?);
                self.def(op, format!("extractelement {v}, {i}"))?;
            }
            "shufflevector" => {
                let mask = prop(ir, op, "mask")
                    .and_then(|a| a.as_dense_i64s())
                    .map_or_else(|| err(op, "has no mask"), Ok)?;
                let m = mask
                    .iter()
                    .map(|x| {
                        if *x < 0 {
                            "i32 poison".to_string()
                        } else {
                            format!("i32 {x}")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                let (a, b) = (self.typed(op, ops[0])?, self.typed(op, ops[1])?);
                self.def(
                    op,
                    format!("shufflevector {a}, {b}, <{} x i32> <{m}>", mask.len()),
                )?;
            }
            "getelementptr" => {
                let et = prop(ir, op, "elem_type")
                    .and_then(|a| a.as_type())
                    .and_then(ty)
                    .map_or_else(|| err(op, "has no element type"), Ok)?;
                let raw = prop(ir, op, "rawConstantIndices")
                    .and_then(|a| a.as_dense_i64s())
                    .unwrap_or_default();
                let base = self.typed(op, ops[0])?;
                let mut dyns = ops[1..].iter();
                let mut idx = vec![];
                for r in raw {
                    if r == i32::MIN as i64 {
                        let v = *dyns
                            .next()
                            .map_or_else(|| err(op, "missing dynamic index"), Ok)?;
                        idx.push(self.typed(op, v)?);
                    } else {
                        idx.push(format!("i32 {r}"));
                    }
                }
                self.def(
                    op,
                    format!("getelementptr {et}, {base}, {}", idx.join(", ")),
                )?;
            }
            "load" => {
                let t = res_ty()?;
                let p = self.typed(op, ops[0])?;
                let a = prop(ir, op, "alignment").and_then(|a| a.as_i64());
                let al = a.map(|a| format!(", align {a}")).unwrap_or_default();
                self.def(op, format!("load {t}, {p}{al}"))?;
            }
            "store" => {
                let v = self.typed(op, ops[0])?;
                let p = self.typed(op, ops[1])?;
                let a = prop(ir, op, "alignment").and_then(|a| a.as_i64());
                let al = a.map(|a| format!(", align {a}")).unwrap_or_default();
                let _ = writeln!(self.out, "  store {v}, {p}{al}");
            }
            "alloca" => {
                let et = prop(ir, op, "elem_type")
                    .and_then(|a| a.as_type())
                    .and_then(ty)
                    .map_or_else(|| err(op, "has no element type"), Ok)?;
                let n = self.typed(op, ops[0])?;
                self.def(op, format!("alloca {et}, {n}, align 64"))?;
            }
            "call" => {
                let callee = prop(ir, op, "callee")
                    .and_then(|a| a.as_symbol())
                    .map_or_else(|| err(op, "indirect calls are not supported"), Ok)?;
                let args = ops
                    .iter()
                    .map(|v| self.typed(op, *v))
                    .collect::<R<Vec<_>>>()?
                    .join(", ");
                if ir.results(op).is_empty() {
                    let _ = writeln!(self.out, "  call void @{callee}({args})");
                } else {
                    let t = res_ty()?;
                    self.def(op, format!("call {t} @{callee}({args})"))?;
                }
            }
            "br" => {
                let s = *ir
                    .op(op)
                    .successors
                    .first()
                    .map_or_else(|| err(op, "no successor"), Ok)?;
                let l = block_of
                    .get(&s)
                    .map_or_else(|| err(op, "bad successor"), Ok)?;
                let _ = writeln!(self.out, "  br label %{l}");
            }
            "cond_br" => {
                let succ = &ir.op(op).successors;
                if succ.len() != 2 {
                    return err(op, "needs two successors");
                }
                let c = self.typed(op, ops[0])?;
                let t = block_of
                    .get(&succ[0])
                    .map_or_else(|| err(op, "bad successor"), Ok)?;
                let f = block_of
                    .get(&succ[1])
                    .map_or_else(|| err(op, "bad successor"), Ok)?;
                let _ = writeln!(self.out, "  br {c}, label %{t}, label %{f}");
            }
            "return" => {
                if let Some(v) = ops.first() {
                    let v = self.typed(op, *v)?;
                    let _ = writeln!(self.out, "  ret {v}");
                } else {
                    let _ = writeln!(self.out, "  ret void");
                }
            }
            "unreachable" => {
                let _ = writeln!(self.out, "  unreachable");
            }
            _ => return err(op, "has no LLVM IR translation"),
        }
        Ok(())
    }
}

/// Successor operands of a branch into successor `k`.
fn succ_operands(ir: &Ir, op: OpId, k: usize) -> Vec<Value> {
    let ops = ir.operands(op);
    match ir.name(op) {
        "llvm.br" => ops.to_vec(),
        "llvm.cond_br" => {
            let seg = ir
                .attr(op, "operandSegmentSizes")
                .and_then(|a| a.as_dense_i64s())
                .unwrap_or_default();
            let nt = seg.get(1).copied().unwrap_or(0) as usize;
            let nf = seg.get(2).copied().unwrap_or(0) as usize;
            if k == 0 {
                ops.get(1..1 + nt).unwrap_or(&[]).to_vec()
            } else {
                ops.get(1 + nt..1 + nt + nf).unwrap_or(&[]).to_vec()
            }
        }
        _ => vec![],
    }
}

/// Blocks in reverse postorder from the entry (so definitions come before uses).
fn rpo(ir: &Ir, blocks: &[BlockId]) -> Vec<BlockId> {
    let index: FxHashMap<BlockId, usize> =
        blocks.iter().enumerate().map(|(i, b)| (*b, i)).collect();
    let mut seen = vec![false; blocks.len()];
    let mut post = vec![];
    if blocks.is_empty() {
        return post;
    }
    let succs = |b: BlockId| -> Vec<BlockId> {
        ir.terminator(b)
            .map(|t| ir.op(t).successors.to_vec())
            .unwrap_or_default()
    };
    let mut stack = vec![(blocks[0], 0usize)];
    seen[0] = true;
    while let Some((b, k)) = stack.pop() {
        let ss = succs(b);
        if k < ss.len() {
            stack.push((b, k + 1));
            if let Some(&j) = index.get(&ss[k]) {
                if !seen[j] {
                    seen[j] = true;
                    stack.push((ss[k], 0));
                }
            }
        } else {
            post.push(b);
        }
    }
    post.reverse();
    post
}

/// Extra attributes for every function definition (`target-cpu`, `target-features`).
#[derive(Clone, Debug, Default)]
pub struct FnAttrs {
    pub cpu: Option<String>,
    pub features: Option<String>,
    /// NVPTX kernels: functions named here get the PTX kernel calling convention (71).
    pub kernels: Vec<String>,
    /// Emit `_ftuner_packed_*` entries (host JIT); off for GPU code.
    pub packed: bool,
}

/// The module's `llvm.func`s and `llvm.mlir.global`s as textual LLVM IR. Every
/// `_mlir_ciface_NAME` also gets `_ftuner_packed_NAME(ptr %args)`, which takes an array of
/// pointers (one per argument, then one for a returned value) so the JIT can call any
/// signature through one function-pointer type.
pub fn module_to_llvm_ir(ir: &Ir, top: OpId, attrs: &FnAttrs) -> Result<String, EmitError> {
    let mut out = String::new();
    let mut decls: BTreeMap<String, String> = BTreeMap::new();
    let mut defined = vec![];
    let mut packed = vec![];
    let body = ir
        .regions_of(top)
        .first()
        .and_then(|r| ir.region_entry(*r))
        .ok_or(EmitError {
            op: Some(top),
            message: "module has no body".into(),
        })?;
    let mut attr_text = String::new();
    if let Some(c) = &attrs.cpu {
        let _ = write!(attr_text, "\"target-cpu\"=\"{c}\" ");
    }
    if let Some(f) = &attrs.features {
        let _ = write!(attr_text, "\"target-features\"=\"{f}\" ");
    }
    for op in ir.block_ops(body) {
        match ir.name(op) {
            "llvm.mlir.global" => {
                let name = ir
                    .symbol_name(op)
                    .map_or_else(|| err(op, "has no name"), Ok)?;
                let gt = prop(ir, op, "global_type")
                    .and_then(|a| a.as_type())
                    .and_then(ty)
                    .map_or_else(|| err(op, "has no global_type"), Ok)?;
                let init = match prop(ir, op, "value") {
                    Some(v) => match resource_lit(ir, v) {
                        Some(r) => r.map_err(|m| EmitError {
                            op: Some(op),
                            message: m,
                        })?,
                        None => const_lit(v, &gt)
                            .map_or_else(|| err(op, "initial value is not supported"), Ok)?,
                    },
                    None => "zeroinitializer".into(),
                };
                let kind = if prop(ir, op, "constant").is_some() {
                    "constant"
                } else {
                    "global"
                };
                let align = prop(ir, op, "alignment")
                    .and_then(|a| a.as_i64())
                    .map(|a| format!(", align {a}"))
                    .unwrap_or_default();
                let _ = writeln!(out, "@{name} = private {kind} {gt} {init}{align}");
            }
            "llvm.func" => {
                let name = ir
                    .symbol_name(op)
                    .map_or_else(|| err(op, "has no name"), Ok)?;
                let fty = prop(ir, op, "function_type")
                    .and_then(|a| a.as_type())
                    .map_or_else(|| err(op, "has no function_type"), Ok)?;
                let (ret, params) = func_sig(fty)
                    .map_or_else(|| err(op, format!("bad function type {fty}")), Ok)?;
                let entry = ir.regions_of(op).first().and_then(|r| ir.region_entry(*r));
                let Some(entry) = entry else {
                    decls.insert(
                        name.to_string(),
                        format!("declare {ret} @{name}({})", params.join(", ")),
                    );
                    continue;
                };
                defined.push(name.to_string());
                if let Some(inner) = name.strip_prefix("_mlir_ciface_").filter(|_| attrs.packed) {
                    packed.push((inner.to_string(), ret.clone(), params.clone()));
                }
                let private = prop(ir, op, "linkage").is_some_and(|l| {
                    matches!(l.kind(), AttrKind::Dialect { body, .. } if body.contains("private"))
                });
                let cc = if attrs.kernels.iter().any(|k| k == name)
                    || ir.attr(op, "nvvm.kernel").is_some()
                {
                    "ptx_kernel "
                } else {
                    ""
                };
                let blocks = ir.region(ir.regions_of(op)[0]).blocks.clone();
                let mut f = Fn {
                    ir,
                    vals: FxHashMap::default(),
                    out: String::new(),
                    decls: &mut decls,
                };
                let args = ir.block_args(entry).to_vec();
                if args.len() != params.len() {
                    return err(op, "entry block arguments do not match the function type");
                }
                // `arg_attrs`: `llvm.noalias` on a pointer parameter.
                let arg_attrs = prop(ir, op, "arg_attrs").and_then(|a| a.as_array());
                let noalias = |k: usize| {
                    arg_attrs
                        .and_then(|v| v.get(k))
                        .and_then(|d| d.as_dict())
                        .is_some_and(|d| d.iter().any(|(n, _)| n == "llvm.noalias"))
                };
                let mut sig = vec![];
                for (k, (a, t)) in args.iter().zip(&params).enumerate() {
                    let n = f.name(*a);
                    let na = if noalias(k) && t == "ptr" {
                        " noalias"
                    } else {
                        ""
                    };
                    sig.push(format!("{t}{na} {n}"));
                    f.vals.insert(*a, n);
                }
                let block_of: FxHashMap<BlockId, String> = blocks
                    .iter()
                    .enumerate()
                    .map(|(i, b)| (*b, format!("bb{i}")))
                    .collect();
                // Incoming edges of every block argument.
                let mut incoming: FxHashMap<BlockId, Vec<(BlockId, Vec<Value>)>> =
                    FxHashMap::default();
                for b in &blocks {
                    if let Some(t) = ir.terminator(*b) {
                        for (k, s) in ir.op(t).successors.iter().enumerate() {
                            incoming
                                .entry(*s)
                                .or_default()
                                .push((*b, succ_operands(ir, t, k)));
                        }
                    }
                }
                // Names of block arguments first (phis may refer to later definitions).
                for b in blocks.iter().skip(1) {
                    for a in ir.block_args(*b).to_vec() {
                        let n = f.name(a);
                        f.vals.insert(a, n);
                    }
                }
                let order = rpo(ir, &blocks);
                // All op results get names up front too, for phis fed from later blocks.
                let mut pending_phis = vec![];
                for b in &order {
                    let label = &block_of[b];
                    let _ = writeln!(f.out, "{label}:");
                    if *b != entry {
                        for (i, a) in ir.block_args(*b).iter().enumerate() {
                            let t = f.vty(op, *a)?;
                            let n = f.name(*a);
                            let _ = writeln!(f.out, "  {n} = phi {t} @@PHI{}_{i}@@", b.index());
                            pending_phis.push((*b, i, t));
                        }
                    }
                    for o in ir.block_ops(*b) {
                        f.op(o, &block_of)?;
                    }
                }
                // Fill the phis now that every value has its text: the placeholders
                // appear in the order they were written, so one forward pass does it.
                let reachable: rustc_hash::FxHashSet<BlockId> = order.iter().copied().collect();
                let mut text = String::with_capacity(f.out.len());
                let mut rest = f.out.as_str();
                for (b, i, _) in pending_phis {
                    let mut parts = vec![];
                    for (pred, vals) in incoming.get(&b).map(|v| v.as_slice()).unwrap_or(&[]) {
                        let Some(v) = vals.get(i) else {
                            return err(op, "a branch passes too few block arguments");
                        };
                        if !reachable.contains(pred) {
                            continue; // unreachable: not a predecessor in LLVM's CFG
                        }
                        let vt = f.get(op, *v)?;
                        parts.push(format!("[ {vt}, %{} ]", block_of[pred]));
                    }
                    let marker = format!("@@PHI{}_{i}@@", b.index());
                    let Some(at) = rest.find(&marker) else {
                        return err(op, "lost a phi while translating");
                    };
                    text.push_str(&rest[..at]);
                    text.push_str(&parts.join(", "));
                    rest = &rest[at + marker.len()..];
                }
                text.push_str(rest);
                let link = if private { "internal " } else { "" }; // named in profiles
                let extra = passthrough(ir, op);
                let _ = writeln!(
                    out,
                    "define {link}{cc}{ret} @{name}({}){extra} #0 {{\n{text}}}\n",
                    sig.join(", ")
                );
            }
            "gpu.module" => {} // translated on its own (its body is a module)
            other if other.starts_with("llvm.") => {}
            _ => return err(op, "is not in the llvm dialect: run convert-to-llvm first"),
        }
    }
    for (name, ret, params) in packed {
        let mut body = String::new();
        let mut args = vec![];
        for (i, p) in params.iter().enumerate() {
            let _ = writeln!(
                body,
                "  %p{i} = getelementptr ptr, ptr %args, i64 {i}\n  %a{i} = load ptr, ptr %p{i}"
            );
            if p == "ptr" {
                args.push(format!("ptr %a{i}"));
            } else {
                let _ = writeln!(body, "  %s{i} = load {p}, ptr %a{i}");
                args.push(format!("{p} %s{i}"));
            }
        }
        let n = params.len();
        if ret == "void" {
            let _ = writeln!(
                body,
                "  call void @_mlir_ciface_{name}({})",
                args.join(", ")
            );
        } else {
            let _ = writeln!(
                body,
                "  %r = call {ret} @_mlir_ciface_{name}({})\n  %rp = getelementptr ptr, ptr %args, i64 {n}\n  %ra = load ptr, ptr %rp\n  store {ret} %r, ptr %ra",
                args.join(", ")
            );
        }
        let _ = writeln!(
            out,
            "define void @_ftuner_packed_{name}(ptr %args) noinline optnone #0 {{\n{body}  ret void\n}}\n"
        );
    }
    for (name, d) in decls {
        if !defined.contains(&name) {
            let _ = writeln!(out, "{d}");
        }
    }
    let _ = writeln!(out, "\nattributes #0 = {{ {attr_text}}}");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llvm_type_bodies() {
        assert_eq!(
            body_type("struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>").as_deref(),
            Some("{ ptr, ptr, i64, [2 x i64], [2 x i64] }")
        );
        assert_eq!(body_type("vector<16xf32>").as_deref(), Some("<16 x float>"));
        assert_eq!(
            body_type("array<14 x array<3 x i64>>").as_deref(),
            Some("[14 x [3 x i64]]")
        );
        assert_eq!(body_type("struct<(i32, <bad>)>"), None);
        let f = Type::get(TypeKind::Dialect {
            dialect: "llvm".into(),
            body: "func<struct<(ptr, i64)> (ptr, f32, vector<8xf64>)>".into(),
        });
        assert_eq!(
            func_sig(f),
            Some((
                "{ ptr, i64 }".to_string(),
                vec!["ptr".to_string(), "float".into(), "<8 x double>".into()]
            ))
        );
    }

    #[test]
    fn non_llvm_ops_are_errors_not_panics() {
        let ctx = ftuner_dialects::context();
        let m = ftuner_ir::parse_module(
            &ctx,
            "func.func @f(%a: i64) -> i64 {\n  return %a : i64\n}",
            "t.mlir",
        )
        .unwrap();
        let e = module_to_llvm_ir(&m.ir, m.top, &FnAttrs::default()).unwrap_err();
        assert!(e.message.contains("convert-to-llvm"), "{}", e.message);
    }
}
