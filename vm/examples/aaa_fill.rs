//! Rasterises paths with clowder's port of Skia's analytic anti-aliasing, for checking against
//! Skia itself (`scripts/coverage-vs-skia.py --paths`). One path per input line:
//! `W H EVEN_ODD VERB...` with verbs `M x y`, `L x y`, `Q x y x y`, `C x y x y x y`, `Z`, or
//! `W H 0 R l t r b` for a rectangle drawn as Chromium draws `<rect>`; prints the W×H coverage
//! as hex. With `--colour RRGGBB`, prints instead the alpha of that opaque colour painted
//! through the coverage onto a transparent canvas (`svg_blend`, with the scan converter's
//! `blitAntiH2` marks), as a costume's path is painted.

use clowder_vm::geometry::svg_raster::PixelBox;
use clowder_vm::geometry::{aaa, svg_blend};
use resvg::tiny_skia::PathBuilder;
use std::io::{BufRead, Write};

fn main() {
    let mut args = std::env::args().skip(1);
    let colour = match (args.next().as_deref(), args.next()) {
        (None, _) => None,
        (Some("--colour"), Some(c)) if c.len() == 6 && u32::from_str_radix(&c, 16).is_ok() => {
            let v = u32::from_str_radix(&c, 16).unwrap_or(0);
            Some([(v >> 16) as u8, (v >> 8) as u8, v as u8])
        }
        _ => {
            eprintln!("usage: aaa_fill [--colour RRGGBB] < paths");
            std::process::exit(2);
        }
    };
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
        let mut marks = vec![0u8; (w * h) as usize];
        let res = if t.get(3) == Some(&"R") {
            aaa::fill_rect([num(4), num(5), num(6), num(7)], [0, 0, w, h], &mut cov, w, h)
        } else {
            let scan = aaa::Scan { force_runs: false, clip: [0, 0, w, h] };
            pb.finish().and_then(|p| aaa::fill_with(&p, eo, None, scan, &mut cov, Some(&mut marks), w, h))
        };
        if let Some(rgb) = colour {
            let mut px = vec![0u8; (w * h * 4) as usize];
            let all = PixelBox { x0: 0, y0: 0, x1: w, y1: h };
            svg_blend::src_over_solid_marked(&mut px, w as usize, all, &cov, &marks, rgb, 255);
            cov = px.chunks(4).map(|p| p[3]).collect();
        }
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
