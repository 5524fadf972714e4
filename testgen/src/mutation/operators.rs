//! The eight mutation operators of the Whisker study (paper Table 5) on the
//! loaded project model: where each one applies and what it changes.
//!
//! The definitions follow Whisker's implementation (branch `emse22`,
//! `whisker-main/src/whisker/scratch/ScratchMutation/` and scratch-analysis'
//! `block-filter.js`), with these deliberate differences (each one fixes a
//! Whisker slip, none changes what an operator means):
//!
//! * every operator produces at most one mutant per candidate, as Whisker
//!   does; where Whisker draws the replacement (key, operator, variable) from
//!   its global random stream, clowder draws it from a generator seeded with
//!   the operator, the sprite name and the block id, so a mutant is a
//!   property of the project alone (the same for every run and algorithm);
//! * NCM wraps the condition in the input slot that actually holds it (Whisker
//!   picks `OPERAND1` or `OPERAND2` at random when the parent has both, and
//!   gives up on parents with other slot names); a condition without a parent
//!   (a loose reporter) has no mutant, since wrapping it changes nothing;
//! * VRM draws the replacement from the variables in scope of the block's
//!   sprite: the stage's (global) variables and the sprite's own (Whisker
//!   meant the same but reads the stage's variables twice);
//! * KRM on a key menu (`key … pressed?`) needs the menu to be plugged into
//!   its block (an obscured shadow is never evaluated, so mutating it changes
//!   nothing);
//! * SDM also treats `when this sprite touches …` as a hat (a Scratch 3 hat
//!   that scratch-analysis' list predates);
//! * SBD treats every C block (a block with a `SUBSTACK` input) as branching,
//!   not only Whisker's list (`if`, `if else`, `repeat`, `repeat until`,
//!   `forever`, `wait until`), so `while` and `for each` are kept whole too.

use std::collections::BTreeMap;

use clowder_vm::project::{Block, BlockIdx, Input, Lit, Project};
use clowder_vm::rng::SplitMix64;
use serde::{Deserialize, Serialize};

/// A mutation operator (paper Table 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Operator {
    /// Key replacement: another key for a key hat or `key … pressed?`.
    KRM,
    /// Single block deletion: a statement that is neither a hat nor branching.
    SBD,
    /// Script deletion: the hat keeps no script.
    SDM,
    /// Arithmetic operator replacement (`+ - * /`).
    AOR,
    /// Logical operator replacement (`and` ↔ `or`).
    LOR,
    /// Relational operator replacement (`< = >`).
    ROR,
    /// Negate conditional: a boolean block is wrapped in `not`.
    NCM,
    /// Variable replacement: a variable reporter reads another variable.
    VRM,
}

impl Operator {
    /// All operators, in Table 5's order (the enumeration order of mutants).
    pub const ALL: [Operator; 8] = [
        Operator::KRM,
        Operator::SBD,
        Operator::SDM,
        Operator::AOR,
        Operator::LOR,
        Operator::ROR,
        Operator::NCM,
        Operator::VRM,
    ];

    /// The operator's abbreviation (`KRM`, …), as in the exports.
    pub fn name(self) -> &'static str {
        match self {
            Operator::KRM => "KRM",
            Operator::SBD => "SBD",
            Operator::SDM => "SDM",
            Operator::AOR => "AOR",
            Operator::LOR => "LOR",
            Operator::ROR => "ROR",
            Operator::NCM => "NCM",
            Operator::VRM => "VRM",
        }
    }

    /// Parses an abbreviation (case-insensitive).
    pub fn parse(s: &str) -> Option<Operator> {
        Operator::ALL.into_iter().find(|o| o.name().eq_ignore_ascii_case(s))
    }
}

impl std::fmt::Display for Operator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The keys KRM chooses from: the options of Scratch's key menu.
pub const KEY_OPTIONS: [&str; 42] = [
    "a",
    "b",
    "c",
    "d",
    "e",
    "f",
    "g",
    "h",
    "i",
    "j",
    "k",
    "l",
    "m",
    "n",
    "o",
    "p",
    "q",
    "r",
    "s",
    "t",
    "u",
    "v",
    "w",
    "x",
    "y",
    "z",
    "0",
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "7",
    "8",
    "9",
    "space",
    "up arrow",
    "down arrow",
    "right arrow",
    "left arrow",
    "any",
];

