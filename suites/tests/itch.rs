//! Itch test plans on small projects built in code: the scheduler's sync and async events
//! and parallel branches on virtual time, timeouts (as a failed test, then the plan goes
//! on; or the judgement's `time limit exceeded`), wait conditions, answers, the log, and the
//! block-pattern matcher (anything, nothing, choice, any order, the predefined-block check).

use std::sync::Arc;

use clowder_suites::Limits;
use clowder_suites::itch::{ItchPlan, ItchResult, run_plan};
use clowder_testgen::testkit::{Arg, ProjectBuilder};
use clowder_vm::Project;

/// Stage variable `done`; `Cat`: on the flag waits 1 s, sets `done` to 1 and says "ready";
/// on `go` says "got it" for 0.5 s; clicked, broadcasts `ping` after 0.5 s. `Dog`: clicked,
/// moves right forever; on key `a` moves 10 steps. `Owl` asks a question on `ask` and says
/// the answer; on `ping` says "hoot" (a broadcast is seen where a script receives it).
fn project(extra_dog_move: bool) -> Arc<Project> {
    let mut p = ProjectBuilder::new();
    p.global_var("done");
    p.message("go");
    p.message("ping");
    p.message("ask");
    let cat = p.sprite("Cat");
    let flag = p.t(cat).when_flag();
    let w = p.t(cat).wait(1.0);
    let set = p.t(cat).set_var("done", Arg::n(1.0));
    let say = p.t(cat).say(Arg::t("ready"));
    p.t(cat).script(flag, &[w, set, say]);
    let go = p.t(cat).when_receive("go");
    let sf = p.t(cat).say_for(Arg::t("got it"), 0.5);
    p.t(cat).script(go, &[sf]);
    let click = p.t(cat).when_clicked();
    let w2 = p.t(cat).wait(0.5);
    let b = p.t(cat).broadcast("ping");
    p.t(cat).script(click, &[w2, b]);
    let dog = p.sprite("Dog");
    let dclick = p.t(dog).when_clicked();
    let step = p.t(dog).change_x(Arg::n(1.0));
    let fv = p.t(dog).forever(&[step]);
    p.t(dog).script(dclick, &[fv]);
    let key = p.t(dog).when_key("a");
    let mv = p.t(dog).move_steps(10.0);
    if extra_dog_move {
        let mv2 = p.t(dog).move_steps(10.0);
        p.t(dog).script(key, &[mv, mv2]);
    } else {
        p.t(dog).script(key, &[mv]);
    }
    let owl = p.sprite("Owl");
    let ask_hat = p.t(owl).when_receive("ask");
    let ask = p.t(owl).ask("name?");
    let ans = p.t(owl).answer();
    let say_ans = p.t(owl).say(Arg::b(&ans));
    p.t(owl).script(ask_hat, &[ask, say_ans]);
    let ping = p.t(owl).when_receive("ping");
    let hoot = p.t(owl).say(Arg::t("hoot"));
    p.t(owl).script(ping, &[hoot]);
    Arc::new(p.load())
}

fn run_on(template: &Arc<Project>, submission: &Arc<Project>, plan: &str) -> ItchResult {
    let plan = ItchPlan::from_source("plan.js", plan).expect("an Itch plan");
    run_plan(&plan, template, submission, 1, &Limits::default(), None)
}

fn run(plan: &str) -> ItchResult {
    let p = project(false);
    run_on(&p, &p, plan)
}

/// `name → status` of every test, in order.
fn statuses(r: &ItchResult) -> Vec<(String, String)> {
    r.tests.iter().map(|t| (t.name.clone(), t.status.clone())).collect()
}

#[track_caller]
fn all_correct(r: &ItchResult, n: usize) {
    let wrong: Vec<_> = r.tests.iter().filter(|t| t.status != "correct").collect();
    assert!(wrong.is_empty(), "not correct: {wrong:?}\n{:?}", r.updates);
    assert_eq!(r.tests.len(), n, "{:?}", statuses(r));
    assert_eq!(r.status, "correct");
}

