//! Variables and lists (scratch-vm `blocks/scratch3_data.js`, `Target.lookupOrCreate*`).

use crate::engine::value::{JsStr, ListIndex, compare, index_of_number, push_str, strict_eq, to_number};
use crate::engine::{State, TargetId, ThRef, V};
use crate::program::{Cmd, Program, Rep, VarRef};
use crate::value::utf16_len;

/// scratch-vm's list length limit.
pub(crate) const LIST_ITEM_LIMIT: usize = 200_000;

/// Longest string (UTF-16 code units) the VM builds; longer results raise the
/// error JS raises for strings over its limit (`RangeError: Invalid string
/// length`, at 2^29-24 units in V8). The cap is lower than V8's so that a
/// project cannot make one VM use gigabytes; a documented deviation.
pub(crate) const MAX_STRING_LEN: usize = 1 << 24;

pub(crate) fn run(st: &mut State, prog: &Program, t: ThRef, cmd: &Cmd, base: usize) {
    let target = st.th(t).target;
    match *cmd {
        Cmd::SetVar(r) => {
            let v = st.take_arg(base, 0);
            st.set_var(prog, target, r, v);
            if st.observe.listener_log.is_some() {
                st.log_variable_change(prog, target, r);
            }
        }
        Cmd::ChangeVar(r) => {
            let old = st.get_var(prog, target, r);
            let n = to_number(prog, &old) + st.num_arg(prog, base, 0);
            st.set_var(prog, target, r, V::num(n));
            if st.observe.listener_log.is_some() {
                st.log_variable_change(prog, target, r);
            }
        }
        Cmd::AddToList(r) => {
            let item = st.take_arg(base, 0);
            if let Some(l) = st.list_mut(prog, target, r)
                && l.len() < LIST_ITEM_LIMIT
            {
                l.push(item);
            }
        }
        Cmd::DeleteOfList(r) => {
            let len = st.list_ref(prog, target, r).map_or(0, |l| l.len());
            let idx = st.arg(base, 0).clone();
            match st.list_index(prog, &idx, len, true) {
                ListIndex::Invalid => {}
                ListIndex::All => {
                    if let Some(l) = st.list_mut(prog, target, r) {
                        *l = Vec::new();
                    }
                }
                ListIndex::At(i) => {
                    if let Some(l) = st.list_mut(prog, target, r)
                        && i >= 1
                        && i <= l.len()
                    {
                        l.remove(i - 1);
                    }
                }
            }
        }
        Cmd::DeleteAllOfList(r) => {
            if let Some(l) = st.list_mut(prog, target, r) {
                *l = Vec::new();
            }
        }
        Cmd::InsertAtList(r) => {
            let item = st.take_arg(base, 0);
            let len = st.list_ref(prog, target, r).map_or(0, |l| l.len());
            let idx = st.arg(base, 1).clone();
            if let ListIndex::At(i) = st.list_index(prog, &idx, len + 1, false) {
                if i > LIST_ITEM_LIMIT {
                    return;
                }
                if let Some(l) = st.list_mut(prog, target, r) {
                    let at = (i - 1).min(l.len());
                    l.insert(at, item);
                    if l.len() > LIST_ITEM_LIMIT {
                        l.pop();
                    }
                }
            }
        }
        Cmd::ReplaceItemOfList(r) => {
            let item = st.take_arg(base, 1);
            let len = st.list_ref(prog, target, r).map_or(0, |l| l.len());
            let idx = st.arg(base, 0).clone();
            if let ListIndex::At(i) = st.list_index(prog, &idx, len, false)
                && let Some(l) = st.list_mut(prog, target, r)
                && let Some(x) = l.get_mut(i - 1)
            {
                *x = item;
            }
        }
        _ => {}
    }
}

