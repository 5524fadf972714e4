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
//! * Layers are read as Whisker reads them, from the renderer's draw list ([`DrawList`]).
//! * The wall clock: music beats, notes and rests (the music extension's `Timer` reads `Date`,
//!   not accelerated) and `when timer >` (the project timer, real time × 10) depend on how fast
//!   Whisker's machine steps; here they run on the virtual clock unless
//!   [`crate::VmOptions::whisker_wall_ms`] says how long a step takes ([`uses_wall_clock`]).
//! * More clones: Whisker loads the project three times into one VM before a test runs, and
//!   each load disposes every target of the one before, each disposal lowering the clone
//!   counter that scratch-vm never resets; so [`clone_allowance`] clones more may be alive.
//! * Drags move glides: the test driver's `dragSprite` is `setXY(x, y, true, true)`, whose
//!   fourth argument also sets the start of the sprite's last glide (`glidingStackFrame`) to
//!   the requested position; a glide still running goes on from there
//!   (`blocks::motion`'s `drag_glide`).
//! * A direction saved outside (−180, 180] is loaded as saved (the fork's `sb3.js` does not
//!   wrap it; `engine/runtime.rs`), and `loadSaveState` restores it so.
//! * Bounds come from the convex hull the live renderer kept, made from the silhouette of
//!   the moment it was computed, not from a larger MIP made since (`geometry::cpu`'s
//!   `kept_hull_level`).
//! * Wrapping a target takes its listeners away: under a test driver, the first time a test
//!   wraps a target (`Sprites.wrapTarget`, also for every clone as it is made) Whisker calls
//!   `target.removeAllListeners()`, and a sprite whose pen is down stops drawing until its next
//!   `pen up` and `pen down` (`Vm::whisker_wrap`, `extensions::pen`).

use crate::engine::TargetId;
use crate::project::Project;
use crate::value::js_max;

/// The acceleration factor of the Whisker study (`-a 10`; the paper's RQ1 choice).
pub const ACCELERATION: f64 = 10.0;

/// What `runtime.stepTimer` gains per step.
pub const TIMER_INCREMENT: f64 = 0.075;

/// `Math.random` calls of one `uid()` (a new target, a bubble update).
pub const UID_DRAWS: u32 = 20;

/// Real milliseconds per step for which [`crate::VmOptions::whisker_wall_ms`] reproduces
/// what Whisker's wall-clock blocks did on the machine that recorded its verdicts here (one
/// `play drum for 0.25 beats` lasted 27–31 steps in one Whisker run, 8–9 ms a step; Chromium
/// does not step faster than 4 ms), bracketing it: assertion generation replays each test at
/// every one of them and keeps only the checks that hold at all.
pub const WALL_MS_PER_STEP: [f64; 3] = [4.0, 8.5, 16.0];

/// Whether `project` has blocks Whisker times on the wall clock (above): music beats, notes
/// and rests, and `when timer >` hats.
pub fn uses_wall_clock(project: &Project) -> bool {
    project.blocks.iter().any(|b| match b.opcode.as_str() {
        "music_playDrumForBeats" | "music_midiPlayDrumForBeats" | "music_restForBeats" | "music_playNoteForBeats" => {
            true
        }
        "event_whengreaterthan" => {
            b.fields.iter().any(|f| f.name == "WHENGREATERTHANMENU" && f.value.eq_ignore_ascii_case("timer"))
        }
        _ => false,
    })
}

/// Clones Whisker's VM allows beyond `Runtime.MAX_CLONES`, for a project of `targets` targets
/// (the stage and the sprites). Before a test (or a search) the project is loaded by the file
/// input, by the run button and by `VMWrapper.setup`; the last two loads start with
/// `runtime.dispose()`, which disposes the targets of the load before, and `dispose()` lowers
/// `_cloneCounter` for originals too. Measured in the real Whisker (a sprite cloning itself
/// every step: counter 16 after 20 clones with 2 targets, 12 with 4).
pub fn clone_allowance(targets: usize) -> u32 {
    u32::try_from(targets).unwrap_or(u32::MAX / 4).saturating_mul(2)
}

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

/// The sample rate of Whisker's `AudioContext`: headless Chromium without an audio device,
/// as the whisker-oracle runs it (read there: `audioEngine.audioContext.sampleRate`). On a
/// machine whose audio hardware runs at 48 kHz a PCM sound's buffer may differ by one sample.
pub const AUDIO_CONTEXT_RATE: u64 = 44_100;

