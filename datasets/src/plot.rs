//! PNG histogram of project sizes on a logarithmic axis (the Whisker paper's
//! Figure 11). Text is drawn with an embedded font, so no system fonts are needed.

use std::sync::Once;

use plotters::prelude::*;
use plotters::style::FontStyle;

/// DejaVu Sans, subset (Bitstream Vera licence; see `datasets/fonts/LICENSE` and `README.md`).
pub static FONT: &[u8] = include_bytes!("../fonts/DejaVuSans-subset.ttf");

/// Font family name the plots use.
const FAMILY: &str = "clowder-sans";

fn register_font() -> Result<(), String> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        result = plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).map_err(|_| "invalid font".into());
    });
    result
}

/// Bins per decade of the logarithmic axis.
const BINS_PER_DECADE: u32 = 5;

/// Counts per logarithmic bin `[10^(i/k), 10^((i+1)/k))` for values ≥ 1;
/// returns (bins, count of zeros). Bin edges are computed, not accumulated,
/// so the counts are exact and deterministic.
pub fn log_bins(values: &[u64]) -> (Vec<(f64, f64, u64)>, u64) {
    let zeros = values.iter().filter(|&&v| v == 0).count() as u64;
    let max = values.iter().copied().max().unwrap_or(0);
    if max == 0 {
        return (Vec::new(), zeros);
    }
    let edge = |i: u32| 10f64.powf(f64::from(i) / f64::from(BINS_PER_DECADE));
    let mut n = 1;
    while edge(n) <= max as f64 {
        n += 1;
    }
    let mut bins: Vec<(f64, f64, u64)> = (0..n).map(|i| (edge(i), edge(i + 1), 0)).collect();
    for &v in values.iter().filter(|&&v| v > 0) {
        let x = v as f64;
        // The largest bin whose lower edge is ≤ x.
        if let Some(b) = bins.iter_mut().rev().find(|b| b.0 <= x) {
            b.2 += 1;
        }
    }
    (bins, zeros)
}

/// Draws a histogram of `values` (e.g. statements per project) on a log axis
/// and returns the PNG bytes. Zeros cannot be placed on a log axis; their
/// count is given in the caption.
pub fn histogram_png(values: &[u64], title: &str, x_label: &str) -> Result<Vec<u8>, String> {
    register_font()?;
    let (w, h) = (900u32, 540u32);
    let (bins, zeros) = log_bins(values);
    let mut buf = vec![0u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let x_max = bins.last().map(|b| b.1).unwrap_or(10.0);
        let y_max = bins.iter().map(|b| b.2).max().unwrap_or(1).max(1);
        let caption = format!("{title} (n = {}; {zeros} with none not shown)", values.len());
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, (FAMILY, 22))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d((1f64..x_max).log_scale(), 0u64..(y_max + y_max / 10 + 1))
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc("projects")
            .label_style((FAMILY, 15))
            .axis_desc_style((FAMILY, 17))
            .x_label_formatter(&|x| format!("{x:.0}"))
            .disable_x_mesh()
            .light_line_style(TRANSPARENT)
            .draw()
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(bins.iter().map(|&(lo, hi, c)| {
                Rectangle::new([(lo, 0), (hi, c)], RGBColor(70, 110, 170).filled().stroke_width(1))
            }))
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    encode_png(&buf, w, h)
}

fn encode_png(rgb: &[u8], w: u32, h: u32) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(rgb).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_bins_count_every_positive_value_once() {
        let values = [0, 1, 1, 2, 9, 10, 11, 99, 100, 1000];
        let (bins, zeros) = log_bins(&values);
        assert_eq!(zeros, 1);
        assert_eq!(bins.iter().map(|b| b.2).sum::<u64>(), 9);
        assert_eq!(bins[0].2, 2, "1 and 1 in [1, 1.58)");
        assert!(bins.last().unwrap().1 > 1000.0);
        // 10 falls in the bin starting at 10, not the one ending there.
        let ten = bins.iter().find(|b| b.0 <= 10.0 && 10.0 < b.1).unwrap();
        assert!((ten.0 - 10.0).abs() < 1e-9);
        assert!(log_bins(&[0, 0]).0.is_empty());
    }

    #[test]
    fn histogram_is_a_deterministic_png() {
        let v: Vec<u64> = (0..200).map(|i| (i * 37 % 500) as u64).collect();
        let a = histogram_png(&v, "statements per project", "statements (log scale)").unwrap();
        let b = histogram_png(&v, "statements per project", "statements (log scale)").unwrap();
        assert!(a.starts_with(b"\x89PNG"));
        assert_eq!(a, b);
    }
}