#[test]
fn a_sync_green_flag_waits_for_the_scripts_it_started() {
    let r = run("function duringExecution(e) {
        e.scheduler.greenFlag().log(() => {
            e.out.test('after the flag').expect(e.log.last.stage.variable('done').value).toBe('1');
            e.out.test('one second later').acceptIf(e.log.timestamp() >= 1000 && e.log.timestamp() < 1100);
        }).end();
    }
    function afterExecution(e) {
        const flag = e.log.events.find(x => x.type === 'greenFlag');
        e.out.test('event spans the script').acceptIf(flag.next.timestamp - flag.previous.timestamp >= 1000);
        const say = e.log.events.find(x => x.type === 'say');
        e.out.test('say event').expect([say.data.sprite, say.data.text]).toBe(['Cat', 'ready']);
    }");
    all_correct(&r, 4);
}

#[test]
fn an_async_event_starts_the_next_at_once() {
    let r = run("function duringExecution(e) {
        e.scheduler.greenFlag(false).log(() => {
            e.out.test('not yet').expect(e.log.timestamp()).toBe(0);
        }).wait(1500).log(() => {
            e.out.test('done by now').expect(e.log.last.stage.variable('done').value).toBe('1');
        }).end();
    }");
    all_correct(&r, 2);
}

#[test]
fn parallel_branches_run_side_by_side_on_virtual_time() {
    let r = run("function duringExecution(e) {
        const seen = [];
        const s = e.scheduler;
        s.wait(600).log(() => seen.push(['slow', e.log.timestamp()]));
        s.wait(200).log(() => seen.push(['fast', e.log.timestamp()]));
        s.wait(1000).log(() => {
            e.out.test('order').expect(seen.map(x => x[0])).toBe(['fast', 'slow']);
            e.out.test('times').acceptIf(seen[0][1] >= 200 && seen[0][1] < 250 && seen[1][1] >= 600 && seen[1][1] < 650);
        }).end();
    }");
    all_correct(&r, 2);
}

#[test]
fn for_each_schedules_in_sequence_and_join_waits_for_the_first() {
    let r = run("function duringExecution(e) {
        let last = 0;
        const a = e.scheduler.wait(300);
        const b = e.scheduler.wait(900);
        e.scheduler.join([a, b]).log(() => {
            e.out.test('joined at the first').acceptIf(e.log.timestamp() >= 300 && e.log.timestamp() < 400);
        }).forEach([100, 100, 100], (ev, ms) => ev.wait(ms)).log(() => {
            e.out.test('three waits after').acceptIf(e.log.timestamp() >= 600 && e.log.timestamp() < 700);
        }).end();
    }");
    all_correct(&r, 2);
}

#[test]
fn a_timeout_with_as_test_is_a_wrong_test_then_the_plan_goes_on() {
    let r = run("function duringExecution(e) {
        e.actionTimeout = 1000;
        e.scheduler.clickSprite('Dog').asTest({correct: 'ok', wrong: 'the dog never stops'})
            .log(() => e.out.test('never reached').acceptIf(true)).end();
    }
    function afterExecution(e) {
        e.out.test('after the run').acceptIf(e.log.events.some(x => x.type === 'click'));
    }");
    assert_eq!(
        statuses(&r),
        [("Test 0".to_string(), "wrong".to_string()), ("after the run".to_string(), "correct".to_string())]
    );
    assert!((29..=32).contains(&r.steps), "stopped at the timeout: {} steps", r.steps);
}

#[test]
fn a_timeout_without_handler_ends_the_judgement_as_time_limit_exceeded() {
    let r = run("function duringExecution(e) {
        e.actionTimeout = 500;
        e.scheduler.log(() => e.out.test('before').acceptIf(true)).clickSprite('Dog').end();
    }
    function afterExecution(e) {
        e.out.test('ignored after the judgement closed').acceptIf(true);
    }");
    assert_eq!(statuses(&r), [("before".to_string(), "correct".to_string())]);
    assert_eq!(r.status, "time limit exceeded");
}

