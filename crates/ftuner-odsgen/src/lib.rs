//! # ftuner-odsgen
//!
//! The op definition generator: reads `ir-specs/<dialect>.toml` (MLIR ODS field names:
//! `summary`, `description`, `operands`, `results`, `attributes`, `regions`,
//! `successors`, `traits`, `assembly_format`, `has_verifier`, `has_folder`,
//! `has_canonicalizer`; ours: `llvm`, an elementwise op's one-call LLVM form) and generates
//!
//! * the registration code: one `OpDef` per op, hooks bound by naming convention
//!   (`verify_<op>`, `fold_<op>`, `parse_<op>`/`print_<op>` for hand-written syntax,
//!   `canonicalize_<op>`) in the dialect's hand-written module;
//! * typed wrappers (`MatmulOp(OpId)`) with accessors for each operand group, result and
//!   attribute;
//! * `docs/dialects/<dialect>.md`.
//!
//! It is a build dependency of `ftuner-dialects` (see its `build.rs`).

mod markdown;
pub mod structured;
pub use markdown::generate_markdown;
use serde::Deserialize;
use std::fmt::Write;
use std::path::Path;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    pub dialect: DialectSpec,
    #[serde(default, rename = "op")]
    pub ops: Vec<OpSpec>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct DialectSpec {
    pub name: String,
    pub summary: String,
    #[serde(default)]
    pub description: String,
    /// Rust module (under ftuner-dialects/src) with the hand-written hooks.
    pub module: String,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ArgSpec {
    pub name: String,
    #[serde(rename = "type", default = "any_type")]
    pub ty: String,
    #[serde(default)]
    pub variadic: bool,
    #[serde(default)]
    pub optional: bool,
}

fn any_type() -> String {
    "AnyType".into()
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct AttrSpec {
    pub name: String,
    #[serde(rename = "type", default = "any_attr")]
    pub ty: String,
    #[serde(default)]
    pub optional: bool,
    /// Default value in attribute syntax (`DefaultValuedAttr`).
    #[serde(default)]
    pub default: Option<String>,
}

fn any_attr() -> String {
    "AnyAttr".into()
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct OpSpec {
    pub name: String,
    pub summary: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub traits: Vec<String>,
    #[serde(default)]
    pub operands: Vec<ArgSpec>,
    #[serde(default)]
    pub results: Vec<ArgSpec>,
    #[serde(default)]
    pub attributes: Vec<AttrSpec>,
    #[serde(default)]
    pub regions: usize,
    #[serde(default)]
    pub variadic_regions: bool,
    #[serde(default)]
    pub successors: Option<usize>,
    #[serde(default)]
    pub assembly_format: Option<String>,
    /// `true`: hand-written `parse_<op>` / `print_<op>` in the dialect module.
    #[serde(default)]
    pub has_custom_assembly_format: bool,
    #[serde(default)]
    pub has_verifier: bool,
    #[serde(default)]
    pub has_folder: bool,
    #[serde(default)]
    pub has_canonicalizer: bool,
    /// The op's LLVM form when it is one call: `{ intrinsic = "llvm.intr.exp" }` (same
    /// operands and result), `{ libm = "cbrt" }` (`cbrt` on f64, `cbrtf` on f32), or
    /// `{ intrinsic_defined = ["llvm.intr.ctlz", "is_zero_poison"] }` (the flag false).
    #[serde(default)]
    pub llvm: Option<LlvmSpec>,
    /// A named structured op's indexing maps and body as data ([`structured`]).
    #[serde(default)]
    pub structured: Option<structured::StructuredSpec>,
    /// Hand-written `infer_<op>` computes result types.
    #[serde(default)]
    pub infer_result_types: bool,
    /// `AllTypesMatch` groups, by operand/result name.
    #[serde(default)]
    pub all_types_match: Vec<Vec<String>>,
    /// Hand-written `asm_names_<op>` suggests result names.
    #[serde(default)]
    pub result_names: bool,
    #[serde(default)]
    pub block_arg_names: bool,
    #[serde(default)]
    pub default_dialect: Option<String>,
    /// `false`: inherent attributes stay in the attribute dictionary, as upstream ops
    /// without properties keep them (`gpu.func`).
    #[serde(default = "yes")]
    pub properties: bool,
}

/// `llvm = { intrinsic = ".." }` or `llvm = { libm = ".." }`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum LlvmSpec {
    Intrinsic(String),
    Libm(String),
    /// `[intrinsic, flag]`: the intrinsic with its poison flag `flag` false.
    IntrinsicDefined(Vec<String>),
}

impl LlvmSpec {
    fn rust(&self) -> String {
        match self {
            LlvmSpec::Intrinsic(n) => {
                format!("Some(ftuner_ir::LlvmLowering::Intrinsic({}))", lit(n))
            }
            LlvmSpec::Libm(n) => format!("Some(ftuner_ir::LlvmLowering::Libm({}))", lit(n)),
            LlvmSpec::IntrinsicDefined(v) => format!(
                "Some(ftuner_ir::LlvmLowering::IntrinsicDefined({}, {}))",
                lit(&v[0]),
                lit(&v[1])
            ),
        }
    }
    fn doc(&self) -> String {
        match self {
            LlvmSpec::Intrinsic(n) => format!("LLVM: `{n}`"),
            LlvmSpec::Libm(n) => format!("LLVM: a call of libm's `{n}` (f64) or `{n}f` (f32)"),
            LlvmSpec::IntrinsicDefined(v) => format!("LLVM: `{}` with `{} = false`", v[0], v[1]),
        }
    }
}

fn yes() -> bool {
    true
}

pub fn load(path: &Path) -> Result<Spec, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let spec: Spec = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    for op in &spec.ops {
        if let Some(LlvmSpec::IntrinsicDefined(v)) = &op.llvm {
            if v.len() != 2 {
                return Err(format!(
                    "{}: op '{}': llvm.intrinsic_defined is [intrinsic, flag]",
                    path.display(),
                    op.name
                ));
            }
        }
        if let Some(s) = &op.structured {
            structured::rust(s)
                .map_err(|e| format!("{}: op '{}': {e}", path.display(), op.name))?;
        }
        for t in &op.traits {
            if !KNOWN_TRAITS.contains(&t.as_str()) {
                return Err(format!(
                    "{}: op '{}': unknown trait '{t}'",
                    path.display(),
                    op.name
                ));
            }
        }
    }
    Ok(spec)
}

/// Traits the infrastructure understands (see `ftuner_ir::traits`).
pub const KNOWN_TRAITS: &[&str] = &[
    "Terminator",
    "IsolatedFromAbove",
    "NoTerminator",
    "SingleBlock",
    "SymbolTable",
    "Symbol",
    "Pure",
    "ConstantLike",
    "ReturnLike",
    "Commutative",
    "SameOperandsAndResultType",
    "AttrSizedOperandSegments",
    "AttrSizedResultSegments",
    "GraphRegion",
    "RecursiveMemoryEffects",
    "Elementwise",
    "SameOperandsElementType",
    "SameTypeOperands",
    "SameVariadicOperandSize",
];

pub fn rust_ident(op: &str) -> String {
    op.replace(['.', '-'], "_")
}

/// `batch_matmul` -> `BatchMatmulOp`; `return` -> `ReturnOp`.
pub fn type_name(op: &str) -> String {
    let mut s = String::new();
    for part in op.split(['_', '.']) {
        let mut c = part.chars();
        if let Some(f) = c.next() {
            s.push(f.to_ascii_uppercase());
            s.push_str(c.as_str());
        }
    }
    s.push_str("Op");
    s
}

fn lit(s: &str) -> String {
    format!("{s:?}")
}

/// Generate Rust for one dialect: `register(reg)` and typed wrappers.
pub fn generate_rust(spec: &Spec) -> String {
    let d = &spec.dialect;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// Generated by ftuner-odsgen from ir-specs/{}.toml. Do not edit.",
        d.name
    );
    let _ = writeln!(out, "#[allow(unused_imports)] use ftuner_ir::dialect::{{OpDef, ArgDef, AttrDef, Arity, traits}};");
    let _ = writeln!(
        out,
        "#[allow(unused_imports)] use ftuner_ir::{{Ir, OpId, Value, Attribute}};"
    );
    let _ = writeln!(out, "pub fn register(reg: &mut ftuner_ir::Registry) {{");
    let _ = writeln!(out, "    reg.register_dialect({});", lit(&d.name));
    for op in &spec.ops {
        register_op(&mut out, d, op);
    }
    let _ = writeln!(out, "}}");
    // Typed wrappers.
    for op in &spec.ops {
        typed_wrapper(&mut out, d, op);
    }
    out
}