pub(crate) fn eval(st: &mut State, prog: &Program, t: ThRef, rep: &Rep, base: usize) -> V {
    let target = st.th(t).target;
    match *rep {
        Rep::Var(r) => st.get_var(prog, target, r),
        Rep::ListContents(r) => {
            let Some(l) = st.list_ref(prog, target, r) else { return V::lit(prog.lit_empty) };
            let single = l.iter().all(|x| match x {
                V::Lit(id) => utf16_len(prog.lit_str(id.id())) == 1,
                V::Str(s) => utf16_len(s) == 1,
                _ => false,
            });
            let mut out = String::new();
            for (i, x) in l.iter().enumerate() {
                if i > 0 && !single {
                    out.push(' ');
                }
                match x {
                    V::Undef | V::Null => {}
                    _ => push_str(prog, x, &mut out),
                }
                if out.len() > MAX_STRING_LEN * 3 {
                    break;
                }
            }
            V::Str(JsStr::from(out))
        }
        Rep::ItemOfList(r) => {
            let idx = st.arg(base, 0).clone();
            item_of_list(st, prog, t, r, &idx)
        }
        Rep::ItemNumOfList(r) => {
            let item = st.arg(base, 0).clone();
            let Some(l) = st.list_ref(prog, target, r) else { return V::num(0.0) };
            for (i, x) in l.iter().enumerate() {
                if compare(prog, x, &item).is_eq() {
                    return V::num((i + 1) as f64);
                }
            }
            V::num(0.0)
        }
        Rep::LengthOfList(r) => length_of_list(st, prog, t, r),
        Rep::ListContains(r) => {
            let item = st.arg(base, 0).clone();
            let Some(l) = st.list_ref(prog, target, r) else { return V::bool(false) };
            if l.iter().any(|x| strict_eq(prog, x, &item)) {
                return V::bool(true);
            }
            V::bool(l.iter().any(|x| compare(prog, x, &item).is_eq()))
        }
        _ => V::Undef,
    }
}

/// `data_itemoflist`.
pub(crate) fn item_of_list(st: &mut State, prog: &Program, t: ThRef, r: VarRef, idx: &V) -> V {
    let target = st.th(t).target;
    if let V::Num(n) = idx {
        // A number index draws nothing: the list is looked up once (issue 36's profile).
        let n = if n.is_nan() { 0.0 } else { n.get() };
        return match st.list_ref(prog, target, r) {
            Some(l) => match index_of_number(n, l.len()) {
                ListIndex::At(i) => l.get(i - 1).cloned().unwrap_or(V::Undef),
                _ => V::lit(prog.lit_empty),
            },
            None => V::lit(prog.lit_empty),
        };
    }
    let len = st.list_ref(prog, target, r).map_or(0, |l| l.len());
    match st.list_index(prog, idx, len, false) {
        ListIndex::At(i) => st.list_ref(prog, target, r).and_then(|l| l.get(i - 1).cloned()).unwrap_or(V::Undef),
        _ => V::lit(prog.lit_empty),
    }
}

/// `data_lengthoflist`.
pub(crate) fn length_of_list(st: &mut State, prog: &Program, t: ThRef, r: VarRef) -> V {
    let target = st.th(t).target;
    V::num(st.list_ref(prog, target, r).map_or(0, |l| l.len()) as f64)
}

impl State {
    /// Resolves a variable reference of a block running on `target` to (owner, slot),
    /// creating the variable on `target` when scratch-vm would (`lookupOrCreate*`).
    /// Inlined, with the look-up out of line: the common references then cost no call frame
    /// (issue 36's profile: the inlined look-up's prologue was most of this function's time).
    #[inline]
    pub(crate) fn resolve_var(&mut self, prog: &Program, target: TargetId, r: VarRef) -> Option<(TargetId, usize)> {
        match r {
            VarRef::Own(s) => Some((target, s as usize)),
            VarRef::Stage(s) => Some((self.stage(), s as usize)),
            VarRef::Dyn(i) => self.resolve_dyn(prog, target, i),
        }
    }

