//! Where Skia's analytic scan converter puts its alphas: an 8-bit mask for small shapes
//! (`MaskAdditiveBlitter`), otherwise a row of runs flushed to the device with the faint and
//! nearly full alphas snapped (`RunBasedAdditiveBlitter`, and its saturating `SafeRLE` kind
//! for shapes that may overlap themselves); whole rows the walkers blit straight to the device.

/// Which accumulator the shape uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Rounded-out bounds at most 32 px wide and 1 024 bytes (rows padded to 4).
    Mask,
    /// A convex shape: sums wrap as Skia's `CatchOverflow` does.
    Runs,
    /// Anything else: sums saturate at 255.
    SafeRuns,
}

/// An integer rectangle, right and bottom exclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IRect {
    pub left: i32,
    pub top: i32,
    pub right: i32,
    pub bottom: i32,
}

impl IRect {
    pub fn width(&self) -> i32 {
        self.right - self.left
    }
    pub fn height(&self) -> i32 {
        self.bottom - self.top
    }
}

/// Whether Skia accumulates a shape of these rounded-out bounds in a mask.
pub fn mask_fits(ir: IRect) -> bool {
    let w = ir.width() as i64;
    w <= 32 && (w + 3) / 4 * 4 * ir.height() as i64 <= 1024
}

/// The device's coverage, composited as each blit arrives.
pub struct Device<'a> {
    pub out: &'a mut [u8],
    /// Canvas-sized marks, if wanted: 1 where a pixel's only write was the real blitter's
    /// `blitAntiH2` (see [`super::H2_ONLY`]), 2 where it was written again after one.
    pub marks: Option<&'a mut [u8]>,
    pub width: i32,
    pub height: i32,
}

impl Device<'_> {
    pub fn put(&mut self, x: i32, y: i32, a: u8) {
        self.put_from(x, y, a, false);
    }

    /// `blitAntiH2`'s write of one pixel: the same coverage, marked.
    pub fn put_h2(&mut self, x: i32, y: i32, a: u8) {
        self.put_from(x, y, a, true);
    }

    fn put_from(&mut self, x: i32, y: i32, a: u8, h2: bool) {
        if a == 0 || x < 0 || y < 0 || x >= self.width || y >= self.height {
            return;
        }
        let i = (y * self.width + x) as usize;
        let Some(d) = self.out.get_mut(i) else { return };
        let first = *d == 0;
        // A pixel blitted twice (where a self-overlapping shape's rows meet) is composited
        // as Skia's 32-bit blitter does it for an opaque colour.
        *d = if first || a == 255 { a } else { (a as u32 + ((*d as u32 * (256 - a as u32)) >> 8)) as u8 };
        if let Some(m) = self.marks.as_deref_mut().and_then(|m| m.get_mut(i)) {
            *m = match (first, h2, *m) {
                (true, true, _) => super::H2_ONLY,
                (_, _, 0) if !h2 => 0,
                _ => super::H2_MIXED,
            };
        }
    }
}

/// Skia's additive blitter over a device.
pub struct Blitter<'a> {
    pub mode: Mode,
    dev: Device<'a>,
    ir: IRect,
    /// `ir` within the canvas: the runs' extent and the part of the mask blitted.
    sect: IRect,
    /// Mask storage: one spare byte before and after, as Skia keeps for edge drift.
    mask: Vec<u8>,
    /// Runs: the current row's alphas over `[left, left + width)`.
    row: Vec<u8>,
    left: i32,
    top: i32,
    cur_y: i32,
}

fn catch_overflow(v: i32) -> u8 {
    (v - (v >> 8)) as u8
}

fn snap_alpha(a: u8) -> u8 {
    if a > 247 {
        255
    } else if a < 8 {
        0
    } else {
        a
    }
}

impl<'a> Blitter<'a> {
    /// A blitter for a shape of rounded-out bounds `ir`, `sect` of them inside the device.
    pub fn new(mode: Mode, dev: Device<'a>, ir: IRect, sect: IRect) -> Self {
        let (w, h) = (ir.width().max(0) as usize, ir.height().max(0) as usize);
        let mask = if mode == Mode::Mask { vec![0; w * h + 2] } else { Vec::new() };
        let row = if mode == Mode::Mask { Vec::new() } else { vec![0; sect.width().max(0) as usize] };
        Blitter { mode, dev, ir, sect, mask, row, left: sect.left, top: sect.top, cur_y: sect.top - 1 }
    }

    fn mask_index(&self, x: i32, y: i32) -> Option<usize> {
        let i = 1 + (y - self.ir.top) as i64 * self.ir.width() as i64 + (x - self.ir.left) as i64;
        (i >= 0 && (i as usize) < self.mask.len()).then_some(i as usize)
    }

    /// `maskRow[x] = a`.
    pub fn mask_set(&mut self, x: i32, y: i32, a: u8) {
        if let Some(i) = self.mask_index(x, y) {
            self.mask[i] = a;
        }
    }

    /// `safely_add_alpha(&maskRow[x], a)`.
    pub fn mask_add(&mut self, x: i32, y: i32, a: u8) {
        if let Some(i) = self.mask_index(x, y) {
            self.mask[i] = (self.mask[i] as i32 + a as i32).min(255) as u8;
        }
    }

