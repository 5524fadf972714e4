// Itch's scheduler on virtual time: a tree of scheduled events; an event's action runs, and
// when it resolves (sync) or at once (async) the events after it start, breadth first as
// Itch's promise chains run them. Between VM steps nothing else happens, so the whole run
// is one synchronous loop: start what is due, step the VM, tell the waiting actions what
// the step did, time out what waited too long. Then the Evaluation object and `run`.
(function (P, N) {
    'use strict';

    const {rt, realMs, stepsFor, snap, broadcastSeen, terminate, delay, sprite, broadcast} = P;
    const {
        CallbackAction, RangeStart, RangeEnd, GreenFlagAction, ClickAction, KeyPressAction, BroadcastAction,
        KeyUseAction, MouseAction, SetVariableAction, TrackSprite, TrackBroadcasts, EndAction, JoinAction
    } = P.actions;
    // ------------------------------------------------------------------ scheduled events

    class ScheduledEvent {
        constructor(action, sync = true, timeout = undefined) {
            this.action = action;
            this.sync = sync;
            this.timeout = timeout;
            this.nextEvents = [];
            this._joiners = [];
            this._onResolve = undefined;
            this._onTimeout = undefined;
        }
        static create() {
            return new ScheduledEvent(new CallbackAction(() => {}));
        }
        toString() {
            return this.action.toString();
        }
        _next(action, sync = true, timeout = undefined) {
            const e = new ScheduledEvent(action, sync, timeout);
            this.nextEvents.push(e);
            return e;
        }
        wait(param) {
            const c = typeof param === 'number' ? delay(param) : param;
            if (!c || !c.action) {
                throw new TypeError('wait: a number of ms or a wait condition (Itch.sprite(…), Itch.delay, Itch.broadcast)');
            }
            return this._next(c.action, true, c.timeout);
        }
        forEach(items, reducer) {
            return Array.from(items).reduce(reducer, this);
        }
        end() {
            return this._next(new EndAction());
        }
        log(callback = () => {}) {
            return this._next(new CallbackAction(callback));
        }
        startRange(name) {
            return this._next(new RangeStart(name));
        }
        endRange(name) {
            return this._next(new RangeEnd(name));
        }
        track(sprite) {
            return this._next(new TrackSprite(sprite));
        }
        trackBroadcast(...names) {
            return this._next(new TrackBroadcasts(names));
        }
        greenFlag(sync = true, timeout = undefined) {
            return this._next(new GreenFlagAction(), sync, timeout);
        }
        clickSprite(spriteName = 'Stage', sync = true, timeout = undefined) {
            return this._next(new ClickAction(spriteName), sync, timeout);
        }
        sendBroadcast(broadcast, sync = true, timeout = undefined) {
            const name = typeof broadcast === 'string' ? broadcast : broadcast.name;
            return this._next(new BroadcastAction(name), sync, timeout);
        }
        pressKey(key, sync = true, timeout = undefined) {
            return this._next(new KeyPressAction(key), sync, timeout);
        }
        useKey(key, down = 60, sync = true, delayMs = 20) {
            return this._next(new KeyUseAction(key, down, delayMs), sync);
        }
        useMouse(data) {
            return this._next(new MouseAction(data));
        }
        pipe(provider) {
            return provider(this);
        }
        join(events, timeout = undefined) {
            return this._next(new JoinAction(events), true, timeout);
        }
        resolved(callback) {
            this._onResolve = callback;
            return this;
        }
        timedOut(callback) {
            this._onTimeout = callback;
            return this;
        }
        asTest(messages) {
            const correct = P.castCallback(messages ? messages.correct : undefined);
            const wrong = P.castCallback(messages ? messages.wrong : undefined);
            this.resolved(() => {
                rt.out.startTest();
                rt.out.closeTest('correct', correct());
            });
            this.timedOut(() => {
                rt.out.startTest();
                rt.out.closeTest('wrong', wrong());
                return true;
            });
            return this;
        }
        setVariableTo(name, value, target = 'Stage') {
            return this._next(new SetVariableAction(target, name, value));
        }
    }

    // Launching and finishing events. An event's action gets `resolve`; a sync event's next
    // events start when it is called, an async event's at once (its action goes on).
    const launch = ev => {
        if (rt.ended) {
            return;
        }
        ev._state = 'running';
        let done = false;
        const resolve = () => {
            if (done) {
                return;
            }
            done = true;
            ev._joiners.forEach(j => j.joinedBy());
            rt.background = rt.background.filter(x => x !== ev);
            if (ev.sync && ev._state === 'running') {
                finish(ev);
            }
        };
        ev._resolve = resolve;
        ev._deadline = rt.steps + stepsFor(ev.timeout || rt.actionTimeout);
        if (ev.sync) {
            rt.pending.push(ev);
        } else {
            rt.background.push(ev);
        }
        ev.action.start(resolve);
        if (!ev.sync) {
            finish(ev);
            if (done) {
                rt.background = rt.background.filter(x => x !== ev);
            }
        }
    };
    const finish = ev => {
        ev._state = 'done';
        rt.pending = rt.pending.filter(x => x !== ev);
        if (ev._onResolve) {
            ev._onResolve(context);
        }
        rt.queue.push(...ev.nextEvents);
    };
    const drain = () => {
        while (rt.queue.length && !rt.ended) {
            launch(rt.queue.shift());
        }
    };
    const timeOut = ev => {
        ev._state = 'timeout';
        rt.pending = rt.pending.filter(x => x !== ev);
        let escalate = true;
        if (ev._onTimeout) {
            const r = ev._onTimeout(context);
            escalate = r === undefined || !r;
        }
        if (escalate) {
            rt.out.appendMessage(`timeout after ${ev.timeout || rt.actionTimeout} ms waiting for ${ev}`);
            rt.out.escalateStatus('time limit exceeded');
            rt.out.closeJudgement();
        }
        terminate();
    };

    // ------------------------------------------------------------------ one step
    // scratch-vm draws at most 330 characters of a bubble; the VM's bubble state has the
    // drawn text (numbers as scratch-vm formats them), the SAY event the message as given.
    const formatBubble = text => (text.length > 330 ? `${text.slice(0, 327)}...` : text);
    /** Itch's text-skin record: a bubble created, updated or removed by the renderer. */
    const skinEvents = (says, state) => {
        const shown = new Map();
        for (const t of state) {
            shown.set(t.h, t.bubble && t.bubble.text !== '' && t.visible ? t.bubble : null);
        }
        const record = (name, data) => {
            const ev = new P.Event('renderer', {name, ...data});
            ev.snapshot = rt.stepSnapshot();
            rt.log.registerEvent(ev);
        };
        const hidden = new Set(state.filter(t => !t.visible).map(t => t.h));
        const lastSay = new Map();
        says.forEach((say, i) => lastSay.set(say[3], i));
        for (const [i, [, , said, h]] of says.entries()) {
            const drawn = shown.get(h);
            const text = lastSay.get(h) === i && said !== '' && drawn ? drawn.text : formatBubble(said);
            const skin = rt.skins.get(h);
            // scratch-vm draws no bubble for an empty text or a hidden sprite (and removes one).
            if (said === '' || hidden.has(h)) {
                if (skin !== undefined) {
                    record('destroySkin', {id: skin});
                    rt.skins.delete(h);
                }
            } else if (skin !== undefined) {
                rt.log.renderer.responses.push(text);
                record('updateTextSkin', {text});
            } else {
                const id = rt.nextSkin++;
                rt.skins.set(h, id);
                rt.log.renderer.responses.push(text);
                record('createTextSkin', {id, text});
            }
        }
        // Bubbles the step removed without a SAY event (timers, stop all, hide).
        for (const [h, id] of [...rt.skins]) {
            if (!shown.get(h)) {
                record('destroySkin', {id});
                rt.skins.delete(h);
            }
        }
    };

    const observe = step => {
        rt.steps = step.steps;
        rt.clock = realMs(step.steps - 1);
        let stepSnap = null;
        rt.stepSnapshot = () => {
            if (stepSnap === null) {
                stepSnap = snap('profiler.basic');
            }
            return stepSnap;
        };
        // Itch snapshots the VM whenever a block runs (its basic profiler): once per step here.
        if (step.threads > 0) {
            rt.stepSnapshot();
        }
        const state = step.says.length || rt.skins.size ? JSON.parse(__itch.state()) : [];
        for (const [name, kind, text, h] of step.says) {
            if (text !== '') {
                const ev = new P.Event('say', {text, target: {name, h}, type: kind, sprite: name});
                ev.snapshot = rt.stepSnapshot();
                rt.log.registerEvent(ev);
            }
        }
        if (step.says.length || rt.skins.size) {
            skinEvents(step.says, state);
        }
        for (const [kind, r, g, b, a, size, x0, y0, x1, y1] of step.pen) {
            const color = [r, g, b, a];
            if (kind === 0) {
                const line = {start: {x: x0, y: y0}, end: {x: x1, y: y1}};
                rt.log.renderer.lines.push(line);
                const ev = new P.Event('renderer', {name: 'penLine', line, color, size});
                ev.snapshot = rt.stepSnapshot();
                rt.log.registerEvent(ev);
            } else if (kind === 1) {
                const point = {x: x0, y: y0};
                rt.log.renderer.points.push(point);
                const ev = new P.Event('renderer', {name: 'penPoint', point, color, size});
                ev.snapshot = rt.stepSnapshot();
                rt.log.registerEvent(ev);
            } else {
                const ev = new P.Event('renderer', {name: 'penClear',
                    previous: {lines: rt.log.renderer.lines.slice(), points: rt.log.renderer.points.slice()}});
                rt.log.renderer.lines = [];
                rt.log.renderer.points = [];
                ev.snapshot = rt.stepSnapshot();
                rt.log.registerEvent(ev);
            }
        }
        if (step.blocks.length) {
            const s = rt.stepSnapshot();
            for (const [target, blockId] of step.blocks) {
                let block;
                let node;
                const ev = new P.Event('block_execution', {
                    blockId, target,
                    block: () => (block === undefined ? (block = rt.log.last.target(target).block(blockId)) : block),
                    node: () => (node === undefined ? (node = rt.log.last.target(target).node(blockId)) : node)
                });
                ev.snapshot = s;
                rt.log.registerEvent(ev);
            }
        }
        if (step.question) {
            let answer = rt.provided.shift();
            if (answer === undefined) {
                rt.out.appendMessage('A question was asked for which no answer was provided (e.answers).');
                rt.out.escalateStatus('wrong');
            }
            const asked = step.says.filter(s => s[2] !== '');
            const ev = new P.Event('answer', {question: asked.length ? asked[asked.length - 1][2] : '', text: answer});
            ev.snapshot = rt.stepSnapshot();
            rt.log.registerEvent(ev);
            N.answer(answer === undefined ? '' : String(answer));
        }
        step.broadcasts.forEach(broadcastSeen);
        for (const l of rt.listeners.slice()) {
            if (l.afterStep) {
                l.afterStep();
            }
        }
        // The scheduler acts between steps: what resolves now happens after this step.
        rt.clock = realMs(step.steps);
        for (const ev of rt.pending.concat(rt.background)) {
            if (ev._state === 'done' && ev.sync) {
                continue;
            }
            if (ev.action.onMoves && step.moves.length) {
                ev.action.onMoves(step.moves, ev._resolve);
            }
            if (ev.action.onStep) {
                ev.action.onStep(step, ev._resolve);
            }
            ev.action.poll(ev._resolve);
        }
    };

    /** Runs the scheduled events to their end on the VM. */
    const runScheduler = root => {
        rt.queue = [root];
        drain();
        while (!rt.ended) {
            if (!rt.queue.length && !rt.pending.length && !rt.background.length) {
                // The plan did not call `end()`: Itch would wait forever; stop here.
                terminate();
                break;
            }
            const step = JSON.parse(__itch.step());
            if (step.code >= 2) {
                rt.out.appendMessage(step.code === 2
                    ? `the run reached its step limit (${N.stepLimit()} steps)`
                    : 'the project reached the VM\'s work cap');
                rt.out.escalateStatus('time limit exceeded');
                rt.out.closeJudgement();
                terminate();
                break;
            }
            observe(step);
            for (const ev of rt.pending.slice()) {
                if (ev._state === 'running' && rt.steps >= ev._deadline && !rt.ended) {
                    timeOut(ev);
                }
            }
            drain();
        }
    };

    // ------------------------------------------------------------------ Evaluation
    const STAGES = {before: 1, scheduling: 2, executing: 3, after: 4};
    const context = {};
    class Evaluation {
        constructor() {
            this.stage = STAGES.before;
            this._scheduler = ScheduledEvent.create();
            this._acceleration = {factor: 1};
        }
        get log() {
            return rt.log;
        }
        get vm() {
            throw new Error('e.vm (the raw scratch-vm) is not available in clowder; use e.log');
        }
        get answers() {
            return rt.answers;
        }
        set answers(a) {
            rt.answers = Array.from(a || []);
        }
        get out() {
            return new P.GroupLevel(rt.out);
        }
        get group() {
            return this.out;
        }
        get groupedOutput() {
            return rt.out;
        }
        get output() {
            return rt.out;
        }
        get scheduler() {
            return this._scheduler;
        }
        _assertBefore(stage, what) {
            if (this.stage > stage) {
                throw new Error(`The function ${what} cannot be used at this stage: it must be used earlier.`);
            }
        }
        set actionTimeout(ms) {
            this._assertBefore(STAGES.scheduling, 'actionTimeout');
            rt.actionTimeout = Number(ms);
        }
        set acceleration(f) {
            this._assertBefore(STAGES.scheduling, 'acceleration');
            this._acceleration = {factor: Number(f)};
        }
        set timeAcceleration(f) {
            this._assertBefore(STAGES.scheduling, 'timeAcceleration');
            this._acceleration.time = Number(f);
        }
        set eventAcceleration(f) {
            this._assertBefore(STAGES.scheduling, 'eventAcceleration');
            this._acceleration.event = Number(f);
        }
        set turboMode(on) {
            // Turbo mode only changes how many frames a browser draws; on virtual time it
            // changes nothing a plan can see, so it is accepted and ignored.
            this._turbo = Boolean(on);
        }
        enableAdvancedProfiler(sprites) {
            __itch.profile(true, sprites === undefined ? null : Array.from(sprites).map(String));
        }
        disableAdvancedProfiler() {
            __itch.profile(false, null);
        }
    }

    // Itch's messages of the predefined-block check (clowder's own words).
    const MESSAGES = {
        'predefined.existing_code': 'Existing code',
        'predefined.no_changes': 'The existing code was not changed.',
        'predefined.deleted.name': 'Sprite exists',
        'predefined.deleted.wrong': 'The sprite {0} was removed.',
        'predefined.deleted.correct': 'The sprite {0} is still there.',
        'predefined.existing.name': 'Existing scripts',
        'predefined.existing.wrong': 'A script of {0} that was given was changed or removed.',
        'predefined.existing.correct': 'The scripts given for {0} are unchanged.',
        'predefined.allowed.name': 'Allowed blocks',
        'predefined.allowed.wrong': 'Blocks that may not be used here: {0}.',
        'predefined.allowed.correct': 'Only allowed blocks are used.',
        'predefined.around.name': 'Loose scripts',
        'predefined.around.wrong': 'There are scripts or blocks that do not belong here.',
        'predefined.around.correct': 'No loose scripts or blocks.'
    };
    P.translate = (key, ...args) => P.format(MESSAGES[key] === undefined ? key : MESSAGES[key], ...args.map(String));

    const expose = () => {
        const g = globalThis;
        Object.assign(g, {
            numericEquals: P.numericEquals, sprite, broadcast, delay, asRange: r => (typeof r === 'number'
                ? {min: r, max: r} : r), angle: P.angle, mergeLines: P.mergeLines, distSq: P.distSq, format: P.format,
            t: (s, ...args) => (args.length ? P.format(s, ...args) : s), B: P.B,
            ignoreWaitInProcedureFor: () => {
                throw new Error('ignoreWaitInProcedureFor (an experimental scratch-vm patch) is not supported');
            }
        });
        g.Itch = {
            checkPredefinedBlocks: P.checkPredefinedBlocks, distSq: P.distSq, numericEquals: P.numericEquals,
            broadcast, sprite, delay, asRange: g.asRange, mergeLines: P.mergeLines, findSquares: P.findSquares,
            findTriangles: P.findTriangles
        };
        if (typeof g.console === 'undefined') {
            const quiet = () => undefined;
            g.console = {log: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet, trace: quiet};
        }
    };

    const describeError = err => {
        if (err && typeof err === 'object') {
            const at = String(err.stack || '').split('\n').map(s => s.trim()).find(s => s.startsWith('at ') &&
                !s.includes('clowder:'));
            return `${err.name || 'Error'}: ${err.message}${at ? ` (${at.replace(/^at /, '')})` : ''}`;
        }
        return `thrown value: ${String(err)}`;
    };

    /** Runs the plan's three phases; returns the VM steps it ran. */
    const run = () => {
        rt.out = new P.ResultManager();
        rt.log = new P.Log(() => rt.clock);
        rt.out.startJudgement();
        const template = P.snapshotFromProject(__itch.project(0), 'template');
        const submission = P.snapshotFromProject(__itch.project(1), 'submission');
        rt.log.registerStartSnapshots(template, submission);
        const e = new Evaluation();
        const g = globalThis;
        try {
            expose();
            if (typeof g.beforeExecution === 'function') {
                g.beforeExecution(e);
            }
            e.stage = STAGES.scheduling;
            if (typeof g.duringExecution === 'function') {
                g.duringExecution(e);
            } else {
                e.scheduler.end();
            }
            e.stage = STAGES.executing;
            const a = e._acceleration;
            rt.timeFactor = a.time || a.factor || 1;
            rt.eventFactor = a.event || a.factor || 1;
            rt.provided = rt.answers.slice();
            runScheduler(e.scheduler);
            e.stage = STAGES.after;
            if (typeof g.afterExecution === 'function') {
                g.afterExecution(e);
            }
        } catch (err) {
            if (!(err && err.type === 'FatalErrorException')) {
                rt.out.escalateStatus('testplan error');
                rt.out.appendMessage(describeError(err));
            }
        }
        rt.out.closeJudgement();
        return rt.steps;
    };

    globalThis.__itchRunner = {run};
    Object.assign(P, {ScheduledEvent, Evaluation, sprite, broadcast, delay, rt});
})(globalThis.__itchParts, __native);