    #[inline(never)]
    fn resolve_dyn(&mut self, prog: &Program, target: TargetId, i: u32) -> Option<(TargetId, usize)> {
        #[cfg(feature = "op-profile")]
        crate::engine::profile::count(crate::engine::profile::Event::DynLookup);
        let dv = prog.dyn_vars.get(i as usize)?;
        let stage = self.stage();
        let t = self.target(target)?;
        let def = prog.def(t.def);
        let is_stage = t.is_stage;
        // 1. own by id (declared, then created)
        if let Some(s) = def.var_index.by_id(&dv.id) {
            return Some((target, s as usize));
        }
        if let Some(s) = t.dyn_vars.by_id(dv.id_key) {
            return Some((target, s as usize));
        }
        // 2. the stage by id
        if !is_stage && let Some(sg) = self.target(stage) {
            let sdef = prog.def(sg.def);
            if let Some(s) = sdef.var_index.by_id(&dv.id) {
                return Some((stage, s as usize));
            }
            if let Some(s) = sg.dyn_vars.by_id(dv.id_key) {
                return Some((stage, s as usize));
            }
        }
        // 3. own by name and type
        if let Some(s) = def.var_index.by_name(&dv.name, dv.is_list) {
            return Some((target, s as usize));
        }
        if let Some(s) = t.dyn_vars.by_name(dv.name_key, dv.is_list) {
            return Some((target, s as usize));
        }
        // 4. the stage by name and type
        if !is_stage && let Some(sg) = self.target(stage) {
            let sdef = prog.def(sg.def);
            if let Some(s) = sdef.var_index.by_name(&dv.name, dv.is_list) {
                return Some((stage, s as usize));
            }
            if let Some(s) = sg.dyn_vars.by_name(dv.name_key, dv.is_list) {
                return Some((stage, s as usize));
            }
        }
        // 5. create it locally (value 0 / empty list)
        let t = self.target_mut(target)?;
        let slot = t.vars.len();
        t.vars.push(if dv.is_list { V::Undef } else { V::num(0.0) });
        t.lists.push(Vec::new());
        t.dyn_vars.push(i, dv.is_list, slot as u32, dv.id_key, dv.name_key);
        Some((target, slot))
    }

    pub(crate) fn get_var(&mut self, prog: &Program, target: TargetId, r: VarRef) -> V {
        match self.resolve_var(prog, target, r) {
            Some((owner, s)) => self.target(owner).and_then(|t| t.vars.get(s).cloned()).unwrap_or(V::Undef),
            None => V::Undef,
        }
    }

    /// [`State::get_var`] as a number (`Cast.toNumber`), without cloning the value.
    pub(crate) fn var_num(&mut self, prog: &Program, target: TargetId, r: VarRef) -> f64 {
        match self.resolve_var(prog, target, r) {
            Some((owner, s)) => self.target(owner).and_then(|t| t.vars.get(s)).map_or(0.0, |v| to_number(prog, v)),
            None => 0.0,
        }
    }

    /// Inlined: as a call, `v` went through the stack as two 8-byte stores read back with one
    /// 16-byte load, which cannot be forwarded (a stall on every `set`; issue 36's profile).
    #[inline(always)]
    pub(crate) fn set_var(&mut self, prog: &Program, target: TargetId, r: VarRef, v: V) {
        if let Some((owner, s)) = self.resolve_var(prog, target, r)
            && let Some(x) = self.target_mut(owner).and_then(|t| t.vars.get_mut(s))
        {
            *x = v;
        }
    }

    /// scratch-vm's `CHANGE_VARIABLE` event of a `set` or `change` block, with the variable's
    /// name, for Whisker's `onVariableChange` listener.
    #[cold]
    fn log_variable_change(&mut self, prog: &Program, target: TargetId, r: VarRef) {
        let Some((owner, slot)) = self.resolve_var(prog, target, r) else { return };
        let Some(t) = self.target(owner) else { return };
        let declared = prog.def(t.def).vars.get(slot).map(|v| &*v.name);
        let name = declared.or_else(|| {
            t.dyn_vars
                .iter()
                .find(|&&(_, is_list, s)| !is_list && s as usize == slot)
                .and_then(|&(d, _, _)| prog.dyn_vars.get(d as usize))
                .map(|dv| &*dv.name)
        });
        if let Some(name) = name.map(str::to_string) {
            self.observe.listener(target, crate::vm::ListenerKind::Variable(name), None);
        }
    }

    /// A list to read: resolved (and created) as [`State::list_mut`] does, but not logged as
    /// a change for the geometry, which a read is not (engine `+sem56`: before, every read was
    /// charged as a change of its target).
    pub(crate) fn list_ref(&mut self, prog: &Program, target: TargetId, r: VarRef) -> Option<&Vec<V>> {
        let (owner, s) = self.resolve_var(prog, target, r)?;
        self.target(owner).and_then(|t| t.lists.get(s))
    }

    /// A list to change (logged for the geometry as a change of its owner, as every change is).
    pub(crate) fn list_mut(&mut self, prog: &Program, target: TargetId, r: VarRef) -> Option<&mut Vec<V>> {
        let (owner, s) = self.resolve_var(prog, target, r)?;
        self.target_mut(owner).and_then(|t| t.lists.get_mut(s))
    }
}
