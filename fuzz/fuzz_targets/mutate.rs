//! Token-level mutations of MLIR text for the targets that need input that still parses
//! and verifies (most byte-level mutations of a module break its syntax: with libFuzzer's
//! mutations alone, under 1% of the canonicalize target's inputs reached the passes).
//! A quarter of the time libFuzzer's own mutations run; otherwise 1 to 3 of: a number replaced by
//! an edge value, an op name, predicate or type swapped for one of its kind, a value use
//! replaced by another value's name.

/// Words that can replace each other (op names, comparison predicates, types).
const GROUPS: &[&[&str]] = &[
    &[
        "arith.addi",
        "arith.subi",
        "arith.muli",
        "arith.divsi",
        "arith.divui",
        "arith.remsi",
        "arith.remui",
        "arith.andi",
        "arith.ori",
        "arith.xori",
        "arith.shli",
        "arith.shrsi",
        "arith.shrui",
        "arith.maxsi",
        "arith.minsi",
        "arith.maxui",
        "arith.minui",
        "arith.ceildivsi",
        "arith.floordivsi",
        "arith.ceildivui",
    ],
    &[
        "arith.addf",
        "arith.subf",
        "arith.mulf",
        "arith.divf",
        "arith.maximumf",
        "arith.minimumf",
        "arith.maxnumf",
        "arith.minnumf",
        "arith.remf",
    ],
    &[
        "arith.extsi",
        "arith.extui",
        "arith.trunci",
        "arith.index_cast",
        "arith.index_castui",
        "arith.sitofp",
        "arith.uitofp",
        "arith.fptosi",
        "arith.fptoui",
        "arith.extf",
        "arith.truncf",
        "arith.bitcast",
    ],
    &[
        "eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge",
    ],
    &[
        "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une",
        "uno",
    ],
    &[
        "math.exp",
        "math.log",
        "math.sqrt",
        "math.rsqrt",
        "math.tanh",
        "math.absf",
        "math.erf",
        "math.sin",
        "math.cos",
        "math.floor",
        "math.ceil",
        "arith.negf",
    ],
    &["i1", "i8", "i16", "i32", "i64", "index", "i0", "i2", "i128"],
    &["f16", "bf16", "f32", "f64"],
    &["tensor", "memref", "vector"],
    &["parallel", "reduction"],
    &["true", "false"],
];

const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "4",
    "5",
    "7",
    "8",
    "15",
    "16",
    "31",
    "32",
    "63",
    "64",
    "127",
    "128",
    "255",
    "256",
    "1023",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "-1",
    "-2",
    "-2147483648",
    "-9223372036854775808",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.'
}

/// Whether `s[i]` follows the `x` of a shape (`4x8`, `?x16`, `4xf32`).
fn after_shape_x(s: &[u8], i: usize) -> bool {
    i >= 2 && s[i - 1] == b'x' && (s[i - 2].is_ascii_digit() || s[i - 2] == b'?')
}

/// The spans of maximal runs of `pred` starting where `start(s, i)` holds.
fn spans(
    s: &[u8],
    start: impl Fn(&[u8], usize) -> bool,
    pred: impl Fn(u8) -> bool,
) -> Vec<(usize, usize)> {
    let mut out = vec![];
    let mut i = 0;
    while i < s.len() {
        if start(s, i) {
            let b = i;
            i += 1;
            while i < s.len() && pred(s[i]) {
                i += 1;
            }
            out.push((b, i));
        } else {
            i += 1;
        }
    }
    out
}

/// `s` with `spans` (sorted, disjoint) replaced by `with`.
fn replace_spans(s: &[u8], spans: &[(usize, usize)], with: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(s.len() + spans.len() * with.len());
    let mut at = 0;
    for &(b, e) in spans {
        v.extend_from_slice(&s[at..b]);
        v.extend_from_slice(with);
        at = e;
    }
    v.extend_from_slice(&s[at..]);
    v
}