const ARITHMETIC: [&str; 4] = ["operator_add", "operator_subtract", "operator_multiply", "operator_divide"];
const RELATIONAL: [&str; 3] = ["operator_equals", "operator_lt", "operator_gt"];

/// One concrete edit of the project (what a mutant is).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Edit {
    /// Set the `KEY_OPTION` field of `block` to `key`.
    SetKey {
        /// The key hat or key menu.
        block: BlockIdx,
        /// The new key.
        key: String,
    },
    /// Unlink `block` from its stack: its parent continues with its next block.
    DeleteBlock {
        /// The deleted statement.
        block: BlockIdx,
    },
    /// Unlink the script below hat `block`.
    DeleteScript {
        /// The hat.
        block: BlockIdx,
    },
    /// Replace the opcode of `block`.
    SetOpcode {
        /// The operator block.
        block: BlockIdx,
        /// The new opcode.
        opcode: String,
    },
    /// Wrap `block` in a new `operator_not` in the slot of its parent that holds it.
    Negate {
        /// The boolean block.
        block: BlockIdx,
    },
    /// Make the `n`-th variable reference of `block` read another variable.
    ReplaceVariable {
        /// The block with the variable reference (a compact variable input or
        /// a `data_variable` block).
        block: BlockIdx,
        /// Input slot (compact reference) or `None` for a `data_variable` block's field.
        input: Option<String>,
        /// The new variable's name.
        name: String,
        /// The new variable's id.
        id: String,
    },
}

impl Edit {
    /// The block the edit is about (the one named in the verdict rows).
    pub fn block(&self) -> BlockIdx {
        match self {
            Edit::SetKey { block, .. }
            | Edit::DeleteBlock { block }
            | Edit::DeleteScript { block }
            | Edit::SetOpcode { block, .. }
            | Edit::Negate { block }
            | Edit::ReplaceVariable { block, .. } => *block,
        }
    }
}

/// A first-order mutant: operator, the edit, and a human-readable description.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mutant {
    /// Stable id: operator and position in that operator's enumeration,
    /// zero-padded so that ids sort in enumeration order (`AOR-000003`).
    pub id: String,
    /// The operator.
    pub operator: Operator,
    /// The edit.
    pub edit: Edit,
    /// `<block id>-<sprite name>`, Whisker's block-map key (Scratch block ids are
    /// only unique within a sprite).
    pub block_id: String,
    /// What changes, e.g. `operator_add -> operator_divide`.
    pub detail: String,
}

/// Opcodes scratch-analysis counts as statements (`StatementFilter`), before
/// the hat, shadow and branching exclusions.
fn is_statement(b: &Block) -> bool {
    let op = b.opcode.as_str();
    if op.ends_with("_menu") {
        return false;
    }
    let motion =
        op.starts_with("motion_") && !matches!(op, "motion_xposition" | "motion_yposition" | "motion_direction");
    let looks = op.starts_with("looks_")
        && !matches!(op, "looks_backdropnumbername" | "looks_costumenumbername" | "looks_size");
    let sound = op.starts_with("sound_") && op != "sound_volume";
    let event = op.starts_with("event_") && op != "event_touchingobjectmenu";
    let control = op.starts_with("control_");
    let sensing = matches!(op, "sensing_askandwait" | "sensing_setdragmode" | "sensing_resettimer");
    let list = matches!(
        op,
        "data_addtolist"
            | "data_deleteoflist"
            | "data_deletealloflist"
            | "data_insertatlist"
            | "data_replaceitemoflist"
            | "data_showlist"
            | "data_hidelist"
    );
    let var = matches!(op, "data_setvariableto" | "data_changevariableby" | "data_showvariable" | "data_hidevariable");
    let other = op.starts_with("music_")
        || op.starts_with("procedures_")
        || op.starts_with("pen_")
        || op.starts_with("text2speech_");
    motion || looks || sound || event || control || sensing || list || var || other
}

/// Hats whose script SDM deletes (scratch-analysis' `ControlFilter.hatBlock`
/// plus `when this sprite touches`).
pub fn is_script_hat(opcode: &str) -> bool {
    matches!(
        opcode,
        "event_whenflagclicked"
            | "event_whenthisspriteclicked"
            | "event_whenstageclicked"
            | "event_whenbackdropswitchesto"
            | "event_whengreaterthan"
            | "event_whenbroadcastreceived"
            | "event_whenkeypressed"
            | "event_whentouchingobject"
            | "control_start_as_clone"
    )
}

