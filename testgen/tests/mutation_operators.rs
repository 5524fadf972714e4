//! Each mutation operator on a hand-made project: which blocks are
//! candidates, and that a mutant changes exactly the intended block (plus the
//! links a deletion or insertion must rewire) and nothing else.

use std::collections::BTreeSet;

use clowder_testgen::mutation::{self, Edit, Mutant, MutationMode, Operator};
use clowder_testgen::testkit::{Arg, ProjectBuilder};
use clowder_vm::Project;
use clowder_vm::project::{BlockIdx, Input, Lit};
use serde_json::json;

/// The project:
///
/// ```text
/// Cat:   when flag clicked                        (SDM)
///          set score to 0                         (SBD)
///          repeat until <(score) > 10>            (branching; ROR, NCM on >)
///            change score by (3 * 2)              (SBD; AOR on *)
///            if <<key space pressed?> and <mouse down?>> then   (branching; LOR/NCM on and; NCM on both; KRM on the menu)
///              say (score)                        (SBD; VRM on the compact variable)
///        when a key pressed                       (SDM; KRM)
///          hide                                   (SBD)
///        when this sprite clicked                 (no script: no SDM)
/// Stage: globals score, lives
/// ```
struct Fixture {
    project: Project,
    ids: std::collections::BTreeMap<&'static str, String>,
}

fn fixture() -> Fixture {
    let mut p = ProjectBuilder::new();
    p.global_var("score");
    p.global_var("lives");
    let cat = p.sprite("Cat");
    let t = p.t(cat);
    let flag = t.when_flag();
    let set = t.set_var("score", Arg::n(0.0));
    let score = t.var("score");
    let gt = t.gt(Arg::b(&score), Arg::n(10.0));
    let mul = t.block("operator_multiply", json!({"NUM1": [1, [4, "3"]], "NUM2": [1, [4, "2"]]}), json!({}));
    let change = t.change_var("score", Arg::b(&mul));
    let key = t.key_pressed("space");
    let down = t.mouse_down();
    let and = t.and(&key, &down);
    let say = t.block("looks_say", json!({"MESSAGE": [3, [12, "score", "v_score"], [10, ""]]}), json!({}));
    let if_ = t.if_(&and, std::slice::from_ref(&say));
    let until = t.repeat_until(&gt, &[change.clone(), if_.clone()]);
    t.script(flag.clone(), &[set.clone(), until.clone()]);
    let when_a = t.when_key("a");
    let hide = t.hide();
    t.script(when_a.clone(), std::slice::from_ref(&hide));
    let clicked = t.when_clicked();
    t.script(clicked.clone(), &[]);
    let project = p.load();
    let ids = [
        ("flag", flag),
        ("set", set),
        ("score", score),
        ("gt", gt),
        ("mul", mul),
        ("change", change),
        ("key", key),
        ("down", down),
        ("and", and),
        ("say", say),
        ("if", if_),
        ("until", until),
        ("when_a", when_a),
        ("hide", hide),
        ("clicked", clicked),
    ]
    .into_iter()
    .collect();
    Fixture { project, ids }
}

impl Fixture {
    fn idx(&self, name: &str) -> BlockIdx {
        let id = &self.ids[name];
        self.project.blocks.iter().position(|b| &b.id == id).unwrap_or_else(|| panic!("no block {name}")) as BlockIdx
    }

    fn of(&self, op: Operator) -> Vec<Mutant> {
        mutation::enumerate(&self.project).into_iter().filter(|m| m.operator == op).collect()
    }
}

/// Indices of blocks that differ between `a` and `b` (compared in full), plus
/// whether anything outside the blocks differs.
fn diff(a: &Project, b: &Project) -> (BTreeSet<BlockIdx>, bool) {
    let mut changed = BTreeSet::new();
    for i in 0..a.blocks.len().max(b.blocks.len()) {
        let x = a.blocks.get(i).map(|b| format!("{b:?}"));
        let y = b.blocks.get(i).map(|b| format!("{b:?}"));
        if x != y {
            changed.insert(i as BlockIdx);
        }
    }
    let rest = format!("{:?}{:?}{:?}", a.targets, a.monitors, a.assets)
        != format!("{:?}{:?}{:?}", b.targets, b.monitors, b.assets);
    (changed, rest)
}

fn only(f: &Fixture, m: &Mutant) -> (Project, BTreeSet<BlockIdx>) {
    let mutant = mutation::mutate(&f.project, m).expect("mutant applies");
    let (changed, rest) = diff(&f.project, &mutant);
    assert!(!rest, "{}: only blocks may change", m.id);
    (mutant, changed)
}

