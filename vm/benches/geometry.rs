//! Geometry benchmark (issue 7, acceptance 5): the cost of touching queries on the
//! whisker-rq1 games, and the share of VM time spent in geometry.
//!
//!   cargo bench -p clowder-vm --bench geometry [-- --scenes N --steps N]
//!
//! Part 1, queries: for every game it places the sprites at random positions, directions and
//! sizes (SplitMix64, seed 1; costumes decoded once beforehand, as a study run would), then
//! times `touching (sprite)` for every sprite pair, `touching edge` for every sprite and
//! `touching color` with colours taken from what is drawn under each sprite and random ones.
//!
//! Part 2, VM share: every game runs in the `default` profile for `--steps` steps (default
//! 3 000, 100 s of Scratch time) with seeded inputs (green flag, arrow and space keys, mouse
//! moves, button, sprite clicks) behind a timing wrapper around the geometry, which measures
//! how much of the VM's time went into geometry calls, by kind.
//!
//! Part 0, SVG silhouettes: every SVG costume of the games rasterised at MIP scales 1 and 2
//! with the browser's coverage model (`svg_raster`) and with tiny-skia's own anti-aliasing,
//! side by side; prints the ratio and how many costumes the model draws.
//!
//! Timings are wall-clock and only meaningful side by side within one run.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use clowder_vm::geometry::drawable::{Placement, RotationStyle};
use clowder_vm::geometry::effects::Effects;
use clowder_vm::geometry::query::clamp_size;
use clowder_vm::geometry::render::{Drawable, Scene};
use clowder_vm::geometry::skin::CostumeSet;
use clowder_vm::geometry::{Geometry, Rect, Scene as VmScene};
use clowder_vm::rng::SplitMix64;
use clowder_vm::{LoadLimits, Profile, Project, TargetId, Vm, VmOptions};

fn corpora() -> PathBuf {
    std::env::var_os("CLOWDER_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora")))
}

struct Timing {
    queries: u64,
    nanos: u128,
    worst: u128,
}

impl Timing {
    fn new() -> Self {
        Timing { queries: 0, nanos: 0, worst: 0 }
    }

    fn time<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let r = std::hint::black_box(f());
        let dt = t.elapsed().as_nanos();
        self.queries += 1;
        self.nanos += dt;
        self.worst = self.worst.max(dt);
        r
    }

    fn mean_us(&self) -> f64 {
        if self.queries == 0 { 0.0 } else { self.nanos as f64 / self.queries as f64 / 1000.0 }
    }
}

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let scenes = arg(&args, "--scenes", 50);
    let steps = arg(&args, "--steps", 3000);
    svg_silhouettes();
    println!();
    queries(scenes);
    println!();
    vm_share(steps);
}

fn svg_silhouettes() {
    use clowder_vm::geometry::svg::SvgImage;
    let mut images = Vec::new();
    for path in games() {
        let Ok(project) = Project::load_path(&path, &LoadLimits::default()) else { continue };
        for (name, bytes) in &project.assets {
            if name.ends_with(".svg") {
                if let Ok(img) = SvgImage::load(bytes) {
                    images.push(img);
                }
            }
        }
    }
    let modelled = images.iter().filter(|i| i.coverage_modelled()).count();
    let (mut model, mut reference) = (Timing::new(), Timing::new());
    for _ in 0..3 {
        for img in &images {
            for scale in [1.0, 2.0] {
                model.time(|| img.rasterize(scale));
                reference.time(|| img.rasterize_reference(scale));
            }
        }
    }
    println!(
        "SVG silhouettes: {} costumes ({} drawn with the coverage model), {} rasterisations each way",
        images.len(),
        modelled,
        model.queries
    );
    println!(
        "  coverage model {:.0} µs, tiny-skia reference {:.0} µs per rasterisation: ratio {:.2}",
        model.mean_us(),
        reference.mean_us(),
        if reference.nanos == 0 { 0.0 } else { model.nanos as f64 / reference.nanos as f64 }
    );
}

