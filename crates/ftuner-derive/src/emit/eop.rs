//! eOperators: a scope emitted as a `ta.expr` over the distinct tensors it reads, its
//! dynamic traversal bounds tied to dims of those tensors.
use super::{extent, ty, Em, Stage, Tensor};
use ftuner_dialects::ta::expr::print_scope;
use ftuner_dialects::ta::{Bound, Scope, Src, Term};
use ftuner_ir::DYNAMIC;

impl Em {
    /// An eOperator: `s` as a `ta.expr` over the tensors it reads; in its traversal order
    /// when `keep_order` (the root, whose layout is the op's; what a matmul, G2BMM or
    /// dense conv reads, which would transpose it back; a conv's gathered image).
    pub(super) fn eop(
        &mut self,
        s: &Scope,
        kids: &[Stage],
        keep_order: bool,
    ) -> Result<Stage, String> {
        if keep_order {
            return self.eop_sized(s, kids, &[]);
        }
        // An intermediate result's layout is ours to choose: the traversal iterator that
        // walks the innermost dim of the largest tensor read goes last, so that the loops
        // read it along memory (a transposed conv's col2im reads the matmul's columns
        // along the image width, but its (n, f, i, x, r) order put the 4 kernel rows
        // innermost, each a plane apart).
        let perm = self.read_order(s, kids)?;
        if perm.iter().enumerate().all(|(j, p)| j == *p) {
            return self.eop_sized(s, kids, &[]);
        }
        let permuted = Scope {
            trav: perm.iter().map(|p| s.trav[*p].clone()).collect(),
            sum: s.sum.clone(),
            body: s.body.clone(),
        };
        let mut st = self.eop_sized(&permuted, kids, &[])?;
        st.layout = perm;
        st.lows = s.trav.iter().map(|i| i.lo).collect();
        Ok(st)
    }

    /// The traversal order of an eOperator with the iterator that indexes the innermost
    /// dim of its largest input last (identity when that index holds no traversal iterator,
    /// or several). Largest by elements, a dynamic dim counted as 64; on a tie, the input
    /// read first.
    fn read_order(&self, s: &Scope, kids: &[Stage]) -> Result<Vec<usize>, String> {
        let n = s.trav.len();
        let id: Vec<usize> = (0..n).collect();
        let mut best: Option<(f64, Vec<String>)> = None;
        for (src, idx) in s.body.accesses() {
            let (_, shape, phys) = self.source(src, idx, kids)?;
            let elems: f64 = shape
                .iter()
                .map(|d| if *d == DYNAMIC { 64.0 } else { *d as f64 })
                .product();
            let Some(inner) = phys.last() else { continue };
            let mut vars = vec![];
            inner.vars(&mut vars);
            vars.retain(|v| s.trav.iter().any(|i| &i.name == v));
            if best.as_ref().is_none_or(|(e, _)| elems > *e) {
                best = Some((elems, vars));
            }
        }
        let Some((_, vars)) = best else {
            return Ok(id);
        };
        let [v] = vars.as_slice() else {
            return Ok(id);
        };
        let Some(last) = s.trav.iter().position(|i| &i.name == v) else {
            return Ok(id);
        };
        let mut perm: Vec<usize> = id.into_iter().filter(|p| *p != last).collect();
        perm.push(last);
        Ok(perm)
    }

    /// An eOperator; `sizing` names, for dynamic traversal iterators no input it reads
    /// spans plainly, a tensor and the dim that bounds them (an extra operand).
    pub(super) fn eop_sized(
        &mut self,
        s: &Scope,
        kids: &[Stage],
        sizing: &[(String, Tensor, usize)],
    ) -> Result<Stage, String> {
        // Inputs of the ta.expr: distinct sources in order of first access.
        let mut names: Vec<(String, Vec<i64>)> = vec![];
        fn go(
            t: &Term,
            em: &Em,
            kids: &[Stage],
            names: &mut Vec<(String, Vec<i64>)>,
        ) -> Result<Term, String> {
            Ok(match t {
                Term::Access(src, idx) => {
                    let (n, sh, phys) = em.source(src, idx, kids)?;
                    let p = match names.iter().position(|(x, _)| *x == n) {
                        Some(p) => p,
                        None => {
                            names.push((n, sh));
                            names.len() - 1
                        }
                    };
                    Term::Access(Src::Input(p), phys)
                }
                Term::Bin(o, a, b) => Term::Bin(
                    *o,
                    Box::new(go(a, em, kids, names)?),
                    Box::new(go(b, em, kids, names)?),
                ),
                _ => t.clone(),
            })
        }
        let body = go(&s.body, self, kids, &mut names)?;
        if s.sum.iter().any(|i| i.hi.dim.is_some()) {
            return Err("a summation with a dynamic extent".into());
        }
        // Dynamic traversal bounds: a dim of an input this expression reads plainly by
        // the iterator (lows 0).
        let mut trav = s.trav.clone();
        for it in &mut trav {
            if it.hi.dim.is_none() {
                continue;
            }
            if it.lo != 0 || it.hi.c != 0 {
                return Err(format!("dynamic iterator '{}' with an offset", it.name));
            }
            let mut found = None;
            for (src, idx) in body.accesses() {
                let Src::Input(p) = src else { continue };
                if let Some(d) = idx.iter().position(|e| e.as_var() == Some(&it.name)) {
                    if names[*p].1[d] == DYNAMIC {
                        found = Some((*p, d));
                        break;
                    }
                }
            }
            if found.is_none() {
                if let Some((_, (n, sh), d)) = sizing.iter().find(|(v, _, _)| *v == it.name) {
                    let p = match names.iter().position(|(x, _)| x == n) {
                        Some(p) => p,
                        None => {
                            names.push((n.clone(), sh.clone()));
                            names.len() - 1
                        }
                    };
                    found = Some((p, *d));
                }
            }
            let (p, d) = found.ok_or_else(|| {
                format!(
                    "no input of the eOperator spans dynamic iterator '{}'",
                    it.name
                )
            })?;
            it.hi = Bound {
                dim: Some((p, d)),
                c: 0,
            };
        }
        let e = Scope {
            trav,
            sum: s.sum.clone(),
            body,
        };
        let shape: Vec<i64> = s.trav.iter().map(extent).collect();
        let text = print_scope(&e, &|i| names[i].0.clone());
        let v = self.fresh();
        let ins: Vec<String> = names.iter().map(|(n, _)| n.clone()).collect();
        let tys: Vec<String> = names.iter().map(|(_, s)| ty(s, &self.elem)).collect();
        self.line(format!(
            "{v} = ta.expr {text} ins({} : {}) -> {}",
            ins.join(", "),
            tys.join(", "),
            ty(&shape, &self.elem)
        ));
        self.eops += 1;
        Ok(Stage {
            name: v,
            shape,
            layout: (0..s.trav.len()).collect(),
            lows: s.trav.iter().map(|i| i.lo).collect(),
        })
    }
}
