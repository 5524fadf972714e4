// Snake (whisker-rq1), seed 2: the inputs of a suite the real Whisker generated (seed 2, test 1).
// The head turns up, then straight back down onto its body. `color #060000 is touching
// #00c782` (the head's colour on the body's) must not fire: the real Whisker (emse22, run.sh,
// seed 2, acceleration 10) passes this test; clowder said "Verloren!" at step 12 while its
// SVG blending rounded the head's dark edge pixels to within the colour tolerance.
const turnBack = async function (t) {
    t.keyPress('up arrow', 2);
    await t.runForSteps(2);
    await t.runForSteps(1);
    t.keyPress('down arrow', 8);
    await t.runForSteps(8);
    await t.runForSteps(1);
    for (let i = 0; i < 30; i++) {
        t.assert.not(t.getSprite('Kopf').sayText, `Expected Kopf not to say anything (${i} steps after the turn)`);
        await t.runForSteps(1);
    }
    t.end();
};

module.exports = [
    {test: turnBack, name: 'turning back onto the body is no self-collision', description: '', categories: [], seed: '2'}
];
