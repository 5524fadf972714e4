#!/usr/bin/env node
// Which Whisker test files the real Whisker's command line (emse22 `servant.js`,
// `prepareTestFiles`) hands to its page changed: it writes every test back as JSON with
// `test` set to its function's name and unquotes the first `"<that name>"`, so a test named
// as its function loses the function, and an inline function (named `test`) refers to
// whatever the file calls `test` (docs/testing.md, "How Whisker's command line loads a test
// file"; clowder models it in suites/src/js/wrapper.js, `servantForm`).
//
//   node scripts/whisker-servant-scan.js FILE.js...
//
// Prints one line per file with a changed test (and files it cannot evaluate); exit 0.
'use strict';
const fs = require('fs');
const vm = require('vm');

for (const file of process.argv.slice(2)) {
    const src = fs.readFileSync(file, 'utf8');
    if (!src.includes('module.exports')) {
        continue;
    }
    const sandbox = vm.createContext({module: {exports: {}}, console, require: () => ({})});
    let tests;
    try {
        tests = vm.runInContext(`${src}\n;module.exports`, sandbox, {timeout: 2000});
    } catch (e) {
        console.log(`${file}: cannot evaluate: ${String(e.message).slice(0, 100)}`);
        continue;
    }
    if (!Array.isArray(tests)) {
        continue;
    }
    const changed = [];
    tests.forEach((x, i) => {
        if (typeof x === 'function' || x === null || typeof x !== 'object' || typeof x.test !== 'function') {
            changed.push(`#${i + 1}: not a {test: function} object (the servant fails on it)`);
            return;
        }
        const fname = x.test.name;
        const desc = JSON.parse(JSON.stringify(x));
        desc.test = fname;
        const text = JSON.stringify(desc, null, 2).replace('"name"', 'name').replace('"description"', 'description')
            .replace('"categories"', 'categories').replace('"test"', 'test').replace(`"${fname}"`, `${fname}`);
        let y;
        try {
            // The page evaluates the rewritten array in the file's scope: here, after the file.
            y = vm.runInContext(`${src}\n;(${text}\n)`, vm.createContext({module: {exports: {}}, console,
                require: () => ({})}), {timeout: 2000});
        } catch (e) {
            changed.push(`#${i + 1} ${JSON.stringify(String(x.name))}: the servant cannot load the file (${e.message})`);
            return;
        }
        if (typeof y.test !== 'function') {
            changed.push(`#${i + 1} ${JSON.stringify(String(x.name))}: named as its function, becomes an error`);
        } else if (String(y.test) !== String(x.test)) {
            changed.push(`#${i + 1} ${JSON.stringify(String(x.name))}: runs the file's top-level \`${fname}\` instead`);
        }
    });
    if (changed.length) {
        console.log(`${file}: ${changed.join('; ')}`);
    }
}
