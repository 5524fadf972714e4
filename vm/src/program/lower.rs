//! Lowering one block to the IR: commands with their argument slots, reporter expression
//! trees, variable references resolved as scratch-vm's `lookupOrCreateVariable` would, and
//! procedure calls.

use super::compile::{Compiler, lit_const};
use super::opcodes::{cmd_of_opcode, has_function, is_hat_opcode, is_known_no_fn, rep_of_opcode};
use super::*;
use crate::project::{BlockIdx, Input};
use crate::util::string::{js_to_lower, js_to_upper, replace_unsafe_chars};

impl Compiler<'_> {
    /// Static resolution of a variable reference of a block of target `d`
    /// (`lookupOrCreateVariable` without the create branch).
    pub(super) fn resolve_static(&self, d: usize, id: &str, name: &str, is_list: bool) -> Option<VarRef> {
        let own = self.var_tables.get(d)?;
        if let Some(i) = own.by_id(id) {
            return Some(VarRef::Own(i));
        }
        let stage_tab = self.var_tables.get(self.stage)?;
        let is_stage = d == self.stage;
        if !is_stage && let Some(i) = stage_tab.by_id(id) {
            return Some(VarRef::Stage(i));
        }
        if let Some(i) = own.by_name(name, is_list) {
            return Some(VarRef::Own(i));
        }
        if !is_stage && let Some(i) = stage_tab.by_name(name, is_list) {
            return Some(VarRef::Stage(i));
        }
        None
    }

    fn var_ref(&mut self, d: usize, id: &str, name: &str, is_list: bool) -> VarRef {
        let id = replace_unsafe_chars(id);
        let stat = self.resolve_static(d, &id, name, is_list);
        // An id-based hit is final; a name-based hit can be shadowed by a variable
        // created at run time with this id, so those go through the dynamic path.
        let by_id = self.var_tables.get(d).is_some_and(|t| t.by_id(&id).is_some())
            || (d != self.stage && self.var_tables.get(self.stage).is_some_and(|t| t.by_id(&id).is_some()));
        match stat {
            Some(r) if by_id || !self.dynamic_ids.contains(&(id.clone(), is_list)) => r,
            _ => {
                let key = (id.clone(), name.to_string(), is_list);
                if let Some(&i) = self.dyn_memo.get(&key) {
                    return VarRef::Dyn(i);
                }
                let i = self.dyn_vars.len() as u32;
                let n_ids = self.dyn_keys.0.len() as u32;
                let id_key = *self.dyn_keys.0.entry(id.clone()).or_insert(n_ids);
                let n_names = self.dyn_keys.1.len() as u32;
                let name_key = *self.dyn_keys.1.entry(name.to_string()).or_insert(n_names);
                self.dyn_vars.push(DynVar { id: id.into(), name: name.into(), is_list, id_key, name_key });
                self.dyn_memo.insert(key, i);
                VarRef::Dyn(i)
            }
        }
    }

    fn field_var(&mut self, bi: BlockIdx, fname: &str, is_list: bool) -> VarRef {
        let b = &self.project.blocks[bi as usize];
        let (id, name) = match b.field(fname) {
            Some(f) => (f.id.clone().unwrap_or_default(), f.value.clone()),
            None => (String::new(), String::new()),
        };
        self.var_ref(b.target as usize, &id, &name, is_list)
    }

    fn field_str(&self, bi: BlockIdx, fname: &str) -> Option<String> {
        self.project.blocks[bi as usize].field(fname).map(|f| f.value.clone())
    }

    fn param_id(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.param_memo.get(name) {
            return i;
        }
        let i = self.param_names.len() as u32;
        self.param_names.push(name.into());
        self.param_memo.insert(name.to_string(), i);
        i
    }

    fn proccode_id(&mut self, p: &str) -> u32 {
        let n = self.proccodes.len() as u32;
        *self.proccodes.entry(p.to_string()).or_insert(n)
    }

    /// Compiles the inputs of block `bi` against the slot names of its opcode.
    /// Substacks and `custom_block` are not inputs; unknown inputs are still evaluated.
    fn compile_args(&mut self, bi: BlockIdx, slots: &[&str], depth: u32) -> Args {
        let b = &self.project.blocks[bi as usize];
        let mut list = Vec::new();
        let mut has_promise = false;
        let inputs: Vec<(String, Input)> = b.inputs.clone();
        let target = b.target as usize;
        let mut nth_block = 0;
        for (name, inp) in inputs {
            if name.starts_with("SUBSTACK") || name == "custom_block" {
                continue;
            }
            let shared = self.shared_slot(bi, &inp, &mut nth_block);
            let Some(e) = self.compile_input(&inp, target, depth) else { continue };
            let e = self.wrap_shared(e, shared);
            let slot = slots.iter().position(|s| *s == name).map(|p| p as u8).unwrap_or(255);
            if self.expr_has_promise(e) {
                has_promise = true;
            }
            list.push((slot, e));
        }
        Args::new(list, slots.len() as u8, has_promise)
    }

    /// The shared reporter's group and the slot when input `inp` of block `bi` holds a
    /// reporter other slots hold too (`super::shared`); `nth_block` counts the block inputs
    /// seen so far, in the order of `SharedInfo::kids`.
    fn shared_slot(&self, bi: BlockIdx, inp: &Input, nth_block: &mut usize) -> Option<(u32, u32)> {
        if !matches!(inp, Input::Block(_)) {
            return None;
        }
        *nth_block += 1;
        let &(_, group, slot) = self.shared.as_ref()?.kids.get(bi as usize)?.get(*nth_block - 1)?;
        (group != u32::MAX).then_some((group, slot))
    }

    /// `e` inside a [`Rep::Shared`] wrapper for `shared`'s group and slot, or `e` itself.
    fn wrap_shared(&mut self, e: ExprId, shared: Option<(u32, u32)>) -> ExprId {
        let Some((group, slot)) = shared else { return e };
        let has_promise = self.expr_has_promise(e);
        let args = Args::new(vec![(0, e)], 1, has_promise);
        self.push_expr(Rep::Shared { group, slot }, args)
    }

    fn expr_has_promise(&self, e: ExprId) -> bool {
        let x = &self.exprs[e as usize];
        x.rep == Rep::Translate || x.args.has_promise
    }

    /// An input slot's expression; `None` when scratch-vm sets no argument value
    /// for it (no block, or a hat block in the slot).
    fn compile_input(&mut self, inp: &Input, d: usize, depth: u32) -> Option<ExprId> {
        match inp {
            Input::Empty => None,
            Input::Lit(l) => {
                let k = lit_const(l, &mut self.lits);
                Some(self.push_expr(Rep::Const(k), Args::default()))
            }
            Input::Variable { name, id } => {
                let r = self.var_ref(d, id, name, false);
                Some(self.push_expr(Rep::Var(r), Args::default()))
            }
            Input::List { name, id } => {
                let r = self.var_ref(d, id, name, true);
                Some(self.push_expr(Rep::ListContents(r), Args::default()))
            }
            Input::Broadcast { name, .. } => {
                let k = Const::Lit(self.lits.intern(name));
                Some(self.push_expr(Rep::Const(k), Args::default()))
            }
            Input::Block(child) => {
                let cb = self.project.blocks.get(*child as usize)?;
                if is_hat_opcode(&cb.opcode) {
                    return None;
                }
                Some(self.compile_expr(*child, depth + 1))
            }
        }
    }

    fn push_expr(&mut self, rep: Rep, args: Args) -> ExprId {
        let id = self.exprs.len() as ExprId;
        self.exprs.push(Expr { rep, args });
        id
    }

    /// Compiles block `bi` as a reporter (memoised: shared subtrees compile once).
    fn compile_expr(&mut self, bi: BlockIdx, depth: u32) -> ExprId {
        if let Some(&e) = self.expr_memo.get(&bi) {
            return e;
        }
        if depth > MAX_EXPR_DEPTH {
            return self.push_expr(Rep::Const(Const::Undef), Args::default());
        }
        let b = &self.project.blocks[bi as usize];
        let op = b.opcode.clone();
        let d = b.target as usize;
        let e = match rep_of_opcode(&op) {
            Some(slots) => {
                let rep = self.rep_for(bi, &op, d);
                let args = self.compile_args(bi, slots, depth);
                self.push_expr(rep, args)
            }
            None => {
                let b = &self.project.blocks[bi as usize];
                let n_inputs =
                    b.inputs.iter().filter(|(n, _)| !n.starts_with("SUBSTACK") && n != "custom_block").count();
                if !has_function(&op) && b.fields.len() == 1 && n_inputs == 0 {
                    // A shadow-like block (menus, math_number…): its single field is the value.
                    let v = b.fields[0].value.clone();
                    let k = Const::Lit(self.lits.intern(&v));
                    self.push_expr(Rep::Const(k), Args::default())
                } else if has_function(&op) {
                    // A command in a reporter slot: scratch-vm calls it; commands report undefined.
                    let args = self.compile_args(bi, &[], depth);
                    self.push_expr(Rep::Undefined, args)
                } else {
                    let args = self.compile_args(bi, &[], depth);
                    let rep = if is_known_no_fn(&op) { Rep::NoFn } else { Rep::Unknown(self.lits.intern(&op)) };
                    self.push_expr(rep, args)
                }
            }
        };
        self.expr_memo.insert(bi, e);
        e
    }

    fn rep_for(&mut self, bi: BlockIdx, op: &str, d: usize) -> Rep {
        match op {
            "operator_add" => Rep::Add,
            "operator_subtract" => Rep::Sub,
            "operator_multiply" => Rep::Mul,
            "operator_divide" => Rep::Div,
            "operator_lt" => Rep::Lt,
            "operator_equals" => Rep::Eq,
            "operator_gt" => Rep::Gt,
            "operator_and" => Rep::And,
            "operator_or" => Rep::Or,
            "operator_not" => Rep::Not,
            "operator_random" => Rep::Random,
            "operator_join" => Rep::Join,
            "operator_letter_of" => Rep::LetterOf,
            "operator_length" => Rep::Length,
            "operator_contains" => Rep::Contains,
            "operator_mod" => Rep::Mod,
            "operator_round" => Rep::Round,
            "operator_mathop" => {
                let o = js_to_lower(&self.field_str(bi, "OPERATOR").unwrap_or_default());
                Rep::MathOp(match o.as_str() {
                    "abs" => MathOp::Abs,
                    "floor" => MathOp::Floor,
                    "ceiling" => MathOp::Ceiling,
                    "sqrt" => MathOp::Sqrt,
                    "sin" => MathOp::Sin,
                    "cos" => MathOp::Cos,
                    "tan" => MathOp::Tan,
                    "asin" => MathOp::Asin,
                    "acos" => MathOp::Acos,
                    "atan" => MathOp::Atan,
                    "ln" => MathOp::Ln,
                    "log" => MathOp::Log,
                    "e ^" => MathOp::Exp,
                    "10 ^" => MathOp::Pow10,
                    _ => MathOp::Zero,
                })
            }
            "motion_xposition" => Rep::XPos,
            "motion_yposition" => Rep::YPos,
            "motion_direction" => Rep::Direction,
            "motion_xscroll" | "motion_yscroll" | "sensing_userid" => Rep::Undefined,
            "looks_size" => Rep::Size,
            "looks_costumenumbername" => {
                Rep::CostumeNumName { number: self.field_str(bi, "NUMBER_NAME").as_deref() == Some("number") }
            }
            "looks_backdropnumbername" => {
                Rep::BackdropNumName { number: self.field_str(bi, "NUMBER_NAME").as_deref() == Some("number") }
            }
            "data_variable" => Rep::Var(self.field_var(bi, "VARIABLE", false)),
            "data_listcontents" => Rep::ListContents(self.field_var(bi, "LIST", true)),
            "data_itemoflist" => Rep::ItemOfList(self.field_var(bi, "LIST", true)),
            "data_itemnumoflist" => Rep::ItemNumOfList(self.field_var(bi, "LIST", true)),
            "data_lengthoflist" => Rep::LengthOfList(self.field_var(bi, "LIST", true)),
            "data_listcontainsitem" => Rep::ListContains(self.field_var(bi, "LIST", true)),
            "sensing_touchingobject" => Rep::TouchingObject,
            "sensing_touchingcolor" => Rep::TouchingColor,
            "sensing_coloristouchingcolor" => Rep::ColorTouchingColor,
            "sensing_distanceto" => Rep::DistanceTo,
            "sensing_timer" => Rep::Timer,
            "sensing_of" => {
                let p = self.field_str(bi, "PROPERTY").unwrap_or_default();
                let prop = match p.as_str() {
                    "x position" => OfProp::X,
                    "y position" => OfProp::Y,
                    "direction" => OfProp::Direction,
                    "costume #" => OfProp::CostumeNum,
                    "costume name" => OfProp::CostumeName,
                    "size" => OfProp::Size,
                    "volume" => OfProp::Volume,
                    "background #" | "backdrop #" => OfProp::BackdropNum,
                    "backdrop name" => OfProp::BackdropName,
                    _ => OfProp::Other,
                };
                Rep::Of { prop, name: self.lits.intern(&p) }
            }
            "sensing_mousex" => Rep::MouseX,
            "sensing_mousey" => Rep::MouseY,
            "sensing_mousedown" => Rep::MouseDown,
            "sensing_keypressed" => Rep::KeyPressed,
            "sensing_current" => {
                let m = js_to_lower(&self.field_str(bi, "CURRENTMENU").unwrap_or_default());
                Rep::Current(self.lits.intern(&m))
            }
            "sensing_dayssince2000" => Rep::DaysSince2000,
            "sensing_loudness" => Rep::Loudness,
            "sensing_loud" => Rep::Loud,
            "sensing_answer" => Rep::Answer,
            "sensing_username" => Rep::Username,
            "sound_volume" => Rep::Volume,
            "sound_sounds_menu" | "sound_beats_menu" | "sound_effects_menu" => {
                let b = &self.project.blocks[bi as usize];
                let v = b.fields.first().map(|f| f.value.clone());
                match v {
                    Some(v) => Rep::Const(Const::Lit(self.lits.intern(&v))),
                    None => Rep::Undefined,
                }
            }
            "argument_reporter_string_number" | "argument_reporter_boolean" => {
                let n = self.field_str(bi, "VALUE").unwrap_or_default();
                Rep::Arg(self.param_id(&n))
            }
            "control_get_counter" => Rep::Counter,
            "music_getTempo" => Rep::Tempo,
            "translate_getTranslate" => Rep::Translate,
            "translate_getViewerLanguage" => Rep::ViewerLanguage,
            "videoSensing_videoOn" => Rep::VideoOn,
            _ => {
                let _ = d;
                Rep::Undefined
            }
        }
    }

    fn substack(&self, bi: BlockIdx, name: &str) -> u32 {
        match self.project.blocks[bi as usize].input(name) {
            Some(Input::Block(x)) => *x,
            // Substack inputs holding a primitive or a dangling id: scratch-vm pushes
            // that id and retires the thread when it finds no block.
            Some(Input::Lit(_) | Input::Variable { .. } | Input::List { .. } | Input::Broadcast { .. }) => DANGLING,
            _ => NONE,
        }
    }

    pub(super) fn compile_cmd(&mut self, bi: BlockIdx, defs: &[DefInfo]) -> CBlock {
        let b = &self.project.blocks[bi as usize];
        let op = b.opcode.clone();
        let d = b.target as usize;
        // A `next` naming a missing block retires the thread in scratch-vm (unlike a null `next`).
        let next = if b.next_missing { DANGLING } else { b.next.unwrap_or(NONE) };
        let Some((kind, slots)) = cmd_of_opcode(&op) else { return self.compile_non_command(bi, &op, next) };
        let args = self.compile_args(bi, slots, 0);
        if kind == "call" {
            return self.compile_call(bi, d, next);
        }
        let cmd = self.control_event_looks_cmd(bi, kind, defs).unwrap_or_else(|| self.other_cmd(bi, kind));
        CBlock { cmd, next, args }
    }

    /// A block in command position that is not a command: a hat, a reporter in a stack, a
    /// known opcode without a function, or an unknown opcode.
    fn compile_non_command(&mut self, bi: BlockIdx, op: &str, next: u32) -> CBlock {
        let b = &self.project.blocks[bi as usize];
        // Not a command: hats, reporters in a stack, unknown opcodes.
        let (cmd, args) = if is_hat_opcode(op) {
            (Cmd::Hat, self.compile_args(bi, &[], 0))
        } else if rep_of_opcode(op).is_some() {
            let e = self.compile_expr(bi, 0);
            (Cmd::Expr(e), Args::default())
        } else if is_known_no_fn(op) || op == "procedures_prototype" {
            (Cmd::NoFn, self.compile_args(bi, &[], 0))
        } else {
            let n_inputs = b.inputs.iter().filter(|(n, _)| !n.starts_with("SUBSTACK") && n != "custom_block").count();
            if b.fields.len() == 1 && n_inputs == 0 {
                (Cmd::NoFn, Args::default())
            } else {
                let u = self.lits.intern(op);
                (Cmd::Unknown(u), self.compile_args(bi, &[], 0))
            }
        };
        CBlock { cmd, next, args }
    }

    /// The control, event and looks commands (`None` for other kinds).
    fn control_event_looks_cmd(&mut self, bi: BlockIdx, kind: &str, defs: &[DefInfo]) -> Option<Cmd> {
        Some(match kind {
            "repeat" => Cmd::Repeat { sub: self.substack(bi, "SUBSTACK") },
            "repeat_until" => Cmd::RepeatUntil { sub: self.substack(bi, "SUBSTACK") },
            "while" => Cmd::While { sub: self.substack(bi, "SUBSTACK") },
            "for_each" => {
                Cmd::ForEach { var: self.field_var(bi, "VARIABLE", false), sub: self.substack(bi, "SUBSTACK") }
            }
            "forever" => Cmd::Forever { sub: self.substack(bi, "SUBSTACK") },
            "wait" => Cmd::Wait,
            "wait_until" => Cmd::WaitUntil,
            "if" => Cmd::If { sub: self.substack(bi, "SUBSTACK") },
            "if_else" => Cmd::IfElse { sub: self.substack(bi, "SUBSTACK"), sub2: self.substack(bi, "SUBSTACK2") },
            "all_at_once" => Cmd::AllAtOnce { sub: self.substack(bi, "SUBSTACK") },
            "stop" => Cmd::Stop(match self.field_str(bi, "STOP_OPTION").as_deref() {
                Some("all") => StopOpt::All,
                Some("other scripts in sprite" | "other scripts in stage") => StopOpt::Other,
                Some("this script") => StopOpt::This,
                _ => StopOpt::Nothing,
            }),
            "create_clone" => Cmd::CreateClone,
            "delete_clone" => Cmd::DeleteClone,
            "incr_counter" => Cmd::IncrCounter,
            "clear_counter" => Cmd::ClearCounter,
            "broadcast" => Cmd::Broadcast(self.bcast(bi, defs)),
            "broadcast_wait" => Cmd::BroadcastAndWait(self.bcast(bi, defs)),
            "hat_gt" => {
                let m = js_to_lower(&self.field_str(bi, "WHENGREATERTHANMENU").unwrap_or_default());
                Cmd::HatGreaterThan { timer: m == "timer" }
            }
            "hat_touching" => Cmd::HatTouching,
            "hat_makey_key" => Cmd::HatMakeyKey,
            "hat_makey_code" => Cmd::HatMakeyCode,
            "hat_video" => Cmd::HatVideoMotion,
            "say" => Cmd::Say { think: false },
            "think" => Cmd::Say { think: true },
            "sayforsecs" => Cmd::SayForSecs { think: false },
            "thinkforsecs" => Cmd::SayForSecs { think: true },
            "show" => Cmd::Show,
            "hide" => Cmd::Hide,
            "nop" => Cmd::Nop,
            "switchcostume" => Cmd::SwitchCostume,
            "switchbackdrop" => Cmd::SwitchBackdrop,
            "switchbackdrop_wait" => Cmd::SwitchBackdropAndWait,
            "nextcostume" => Cmd::NextCostume,
            "nextbackdrop" => Cmd::NextBackdrop,
            "changeeffect" | "seteffect" => {
                let e = js_to_lower(&self.field_str(bi, "EFFECT").unwrap_or_default());
                let idx = EFFECT_NAMES.iter().position(|n| *n == e).map(|i| i as u8);
                if kind == "changeeffect" { Cmd::ChangeEffect(idx) } else { Cmd::SetEffect(idx) }
            }
            "cleareffects" => Cmd::ClearEffects,
            "changesize" => Cmd::ChangeSize,
            "setsize" => Cmd::SetSize,
            "frontback" => Cmd::GoFrontBack { front: self.field_str(bi, "FRONT_BACK").as_deref() == Some("front") },
            "layers" => Cmd::GoLayers { forward: self.field_str(bi, "FORWARD_BACKWARD").as_deref() == Some("forward") },
            _ => return None,
        })
    }

    /// The motion, sound, sensing, data, procedure, pen, music and extension commands.
    fn other_cmd(&mut self, bi: BlockIdx, kind: &str) -> Cmd {
        match kind {
            "move" => Cmd::MoveSteps,
            "gotoxy" => Cmd::GotoXY,
            "goto" => Cmd::Goto,
            "turnright" => Cmd::TurnRight,
            "turnleft" => Cmd::TurnLeft,
            "pointdir" => Cmd::PointInDirection,
            "pointtowards" => Cmd::PointTowards,
            "glide" => Cmd::Glide,
            "glideto" => Cmd::GlideTo,
            "bounce" => Cmd::Bounce,
            "rotstyle" => Cmd::SetRotationStyle(match self.field_str(bi, "STYLE").as_deref() {
                Some("all around") => Some(ROT_ALL_AROUND),
                Some("left-right") => Some(ROT_LEFT_RIGHT),
                Some("don't rotate") => Some(ROT_NONE),
                _ => None,
            }),
            "changex" => Cmd::ChangeX,
            "setx" => Cmd::SetX,
            "changey" => Cmd::ChangeY,
            "sety" => Cmd::SetY,
            "play" => Cmd::PlaySound { wait: false },
            "playwait" => Cmd::PlaySound { wait: true },
            "stopsounds" => Cmd::StopAllSounds,
            "seteffect_snd" | "changeeffect_snd" => {
                let e = js_to_lower(&self.field_str(bi, "EFFECT").unwrap_or_default());
                let effect = match e.as_str() {
                    "pitch" => Some(0),
                    "pan" => Some(1),
                    _ => None,
                };
                Cmd::SoundEffect { change: kind == "changeeffect_snd", effect }
            }
            "cleareffects_snd" => Cmd::ClearSoundEffects,
            "setvolume" => Cmd::SetVolume,
            "changevolume" => Cmd::ChangeVolume,
            "ask" => Cmd::Ask,
            "resettimer" => Cmd::ResetTimer,
            "dragmode" => {
                Cmd::SetDragMode { draggable: self.field_str(bi, "DRAG_MODE").as_deref() == Some("draggable") }
            }
            "setvar" => Cmd::SetVar(self.field_var(bi, "VARIABLE", false)),
            "changevar" => Cmd::ChangeVar(self.field_var(bi, "VARIABLE", false)),
            "addtolist" => Cmd::AddToList(self.field_var(bi, "LIST", true)),
            "deleteoflist" => Cmd::DeleteOfList(self.field_var(bi, "LIST", true)),
            "deleteall" => Cmd::DeleteAllOfList(self.field_var(bi, "LIST", true)),
            "insertat" => Cmd::InsertAtList(self.field_var(bi, "LIST", true)),
            "replace" => Cmd::ReplaceItemOfList(self.field_var(bi, "LIST", true)),
            "definition" => Cmd::Definition,
            "pen_clear" => Cmd::PenClear,
            "pen_stamp" => Cmd::PenStamp,
            "pen_down" => Cmd::PenDown,
            "pen_up" => Cmd::PenUp,
            "pen_color" => Cmd::PenSetColor,
            "pen_param_change" => Cmd::PenParam { change: true },
            "pen_param_set" => Cmd::PenParam { change: false },
            "pen_size_change" => Cmd::PenSize { change: true },
            "pen_size_set" => Cmd::PenSize { change: false },
            "pen_shade_set" => Cmd::PenShade { change: false },
            "pen_shade_change" => Cmd::PenShade { change: true },
            "pen_hue_set" => Cmd::PenHue { change: false },
            "pen_hue_change" => Cmd::PenHue { change: true },
            "drum" | "drum_midi" => Cmd::MusicDrum,
            "rest" => Cmd::MusicRest,
            "note" => Cmd::MusicNote,
            "instrument" => Cmd::MusicInstrument { midi: false },
            "instrument_midi" => Cmd::MusicInstrument { midi: true },
            "tempo_set" => Cmd::MusicTempo { change: false },
            "tempo_change" => Cmd::MusicTempo { change: true },
            "speak" => Cmd::Speak,
            "voice" => Cmd::SetVoice,
            "language" => Cmd::SetLanguage,
            "video_toggle" => Cmd::VideoToggle,
            "video_transparency" => Cmd::VideoTransparency,
            _ => Cmd::Nop,
        }
    }

    fn bcast(&mut self, bi: BlockIdx, defs: &[DefInfo]) -> Bcast {
        let b = &self.project.blocks[bi as usize];
        let stage = &defs[self.stage];
        let lookup_id = |id: &str| -> Option<String> {
            // lookupVariableById on the stage: any variable type.
            if let Some(v) = stage.vars.iter().find(|v| &*v.id == id) {
                return Some(v.name.to_string());
            }
            stage.broadcasts.iter().find(|(i, _)| &**i == id).map(|(_, n)| n.to_string())
        };
        let lookup_name = |name: &str| -> Option<String> {
            let l = js_to_lower(name);
            stage.broadcasts.iter().find(|(_, n)| js_to_lower(n) == l).map(|(_, n)| n.to_string())
        };
        let found = match b.input("BROADCAST_INPUT") {
            Some(Input::Broadcast { name, id }) => {
                let id = replace_unsafe_chars(id);
                if !id.is_empty() {
                    lookup_id(&id)
                } else if !name.is_empty() {
                    lookup_name(name)
                } else {
                    None
                }
            }
            Some(Input::Block(x)) => {
                let mb = &self.project.blocks[*x as usize];
                if mb.opcode == "event_broadcast_menu" && mb.shadow {
                    match mb.field("BROADCAST_OPTION") {
                        Some(f) => {
                            let id = replace_unsafe_chars(f.id.as_deref().unwrap_or(""));
                            if !id.is_empty() {
                                lookup_id(&id)
                            } else if !f.value.is_empty() {
                                lookup_name(&f.value)
                            } else {
                                None
                            }
                        }
                        None => None,
                    }
                } else {
                    return Bcast::Dynamic;
                }
            }
            Some(Input::Lit(_) | Input::Variable { .. } | Input::List { .. }) => return Bcast::Dynamic,
            Some(Input::Empty) | None => return Bcast::Nothing,
        };
        Bcast::Static(found.map(|n| js_to_upper(&n).into_boxed_str()))
    }

    fn compile_call(&mut self, bi: BlockIdx, d: usize, next: u32) -> CBlock {
        let b = &self.project.blocks[bi as usize];
        let proccode = b.mutation.as_ref().map(|m| m.proccode.clone()).unwrap_or_default();
        let proto = self.protos.get(d).and_then(|p| p.get(&proccode)).cloned();
        let definition = self.definitions.get(d).and_then(|p| p.get(&proccode)).copied();
        // Inputs: every input is evaluated (slot = its position in the list).
        let inputs: Vec<(String, Input)> = b.inputs.clone();
        let mut list = Vec::new();
        let mut set_names: Vec<(String, u8)> = Vec::new();
        let mut has_promise = false;
        let mut nth_block = 0;
        for (name, inp) in inputs {
            if name.starts_with("SUBSTACK") || name == "custom_block" {
                continue;
            }
            let shared = self.shared_slot(bi, &inp, &mut nth_block);
            let Some(e) = self.compile_input(&inp, d, 0) else { continue };
            let e = self.wrap_shared(e, shared);
            if self.expr_has_promise(e) {
                has_promise = true;
            }
            let slot = list.len().min(254) as u8;
            // Only reporters with a function (or shadow values) set an argument value.
            let sets = !matches!(self.exprs[e as usize].rep, Rep::NoFn | Rep::Unknown(_));
            if sets {
                set_names.retain(|(n, _)| *n != name);
                set_names.push((name.clone(), slot));
            }
            list.push((slot, e));
        }
        let n = list.len().min(255) as u8;
        let params = proto.map(|(names, ids, defaults)| {
            names
                .iter()
                .enumerate()
                .map(|(i, pname)| {
                    let pid = self.param_id(pname);
                    let src = match ids.get(i).and_then(|id| set_names.iter().find(|(n, _)| n == id)) {
                        Some((_, slot)) => ParamSrc::Slot(*slot),
                        None => ParamSrc::Default(match defaults.get(i) {
                            Some(l) => lit_const(l, &mut self.lits),
                            None => Const::Undef,
                        }),
                    };
                    (pid, src)
                })
                .fold(Vec::<(u32, ParamSrc)>::new(), |mut list, (pid, src)| {
                    // A name given twice binds once, at its first place, to its last value
                    // (scratch-vm's `paramNames`/`paramValues` object): done here, a call binds
                    // a list of distinct names without searching it.
                    match list.iter_mut().find(|(n, _)| *n == pid) {
                        Some(e) => e.1 = src,
                        None => list.push((pid, src)),
                    }
                    list
                })
        });
        let info = CallInfo {
            proccode: self.proccode_id(&proccode),
            params,
            definition: definition.map(|(db, _)| db),
            warp: definition.is_some_and(|(_, w)| w),
        };
        CBlock { cmd: Cmd::Call(Box::new(info)), next, args: Args::new(list, n, has_promise) }
    }
}
