//! The render oracle's query and answer formats (`shared/tools/render-oracle`,
//! README "Query format" / "Answer format"), answered by the CPU renderer, so
//! the two can be compared question by question (`clowder vm geometry-query`).
//!
//! Scenes are built as the oracle builds them from scratch-vm's call sequence:
//! the stage at the back with its backdrop, sprites not listed hidden behind the
//! listed ones, listed sprites ordered by `layer` (ties by list order), each with
//! `setCostume` (rounded, wrapped index or name), the `setSize` clamp from the
//! costume's size, `setDirection`'s wrap, the rotation style's rendered direction
//! and scale, its position as given (no fencing), visibility and ghost.

use std::sync::Arc;

use serde_json::{Map, Value as Json};

use super::Rect;
use super::accel::{Accel, Candidates};
use super::drawable::{Placement, RotationStyle};
use super::effects::Effects;
use super::render::{Drawable, Scene, touches_edge};
use super::skin::CostumeSet;
use crate::project::Project;
use crate::util::math::{js_round, wrap_clamp};

/// Most scenes accepted in one query file.
pub const MAX_SCENES: usize = 100_000;
/// Most questions accepted per scene.
pub const MAX_QUESTIONS: usize = 10_000;

/// Answers every question of a query file; one JSON line per question (or per failed scene).
pub fn answer_queries(costumes: &Arc<CostumeSet>, queries: &Json) -> Result<Vec<String>, String> {
    let scenes = match queries {
        Json::Array(a) => a,
        Json::Object(o) => match o.get("scenes") {
            Some(Json::Array(a)) => a,
            _ => return Err("query file: expected a list of scenes or {\"scenes\": [...]}".into()),
        },
        _ => return Err("query file: expected a list of scenes or {\"scenes\": [...]}".into()),
    };
    if scenes.len() > MAX_SCENES {
        return Err(format!("query file: {} scenes, over the limit of {MAX_SCENES}", scenes.len()));
    }
    let mut out = Vec::new();
    for (i, scene) in scenes.iter().enumerate() {
        match build_scene(costumes, scene) {
            Ok(built) => {
                // The VM's accelerated queries answer what they can (their answers equal the
                // reference renderer's, so the oracle checks the code the VM runs).
                let mut accel = Accel::default();
                accel.refresh(&built.scene, &[], None, &|_| None);
                let questions = scene.get("questions").and_then(Json::as_array).map(Vec::as_slice).unwrap_or(&[]);
                for (j, q) in questions.iter().take(MAX_QUESTIONS).enumerate() {
                    let kind = q.get("kind").and_then(Json::as_str).unwrap_or("");
                    let answer = answer(&built, &mut accel, q).unwrap_or_else(|e| error_json(&e));
                    out.push(format!("{{\"scene\":{i},\"q\":{j},\"kind\":{},\"answer\":{answer}}}", Json::from(kind)));
                }
            }
            Err(e) => {
                out.push(format!(
                    "{{\"scene\":{i},\"q\":null,\"kind\":\"scene_error\",\"answer\":{}}}",
                    error_json(&e)
                ));
            }
        }
    }
    Ok(out)
}

/// A scene built from a query: the renderer's drawables plus sprite names by drawable index.
pub struct BuiltScene {
    /// The drawables.
    pub scene: Scene,
    /// Sprite name → drawable index.
    pub names: Vec<(String, usize)>,
}

impl BuiltScene {
    fn index(&self, name: &str) -> Result<usize, String> {
        self.names.iter().find(|(n, _)| n == name).map(|(_, i)| *i).ok_or_else(|| format!("unknown sprite \"{name}\""))
    }

    fn name_of(&self, i: usize) -> Option<&str> {
        if i == 0 {
            return Some("_stage_");
        }
        self.names.iter().find(|(_, k)| *k == i).map(|(n, _)| n.as_str())
    }
}

fn num(v: Option<&Json>, default: f64) -> f64 {
    match v {
        Some(Json::Number(n)) => n.as_f64().unwrap_or(default),
        Some(Json::Null) | None => default,
        Some(Json::Bool(b)) => {
            if *b {
                1.0
            } else {
                0.0
            }
        }
        Some(Json::String(s)) => crate::value::js_string_to_number(s),
        Some(_) => f64::NAN,
    }
}

