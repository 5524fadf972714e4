//! Geometry with known shapes: touching at exactly one pixel and missing by one, rotation,
//! flips, size limits, fencing, bouncing, picking and the pen layer (issue 7, acceptance 1).
//!
//! Pixel semantics (scratch-render): a drawable is sampled at integer stage points; texture
//! coordinate u = 1 still reads the last texel, so a 10-unit-wide costume centred on x = 0
//! covers the eleven points x = −5 … 5.

mod common;

use std::sync::Arc;

use clowder_vm::geometry::drawable::{Placement, RotationStyle};
use clowder_vm::geometry::effects::Effects;
use clowder_vm::geometry::pen::{PenAttributes, PenLayer};
use clowder_vm::geometry::query::clamp_size;
use clowder_vm::geometry::render::{Drawable, Scene};
use clowder_vm::geometry::skin::Skin;
use clowder_vm::{LoadLimits, Profile, Vm, VmOptions};
use serde_json::json;

/// A resolution-2 bitmap skin (texture `w × h`, nominal size half that) with opaque red
/// texels where `f(x, y)` holds; rotation centre in the middle.
fn bitmap(w: u32, h: u32, f: impl Fn(u32, u32) -> bool) -> Arc<Skin> {
    let mut rgba = vec![0u8; (w * h * 4) as usize];
    for y in 0..h {
        for x in 0..w {
            if f(x, y) {
                let o = ((y * w + x) * 4) as usize;
                rgba[o..o + 4].copy_from_slice(&[255, 0, 0, 255]);
            }
        }
    }
    Arc::new(Skin::from_rgba_res2(w, h, rgba, None))
}

fn square(side: u32) -> Arc<Skin> {
    bitmap(side * 2, side * 2, |_, _| true)
}

fn svg(body: &str, w: f64, h: f64) -> Arc<Skin> {
    let text = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">{body}</svg>"#
    );
    Arc::new(Skin::from_svg(text.as_bytes(), Some([w / 2.0, h / 2.0])).expect("valid svg"))
}

fn sprite(skin: &Arc<Skin>, x: f64, y: f64, direction: f64) -> Drawable {
    sprite_full(skin, x, y, direction, 100.0, RotationStyle::AllAround)
}

fn sprite_full(skin: &Arc<Skin>, x: f64, y: f64, direction: f64, size: f64, style: RotationStyle) -> Drawable {
    Drawable {
        skin: skin.clone(),
        placement: Placement::from_target(x, y, direction, size, style),
        visible: true,
        effects: Effects::default(),
    }
}

/// A white 480×360 backdrop (a stage drawable).
fn stage() -> Drawable {
    let skin = bitmap(960, 720, |_, _| false);
    Drawable {
        skin,
        placement: Placement { x: 0.0, y: 0.0, direction: 90.0, scale: [100.0, 100.0] },
        visible: true,
        effects: Effects::default(),
    }
}

fn scene(sprites: Vec<Drawable>) -> Scene {
    let mut drawables = vec![stage()];
    drawables.extend(sprites);
    Scene::new(drawables)
}

/// Whether the two sprites (drawables 1 and 2) touch, checked both ways.
fn touch(a: Drawable, b: Drawable) -> bool {
    let s = scene(vec![a, b]);
    let ab = s.touching_drawables(1, &[2]);
    let ba = s.touching_drawables(2, &[1]);
    assert_eq!(ab, ba, "touching must be symmetric");
    ab
}

/// The integer stage points where drawable 1 of a one-sprite scene is opaque.
fn opaque_points(d: Drawable) -> Vec<(i32, i32)> {
    let s = scene(vec![d]);
    let mut out = Vec::new();
    for y in -180..=180 {
        for x in -240..=240 {
            if s.touching_point(1, x as f64, y as f64) {
                out.push((x, y));
            }
        }
    }
    out
}

#[test]
fn axis_aligned_squares_touch_at_one_pixel_and_miss_by_one() {
    let sq = square(10);
    // Covers x = −5…5 and x = 5…15: one shared column.
    assert!(touch(sprite(&sq, 0.0, 0.0, 90.0), sprite(&sq, 10.0, 0.0, 90.0)));
    assert!(!touch(sprite(&sq, 0.0, 0.0, 90.0), sprite(&sq, 11.0, 0.0, 90.0)));
    // Vertically, and corner to corner (a single shared pixel).
    assert!(touch(sprite(&sq, 0.0, 0.0, 90.0), sprite(&sq, 0.0, -10.0, 90.0)));
    assert!(!touch(sprite(&sq, 0.0, 0.0, 90.0), sprite(&sq, 0.0, -11.0, 90.0)));
    assert!(touch(sprite(&sq, 0.0, 0.0, 90.0), sprite(&sq, 10.0, 10.0, 90.0)));
    assert!(!touch(sprite(&sq, 0.0, 0.0, 90.0), sprite(&sq, 10.0, 11.0, 90.0)));
    // Positions are rounded (Math.round) before drawing: 10.49 touches, 10.5 does not.
    assert!(touch(sprite(&sq, 0.0, 0.0, 90.0), sprite(&sq, 10.49, 0.0, 90.0)));
    assert!(!touch(sprite(&sq, 0.0, 0.0, 90.0), sprite(&sq, 10.5, 0.0, 90.0)));
    let pts = opaque_points(sprite(&sq, 0.0, 0.0, 90.0));
    assert_eq!(pts.len(), 11 * 11);
    assert_eq!(pts.first(), Some(&(-5, -5)));
    assert_eq!(pts.last(), Some(&(5, 5)));
}

#[test]
fn rotated_squares_touch_tip_to_tip() {
    // A 20-unit square rotated by 45°: a diamond whose tips lie about 14.1 units from its centre.
    let sq = square(20);
    let a = opaque_points(sprite(&sq, 0.0, 0.0, 45.0));
    let right_tip = a.iter().map(|p| p.0).max().expect("opaque");
    let left_tip = a.iter().map(|p| p.0).min().expect("opaque");
    assert!((13..=15).contains(&right_tip) && (-15..=-13).contains(&left_tip), "{left_tip} {right_tip}");
    // Only the tips reach that far: the diamond is one pixel tall there.
    assert!(a.iter().filter(|p| p.0 == right_tip).count() <= 3);
    // Two diamonds on a horizontal line touch exactly when their tips share a column.
    let d = (right_tip - left_tip) as f64;
    assert!(touch(sprite(&sq, 0.0, 0.0, 45.0), sprite(&sq, d, 0.0, 45.0)));
    assert!(!touch(sprite(&sq, 0.0, 0.0, 45.0), sprite(&sq, d + 1.0, 0.0, 45.0)));
    // Rotated by 45° they are wider than unrotated ones (which would touch at 20 only).
    assert!(d > 20.0);
    assert!(!touch(sprite(&sq, 0.0, 0.0, 90.0), sprite(&sq, d, 0.0, 90.0)));
}