#[test]
fn wait_conditions_on_moves_broadcasts_and_delays() {
    let r = run("function duringExecution(e) {
        e.scheduler.clickSprite('Dog', false).wait(Itch.sprite('Dog').toMove()).log(() => {
            e.out.test('moved').acceptIf(e.log.last.sprite('Dog').x > 0);
        }).wait(Itch.sprite('Dog').toReach({x: 20, y: null})).log(() => {
            e.out.test('reached').acceptIf(e.log.timestamp() >= 600);
        }).clickSprite('Cat', false).wait(Itch.broadcast('ping')).log(() => {
            e.out.test('ping after half a second').acceptIf(e.log.timestamp() >= 1100);
        }).wait(Itch.delay(100)).end();
    }");
    all_correct(&r, 3);
}

#[test]
fn broadcasts_keys_and_answers_from_the_scheduler() {
    let r = run("function duringExecution(e) {
        e.answers = ['Ada'];
        e.scheduler.sendBroadcast('go').log(() => {
            e.out.test('say for waits').acceptIf(e.log.timestamp() >= 500);
        }).pressKey('a').log(() => {
            e.out.test('key moved the dog').expect(e.log.last.sprite('Dog').x).toBe(10);
        }).sendBroadcast('ask').end();
    }
    function afterExecution(e) {
        const answer = e.log.events.find(x => x.type === 'answer');
        e.out.test('answered').expect(answer.data.text).toBe('Ada');
        e.out.test('responses').expect(e.log.renderer.responses).toBe(['got it', 'name?', 'Ada']);
        const created = e.log.events.filter(x => x.type === 'renderer' && x.data.name === 'createTextSkin');
        const destroyed = e.log.events.filter(x => x.type === 'renderer' && x.data.name === 'destroySkin');
        e.out.test('bubble for half a second').acceptIf(destroyed[0].timestamp - created[0].timestamp >= 500);
    }");
    all_correct(&r, 5);
}

#[test]
fn a_question_without_answer_makes_the_judgement_wrong() {
    let r = run("function duringExecution(e) { e.scheduler.sendBroadcast('ask').end(); }");
    assert_eq!(r.status, "wrong");
    assert!(r.full["messages"].to_string().contains("no answer"), "{}", r.full);
}

#[test]
fn plan_errors_are_testplan_errors_with_their_place() {
    let r = run("function afterExecution(e) {\n  e.out.test('ok').acceptIf(true);\n  undefinedThing.x();\n}");
    assert_eq!(r.status, "testplan error");
    assert!(r.full.to_string().contains("plan.js:3"), "{}", r.full);
    let r = run("function duringExecution(e) { while (true) {} }");
    assert_eq!(r.status, "testplan error");
    assert!(r.full.to_string().contains("ticks"), "{}", r.full);
}

#[test]
fn fatal_tests_stop_the_plan() {
    let r = run("function beforeExecution(e) {
        e.out.test('first').fatal().acceptIf(false);
        e.out.test('never').acceptIf(true);
    }");
    assert_eq!(statuses(&r), [("first".to_string(), "wrong".to_string())]);
}