fn games() -> Vec<PathBuf> {
    let dir = corpora().join("whisker-rq1");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("SKIP: {} not found (set CLOWDER_CORPORA)", dir.display());
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "sb3"))
        .collect();
    files.sort();
    files
}

fn queries(scenes: usize) {
    let dir = corpora().join("whisker-rq1");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("SKIP: {} not found (set CLOWDER_CORPORA)", dir.display());
        return;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "sb3"))
        .collect();
    files.sort();
    println!(
        "{:14} {:>7} {:>12} {:>12} {:>12} {:>12} {:>10}",
        "game", "sprites", "sprite µs", "edge µs", "colour µs", "worst µs", "decode ms"
    );
    let (mut all_s, mut all_e, mut all_c) = (Timing::new(), Timing::new(), Timing::new());
    for path in files {
        let name = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
        let project = match Project::load_path(&path, &LoadLimits::default()) {
            Ok(p) => Arc::new(p),
            Err(e) => {
                eprintln!("{name}: {e}");
                continue;
            }
        };
        let costumes = CostumeSet::new(project.clone());
        let t0 = Instant::now();
        let approximate = costumes.approximate(); // decodes every costume
        let decode_ms = t0.elapsed().as_secs_f64() * 1000.0;
        let stage_def = project.targets.iter().position(|t| t.is_stage).unwrap_or(0);
        let sprites: Vec<usize> = (0..project.targets.len())
            .filter(|&i| !project.targets[i].is_stage && !project.targets[i].costumes.is_empty())
            .collect();
        let mut rng = SplitMix64::new(1);
        let (mut ts, mut te, mut tc) = (Timing::new(), Timing::new(), Timing::new());
        for _ in 0..scenes {
            let backdrop = project.targets[stage_def].current_costume;
            let Some(stage_skin) = costumes.skin(stage_def, backdrop) else { continue };
            let mut drawables = vec![Drawable {
                skin: stage_skin,
                placement: Placement { x: 0.0, y: 0.0, direction: 90.0, scale: [100.0, 100.0] },
                visible: true,
                effects: Effects::default(),
            }];
            for &def in &sprites {
                let t = &project.targets[def];
                let costume = (rng.next_f64() * t.costumes.len() as f64) as usize;
                let Some(skin) = costumes.skin(def, costume) else { continue };
                let size = clamp_size(20.0 + rng.next_f64() * 180.0, skin.size());
                let style = RotationStyle::parse(&t.rotation_style);
                drawables.push(Drawable {
                    skin,
                    placement: Placement::from_target(
                        (rng.next_f64() - 0.5) * 500.0,
                        (rng.next_f64() - 0.5) * 380.0,
                        rng.next_f64() * 360.0 - 179.0,
                        size,
                        style,
                    ),
                    visible: true,
                    effects: Effects::default(),
                });
            }
            let scene = Scene::new(drawables);
            let n = scene.drawables.len();
            for a in 1..n {
                for b in 1..n {
                    if a != b {
                        ts.time(|| scene.touching_drawables(a, &[b]));
                    }
                }
                te.time(|| scene.touching_edge(a));
                let p = scene.drawables[a].placement;
                let under = scene.sample_color(p.x, p.y, Some(a));
                tc.time(|| scene.touching_color(a, under, None));
                let random = [(rng.next_u64() & 255) as u8, (rng.next_u64() & 255) as u8, (rng.next_u64() & 255) as u8];
                tc.time(|| scene.touching_color(a, random, None));
            }
        }
        let worst = ts.worst.max(te.worst).max(tc.worst) as f64 / 1000.0;
        println!(
            "{:14} {:>7} {:>12.2} {:>12.2} {:>12.2} {:>12.1} {:>10.1}{}",
            name,
            sprites.len(),
            ts.mean_us(),
            te.mean_us(),
            tc.mean_us(),
            worst,
            decode_ms,
            if approximate { "  (approximate costumes)" } else { "" }
        );
        for (all, t) in [(&mut all_s, &ts), (&mut all_e, &te), (&mut all_c, &tc)] {
            all.queries += t.queries;
            all.nanos += t.nanos;
            all.worst = all.worst.max(t.worst);
        }
    }
    println!(
        "{:14} {:>7} {:>12.2} {:>12.2} {:>12.2} {:>12.1}",
        "ALL",
        "",
        all_s.mean_us(),
        all_e.mean_us(),
        all_c.mean_us(),
        all_s.worst.max(all_e.worst).max(all_c.worst) as f64 / 1000.0
    );
    println!("queries: {} sprite/sprite, {} edge, {} colour", all_s.queries, all_e.queries, all_c.queries);
}

