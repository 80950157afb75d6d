//! The IR text primitives of the emitter: fresh SSA names, lines, index constants,
//! dims, `tensor.empty`, collapses and expansions, a matched operator on a zero-filled
//! result, run-time extent asserts, and `dim($j, d) + c` bounds.
use super::{reassociation, ty, Em, Stage};
use ftuner_dialects::ta::{Bound, Scope};
use ftuner_ir::DYNAMIC;

impl Em {
    pub(super) fn fresh(&mut self) -> String {
        self.n += 1;
        format!("%o{}", self.n)
    }
    pub(super) fn line(&mut self, s: String) {
        self.out.push_str("    ");
        self.out.push_str(&s);
        self.out.push('\n');
    }
    pub(super) fn cst(&mut self, v: i64) -> String {
        let c = self.fresh();
        self.line(format!("{c} = arith.constant {v} : index"));
        c
    }
    /// Dim `d` of tensor `t` (of `shape`) as an SSA index.
    pub(super) fn dim(&mut self, t: &str, shape: &[i64], d: usize) -> String {
        if shape[d] != DYNAMIC {
            return self.cst(shape[d]);
        }
        let c = self.cst(d as i64);
        let v = self.fresh();
        let tt = ty(shape, &self.elem);
        self.line(format!("{v} = tensor.dim {t}, {c} : {tt}"));
        v
    }
    /// The dynamic dims of `shape` read from tensor `t` (for `tensor.empty`).
    pub(super) fn dyn_dims(&mut self, t: &str, tshape: &[i64], dims: &[usize]) -> Vec<String> {
        dims.iter()
            .filter(|d| tshape[**d] == DYNAMIC)
            .map(|d| self.dim(t, tshape, *d))
            .collect()
    }
    pub(super) fn empty(&mut self, shape: &[i64], dyn_vals: &[String]) -> String {
        let e = self.fresh();
        let t = ty(shape, &self.elem);
        self.line(format!("{e} = tensor.empty({}) : {t}", dyn_vals.join(", ")));
        e
    }
    /// `t` (of `shape`) with consecutive dims collapsed in groups of the given sizes
    /// (`tensor.collapse_shape`; `t` itself when every group is one dim).
    pub(super) fn collapse_groups(
        &mut self,
        t: &str,
        shape: &[i64],
        groups: &[usize],
    ) -> (String, Vec<i64>) {
        if groups.iter().all(|n| *n == 1) {
            return (t.to_string(), shape.to_vec());
        }
        let mut cs = vec![];
        let mut at = 0;
        for n in groups {
            let part = &shape[at..at + n];
            cs.push(if part.contains(&DYNAMIC) {
                DYNAMIC
            } else {
                part.iter().product()
            });
            at += n;
        }
        let v = self.fresh();
        self.line(format!(
            "{v} = tensor.collapse_shape {t} [{}] : {} into {}",
            reassociation(groups.iter().copied()),
            ty(shape, &self.elem),
            ty(&cs, &self.elem)
        ));
        (v, cs)
    }
    /// `t` (of `shape`, its dim 0 the flattened leading `nb` dims of `like`) with that dim
    /// expanded back to them (`tensor.expand_shape`; `t` itself when `nb` is 1).
    pub(super) fn expand_leading(
        &mut self,
        t: &str,
        shape: &[i64],
        like: &Stage,
        nb: usize,
    ) -> (String, Vec<i64>) {
        if nb == 1 {
            return (t.to_string(), shape.to_vec());
        }
        let mut fshape: Vec<i64> = like.shape[..nb].to_vec();
        fshape.extend_from_slice(&shape[1..]);
        let mut vals = vec![];
        for (j, e) in fshape.iter().enumerate() {
            vals.push(if *e != DYNAMIC {
                e.to_string()
            } else {
                self.dim(&like.name, &like.shape, j)
            });
        }
        let mut groups = vec![nb];
        groups.extend(std::iter::repeat_n(1, shape.len() - 1));
        let v = self.fresh();
        self.line(format!(
            "{v} = tensor.expand_shape {t} [{}] output_shape [{}] : {} into {}",
            reassociation(groups.into_iter()),
            vals.join(", "),
            ty(shape, &self.elem),
            ty(&fshape, &self.elem)
        ));
        (v, fshape)
    }
    /// A matched operator `op` (a linalg op with two inputs) of `x` and `y` into a
    /// zero-filled tensor of `shape` (its dynamic dims given); returns its result.
    pub(super) fn onto_zeros(
        &mut self,
        op: &str,
        (x, xs): (&str, &[i64]),
        (y, ys): (&str, &[i64]),
        shape: &[i64],
        dyn_vals: &[String],
    ) -> String {
        let z = self.empty(shape, dyn_vals);
        let rt = ty(shape, &self.elem);
        let (zero, f, r) = (self.fresh(), self.fresh(), self.fresh());
        self.line(format!(
            "{zero} = arith.constant 0.000000e+00 : {}",
            self.elem
        ));
        self.line(format!(
            "{f} = linalg.fill ins({zero} : {}) outs({z} : {rt}) -> {rt}",
            self.elem
        ));
        self.line(format!(
            "{r} = {op} ins({x}, {y} : {}, {}) outs({f} : {rt}) -> {rt}",
            ty(xs, &self.elem),
            ty(ys, &self.elem)
        ));
        r
    }
    /// For each dynamic dim `d` of tensor `t` (read by iterator `vars[d]`), a run-time
    /// check that it equals the iterator's extent (else the operator would read outside).
    pub(super) fn assert_extents(
        &mut self,
        s: &Scope,
        t: &str,
        shape: &[i64],
        vars: &[String],
        what: &str,
    ) -> Result<(), String> {
        for (d, v) in vars.iter().enumerate() {
            if shape[d] != DYNAMIC {
                continue;
            }
            let it = s.iter(v).ok_or("a dim is not read by an iterator")?.clone();
            let have = self.dim(t, shape, d);
            let want = self.bound(&it.hi)?;
            let ok = self.fresh();
            self.line(format!("{ok} = arith.cmpi eq, {have}, {want} : index"));
            self.line(format!(
                "cf.assert {ok}, \"ollie-derive: {what}'s dim {d} differs from the extent of '{}'\"",
                it.name
            ));
        }
        Ok(())
    }
    /// The value of a `dim($j, d) + c` bound, from the op's operands.
    pub(super) fn bound(&mut self, b: &Bound) -> Result<String, String> {
        let (j, d) = b.dim.ok_or("not a dynamic bound")?;
        let shape = self
            .operands
            .get(j)
            .ok_or("a bound names a missing operand")?
            .clone();
        let v = self.dim(&format!("%op{j}"), &shape, d);
        if b.c == 0 {
            return Ok(v);
        }
        let c = self.cst(b.c);
        let r = self.fresh();
        self.line(format!("{r} = arith.addi {v}, {c} : index"));
        Ok(r)
    }
}