#[test]
fn block_patterns_any_none_choice_and_any_order() {
    let r = run("function beforeExecution(e) {
        const { script, greenFlag, whenIReceive, wait, setXtoY, say, anything, nothing, forever, changeXBy,
                moveXSteps, whenSpriteClicked, whenKeyPressed, checkBlocks, anyOrder } = B;
        const cat = e.log.submission.sprite('Cat');
        const flag = cat.findScript(greenFlag());
        e.out.test('exact').expect(flag).toMatch(greenFlag());
        e.out.test('script').expect(flag).toMatchSubtree(script(greenFlag(), wait(1), setXtoY('done', 1), say('ready')));
        e.out.test('anything').expect(flag).toMatchSubtree(script(greenFlag(), anything(), anything(), say(anything())));
        e.out.test('nothing ends it').expect(flag).toMatchSubtree(script(greenFlag(), anything(), anything(), anything(), nothing()));
        e.out.test('nothing is not a block').expect(flag).toMatchSubtree(script(greenFlag(), nothing()));
        e.out.test('wrong value').expect(flag).toMatchSubtree(script(greenFlag(), wait(2)));
        const dog = e.log.submission.sprite('Dog');
        const click = dog.findScript(whenSpriteClicked());
        e.out.test('choice').expect(click).toMatchSubtree(script(whenSpriteClicked(), forever([script(moveXSteps(1)), script(changeXBy(1))])));
        e.out.test('choice, none fits').expect(click).toMatchSubtree(script(whenSpriteClicked(), forever(script(moveXSteps(1)))));
        e.out.test('choice of values').expect(dog.findScript(whenKeyPressed(['b', 'a']))).toNotBe(undefined);
        const broadcasts = cat.findScript(whenIReceive('GO'));
        e.out.test('case-insensitive values').expect(broadcasts).toNotBe(undefined);
        e.out.group('in order', () => {
            checkBlocks(e, flag.next, [
                {name: 'wait', pattern: wait(1), feedback: {wrong: 'wait first'}},
                {name: 'set', pattern: setXtoY('done', 1), feedback: {wrong: 'then set'}},
            ]);
        });
        e.out.group('any order', () => {
            checkBlocks(e, flag.next, [anyOrder([
                {name: 'say', pattern: say('ready'), feedback: {wrong: 'say'}},
                {name: 'set', pattern: setXtoY('done', 1), feedback: {wrong: 'set'}},
                {name: 'wait', pattern: wait(1), feedback: {wrong: 'wait'}},
            ])]);
        });
        e.out.group('any order, one missing', () => {
            checkBlocks(e, flag.next, [anyOrder([
                {name: 'set', pattern: setXtoY('done', 1), feedback: {wrong: 'set'}},
                {name: 'hide', pattern: B.hide(), feedback: {wrong: 'no hide'}},
                {name: 'wait', pattern: wait(1), feedback: {wrong: 'wait'}},
            ])]);
        });
    }");
    let expected = [
        ("exact", "correct"),
        ("script", "correct"),
        ("anything", "correct"),
        ("nothing ends it", "correct"),
        ("nothing is not a block", "wrong"),
        ("wrong value", "wrong"),
        ("choice", "correct"),
        ("choice, none fits", "wrong"),
        ("choice of values", "correct"),
        ("case-insensitive values", "correct"),
        ("wait", "correct"),
        ("set", "correct"),
        ("wait", "correct"),
        ("set", "correct"),
        ("say", "correct"),
        ("wait", "correct"),
        ("set", "correct"),
        ("hide", "wrong"),
    ];
    let got = statuses(&r);
    let want: Vec<(String, String)> = expected.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
    assert_eq!(got, want);
}

#[test]
fn predefined_blocks_detect_changed_and_added_scripts() {
    let plan = "function beforeExecution(e) {
        Itch.checkPredefinedBlocks({ spriteConfig: { Owl: () => true } }, e);
    }";
    let same = project(false);
    let r = run_on(&same, &same, plan);
    assert_eq!(r.count("wrong"), 0, "{:?}", statuses(&r));
    assert_eq!(r.count("correct"), 12, "{:?}", statuses(&r));
    // The dog's key script got a second move: its scripts changed, the others did not.
    let r = run_on(&same, &project(true), plan);
    let wrong: Vec<(Vec<String>, String)> =
        r.tests.iter().filter(|t| t.status == "wrong").map(|t| (t.groups.clone(), t.name.clone())).collect();
    assert_eq!(wrong, [(vec!["Existing code".to_string(), "Dog".to_string()], "Existing scripts".to_string())]);
}