#[test]
fn krm_replaces_the_key_of_hats_and_key_menus() {
    let f = fixture();
    let ms = f.of(Operator::KRM);
    let menu = f.project.blocks[f.idx("key") as usize].input("KEY_OPTION").cloned();
    let Some(Input::Block(menu)) = menu else { panic!("key menu") };
    let targets: BTreeSet<BlockIdx> = ms.iter().map(|m| m.edit.block()).collect();
    assert_eq!(targets, BTreeSet::from([menu, f.idx("when_a")]), "the key menu and the key hat");
    for m in &ms {
        let (mutant, changed) = only(&f, m);
        assert_eq!(changed, BTreeSet::from([m.edit.block()]));
        let before = f.project.blocks[m.edit.block() as usize].field("KEY_OPTION").unwrap().value.clone();
        let after = mutant.blocks[m.edit.block() as usize].field("KEY_OPTION").unwrap();
        assert_ne!(after.value, before);
        assert!(mutation::operators::KEY_OPTIONS.contains(&after.value.as_str()));
        assert_eq!(after.raw, Lit::Str(after.value.clone()));
    }
}

#[test]
fn sbd_deletes_single_statements_only() {
    let f = fixture();
    let ms = f.of(Operator::SBD);
    let targets: BTreeSet<BlockIdx> = ms.iter().map(|m| m.edit.block()).collect();
    let expected: BTreeSet<BlockIdx> = ["set", "change", "say", "hide"].iter().map(|n| f.idx(n)).collect();
    assert_eq!(targets, expected, "no hats, no branching blocks, no reporters, no shadows");

    // Middle of a stack: the parent's next skips it.
    let m = ms.iter().find(|m| m.edit.block() == f.idx("set")).unwrap();
    let (mutant, changed) = only(&f, m);
    assert_eq!(changed, BTreeSet::from([f.idx("flag"), f.idx("set"), f.idx("until")]));
    assert_eq!(mutant.blocks[f.idx("flag") as usize].next, Some(f.idx("until")));
    assert_eq!(mutant.blocks[f.idx("until") as usize].parent, Some(f.idx("flag")));
    let gone = &mutant.blocks[f.idx("set") as usize];
    assert_eq!((gone.parent, gone.next), (None, None));

    // First of a substack: the C block's SUBSTACK points at its next.
    let m = ms.iter().find(|m| m.edit.block() == f.idx("change")).unwrap();
    let (mutant, changed) = only(&f, m);
    assert_eq!(changed, BTreeSet::from([f.idx("until"), f.idx("change"), f.idx("if")]));
    assert_eq!(mutant.blocks[f.idx("until") as usize].input("SUBSTACK"), Some(&Input::Block(f.idx("if"))));

    // Alone in a substack: the substack becomes empty.
    let m = ms.iter().find(|m| m.edit.block() == f.idx("say")).unwrap();
    let (mutant, changed) = only(&f, m);
    assert_eq!(changed, BTreeSet::from([f.idx("if"), f.idx("say")]));
    assert_eq!(mutant.blocks[f.idx("if") as usize].input("SUBSTACK"), Some(&Input::Empty));

    // Last of a script.
    let m = ms.iter().find(|m| m.edit.block() == f.idx("hide")).unwrap();
    let (mutant, changed) = only(&f, m);
    assert_eq!(changed, BTreeSet::from([f.idx("when_a"), f.idx("hide")]));
    assert_eq!(mutant.blocks[f.idx("when_a") as usize].next, None);
}

#[test]
fn sdm_detaches_scripts_from_their_hats() {
    let f = fixture();
    let ms = f.of(Operator::SDM);
    let targets: BTreeSet<BlockIdx> = ms.iter().map(|m| m.edit.block()).collect();
    assert_eq!(targets, BTreeSet::from([f.idx("flag"), f.idx("when_a")]), "a hat without a script has no mutant");
    let m = ms.iter().find(|m| m.edit.block() == f.idx("flag")).unwrap();
    let (mutant, changed) = only(&f, m);
    assert_eq!(changed, BTreeSet::from([f.idx("flag"), f.idx("set")]));
    assert_eq!(mutant.blocks[f.idx("flag") as usize].next, None);
    assert_eq!(mutant.blocks[f.idx("set") as usize].parent, None);
    assert!(!mutant.blocks[f.idx("set") as usize].top_level, "the detached stack is not a script");
}

#[test]
fn aor_lor_ror_replace_exactly_one_opcode() {
    let f = fixture();
    for (op, name, pool) in [
        (Operator::AOR, "mul", &["operator_add", "operator_subtract", "operator_divide"][..]),
        (Operator::LOR, "and", &["operator_or"][..]),
        (Operator::ROR, "gt", &["operator_lt", "operator_equals"][..]),
    ] {
        let ms = f.of(op);
        assert_eq!(ms.len(), 1, "{op}");
        let m = &ms[0];
        assert_eq!(m.edit.block(), f.idx(name));
        let (mutant, changed) = only(&f, m);
        assert_eq!(changed, BTreeSet::from([f.idx(name)]), "{op}");
        let new = &mutant.blocks[f.idx(name) as usize].opcode;
        assert!(pool.contains(&new.as_str()), "{op}: {new}");
    }
}