/// Whether SBD may delete `b`: a non-shadow statement with a parent that is
/// neither a hat (nor a procedure definition) nor a branching block.
fn is_deletable(b: &Block) -> bool {
    let op = b.opcode.as_str();
    let branching = matches!(
        op,
        "control_if"
            | "control_if_else"
            | "control_repeat"
            | "control_repeat_until"
            | "control_forever"
            | "control_wait_until"
    ) || b.input("SUBSTACK").is_some()
        || b.input("SUBSTACK2").is_some();
    let hat = is_script_hat(op) || crate::graph::is_hat(op) || op == "procedures_prototype";
    b.parent.is_some() && !b.shadow && is_statement(b) && !hat && !branching
}

/// The boolean blocks NCM negates (scratch-analysis' `OperatorFilter.negatable`
/// without `not`).
fn is_negatable(op: &str) -> bool {
    matches!(
        op,
        "sensing_touchingobject"
            | "sensing_touchingcolor"
            | "sensing_coloristouchingcolor"
            | "sensing_keypressed"
            | "sensing_mousedown"
            | "operator_contains"
            | "operator_and"
            | "operator_or"
            | "operator_equals"
            | "operator_lt"
            | "operator_gt"
    )
}

/// A generator for the random choice of one mutant: seeded with the operator,
/// the sprite, the block id and a discriminator, never with the run.
fn choice_rng(op: Operator, sprite: &str, block_id: &str, extra: &str) -> SplitMix64 {
    let mut h = blake3::Hasher::new();
    for part in [op.name(), sprite, block_id, extra] {
        h.update(part.as_bytes());
        h.update(b"\0");
    }
    let bytes = h.finalize();
    let mut seed = [0u8; 8];
    seed.copy_from_slice(&bytes.as_bytes()[..8]);
    SplitMix64::new(u64::from_le_bytes(seed))
}

/// Picks an element of `pool` other than `current` (uniformly; `None` if there is none).
fn pick_other<'a>(rng: &mut SplitMix64, pool: &[&'a str], current: &str) -> Option<&'a str> {
    let others: Vec<&str> = pool.iter().copied().filter(|k| *k != current).collect();
    if others.is_empty() {
        return None;
    }
    let i = ((rng.next_f64() * others.len() as f64) as usize).min(others.len() - 1);
    Some(others[i])
}

fn sprite_name(project: &Project, b: &Block) -> String {
    project.targets.get(b.target as usize).map(|t| t.name.clone()).unwrap_or_default()
}

/// The variable references of `b` that VRM can replace, in input order:
/// `Some(input)` for compact variable inputs, `None` for a `data_variable`
/// block with a parent (its `VARIABLE` field).
fn variable_refs(b: &Block) -> Vec<(Option<String>, String, String)> {
    let mut out = Vec::new();
    for (name, input) in &b.inputs {
        if let Input::Variable { name: v, id } = input {
            out.push((Some(name.clone()), v.clone(), id.clone()));
        }
    }
    if b.opcode == "data_variable"
        && b.parent.is_some()
        && let Some(f) = b.field("VARIABLE")
    {
        out.push((None, f.value.clone(), f.id.clone().unwrap_or_default()));
    }
    out
}

/// Variables in scope of target `t`: the stage's, then the sprite's own, as (name, id).
fn variables_in_scope(project: &Project, t: usize) -> Vec<(String, String)> {
    let stage = project.stage_index();
    let mut out: Vec<(String, String)> = project
        .targets
        .get(stage)
        .map(|s| s.variables.iter().map(|v| (v.name.clone(), v.id.clone())).collect())
        .unwrap_or_default();
    if t != stage
        && let Some(td) = project.targets.get(t)
    {
        out.extend(td.variables.iter().map(|v| (v.name.clone(), v.id.clone())));
    }
    out
}

