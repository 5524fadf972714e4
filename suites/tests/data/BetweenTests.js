const change = async function (t) {
    for (const k of ['h', 'c', 's', 'm']) {
        t.keyPress(k, 1);
        await t.runForSteps(2);
    }
    t.getSprite('Cat')._target.goToFront();
    t.assert.ok(t.getSprite('Cat').getCloneCount() === 1);
    // Registered at the end: they act in the tests after this one.
    t.registerRandomInputs([{device: 'keyboard', key: 's', duration: 1}]);
};
const look = async function (t) {
    const cat = t.getSprite('Cat');
    const dog = t.getSprite('Dog');
    const seen = JSON.stringify({
        visible: cat.visible, x: cat.x, clones: cat.getCloneCount(),
        score: t.getStage().getVariable('score', false).value,
        catInFront: cat.layerOrder > dog.layerOrder,
        touching: dog.isTouchingSprite('Cat'),
        steps: t.getTotalStepsExecuted()
    });
    t.log(seen);
    // (The real Whisker's servant prints the console, not the test's log.)
    console.log('seen ' + seen);
    await t.runForSteps(30);
    const score = String(t.getStage().getVariable('score', false).value);
    t.log(score);
    console.log('score ' + score);
};
module.exports = [{name: 'change things', test: change}, {name: 'look at the start', test: look}];