#[test]
fn ncm_wraps_conditions_in_not() {
    let f = fixture();
    let ms = f.of(Operator::NCM);
    let targets: BTreeSet<BlockIdx> = ms.iter().map(|m| m.edit.block()).collect();
    let expected: BTreeSet<BlockIdx> = ["gt", "key", "down", "and"].iter().map(|n| f.idx(n)).collect();
    assert_eq!(targets, expected);
    for (name, parent, slot) in [("gt", "until", "CONDITION"), ("down", "and", "OPERAND2"), ("and", "if", "CONDITION")]
    {
        let m = ms.iter().find(|m| m.edit.block() == f.idx(name)).unwrap();
        let (mutant, changed) = only(&f, m);
        let not = f.project.blocks.len() as BlockIdx;
        assert_eq!(changed, BTreeSet::from([f.idx(name), f.idx(parent), not]), "{name}");
        assert_eq!(mutant.blocks.len(), f.project.blocks.len() + 1);
        let n = &mutant.blocks[not as usize];
        assert_eq!(n.opcode, "operator_not");
        assert_eq!(n.input("OPERAND"), Some(&Input::Block(f.idx(name))));
        assert_eq!(n.parent, Some(f.idx(parent)));
        assert_eq!(n.target, f.project.blocks[f.idx(name) as usize].target);
        assert!(f.project.blocks.iter().all(|b| b.id != n.id), "fresh id");
        assert_eq!(mutant.blocks[f.idx(parent) as usize].input(slot), Some(&Input::Block(not)));
        assert_eq!(mutant.blocks[f.idx(name) as usize].parent, Some(not));
    }
}

#[test]
fn vrm_reads_another_variable() {
    let f = fixture();
    let ms = f.of(Operator::VRM);
    let targets: BTreeSet<BlockIdx> = ms.iter().map(|m| m.edit.block()).collect();
    assert_eq!(targets, BTreeSet::from([f.idx("score"), f.idx("say")]), "the reporter block and the compact input");
    for m in &ms {
        let (mutant, changed) = only(&f, m);
        assert_eq!(changed, BTreeSet::from([m.edit.block()]));
        let Edit::ReplaceVariable { name, id, .. } = &m.edit else { panic!() };
        assert_eq!((name.as_str(), id.as_str()), ("lives", "v_lives"), "the only other variable in scope");
        let b = &mutant.blocks[m.edit.block() as usize];
        let reads = match b.input("MESSAGE") {
            Some(Input::Variable { name, .. }) => name.clone(),
            _ => b.field("VARIABLE").unwrap().value.clone(),
        };
        assert_eq!(reads, "lives");
    }
}

#[test]
fn enumeration_is_deterministic_and_ids_sort_in_order() {
    let a = mutation::enumerate(&fixture().project);
    let b = mutation::enumerate(&fixture().project);
    assert_eq!(a, b);
    let ids: Vec<&str> = a.iter().map(|m| m.id.as_str()).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    let by_op: Vec<Operator> = a.iter().map(|m| m.operator).collect();
    assert!(by_op.windows(2).all(|w| w[0] <= w[1]), "grouped by operator in Table 5 order");
    assert_eq!(ids.iter().collect::<BTreeSet<_>>().len(), ids.len(), "unique ids");
    assert!(a.iter().all(|m| m.block_id.ends_with("-Cat")));
    let _ = sorted;
}

#[test]
fn sampling_caps_each_operator_with_the_seed() {
    let all = mutation::enumerate(&fixture().project);
    let s1 = mutation::select(&all, MutationMode::SamplePerOperator(1), 1);
    for op in Operator::ALL {
        let n = all.iter().filter(|m| m.operator == op).count();
        assert_eq!(s1.iter().filter(|m| m.operator == op).count(), n.min(1), "{op}");
    }
    assert_eq!(s1, mutation::select(&all, MutationMode::SamplePerOperator(1), 1), "same seed, same sample");
    let differs = (2..40).any(|seed| mutation::select(&all, MutationMode::SamplePerOperator(1), seed) != s1);
    assert!(differs, "the seed chooses");
    assert_eq!(mutation::select(&all, MutationMode::All, 9), all);
    assert!(mutation::select(&all, MutationMode::Off, 9).is_empty());
    assert_eq!(MutationMode::parse("sample:3"), Ok(MutationMode::SamplePerOperator(3)));
    assert_eq!(MutationMode::parse("on"), Ok(MutationMode::All));
    assert!(MutationMode::parse("sample:0").is_err() && MutationMode::parse("yes").is_err());
}