/// `span`, or half the time every span of `all` with the same text (a type or a size
/// changed everywhere keeps the uses consistent).
fn one_or_all(
    s: &[u8],
    all: &[(usize, usize)],
    span: (usize, usize),
    rng: &mut Rng,
) -> Vec<(usize, usize)> {
    if rng.below(2) == 0 {
        return vec![span];
    }
    let text = &s[span.0..span.1];
    all.iter()
        .copied()
        .filter(|&(b, e)| &s[b..e] == text)
        .collect()
}

/// One token-level mutation of `s`, or None when none applies.
fn mutate_once(s: &[u8], rng: &mut Rng) -> Option<Vec<u8>> {
    let word_start = |s: &[u8], i: usize| {
        let p = if i == 0 { b' ' } else { s[i - 1] };
        is_word(s[i]) && ((!is_word(p) && p != b'%' && p != b'^') || after_shape_x(s, i))
    };
    match rng.below(3) {
        0 => {
            // A number not part of a name (`%c0`, `d1`, `i32` keep theirs); shape sizes too.
            let nums = spans(
                s,
                |s, i| s[i].is_ascii_digit() && word_start(s, i),
                |c| c.is_ascii_digit(),
            );
            let span = *nums.get(rng.below(nums.len()))?;
            let with = if rng.below(4) == 0 {
                (rng.next() % 100_000).to_string()
            } else {
                NUMBERS[rng.below(NUMBERS.len())].to_string()
            };
            Some(replace_spans(
                s,
                &one_or_all(s, &nums, span, rng),
                with.as_bytes(),
            ))
        }
        1 => {
            // Words stop at an `x` after a size: `4xf32` holds `f32`.
            let words = spans(s, word_start, |c| is_word(c) && c != b'x');
            let hits: Vec<((usize, usize), &[&str])> = words
                .iter()
                .filter_map(|&sp| {
                    let w = std::str::from_utf8(&s[sp.0..sp.1]).ok()?;
                    GROUPS.iter().find(|g| g.contains(&w)).map(|g| (sp, *g))
                })
                .collect();
            let (span, group) = *hits.get(rng.below(hits.len()))?;
            let with = group[rng.below(group.len())].as_bytes();
            Some(replace_spans(s, &one_or_all(s, &words, span, rng), with))
        }
        _ => {
            // A use of a value replaced by another value of the input. Definitions stay:
            // `%x: T` (an argument, no space before the colon, as MLIR prints them),
            // `%x = `, `%x, %y = `, `%x:2 = `.
            let vals = spans(s, |s, i| s[i] == b'%', is_word);
            let is_def = |&(_, e): &(usize, usize)| {
                let rest = &s[e..];
                let stop = rest
                    .iter()
                    .position(|c| !(is_word(*c) || matches!(c, b' ' | b',' | b'%' | b':')))
                    .unwrap_or(rest.len());
                rest.first() == Some(&b':') || rest.get(stop) == Some(&b'=')
            };
            let uses: Vec<(usize, usize)> = vals.iter().copied().filter(|v| !is_def(v)).collect();
            let from = *uses.get(rng.below(uses.len()))?;
            let to = *vals.get(rng.below(vals.len()))?;
            Some(replace_spans(s, &[from], &s[to.0..to.1]))
        }
    }
}

/// libFuzzer's custom mutator: `data[..size]` in, the new size out.
pub fn mutate(data: &mut [u8], size: usize, max_size: usize, seed: u32) -> usize {
    let mut rng = Rng(u64::from(seed) | 1 << 32);
    if rng.below(4) == 0 || std::str::from_utf8(&data[..size]).is_err() {
        return libfuzzer_sys::fuzzer_mutate(data, size, max_size);
    }
    let mut cur = data[..size].to_vec();
    let mut changed = false;
    for _ in 0..1 + rng.below(3) {
        if let Some(next) = mutate_once(&cur, &mut rng) {
            cur = next;
            changed = true;
        }
    }
    if !changed || cur.len() > max_size {
        return libfuzzer_sys::fuzzer_mutate(data, size, max_size);
    }
    data[..cur.len()].copy_from_slice(&cur);
    cur.len()
}
