//! A mutant as a `project.json`: its [`Edit`] applied to the document the project was loaded
//! from, so that other tools (the real Whisker, a teacher's browser) run the same program.
//!
//! The edit is the one [`super::operators::apply_edit`] makes on the model, written in the
//! file's own terms: blocks by id inside their target, `next`/`parent` links, input slots as
//! `[shadow type, block, shadow]` arrays, compact variable references `[12, name, id]`. Every
//! other key keeps its place, so scratch-vm walks scripts in the same order. A test loads every
//! written mutant back and checks that it runs exactly as the model's mutant.

use clowder_vm::project::Project;
use clowder_vm::project::json::{J, Obj};

use super::operators::{Edit, MisfitMutant, ncm_block_id};

/// Applies `edit` (a mutant of `project`) to `doc`, the `project.json` `project` was loaded
/// from. On error `doc` may be partly edited; callers edit a fresh copy.
pub fn apply_edit_to_document(doc: &mut J, project: &Project, edit: &Edit) -> Result<(), MisfitMutant> {
    let misfit = |why: &str| MisfitMutant(format!("{edit:?}: {why}"));
    let model = |idx: u32| project.blocks.get(idx as usize).ok_or_else(|| misfit("no such block"));
    let b = model(edit.block())?;
    let target = b.target;
    let id = b.id.clone();
    let blocks = doc
        .as_obj_mut()
        .and_then(|o| o.get_mut("targets"))
        .and_then(J::as_arr_mut)
        .and_then(|t| t.get_mut(target as usize))
        .and_then(J::as_obj_mut)
        .and_then(|t| t.get_mut("blocks"))
        .and_then(J::as_obj_mut)
        .ok_or_else(|| misfit("the target has no blocks object"))?;
    fn find<'a>(blocks: &'a mut Obj, id: &str) -> Option<&'a mut Obj> {
        blocks.get_mut(id).and_then(J::as_obj_mut)
    }
    let missing = |id: &str| misfit(&format!("block {id:?} is not in the file"));
    match edit {
        Edit::SetKey { key, .. } => set_field(find(blocks, &id).ok_or_else(|| missing(&id))?, "KEY_OPTION", key, None)
            .ok_or_else(|| misfit("no KEY_OPTION"))?,
        Edit::DeleteBlock { .. } => {
            let parent = model(b.parent.ok_or_else(|| misfit("no parent"))?)?.id.clone();
            let next = b.next.map(model).transpose()?.map(|n| n.id.clone());
            let p = find(blocks, &parent).ok_or_else(|| missing(&parent))?;
            if p.get("next").and_then(J::as_str) == Some(id.as_str()) {
                p.set("next", next.clone().map_or(J::Null, J::Str));
            } else {
                let slot = input_holding(p, &id).ok_or_else(|| misfit("the parent holds the block nowhere"))?;
                let inputs = p.get_mut("inputs").and_then(J::as_obj_mut).ok_or_else(|| misfit("no inputs"))?;
                match &next {
                    Some(n) => set_input_block(inputs, &slot, n),
                    // An emptied C slot: no input at all, as the editor leaves it.
                    None => drop(inputs.remove(&slot)),
                }
            }
            if let Some(n) = &next {
                find(blocks, n).ok_or_else(|| missing(n))?.set("parent", J::Str(parent));
            }
            let me = find(blocks, &id).ok_or_else(|| missing(&id))?;
            me.set("parent", J::Null);
            me.set("next", J::Null);
        }
        Edit::DeleteScript { .. } => {
            let next = model(b.next.ok_or_else(|| misfit("the hat has no script"))?)?.id.clone();
            find(blocks, &id).ok_or_else(|| missing(&id))?.set("next", J::Null);
            find(blocks, &next).ok_or_else(|| missing(&next))?.set("parent", J::Null);
        }
        Edit::SetOpcode { opcode, .. } => {
            find(blocks, &id).ok_or_else(|| missing(&id))?.set("opcode", J::Str(opcode.clone()))
        }
        Edit::Negate { .. } => {
            let parent = model(b.parent.ok_or_else(|| misfit("no parent"))?)?.id.clone();
            let not_id = ncm_block_id(project, target, &id);
            if blocks.has(&not_id) {
                return Err(misfit("the new block's id is taken in the file"));
            }
            let p = find(blocks, &parent).ok_or_else(|| missing(&parent))?;
            let slot = input_holding(p, &id).ok_or_else(|| misfit("the parent holds the block nowhere"))?;
            let inputs = p.get_mut("inputs").and_then(J::as_obj_mut).ok_or_else(|| misfit("no inputs"))?;
            set_input_block(inputs, &slot, &not_id);
            find(blocks, &id).ok_or_else(|| missing(&id))?.set("parent", J::Str(not_id.clone()));
            let mut not = Obj::default();
            not.set("opcode", J::Str("operator_not".into()));
            not.set("next", J::Null);
            not.set("parent", J::Str(parent));
            let mut operand = Obj::default();
            operand.set("OPERAND", J::Arr(vec![J::Num(2.0), J::Str(id.clone())]));
            not.set("inputs", J::Obj(operand));
            not.set("fields", J::Obj(Obj::default()));
            not.set("shadow", J::Bool(false));
            not.set("topLevel", J::Bool(false));
            blocks.set(&not_id, J::Obj(not));
        }
        Edit::ReplaceVariable { input, name, id: var, .. } => {
            let me = find(blocks, &id).ok_or_else(|| missing(&id))?;
            match input {
                Some(slot) => {
                    let reference = me
                        .get_mut("inputs")
                        .and_then(J::as_obj_mut)
                        .and_then(|i| i.get_mut(slot))
                        .and_then(J::as_arr_mut)
                        .and_then(|a| a.get_mut(1))
                        .and_then(J::as_arr_mut)
                        .filter(|r| r.first() == Some(&J::Num(12.0)) && r.len() >= 3)
                        .ok_or_else(|| misfit("the slot holds no compact variable reference"))?;
                    reference[1] = J::Str(name.clone());
                    reference[2] = J::Str(var.clone());
                }
                None => set_field(me, "VARIABLE", name, Some(var)).ok_or_else(|| misfit("no VARIABLE field"))?,
            }
        }
    }
    Ok(())
}

/// Sets field `name` of a block object to `[value, id]` (`id` kept when not given).
fn set_field(block: &mut Obj, name: &str, value: &str, id: Option<&str>) -> Option<()> {
    let f = block.get_mut("fields")?.as_obj_mut()?.get_mut(name)?.as_arr_mut()?;
    match f.first_mut() {
        Some(v) => *v = J::Str(value.to_string()),
        None => f.push(J::Str(value.to_string())),
    }
    if let Some(id) = id {
        match f.get_mut(1) {
            Some(v) => *v = J::Str(id.to_string()),
            None => f.push(J::Str(id.to_string())),
        }
    }
    Some(())
}

/// The input slot of a block object whose block reference is `id`.
fn input_holding(block: &Obj, id: &str) -> Option<String> {
    block.get("inputs")?.as_obj()?.iter().find_map(|(slot, v)| {
        (v.as_arr().and_then(|a| a.get(1)).and_then(J::as_str) == Some(id)).then(|| slot.to_string())
    })
}

/// Points input `slot` (present) at block `id`, keeping its shadow.
fn set_input_block(inputs: &mut Obj, slot: &str, id: &str) {
    if let Some(a) = inputs.get_mut(slot).and_then(J::as_arr_mut) {
        if let Some(r) = a.get_mut(1) {
            *r = J::Str(id.to_string());
        }
    }
}