/// `RenderedTarget.setCostume` index rules, or a costume name.
fn costume_index(project: &Project, def: usize, v: Option<&Json>) -> Result<usize, String> {
    let t = &project.targets[def];
    let n = t.costumes.len();
    if n == 0 {
        return Err(format!("\"{}\" has no costumes", t.name));
    }
    if let Some(Json::String(name)) = v {
        return t
            .costumes
            .iter()
            .position(|c| &c.name == name)
            .ok_or_else(|| format!("unknown costume \"{name}\" for \"{}\"", t.name));
    }
    let raw = num(v, 0.0);
    let mut index = js_round(raw);
    if !index.is_finite() {
        index = 0.0;
    }
    Ok(wrap_clamp(index, 0.0, n as f64 - 1.0) as usize)
}

/// scratch-vm's `setSize` clamp for a costume of nominal size `skin` (percent in, percent out).
pub fn clamp_size(size: f64, skin: [f64; 2]) -> f64 {
    let (w, h) = (skin[0], skin[1]);
    let min_scale = 1f64.min((5.0 / w).max(5.0 / h));
    let max_scale = (1.5 * 480.0 / w).min(1.5 * 360.0 / h);
    (size / 100.0).max(min_scale).min(max_scale) * 100.0
}

fn build_scene(costumes: &Arc<CostumeSet>, scene: &Json) -> Result<BuiltScene, String> {
    let project = costumes.project().ok_or("the project is gone")?;
    let stage_def = project.targets.iter().position(|t| t.is_stage).ok_or("project has no stage")?;
    let stage = &project.targets[stage_def];
    let backdrop = match scene.get("backdrop") {
        None | Some(Json::Null) => Ok(stage.current_costume.min(stage.costumes.len().saturating_sub(1))),
        b => costume_index(&project, stage_def, b),
    }?;
    let stage_skin = costumes.skin(stage_def, backdrop).ok_or("stage has no costumes")?;
    let mut drawables = vec![Drawable {
        skin: stage_skin,
        placement: Placement { x: 0.0, y: 0.0, direction: 90.0, scale: [100.0, 100.0] },
        visible: true,
        effects: Effects::default(),
    }];
    let listed: Vec<&Map<String, Json>> = scene
        .get("sprites")
        .and_then(Json::as_array)
        .map(|a| a.iter().filter_map(Json::as_object).collect())
        .unwrap_or_default();
    let mut sprites: Vec<usize> = (0..project.targets.len()).filter(|&i| !project.targets[i].is_stage).collect();
    sprites.sort_by_key(|&i| project.targets[i].layer_order);
    let mut names = Vec::new();
    // Unlisted sprites: hidden, behind the listed ones (their other state does not matter).
    for &def in &sprites {
        let t = &project.targets[def];
        if listed.iter().any(|s| s.get("name").and_then(Json::as_str) == Some(t.name.as_str())) {
            continue;
        }
        let Some(skin) = costumes.skin(def, t.current_costume.min(t.costumes.len().saturating_sub(1))) else {
            continue;
        };
        names.push((t.name.clone(), drawables.len()));
        drawables.push(Drawable {
            skin,
            placement: Placement::from_target(t.x, t.y, t.direction, t.size, RotationStyle::parse(&t.rotation_style)),
            visible: false,
            effects: Effects::default(),
        });
    }
    let mut order: Vec<(f64, usize)> = listed.iter().enumerate().map(|(i, s)| (num(s.get("layer"), 0.0), i)).collect();
    order.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal).then(a.1.cmp(&b.1)));
    for (_, i) in order {
        let s = listed[i];
        let name = s.get("name").and_then(Json::as_str).unwrap_or("");
        let def = sprites
            .iter()
            .copied()
            .find(|&d| project.targets[d].name == name)
            .ok_or_else(|| format!("unknown sprite \"{name}\""))?;
        let costume = costume_index(&project, def, s.get("costume"))?;
        let skin = costumes.skin(def, costume).ok_or_else(|| format!("\"{name}\" has no costumes"))?;
        let raw = s.get("raw").and_then(Json::as_bool).unwrap_or(false);
        let mut size = num(s.get("size"), 100.0);
        let mut direction = num(s.get("direction"), 90.0);
        if !raw {
            size = clamp_size(size, skin.size());
            direction = wrap_clamp(direction, -179.0, 180.0);
        }
        let style = RotationStyle::parse(s.get("rotationStyle").and_then(Json::as_str).unwrap_or("all around"));
        let x = num(s.get("x"), 0.0);
        let y = num(s.get("y"), 0.0);
        let visible = s.get("visible").map(|v| !matches!(v, Json::Bool(false) | Json::Null)).unwrap_or(true);
        let ghost = num(s.get("ghost"), 0.0);
        let x = if x.is_nan() { 0.0 } else { x };
        let y = if y.is_nan() { 0.0 } else { y };
        let effects = Effects::from_values([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, if ghost.is_nan() { 0.0 } else { ghost }]);
        if let Some(slot) = names.iter_mut().find(|(n, _)| n == name) {
            // Listed twice: the later entry wins, as the oracle re-applies the sprite.
            slot.1 = drawables.len();
        } else {
            names.push((name.to_string(), drawables.len()));
        }
        drawables.push(Drawable {
            skin,
            placement: Placement::from_target(x, y, direction, size, style),
            visible,
            effects,
        });
    }
    Ok(BuiltScene { scene: Scene::new(drawables), names })
}

