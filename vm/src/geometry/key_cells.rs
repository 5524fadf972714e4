//! Where on the stage one rendition drawn with one fixed transform can make a composite show a
//! colour key, to a grid of 2 × 2-pixel cells: a radial colour search (Neatest's colour
//! features) then skips the points of a backdrop's match box where it cannot (a starry sky
//! searched for its stars samples only near them). The same texels
//! [`TexelBoxes`](super::silhouette::TexelBoxes) counts, one row run at a time instead of one
//! box per key, mapped to the stage as [`texels_on_stage`] maps a box.

use super::drawable::Xform;
use super::render::texels_on_stage;
use super::silhouette::{Silhouette, TexelBox};

/// Cell side in stage pixels.
const CELL: f64 = 2.0;
/// Cells per row and column (the stage is 480 × 360).
const COLS: usize = 240;
const ROWS: usize = 180;

/// The cells of the stage where a rendition may show a colour key (see the module docs).
#[derive(Debug)]
pub struct KeyCells {
    /// Bit `row * COLS + col`: the cell whose lower left corner is
    /// (−240 + 2·col, −180 + 2·row) may show the key.
    bits: Vec<u64>,
}

impl KeyCells {
    /// The cells of `sil` drawn with (finite) transform `xf` that may show colour key `key`;
    /// `None` when more than a quarter of its texels may (then the rendition's one box is
    /// nearly as good, and cheaper).
    pub fn build(xf: &Xform, sil: &Silhouette, key: usize) -> Option<KeyCells> {
        let (w, h) = (sil.width(), sil.height());
        let mut cells = KeyCells { bits: vec![0; (COLS * ROWS).div_ceil(64)] };
        let (mut shown, total) = (0u64, u64::from(w) * u64::from(h));
        for y in 0..h {
            let mut run: Option<u32> = None;
            for x in 0..=w {
                let shows = x < w && sil.may_show_key(x, y, key);
                shown += u64::from(shows);
                match (shows, run) {
                    (true, None) => run = Some(x),
                    (false, Some(x0)) => {
                        cells.mark(texels_on_stage(xf, [w, h], TexelBox { x0, y0: y, x1: x - 1, y1: y }));
                        run = None;
                    }
                    _ => {}
                }
            }
            if shown * 4 > total {
                return None;
            }
        }
        Some(cells)
    }

    /// Flags every cell that meets `r` (an unbounded box, or one with NaN, flags a whole span).
    fn mark(&mut self, r: super::Rect) {
        // `max`/`min` take the number over NaN: a NaN side reaches the stage's edge.
        let span = |lo: f64, hi: f64, half: f64, n: usize| {
            let a = ((lo + half) / CELL).floor().max(0.0);
            let b = ((hi + half) / CELL).floor().min(n as f64 - 1.0);
            (a <= b).then_some((a as usize, b as usize))
        };
        let (Some((c0, c1)), Some((r0, r1))) = (span(r.left, r.right, 240.0, COLS), span(r.bottom, r.top, 180.0, ROWS))
        else {
            return;
        };
        for row in r0..=r1 {
            for col in c0..=c1 {
                let i = row * COLS + col;
                if let Some(word) = self.bits.get_mut(i / 64) {
                    *word |= 1 << (i % 64);
                }
            }
        }
    }

    /// False when the rendition cannot make a composite show the key at stage point (x, y)
    /// (a point on the stage: |x| < 240, |y| < 180).
    #[inline]
    pub fn may_show(&self, x: f64, y: f64) -> bool {
        // Halving is exact: the same cells as dividing by `CELL`.
        let (col, row) = ((x + 240.0) * (1.0 / CELL), (y + 180.0) * (1.0 / CELL));
        if !(col >= 0.0 && col < COLS as f64 && row >= 0.0 && row < ROWS as f64) {
            return true;
        }
        // Non-negative: truncation is the floor.
        let i = row as usize * COLS + col as usize;
        self.bits.get(i / 64).is_none_or(|w| w >> (i % 64) & 1 != 0)
    }
}
