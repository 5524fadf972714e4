//! Plots (PNG and SVG) with `plotters`.
//!
//! Text is laid out and rasterised with an embedded font (DejaVu Sans, see
//! `assets/DejaVuSans-LICENSE.txt`), so plots render the same on a machine without any system
//! fonts. PNGs are encoded by the `png` crate from the raw RGB buffer; both outputs are
//! byte-identical for the same data.

use std::path::Path;
use std::sync::Once;

use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use crate::error::AnalysisError;

/// Embedded DejaVu Sans (Bitstream Vera licence; DejaVu changes are public domain).
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
static FONT_INIT: Once = Once::new();

fn init_font() {
    FONT_INIT.call_once(|| {
        // Only fails on a malformed font file, which is compiled in and covered by tests.
        let _ = register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// Okabe-Ito colour-blind-safe palette (yellow darkened for white backgrounds).
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(213, 94, 0),
    RGBColor(86, 180, 233),
    RGBColor(204, 121, 167),
    RGBColor(0, 0, 0),
    RGBColor(181, 155, 0),
];

/// Colour of series `i`.
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Image size in pixels.
pub const SIZE: (u32, u32) = (1000, 600);
const TITLE: u32 = 26;
const LABEL: u32 = 21;
const TICK: u32 = 18;

/// Something that can be drawn on any backend.
pub trait Plot {
    /// Draws onto `root`; `raster` is true for the bitmap backend (PNG).
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, raster: bool) -> Result<(), String>;
}

/// Writes `<stem>.png` and `<stem>.svg`.
pub fn render(plot: &impl Plot, stem: &Path) -> Result<(), AnalysisError> {
    init_font();
    let io = |p: &Path, e: String| AnalysisError::Output { path: p.display().to_string(), msg: e };
    let svg_path = stem.with_extension("svg");
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        plot.draw(&root, false).map_err(|e| io(&svg_path, e))?;
        root.present().map_err(|e| io(&svg_path, e.to_string()))?;
    }
    std::fs::write(&svg_path, svg).map_err(|e| io(&svg_path, e.to_string()))?;

    let png_path = stem.with_extension("png");
    let png = png_bytes(plot).map_err(|e| io(&png_path, e))?;
    std::fs::write(&png_path, png).map_err(|e| io(&png_path, e.to_string()))?;
    Ok(())
}

/// `plot` as PNG bytes ([`SIZE`], RGB, the embedded font).
pub fn png_bytes(plot: &impl Plot) -> Result<Vec<u8>, String> {
    init_font();
    let (w, h) = SIZE;
    let mut buf = vec![0u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, SIZE).into_drawing_area();
        plot.draw(&root, true)?;
        root.present().map_err(e2s)?;
    }
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().map_err(e2s)?;
    writer.write_image_data(&buf).map_err(e2s)?;
    writer.finish().map_err(e2s)?;
    Ok(out)
}

fn e2s<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

fn font(size: u32) -> TextStyle<'static> {
    ("sans-serif", size).into_font().color(&BLACK)
}

/// A chart over ranges `X` × `Y`.
type Chart<'a, DB, X, Y> =
    ChartContext<'a, DB, Cartesian2d<<X as AsRangedCoord>::CoordDescType, <Y as AsRangedCoord>::CoordDescType>>;

/// A chart on `root` in the house layout (caption, margins, label areas) over `x` × `y`.
fn chart_on<'a, DB: DrawingBackend, X: AsRangedCoord, Y: AsRangedCoord>(
    root: &'a DrawingArea<DB, Shift>,
    caption: &str,
    x: X,
    y: Y,
) -> Result<Chart<'a, DB, X, Y>, String> {
    ChartBuilder::on(root)
        .caption(caption, font(TITLE))
        .margin(16)
        .margin_right(40)
        .x_label_area_size(60)
        .y_label_area_size(80)
        .build_cartesian_2d(x, y)
        .map_err(e2s)
}

