//! A small table model rendered as Markdown, CSV (full precision) and LaTeX (booktabs).

use std::fmt::Write as _;

/// One cell: the exact value for CSV and a rounded rendering for Markdown/LaTeX.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Machine-readable value (floats in shortest round-trip form; empty for n/a).
    pub csv: String,
    /// Human-readable value.
    pub display: String,
    /// Right-aligned (numbers).
    pub numeric: bool,
}

impl Cell {
    /// Text.
    pub fn text(s: impl Into<String>) -> Self {
        let s = s.into();
        Self { csv: s.clone(), display: s, numeric: false }
    }
    /// An integer.
    pub fn int(v: impl Into<u64>) -> Self {
        let v = v.into();
        Self { csv: v.to_string(), display: v.to_string(), numeric: true }
    }
    /// A float shown with `decimals` digits.
    pub fn num(v: f64, decimals: usize) -> Self {
        Self { csv: float_csv(v), display: format!("{v:.decimals$}"), numeric: true }
    }
    /// A fraction 0..1 shown as a percentage with two decimals (CSV keeps the fraction).
    pub fn pct(v: f64) -> Self {
        Self { csv: float_csv(v), display: format!("{:.2}", v * 100.0), numeric: true }
    }
    /// A p-value: scientific notation below 0.001.
    pub fn p(v: f64) -> Self {
        let display = if v < 1e-3 { format!("{v:.1e}") } else { format!("{v:.3}") };
        Self { csv: float_csv(v), display, numeric: true }
    }
    /// Not available.
    pub fn na() -> Self {
        Self { csv: String::new(), display: "–".into(), numeric: true }
    }
    /// `Some` as a float with `decimals`, `None` as n/a.
    pub fn opt(v: Option<f64>, decimals: usize) -> Self {
        v.map(|x| Self::num(x, decimals)).unwrap_or_else(Self::na)
    }
    /// `Some` as a percentage, `None` as n/a.
    pub fn opt_pct(v: Option<f64>) -> Self {
        v.map(Self::pct).unwrap_or_else(Self::na)
    }
}

/// Shortest text that parses back to the same double (Rust's `Display` for f64).
pub fn float_csv(v: f64) -> String {
    if v.is_finite() { format!("{v}") } else { String::new() }
}

