//! Music extension (scratch-vm `extensions/scratch3_music`): no audio, but notes,
//! drums and rests wait their duration in beats on the virtual clock.

use crate::engine::{Ctx, State, ThRef};
use crate::program::{Cmd, Program};
use crate::value::{clamp, js_round, wrap_clamp};

/// Drums and instruments of scratch-vm's music extension.
const DRUM_COUNT: f64 = 18.0;
const INSTRUMENT_COUNT: f64 = 21.0;

pub(crate) fn run(st: &mut State, prog: &Program, t: ThRef, cmd: &Cmd, base: usize) {
    let me = st.th(t).target;
    match *cmd {
        Cmd::MusicDrum | Cmd::MusicRest => {
            let beats_slot = if matches!(cmd, Cmd::MusicRest) { 0 } else { 1 };
            if !timer_running(st, t) {
                let beats = clamp(st.num_arg(prog, base, beats_slot), 0.0, 100.0);
                start_timer(st, t, (60.0 / st.ext.tempo) * beats);
            } else {
                check_timer(st, t);
            }
        }
        Cmd::MusicNote => {
            if !timer_running(st, t) {
                let beats = clamp(st.num_arg(prog, base, 1), 0.0, 100.0);
                if beats == 0.0 {
                    return;
                }
                start_timer(st, t, (60.0 / st.ext.tempo) * beats);
            } else {
                check_timer(st, t);
            }
        }
        Cmd::MusicInstrument { midi } => {
            let mut n = js_round(st.num_arg(prog, base, 0)) - 1.0;
            if midi {
                // MIDI program numbers map onto the 21 instruments (scratch-vm's MIDI_INSTRUMENTS).
                n = midi_instrument(n) - 1.0;
            }
            if let Some(x) = st.target_mut(me) {
                x.instrument = wrap_clamp(n, 0.0, INSTRUMENT_COUNT - 1.0);
            }
        }
        Cmd::MusicTempo { change } => {
            let v = st.num_arg(prog, base, 0);
            let tempo = if change { v + st.ext.tempo } else { v };
            st.ext.tempo = clamp(tempo, 20.0, 500.0);
        }
        _ => {}
    }
    let _ = DRUM_COUNT;
}

fn timer_running(st: &State, t: ThRef) -> bool {
    matches!(st.th(t).stack.last().map(|f| &f.ctx), Some(Ctx::Timer { .. }))
}

/// `_startStackTimer`: the duration is in seconds here.
fn start_timer(st: &mut State, t: ThRef, secs: f64) {
    let now = st.clock.now;
    if let Some(f) = st.thm(t).stack.last_mut() {
        f.ctx = Ctx::Timer { start: now, duration: secs };
    }
    st.yield_thread(t);
}

/// `_checkStackTimer`. Whisker leaves these timers on the wall clock (`whisker_wall`).
fn check_timer(st: &mut State, t: ThRef) {
    let now = st.clock.now;
    if let Some(Ctx::Timer { start, duration }) = st.th(t).stack.last().map(|f| f.ctx.clone())
        && st.whisker_wall(now - start) < duration * 1000.0
    {
        st.yield_thread(t);
    }
}

/// scratch-vm's `MIDI_INSTRUMENTS` table (1-based instrument for MIDI program n+1), 0 when absent.
fn midi_instrument(i: f64) -> f64 {
    const T: [f64; 128] = [
        1., 1., 1., 1., 2., 2., 4., 4., 17., 17., 17., 16., 19., 16., 17., 17., 3., 3., 3., 3., 3., 3., 3., 3., 4., 4.,
        5., 5., 5., 5., 5., 5., 6., 6., 6., 6., 6., 6., 6., 6., 8., 8., 8., 8., 8., 7., 8., 19., 8., 8., 8., 8., 15.,
        15., 15., 19., 9., 9., 9., 9., 9., 9., 9., 9., 11., 11., 11., 11., 14., 14., 14., 10., 12., 12., 13., 13., 13.,
        13., 12., 12., 20., 20., 20., 20., 20., 20., 20., 20., 21., 21., 21., 21., 21., 21., 21., 21., 21., 21., 21.,
        21., 21., 21., 21., 21., 4., 4., 4., 4., 17., 14., 8., 10., 17., 17., 18., 19., 1., 1., 1., 1., 21., 21., 21.,
        21., 21., 21., 21., 21.,
    ];
    if (0.0..128.0).contains(&i) && i.fract() == 0.0 { T[i as usize] } else { 0.0 }
}