/// The house style of a chart's mesh (axis names, fonts, light grid); callers add their
/// tick formats and draw it.
fn house_mesh<'m, 'a, 'b, X: Ranged, Y: Ranged, DB: DrawingBackend>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
    x_desc: &str,
    y_desc: &str,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB> {
    mesh.x_desc(x_desc)
        .y_desc(y_desc)
        .axis_desc_style(font(LABEL))
        .label_style(font(TICK))
        .max_light_lines(1)
        .light_line_style(RGBColor(240, 240, 240))
        .bold_line_style(RGBColor(210, 210, 210))
}

/// One line with an optional band.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend label.
    pub name: String,
    /// (x, y) points.
    pub points: Vec<(f64, f64)>,
    /// (x, low, high) band, drawn translucent under the line.
    pub band: Vec<(f64, f64, f64)>,
}

/// A sampled step function drawn as steps: each value holds until the next sample. Coverage
/// only rises at change points, so steps are its shape; right-angle joins also avoid the
/// miter spikes thick sloped segments get.
fn steps_post(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2);
    for (i, &(x, y)) in points.iter().enumerate() {
        if i > 0 {
            out.push((x, points[i - 1].1));
        }
        out.push((x, y));
    }
    out
}

/// Lines over a continuous x axis, drawn as steps (see [`steps_post`]).
#[derive(Debug, Clone)]
pub struct LinePlot {
    /// Title.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// X range.
    pub x_range: (f64, f64),
    /// Y range.
    pub y_range: (f64, f64),
    /// Lines.
    pub series: Vec<Series>,
}

impl Plot for LinePlot {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, raster: bool) -> Result<(), String> {
        root.fill(&WHITE).map_err(e2s)?;
        let x1 = if self.x_range.1 > self.x_range.0 { self.x_range.1 } else { self.x_range.0 + 1.0 };
        let mut chart = chart_on(root, &self.title, self.x_range.0..x1, self.y_range.0..self.y_range.1)?;
        house_mesh(&mut chart.configure_mesh(), &self.x_label, &self.y_label)
            .x_label_formatter(&|x| trim_float(*x))
            .y_label_formatter(&|y| trim_float(*y))
            .draw()
            .map_err(e2s)?;
        for (i, s) in self.series.iter().enumerate() {
            let c = color(i);
            if s.band.len() >= 2 {
                let hi = steps_post(&s.band.iter().map(|&(x, _, hi)| (x, hi)).collect::<Vec<_>>());
                let lo = steps_post(&s.band.iter().map(|&(x, lo, _)| (x, lo)).collect::<Vec<_>>());
                let mut poly = hi;
                poly.extend(lo.into_iter().rev());
                chart.draw_series(std::iter::once(Polygon::new(poly, c.mix(0.18).filled()))).map_err(e2s)?;
            }
        }
        // Half the line width (1.5 px) in data units, for the raster outline below.
        let (w_px, h_px) = chart.plotting_area().dim_in_pixel();
        let hx = 1.5 * (x1 - self.x_range.0) / f64::from(w_px.max(1));
        let hy = 1.5 * (self.y_range.1 - self.y_range.0) / f64::from(h_px.max(1));
        for (i, s) in self.series.iter().enumerate() {
            let c = color(i);
            let path = steps_post(&s.points);
            let drawn = if raster {
                // plotters' bitmap rasteriser miters thick polylines with small spikes at the
                // corners; axis-parallel rectangles give clean 3 px steps.
                chart.draw_series(path.windows(2).map(|w| {
                    let (a, b) = (w[0], w[1]);
                    Rectangle::new(
                        [(a.0.min(b.0) - hx, a.1.min(b.1) - hy), (a.0.max(b.0) + hx, a.1.max(b.1) + hy)],
                        c.filled(),
                    )
                }))
            } else {
                chart.draw_series(LineSeries::new(path, c.stroke_width(3)))
            };
            drawn
                .map_err(e2s)?
                .label(&s.name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 1), (x + 24, y + 2)], c.filled()));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .label_font(font(TICK))
            .background_style(WHITE.mix(0.9))
            .border_style(RGBColor(150, 150, 150))
            .draw()
            .map_err(e2s)?;
        Ok(())
    }
}

