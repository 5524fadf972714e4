//! The run-time half of reporters held in more than one input slot (`program::shared`): which
//! cached forms scratch-vm has built, which slot each shared reporter reports into, and what
//! every slot holds.

use super::{State, V};
use crate::program::SharedInfo;

/// Per VM (clones share their sprite's blocks, so one state serves them all).
#[derive(Debug, Clone)]
pub(crate) struct SharedState {
    /// Bits of the blocks whose cached form is built.
    built: Vec<u64>,
    /// Per shared reporter, the slot its value goes to (`u32::MAX`: none built yet).
    bound: Vec<u32>,
    /// What each holder's slot holds (`undefined` until a value goes there).
    slots: Vec<V>,
}

impl SharedState {
    pub(crate) fn new(info: &SharedInfo) -> Self {
        SharedState {
            built: vec![0; info.relevant.len()],
            bound: vec![u32::MAX; info.groups as usize],
            slots: vec![V::Undef; info.slots as usize],
        }
    }

    /// Builds block `b`'s cached form as scratch-vm's `BlockCached` does on its first
    /// execution: each reporter input's cached form first (unless built before), then the
    /// input is bound to this block's slot. Only blocks with a shared reporter below them are
    /// walked; the others bind nothing. Depth is bounded by the loader's nesting limit.
    pub(crate) fn build(&mut self, info: &SharedInfo, b: u32) {
        let (w, bit) = (b as usize / 64, 1u64 << (b % 64));
        match self.built.get_mut(w) {
            Some(word) if *word & bit == 0 => *word |= bit,
            _ => return,
        }
        let Some(kids) = info.kids.get(b as usize) else { return };
        for &(c, group, slot) in kids.iter() {
            if info.relevant(c) {
                self.build(info, c);
            }
            if let Some(g) = self.bound.get_mut(group as usize) {
                *g = slot;
            }
        }
    }

    /// Whether block `b`'s cached form is built.
    #[inline]
    pub(crate) fn is_built(&self, b: u32) -> bool {
        self.built.get(b as usize / 64).is_some_and(|w| w & (1 << (b % 64)) != 0)
    }

    /// The shared reporter `group` reported `v` from the holder whose slot is `slot`: the
    /// value goes to the slot the reporter is bound to, and the holder reads its own.
    pub(crate) fn report(&mut self, group: u32, slot: u32, v: V) -> V {
        let to = self.bound.get(group as usize).copied().unwrap_or(u32::MAX);
        match self.slots.get_mut(to as usize) {
            Some(x) => *x = v,
            // Nothing built yet (an input evaluated outside a block's execution): the holder
            // gets the value, as its own build would have bound it.
            None => return v,
        }
        self.slots.get(slot as usize).cloned().unwrap_or(V::Undef)
    }
}

impl State {
    /// Builds the cached form of block `b` if building it binds a shared reporter.
    #[inline]
    pub(crate) fn build_shared(&mut self, info: &SharedInfo, b: u32) {
        if let Some(sh) = self.shared.as_deref_mut()
            && info.relevant(b)
            && !sh.is_built(b)
        {
            sh.build(info, b);
        }
    }
}
