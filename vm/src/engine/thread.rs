//! Threads (scratch-vm's `Thread`): a running script's stack of frames, and the thread slab
//! behind `runtime.threads` (slots reused with a generation, list positions kept in O(1)).

use super::{State, TargetId, V};

/// Most frames on one thread's stack; a deeper (runaway recursive) thread ends the step as a hang.
pub const MAX_STACK_DEPTH: usize = 100_000;

/// A thread reference (slot in the thread slab plus generation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ThRef {
    pub slot: u32,
    pub gn: u32,
}

/// Scheduler status of a thread (scratch-vm's `Thread.STATUS_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Running,
    PromiseWait,
    Yield,
    YieldTick,
    Done,
}

/// A block's execution context on its frame (scratch-vm `stackFrame.executionContext`).
#[derive(Debug, Clone, Default)]
pub(crate) enum Ctx {
    #[default]
    None,
    /// `repeat` loop counter / `for each` index.
    Counter(f64),
    /// A stack timer: start time and duration (ms).
    Timer { start: f64, duration: f64 },
    /// Whisker's stack timer: the step count it started at and its duration in steps.
    StepTimer { offset: f64, duration: f64 },
    /// A glide in progress.
    Glide(Box<GlideCtx>),
    /// Threads started by `broadcast and wait` / `switch backdrop and wait`.
    Started(Vec<ThRef>),
    /// `procedures_call` has pushed its definition.
    Executed,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct GlideCtx {
    /// Start time (ms); under the `whisker` profile the step count.
    pub start: f64,
    /// Duration (s); under the `whisker` profile in steps.
    pub duration: f64,
    pub sx: f64,
    pub sy: f64,
    pub ex: f64,
    pub ey: f64,
    /// Profile `whisker`: this glide's serial ([`super::target::Target::glide`]); 0 otherwise.
    pub serial: u64,
}

/// Saved reporter values of a block waiting for a promise inside its inputs.
#[derive(Debug, Clone)]
pub(crate) struct Replay {
    pub values: Vec<V>,
    pub pending: usize,
    pub resolved: V,
}

/// One level of a thread's stack (scratch-vm `stack[i]` + `stackFrames[i]`).
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    /// Block on this level; `NONE` = a null entry (empty branch).
    pub block: u32,
    pub is_loop: bool,
    pub warp: bool,
    pub ctx: Ctx,
    pub params: Option<Vec<(u32, V)>>,
    pub replay: Option<Box<Replay>>,
}

impl Frame {
    fn new(block: u32, warp: bool) -> Frame {
        Frame { block, is_loop: false, warp, ctx: Ctx::None, params: None, replay: None }
    }
}

/// A running script.
#[derive(Debug, Clone)]
pub(crate) struct Thread {
    pub gn: u32,
    pub used: bool,
    pub target: TargetId,
    pub top: u32,
    pub stack: Vec<Frame>,
    pub status: Status,
    pub killed: bool,
    /// Index in `State::threads`, or [`NOT_LISTED`]: membership and position in O(1).
    pub list_pos: u32,
    /// In the list a tick iterates after a `stop all` (`State::orphans`).
    pub orphaned: bool,
    /// Emptied parameter lists of frames that were reused or popped, for the next procedure
    /// call: a call then binds its parameters without allocating (issue 36's profile).
    pub param_pool: Vec<Vec<(u32, V)>>,
}

/// Parameter lists a thread keeps for reuse (a warp loop calls at a handful of depths).
const PARAM_POOL: usize = 8;

/// `Thread::list_pos` of a thread that is not in `State::threads`.
pub(crate) const NOT_LISTED: u32 = u32::MAX;

impl Thread {
    /// `peekStack()`: top block (`NONE` for a null entry), `None` when empty.
    #[inline]
    pub fn peek(&self) -> Option<u32> {
        self.stack.last().map(|f| f.block)
    }
    /// `pushStack`: a new frame inheriting the warp mode of the one below.
    pub fn push(&mut self, block: u32) {
        let warp = self.stack.last().is_some_and(|f| f.warp);
        // Not `push`: its frame is built before the capacity check, kept on the stack across
        // the possible growth and copied with loads that cannot be forwarded from the stores
        // that built it (a stall on every pushed frame; issue 36's profile). `resize_with`
        // reserves first and builds the frame in place.
        let n = self.stack.len();
        self.stack.resize_with(n + 1, || Frame::new(block, warp));
    }
    /// `reuseStackForNextBlock`.
    #[inline]
    pub fn reuse_top(&mut self, next: u32) {
        if let Some(f) = self.stack.last_mut() {
            f.block = next;
            f.is_loop = false;
            f.ctx = Ctx::None;
            if let Some(p) = f.params.take() {
                Self::keep_params(&mut self.param_pool, p);
            }
            // Tested first: assigning `None` called the drop glue on every reuse.
            if f.replay.is_some() {
                f.replay = None;
            }
        }
    }
    /// An empty parameter list, from the pool when there is one.
    #[inline]
    pub fn fresh_params(&mut self) -> Vec<(u32, V)> {
        self.param_pool.pop().unwrap_or_default()
    }
    /// Puts an emptied parameter list in the pool (up to [`PARAM_POOL`]).
    #[inline]
    pub fn keep_params(pool: &mut Vec<Vec<(u32, V)>>, mut p: Vec<(u32, V)>) {
        if pool.len() < PARAM_POOL && p.capacity() > 0 {
            p.clear();
            pool.push(p);
        }
    }
    /// `popStack`, dropping the frame where it is: moving a 64-byte frame out of the stack
    /// (`Vec::pop`) reloaded it right after it was written and stalled the scheduler.
    #[inline]
    pub fn pop(&mut self) {
        if let Some(p) = self.stack.last_mut().and_then(|f| f.params.take()) {
            Self::keep_params(&mut self.param_pool, p);
        }
        let n = self.stack.len();
        self.stack.truncate(n.saturating_sub(1));
    }
    /// `retireThread`.
    pub fn retire(&mut self) {
        self.stack.clear();
        self.status = Status::Done;
    }
    /// Live: non-empty stack and not done.
    pub fn live(&self) -> bool {
        !self.stack.is_empty() && self.status != Status::Done
    }
}