#[test]
fn pen_lines_and_shapes() {
    let r = run("function afterExecution(e) {
        const sq = [[0,0,100,0],[100,0,100,100],[100,100,0,100],[0,100,0,0]]
            .map(([a,b,c,d]) => ({start: {x: a, y: b}, end: {x: c, y: d}}));
        const split = [{start: {x: 0, y: 0}, end: {x: 50, y: 0}}, {start: {x: 50, y: 0}, end: {x: 100, y: 0}}];
        e.out.test('square').expect(Itch.findSquares(sq).length).toBe(1);
        e.out.test('no triangle').expect(Itch.findTriangles(sq).length).toBe(0);
        e.out.test('merged').expect(Itch.mergeLines(split)).toBe([{start: {x: 0, y: 0}, end: {x: 100, y: 0}}]);
        e.out.test('lodash').expect(_.range(0, 10, 5)).toBe([0, 5]);
    }");
    all_correct(&r, 4);
}

#[test]
fn the_same_run_gives_the_same_feedback() {
    let plan = "function duringExecution(e) {
        e.enableAdvancedProfiler();
        e.scheduler.greenFlag().clickSprite('Dog', false).wait(300).end();
    }
    function afterExecution(e) {
        e.out.test(`random ${Math.random()}`).acceptIf(e.log.snapshots.length > 3);
        e.out.test('blocks').acceptIf(e.log.events.some(x => x.type === 'block_execution' && x.data.block().opcode === 'control_wait'));
    }";
    let a = run(plan);
    let b = run(plan);
    assert_eq!(a.updates, b.updates);
    all_correct(&a, 2);
}

#[test]
fn block_executions_count_loop_iterations() {
    // The dog's forever loop has no wait: one iteration per step, as scratch-vm runs it; the
    // cat's script waits 1 s once (an event per step while it waits).
    let r = run("function duringExecution(e) {
        e.enableAdvancedProfiler();
        e.scheduler.greenFlag(false).clickSprite('Dog', false).wait(300).end();
    }
    function afterExecution(e) {
        const count = op => e.log.events.filter(x => x.type === 'block_execution' && x.data.block().opcode === op).length;
        e.out.test('forever').expect(count('control_forever')).toBe(9);
        e.out.test('body').expect(count('motion_changexby')).toBe(9);
        e.out.test('dog moved as often').expect(e.log.last.sprite('Dog').x).toBe(9);
        e.out.test('waiting').expect(count('control_wait')).toBe(9);
        e.out.test('only some sprites').acceptIf(e.log.events.filter(x => x.type === 'block_execution')
            .every(x => ['Cat', 'Dog'].includes(x.data.target)));
    }");
    all_correct(&r, 5);
}

#[test]
fn keys_ranges_variables_and_tracking() {
    let r = run("function duringExecution(e) {
        e.scheduler.track('Dog').startRange('keys').useKey('a', 100).log(() => {
            e.out.test('key held started its hat').expect(e.log.last.sprite('Dog').x).toBe(10);
        }).endRange('keys').setVariableTo('done', 'yes').log(() => {
            // The event's snapshot is taken before the change, as in Itch.
            e.out.test('variable not yet in the log').expect(e.log.last.stage.variable('done').value).toBe(0);
        }).useMouse({x: 50, y: -20}).wait(50).end();
    }
    function afterExecution(e) {
        e.out.test('variable set').expect(e.log.last.stage.variable('done').value).toBe('yes');
        const range = e.log.savedRange('keys');
        e.out.test('range spans the key').acceptIf(range.length >= 2 && range[range.length - 1].timestamp >= 100);
        e.out.test('tracked the move').acceptIf(e.log.events.some(x => x.type === 'target_update' && x.data.target === 'Dog'));
        const key = e.log.events.find(x => x.type === 'useKey');
        e.out.test('useKey event').acceptIf(key.next.timestamp - key.previous.timestamp >= 100);
        e.out.test('ids of originals are stable').expect(e.log.last.sprite('Dog').id).toBe(e.log.submission.sprite('Dog').id);
    }");
    all_correct(&r, 7);
}
