//! Reading one target's `blocks` object into the block arena: object blocks in JSON order,
//! then top-level compact reporters; inputs resolved as scratch-vm resolves `input.block`;
//! procedure mutations; and the project's monitors.

use std::collections::HashMap;

use super::json::{self, J, Obj};
use super::loader::{Bad, Loader, js_number, js_string, lit};
use super::{Block, BlockIdx, Field, Input, Lit, LoadErrorKind, Monitor, Mutation};
use crate::util::cast::number_to_js_string;
use crate::util::string::replace_unsafe_chars;

/// Opcodes whose blocks are pure literals: never implemented by scratch-vm,
/// so with one field and no inputs they evaluate to the field's value.
const LITERAL_OPCODES: [&str; 7] =
    ["math_number", "math_positive_number", "math_whole_number", "math_integer", "math_angle", "text", "colour_picker"];

impl Loader<'_> {
    /// Parses one target's `blocks` object into the shared arena (object
    /// blocks in JSON order, then top-level compact reporters).
    pub(super) fn blocks(&mut self, bj: &Obj, target: u32, tname: &str, blocks: &mut Vec<Block>) -> Result<(), Bad> {
        let base = blocks.len();
        let mut index: HashMap<&str, (BlockIdx, &Obj)> = HashMap::with_capacity(bj.len());
        let mut objects: Vec<(&str, &Obj)> = Vec::with_capacity(bj.len());
        let mut prims: Vec<(&str, &[J])> = Vec::new();
        for (id, b) in bj.iter() {
            let broken = match b {
                J::Obj(o) => super::schema::block(o),
                J::Arr(a) if !super::schema::top_level_primitive(a) => {
                    Some("is an array but not a variable or list reporter `[12|13, name, id, x?, y?]`".into())
                }
                _ => None,
            };
            if let Some(why) = broken {
                return Err(Bad::at_block(
                    LoadErrorKind::Malformed,
                    tname,
                    id,
                    format!("{why}: scratch-vm's project schema rejects the file"),
                ));
            }
            match b {
                J::Obj(o) => {
                    index.insert(id, ((base + objects.len()) as BlockIdx, o));
                    objects.push((id, o));
                }
                J::Arr(a) => prims.push((id, a)),
                other => {
                    return Err(Bad::at_block(
                        LoadErrorKind::Malformed,
                        tname,
                        id,
                        format!("is {}, neither a block object nor a compact reporter array", other.type_name()),
                    ));
                }
            }
        }
        for (id, o) in &objects {
            let block = self.block(id, o, &index, target, tname)?;
            blocks.push(block);
        }
        // Top-level compact reporters: scratch-vm re-creates them under new ids
        // after all other blocks (so nothing can link to them).
        for (id, a) in prims {
            let (opcode, field) = match a.first() {
                Some(J::Num(k)) if *k == 12.0 => ("data_variable", "VARIABLE"),
                Some(J::Num(k)) if *k == 13.0 => ("data_listcontents", "LIST"),
                _ => {
                    self.warn(format!(
                        "target {tname:?}: top-level entry {id:?} is not a variable or list reporter; skipped"
                    ));
                    continue;
                }
            };
            let name = js_string(a.get(1)).unwrap_or_default();
            let vid = js_string(a.get(2)).map(|s| replace_unsafe_chars(&s));
            blocks.push(Block {
                id: id.to_string(),
                opcode: opcode.to_string(),
                next: None,
                next_missing: false,
                parent: None,
                inputs: Vec::new(),
                fields: vec![Field { name: field.to_string(), value: name.clone(), raw: Lit::Str(name), id: vid }],
                shadow: false,
                top_level: a.len() > 3,
                mutation: None,
                target,
            });
        }
        Ok(())
    }

    pub(super) fn block(
        &mut self,
        id: &str,
        o: &Obj,
        index: &HashMap<&str, (BlockIdx, &Obj)>,
        target: u32,
        tname: &str,
    ) -> Result<Block, Bad> {
        let opcode = match o.get("opcode") {
            Some(J::Str(s)) => s.clone(),
            Some(other) => {
                return Err(Bad::at_block(
                    LoadErrorKind::Malformed,
                    tname,
                    id,
                    format!("opcode is {}, not a string", other.type_name()),
                ));
            }
            None => return Err(Bad::at_block(LoadErrorKind::Malformed, tname, id, "has no opcode")),
        };
        let (next, next_missing) = match o.get("next") {
            None | Some(J::Null) => (None, false),
            Some(v) => match js_string(Some(v)).and_then(|s| index.get(s.as_str()).map(|(i, _)| *i)) {
                Some(i) => (Some(i), false),
                None => {
                    self.warn(format!("target {tname:?}: block {id:?}: `next` names a missing block"));
                    (None, true)
                }
            },
        };
        let mut inputs = Vec::new();
        if let Some(J::Obj(inp)) = o.get("inputs") {
            for (iname, spec) in inp.iter() {
                // scratch-vm skips inputs that are not arrays.
                let Some(a) = spec.as_arr() else { continue };
                // input.block is element 1 whatever the shadow kind says. A
                // link to a missing block makes scratch-vm throw each time the
                // block runs; we read the obscured shadow (element 2) instead.
                if let Some(J::Arr(p)) = a.get(1)
                    && !matches!(p.first(), Some(J::Num(k)) if k.fract() == 0.0 && (4.0..=13.0).contains(k))
                {
                    self.warn(format!("target {tname:?}: block {id:?}: input {iname} has an unknown primitive"));
                }
                let input = match self.input_desc(a.get(1), index) {
                    Some(input) => input,
                    None => {
                        self.warn(format!("target {tname:?}: block {id:?}: input {iname} links to a missing block"));
                        self.input_desc(a.get(2), index).unwrap_or(Input::Empty)
                    }
                };
                inputs.push((iname.to_string(), input));
            }
        }
        let fields = match o.get("fields") {
            Some(J::Obj(fs)) => fields(fs),
            _ => Vec::new(),
        };
        let mutation = match o.get("mutation") {
            Some(J::Obj(m)) => Some(self.mutation(m, tname, id)),
            _ => None,
        };
        Ok(Block {
            id: id.to_string(),
            opcode,
            next,
            next_missing,
            parent: None,
            inputs,
            fields,
            shadow: o.get("shadow").is_some_and(J::truthy),
            top_level: o.get("topLevel").is_some_and(J::truthy),
            mutation,
            target,
        })
    }

    /// scratch-vm's `deserializeInputDesc` followed by what `BlockCached`
    /// makes of it. `None`: a link to a block that does not exist.
    pub(super) fn input_desc(&self, v: Option<&J>, index: &HashMap<&str, (BlockIdx, &Obj)>) -> Option<Input> {
        match v {
            None | Some(J::Null) => Some(Input::Empty),
            Some(J::Arr(p)) => Some(primitive(p)),
            Some(other) => {
                let key = js_string(Some(other)).unwrap_or_default();
                let &(idx, child) = index.get(key.as_str())?;
                Some(match child.get("opcode").and_then(J::as_str) {
                    Some(op) if LITERAL_OPCODES.contains(&op) => {
                        // Literal blocks are only values with exactly one field
                        // and no inputs (else scratch-vm leaves the argument
                        // undefined: no implementation runs).
                        let fs = match child.get("fields") {
                            Some(J::Obj(f)) => f.iter().filter(|(_, v)| v.as_arr().is_some()).collect::<Vec<_>>(),
                            _ => Vec::new(),
                        };
                        let n_inputs = match child.get("inputs") {
                            Some(J::Obj(i)) => i.iter().filter(|(_, v)| v.as_arr().is_some()).count(),
                            _ => 0,
                        };
                        match (fs.as_slice(), n_inputs) {
                            ([(_, f)], 0) => f.as_arr().and_then(|a| lit(a.first())).map_or(Input::Empty, Input::Lit),
                            _ => Input::Empty,
                        }
                    }
                    _ => Input::Block(idx),
                })
            }
        }
    }

    pub(super) fn mutation(&mut self, m: &Obj, tname: &str, bid: &str) -> Mutation {
        let mut list = |key: &str| -> Vec<String> {
            let parsed = match m.get(key) {
                None => return Vec::new(),
                Some(J::Str(s)) => json::parse(s).ok(),
                Some(v @ J::Arr(_)) => Some(v.clone()),
                Some(_) => None,
            };
            match parsed {
                Some(J::Arr(a)) => a.iter().map(|v| js_string(Some(v)).unwrap_or_default()).collect(),
                _ => {
                    self.warn(format!("target {tname:?}: block {bid:?}: mutation `{key}` is not a JSON array; empty"));
                    Vec::new()
                }
            }
        };
        let argument_ids = list("argumentids");
        let argument_names = list("argumentnames");
        let argument_defaults = list("argumentdefaults");
        // scratch-vm: booleans as is, strings through JSON.parse, then truthiness.
        let flag = |v: Option<&J>| -> Result<Option<bool>, ()> {
            match v {
                None | Some(J::Null) => Ok(None),
                Some(J::Bool(b)) => Ok(Some(*b)),
                Some(J::Str(s)) => json::parse(s).map(|j| Some(j.truthy())).map_err(|_| ()),
                Some(other) => Ok(Some(other.truthy())),
            }
        };
        let warp = flag(m.get("warp")).unwrap_or_else(|()| {
            self.warn(format!("target {tname:?}: block {bid:?}: `warp` is not JSON; false"));
            None
        });
        Mutation {
            proccode: js_string(m.get("proccode")).unwrap_or_default(),
            argument_ids,
            argument_names,
            argument_defaults,
            warp: warp.unwrap_or(false),
            has_next: flag(m.get("hasnext")).ok().flatten(),
        }
    }
}

