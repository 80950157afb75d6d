//! The latency plot of a sweep: its rows ([`Row`]), read back from `--json` lines for
//! `--replot`, drawn as an SVG.

/// Rows back from `--json` lines.
pub(crate) fn rows_from_json(text: &str) -> Result<(String, Vec<Row>), String> {
    let field = |l: &str, k: &str| -> Option<f64> {
        let at = l.find(&format!("\"{k}\": "))? + k.len() + 4;
        let rest = &l[at..];
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        rest[..end].trim().parse().ok()
    };
    let mut name = String::new();
    let mut rows = vec![];
    for (i, l) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        if name.is_empty() {
            if let Some(a) = l.find("\"layer\": \"") {
                name = l[a + 10..].split('"').next().unwrap_or("").to_string();
            }
        }
        let t = field(l, "T").ok_or_else(|| format!("--replot: line {}: no T", i + 1))?;
        let ms = field(l, "ftuner_ms")
            .ok_or_else(|| format!("--replot: line {}: no ftuner_ms", i + 1))?;
        rows.push((t as usize, ms, field(l, "bucket_ms"), field(l, "blas_ms")));
    }
    Ok((name, rows))
}

/// (T, ftuner ms, bucket ms, OpenBLAS-variant ms).
pub(crate) type Row = (usize, f64, Option<f64>, Option<f64>);

pub(crate) fn svg(rows: &[Row], title: &str) -> String {
    let (w, h, l, r, t, b) = (760.0, 440.0, 70.0, 20.0, 40.0, 50.0);
    let xmax = rows.iter().map(|x| x.0).max().unwrap_or(1) as f64;
    let ymax = rows
        .iter()
        .map(|x| x.1.max(x.2.unwrap_or(0.0)).max(x.3.unwrap_or(0.0)))
        .fold(0.0, f64::max)
        * 1.05;
    let px = |x: f64| l + (w - l - r) * x / xmax;
    let py = |y: f64| h - b - (h - t - b) * y / ymax.max(1e-9);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"14\">{title}</text>\n",
        w / 2.0
    );
    s += &format!(
        "<line x1=\"{l}\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" stroke=\"black\"/>\n<line x1=\"{l}\" y1=\"{t}\" x2=\"{l}\" y2=\"{0}\" stroke=\"black\"/>\n",
        h - b,
        w - r
    );
    for i in 0..=8 {
        let x = xmax * i as f64 / 8.0;
        s += &format!(
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{:.0}</text>\n",
            px(x),
            h - b + 16.0,
            x
        );
        let y = ymax * i as f64 / 8.0;
        s += &format!(
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{:.1}</text>\n<line x1=\"{l}\" y1=\"{:.1}\" x2=\"{}\" y2=\"{:.1}\" stroke=\"#ddd\"/>\n",
            l - 6.0,
            py(y) + 4.0,
            y,
            py(y),
            w - r,
            py(y)
        );
    }
    s += &format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">sequence length T</text>\n<text x=\"16\" y=\"{}\" transform=\"rotate(-90 16 {})\" text-anchor=\"middle\">latency (ms)</text>\n",
        (l + w - r) / 2.0,
        h - 12.0,
        (t + h - b) / 2.0,
        (t + h - b) / 2.0
    );
    let line = |pts: Vec<(f64, f64)>, color: &str| {
        let p: Vec<String> = pts
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y)))
            .collect();
        format!(
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"1.5\" points=\"{}\"/>\n",
            p.join(" ")
        )
    };
    s += &line(rows.iter().map(|x| (x.0 as f64, x.1)).collect(), "#1f77b4");
    let bk: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|x| x.2.map(|v| (x.0 as f64, v)))
        .collect();
    if !bk.is_empty() {
        s += &line(bk, "#d62728");
    }
    let bl: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|x| x.3.map(|v| (x.0 as f64, v)))
        .collect();
    let has_blas = !bl.is_empty();
    if has_blas {
        s += &line(bl, "#2ca02c");
        s += &format!(
            "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"3\" fill=\"#2ca02c\"/><text x=\"{}\" y=\"{}\">contractions by OpenBLAS, the rest ours</text>\n",
            l + 12.0,
            t + 44.0,
            l + 30.0,
            t + 48.0
        );
    }
    s += &format!(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"3\" fill=\"#1f77b4\"/><text x=\"{}\" y=\"{}\">ftuner (compiled once, dynamic T)</text>\n<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"3\" fill=\"#d62728\"/><text x=\"{}\" y=\"{}\">buckets (padded to the next bucket, one compilation each)</text>\n</svg>\n",
        l + 12.0, t + 8.0, l + 30.0, t + 12.0, l + 12.0, t + 26.0, l + 30.0, t + 30.0
    );
    s
}
