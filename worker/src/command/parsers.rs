//! Result parsers of external generators (docs/engines.md "Parsers"): what a tool wrote,
//! turned into coverage, a coverage timeline and a mutation score. Tool output is untrusted:
//! sizes are bounded and every malformed input is an error that says what is wrong.

use std::io::Read;
use std::path::Path;

/// Largest result file or stdout read (a statistics file is a few KiB).
pub const MAX_RESULT_BYTES: u64 = 16 << 20;

/// What a tool reported about one run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolResult {
    /// Final coverage, 0..=1.
    pub coverage: f64,
    /// Covered and total targets, when the tool counts them (else coverage is a fraction only).
    pub counts: Option<(u32, u32)>,
    /// Coverage over time: (seconds since the start, coverage 0..=1), ascending in time.
    pub timeline: Vec<(f64, f64)>,
    /// Mutation score, 0..=1, when the tool computed one.
    pub mutation_score: Option<f64>,
}

/// Reads a tool's output file with the size bound.
pub fn read_bounded(path: &Path) -> Result<String, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut buf = Vec::new();
    f.take(MAX_RESULT_BYTES + 1).read_to_end(&mut buf).map_err(|e| format!("{}: {e}", path.display()))?;
    if buf.len() as u64 > MAX_RESULT_BYTES {
        return Err(format!("{}: larger than {} MiB", path.display(), MAX_RESULT_BYTES >> 20));
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

fn fraction(what: &str, text: &str) -> Result<f64, String> {
    let v: f64 = text.trim().parse().map_err(|_| format!("{what} is {text:?}, not a number"))?;
    if !(0.0..=1.0).contains(&v) {
        return Err(format!("{what} is {v}, outside 0..1"));
    }
    Ok(v)
}

/// Pynguin's `statistics.csv`: a header and one row per run (a fresh output folder holds one;
/// the last row counts). `Coverage` is required; `CoverageTimeline_T<k>` columns (k = 1, 2, …)
/// are coverage at k × `interval` seconds; `MutationScore` is used when present and not empty.
pub fn pynguin_statistics(text: &str, interval: f64) -> Result<ToolResult, String> {
    let mut r = csv::ReaderBuilder::new().flexible(false).from_reader(text.as_bytes());
    let headers: Vec<String> =
        r.headers().map_err(|e| format!("unreadable header: {e}"))?.iter().map(str::to_string).collect();
    let mut last = None;
    for (i, rec) in r.records().enumerate() {
        let rec = rec.map_err(|e| match e.kind() {
            csv::ErrorKind::UnequalLengths { len, expected_len, .. } => format!(
                "row {} has {len} fields but the header has {expected_len} (truncated file: did the tool stop \
                 while writing it?)",
                i + 1
            ),
            _ => format!("row {}: {e}", i + 1),
        })?;
        last = Some(rec);
    }
    let Some(row) = last else {
        return Err("no data row after the header (the tool did not write its statistics)".into());
    };
    let col = |name: &str| headers.iter().position(|h| h == name).and_then(|i| row.get(i));
    let coverage = fraction(
        "Coverage",
        col("Coverage").ok_or("no `Coverage` column (add Coverage to Pynguin's --output-variables)")?,
    )?;
    let mut points: Vec<(u64, f64)> = Vec::new();
    for (i, h) in headers.iter().enumerate() {
        let Some(k) = h.strip_prefix("CoverageTimeline_T").and_then(|k| k.parse::<u64>().ok()) else { continue };
        let v = row.get(i).unwrap_or("");
        points.push((k, fraction(h, v)?));
    }
    points.sort_by_key(|p| p.0);
    let mutation_score = match col("MutationScore").map(str::trim) {
        None | Some("") => None,
        Some(v) => Some(fraction("MutationScore", v)?),
    };
    Ok(ToolResult {
        coverage,
        counts: None,
        timeline: points.into_iter().map(|(k, c)| (k as f64 * interval, c)).collect(),
        mutation_score,
    })
}

/// The generic contract: the last non-empty line of the output is one JSON object
/// `{"coverage": 0.8, "covered": 8, "total": 10, "timeline": [[seconds, coverage], …],
/// "mutation_score": 0.5}`; only `coverage` is required (`covered` and `total` together).
pub fn json_last_line(text: &str) -> Result<ToolResult, String> {
    let line = text.lines().rev().find(|l| !l.trim().is_empty()).ok_or("no output line")?;
    let v: serde_json::Value =
        serde_json::from_str(line.trim()).map_err(|e| format!("last line is not JSON ({e}): {:.200}", line.trim()))?;
    let o = v.as_object().ok_or("last line is JSON but not an object")?;
    let num = |k: &str| o.get(k).filter(|v| !v.is_null());
    let as_frac = |k: &str, v: &serde_json::Value| {
        v.as_f64().ok_or(format!("{k} is not a number")).and_then(|x| fraction(k, &x.to_string()))
    };
    let coverage = as_frac("coverage", num("coverage").ok_or("no \"coverage\" key")?)?;
    let count = |k: &str| -> Result<Option<u32>, String> {
        num(k).map(|v| v.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or(format!("{k} is not a count"))).transpose()
    };
    let counts = match (count("covered")?, count("total")?) {
        (Some(c), Some(t)) if c <= t && t > 0 => Some((c, t)),
        (None, None) => None,
        _ => return Err("\"covered\" and \"total\" go together, with 0 ≤ covered ≤ total and total > 0".into()),
    };
    let mut timeline = Vec::new();
    if let Some(tl) = num("timeline") {
        let arr = tl.as_array().ok_or("timeline is not a list")?;
        for (i, p) in arr.iter().enumerate() {
            let pair =
                p.as_array().filter(|a| a.len() == 2).ok_or(format!("timeline[{i}] is not [seconds, coverage]"))?;
            let t = pair[0].as_f64().filter(|t| t.is_finite() && *t >= 0.0);
            let t = t.ok_or(format!("timeline[{i}]: seconds must be a number ≥ 0"))?;
            if timeline.last().is_some_and(|&(prev, _)| t < prev) {
                return Err(format!("timeline[{i}]: times must not decrease"));
            }
            timeline.push((t, as_frac(&format!("timeline[{i}] coverage"), &pair[1])?));
        }
    }
    let mutation_score = num("mutation_score").map(|v| as_frac("mutation_score", v)).transpose()?;
    Ok(ToolResult { coverage, counts, timeline, mutation_score })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PYNGUIN: &str = "\"TargetModule\",\"Coverage\",\"CoverageTimeline_T1\",\"CoverageTimeline_T2\",\
\"CoverageTimeline_T10\",\"CoverageTimeline_AUC\"\n\"triangle\",\"1.0\",\"0.5\",\"0.75\",\"1.0\",\"0.7\"\n";

    #[test]
    fn pynguin_statistics_give_coverage_and_timeline_in_column_order() {
        let r = pynguin_statistics(PYNGUIN, 2.0).unwrap();
        assert_eq!(r.coverage, 1.0);
        assert_eq!(r.timeline, vec![(2.0, 0.5), (4.0, 0.75), (20.0, 1.0)], "T10 after T2; AUC is no point");
        assert_eq!(r.mutation_score, None);
        let with_ms = "Coverage,MutationScore\n0.5,0.25\n";
        assert_eq!(pynguin_statistics(with_ms, 1.0).unwrap().mutation_score, Some(0.25));
    }

    #[test]
    fn broken_pynguin_statistics_say_what_is_wrong() {
        let half = &PYNGUIN[..PYNGUIN.len() - 20];
        let e = pynguin_statistics(half, 1.0).unwrap_err();
        assert!(e.contains("truncated"), "{e}");
        let header_only = PYNGUIN.lines().next().unwrap();
        assert!(pynguin_statistics(header_only, 1.0).unwrap_err().contains("no data row"));
        assert!(pynguin_statistics("TargetModule\nx\n", 1.0).unwrap_err().contains("Coverage"));
        assert!(pynguin_statistics("Coverage\n1.5\n", 1.0).unwrap_err().contains("outside"));
        assert!(pynguin_statistics("Coverage\nlots\n", 1.0).unwrap_err().contains("not a number"));
    }

    #[test]
    fn json_last_line_contract() {
        let out =
            "progress…\n{\"coverage\": 0.5, \"covered\": 2, \"total\": 4, \"timeline\": [[0.5, 0.25], [1, 0.5]]}\n\n";
        let r = json_last_line(out).unwrap();
        assert_eq!((r.coverage, r.counts), (0.5, Some((2, 4))));
        assert_eq!(r.timeline, vec![(0.5, 0.25), (1.0, 0.5)]);
        for (bad, want) in [
            ("", "no output line"),
            ("{\"coverage\": 0.5", "not JSON"),
            ("[1]", "not an object"),
            ("{\"covered\": 1}", "coverage"),
            ("{\"coverage\": 0.5, \"covered\": 3}", "go together"),
            ("{\"coverage\": 0.5, \"timeline\": [[2, 0.1], [1, 0.2]]}", "decrease"),
            ("{\"coverage\": 0.5, \"timeline\": [[1]]}", "timeline[0]"),
            ("{\"coverage\": 2}", "outside"),
        ] {
            let e = json_last_line(bad).unwrap_err();
            assert!(e.contains(want), "{bad}: {e}");
        }
    }
}
