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

use std::collections::BTreeMap;

use clowder_neuro::network::{Features, Layout};
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
    /// Per name of `sprites`, the targets (index in `Project::targets`) with that name.
    sprite_defs: Vec<Vec<u32>>,
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
        for s in &mut senses {
            s.sprite_defs = s
                .sprites
                .iter()
                .map(|name| {
                    (0..project.targets.len() as u32).filter(|&d| project.targets[d as usize].name == *name).collect()
                })
                .collect();
        }
        Self { uses_mouse, senses }
    }

    /// The features of the current state of `sut`.
    pub fn extract(&self, project: &Project, sut: &mut Sut) -> Features {
        let mut out = Features::new();
        self.extract_into(project, sut, &mut Extraction::default(), &mut out);
        out
    }

    /// The features of the current state of `sut` into `out`, with `ex` kept between the steps
    /// of one playthrough: when the features have the names of the step before (the usual
    /// case), no name is built, compared or allocated.
    pub fn extract_into(&self, project: &Project, sut: &mut Sut, ex: &mut Extraction, out: &mut Features) {
        ex.keys.clear();
        ex.values.clear();
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
                let group = Group::Stage;
                sut.vm().numeric_variables(id, |key, name, v| ex.push_var(group, key, name, v));
                if self.uses_mouse {
                    let (mx, my, _) = sut.vm().mouse();
                    ex.push(group, Name::MouseX, map_range(mx, -STAGE_WIDTH / 2.0, STAGE_WIDTH / 2.0));
                    ex.push(group, Name::MouseY, map_range(my, -STAGE_HEIGHT / 2.0, STAGE_HEIGHT / 2.0));
                }
                continue;
            }
            let group = if t.is_original {
                Group::Sprite(t.def)
            } else {
                let n = &mut clones_seen[def];
                if *n >= CLONE_THRESHOLD {
                    continue;
                }
                *n += 1;
                Group::Clone(t.def, t.clone_id)
            };
            let Some(s) = self.senses.get(def) else { continue };
            ex.push(group, Name::X, map_range(t.x, -STAGE_WIDTH / 2.0, STAGE_WIDTH / 2.0));
            ex.push(group, Name::Y, map_range(t.y, -STAGE_HEIGHT / 2.0, STAGE_HEIGHT / 2.0));
            if sut.vm().rotation_style(id) == Some("all around") {
                ex.push(group, Name::Dir, map_range(t.direction, -180.0, 180.0));
            }
            let (lo, hi) = size_bounds(sut.vm().costume_size(id));
            ex.push(group, Name::Size, map_range(t.size, lo, hi));
            sut.vm().numeric_variables(id, |key, name, v| ex.push_var(group, key, name, v));
            for defs in &s.sprite_defs {
                // The same list as the outer loop's (a query creates no target): not
                // rebuilt per sprite and sensed name, which was quadratic in clones.
                for &other in &ids {
                    let Some(o) = sut.vm().target(other) else { continue };
                    if o.is_stage || !defs.contains(&o.def) {
                        continue;
                    }
                    let (dx, dy) = signed_distances(t.x, o.x, t.y, o.y);
                    let of = if o.is_original { Group::Sprite(o.def) } else { Group::Clone(o.def, o.clone_id) };
                    ex.push(group, Name::DistX(of), dx);
                    ex.push(group, Name::DistY(of), dy);
                }
            }
            for (i, color) in s.colors.iter().enumerate() {
                let diameter = STAGE_WIDTH.hypot(STAGE_HEIGHT);
                if let Some((cx, cy)) =
                    sut.vm_mut().find_color_within_radius(rgb_color_list(color), (t.x, t.y), 5.0, diameter)
                {
                    ex.push(group, Name::Color(i as u32), (cx - t.x).hypot(cy - t.y) / diameter);
                }
            }
            if s.switches_costume && tdef.costumes.len() > 1 {
                ex.push(group, Name::Costume, map_range(t.costume as f64, 0.0, (tdef.costumes.len() - 1) as f64));
            }
        }
        ex.assign(self, project, out);
    }
}

/// Whose feature: the group (Whisker's sprite key) a feature is filed under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    /// `Stage`.
    Stage,
    /// An original sprite (index in `Project::targets`): its name.
    Sprite(u32),
    /// A clone: `<sprite>Clone<cloneID>`.
    Clone(u32, u32),
}

/// Which feature of a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Name {
    MouseX,
    MouseY,
    X,
    Y,
    Dir,
    Size,
    Costume,
    /// `VAR<name>`, by the VM's variable key.
    Var(u64),
    /// `DIST<group>X`.
    DistX(Group),
    /// `DIST<group>Y`.
    DistY(Group),
    /// `DIST<#rrggbb>`: index into the sprite's sensed colours.
    Color(u32),
}

/// A key sequence with its layout and the slot of each key.
type Kept = (Vec<(Group, Name)>, std::sync::Arc<Layout>, Vec<u32>);

/// Feature extraction's state over one playthrough: the step's features as structural keys
/// and values, and the layout of the last distinct key sequence. The strings of the names
/// are built only when the key sequence changes; a step with the same keys gives the same
/// names, so the layout (and a network's input slots for it) is reused.
#[derive(Debug, Default)]
pub struct Extraction {
    keys: Vec<(Group, Name)>,
    values: Vec<f64>,
    last: Option<Kept>,
    /// Names of the variables seen, by the VM's key.
    var_names: BTreeMap<u64, String>,
}

impl Extraction {
    fn push(&mut self, group: Group, name: Name, value: f64) {
        self.keys.push((group, name));
        self.values.push(value);
    }

    fn push_var(&mut self, group: Group, key: u64, name: &str, value: f64) {
        self.var_names.entry(key).or_insert_with(|| name.to_owned());
        self.push(group, Name::Var(key), normalise_unknown_bounds(value, 10.0));
    }