/// Tukey box plot statistics: quartiles (linear interpolation), whiskers at the most extreme
/// values within 1.5 IQR of the box, and the outliers beyond.
#[derive(Debug, Clone, PartialEq)]
pub struct BoxStats {
    /// Lower whisker end.
    pub lo: f64,
    /// First quartile.
    pub q1: f64,
    /// Median.
    pub median: f64,
    /// Third quartile.
    pub q3: f64,
    /// Upper whisker end.
    pub hi: f64,
    /// Mean (drawn as a diamond).
    pub mean: f64,
    /// Values outside the whiskers.
    pub outliers: Vec<f64>,
}

impl BoxStats {
    /// Statistics of a sample; `None` when empty.
    pub fn new(v: &[f64]) -> Option<Self> {
        if v.is_empty() {
            return None;
        }
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        let q = |p: f64| {
            let r = p * (s.len() - 1) as f64;
            let (i, d) = (r.floor() as usize, r - r.floor());
            if i + 1 < s.len() { s[i] + (s[i + 1] - s[i]) * d } else { s[i] }
        };
        let (q1, median, q3) = (q(0.25), q(0.5), q(0.75));
        let iqr = q3 - q1;
        let (f_lo, f_hi) = (q1 - 1.5 * iqr, q3 + 1.5 * iqr);
        let inside: Vec<f64> = s.iter().copied().filter(|&x| x >= f_lo && x <= f_hi).collect();
        let lo = inside.first().copied().unwrap_or(q1);
        let hi = inside.last().copied().unwrap_or(q3);
        let mut outliers: Vec<f64> = s.iter().copied().filter(|&x| x < f_lo || x > f_hi).collect();
        outliers.dedup();
        Some(Self { lo, q1, median, q3, hi, mean: s.iter().sum::<f64>() / s.len() as f64, outliers })
    }
}

/// Box plots of several samples side by side.
#[derive(Debug, Clone)]
pub struct BoxPlot {
    /// Title.
    pub title: String,
    /// Y axis label.
    pub y_label: String,
    /// X axis label.
    pub x_label: String,
    /// Y range.
    pub y_range: (f64, f64),
    /// (category label, sample).
    pub boxes: Vec<(String, Vec<f64>)>,
    /// Dashed horizontal reference line (e.g. Â12 = 0.5).
    pub reference: Option<f64>,
}

/// A continuous axis 0..n whose tick marks sit at the category centres i + 0.5, so bars and
/// boxes can be placed anywhere inside a category.
#[derive(Debug, Clone, Copy)]
struct CategoryAxis {
    n: usize,
}

impl Ranged for CategoryAxis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;
    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let f = value / self.n.max(1) as f64;
        limit.0 + (f * (limit.1 - limit.0) as f64).round() as i32
    }
    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() { Vec::new() } else { (0..self.n).map(|i| i as f64 + 0.5).collect() }
    }
    fn range(&self) -> std::ops::Range<f64> {
        0.0..self.n.max(1) as f64
    }
}

impl ValueFormatter<f64> for CategoryAxis {
    fn format(value: &f64) -> String {
        format!("{value}")
    }
}

fn category_axis(n: usize) -> CategoryAxis {
    CategoryAxis { n }
}

fn category_label(labels: &[String], x: f64) -> String {
    let i = (x - 0.5).round();
    if i >= 0.0 && (i as usize) < labels.len() && (x - 0.5 - i).abs() < 1e-9 {
        labels[i as usize].clone()
    } else {
        String::new()
    }
}

