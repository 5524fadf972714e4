//! The opcode tables of scratch-vm 5.0.300: which opcodes are primitives (commands with their
//! argument slots, reporters, hats), which are known without a function (menus, shadows), and
//! which extension an opcode belongs to.

/// Extensions scratch-vm 5.0.300 can load by id.
pub(crate) const BUILTIN_EXTENSIONS: [&str; 11] = [
    "pen",
    "wedo2",
    "music",
    "microbit",
    "text2speech",
    "translate",
    "videoSensing",
    "ev3",
    "makeymakey",
    "boost",
    "gdxfor",
];
const CORE_PREFIXES: [&str; 12] = [
    "argument",
    "colour",
    "control",
    "data",
    "event",
    "looks",
    "math",
    "motion",
    "operator",
    "procedures",
    "sensing",
    "sound",
];

/// Opcodes scratch-vm registers as primitives (core blocks and built-in extensions).
pub(super) fn has_function(op: &str) -> bool {
    cmd_of_opcode(op).is_some() || rep_of_opcode(op).is_some() || HAT_WITH_FN.contains(&op)
}

/// Extension hats with a predicate function (never started in scratch-vm 5.0.300:
/// extension hats are not edge-activated there).
const HAT_WITH_FN: [&str; 4] = [
    "makeymakey_whenMakeyKeyPressed",
    "makeymakey_whenCodePressed",
    "videoSensing_whenMotionGreaterThan",
    "event_whentouchingobject",
];

/// Hats registered in `runtime._hats` (inputs that are hats are skipped by scratch-vm).
pub(super) fn is_hat_opcode(op: &str) -> bool {
    matches!(
        op,
        "event_whenflagclicked"
            | "event_whenkeypressed"
            | "event_whenthisspriteclicked"
            | "event_whentouchingobject"
            | "event_whenstageclicked"
            | "event_whenbackdropswitchesto"
            | "event_whengreaterthan"
            | "event_whenbroadcastreceived"
            | "control_start_as_clone"
            | "makeymakey_whenMakeyKeyPressed"
            | "makeymakey_whenCodePressed"
            | "videoSensing_whenMotionGreaterThan"
    )
}

