//! Sound blocks (scratch-vm `blocks/scratch3_sound.js`). Without an audio engine
//! (headless) sounds take no time; the profiles with sound durations make
//! `play sound until done` wait `sampleCount / rate` seconds of virtual time.

use crate::engine::value::{to_number, with_str};
use crate::engine::{Resume, State, ThRef, TimerKind, V};
use crate::program::{Cmd, Program};
use crate::value::{clamp, wrap_clamp};

pub(crate) fn run(st: &mut State, prog: &Program, t: ThRef, cmd: &Cmd, base: usize) {
    let me = st.th(t).target;
    match *cmd {
        // Whisker's fork: `play sound until done` is a stack timer in steps; with no such sound
        // its `stackTimerFinished` compares NaN with undefined and the thread waits for ever.
        Cmd::PlaySound { wait: true } if st.whisker() => {
            if super::control::step_timer_phase(st, t) != super::control::StepTimer::NeedsInit {
                return;
            }
            let Some(x) = st.target(me) else { return };
            let sounds = &prog.def(x.def).sounds;
            match sound_index(prog, sounds, st.arg(base, 0)) {
                Some(i) => {
                    // The decoded buffer's duration (project.json's metadata when the file's
                    // header was not read).
                    let secs = sounds[i].whisker_secs.unwrap_or(sounds[i].duration_ms / 1000.0);
                    let steps = crate::whisker::sound_steps(secs);
                    super::control::start_step_timer(st, t, steps);
                }
                None => st.yield_thread(t),
            }
        }
        Cmd::PlaySound { wait } => {
            if !st.sound_durations {
                return;
            }
            let Some(x) = st.target(me) else { return };
            let sounds = &prog.def(x.def).sounds;
            let Some(i) = sound_index(prog, sounds, st.arg(base, 0)) else { return };
            let dur = sounds[i].duration_ms;
            if wait {
                st.add_timer(dur, TimerKind::Sound { thread: t });
                st.promise_wait_external(t);
            }
        }
        Cmd::StopAllSounds if st.sound_durations => {
            {
                // Stopping a sound ends its "play until done" wait.
                let mut resumed = Vec::new();
                st.timers.list.retain(|tm| match tm.kind {
                    TimerKind::Sound { thread } => {
                        resumed.push(thread);
                        false
                    }
                    _ => true,
                });
                for th in resumed {
                    st.microtasks.push((th, Resume::Advance));
                }
            }
        }
        Cmd::StopAllSounds => {}
        Cmd::SoundEffect { change, effect } => {
            let v = st.num_arg(prog, base, 0);
            let Some(e) = effect else { return };
            let Some(x) = st.target_mut(me) else { return };
            let cur = if change { x.sound_effects[e as usize] + v } else { v };
            let (lo, hi) = if e == 0 { (-360.0, 360.0) } else { (-100.0, 100.0) };
            x.sound_effects[e as usize] = clamp(cur, lo, hi);
            st.promise_wait(t, Resume::Advance);
        }
        Cmd::ClearSoundEffects => {
            if let Some(x) = st.target_mut(me) {
                x.sound_effects = [0.0; 2];
            }
        }
        Cmd::SetVolume | Cmd::ChangeVolume => {
            let mut v = st.num_arg(prog, base, 0);
            let Some(x) = st.target_mut(me) else { return };
            if matches!(cmd, Cmd::ChangeVolume) {
                v += x.volume;
            }
            x.volume = clamp(v, 0.0, 100.0);
            st.promise_wait(t, Resume::Advance);
        }
        _ => {}
    }
}

pub(crate) fn volume(st: &State, t: ThRef) -> V {
    let me = st.th(t).target;
    st.target(me).map_or(V::Undef, |x| V::num(x.volume))
}

/// `_getSoundIndex`: by name, else a 1-based index (`parseInt`), wrapped.
fn sound_index(prog: &Program, sounds: &[crate::program::SoundInfo], v: &V) -> Option<usize> {
    if sounds.is_empty() {
        return None;
    }
    let by_name = match v {
        V::Lit(_) | V::Str(_) => with_str(prog, v, |s| sounds.iter().position(|x| &*x.name == s)),
        _ => None,
    };
    if by_name.is_some() {
        return by_name;
    }
    let n = with_str(prog, v, js_parse_int);
    if n.is_nan() {
        return None;
    }
    let _ = to_number;
    Some(wrap_clamp(n - 1.0, 0.0, (sounds.len() - 1) as f64) as usize)
}

/// JS `parseInt(s, 10)`.
pub(crate) fn js_parse_int(s: &str) -> f64 {
    let t = s.trim_start_matches(crate::value::is_js_whitespace);
    let (sign, rest) = match t.as_bytes().first() {
        Some(b'-') => (-1.0, &t[1..]),
        Some(b'+') => (1.0, &t[1..]),
        _ => (1.0, t),
    };
    let digits: &str = &rest[..rest.bytes().take_while(u8::is_ascii_digit).count()];
    if digits.is_empty() {
        return f64::NAN;
    }
    sign * digits.parse::<f64>().unwrap_or(f64::NAN)
}
