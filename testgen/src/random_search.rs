//! Random search: random tests; those that cover new targets join the suite.

use clowder_vm::rng::SplitMix64;

use crate::config::AlgorithmConfig;
use crate::events::{Event, EventSpace};
use crate::execution::Executor;
use crate::result::{Test, TimelinePoint};

/// Parameters of random search (Whisker `randomSearch.json` defaults).
struct Params {
    min_events: u64,
    max_events: u64,
    wait_upper_bound: u64,
    press_duration: u64,
    click_duration: u64,
}

impl Params {
    fn from(cfg: &AlgorithmConfig) -> Result<Self, String> {
        let p = Self {
            min_events: cfg.int("min_events", 2)?,
            max_events: cfg.int("max_events", 20)?,
            wait_upper_bound: cfg.int("wait_upper_bound", 100)?,
            press_duration: cfg.int("press_duration", 5)?,
            click_duration: cfg.int("click_duration", 1)?,
        };
        if p.min_events > p.max_events || p.max_events == 0 {
            return Err(format!("need 0 < min_events <= max_events, got {} and {}", p.min_events, p.max_events));
        }
        Ok(p)
    }
}

fn below(rng: &mut SplitMix64, n: u64) -> u64 {
    if n == 0 { 0 } else { (rng.next_f64() * n as f64) as u64 }
}

fn random_event(rng: &mut SplitMix64, space: &EventSpace, p: &Params) -> Event {
    // Index 0 is Wait; the others are the project's events.
    let i = below(rng, space.len() as u64 + 1) as usize;
    if i == 0 {
        return Event::Wait { steps: below(rng, p.wait_upper_bound + 1) };
    }
    let mut i = i - 1;
    if i < space.keys.len() {
        return Event::KeyPress { key: space.keys[i].clone(), steps: p.press_duration };
    }
    i -= space.keys.len();
    if i < space.clickable_sprites.len() {
        return Event::ClickSprite { sprite: space.clickable_sprites[i].clone() };
    }
    let _ = p.click_duration;
    Event::ClickStage
}

/// Runs random search until the executor's budget ends; returns the suite.
pub(crate) fn run(
    cfg: &AlgorithmConfig,
    seed: u64,
    exec: &mut Executor,
    space: &EventSpace,
    on_progress: &mut dyn FnMut(&TimelinePoint),
) -> Result<Vec<Test>, String> {
    let p = Params::from(cfg)?;
    // The search's own stream, separate from the project's randomness.
    let mut rng = SplitMix64::new(seed ^ 0x5EED_0F5E_A2C4_0001);
    let mut suite = Vec::new();
    while !exec.finished() {
        let len = p.min_events + below(&mut rng, p.max_events - p.min_events + 1);
        let events: Vec<Event> = (0..len).map(|_| random_event(&mut rng, space, &p)).collect();
        if exec.execute(&events, on_progress) > 0 {
            suite.push(Test { events });
        }
    }
    Ok(suite)
}
