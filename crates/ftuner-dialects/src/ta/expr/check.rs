//! Checking a scope against its inputs' ranks: unique iterators, bound index variables,
//! matching ranks, closed nested scopes.

use super::{Scope, Src};

/// Check a scope against its inputs' ranks and the result rank: iterator names unique
/// within a scope, every index variable bound, ranks matching, nested scopes closed,
/// bounds' dims existing.
pub fn check(s: &Scope, ranks: &[usize]) -> Result<(), String> {
    let mut seen = vec![];
    for i in s.trav.iter().chain(&s.sum) {
        if seen.contains(&i.name) {
            return Err(format!("iterator '{}' is declared twice", i.name));
        }
        seen.push(i.name.clone());
        if let Some((inp, d)) = i.hi.dim {
            if ranks.get(inp).is_none_or(|r| d >= *r) {
                return Err(format!(
                    "bound of '{}' names dim {d} of input ${inp}, which does not exist",
                    i.name
                ));
            }
        } else if i.hi.c < i.lo {
            return Err(format!("iterator '{}' has an empty range", i.name));
        }
    }
    for (src, idx) in s.body.accesses() {
        let rank = match src {
            Src::Input(i) => *ranks
                .get(*i)
                .ok_or_else(|| format!("reads input ${i}, but there are {}", ranks.len()))?,
            Src::Scope(inner) => {
                check(inner, ranks)?;
                inner.trav.len()
            }
        };
        if idx.len() != rank {
            return Err(format!(
                "an access has {} indices for a tensor of rank {rank}",
                idx.len()
            ));
        }
        let mut vars = vec![];
        for e in idx {
            e.vars(&mut vars);
        }
        if let Some(v) = vars.iter().find(|v| !seen.contains(v)) {
            return Err(format!(
                "index variable '{v}' is not an iterator of its scope"
            ));
        }
    }
    Ok(())
}
