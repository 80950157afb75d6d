//! The patch planner: cover a dimension of run-time size `X` with uKernel tiles
//! `t1 > t2 > ...`, exactly when possible, at the least estimated time (FTuner §4).
//!
//! `X = q * t1 + r`: `q` calls of the main tile, and the residue `r < t1` covered by the
//! combination of smaller tiles with the least estimated cycles — a small dynamic program
//! over `r`, precomputed at compile time for every `r` so the run-time choice is a table
//! lookup. A tile larger than what is left may be used (padding) only within the allowed
//! padding fraction of the main tile. Planning M and N separately gives the joint plan:
//! the main block uses the main tile, the edge strips the residue tiles of one dimension,
//! the corner the residue tiles of both.

use std::fmt::Write;

/// The plan for one dimension.
#[derive(Clone, Debug, PartialEq)]
pub struct DimPlan {
    /// The main (largest) tile.
    pub main: u32,
    /// For each residue `r` in `0..main`, the tiles covering it (largest first).
    pub residues: Vec<Vec<u32>>,
    /// The size, when it is known at compile time (the plan is then that one entry).
    pub static_size: Option<u64>,
}

/// Plan a dimension with `tiles` (any order; must contain at least one tile) and a cost
/// per call of each tile. `max_padding` is the fraction of the main tile a residue may be
/// padded by.
pub fn plan_dim(
    tiles: &[(u32, f64)],
    max_padding: f64,
    static_size: Option<u64>,
) -> Result<DimPlan, String> {
    let mut ts: Vec<(u32, f64)> = tiles.iter().copied().filter(|(t, _)| *t > 0).collect();
    ts.sort_by_key(|t| std::cmp::Reverse(t.0));
    ts.dedup_by_key(|t| t.0);
    let Some(&(main, _)) = ts.first() else {
        return Err("no tiles to plan with".into());
    };
    let pad_limit = (max_padding * main as f64).floor() as usize;
    let n = main as usize;
    // exact[s] = cheapest combination of tiles summing to exactly s, for s < 2 * main.
    let mut exact: Vec<Option<(f64, Vec<u32>)>> = vec![None; 2 * n];
    exact[0] = Some((0.0, vec![]));
    for s in 1..2 * n {
        let mut cand: Option<(f64, Vec<u32>)> = None;
        for &(t, c) in &ts {
            if (t as usize) <= s {
                if let Some((bc, bt)) = &exact[s - t as usize] {
                    let cost = bc + c;
                    if cand.as_ref().is_none_or(|(cc, ct)| {
                        cost < *cc - 1e-9 || ((cost - cc).abs() <= 1e-9 && bt.len() + 1 < ct.len())
                    }) {
                        let mut v = vec![t];
                        v.extend(bt.iter().copied());
                        v.sort_by(|a, b| b.cmp(a));
                        cand = Some((cost, v));
                    }
                }
            }
        }
        exact[s] = cand;
    }
    // Residue r: exact when possible (or a padded cover within the allowed padding if it
    // is cheaper); otherwise the cover with the least padding, then the least cost.
    let mut residues: Vec<Vec<u32>> = vec![vec![]; n];
    for (r, slot) in residues.iter_mut().enumerate().skip(1) {
        let mut choice: Option<(f64, Vec<u32>)> = exact[r].clone();
        let hi = (r + pad_limit + 1).min(2 * n);
        for (c, v) in exact[(r + 1).min(hi)..hi].iter().flatten() {
            {
                if choice.as_ref().is_none_or(|(cc, _)| *c < *cc - 1e-9) {
                    choice = Some((*c, v.clone()));
                }
            }
        }
        if choice.is_none() {
            choice = (r + 1..2 * n).find_map(|s| exact[s].clone());
        }
        *slot = choice
            .map(|x| x.1)
            .ok_or_else(|| format!("residue {r} of tile {main} cannot be covered"))?;
    }
    let residues: Result<Vec<Vec<u32>>, String> = Ok(residues);
    let mut residues = residues?;
    if let Some(s) = static_size {
        // Specialize completely: keep only the residue that occurs.
        let r = (s % main as u64) as usize;
        for (i, v) in residues.iter_mut().enumerate() {
            if i != r {
                v.clear();
            }
        }
    }
    Ok(DimPlan {
        main,
        residues,
        static_size,
    })
}

impl DimPlan {
    /// The tiles covering `x`, in order: `q` main tiles then the residue's.
    pub fn cover(&self, x: u64) -> Vec<u32> {
        let q = x / self.main as u64;
        let r = (x % self.main as u64) as usize;
        let mut v = vec![self.main; q as usize];
        v.extend(self.residues[r].iter().copied());
        v
    }
    /// Elements computed for a size `x` (>= x when padding is used).
    pub fn executed(&self, x: u64) -> u64 {
        self.cover(x).iter().map(|t| *t as u64).sum()
    }
    /// `main | 0: - 1: 1 2: 2 3: 2+1 ...` (static: just the size's entry).
    pub fn describe(&self) -> String {
        let mut s = format!("{}", self.main);
        if let Some(n) = self.static_size {
            let _ = write!(s, " static {n}");
        }
        s.push_str(" |");
        for (r, v) in self.residues.iter().enumerate() {
            if self.static_size.is_some()
                && v.is_empty()
                && r != (self.static_size.unwrap_or(0) % self.main as u64) as usize
            {
                continue;
            }
            let t = if v.is_empty() {
                "-".to_string()
            } else {
                v.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join("+")
            };
            let _ = write!(s, " {r}:{t}");
        }
        s
    }
}