/// What resumes a thread waiting for a promise.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Resume {
    /// The block itself returned the promise: move on to the next block.
    Advance,
    /// A reporter in the block's inputs returned it: run the block again.
    Reporter,
}

impl State {
    #[inline]
    pub(crate) fn th(&self, t: ThRef) -> &Thread {
        &self.threads.slab[t.slot as usize]
    }

    #[inline]
    pub(crate) fn thm(&mut self, t: ThRef) -> &mut Thread {
        &mut self.threads.slab[t.slot as usize]
    }

    /// Whether `t` still names the thread object it was taken from.
    #[inline]
    pub(crate) fn th_valid(&self, t: ThRef) -> bool {
        self.threads.slab.get(t.slot as usize).is_some_and(|x| x.used && x.gn == t.gn)
    }

    /// `runtime.threads.indexOf(thread) !== -1`.
    pub(crate) fn in_list(&self, t: ThRef) -> bool {
        self.th_valid(t) && self.th(t).list_pos != NOT_LISTED
    }

    /// `runtime.threads.push(thread)` of a new thread.
    pub(crate) fn list_push(&mut self, t: ThRef) {
        self.thm(t).list_pos = self.threads.list.len() as u32;
        self.threads.list.push(t);
    }

    /// `runtime.threads[pos] = thread` (a restarted script).
    pub(crate) fn list_replace(&mut self, pos: usize, t: ThRef) {
        if let Some(old) = self.threads.list.get(pos).copied() {
            self.thm(old).list_pos = NOT_LISTED;
            self.thm(t).list_pos = pos as u32;
            self.threads.list[pos] = t;
        }
    }

    /// `runtime.threads = runtime.threads.filter(keep)`.
    pub(crate) fn list_retain(&mut self, keep: fn(&Thread) -> bool) {
        let mut n = 0usize;
        for i in 0..self.threads.list.len() {
            let t = self.threads.list[i];
            let th = &mut self.threads.slab[t.slot as usize];
            if keep(th) {
                th.list_pos = n as u32;
                self.threads.list[n] = t;
                n += 1;
            } else {
                th.list_pos = NOT_LISTED;
            }
        }
        self.threads.list.truncate(n);
    }

    /// Empties `runtime.threads`; with `to_orphans` the current tick keeps iterating the old list.
    pub(crate) fn list_clear(&mut self, to_orphans: bool) {
        for &t in &self.threads.list {
            let th = &mut self.threads.slab[t.slot as usize];
            th.list_pos = NOT_LISTED;
            th.orphaned = to_orphans;
        }
        if to_orphans {
            self.threads.orphans = Some(std::mem::take(&mut self.threads.list));
        } else {
            self.threads.list.clear();
        }
    }

    /// The end of a tick's iteration over the list a `stop all` replaced.
    pub(crate) fn drop_orphans(&mut self) {
        if let Some(o) = self.threads.orphans.take() {
            for t in o {
                self.threads.slab[t.slot as usize].orphaned = false;
            }
        }
    }

    /// The threads of `id` that are in `runtime.threads` or the orphaned list (plus, until the
    /// next [`State::prune_threads_of`], some that left them).
    pub(crate) fn threads_of(&self, id: TargetId) -> &[ThRef] {
        match self.threads.by_target.get(id.slot as usize) {
            Some((owner, v)) if *owner == id => v,
            _ => &[],
        }
    }

    /// Drops index entries of `id` that can never be listed again: a thread that leaves
    /// `runtime.threads` (and the orphaned list) never comes back.
    pub(crate) fn prune_threads_of(&mut self, id: TargetId) {
        let slab = &self.threads.slab;
        if let Some((owner, v)) = self.threads.by_target.get_mut(id.slot as usize)
            && *owner == id
        {
            v.retain(|t| {
                let th = &slab[t.slot as usize];
                th.used && th.gn == t.gn && (th.list_pos != NOT_LISTED || th.orphaned)
            });
        }
    }

