//! LLVM type text: our types and `!llvm.*` type bodies as the types of LLVM's textual IR,
//! function signatures, and the type suffixes of overloaded intrinsics.

use ftuner_ir::{FloatKind, Type, TypeKind};

/// LLVM type text of a body such as `struct<(ptr, array<2 x i64>)>` or `f32`.
pub(super) fn body_type(s: &str) -> Option<String> {
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
pub(super) fn func_sig(t: Type) -> Option<(String, Vec<String>)> {
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

/// The overload suffix of an intrinsic for an LLVM type: `<16 x float>` -> `v16f32`,
/// `float` -> `f32`, `double` -> `f64`, `half` -> `f16`.
pub(super) fn intrinsic_suffix(t: &str) -> String {
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
}
