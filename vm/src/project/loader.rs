//! Reading a parsed `project.json` into the model: the targets' structure (exactly one stage,
//! first), layer order as V8 sorts it, each target's properties, declarations, costumes and
//! sounds, unique sprite names, monitors and metadata. Blocks are read by
//! [`super::blocks`] and checked by [`super::check`].

use std::collections::{BTreeMap, HashMap};

use super::blocks::monitor;
use super::check::{check_tree, procedure_index};
use super::json::{J, Obj};
use super::{
    Block, BlockIdx, Costume, Lit, LoadError, LoadErrorKind, LoadLimits, MAX_WARNINGS, Project, ProjectMeta,
    RESERVED_NAMES, Sound, TargetDef, VarDef,
};
use crate::util::cast::{js_string_to_number, number_to_js_string};
use crate::util::string::{UniqueNames, replace_unsafe_chars};

/// An error before the file name is attached.
pub(super) struct Bad {
    pub(super) kind: LoadErrorKind,
    pub(super) target: Option<String>,
    pub(super) block: Option<String>,
    pub(super) msg: String,
}

/// Totals over the targets read so far that have project-wide limits.
#[derive(Default)]
struct Counts {
    /// Initial list items.
    list_items: usize,
    /// Cloud variables.
    cloud: usize,
}

impl Bad {
    /// An error about the project as a whole.
    fn top(kind: LoadErrorKind, msg: impl Into<String>) -> Self {
        Bad { kind, target: None, block: None, msg: msg.into() }
    }
    pub(super) fn malformed(target: &str, msg: impl Into<String>) -> Self {
        Bad { kind: LoadErrorKind::Malformed, target: Some(target.to_string()), block: None, msg: msg.into() }
    }
    pub(super) fn at_block(kind: LoadErrorKind, target: &str, block: &str, msg: impl Into<String>) -> Self {
        Bad { kind, target: Some(target.to_string()), block: Some(block.to_string()), msg: msg.into() }
    }
}

pub(super) struct Loader<'a> {
    pub(super) file: &'a str,
    pub(super) limits: &'a LoadLimits,
    pub(super) warnings: Vec<String>,
    pub(super) dropped_warnings: usize,
    /// Blocks held in more than one reporter slot, over the targets loaded so far.
    pub(super) shared: Vec<BlockIdx>,
}

/// JS `Number(value)` of a JSON value (`None` = `undefined`).
pub(super) fn js_number(v: Option<&J>) -> f64 {
    match v {
        None => f64::NAN,
        Some(J::Null) => 0.0,
        Some(J::Bool(b)) => f64::from(u8::from(*b)),
        Some(J::Num(n)) => *n,
        Some(J::Str(s)) => js_string_to_number(s),
        Some(J::Arr(_) | J::Obj(_)) => f64::NAN,
    }
}

/// JS `String(value)` of a scalar; `None` for arrays, objects and absence.
pub(super) fn js_string(v: Option<&J>) -> Option<String> {
    match v? {
        J::Null => Some("null".into()),
        J::Bool(b) => Some(b.to_string()),
        J::Num(n) => Some(number_to_js_string(*n)),
        J::Str(s) => Some(s.clone()),
        J::Arr(_) | J::Obj(_) => None,
    }
}

/// A literal from a scalar; `None` for arrays, objects and absence (`undefined`).
pub(super) fn lit(v: Option<&J>) -> Option<Lit> {
    match v? {
        J::Num(n) => Some(Lit::Num(*n)),
        J::Str(s) => Some(Lit::Str(s.clone())),
        J::Bool(b) => Some(Lit::Bool(*b)),
        J::Null => Some(Lit::Null),
        J::Arr(_) | J::Obj(_) => None,
    }
}

