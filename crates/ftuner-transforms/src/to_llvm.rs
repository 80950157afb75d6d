//! `convert-to-llvm`: buffer-level IR (`func`, `arith`, `math`, `scf`, `cf.assert`,
//! `memref`, 1-d `vector`) becomes the `llvm` dialect, which `mlir-translate
//! --mlir-to-llvmir` (and ftuner-codegen) turn into LLVM IR.
//!
//! * Types: `index` is `i64`; a ranked memref is MLIR's descriptor
//!   `!llvm.struct<(ptr, ptr, i64, array<R x i64>, array<R x i64>)>` (allocated pointer,
//!   aligned pointer, offset, sizes, strides); vectors stay vectors.
//! * Functions use MLIR's calling convention: each memref argument is passed as its 3 + 2R
//!   descriptor fields; several results are returned as a struct. Every public function
//!   also gets `_mlir_ciface_NAME`, taking descriptors by pointer (a result by pointer
//!   first), so C and our runtime call it the way they call MLIR's.
//! * `scf.for`/`if`/`index_switch` become blocks and branches; `cf.assert` branches to a
//!   block that writes the message to stderr (`write(2, ...)`) and calls `abort`.
//! * `memref.alloc` is `aligned_alloc(64, size rounded up to 64)`, `dealloc` is `free`;
//!   loads and stores address `aligned + offset + sum(index * stride)` with strides taken
//!   from the type when static; `subview`/`collapse_shape`/`expand_shape`/`reshape` build
//!   new descriptors; `copy` is `llvm.memcpy` between identity layouts, else a loop nest;
//!   constant globals become `llvm.mlir.global`s.
//! * `vector.transfer_read/write` (in bounds) are one vector load/store when the minor
//!   dimension is contiguous, else one scalar access per lane; `vector.fma` is
//!   `llvm.intr.fma`; `vector.broadcast` is insertelement + shufflevector.

mod checks;
mod ciface;

use crate::aliasing;
use checks::{failing_functions, fails_inside};
use ciface::ciface;
use ftuner_ir::{
    intern_name, AffineExpr, AttrKind, Attribute, BlockId, Diagnostic, FloatKind, Ir, OpId, OpSpec,
    RegionId, Scalar, Type, TypeKind, Value, DYNAMIC,
};
use ftuner_pass::{
    options::OptionKind, OptionSpec, Pass, PassContext, PassFailure, PassOptions, Statistic,
};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;

type R<T> = Result<T, (OpId, String)>;

fn llvm_ty(body: &str) -> Type {
    Type::get(TypeKind::Dialect {
        dialect: "llvm".into(),
        body: body.into(),
    })
}

fn ptr() -> Type {
    llvm_ty("ptr")
}

/// Text of a converted type inside an `!llvm.` type body.
fn text(t: Type) -> String {
    match t.kind() {
        TypeKind::Dialect { dialect, body } if dialect == "llvm" => body.clone(),
        _ => t.to_string(),
    }
}

fn desc_body(rank: usize) -> String {
    if rank == 0 {
        "struct<(ptr, ptr, i64)>".into()
    } else {
        format!("struct<(ptr, ptr, i64, array<{rank} x i64>, array<{rank} x i64>)>")
    }
}

fn desc_ty(rank: usize) -> Type {
    llvm_ty(&desc_body(rank))
}

/// The LLVM-dialect type of a type.
fn conv(t: Type) -> Option<Type> {
    Some(match t.kind() {
        TypeKind::Index => Type::i64(),
        TypeKind::Integer { .. } | TypeKind::Float(_) => t,
        TypeKind::Vector { shape, elem, .. } => Type::vector(shape.clone(), conv(*elem)?),
        TypeKind::MemRef { shape, .. } => desc_ty(shape.len()),
        TypeKind::Dialect { dialect, .. } if dialect == "llvm" => t,
        _ => return None,
    })
}

/// Size in bytes of a scalar element.
fn elem_bytes(t: Type) -> Option<i64> {
    match t.kind() {
        TypeKind::Index => Some(8),
        TypeKind::Integer { width, .. } => Some(((*width as i64) + 7) / 8),
        TypeKind::Float(k) => Some(match k {
            FloatKind::F16 | FloatKind::BF16 => 2,
            FloatKind::F32 => 4,
            FloatKind::F64 => 8,
            FloatKind::F8E5M2 | FloatKind::F8E4M3FN => 1,
            _ => return None,
        }),
        _ => None,
    }
}

/// Static strides and offset of a memref type (`DYNAMIC` where unknown).
fn layout_of(t: Type) -> Option<(Vec<i64>, i64)> {
    t.strides_and_offset()
}

fn is_identity_layout(t: Type) -> bool {
    matches!(t.kind(), TypeKind::MemRef { layout: None, .. })
}

/// A dense attribute with `index` elements retyped to `i64` (LLVM has no index).
fn retype_dense(a: Attribute) -> Attribute {
    match a.kind() {
        AttrKind::DenseElements {
            ty,
            splat,
            elements,
        } if ty.element_type().is_index() => {
            let shape = ty.shape().unwrap_or(&[]).to_vec();
            let nt = if ty.is_vector() {
                Type::vector(shape, Type::i64())
            } else {
                Type::tensor(shape, Type::i64())
            };
            Attribute::get(AttrKind::DenseElements {
                ty: nt,
                splat: *splat,
                elements: elements.clone(),
            })
        }
        AttrKind::Integer { value, ty } if ty.is_index() => Attribute::int(*value, Type::i64()),
        _ => a,
    }
}

fn dict_get(a: Attribute, k: &str) -> Option<Attribute> {
    match a.kind() {
        AttrKind::Dictionary(e) => e.iter().find(|(n, _)| n == k).map(|(_, v)| *v),
        _ => None,
    }
}

/// One memref value: its descriptor and static knowledge from its type.
#[derive(Clone)]
struct Desc {
    v: Value,
    ty: Type,
}

struct Cv<'a> {
    ir: &'a mut Ir,
    map: FxHashMap<Value, Value>,
    /// Constants we made (to fold index arithmetic at conversion time).
    consts: FxHashMap<Value, i64>,
    cur: BlockId,
    region: RegionId,
    loc: Attribute,
    /// External functions the module needs: name -> `!llvm.func<...>` body.
    decls: &'a mut BTreeMap<String, String>,
    /// Assertion messages: (global name, bytes with the trailing NUL).
    strings: &'a mut Vec<(String, String)>,
    /// Outline loops marked `ftuner.parallel` (false when parallelism is off, or inside an
    /// outlined body already), and the functions outlined so far.
    outline: bool,
    outlined: &'a mut Vec<OpId>,
    /// The function being converted (outlined bodies are named after it).
    fname: &'a str,
    /// The LLVM result type of the function being built (`None`: void), what a failed
    /// run-time check returns undefined.
    ret: Option<Type>,
    /// Functions of the module that may fail a run-time check (theirs or a callee's).
    may_fail: &'a FxHashSet<String>,
    /// A failed check aborts the process instead of returning (`abort-on-failure`).
    abort_on_failure: bool,
}

/// Where an outlined body gets a value from outside the loop.
enum Source {
    /// Field of the context struct.
    Field(usize),
    /// An index constant the conversion folds with, made again.
    Index(i64),
    /// Another `llvm.mlir.constant`, made again.
    Const(Attribute, Type),
}

/// The runtime entry running `body(ctx, lo, hi)` over chunks of `0 .. n` on the thread pool.
pub const PARALLEL_FOR: &str = "ftuner_rt_parallel_for";
/// The runtime entries of failed checks: `void ftuner_rt_fail(const char *msg)` records
/// one, `int32_t ftuner_rt_failed(void)` says whether one is recorded.
pub const FAIL: &str = "ftuner_rt_fail";
pub const FAILED: &str = "ftuner_rt_failed";