fn rgb(v: Option<&Json>) -> Result<[u8; 3], String> {
    let a = v.and_then(Json::as_array).ok_or("colour must be [r, g, b]")?;
    let mut out = [0u8; 3];
    for (k, o) in out.iter_mut().enumerate() {
        // Stored into a Uint8ClampedArray-like comparison: the renderer masks bits of integers.
        let n = a.get(k).map(|x| num(Some(x), 0.0)).unwrap_or(0.0);
        *o = if n.is_finite() { (n as i64 & 255) as u8 } else { 0 };
    }
    Ok(out)
}

fn error_json(e: &str) -> String {
    format!("{{\"error\":{}}}", Json::from(e))
}

fn rect_json(r: &Rect) -> String {
    format!(
        "{{\"left\":{},\"right\":{},\"top\":{},\"bottom\":{}}}",
        js_num(r.left),
        js_num(r.right),
        js_num(r.top),
        js_num(r.bottom)
    )
}

fn answer(b: &BuiltScene, accel: &mut Accel, q: &Json) -> Result<String, String> {
    let kind = q.get("kind").and_then(Json::as_str).unwrap_or("");
    let a = || b.index(q.get("a").and_then(Json::as_str).unwrap_or(""));
    let x = num(q.get("x"), 0.0);
    let y = num(q.get("y"), 0.0);
    let s = &b.scene;
    let boolean = |v: bool| v.to_string();
    Ok(match kind {
        "touching" => {
            let me = a()?;
            let other = b.index(q.get("b").and_then(Json::as_str).unwrap_or(""))?;
            boolean(accel.touching_drawables(s, me, Candidates::List(vec![other])))
        }
        "touching_edge" => boolean(touches_edge(&accel.bounds(s, a()?))),
        "touching_point" => boolean(s.touching_point(a()?, x, y)),
        "bounds" => rect_json(&accel.bounds(s, a()?)),
        "bounds_for_bubble" => match s.bounds_for_bubble(a()?) {
            Ok(r) => rect_json(&r),
            Err(e) => error_json(e),
        },
        "fenced" => {
            let [fx, fy] = s.fenced(a()?, x, y);
            format!("[{},{}]", js_num(fx), js_num(fy))
        }
        "pick" => match s.pick(x, y).and_then(|i| b.name_of(i)) {
            Some(n) => Json::from(n).to_string(),
            None => "null".to_string(),
        },
        "touching_color" => boolean(accel.touching_color(s, a()?, rgb(q.get("color"))?, None)),
        "color_touching_color" => {
            boolean(accel.touching_color(s, a()?, rgb(q.get("color"))?, Some(rgb(q.get("mask"))?)))
        }
        other => return Err(format!("unknown question kind \"{other}\"")),
    })
}

/// A number as `JSON.stringify` writes it (integral values without a fraction; non-finite → null).
pub fn js_num(f: f64) -> String {
    if !f.is_finite() {
        return "null".to_string();
    }
    if f == 0.0 {
        return "0".to_string();
    }
    if f.fract() == 0.0 && f.abs() < 1e21 {
        return format!("{}", f as i128);
    }
    Json::from(f).to_string()
}
