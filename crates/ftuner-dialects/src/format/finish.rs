//! The end of parsing an op's custom form: the types the format gave are collected into a
//! type environment, the rest are inferred (type groups, `SameOperandsAndResultType`, the
//! op's inference hook), operands are resolved against their types, and result types,
//! regions and successors are added to the operation state.

use super::parse::PState;
use ftuner_ir::dialect::{Arity, OpDef, TypeEnv};
use ftuner_ir::parser::{OperationState, PResult, Parser};
use ftuner_ir::{Attribute, Type};

pub(super) fn finish(
    p: &mut Parser<'_>,
    st: &mut OperationState,
    def: &OpDef,
    mut ps: PState,
    at: u32,
) -> PResult<()> {
    // Collect known types into an environment, infer the rest.
    let mut env = known_types(def, &ps);
    split_all_operands(def, &mut ps, &mut env);
    listed_types(def, &ps, &mut env);
    env.attrs = st.attrs.clone();
    infer_types(p, def, &mut env, at)?;
    resolve_operands(p, st, def, &ps, &env, at)?;
    add_result_types(p, st, def, &env, at)?;
    st.regions.extend(ps.regions);
    st.successors.extend(ps.successors);
    Ok(())
}

/// The environment of the operand and result groups: their counts and the types parsed
/// for them by name.
fn known_types(def: &OpDef, ps: &PState) -> TypeEnv {
    let mut env = TypeEnv::default();
    for a in def.operands {
        let cnt = ps.operands.get(a.name).map(|v| v.len()).unwrap_or(0);
        env.groups
            .push((a.name, cnt, ps.types.get(a.name).cloned()));
    }
    for a in def.results {
        let cnt = match a.arity {
            Arity::Single => 1,
            _ => ps.types.get(a.name).map(|v| v.len()).unwrap_or(0),
        };
        env.groups
            .push((a.name, cnt, ps.types.get(a.name).cloned()));
    }
    env
}

/// The `operands` key (all operands parsed at once, with their types): split among the
/// op's operand groups (a variadic group takes what the single ones leave).
fn split_all_operands(def: &OpDef, ps: &mut PState, env: &mut TypeEnv) {
    let Some(all) = ps.operands.remove("operands") else {
        return;
    };
    let tys = ps.types.get("operands").cloned();
    let mut i = 0;
    for a in def.operands {
        let n = if a.arity == Arity::Single {
            1
        } else {
            all.len() + 1 - def.operands.len()
        };
        let slice = all[i..(i + n).min(all.len())].to_vec();
        if let Some(g) = env.groups.iter_mut().find(|g| g.0 == a.name) {
            g.1 = slice.len();
            if let Some(t) = &tys {
                g.2 = Some(t[i..(i + n).min(t.len())].to_vec());
            }
        }
        ps.operands.insert(a.name.to_string(), slice);
        i += n;
    }
}

/// `type(operands)` / `functional-type(operands, ...)` with operands parsed by name, and
/// `type(results)` of an op with one result group.
fn listed_types(def: &OpDef, ps: &PState, env: &mut TypeEnv) {
    if let Some(t) = ps.types.get("operands").cloned() {
        let mut i = 0;
        for a in def.operands {
            let n = ps.operands.get(a.name).map(|v| v.len()).unwrap_or(0);
            if let Some(g) = env.groups.iter_mut().find(|g| g.0 == a.name) {
                if g.2.is_none() && i + n <= t.len() {
                    g.2 = Some(t[i..i + n].to_vec());
                }
            }
            i += n;
        }
    }
    if let Some(t) = ps.types.get("results").cloned() {
        if def.results.len() == 1 {
            env.groups
                .iter_mut()
                .filter(|g| g.0 == def.results[0].name)
                .for_each(|g| {
                    g.1 = t.len();
                    g.2 = Some(t.clone());
                });
        }
    }
}