/// The mutants of one operator, in block order.
fn mutants_of(project: &Project, op: Operator) -> Vec<(Edit, String)> {
    let mut out = Vec::new();
    type Scope = (Vec<(String, String)>, BTreeMap<String, Vec<usize>>);
    let mut scopes: Vec<Option<Scope>> = (0..project.targets.len()).map(|_| None).collect();
    for (i, b) in project.blocks.iter().enumerate() {
        let idx = i as BlockIdx;
        let op_str = b.opcode.as_str();
        match op {
            Operator::KRM => {
                let Some(f) = b.field("KEY_OPTION") else { continue };
                let is_hat = op_str == "event_whenkeypressed";
                if !is_hat && b.parent.is_none() {
                    continue;
                }
                let mut rng = choice_rng(op, &sprite_name(project, b), &b.id, "");
                if let Some(key) = pick_other(&mut rng, &KEY_OPTIONS, &f.value) {
                    out.push((Edit::SetKey { block: idx, key: key.to_string() }, format!("{} -> {key}", f.value)));
                }
            }
            Operator::SBD => {
                if is_deletable(b) {
                    out.push((Edit::DeleteBlock { block: idx }, format!("delete {op_str}")));
                }
            }
            Operator::SDM => {
                if is_script_hat(op_str) && b.next.is_some() {
                    out.push((Edit::DeleteScript { block: idx }, format!("delete script of {op_str}")));
                }
            }
            Operator::AOR | Operator::ROR => {
                let pool: &[&str] = if op == Operator::AOR { &ARITHMETIC } else { &RELATIONAL };
                if !pool.contains(&op_str) {
                    continue;
                }
                let mut rng = choice_rng(op, &sprite_name(project, b), &b.id, "");
                if let Some(new) = pick_other(&mut rng, pool, op_str) {
                    out.push((Edit::SetOpcode { block: idx, opcode: new.to_string() }, format!("{op_str} -> {new}")));
                }
            }
            Operator::LOR => {
                let new = match op_str {
                    "operator_and" => "operator_or",
                    "operator_or" => "operator_and",
                    _ => continue,
                };
                out.push((Edit::SetOpcode { block: idx, opcode: new.to_string() }, format!("{op_str} -> {new}")));
            }
            Operator::NCM => {
                if is_negatable(op_str) && b.parent.is_some() && !b.shadow {
                    out.push((Edit::Negate { block: idx }, format!("not {op_str}")));
                }
            }
            Operator::VRM => {
                // The scope of each target once, with where each id is in it: a replacement is
                // picked without copying the scope per block (many variables × many blocks).
                let Some(Some((scope, at))) = scopes.get_mut(b.target as usize).map(|s| {
                    s.get_or_insert_with(|| {
                        let scope = variables_in_scope(project, b.target as usize);
                        let mut at: BTreeMap<String, Vec<usize>> = BTreeMap::new();
                        for (i, (_, vid)) in scope.iter().enumerate() {
                            at.entry(vid.clone()).or_default().push(i);
                        }
                        (scope, at)
                    });
                    s.as_ref()
                }) else {
                    continue;
                };
                for (input, name, id) in variable_refs(b) {
                    let same: &[usize] = at.get(&id).map_or(&[], Vec::as_slice);
                    let n_others = scope.len() - same.len();
                    if n_others == 0 {
                        continue;
                    }
                    let slot = input.clone().unwrap_or_default();
                    let mut rng = choice_rng(op, &sprite_name(project, b), &b.id, &slot);
                    let k = ((rng.next_f64() * n_others as f64) as usize).min(n_others - 1);
                    // The k-th entry of the scope whose id is not `id`.
                    let mut pick = k;
                    for &p in same {
                        if p <= pick {
                            pick += 1;
                        }
                    }
                    let Some((new_name, new_id)) = scope.get(pick).cloned() else { continue };
                    out.push((
                        Edit::ReplaceVariable { block: idx, input, name: new_name.clone(), id: new_id },
                        format!("{name} -> {new_name}"),
                    ));
                }
            }
        }
    }
    out
}

/// Every first-order mutant of `project`, operator by operator (Table 5
/// order), each operator's in block order. Deterministic in the project.
pub fn enumerate(project: &Project) -> Vec<Mutant> {
    let mut all = Vec::new();
    for op in Operator::ALL {
        for (n, (edit, detail)) in mutants_of(project, op).into_iter().enumerate() {
            let b = project.block(edit.block());
            all.push(Mutant {
                id: format!("{}-{n:06}", op.name()),
                operator: op,
                block_id: format!("{}-{}", b.id, sprite_name(project, b)),
                edit,
                detail,
            });
        }
    }
    all
}

/// Why an edit could not be applied (the mutant does not belong to this project).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("mutant {0} does not fit this project")]
pub struct MisfitMutant(pub String);

