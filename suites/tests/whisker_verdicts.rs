//! Verdicts of the real Whisker (emse22, the whisker-oracle's run.sh) on whisker-rq1 games,
//! for small suites written here from situations where clowder and Whisker once disagreed.
//! The games come from `CLOWDER_CORPORA/whisker-rq1`; the test skips visibly without them.

use std::path::PathBuf;
use std::sync::Arc;

use clowder_suites::{Limits, Status, Suite};

fn games() -> Option<PathBuf> {
    let corpora =
        std::env::var_os("CLOWDER_CORPORA").map_or_else(|| PathBuf::from("../../shared/corpora"), PathBuf::from);
    let games = corpora.join("whisker-rq1");
    games.is_dir().then_some(games)
}

/// Snake's head turning back onto its body: Whisker sees no self-collision (issue 22's
/// "clowder reaches game over on a self-collision that Whisker does not detect"; fixed by
/// blending SVG colours as the browser does, `geometry::svg_blend`).
#[test]
fn snake_turning_back_is_no_self_collision_as_in_whisker() {
    let Some(games) = games() else {
        eprintln!("SKIP: corpora folder not found (set CLOWDER_CORPORA)");
        return;
    };
    let suite = Suite::load(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/SnakeTurnBack.js"))
        .expect("suite loads");
    let project =
        Arc::new(clowder_vm::Project::load_path(&games.join("Snake.sb3"), &Default::default()).expect("Snake loads"));
    // Seed 2, as Whisker ran it.
    let r = clowder_suites::run_project(&suite, &project, "Snake", 2, &Limits::default());
    for row in &r.rows {
        assert_eq!(row.status, Status::Pass, "{}: {} (Whisker: pass)", row.test, row.message);
    }
    assert_eq!(r.rows.len(), 1);
}