/// Time and count per geometry call kind.
#[derive(Default)]
struct Spent {
    by_kind: BTreeMap<&'static str, (u64, u128)>,
}

impl Spent {
    fn total_nanos(&self) -> u128 {
        self.by_kind.values().map(|v| v.1).sum()
    }
}

/// Delegates to the real geometry and times every call.
struct Timed {
    inner: Box<dyn Geometry>,
    spent: Rc<RefCell<Spent>>,
}

impl Timed {
    fn time<T>(&mut self, kind: &'static str, f: impl FnOnce(&mut dyn Geometry) -> T) -> T {
        let t = Instant::now();
        let r = f(self.inner.as_mut());
        let dt = t.elapsed().as_nanos();
        let mut s = self.spent.borrow_mut();
        let e = s.by_kind.entry(kind).or_default();
        e.0 += 1;
        e.1 += dt;
        r
    }
}

impl Geometry for Timed {
    fn mode(&self) -> &'static str {
        self.inner.mode()
    }
    fn clone_box(&self) -> Box<dyn Geometry> {
        Box::new(Timed { inner: self.inner.clone_box(), spent: Rc::clone(&self.spent) })
    }
    fn touching_sprite(&mut self, s: &VmScene, me: TargetId, sprite: usize) -> bool {
        self.time("touching sprite", |g| g.touching_sprite(s, me, sprite))
    }
    fn touching_edge(&mut self, s: &VmScene, me: TargetId) -> bool {
        self.time("touching edge", |g| g.touching_edge(s, me))
    }
    fn touching_point(&mut self, s: &VmScene, me: TargetId, x: f64, y: f64) -> bool {
        self.time("touching mouse", |g| g.touching_point(s, me, x, y))
    }
    fn touching_color(&mut self, s: &VmScene, me: TargetId, rgb: [u8; 3]) -> bool {
        self.time("touching color", |g| g.touching_color(s, me, rgb))
    }
    fn color_touching_color(&mut self, s: &VmScene, me: TargetId, t: [u8; 3], m: [u8; 3]) -> bool {
        self.time("color touching color", |g| g.color_touching_color(s, me, t, m))
    }
    fn bounds(&mut self, s: &VmScene, me: TargetId) -> Option<Rect> {
        self.time("bounds", |g| g.bounds(s, me))
    }
    fn fences(&self) -> bool {
        self.inner.fences()
    }
    fn fenced_position(&mut self, s: &VmScene, me: TargetId, x: f64, y: f64) -> (f64, f64) {
        self.time("fencing", |g| g.fenced_position(s, me, x, y))
    }
    fn costume_size(&self, sprite: usize, costume: i64) -> Option<(f64, f64)> {
        self.inner.costume_size(sprite, costume)
    }
    fn pick(&mut self, s: &VmScene, x: f64, y: f64) -> Option<TargetId> {
        self.time("pick", |g| g.pick(s, x, y))
    }
    fn sprite_distance(&mut self, s: &VmScene, me: TargetId, sprite: usize) -> Option<f64> {
        self.time("distances", |g| g.sprite_distance(s, me, sprite))
    }
    fn edge_distance(&mut self, s: &VmScene, me: TargetId) -> Option<f64> {
        self.time("distances", |g| g.edge_distance(s, me))
    }
    fn point_distance(&mut self, s: &VmScene, me: TargetId, x: f64, y: f64) -> Option<f64> {
        self.time("distances", |g| g.point_distance(s, me, x, y))
    }
    fn color_distance(&mut self, s: &VmScene, me: TargetId, rgb: [u8; 3], below: f64) -> Option<f64> {
        self.time("distances", |g| g.color_distance(s, me, rgb, below))
    }
    fn pen_clear(&mut self) {
        self.time("pen", |g| g.pen_clear())
    }
    fn pen_point(&mut self, rgba: [f64; 4], size: f64, x: f64, y: f64) {
        self.time("pen", |g| g.pen_point(rgba, size, x, y))
    }
    fn pen_line(&mut self, rgba: [f64; 4], size: f64, x0: f64, y0: f64, x1: f64, y1: f64) {
        self.time("pen", |g| g.pen_line(rgba, size, x0, y0, x1, y1))
    }
    fn pen_stamp(&mut self, s: &VmScene, me: TargetId) {
        self.time("pen", |g| g.pen_stamp(s, me))
    }
}