#[test]
fn circles_touch_only_when_their_rims_meet() {
    let c = svg(r##"<circle cx="10" cy="10" r="10" fill="#00f"/>"##, 20.0, 20.0);
    let pts = opaque_points(sprite(&c, 0.0, 0.0, 90.0));
    let right = pts.iter().map(|p| p.0).max().expect("opaque");
    let left = pts.iter().map(|p| p.0).min().expect("opaque");
    // Radius 10 (anti-aliased rim pixels count as opaque). Nearest sampling reads texel
    // floor(u·(w−1)), so u up to w/(w−1) still reads the last column: one extra pixel right.
    assert!((10..=11).contains(&right) && (-10..=-9).contains(&left), "{left} {right}");
    // The corner of the bounding box is empty: circles are round.
    assert!(!pts.contains(&(right, right)));
    let d = (right - left) as f64;
    assert!(touch(sprite(&c, 0.0, 0.0, 90.0), sprite(&c, d, 0.0, 90.0)));
    assert!(!touch(sprite(&c, 0.0, 0.0, 90.0), sprite(&c, d + 1.0, 0.0, 90.0)));
    // Diagonally the rims are further in: boxes overlap, circles do not.
    assert!(!touch(sprite(&c, 0.0, 0.0, 90.0), sprite(&c, 16.0, 16.0, 90.0)));
    assert!(touch(sprite(&c, 0.0, 0.0, 90.0), sprite(&c, 13.0, 13.0, 90.0)));
}

#[test]
fn concave_shape_does_not_touch_inside_its_notch() {
    // A 30×30 "U": walls 5 units thick, open at the top (texels: 60×60).
    let u = bitmap(60, 60, |x, y| !(10..50).contains(&x) || y >= 50);
    let small = square(4);
    // Inside the notch (centre of the U, away from the walls): bounding boxes overlap, shapes do not.
    assert!(!touch(sprite(&u, 0.0, 0.0, 90.0), sprite(&small, 0.0, 2.0, 90.0)));
    // The U's inner wall is at x = −10 (texel 10 is the first empty one: stage x −10 samples
    // texel floor(5/30·59) = 9, still wall). The small square covers x−2…x+2.
    assert!(touch(sprite(&u, 0.0, 0.0, 90.0), sprite(&small, -8.0, 2.0, 90.0)));
    assert!(!touch(sprite(&u, 0.0, 0.0, 90.0), sprite(&small, -7.0, 2.0, 90.0)));
    // The floor: texel rows 50–59 are read for v ≥ 50/59, i.e. up to y = −11.
    assert!(touch(sprite(&u, 0.0, 0.0, 90.0), sprite(&small, 0.0, -9.0, 90.0)));
    assert!(!touch(sprite(&u, 0.0, 0.0, 90.0), sprite(&small, 0.0, -8.0, 90.0)));
}

#[test]
fn left_right_flip_mirrors_the_costume() {
    // Opaque only in its right half.
    let half = bitmap(40, 20, |x, _| x >= 20);
    let facing_right = scene(vec![sprite_full(&half, 0.0, 0.0, 90.0, 100.0, RotationStyle::LeftRight)]);
    assert!(facing_right.touching_point(1, 5.0, 0.0));
    assert!(!facing_right.touching_point(1, -5.0, 0.0));
    let facing_left = scene(vec![sprite_full(&half, 0.0, 0.0, -90.0, 100.0, RotationStyle::LeftRight)]);
    assert!(!facing_left.touching_point(1, 5.0, 0.0));
    assert!(facing_left.touching_point(1, -5.0, 0.0));
    // "Don't rotate" never flips; "all around" turns it upside down instead.
    let dont = scene(vec![sprite_full(&half, 0.0, 0.0, -90.0, 100.0, RotationStyle::DontRotate)]);
    assert!(dont.touching_point(1, 5.0, 0.0));
    let around = scene(vec![sprite_full(&half, 0.0, 0.0, -90.0, 100.0, RotationStyle::AllAround)]);
    assert!(around.touching_point(1, -5.0, 0.0) && !around.touching_point(1, 5.0, 0.0));
    // Bounds follow the flip.
    assert!(facing_right.bounds(1).left > -1.0 && facing_left.bounds(1).right < 1.0);
}

#[test]
fn size_extremes_are_clamped_and_still_collide() {
    // setSize limits: at least 5 px on the shorter side (or 100 %), at most 1.5 × the stage.
    assert_eq!(clamp_size(1.0, [100.0, 50.0]), 10.0);
    assert_eq!(clamp_size(1.0, [2.0, 2.0]), 100.0);
    assert_eq!(clamp_size(100_000.0, [100.0, 50.0]), 720.0);
    assert_eq!(clamp_size(100_000.0, [10.0, 100.0]), 540.0);
    let sq = square(100);
    // At the minimum size (5 %) the square covers 5 units: x −2.5…2.5 → points −2…2 (+ rounding).
    let tiny = opaque_points(sprite_full(&sq, 0.0, 0.0, 90.0, 5.0, RotationStyle::AllAround));
    assert!((16..=36).contains(&tiny.len()), "{}", tiny.len());
    // At the maximum (720 %) it covers the whole stage.
    let huge = scene(vec![sprite_full(&sq, 0.0, 0.0, 90.0, 720.0, RotationStyle::AllAround)]);
    assert!(huge.touching_point(1, -240.0, -180.0) && huge.touching_point(1, 240.0, 180.0));
    assert!(huge.touching_edge(1));
    let b = huge.bounds(1);
    assert!(b.left < -355.0 && b.right > 355.0, "{b:?}");
}

#[test]
fn fencing_keeps_fifteen_pixels_on_stage_at_each_edge() {
    let sq = square(100);
    let s = scene(vec![sprite(&sq, 0.0, 0.0, 90.0)]);
    // The square spans ±50; 15 px must stay visible.
    assert_eq!(s.fenced(1, 1000.0, 0.0), [275.0, 0.0]);
    assert_eq!(s.fenced(1, -1000.0, 0.0), [-275.0, 0.0]);
    assert_eq!(s.fenced(1, 0.0, 1000.0), [0.0, 215.0]);
    assert_eq!(s.fenced(1, 0.0, -1000.0), [0.0, -215.0]);
    assert_eq!(s.fenced(1, 1000.0, -1000.0), [275.0, -215.0]);
    // Inside the fence nothing changes (fractions included).
    assert_eq!(s.fenced(1, 12.25, -30.5), [12.25, -30.5]);
    // A 10-unit sprite keeps half of itself (5 px) on stage instead.
    let small = scene(vec![sprite(&square(10), 0.0, 0.0, 90.0)]);
    assert_eq!(small.fenced(1, 1000.0, 0.0), [240.0, 0.0]);
    assert_eq!(small.fenced(1, 0.0, -1000.0), [0.0, -180.0]);
}

/// An sb3 with one sprite, `Square`, whose costume is an opaque 80×80 PNG at bitmap
/// resolution 2 (the 40-unit square `square(40)` gives the renderer above), placed at
/// (x, y, direction) with rotation style `style`, running `when flag clicked → if on edge,
/// bounce`.
fn bounce_project(x: f64, y: f64, direction: f64, style: &str) -> Vec<u8> {
    let blocks = json!({
        "flag": {"opcode": "event_whenflagclicked", "next": "bounce", "parent": null, "inputs": {}, "fields": {},
                 "shadow": false, "topLevel": true, "x": 0, "y": 0},
        "bounce": {"opcode": "motion_ifonedgebounce", "next": null, "parent": "flag", "inputs": {}, "fields": {},
                   "shadow": false, "topLevel": false}
    });
    one_sprite_sb3(
        blocks,
        &[("square", 80, 80)],
        json!({"x": x, "y": y, "direction": direction, "rotationStyle": style}),
    )
}

/// An sb3 with a white backdrop and one sprite, `Square`, running `blocks`, with opaque red
/// PNG costumes (name, width, height) at bitmap resolution 2; `pose` sets its fields (`x`,
/// `y`, `direction`, `rotationStyle`).
fn one_sprite_sb3(blocks: serde_json::Value, costumes: &[(&str, u32, u32)], pose: serde_json::Value) -> Vec<u8> {
    sb3_with_globals(blocks, costumes, pose, &[])
}

/// [`one_sprite_sb3`] with the stage variables `globals` (each starting at 0).
fn sb3_with_globals(
    blocks: serde_json::Value,
    costumes: &[(&str, u32, u32)],
    pose: serde_json::Value,
    globals: &[&str],
) -> Vec<u8> {
    use std::io::Write as _;
    let costume = |name: &str, w: u32, h: u32| {
        json!({"name": name, "dataFormat": "png", "assetId": common::asset_id(name), "md5ext": format!("{}.png", common::asset_id(name)),
               "rotationCenterX": w / 2, "rotationCenterY": h / 2, "bitmapResolution": 2})
    };
    let png = |w: u32, h: u32, rgba: [u8; 4]| {
        let img = image::RgbaImage::from_pixel(w, h, image::Rgba(rgba));
        let mut out = Vec::new();
        img.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png).expect("PNG encoding");
        out
    };
    let variables: serde_json::Map<String, serde_json::Value> =
        globals.iter().map(|g| (format!("v{g}"), json!([g, 0]))).collect();
    let stage = json!({"isStage": true, "name": "Stage", "variables": variables, "lists": {}, "broadcasts": {},
        "blocks": {}, "comments": {}, "currentCostume": 0, "costumes": [costume("backdrop", 960, 720)],
        "sounds": [], "volume": 100, "layerOrder": 0, "tempo": 60});
    let mut sprite = json!({"isStage": false, "name": "Square", "variables": {}, "lists": {}, "broadcasts": {},
        "blocks": blocks, "comments": {}, "currentCostume": 0,
        "costumes": costumes.iter().map(|&(n, w, h)| costume(n, w, h)).collect::<Vec<_>>(),
        "sounds": [], "volume": 100, "layerOrder": 1, "visible": true, "x": 0, "y": 0, "size": 100,
        "direction": 90, "draggable": false, "rotationStyle": "all around"});
    if let (Some(o), Some(p)) = (sprite.as_object_mut(), pose.as_object()) {
        o.extend(p.clone());
    }
    let pj = json!({"targets": [stage, sprite], "monitors": [], "extensions": [], "meta": {"semver": "3.0.0"}});
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    let mut files = vec![("project.json".to_string(), serde_json::to_vec(&pj).expect("JSON"))];
    files.push((format!("{}.png", common::asset_id("backdrop")), png(960, 720, [255; 4])));
    files.extend(
        costumes.iter().map(|&(n, w, h)| (format!("{}.png", common::asset_id(n)), png(w, h, [255, 0, 0, 255]))),
    );
    for (name, data) in files {
        zip.start_file(name, opts).expect("zip entry");
        zip.write_all(&data).expect("zip write");
    }
    zip.finish().expect("zip").into_inner()
}

