//! Printing an op's custom form by its format, with MLIR's spacing rules; attributes are
//! printed by their constraints, and `custom<DynamicIndexList>` has its own printer.

use super::parse::parse_attr_text;
use super::{attr_constraint, format_of, kind_of, op_dialect, Elem, Kind};
use ftuner_ir::dialect::OpDef;
use ftuner_ir::{AttrKind, Attribute, OpId, OpPrinter, Type, DYNAMIC};

struct Spacing {
    emit_space: bool,
    last_punct: bool,
}

fn print_lit(pr: &mut OpPrinter<'_>, sp: &mut Spacing, l: &str) {
    if l.is_empty() {
        sp.emit_space = false;
        sp.last_punct = true;
        return;
    }
    if l == " " {
        pr.write(" ");
        sp.emit_space = false;
        sp.last_punct = false;
        return;
    }
    let space_before = if l.len() != 1 && l != "->" {
        true
    } else if sp.last_punct {
        !">)}],".contains(&l[..1])
    } else {
        !"<>(){}[],".contains(&l[..1])
    };
    if sp.emit_space && space_before {
        pr.write(" ");
    }
    pr.write(l);
    sp.emit_space = l.len() != 1 || !"<({[".contains(&l[..1]);
    let f = l.as_bytes()[0];
    sp.last_punct = f != b'_' && !f.is_ascii_alphabetic();
}

fn pre_elem(pr: &mut OpPrinter<'_>, sp: &mut Spacing) {
    if sp.emit_space || !sp.last_punct {
        pr.write(" ");
    }
    sp.last_punct = false;
    sp.emit_space = true;
}

/// Print hook for ops with an `assembly_format`.
pub fn print(pr: &mut OpPrinter<'_>, op: OpId) {
    let name = pr.ir.name(op);
    let Some(def) = pr.ctx.op_def(name).cloned() else {
        return;
    };
    let Ok(elems) = format_of(&def) else { return };
    let mut sp = Spacing {
        emit_space: true,
        last_punct: false,
    };
    // Attributes shown by the format itself are elided from attr-dict.
    let mut shown: Vec<&'static str> = vec!["operandSegmentSizes", "resultSegmentSizes"];
    collect_shown(&elems, &def, &mut shown);
    for (n, text) in def.defaults {
        if let (Some(a), Ok(d)) = (pr.ir.attr(op, n), parse_attr_text(pr.ctx, text)) {
            if a == d {
                shown.push(n);
            }
        }
    }
    print_elems(pr, op, &def, &elems, &mut sp, &shown);
}

fn collect_shown(elems: &[Elem], def: &OpDef, shown: &mut Vec<&'static str>) {
    for e in elems {
        match e {
            Elem::Var(n) => {
                if let Some(a) = def.attributes.iter().find(|a| a.name == n) {
                    shown.push(a.name);
                }
            }
            Elem::Optional(inner, _) => collect_shown(inner, def, shown),
            Elem::Custom(_, args) => {
                for n in args {
                    if let Some(a) = def.attributes.iter().find(|a| a.name == n) {
                        shown.push(a.name);
                    }
                }
            }
            _ => {}
        }
    }
}

fn group_values(
    pr: &OpPrinter<'_>,
    op: OpId,
    def: &OpDef,
    n: &str,
) -> Option<Vec<ftuner_ir::Value>> {
    if let Some(i) = def.operands.iter().position(|a| a.name == n) {
        let same = def.has(ftuner_ir::dialect::traits::SAME_VARIADIC_OPERAND_SIZE);
        return Some(
            crate::segment(
                pr.ir,
                op,
                def.operands,
                same,
                "operandSegmentSizes",
                i,
                true,
            )
            .to_vec(),
        );
    }
    if let Some(i) = def.results.iter().position(|a| a.name == n) {
        return Some(
            crate::segment(
                pr.ir,
                op,
                def.results,
                false,
                "resultSegmentSizes",
                i,
                false,
            )
            .to_vec(),
        );
    }
    if n == "operands" {
        return Some(pr.ir.operands(op).to_vec());
    }
    if n == "results" {
        return Some(pr.ir.results(op).to_vec());
    }
    None
}

fn anchor_present(
    pr: &OpPrinter<'_>,
    op: OpId,
    def: &OpDef,
    anchor: &str,
    shown_defaults: &[&str],
) -> bool {
    if let Some(v) = group_values(pr, op, def, anchor) {
        return !v.is_empty();
    }
    if def.attributes.iter().any(|a| a.name == anchor) {
        // A default-valued attribute at its default is not printed.
        return pr.ir.attr(op, anchor).is_some() && !shown_defaults.contains(&anchor);
    }
    if kind_of(def, anchor) == Some(Kind::Region) {
        return pr
            .ir
            .regions_of(op)
            .first()
            .is_some_and(|r| !pr.ir.region(*r).blocks.is_empty());
    }
    false
}