/// A compact primitive `[kind, value, id?]`. Unknown kinds (scratch-vm logs
/// and drops them) and values that are not scalars are `Empty`; a missing
/// value is `undefined`, so `Empty` too.
/// How many `uid()`s scratch-vm's `deserializeBlocks` draws for a target's blocks: one for
/// every array it expands into a new block (`deserializeInputDesc`): a top-level compact
/// reporter, an input's block (element 1) and, unless the input says it has no separate
/// shadow (kinds 1 and 2), its obscured shadow (element 2).
pub(super) fn compact_inputs(bj: &Obj) -> u32 {
    let mut n = 0u32;
    for (_, b) in bj.iter() {
        match b {
            J::Arr(_) => n = n.saturating_add(1),
            J::Obj(o) => {
                let Some(J::Obj(inputs)) = o.get("inputs") else { continue };
                for (_, spec) in inputs.iter() {
                    let Some(a) = spec.as_arr() else { continue };
                    let kind = match a.first() {
                        Some(J::Num(k)) => Some(*k),
                        _ => None,
                    };
                    if matches!(a.get(1), Some(J::Arr(_))) {
                        n = n.saturating_add(1);
                    }
                    if kind != Some(1.0) && kind != Some(2.0) && matches!(a.get(2), Some(J::Arr(_))) {
                        n = n.saturating_add(1);
                    }
                }
            }
            _ => {}
        }
    }
    n
}

