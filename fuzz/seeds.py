#!/usr/bin/env python3
"""Seed corpora and a dictionary for the coverage-guided fuzz targets, generated from the
repository (nothing large is committed; docs/robustness.md, "Coverage-guided fuzzing").

    python3 fuzz/seeds.py            # writes fuzz/corpus/{parse,canonicalize,npy}/, fuzz/mlir.dict

* parse, canonicalize: every `// -----` chunk of the lit inputs and the small examples,
  comment lines dropped, at most 4 KiB each (libFuzzer's default length limit);
* npy: small .npy files of every dtype and format version the reader takes, and a few it
  refuses (big-endian, Fortran order, truncated);
* mlir.dict: every op name of ir-specs/*.toml, types and punctuation.

Existing files are kept (the corpus grows across runs); seeds are named by their content.
"""
import hashlib
import os
import re
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUZZ = os.path.join(ROOT, "fuzz")
MAX_LEN = 4096


def put(corpus, data):
    d = os.path.join(FUZZ, "corpus", corpus)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "seed-" + hashlib.sha1(data).hexdigest()[:16])
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.write(data)


def mlir_sources():
    for sub in ("lit-tests", "examples"):
        for dirpath, _, files in sorted(os.walk(os.path.join(ROOT, sub))):
            if "/Output" in dirpath:
                continue
            for name in sorted(files):
                if name.endswith(".mlir"):
                    yield os.path.join(dirpath, name)


def mlir_seeds():
    n = 0
    for path in mlir_sources():
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for chunk in re.split(r"^// -----\s*$", text, flags=re.M):
            lines = [l for l in chunk.splitlines() if not l.lstrip().startswith("//")]
            body = "\n".join(l for l in lines).strip() + "\n"
            data = body.encode()
            if 1 < len(data) <= MAX_LEN:
                for corpus in ("parse", "canonicalize"):
                    put(corpus, data)
                n += 1
    return n


def npy(descr, shape, payload, version=1, fortran="False", pad=True):
    shape_txt = "(%s,)" % shape[0] if len(shape) == 1 else "(%s)" % ", ".join(map(str, shape))
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape_txt)
    lead = 10 if version == 1 else 12
    if pad:
        while (lead + len(header) + 1) % 64:
            header += " "
    header += "\n"
    h = header.encode()
    size = struct.pack("<H", len(h)) if version == 1 else struct.pack("<I", len(h))
    return b"\x93NUMPY" + bytes([version, 0]) + size + h + payload


def npy_seeds():
    seeds = []
    fmt = {"<f2": "e", "<f4": "f", "<f8": "d", "|b1": "?", "|i1": "b", "<i2": "h",
           "<i4": "i", "<i8": "q", "|u1": "B", "<u2": "H", "<u4": "I", "<u8": "Q"}
    for descr, c in fmt.items():
        vals = [1, 0, 1, 1, 0, 1] if c == "?" else [0, 1, 2, 3, 4, 5]
        payload = struct.pack("<" + c * 6, *vals)
        seeds.append(npy(descr, [2, 3], payload))
        seeds.append(npy(descr, [6], payload, version=2))
    seeds.append(npy("<f4", [], struct.pack("<f", 1.5), version=3))
    seeds.append(npy("<f4", [0, 4], b""))
    seeds.append(npy("<f8", [1, 1, 2], struct.pack("<2d", -0.0, float("nan")), pad=False))
    seeds.append(npy(">f4", [2], struct.pack(">2f", 1, 2)))
    seeds.append(npy("<f4", [2], struct.pack("<2f", 1, 2), fortran="True"))
    seeds.append(npy("<f4", [3], struct.pack("<2f", 1, 2)))
    seeds.append(npy("<f4", [2, 2], struct.pack("<4f", 1, 2, 3, 4))[:40])
    for s in seeds:
        put("npy", s)
    return len(seeds)


def dictionary():
    words = set()
    for name in sorted(os.listdir(os.path.join(ROOT, "ir-specs"))):
        if not name.endswith(".toml"):
            continue
        text = open(os.path.join(ROOT, "ir-specs", name), encoding="utf-8").read()
        m = re.search(r'^\[dialect\]\s*\nname = "([^"]+)"', text, flags=re.M)
        if not m:
            continue
        dialect = m.group(1)
        for op in re.findall(r'^\[\[op\]\]\s*\nname = "([^"]+)"', text, flags=re.M):
            words.add("%s.%s" % (dialect, op))
    words |= {
        "module", "func.func", "tensor<", "memref<", "vector<", "index", "i1", "i8", "i32",
        "i64", "f16", "bf16", "f32", "f64", "dense<", "affine_map<", "(d0, d1) -> (d0)",
        "#map", "loc(", "%arg0", "%c0", "^bb0", "ins(", "outs(", "->", "?x", "x", ": ",
        "{", "}", "[", "]", "<", ">", "\"", "-----", "iterator_types", "\"parallel\"",
        "\"reduction\"", "indexing_maps", "strided<", "offset: ", "unit", "true", "false",
        "0x7FC00000", "9223372036854775807", "-1", "18446744073709551615",
    }
    path = os.path.join(FUZZ, "mlir.dict")
    with open(path, "w") as f:
        for w in sorted(words):
            f.write('"%s"\n' % w.replace("\\", "\\\\").replace('"', '\\"'))
    return len(words)


if __name__ == "__main__":
    m = mlir_seeds()
    n = npy_seeds()
    d = dictionary()
    print("seeds: %d MLIR chunks (parse, canonicalize), %d .npy files; mlir.dict: %d words"
          % (m, n, d), file=sys.stderr)
