//! Split the textual LLVM IR [`crate::module_to_llvm_ir`] writes into modules compiled on
//! separate threads (LLVM's optimizer and code generator are single-threaded per module).
//!
//! A function goes with the private (LLVM `internal`) functions it references that LLVM may inline or
//! specialize (private and not `noinline`: the thread-pool bodies of a loop nest, their
//! `noalias` variants), so no optimization is lost inside a group; groups are spread over
//! the parts by size, largest first. A private function referenced from another part
//! becomes external (names are unique in the module, and all parts are linked into one
//! JIT dylib); the other part declares it. Globals are private constants: each part gets
//! its own copy of those it reads.

use rustc_hash::{FxHashMap, FxHashSet};

struct Func<'a> {
    name: &'a str,
    /// The `define ...` line.
    head: &'a str,
    /// The lines after it, up to and including the closing `}`.
    body: &'a str,
    private: bool,
    noinline: bool,
    refs: Vec<&'a str>,
}

/// The `@names` a text mentions.
fn symbol_refs(s: &str) -> Vec<&str> {
    let mut out = vec![];
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'@' {
            let start = i + 1;
            let mut j = start;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b"_.$-".contains(&b[j])) {
                j += 1;
            }
            if j > start {
                out.push(&s[start..j]);
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

fn defined_name(head: &str) -> Option<&str> {
    let at = head.find('@')? + 1;
    let len = head[at..].find('(')?;
    Some(&head[at..at + len])
}

/// `declare ...` for a function defined elsewhere: its `define` line without linkage,
/// trailing attributes and body.
fn declaration(head: &str) -> String {
    let rest = head.strip_prefix("define ").unwrap_or(head);
    let rest = rest.strip_prefix("internal ").unwrap_or(rest);
    let end = rest.rfind(')').map_or(rest.len(), |i| i + 1);
    format!("declare {}", &rest[..end])
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

/// `text` as at most `parts` modules that together define what it defines. Fewer parts
/// come back when there are fewer groups; one part is `text` itself.
pub fn partition(text: &str, parts: usize) -> Vec<String> {
    if parts <= 1 {
        return vec![text.to_string()];
    }
    // Top-level entities: functions, globals, and the rest (declarations, attributes).
    let mut funcs: Vec<Func<'_>> = vec![];
    let mut globals: FxHashMap<&str, &str> = FxHashMap::default();
    let mut rest: Vec<&str> = vec![];
    let mut lines = text.split_inclusive('\n').peekable();
    let mut offset = 0usize;
    while let Some(line) = lines.next() {
        let start = offset;
        offset += line.len();
        if line.starts_with("define ") {
            let body_start = offset;
            for l in lines.by_ref() {
                offset += l.len();
                if l.starts_with('}') {
                    break;
                }
            }
            let Some(name) = defined_name(line) else {
                return vec![text.to_string()];
            };
            let body = &text[body_start..offset];
            let flags = &line[line.rfind(')').unwrap_or(0)..];
            funcs.push(Func {
                name,
                head: line,
                body,
                private: line.starts_with("define internal "),
                noinline: flags.contains(" noinline"),
                refs: symbol_refs(body),
            });
        } else if line.starts_with('@') {
            if let Some(name) = symbol_refs(line).first() {
                globals.insert(name, &text[start..offset]);
            }
        } else {
            rest.push(line);
        }
    }
    if funcs.len() < 2 {
        return vec![text.to_string()];
    }
    let index: FxHashMap<&str, usize> =
        funcs.iter().enumerate().map(|(i, f)| (f.name, i)).collect();
    // Groups: a function with the private, inlinable functions it references.
    let mut parent: Vec<usize> = (0..funcs.len()).collect();
    for (i, f) in funcs.iter().enumerate() {
        for r in &f.refs {
            if let Some(&j) = index.get(r) {
                if funcs[j].private && !funcs[j].noinline {
                    let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                    parent[a] = b;
                }
            }
        }
    }
    let mut groups: FxHashMap<usize, (usize, Vec<usize>)> = FxHashMap::default();
    for (i, f) in funcs.iter().enumerate() {
        let g = find(&mut parent, i);
        let e = groups.entry(g).or_default();
        e.0 += f.body.len();
        e.1.push(i);
    }
    let mut groups: Vec<(usize, Vec<usize>)> = groups.into_values().collect();
    groups.sort_by(|a, b| b.0.cmp(&a.0).then(a.1[0].cmp(&b.1[0])));
    let parts = parts.min(groups.len());
    let mut load = vec![0usize; parts];
    let mut part_of = vec![0usize; funcs.len()];
    for (size, members) in &groups {
        let p = (0..parts).min_by_key(|p| (load[*p], *p)).unwrap_or(0);
        load[p] += size;
        for m in members {
            part_of[*m] = p;
        }
    }
    // Private functions referenced from another part become external.
    let mut exported: FxHashSet<usize> = FxHashSet::default();
    for (i, f) in funcs.iter().enumerate() {
        for r in &f.refs {
            if let Some(&j) = index.get(r) {
                if part_of[j] != part_of[i] {
                    exported.insert(j);
                }
            }
        }
    }
    (0..parts)
        .map(|p| {
            let mut out = String::new();
            let mut declared: FxHashSet<&str> = FxHashSet::default();
            let mut used_globals: Vec<&str> = vec![];
            let mut seen: FxHashSet<&str> = FxHashSet::default();
            for (i, f) in funcs.iter().enumerate().filter(|(i, _)| part_of[*i] == p) {
                for r in &f.refs {
                    if globals.contains_key(r) && seen.insert(r) {
                        used_globals.push(r);
                    }
                    if let Some(&j) = index.get(r) {
                        if part_of[j] != p && declared.insert(r) {
                            out.push_str(&declaration(funcs[j].head));
                            out.push('\n');
                        }
                    }
                }
                let head = if exported.contains(&i) {
                    f.head.replacen("define internal ", "define ", 1)
                } else {
                    f.head.to_string()
                };
                out.push_str(&head);
                out.push_str(f.body);
            }
            for g in used_globals {
                out.push_str(globals[g]);
            }
            for l in &rest {
                out.push_str(l);
            }
            out
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "@msg = private constant [3 x i8] c\"ab\\00\"
define void @top(ptr %p) #0 {
bb0:
  call void @nest_a(ptr %p)
  call void @nest_b(ptr %p)
  ret void
}

define internal void @nest_a(ptr %p) noinline #0 {
bb0:
  call void @body_a(ptr %p)
  ret void
}

define internal void @body_a(ptr %p) #0 {
bb0:
  call void @fail(ptr @msg)
  ret void
}

define internal void @nest_b(ptr %p) noinline #0 {
bb0:
  ret void
}

declare void @fail(ptr)

attributes #0 = { nounwind }
";

    /// The names a text defines.
    fn defines(t: &str) -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with("define "))
            .filter_map(defined_name)
            .map(String::from)
            .collect()
    }

    #[test]
    fn parts_define_everything_once_and_each_parses_alone() {
        let parts = partition(TEXT, 2);
        assert_eq!(parts.len(), 2);
        let mut all: Vec<String> = parts.iter().flat_map(|p| defines(p)).collect();
        all.sort();
        assert_eq!(all, ["body_a", "nest_a", "nest_b", "top"]);
        // The inlinable body stays with its nest, with the constant it reads.
        let a = parts
            .iter()
            .find(|p| defines(p).contains(&"nest_a".to_string()))
            .unwrap();
        assert!(a.contains("define internal void @body_a("), "{a}");
        assert!(a.contains("@msg = private constant"));
        // A nest called from the other part is external there and declared here.
        let top = parts
            .iter()
            .find(|p| defines(p).contains(&"top".to_string()))
            .unwrap();
        for n in ["nest_a", "nest_b"] {
            let home = parts
                .iter()
                .find(|p| defines(p).contains(&n.to_string()))
                .unwrap();
            if !std::ptr::eq(home, top) {
                assert!(home.contains(&format!("define void @{n}(")), "{home}");
                assert!(top.contains(&format!("declare void @{n}(ptr %p)")), "{top}");
            }
        }
        for p in &parts {
            let ctx = inkwell::context::Context::create();
            let buf = inkwell::memory_buffer::MemoryBuffer::create_from_memory_range_copy(
                p.as_bytes(),
                "part",
            );
            let m = ctx
                .create_module_from_ir(buf)
                .unwrap_or_else(|e| panic!("{e}\n{p}"));
            m.verify().unwrap_or_else(|e| panic!("{e}\n{p}"));
        }
        assert_eq!(partition(TEXT, 1), vec![TEXT.to_string()]);
    }
}
