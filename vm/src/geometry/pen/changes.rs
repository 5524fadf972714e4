//! Which pen pixels changed, as one box per band of rows: what colour queries must forget and
//! what a clear must erase. One box for everything made a pen line from a ball to the mouse,
//! redrawn every frame, forget the whole stage's composite colours every frame (`400003367`);
//! per band, a diagonal line covers a staircase of thin boxes along itself.

use super::super::Rect;
use super::super::silhouette::TexelBox;
use super::{PEN_HEIGHT, PEN_WIDTH};

/// Rows per band.
const BAND: i64 = 16;
/// Bands of the pen layer.
const BANDS: usize = (PEN_HEIGHT as usize).div_ceil(BAND as usize);

/// A box of pen pixels: columns `c0..=c1`, rows `r0..=r1`, row 0 at the top.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PixelBox {
    /// First column.
    pub c0: i64,
    /// Last column.
    pub c1: i64,
    /// First row.
    pub r0: i64,
    /// Last row.
    pub r1: i64,
}

impl PixelBox {
    fn union(self, o: PixelBox) -> PixelBox {
        PixelBox { c0: self.c0.min(o.c0), c1: self.c1.max(o.c1), r0: self.r0.min(o.r0), r1: self.r1.max(o.r1) }
    }

    fn contains(&self, o: &PixelBox) -> bool {
        self.c0 <= o.c0 && o.c1 <= self.c1 && self.r0 <= o.r0 && o.r1 <= self.r1
    }
}

/// Changed pen pixels: per band of [`BAND`] rows, the box of those changed in it (if any).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PenChanges {
    bands: [Option<PixelBox>; BANDS],
}

impl PenChanges {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.bands.iter().all(Option::is_none)
    }

    /// The boxes, one per band with changes, top first.
    pub fn boxes(&self) -> impl Iterator<Item = PixelBox> + '_ {
        self.bands.iter().flatten().copied()
    }

    /// The band of row `r` (rows are clamped to the layer).
    fn band(r: i64) -> usize {
        (r.clamp(0, PEN_HEIGHT as i64 - 1) / BAND) as usize
    }

    /// The parts of box `b` (rows clamped to the layer) in each band it crosses.
    fn split(b: PixelBox) -> impl Iterator<Item = (usize, PixelBox)> {
        let (r0, r1) = (b.r0.max(0), b.r1.min(PEN_HEIGHT as i64 - 1));
        (Self::band(r0)..=Self::band(r1)).filter(move |_| r0 <= r1).map(move |k| {
            let lo = k as i64 * BAND;
            (k, PixelBox { r0: r0.max(lo), r1: r1.min(lo + BAND - 1), ..b })
        })
    }

    /// Pixels in columns `c0..=c1` of row `r` changed (a row beyond the layer changes nothing).
    pub(super) fn add_row(&mut self, c0: i64, c1: i64, r: i64) {
        if !(0..PEN_HEIGHT as i64).contains(&r) {
            return;
        }
        let part = PixelBox { c0, c1, r0: r, r1: r };
        if let Some(slot) = self.bands.get_mut(Self::band(r)) {
            *slot = Some(slot.map_or(part, |s| s.union(part)));
        }
    }

    /// Everything `other` says changed, changed.
    pub(super) fn merge(&mut self, other: &PenChanges) {
        for (mine, theirs) in self.bands.iter_mut().zip(&other.bands) {
            if let Some(t) = theirs {
                *mine = Some(mine.map_or(*t, |m| m.union(*t)));
            }
        }
    }

    /// Whether every pixel of the box is inside the changed boxes.
    pub(super) fn contains(&self, c0: i64, c1: i64, r0: i64, r1: i64) -> bool {
        Self::split(PixelBox { c0, c1, r0, r1 })
            .all(|(k, part)| self.bands.get(k).copied().flatten().is_some_and(|b| b.contains(&part)))
    }

    /// The columns of the changed box of row `r`'s band, if `r` is among its rows.
    pub(super) fn row_span(&self, r: i64) -> Option<(i64, i64)> {
        let b = self.bands.get(Self::band(r)).copied().flatten()?;
        (b.r0 <= r && r <= b.r1).then_some((b.c0, b.c1))
    }

    /// The boxes as texel boxes of the layer (rows and columns clamped to it).
    pub(super) fn texel_boxes(&self) -> Vec<TexelBox> {
        let (w, h) = (PEN_WIDTH as i64 - 1, PEN_HEIGHT as i64 - 1);
        self.boxes()
            .filter(|b| b.c0 <= w && b.c1 >= 0 && b.c0 <= b.c1 && b.r0 <= b.r1)
            .map(|b| TexelBox {
                x0: b.c0.clamp(0, w) as u32,
                x1: b.c1.clamp(0, w) as u32,
                y0: b.r0.clamp(0, h) as u32,
                y1: b.r1.clamp(0, h) as u32,
            })
            .collect()
    }

    /// The stage boxes of the changed pixels (with a margin for how stage points map to pen
    /// texels), `None` when nothing is recorded (which its users treat as "anything").
    pub fn stage_boxes(&self) -> Option<Vec<Rect>> {
        let (half_w, half_h) = (PEN_WIDTH as f64 / 2.0, PEN_HEIGHT as f64 / 2.0);
        let out: Vec<Rect> = self
            .boxes()
            .map(|b| {
                Rect::new(
                    b.c0 as f64 - half_w - 3.0,
                    b.c1 as f64 - half_w + 3.0,
                    half_h - b.r1 as f64 - 3.0,
                    half_h - b.r0 as f64 + 3.0,
                )
            })
            .collect();
        (!out.is_empty()).then_some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bands' boxes cover exactly the rows and columns added, split at band edges.
    #[test]
    fn boxes_split_at_bands_and_cover_what_was_added() {
        let mut c = PenChanges::default();
        assert!(c.is_empty() && c.stage_boxes().is_none());
        (5..=40).for_each(|r| c.add_row(10, 20, r));
        c.add_row(100, 110, 30);
        let boxes: Vec<PixelBox> = c.boxes().collect();
        assert_eq!(
            boxes,
            [
                PixelBox { c0: 10, c1: 20, r0: 5, r1: 15 },
                PixelBox { c0: 10, c1: 110, r0: 16, r1: 31 },
                PixelBox { c0: 10, c1: 20, r0: 32, r1: 40 },
            ]
        );
        assert!(c.contains(12, 18, 5, 40) && c.contains(10, 110, 30, 30));
        assert!(!c.contains(12, 18, 4, 40) && !c.contains(10, 21, 35, 35));
        assert_eq!((c.row_span(4), c.row_span(5), c.row_span(20)), (None, Some((10, 20)), Some((10, 110))));
        // Rows beyond the layer change nothing.
        let mut d = PenChanges::default();
        (355..=400).for_each(|r| d.add_row(0, 5, r));
        d.add_row(0, 5, -1);
        assert_eq!(d.boxes().collect::<Vec<_>>(), [PixelBox { c0: 0, c1: 5, r0: 355, r1: 359 }]);
        c.merge(&d);
        assert_eq!(c.boxes().count(), 4);
    }
}
