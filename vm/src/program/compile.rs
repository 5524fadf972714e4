//! Compiling a loaded project into a [`Program`], phase by phase as scratch-vm loads it: block
//! order, variable declarations, procedures, run-time variables, target definitions, layer
//! order, commands, hat scripts and extensions.

use std::collections::HashMap;

use super::opcodes::{BUILTIN_EXTENSIONS, extension_id};
use super::*;
use crate::project::{BlockIdx, Input, Lit, Project, RESERVED_NAMES};
use crate::util::cast::{is_white_space_str, js_string_to_number};
use crate::util::object::js_key_order;
use crate::util::string::{UniqueNames, js_to_upper, replace_unsafe_chars};

pub(super) fn lit_const(l: &Lit, lits: &mut Lits) -> Const {
    match l {
        Lit::Num(n) => Const::Num(*n),
        Lit::Str(s) => Const::Lit(lits.intern(s)),
        Lit::Bool(b) => Const::Bool(*b),
        Lit::Null => Const::Null,
        Lit::Undefined => Const::Undef,
    }
}

/// String interner for literals.
#[derive(Default)]
pub(crate) struct Lits {
    pub(super) list: Vec<LitStr>,
    map: HashMap<Box<str>, LitId>,
}

impl Lits {
    pub fn intern(&mut self, s: &str) -> LitId {
        if let Some(&id) = self.map.get(s) {
            return id;
        }
        let id = self.list.len() as LitId;
        self.list.push(LitStr { s: s.into(), num: js_string_to_number(s), ws: is_white_space_str(s) });
        self.map.insert(s.into(), id);
        id
    }
}

/// Argument names, ids and defaults of a procedure prototype.
pub(super) type ProtoInfo = (Vec<String>, Vec<String>, Vec<Lit>);

/// Most costumes a target may have for a costume name to be found by a scan; above it, by
/// an index.
const COSTUME_SCAN_MAX: usize = 32;

/// A target's variable declarations and broadcast messages.
type Decls = (Vec<VarDecl>, Vec<(Box<str>, Box<str>)>);

pub(super) struct Compiler<'p> {
    pub(super) project: &'p Project,
    pub(super) lits: Lits,
    pub(super) exprs: Vec<Expr>,
    pub(super) expr_memo: HashMap<BlockIdx, ExprId>,
    pub(super) dyn_vars: Vec<DynVar>,
    pub(super) dyn_memo: HashMap<(String, String, bool), u32>,
    /// Keys of the ids and of the names of dynamic references ([`DynVar::id_key`]).
    pub(super) dyn_keys: (HashMap<String, u32>, HashMap<String, u32>),
    /// Per definition: its declared variables and lists, looked up by id or by name.
    pub(super) var_tables: Vec<VarTable>,
    /// Ids that some reference may create at run time (per kind).
    pub(super) dynamic_ids: std::collections::HashSet<(String, bool)>,
    pub(super) stage: usize,
    pub(super) param_names: Vec<Box<str>>,
    pub(super) param_memo: HashMap<String, u32>,
    pub(super) proccodes: HashMap<String, u32>,
    /// Per definition: proccode -> (names, ids, defaults) of the first prototype.
    pub(super) protos: Vec<HashMap<String, ProtoInfo>>,
    /// Per definition: proccode -> (definition block, warp) of the first definition.
    pub(super) definitions: Vec<HashMap<String, (u32, bool)>>,
    /// Per definition: project block indices in JS key order.
    pub(super) order: Vec<Vec<BlockIdx>>,
    /// Reporters held in more than one input slot (`super::shared`).
    pub(super) shared: Option<Box<super::model::SharedInfo>>,
}

/// Compiles a loaded project.
pub(crate) fn compile(project: &Project) -> Program {
    let n_defs = project.targets.len();
    let stage = project.targets.iter().position(|t| t.is_stage).unwrap_or(0);
    let mut c = Compiler {
        project,
        lits: Lits::default(),
        exprs: Vec::new(),
        expr_memo: HashMap::new(),
        dyn_vars: Vec::new(),
        dyn_memo: HashMap::new(),
        dyn_keys: Default::default(),
        var_tables: Vec::new(),
        dynamic_ids: Default::default(),
        stage,
        param_names: Vec::new(),
        param_memo: HashMap::new(),
        proccodes: HashMap::new(),
        protos: vec![HashMap::new(); n_defs],
        definitions: vec![HashMap::new(); n_defs],
        order: vec![Vec::new(); n_defs],
        shared: super::shared::analyse(project).map(Box::new),
    };
    let lit_empty = c.lits.intern("");
    c.order_blocks();
    let decls = c.declarations();
    c.index_procedures();
    c.find_dynamic_variables();
    let mut defs = c.target_definitions(decls);
    // Layer order: stable sort by layerOrder.
    let mut layer_order: Vec<u32> = (0..n_defs as u32).collect();
    layer_order.sort_by_key(|&d| project.targets[d as usize].layer_order);
    // Commands, one per project block.
    let blocks = (0..project.blocks.len()).map(|bi| c.compile_cmd(bi as BlockIdx, &defs)).collect();
    let has_edge_hats = c.hat_scripts(&mut defs);
    let ext = c.extensions(&layer_order);
    Program {
        lits: c.lits.list,
        defs,
        blocks,
        exprs: c.exprs,
        dyn_vars: c.dyn_vars,
        layer_order,
        stage: stage as u32,
        has_edge_hats,
        unloadable_extensions: ext.unloadable,
        video_loaded: ext.video_loaded,
        makey_loaded: ext.makey_loaded,
        pen_loaded: ext.pen_loaded,
        edge_order: ext.edge_order,
        lit_empty,
        shared: c.shared,
    }
}

