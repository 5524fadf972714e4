#!/usr/bin/env node
'use strict';
/**
 * TurboWarp anchor: the fidelity oracle's trace.js, run on TurboWarp's scratch-vm with its
 * compiler on. Same command line, same JSONL trace, same "#stats {...}" line on stderr:
 *
 *   node trace.js PROJECT --steps N [--seed S] [--inputs F.json] [--run-all] [--out FILE]
 *                 [--stats] [--max-ops N] [--on-error continue|stop] [--clock float|ms] [--verbose]
 *
 * Nothing of the oracle is copied: its lib/ and trace.js are required from the oracle's folder
 * (TW_ANCHOR_ORACLE, else CLOWDER_ORACLE, else ../../../shared/tools/fidelity, else
 * ~/.cache/clowder-fidelity/oracle) after its lib/scratch-vm-path.js has been replaced in
 * require.cache by lib/tw-path.js, so all of the oracle's patches apply to TurboWarp's modules.
 * What this file adds (README.md, "What differs"):
 *   T1  compiler on: vm.setCompilerOptions({enabled: true, warpTimer: false}), interpolation
 *       off, framerate 30 (the oracle's setCompatibilityMode(true) is TurboWarp's setFramerate(30)).
 *   T2  the oracle's one-tick sequencer timer reports 100 ms (not Infinity) after its first
 *       call: still >= 0.75 * 1000/30, so Sequencer.stepThreads runs exactly one tick, but
 *       <= 500, so the compiled code's isStuck() (which reads this timer) never yields a warp
 *       script, as scratch-vm's per-thread warp timer on the virtual clock never does.
 *   T3  fixed wall clock for compiled code: compiled "current year/.../second" blocks call
 *       `new Date()` and "days since 2000" calls Date.now() instead of the block primitives
 *       the oracle replaces, so Date is fixed at 2021-03-14 15:09:26 UTC and TZ=UTC.
 *   T4  hang watchdog: compiled blocks do not go through engine/execute.js, so the oracle's
 *       op-count hang guard cannot see a compiled infinite warp loop; a worker thread ends the
 *       process (printing a #stats line with reason "hang") when one step takes longer than
 *       TW_ANCHOR_HANG_SECONDS (default 120) of wall time.
 *   T5  labels: the end record's "vm" and the #stats line name TurboWarp; #stats also gets
 *       "compiler", "compiled_scripts" and "compile_errors".
 */
const fs = require('fs');
const os = require('os');
const path = require('path');
const Module = require('module');
const {Worker} = require('worker_threads');

const twPath = require('./lib/tw-path');

/* T3: fixed wall clock, before anything reads it. */
process.env.TZ = 'UTC';
const RealDate = Date;
const FIXED_NOW_MS = RealDate.UTC(2021, 2, 14, 15, 9, 26);
globalThis.Date = new Proxy(RealDate, {
    construct (target, args, newTarget) {
        return Reflect.construct(target, args.length === 0 ? [FIXED_NOW_MS] : args, newTarget);
    },
    apply () {
        return new RealDate(FIXED_NOW_MS).toString();
    },
    get (target, prop, receiver) {
        if (prop === 'now') return () => FIXED_NOW_MS;
        return Reflect.get(target, prop, receiver);
    }
});

const findOracle = () => {
    const candidates = [
        process.env.TW_ANCHOR_ORACLE,
        process.env.CLOWDER_ORACLE !== 'none' ? process.env.CLOWDER_ORACLE : null,
        path.resolve(__dirname, '..', '..', '..', 'shared', 'tools', 'fidelity'),
        path.join(os.homedir(), '.cache', 'clowder-fidelity', 'oracle')
    ].filter(Boolean).map(p => path.resolve(p));
    const found = candidates.find(d => fs.existsSync(path.join(d, 'trace.js')) &&
        fs.existsSync(path.join(d, 'lib', 'oracle.js')) && fs.existsSync(path.join(d, 'lib', 'scratch-vm-path.js')));
    if (!found) {
        process.stderr.write(`trace.js (turbowarp anchor): fidelity oracle not found in ${candidates.join(', ')}; set TW_ANCHOR_ORACLE\n`);
        process.exit(2);
    }
    return found;
};
const ORACLE = findOracle();

/* The oracle's lib/scratch-vm-path.js -> lib/tw-path.js (same exports, TurboWarp's paths). */
const svmPathFile = path.join(ORACLE, 'lib', 'scratch-vm-path.js');
{
    const m = new Module(svmPathFile, module);
    m.filename = svmPathFile;
    m.paths = Module._nodeModulePaths(path.dirname(svmPathFile));
    m.loaded = true;
    m.exports = twPath;
    require.cache[svmPathFile] = m;
}

// The oracle's lib: installs its process-global patches and loads TurboWarp's VM from tw/.
// (Loaded with console.log silenced, as the oracle's trace.js does before requiring it.)
const verbose = process.argv.includes('--verbose');
const realLog = console.log;
const realWarn = console.warn;
if (!verbose) {
    console.log = () => {};
    console.warn = () => {};
}
const oracle = require(path.join(ORACLE, 'lib', 'oracle.js'));
console.log = realLog;
console.warn = realWarn;
const {DeterministicSession} = oracle;

