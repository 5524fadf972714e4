// clowder's implementation of the API Itch test plans (scratch-ed/itch, packages/core) call,
// written from its documentation and behaviour over clowder's VM. Five files, evaluated in
// this order after driver.js (Math.random, Date, timers on virtual time): base.js (values,
// the small lodash subset, feedback output: result manager, groups, tests, matchers),
// log.js (snapshots, events, the log, block trees), patterns.js (block patterns, the
// predefined-block check, pen geometry), actions.js (the run's state, the scheduler's
// actions, wait conditions) and scheduler.js (scheduled events, the run loop, the Evaluation
// object and the run). `__itch` holds the Rust bindings
// (suites/src/itch/native.rs); parts are shared through `globalThis.__itchParts`.
(function () {
    'use strict';

    // ------------------------------------------------------------------ values
    const isObj = v => v !== null && typeof v === 'object';
    /** Deep equality in the manner of lodash's isEqual (own enumerable keys, Sets, Maps). */
    const isEqual = (a, b, seen = []) => {
        if (a === b || (a !== a && b !== b)) {
            return true;
        }
        if (!isObj(a) || !isObj(b)) {
            return false;
        }
        if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) {
            return false;
        }
        if (seen.some(([x, y]) => x === a && y === b)) {
            return true;
        }
        seen = seen.concat([[a, b]]);
        if (a instanceof Set || a instanceof Map) {
            if (a.size !== b.size) {
                return false;
            }
            const xs = [...a];
            const ys = [...b];
            return xs.every(x => ys.some(y => isEqual(x, y, seen)));
        }
        if (Array.isArray(a)) {
            return a.length === b.length && a.every((x, i) => isEqual(x, b[i], seen));
        }
        if (a instanceof Date) {
            return a.getTime() === b.getTime();
        }
        const ka = Object.keys(a);
        const kb = Object.keys(b);
        return ka.length === kb.length && ka.every(k => Object.prototype.hasOwnProperty.call(b, k) &&
            isEqual(a[k], b[k], seen));
    };
    const numericEquals = (x, y, epsilon = 0.0001) => Math.abs(x - y) < epsilon;
    const castCallback = f => (typeof f === 'function' ? f : () => f);
    const castArray = v => (Array.isArray(v) ? v : [v]);
    const stringify = v => (isObj(v) && typeof v.toString === 'function' ? v.toString() : String(v));
    const format = (source, ...args) => String(source).replace(/{{|}}|{(\d+)}/g, (m, n) => {
        if (m === '{{') {
            return '{';
        }
        if (m === '}}') {
            return '}';
        }
        if (Number(n) >= args.length) {
            throw new Error(`format: no value for {${n}} (${args.length} given)`);
        }
        return args[Number(n)];
    });
    const cloneDeep = v => {
        if (!isObj(v)) {
            return v;
        }
        if (Array.isArray(v)) {
            return v.map(cloneDeep);
        }
        if (v instanceof Set) {
            return new Set([...v].map(cloneDeep));
        }
        if (v instanceof Map) {
            return new Map([...v].map(([k, x]) => [k, cloneDeep(x)]));
        }
        const out = Object.create(Object.getPrototypeOf(v));
        for (const k of Object.keys(v)) {
            out[k] = cloneDeep(v[k]);
        }
        return out;
    };
    const iteratee = f => {
        if (typeof f === 'function') {
            return f;
        }
        if (typeof f === 'string') {
            return o => (o === null || o === undefined ? undefined : o[f]);
        }
        if (f === undefined) {
            return x => x;
        }
        return o => Object.keys(f).every(k => isEqual(o[k], f[k]));
    };

    // The part of lodash plans use (Itch's page loads all of it as `_`).
    const _ = {
        range(start, end, step) {
            if (end === undefined) {
                end = start;
                start = 0;
            }
            step = step === undefined ? (start < end ? 1 : -1) : step;
            const out = [];
            const n = step === 0 ? Math.max(0, Math.ceil(end - start)) : Math.max(0, Math.ceil((end - start) / step));
            if (n > 1e7) {
                throw new RangeError('_.range: too many items');
            }
            for (let i = 0; i < n; i++) {
                out.push(start + i * step);
            }
            return out;
        },
        times: (n, f = i => i) => Array.from({length: Math.max(0, n | 0)}, (x, i) => f(i)),
        isEqual: (a, b) => isEqual(a, b),
        cloneDeep,
        clone: v => (Array.isArray(v) ? v.slice() : isObj(v) ? {...v} : v),
        castArray: (...a) => (a.length ? castArray(a[0]) : []),
        first: a => (a && a.length ? a[0] : undefined),
        head: a => (a && a.length ? a[0] : undefined),
        last: a => (a && a.length ? a[a.length - 1] : undefined),
        nth: (a, i = 0) => (a ? a[i < 0 ? a.length + i : i] : undefined),
        tail: a => (a ? a.slice(1) : []),
        initial: a => (a ? a.slice(0, -1) : []),
        take: (a, n = 1) => (a ? a.slice(0, Math.max(0, n)) : []),
        drop: (a, n = 1) => (a ? a.slice(Math.max(0, n)) : []),
        takeRight: (a, n = 1) => (a && n > 0 ? a.slice(-n) : []),
        chunk: (a, n = 1) => {
            const out = [];
            for (let i = 0; a && n >= 1 && i < a.length; i += n) {
                out.push(a.slice(i, i + n));
            }
            return out;
        },
        flatten: a => [].concat(...(a || [])),
        flattenDeep: a => (a || []).reduce((acc, x) => acc.concat(Array.isArray(x) ? _.flattenDeep(x) : [x]), []),
        compact: a => (a || []).filter(Boolean),
        uniq: a => (a || []).filter((x, i, s) => s.findIndex(y => y === x || (x !== x && y !== y)) === i),
        uniqBy: (a, f) => {
            const g = iteratee(f);
            const keys = [];
            return (a || []).filter(x => {
                const k = g(x);
                if (keys.includes(k)) {
                    return false;
                }
                keys.push(k);
                return true;
            });
        },
        uniqWith: (a, cmp) => (a || []).filter((x, i, s) => s.findIndex(y => cmp(x, y)) === i),
        difference: (a, ...others) => (a || []).filter(x => !others.some(o => (o || []).includes(x))),
        intersection: (a, ...others) => _.uniq((a || []).filter(x => others.every(o => (o || []).includes(x)))),
        union: (...arrays) => _.uniq([].concat(...arrays.map(x => x || []))),
        zip: (...arrays) => _.range(Math.max(0, ...arrays.map(a => (a ? a.length : 0))))
            .map(i => arrays.map(a => (a ? a[i] : undefined))),
        sum: a => (a || []).reduce((s, x) => s + x, 0),
        sumBy: (a, f) => (a || []).reduce((s, x) => s + iteratee(f)(x), 0),
        mean: a => (a && a.length ? _.sum(a) / a.length : NaN),
        min: a => (a && a.length ? a.reduce((m, x) => (x < m ? x : m)) : undefined),
        max: a => (a && a.length ? a.reduce((m, x) => (x > m ? x : m)) : undefined),
        minBy: (a, f) => (a && a.length ? a.reduce((m, x) => (iteratee(f)(x) < iteratee(f)(m) ? x : m)) : undefined),
        maxBy: (a, f) => (a && a.length ? a.reduce((m, x) => (iteratee(f)(x) > iteratee(f)(m) ? x : m)) : undefined),
        countBy: (a, f) => (a || []).reduce((o, x) => {
            const k = iteratee(f)(x);
            o[k] = (o[k] || 0) + 1;
            return o;
        }, {}),
        groupBy: (a, f) => (a || []).reduce((o, x) => {
            const k = iteratee(f)(x);
            (o[k] = o[k] || []).push(x);
            return o;
        }, {}),
        keyBy: (a, f) => (a || []).reduce((o, x) => {
            o[iteratee(f)(x)] = x;
            return o;
        }, {}),
        sortBy: (a, ...fs) => {
            const keys = [].concat(...fs).map(iteratee);
            return (a || []).map((x, i) => [x, i]).sort(([x, i], [y, j]) => {
                for (const k of keys) {
                    const p = k(x);
                    const q = k(y);
                    if (p < q) {
                        return -1;
                    }
                    if (p > q) {
                        return 1;
                    }
                }
                return i - j;
            }).map(([x]) => x);
        },
        partition: (a, f) => [(a || []).filter(iteratee(f)), (a || []).filter(x => !iteratee(f)(x))],
        filter: (a, f) => (a || []).filter(iteratee(f)),
        map: (a, f) => (Array.isArray(a) ? a.map(iteratee(f)) : Object.keys(a || {}).map(k => iteratee(f)(a[k], k))),
        find: (a, f) => (a || []).find(iteratee(f)),
        findIndex: (a, f) => (a || []).findIndex(iteratee(f)),
        findLast: (a, f) => (a || []).slice().reverse().find(iteratee(f)),
        some: (a, f) => (a || []).some(iteratee(f)),
        every: (a, f) => (a || []).every(iteratee(f)),
        includes: (a, x) => (typeof a === 'string' ? a.includes(x) : Array.isArray(a) ? a.includes(x)
            : Object.values(a || {}).includes(x)),
        forEach: (a, f) => {
            (a || []).forEach(f);
            return a;
        },
        reduce: (a, f, init) => (a || []).reduce(f, init),
        size: a => (a === null || a === undefined ? 0 : a.length !== undefined ? a.length
            : a.size !== undefined ? a.size : Object.keys(a).length),
        isEmpty: a => _.size(a) === 0,
        keys: o => Object.keys(o || {}),
        values: o => Object.values(o || {}),
        entries: o => Object.entries(o || {}),
        toPairs: o => Object.entries(o || {}),
        fromPairs: ps => Object.fromEntries(ps || []),
        pick: (o, ...ks) => Object.fromEntries([].concat(...ks).filter(k => o && k in o).map(k => [k, o[k]])),
        omit: (o, ...ks) => Object.fromEntries(Object.entries(o || {}).filter(([k]) => ![].concat(...ks).includes(k))),
        get: (o, path, dflt) => {
            const parts = Array.isArray(path) ? path : String(path).replace(/\[(\w+)\]/g, '.$1').split('.');
            let v = o;
            for (const p of parts) {
                v = v === null || v === undefined ? undefined : v[p];
            }
            return v === undefined ? dflt : v;
        },
        has: (o, k) => o !== null && o !== undefined && Object.prototype.hasOwnProperty.call(o, k),
        clamp: (n, lo, hi) => Math.min(Math.max(n, lo), hi),
        inRange: (n, start, end) => {
            if (end === undefined) {
                end = start;
                start = 0;
            }
            return n >= Math.min(start, end) && n < Math.max(start, end);
        },
        round: (n, p = 0) => Math.round(n * 10 ** p) / 10 ** p,
        random: (lo = 0, hi = 1) => lo + Math.floor(Math.random() * (hi - lo + 1)),
        shuffle: a => _.sortBy((a || []).map(x => [Math.random(), x]), p => p[0]).map(p => p[1]),
        isNumber: v => typeof v === 'number',
        isString: v => typeof v === 'string',
        isFunction: v => typeof v === 'function',
        isArray: Array.isArray,
        isObject: v => v !== null && (typeof v === 'object' || typeof v === 'function'),
        isNil: v => v === null || v === undefined,
        isUndefined: v => v === undefined,
        identity: x => x,
        noop: () => undefined,
        constant: x => () => x
    };

    // ------------------------------------------------------------------ feedback output
    // The partial format (version 2), one update per __itch.emit; the Rust side keeps them
    // and writes the stream, the full format and Dodona's from them.
    class ResultManager {
        constructor() {
            this.open = false;
            this.groups = 0;
            this.testOpen = false;
            this.finished = false;
            this.testNumber = 0;
            this.paused = false;
            this.buffer = [];
        }
        _out(update, force) {
            if (this.paused && !force) {
                this.buffer.push(update);
            } else {
                __itch.emit(JSON.stringify(update));
            }
        }
        pauzeOutput() {
            this.paused = true;
        }
        unpauzeOutput(discard = false) {
            this.paused = false;
            const buffered = this.buffer;
            this.buffer = [];
            if (!discard) {
                buffered.forEach(u => this._out(u));
            }
        }
        hasWrongTestInBuffer() {
            return this.buffer.some(u => u.command === 'close-test' && u.status !== 'correct');
        }
        startJudgement() {
            if (this.finished) {
                return;
            }
            this._out({command: 'start-judgement', version: 2}, true);
            this.open = true;
        }
        closeJudgement() {
            if (this.finished || !this.open) {
                return;
            }
            if (this.testOpen) {
                this.closeTest('wrong');
            }
            while (this.groups > 0) {
                this.closeGroup();
            }
            this._out({command: 'close-judgement'}, true);
            this.open = false;
            this.finished = true;
        }
        startGroup(name, visibility = 'show', tags = [], sprite = undefined) {
            if (this.finished) {
                return;
            }
            if (!this.open) {
                this.startJudgement();
            }
            this.groups++;
            this._out({command: 'start-group', name: String(name), sprite, visibility, tags});
        }
        closeGroup(summary = undefined) {
            if (this.finished || this.groups <= 0) {
                return;
            }
            this.groups--;
            this._out({command: 'close-group', summary});
        }
        startTest(name = undefined, tags = []) {
            if (name === undefined) {
                name = `Test ${this.testNumber++}`;
            }
            if (this.finished) {
                return;
            }
            if (this.testOpen) {
                this.closeTest('wrong');
            }
            if (this.groups <= 0) {
                // Itch names the implicit group with Math.random(): here the run's seeded stream.
                this.startGroup(`Groep ${Math.random()}`);
            }
            this._out({command: 'start-test', name: String(name), tags});
            this.testOpen = true;
        }
        closeTest(status, feedback = undefined) {
            if (this.finished || !this.testOpen) {
                return;
            }
            this._out({command: 'close-test', status, feedback: feedback === undefined ? undefined : String(feedback)});
            this.testOpen = false;
        }
        appendMessage(message) {
            if (!this.open) {
                return;
            }
            this._out({command: 'append-message', message: String(message)});
        }
        appendDiff(expected, actual = 'null') {
            if (!this.testOpen) {
                return;
            }
            this._out({command: 'append-diff', expected: String(expected), actual: String(actual)});
        }
        escalateStatus(status) {
            if (!this.open) {
                return;
            }
            this._out({command: 'escalate-status', status});
        }
    }

    /** What `fatal()` throws when its test fails: the run stops, the judgement is closed. */
    class FatalErrorException extends Error {
        constructor() {
            super('a fatal test failed');
            this.name = 'FatalErrorException';
            this.type = 'FatalErrorException';
        }
    }

    class Matcher {
        constructor(out, actual, isNode, matchOne, matchScript) {
            this._out = out;
            this._actual = actual;
            this._isNode = isNode;
            this._matchOne = matchOne;
            this._matchScript = matchScript;
        }
        _accepted(expected) {
            if (typeof this._actual === 'number' && typeof expected === 'number') {
                return numericEquals(this._actual, expected);
            }
            return isEqual(this._actual, expected);
        }
        _node() {
            const a = this._actual;
            if (!(a === null || a === undefined || this._isNode(a))) {
                throw new Error(`Found non-Node: ${a}, expected Node.`);
            }
            return a;
        }
        toBe(expected) {
            return this._out(this._accepted(expected), expected, this._actual);
        }
        toNotBe(expected) {
            return this._out(!this._accepted(expected), expected, this._actual);
        }
        toMatch(pattern) {
            return this._out(this._matchOne(this._node(), pattern));
        }
        toMatchSubtree(pattern) {
            return this._out(this._matchScript(this._node(), pattern));
        }
    }

    class TestOptions {
        constructor(manager, name) {
            this._manager = manager;
            this._name = name;
            this._wrong = undefined;
            this._correct = undefined;
            this._fatal = false;
            this._diff = false;
            this._tags = [];
            this._ignoreWrong = false;
        }
        fatal() {
            this._fatal = true;
            return this;
        }
        diff() {
            this._diff = true;
            return this;
        }
        ignoreWrong(on) {
            this._ignoreWrong = Boolean(on);
            return this;
        }
        tags(...tags) {
            this._tags = tags;
            return this;
        }
        feedback(messages) {
            const m = messages || {};
            this._correct = m.correct === undefined ? undefined : castCallback(m.correct);
            this._wrong = m.wrong === undefined ? undefined : castCallback(m.wrong);
            return this;
        }
        expect(actual) {
            const P = globalThis.__itchParts;
            return new Matcher(this._report.bind(this), actual, P.isNode, P.nodeMatchesPattern, P.subTreeMatchesScript);
        }
        acceptIf(correct) {
            return this._report(Boolean(correct));
        }
        _report(accepted, expected, actual) {
            if (this._ignoreWrong && !accepted) {
                return accepted;
            }
            this._manager.startTest(this._name, this._tags);
            const message = accepted ? this._correct : this._wrong;
            const summary = message ? message(expected, actual) : undefined;
            if (this._diff) {
                this._manager.appendDiff(stringify(expected), stringify(actual));
            }
            this._manager.closeTest(accepted ? 'correct' : 'wrong', summary);
            if (!accepted && this._fatal) {
                throw new FatalErrorException();
            }
            return accepted;
        }
    }

    class GroupLevel {
        constructor(manager) {
            this.resultManager = manager;
        }
        test(name) {
            return new TestOptions(this.resultManager, name);
        }
        group(a, b, c) {
            let name;
            let block;
            let options;
            if (typeof a === 'string' && isObj(b) && typeof c === 'function') {
                [name, options, block] = [a, b, c];
            } else if (isObj(a) && typeof b === 'function') {
                [name, options, block] = [`Testen voor ${a.sprite}`, a, b];
            } else if (typeof a === 'string' && typeof b === 'function') {
                [name, block] = [a, b];
            } else {
                throw new Error('Wrong arguments to group function.');
            }
            const o = options || {};
            if (o.ignoreWrong) {
                this.resultManager.pauzeOutput();
            }
            this.resultManager.startGroup(name, o.visibility || 'show', o.tags || [], o.sprite);
            block();
            this.resultManager.closeGroup(o.summary);
            if (o.ignoreWrong) {
                const discard = this.resultManager.hasWrongTestInBuffer();
                this.resultManager.unpauzeOutput(discard);
                return !discard;
            }
            return undefined;
        }
    }

    globalThis._ = _;
    globalThis.__itchParts = {
        isEqual, numericEquals, castCallback, castArray, stringify, format, cloneDeep,
        ResultManager, GroupLevel, TestOptions, Matcher, FatalErrorException
    };
})();