impl Plot for BoxPlot {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, _raster: bool) -> Result<(), String> {
        root.fill(&WHITE).map_err(e2s)?;
        let n = self.boxes.len();
        let labels: Vec<String> = self.boxes.iter().map(|b| b.0.clone()).collect();
        let mut chart = chart_on(root, &self.title, category_axis(n), self.y_range.0..self.y_range.1)?;
        let fmt = |x: &f64| category_label(&labels, *x);
        house_mesh(chart.configure_mesh().disable_x_mesh(), &self.x_label, &self.y_label)
            .x_label_formatter(&fmt)
            .y_label_formatter(&|y| trim_float(*y))
            .draw()
            .map_err(e2s)?;
        if let Some(r) = self.reference {
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(0.0, r), (n as f64, r)],
                    8,
                    6,
                    RGBColor(120, 120, 120).stroke_width(2),
                ))
                .map_err(e2s)?;
        }
        for (i, (_, values)) in self.boxes.iter().enumerate() {
            let Some(b) = BoxStats::new(values) else { continue };
            let c = color(i);
            let x = i as f64 + 0.5;
            let w = 0.3;
            let line = c.stroke_width(2);
            chart
                .draw_series([
                    PathElement::new(vec![(x, b.lo), (x, b.q1)], line),
                    PathElement::new(vec![(x, b.q3), (x, b.hi)], line),
                    PathElement::new(vec![(x - w / 2.0, b.lo), (x + w / 2.0, b.lo)], line),
                    PathElement::new(vec![(x - w / 2.0, b.hi), (x + w / 2.0, b.hi)], line),
                ])
                .map_err(e2s)?;
            chart
                .draw_series([
                    Rectangle::new([(x - w, b.q1), (x + w, b.q3)], c.mix(0.25).filled()),
                    Rectangle::new([(x - w, b.q1), (x + w, b.q3)], line),
                ])
                .map_err(e2s)?;
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x - w, b.median), (x + w, b.median)],
                    BLACK.stroke_width(3),
                )))
                .map_err(e2s)?;
            chart.draw_series(b.outliers.iter().map(|&y| Circle::new((x, y), 4, c.stroke_width(2)))).map_err(e2s)?;
            chart.draw_series(std::iter::once(TriangleMarker::new((x, b.mean), 6, BLACK.filled()))).map_err(e2s)?;
        }
        Ok(())
    }
}

/// Grouped bars: one group per category, one bar per series.
#[derive(Debug, Clone)]
pub struct BarPlot {
    /// Title.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// Y range.
    pub y_range: (f64, f64),
    /// Category labels.
    pub categories: Vec<String>,
    /// (series name, value per category).
    pub series: Vec<(String, Vec<Option<f64>>)>,
}

impl Plot for BarPlot {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, _raster: bool) -> Result<(), String> {
        root.fill(&WHITE).map_err(e2s)?;
        let n = self.categories.len();
        let mut chart = chart_on(root, &self.title, category_axis(n), self.y_range.0..self.y_range.1)?;
        let fmt = |x: &f64| category_label(&self.categories, *x);
        house_mesh(chart.configure_mesh().disable_x_mesh(), &self.x_label, &self.y_label)
            .x_label_formatter(&fmt)
            .y_label_formatter(&|y| trim_float(*y))
            .draw()
            .map_err(e2s)?;
        let k = self.series.len().max(1) as f64;
        let width = 0.8 / k;
        for (j, (name, values)) in self.series.iter().enumerate() {
            let c = color(j);
            let bars = values.iter().enumerate().filter_map(|(i, v)| {
                let v = (*v)?;
                let x0 = i as f64 + 0.1 + j as f64 * width;
                Some(Rectangle::new([(x0, self.y_range.0), (x0 + width * 0.92, v)], c.filled()))
            });
            chart
                .draw_series(bars)
                .map_err(e2s)?
                .label(name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 7), (x + 16, y + 7)], c.filled()));
        }
        if self.series.len() > 1 {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .label_font(font(TICK))
                .background_style(WHITE.mix(0.9))
                .border_style(RGBColor(150, 150, 150))
                .draw()
                .map_err(e2s)?;
        }
        Ok(())
    }
}

/// A histogram with precomputed bins.
#[derive(Debug, Clone)]
pub struct Histogram {
    /// Title.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// (bin start, bin end, count).
    pub bins: Vec<(f64, f64, u64)>,
}