/// Command opcodes with their slot names (argument order of the implementation).
pub(super) fn cmd_of_opcode(op: &str) -> Option<(&'static str, &'static [&'static str])> {
    let r: (&'static str, &'static [&'static str]) = match op {
        "control_repeat" => ("repeat", &["TIMES"]),
        "control_repeat_until" => ("repeat_until", &["CONDITION"]),
        "control_while" => ("while", &["CONDITION"]),
        "control_for_each" => ("for_each", &["VALUE"]),
        "control_forever" => ("forever", &[]),
        "control_wait" => ("wait", &["DURATION"]),
        "control_wait_until" => ("wait_until", &["CONDITION"]),
        "control_if" => ("if", &["CONDITION"]),
        "control_if_else" => ("if_else", &["CONDITION"]),
        "control_stop" => ("stop", &[]),
        "control_create_clone_of" => ("create_clone", &["CLONE_OPTION"]),
        "control_delete_this_clone" => ("delete_clone", &[]),
        "control_incr_counter" => ("incr_counter", &[]),
        "control_clear_counter" => ("clear_counter", &[]),
        "control_all_at_once" => ("all_at_once", &[]),
        "event_broadcast" => ("broadcast", &["BROADCAST_INPUT"]),
        "event_broadcastandwait" => ("broadcast_wait", &["BROADCAST_INPUT"]),
        "event_whengreaterthan" => ("hat_gt", &["VALUE"]),
        "event_whentouchingobject" => ("hat_touching", &["TOUCHINGOBJECTMENU"]),
        "makeymakey_whenMakeyKeyPressed" => ("hat_makey_key", &["KEY"]),
        "makeymakey_whenCodePressed" => ("hat_makey_code", &["SEQUENCE"]),
        "videoSensing_whenMotionGreaterThan" => ("hat_video", &["REFERENCE"]),
        "looks_say" => ("say", &["MESSAGE"]),
        "looks_sayforsecs" => ("sayforsecs", &["MESSAGE", "SECS"]),
        "looks_think" => ("think", &["MESSAGE"]),
        "looks_thinkforsecs" => ("thinkforsecs", &["MESSAGE", "SECS"]),
        "looks_show" => ("show", &[]),
        "looks_hide" => ("hide", &[]),
        "looks_hideallsprites" | "looks_changestretchby" | "looks_setstretchto" => ("nop", &[]),
        "looks_switchcostumeto" => ("switchcostume", &["COSTUME"]),
        "looks_switchbackdropto" => ("switchbackdrop", &["BACKDROP"]),
        "looks_switchbackdroptoandwait" => ("switchbackdrop_wait", &["BACKDROP"]),
        "looks_nextcostume" => ("nextcostume", &[]),
        "looks_nextbackdrop" => ("nextbackdrop", &[]),
        "looks_changeeffectby" => ("changeeffect", &["CHANGE"]),
        "looks_seteffectto" => ("seteffect", &["VALUE"]),
        "looks_cleargraphiceffects" => ("cleareffects", &[]),
        "looks_changesizeby" => ("changesize", &["CHANGE"]),
        "looks_setsizeto" => ("setsize", &["SIZE"]),
        "looks_gotofrontback" => ("frontback", &[]),
        "looks_goforwardbackwardlayers" => ("layers", &["NUM"]),
        "motion_movesteps" => ("move", &["STEPS"]),
        "motion_gotoxy" => ("gotoxy", &["X", "Y"]),
        "motion_goto" => ("goto", &["TO"]),
        "motion_turnright" => ("turnright", &["DEGREES"]),
        "motion_turnleft" => ("turnleft", &["DEGREES"]),
        "motion_pointindirection" => ("pointdir", &["DIRECTION"]),
        "motion_pointtowards" => ("pointtowards", &["TOWARDS"]),
        "motion_glidesecstoxy" => ("glide", &["SECS", "X", "Y"]),
        "motion_glideto" => ("glideto", &["SECS", "TO"]),
        "motion_ifonedgebounce" => ("bounce", &[]),
        "motion_setrotationstyle" => ("rotstyle", &[]),
        "motion_changexby" => ("changex", &["DX"]),
        "motion_setx" => ("setx", &["X"]),
        "motion_changeyby" => ("changey", &["DY"]),
        "motion_sety" => ("sety", &["Y"]),
        "motion_scroll_right" | "motion_scroll_up" | "motion_align_scene" => ("nop", &[]),
        "sound_play" => ("play", &["SOUND_MENU"]),
        "sound_playuntildone" => ("playwait", &["SOUND_MENU"]),
        "sound_stopallsounds" => ("stopsounds", &[]),
        "sound_seteffectto" => ("seteffect_snd", &["VALUE"]),
        "sound_changeeffectby" => ("changeeffect_snd", &["VALUE"]),
        "sound_cleareffects" => ("cleareffects_snd", &[]),
        "sound_setvolumeto" => ("setvolume", &["VOLUME"]),
        "sound_changevolumeby" => ("changevolume", &["VOLUME"]),
        "sensing_askandwait" => ("ask", &["QUESTION"]),
        "sensing_resettimer" => ("resettimer", &[]),
        "sensing_setdragmode" => ("dragmode", &[]),
        "data_setvariableto" => ("setvar", &["VALUE"]),
        "data_changevariableby" => ("changevar", &["VALUE"]),
        "data_showvariable" | "data_hidevariable" | "data_showlist" | "data_hidelist" => ("nop", &[]),
        "data_addtolist" => ("addtolist", &["ITEM"]),
        "data_deleteoflist" => ("deleteoflist", &["INDEX"]),
        "data_deletealloflist" => ("deleteall", &[]),
        "data_insertatlist" => ("insertat", &["ITEM", "INDEX"]),
        "data_replaceitemoflist" => ("replace", &["INDEX", "ITEM"]),
        "procedures_definition" => ("definition", &[]),
        "procedures_call" => ("call", &[]),
        "pen_clear" => ("pen_clear", &[]),
        "pen_stamp" => ("pen_stamp", &[]),
        "pen_penDown" => ("pen_down", &[]),
        "pen_penUp" => ("pen_up", &[]),
        "pen_setPenColorToColor" => ("pen_color", &["COLOR"]),
        "pen_changePenColorParamBy" => ("pen_param_change", &["COLOR_PARAM", "VALUE"]),
        "pen_setPenColorParamTo" => ("pen_param_set", &["COLOR_PARAM", "VALUE"]),
        "pen_changePenSizeBy" => ("pen_size_change", &["SIZE"]),
        "pen_setPenSizeTo" => ("pen_size_set", &["SIZE"]),
        "pen_setPenShadeToNumber" => ("pen_shade_set", &["SHADE"]),
        "pen_changePenShadeBy" => ("pen_shade_change", &["SHADE"]),
        "pen_setPenHueToNumber" => ("pen_hue_set", &["HUE"]),
        "pen_changePenHueBy" => ("pen_hue_change", &["HUE"]),
        "music_playDrumForBeats" => ("drum", &["DRUM", "BEATS"]),
        "music_midiPlayDrumForBeats" => ("drum_midi", &["DRUM", "BEATS"]),
        "music_restForBeats" => ("rest", &["BEATS"]),
        "music_playNoteForBeats" => ("note", &["NOTE", "BEATS"]),
        "music_setInstrument" => ("instrument", &["INSTRUMENT"]),
        "music_midiSetInstrument" => ("instrument_midi", &["INSTRUMENT"]),
        "music_setTempo" => ("tempo_set", &["TEMPO"]),
        "music_changeTempo" => ("tempo_change", &["TEMPO"]),
        "text2speech_speakAndWait" => ("speak", &["WORDS"]),
        "text2speech_setVoice" => ("voice", &["VOICE"]),
        "text2speech_setLanguage" => ("language", &["LANGUAGE"]),
        "videoSensing_videoToggle" => ("video_toggle", &["VIDEO_STATE"]),
        "videoSensing_setVideoTransparency" => ("video_transparency", &["TRANSPARENCY"]),
        _ => return None,
    };
    Some(r)
}

/// Reporter opcodes with their slot names.
pub(super) fn rep_of_opcode(op: &str) -> Option<&'static [&'static str]> {
    let r: &'static [&'static str] = match op {
        "operator_add" | "operator_subtract" | "operator_multiply" | "operator_divide" | "operator_mod" => {
            &["NUM1", "NUM2"]
        }
        "operator_lt" | "operator_equals" | "operator_gt" | "operator_and" | "operator_or" => &["OPERAND1", "OPERAND2"],
        "operator_not" => &["OPERAND"],
        "operator_random" => &["FROM", "TO"],
        "operator_join" | "operator_contains" => &["STRING1", "STRING2"],
        "operator_letter_of" => &["LETTER", "STRING"],
        "operator_length" => &["STRING"],
        "operator_round" => &["NUM"],
        "operator_mathop" => &["NUM"],
        "motion_xposition" | "motion_yposition" | "motion_direction" | "motion_xscroll" | "motion_yscroll" => &[],
        "looks_size" | "looks_costumenumbername" | "looks_backdropnumbername" => &[],
        "data_variable" | "data_listcontents" | "data_lengthoflist" => &[],
        "data_itemoflist" => &["INDEX"],
        "data_itemnumoflist" | "data_listcontainsitem" => &["ITEM"],
        "sensing_touchingobject" => &["TOUCHINGOBJECTMENU"],
        "sensing_touchingcolor" => &["COLOR"],
        "sensing_coloristouchingcolor" => &["COLOR", "COLOR2"],
        "sensing_distanceto" => &["DISTANCETOMENU"],
        "sensing_timer" | "sensing_mousex" | "sensing_mousey" | "sensing_mousedown" => &[],
        "sensing_of" => &["OBJECT"],
        "sensing_keypressed" => &["KEY_OPTION"],
        "sensing_current" | "sensing_dayssince2000" | "sensing_loudness" | "sensing_loud" => &[],
        "sensing_answer" | "sensing_username" | "sensing_userid" => &[],
        "sound_volume" | "sound_sounds_menu" | "sound_beats_menu" | "sound_effects_menu" => &[],
        "argument_reporter_string_number" | "argument_reporter_boolean" => &[],
        "control_get_counter" => &[],
        "music_getTempo" => &[],
        "translate_getTranslate" => &["WORDS", "LANGUAGE"],
        "translate_getViewerLanguage" => &[],
        "videoSensing_videoOn" => &["ATTRIBUTE", "SUBJECT"],
        _ => return None,
    };
    Some(r)
}