/// The duration in seconds of the buffer Whisker's scratch-audio decodes from a sound
/// (`buffer.duration`, which the fork's `play sound until done` waits) from the shape of its
/// WAV file (for MP3 and absent files the caller keeps the metadata). Read in the real Whisker
/// on every encoding Scratch saves:
///
/// - PCM: Chromium decodes it and resamples it to the context's rate, the length rounded down
///   (48 kHz sounds of 100 903, 38 801, 6 130 and 891 frames hold 92 704, 35 648, 5 631 and
///   818; 11 025 and 22 050 Hz ones exactly 4 and 2 times as many);
/// - IMA ADPCM: Chromium cannot decode it, so scratch-audio's own decoder makes a buffer at
///   the file's rate with its own count of samples (`numberOfSamples`: one sample per block
///   fewer than the blocks hold, plus one).
pub fn sound_secs(wav: &crate::project::WavShape) -> f64 {
    use crate::project::WavKind;
    let rate = u64::from(wav.rate);
    match wav.kind {
        WavKind::Pcm { block_align } => {
            let frames = wav.data_bytes / u64::from(block_align);
            let resampled = frames as u128 * AUDIO_CONTEXT_RATE as u128 / rate as u128;
            resampled as f64 / AUDIO_CONTEXT_RATE as f64
        }
        WavKind::ImaAdpcm { samples_per_block } => {
            // scratch-audio: block size `(samplesPerBlock - 1) / 2 + 4` bytes, as a double.
            let block = (f64::from(samples_per_block) - 1.0) / 2.0 + 4.0;
            let available = wav.data_bytes as f64;
            let blocks = (available / block).trunc();
            let full = blocks * (2.0 * (block - 4.0)) + 1.0;
            let rest = available % block;
            let sub = (rest - 4.0).max(0.0) * 2.0;
            let incomplete = rest.min(1.0);
            // `createBuffer` takes the length as an unsigned long and throws on an empty buffer
            // or a rate outside 3–768 kHz; scratch-audio then makes a one-sample silence.
            let length = (full + sub + incomplete).trunc();
            if length < 1.0 || !(3_000..=768_000).contains(&rate) {
                return 1.0 / AUDIO_CONTEXT_RATE as f64;
            }
            length / rate as f64
        }
    }
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

    #[test]
    fn sound_buffers_are_as_whiskers_chromium_decodes_them() {
        use crate::project::{WavKind, WavShape};
        let pcm = |rate, frames: u64| WavShape { kind: WavKind::Pcm { block_align: 2 }, rate, data_bytes: 2 * frames };
        // `buffer.duration` as read in Whisker (`shooter_game`'s Tennis Hit, Scratch's pop, a
        // 48 kHz sound of cfgDistance__MoveWithConditions, Bite and eggs in ADPCM).
        assert_eq!(sound_secs(&pcm(22050, 14515)), 0.6582766439909297);
        assert_eq!(sound_secs(&pcm(11025, 258)), 0.023401360544217688);
        assert_eq!(sound_secs(&pcm(48000, 100_903)), 92704.0 / 44100.0);
        let adpcm =
            |bytes| WavShape { kind: WavKind::ImaAdpcm { samples_per_block: 1017 }, rate: 22050, data_bytes: bytes };
        assert_eq!(sound_secs(&adpcm(4096)), 0.36866213151927435);
        assert_eq!(sound_secs(&adpcm(169_472)), 15.25156462585034);
        // `numberOfSamples` counts one sample even for an empty data chunk.
        assert_eq!(sound_secs(&adpcm(0)), 1.0 / 22050.0);
        let bad_rate = WavShape { rate: 1000, ..adpcm(4096) };
        assert_eq!(sound_secs(&bad_rate), 1.0 / 44100.0, "createBuffer throws: scratch-audio's one-sample silence");
    }

    /// The list as it was kept before it counted its bubbles and skipped moves to where a
    /// drawable already is: scans and splices only.
    fn plain_ops(items: &mut Vec<Drawn>, op: u64, id: TargetId, other: TargetId) {
        let pos = |v: &Vec<Drawn>, d: Drawn| v.iter().position(|&x| x == d);
        match op % 6 {
            0 | 1 => {
                let b = Drawn::Bubble(id);
                match (op % 6 == 0, pos(items, b).is_some()) {
                    (true, false) => items.push(b),
                    (false, true) => items.retain(|&x| x != b),
                    _ => {}
                }
            }
            2 | 3 => {
                if let Some(i) = pos(items, Drawn::Target(id)) {
                    let d = items.remove(i);
                    if op % 6 == 2 { items.push(d) } else { items.insert(0, d) }
                }
            }
            4 => items.retain(|&x| matches!(x, Drawn::Target(_))),
            _ => {
                items.retain(|&x| x != Drawn::Target(id) && x != Drawn::Bubble(id));
                match pos(items, Drawn::Target(other)) {
                    Some(i) => items.insert(i, Drawn::Target(id)),
                    None => items.push(Drawn::Target(id)),
                }
            }
        }
    }

    #[test]
    fn draw_list_keeps_the_order_a_plain_list_of_scans_keeps() {
        let id = |k: u64| TargetId { slot: (k % 7) as u32 + 1, gn: 0 };
        let mut rng = crate::rng::SplitMix64::new(36);
        for _ in 0..200 {
            let mut list = DrawList::new((1..=5).map(id), true);
            let mut plain = list.items.clone();
            for _ in 0..60 {
                let (op, a, b) = (rng.next_u64(), id(rng.next_u64()), id(rng.next_u64()));
                match op % 6 {
                    0 | 1 => list.bubble(a, op % 6 == 0),
                    2 | 3 => list.front_back(a, op % 6 == 2),
                    4 => list.clear_bubbles(),
                    _ => {
                        list.remove(a);
                        list.add_clone(a, b);
                    }
                }
                plain_ops(&mut plain, op, a, b);
                assert_eq!(list.items, plain);
                let bubbles = plain.iter().filter(|x| matches!(x, Drawn::Bubble(_))).count();
                assert_eq!(list.bubbles, bubbles);
                assert_eq!(list.layer_order(a), plain.iter().position(|&x| x == Drawn::Target(a)).map(|i| i + 2));
            }
        }
    }
}

