//! Rasterises paths with clowder's port of Skia's analytic anti-aliasing, for checking against
//! Skia itself (`scripts/coverage-vs-skia.py --paths`). One path per input line:
//! `W H EVEN_ODD VERB...` with verbs `M x y`, `L x y`, `Q x y x y`, `C x y x y x y`, `Z`, or
//! `W H 0 R l t r b` for a rectangle drawn as Chromium draws `<rect>`; prints the W×H coverage
//! as hex.

use clowder_vm::geometry::aaa;
use resvg::tiny_skia::PathBuilder;
use std::io::{BufRead, Write};

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines().map_while(Result::ok) {
        let t: Vec<&str> = line.split_whitespace().collect();
        let num = |i: usize| t.get(i).and_then(|s| s.parse::<f32>().ok()).unwrap_or(0.0);
        let (w, h, eo) = (num(0) as u32, num(1) as u32, num(2) != 0.0);
        let mut pb = PathBuilder::new();
        let mut i = 3;
        while i < t.len() {
            match t[i] {
                "M" => pb.move_to(num(i + 1), num(i + 2)),
                "L" => pb.line_to(num(i + 1), num(i + 2)),
                "Q" => pb.quad_to(num(i + 1), num(i + 2), num(i + 3), num(i + 4)),
                "C" => pb.cubic_to(num(i + 1), num(i + 2), num(i + 3), num(i + 4), num(i + 5), num(i + 6)),
                _ => pb.close(),
            }
            i += match t[i] {
                "M" | "L" => 3,
                "Q" => 5,
                "C" => 7,
                _ => 1,
            };
        }
        let mut cov = vec![0u8; (w * h) as usize];
        let res = if t.get(3) == Some(&"R") {
            aaa::fill_rect([num(4), num(5), num(6), num(7)], [0, 0, w, h], &mut cov, w, h)
        } else {
            pb.finish().and_then(|p| aaa::fill(&p, eo, None, &mut cov, w, h))
        };
        match res {
            Some(_) => {
                let hex: String = cov.iter().map(|b| format!("{b:02x}")).collect();
                let _ = writeln!(out, "{hex}");
            }
            None => {
                let _ = writeln!(out, "OUTSIDE");
            }
        }
    }
}
