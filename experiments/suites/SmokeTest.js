// A Whisker test suite written for clowder's own smoke projects (datasets/smoke), graded by
// experiments/grading-smoke.toml (and cli/tests/grading.rs). Like a teacher's suite it
// assumes the sprites it tests: on a project without them its tests are skipped.

const player = t => {
    const p = t.getSprite('Player');
    t.assume.ok(p !== undefined, 'Could not find sprite Player.');
    return p;
};

const cat = t => {
    const c = t.getSprite('Cat');
    t.assume.ok(c !== undefined, 'Could not find sprite Cat.');
    return c;
};

const movesRight = async function (t) {
    const p = player(t);
    await t.runForSteps(2);
    const x = p.x;
    t.keyPress('right arrow');
    await t.runForSteps(3);
    t.assert.greater(p.x, x, 'Player must move right on the right arrow.');
};

const saysRightSide = async function (t) {
    const p = player(t);
    for (let i = 0; i < 3; i++) {
        t.keyPress('right arrow');
        await t.runForSteps(2);
    }
    await t.runForSteps(5);
    // assert.ok with ===: Whisker (emse22) calls any two non-numeric strings equal in assert.equal.
    t.assert.ok(p.sayText === 'right side!', 'Player must say "right side!" past x = 50.');
};

const countsSpace = async function (t) {
    cat(t);
    const count = t.getStage().getVariable('count');
    t.assume.ok(count !== undefined, 'Could not find variable count.');
    t.keyPress('space', 10);
    await t.runForSteps(15);
    t.assert.greater(Number(count.value), 0, 'count must go up while space is held.');
};

// Fails on counter.json on purpose: after one click the count is 0, and the cat says "few".
const saysManyWhenClicked = async function (t) {
    const c = cat(t);
    await t.runForSteps(2);
    t.clickSprite('Cat');
    await t.runForSteps(3);
    t.assert.ok(c.sayText === 'many', 'The cat must say "many" when clicked.');
};

module.exports = [
    {test: movesRight, name: 'moves right', description: 'right arrow moves the player', categories: ['keys']},
    {test: saysRightSide, name: 'says right side', description: 'past x = 50', categories: ['keys']},
    {test: countsSpace, name: 'counts space', description: 'space counts up', categories: ['variables']},
    {test: saysManyWhenClicked, name: 'says many', description: 'a wrong expectation', categories: ['looks']}
];