/// A table with a file name, caption, header and rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// File stem for `<name>.csv` / `<name>.tex`.
    pub name: String,
    /// Caption (LaTeX) / title.
    pub caption: String,
    /// Column names as shown (empty: the column is in the CSV only).
    pub header: Vec<String>,
    /// Column names in CSV (snake_case).
    pub csv_header: Vec<String>,
    /// Rows.
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// New empty table; `columns` are (display name, CSV name).
    pub fn new(name: &str, caption: &str, columns: &[(&str, &str)]) -> Self {
        Self {
            name: name.into(),
            caption: caption.into(),
            header: columns.iter().map(|c| c.0.to_string()).collect(),
            csv_header: columns.iter().map(|c| c.1.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row (must have one cell per column).
    pub fn push(&mut self, row: Vec<Cell>) {
        debug_assert_eq!(row.len(), self.header.len(), "{}", self.name);
        self.rows.push(row);
    }

    /// Indices of the columns shown in Markdown, LaTeX and plain text.
    fn visible(&self) -> Vec<usize> {
        (0..self.header.len()).filter(|&i| !self.header[i].is_empty()).collect()
    }

    fn numeric(&self, i: usize) -> bool {
        self.rows.first().is_some_and(|r| r[i].numeric)
    }

    /// GitHub-flavoured Markdown.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let vis = self.visible();
        let esc = |x: &str| x.replace('|', "\\|");
        let _ = writeln!(s, "| {} |", vis.iter().map(|&i| esc(&self.header[i])).collect::<Vec<_>>().join(" | "));
        let align: Vec<&str> = vis.iter().map(|&i| if self.numeric(i) { "---:" } else { "---" }).collect();
        let _ = writeln!(s, "|{}|", align.join("|"));
        for r in &self.rows {
            let _ = writeln!(s, "| {} |", vis.iter().map(|&i| esc(&r[i].display)).collect::<Vec<_>>().join(" | "));
        }
        s
    }

    /// CSV (RFC 4180 quoting) with full-precision values.
    pub fn csv(&self) -> String {
        let mut s = String::new();
        let line = |cells: Vec<&str>| cells.into_iter().map(csv_quote).collect::<Vec<_>>().join(",");
        s.push_str(&line(self.csv_header.iter().map(String::as_str).collect()));
        s.push('\n');
        for r in &self.rows {
            s.push_str(&line(r.iter().map(|c| c.csv.as_str()).collect()));
            s.push('\n');
        }
        s
    }

    /// LaTeX `tabular` with booktabs rules (needs `\usepackage{booktabs}`).
    pub fn latex(&self) -> String {
        let mut s = String::new();
        let vis = self.visible();
        let spec: String = vis.iter().map(|&i| if self.numeric(i) { 'r' } else { 'l' }).collect();
        let _ = writeln!(s, "% {}", self.caption.replace('\n', " "));
        let _ = writeln!(s, "\\begin{{tabular}}{{{spec}}}");
        let _ = writeln!(s, "\\toprule");
        let _ =
            writeln!(s, "{} \\\\", vis.iter().map(|&i| latex_escape(&self.header[i])).collect::<Vec<_>>().join(" & "));
        let _ = writeln!(s, "\\midrule");
        for r in &self.rows {
            let _ = writeln!(
                s,
                "{} \\\\",
                vis.iter().map(|&i| latex_escape(&r[i].display)).collect::<Vec<_>>().join(" & ")
            );
        }
        let _ = writeln!(s, "\\bottomrule");
        let _ = writeln!(s, "\\end{{tabular}}");
        s
    }

    /// Fixed-width text for the terminal.
    pub fn plain(&self) -> String {
        let vis = self.visible();
        let widths: Vec<usize> = vis
            .iter()
            .map(|&i| {
                self.rows
                    .iter()
                    .map(|r| r[i].display.chars().count())
                    .chain([self.header[i].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: Vec<(&str, bool)>| {
            let mut out = cells
                .iter()
                .zip(&widths)
                .map(|((c, num), w)| {
                    let pad = " ".repeat(w.saturating_sub(c.chars().count()));
                    if *num { format!("{pad}{c}") } else { format!("{c}{pad}") }
                })
                .collect::<Vec<_>>()
                .join("  ");
            out.truncate(out.trim_end().len());
            out.push('\n');
            out
        };
        let mut s = line(vis.iter().map(|&i| (self.header[i].as_str(), self.numeric(i))).collect());
        for r in &self.rows {
            s.push_str(&line(vis.iter().map(|&i| (r[i].display.as_str(), r[i].numeric)).collect()));
        }
        s
    }
}

/// Quotes a CSV field when needed (RFC 4180).
pub fn csv_quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

/// Escapes LaTeX special characters (and writes Â12 / en dash in plain LaTeX).
pub fn latex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '\\' => out.push_str("\\textbackslash{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(ch);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            'Â' => out.push_str("$\\hat{A}$"),
            '–' => out.push_str("--"),
            '≥' => out.push_str("$\\geq$"),
            '≤' => out.push_str("$\\leq$"),
            '×' => out.push_str("$\\times$"),
            '±' => out.push_str("$\\pm$"),
            _ => out.push(ch),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new("t", "A table", &[("Algorithm", "algorithm"), ("Mean %", "mean")]);
        t.push(vec![Cell::text("mosa[a=1,b_c=2]"), Cell::pct(0.123456789)]);
        t.push(vec![Cell::text("x|y"), Cell::na()]);
        t
    }

    #[test]
    fn renders_all_formats() {
        let t = sample();
        assert_eq!(t.markdown(), "| Algorithm | Mean % |\n|---|---:|\n| mosa[a=1,b_c=2] | 12.35 |\n| x\\|y | – |\n");
        assert_eq!(t.csv(), "algorithm,mean\n\"mosa[a=1,b_c=2]\",0.123456789\nx|y,\n");
        let tex = t.latex();
        assert!(tex.contains("\\begin{tabular}{lr}\n\\toprule\nAlgorithm & Mean \\% \\\\\n\\midrule\n"));
        assert!(tex.contains("mosa[a=1,b\\_c=2] & 12.35 \\\\"));
        assert!(tex.contains("x|y & -- \\\\\n\\bottomrule\n\\end{tabular}\n"));
        assert_eq!(t.plain(), "Algorithm        Mean %\nmosa[a=1,b_c=2]   12.35\nx|y                   –\n");
    }

    #[test]
    fn p_values_switch_to_scientific() {
        assert_eq!(Cell::p(0.0123).display, "0.012");
        assert_eq!(Cell::p(0.00001234).display, "1.2e-5");
    }
}