/** T1: TW_ANCHOR_COMPILER=0 runs TurboWarp's interpreter instead (for attribution only). */
const COMPILER = process.env.TW_ANCHOR_COMPILER !== '0';
/** T2: elapsed time the one-tick timer reports after its first call (25 <= x <= 500). */
const AFTER_FIRST_TICK_MS = 100;
const stats = {compileErrors: 0, sessions: []};

const realLoad = DeterministicSession.prototype.load;
DeterministicSession.prototype.load = async function (...args) {
    const vm = await realLoad.apply(this, args);
    const rt = vm.runtime;
    // T1: TurboWarp's compiler on, its own frame features off.
    vm.setCompilerOptions({enabled: COMPILER, warpTimer: false});
    if (typeof vm.setInterpolation === 'function') vm.setInterpolation(false);
    if (typeof vm.setFramerate === 'function') vm.setFramerate(30);
    rt.currentStepTime = oracle.STEP_MS;
    // T2
    const timer = rt.sequencer.timer;
    const oneTick = timer.timeElapsed;
    timer.timeElapsed = function () {
        const t = oneTick.call(this);
        return t === Infinity ? AFTER_FIRST_TICK_MS : t;
    };
    rt.on('COMPILE_ERROR', () => {
        stats.compileErrors++;
    });
    stats.sessions.push(rt);
    return vm;
};

/* T4: hang watchdog. The main thread bumps a shared counter before every step. */
const heartbeat = new Int32Array(new SharedArrayBuffer(4));
const hangSeconds = Number(process.env.TW_ANCHOR_HANG_SECONDS || 120);
const realStep = DeterministicSession.prototype.step;
DeterministicSession.prototype.step = function () {
    Atomics.add(heartbeat, 0, 1);
    return realStep.call(this);
};
if (hangSeconds > 0) {
    const projectArg = process.argv.slice(2).find((a, i, arr) => !a.startsWith('--') &&
        (i === 0 || !['--steps', '--seed', '--inputs', '--max-ops', '--on-error', '--clock', '--out'].includes(arr[i - 1])));
    const watchdog = new Worker(`
        const {workerData} = require('worker_threads');
        const fs = require('fs');
        const hb = workerData.heartbeat;
        let last = Atomics.load(hb, 0), since = Date.now();
        setInterval(() => {
            const now = Date.now(), cur = Atomics.load(hb, 0);
            if (cur !== last) { last = cur; since = now; return; }
            if (cur > 0 && now - since > workerData.hangSeconds * 1000) {
                fs.writeSync(2, '#stats ' + JSON.stringify({project: workerData.project, steps: cur - 1,
                    reason: 'hang', hang_step: cur - 1, watchdog_seconds: workerData.hangSeconds,
                    vm: workerData.vm, vm_steps_per_sec: null}) + '\\n');
                process.kill(process.pid, 'SIGKILL');
            }
        }, 1000);
    `, {eval: true, workerData: {heartbeat, hangSeconds, project: projectArg || null, vm: twPath.VM_LABEL}});
    watchdog.unref();
}

/* T5: labels. */
const ORACLE_VM_LABEL = '"vm":"scratch-vm@5.0.300"';
const realWriteSync = fs.writeSync;
fs.writeSync = function (fd, data, ...rest) {
    // The end record is the last line of the last buffer the oracle writes.
    if (typeof data === 'string' && data.length > 0) {
        const cut = data.lastIndexOf('\n', data.length - 2) + 1;
        const tail = data.slice(cut);
        if (tail.startsWith('{"end":true') && tail.includes(ORACLE_VM_LABEL)) {
            data = data.slice(0, cut) + tail.replace(ORACLE_VM_LABEL, `"vm":"${twPath.VM_LABEL}"`);
        }
    }
    return realWriteSync.call(this, fd, data, ...rest);
};
const realStderrWrite = process.stderr.write.bind(process.stderr);
process.stderr.write = (chunk, ...rest) => {
    if (typeof chunk === 'string' && chunk.startsWith('#stats ')) {
        try {
            const s = JSON.parse(chunk.slice(7));
            let compiled = 0;
            let failed = 0;
            for (const rt of stats.sessions) {
                for (const t of rt.targets) {
                    if (!t.isOriginal) continue;
                    const cache = t.blocks._cache.compiledScripts;
                    for (const id of Object.keys(cache)) {
                        if (cache[id].success) compiled++;
                        else failed++;
                    }
                }
            }
            Object.assign(s, {vm: twPath.VM_LABEL, compiler: COMPILER, compiled_scripts: compiled,
                compile_errors: Math.max(failed, stats.compileErrors),
                block_executions_note: 'interpreted blocks only (compiled scripts bypass execute())'});
            chunk = `#stats ${JSON.stringify(s)}\n`;
        } catch (e) {
            // leave the line as the oracle wrote it
        }
    }
    return realStderrWrite(chunk, ...rest);
};

// Run the oracle's trace.js (it parses process.argv and runs main()).
require(path.join(ORACLE, 'trace.js'));