/// The order in which V8's `Array.prototype.sort` (TimSort) leaves `keys`
/// with the comparator `(a, b) => a - b`, as scratch-vm sorts targets by
/// `layerOrder`. Exact for fewer than 64 targets (a single binary-insertion
/// run, where NaN comparisons from missing `layerOrder`s matter); above that
/// a stable sort is used, which is the same whenever every key is a number.
pub(super) fn v8_sort_order(keys: &[f64]) -> Vec<usize> {
    let n = keys.len();
    let mut work: Vec<usize> = (0..n).collect();
    if n < 2 {
        return work;
    }
    let cmp = |a: usize, b: usize| keys[a] - keys[b];
    if n >= 64 {
        work.sort_by(|&a, &b| keys[a].partial_cmp(&keys[b]).unwrap_or(std::cmp::Ordering::Equal));
        return work;
    }
    // CountAndMakeRun.
    let mut run = 2;
    let descending = cmp(work[1], work[0]) < 0.0;
    let mut prev = work[1];
    for &cur in &work[2..] {
        let order = cmp(cur, prev);
        if descending {
            if order >= 0.0 {
                break;
            }
        } else if order < 0.0 {
            break;
        }
        prev = cur;
        run += 1;
    }
    if descending {
        work[..run].reverse();
    }
    // BinaryInsertionSort of the rest (min run = n below 64).
    for start in run..n {
        let pivot = work[start];
        let (mut left, mut right) = (0, start);
        while left < right {
            let mid = left + ((right - left) >> 1);
            if cmp(pivot, work[mid]) < 0.0 {
                right = mid;
            } else {
                left = mid + 1;
            }
        }
        work.copy_within(left..start, left + 1);
        work[left] = pivot;
    }
    work
}

/// One declaration in a target's single id space.
pub(super) enum Decl {
    Var(VarDef),
    List(VarDef),
    Broadcast(String),
}