/// Where a sprite that turns, resizes and changes costume before every `go to` far off stage
/// ends up after each of 300 frames; with `ask`, a `touching Square?` before each move brings
/// the geometry's kept scene up to date first (fencing then reads the kept transform;
/// without it, the transform of the sprite as it is now, from the one kept before it
/// changed).
fn fenced_path(ask: bool) -> Vec<(f64, f64)> {
    let block = |op: &str, next: Option<&str>, parent: &str, inputs: serde_json::Value| {
        json!({"opcode": op, "next": next, "parent": parent, "inputs": inputs, "fields": {}, "shadow": false,
               "topLevel": false})
    };
    let random = |lo: i32, hi: i32, parent: &str| {
        block(
            "operator_random",
            None,
            parent,
            json!({"FROM": [1, [4, lo.to_string()]], "TO": [1, [4, hi.to_string()]]}),
        )
    };
    let goto = if ask { "ask" } else { "goto" };
    let mut blocks = json!({
        "flag": {"opcode": "event_whenflagclicked", "next": "loop", "parent": null, "inputs": {}, "fields": {},
                 "shadow": false, "topLevel": true, "x": 0, "y": 0},
        "loop": block("control_forever", None, "flag", json!({"SUBSTACK": [2, "size"]})),
        "size": block("looks_setsizeto", Some("turn"), "loop", json!({"SIZE": [3, "rs", [4, "100"]]})),
        "rs": random(20, 300, "size"),
        "turn": block("motion_turnright", Some("next"), "size", json!({"DEGREES": [1, [4, "37"]]})),
        "next": block("looks_nextcostume", Some(goto), "turn", json!({})),
        "goto": block("motion_gotoxy", None, if ask { "ask" } else { "next" },
                      json!({"X": [3, "rx", [4, "0"]], "Y": [3, "ry", [4, "0"]]})),
        "rx": random(-2000, 2000, "goto"),
        "ry": random(-2000, 2000, "goto"),
    });
    if ask && let Some(o) = blocks.as_object_mut() {
        o.insert("ask".into(), block("control_if", Some("goto"), "next", json!({"CONDITION": [2, "edge"]})));
        let menu = json!({"opcode": "sensing_touchingobjectmenu", "next": null, "parent": "edge", "inputs": {},
                          "fields": {"TOUCHINGOBJECTMENU": ["Square", null]}, "shadow": true, "topLevel": false});
        o.insert(
            "edge".into(),
            block("sensing_touchingobject", None, "ask", json!({"TOUCHINGOBJECTMENU": [1, "menu"]})),
        );
        o.insert("menu".into(), menu);
    }
    let sb3 = one_sprite_sb3(blocks, &[("wide", 160, 40), ("tall", 30, 200), ("square", 80, 80)], json!({}));
    let project = clowder_vm::project::load(&sb3, "fence.sb3", &LoadLimits::default()).expect("project loads");
    let mut vm = Vm::new(Arc::new(project), VmOptions { profile: Profile::Default, ..VmOptions::default() });
    assert_eq!(vm.geometry_mode(), "exact", "the costumes decode");
    vm.green_flag();
    (0..300)
        .map(|_| {
            vm.step();
            let t = vm.find_target("Square", 0).and_then(|id| vm.target(id)).expect("the sprite is live");
            (t.x, t.y)
        })
        .collect()
}