/// The `OpDef` of one op, registered in `register(reg)`.
fn register_op(out: &mut String, d: &DialectSpec, op: &OpSpec) {
    let m = &d.module;
    let full = format!("{}.{}", d.name, op.name);
    let id = rust_ident(&op.name);
    let traits = if op.traits.is_empty() {
        "0".to_string()
    } else {
        op.traits
            .iter()
            .map(|t| format!("traits::{}", trait_const(t)))
            .collect::<Vec<_>>()
            .join(" | ")
    };
    let attrs: Vec<String> = op
        .attributes
        .iter()
        .map(|a| {
            format!(
                "AttrDef {{ name: {}, constraint: {}, optional: {} }}",
                lit(&a.name),
                lit(&a.ty),
                a.optional || a.default.is_some()
            )
        })
        .collect();
    let defaults: Vec<String> = op
        .attributes
        .iter()
        .filter_map(|a| {
            a.default
                .as_ref()
                .map(|v| format!("({}, {})", lit(&a.name), lit(v)))
        })
        .collect();
    let groups: Vec<String> = op
        .all_types_match
        .iter()
        .map(|g| {
            format!(
                "&[{}]",
                g.iter().map(|n| lit(n)).collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    // A named structured op's hooks are its dialect's shared ones (`linalg::parse_named`,
    // ...): what differs between named ops is their `structured` data.
    let shared = op.structured.is_some();
    let (parse, print) = if op.has_custom_assembly_format && shared {
        (
            format!("Some(crate::{m}::parse_named)"),
            format!("Some(crate::{m}::print_named)"),
        )
    } else if op.has_custom_assembly_format {
        (
            format!("Some(crate::{m}::parse_{id})"),
            format!("Some(crate::{m}::print_{id})"),
        )
    } else if op.assembly_format.is_some() {
        (
            "Some(crate::format::parse)".into(),
            "Some(crate::format::print)".into(),
        )
    } else {
        ("None".into(), "None".into())
    };
    let opt = |b: bool, f: &str| {
        if b && shared && (f == "verify" || f == "asm_names") {
            format!("Some(crate::{m}::{f}_named)")
        } else if b {
            format!("Some(crate::{m}::{f}_{id})")
        } else {
            "None".into()
        }
    };
    let _ = writeln!(out, "    reg.register_op(OpDef {{");
    let _ = writeln!(out, "        name: {},", lit(&full));
    let _ = writeln!(out, "        summary: {},", lit(&op.summary));
    let _ = writeln!(out, "        description: {},", lit(&op.description));
    let _ = writeln!(
        out,
        "        format: {},",
        op.assembly_format
            .as_ref()
            .map(|f| format!("Some({})", lit(f)))
            .unwrap_or("None".into())
    );
    let _ = writeln!(out, "        type_groups: &[{}],", groups.join(", "));
    let _ = writeln!(
        out,
        "        infer_results: {},",
        opt(op.infer_result_types, "infer")
    );
    let _ = writeln!(out, "        defaults: &[{}],", defaults.join(", "));
    let _ = writeln!(out, "        traits: {traits},");
    let tn = type_name(&op.name);
    let _ = writeln!(out, "        operands: {tn}::OPERANDS,");
    let _ = writeln!(out, "        results: {tn}::RESULTS,");
    let _ = writeln!(out, "        attributes: &[{}],", attrs.join(", "));
    let _ = writeln!(out, "        num_regions: {},", op.regions);
    let _ = writeln!(out, "        variadic_regions: {},", op.variadic_regions);
    let _ = writeln!(
        out,
        "        num_successors: {},",
        op.successors
            .map(|n| format!("Some({n})"))
            .unwrap_or("None".into())
    );
    let _ = writeln!(out, "        uses_properties: {},", op.properties);
    let _ = writeln!(out, "        memory_effects: None,");
    let _ = writeln!(out, "        scalar_eval: None,");
    let _ = writeln!(out, "        destination_style: None,");
    let _ = writeln!(out, "        interfaces: Default::default(),");
    let _ = writeln!(
        out,
        "        llvm: {},",
        op.llvm.as_ref().map_or("None".into(), LlvmSpec::rust)
    );
    let _ = writeln!(out, "        parse: {parse},");
    let _ = writeln!(out, "        print: {print},");
    let _ = writeln!(out, "        verify: {},", opt(op.has_verifier, "verify"));
    let _ = writeln!(out, "        fold: {},", opt(op.has_folder, "fold"));
    let _ = writeln!(
        out,
        "        canonicalize: {},",
        if op.has_canonicalizer {
            format!("crate::{m}::CANONICALIZE_{}", id.to_uppercase())
        } else {
            "&[]".into()
        }
    );
    let _ = writeln!(
        out,
        "        asm_names: {},",
        opt(op.result_names, "asm_names")
    );
    let _ = writeln!(
        out,
        "        block_arg_names: {},",
        opt(op.block_arg_names, "block_arg_names")
    );
    let _ = writeln!(
        out,
        "        default_dialect: {},",
        op.default_dialect
            .as_ref()
            .map(|s| format!("Some({})", lit(s)))
            .unwrap_or("None".into())
    );
    let _ = writeln!(out, "    }});");
}

/// `&[ArgDef { ... }, ...]` of operands or results.
fn arg_defs(v: &[ArgSpec]) -> String {
    let items: Vec<String> = v
        .iter()
        .map(|a| {
            let ar = if a.variadic {
                "Variadic"
            } else if a.optional {
                "Optional"
            } else {
                "Single"
            };
            format!(
                "ArgDef {{ name: {}, arity: Arity::{ar}, constraint: {} }}",
                lit(&a.name),
                lit(&a.ty)
            )
        })
        .collect();
    format!("&[{}]", items.join(", "))
}

/// The typed wrapper of one op: `pub struct XOp(pub OpId)` with its builder and accessors.
fn typed_wrapper(out: &mut String, d: &DialectSpec, op: &OpSpec) {
    let full = format!("{}.{}", d.name, op.name);
    let tn = type_name(&op.name);
    let _ = writeln!(out, "\n/// `{full}`: {}", op.summary.replace('`', "'"));
    let _ = writeln!(
        out,
        "#[derive(Clone, Copy, Debug, PartialEq, Eq)]\npub struct {tn}(pub OpId);"
    );
    let _ = writeln!(out, "impl {tn} {{");
    let _ = writeln!(out, "    pub const NAME: &'static str = {};", lit(&full));
    let _ = writeln!(
        out,
        "    /// The operand groups, as the op's definition declares them.\n    pub const OPERANDS: &'static [ArgDef] = {};",
        arg_defs(&op.operands)
    );
    let _ = writeln!(
        out,
        "    /// The result groups.\n    pub const RESULTS: &'static [ArgDef] = {};",
        arg_defs(&op.results)
    );
    if let Some(s) = &op.structured {
        // Checked when the spec was loaded.
        let _ = writeln!(
            out,
            "    /// The op's indexing maps and body (its spec's `structured`).\n    pub const STRUCTURED: crate::linalg::named::Named = {};",
            structured::rust(s).unwrap_or_default()
        );
    }
    let _ = writeln!(out, "    pub fn from(ir: &Ir, op: OpId) -> Option<Self> {{ if ir.name(op) == Self::NAME {{ Some(Self(op)) }} else {{ None }} }}");
    builder(out, op, &full);
    let same = op.traits.iter().any(|t| t == "SameVariadicOperandSize");
    accessors(out, &op.operands, "operands", "operandSegmentSizes", same);
    accessors(out, &op.results, "results", "resultSegmentSizes", false);
    for a in &op.attributes {
        let _ = writeln!(
            out,
            "    pub fn {}_attr(self, ir: &Ir) -> Option<Attribute> {{ ir.attr(self.0, {}) }}",
            rust_ident(&a.name).to_lowercase(),
            lit(&a.name)
        );
    }
    let _ = writeln!(out, "}}");
}

fn param_name(n: &str) -> String {
    let n = rust_ident(n).to_lowercase();
    if matches!(
        n.as_str(),
        "type"
            | "in"
            | "ref"
            | "self"
            | "fn"
            | "match"
            | "where"
            | "mod"
            | "use"
            | "loop"
            | "break"
            | "move"
            | "static"
            | "let"
            | "loc"
            | "ir"
    ) {
        format!("{n}_")
    } else {
        n
    }
}

/// A typed builder: one parameter per operand group, result and inherent attribute, in
/// spec order; segment sizes are filled in. Regions are created empty.
fn builder(out: &mut String, op: &OpSpec, full: &str) {
    let mut params = vec!["ir: &mut Ir".to_string(), "loc: Attribute".to_string()];
    let mut body = vec![
        "let mut ods_operands: Vec<Value> = vec![];".to_string(),
        "let mut ods_segments: Vec<i32> = vec![];".to_string(),
    ];
    for a in &op.operands {
        let n = param_name(&a.name);
        if a.variadic {
            params.push(format!("{n}: &[Value]"));
            body.push(format!(
                "ods_segments.push({n}.len() as i32); ods_operands.extend_from_slice({n});"
            ));
        } else if a.optional {
            params.push(format!("{n}: Option<Value>"));
            body.push(format!(
                "ods_segments.push({n}.is_some() as i32); ods_operands.extend({n});"
            ));
        } else {
            params.push(format!("{n}: Value"));
            body.push(format!("ods_segments.push(1); ods_operands.push({n});"));
        }
    }
    body.push("let mut ods_results: Vec<ftuner_ir::Type> = vec![];".to_string());
    body.push("let mut ods_result_segments: Vec<i32> = vec![];".to_string());
    for r in &op.results {
        let n = format!("{}_type", param_name(&r.name).trim_end_matches('_'));
        if r.variadic {
            params.push(format!("{n}: &[ftuner_ir::Type]"));
            body.push(format!(
                "ods_result_segments.push({n}.len() as i32); ods_results.extend_from_slice({n});"
            ));
        } else if r.optional {
            params.push(format!("{n}: Option<ftuner_ir::Type>"));
            body.push(format!(
                "ods_result_segments.push({n}.is_some() as i32); ods_results.extend({n});"
            ));
        } else {
            params.push(format!("{n}: ftuner_ir::Type"));
            body.push(format!(
                "ods_result_segments.push(1); ods_results.push({n});"
            ));
        }
    }
    body.push(format!("let mut ods_spec = ftuner_ir::OpSpec::new(ftuner_ir::intern_name({}), loc).operands(ods_operands).results(ods_results).regions({});", lit(full), op.regions));
    for a in &op.attributes {
        let n = format!("{}_attr", param_name(&a.name).trim_end_matches('_'));
        if a.optional || a.default.is_some() {
            params.push(format!("{n}: Option<Attribute>"));
            body.push(format!(
                "if let Some(a) = {n} {{ ods_spec = ods_spec.prop({}, a); }}",
                lit(&a.name)
            ));
        } else {
            params.push(format!("{n}: Attribute"));
            body.push(format!("ods_spec = ods_spec.prop({}, {n});", lit(&a.name)));
        }
    }
    if op.traits.iter().any(|t| t == "AttrSizedOperandSegments") {
        body.push("ods_spec = ods_spec.prop(\"operandSegmentSizes\", Attribute::dense_i32_array(&ods_segments));".to_string());
    }
    if op.traits.iter().any(|t| t == "AttrSizedResultSegments") {
        body.push("ods_spec = ods_spec.prop(\"resultSegmentSizes\", Attribute::dense_i32_array(&ods_result_segments));".to_string());
    }
    body.push("let _ = (&ods_segments, &ods_result_segments);".to_string());
    body.push("Self(ir.create_op(ods_spec))".to_string());
    let _ = writeln!(
        out,
        "    /// Create a detached `{full}` (insert it with `Ir::append_op` / `insert_before`)."
    );
    let _ = writeln!(out, "    #[allow(clippy::too_many_arguments, unused_mut)]");
    let _ = writeln!(out, "    pub fn build({}) -> Self {{", params.join(", "));
    for b in body {
        let _ = writeln!(out, "        {b}");
    }
    let _ = writeln!(out, "    }}");
}

/// `args`' accessors; `same_size`: the op's variadic operand groups have one size
/// (`SameVariadicOperandSize`), not a segment-size property.
fn accessors(out: &mut String, args: &[ArgSpec], kind: &str, seg: &str, same_size: bool) {
    let variadic = args.iter().filter(|a| a.variadic || a.optional).count();
    for (i, a) in args.iter().enumerate() {
        let name = rust_ident(&a.name).to_lowercase();
        let name = if matches!(
            name.as_str(),
            "type"
                | "in"
                | "ref"
                | "self"
                | "fn"
                | "match"
                | "where"
                | "mod"
                | "use"
                | "loop"
                | "break"
                | "move"
                | "static"
                | "let"
        ) {
            format!("{name}_")
        } else {
            name
        };
        if variadic == 0 {
            let _ = writeln!(
                out,
                "    pub fn {name}(self, ir: &Ir) -> Value {{ ir.{kind}(self.0)[{i}] }}"
            );
        } else if variadic == 1 {
            let fixed_before = args[..i]
                .iter()
                .filter(|x| !(x.variadic || x.optional))
                .count();
            let fixed_after = args[i + 1..]
                .iter()
                .filter(|x| !(x.variadic || x.optional))
                .count();
            let var_before = args[..i].iter().any(|x| x.variadic || x.optional);
            if a.variadic || a.optional {
                let _ = writeln!(out, "    pub fn {name}(self, ir: &Ir) -> Vec<Value> {{ let v = ir.{kind}(self.0); v[{fixed_before}..v.len() - {fixed_after}].to_vec() }}");
            } else if var_before {
                let _ = writeln!(out, "    pub fn {name}(self, ir: &Ir) -> Value {{ let v = ir.{kind}(self.0); v[v.len() - {fixed_after} - 1] }}");
            } else {
                let _ = writeln!(
                    out,
                    "    pub fn {name}(self, ir: &Ir) -> Value {{ ir.{kind}(self.0)[{i}] }}"
                );
            }
        } else {
            let ret = if a.variadic || a.optional {
                "Vec<Value>"
            } else {
                "Value"
            };
            let conv = if a.variadic || a.optional {
                "r.to_vec()"
            } else {
                "r[0]"
            };
            let (defs, same) = if kind == "operands" {
                ("Self::OPERANDS", same_size)
            } else {
                ("Self::RESULTS", false)
            };
            let _ = writeln!(
                out,
                "    pub fn {name}(self, ir: &Ir) -> {ret} {{ let r = crate::segment(ir, self.0, {defs}, {same}, {}, {i}, {}); {conv} }}",
                lit(seg),
                kind == "operands"
            );
        }
    }
}

fn trait_const(t: &str) -> String {
    let mut s = String::new();
    for (i, c) in t.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            s.push('_');
        }
        s.push(c.to_ascii_uppercase());
    }
    s
}

/// Generate the code for every spec in `dir`; returns (rust, [(dialect, markdown)]).
pub fn generate_all(dir: &Path) -> Result<(String, Vec<(String, String)>), String> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut rust = String::new();
    let mut docs = vec![];
    let mut regs = vec![];
    let mut groups = vec![];
    let mut named = vec![];
    for f in files {
        let spec = load(&f)?;
        let modname = format!("gen_{}", spec.dialect.name);
        let _ = writeln!(rust, "pub mod {modname} {{\n{}\n}}", generate_rust(&spec));
        for op in &spec.ops {
            if op.structured.is_some() {
                named.push(format!(
                    "        {modname}::{tn}::NAME => Some(&{modname}::{tn}::STRUCTURED),",
                    tn = type_name(&op.name)
                ));
            }
            let same = op.traits.iter().any(|t| t == "SameVariadicOperandSize");
            groups.push(format!(
                "        {modname}::{tn}::NAME => Some(({modname}::{tn}::OPERANDS, {same})),",
                tn = type_name(&op.name)
            ));
        }
        regs.push(modname);
        docs.push((spec.dialect.name.clone(), generate_markdown(&spec)));
    }
    let _ = writeln!(
        rust,
        "/// The operand groups of op `name` as its definition declares them, and whether its\n/// variadic groups have one size (`SameVariadicOperandSize`); `None` for an op no spec\n/// defines. What the typed wrappers' accessors know, for code that holds an op of\n/// one of several kinds (a structured op's `ins`/`outs`).\npub fn operand_groups(name: &str) -> Option<(&'static [ftuner_ir::dialect::ArgDef], bool)> {{\n    match name {{\n{}\n        _ => None,\n    }}\n}}",
        groups.join("\n")
    );
    let _ = writeln!(
        rust,
        "/// The indexing maps and body of named structured op `name` (its spec's `structured`,\n/// MLIR's OpDSL); `None` for other ops.\npub fn named_structured(name: &str) -> Option<&'static crate::linalg::named::Named> {{\n    match name {{\n{}\n        _ => None,\n    }}\n}}",
        named.join("\n")
    );
    let _ = writeln!(rust, "/// Register every generated dialect.\npub fn register_all_generated(reg: &mut ftuner_ir::Registry) {{");
    for r in regs {
        let _ = writeln!(rust, "    {r}::register(reg);");
    }
    let _ = writeln!(rust, "}}");
    Ok((rust, docs))
}
