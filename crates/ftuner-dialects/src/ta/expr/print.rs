//! Printing scopes in the traversal notation (`L<...> Sum<...> { body }`).

use super::{BinOp, Bound, Iter, Scope, Src, Term};
use std::fmt::Write;

/// Print `s`, naming input `i` by `name(i)` (`$i` in the attribute, the SSA name in the
/// custom assembly).
pub fn print_scope(s: &Scope, name: &dyn Fn(usize) -> String) -> String {
    let mut out = String::new();
    write_scope(&mut out, s, name);
    out
}

fn write_bound(out: &mut String, b: &Bound, name: &dyn Fn(usize) -> String) {
    match b.dim {
        None => {
            let _ = write!(out, "{}", b.c);
        }
        Some((i, d)) => {
            let _ = write!(out, "dim({}, {d})", name(i));
            if b.c != 0 {
                let _ = write!(out, " {} {}", if b.c < 0 { "-" } else { "+" }, b.c.abs());
            }
        }
    }
}

fn write_iters(out: &mut String, kw: &str, its: &[Iter], name: &dyn Fn(usize) -> String) {
    out.push_str(kw);
    out.push('<');
    for (k, i) in its.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{}:{}:", i.name, i.lo);
        write_bound(out, &i.hi, name);
    }
    out.push('>');
}

fn write_scope(out: &mut String, s: &Scope, name: &dyn Fn(usize) -> String) {
    write_iters(out, "L", &s.trav, name);
    if !s.sum.is_empty() {
        out.push(' ');
        write_iters(out, "Sum", &s.sum, name);
    }
    out.push_str(" { ");
    write_term(out, &s.body, name, 0);
    out.push_str(" }");
}

fn write_term(out: &mut String, t: &Term, name: &dyn Fn(usize) -> String, prec: u8) {
    match t {
        Term::Access(src, idx) => {
            match src {
                Src::Input(i) => out.push_str(&name(*i)),
                Src::Scope(s) => {
                    out.push('(');
                    write_scope(out, s, name);
                    out.push(')');
                }
            }
            out.push('[');
            for (k, e) in idx.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{e}");
            }
            out.push(']');
        }
        Term::Const(b) => {
            let x = f64::from_bits(*b);
            // Shortest round-tripping form, always with a '.' (the lexer's float marker).
            let mut t = format!("{x:?}");
            if !t.contains('.') {
                match t.find('e') {
                    Some(p) => t.insert_str(p, ".0"),
                    None => t.push_str(".0"),
                }
            }
            out.push_str(&t);
        }
        Term::Bin(op, a, b) => {
            let p = if *op == BinOp::Mul { 2 } else { 1 };
            if p < prec {
                out.push('(');
            }
            write_term(out, a, name, p);
            out.push_str(match op {
                BinOp::Add => " + ",
                BinOp::Sub => " - ",
                BinOp::Mul => " * ",
            });
            write_term(out, b, name, p + 1);
            if p < prec {
                out.push(')');
            }
        }
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&print_scope(self, &|i| format!("${i}")))
    }
}
