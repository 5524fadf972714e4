// Whisker's test-driver semantics that the example suites do not exercise, on our own
// WhiskerProbe.sb3 (scripts/whisker_probe_project.py; issue 32): bubbles as the VM holds them,
// random inputs of every device and their draws, run times, errors inside callbacks.
//
// Each signature test logs what it saw (`SIG <test> <json>`) and passes only when that equals
// what the real Whisker (emse22, seed 1, acceleration 10, the whisker-oracle) logged with the
// test alone in its suite (clowder runs every test fresh; Whisker carries the total step count
// and the registered random inputs from one test of a suite to the next): EXPECTED below was
// recorded there with scripts/whisker-probe.sh, which runs each test alone in both.
const EXPECTED = {
    bubbles:
        '[["","","",[]],["name?","hmm","",[null]],["name?","hmm","",[null]],["clicked","hmm","",[null]],["clicked","bye","",[null]]]',
    detected:
        '[["2","4","0","GK","-90",76],["6","8","0","GK","137",156],["14","12","0","GK","222",244],["20","16","1","GK","-119",245],["26","24","1","GK","10",245],["34","28","1","GK","97",245]]',
    registered:
        '[["4","0","0","0","0",0,418],["4","0","0","0","75",0,989],["10","0","0","0","75",0,298],["12","0","0","WL","75",22,171],["16","0","0","WL","75",68,393],["18","0","0","WL","-83",114,63],["20","0","0","WL","-88",158,260],["20","0","0","WL","117",202,962],["20","0","0","WL","117"]]',
    times:
        '[1000,66.66666666666667,33.333333333333336,7.000000000000001,40,7,233.33333333333337,1333.3333333333335,500]',
    types:
        '["number","number","number",false]',
};

// `assert.ok` with `===`: Whisker emse22's `assert.equal` calls any two non-numeric strings
// equal (it turns whatever `isNaN` calls not-a-number into "NaN" first; see `emse22 equal`).
const check = (t, name, sig) => {
    const s = JSON.stringify(sig);
    console.log('SIG ' + name + ' ' + s);
    t.assert.ok(s === EXPECTED[name], name + ': what the real Whisker saw');
};

// Whisker's servant prints no failure messages: each test logs what it throws, then rethrows
// (plain wrappers: a test function made by a factory function hangs Whisker emse22's loader).
// Test names differ from the functions' names: in Whisker emse22 a test whose name is the name
// of a function declared in the suite gets that function called without a driver.
const report = (label, e) => console.log('PROBE-THROW ' + label + ' :: ' + (e && e.name) + ': ' +
    String(e && e.message));

// As text: what the inputs did, whatever type the driver gives values (see `variable types`).
const vars = t => ['space', 'a', 'clicks', 'answer', 'mx'].map(n => String(t.getStage().getVariable(n).value));

// sayText after the green flag (the reset gives every target an empty bubble), on a clone made
// after it (no bubble state at all), with the question bubble, a click and a timed think.
const bubblesBody = async function (t) {
    const cat = t.getSprite('Cat');
    const dog = t.getSprite('Dog');
    const stage = t.getStage();
    const sig = [];
    const see = () => sig.push([cat.sayText, dog.sayText, stage.sayText,
        t.getSprites(s => !s.isOriginal).map(s => s.sayText)]);
    see();
    await t.runForSteps(1);
    see();
    await t.runForSteps(1);
    see();
    t.clickSprite('Cat');
    await t.runForSteps(2);
    see();
    await t.runForSteps(40);
    see();
    check(t, 'bubbles', sig);
    t.end();
};

// detectRandomInputs with Whisker's defaults: keys of the key hats and `key pressed?`, the
// mouse (mouse x), clicks on the sprite, typed answers; the interval 100 ms.
const detectedBody = async function (t) {
    t.detectRandomInputs();
    const sig = [];
    for (let i = 0; i < 6; i++) {
        await t.runForSteps(50);
        sig.push(vars(t).concat([t.getSprite('Cat').x]));
    }
    check(t, 'detected', sig);
    t.end();
};

// Explicit random inputs with weights and ranges, a longer interval, and Math.random in the test
// between runs (the same seeded stream as the project's).
const registeredBody = async function (t) {
    t.setRandomInputInterval(250);
    t.registerRandomInputs([
        {device: 'keyboard', key: 'space', duration: [1, 5], weight: 3},
        {device: 'keyboard', key: 'right arrow', duration: 4, weight: 1},
        {device: 'mouse', x: [-200, 200], y: [-150, 150], weight: 2},
        {device: 'text', length: [2, 5]}
    ]);
    const sig = [];
    for (let i = 0; i < 8; i++) {
        await t.runForSteps(23);
        sig.push(vars(t).concat([t.getSprite('Cat').x, Math.round(Math.random() * 1000)]));
    }
    t.clearRandomInputs();
    await t.runForSteps(30);
    sig.push(vars(t));
    check(t, 'registered', sig);
    t.end();
};