impl Loader<'_> {
    pub(super) fn warn(&mut self, msg: String) {
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(msg);
        } else {
            self.dropped_warnings += 1;
        }
    }

    pub(super) fn finish_warnings(&mut self) -> Vec<String> {
        let mut w = std::mem::take(&mut self.warnings);
        if self.dropped_warnings > 0 {
            w.push(format!("… and {} more warnings", self.dropped_warnings));
        }
        w
    }

    pub(super) fn fail(&self, b: Bad) -> LoadError {
        LoadError { file: self.file.to_string(), kind: b.kind, target: b.target, block: b.block, msg: b.msg }
    }

    pub(super) fn project(&mut self, root: &J) -> Result<Project, LoadError> {
        self.project_inner(root).map_err(|b| self.fail(b))
    }

    fn project_inner(&mut self, root: &J) -> Result<Project, Bad> {
        let Some(obj) = root.as_obj() else {
            return Err(Bad::top(
                LoadErrorKind::NotAProject,
                format!("project.json is {}, not an object: not a Scratch project", root.type_name()),
            ));
        };
        let tobjs = self.target_objects(obj)?;
        if let Some(broken) = super::schema::project(obj) {
            let why = format!("{}: scratch-vm's project schema rejects the file", broken.why);
            return Err(match broken.target.and_then(|i| tobjs.get(i)) {
                Some((_, name)) => Bad::malformed(name, why),
                None => Bad::top(LoadErrorKind::Malformed, why),
            });
        }
        let layer = self.layer_orders(&tobjs);
        let mut blocks: Vec<Block> = Vec::new();
        let mut targets: Vec<TargetDef> = Vec::with_capacity(tobjs.len());
        let mut counts = Counts::default();
        for (ti, (tobj, tname)) in tobjs.iter().enumerate() {
            targets.push(self.target(ti, tobj, tname, layer[ti], &mut blocks, &mut counts)?);
        }
        self.unique_sprite_names(&mut targets);
        let extensions = match obj.get("extensions") {
            Some(J::Arr(a)) => a.iter().filter_map(|e| e.as_str().map(str::to_string)).collect(),
            _ => Vec::new(),
        };
        let monitors = match obj.get("monitors") {
            Some(J::Arr(a)) => a.iter().filter_map(J::as_obj).map(monitor).collect(),
            _ => Vec::new(),
        };
        let meta = match obj.get("meta") {
            Some(J::Obj(m)) => ProjectMeta {
                semver: m.get("semver").and_then(J::as_str).map(str::to_string),
                vm: m.get("vm").and_then(J::as_str).map(str::to_string),
                agent: m.get("agent").and_then(J::as_str).map(str::to_string),
            },
            _ => ProjectMeta::default(),
        };
        Ok(Project {
            targets,
            blocks,
            extensions,
            assets: BTreeMap::new(),
            content_hash: String::new(),
            monitors,
            meta,
            warnings: Vec::new(),
            shared: std::mem::take(&mut self.shared),
            compiled: Default::default(),
            geometry_data: Default::default(),
        })
    }

    /// The `targets` array checked for structure: objects with names, exactly one stage and
    /// it comes first, within the target limit. Scratch 2 projects and sprite files are told
    /// apart from other files that are not projects.
    fn target_objects<'j>(&mut self, obj: &'j Obj) -> Result<Vec<(&'j Obj, String)>, Bad> {
        let targets_json = match obj.get("targets") {
            Some(J::Arr(a)) => a,
            Some(other) => {
                return Err(Bad::top(
                    LoadErrorKind::Malformed,
                    format!("`targets` is {}, not an array", other.type_name()),
                ));
            }
            None => {
                if obj.has("objName") || obj.has("children") || obj.has("info") {
                    return Err(Bad::top(
                        LoadErrorKind::Scratch2,
                        "this is a Scratch 2 project (sb2); only Scratch 3 projects are supported \
                         (open and save it in Scratch 3 to convert it)",
                    ));
                }
                if obj.has("isStage") && obj.has("blocks") {
                    return Err(Bad::top(LoadErrorKind::Sprite, "this is a sprite (sprite.json), not a project"));
                }
                return Err(Bad::top(LoadErrorKind::NotAProject, "no `targets` array: not a Scratch 3 project.json"));
            }
        };
        if targets_json.len() > self.limits.max_targets {
            return Err(Bad::top(
                LoadErrorKind::Limit,
                format!("{} targets, over the limit of {}", targets_json.len(), self.limits.max_targets),
            ));
        }
        if targets_json.is_empty() {
            return Err(Bad::top(LoadErrorKind::Malformed, "no targets: a project needs a stage"));
        }
        let mut tobjs: Vec<(&Obj, String)> = Vec::with_capacity(targets_json.len());
        for (ti, t) in targets_json.iter().enumerate() {
            let Some(tobj) = t.as_obj() else {
                return Err(Bad::top(
                    LoadErrorKind::Malformed,
                    format!("target #{ti} is {}, not an object", t.type_name()),
                ));
            };
            let name = match tobj.get("name") {
                Some(J::Str(s)) => s.clone(),
                Some(J::Num(n)) => number_to_js_string(*n),
                _ => return Err(Bad::top(LoadErrorKind::Malformed, format!("target #{ti} has no name"))),
            };
            let is_stage = tobj.get("isStage").is_some_and(J::truthy);
            if ti == 0 && !is_stage {
                return Err(Bad::malformed(&name, "the first target must be the stage (`isStage`: true)"));
            }
            if ti > 0 && is_stage {
                return Err(Bad::malformed(
                    &name,
                    "a second stage (`isStage`: true); only the first target may be the stage",
                ));
            }
            tobjs.push((tobj, name));
        }
        Ok(tobjs)
    }

    /// Each target's layer: scratch-vm sorts the targets by `layerOrder` with `a - b`.
    fn layer_orders(&mut self, tobjs: &[(&Obj, String)]) -> Vec<i64> {
        let keys: Vec<f64> = tobjs.iter().map(|(o, _)| js_number(o.get("layerOrder"))).collect();
        if keys.iter().any(|k| k.is_nan()) {
            self.warn("some targets have no numeric layerOrder; ordered as scratch-vm's sort leaves them".into());
        }
        let mut layer = vec![0i64; tobjs.len()];
        for (pos, &ti) in v8_sort_order(&keys).iter().enumerate() {
            layer[ti] = pos as i64;
        }
        layer
    }

    /// Target `ti`: its blocks (appended to the arena and checked), declarations, costumes,
    /// sounds and properties.
    fn target(
        &mut self,
        ti: usize,
        tobj: &Obj,
        tname: &String,
        layer_order: i64,
        blocks: &mut Vec<Block>,
        counts: &mut Counts,
    ) -> Result<TargetDef, Bad> {
        let is_stage = ti == 0;
        let base = blocks.len();
        let mut load_uids = 0;
        match tobj.get("blocks") {
            Some(J::Obj(bj)) => {
                if blocks.len() + bj.len() > self.limits.max_blocks {
                    return Err(Bad::top(
                        LoadErrorKind::Limit,
                        format!("more than {} blocks (at target {tname:?})", self.limits.max_blocks),
                    ));
                }
                self.blocks(bj, ti as u32, tname, blocks)?;
                load_uids = super::blocks::compact_inputs(bj);
            }
            None | Some(J::Null) => {}
            Some(other) => {
                return Err(Bad::malformed(tname, format!("`blocks` is {}, not an object", other.type_name())));
            }
        }
        self.shared.extend(check_tree(blocks, base, tname, self.limits.max_block_depth)?);
        let scripts: Vec<BlockIdx> =
            (base..blocks.len()).filter(|&i| blocks[i].top_level).map(|i| i as BlockIdx).collect();
        let (procedure_definitions, procedure_prototypes) = procedure_index(blocks, base);

        let (variables, lists, broadcasts) = self.declarations(tobj, tname, is_stage, &mut counts.cloud);
        counts.list_items += lists.iter().map(|l| l.items.len()).sum::<usize>();
        if counts.list_items > self.limits.max_list_items {
            return Err(Bad {
                kind: LoadErrorKind::Limit,
                target: Some(tname.clone()),
                block: None,
                msg: format!("more than {} initial list items", self.limits.max_list_items),
            });
        }
        let costumes = self.costumes(tobj, tname);
        if costumes.is_empty() {
            return Err(Bad::malformed(tname, "no costumes (Scratch requires at least one)"));
        }
        let sounds = self.sounds(tobj, tname);
        let current_costume = {
            let c = js_number(tobj.get("currentCostume"));
            let c = if c.is_nan() { 0.0 } else { c.floor() };
            c.clamp(0.0, (costumes.len() - 1) as f64) as usize
        };
        let direction = self.num_prop(tobj, "direction", 90.0, tname);
        let visible = match tobj.get("visible") {
            None => true,
            Some(J::Bool(b)) => *b,
            Some(other) => {
                self.warn(format!("target {tname:?}: `visible` is {}; JS truthiness used", other.type_name()));
                other.truthy()
            }
        };
        let rotation_style = self.str_prop(tobj, "rotationStyle", "all around", tname);
        let video_state = self.str_prop(tobj, "videoState", "on", tname);
        let text_to_speech_language = match tobj.get("textToSpeechLanguage") {
            Some(J::Str(s)) => Some(s.clone()),
            _ => None,
        };
        Ok(TargetDef {
            name: tname.clone(),
            is_stage,
            variables,
            lists,
            broadcasts,
            scripts,
            costumes,
            sounds,
            current_costume,
            x: self.num_prop(tobj, "x", 0.0, tname),
            y: self.num_prop(tobj, "y", 0.0, tname),
            direction,
            size: self.num_prop(tobj, "size", 100.0, tname),
            visible,
            rotation_style,
            draggable: matches!(tobj.get("draggable"), Some(J::Bool(true))),
            volume: self.num_prop(tobj, "volume", 100.0, tname),
            layer_order,
            load_uids,
            tempo: self.num_prop(tobj, "tempo", 60.0, tname),
            video_transparency: self.num_prop(tobj, "videoTransparency", 50.0, tname),
            video_state,
            text_to_speech_language,
            procedure_definitions,
            procedure_prototypes,
        })
    }

    /// Unique sprite names, in install (pane) order, as `renameSprite`.
    fn unique_sprite_names(&mut self, targets: &mut [TargetDef]) {
        let mut names = UniqueNames::new();
        for t in targets.iter_mut().skip(1) {
            if t.name.is_empty() || RESERVED_NAMES.contains(&t.name.as_str()) {
                names.insert(&t.name);
            } else {
                let unique = names.claim(&t.name);
                if unique != t.name {
                    self.warn(format!(
                        "sprite name {:?} is used twice; renamed to {unique:?} as scratch-vm does",
                        t.name
                    ));
                    t.name = unique;
                }
            }
        }
    }

    /// A numeric target property: numbers as is, other scalars through JS
    /// `Number()`, the default when absent or not a number.
    pub(super) fn num_prop(&mut self, o: &Obj, key: &str, default: f64, tname: &str) -> f64 {
        match o.get(key) {
            None => default,
            Some(J::Num(n)) => *n,
            Some(other) => {
                let n = js_number(Some(other));
                let v = if n.is_finite() { n } else { default };
                self.warn(format!(
                    "target {tname:?}: `{key}` is {}; using {}",
                    other.type_name(),
                    number_to_js_string(v)
                ));
                v
            }
        }
    }

    pub(super) fn str_prop(&mut self, o: &Obj, key: &str, default: &str, tname: &str) -> String {
        match o.get(key) {
            None => default.to_string(),
            Some(J::Str(s)) => s.clone(),
            Some(other) => {
                self.warn(format!("target {tname:?}: `{key}` is {}; using {default:?}", other.type_name()));
                default.to_string()
            }
        }
    }

    /// Variables, lists and broadcasts in scratch-vm's single id space per target.
    pub(super) fn declarations(
        &mut self,
        tobj: &Obj,
        tname: &str,
        is_stage: bool,
        cloud_count: &mut usize,
    ) -> (Vec<VarDef>, Vec<VarDef>, Vec<(String, String)>) {
        // `target.variables` as a JS object: slots in key order (None = deleted)
        // and an index from id to slot.
        let mut decls: Vec<Option<(String, Decl)>> = Vec::new();
        let mut slot_of: HashMap<String, usize> = HashMap::new();
        let put =
            |decls: &mut Vec<Option<(String, Decl)>>, slot_of: &mut HashMap<String, usize>, id: String, d: Decl| {
                match slot_of.get(&id) {
                    // Re-assigning a JS key keeps its position.
                    Some(&i) => decls[i] = Some((id, d)),
                    None => {
                        slot_of.insert(id.clone(), decls.len());
                        decls.push(Some((id, d)));
                    }
                }
            };
        if let Some(J::Obj(vars)) = tobj.get("variables") {
            for (id, v) in vars.iter() {
                let Some(a) = v.as_arr() else {
                    self.warn(format!("target {tname:?}: variable {id:?} is {}, skipped", v.type_name()));
                    continue;
                };
                let name = js_string(a.first()).unwrap_or_default();
                // scratch-vm assigns `variable[1]` whatever it is: a variable saved without a
                // value starts `undefined` (it says "undefined", equals no number).
                let value = match a.get(1) {
                    None => Lit::Undefined,
                    v => lit(v).unwrap_or_else(|| {
                        self.warn(format!("target {tname:?}: variable {name:?} has no scalar value; using 0"));
                        Lit::Num(0.0)
                    }),
                };
                let cloud = a.len() == 3 && a[2].truthy() && is_stage && *cloud_count < 10;
                *cloud_count += usize::from(cloud);
                let def = VarDef { id: id.to_string(), name, value, items: Vec::new(), cloud };
                put(&mut decls, &mut slot_of, id.to_string(), Decl::Var(def));
            }
        }
        if let Some(J::Obj(lists)) = tobj.get("lists") {
            for (id, v) in lists.iter() {
                let Some(a) = v.as_arr() else {
                    self.warn(format!("target {tname:?}: list {id:?} is {}, skipped", v.type_name()));
                    continue;
                };
                let name = js_string(a.first()).unwrap_or_default();
                let items = match a.get(1) {
                    Some(J::Arr(items)) => items
                        .iter()
                        .map(|it| {
                            lit(Some(it)).unwrap_or_else(|| {
                                self.warn(format!(
                                    "target {tname:?}: list {name:?} has a {} item; using \"\"",
                                    it.type_name()
                                ));
                                Lit::Str(String::new())
                            })
                        })
                        .collect(),
                    _ => {
                        self.warn(format!("target {tname:?}: list {name:?} has no item array; empty"));
                        Vec::new()
                    }
                };
                let def = VarDef { id: id.to_string(), name, value: Lit::Num(0.0), items, cloud: false };
                put(&mut decls, &mut slot_of, id.to_string(), Decl::List(def));
            }
        }
        if let Some(J::Obj(bs)) = tobj.get("broadcasts") {
            for (id, v) in bs.iter() {
                let name = js_string(Some(v)).unwrap_or_default();
                put(&mut decls, &mut slot_of, id.to_string(), Decl::Broadcast(name));
            }
        }
        // replaceUnsafeCharsInVariableIds: an unsafe id moves to the end under
        // its safe id, or replaces the declaration already holding that id.
        // (Object.keys is a snapshot: only the ids present before the pass move.)
        for i in 0..decls.len() {
            let Some((id, _)) = &decls[i] else { continue };
            let safe = replace_unsafe_chars(id);
            if safe == *id {
                continue;
            }
            if let Some((id, d)) = decls[i].take() {
                slot_of.remove(&id);
                put(&mut decls, &mut slot_of, safe, d);
            }
        }
        let (mut vars, mut lists, mut broadcasts) = (Vec::new(), Vec::new(), Vec::new());
        for (id, d) in decls.into_iter().flatten() {
            match d {
                Decl::Var(mut v) => {
                    v.id = id;
                    vars.push(v);
                }
                Decl::List(mut l) => {
                    l.id = id;
                    lists.push(l);
                }
                Decl::Broadcast(name) => broadcasts.push((id, name)),
            }
        }
        (vars, lists, broadcasts)
    }

    pub(super) fn costumes(&mut self, tobj: &Obj, tname: &str) -> Vec<Costume> {
        let Some(J::Arr(a)) = tobj.get("costumes") else { return Vec::new() };
        let mut out = Vec::with_capacity(a.len());
        for c in a {
            let Some(c) = c.as_obj() else {
                self.warn(format!("target {tname:?}: a costume is {}, skipped", c.type_name()));
                continue;
            };
            let asset_id = js_string(c.get("assetId")).unwrap_or_default();
            let data_format = match c.get("dataFormat") {
                Some(J::Str(s)) if !s.is_empty() => s.clone(),
                _ => "png".to_string(),
            };
            let md5ext = match c.get("md5ext") {
                Some(v) => js_string(Some(v)).unwrap_or_default(),
                None => format!("{asset_id}.{data_format}"),
            };
            let rx = c.get("rotationCenterX").map(|v| js_number(Some(v)));
            let ry = c.get("rotationCenterY").map(|v| js_number(Some(v)));
            let has_rotation_center = rx.is_some_and(f64::is_finite) && ry.is_some_and(f64::is_finite);
            let br = js_number(c.get("bitmapResolution"));
            out.push(Costume {
                name: js_string(c.get("name")).unwrap_or_default(),
                asset_id,
                md5ext,
                data_format,
                rotation_center_x: if has_rotation_center { rx.unwrap_or(0.0) } else { 0.0 },
                rotation_center_y: if has_rotation_center { ry.unwrap_or(0.0) } else { 0.0 },
                has_rotation_center,
                bitmap_resolution: if br.is_finite() && br > 0.0 { br } else { 1.0 },
            });
        }
        out
    }

    pub(super) fn sounds(&mut self, tobj: &Obj, tname: &str) -> Vec<Sound> {
        let Some(J::Arr(a)) = tobj.get("sounds") else { return Vec::new() };
        let mut out = Vec::with_capacity(a.len());
        for s in a {
            let Some(s) = s.as_obj() else {
                self.warn(format!("target {tname:?}: a sound is {}, skipped", s.type_name()));
                continue;
            };
            let name = js_string(s.get("name")).unwrap_or_default();
            let asset_id = js_string(s.get("assetId")).unwrap_or_default();
            let data_format = js_string(s.get("dataFormat")).unwrap_or_default();
            let md5ext = match s.get("md5ext") {
                Some(v) => js_string(Some(v)).unwrap_or_default(),
                None => format!("{asset_id}.{data_format}"),
            };
            let mut rate = js_number(s.get("rate"));
            if !(rate.is_finite() && rate > 0.0) {
                if s.has("rate") {
                    self.warn(format!("target {tname:?}: sound {name:?} has rate {rate}; using 48000"));
                }
                rate = 48_000.0;
            }
            let mut sample_count = js_number(s.get("sampleCount"));
            if !(sample_count.is_finite() && sample_count >= 0.0) {
                if s.has("sampleCount") {
                    self.warn(format!("target {tname:?}: sound {name:?} has sampleCount {sample_count}; using 0"));
                }
                sample_count = 0.0;
            }
            out.push(Sound {
                name,
                asset_id,
                md5ext,
                data_format,
                format: js_string(s.get("format")).unwrap_or_default(),
                rate,
                sample_count,
                wav: None,
            });
        }
        out
    }
}