fn print_elems(
    pr: &mut OpPrinter<'_>,
    op: OpId,
    def: &OpDef,
    elems: &[Elem],
    sp: &mut Spacing,
    shown: &[&'static str],
) {
    let defaults_at_default: Vec<&str> = def
        .defaults
        .iter()
        .filter(|(n, t)| {
            pr.ir
                .attr(op, n)
                .is_some_and(|a| parse_attr_text(pr.ctx, t).ok() == Some(a))
        })
        .map(|(n, _)| *n)
        .collect();
    for e in elems {
        match e {
            Elem::Lit(l) => print_lit(pr, sp, l),
            Elem::AttrDict(kw) => {
                if *kw {
                    pr.print_optional_attr_dict_with_keyword(op, shown);
                } else {
                    pr.print_optional_attr_dict(op, shown);
                }
            }
            Elem::Optional(inner, anchor) => {
                if anchor_present(pr, op, def, anchor, &defaults_at_default) {
                    print_elems(pr, op, def, inner, sp, shown);
                }
            }
            Elem::Var(n) => {
                if let Some(vals) = group_values(pr, op, def, n) {
                    pre_elem(pr, sp);
                    pr.print_operands(&vals);
                } else if def.attributes.iter().any(|a| a.name == n) {
                    let Some(a) = pr.ir.attr(op, n) else { continue };
                    pre_elem(pr, sp);
                    print_format_attr(pr, def, n, a, op);
                } else if kind_of(def, n) == Some(Kind::Region) {
                    pre_elem(pr, sp);
                    if let Some(r) = pr.ir.regions_of(op).first().copied() {
                        pr.print_region(r, true, true);
                    }
                } else if kind_of(def, n) == Some(Kind::Successor) {
                    pre_elem(pr, sp);
                    let s = pr.ir.op(op).successors.clone();
                    for (i, b) in s.iter().enumerate() {
                        if i > 0 {
                            pr.write(", ");
                        }
                        pr.print_successor(*b);
                    }
                }
            }
            Elem::TypeOf(names) => {
                pre_elem(pr, sp);
                for (i, n) in names.iter().enumerate() {
                    if i > 0 {
                        pr.write(", ");
                    }
                    let vals = group_values(pr, op, def, n).unwrap_or_default();
                    pr.print_types_of(&vals);
                }
            }
            Elem::FunctionalType(a, b) => {
                pre_elem(pr, sp);
                let ins = group_values(pr, op, def, a).unwrap_or_default();
                let outs = group_values(pr, op, def, b).unwrap_or_default();
                pr.write("(");
                pr.print_types_of(&ins);
                pr.write(") -> ");
                let ot: Vec<Type> = outs.iter().map(|v| pr.ir.value_type(*v)).collect();
                pr.print_result_types(&ot);
            }
            Elem::Custom(name, args) => {
                if name == "DynamicIndexList" {
                    pre_elem(pr, sp);
                    let dynv = group_values(pr, op, def, &args[0]).unwrap_or_default();
                    let stat = pr
                        .ir
                        .attr(op, &args[1])
                        .and_then(|a| a.as_dense_i64s())
                        .unwrap_or_default();
                    print_dynamic_index_list(pr, &dynv, &stat);
                }
            }
        }
    }
}

/// `[0, %x, 2]`
pub fn print_dynamic_index_list(pr: &mut OpPrinter<'_>, dynv: &[ftuner_ir::Value], stat: &[i64]) {
    print_dynamic_index_list_in(pr, dynv, stat, ("[", "]"));
}

/// `(0, %x, 2)` with the given delimiters: `DYNAMIC` entries take the next of `dynv`.
pub fn print_dynamic_index_list_in(
    pr: &mut OpPrinter<'_>,
    dynv: &[ftuner_ir::Value],
    stat: &[i64],
    (open, close): (&str, &str),
) {
    pr.write(open);
    let mut d = 0;
    for (i, s) in stat.iter().enumerate() {
        if i > 0 {
            pr.write(", ");
        }
        if *s == DYNAMIC {
            if let Some(v) = dynv.get(d) {
                pr.print_operand(*v);
            }
            d += 1;
        } else {
            pr.write(&s.to_string());
        }
    }
    pr.write(close);
}

fn print_format_attr(pr: &mut OpPrinter<'_>, def: &OpDef, n: &str, a: Attribute, op: OpId) {
    let c = attr_constraint(def, n);
    if let Some(cases) = c.strip_prefix("I64Enum:") {
        if let Some(k) = a.as_i64().and_then(|i| cases.split(',').nth(i as usize)) {
            pr.write(k);
            return;
        }
    }
    if let Some(mn) = c.strip_prefix('#') {
        let (dialect, mnemonic) = mn.split_once('.').unwrap_or((mn, ""));
        if let Some((d, body)) = a.dialect_body() {
            if d == dialect && body.starts_with(mnemonic) {
                pr.write(&body[mnemonic.len()..]);
                return;
            }
        }
    }
    let _ = op_dialect(pr.ir.name(op));
    match (c, a.kind()) {
        ("StrAttr", _) => pr.print_escaped(a.as_str().unwrap_or("")),
        ("SymbolNameAttr", AttrKind::String { value, .. }) => {
            let s = Attribute::symbol_ref(value.clone());
            pr.print_attr(s);
        }
        ("I64Attr" | "I32Attr" | "IndexAttr", _) => pr.print_attr_without_type(a),
        ("DenseI64ArrayAttr", _) => {
            let v = a.as_dense_i64s().unwrap_or_default();
            pr.write(&format!(
                "[{}]",
                v.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        ("UnitAttr", _) => {}
        _ => pr.print_attr(a),
    }
}
