// The run's state and the scheduler's actions (what a scheduled event does: start hats and
// wait for the scripts they started, wait for time, a sprite or a broadcast, press keys, …),
// and the wait conditions plans build (`Itch.delay`, `Itch.sprite(…)`, `Itch.broadcast`).
// An action starts, may be told about each VM step (`poll`, `onMoves`), and calls `resolve`
// when it is done; scheduler.js decides what that means for the events after it.
(function (P, N) {
    'use strict';
    const STEP_MS = 1000 / 30;

    // ------------------------------------------------------------------ the run's state
    const rt = {
        steps: 0,
        timeFactor: 1,
        eventFactor: 1,
        clock: 0,
        actionTimeout: 5000,
        answers: [],
        provided: [],
        ended: false,
        queue: [],
        pending: [],
        background: [],
        listeners: [],
        skins: new Map(),
        nextSkin: 1,
        out: null,
        log: null
    };
    /** Real milliseconds (Itch's log timestamps, whole ms as `Date.now()`) at a step count. */
    const realMs = steps => Math.floor((steps * STEP_MS) / rt.timeFactor + 1e-6);
    /** VM steps a scheduler duration (real ms at the event acceleration) lasts. */
    const stepsFor = ms => {
        const scratch = (Number(ms) / rt.eventFactor) * rt.timeFactor;
        return Number.isFinite(scratch) && scratch > 0 ? Math.ceil(scratch / STEP_MS - 1e-9) : 0;
    };
    const snap = origin => rt.log.snap(origin);
    const spriteHandle = name => {
        const h = N.find(String(name));
        if (h === undefined) {
            throw new Error(`Sprite ${name} was not found in the runtime.`);
        }
        return h;
    };

    // ------------------------------------------------------------------ actions
    class Action {
        start() {}
        poll() {}
        toString() {
            return this.constructor.name;
        }
    }
    class CallbackAction extends Action {
        constructor(callback) {
            super();
            this.callback = callback;
        }
        start(resolve) {
            this.callback();
            resolve();
        }
    }
    class RangeStart extends Action {
        constructor(name) {
            super();
            this.name = name;
        }
        start(resolve) {
            snap(`start:${this.name}`);
            resolve();
        }
    }
    class RangeEnd extends Action {
        constructor(name) {
            super();
            this.name = name;
        }
        start(resolve) {
            const end = snap(`end:${this.name}`);
            const begin = rt.log.snapshots.find(s => s.origin === `start:${this.name}`);
            if (!begin) {
                throw new Error('Could not find start snapshot. Did you call `startRange` on the scheduler?');
            }
            const ev = new P.Event('savedRange', {name: this.name});
            ev.previous = begin;
            ev.next = end;
            rt.log.registerEvent(ev);
            resolve();
        }
    }
    class DelayAction extends Action {
        constructor(delay) {
            super();
            this.delay = delay;
        }
        start(resolve) {
            this.due = rt.steps + stepsFor(this.delay);
            this.poll(resolve);
        }
        poll(resolve) {
            if (rt.steps >= this.due) {
                resolve();
            }
        }
    }
    /** Starts hats as Itch's `startHats` does and resolves when the scripts it started end. */
    class HatAction extends Action {
        constructor(kind, arg, type, data) {
            super();
            this.kind = kind;
            this.arg = arg;
            this.type = type;
            this.data = data;
        }
        before() {}
        start(resolve) {
            this.before();
            this.event = new P.Event(this.type, this.data);
            this.event.previous = snap(`event.${this.type}.start`);
            rt.log.registerEvent(this.event);
            const list = __itch.startHats(this.kind, String(this.arg));
            this.scripts = [];
            for (let i = 0; i + 1 < list.length; i += 2) {
                this.scripts.push(`${list[i]}:${list[i + 1]}`);
            }
            this.poll(resolve);
        }
        poll(resolve) {
            if (this.scripts.length) {
                const a = __itch.active();
                const live = new Set();
                for (let i = 0; i + 1 < a.length; i += 2) {
                    live.add(`${a[i]}:${a[i + 1]}`);
                }
                this.scripts = this.scripts.filter(s => live.has(s));
            }
            if (!this.scripts.length) {
                this.event.next = snap(`event.${this.type}.end`);
                resolve();
            }
        }
    }
    class GreenFlagAction extends HatAction {
        constructor() {
            super('flag', '', 'greenFlag', {});
        }
    }
    class ClickAction extends HatAction {
        constructor(sprite) {
            super('click', sprite, 'click', {target: sprite});
        }
        toString() {
            return `ClickSpriteAction on ${this.arg}`;
        }
    }
    class KeyPressAction extends HatAction {
        constructor(key) {
            super('key', key, 'key', {key});
        }
    }
    class BroadcastAction extends HatAction {
        constructor(name) {
            super('broadcast', name, 'broadcast', {name, target: 'Stage', restrict: undefined});
        }
        before() {
            broadcastSeen(this.arg);
        }
        toString() {
            return `SendBroadcastAction of ${this.arg}`;
        }
    }
    class KeyUseAction extends Action {
        constructor(key, down, delay) {
            super();
            this.key = key;
            this.down = down;
            this.delay = delay;
        }
        start(resolve) {
            this.event = new P.Event('useKey', {key: this.key, down: this.down, delay: this.delay});
            this.event.previous = snap('event.keyUse.start');
            rt.log.registerEvent(this.event);
            const held = typeof this.down === 'number';
            if (held || this.down) {
                N.keyDown(String(this.key));
            } else {
                N.keyUp(String(this.key));
            }
            this.phase = held ? 'down' : 'after';
            this.due = rt.steps + stepsFor(held ? this.down : this.delay);
            this.poll(resolve);
        }
        poll(resolve) {
            if (rt.steps < this.due) {
                return;
            }
            if (this.phase === 'down') {
                this.event.next = snap('event.keyUse.end');
                N.keyUp(String(this.key));
                this.phase = 'release';
                this.due = rt.steps + stepsFor(this.delay);
                this.poll(resolve);
                return;
            }
            if (this.phase === 'after') {
                this.event.next = snap('event.keyUse.end');
            }
            resolve();
        }
    }
    class MouseAction extends Action {
        constructor(data) {
            super();
            this.data = data || {};
        }
        start(resolve) {
            N.mouseMove(Number(this.data.x) || 0, Number(this.data.y) || 0);
            if (typeof this.data.isDown === 'boolean') {
                N.mouseButton(this.data.isDown);
            }
            resolve();
        }
    }
    class SetVariableAction extends Action {
        constructor(target, name, value) {
            super();
            this.target = target;
            this.name = name;
            this.value = value;
        }
        start(resolve) {
            const ev = new P.Event('set_variable', {value: this.value});
            ev.snapshot = snap('event.set_variable');
            rt.log.registerEvent(ev);
            const h = this.target === 'Stage' ? N.stage() : spriteHandle(this.target);
            const v = this.value;
            N.setVar(h, String(this.name), typeof v === 'number', Number(v), String(v));
            resolve();
        }
    }
    /** Waits for something a step reports about a sprite (its moves). */
    class SpriteWait extends Action {
        constructor(name, type, test, data) {
            super();
            this.name = name;
            this.type = type;
            this.test = test;
            this.data = data;
        }
        start(resolve) {
            this.h = spriteHandle(this.name);
            this.prepare();
            if (this.type) {
                this.event = new P.Event(this.type, {...this.data(), sprite: this.name});
                this.event.previous = snap('event.wait.start');
                rt.log.registerEvent(this.event);
            }
        }
        prepare() {}
        onMoves(moves, resolve) {
            for (const m of moves) {
                if (m[6] === this.h && this.test(m)) {
                    if (this.event) {
                        this.event.next = snap('event.wait.end');
                    }
                    resolve();
                    return;
                }
            }
        }
    }
    const touches = (h, what) => (what === '_edge_' ? N.touchingEdge(h) : what === '_mouse_' ? N.touchingMouse(h)
        : N.touchingSprite(h, String(what)));
    class BroadcastWait extends Action {
        constructor(name) {
            super();
            this.name = name;
        }
        start(resolve) {
            this.event = new P.Event('broadcast_listener', {name: this.name});
            this.event.previous = snap('event.broadcast_listener.start');
            rt.log.registerEvent(this.event);
            this.resolve = resolve;
            rt.listeners.push(this);
        }
        onBroadcast(name) {
            if (name === this.name && this.resolve) {
                const r = this.resolve;
                this.resolve = null;
                rt.listeners = rt.listeners.filter(l => l !== this);
                this.event.next = snap('event.broadcast_listener.end');
                r();
            }
        }
    }
    class TrackSprite extends Action {
        constructor(name) {
            super();
            this.name = name;
        }
        start(resolve) {
            const h = spriteHandle(this.name);
            let last = null;
            const look = () => JSON.stringify([N.num(h, 0), N.num(h, 1), N.num(h, 2), N.num(h, 3), N.num(h, 4),
                N.visible(h), N.effects(h), N.num(h, 6)]);
            last = look();
            rt.listeners.push({
                afterStep: () => {
                    const now = look();
                    if (now !== last) {
                        last = now;
                        const ev = new P.Event('target_update', {target: this.name});
                        ev.snapshot = rt.stepSnapshot();
                        rt.log.registerEvent(ev);
                    }
                }
            });
            resolve();
        }
    }
    class TrackBroadcasts extends Action {
        constructor(names) {
            super();
            this.names = names;
        }
        start(resolve) {
            for (const name of this.names) {
                rt.listeners.push({
                    onBroadcast: sent => {
                        if (sent === name) {
                            const ev = new P.Event('broadcast_sent', {name});
                            ev.snapshot = snap('event.broadcast_sent');
                            rt.log.registerEvent(ev);
                        }
                    }
                });
            }
            resolve();
        }
    }
    class EndAction extends Action {
        start(resolve) {
            terminate();
            resolve();
        }
    }
    class JoinAction extends Action {
        constructor(events) {
            super();
            this.events = events;
            for (const e of events) {
                e._joiners.push(this);
            }
        }
        start(resolve) {
            this.resolve = resolve;
            if (this.joined) {
                resolve();
            }
        }
        joinedBy() {
            this.joined = true;
            if (this.resolve) {
                this.resolve();
            }
        }
    }
    const broadcastSeen = name => {
        for (const l of rt.listeners.slice()) {
            if (l.onBroadcast) {
                l.onBroadcast(name);
            }
        }
    };
    const terminate = () => {
        if (rt.ended) {
            return;
        }
        const end = snap('event.end');
        for (const ev of rt.log.events) {
            if (!ev.hasNext()) {
                ev.next = end;
            }
        }
        N.stopAll();
        rt.ended = true;
    };


    // ------------------------------------------------------------------ wait conditions
    const delay = ms => ({action: new DelayAction(ms), timeout: ms + 100});
    class SpriteCondition {
        constructor(name) {
            this.name = name;
        }
        toMove(timeout) {
            return {action: new SpriteWait(this.name, null, m => m[2] !== m[4] || m[3] !== m[5]), timeout};
        }
        toReach(positions, timeout) {
            const test = typeof positions === 'function' ? (x, y) => positions(x, y)
                : (x, y) => P.castArray(positions).some(p => (p.x === null || p.x === undefined ||
                    P.numericEquals(x, p.x)) && (p.y === null || p.y === undefined || P.numericEquals(y, p.y)));
            return {action: new SpriteWait(this.name, 'wait_sprite_position', m => test(m[4], m[5]), () => ({})), timeout};
        }
        toTouch(targets, timeout) {
            const f = P.castCallback(targets);
            const action = new SpriteWait(this.name, 'wait_sprite_touch',
                () => action.goals.some(g => touches(action.h, g)), () => ({targets: action.goals}));
            action.prepare = () => {
                action.goals = P.castArray(f());
            };
            return {action, timeout};
        }
        toNotTouch(target, timeout) {
            const f = P.castCallback(target);
            const action = new SpriteWait(this.name, 'wait_sprite_not_touch', () => !touches(action.h, action.goal),
                () => ({target: action.goal}));
            action.prepare = () => {
                action.goal = f();
            };
            return {action, timeout};
        }
        toTouchEdge(timeout) {
            return this.toTouch('_edge_', timeout);
        }
        toTouchMouse(timeout) {
            return this.toTouch('_mouse_', timeout);
        }
    }
    const sprite = name => new SpriteCondition(name);
    const broadcast = (name, timeout) => ({action: new BroadcastWait(name), timeout});

    Object.assign(P, {
        rt, STEP_MS, realMs, stepsFor, snap, broadcastSeen, terminate, delay, sprite, broadcast,
        actions: {
            CallbackAction, RangeStart, RangeEnd, DelayAction, GreenFlagAction, ClickAction, KeyPressAction,
            BroadcastAction, KeyUseAction, MouseAction, SetVariableAction, TrackSprite, TrackBroadcasts, EndAction,
            JoinAction
        }
    });
})(globalThis.__itchParts, __native);
