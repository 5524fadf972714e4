//! What a network sees of the game: Whisker's `InputExtraction` (master), every value
//! normalised into [-1, 1] and named `(sprite, feature)` as in Whisker's saved networks.
//!
//! Per visible target in `runtime.targets` order: the stage's numeric variables (`VAR<name>`)
//! and, when any script reads the mouse, `Mouse-X`/`Mouse-Y`; per sprite its position (`X`,
//! `Y`), direction (`Dir`, rotation style "all around" only), size (`Size`, within the limits
//! `set size` allows for the current costume), numeric variables, signed distances to every
//! target of each sprite it senses with `touching (sprite)?` (`DIST<sprite>X`/`Y`, clones
//! `DIST<sprite>Clone<id>X`/`Y`), the distance to the nearest point showing each colour it
//! senses with `touching (colour)?` (`DIST<#rrggbb>`, Whisker's radial search) and, when it
//! switches costumes, its costume index (`Costume`). At most 5 clones per sprite, named
//! `<sprite>Clone<cloneID>`.
//!
//! Deliberate differences: none in what is extracted; the way-point features of Whisker's
//! path-finding mode (`DISTNextWaypoint*`) are not built (Whisker sets them only when a path
//! to a goal was computed beforehand, which Neatest's paper configuration does not do).

use clowder_neuro::network::Features;
use clowder_vm::Value;
use clowder_vm::project::Project;

use crate::graph::menu_value;
use crate::sut::{STAGE_HEIGHT, STAGE_WIDTH, Sut};
use clowder_vm::util::color::rgb_color_list;

/// Clones per sprite whose features are extracted (Whisker's `CLONE_THRESHOLD`).
const CLONE_THRESHOLD: usize = 5;

/// What feature extraction knows statically about a project.
#[derive(Debug, Clone, Default)]
pub struct FeatureInfo {
    /// Some script reads the mouse position (mouse x/y, pen down, touching or going to or
    /// pointing towards the mouse pointer, distance to it).
    uses_mouse: bool,
    /// Per sprite (index in `Project::targets`): what its blocks sense, in block order.
    senses: Vec<Senses>,
}

#[derive(Debug, Clone, Default)]
struct Senses {
    /// Sprite names of `touching (sprite)?` menus.
    sprites: Vec<String>,
    /// Colours (`#rrggbb` as written) of `touching (colour)?`.
    colors: Vec<String>,
    /// The sprite has a `switch costume to` block.
    switches_costume: bool,
}

impl FeatureInfo {
    /// Analyses `project`'s blocks once per run.
    pub fn new(project: &Project) -> Self {
        let mut senses = vec![Senses::default(); project.targets.len()];
        let mut uses_mouse = false;
        for (bi, b) in project.blocks.iter().enumerate() {
            let bi = bi as u32;
            let Some(s) = senses.get_mut(b.target as usize) else { continue };
            let menu_is_mouse = |input: &str| menu_value(project, bi, input).as_deref() == Some("_mouse_");
            match b.opcode.as_str() {
                "sensing_mousex" | "sensing_mousey" | "pen_penDown" => uses_mouse = true,
                "sensing_touchingobject" => uses_mouse |= menu_is_mouse("TOUCHINGOBJECTMENU"),
                "motion_goto" => uses_mouse |= menu_is_mouse("TO"),
                "sensing_distanceto" => uses_mouse |= menu_is_mouse("DISTANCETOMENU"),
                "motion_pointtowards" => uses_mouse |= menu_is_mouse("TOWARDS"),
                "sensing_touchingobjectmenu" => {
                    if let Some(f) = b.field("TOUCHINGOBJECTMENU")
                        && !s.sprites.contains(&f.value)
                    {
                        s.sprites.push(f.value.clone());
                    }
                }
                "sensing_touchingcolor" => {
                    if let Some(c) = menu_value(project, bi, "COLOR")
                        && !s.colors.contains(&c)
                    {
                        s.colors.push(c);
                    }
                }
                "looks_switchcostumeto" => s.switches_costume = true,
                _ => {}
            }
        }
        Self { uses_mouse, senses }
    }