/// Type groups and SameOperandsAndResultType, then the op's inference hook (twice, so
/// each can use what the other found).
fn infer_types(p: &mut Parser<'_>, def: &OpDef, env: &mut TypeEnv, at: u32) -> PResult<()> {
    let same_all = def.has(ftuner_ir::traits::SAME_OPERANDS_AND_RESULT_TYPE);
    for _ in 0..2 {
        for g in def.type_groups {
            let known = g.iter().find_map(|n| env.get1(n));
            if let Some(t) = known {
                for n in g.iter() {
                    let c = env.count(n).max(1);
                    env.set(n, vec![t; c]);
                }
            }
        }
        if same_all {
            let known = env
                .groups
                .iter()
                .find_map(|g| g.2.as_ref().and_then(|v| v.first().copied()));
            if let Some(t) = known {
                let names: Vec<(&str, usize)> = env.groups.iter().map(|g| (g.0, g.1)).collect();
                for (n, c) in names {
                    env.set(n, vec![t; c]);
                }
            }
        }
        if let Some(f) = def.infer_results {
            f(env).map_err(|m| p.err_at(at, format!("'{}' op {m}", def.name)))?;
        }
    }
    Ok(())
}

/// Resolves every operand group against its types, and records `operandSegmentSizes` for
/// ops with `AttrSizedOperandSegments`.
fn resolve_operands(
    p: &mut Parser<'_>,
    st: &mut OperationState,
    def: &OpDef,
    ps: &PState,
    env: &TypeEnv,
    at: u32,
) -> PResult<()> {
    let mut seg = vec![];
    for a in def.operands {
        let ops = ps.operands.get(a.name).cloned().unwrap_or_default();
        seg.push(ops.len() as i32);
        if ops.is_empty() {
            continue;
        }
        let tys = match env
            .get(a.name)
            .cloned()
            .or_else(|| concrete_type(a.constraint).map(|t| vec![t]))
        {
            Some(t) => t,
            None => {
                return Err(p.err_at(
                    at,
                    format!(
                        "type of operand '{}' of '{}' could not be inferred",
                        a.name, def.name
                    ),
                ))
            }
        };
        let tys = if tys.len() == 1 && ops.len() > 1 {
            vec![tys[0]; ops.len()]
        } else {
            tys
        };
        if tys.len() != ops.len() {
            return Err(p.err_at(
                at,
                format!("{} operands present, but expected {}", ops.len(), tys.len()),
            ));
        }
        for (o, t) in ops.iter().zip(tys) {
            st.operands.push(p.resolve_operand(o, t)?);
        }
    }
    if def.has(ftuner_ir::traits::ATTR_SIZED_OPERAND_SEGMENTS) {
        st.props.push((
            "operandSegmentSizes".into(),
            Attribute::dense_i32_array(&seg),
        ));
    }
    Ok(())
}

/// The result types: inferred, or the one type a result's constraint allows.
fn add_result_types(
    p: &mut Parser<'_>,
    st: &mut OperationState,
    def: &OpDef,
    env: &TypeEnv,
    at: u32,
) -> PResult<()> {
    for a in def.results {
        match env
            .get(a.name)
            .cloned()
            .or_else(|| concrete_type(a.constraint).map(|t| vec![t]))
        {
            Some(t) => st.result_types.extend(t.iter().copied()),
            None if a.arity == Arity::Single => {
                return Err(p.err_at(
                    at,
                    format!(
                        "type of result '{}' of '{}' could not be inferred",
                        a.name, def.name
                    ),
                ))
            }
            None => {}
        }
    }
    Ok(())
}

/// The one type a constraint allows, if it names a single type.
fn concrete_type(c: &str) -> Option<Type> {
    Some(match c {
        "Index" => Type::index(),
        "I1" => Type::i1(),
        "I32" => Type::i32(),
        "I64" => Type::i64(),
        "F32" => Type::f32(),
        "F64" => Type::f64(),
        _ => return None,
    })
}