impl Histogram {
    /// Bins `values` into about `target` bins of a "nice" width (1, 2 or 5 × 10^k).
    pub fn from_values(title: &str, x_label: &str, values: &[f64], target: usize) -> Self {
        let (lo, hi) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
        let mut bins = Vec::new();
        if lo.is_finite() {
            let raw = ((hi - lo) / target.max(1) as f64).max(1.0);
            let mag = 10f64.powf(raw.log10().floor());
            let width = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|w| *w >= raw).unwrap_or(10.0 * mag);
            let start = (lo / width).floor() * width;
            let nb = (((hi - start) / width).floor() as usize + 1).min(10_000);
            let mut counts = vec![0u64; nb];
            for &v in values {
                let b = (((v - start) / width).floor() as usize).min(nb - 1);
                counts[b] += 1;
            }
            for (i, c) in counts.into_iter().enumerate() {
                bins.push((start + i as f64 * width, start + (i + 1) as f64 * width, c));
            }
        }
        Self { title: title.into(), x_label: x_label.into(), y_label: "projects".into(), bins }
    }
}

impl Plot for Histogram {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, _raster: bool) -> Result<(), String> {
        root.fill(&WHITE).map_err(e2s)?;
        let x0 = self.bins.first().map(|b| b.0).unwrap_or(0.0);
        let x1 = self.bins.last().map(|b| b.1).unwrap_or(1.0);
        let top = self.bins.iter().map(|b| b.2).max().unwrap_or(1).max(1);
        let ymax = top + top.div_ceil(10); // counts are integers: integer axis, 10 % headroom
        let mut chart = chart_on(root, &self.title, x0..x1, 0u64..ymax)?;
        house_mesh(chart.configure_mesh().disable_x_mesh(), &self.x_label, &self.y_label)
            .x_label_formatter(&|x| trim_float(*x))
            .y_labels((ymax as usize + 1).min(11))
            .draw()
            .map_err(e2s)?;
        let c = color(0);
        chart
            .draw_series(self.bins.iter().map(|&(a, b, n)| Rectangle::new([(a, 0), (b, n)], c.mix(0.8).filled())))
            .map_err(e2s)?;
        chart
            .draw_series(self.bins.iter().map(|&(a, b, n)| Rectangle::new([(a, 0), (b, n)], WHITE.stroke_width(1))))
            .map_err(e2s)?;
        Ok(())
    }
}

/// A histogram on a logarithmic x axis, for counts that span decades (the Whisker paper's
/// Figure 11: statements per project). Zeros cannot be placed on a log axis; the caption gives
/// their count.
pub struct LogHistogram {
    /// Title (the caption adds n and the zeros).
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// (bin start, bin end, count) from [`log_bins`].
    pub bins: Vec<(f64, f64, u64)>,
    /// Values that were zero.
    pub zeros: u64,
    /// All values.
    pub n: usize,
}

/// Bins per decade of [`LogHistogram`]'s axis.
const BINS_PER_DECADE: u32 = 5;

/// Counts per logarithmic bin `[10^(i/k), 10^((i+1)/k))` for values ≥ 1; returns (bins,
/// count of zeros). Bin edges are computed, not accumulated, so the counts are exact and
/// deterministic.
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

impl LogHistogram {
    /// Bins `values` on the log axis.
    pub fn from_counts(title: &str, x_label: &str, values: &[u64]) -> Self {
        let (bins, zeros) = log_bins(values);
        Self { title: title.into(), x_label: x_label.into(), bins, zeros, n: values.len() }
    }
}

