//! NumPy `.npy` files (format versions 1.0–3.0, C order, little-endian `f2`/`f4`/`f8`,
//! `i1`…`i8`, `u1`…`u8`, `b1`): read into and written from interpreter tensors.

use ftuner_interp::{Tensor, Word};
use ftuner_ir::Type;

const MAGIC: &[u8] = b"\x93NUMPY";

/// The element type a `descr` stands for, and its size in bytes.
fn dtype(descr: &str) -> Result<(Type, usize, char), String> {
    let d = descr.trim_start_matches(['<', '|', '=']);
    if descr.starts_with('>') {
        return Err(format!("big-endian dtype '{descr}' is not supported"));
    }
    Ok(match d {
        "f2" => (Type::float(ftuner_ir::FloatKind::F16), 2, 'f'),
        "f4" => (Type::f32(), 4, 'f'),
        "f8" => (Type::f64(), 8, 'f'),
        "b1" => (Type::i1(), 1, 'b'),
        "i1" => (Type::integer(8), 1, 'i'),
        "i2" => (Type::integer(16), 2, 'i'),
        "i4" => (Type::integer(32), 4, 'i'),
        "i8" => (Type::integer(64), 8, 'i'),
        "u1" => (Type::integer(8), 1, 'u'),
        "u2" => (Type::integer(16), 2, 'u'),
        "u4" => (Type::integer(32), 4, 'u'),
        "u8" => (Type::integer(64), 8, 'u'),
        _ => return Err(format!("unsupported dtype '{descr}'")),
    })
}

/// Value of `key` in the header dict (`'descr': '<f4'`, ...), raw text.
fn field<'a>(header: &'a str, key: &str) -> Result<&'a str, String> {
    let k = format!("'{key}'");
    let at = header
        .find(&k)
        .ok_or_else(|| format!("header has no '{key}'"))?;
    let rest = header[at + k.len()..].trim_start();
    let rest = rest
        .strip_prefix(':')
        .ok_or_else(|| format!("malformed header near '{key}'"))?
        .trim_start();
    let end = if rest.starts_with('(') {
        rest.find(')').map(|i| i + 1)
    } else if let Some(r) = rest.strip_prefix('\'') {
        r.find('\'').map(|i| i + 2)
    } else {
        rest.find([',', '}'])
    }
    .ok_or_else(|| format!("malformed header near '{key}'"))?;
    Ok(rest[..end].trim())
}

/// Parse a `.npy` file's bytes.
pub fn read(bytes: &[u8]) -> Result<Tensor, String> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err("not a .npy file (bad magic)".into());
    }
    let major = bytes[6];
    let (hlen, start) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10usize),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err("truncated header".into());
            }
            (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            )
        }
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let header = bytes
        .get(start..start.saturating_add(hlen))
        .ok_or("truncated header")?;
    let header = std::str::from_utf8(header).map_err(|_| "header is not text")?;
    let descr = field(header, "descr")?.trim_matches('\'');
    let (elem, size, kind) = dtype(descr)?;
    if field(header, "fortran_order")? != "False" {
        return Err("Fortran-order arrays are not supported; save with C order".into());
    }
    let shape_txt = field(header, "shape")?;
    let shape: Vec<usize> = shape_txt
        .trim_matches(['(', ')'])
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<usize>()
                .map_err(|_| format!("bad shape {shape_txt}"))
        })
        .collect::<Result<_, _>>()?;
    let n = shape
        .iter()
        .try_fold(1usize, |a, d| a.checked_mul(*d))
        .ok_or("shape overflows")?;
    let body = &bytes[start + hlen..];
    let need = n.checked_mul(size).ok_or("shape overflows")?;
    if body.len() != need {
        return Err(format!(
            "data has {} bytes, shape {:?} of '{descr}' needs {need}",
            body.len(),
            shape
        ));
    }
    let data = body
        .chunks_exact(size)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(c);
            let u = u64::from_le_bytes(b);
            match (kind, size) {
                ('f', 2) => Word::float(ftuner_ir::float::bits_to_f64(
                    u as u128,
                    ftuner_ir::FloatKind::F16,
                )),
                ('f', 4) => Word::float(f32::from_bits(u as u32) as f64),
                ('f', _) => Word::float(f64::from_bits(u)),
                ('i', s) => {
                    let sh = 64 - 8 * s as u32;
                    Word::int((u << sh) as i64 >> sh)
                }
                // numpy's bool: any non-zero byte is true.
                ('b', _) => Word::bool(u != 0),
                // Exactly, wrapped to the element type's width.
                _ => ftuner_interp::round_to(Word::int(u as i64), elem),
            }
        })
        .collect();
    Ok(Tensor::new(shape, elem, data))
}

/// Serialize a tensor as `.npy` (version 1.0).
pub fn write(t: &Tensor) -> Result<Vec<u8>, String> {
    let (descr, size) = match (t.elem.float_kind(), t.elem.int_width()) {
        (Some(ftuner_ir::FloatKind::F16), _) => ("<f2", 2),
        (Some(ftuner_ir::FloatKind::F32), _) => ("<f4", 4),
        (Some(ftuner_ir::FloatKind::F64), _) => ("<f8", 8),
        (None, Some(1)) => ("|b1", 1),
        (None, Some(8)) => ("|i1", 1),
        (None, Some(16)) => ("<i2", 2),
        (None, Some(32)) => ("<i4", 4),
        (None, Some(64)) | (None, None) if t.elem.is_index() || t.elem.int_width() == Some(64) => {
            ("<i8", 8)
        }
        _ => return Err(format!("cannot write {} as .npy", t.elem)),
    };
    let shape = match t.shape.len() {
        1 => format!("({},)", t.shape[0]),
        _ => format!(
            "({})",
            t.shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Pad so that the data starts at a multiple of 64 bytes, header ending in '\n'.
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + t.data.len() * size);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for v in &t.data {
        match (descr, size) {
            ("<f2", _) => out.extend_from_slice(
                &(ftuner_ir::float::f64_to_bits(v.f(), t.elem) as u16).to_le_bytes(),
            ),
            ("<f4", _) => out.extend_from_slice(&(v.f() as f32).to_le_bytes()),
            ("<f8", _) => out.extend_from_slice(&v.f().to_le_bytes()),
            (_, s) => out.extend_from_slice(&v.i().to_le_bytes()[..s]),
        }
    }
    Ok(out)
}