    /// `runtime.isWaitingThread(thread)`.
    pub(crate) fn is_waiting_thread(&self, t: ThRef) -> bool {
        if !self.in_list(t) {
            return true;
        }
        let th = self.th(t);
        th.status == Status::PromiseWait || th.status == Status::YieldTick || !th.live()
    }

    pub(crate) fn new_thread(&mut self, target: TargetId, top: u32) -> ThRef {
        let fresh = |gn: u32, mut stack: Vec<Frame>, param_pool: Vec<Vec<(u32, V)>>| {
            stack.clear();
            stack.push(Frame::new(top, false));
            Thread {
                gn,
                used: true,
                target,
                top,
                stack,
                status: Status::Running,
                killed: false,
                list_pos: NOT_LISTED,
                orphaned: false,
                param_pool,
            }
        };
        let r = match self.threads.free_slots.pop() {
            Some(slot) => {
                // The dead thread's frame and parameter-list allocations are reused: edge-
                // activated hats start a thread per hat every step.
                let old = &mut self.threads.slab[slot as usize];
                let gn = old.gn.wrapping_add(1);
                let (stack, pool) = (std::mem::take(&mut old.stack), std::mem::take(&mut old.param_pool));
                let stack = if stack.capacity() == 0 { Vec::with_capacity(4) } else { stack };
                *old = fresh(gn, stack, pool);
                ThRef { slot, gn }
            }
            None => {
                self.threads.slab.push(fresh(0, Vec::with_capacity(4), Vec::new()));
                ThRef { slot: (self.threads.slab.len() - 1) as u32, gn: 0 }
            }
        };
        let ts = target.slot as usize;
        if self.threads.by_target.len() <= ts {
            self.threads.by_target.resize_with(ts + 1, || (target, Vec::new()));
        }
        let entry = &mut self.threads.by_target[ts];
        // A slot's previous occupant was disposed: its threads were stopped then, and no new
        // thread can start for it, so its entries are never needed again.
        if entry.0 != target {
            entry.0 = target;
            entry.1.clear();
        }
        entry.1.push(r);
        r
    }

    /// Frees thread objects no list, tick or reference can reach any more.
    pub(crate) fn sweep_threads(&mut self) {
        if self.threads.slab.len() - self.threads.free_slots.len() == self.threads.list.len() {
            return;
        }
        let mut keep = vec![false; self.threads.slab.len()];
        for t in &self.threads.list {
            keep[t.slot as usize] = true;
        }
        for (i, th) in self.threads.slab.iter_mut().enumerate() {
            if th.used && !keep[i] {
                th.used = false;
                th.stack.clear();
                self.threads.free_slots.push(i as u32);
            }
        }
        let slab = &self.threads.slab;
        for (_, v) in &mut self.threads.by_target {
            v.retain(|t| slab[t.slot as usize].used && slab[t.slot as usize].gn == t.gn);
        }
    }

    /// Test builds check the bookkeeping the hat and stop scans rely on after every step:
    /// positions match the list, and every listed thread is indexed under its target.
    pub(crate) fn check_thread_index(&self) {
        if !cfg!(debug_assertions) {
            return;
        }
        for (i, &t) in self.threads.list.iter().enumerate() {
            let th = self.th(t);
            assert_eq!(th.list_pos as usize, i, "a thread's list position is stale");
            assert!(self.threads_of(th.target).contains(&t), "a listed thread is missing from its target's index");
        }
        let listed = self.threads.slab.iter().filter(|th| th.used && th.list_pos != NOT_LISTED).count();
        assert_eq!(listed, self.threads.list.len(), "a thread outside the list claims a list position");
        assert!(
            self.threads.orphans.is_none() && self.threads.slab.iter().all(|th| !th.orphaned),
            "orphans outlived their tick"
        );
    }
}

/// The thread objects and `runtime.threads`.
#[derive(Clone)]
pub(crate) struct Threads {
    /// Thread objects; a slot is reused with the next generation.
    pub slab: Vec<Thread>,
    /// Free slab slots.
    pub free_slots: Vec<u32>,
    /// `runtime.threads`. Changed only through the `list_*` methods, which keep
    /// `Thread::list_pos` in step.
    pub list: Vec<ThRef>,
    /// Per target slot: the target occupying it and the threads made for it that may still be
    /// listed. The scans of `startHats` and `stopForTarget` walk these instead of every thread,
    /// which a clone churning inside one warp step makes quadratic.
    pub by_target: Vec<(TargetId, Vec<ThRef>)>,
    /// The list the current tick iterates after a `stop all` replaced `runtime.threads`.
    pub orphans: Option<Vec<ThRef>>,
    /// Whether a tick is iterating the threads now.
    pub in_tick: bool,
    /// The thread being stepped (`sequencer.activeThread`).
    pub active: Option<ThRef>,
    /// Threads the last tick counted, running or finished (`Vm::last_step_threads`).
    pub tick_threads: usize,
}
