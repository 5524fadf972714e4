#!/usr/bin/env node
'use strict';
/**
 * The generic input script of `clowder bench vm` (cli/src/cmd/bench.rs, generic_inputs +
 * inputs_json; the oracle's test/sanity.py inputs_for): green flag at step 0, keys, answers,
 * mouse, a stage click and clicks on the first three sprites (project.json order).
 *   node bench-inputs.js PROJECT.json STEPS [--green-flag-only] > inputs.json
 */
const fs = require('fs');

const [file, stepsArg, flag] = process.argv.slice(2);
if (!file || !stepsArg) {
    process.stderr.write('usage: node bench-inputs.js PROJECT.json STEPS [--green-flag-only]\n');
    process.exit(64);
}
const steps = Number(stepsArg);
let text = fs.readFileSync(file, 'utf8');
if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
const sprites = (JSON.parse(text).targets || []).filter(t => !t.isStage).map(t => String(t.name));

const ev = [[0, {kind: 'greenflag'}]];
if (flag !== '--green-flag-only') {
    const keys = [['space', 30, 36], ['right arrow', 60, 90], ['left arrow', 100, 130],
        ['up arrow', 140, 150], ['down arrow', 152, 160], ['a', 170, 172]];
    for (const [key, down, up] of keys) {
        ev.push([down, {kind: 'key_down', key}]);
        ev.push([up, {kind: 'key_up', key}]);
    }
    ev.push([45, {kind: 'answer', text: '42'}]);
    ev.push([180, {kind: 'mouse_move', x: 100, y: -50}]);
    ev.push([182, {kind: 'mouse_down'}]);
    ev.push([184, {kind: 'mouse_up'}]);
    ev.push([190, {kind: 'click_stage'}]);
    ev.push([230, {kind: 'answer', text: 'hello'}]);
    sprites.slice(0, 3).forEach((name, i) => ev.push([200 + 10 * i, {kind: 'click_sprite', sprite: name}]));
}
// Stable sort by step (Array.prototype.sort is stable), as bench.rs and the oracle do.
const out = ev.filter(([s]) => s < steps).sort((a, b) => a[0] - b[0])
    .map(([step, e]) => Object.assign({step}, e));
process.stdout.write(`${JSON.stringify(out)}\n`);
