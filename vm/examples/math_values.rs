//! `Math.sin`, `cos`, `tan`, `asin`, `acos`, `atan`, `atan2`, `exp`, `log` and `pow` as each of
//! clowder's maths libraries computes them, for comparison with a browser's
//! (`scripts/maths-vs-chromium.py`).
//!
//! Reads one argument per line (the f64's bits in hex) and prints, per line, the results of
//! the three libraries (`node`, `chromium`, `glibc`, see `clowder_vm::util::mathlib`) as hex bits, in
//! the order `sin cos tan asin acos atan atan2(x, 1.3) exp(x / 50) log(|x|) pow(|x|, 1.7)`.
//!
//! `cargo run --release -p clowder-vm --example math_values < args.txt`

use std::io::{BufRead, Write};

use clowder_vm::util::mathlib::MathLib;

fn values(m: MathLib, x: f64) -> [f64; 10] {
    [
        m.sin(x),
        m.cos(x),
        m.tan(x),
        m.asin(x),
        m.acos(x),
        m.atan(x),
        m.atan2(x, 1.3),
        m.exp(x / 50.0),
        m.log(x.abs()),
        m.pow(x.abs(), 1.7),
    ]
}

fn main() {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let Ok(bits) = u64::from_str_radix(line.trim(), 16) else {
            eprintln!("math_values: not a hex f64: {line}");
            std::process::exit(2);
        };
        let x = f64::from_bits(bits);
        let row: Vec<String> = [MathLib::Node, MathLib::Chromium, MathLib::Glibc]
            .into_iter()
            .flat_map(|m| values(m, x))
            .map(|v| format!("{:016x}", v.to_bits()))
            .collect();
        if writeln!(out, "{}", row.join(" ")).is_err() {
            break;
        }
    }
}
