//! The alpha channel of SVG costumes as clowder rasterises them at scale 1 (or `--scale S`),
//! for comparison with the browser's (`scripts/svg-silhouettes.py`).
//!
//! Reads SVG file paths from standard input, one per line, and prints per file
//! `PATH WIDTH HEIGHT MODELLED ALPHA` (`MODELLED`: 1 when every shape was drawn with the
//! browser's coverage model; `ALPHA`: two hex digits per pixel, rows top first, `-` for an
//! empty canvas) or `PATH ERR REASON`. With `--rgba`, `ALPHA` holds each pixel's straight
//! red, green, blue and alpha (what `getImageData` reads).
//!
//! `cargo run --release -p clowder-vm --example svg_alpha [-- --scale S] [--rgba] < list.txt`

use std::io::{BufRead, Write};

use clowder_vm::geometry::svg::SvgImage;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let rgba = args.iter().any(|a| a == "--rgba");
    args.retain(|a| a != "--rgba");
    let scale = match (args.first().map(String::as_str), args.get(1).map(|s| s.parse::<f64>())) {
        (None, _) => 1.0,
        (Some("--scale"), Some(Ok(s))) if s > 0.0 && s <= 16.0 && args.len() == 2 => s,
        _ => {
            eprintln!("usage: svg_alpha [--scale S] [--rgba] < list-of-svg-paths (0 < S <= 16)");
            std::process::exit(2);
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for line in std::io::stdin().lock().lines() {
        let Ok(path) = line else { break };
        let line = match std::fs::read(&path).map_err(|e| e.to_string()).and_then(|b| SvgImage::load(&b)) {
            Ok(img) => match img.rasterize(scale) {
                Some(sil) => {
                    let (w, h) = (sil.width(), sil.height());
                    let modelled = u8::from(img.coverage_modelled());
                    let data = sil.into_rgba();
                    let alpha: String = if rgba {
                        data.iter().map(|v| format!("{v:02x}")).collect()
                    } else {
                        data.chunks(4).filter_map(|px| px.get(3)).map(|a| format!("{a:02x}")).collect()
                    };
                    format!("{path} {w} {h} {modelled} {alpha}")
                }
                None => format!("{path} 0 0 0 -"),
            },
            Err(e) => format!("{path} ERR {}", e.replace(char::is_whitespace, "_")),
        };
        if writeln!(out, "{line}").is_err() {
            break;
        }
    }
}