    /// The features of the current state of `sut`.
    pub fn extract(&self, project: &Project, sut: &mut Sut) -> Features {
        let mut out = Features::new();
        let ids = sut.vm().runtime_targets();
        let mut clones_seen: Vec<usize> = vec![0; project.targets.len()];
        for &id in &ids {
            // The fields read below, copied: a whole target (variables, lists) would be cloned
            // every step of every playthrough.
            let Some(t) = sut.vm().target(id).map(Seen::of) else { continue };
            if !t.visible {
                continue;
            }
            let def = t.def as usize;
            let Some(tdef) = project.targets.get(def) else { continue };
            if t.is_stage {
                let mut f = numeric_variables(sut, id);
                if self.uses_mouse {
                    let (mx, my, _) = sut.vm().mouse();
                    f.push(("Mouse-X".into(), map_range(mx, -STAGE_WIDTH / 2.0, STAGE_WIDTH / 2.0)));
                    f.push(("Mouse-Y".into(), map_range(my, -STAGE_HEIGHT / 2.0, STAGE_HEIGHT / 2.0)));
                }
                if !f.is_empty() {
                    insert(&mut out, "Stage", f);
                }
                continue;
            }
            let key = if t.is_original {
                tdef.name.clone()
            } else {
                let n = &mut clones_seen[def];
                if *n >= CLONE_THRESHOLD {
                    continue;
                }
                *n += 1;
                clone_key(&tdef.name, t.clone_id)
            };
            let mut f: Vec<(String, f64)> = vec![
                ("X".into(), map_range(t.x, -STAGE_WIDTH / 2.0, STAGE_WIDTH / 2.0)),
                ("Y".into(), map_range(t.y, -STAGE_HEIGHT / 2.0, STAGE_HEIGHT / 2.0)),
            ];
            if sut.vm().rotation_style(id) == Some("all around") {
                f.push(("Dir".into(), map_range(t.direction, -180.0, 180.0)));
            }
            let (lo, hi) = size_bounds(sut.vm().costume_size(id));
            f.push(("Size".into(), map_range(t.size, lo, hi)));
            f.extend(numeric_variables(sut, id));
            let Some(s) = self.senses.get(def) else { continue };
            for name in &s.sprites {
                // The same list as the outer loop's (a query creates no target): not
                // rebuilt per sprite and sensed name, which was quadratic in clones.
                for &other in &ids {
                    let Some(o) = sut.vm().target(other) else { continue };
                    let Some(odef) = project.targets.get(o.def as usize) else { continue };
                    if o.is_stage || odef.name != *name {
                        continue;
                    }
                    let (dx, dy) = signed_distances(t.x, o.x, t.y, o.y);
                    let k = if o.is_original { odef.name.clone() } else { clone_key(&odef.name, o.clone_id) };
                    set(&mut f, format!("DIST{k}X"), dx);
                    set(&mut f, format!("DIST{k}Y"), dy);
                }
            }
            for color in &s.colors {
                let diameter = STAGE_WIDTH.hypot(STAGE_HEIGHT);
                if let Some((cx, cy)) =
                    sut.vm_mut().find_color_within_radius(rgb_color_list(color), (t.x, t.y), 5.0, diameter)
                {
                    set(&mut f, format!("DIST{color}"), (cx - t.x).hypot(cy - t.y) / diameter);
                }
            }
            if s.switches_costume && tdef.costumes.len() > 1 {
                f.push(("Costume".into(), map_range(t.costume as f64, 0.0, (tdef.costumes.len() - 1) as f64)));
            }
            insert(&mut out, &key, f);
        }
        out
    }
}

/// What extraction reads of a live target.
#[derive(Clone, Copy)]
struct Seen {
    def: u32,
    is_stage: bool,
    is_original: bool,
    clone_id: u32,
    x: f64,
    y: f64,
    direction: f64,
    size: f64,
    visible: bool,
    costume: i64,
}

impl Seen {
    fn of(t: &clowder_vm::Target) -> Seen {
        Seen {
            def: t.def,
            is_stage: t.is_stage,
            is_original: t.is_original,
            clone_id: t.clone_id,
            x: t.x,
            y: t.y,
            direction: t.direction,
            size: t.size,
            visible: t.visible,
            costume: t.costume,
        }
    }
}