impl Plot for LogHistogram {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, _raster: bool) -> Result<(), String> {
        root.fill(&WHITE).map_err(e2s)?;
        let x_max = self.bins.last().map(|b| b.1).unwrap_or(10.0);
        let y_max = self.bins.iter().map(|b| b.2).max().unwrap_or(1).max(1);
        let caption = format!("{} (n = {}; {} with none not shown)", self.title, self.n, self.zeros);
        let mut chart = ChartBuilder::on(root)
            .caption(caption, font(TITLE))
            .margin(16)
            // The last decade's label is centred on the right edge; room so it is not cut.
            .margin_right(40)
            .x_label_area_size(60)
            .y_label_area_size(80)
            .build_cartesian_2d((1f64..x_max).log_scale(), 0u64..(y_max + y_max / 10 + 1))
            .map_err(e2s)?;
        chart
            .configure_mesh()
            .x_desc(&self.x_label)
            .y_desc("projects")
            .label_style(font(TICK))
            .axis_desc_style(font(LABEL))
            .x_label_formatter(&|x| format!("{x:.0}"))
            .disable_x_mesh()
            .light_line_style(TRANSPARENT)
            .draw()
            .map_err(e2s)?;
        let c = color(0);
        chart
            .draw_series(self.bins.iter().map(|&(lo, hi, n)| Rectangle::new([(lo, 0), (hi, n)], c.mix(0.8).filled())))
            .map_err(e2s)?;
        Ok(())
    }
}

/// Formats tick values without trailing zeros.
fn trim_float(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x:.2}").trim_end_matches('0').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_stats_clip_whiskers_to_the_data() {
        let b = BoxStats::new(&[1.0, 2.0, 3.0, 4.0, 100.0]).unwrap();
        assert_eq!((b.q1, b.median, b.q3), (2.0, 3.0, 4.0));
        assert_eq!((b.lo, b.hi), (1.0, 4.0));
        assert_eq!(b.outliers, vec![100.0]);
        let all_full = BoxStats::new(&[1.0; 7]).unwrap();
        assert_eq!((all_full.lo, all_full.hi), (1.0, 1.0));
    }

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
    fn log_histogram_is_a_deterministic_png() {
        let v: Vec<u64> = (0..200).map(|i| (i * 37 % 500) as u64).collect();
        let h = LogHistogram::from_counts("statements per project", "statements (log scale)", &v);
        let a = png_bytes(&h).unwrap();
        let b = png_bytes(&h).unwrap();
        assert!(a.starts_with(b"\x89PNG"));
        assert_eq!(a, b);
    }

    #[test]
    fn histogram_bins_are_nice() {
        let h = Histogram::from_values("t", "x", &[3.0, 14.0, 15.0, 97.0], 10);
        assert_eq!(h.bins.first().unwrap().0, 0.0);
        assert_eq!(h.bins[0].1 - h.bins[0].0, 10.0);
        assert_eq!(h.bins.iter().map(|b| b.2).sum::<u64>(), 4);
    }

    #[test]
    fn renders_png_and_svg_with_the_embedded_font() {
        let dir = tempfile::tempdir().unwrap();
        let plot = LinePlot {
            title: "Coverage over time".into(),
            x_label: "time (s)".into(),
            y_label: "coverage (%)".into(),
            x_range: (0.0, 10.0),
            y_range: (0.0, 100.0),
            series: vec![Series {
                name: "random".into(),
                points: vec![(0.0, 0.0), (10.0, 50.0)],
                band: vec![(0.0, 0.0, 0.0), (10.0, 40.0, 60.0)],
            }],
        };
        let stem = dir.path().join("p");
        render(&plot, &stem).unwrap();
        let png = std::fs::read(stem.with_extension("png")).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        // The title was rasterised: dark pixels in the caption band (top 50 rows).
        let mut reader = png::Decoder::new(std::io::Cursor::new(&png)).read_info().unwrap();
        let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
        reader.next_frame(&mut pixels).unwrap();
        let dark = pixels[..(SIZE.0 * 50 * 3) as usize].chunks(3).filter(|p| p.iter().all(|&c| c < 100)).count();
        assert!(dark > 200, "caption text not drawn ({dark} dark pixels)");
        let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
        assert!(svg.contains("Coverage over time") && svg.contains("random"));
        // Deterministic bytes.
        render(&plot, &stem).unwrap();
        assert_eq!(std::fs::read(stem.with_extension("png")).unwrap(), png);
    }
}
