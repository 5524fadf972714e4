//! Text to speech, translate and video sensing (scratch-vm `extensions/`), as the
//! oracle runs them: no network (speech finishes after one promise checkpoint,
//! translations report `""`), no camera (video motion and direction are -1).

use crate::engine::value::{to_number, with_str};
use crate::engine::{Resume, State, ThRef, V};
use crate::program::{Cmd, Program, Rep};
use crate::value::clamp;

pub(crate) fn run(st: &mut State, prog: &Program, t: ThRef, cmd: &Cmd, base: usize) {
    let me = st.th(t).target;
    match *cmd {
        // Whisker's fork without the service: the sound never reaches its cache, and the block
        // yields (its text evaluated again) every tick.
        Cmd::Speak if st.whisker() && st.opts.whisker_offline_speech => st.yield_thread(t),
        // The synthesis request fails at once; the block's promise resolves at the next checkpoint.
        Cmd::Speak => st.promise_wait(t, Resume::Advance),
        Cmd::SetVoice => {
            let v = st.arg(base, 0).clone();
            let n = with_str(prog, &v, crate::blocks::sound::js_parse_int);
            let voice = if !n.is_nan() {
                Some(crate::value::wrap_clamp(n - 1.0, 0.0, 4.0) as u8)
            } else {
                with_str(prog, &v, |s| match s {
                    "ALTO" => Some(0),
                    "TENOR" => Some(1),
                    "SQUEAK" => Some(2),
                    "GIANT" => Some(3),
                    "KITTEN" => Some(4),
                    _ => None,
                })
            };
            if let (Some(v), Some(x)) = (voice, st.target_mut(me)) {
                x.voice = v;
            }
        }
        Cmd::SetLanguage => {
            // A value that is no language code is looked up as a language name with
            // `locale.toLowerCase()`, which only a string has: anything else throws.
            let site = "Scratch3Text2SpeechBlocks.setCurrentLanguage (extensions/scratch3_text2speech/index.js:526)";
            let arg = st.arg(base, 0).clone();
            if st.throws_on_nullish(&arg, "toLowerCase", site) {
                return;
            }
            if matches!(arg, V::Num(_) | V::True | V::False) {
                let msg = format!("TypeError: locale.toLowerCase is not a function @ {site}");
                st.budget.error = Some(crate::engine::StepError(msg));
                return;
            }
            let v = crate::engine::value::to_rc_string(prog, st.arg(base, 0));
            st.ext.tts_language = Some(v);
        }
        Cmd::VideoToggle => {
            let v = crate::engine::value::to_rc_string(prog, st.arg(base, 0));
            st.ext.video_state = match &*v {
                "off" => 0,
                "on" => 1,
                "on-flipped" => 2,
                _ => st.ext.video_state,
            };
        }
        Cmd::VideoTransparency => {
            let v = to_number(prog, st.arg(base, 0));
            st.ext.video_transparency = clamp(v, 0.0, 100.0);
        }
        _ => {}
    }
}

/// Reporter value and whether scratch-vm returns it through a promise.
pub(crate) fn eval(st: &mut State, prog: &Program, _t: ThRef, rep: &Rep, base: usize) -> (V, bool) {
    match rep {
        Rep::Translate => {
            let words = st.arg(base, 0).clone();
            let lang = st.arg(base, 1);
            // `/^\d+$/.test(WORDS)`: digits are returned (as given) without a request.
            let digits = with_str(prog, &words, |s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
            if digits {
                return (words, true);
            }
            // The cache of the last translation starts as ("", "") -> "".
            let is_empty_str = |v: &V| matches!(v, V::Lit(_) | V::Str(_)) && with_str(prog, v, str::is_empty);
            if is_empty_str(&words) && is_empty_str(lang) {
                return (V::lit(prog.lit_empty), false);
            }
            (V::lit(prog.lit_empty), true)
        }
        Rep::ViewerLanguage => (V::Str(crate::engine::value::JsStr::from("English")), false),
        Rep::VideoOn => (V::num(-1.0), false),
        _ => (V::Undef, false),
    }
}
