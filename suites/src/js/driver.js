// clowder's implementation of Whisker's test-driver API (se2p/whisker, whisker-main/src/test/
// test-driver.js and the vm/ and test-runner/ files it uses) over clowder's VM.
//
// Four files, evaluated in this order once per realm before the suite (a realm per file
// under Whisker's between-tests mode, as Whisker loads a file once; else one per test):
// driver.js (the determinism of the realm: Math.random, Date, timers; assertions and
// assumptions; keys),
// sprites.js (sprites, variables, the events of a step), callbacks.js (callbacks and
// constraints), wrapper.js (the run loop, inputs, random inputs, the driver object `t` and
// the runner's side). `__native` holds the Rust bindings (suites/src/native.rs); the files
// share their parts through `globalThis.__clowderParts`. `docs/testing.md` lists the
// methods and where they differ from Whisker.
(function (N) {
    'use strict';

    const STEP_MS = 1000 / 30;
    // Whisker's acceleration factor in the study (`-a 10`), which the whisker profile models.
    const ACCELERATION = 10;
    const STAGE = {width: 480, height: 360};

    // ------------------------------------------------------------------ determinism
    // Math.random, Date and timers never read the machine: the suite's random stream is
    // seeded by the run (suites/src/seeding.rs), the clock is the VM's virtual clock.
    Math.random = () => N.mathRandom();
    const EPOCH = 1600000000000; // a fixed date (2020-09-13); only differences of it matter
    let timerClock = 0;
    const virtualNow = () => EPOCH + Math.max(timerClock, N.elapsedMs());
    const RealDate = Date;
    class VirtualDate extends RealDate {
        constructor(...args) {
            if (args.length === 0) {
                super(virtualNow());
            } else {
                super(...args);
            }
        }
        static now() {
            return virtualNow();
        }
    }
    globalThis.Date = VirtualDate;
    if (typeof globalThis.performance !== 'undefined') {
        globalThis.performance = {now: () => virtualNow() - EPOCH};
    }

    // Virtual timers: a queue ordered by (due, sequence). Due timers fire between steps of a
    // run; when nothing else can happen the runner fires the next one (time jumps forward).
    let timers = [];
    let timerSeq = 0;
    const addTimer = (fn, delay, args, repeat) => {
        if (typeof fn !== 'function') {
            throw new TypeError('setTimeout: the callback must be a function');
        }
        const d = Math.max(0, Number(delay) || 0);
        const id = ++timerSeq;
        timers.push({id, due: Math.max(timerClock, N.elapsedMs()) + d, fn, args, repeat: repeat ? d : -1});
        timers.sort((a, b) => (a.due - b.due) || (a.id - b.id));
        return id;
    };
    globalThis.setTimeout = (fn, delay, ...args) => addTimer(fn, delay, args, false);
    globalThis.setInterval = (fn, delay, ...args) => addTimer(fn, delay, args, true);
    globalThis.setImmediate = (fn, ...args) => addTimer(fn, 0, args, false);
    const clearTimer = id => {
        timers = timers.filter(t => t.id !== id);
    };
    globalThis.clearTimeout = clearTimer;
    globalThis.clearInterval = clearTimer;
    globalThis.clearImmediate = clearTimer;
    const fireTimer = t => {
        timers = timers.filter(x => x !== t);
        timerClock = Math.max(timerClock, t.due);
        if (t.repeat >= 0) {
            timers.push({...t, id: ++timerSeq, due: t.due + Math.max(t.repeat, 1)});
            timers.sort((a, b) => (a.due - b.due) || (a.id - b.id));
        }
        t.fn(...t.args);
    };
    /** A new test's virtual time: its VM's clock starts at 0 again, so the timers of the
     * tests before it (due on their clocks) are dropped and the timer clock starts anew. */
    const resetTime = () => {
        timers = [];
        timerClock = 0;
    };
    /** Fires the timers due by now (between steps of a run). */
    const fireDueTimers = () => {
        const now = N.elapsedMs();
        while (timers.length && timers[0].due <= now) {
            fireTimer(timers[0]);
        }
    };

    // ------------------------------------------------------------------ assertions
    const inspect = v => {
        if (typeof v === 'string') {
            return JSON.stringify(v);
        }
        if (typeof v === 'function') {
            return `[Function${v.name ? ': ' + v.name : ''}]`;
        }
        try {
            const s = JSON.stringify(v);
            return s === undefined ? String(v) : s;
        } catch (e) {
            return String(v);
        }
    };
    class AssertionError extends Error {
        constructor(props) {
            const message = props.message !== undefined ? props.message
                : `${inspect(props.actual)} ${props.operator} ${inspect(props.expected)}`;
            super(message);
            this.name = 'AssertionError';
            this.generatedMessage = props.message === undefined;
            this.actual = props.actual;
            this.expected = props.expected;
            this.operator = props.operator;
        }
    }
    class AssumptionError extends AssertionError {
        constructor(props) {
            super(props);
            this.name = 'AssumptionError';
        }
    }
    // The checks are Whisker emse22's (`test-runner/assert.js`), the Whisker the suites are
    // judged by: message parts joined with nothing; `equal` first turns every value that
    // global `isNaN` calls not-a-number into "NaN", so two non-numeric strings always compare
    // equal there (`assert.equal('ground', 'bowl')` passes); comparisons are plain `>`/`<`
    // (strings compare as strings, nothing throws); and `assume.withinRange` throws an
    // AssertionError (a fail, not a skip). `isTrue`, `isFalse`, `isEmpty` and `isNotEmpty`
    // are Whisker master's, kept for suites written for it (emse22 has none).
    const getMessage = message => (message.length ? message.join('') : undefined);
    const asWhiskerEqual = v => (isNaN(v) ? 'NaN' : v);
    // Where a note goes when emse22's `equal` passes two different non-numbers (the running
    // test's log): the verdict is Whisker's, the note tells the suite's author.
    let noteSink = null;
    const setNoteSink = sink => {
        noteSink = sink;
    };
    const noteWordsEqual = (kind, actual, expected) => {
        if (noteSink !== null && actual !== expected) {
            noteSink(`note: ${kind}.equal(${inspect(actual)}, ${inspect(expected)}) holds, as in Whisker emse22 ` +
                '(it calls any two non-numbers equal); compare with === in assert.ok to tell them apart');
        }
    };
    const makeChecks = (Err, RangeErr, kind) => {
        const fail = (message, actual, expected, operator) => {
            throw new Err({message: getMessage(message), actual, expected, operator});
        };
        const isBool = c => {
            if (typeof c !== 'boolean') {
                throw new TypeError(`"${c}" is not a boolean`);
            }
        };
        const hasLength = v => {
            if (v === null || v === undefined || !(typeof v === 'string' || 'length' in Object(v))) {
                throw new TypeError(`"${v}" is not an array or a string`);
            }
        };
        const compare = (op, test) => function (actual, expected, ...message) {
            if (!test(actual, expected)) {
                fail(message, actual, expected, op);
            }
        };
        return {
            ok(condition, ...message) {
                if (!condition) {
                    fail(message, false, true, 'ok');
                }
            },
            isTrue(condition, ...message) {
                isBool(condition);
                if (!condition) {
                    fail(message, false, true, 'isTrue');
                }
            },
            not(condition, ...message) {
                if (condition) {
                    fail(message, true, false, 'not');
                }
            },
            isFalse(condition, ...message) {
                isBool(condition);
                if (condition) {
                    fail(message, true, false, 'isFalse');
                }
            },
            fail(...message) {
                fail(message, null, null, 'fail');
            },
            equal(actual, expected, ...message) {
                const a = asWhiskerEqual(actual);
                const e = asWhiskerEqual(expected);
                // eslint-disable-next-line eqeqeq
                if (!(a == e)) {
                    fail(message, a, e, '==');
                }
                if (a === 'NaN' && e === 'NaN') {
                    noteWordsEqual(kind, actual, expected);
                }
            },
            equalDictionaries(actual, expected, ...message) {
                if (JSON.stringify(actual) !== JSON.stringify(expected)) {
                    fail(message, actual, expected, '==');
                }
            },
            strictEqual(actual, expected, ...message) {
                if (actual !== expected) {
                    fail(message, actual, expected, '===');
                }
            },
            greater: compare('>', (a, e) => a > e),
            greaterOrEqual: compare('>=', (a, e) => a >= e),
            less: compare('<', (a, e) => a < e),
            lessOrEqual: compare('<=', (a, e) => a <= e),
            withinRange(actual, expected, delta = 0, ...message) {
                if (!(actual >= expected - delta && actual <= expected + delta)) {
                    throw new RangeErr({message: getMessage(message), actual, expected, operator: 'withinRange'});
                }
            },
            matches(actual, expected, ...message) {
                if (typeof actual !== 'string') {
                    throw new TypeError(`Actual value "${actual}" is not a string`);
                }
                if (!(typeof expected === 'string' || expected instanceof RegExp)) {
                    throw new TypeError(`Expected value "${expected}" is not a string or regular expression`);
                }
                if (!actual.match(expected)) {
                    fail(message, actual, expected, 'match');
                }
            },
            isEmpty(v, ...message) {
                hasLength(v);
                if (v.length !== 0) {
                    fail(message, false, true, 'isEmpty');
                }
            },
            isNotEmpty(v, ...message) {
                hasLength(v);
                if (v.length === 0) {
                    fail(message, false, true, 'isNotEmpty');
                }
            }
        };
    };
    const assert = makeChecks(AssertionError, AssertionError, 'assert');
    const assume = makeChecks(AssumptionError, AssertionError, 'assume');
    const isAssumption = e => e instanceof AssumptionError ||
        (e !== null && typeof e === 'object' && /assum/i.test(String(e.name)) &&
         ('actual' in e || 'expected' in e));
    const isAssertion = e => !isAssumption(e) && (e instanceof AssertionError ||
        (e !== null && typeof e === 'object' && /assert/i.test(String(e.name)) &&
         ('actual' in e || 'expected' in e)));

    /** Ends a test that ran out of steps; the runner reports it whatever the test does with it. */
    class StepLimitError extends Error {
        constructor(limit) {
            super(`Timeout: the test ran ${limit} steps without finishing`);
            this.name = 'StepLimit';
        }
    }

    // ------------------------------------------------------------------ keys
    const SCRATCH_TO_DOM = {'space': ' ', 'left arrow': 'Left', 'up arrow': 'Up', 'right arrow': 'Right',
        'down arrow': 'Down', 'enter': 'Enter'};
    const scratchKeyToKeyString = k => (Object.prototype.hasOwnProperty.call(SCRATCH_TO_DOM, k) ? SCRATCH_TO_DOM[k] : k);

    globalThis.__clowderParts = {
        N, STEP_MS, ACCELERATION, STAGE, AssertionError, AssumptionError, StepLimitError, assert, assume, setNoteSink,
        isAssertion,
        isAssumption, inspect, scratchKeyToKeyString, timers: () => timers, fireDueTimers, fireTimer, resetTime
    };
})(__native);
