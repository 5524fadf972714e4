//! Whisker's scratch-vm (se2p/scratch-vm `emse22`, commit ed4055f, driven by Whisker `emse22`'s
//! `VMWrapper`) where it departs from scratch-vm: the rules of the `whisker` profile.
//!
//! * Randomness: `Math.random` is `seed-random` keyed by the test seed, re-seeded before every
//!   test execution ([`crate::rng::SeedRandom`]); scratch-vm's internal ids (`util/uid.js`:
//!   20 draws for every new target and every say/think bubble update) draw from it too.
//! * Time is counted in steps: `wait`, `say/think for secs`, `glide` and `play sound until
//!   done` finish when `stepsExecuted - stepOffset >= duration`, the duration converted to
//!   steps with the accelerated step time; their time arguments are first divided by the
//!   acceleration factor (`VMWrapper.instrumentPrimitive`). `say/think for secs` is a stack
//!   timer (no `setTimeout`): the bubble is cleared, unconditionally, in the tick it ends.
//! * The `timer` reporter is `runtime.stepTimer`: 0.075 added after every step, set to 0 by
//!   `reset timer` and at the start of a test (not by the green flag).

use crate::value::js_max;

/// The acceleration factor of the Whisker study (`-a 10`; the paper's RQ1 choice).
pub const ACCELERATION: f64 = 10.0;

/// What `runtime.stepTimer` gains per step.
pub const TIMER_INCREMENT: f64 = 0.075;

/// `Math.random` calls of one `uid()` (a new target, a bubble update).
pub const UID_DRAWS: u32 = 20;

/// `Runtime.THREAD_STEP_INTERVAL` = `runtime.currentStepTime` under Whisker: `1000 / 30 / a`.
pub fn step_time() -> f64 {
    1000.0 / 30.0 / ACCELERATION
}

/// Duration in steps of an instrumented block's time argument of `secs` seconds (`secs` is
/// the argument as a number, NaN read as 0): the wrapper passes `secs / a`, the fork starts
/// its stack timer with `max(0, 1000 * that) / stepTime`. Fractional; the block ends in the
/// first step with `elapsed >= duration`.
pub fn instrumented_steps(secs: f64) -> f64 {
    let secs = secs / ACCELERATION;
    let secs = if secs.is_nan() { 0.0 } else { secs };
    js_max(0.0, 1000.0 * secs) / step_time()
}

/// Duration in steps of `play sound until done` for a sound of `secs` seconds: the fork
/// computes `max(0, 1000 * secs / a)` and starts a stack timer with it.
pub fn sound_steps(secs: f64) -> f64 {
    js_max(0.0, 1000.0 * secs / ACCELERATION) / step_time()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_steps_follow_the_forks_doubles() {
        // node: Math.max(0, 1000 * (S / 10)) / (1000 / 30 / 10)
        assert_eq!(instrumented_steps(1.0), 30.0);
        assert_eq!(instrumented_steps(0.05), 1.5);
        assert_eq!(instrumented_steps(0.7), 20.999999999999996);
        // node: Math.max(0, 1000 * S / 10) / (1000 / 30 / 10): the sound's order of operations
        assert_eq!(sound_steps(0.7), 21.0);
        assert_eq!(instrumented_steps(-3.0), 0.0);
        assert_eq!(instrumented_steps(f64::NAN), 0.0);
        assert_eq!(instrumented_steps(f64::INFINITY), f64::INFINITY);
    }
}