/// Executed over useful elements of a 2-D (M x N) iteration space under three schemes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PaddingRatios {
    pub patched: f64,
    pub pow2_buckets: f64,
    pub fixed_tile: f64,
}

fn next_pow2(x: u64) -> u64 {
    x.max(1).next_power_of_two()
}

/// Ratios for sizes `m x n` (dynamic dims flagged) with the plans and the main tile.
pub fn padding_ratios(
    m: u64,
    n: u64,
    m_dynamic: bool,
    n_dynamic: bool,
    mp: &DimPlan,
    np: &DimPlan,
) -> PaddingRatios {
    let useful = (m * n) as f64;
    if useful == 0.0 {
        return PaddingRatios {
            patched: 1.0,
            pow2_buckets: 1.0,
            fixed_tile: 1.0,
        };
    }
    let patched = (mp.executed(m) * np.executed(n)) as f64 / useful;
    let pm = if m_dynamic { next_pow2(m) } else { m };
    let pn = if n_dynamic { next_pow2(n) } else { n };
    let fm = m.div_ceil(mp.main as u64) * mp.main as u64;
    let fnn = n.div_ceil(np.main as u64) * np.main as u64;
    PaddingRatios {
        patched,
        pow2_buckets: (pm * pn) as f64 / useful,
        fixed_tile: (fm * fnn) as f64 / useful,
    }
}

/// An SVG picture of how `m x n` is covered: a colour per tile size, padding hatched.
pub fn plan_svg(m: u64, n: u64, mp: &DimPlan, np: &DimPlan) -> String {
    let rows = mp.cover(m);
    let cols = np.cover(n);
    let (em, en) = (mp.executed(m).max(1) as f64, np.executed(n).max(1) as f64);
    let w = 800.0;
    let h = (w * em / en).clamp(80.0, 800.0);
    let (sx, sy) = (w / en, h / em);
    let palette = [
        "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
        "#9c755f", "#bab0ac",
    ];
    let mut sizes: Vec<(u32, u32)> = vec![];
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="11">"#,
        w + 180.0,
        h + 40.0
    );
    let _ = writeln!(
        s,
        r#"<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="black" stroke-width="2"/></pattern></defs>"#
    );
    let _ = writeln!(
        s,
        r#"<text x="0" y="14">M={m} x N={n}: {} x {} uKernel calls</text>"#,
        rows.len(),
        cols.len()
    );
    let mut y = 0.0;
    for &tm in &rows {
        let mut x = 0.0;
        for &tn in &cols {
            let idx = match sizes.iter().position(|z| *z == (tm, tn)) {
                Some(i) => i,
                None => {
                    sizes.push((tm, tn));
                    sizes.len() - 1
                }
            };
            let _ = writeln!(
                s,
                r#"<rect x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="{}" stroke="white" stroke-width="0.5"/>"#,
                x * sx,
                20.0 + y * sy,
                tn as f64 * sx,
                tm as f64 * sy,
                palette[idx % palette.len()]
            );
            x += tn as f64;
        }
        y += tm as f64;
    }
    // Padding: beyond the useful m x n.
    if em > m as f64 {
        let _ = writeln!(
            s,
            r#"<rect x="0" y="{:.2}" width="{:.2}" height="{:.2}" fill="url(#hatch)"/>"#,
            20.0 + m as f64 * sy,
            w,
            (em - m as f64) * sy
        );
    }
    if en > n as f64 {
        let _ = writeln!(
            s,
            r#"<rect x="{:.2}" y="20" width="{:.2}" height="{:.2}" fill="url(#hatch)"/>"#,
            n as f64 * sx,
            (en - n as f64) * sx,
            h
        );
    }
    for (i, (tm, tn)) in sizes.iter().enumerate() {
        let ly = 40.0 + i as f64 * 18.0;
        let _ = writeln!(
            s,
            r#"<rect x="{}" y="{ly}" width="14" height="14" fill="{}"/><text x="{}" y="{}">{tm}x{tn}</text>"#,
            w + 20.0,
            palette[i % palette.len()],
            w + 40.0,
            ly + 11.0
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn exact_cover_with_binary_tiles() {
        let tiles = [(14, 14.0), (8, 8.5), (4, 4.6), (2, 4.0), (1, 4.0)];
        let p = plan_dim(&tiles, 0.0, None).unwrap();
        for x in 0..500u64 {
            assert_eq!(p.executed(x), x, "x={x} cover {:?}", p.cover(x));
        }
        assert_eq!(p.cover(30), vec![14, 14, 2]);
        assert_eq!(p.residues[13], vec![8, 4, 1]);
    }
    #[test]
    fn padding_when_allowed_and_cheaper() {
        let tiles = [(16, 10.0), (8, 6.0), (1, 4.0)];
        let p = plan_dim(&tiles, 0.5, None).unwrap();
        // 7 = 7 calls of 1 (28) vs one padded 8 (6).
        assert_eq!(p.residues[7], vec![8]);
        assert_eq!(p.executed(7), 8);
    }
    #[test]
    fn static_sizes_are_specialized() {
        let p = plan_dim(&[(14, 1.0), (4, 1.0), (1, 1.0)], 0.0, Some(33)).unwrap();
        assert_eq!(p.cover(33), vec![14, 14, 4, 1]);
        assert_eq!(p.residues.iter().filter(|v| !v.is_empty()).count(), 1);
    }
}