/// A fresh id for a new block of target `t`: `base`, or `base` with a counter
/// when a block of that target already has it.
fn fresh_id(project: &Project, t: u32, base: &str) -> String {
    let taken = |id: &str| project.blocks.iter().any(|b| b.target == t && b.id == id);
    if !taken(base) {
        return base.to_string();
    }
    (2u64..).map(|n| format!("{base}-{n}")).find(|id| !taken(id)).unwrap_or_else(|| base.to_string())
}

/// The id of the `not` block that negates block `id` of target `t` (NCM).
pub(crate) fn ncm_block_id(project: &Project, t: u32, id: &str) -> String {
    fresh_id(project, t, &format!("{id}-ncm-not"))
}

/// Replaces `Input::Block(old)` by `new` in `b`'s inputs; whether one was found.
fn replace_input_block(b: &mut Block, old: BlockIdx, new: Input) -> bool {
    for (_, input) in b.inputs.iter_mut() {
        if *input == Input::Block(old) {
            *input = new;
            return true;
        }
    }
    false
}

/// Applies `edit` to `project` in place. On error the project may be partly
/// edited; callers apply edits to a fresh copy.
pub fn apply_edit(project: &mut Project, edit: &Edit) -> Result<(), MisfitMutant> {
    let misfit = || MisfitMutant(format!("{edit:?}"));
    let idx = edit.block();
    if idx as usize >= project.blocks.len() {
        return Err(misfit());
    }
    match edit {
        Edit::SetKey { key, .. } => {
            let b = &mut project.blocks[idx as usize];
            let f = b.fields.iter_mut().find(|f| f.name == "KEY_OPTION").ok_or_else(misfit)?;
            f.value = key.clone();
            f.raw = Lit::Str(key.clone());
        }
        Edit::DeleteBlock { .. } => {
            let (parent, next) = {
                let b = &project.blocks[idx as usize];
                (b.parent.ok_or_else(misfit)?, b.next)
            };
            let p = project.blocks.get_mut(parent as usize).ok_or_else(misfit)?;
            if p.next == Some(idx) {
                p.next = next;
            } else {
                let new = next.map_or(Input::Empty, Input::Block);
                if !replace_input_block(p, idx, new) {
                    return Err(misfit());
                }
            }
            if let Some(n) = next {
                project.blocks[n as usize].parent = Some(parent);
            }
            let b = &mut project.blocks[idx as usize];
            b.parent = None;
            b.next = None;
        }
        Edit::DeleteScript { .. } => {
            let next = project.blocks[idx as usize].next.ok_or_else(misfit)?;
            project.blocks[idx as usize].next = None;
            project.blocks.get_mut(next as usize).ok_or_else(misfit)?.parent = None;
        }
        Edit::SetOpcode { opcode, .. } => {
            project.blocks[idx as usize].opcode = opcode.clone();
        }
        Edit::Negate { .. } => {
            let (parent, target, id) = {
                let b = &project.blocks[idx as usize];
                (b.parent.ok_or_else(misfit)?, b.target, b.id.clone())
            };
            let not_idx = project.blocks.len() as BlockIdx;
            let not_id = ncm_block_id(project, target, &id);
            let p = project.blocks.get_mut(parent as usize).ok_or_else(misfit)?;
            if !replace_input_block(p, idx, Input::Block(not_idx)) {
                return Err(misfit());
            }
            project.blocks[idx as usize].parent = Some(not_idx);
            project.blocks.push(Block {
                id: not_id,
                opcode: "operator_not".into(),
                next: None,
                next_missing: false,
                parent: Some(parent),
                inputs: vec![("OPERAND".into(), Input::Block(idx))],
                fields: Vec::new(),
                shadow: false,
                top_level: false,
                mutation: None,
                target,
            });
        }
        Edit::ReplaceVariable { input, name, id, .. } => {
            let b = &mut project.blocks[idx as usize];
            match input {
                Some(slot) => {
                    let (_, inp) = b.inputs.iter_mut().find(|(n, _)| n == slot).ok_or_else(misfit)?;
                    if !matches!(inp, Input::Variable { .. }) {
                        return Err(misfit());
                    }
                    *inp = Input::Variable { name: name.clone(), id: id.clone() };
                }
                None => {
                    let f = b.fields.iter_mut().find(|f| f.name == "VARIABLE").ok_or_else(misfit)?;
                    f.value = name.clone();
                    f.raw = Lit::Str(name.clone());
                    f.id = Some(id.clone());
                }
            }
        }
    }
    Ok(())
}
