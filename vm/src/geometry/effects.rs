//! Graphic effects as scratch-render applies them on the CPU (`EffectTransform`):
//! the shape effects move texture sample points, colour, brightness and ghost
//! change sampled colours.

use crate::util::color::{shader_hsv_to_rgb, shader_rgb_to_hsv};
use crate::util::jsmath::{cos, pow, sin};
use crate::util::math::{f32r, js_max, js_min, js_round, u8_clamp};

/// Bit of each effect in [`Effects::enabled`] (scratch-render's order).
pub mod bit {
    /// color
    pub const COLOR: u32 = 1 << 0;
    /// fisheye
    pub const FISHEYE: u32 = 1 << 1;
    /// whirl
    pub const WHIRL: u32 = 1 << 2;
    /// pixelate
    pub const PIXELATE: u32 = 1 << 3;
    /// mosaic
    pub const MOSAIC: u32 = 1 << 4;
    /// brightness
    pub const BRIGHTNESS: u32 = 1 << 5;
    /// ghost
    pub const GHOST: u32 = 1 << 6;
    /// The effects that change a drawable's shape.
    pub const SHAPE: u32 = FISHEYE | WHIRL | PIXELATE | MOSAIC;
}

/// A drawable's effect uniforms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Effects {
    /// Bitmask of effects with a non-zero value.
    pub enabled: u32,
    color: f64,
    fisheye: f64,
    whirl: f64,
    pixelate: f64,
    mosaic: f64,
    brightness: f64,
    /// `u_ghost`: 1 = opaque, 0 = invisible.
    pub ghost: f64,
}

/// The uniforms of no effect (all values +0).
const NONE: Effects = Effects {
    enabled: 0,
    color: 0.0,
    fisheye: 1.0,
    whirl: -0.0,
    pixelate: 0.0,
    mosaic: 1.0,
    brightness: 0.0,
    ghost: 1.0,
};

impl Default for Effects {
    fn default() -> Self {
        Effects::from_values([0.0; 7])
    }
}

impl Effects {
    /// Uniforms from the Scratch effect values `[color, fisheye, whirl, pixelate, mosaic, brightness, ghost]`.
    pub fn from_values(v: [f64; 7]) -> Self {
        // No effect set (every value +0): the uniforms `from_values_computed` gives then, without
        // its `%` and rounding (every drawable of a swarm is rebuilt through this).
        if v.iter().all(|x| x.to_bits() == 0) {
            return NONE;
        }
        Self::from_values_computed(v)
    }

    /// [`Effects::from_values`] computed.
    fn from_values_computed(v: [f64; 7]) -> Self {
        let mut enabled = 0;
        for (i, x) in v.iter().enumerate() {
            // `if (rawValue)`: zero and NaN disable the effect.
            if *x != 0.0 && !x.is_nan() {
                enabled |= 1 << i;
            }
        }
        let mosaic = js_round((v[4].abs() + 10.0) / 10.0);
        Effects {
            enabled,
            color: (v[0] / 200.0) % 1.0,
            fisheye: js_max(0.0, (v[1] + 100.0) / 100.0),
            whirl: -v[2] * std::f64::consts::PI / 180.0,
            pixelate: v[3].abs() / 10.0,
            mosaic: js_max(1.0, js_min(mosaic, 512.0)),
            brightness: js_max(-100.0, js_min(v[5], 100.0)) / 100.0,
            ghost: 1.0 - js_max(0.0, js_min(v[6], 100.0)) / 100.0,
        }
    }

    /// Whether the ghost effect is at 100: every sampled colour becomes transparent, so the
    /// drawable adds nothing to a composite (it still touches: shape ignores ghost).
    pub fn invisible(&self) -> bool {
        self.enabled & bit::GHOST != 0 && self.ghost == 0.0
    }

    /// Whether every uniform has the same bits (a cache key: `==` would take −0 for 0).
    pub(crate) fn same_bits(&self, o: &Effects) -> bool {
        let bits =
            |e: &Effects| [e.color, e.fisheye, e.whirl, e.pixelate, e.mosaic, e.brightness, e.ghost].map(f64::to_bits);
        self.enabled == o.enabled && bits(self) == bits(o)
    }

    /// Whether any shape-changing effect is on.
    pub fn changes_shape(&self) -> bool {
        self.enabled & bit::SHAPE != 0
    }

