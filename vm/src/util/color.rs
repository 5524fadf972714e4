//! Colour conversions, each exactly as the code it reproduces computes it.
//!
//! Two pairs, because Scratch has two: scratch-vm's `util/color.js` (`Color.rgbToHsv` and
//! `Color.hsvToRgb`, JavaScript doubles; the pen extension's colour model) and the HSV
//! conversion of scratch-render's fragment shader (the `color` graphic effect), a different
//! algorithm with its own epsilon and rounding offset.

use super::math::{js_max, js_min};

/// scratch-vm `Color.hsvToRgb`: `h` in degrees, `s` and `v` in [0, 1]; whole-number
/// components in 0..=255.
pub fn hsv_to_rgb(h: f64, s: f64, v: f64) -> [f64; 3] {
    let mut h = h % 360.0;
    if h < 0.0 {
        h += 360.0;
    }
    let s = js_max(0.0, js_min(s, 1.0));
    let v = js_max(0.0, js_min(v, 1.0));
    let i = (h / 60.0).floor();
    let f = (h / 60.0) - i;
    let p = v * (1.0 - s);
    let q = v * (1.0 - (s * f));
    let t = v * (1.0 - (s * (1.0 - f)));
    let (r, g, b) = match i as i64 {
        1 => (q, v, p),
        2 => (p, v, t),
        3 => (p, q, v),
        4 => (t, p, v),
        5 => (v, p, q),
        _ => (v, t, p),
    };
    [(r * 255.0).floor(), (g * 255.0).floor(), (b * 255.0).floor()]
}

/// scratch-vm `Color.rgbToHsv`: components in 0..=255; `h` in degrees, `s` and `v` in [0, 1].
pub fn rgb_to_hsv(rgb: [f64; 3]) -> [f64; 3] {
    let (r, g, b) = (rgb[0] / 255.0, rgb[1] / 255.0, rgb[2] / 255.0);
    let x = js_min(js_min(r, g), b);
    let v = js_max(js_max(r, g), b);
    let mut h = 0.0;
    let mut s = 0.0;
    if x != v {
        let f = if r == x {
            g - b
        } else if g == x {
            b - r
        } else {
            r - g
        };
        let i = if r == x {
            3.0
        } else if g == x {
            5.0
        } else {
            1.0
        };
        h = ((i - (f / (v - x))) * 60.0) % 360.0;
        s = (v - x) / v;
    }
    [h, s, v]
}

/// scratch-render's shader `rgbToHsv`: hue, saturation and value all in [0, 1].
pub fn shader_rgb_to_hsv(r: u8, g: u8, b: u8) -> [f64; 3] {
    let (mut r, mut g, mut b) = (r as f64 / 255.0, g as f64 / 255.0, b as f64 / 255.0);
    let mut k = 0.0;
    if g < b {
        std::mem::swap(&mut g, &mut b);
        k = -1.0;
    }
    if r < g {
        std::mem::swap(&mut r, &mut g);
        k = -2.0 / 6.0 - k;
    }
    let chroma = r - g.min(b);
    let h = (k + (g - b) / (6.0 * chroma + f64::EPSILON)).abs();
    let s = chroma / (r + f64::EPSILON);
    [h, s, r]
}

/// scratch-render's shader `hsvToRgb`: the values to store (0..255 plus the 0.5 rounding
/// offset of a normalised-float-to-byte write).
pub fn shader_hsv_to_rgb([h, s, v]: [f64; 3]) -> [f64; 3] {
    if s == 0.0 {
        let x = v * 255.0 + 0.5;
        return [x, x, x];
    }
    let h = h % 1.0;
    let i = (h * 6.0) as i32;
    let f = h * 6.0 - i as f64;
    let p = v * (1.0 - s);
    let q = v * (1.0 - s * f);
    let t = v * (1.0 - s * (1.0 - f));
    let (r, g, b) = match i {
        0 => (v, t, p),
        1 => (q, v, p),
        2 => (p, v, t),
        3 => (p, q, v),
        4 => (t, p, v),
        5 => (v, p, q),
        _ => (0.0, 0.0, 0.0),
    };
    [r * 255.0 + 0.5, g * 255.0 + 0.5, b * 255.0 + 0.5]
}

/// `Color.hexToRgb` (`#rgb` or `#rrggbb`, case-insensitive); `None` when not a hex colour.
pub fn hex_to_rgb(s: &str) -> Option<[u8; 3]> {
    let h = s.strip_prefix('#').unwrap_or(s);
    let full: String = if h.len() == 3 && h.chars().all(|c| c.is_ascii_hexdigit()) {
        h.chars().flat_map(|c| [c, c]).collect()
    } else {
        h.to_string()
    };
    if full.len() != 6 || !full.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let p = |i: usize| u8::from_str_radix(&full[i..i + 2], 16).ok();
    Some([p(0)?, p(2)?, p(4)?])
}

/// `Cast.toRgbColorList` of a text (a colour picker's value): `#rrggbb` (black when not a hex
/// colour), else the number as `0xRRGGBB`.
pub fn rgb_color_list(s: &str) -> [u8; 3] {
    if s.starts_with('#') {
        return hex_to_rgb(s).unwrap_or([0, 0, 0]);
    }
    let d = crate::util::math::to_int32(crate::util::cast::js_string_to_number(s));
    [((d >> 16) & 0xff) as u8, ((d >> 8) & 0xff) as u8, (d & 0xff) as u8]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_vm_round_trip() {
        // node: Color.rgbToHsv({r: 255, g: 0, b: 0}) = {h: 0, s: 1, v: 1}; blue is h 240.
        assert_eq!(rgb_to_hsv([255.0, 0.0, 0.0]), [0.0, 1.0, 1.0]);
        assert_eq!(rgb_to_hsv([0.0, 0.0, 255.0]), [240.0, 1.0, 1.0]);
        assert_eq!(rgb_to_hsv([128.0, 128.0, 128.0])[1], 0.0);
        assert_eq!(hsv_to_rgb(240.0, 1.0, 1.0), [0.0, 0.0, 255.0]);
        // Hue wraps and saturation/value clamp, as in Color.hsvToRgb.
        assert_eq!(hsv_to_rgb(-120.0, 2.0, 1.0), [0.0, 0.0, 255.0]);
        assert_eq!(hsv_to_rgb(60.0, 1.0, 0.5), [127.0, 127.0, 0.0]);
    }

    #[test]
    fn shader_hue_of_primaries() {
        let [h, s, v] = shader_rgb_to_hsv(0, 255, 0);
        assert!((h - 1.0 / 3.0).abs() < 1e-12 && s > 0.999 && v == 1.0);
        // Grey has no saturation: every channel is the value (+0.5 for the byte store).
        assert_eq!(shader_hsv_to_rgb([0.3, 0.0, 0.5]), [128.0, 128.0, 128.0]);
    }
}