impl Cv<'_> {
    fn emit(
        &mut self,
        name: &str,
        operands: Vec<Value>,
        results: Vec<Type>,
        props: Vec<(&str, Attribute)>,
        succ: Vec<BlockId>,
    ) -> OpId {
        let mut s = OpSpec::new(intern_name(name), self.loc)
            .operands(operands)
            .results(results);
        for (k, v) in props {
            s = s.prop(k, v);
        }
        s.successors = succ;
        let o = self.ir.create_op(s);
        self.ir.append_op(self.cur, o);
        o
    }
    fn val(&mut self, name: &str, operands: Vec<Value>, ty: Type) -> Value {
        let o = self.emit(name, operands, vec![ty], vec![], vec![]);
        self.ir.result(o, 0)
    }
    fn valp(
        &mut self,
        name: &str,
        operands: Vec<Value>,
        ty: Type,
        props: Vec<(&str, Attribute)>,
    ) -> Value {
        let o = self.emit(name, operands, vec![ty], props, vec![]);
        self.ir.result(o, 0)
    }
    fn cst(&mut self, value: Attribute, ty: Type) -> Value {
        self.valp("llvm.mlir.constant", vec![], ty, vec![("value", value)])
    }
    fn c64(&mut self, k: i64) -> Value {
        let v = self.cst(Attribute::i64(k), Type::i64());
        self.consts.insert(v, k);
        v
    }
    fn known(&self, v: Value) -> Option<i64> {
        self.consts.get(&v).copied()
    }
    fn add(&mut self, a: Value, b: Value) -> Value {
        match (self.known(a), self.known(b)) {
            (Some(0), _) => b,
            (_, Some(0)) => a,
            (Some(x), Some(y)) => self.c64(x.wrapping_add(y)),
            _ => self.val("llvm.add", vec![a, b], Type::i64()),
        }
    }
    fn mul(&mut self, a: Value, b: Value) -> Value {
        match (self.known(a), self.known(b)) {
            (Some(1), _) => b,
            (_, Some(1)) => a,
            (Some(x), Some(y)) => self.c64(x.wrapping_mul(y)),
            _ => self.val("llvm.mul", vec![a, b], Type::i64()),
        }
    }
    fn block(&mut self, args: &[Type]) -> BlockId {
        self.ir.append_block(self.region, args)
    }
    fn br(&mut self, dest: BlockId, args: Vec<Value>) {
        self.emit("llvm.br", args, vec![], vec![], vec![dest]);
    }
    fn cond_br(&mut self, c: Value, t: BlockId, targs: Vec<Value>, f: BlockId, fargs: Vec<Value>) {
        let seg = [1, targs.len() as i32, fargs.len() as i32];
        let mut ops = vec![c];
        ops.extend(targs);
        ops.extend(fargs);
        self.emit(
            "llvm.cond_br",
            ops,
            vec![],
            vec![("operandSegmentSizes", Attribute::dense_i32_array(&seg))],
            vec![t, f],
        );
    }
    fn icmp(&mut self, pred: i64, a: Value, b: Value) -> Value {
        self.valp(
            "llvm.icmp",
            vec![a, b],
            Type::i1(),
            vec![("predicate", Attribute::i64(pred))],
        )
    }
    fn extract(&mut self, agg: Value, pos: &[i64], ty: Type) -> Value {
        self.valp(
            "llvm.extractvalue",
            vec![agg],
            ty,
            vec![("position", Attribute::dense_i64_array(pos))],
        )
    }
    fn insert(&mut self, agg: Value, v: Value, pos: &[i64]) -> Value {
        let ty = self.ir.value_type(agg);
        self.valp(
            "llvm.insertvalue",
            vec![agg, v],
            ty,
            vec![("position", Attribute::dense_i64_array(pos))],
        )
    }
    fn call(
        &mut self,
        callee: &str,
        fty: &str,
        args: Vec<Value>,
        ret: Option<Type>,
    ) -> Option<Value> {
        self.decls.insert(callee.to_string(), fty.to_string());
        self.call_sym(callee, args, ret)
    }
    /// `llvm.call @callee(args)` of a function defined or declared elsewhere.
    fn call_sym(&mut self, callee: &str, args: Vec<Value>, ret: Option<Type>) -> Option<Value> {
        let n = args.len() as i32;
        let o = self.emit(
            "llvm.call",
            args,
            ret.into_iter().collect(),
            vec![
                ("callee", Attribute::symbol_ref(callee)),
                ("operandSegmentSizes", Attribute::dense_i32_array(&[n, 0])),
                ("op_bundle_sizes", Attribute::dense_i32_array(&[])),
            ],
            vec![],
        );
        self.ir.results(o).first().copied()
    }

    fn v(&self, op: OpId, v: Value) -> R<Value> {
        self.map
            .get(&v)
            .copied()
            .ok_or((op, "uses a value the conversion has not seen".into()))
    }

    // ----- descriptors ---------------------------------------------------------------

    fn desc(&self, op: OpId, v: Value) -> R<Desc> {
        let ty = self.ir.value_type(v);
        if !ty.is_memref() || ty.rank().is_none() {
            return Err((op, format!("expected a ranked memref, got {ty}")));
        }
        Ok(Desc {
            v: self.v(op, v)?,
            ty,
        })
    }
    fn size(&mut self, d: &Desc, i: usize) -> Value {
        match d.ty.shape().and_then(|s| s.get(i)).copied() {
            Some(s) if s != DYNAMIC => self.c64(s),
            _ => self.extract(d.v, &[3, i as i64], Type::i64()),
        }
    }
    fn stride(&mut self, d: &Desc, i: usize) -> Value {
        match layout_of(d.ty).and_then(|(s, _)| s.get(i).copied()) {
            Some(s) if s != DYNAMIC => self.c64(s),
            _ => self.extract(d.v, &[4, i as i64], Type::i64()),
        }
    }
    fn offset(&mut self, d: &Desc) -> Value {
        match layout_of(d.ty).map(|(_, o)| o) {
            Some(o) if o != DYNAMIC => self.c64(o),
            _ => self.extract(d.v, &[2], Type::i64()),
        }
    }
    fn pack(
        &mut self,
        alloc: Value,
        aligned: Value,
        offset: Value,
        sizes: &[Value],
        strides: &[Value],
    ) -> Value {
        let ty = desc_ty(sizes.len());
        let mut d = self.val("llvm.mlir.undef", vec![], ty);
        d = self.insert(d, alloc, &[0]);
        d = self.insert(d, aligned, &[1]);
        d = self.insert(d, offset, &[2]);
        for (i, s) in sizes.iter().enumerate() {
            d = self.insert(d, *s, &[3, i as i64]);
        }
        for (i, s) in strides.iter().enumerate() {
            d = self.insert(d, *s, &[4, i as i64]);
        }
        d
    }
    /// The 3 + 2R fields of a descriptor, as MLIR passes a memref argument.
    fn unpack(&mut self, d: Value, rank: usize) -> Vec<Value> {
        let mut out = vec![
            self.extract(d, &[0], ptr()),
            self.extract(d, &[1], ptr()),
            self.extract(d, &[2], Type::i64()),
        ];
        for f in [3, 4] {
            for i in 0..rank {
                out.push(self.extract(d, &[f, i as i64], Type::i64()));
            }
        }
        out
    }
    /// Address of element `idx` of `d`.
    fn elem_ptr(&mut self, d: &Desc, idx: &[Value]) -> Value {
        let mut lin = self.offset(d);
        for (i, x) in idx.iter().enumerate() {
            let s = self.stride(d, i);
            let t = self.mul(*x, s);
            lin = self.add(lin, t);
        }
        let base = self.extract(d.v, &[1], ptr());
        let elem = conv(d.ty.element_type()).unwrap_or(Type::i64());
        self.valp(
            "llvm.getelementptr",
            vec![base, lin],
            ptr(),
            vec![
                ("elem_type", Attribute::type_attr(elem)),
                (
                    "rawConstantIndices",
                    Attribute::dense_i32_array(&[i32::MIN]),
                ),
            ],
        )
    }
    fn load(&mut self, p: Value, ty: Type, align: i64) -> Value {
        self.valp(
            "llvm.load",
            vec![p],
            ty,
            vec![("alignment", Attribute::i64(align))],
        )
    }
    fn store(&mut self, v: Value, p: Value, align: i64) {
        self.emit(
            "llvm.store",
            vec![v, p],
            vec![],
            vec![("alignment", Attribute::i64(align))],
            vec![],
        );
    }

    /// `for each point of extents { f(point) }` as blocks.
    fn loop_nest(
        &mut self,
        extents: &[Value],
        f: &mut dyn FnMut(&mut Self, &[Value]) -> R<()>,
        ivs: &mut Vec<Value>,
    ) -> R<()> {
        let Some((ub, rest)) = extents.split_first() else {
            return f(self, ivs);
        };
        let zero = self.c64(0);
        let one = self.c64(1);
        let header = self.block(&[Type::i64()]);
        let body = self.block(&[]);
        let exit = self.block(&[]);
        self.br(header, vec![zero]);
        self.cur = header;
        let iv = self.ir.block_args(header)[0];
        let c = self.icmp(2, iv, *ub);
        self.cond_br(c, body, vec![], exit, vec![]);
        self.cur = body;
        ivs.push(iv);
        self.loop_nest(rest, f, ivs)?;
        ivs.pop();
        let next = self.val("llvm.add", vec![iv, one], Type::i64());
        self.br(header, vec![next]);
        self.cur = exit;
        Ok(())
    }

    // ----- ops -----------------------------------------------------------------------

    /// Convert the ops of `b` except its terminator, which is returned.
    fn ops(&mut self, b: BlockId) -> R<Option<OpId>> {
        let ops = self.ir.block_ops_vec(b);
        let mut term = None;
        for op in ops {
            let n = self.ir.name(op);
            if n == "scf.yield" || n == "func.return" || n == "gpu.return" {
                term = Some(op);
                continue;
            }
            self.op(op)?;
        }
        Ok(term)
    }

    fn results_of(&self, op: OpId) -> R<Vec<Type>> {
        self.ir
            .results(op)
            .iter()
            .map(|r| {
                let t = self.ir.value_type(*r);
                conv(t).ok_or((
                    op,
                    format!("has a result of type {t} that LLVM cannot hold"),
                ))
            })
            .collect()
    }

    fn op(&mut self, op: OpId) -> R<()> {
        let name = self.ir.name(op);
        self.loc = self.ir.loc(op);
        let olds = self.ir.operands(op).to_vec();
        let results = self.ir.results(op).to_vec();
        let err = |m: String| (op, m);
        if matches!(
            name,
            "arith.divsi"
                | "arith.divui"
                | "arith.remsi"
                | "arith.remui"
                | "arith.floordivsi"
                | "arith.ceildivsi"
                | "arith.ceildivui"
        ) {
            self.division_check(op, name)?;
        }
        let simple = |n: &str| -> Option<&'static str> {
            Some(match n {
                "arith.addi" => "llvm.add",
                "arith.subi" => "llvm.sub",
                "arith.muli" => "llvm.mul",
                "arith.divsi" => "llvm.sdiv",
                "arith.divui" => "llvm.udiv",
                "arith.remsi" => "llvm.srem",
                "arith.remui" => "llvm.urem",
                "arith.andi" => "llvm.and",
                "arith.ori" => "llvm.or",
                "arith.xori" => "llvm.xor",
                "arith.shli" => "llvm.shl",
                "arith.shrsi" => "llvm.ashr",
                "arith.shrui" => "llvm.lshr",
                "arith.addf" => "llvm.fadd",
                "arith.subf" => "llvm.fsub",
                "arith.mulf" => "llvm.fmul",
                "arith.divf" => "llvm.fdiv",
                "arith.remf" => "llvm.frem",
                "arith.negf" => "llvm.fneg",
                "arith.select" => "llvm.select",
                "arith.extf" => "llvm.fpext",
                "arith.truncf" => "llvm.fptrunc",
                "arith.extsi" => "llvm.sext",
                "arith.extui" => "llvm.zext",
                "arith.trunci" => "llvm.trunc",
                "arith.sitofp" => "llvm.sitofp",
                "arith.uitofp" => "llvm.uitofp",
                "arith.fptosi" => "llvm.fptosi",
                "arith.fptoui" => "llvm.fptoui",
                "arith.bitcast" => "llvm.bitcast",
                "arith.maximumf" => "llvm.intr.maximum",
                "arith.minimumf" => "llvm.intr.minimum",
                "arith.maxnumf" => "llvm.intr.maxnum",
                "arith.minnumf" => "llvm.intr.minnum",
                "math.exp" => "llvm.intr.exp",
                "math.exp2" => "llvm.intr.exp2",
                "math.log" => "llvm.intr.log",
                "math.log2" => "llvm.intr.log2",
                "math.sqrt" => "llvm.intr.sqrt",
                "math.absf" => "llvm.intr.fabs",
                "math.floor" => "llvm.intr.floor",
                "math.ceil" => "llvm.intr.ceil",
                "math.sin" => "llvm.intr.sin",
                "math.cos" => "llvm.intr.cos",
                "math.powf" => "llvm.intr.pow",
                "math.fma" | "vector.fma" => "llvm.intr.fma",
                _ => return None,
            })
        };
        if let Some(ln) = simple(name) {
            let ops = olds.iter().map(|v| self.v(op, *v)).collect::<R<Vec<_>>>()?;
            let tys = self.results_of(op)?;
            let ty = *tys.first().ok_or_else(|| err("has no result".into()))?;
            let r = self.val(ln, ops, ty);
            self.map.insert(results[0], r);
            return Ok(());
        }
        match name {
            "arith.constant" => {
                let a = self
                    .ir
                    .attr(op, "value")
                    .ok_or_else(|| err("has no value".into()))?;
                let ty = self.results_of(op)?[0];
                let r = self.cst(retype_dense(a), ty);
                if let Some(k) = a.as_i64().filter(|_| ty == Type::i64()) {
                    self.consts.insert(r, k);
                }
                self.map.insert(results[0], r);
            }
            "arith.cmpi" | "arith.cmpf" => {
                let p = self
                    .ir
                    .attr(op, "predicate")
                    .and_then(|a| a.as_i64())
                    .ok_or_else(|| err("has no predicate".into()))?;
                let a = self.v(op, olds[0])?;
                let b = self.v(op, olds[1])?;
                let ty = self.results_of(op)?[0];
                let ln = if name == "arith.cmpi" {
                    "llvm.icmp"
                } else {
                    "llvm.fcmp"
                };
                let r = self.valp(ln, vec![a, b], ty, vec![("predicate", Attribute::i64(p))]);
                self.map.insert(results[0], r);
            }
            "arith.index_cast" | "arith.index_castui" => {
                let a = self.v(op, olds[0])?;
                let from = conv(self.ir.value_type(olds[0])).unwrap_or(Type::i64());
                let to = self.results_of(op)?[0];
                let (fw, tw) = (from.int_width().unwrap_or(64), to.int_width().unwrap_or(64));
                let r = if fw == tw {
                    a
                } else if fw > tw {
                    self.val("llvm.trunc", vec![a], to)
                } else if name == "arith.index_cast" {
                    self.val("llvm.sext", vec![a], to)
                } else {
                    self.val("llvm.zext", vec![a], to)
                };
                self.map.insert(results[0], r);
            }
            "arith.minsi" | "arith.maxsi" | "arith.minui" | "arith.maxui" => {
                let a = self.v(op, olds[0])?;
                let b = self.v(op, olds[1])?;
                let pred = match name {
                    "arith.minsi" => 2,
                    "arith.maxsi" => 4,
                    "arith.minui" => 6,
                    _ => 8,
                };
                let ty = self.results_of(op)?[0];
                let c = self.valp(
                    "llvm.icmp",
                    vec![a, b],
                    if ty.is_vector() {
                        Type::vector(ty.shape().unwrap_or(&[]).to_vec(), Type::i1())
                    } else {
                        Type::i1()
                    },
                    vec![("predicate", Attribute::i64(pred))],
                );
                let r = self.val("llvm.select", vec![c, a, b], ty);
                self.map.insert(results[0], r);
            }
            "arith.floordivsi" | "arith.ceildivsi" => {
                // q = a / b (truncating); step q toward -inf (+inf) when the remainder is
                // non-zero and the signs of r and b differ (agree).
                let a = self.v(op, olds[0])?;
                let b = self.v(op, olds[1])?;
                let ty = self.results_of(op)?[0];
                let q = self.val("llvm.sdiv", vec![a, b], ty);
                let r = self.val("llvm.srem", vec![a, b], ty);
                let zero = self.cst(Attribute::int(0, ty), ty);
                let one = self.cst(Attribute::int(1, ty), ty);
                let nz = self.icmp(1, r, zero);
                let rneg = self.icmp(2, r, zero);
                let bneg = self.icmp(2, b, zero);
                let differ = self.val("llvm.xor", vec![rneg, bneg], Type::i1());
                let cond = if name == "arith.floordivsi" {
                    differ
                } else {
                    let t = self.cst(Attribute::bool(true), Type::i1());
                    self.val("llvm.xor", vec![differ, t], Type::i1())
                };
                let adj = self.val("llvm.and", vec![nz, cond], Type::i1());
                let stepped = if name == "arith.floordivsi" {
                    self.val("llvm.sub", vec![q, one], ty)
                } else {
                    self.val("llvm.add", vec![q, one], ty)
                };
                let res = self.val("llvm.select", vec![adj, stepped, q], ty);
                self.map.insert(results[0], res);
            }
            "math.rsqrt" => {
                let a = self.v(op, olds[0])?;
                let ty = self.results_of(op)?[0];
                let s = self.val("llvm.intr.sqrt", vec![a], ty);
                let one = self.float_of(1.0, ty);
                let r = self.val("llvm.fdiv", vec![one, s], ty);
                self.map.insert(results[0], r);
            }
            "math.fpowi" => {
                // x^n, n an integer. A constant n (the usual case: torch-mlir's `pow(x, 3.0)`)
                // becomes multiplications by squaring, then one division for n < 0;
                // otherwise `pow` on n converted to the float type (exact for integral
                // exponents up to 2^24 in f32, and correct for negative bases).
                let a = self.v(op, olds[0])?;
                let n = self.v(op, olds[1])?;
                let ty = self.results_of(op)?[0];
                let k = self
                    .constant_attr(n)
                    .and_then(|v| v.as_i64())
                    .filter(|k| k.unsigned_abs() <= 1 << 16);
                let r = match k {
                    Some(k) => {
                        let (mut acc, mut base, mut e) = (None::<Value>, a, k.unsigned_abs());
                        while e > 0 {
                            if e & 1 == 1 {
                                acc = Some(match acc {
                                    Some(p) => self.val("llvm.fmul", vec![p, base], ty),
                                    None => base,
                                });
                            }
                            e >>= 1;
                            if e > 0 {
                                base = self.val("llvm.fmul", vec![base, base], ty);
                            }
                        }
                        match (acc, k < 0) {
                            (Some(pos), false) => pos,
                            (Some(pos), true) => {
                                let one = self.float_of(1.0, ty);
                                self.val("llvm.fdiv", vec![one, pos], ty)
                            }
                            (None, _) => self.float_of(1.0, ty),
                        }
                    }
                    None => {
                        let fe = self.val("llvm.sitofp", vec![n], ty);
                        self.val("llvm.intr.pow", vec![a, fe], ty)
                    }
                };
                self.map.insert(results[0], r);
            }
            "math.tanh" | "math.erf" | "math.atan" | "math.tan" | "math.log1p" | "math.expm1" => {
                let a = self.v(op, olds[0])?;
                let ty = self.results_of(op)?[0];
                let base = name.trim_start_matches("math.");
                let (f, t) = match ty.float_kind() {
                    Some(FloatKind::F32) => (format!("{base}f"), "f32"),
                    Some(FloatKind::F64) => (base.to_string(), "f64"),
                    _ => return Err(err(format!("{name} on {ty} has no libm function"))),
                };
                let r = self
                    .call(&f, &format!("{t} ({t})"), vec![a], Some(ty))
                    .ok_or_else(|| err("call has no result".into()))?;
                self.map.insert(results[0], r);
            }
            "vector.broadcast" | "vector.splat" => {
                let a = self.v(op, olds[0])?;
                let ty = self.results_of(op)?[0];
                let r = if self.ir.value_type(olds[0]).is_vector() {
                    if self.ir.value_type(olds[0]) != self.ir.value_type(results[0]) {
                        return Err(err(
                            "broadcasts between vector shapes are not supported".into()
                        ));
                    }
                    a
                } else {
                    self.splat(a, ty)
                };
                self.map.insert(results[0], r);
            }
            "vector.shuffle" => {
                let (a, b) = (self.v(op, olds[0])?, self.v(op, olds[1])?);
                let mask: Vec<i32> = self
                    .ir
                    .attr(op, "mask")
                    .and_then(|m| m.as_dense_i64s())
                    .ok_or_else(|| (op, "has no mask".to_string()))?
                    .iter()
                    .map(|x| *x as i32)
                    .collect();
                let rt = conv(self.ir.value_type(self.ir.result(op, 0)))
                    .ok_or_else(|| (op, "vector type".to_string()))?;
                let r = self.valp(
                    "llvm.shufflevector",
                    vec![a, b],
                    rt,
                    vec![("mask", Attribute::dense_i32_array(&mask))],
                );
                self.map.insert(self.ir.result(op, 0), r);
            }
            "vector.transfer_read" | "vector.transfer_write" => self.transfer(op)?,
            "gpu.thread_id" | "gpu.block_id" | "gpu.block_dim" | "gpu.grid_dim" => {
                // NVVM special registers, as MLIR's gpu-to-nvvm lowering reads them.
                let dim = match self.ir.attr(op, "dimension").map(|a| a.kind()) {
                    Some(AttrKind::Dialect { body, .. }) => {
                        if body.contains('y') {
                            "y"
                        } else if body.contains('z') {
                            "z"
                        } else {
                            "x"
                        }
                    }
                    _ => return Err(err("needs a dimension".into())),
                };
                let reg = match name {
                    "gpu.thread_id" => "tid",
                    "gpu.block_id" => "ctaid",
                    "gpu.block_dim" => "ntid",
                    _ => "nctaid",
                };
                let f = format!("llvm.nvvm.read.ptx.sreg.{reg}.{dim}");
                let r = self
                    .call(&f, "i32 ()", vec![], Some(Type::i32()))
                    .ok_or_else(|| err("no result".into()))?;
                let w = self.val("llvm.zext", vec![r], Type::i64());
                self.map.insert(results[0], w);
            }
            "gpu.barrier" => {
                self.call("llvm.nvvm.barrier0", "void ()", vec![], None);
            }
            "scf.for"
                if self.outline
                    && results.is_empty()
                    && self
                        .ir
                        .attr(op, ftuner_dialects::scf::PARALLEL_ATTR)
                        .is_some() =>
            {
                self.outline_parallel(op)?
            }
            "scf.for" => self.scf_for(op)?,
            "scf.if" => self.scf_if(op)?,
            "scf.index_switch" => self.scf_switch(op)?,
            "cf.assert" => {
                let c = self.v(op, olds[0])?;
                let msg = self
                    .ir
                    .attr(op, "msg")
                    .and_then(|a| a.as_str())
                    .unwrap_or("assertion failed")
                    .to_string();
                self.check(c, &msg);
            }
            "func.call" => {
                let callee = self
                    .ir
                    .attr(op, "callee")
                    .and_then(|a| a.as_symbol())
                    .ok_or_else(|| err("has no callee".into()))?
                    .to_string();
                let mut args = vec![];
                for v in &olds {
                    let t = self.ir.value_type(*v);
                    if t.is_memref() {
                        let d = self.desc(op, *v)?;
                        let fields = self.unpack(d.v, t.rank().unwrap_or(0));
                        args.extend(fields);
                    } else {
                        conv(t).ok_or_else(|| err(format!("argument of type {t}")))?;
                        args.push(self.v(op, *v)?);
                    }
                }
                let rtys = self.results_of(op)?;
                let ret = ret_type(&rtys).ok_or_else(|| err("result types".into()))?;
                let r = self.call_sym(&callee, args, ret);
                if self.may_fail.contains(&callee) {
                    self.propagate_failure();
                }
                match (rtys.len(), r) {
                    (1, Some(r)) => {
                        self.map.insert(results[0], r);
                    }
                    (_, Some(r)) => {
                        for (i, (res, t)) in results.iter().zip(rtys).enumerate() {
                            let x = self.extract(r, &[i as i64], t);
                            self.map.insert(*res, x);
                        }
                    }
                    _ => {}
                }
            }
            _ if name.starts_with("memref.") => self.memref(op)?,
            _ => return Err(err("cannot be converted to the llvm dialect".into())),
        }
        Ok(())
    }

    /// The float constant `x` of `ty`, splatted when `ty` is a vector.
    fn float_of(&mut self, x: f64, ty: Type) -> Value {
        let c = self.cst(Attribute::float(x, ty.element_type()), ty.element_type());
        if ty.is_vector() {
            self.splat(c, ty)
        } else {
            c
        }
    }

    fn splat(&mut self, x: Value, ty: Type) -> Value {
        let n = ty.shape().and_then(|s| s.first()).copied().unwrap_or(1) as usize;
        let p = self.val("llvm.mlir.poison", vec![], ty);
        let z = self.cst(Attribute::int(0, Type::i32()), Type::i32());
        let v = self.val("llvm.insertelement", vec![p, x, z], ty);
        self.valp(
            "llvm.shufflevector",
            vec![v, p],
            ty,
            vec![("mask", Attribute::dense_i32_array(&vec![0; n]))],
        )
    }

    fn transfer(&mut self, op: OpId) -> R<()> {
        let name = self.ir.name(op);
        let read = name == "vector.transfer_read";
        let err = |m: &str| (op, m.to_string());
        let olds = self.ir.operands(op).to_vec();
        let segs = self
            .ir
            .attr(op, "operandSegmentSizes")
            .and_then(|a| a.as_dense_i64s())
            .unwrap_or_default();
        if segs.get(3).copied().unwrap_or(0) != 0 {
            return Err(err("masked transfers are not supported"));
        }
        let inb = self
            .ir
            .attr(op, "in_bounds")
            .and_then(|a| a.as_array())
            .unwrap_or(&[]);
        if inb.is_empty() || !inb.iter().all(|b| matches!(b.kind(), AttrKind::Bool(true))) {
            return Err(err("only in-bounds transfers are supported"));
        }
        let (src_i, vec_ty) = if read {
            (0, self.ir.value_type(self.ir.result(op, 0)))
        } else {
            (1, self.ir.value_type(olds[0]))
        };
        let n_idx = segs.get(if read { 1 } else { 2 }).copied().unwrap_or(0) as usize;
        let idx_start = src_i + 1;
        if olds.len() < idx_start + n_idx || vec_ty.rank() != Some(1) {
            return Err(err("only 1-d vector transfers are supported"));
        }
        let d = self.desc(op, olds[src_i])?;
        let rank = d.ty.rank().unwrap_or(0);
        let map = self
            .ir
            .attr(op, "permutation_map")
            .and_then(|a| a.as_affine_map())
            .ok_or_else(|| err("has no permutation_map"))?;
        let along = match map.results.as_slice() {
            [AffineExpr::Dim(k)] if (*k as usize) < rank => *k as usize,
            _ => return Err(err("only single-dimension permutation maps are supported")),
        };
        let idx: Vec<Value> = olds[idx_start..idx_start + n_idx]
            .iter()
            .map(|v| self.v(op, *v))
            .collect::<R<_>>()?;
        let n = vec_ty.shape().and_then(|s| s.first()).copied().unwrap_or(0) as usize;
        let vt = conv(vec_ty).ok_or_else(|| err("vector type"))?;
        let elem = conv(vec_ty.element_type()).ok_or_else(|| err("element type"))?;
        let eb = elem_bytes(vec_ty.element_type()).unwrap_or(4);
        let contiguous =
            along + 1 == rank && layout_of(d.ty).is_some_and(|(s, _)| s.last() == Some(&1));
        if contiguous {
            let p = self.elem_ptr(&d, &idx);
            if read {
                let r = self.load(p, vt, eb);
                self.map.insert(self.ir.result(op, 0), r);
            } else {
                let v = self.v(op, olds[0])?;
                self.store(v, p, eb);
            }
            return Ok(());
        }
        if n >= 4 {
            // A strided vector: one gather (scatter) through a vector of lane pointers,
            // `base + lane * stride`. LLVM lowers it to the target's gather (AVX-512,
            // AVX2) or to scalar accesses; either way the IR stays one op per transfer,
            // not one per lane (a 64-lane NCHW accumulator read was 64 loads, 64
            // insertelements and their address arithmetic).
            let p0 = self.elem_ptr(&d, &idx);
            let lanes = Type::vector(vec![n as i64], Type::i64());
            let offs = match layout_of(d.ty).and_then(|(s, _)| s.get(along).copied()) {
                Some(st) if st != DYNAMIC => {
                    let vals = (0..n as i64)
                        .map(|l| Scalar::Int((l * st) as i128))
                        .collect();
                    self.cst(Attribute::dense(lanes, vals), lanes)
                }
                _ => {
                    let st = self.stride(&d, along);
                    let sv = self.splat(st, lanes);
                    let vals = (0..n as i64).map(|l| Scalar::Int(l as i128)).collect();
                    let iota = self.cst(Attribute::dense(lanes, vals), lanes);
                    self.val("llvm.mul", vec![sv, iota], lanes)
                }
            };
            let ptrs_ty = Type::vector(vec![n as i64], ptr());
            let ptrs = self.valp(
                "llvm.getelementptr",
                vec![p0, offs],
                ptrs_ty,
                vec![
                    ("elem_type", Attribute::type_attr(elem)),
                    (
                        "rawConstantIndices",
                        Attribute::dense_i32_array(&[i32::MIN]),
                    ),
                ],
            );
            let mty = Type::vector(vec![n as i64], Type::i1());
            let mask = self.cst(Attribute::dense(mty, vec![Scalar::Int(1)]), mty);
            let align = ("alignment", Attribute::int(eb as i128, Type::i32()));
            if read {
                let pass = self.val("llvm.mlir.poison", vec![], vt);
                let r = self.valp(
                    "llvm.intr.masked.gather",
                    vec![ptrs, mask, pass],
                    vt,
                    vec![align],
                );
                self.map.insert(self.ir.result(op, 0), r);
            } else {
                let v = self.v(op, olds[0])?;
                self.emit(
                    "llvm.intr.masked.scatter",
                    vec![v, ptrs, mask],
                    vec![],
                    vec![align],
                    vec![],
                );
            }
            return Ok(());
        }
        // One scalar access per lane.
        let mut acc = if read {
            Some(self.val("llvm.mlir.poison", vec![], vt))
        } else {
            None
        };
        let vin = if read {
            None
        } else {
            Some(self.v(op, olds[0])?)
        };
        for lane in 0..n {
            let mut at = idx.clone();
            let l = self.c64(lane as i64);
            at[along] = self.add(at[along], l);
            let p = self.elem_ptr(&d, &at);
            let li = self.cst(Attribute::int(lane as i128, Type::i32()), Type::i32());
            if let Some(a) = acc {
                let x = self.load(p, elem, eb);
                acc = Some(self.val("llvm.insertelement", vec![a, x, li], vt));
            } else if let Some(v) = vin {
                let x = self.val("llvm.extractelement", vec![v, li], elem);
                self.store(x, p, eb);
            }
        }
        if let Some(a) = acc {
            self.map.insert(self.ir.result(op, 0), a);
        }
        Ok(())
    }

    fn memref(&mut self, op: OpId) -> R<()> {
        let name = self.ir.name(op);
        let olds = self.ir.operands(op).to_vec();
        let err = |m: String| (op, m);
        let arr = |ir: &Ir, a: &str| {
            ir.attr(op, a)
                .and_then(|x| x.as_dense_i64s())
                .unwrap_or_default()
        };
        match name {
            "memref.alloc" | "memref.alloca" => {
                let ty = self.ir.value_type(self.ir.result(op, 0));
                if !is_identity_layout(ty) {
                    return Err(err("allocations need an identity layout".into()));
                }
                let shape = ty.shape().unwrap_or(&[]).to_vec();
                let mut dyns = olds.iter();
                let mut sizes = vec![];
                for s in &shape {
                    sizes.push(if *s == DYNAMIC {
                        let v = *dyns
                            .next()
                            .ok_or_else(|| err("missing dynamic size".into()))?;
                        self.v(op, v)?
                    } else {
                        self.c64(*s)
                    });
                }
                let mut strides = vec![self.c64(1); sizes.len()];
                for i in (0..sizes.len().saturating_sub(1)).rev() {
                    strides[i] = self.mul(strides[i + 1], sizes[i + 1]);
                }
                let total = match sizes.first() {
                    Some(s) => self.mul(strides[0], *s),
                    None => self.c64(1),
                };
                let eb = elem_bytes(ty.element_type())
                    .ok_or_else(|| err(format!("element type of {ty}")))?;
                let ebv = self.c64(eb);
                let bytes = self.mul(total, ebv);
                let checked = !olds.is_empty();
                if checked {
                    // Sizes from run time: none negative, the byte count representable
                    // (MLIR leaves both undefined; here they are a failed check).
                    let ok = self.size_ok(&sizes, eb);
                    self.check(
                        ok,
                        &format!("'{name}' op a size is negative or the {ty} is too large"),
                    );
                }
                // aligned_alloc needs a multiple of the alignment.
                let c63 = self.c64(63);
                let up = self.add(bytes, c63);
                let mask = self.c64(!63);
                let rounded = self.val("llvm.and", vec![up, mask], Type::i64());
                let align = self.c64(64);
                let p = self
                    .call(
                        "aligned_alloc",
                        "ptr (i64, i64)",
                        vec![align, rounded],
                        Some(ptr()),
                    )
                    .ok_or_else(|| err("no pointer".into()))?;
                if checked {
                    let null = self.val("llvm.mlir.zero", vec![], ptr());
                    let got = self.icmp(1, p, null);
                    let zero = self.c64(0);
                    let empty = self.icmp(0, rounded, zero);
                    let ok = self.val("llvm.or", vec![got, empty], Type::i1());
                    self.check(ok, &format!("'{name}' op out of memory allocating {ty}"));
                }
                let zero = self.c64(0);
                let d = self.pack(p, p, zero, &sizes, &strides);
                self.map.insert(self.ir.result(op, 0), d);
            }
            "memref.dealloc" => {
                let d = self.desc(op, olds[0])?;
                let p = self.extract(d.v, &[0], ptr());
                self.call("free", "void (ptr)", vec![p], None);
            }
            "memref.dim" => {
                let d = self.desc(op, olds[0])?;
                let i = self
                    .ir
                    .defining_op(olds[1])
                    .filter(|c| self.ir.name(*c) == "arith.constant")
                    .and_then(|c| self.ir.attr(c, "value"))
                    .and_then(|a| a.as_i64())
                    .ok_or_else(|| err("needs a constant dimension index".into()))?;
                let rank = d.ty.rank().unwrap_or(0);
                if i < 0 || i as usize >= rank {
                    return Err(err(format!("dimension {i} out of range")));
                }
                let s = self.size(&d, i as usize);
                self.map.insert(self.ir.result(op, 0), s);
            }
            "memref.prefetch" => {
                let d = self.desc(op, olds[0])?;
                let idx = olds[1..]
                    .iter()
                    .map(|v| self.v(op, *v))
                    .collect::<R<Vec<_>>>()?;
                let p = self.elem_ptr(&d, &idx);
                let flag = |k: &str| {
                    matches!(
                        self.ir.attr(op, k).map(|a| a.kind().clone()),
                        Some(AttrKind::Bool(true))
                    )
                };
                let hint = self.ir.attr(op, "localityHint").and_then(|a| a.as_i64());
                let i32a = |v: i64| Attribute::int(v as i128, Type::i32());
                let props = vec![
                    ("rw", i32a(flag("isWrite") as i64)),
                    ("hint", i32a(hint.unwrap_or(3))),
                    ("cache", i32a(flag("isDataCache") as i64)),
                ];
                self.emit("llvm.intr.prefetch", vec![p], vec![], props, vec![]);
            }
            "memref.load" | "memref.store" => {
                let (m, first) = if name == "memref.load" {
                    (0, 1)
                } else {
                    (1, 2)
                };
                let d = self.desc(op, olds[m])?;
                let idx = olds[first..]
                    .iter()
                    .map(|v| self.v(op, *v))
                    .collect::<R<Vec<_>>>()?;
                let p = self.elem_ptr(&d, &idx);
                let et = d.ty.element_type();
                let eb = elem_bytes(et).unwrap_or(1);
                if name == "memref.load" {
                    let ty = conv(et).ok_or_else(|| err(format!("element type {et}")))?;
                    let r = self.load(p, ty, eb);
                    self.map.insert(self.ir.result(op, 0), r);
                } else {
                    let v = self.v(op, olds[0])?;
                    self.store(v, p, eb);
                }
            }
            "memref.cast" => {
                let d = self.desc(op, olds[0])?;
                self.map.insert(self.ir.result(op, 0), d.v);
            }
            "memref.get_global" => {
                let ty = self.ir.value_type(self.ir.result(op, 0));
                let g = self
                    .ir
                    .attr(op, "name")
                    .and_then(|a| a.as_symbol())
                    .ok_or_else(|| err("has no symbol".into()))?
                    .to_string();
                let p = self.valp(
                    "llvm.mlir.addressof",
                    vec![],
                    ptr(),
                    vec![("global_name", Attribute::symbol_ref(g))],
                );
                // As MLIR does: a recognisable bad pointer as the allocated pointer, so a
                // free of a global fails loudly.
                let bad = self.c64(0xdead_beef);
                let ap = self.val("llvm.inttoptr", vec![bad], ptr());
                let shape = ty.shape().unwrap_or(&[]).to_vec();
                let (st, _) = layout_of(ty).ok_or_else(|| err("layout".into()))?;
                let sizes: Vec<Value> = shape.iter().map(|s| self.c64(*s)).collect();
                let strides: Vec<Value> = st.iter().map(|s| self.c64(*s)).collect();
                let zero = self.c64(0);
                let d = self.pack(ap, p, zero, &sizes, &strides);
                self.map.insert(self.ir.result(op, 0), d);
            }
            "memref.subview" => {
                let d = self.desc(op, olds[0])?;
                let rank = d.ty.rank().unwrap_or(0);
                let segs = arr(self.ir, "operandSegmentSizes");
                let (no, ns) = (
                    segs.get(1).copied().unwrap_or(0) as usize,
                    segs.get(2).copied().unwrap_or(0) as usize,
                );
                let mixed = |cv: &mut Self, stat: Vec<i64>, dynv: &[Value]| -> R<Vec<Value>> {
                    let mut k = 0;
                    let mut out = vec![];
                    for s in stat {
                        if s == DYNAMIC {
                            let v = *dynv.get(k).ok_or((op, "missing operand".to_string()))?;
                            k += 1;
                            out.push(cv.v(op, v)?);
                        } else {
                            out.push(cv.c64(s));
                        }
                    }
                    Ok(out)
                };
                if olds.len() < 1 + no + ns {
                    return Err(err("operand segments do not match".into()));
                }
                let offs = mixed(self, arr(self.ir, "static_offsets"), &olds[1..1 + no])?;
                let sizes = mixed(
                    self,
                    arr(self.ir, "static_sizes"),
                    &olds[1 + no..1 + no + ns],
                )?;
                let steps = mixed(self, arr(self.ir, "static_strides"), &olds[1 + no + ns..])?;
                if offs.len() != rank || sizes.len() != rank || steps.len() != rank {
                    return Err(err("offsets, sizes and strides must match the rank".into()));
                }
                let mut off = self.offset(&d);
                let mut dims = vec![];
                for i in 0..rank {
                    let s = self.stride(&d, i);
                    let t = self.mul(offs[i], s);
                    off = self.add(off, t);
                    let st = self.mul(s, steps[i]);
                    dims.push((sizes[i], st, arr(self.ir, "static_sizes").get(i).copied()));
                }
                let rty = self.ir.value_type(self.ir.result(op, 0));
                let want = rty.shape().unwrap_or(&[]).to_vec();
                if want.len() < dims.len() {
                    let sz: Vec<i64> = dims.iter().map(|x| x.2.unwrap_or(DYNAMIC)).collect();
                    let keep = ftuner_ir::rank_reduction_keep(&sz, &want)
                        .ok_or_else(|| err("cannot match the rank-reduced result".into()))?;
                    dims = dims
                        .into_iter()
                        .zip(keep)
                        .filter_map(|(d, k)| k.then_some(d))
                        .collect();
                }
                if dims.len() != want.len() {
                    return Err(err("cannot match the rank-reduced result".into()));
                }
                let a = self.extract(d.v, &[0], ptr());
                let al = self.extract(d.v, &[1], ptr());
                let sz: Vec<Value> = dims.iter().map(|x| x.0).collect();
                let st: Vec<Value> = dims.iter().map(|x| x.1).collect();
                let nd = self.pack(a, al, off, &sz, &st);
                self.map.insert(self.ir.result(op, 0), nd);
            }
            "memref.collapse_shape" | "memref.expand_shape" | "memref.reshape" => {
                let d = self.desc(op, olds[0])?;
                let rank = d.ty.rank().unwrap_or(0);
                let rty = self.ir.value_type(self.ir.result(op, 0));
                let groups = ftuner_dialects::memref::reassociation(self.ir, op);
                let (sizes, strides) = match name {
                    "memref.collapse_shape" => {
                        let mut sz = vec![];
                        let mut st = vec![];
                        for g in &groups {
                            let last = *g.last().ok_or_else(|| err("empty group".into()))?;
                            if last >= rank {
                                return Err(err("reassociation exceeds the rank".into()));
                            }
                            let mut p = self.c64(1);
                            for i in g {
                                let s = self.size(&d, *i);
                                p = self.mul(p, s);
                            }
                            sz.push(p);
                            st.push(self.stride(&d, last));
                        }
                        (sz, st)
                    }
                    "memref.expand_shape" => {
                        let stat = arr(self.ir, "static_output_shape");
                        let mut k = 1;
                        let mut sz = vec![];
                        for s in &stat {
                            sz.push(if *s == DYNAMIC {
                                let v = *olds.get(k).ok_or_else(|| err("missing size".into()))?;
                                k += 1;
                                self.v(op, v)?
                            } else {
                                self.c64(*s)
                            });
                        }
                        let mut st = vec![self.c64(0); sz.len()];
                        for (src, g) in groups.iter().enumerate() {
                            if src >= rank || g.iter().any(|x| *x >= sz.len()) {
                                return Err(err("reassociation does not match".into()));
                            }
                            let mut s = self.stride(&d, src);
                            for x in g.iter().rev() {
                                st[*x] = s;
                                s = self.mul(s, sz[*x]);
                            }
                        }
                        (sz, st)
                    }
                    _ => {
                        let sd = self.desc(op, olds[1])?;
                        let n = rty.rank().unwrap_or(0);
                        let et = sd.ty.element_type();
                        let mut sz = vec![];
                        for i in 0..n {
                            let iv = self.c64(i as i64);
                            let p = self.elem_ptr(&sd, &[iv]);
                            let x = self.load(
                                p,
                                conv(et).unwrap_or(Type::i64()),
                                elem_bytes(et).unwrap_or(8),
                            );
                            let x = match et.int_width() {
                                Some(w) if w < 64 => self.val("llvm.sext", vec![x], Type::i64()),
                                _ => x,
                            };
                            sz.push(x);
                        }
                        let mut st = vec![self.c64(1); n];
                        for i in (0..n.saturating_sub(1)).rev() {
                            st[i] = self.mul(st[i + 1], sz[i + 1]);
                        }
                        (sz, st)
                    }
                };
                let a = self.extract(d.v, &[0], ptr());
                let al = self.extract(d.v, &[1], ptr());
                let off = self.offset(&d);
                let nd = self.pack(a, al, off, &sizes, &strides);
                self.map.insert(self.ir.result(op, 0), nd);
            }
            "memref.copy" => {
                let s = self.desc(op, olds[0])?;
                let t = self.desc(op, olds[1])?;
                let rank = s.ty.rank().unwrap_or(0);
                if is_identity_layout(s.ty) && is_identity_layout(t.ty) {
                    let mut n = self.c64(1);
                    for i in 0..rank {
                        let x = self.size(&s, i);
                        n = self.mul(n, x);
                    }
                    let eb = self.c64(elem_bytes(s.ty.element_type()).unwrap_or(1));
                    let bytes = self.mul(n, eb);
                    let dp = self.extract(t.v, &[1], ptr());
                    let sp = self.extract(s.v, &[1], ptr());
                    self.emit(
                        "llvm.intr.memcpy",
                        vec![dp, sp, bytes],
                        vec![],
                        vec![("isVolatile", Attribute::bool(false))],
                        vec![],
                    );
                } else {
                    let ext: Vec<Value> = (0..rank).map(|i| self.size(&s, i)).collect();
                    let et = s.ty.element_type();
                    let ty = conv(et).ok_or_else(|| err(format!("element type {et}")))?;
                    let eb = elem_bytes(et).unwrap_or(1);
                    let mut body = |cv: &mut Self, ivs: &[Value]| -> R<()> {
                        let p = cv.elem_ptr(&s, ivs);
                        let x = cv.load(p, ty, eb);
                        let q = cv.elem_ptr(&t, ivs);
                        cv.store(x, q, eb);
                        Ok(())
                    };
                    self.loop_nest(&ext, &mut body, &mut vec![])?;
                }
            }
            _ => return Err(err("cannot be converted to the llvm dialect".into())),
        }
        Ok(())
    }

    /// An `scf.for` marked `ftuner.parallel` (no results): its body becomes
    /// `void NAME_parK(ptr ctx, i64 lo, i64 hi)` running iterations `lo .. hi`, the values
    /// it uses from outside stored in a struct on the stack that `ctx` points to, and the
    /// loop becomes `ftuner_rt_parallel_for(@NAME_parK, ctx, trip count)`. Constants are
    /// made again inside rather than stored.
    /// A converter for the body of an outlined function (block `cur` of `region`): no
    /// further outlining, the module's declarations and strings shared.
    fn inner(&mut self, cur: BlockId, region: RegionId) -> Cv<'_> {
        Cv {
            ir: &mut *self.ir,
            map: FxHashMap::default(),
            consts: FxHashMap::default(),
            cur,
            region,
            loc: self.loc,
            decls: &mut *self.decls,
            strings: &mut *self.strings,
            outline: false,
            outlined: &mut *self.outlined,
            fname: self.fname,
            ret: None,
            may_fail: self.may_fail,
            abort_on_failure: self.abort_on_failure,
        }
    }

    fn outline_parallel(&mut self, op: OpId) -> R<()> {
        let olds = self.ir.operands(op).to_vec();
        if olds.len() != 3 {
            return Err((op, "a parallel loop carries no values".into()));
        }
        let (lb, ub, step) = (
            self.v(op, olds[0])?,
            self.v(op, olds[1])?,
            self.v(op, olds[2])?,
        );
        self.step_check(step);
        let ob = self.body(op)?;
        // Values used inside, defined outside: the old value and its conversion.
        let mut live: Vec<(Value, Value)> = vec![];
        let mut seen = FxHashSet::default();
        let mut inner = vec![];
        self.ir.walk_pre(op, &mut |o| inner.push(o));
        for o in inner.into_iter().skip(1) {
            for x in self.ir.operands(o).to_vec() {
                if !self.ir.defined_inside(x, op) && seen.insert(x) {
                    live.push((x, self.v(o, x)?));
                }
            }
        }
        // lb and step travel too (the body computes iv = lb + i * step). Constants are
        // made again inside; everything else is a field of the context.
        let mut captured: Vec<Value> = vec![];
        let mut sources: FxHashMap<Value, Source> = FxHashMap::default();
        for c in live.iter().map(|(_, c)| *c).chain([lb, step]) {
            if sources.contains_key(&c) {
                continue;
            }
            let src = match (self.known(c), self.constant_attr(c)) {
                (Some(k), _) => Source::Index(k),
                (None, Some(a)) => Source::Const(a, self.ir.value_type(c)),
                (None, None) => {
                    captured.push(c);
                    Source::Field(captured.len() - 1)
                }
            };
            sources.insert(c, src);
        }
        let tys: Vec<Type> = captured.iter().map(|c| self.ir.value_type(*c)).collect();
        let sty = llvm_ty(&format!(
            "struct<({})>",
            tys.iter().map(|t| text(*t)).collect::<Vec<_>>().join(", ")
        ));
        // The outlined body. Buffers it captures that nothing else it reaches can touch
        // (the one capture of a fresh allocation) come in as `noalias` pointers of the
        // function that runs the loop, which a wrapper with the pool's signature calls:
        // in the enclosing function LLVM knew a fresh allocation aliases nothing, and
        // through the context struct it would not (every store to an output could change
        // any input: the body re-loads and vectorises less).
        let safe = aliasing::noalias_fields(self.ir, &live, &captured);
        let name = format!("{}_par{}", self.fname, pool_bodies(self.ir, self.outlined));
        let loop_name = if safe.is_empty() {
            name.clone()
        } else {
            format!("{name}_noalias")
        };
        let mut fty = String::from("void (ptr, i64, i64");
        for _ in &safe {
            fty.push_str(", ptr");
        }
        fty.push(')');
        let nf = new_func(self.ir, &loop_name, &fty, self.loc, true);
        if !safe.is_empty() {
            let mut attrs = vec![Attribute::dictionary(vec![]); 3];
            attrs.extend(safe.iter().map(|_| {
                Attribute::dictionary(vec![("llvm.noalias".to_string(), Attribute::unit())])
            }));
            self.ir
                .set_prop(nf, "arg_attrs", Some(Attribute::array(attrs)));
        }
        self.outlined.push(nf);
        let region = self.ir.regions_of(nf)[0];
        let mut params = vec![ptr(), Type::i64(), Type::i64()];
        params.extend(safe.iter().map(|_| ptr()));
        let entry = self.ir.append_block(region, &params);
        let fargs = self.ir.block_args(entry).to_vec();
        let mut cv = self.inner(entry, region);
        let mut fields: Vec<Value> = if captured.is_empty() {
            vec![]
        } else {
            let st = cv.load(fargs[0], sty, 8);
            tys.iter()
                .enumerate()
                .map(|(i, t)| cv.extract(st, &[i as i64], *t))
                .collect()
        };
        // The noalias buffers' descriptors address through the parameters.
        for (j, i) in safe.iter().enumerate() {
            fields[*i] = cv.insert(fields[*i], fargs[3 + j], &[1]);
        }
        // In the order of first use (the output does not depend on hashing).
        let mut inside: FxHashMap<Value, Value> = FxHashMap::default();
        for c in live.iter().map(|(_, c)| *c).chain([lb, step]) {
            if inside.contains_key(&c) {
                continue;
            }
            let v = match &sources[&c] {
                Source::Field(i) => fields[*i],
                Source::Index(k) => cv.c64(*k),
                Source::Const(a, t) => cv.cst(*a, *t),
            };
            inside.insert(c, v);
        }
        for (old, c) in &live {
            cv.map.insert(*old, inside[c]);
        }
        let (lb_in, step_in) = (inside[&lb], inside[&step]);
        let header = cv.block(&[Type::i64()]);
        let body = cv.block(&[]);
        let exit = cv.block(&[]);
        cv.br(header, vec![fargs[1]]);
        cv.cur = header;
        let i = cv.ir.block_args(header)[0];
        let c = cv.icmp(2, i, fargs[2]);
        cv.cond_br(c, body, vec![], exit, vec![]);
        cv.cur = body;
        let off = cv.mul(i, step_in);
        let iv = cv.add(lb_in, off);
        let old_iv = cv.ir.block_args(ob)[0];
        cv.map.insert(old_iv, iv);
        cv.ops(ob)?;
        cv.loc = cv.ir.loc(op);
        let one = cv.c64(1);
        let next = cv.val("llvm.add", vec![i, one], Type::i64());
        cv.br(header, vec![next]);
        cv.cur = exit;
        cv.emit("llvm.return", vec![], vec![], vec![], vec![]);
        if !safe.is_empty() {
            // The wrapper the pool calls: the noalias buffers' aligned pointers, then the loop.
            let wf = new_func(self.ir, &name, "void (ptr, i64, i64)", self.loc, true);
            self.outlined.push(wf);
            let region = self.ir.regions_of(wf)[0];
            let entry = self
                .ir
                .append_block(region, &[ptr(), Type::i64(), Type::i64()]);
            let mut args = self.ir.block_args(entry).to_vec();
            let mut w = self.inner(entry, region);
            let st = w.load(args[0], sty, 8);
            for i in &safe {
                args.push(w.extract(st, &[*i as i64, 1], ptr()));
            }
            w.call_sym(&loop_name, args, None);
            w.emit("llvm.return", vec![], vec![], vec![], vec![]);
        }
        // At the loop: the context, the trip count, the call.
        self.loc = self.ir.loc(op);
        let ctx = if captured.is_empty() {
            self.val("llvm.mlir.zero", vec![], ptr())
        } else {
            let mut agg = self.val("llvm.mlir.undef", vec![], sty);
            for (i, c) in captured.iter().enumerate() {
                agg = self.insert(agg, *c, &[i as i64]);
            }
            let one = self.c64(1);
            let p = self.valp(
                "llvm.alloca",
                vec![one],
                ptr(),
                vec![
                    ("elem_type", Attribute::type_attr(sty)),
                    ("alignment", Attribute::i64(8)),
                ],
            );
            self.store(agg, p, 8);
            p
        };
        let fp = self.valp(
            "llvm.mlir.addressof",
            vec![],
            ptr(),
            vec![("global_name", Attribute::symbol_ref(&name))],
        );
        // n = ub > lb ? (ub - lb + step - 1) / step : 0 (a positive step, as scf.for's).
        let span = self.val("llvm.sub", vec![ub, lb], Type::i64());
        let one = self.c64(1);
        let sm1 = self.val("llvm.sub", vec![step, one], Type::i64());
        let num = self.val("llvm.add", vec![span, sm1], Type::i64());
        let q = self.val("llvm.sdiv", vec![num, step], Type::i64());
        let pos = self.icmp(4, ub, lb);
        let zero = self.c64(0);
        let n = self.val("llvm.select", vec![pos, q, zero], Type::i64());
        self.call(PARALLEL_FOR, "void (ptr, ptr, i64)", vec![fp, ctx, n], None);
        if fails_inside(self.ir, op, self.may_fail) {
            self.propagate_failure();
        }
        Ok(())
    }

    /// The entry block of `op`'s (first) region.
    fn body(&self, op: OpId) -> R<BlockId> {
        self.ir
            .regions_of(op)
            .first()
            .and_then(|r| self.ir.region_entry(*r))
            .ok_or((op, "has no body".into()))
    }

    /// The value of `c` when an `llvm.mlir.constant` defines it.
    fn constant_attr(&self, c: Value) -> Option<Attribute> {
        self.ir
            .defining_op(c)
            .filter(|d| self.ir.name(*d) == "llvm.mlir.constant")
            .and_then(|d| self.ir.attr(d, "value"))
    }

    fn scf_for(&mut self, op: OpId) -> R<()> {
        let olds = self.ir.operands(op).to_vec();
        if olds.len() < 3 {
            return Err((op, "needs bounds and a step".into()));
        }
        let lb = self.v(op, olds[0])?;
        let ub = self.v(op, olds[1])?;
        let step = self.v(op, olds[2])?;
        self.step_check(step);
        let inits = olds[3..]
            .iter()
            .map(|v| self.v(op, *v))
            .collect::<R<Vec<_>>>()?;
        let mut tys = vec![Type::i64()];
        tys.extend(self.results_of(op)?);
        let header = self.block(&tys);
        let body = self.block(&[]);
        let exit = self.block(&[]);
        let mut args = vec![lb];
        args.extend(inits);
        self.br(header, args);
        self.cur = header;
        let hargs = self.ir.block_args(header).to_vec();
        let unsigned = self.ir.attr(op, "unsignedCmp").is_some();
        let c = self.icmp(if unsigned { 6 } else { 2 }, hargs[0], ub);
        self.cond_br(c, body, vec![], exit, vec![]);
        self.cur = body;
        let ob = self.body(op)?;
        for (a, h) in self.ir.block_args(ob).to_vec().into_iter().zip(&hargs) {
            self.map.insert(a, *h);
        }
        let term = self.ops(ob)?.ok_or((op, "body has no scf.yield".into()))?;
        let ys = self
            .ir
            .operands(term)
            .iter()
            .map(|v| self.v(term, *v))
            .collect::<R<Vec<_>>>()?;
        self.loc = self.ir.loc(op);
        let next = self.val("llvm.add", vec![hargs[0], step], Type::i64());
        let mut back = vec![next];
        back.extend(ys);
        self.br(header, back);
        self.cur = exit;
        for (r, h) in self.ir.results(op).to_vec().into_iter().zip(&hargs[1..]) {
            self.map.insert(r, *h);
        }
        Ok(())
    }

    /// Convert region `r` into a new block that ends branching to `merge` with its yields.
    fn branch(&mut self, op: OpId, r: Option<RegionId>, merge: BlockId) -> R<BlockId> {
        let b = self.block(&[]);
        self.cur = b;
        let yields = match r.and_then(|r| self.ir.region_entry(r)) {
            Some(ob) => {
                let term = self.ops(ob)?;
                match term {
                    Some(t) => self
                        .ir
                        .operands(t)
                        .iter()
                        .map(|v| self.v(t, *v))
                        .collect::<R<Vec<_>>>()?,
                    None => vec![],
                }
            }
            None => vec![],
        };
        self.loc = self.ir.loc(op);
        self.br(merge, yields);
        Ok(b)
    }

    /// Continue in `merge`, whose arguments are `op`'s results.
    fn continue_at(&mut self, op: OpId, merge: BlockId) {
        self.cur = merge;
        for (r, a) in self
            .ir
            .results(op)
            .to_vec()
            .into_iter()
            .zip(self.ir.block_args(merge).to_vec())
        {
            self.map.insert(r, a);
        }
    }

    fn scf_if(&mut self, op: OpId) -> R<()> {
        let c = self.v(op, self.ir.operand(op, 0))?;
        let tys = self.results_of(op)?;
        let regions = self.ir.regions_of(op).to_vec();
        let start = self.cur;
        let merge = self.block(&tys);
        let then_b = self.branch(op, regions.first().copied(), merge)?;
        let else_b = self.branch(op, regions.get(1).copied(), merge)?;
        self.cur = start;
        self.cond_br(c, then_b, vec![], else_b, vec![]);
        self.continue_at(op, merge);
        Ok(())
    }

    fn scf_switch(&mut self, op: OpId) -> R<()> {
        let sel = self.v(op, self.ir.operand(op, 0))?;
        let cases = self
            .ir
            .attr(op, "cases")
            .and_then(|a| a.as_dense_i64s())
            .ok_or((op, "has no cases".into()))?;
        let tys = self.results_of(op)?;
        let regions = self.ir.regions_of(op).to_vec();
        if regions.len() != cases.len() + 1 {
            return Err((op, "needs one region per case and a default".into()));
        }
        let start = self.cur;
        let merge = self.block(&tys);
        let default = self.branch(op, Some(regions[0]), merge)?;
        let mut targets = vec![];
        for r in &regions[1..] {
            targets.push(self.branch(op, Some(*r), merge)?);
        }
        // A chain of compares; LLVM turns it into a switch or a jump table.
        self.cur = start;
        for (k, t) in cases.iter().zip(targets) {
            let kv = self.c64(*k);
            let c = self.icmp(0, sel, kv);
            let next = self.block(&[]);
            self.cond_br(c, t, vec![], next, vec![]);
            self.cur = next;
        }
        self.br(default, vec![]);
        self.continue_at(op, merge);
        Ok(())
    }
}

