//! Geometry benchmark (issue 7, acceptance 5): the cost of touching queries on the
//! whisker-rq1 games.
//!
//!   cargo bench -p clowder-vm --bench geometry [-- --scenes N]
//!
//! For every game it places the sprites at random positions, directions and sizes
//! (SplitMix64, seed 1; costumes decoded once beforehand, as a study run would), then times
//! `touching (sprite)` for every sprite pair, `touching edge` for every sprite and
//! `touching color` with colours taken from the backdrop under each sprite and random ones.
//! It prints the mean cost per query of each kind and a worst case. Timings are wall-clock and
//! only meaningful side by side within one run.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use clowder_vm::geometry::drawable::{Placement, RotationStyle};
use clowder_vm::geometry::effects::Effects;
use clowder_vm::geometry::query::clamp_size;
use clowder_vm::geometry::render::{Drawable, Scene};
use clowder_vm::geometry::skin::CostumeSet;
use clowder_vm::rng::SplitMix64;
use clowder_vm::{LoadLimits, Project};

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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let scenes: usize = args
        .iter()
        .position(|a| a == "--scenes")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
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
            let scene = Scene { drawables };
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