    fn add_at(&mut self, x: i32, y: i32, a: u8) {
        match self.mode {
            Mode::Mask => {
                if let Some(i) = self.mask_index(x, y) {
                    self.mask[i] = catch_overflow(self.mask[i] as i32 + a as i32);
                }
            }
            Mode::Runs => self.row[x as usize] = catch_overflow(self.row[x as usize] as i32 + a as i32),
            Mode::SafeRuns => self.row[x as usize] = (self.row[x as usize] as i32 + a as i32).min(255) as u8,
        }
    }

    fn check_y(&mut self, y: i32) {
        if y != self.cur_y {
            self.flush();
            self.cur_y = y;
        }
    }

    fn flush(&mut self) {
        if self.mode == Mode::Mask || self.cur_y < self.top {
            return;
        }
        for i in 0..self.row.len() {
            let a = snap_alpha(self.row[i]);
            self.row[i] = 0;
            self.dev.put(self.left + i as i32, self.cur_y, a);
        }
        self.cur_y = self.top - 1;
    }

    /// `blitAntiH(x, y, alpha)` of the additive blitter.
    pub fn anti_h1(&mut self, x: i32, y: i32, a: u8) {
        self.anti_hw(x, y, 1, a);
    }

    /// `blitAntiH(x, y, width, alpha)` of the additive blitter.
    pub fn anti_hw(&mut self, x: i32, y: i32, width: i32, a: u8) {
        if self.mode == Mode::Mask {
            for i in 0..width {
                self.add_at(x + i, y, a);
            }
            return;
        }
        self.check_y(y);
        let x = x - self.left;
        if x >= 0 && x + width <= self.row.len() as i32 {
            for i in 0..width {
                self.add_at(x + i, y, a);
            }
        }
    }

    /// `blitAntiH(x, y, alphas, len)` of the additive blitter (runs only).
    pub fn anti_h_arr(&mut self, x: i32, y: i32, alphas: &[u8]) {
        self.check_y(y);
        let mut x = x - self.left;
        let mut alphas = alphas;
        if x < 0 {
            alphas = alphas.get((-x) as usize..).unwrap_or(&[]);
            x = 0;
        }
        let len = (alphas.len() as i32).min(self.row.len() as i32 - x).max(0);
        for (i, &a) in alphas.iter().take(len as usize).enumerate() {
            self.add_at(x + i as i32, y, a);
        }
    }

    /// `flush_if_y_changed`.
    pub fn flush_if_y_changed(&mut self, y: i32, next_y: i32) {
        if self.mode != Mode::Mask && (y >> 16) != (next_y >> 16) {
            self.flush();
        }
    }

    /// The real blitter's `blitV` (in mask mode, the mask's, which sets).
    pub fn real_v(&mut self, x: i32, y: i32, height: i32, a: u8) {
        if self.mode == Mode::Mask {
            if a != 0 {
                for i in 0..height {
                    self.mask_set(x, y + i, a);
                }
            }
            return;
        }
        for i in 0..height {
            self.dev.put(x, y + i, a);
        }
    }

    /// The real blitter's `blitRect` of full coverage.
    fn real_rect(&mut self, x: i32, y: i32, width: i32, height: i32) {
        for j in 0..height {
            for i in 0..width {
                if self.mode == Mode::Mask {
                    self.mask_set(x + i, y + j, 255);
                } else {
                    self.dev.put(x + i, y + j, 255);
                }
            }
        }
    }

    /// The real blitter's `blitAntiRect`.
    pub fn real_anti_rect(&mut self, x: i32, y: i32, width: i32, height: i32, la: u8, ra: u8) {
        self.real_v(x, y, height, la);
        self.real_v(x + 1 + width, y, height, ra);
        self.real_rect(x + 1, y, width, height);
    }

    /// The device's `blitH` (runs only).
    pub fn real_h(&mut self, x: i32, y: i32, len: i32) {
        for i in 0..len {
            self.dev.put(x + i, y, 255);
        }
    }

    /// The device's `blitAntiH2`: two neighbouring pixels (runs only).
    pub fn real_anti_h2(&mut self, x: i32, y: i32, a1: u8, a2: u8) {
        self.dev.put_h2(x, y, a1);
        self.dev.put_h2(x + 1, y, a2);
    }

    /// The device's `blitAntiH` of one alpha per pixel (runs only).
    pub fn real_anti_h(&mut self, x: i32, y: i32, alphas: &[u8]) {
        for (i, &a) in alphas.iter().enumerate() {
            self.dev.put(x + i as i32, y, a);
        }
    }

    /// Ends the shape: the last row of runs, or the mask within the device.
    pub fn finish(mut self) {
        if self.mode != Mode::Mask {
            self.flush();
            return;
        }
        for y in self.sect.top..self.sect.bottom {
            for x in self.sect.left..self.sect.right {
                if let Some(i) = self.mask_index(x, y) {
                    let a = self.mask[i];
                    self.dev.put(x, y, a);
                }
            }
        }
    }
}
