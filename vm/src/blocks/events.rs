//! Event blocks (scratch-vm `blocks/scratch3_event.js`): broadcasts and the
//! edge-activated hat predicates.

use crate::engine::value::{to_number, with_str};
use crate::engine::{Ctx, State, ThRef, V};
use crate::program::{Bcast, Cmd, HatKind, Program};
use crate::value::{js_to_lower, js_to_upper};

pub(crate) fn run(st: &mut State, prog: &Program, t: ThRef, cmd: &Cmd, base: usize) {
    match cmd {
        Cmd::Broadcast(b) => {
            if let Some(name) = resolve(st, prog, b, base) {
                st.start_hats(prog, HatKind::Broadcast, Some(&name), None);
            }
        }
        Cmd::BroadcastAndWait(b) => {
            let started_before = matches!(st.th(t).stack.last().map(|f| &f.ctx), Some(Ctx::Started(_)));
            if !started_before {
                let Some(name) = resolve(st, prog, b, base) else { return };
                let started = st.start_hats(prog, HatKind::Broadcast, Some(&name), None);
                let empty = started.is_empty();
                if let Some(f) = st.thm(t).stack.last_mut() {
                    f.ctx = Ctx::Started(started);
                }
                if empty {
                    return;
                }
            }
            wait_for_started(st, t);
        }
        _ => {}
    }
}

/// The upper-cased message name a broadcast block sends, if scratch-vm finds one.
fn resolve(st: &State, prog: &Program, b: &Bcast, base: usize) -> Option<String> {
    match b {
        Bcast::Static(n) => n.as_ref().map(|s| s.to_string()),
        Bcast::Nothing => None,
        Bcast::Dynamic => {
            let v = st.arg(base, 0);
            with_str(prog, v, |name| {
                if name.is_empty() {
                    return None;
                }
                let lower = js_to_lower(name);
                let stage = prog.def(prog.stage);
                stage.broadcasts.iter().find(|(_, n)| js_to_lower(n) == lower).map(|(_, n)| js_to_upper(n))
            })
        }
    }
}

/// The wait of `broadcast and wait` / `switch backdrop and wait`.
pub(crate) fn wait_for_started(st: &mut State, t: ThRef) {
    // Read-only checks on the started threads first (no copy of the list: a broadcast-and-wait
    // in a loop checks it every tick), then act.
    let (waiting, all_waiting) = match st.th(t).stack.last().map(|f| &f.ctx) {
        Some(Ctx::Started(started)) => {
            (started.iter().any(|&x| st.th_valid(x) && st.in_list(x)), started.iter().all(|&x| st.is_waiting_thread(x)))
        }
        _ => return,
    };
    if waiting {
        if all_waiting {
            st.thm(t).status = crate::engine::Status::YieldTick;
        } else {
            st.yield_thread(t);
        }
    }
}

/// Edge-activated hat predicates (`when timer/loudness >`, `when touching`),
/// with scratch-vm's edge detection per target and hat block.
pub(crate) fn hat_predicate(st: &mut State, prog: &Program, t: ThRef, cur: u32, cmd: &Cmd, base: usize) {
    let target = st.th(t).target;
    // Branch distance of the predicate (instrumentation): numeric for `>`, else 0/1
    // (touching: the geometry's or the centres' distance).
    let mut dist: Option<(f64, f64)> = None;
    let value = match cmd {
        Cmd::HatGreaterThan { timer } => {
            let v = to_number(prog, st.arg(base, 0));
            let a = if *timer { st.clock_timer() } else { st.io.loudness };
            let holds = a > v;
            dist = Some(if holds { (0.0, a - v) } else { (v - a + 1.0, 0.0) });
            holds
        }
        Cmd::HatTouching => {
            let m = st.arg(base, 0).clone();
            let touching = st.touching_object(prog, target, &m);
            // The search only when it can lower the recorded minimum (`distance_bounds`).
            if !touching && st.observe.instrument.as_ref().is_some_and(|i| i.distance_bounds(cur).0 > 0.0) {
                dist = Some((st.touching_distance(prog, target, &m), 0.0));
            }
            touching
        }
        Cmd::HatMakeyKey => {
            let k = st.arg(base, 0).clone();
            let named = with_str(prog, &k, |s| match s {
                "SPACE" => Some("space"),
                "LEFT" => Some("left arrow"),
                "UP" => Some("up arrow"),
                "RIGHT" => Some("right arrow"),
                "DOWN" => Some("down arrow"),
                _ => None,
            });
            let key = match named {
                Some(n) => V::Str(crate::engine::value::JsStr::from(n)),
                None => k,
            };
            st.key_is_down(prog, &key) && st.makey_frame_toggle()
        }
        Cmd::HatMakeyCode => {
            let seq = with_str(prog, st.arg(base, 0), js_to_upper);
            let parts: Vec<String> = seq.split(' ').map(str::to_string).collect();
            if parts.len() < 2 {
                false
            } else {
                match st.ext.makey_sequences.iter().position(|s| s.0 == seq) {
                    Some(i) => st.ext.makey_sequences[i].2,
                    None => {
                        st.ext.makey_sequences.push((seq, parts, false));
                        false
                    }
                }
            }
        }
        // No camera: the motion amount is -1.
        Cmd::HatVideoMotion => -1.0 > crate::engine::value::js_number(prog, st.arg(base, 0)),
        _ => return,
    };
    if let Some(ins) = &mut st.observe.instrument {
        let (dt, df) = dist.unwrap_or(if value { (0.0, 1.0) } else { (1.0, 0.0) });
        ins.condition(cur, value, dt, df);
    }
    let Some(tg) = st.target_mut(target) else { return };
    let old = tg.edge.iter_mut().find(|(b, _)| *b == cur);
    let activated = match old {
        Some(e) => {
            let was = e.1;
            e.1 = value;
            !was && value
        }
        None => {
            tg.edge.push((cur, value));
            value
        }
    };
    if !activated {
        st.thm(t).retire();
    }
    let _ = V::Undef;
}