    /// `EffectTransform.transformPoint`: where the shader would sample for texture coordinate `p`.
    pub fn transform_point(&self, p: [f64; 2], skin_size: [f64; 2]) -> [f64; 2] {
        let e = self.enabled;
        let [mut x, mut y] = p;
        if e & bit::MOSAIC != 0 {
            x = f32r((self.mosaic * x) % 1.0);
            y = f32r((self.mosaic * y) % 1.0);
        }
        if e & bit::PIXELATE != 0 {
            let tx = skin_size[0] / self.pixelate;
            let ty = skin_size[1] / self.pixelate;
            x = f32r(((x * tx).floor() + 0.5) / tx);
            y = f32r(((y * ty).floor() + 0.5) / ty);
        }
        if e & bit::WHIRL != 0 {
            let (ox, oy) = (x - 0.5, y - 0.5);
            let mag = (pow(ox, 2.0) + pow(oy, 2.0)).sqrt();
            let factor = (1.0 - mag / 0.5).max(0.0);
            let actual = self.whirl * factor * factor;
            let (s, c) = (sin(actual), cos(actual));
            x = f32r(c * ox + s * oy + 0.5);
            y = f32r(-s * ox + c * oy + 0.5);
        }
        if e & bit::FISHEYE != 0 {
            let vx = (x - 0.5) / 0.5;
            let vy = (y - 0.5) / 0.5;
            let len = (vx * vx + vy * vy).sqrt();
            let r = pow(len.min(1.0), self.fisheye) * len.max(1.0);
            let (ux, uy) = (vx / len, vy / len);
            x = f32r(0.5 + r * ux * 0.5);
            y = f32r(0.5 + r * uy * 0.5);
        }
        [x, y]
    }

    /// `EffectTransform.transformColor` on a premultiplied colour; `mask` limits the effects applied.
    pub fn transform_color(&self, c: [u8; 4], mask: u32) -> [u8; 4] {
        if c[3] == 0 {
            return c;
        }
        let e = self.enabled & mask;
        let mut out = c;
        if e & (bit::COLOR | bit::BRIGHTNESS) != 0 {
            let alpha = c[3] as f64 / 255.0;
            for v in &mut out[..3] {
                *v = u8_clamp(*v as f64 / alpha);
            }
            if e & bit::COLOR != 0 {
                let mut hsv = shader_rgb_to_hsv(out[0], out[1], out[2]);
                let min_v = 0.11 / 2.0;
                let min_s = 0.09;
                if hsv[2] < min_v {
                    hsv = [0.0, 1.0, min_v];
                } else if hsv[1] < min_s {
                    hsv[0] = 0.0;
                    hsv[1] = min_s;
                }
                hsv[0] = self.color + hsv[0] + 1.0;
                let rgb = shader_hsv_to_rgb(hsv);
                out[0] = u8_clamp(rgb[0]);
                out[1] = u8_clamp(rgb[1]);
                out[2] = u8_clamp(rgb[2]);
            }
            if e & bit::BRIGHTNESS != 0 {
                let b = self.brightness * 255.0;
                for v in &mut out[..3] {
                    *v = u8_clamp(*v as f64 + b);
                }
            }
            for v in &mut out[..3] {
                *v = u8_clamp(*v as f64 * alpha);
            }
        }
        if e & bit::GHOST != 0 {
            for v in &mut out {
                *v = u8_clamp(*v as f64 * self.ghost);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The uniforms of no effect are those computed, bit for bit; a `-0` value still computes.
    #[test]
    fn no_effect_equals_the_computed_uniforms() {
        let bits =
            |e: Effects| [e.color, e.fisheye, e.whirl, e.pixelate, e.mosaic, e.brightness, e.ghost].map(f64::to_bits);
        let (fast, computed) = (Effects::from_values([0.0; 7]), Effects::from_values_computed([0.0; 7]));
        assert_eq!((fast.enabled, bits(fast)), (computed.enabled, bits(computed)));
        for k in 0..7 {
            let mut v = [0.0; 7];
            v[k] = -0.0;
            let (e, c) = (Effects::from_values(v), Effects::from_values_computed(v));
            assert_eq!((e.enabled, bits(e)), (c.enabled, bits(c)), "-0 at {k}");
        }
    }

    #[test]
    fn ghost_scales_all_channels() {
        let e = Effects::from_values([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 50.0]);
        assert_eq!(e.enabled, bit::GHOST);
        assert_eq!(e.transform_color([200, 100, 0, 255], !0), [100, 50, 0, 128]);
        // Masked out: unchanged.
        assert_eq!(e.transform_color([200, 100, 0, 255], !bit::GHOST), [200, 100, 0, 255]);
    }

    #[test]
    fn color_effect_rotates_hue() {
        // +100 colour = half-way round the hue circle: red becomes cyan (the renderer's
        // epsilon in the saturation leaves red at 1).
        let e = Effects::from_values([100.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(e.transform_color([255, 0, 0, 255], !0), [1, 255, 255, 255]);
    }

    #[test]
    fn no_effects_leave_points_alone() {
        let e = Effects::default();
        assert_eq!(e.transform_point([0.25, 0.75], [10.0, 10.0]), [0.25, 0.75]);
        let m = Effects::from_values([0.0, 0.0, 0.0, 0.0, 10.0, 0.0, 0.0]);
        // mosaic 10 → u_mosaic 2: 0.75 → 0.5.
        assert_eq!(m.transform_point([0.75, 0.25], [10.0, 10.0]), [0.5, 0.5]);
    }
}