fn clone_key(sprite: &str, clone_id: u32) -> String {
    format!("{sprite}Clone{clone_id}")
}

fn insert(out: &mut Features, key: &str, f: Vec<(String, f64)>) {
    let group = out.entry(key.to_string()).or_default();
    for (k, v) in f {
        group.insert(k, v);
    }
}

/// Sets a feature, keeping the position of one set before (a JS `Map.set`).
fn set(f: &mut Vec<(String, f64)>, k: String, v: f64) {
    match f.iter_mut().find(|(n, _)| *n == k) {
        Some(slot) => slot.1 = v,
        None => f.push((k, v)),
    }
}

/// Numeric variables (JS numbers only, as Whisker's `typeof value === 'number'`).
fn numeric_variables(sut: &Sut, id: clowder_vm::TargetId) -> Vec<(String, f64)> {
    sut.vm()
        .scalar_variables(id)
        .into_iter()
        .filter_map(|(name, v)| match v {
            Value::Num(n) => Some((format!("VAR{name}"), normalise_unknown_bounds(n, 10.0))),
            _ => None,
        })
        .collect()
}

/// Whisker's `mapValueIntoRange` onto [-1, 1], clamped.
pub(crate) fn map_range(value: f64, start: f64, end: f64) -> f64 {
    let mapped = (value - start) / (end - start) * 2.0 - 1.0;
    // `Math.max(-1, Math.min(1, NaN))` is NaN in JS; keep it (a network then sees NaN as Whisker).
    if mapped.is_nan() { mapped } else { mapped.clamp(-1.0, 1.0) }
}

/// Whisker's `_normaliseUnknownBounds`: |v| / (|v| + c) with v's sign.
fn normalise_unknown_bounds(value: f64, c: f64) -> f64 {
    let n = value.abs() / (value.abs() + c);
    if value < 0.0 { -n } else { n }
}

/// The size limits `set size` allows for a costume of native size `(w, h)` (Whisker's
/// `_getSizeBounds`, rounded percentages); [5, 150] % of a 100-unit costume when unknown.
fn size_bounds(skin: Option<(f64, f64)>) -> (f64, f64) {
    let (w, h) = skin.filter(|(w, h)| *w > 0.0 && *h > 0.0).unwrap_or((100.0, 100.0));
    let min_scale = f64::min(1.0, f64::max(5.0 / w, 5.0 / h));
    let max_scale = f64::min(1.5 * STAGE_WIDTH / w, 1.5 * STAGE_HEIGHT / h);
    ((min_scale * 100.0).round(), (max_scale * 100.0).round())
}

/// Whisker's `calculateDistancesSigned`: negative when the first position is right of (above)
/// the second, divided by the stage size and clamped.
fn signed_distances(x1: f64, x2: f64, y1: f64, y2: f64) -> (f64, f64) {
    let mut dx = (x1 - x2).abs();
    if x1 > x2 {
        dx = -dx;
    }
    let mut dy = (y1 - y2).abs();
    if y1 > y2 {
        dy = -dy;
    }
    ((dx / STAGE_WIDTH).clamp(-1.0, 1.0), (dy / STAGE_HEIGHT).clamp(-1.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisations_follow_whisker() {
        assert_eq!(map_range(0.0, -240.0, 240.0), 0.0);
        assert_eq!(map_range(240.0, -240.0, 240.0), 1.0);
        assert_eq!(map_range(300.0, -240.0, 240.0), 1.0);
        assert_eq!(normalise_unknown_bounds(10.0, 10.0), 0.5);
        assert_eq!(normalise_unknown_bounds(-30.0, 10.0), -0.75);
        // A 100×100 costume: 5 % … 540 % (1.5 × 360 / 100, the smaller of the two limits).
        assert_eq!(size_bounds(Some((100.0, 100.0))), (5.0, 540.0));
        assert_eq!(signed_distances(10.0, 0.0, 0.0, 36.0), (-10.0 / 480.0, 0.1));
    }
}