    /// Sets `out` to the step's features: later values of a name replace earlier ones, as
    /// Whisker's `Map.set` does.
    fn assign(&mut self, info: &FeatureInfo, project: &Project, out: &mut Features) {
        if self.last.as_ref().is_none_or(|(keys, _, _)| *keys != self.keys) {
            let names: Vec<(String, String)> = self
                .keys
                .iter()
                .map(|&(g, n)| (self.group_name(project, g), self.feature_name(info, project, g, n)))
                .collect();
            let (layout, slots) = Layout::of_names(&names);
            self.last = Some((self.keys.clone(), layout, slots));
        }
        if let Some((_, layout, slots)) = &self.last {
            out.assign(layout, slots, &self.values);
        }
    }

    fn group_name(&self, project: &Project, g: Group) -> String {
        let name = |def: u32| project.targets.get(def as usize).map_or("", |t| t.name.as_str());
        match g {
            Group::Stage => "Stage".to_owned(),
            Group::Sprite(def) => name(def).to_owned(),
            Group::Clone(def, id) => clone_key(name(def), id),
        }
    }

    fn feature_name(&self, info: &FeatureInfo, project: &Project, g: Group, n: Name) -> String {
        match n {
            Name::MouseX => "Mouse-X".to_owned(),
            Name::MouseY => "Mouse-Y".to_owned(),
            Name::X => "X".to_owned(),
            Name::Y => "Y".to_owned(),
            Name::Dir => "Dir".to_owned(),
            Name::Size => "Size".to_owned(),
            Name::Costume => "Costume".to_owned(),
            Name::Var(key) => format!("VAR{}", self.var_names.get(&key).map_or("", String::as_str)),
            Name::DistX(of) => format!("DIST{}X", self.group_name(project, of)),
            Name::DistY(of) => format!("DIST{}Y", self.group_name(project, of)),
            Name::Color(i) => {
                let def = match g {
                    Group::Sprite(d) | Group::Clone(d, _) => d as usize,
                    Group::Stage => usize::MAX,
                };
                let color = info.senses.get(def).and_then(|s| s.colors.get(i as usize));
                format!("DIST{}", color.map_or("", String::as_str))
            }
        }
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
    use clowder_vm::Value;

    type Reference = BTreeMap<String, BTreeMap<String, f64>>;

    /// The extraction as it was written before names were kept between steps: nested maps
    /// of strings built afresh every step (the reference the faster path must equal).
    fn reference(info: &FeatureInfo, project: &Project, sut: &mut Sut) -> Reference {
        let mut out = Reference::new();
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
                if info.uses_mouse {
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
            let Some(s) = info.senses.get(def) else { continue };
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

    fn insert(out: &mut Reference, key: &str, f: Vec<(String, f64)>) {
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

    /// The reference's nested maps as flat sorted triples.
    fn flat(r: &Reference) -> Vec<(String, String, u64)> {
        r.iter().flat_map(|(s, m)| m.iter().map(move |(f, v)| (s.clone(), f.clone(), v.to_bits()))).collect()
    }

    /// Every game of `datasets/games`, played with changing inputs: at every step the names kept between steps give exactly the
    /// features the string-built reference gives (names, order and bits of every value).
    #[test]
    fn kept_names_give_the_features_built_afresh() {
        let Some(corpora) = crate::testkit::corpora() else { return };
        let list = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../datasets/games/dataset.toml");
        let Ok(text) = std::fs::read_to_string(&list) else { panic!("{} missing", list.display()) };
        let files: Vec<&str> =
            text.lines().filter_map(|l| l.strip_prefix("file = \"")).filter_map(|l| l.strip_suffix('"')).collect();
        assert!(files.len() >= 60, "games listed: {}", files.len());
        let (mut games, mut steps, mut layouts) = (0, 0, 0);
        for (gi, file) in files.iter().enumerate() {
            let path = corpora.join(file);
            let Ok(project) = clowder_vm::Project::load_path(&path, &clowder_vm::LoadLimits::default()) else {
                continue;
            };
            let project = std::sync::Arc::new(project);
            let info = FeatureInfo::new(&project);
            let mut sut = Sut::new(std::sync::Arc::clone(&project), gi as u64 + 1, clowder_vm::Profile::Whisker);
            sut.green_flag();
            let (mut ex, mut out) = (Extraction::default(), Features::new());
            let mut last_layout = 0;
            let keys = ["space", "left arrow", "right arrow", "up arrow", "down arrow"];
            for step in 0..240u64 {
                let key = keys[(step / 7 % 5) as usize];
                if step % 7 == 0 {
                    sut.key_down(key);
                } else if step % 7 == 4 {
                    sut.key_up(key);
                }
                let angle = step as f64 * 0.37;
                sut.mouse_move(200.0 * angle.cos(), 150.0 * angle.sin());
                if step % 11 == 0 {
                    sut.click_stage();
                }
                sut.step();
                info.extract_into(&project, &mut sut, &mut ex, &mut out);
                let want = flat(&reference(&info, &project, &mut sut));
                let got: Vec<(String, String, u64)> =
                    out.iter().map(|(s, f, v)| (s.to_owned(), f.to_owned(), v.to_bits())).collect();
                assert_eq!(got, want, "{file}, step {step}");
                if out.layout().id() != last_layout {
                    last_layout = out.layout().id();
                    layouts += 1;
                }
                steps += 1;
            }
            games += 1;
        }
        assert!(games >= 60, "games played: {games}");
        // The layout is kept across most steps but does change (clones come and go).
        assert!(layouts > games && layouts < steps / 2, "{layouts} layouts over {steps} steps");
    }

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