const KEYS: [&str; 5] = ["space", "left arrow", "right arrow", "up arrow", "down arrow"];

fn vm_share(steps: usize) {
    println!("part 2: share of VM time in geometry, default profile, {steps} steps with seeded inputs");
    println!("{:14} {:>10} {:>12} {:>7}  calls (mean µs)", "game", "VM ms", "geometry ms", "share");
    let (mut all_vm, mut all_geo) = (0u128, 0u128);
    for path in games() {
        let name = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
        let Ok(project) = Project::load_path(&path, &LoadLimits::default()) else { continue };
        let project = Arc::new(project);
        let spent = Rc::new(RefCell::new(Spent::default()));
        let geometry = Timed { inner: clowder_vm::geometry::for_project(&project), spent: spent.clone() };
        // Decode every costume first: a study decodes once per project, not per run.
        let _ = clowder_vm::geometry::cpu::costume_set(&project).approximate();
        let opts = VmOptions { profile: Profile::Default, seed: 1, ..VmOptions::default() };
        let mut vm = Vm::with_geometry(project, opts, Box::new(geometry));
        let sprites: Vec<String> = vm
            .targets_in_execution_order()
            .filter(|(_, t)| !t.is_stage)
            .filter_map(|(id, _)| vm.target_name(id).map(str::to_string))
            .collect();
        let mut rng = SplitMix64::new(1);
        vm.green_flag();
        let t0 = Instant::now();
        for k in 0..steps {
            match k % 15 {
                0 => vm.key_down(KEYS[(rng.next_u64() % KEYS.len() as u64) as usize]),
                5 => vm.key_up(KEYS[(rng.next_u64() % KEYS.len() as u64) as usize]),
                7 => vm.mouse_move(rng.next_f64() * 480.0 - 240.0, rng.next_f64() * 360.0 - 180.0),
                9 => vm.mouse_button(rng.next_f64() < 0.5),
                12 if !sprites.is_empty() && rng.next_f64() < 0.3 => {
                    vm.click_sprite(&sprites[(rng.next_u64() % sprites.len() as u64) as usize], 0);
                }
                _ => {}
            }
            vm.step();
        }
        let total = t0.elapsed().as_nanos();
        let s = spent.borrow();
        let geo = s.total_nanos();
        all_vm += total;
        all_geo += geo;
        let calls: Vec<String> =
            s.by_kind.iter().map(|(k, (n, ns))| format!("{k} {n} ({:.1})", *ns as f64 / *n as f64 / 1000.0)).collect();
        println!(
            "{:14} {:>10.1} {:>12.1} {:>6.1}%  {}",
            name,
            total as f64 / 1e6,
            geo as f64 / 1e6,
            100.0 * geo as f64 / total.max(1) as f64,
            calls.join(", ")
        );
    }
    println!(
        "{:14} {:>10.1} {:>12.1} {:>6.1}%",
        "ALL",
        all_vm as f64 / 1e6,
        all_geo as f64 / 1e6,
        100.0 * all_geo as f64 / all_vm.max(1) as f64
    );
}