/// What the project's extensions change in the program.
struct ExtensionUse {
    unloadable: Vec<String>,
    video_loaded: bool,
    makey_loaded: bool,
    pen_loaded: bool,
    edge_order: Vec<HatKind>,
}

impl Compiler<'_> {
    /// The blocks of each target in JS key order (scratch-vm's `_blocks` order).
    fn order_blocks(&mut self) {
        let project = self.project;
        for (bi, b) in project.blocks.iter().enumerate() {
            if let Some(o) = self.order.get_mut(b.target as usize) {
                o.push(bi as BlockIdx);
            }
        }
        for o in &mut self.order {
            let items: Vec<(String, BlockIdx)> =
                o.iter().map(|&i| (project.blocks[i as usize].id.clone(), i)).collect();
            *o = js_key_order(items).into_iter().map(|(_, i)| i).collect();
        }
    }

    /// Variables, lists and broadcasts of each target in `target.variables` order.
    fn declarations(&mut self) -> Vec<Decls> {
        let project = self.project;
        let n_defs = project.targets.len();
        let mut decls: Vec<Decls> = Vec::with_capacity(n_defs);
        for t in &project.targets {
            // Insertion: variables, then lists, then broadcasts; a repeated id keeps its first
            // position and takes the later value.
            #[derive(Clone)]
            enum Ent {
                Var(String, Const, bool, Vec<Const>),
                Bc(String),
            }
            let mut entries: Vec<(String, Ent)> = Vec::new();
            // Where each id is in `entries`, so that a target with many declarations costs
            // linear time.
            let mut at: HashMap<String, usize> = HashMap::new();
            let put = |entries: &mut Vec<(String, Ent)>, at: &mut HashMap<String, usize>, id: String, e: Ent| {
                if let Some(x) = at.get(&id).and_then(|&i| entries.get_mut(i)) {
                    x.1 = e;
                } else {
                    at.insert(id.clone(), entries.len());
                    entries.push((id, e));
                }
            };
            for v in &t.variables {
                let val = lit_const(&v.value, &mut self.lits);
                put(&mut entries, &mut at, v.id.clone(), Ent::Var(v.name.clone(), val, false, Vec::new()));
            }
            for l in &t.lists {
                let items = l.items.iter().map(|x| lit_const(x, &mut self.lits)).collect();
                put(&mut entries, &mut at, l.id.clone(), Ent::Var(l.name.clone(), Const::Num(0.0), true, items));
            }
            for (id, name) in &t.broadcasts {
                put(&mut entries, &mut at, id.clone(), Ent::Bc(name.clone()));
            }
            let mut entries = js_key_order(entries);
            // replaceUnsafeCharsInVariableIds: unsafe ids are renamed and move to the end.
            let mut moved = Vec::new();
            entries.retain(|(id, e)| {
                let safe = replace_unsafe_chars(id);
                if safe != *id {
                    moved.push((safe, e.clone()));
                    false
                } else {
                    true
                }
            });
            // Reordered and filtered: the positions are found again.
            let mut at: HashMap<String, usize> =
                entries.iter().enumerate().map(|(i, (id, _))| (id.clone(), i)).collect();
            for (id, e) in moved {
                put(&mut entries, &mut at, id, e);
            }
            let mut vars = Vec::new();
            let mut bcs = Vec::new();
            for (id, e) in entries {
                match e {
                    Ent::Var(name, value, is_list, items) => {
                        vars.push(VarDecl { id: id.into(), name: name.into(), is_list, value, items })
                    }
                    Ent::Bc(name) => bcs.push((id.into(), name.into())),
                }
            }
            decls.push((vars, bcs));
        }
        self.var_tables = decls.iter().map(|(vars, _)| VarTable::new(vars)).collect();

        decls
    }

    /// Procedure prototypes and definitions (first in block order wins).
    fn index_procedures(&mut self) {
        let project = self.project;
        let n_defs = project.targets.len();
        for d in 0..n_defs {
            for &bi in &self.order[d] {
                let b = &project.blocks[bi as usize];
                match b.opcode.as_str() {
                    "procedures_prototype" => {
                        if let Some(m) = &b.mutation
                            && !self.protos[d].contains_key(&m.proccode)
                        {
                            let defaults = m.argument_defaults.iter().map(|s| Lit::Str(s.clone())).collect::<Vec<_>>();
                            self.protos[d].insert(
                                m.proccode.clone(),
                                (m.argument_names.clone(), m.argument_ids.clone(), defaults),
                            );
                        }
                    }
                    "procedures_definition" => {
                        if let Some(Input::Block(inner)) = b.input("custom_block")
                            && let Some(ib) = project.blocks.get(*inner as usize)
                            && let Some(m) = &ib.mutation
                            && !self.definitions[d].contains_key(&m.proccode)
                        {
                            self.definitions[d].insert(m.proccode.clone(), (bi, m.warp));
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// Variable references that scratch-vm might create at run time.
    fn find_dynamic_variables(&mut self) {
        let project = self.project;
        for b in &project.blocks {
            for f in &b.fields {
                let is_list = match f.name.as_str() {
                    "VARIABLE" => false,
                    "LIST" => true,
                    _ => continue,
                };
                let id = replace_unsafe_chars(f.id.as_deref().unwrap_or(""));
                if self.resolve_static(b.target as usize, &id, &f.value, is_list).is_none() {
                    self.dynamic_ids.insert((id, is_list));
                }
            }
            for (_, inp) in &b.inputs {
                let (id, name, is_list) = match inp {
                    Input::Variable { name, id } => (id, name, false),
                    Input::List { name, id } => (id, name, true),
                    _ => continue,
                };
                let id = replace_unsafe_chars(id);
                if self.resolve_static(b.target as usize, &id, name, is_list).is_none() {
                    self.dynamic_ids.insert((id, is_list));
                }
            }
        }
    }

    /// The per-target definitions: unique sprite and costume names (as scratch-vm makes them
    /// at install), sounds, initial state and declarations.
    fn target_definitions(&mut self, decls: Vec<Decls>) -> Vec<DefInfo> {
        let project = self.project;
        let n_defs = project.targets.len();
        let mut defs = Vec::with_capacity(n_defs);
        let uid_draws = load_uid_draws(&project.targets);
        let mut sprite_names = UniqueNames::new();
        for (d, (t, (vars, bcs))) in project.targets.iter().zip(decls).enumerate() {
            let name = if t.is_stage {
                t.name.clone()
            } else if t.name.is_empty() || RESERVED_NAMES.contains(&t.name.as_str()) {
                sprite_names.insert(&t.name);
                t.name.clone()
            } else {
                sprite_names.claim(&t.name)
            };
            let mut costume_names = UniqueNames::new();
            let names: Vec<String> = t.costumes.iter().map(|co| costume_names.claim(&co.name)).collect();
            let costume_by_name = (names.len() > COSTUME_SCAN_MAX).then(|| {
                let mut m = HashMap::new();
                for (i, n) in names.iter().enumerate() {
                    m.entry(n.as_str().into()).or_insert(i as u32);
                }
                m
            });
            let costumes = names.iter().map(|n| CostumeInfo { name: self.lits.intern(n) }).collect::<Vec<_>>();
            let sounds = t
                .sounds
                .iter()
                .map(|s| SoundInfo {
                    name: s.name.as_str().into(),
                    duration_ms: if s.rate > 0.0 { 1000.0 * s.sample_count / s.rate } else { 0.0 },
                    whisker_secs: s.wav.as_ref().map(crate::whisker::sound_secs),
                })
                .collect();
            let rotation_style = match t.rotation_style.as_str() {
                "left-right" => ROT_LEFT_RIGHT,
                "don't rotate" => ROT_NONE,
                _ => ROT_ALL_AROUND,
            };
            let costume =
                if costumes.is_empty() { -1 } else { (t.current_costume as i64).clamp(0, costumes.len() as i64 - 1) };
            defs.push(DefInfo {
                name: self.lits.intern(&name),
                is_stage: t.is_stage,
                x: t.x,
                y: t.y,
                direction: t.direction,
                size: t.size,
                visible: t.visible,
                costume,
                rotation_style,
                draggable: t.draggable,
                volume: t.volume,
                tempo: t.tempo,
                video_state: self.lits.intern(&t.video_state),
                video_transparency: t.video_transparency,
                costumes,
                costume_by_name,
                var_index: self.var_tables.get(d).cloned().unwrap_or_default(),
                sounds,
                vars,
                broadcasts: bcs,
                hats: Default::default(),
                uid_draw: uid_draws.get(d).copied().unwrap_or(0),
            });
            let _ = d;
        }

        defs
    }

    /// Hat scripts of each target by kind, in `_scripts` order; whether any is
    /// edge-activated.
    fn hat_scripts(&mut self, defs: &mut [DefInfo]) -> bool {
        let project = self.project;
        let mut has_edge_hats = false;
        for (d, def) in defs.iter_mut().enumerate() {
            // `_scripts` order: top-level blocks in creation (JS key) order.
            let tops: Vec<BlockIdx> =
                self.order[d].iter().copied().filter(|&bi| project.blocks[bi as usize].top_level).collect();
            let mut hats: [Vec<HatScript>; 12] = Default::default();
            for top in tops {
                let b = &project.blocks[top as usize];
                let (kind, field) = match b.opcode.as_str() {
                    "event_whenflagclicked" => (HatKind::Flag, None),
                    "event_whenkeypressed" => (HatKind::Key, Some("KEY_OPTION")),
                    "event_whenthisspriteclicked" => (HatKind::SpriteClicked, None),
                    "event_whenstageclicked" => (HatKind::StageClicked, None),
                    "event_whenbackdropswitchesto" => (HatKind::Backdrop, Some("BACKDROP")),
                    "event_whenbroadcastreceived" => (HatKind::Broadcast, Some("BROADCAST_OPTION")),
                    "control_start_as_clone" => (HatKind::CloneStart, None),
                    "event_whengreaterthan" => (HatKind::GreaterThan, None),
                    "event_whentouchingobject" => (HatKind::TouchingObject, None),
                    "makeymakey_whenMakeyKeyPressed" => (HatKind::MakeyKey, None),
                    "makeymakey_whenCodePressed" => (HatKind::MakeyCode, None),
                    "videoSensing_whenMotionGreaterThan" => (HatKind::VideoMotion, None),
                    _ => continue,
                };
                if kind.edge() {
                    has_edge_hats = true;
                }
                let field = match field {
                    None => None,
                    Some(fname) => match b.field(fname) {
                        Some(f) => Some(js_to_upper(&f.value).into_boxed_str()),
                        // scratch-vm would throw on the missing field; such a hat never starts here.
                        None => Some("\u{0}clowder:no-field".into()),
                    },
                };
                hats[kind.index()].push(HatScript { top, field });
            }
            def.hats = hats;
        }

        has_edge_hats
    }

    /// Extensions scratch-vm would load, in load order (first use in targets sorted by layer,
    /// blocks in key order); their hats follow the core hats in `_hats`.
    fn extensions(&self, layer_order: &[u32]) -> ExtensionUse {
        let project = self.project;
        let mut unloadable = Vec::new();
        let mut loaded: Vec<String> = Vec::new();
        for &d in layer_order {
            for &bi in &self.order[d as usize] {
                if let Some(ext) = extension_id(&project.blocks[bi as usize].opcode)
                    && !loaded.contains(&ext)
                {
                    loaded.push(ext);
                }
            }
        }
        let mut edge_order = vec![HatKind::TouchingObject, HatKind::GreaterThan];
        for ext in &loaded {
            match ext.as_str() {
                "makeymakey" => edge_order.extend([HatKind::MakeyKey, HatKind::MakeyCode]),
                "videoSensing" => edge_order.push(HatKind::VideoMotion),
                e if !BUILTIN_EXTENSIONS.contains(&e) => unloadable.push(ext.clone()),
                _ => {}
            }
        }
        let video_loaded = loaded.iter().any(|e| e == "videoSensing");
        let makey_loaded = loaded.iter().any(|e| e == "makeymakey");
        let pen_loaded = loaded.iter().any(|e| e == "pen");

        ExtensionUse { unloadable, video_loaded, makey_loaded, pen_loaded, edge_order }
    }
}

/// Where each target's `uid()` begins in the stream scratch-vm's sb3 loader draws from:
/// targets are parsed in layer order, each first expanding its compact inputs (one `uid()`
/// each) and then taking its own id; a `uid()` is 20 draws.
fn load_uid_draws(targets: &[crate::project::TargetDef]) -> Vec<u64> {
    let mut order: Vec<usize> = (0..targets.len()).collect();
    order.sort_by_key(|&i| targets[i].layer_order);
    let mut out = vec![0u64; targets.len()];
    let mut uids = 0u64;
    for i in order {
        uids += u64::from(targets[i].load_uids);
        out[i] = uids * u64::from(crate::whisker::UID_DRAWS);
        uids += 1;
    }
    out
}
