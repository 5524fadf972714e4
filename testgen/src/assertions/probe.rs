//! Reading the VM: the only part of the assertions that knows the VM's API.

use std::collections::BTreeSet;

use clowder_vm::TargetId;

use super::*;

/// One live target as the assertions see it.
struct View {
    /// The target whose fields the exported test reads for this one: Whisker's wrapper of a
    /// clone whose id repeats its original's is the original's ([`Vm::whisker_wrapper_target`]).
    ///
    /// [`Vm::whisker_wrapper_target`]: clowder_vm::Vm::whisker_wrapper_target
    read: TargetId,
    def: usize,
    r: TargetRef,
    /// Live clones of the sprite (originals only; 0 otherwise).
    clones: u32,
}

fn views(sut: &Sut) -> Vec<View> {
    let project = sut.vm().project();
    // Sorted by (clone?, sprite, creation number): each sprite's clones form one run in
    // creation order, so a clone's index among its sprite's live clones is its place in
    // that run (one pass, not a scan of every target per target: projects with hundreds
    // of clones observe every event).
    let all = sut.targets();
    let mut clones_of: BTreeMap<usize, u32> = BTreeMap::new();
    for t in all.iter().filter(|t| t.clone != 0) {
        *clones_of.entry(t.def).or_insert(0) += 1;
    }
    // Per sprite: the last clone number seen, its index, and how many came before it.
    let mut run: BTreeMap<usize, (u32, u32, u32)> = BTreeMap::new();
    all.iter()
        .map(|t| {
            let r = if t.is_stage {
                TargetRef::stage()
            } else {
                let name = project.targets.get(t.def).map(|d| d.name.clone()).unwrap_or_default();
                // Index among the sprite's live clones: 1 + the live clones created before it.
                let live = if t.clone == 0 {
                    0
                } else {
                    let e = run.entry(t.def).or_insert((0, 0, 0));
                    let index = if e.2 > 0 && e.0 == t.clone { e.1 } else { 1 + e.2 };
                    *e = (t.clone, index, e.2 + 1);
                    index
                };
                TargetRef { sprite: name, clone: live }
            };
            let clones = if t.clone == 0 && !t.is_stage { clones_of.get(&t.def).copied().unwrap_or(0) } else { 0 };
            View { read: sut.vm().whisker_wrapper_target(t.id), def: t.def, r, clones }
        })
        .collect()
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// The observations of target `v` whose kind number (see [`Key`]) passes
/// `want`, pushed into `out` (checking one assertion observes one kind);
/// `others` are the sprites (index, name) touching is asked about.
fn observe_target(
    sut: &mut Sut,
    v: &View,
    others: &[(usize, String)],
    want: &dyn Fn(u8) -> bool,
    out: &mut Vec<Assertion>,
) {
    let vm = sut.vm_mut();
    let Some(t) = vm.target(v.read) else { return };
    let (is_stage, costume, direction, size, visible, x, y) =
        (t.is_stage, t.costume.max(0) as u32, t.direction, t.size, t.visible, t.x, t.y);
    let r = &v.r;
    if is_stage {
        if want(0) {
            out.push(Assertion::Backdrop { costume });
        }
    } else {
        if want(1) && r.clone == 0 {
            out.push(Assertion::CloneCount { sprite: r.sprite.clone(), count: v.clones });
        }
        if want(2) {
            out.push(Assertion::Costume { target: r.clone(), costume });
        }
        if want(3)
            && let Some(direction) = finite(direction)
        {
            out.push(Assertion::Direction { target: r.clone(), direction });
        }
        if want(4) {
            for (name, value) in EFFECTS.iter().zip(vm.effects(v.read).unwrap_or_default()) {
                if let Some(value) = finite(value) {
                    out.push(Assertion::Effect { target: r.clone(), effect: name.to_string(), value });
                }
            }
        }
        if want(5)
            && let Some(layer) = vm.layer(v.read)
        {
            out.push(Assertion::Layer { target: r.clone(), layer: layer as u32 });
        }
        if want(7)
            && let (Some(x), Some(y)) = (finite(x), finite(y))
        {
            out.push(Assertion::Position { target: r.clone(), x, y });
        }
        if want(8) {
            let (think, text) = vm.bubble(v.read).map_or((false, String::new()), |(k, t)| (k, t.to_string()));
            out.push(Assertion::Say { target: r.clone(), text, think });
        }
        if want(9)
            && let Some(size) = finite(size)
        {
            out.push(Assertion::Size { target: r.clone(), size });
        }
        if want(10) {
            for (def, name) in others.iter().filter(|(d, _)| *d != v.def) {
                let touching = vm.touching_sprite(v.read, *def);
                out.push(Assertion::Touching { target: r.clone(), other: name.clone(), touching });
            }
        }
        if want(11) {
            out.push(Assertion::TouchingEdge { target: r.clone(), touching: vm.touching_edge(v.read) });
        }
        if want(13) {
            out.push(Assertion::Visibility { target: r.clone(), visible });
        }
    }
    if r.clone == 0 {
        if want(6) {
            // The first of each name only; a set, so that many lists cost linear time.
            let mut seen = BTreeSet::new();
            for (list, length) in vm.list_lengths(v.read) {
                if seen.insert(list.to_string()) {
                    out.push(Assertion::List { target: r.clone(), list: list.to_string(), length: length as u32 });
                }
            }
        }
        if want(12) {
            let mut seen = BTreeSet::new();
            for (variable, value) in vm.scalar_variables(v.read) {
                if seen.insert(variable.to_string()) {
                    let mut s = String::new();
                    value.write_js_string(&mut s);
                    let boolean = matches!(value, clowder_vm::Value::Bool(_));
                    out.push(Assertion::Variable {
                        target: r.clone(),
                        variable: variable.to_string(),
                        value: s,
                        boolean,
                    });
                }
            }
        }
    }
    if want(14)
        && let Some(volume) = vm.volume(v.read).and_then(finite)
    {
        out.push(Assertion::Volume { target: r.clone(), volume });
    }
}

/// The project's sprites (index in `Project::targets`, name): what touching is asked about.
fn sprites(sut: &Sut) -> Vec<(usize, String)> {
    let targets = &sut.vm().project().targets;
    targets.iter().enumerate().filter(|(_, t)| !t.is_stage).map(|(i, t)| (i, t.name.clone())).collect()
}

/// Every observation of the running program (touching other sprites only with
/// `touching`), and the number of live targets.
pub(super) fn all(sut: &mut Sut, touching: bool) -> (Vec<Assertion>, usize) {
    let others = sprites(sut);
    let mut out = Vec::new();
    let views = views(sut);
    for v in &views {
        // Per target, so that duplicate variable names are resolved within it.
        let mut mine = Vec::new();
        observe_target(sut, v, &others, &|k| touching || k != 10, &mut mine);
        out.extend(mine);
    }
    (out, views.len())
}

/// The live targets as the assertions see them, listed once for many touching checks
/// (listing them per check made a state's checks quadratic in its clones).
pub(super) struct Views(Vec<View>);

impl Views {
    pub(super) fn of(sut: &Sut) -> Views {
        Views(views(sut))
    }

    /// The touching checks [`all`] would observe (their answers not asked: `false`).
    pub(super) fn touching_checks(&self, sut: &Sut) -> Vec<Assertion> {
        let others = sprites(sut);
        let mut out = Vec::new();
        for v in self.0.iter().filter(|v| v.r.sprite != STAGE) {
            for (_, name) in others.iter().filter(|(d, _)| *d != v.def) {
                out.push(Assertion::Touching { target: v.r.clone(), other: name.clone(), touching: false });
            }
        }
        out
    }

    /// The touching-edge checks [`all`] would observe (their answers not asked: `false`).
    pub(super) fn edge_checks(&self) -> Vec<Assertion> {
        self.0
            .iter()
            .filter(|v| v.r.sprite != STAGE)
            .map(|v| Assertion::TouchingEdge { target: v.r.clone(), touching: false })
            .collect()
    }

    /// [`check`]'s answer to a touching check `a` while these are the live targets.
    pub(super) fn ask(&self, sut: &mut Sut, a: &Assertion) -> Option<Assertion> {
        let key = a.key();
        let v = self.0.iter().find(|v| v.r == key.target)?;
        sut.vm_mut().set_driver_queries_leave_mips(true);
        let answer = observe_one(sut, v, a);
        sut.vm_mut().set_driver_queries_leave_mips(false);
        answer
    }
}

/// The answer to `a` as the exported test's check gets it: a touching check is a query
/// of the live renderer that leaves its MIPs (see [`Vm::set_driver_queries_leave_mips`]),
/// everything else an observation. With the number of live targets.
///
/// [`Vm::set_driver_queries_leave_mips`]: clowder_vm::Vm::set_driver_queries_leave_mips
pub(super) fn check(sut: &mut Sut, a: &Assertion) -> (Option<Assertion>, usize) {
    if !a.changes_renderer() {
        return one(sut, a);
    }
    sut.vm_mut().set_driver_queries_leave_mips(true);
    let answer = one(sut, a);
    sut.vm_mut().set_driver_queries_leave_mips(false);
    answer
}

/// The observation of the property `a` is about, if it exists, and the number of live
/// targets.
pub(super) fn one(sut: &mut Sut, a: &Assertion) -> (Option<Assertion>, usize) {
    let views = views(sut);
    let live = views.len();
    let target = a.key().target;
    let Some(v) = views.iter().find(|v| v.r == target) else { return (None, live) };
    (observe_one(sut, v, a), live)
}

/// The observation of the property `a` is about, of live target `v`.
fn observe_one(sut: &mut Sut, v: &View, a: &Assertion) -> Option<Assertion> {
    let key = a.key();
    let others: Vec<(usize, String)> = match a {
        Assertion::Touching { other, .. } => {
            let p = sut.vm().project();
            p.targets
                .iter()
                .position(|t| !t.is_stage && t.name == *other)
                .map(|i| (i, other.clone()))
                .into_iter()
                .collect()
        }
        _ => Vec::new(),
    };
    let mut out = Vec::new();
    observe_target(sut, v, &others, &|k| k == key.kind, &mut out);
    out.into_iter().find(|o| o.key() == key)
}
