// Module-level state and globals that one test sets and the next reads. The real Whisker
// (emse22, seed 1, acceleration 10, on BetweenTests.sb3, 2026-11-24) logged
// `modstate {"counter":2,"seen":["first","second"],"fromFirst":"set by first","date":true}`.
let counter = 0;
const seen = [];
globalThis.fromFirst = 'unset';
const first = async function (t) {
    counter += 1;
    seen.push('first');
    globalThis.fromFirst = 'set by first';
    // A timer the test leaves behind: it does not fire in the next test (its clock is new).
    setTimeout(() => { seen.push('timer'); }, 2000);
    await t.runForSteps(3);
};
const second = async function (t) {
    counter += 1;
    seen.push('second');
    await t.runForSteps(40);
    const out = JSON.stringify({counter, seen, fromFirst: globalThis.fromFirst, date: Date.now() > 0});
    console.log('modstate ' + out);
    t.log(out);
};
module.exports = [{name: 'first one', test: first}, {name: 'second one', test: second}];
