#!/usr/bin/env python3
"""One concept per file, one job per function: no Rust source file in crates/, tools/ or
python/src over 800 lines and no function over 150 lines (tests, benches, fuzz targets
and generated code aside). Known exceptions live in tools/lint/size-exceptions.txt, one
`path` or `path::function` per line with the reason; an exception that is no longer
needed is an error too, so the list only shrinks.

    python3 tools/lint/sizes.py            # check (exit 1 on a violation)
    python3 tools/lint/sizes.py --report   # every file and function over the limits
"""

import argparse
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DIRS = ["crates", "tools", "python/src"]
MAX_FILE = 800
MAX_FN = 150
SKIP_DIRS = {"tests", "benches", "target", "fuzz", "examples"}


def strip(src):
    """The source with comments, strings and char literals blanked (newlines kept), so
    braces count only where they are code."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif re.match(r'(b|c)?r#*"', src[i:i + 40]) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'(b|c)?r(#*)"', src[i:])
            end = '"' + m.group(2)
            j = src.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == "'":
            # A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            m = re.match(r"'(\\.[^']*|[^'\\\n])'", src[i:])
            if m:
                out.append(" " * m.end())
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")


def functions(code):
    """(name, first line, line count) of every function with a body."""
    res = []
    for m in FN.finditer(code):
        j = m.end()
        # The body starts at the first `{` outside the signature's parens/brackets; a `;`
        # first means no body (a trait method declaration).
        depth = 0
        while j < len(code):
            ch = code[j]
            if ch in "([<" and not (ch == "<" and code[j - 1] == "-"):
                depth += 1
            elif ch in ")]>" and not (ch == ">" and code[j - 1] == "-"):
                depth -= 1
            elif ch == "{" and depth <= 0:
                break
            elif ch == ";" and depth <= 0:
                j = -1
                break
            j += 1
        if j < 0 or j >= len(code):
            continue
        d, k = 0, j
        while k < len(code):
            if code[k] == "{":
                d += 1
            elif code[k] == "}":
                d -= 1
                if d == 0:
                    break
            k += 1
        start = code.count("\n", 0, m.start()) + 1
        end = code.count("\n", 0, k) + 1
        res.append((m.group(1), start, end - start + 1))
    return res


def sources():
    for d in DIRS:
        for dp, dn, fn in os.walk(os.path.join(ROOT, d)):
            dn[:] = sorted(x for x in dn if x not in SKIP_DIRS)
            for f in sorted(fn):
                if f.endswith(".rs") and not f.startswith("generated"):
                    yield os.path.relpath(os.path.join(dp, f), ROOT)


def violations():
    out = []
    for path in sources():
        src = open(os.path.join(ROOT, path), encoding="utf-8", errors="replace").read()
        lines = src.count("\n")
        if lines > MAX_FILE:
            out.append((path, f"{lines} lines (limit {MAX_FILE})"))
        for name, start, count in functions(strip(src)):
            if count > MAX_FN:
                out.append((f"{path}::{name}", f"{count} lines at line {start} (limit {MAX_FN})"))
    return out


def exceptions():
    path = os.path.join(ROOT, "tools", "lint", "size-exceptions.txt")
    res = {}
    for line in open(path, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if line:
            key, _, why = line.partition(" ")
            res[key] = why.strip()
    return res


def self_test():
    """The counter on cases it must get right: braces in strings, raw strings, chars and
    comments do not count; a declaration without a body is no function; lifetimes are
    not char literals."""
    body = "\n".join(["    x += 1;"] * 160)
    src = (
        "fn short<'a>(s: &'a str) -> char { let _ = \"{\"; let _ = r#\"}}}\"#; '{' }\n"
        "// fn commented() {\n"
        "trait T { fn decl(&self); }\n"
        f"fn long() {{\n{body}\n}}\n"
        "/* { */ fn after() -> Vec<u8> { vec![] }\n"
    )
    got = {name: count for name, _, count in functions(strip(src))}
    want = {"short": 1, "long": 162, "after": 1}
    assert got == want, f"sizes.py self-test: got {got}, want {want}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--report", action="store_true", help="list every violation, exceptions included")
    a = ap.parse_args()
    self_test()
    found = violations()
    if a.report:
        for k, what in found:
            print(f"{k}: {what}")
        return 0
    allowed = exceptions()
    bad = [(k, w) for k, w in found if k not in allowed]
    stale = sorted(set(allowed) - {k for k, _ in found})
    for k, w in bad:
        print(f"error: {k}: {w}: split it by concept (docs/architecture.md), or list it in tools/lint/size-exceptions.txt with the reason")
    for k in stale:
        print(f"error: {k} is within the limits now: remove it from tools/lint/size-exceptions.txt")
    if bad or stale:
        return 1
    print(f"sizes: ok ({len(allowed)} listed exceptions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