/// The expanded LLVM parameter types of a function's inputs.
fn expand_params(inputs: &[Type]) -> Option<Vec<Type>> {
    let mut out = vec![];
    for t in inputs {
        if t.is_memref() {
            let r = t.rank()?;
            out.extend([ptr(), ptr(), Type::i64()]);
            out.extend(std::iter::repeat_n(Type::i64(), 2 * r));
        } else {
            out.push(conv(*t)?);
        }
    }
    Some(out)
}

fn ret_type(results: &[Type]) -> Option<Option<Type>> {
    let conv_all: Option<Vec<Type>> = results.iter().map(|t| conv(*t)).collect();
    let c = conv_all?;
    Some(match c.len() {
        0 => None,
        1 => Some(c[0]),
        _ => Some(llvm_ty(&format!(
            "struct<({})>",
            c.iter().map(|t| text(*t)).collect::<Vec<_>>().join(", ")
        ))),
    })
}

fn func_type_body(ret: Option<Type>, params: &[Type]) -> String {
    format!(
        "{} ({})",
        ret.map_or("void".to_string(), text),
        params
            .iter()
            .map(|t| text(*t))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// How many of the outlined functions the pool calls (a loop taking `noalias` buffers is
/// a second function, called by its wrapper).
fn pool_bodies(ir: &Ir, outlined: &[OpId]) -> usize {
    outlined
        .iter()
        .filter(|f| ir.prop(**f, "arg_attrs").is_none())
        .count()
}

fn new_func(ir: &mut Ir, name: &str, fty: &str, loc: Attribute, private: bool) -> OpId {
    let mut s = OpSpec::new(intern_name("llvm.func"), loc)
        .prop("sym_name", Attribute::string(name))
        .prop(
            "function_type",
            Attribute::type_attr(llvm_ty(&format!("func<{fty}>"))),
        )
        .regions(1);
    if private {
        s = s.prop("linkage", Attribute::dialect("llvm", "linkage<private>"));
    }
    ir.create_op(s)
}

/// Convert one `func.func`; returns the new ops to put in its place (the function, its
/// C interface, the bodies of its parallel loops). `parallel`: outline loops marked
/// `ftuner.parallel`.
fn convert_func(
    ir: &mut Ir,
    f: OpId,
    decls: &mut BTreeMap<String, String>,
    strings: &mut Vec<(String, String)>,
    parallel: bool,
    may_fail: &FxHashSet<String>,
    abort_on_failure: bool,
) -> R<(Vec<OpId>, u64)> {
    let name = ir
        .symbol_name(f)
        .ok_or((f, "has no name".to_string()))?
        .to_string();
    let fty = ir
        .attr(f, "function_type")
        .and_then(|a| a.as_type())
        .ok_or((f, "has no function_type".to_string()))?;
    let ins = fty.function_inputs().to_vec();
    let outs = fty.function_results().to_vec();
    let params = expand_params(&ins).ok_or((f, "has an argument LLVM cannot hold".to_string()))?;
    let ret = ret_type(&outs).ok_or((f, "has a result LLVM cannot hold".to_string()))?;
    let loc = ir.loc(f);
    let private = ir.attr(f, "sym_visibility").and_then(|a| a.as_str()) == Some("private");
    let body_region = ir.regions_of(f).first().copied();
    let old_entry = body_region.and_then(|r| ir.region_entry(r));
    let nf = new_func(ir, &name, &func_type_body(ret, &params), loc, false);
    if private && old_entry.is_some() {
        ir.set_prop(
            nf,
            "linkage",
            Some(Attribute::dialect("llvm", "linkage<private>")),
        );
    }
    // A noalias memref argument: its allocated and aligned pointers are noalias.
    if let Some(attrs) = aliasing::expanded_arg_attrs(ir, f, &ins) {
        ir.set_prop(nf, "arg_attrs", Some(attrs));
    }
    if ir.attr(f, "ftuner.noinline").is_some() {
        ir.set_prop(
            nf,
            "passthrough",
            Some(Attribute::array(vec![Attribute::string("noinline")])),
        );
    }
    let Some(old_entry) = old_entry else {
        return Ok((vec![nf], 0));
    };
    if ir
        .region(body_region.unwrap_or_else(|| ir.regions_of(f)[0]))
        .blocks
        .len()
        != 1
    {
        return Err((
            f,
            "functions with several blocks are not converted yet".into(),
        ));
    }
    let region = ir.regions_of(nf)[0];
    let entry = ir.append_block(region, &params);
    let pargs = ir.block_args(entry).to_vec();
    let mut outlined = vec![];
    let mut cv = Cv {
        ir,
        map: FxHashMap::default(),
        consts: FxHashMap::default(),
        cur: entry,
        region,
        loc,
        decls,
        strings,
        outline: parallel,
        outlined: &mut outlined,
        fname: &name,
        ret,
        may_fail,
        abort_on_failure,
    };
    // Rebuild descriptors from the expanded arguments.
    let mut k = 0;
    for (a, t) in cv.ir.block_args(old_entry).to_vec().into_iter().zip(&ins) {
        if t.is_memref() {
            let r = t.rank().unwrap_or(0);
            let sizes = pargs[k + 3..k + 3 + r].to_vec();
            let strides = pargs[k + 3 + r..k + 3 + 2 * r].to_vec();
            let d = cv.pack(pargs[k], pargs[k + 1], pargs[k + 2], &sizes, &strides);
            cv.map.insert(a, d);
            k += 3 + 2 * r;
        } else {
            cv.map.insert(a, pargs[k]);
            k += 1;
        }
    }
    let term = cv
        .ops(old_entry)?
        .ok_or((f, "has no func.return".to_string()))?;
    let vals = cv
        .ir
        .operands(term)
        .to_vec()
        .into_iter()
        .map(|v| cv.v(term, v))
        .collect::<R<Vec<_>>>()?;
    cv.loc = cv.ir.loc(term);
    let rv = match (ret, vals.len()) {
        (None, _) => vec![],
        (Some(_), 1) => vals,
        (Some(rt), _) => {
            let mut s = cv.val("llvm.mlir.undef", vec![], rt);
            for (i, v) in vals.into_iter().enumerate() {
                s = cv.insert(s, v, &[i as i64]);
            }
            vec![s]
        }
    };
    cv.emit("llvm.return", rv, vec![], vec![], vec![]);
    let mut out = vec![nf];
    if cv.ir.name(f) == "gpu.func" {
        // A kernel: NVPTX's kernel calling convention, no host C interface.
        if cv.ir.attr(f, "gpu.kernel").is_some() {
            cv.ir.set_attr(nf, "nvvm.kernel", Some(Attribute::unit()));
        }
    } else if !private {
        out.push(ciface(cv.ir, &name, &ins, &outs, ret, &params, loc));
    }
    let n = pool_bodies(ir, &outlined) as u64;
    out.extend(outlined);
    Ok((out, n))
}

fn array_type(shape: &[i64], elem: Type) -> String {
    let mut t = text(conv(elem).unwrap_or(elem));
    for d in shape.iter().rev() {
        t = format!("array<{d} x {t}>");
    }
    t
}

pub struct ConvertToLlvmPass {
    opts: PassOptions,
    funcs: u64,
    outlined: u64,
}

impl Default for ConvertToLlvmPass {
    fn default() -> Self {
        ConvertToLlvmPass {
            opts: PassOptions::new(vec![
                OptionSpec {
                    name: "parallel",
                    kind: OptionKind::Bool,
                    default: "true",
                    description: "Outline the outermost scf.for marked 'ftuner.parallel' of each nest into a function run by ftuner_rt_parallel_for(body, ctx, n) (the runtime's thread pool); false keeps every loop serial and the module free of runtime calls",
                },
                OptionSpec {
                    name: "abort-on-failure",
                    kind: OptionKind::Bool,
                    default: "false",
                    description: "A failed run-time check writes its message to stderr and aborts (code with no ftuner runtime to report to: a standalone object); false records it through ftuner_rt_fail and returns (the JIT, the AOT library)",
                },
            ]),
            funcs: 0,
            outlined: 0,
        }
    }
}

impl ConvertToLlvmPass {
    /// Convert the functions and globals of one symbol table (the module, or a
    /// `gpu.module` whose `gpu.func` kernels become `llvm.func`s marked `nvvm.kernel`);
    /// false after errors (emitted).
    fn convert_table(&mut self, cx: &mut PassContext<'_>, top: OpId) -> bool {
        let Some(body) = cx
            .ir
            .regions_of(top)
            .first()
            .and_then(|r| cx.ir.region_entry(*r))
        else {
            return true;
        };
        let gpu = cx.ir.name(top) == "gpu.module";
        let mut decls = BTreeMap::new();
        let mut strings = vec![];
        let mut failed = false;
        let mut defined = vec![];
        let may_fail = failing_functions(cx.ir, body);
        for op in cx.ir.block_ops_vec(body) {
            match cx.ir.name(op) {
                "func.func" | "gpu.func" => match convert_func(
                    cx.ir,
                    op,
                    &mut decls,
                    &mut strings,
                    self.opts.bool("parallel") && !gpu,
                    &may_fail,
                    self.opts.bool("abort-on-failure"),
                ) {
                    Ok((new, outlined)) => {
                        self.outlined += outlined;
                        for n in new {
                            if let Some(s) = cx.ir.symbol_name(n) {
                                defined.push(s.to_string());
                            }
                            cx.ir.insert_before(op, n);
                        }
                        cx.ir.erase_op(op);
                        self.funcs += 1;
                    }
                    Err((at, m)) => {
                        let at = if cx.ir.is_alive(at) { at } else { op };
                        cx.emit(Diagnostic::error(
                            cx.ir.loc(at),
                            format!("'{}' op {m}", cx.ir.name(at)),
                        ));
                        failed = true;
                    }
                },
                "memref.global" => {
                    let loc = cx.ir.loc(op);
                    let props = cx.ir.op(op).props;
                    let ty = dict_get(props, "type").and_then(|a| a.as_type());
                    let name = cx.ir.symbol_name(op).map(str::to_string);
                    let (Some(ty), Some(name)) = (ty, name) else {
                        cx.emit(Diagnostic::error(
                            loc,
                            "'memref.global' op needs a name and a type",
                        ));
                        failed = true;
                        continue;
                    };
                    let mut s = OpSpec::new(intern_name("llvm.mlir.global"), loc)
                        .prop("sym_name", Attribute::string(name))
                        .prop(
                            "global_type",
                            Attribute::type_attr(llvm_ty(&array_type(
                                ty.shape().unwrap_or(&[]),
                                ty.element_type(),
                            ))),
                        )
                        .prop("linkage", Attribute::dialect("llvm", "linkage<private>"))
                        .regions(1);
                    if dict_get(props, "constant").is_some() {
                        s = s.prop("constant", Attribute::unit());
                    }
                    if let Some(v) = dict_get(props, "initial_value") {
                        s = s.prop("value", retype_dense(v));
                    }
                    if let Some(a) = dict_get(props, "alignment") {
                        s = s.prop("alignment", a);
                    }
                    let g = cx.ir.create_op(s);
                    cx.ir.insert_before(op, g);
                    cx.ir.erase_op(op);
                }
                _ => {}
            }
        }
        if failed {
            return false;
        }
        let loc = cx.ir.loc(top);
        if gpu && !strings.is_empty() {
            cx.emit(Diagnostic::error(
                loc,
                "'gpu.module' op run-time assertions in GPU kernels are not supported",
            ));
            return false;
        }
        for (name, bytes) in strings {
            let n = bytes.len();
            let g = cx.ir.create_op(
                OpSpec::new(intern_name("llvm.mlir.global"), loc)
                    .prop("sym_name", Attribute::string(name))
                    .prop(
                        "global_type",
                        Attribute::type_attr(llvm_ty(&format!("array<{n} x i8>"))),
                    )
                    .prop("linkage", Attribute::dialect("llvm", "linkage<private>"))
                    .prop("constant", Attribute::unit())
                    .prop(
                        "value",
                        Attribute::get(AttrKind::String {
                            value: bytes,
                            ty: None,
                        }),
                    )
                    .regions(1),
            );
            cx.ir.prepend_op(body, g);
        }
        for (name, fty) in decls {
            if defined.contains(&name) {
                continue;
            }
            let d = new_func(cx.ir, &name, &fty, loc, false);
            cx.ir.append_op(body, d);
        }
        true
    }
}

impl Pass for ConvertToLlvmPass {
    fn argument(&self) -> &'static str {
        "convert-to-llvm"
    }
    fn name(&self) -> &'static str {
        "ConvertToLLVM"
    }
    fn summary(&self) -> &'static str {
        "Convert buffer-level func/arith/math/scf/cf/memref/vector IR to the llvm dialect"
    }
    fn description(&self) -> &'static str {
        "Lowers the output of bufferize and convert-linalg-to-loops to the llvm dialect with MLIR's memref descriptor ABI and _mlir_ciface_ wrappers; what ftuner-codegen and mlir-translate take."
    }
    fn run(&mut self, cx: &mut PassContext<'_>, top: OpId) -> Result<(), PassFailure> {
        let mut failed = false;
        let mut tables = vec![top];
        cx.ir.walk_pre(top, &mut |o| {
            if cx.ir.name(o) == "gpu.module" {
                tables.push(o);
            }
        });
        for t in tables {
            failed |= !self.convert_table(cx, t);
        }
        if failed {
            Err(PassFailure)
        } else {
            Ok(())
        }
    }
    fn options(&mut self) -> Option<&mut PassOptions> {
        Some(&mut self.opts)
    }
    fn options_ref(&self) -> Option<&PassOptions> {
        Some(&self.opts)
    }
    fn statistics(&self) -> Vec<Statistic> {
        vec![
            Statistic {
                name: "num-functions",
                description: "Functions converted",
                value: self.funcs,
            },
            Statistic {
                name: "num-parallel-loops",
                description: "Parallel loops outlined to run on the thread pool",
                value: self.outlined,
            },
        ]
    }
    fn clone_pass(&self) -> Box<dyn Pass> {
        Box::new(ConvertToLlvmPass {
            opts: self.opts.clone(),
            ..ConvertToLlvmPass::default()
        })
    }
}