pub(super) fn primitive(p: &[J]) -> Input {
    let kind = match p.first() {
        Some(J::Num(k)) if k.fract() == 0.0 && (4.0..=13.0).contains(k) => *k as u8,
        _ => return Input::Empty,
    };
    let name = || js_string(p.get(1)).unwrap_or_default();
    let id = || replace_unsafe_chars(&js_string(p.get(2)).unwrap_or_default());
    match kind {
        4..=10 => lit(p.get(1)).map_or(Input::Empty, Input::Lit),
        11 => Input::Broadcast { name: name(), id: id() },
        12 => Input::Variable { name: name(), id: id() },
        _ => Input::List { name: name(), id: id() },
    }
}

/// Fields as scratch-vm's `deserializeFields` keeps them (array values only).
pub(super) fn fields(fs: &Obj) -> Vec<Field> {
    let mut out = Vec::with_capacity(fs.len());
    for (fname, spec) in fs.iter() {
        let Some(a) = spec.as_arr() else { continue };
        let raw = lit(a.first()).unwrap_or_else(|| Lit::Str(String::new()));
        let mut id = match a.get(1) {
            Some(J::Str(s)) => Some(s.clone()),
            Some(J::Num(n)) => Some(number_to_js_string(*n)),
            _ => None,
        };
        if matches!(fname, "VARIABLE" | "LIST" | "BROADCAST_OPTION") {
            id = id.map(|i| replace_unsafe_chars(&i));
        }
        out.push(Field { name: fname.to_string(), value: raw.to_js_string(), raw, id });
    }
    out
}

pub(super) fn monitor(m: &Obj) -> Monitor {
    let num = |k: &str, d: f64| {
        let n = js_number(m.get(k));
        if n.is_finite() { n } else { d }
    };
    let params = match m.get("params") {
        Some(J::Obj(p)) => p.iter().map(|(k, v)| (k.to_string(), js_string(Some(v)).unwrap_or_default())).collect(),
        _ => Vec::new(),
    };
    let opcode = js_string(m.get("opcode")).unwrap_or_default();
    let mut id = js_string(m.get("id")).unwrap_or_default();
    if opcode == "data_variable" || opcode == "data_listcontents" {
        id = replace_unsafe_chars(&id);
    }
    Monitor {
        id,
        mode: js_string(m.get("mode")).unwrap_or_default(),
        opcode,
        params,
        sprite_name: m.get("spriteName").and_then(J::as_str).map(str::to_string),
        visible: m.get("visible").is_some_and(J::truthy),
        slider_min: num("sliderMin", 0.0),
        slider_max: num("sliderMax", 100.0),
        is_discrete: m.get("isDiscrete").is_none_or(J::truthy),
    }
}