/// Fencing answers from the sprite as it is, whether or not another query brought the kept
/// scene up to date since it changed (issue 31: a move no longer rebuilds the scene's data).
#[test]
fn fencing_reads_the_sprite_as_it_is_now() {
    let (lazy, synced) = (fenced_path(false), fenced_path(true));
    assert_eq!(lazy, synced);
    // The moves were fenced (the targets lie far off stage) at many different places.
    assert!(lazy.iter().all(|&(x, y)| x.abs() < 400.0 && y.abs() < 400.0), "{lazy:?}");
    let mut xs: Vec<u64> = lazy.iter().map(|p| p.0.to_bits()).collect();
    xs.sort_unstable();
    xs.dedup();
    assert!(xs.len() > 20, "{} distinct x positions", xs.len());
}

/// A sprite's blocks under construction (project.json form), for the programs below.
#[derive(Default)]
struct Blocks(serde_json::Map<String, serde_json::Value>);

impl Blocks {
    /// Block `id` running `op` under `parent` (top level when `None`), not linked yet.
    fn put(&mut self, id: &str, op: &str, parent: Option<&str>, inputs: serde_json::Value, fields: serde_json::Value) {
        let block = json!({"opcode": op, "next": null, "parent": parent, "inputs": inputs, "fields": fields,
                           "shadow": op.ends_with("menu"), "topLevel": parent.is_none(), "x": 0, "y": 0});
        self.0.insert(id.into(), block);
    }

    /// `touching (what)?` as block `id` (its menu `{id}m`) in an input of `parent`.
    fn touching(&mut self, id: &str, parent: &str, what: &str) {
        let menu = format!("{id}m");
        self.put(id, "sensing_touchingobject", Some(parent), json!({"TOUCHINGOBJECTMENU": [1, menu]}), json!({}));
        let fields = json!({"TOUCHINGOBJECTMENU": [what, null]});
        self.put(&menu, "sensing_touchingobjectmenu", Some(id), json!({}), fields);
    }

    /// `pick random lo to hi` as block `id` in an input of `parent`.
    fn random(&mut self, id: &str, parent: &str, lo: i32, hi: i32) {
        let inputs = json!({"FROM": [1, [4, lo.to_string()]], "TO": [1, [4, hi.to_string()]]});
        self.put(id, "operator_random", Some(parent), inputs, json!({}));
    }

    /// `create clone of myself` as block `id` (its menu `{id}m`).
    fn create_clone(&mut self, id: &str) {
        let menu = format!("{id}m");
        self.put(id, "control_create_clone_of", None, json!({"CLONE_OPTION": [1, menu]}), json!({}));
        let fields = json!({"CLONE_OPTION": ["_myself_", null]});
        self.put(&menu, "control_create_clone_of_menu", Some(id), json!({}), fields);
    }

    /// Links `ids` into a script, its first block hanging from `under` (a hat's or C block's).
    fn chain(&mut self, under: Option<&str>, ids: &[String]) {
        for (k, id) in ids.iter().enumerate() {
            let parent = if k == 0 { under.map(String::from) } else { ids.get(k - 1).cloned() };
            if let Some(b) = self.0.get_mut(id).and_then(|b| b.as_object_mut()) {
                if parent.is_some() {
                    b.insert("parent".into(), json!(parent));
                    b.insert("topLevel".into(), json!(false));
                }
                b.insert("next".into(), json!(ids.get(k + 1)));
            }
        }
    }
}