/// One drawable of scratch-render's sprite layer group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Drawn {
    Target(TargetId),
    /// The say/think bubble of a target (a text skin drawn in the sprite group).
    Bubble(TargetId),
}

/// scratch-render's sprite layer group, back to front, as Whisker's `layerOrder` reads it
/// (`getDrawableOrder`): the targets and their say/think bubbles, which
/// `execution order` (scratch-vm's `executableTargets`) leaves out. A bubble is created on
/// top of the group when a visible target starts to speak and destroyed when it stops or
/// hides; relative layer moves count bubbles, so the two orders can differ.
#[derive(Debug, Clone, Default)]
pub(crate) struct DrawList {
    items: Vec<Drawn>,
    /// Drawables below the sprite group: the stage, and the pen layer if the pen extension is
    /// loaded (scratch-vm creates it with the extension).
    below: usize,
    /// How many of `items` are bubbles: a `show` or `hide` of one of hundreds of clones need
    /// not scan the list when none is.
    bubbles: usize,
}

impl DrawList {
    /// The sprites back to front, above the stage and (`pen`) the pen layer.
    pub(crate) fn new(sprites: impl Iterator<Item = TargetId>, pen: bool) -> Self {
        Self { items: sprites.map(Drawn::Target).collect(), below: 1 + usize::from(pen), bubbles: 0 }
    }

    fn position(&self, d: Drawn) -> Option<usize> {
        self.items.iter().position(|&x| x == d)
    }

    /// `getDrawableOrder` of a target: its index in the whole draw list.
    pub(crate) fn layer_order(&self, id: TargetId) -> Option<usize> {
        self.position(Drawn::Target(id)).map(|i| i + self.below)
    }

    /// A clone's `initDrawable` (on top) then `goBehindOther(parent)`.
    pub(crate) fn add_clone(&mut self, clone: TargetId, parent: TargetId) {
        match self.position(Drawn::Target(parent)) {
            Some(i) => self.items.insert(i, Drawn::Target(clone)),
            None => self.items.push(Drawn::Target(clone)),
        }
    }

    /// A target's drawable and its bubble are destroyed.
    pub(crate) fn remove(&mut self, id: TargetId) {
        self.bubble(id, false);
        self.items.retain(|&x| x != Drawn::Target(id));
    }

    /// `setDrawableOrder(id, ±Infinity)`: to the front or the back of the group.
    pub(crate) fn front_back(&mut self, id: TargetId, front: bool) {
        if let Some(i) = self.position(Drawn::Target(id)) {
            if i == if front { self.items.len() - 1 } else { 0 } {
                return;
            }
            let d = self.items.remove(i);
            if front {
                self.items.push(d);
            } else {
                self.items.insert(0, d);
            }
        }
    }

    /// `setDrawableOrder(id, n, group, true)`: `n` places forward (backward if negative),
    /// bubbles counted, clamped to the group; JS `splice` truncates a fractional index.
    pub(crate) fn forward(&mut self, id: TargetId, n: f64) {
        let Some(old) = self.position(Drawn::Target(id)) else { return };
        let len = self.items.len();
        let d = self.items.remove(old);
        // The renderer clamps to [group start, group end] with the end taken before removal.
        let target = (old as f64 + n).max(0.0).min(len as f64);
        let idx = crate::value::splice_index(target, self.items.len());
        self.items.insert(idx, d);
    }

    /// `_renderBubble`: a bubble is drawn (`shown`: a visible target with text) or destroyed;
    /// a new one goes on top of the group.
    pub(crate) fn bubble(&mut self, id: TargetId, shown: bool) {
        if !shown && self.bubbles == 0 {
            return;
        }
        let b = Drawn::Bubble(id);
        let at = self.position(b);
        if shown && at.is_none() {
            self.items.push(b);
            self.bubbles += 1;
        } else if let (false, Some(i)) = (shown, at) {
            // A target has at most one bubble.
            self.items.remove(i);
            self.bubbles -= 1;
        }
    }

    /// `stop all` clears every bubble.
    pub(crate) fn clear_bubbles(&mut self) {
        if self.bubbles > 0 {
            self.items.retain(|x| matches!(x, Drawn::Target(_)));
            self.bubbles = 0;
        }
    }
}