// What runForTime, runForSteps and the elapsed-time getters return.
const timesBody = async function (t) {
    const sig = [];
    sig.push(await t.runForTime(1000));
    sig.push(await t.runForTime(55));
    sig.push(await t.runForTime(10));
    sig.push(await t.runForSteps(7));
    sig.push(t.getTotalStepsExecuted(), t.getRunStepsExecuted(), t.getRunTimeElapsed(), t.getTotalTimeElapsed());
    sig.push(await t.runUntil(() => t.getStage().getVariable('answer').value !== 0, 500));
    check(t, 'times', sig);
    t.end();
};

// The types of variable values as the driver gives them.
const typesBody = async function (t) {
    await t.runForSteps(2);
    const v = n => t.getStage().getVariable(n).value;
    t.keyPress('space', 1);
    await t.runForSteps(2);
    check(t, 'types', [typeof v('space'), typeof v('answer'), typeof v('mx'), v('space') === 1]);
};

// A callback that reads a property of null (a learner's program that never says anything, read
// with `sayText.length`): an error inside the run, not an assertion.
const callbackTypeErrorBody = async function (t) {
    const cat = t.getSprite('Cat');
    t.addCallback(() => {
        const clone = t.getSprites(s => !s.isOriginal)[0];
        if (clone && clone.sayText.length > 3) {
            cat.x;
        }
    });
    await t.runForSteps(10);
    t.end();
};

// A callback whose assertion fails.
const callbackAssertionBody = async function (t) {
    t.addCallback(() => {
        t.assert.ok(t.getSprite('Cat').sayText !== 'name?', 'the cat must not ask');
    });
    await t.runForSteps(10);
    t.end();
};

const bubbles = async function (t) {
    try {
        await bubblesBody(t);
    } catch (e) {
        report('bubbles', e);
        throw e;
    }
};

const detected = async function (t) {
    try {
        await detectedBody(t);
    } catch (e) {
        report('detected', e);
        throw e;
    }
};

const registered = async function (t) {
    try {
        await registeredBody(t);
    } catch (e) {
        report('registered', e);
        throw e;
    }
};

const times = async function (t) {
    try {
        await timesBody(t);
    } catch (e) {
        report('times', e);
        throw e;
    }
};

const callbackTypeError = async function (t) {
    try {
        await callbackTypeErrorBody(t);
    } catch (e) {
        report('callbackTypeError', e);
        throw e;
    }
};

const types = async function (t) {
    try {
        await typesBody(t);
    } catch (e) {
        report('types', e);
        throw e;
    }
};

const callbackAssertion = async function (t) {
    try {
        await callbackAssertionBody(t);
    } catch (e) {
        report('callbackAssertion', e);
        throw e;
    }
};

// Whisker emse22's checks (test-runner/assert.js), each one verdict: `equal` on two different
// non-numeric strings passes; `greater` compares strings as strings; `assume.withinRange`
// fails (it throws an AssertionError, not an AssumptionError).
const emse22Equal = async function (t) {
    t.assert.equal('ground', 'bowl', 'different words');
    t.assume.equal('ground', 'bowl', 'different words');
    t.end();
};

const emse22Compare = async function (t) {
    t.assert.greater('b', 'a', 'strings as strings');
    t.assert.less('10', '9', 'strings as strings');
    t.end();
};

const emse22AssumeRange = async function (t) {
    t.assume.withinRange(10, 0, 1, 'out of range');
    t.end();
};

module.exports = [
    {test: bubbles, name: 'bubbles after the flag', description: '', categories: []},
    {test: detected, name: 'detected inputs', description: '', categories: []},
    {test: registered, name: 'registered inputs', description: '', categories: []},
    {test: times, name: 'run times', description: '', categories: []},
    {test: types, name: 'variable types', description: '', categories: []},
    {test: callbackTypeError, name: 'callback type error', description: '',
        categories: []},
    {test: callbackAssertion, name: 'callback assertion', description: '',
        categories: []},
    {test: emse22Equal, name: 'equal on words', description: '', categories: []},
    {test: emse22Compare, name: 'compare words', description: '', categories: []},
    {test: emse22AssumeRange, name: 'assumed range', description: '', categories: []}
];
