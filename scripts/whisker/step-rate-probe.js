// How many VM steps the real Whisker executes per wall-clock second on this machine
// (scripts/whisker_side_by_side.py --probe). Whisker's fixedTime budget is wall time divided
// by the acceleration; it equals the nominal number of Scratch-seconds only if Whisker runs
// 30 x acceleration steps per second. The green flag starts the game, then 900 steps
// (30 Scratch-seconds) run with no input, as a generated test's waits do.
const probe = async function (t) {
    t.greenFlag();
    const start = Date.now();
    const steps0 = t.getTotalStepsExecuted();
    await t.runForSteps(900);
    const ms = Date.now() - start;
    const steps = t.getTotalStepsExecuted() - steps0;
    console.log(`STEP-RATE steps=${steps} wall_ms=${ms} steps_per_s=${(1000 * steps / ms).toFixed(1)}`);
};

module.exports = [{test: probe, name: 'step rate', description: 'VM steps per wall second', categories: []}];