/// scratch-vm `getExtensionIdForOpcode`.
pub(super) fn extension_id(opcode: &str) -> Option<String> {
    let idx = opcode.find('_')?;
    let prefix: String = opcode[..idx]
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '-' })
        .collect();
    if prefix.is_empty() || CORE_PREFIXES.contains(&prefix.as_str()) { None } else { Some(prefix) }
}

/// Opcodes scratch-vm knows but that have no primitive function (menus, shadows,
/// hats handled elsewhere, `procedures_prototype`): not "unknown".
pub(super) fn is_known_no_fn(op: &str) -> bool {
    op.ends_with("_menu")
        || op.contains("_menu_")
        || matches!(
            op,
            "math_number"
                | "math_positive_number"
                | "math_whole_number"
                | "math_integer"
                | "math_angle"
                | "text"
                | "colour_picker"
                | "procedures_prototype"
                | "looks_costume"
                | "looks_backdrops"
                | "sensing_keyoptions"
                | "sensing_touchingobjectmenu"
                | "sensing_distancetomenu"
                | "sensing_of_object_menu"
                | "motion_goto_menu"
                | "motion_glideto_menu"
                | "motion_pointtowards_menu"
                | "control_create_clone_of_menu"
                | "event_broadcast_menu"
                | "event_touchingobjectmenu"
                | "note"
        )
}