/// The names as owned strings (for [`Blocks::chain`]).
fn ids(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

/// A default-profile VM of a one-sprite project with `blocks`, three costumes and the stage
/// variables `globals`, its green flag clicked.
fn started_vm(blocks: Blocks, globals: &[&str]) -> Vm {
    let costumes = [("wide", 160, 40), ("tall", 30, 200), ("square", 80, 80)];
    let sb3 = sb3_with_globals(blocks.0.into(), &costumes, json!({}), globals);
    let project = clowder_vm::project::load(&sb3, "clones.sb3", &LoadLimits::default()).expect("project loads");
    let mut vm = Vm::new(Arc::new(project), VmOptions { profile: Profile::Default, ..VmOptions::default() });
    assert_eq!(vm.geometry_mode(), "exact", "the costumes decode");
    vm.green_flag();
    vm
}

/// A stage variable's value, as its debug form (exact for numbers).
fn global(vm: &Vm, name: &str) -> String {
    let stage = vm.targets_in_execution_order().find(|(_, t)| t.is_stage).map(|(id, _)| id).expect("the stage");
    vm.variable(stage, name).map(|v| format!("{v:?}")).unwrap_or_default()
}

/// What [`swarm_run`] sees after a frame: the two counts and each sprite's position and
/// direction (bits).
type Frame = (String, String, Vec<(u64, u64, u64)>);

/// A swarm of clones that resize, turn, change costume and jump, then ask `touching edge?`
/// and `touching mouse-pointer?` (each counted in a global) and bounce; every third frame
/// each clone replaces itself by a new one, which asks at once. With `ask`, a `touching
/// Square?` before each question brings the geometry's kept scene up to date first; without,
/// the questions read the asker as it is now without it (issue 31). Per frame: the counts and
/// every sprite's pose.
fn swarm_run(ask: bool) -> Vec<Frame> {
    let mut b = Blocks::default();
    // The body's blocks in order, ids prefixed with `p`.
    let mut body = |p: &str| {
        let id = |n: &str| format!("{p}{n}");
        b.put(&id("size"), "looks_setsizeto", None, json!({"SIZE": [3, id("rs"), [4, "100"]]}), json!({}));
        b.random(&id("rs"), &id("size"), 20, 300);
        b.put(&id("turn"), "motion_turnright", None, json!({"DEGREES": [1, [4, "37"]]}), json!({}));
        b.put(&id("next"), "looks_nextcostume", None, json!({}), json!({}));
        let xy = json!({"X": [3, id("rx"), [4, "0"]], "Y": [3, id("ry"), [4, "0"]]});
        b.put(&id("goto"), "motion_gotoxy", None, xy, json!({}));
        b.random(&id("rx"), &id("goto"), -300, 300);
        b.random(&id("ry"), &id("goto"), -250, 250);
        let mut order: Vec<String> = ["size", "turn", "next", "goto"].map(id).to_vec();
        for (k, (what, count)) in [("_edge_", "edges"), ("_mouse_", "mice")].into_iter().enumerate() {
            if ask {
                let (a, t) = (id(&format!("a{k}")), id(&format!("a{k}t")));
                b.put(&a, "control_if", None, json!({"CONDITION": [2, t]}), json!({}));
                b.touching(&t, &a, "Square");
                order.push(a);
            }
            let (i, t, c) = (id(&format!("if{k}")), id(&format!("if{k}t")), id(&format!("if{k}c")));
            b.put(&i, "control_if", None, json!({"CONDITION": [2, t], "SUBSTACK": [2, c]}), json!({}));
            b.touching(&t, &i, what);
            let var = json!({"VARIABLE": [count, format!("v{count}")]});
            b.put(&c, "data_changevariableby", Some(&i), json!({"VALUE": [1, [4, "1"]]}), var);
            order.push(i);
        }
        b.put(&id("bounce"), "motion_ifonedgebounce", None, json!({}), json!({}));
        order.push(id("bounce"));
        order
    };
    let (main, clone) = (body("m"), body("c"));
    b.put("flag", "event_whenflagclicked", None, json!({}), json!({}));
    b.put("make", "control_repeat", None, json!({"TIMES": [1, [6, "4"]], "SUBSTACK": [2, "mk"]}), json!({}));
    b.create_clone("mk");
    b.put("loop", "control_forever", None, json!({"SUBSTACK": [2, main[0]]}), json!({}));
    b.put("hat", "control_start_as_clone", None, json!({}), json!({}));
    b.put("crep", "control_repeat", None, json!({"TIMES": [1, [6, "3"]], "SUBSTACK": [2, clone[0]]}), json!({}));
    b.create_clone("again");
    b.put("del", "control_delete_this_clone", None, json!({}), json!({}));
    b.chain(Some("loop"), &main);
    b.chain(Some("crep"), &clone);
    b.chain(Some("make"), &ids(&["mk"]));
    b.chain(None, &ids(&["flag", "make", "loop"]));
    b.chain(None, &ids(&["hat", "crep", "again", "del"]));
    let mut vm = started_vm(b, &["edges", "mice"]);
    // The pointer rests where the clones often are.
    vm.mouse_move(20.0, -10.0);
    (0..240)
        .map(|_| {
            vm.step();
            let poses = vm
                .targets_in_execution_order()
                .filter(|(_, t)| !t.is_stage)
                .map(|(_, t)| (t.x.to_bits(), t.y.to_bits(), t.direction.to_bits()))
                .collect();
            (global(&vm, "edges"), global(&vm, "mice"), poses)
        })
        .collect()
}

/// `touching edge?`, `touching mouse-pointer?` and `if on edge, bounce` answer from the asker
/// as it is now, whether or not another query brought the kept scene up to date since it
/// changed, for kept clones and for clones created since the last sync.
#[test]
fn own_queries_read_the_asker_as_it_is_now() {
    let (lazy, synced) = (swarm_run(false), swarm_run(true));
    let differ = lazy.iter().zip(&synced).position(|(a, b)| a != b);
    assert_eq!(differ, None, "frames differ from this one on");
    assert_eq!(lazy.len(), synced.len());
    // Both questions were answered both ways many times, by a swarm of clones that changed.
    let last = lazy.last().expect("frames");
    let count = |s: &str| s.trim_start_matches("Num(").trim_end_matches(')').parse::<f64>().unwrap_or(0.0);
    assert!(count(&last.0) > 100.0 && count(&last.1) > 5.0, "edges {} mice {}", last.0, last.1);
    assert!(count(&last.0) < 240.0 * 5.0 - 100.0, "edges {}", last.0);
    assert!(lazy.iter().skip(3).all(|f| f.2.len() == 5), "five sprites from the fourth frame on");
}

/// Each frame the sprite turns, resizes, changes costume and makes a clone, which jumps far
/// off stage (fenced), adds where it landed to two globals and deletes itself; with `ask`,
/// the clone asks `touching Square?` first, so the kept scene shows it when it is fenced.
/// The two sums after 200 frames, as exact bits.
fn clone_fence_sums(ask: bool) -> (String, String) {
    let mut b = Blocks::default();
    b.put("flag", "event_whenflagclicked", None, json!({}), json!({}));
    b.put("loop", "control_forever", None, json!({"SUBSTACK": [2, "turn"]}), json!({}));
    b.put("turn", "motion_turnright", None, json!({"DEGREES": [1, [4, "37"]]}), json!({}));
    b.put("size", "looks_setsizeto", None, json!({"SIZE": [3, "rs", [4, "100"]]}), json!({}));
    b.random("rs", "size", 20, 300);
    b.put("next", "looks_nextcostume", None, json!({}), json!({}));
    b.create_clone("mk");
    b.put("hat", "control_start_as_clone", None, json!({}), json!({}));
    b.put("ask", "control_if", None, json!({"CONDITION": [2, "askt"]}), json!({}));
    b.touching("askt", "ask", "Square");
    b.put("goto", "motion_gotoxy", None, json!({"X": [3, "rx", [4, "0"]], "Y": [3, "ry", [4, "0"]]}), json!({}));
    b.random("rx", "goto", -2000, 2000);
    b.random("ry", "goto", -2000, 2000);
    for (var, reporter, op) in [("sx", "xp", "motion_xposition"), ("sy", "yp", "motion_yposition")] {
        let fields = json!({"VARIABLE": [var, format!("v{var}")]});
        b.put(var, "data_changevariableby", None, json!({"VALUE": [3, reporter, [4, "0"]]}), fields);
        b.put(reporter, op, Some(var), json!({}), json!({}));
    }
    b.put("del", "control_delete_this_clone", None, json!({}), json!({}));
    let clone =
        if ask { ids(&["hat", "ask", "goto", "sx", "sy", "del"]) } else { ids(&["hat", "goto", "sx", "sy", "del"]) };
    b.chain(None, &ids(&["flag", "loop"]));
    b.chain(Some("loop"), &ids(&["turn", "size", "next", "mk"]));
    b.chain(None, &clone);
    let mut vm = started_vm(b, &["sx", "sy"]);
    for _ in 0..200 {
        vm.step();
    }
    (global(&vm, "sx"), global(&vm, "sy"))
}

/// A new clone is fenced from its own transform whether or not the kept scene shows it yet.
#[test]
fn new_clones_are_fenced_as_they_are() {
    let (lazy, synced) = (clone_fence_sums(false), clone_fence_sums(true));
    assert_eq!(lazy, synced);
    // 200 clones landed fenced, far from where they were sent (|x| up to 2000).
    let x = lazy.0.trim_start_matches("Num(").trim_end_matches(')').parse::<f64>().unwrap_or(f64::NAN);
    assert!(x.abs() > 1000.0 && x.abs() < 200.0 * 400.0, "{lazy:?}");
}

/// Runs the VM's `if on edge, bounce` (the block scripts execute, in the default profile with
/// the CPU geometry) once on the square of [`bounce_project`]; (direction, x, y) afterwards.
fn bounce_in_vm(x: f64, y: f64, direction: f64, style: &str) -> (f64, f64, f64) {
    let sb3 = bounce_project(x, y, direction, style);
    let project = clowder_vm::project::load(&sb3, "bounce.sb3", &LoadLimits::default()).expect("project loads");
    let mut vm = Vm::new(Arc::new(project), VmOptions { profile: Profile::Default, ..VmOptions::default() });
    assert_eq!(vm.geometry_mode(), "exact", "the costume decodes");
    vm.green_flag();
    vm.step();
    let t = vm.find_target("Square", 0).and_then(|id| vm.target(id)).expect("the sprite is live");
    (t.direction, t.x, t.y)
}

/// Bounces a 40-unit square that does not rotate (so its bounds stay ±19.5 around it: the
/// hull's outer grid points lie half a texel inside the costume); `None` when nothing moved.
fn bounce(x: f64, y: f64, direction: f64) -> Option<(f64, f64, f64)> {
    let after = bounce_in_vm(x, y, direction, "don't rotate");
    (after != (direction, x, y)).then_some(after)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn bounce_from_each_edge_and_corner() {
    // Not touching: nothing happens.
    assert_eq!(bounce(0.0, 0.0, 90.0), None);
    // Right edge, moving right and a bit up: reflect horizontally, pushed back inside.
    let (d, x, y) = bounce(230.0, 0.0, 60.0).expect("touches the right edge");
    assert!(close(d, -60.0), "{d}");
    assert_eq!((x, y), (220.5, 0.0));
    // Left edge.
    let (d, x, y) = bounce(-230.0, 0.0, -90.0).expect("left");
    assert!(close(d, 90.0), "{d}");
    assert_eq!((x, y), (-220.5, 0.0));
    // Top edge, moving up: now down.
    let (d, x, y) = bounce(0.0, 175.0, 0.0).expect("top");
    assert!(close(d, 180.0), "{d}");
    assert_eq!((x, y), (0.0, 160.5));
    // Bottom edge, moving down and right: reflect vertically.
    let (d, x, y) = bounce(0.0, -175.0, 135.0).expect("bottom");
    assert!(close(d, 45.0), "{d}");
    assert_eq!((x, y), (0.0, -160.5));
    // Bounds at 239.5 do not reach the edge; at x = 220.5 the renderer rounds the position to
    // 221 (Math.round), the bounds reach 240.5 and the sprite bounces back by half a pixel.
    assert_eq!(bounce(220.0, 0.0, 90.0), None);
    assert_eq!(bounce(220.5, 0.0, 90.0), Some((-90.0, 220.0, 0.0)));
    // Moving along an edge (parallel): pushed away with at least 0.2 of the speed.
    let (d, _, _) = bounce(230.0, 0.0, 0.0).expect("right");
    let expected = (-(0.2f64).atan2(1.0)).to_degrees();
    assert!((d - expected).abs() < 1e-9, "{d} {expected}");
    // Top-right corner, 5 past the right edge and 5 past the top: the first nearest edge in
    // scratch-vm's order (left, top, right, bottom) wins — top — and both coordinates are
    // pushed back inside.
    let (d, x, y) = bounce(225.0, 165.0, 45.0).expect("corner");
    assert!(close(d, 135.0), "{d}");
    assert_eq!((x, y), (220.5, 160.5));
    // Bottom-left corner heading into it: left wins.
    let (d, x, y) = bounce(-225.0, -165.0, -135.0).expect("corner");
    assert!(close(d, 135.0), "{d}");
    assert_eq!((x, y), (-220.5, -160.5));
    // Top-left corner heading up-left: left and top are both at distance 0, left comes first.
    let (d, x, y) = bounce(-225.0, 165.0, -45.0).expect("corner");
    assert!(close(d, 45.0), "{d}");
    assert_eq!((x, y), (-220.5, 160.5));
    // Bottom-right corner heading down-right: right comes before bottom; 225° wraps to −135°.
    let (d, x, y) = bounce(225.0, -165.0, 135.0).expect("corner");
    assert!(close(d, -135.0), "{d}");
    assert_eq!((x, y), (220.5, -160.5));
    // A rotating sprite is pushed back with its rotated bounds.
    let sq = square(40);
    let (d, x, y) = bounce_in_vm(230.0, 0.0, 60.0, "all around");
    assert!(close(d, -60.0), "{d}");
    let after = scene(vec![sprite(&sq, x, y, d)]);
    assert!(after.bounds(1).right <= 240.0 + 1e-9 && !after.touching_edge(1));
}

#[test]
fn click_on_overlapping_sprites_picks_the_top_one() {
    let sq = square(40);
    let below = sprite(&sq, 0.0, 0.0, 90.0);
    let above = sprite(&sq, 10.0, 0.0, 90.0);
    let s = scene(vec![below.clone(), above.clone()]);
    assert_eq!(s.pick(5.0, 0.0), Some(2));
    // Only the lower sprite is under x = −15.
    assert_eq!(s.pick(-15.0, 0.0), Some(1));
    // Nothing but the (empty) white backdrop: transparent, so nothing is picked.
    assert_eq!(s.pick(200.0, 100.0), None);
    // Reordered: the other one wins.
    let s = scene(vec![above.clone(), below.clone()]);
    assert_eq!(s.pick(5.0, 0.0), Some(2));
    // A fully ghosted or hidden sprite cannot be clicked; the one below gets the click.
    let mut ghost = above.clone();
    ghost.effects = Effects::from_values([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 100.0]);
    assert_eq!(scene(vec![below.clone(), ghost]).pick(5.0, 0.0), Some(1));
    let mut hidden = above.clone();
    hidden.visible = false;
    assert_eq!(scene(vec![below.clone(), hidden]).pick(5.0, 0.0), Some(1));
    // A partly transparent costume is clicked through its holes.
    let ring = bitmap(40, 40, |x, y| !(10..30).contains(&x) || !(10..30).contains(&y));
    let s = scene(vec![below, sprite(&ring, 0.0, 0.0, 90.0)]);
    assert_eq!(s.pick(0.0, 0.0), Some(1));
    assert_eq!(s.pick(8.0, 0.0), Some(2));
}

#[test]
fn pen_line_then_touching_color() {
    let sq = square(20);
    let mut pen = PenLayer::new();
    let red = PenAttributes { color4f: [1.0, 0.0, 0.0, 1.0], diameter: 3.0 };
    let with_pen = |pen: &mut PenLayer| {
        let pen_drawable = Drawable {
            skin: pen.skin(),
            placement: Placement { x: 0.0, y: 0.0, direction: 90.0, scale: [100.0, 100.0] },
            visible: true,
            effects: Effects::default(),
        };
        Scene::new(vec![stage(), pen_drawable, sprite(&sq, 0.0, 0.0, 90.0)])
    };
    // A line far away: not touching red; white (the empty backdrop) is touched.
    pen.draw_line(&red, -200.0, 100.0, -100.0, 100.0);
    let s = with_pen(&mut pen);
    assert!(!s.touching_color(2, [255, 0, 0], None));
    assert!(s.touching_color(2, [255, 255, 255], None));
    // A line ending one pixel short of the square's edge (x = −10): still not touching.
    pen.draw_line(&red, -100.0, 0.0, -13.0, 0.0);
    assert!(!with_pen(&mut pen).touching_color(2, [255, 0, 0], None));
    // Extend it under the square: touching red.
    pen.draw_line(&red, -13.0, 0.0, -9.0, 0.0);
    let s = with_pen(&mut pen);
    assert!(s.touching_color(2, [255, 0, 0], None));
    // The square's own red pixels over the pen's red: "color red is touching red".
    assert!(s.touching_color(2, [255, 0, 0], Some([255, 0, 0])));
    // Clearing the pen layer removes it.
    pen.clear();
    assert!(!with_pen(&mut pen).touching_color(2, [255, 0, 0], None));
    // A stamp of the square leaves red pixels behind for another sprite to touch.
    let s = with_pen(&mut pen);
    pen.stamp(&s, 2);
    let other = square(4);
    let moved = Scene::new(vec![
        stage(),
        Drawable {
            skin: pen.skin(),
            placement: Placement { x: 0.0, y: 0.0, direction: 90.0, scale: [100.0, 100.0] },
            visible: true,
            effects: Effects::default(),
        },
        sprite(&other, 0.0, 0.0, 90.0),
    ]);
    assert!(moved.touching_color(2, [255, 0, 0], None));
}

/// The circle costume of [`hull_project`]: 20 × 20, radius 8, centred.
const CIRCLE: &str = r##"<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20" viewBox="0 0 20 20"><circle cx="10" cy="10" r="8" fill="#f00"/></svg>"##;

/// Two sprites wearing [`CIRCLE`], `A` at size 75 on the origin and `B` at size 90 at `(gap,
/// 0)`. `A` asks `touching B?` into `before`, then `touching edge?` (which makes the live
/// renderer compute its convex hull), has `B` do the same, then asks `touching B?` again into
/// `after`.
fn hull_project(gap: f64) -> Vec<u8> {
    use std::io::Write as _;
    let b =
        |op: &str, next: Option<&str>, parent: Option<&str>, inputs: serde_json::Value, fields: serde_json::Value| {
            json!({"opcode": op, "next": next, "parent": parent, "inputs": inputs, "fields": fields,
               "shadow": false, "topLevel": parent.is_none(), "x": 0, "y": 0})
        };
    let menu = |id_parent: &str, value: &str| {
        json!({"opcode": "sensing_touchingobjectmenu", "next": null, "parent": id_parent, "inputs": {},
               "fields": {"TOUCHINGOBJECTMENU": [value, null]}, "shadow": true, "topLevel": false})
    };
    let blocks = json!({
        "flag": b("event_whenflagclicked", Some("set1"), None, json!({}), json!({})),
        "set1": b("data_setvariableto", Some("edge"), Some("flag"), json!({"VALUE": [3, "t1", [10, ""]]}),
                  json!({"VARIABLE": ["before", "vbefore"]})),
        "t1": b("sensing_touchingobject", None, Some("set1"), json!({"TOUCHINGOBJECTMENU": [1, "m1"]}), json!({})),
        "m1": menu("t1", "B"),
        "edge": b("data_setvariableto", Some("go"), Some("set1"), json!({"VALUE": [3, "te", [10, ""]]}),
                  json!({"VARIABLE": ["edge", "vedge"]})),
        "te": b("sensing_touchingobject", None, Some("edge"), json!({"TOUCHINGOBJECTMENU": [1, "me"]}), json!({})),
        "me": menu("te", "_edge_"),
        "go": b("event_broadcastandwait", Some("set2"), Some("edge"),
                json!({"BROADCAST_INPUT": [1, [11, "go", "bgo"]]}), json!({})),
        "set2": b("data_setvariableto", None, Some("go"), json!({"VALUE": [3, "t2", [10, ""]]}),
                  json!({"VARIABLE": ["after", "vafter"]})),
        "t2": b("sensing_touchingobject", None, Some("set2"), json!({"TOUCHINGOBJECTMENU": [1, "m2"]}), json!({})),
        "m2": menu("t2", "B"),
    });
    // B, told `go`, asks `touching edge?` too: its hull is then kept as well.
    let b_blocks = json!({
        "hat": b("event_whenbroadcastreceived", Some("bset"), None, json!({}),
                 json!({"BROADCAST_OPTION": ["go", "bgo"]})),
        "bset": b("data_setvariableto", None, Some("hat"), json!({"VALUE": [3, "bt", [10, ""]]}),
                  json!({"VARIABLE": ["edge", "vedge"]})),
        "bt": b("sensing_touchingobject", None, Some("bset"), json!({"TOUCHINGOBJECTMENU": [1, "bm"]}), json!({})),
        "bm": menu("bt", "_edge_"),
    });
    let costume = json!({"name": "circle", "dataFormat": "svg", "assetId": "636972636c6500000000000000000000", "md5ext": "636972636c6500000000000000000000.svg",
                         "rotationCenterX": 10, "rotationCenterY": 10});
    let backdrop = json!({"name": "backdrop", "dataFormat": "svg", "assetId": "6261636b64726f700000000000000000", "md5ext": "6261636b64726f700000000000000000.svg",
                          "rotationCenterX": 240, "rotationCenterY": 180});
    let variables = json!({"vbefore": ["before", 0], "vedge": ["edge", 0], "vafter": ["after", 0]});
    let stage = json!({"isStage": true, "name": "Stage", "variables": variables, "lists": {},
        "broadcasts": {"bgo": "go"}, "blocks": {}, "comments": {}, "currentCostume": 0, "costumes": [backdrop],
        "sounds": [], "volume": 100, "layerOrder": 0, "tempo": 60});
    let sprite = |name: &str, blocks: serde_json::Value, x: f64, size: f64, layer: u32| {
        json!({"isStage": false, "name": name, "variables": {}, "lists": {}, "broadcasts": {}, "blocks": blocks,
               "comments": {}, "currentCostume": 0, "costumes": [costume.clone()], "sounds": [], "volume": 100,
               "layerOrder": layer, "visible": true, "x": x, "y": 0, "size": size, "direction": 90,
               "draggable": false, "rotationStyle": "all around"})
    };
    let pj = json!({"targets": [stage, sprite("A", blocks, 0.0, 75.0, 1), sprite("B", b_blocks, gap, 90.0, 2)],
                    "monitors": [], "extensions": [], "meta": {"semver": "3.0.0"}});
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    let backdrop_svg = r#"<svg xmlns="http://www.w3.org/2000/svg" width="480" height="360"/>"#;
    for (name, data) in [
        ("project.json", serde_json::to_vec(&pj).expect("JSON")),
        ("636972636c6500000000000000000000.svg", CIRCLE.as_bytes().to_vec()),
        ("6261636b64726f700000000000000000.svg", backdrop_svg.as_bytes().to_vec()),
    ] {
        zip.start_file(name, opts).expect("zip entry");
        zip.write_all(&data).expect("zip write");
    }
    zip.finish().expect("zip").into_inner()
}

/// scratch-render keeps a drawable's convex hull once `getBounds` computed it, and touching then
/// searches the hull's box instead of the rough AABB. The `whisker` profile (a live renderer)
/// keeps it: after `touching edge?`, a sprite no longer touches another by the fringe linear
/// sampling finds outside its hull's box. The `default` profile answers as a fresh renderer.
#[test]
fn a_kept_hull_narrows_touching_in_the_whisker_profile() {
    // A gap at which the two circles touch by the fringe alone (scratch-render's own rule,
    // searched with the renderer's scene).
    let skin = Arc::new(Skin::from_svg(CIRCLE.as_bytes(), Some([10.0, 10.0])).expect("valid svg"));
    let gap = (0..400)
        .map(|i| 13.0 + f64::from(i) * 0.01)
        .find(|&gap| {
            let a = sprite_full(&skin, 0.0, 0.0, 90.0, 75.0, RotationStyle::AllAround);
            let b = sprite_full(&skin, gap, 0.0, 90.0, 90.0, RotationStyle::AllAround);
            let mut s = scene(vec![a, b]);
            let fresh = s.touching_drawables(1, &[2]);
            s.hull_bounds = vec![(1, s.bounds(1)), (2, s.bounds(2))];
            fresh && !s.touching_drawables(1, &[2])
        })
        .expect("a gap where the hull's box narrows the answer");
    let sb3 = hull_project(gap);
    let answers = |profile: Profile| {
        let project = clowder_vm::project::load(&sb3, "hull.sb3", &LoadLimits::default()).expect("project loads");
        let mut vm = Vm::new(Arc::new(project), VmOptions { profile, ..VmOptions::default() });
        assert_eq!(vm.geometry_mode(), "exact", "the costumes decode");
        vm.green_flag();
        for _ in 0..5 {
            vm.step();
        }
        let stage = vm.stage_id();
        ["before", "edge", "after"].map(|v| vm.variable(stage, v))
    };
    let (t, f) = (Some(clowder_vm::Value::Bool(true)), Some(clowder_vm::Value::Bool(false)));
    assert_eq!(answers(Profile::Default), [t.clone(), f.clone(), t.clone()], "gap {gap}");
    assert_eq!(answers(Profile::Whisker), [t, f.clone(), f], "gap {gap}");
}
