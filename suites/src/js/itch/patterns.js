// Block patterns (the `B` global: one function per Scratch block, `anything()`,
// `nothing()`, arrays as a choice, `script(...)`), matching them against block trees,
// `checkBlocks` with `anyOrder`, Itch's predefined-block check, and the pen geometry
// helpers (`mergeLines`, `findSquares`, `findTriangles`).
(function (P) {
    'use strict';

    const ANY = '__any_block_or_value_sentinel__';
    const NONE = '__never_block_or_value_sentinel__';

    class BlockScript {
        constructor(blockPatterns) {
            this.blockPatterns = blockPatterns;
        }
    }
    const script = (first, ...rest) => new BlockScript([first, ...rest]);
    const menu = (opcode, field, value) => script({opcode, fields: {[field]: value}});
    const cmd = (opcode, inputs, fields) => {
        const b = {opcode};
        if (inputs) {
            b.inputs = inputs;
        }
        if (fields) {
            b.fields = fields;
        }
        return b;
    };
    const rep = (type, opcode, inputs, fields) => ({type, ...cmd(opcode, inputs, fields)});
    const isReporter = b => b !== null && typeof b === 'object' && 'type' in b;

    // ------------------------------------------------------------------ matching
    const valueMatchesOne = (value, pattern) => {
        if (typeof pattern === 'function') {
            return Boolean(pattern(value));
        }
        if (pattern === ANY || pattern === NONE || value === undefined || value === null) {
            return pattern === ANY || ((value === undefined || value === null) && pattern === NONE);
        }
        if (isReporter(pattern)) {
            pattern = script(pattern);
        }
        if (pattern instanceof BlockScript) {
            return P.isNode(value) && subtreeMatchesOneScript(value, pattern);
        }
        if (P.isNode(value)) {
            return false;
        }
        return String(value).toLowerCase() === String(pattern).toLowerCase();
    };
    const valueMatches = (value, pattern) => (Array.isArray(pattern) ? pattern : [pattern])
        .some(p => valueMatchesOne(value, p));
    const matchesAll = (actual, patterns) => Object.entries(patterns)
        .every(([name, p]) => valueMatches(actual ? actual[name] : undefined, p));

    const nodeMatchesOne = (node, pattern) => {
        if (typeof pattern === 'function') {
            return Boolean(pattern(node));
        }
        if (node === null || node === undefined || pattern === NONE || pattern === ANY) {
            return pattern === ANY || ((node === null || node === undefined) && pattern === NONE);
        }
        if (pattern instanceof BlockScript) {
            return subtreeMatchesOneScript(node, pattern);
        }
        if (node.opcode !== pattern.opcode) {
            return false;
        }
        if (pattern.inputs && !matchesAll(node.inputs, pattern.inputs)) {
            return false;
        }
        if (pattern.fields && !matchesAll(node.fields, pattern.fields)) {
            return false;
        }
        if (pattern.mutation && !valueMatches(node.mutation, pattern.mutation)) {
            return false;
        }
        if (pattern.argumentList) {
            const args = node.arguments;
            if (!args || args.length !== pattern.argumentList.length) {
                return false;
            }
            return pattern.argumentList.every((p, i) => valueMatches(args[i], p));
        }
        return true;
    };
    /** A node against a pattern or a choice of patterns (an array); its next block is not looked at. */
    const nodeMatchesPattern = (node, pattern) => (Array.isArray(pattern) ? pattern : [pattern])
        .some(p => nodeMatchesOne(node, p));
    /** A node and the blocks after it against a script pattern, block by block. */
    const subtreeMatchesOneScript = (node, pattern) => {
        if (pattern === NONE) {
            return node === null || node === undefined;
        }
        if (pattern === ANY) {
            return true;
        }
        if (typeof pattern === 'function') {
            throw new Error('You cannot pass a function to a subtree match function.');
        }
        if (!(pattern instanceof BlockScript)) {
            pattern = script(pattern);
        }
        let current = node;
        for (const p of pattern.blockPatterns) {
            if (!nodeMatchesPattern(current, p)) {
                return false;
            }
            current = current ? current.next : undefined;
        }
        return true;
    };
    const subTreeMatchesScript = (node, pattern) => (Array.isArray(pattern) ? pattern : [pattern])
        .some(p => subtreeMatchesOneScript(node, p));

    // ------------------------------------------------------------------ checkBlocks / anyOrder
    class AnyOrder {
        constructor(list) {
            this.subScriptList = list;
        }
    }
    const anyOrder = list => new AnyOrder(list);

    const checkOne = (e, start, subtrees, ignoreWrong = false) => {
        let current = start;
        let wasCorrect = true;
        for (const sub of subtrees) {
            const pattern = sub.pattern instanceof BlockScript ? sub.pattern : script(sub.pattern);
            const body = () => {
                const ok = e.group.test(sub.name).feedback(sub.feedback).ignoreWrong(ignoreWrong)
                    .expect(current).toMatchSubtree(pattern);
                wasCorrect = wasCorrect && ok;
                const part = key => (current && current.inputs && current.inputs[key]) || current;
                if (sub.condition) {
                    checkBlocks(e, part('CONDITION'), sub.condition);
                }
                if (sub.substack) {
                    checkBlocks(e, part('SUBSTACK'), sub.substack);
                }
                if (sub.substack2) {
                    checkBlocks(e, part('SUBSTACK2'), sub.substack2);
                }
            };
            const grouped = sub.subgroup === undefined ? sub.substack : sub.subgroup;
            if (grouped) {
                e.group.group(typeof sub.subgroup === 'string' ? sub.subgroup : 'Lus', body);
            } else {
                body();
            }
            for (let i = 0; i < pattern.blockPatterns.length; i++) {
                current = current ? current.next : undefined;
            }
        }
        return {current, wasCorrect};
    };

    /**
     * Checks a script block by block with a test each; an `anyOrder([...])` element matches
     * its parts in any order (each part once), and reports the parts it could not place.
     */
    const checkBlocks = (e, start, list) => {
        let current = start;
        for (const element of list) {
            if (!(element instanceof AnyOrder)) {
                current = checkOne(e, current, [element]).current;
                continue;
            }
            const left = element.subScriptList.slice();
            for (let round = 0; round < element.subScriptList.length; round++) {
                for (let j = 0; j < left.length; j++) {
                    if (left[j] === null) {
                        continue;
                    }
                    const r = checkOne(e, current, [left[j]], true);
                    if (r.wasCorrect) {
                        current = r.current;
                        left[j] = null;
                        break;
                    }
                }
            }
            left.filter(x => x !== null).forEach(x => checkOne(e, null, [x], false));
        }
        return current;
    };

    // ------------------------------------------------------------------ the B patterns
    const B = {
        anything: () => ANY,
        nothing: () => NONE,
        script,
        stack: script,
        moveXSteps: steps => cmd('motion_movesteps', {STEPS: steps}),
        turnRightXDegrees: d => cmd('motion_turnright', {DEGREES: d}),
        turnLeftXDegrees: d => cmd('motion_turnleft', {DEGREES: d}),
        pointInDirection: d => cmd('motion_pointindirection', {DIRECTION: d}),
        pointTowards: t => cmd('motion_pointtowards', {TOWARDS: menu('motion_pointtowards_menu', 'TOWARDS', t)}),
        goToXY: (x, y) => cmd('motion_gotoxy', {X: x, Y: y}),
        goTo: t => cmd('motion_goto', {TO: menu('motion_goto_menu', 'TO', t)}),
        glideZSecsToXY: (secs, x, y) => cmd('motion_glidesecstoxy', {SECS: secs, X: x, Y: y}),
        glideZSecsToX: (secs, t) => cmd('motion_glideto', {SECS: secs, TO: menu('motion_glideto_menu', 'TO', t)}),
        changeXBy: v => cmd('motion_changexby', {DX: v}),
        changeYBy: v => cmd('motion_changeyby', {DY: v}),
        setXTo: v => cmd('motion_setx', {X: v}),
        setYTo: v => cmd('motion_sety', {Y: v}),
        ifOnEdgeBounce: () => cmd('motion_ifonedgebounce'),
        setRotationStyle: s => cmd('motion_setrotationstyle', undefined, {STYLE: s}),
        xPosition: () => rep('reporter', 'motion_xposition'),
        yPosition: () => rep('reporter', 'motion_yposition'),
        direction: () => rep('reporter', 'motion_direction'),
        sayForXSeconds: (m, s) => cmd('looks_sayforsecs', {MESSAGE: m, SECS: s}),
        say: m => cmd('looks_say', {MESSAGE: m}),
        thinkForXSeconds: (m, s) => cmd('looks_thinkforsecs', {MESSAGE: m, SECS: s}),
        think: m => cmd('looks_think', {MESSAGE: m}),
        show: () => cmd('looks_show'),
        hide: () => cmd('looks_hide'),
        switchCostumeTo: c => {
            if (isReporter(c) && c.opcode === 'data_variable') {
                return cmd('looks_switchcostumeto', {COSTUME: c.fields.VARIABLE});
            }
            if (isReporter(c) && (c.opcode.startsWith('operator_') || c.type === 'argument')) {
                return cmd('looks_switchcostumeto', {COSTUME: c});
            }
            return cmd('looks_switchcostumeto', {COSTUME: menu('looks_costume', 'COSTUME', c)});
        },
        switchBackdropTo: b => cmd('looks_switchbackdropto', {BACKDROP: menu('looks_backdrops', 'BACKDROP', b)}),
        switchBackdropToAndWait: b => cmd('looks_switchbackdroptoandwait',
            {BACKDROP: menu('looks_backdrops', 'BACKDROP', b)}),
        nextCostume: () => cmd('looks_nextcostume'),
        nextBackdrop: () => cmd('looks_nextbackdrop'),
        changeEffectBy: (effect, v) => cmd('looks_changeeffectby', {CHANGE: v}, {EFFECT: effect}),
        setEffectTo: (effect, v) => cmd('looks_seteffectto', {VALUE: v}, {EFFECT: effect}),
        transparent: () => 'GHOST',
        clearGraphicsEffects: () => cmd('looks_cleargraphiceffects'),
        changeSizeBy: v => cmd('looks_changesizeby', {CHANGE: v}),
        setSizeTo: v => cmd('looks_setsizeto', {SIZE: v}),
        goToLayer: l => cmd('looks_gotofrontback', undefined, {FRONT_BACK: l}),
        goLayers: (dir, n) => cmd('looks_goforwardbackwardlayers', {NUM: n}, {FORWARD_BACKWARD: dir}),
        costume: w => rep('reporter', 'looks_costumenumbername', undefined, {NUMBER_NAME: w}),
        backdrop: w => rep('reporter', 'looks_backdropnumbername', undefined, {NUMBER_NAME: w}),
        size: () => rep('reporter', 'looks_size'),
        playSound: s => cmd('sound_play', {SOUND_MENU: menu('sound_sounds_menu', 'SOUND_MENU', s)}),
        stopAllSounds: () => cmd('sound_stopallsounds'),
        customBlock: (opcode, inputs, fields) => ({opcode, inputs, fields}),
        greenFlag: () => cmd('event_whenflagclicked'),
        whenKeyPressed: k => cmd('event_whenkeypressed', undefined, {KEY_OPTION: k}),
        whenSpriteClicked: () => cmd('event_whenthisspriteclicked'),
        whenStageClicked: () => cmd('event_whenstageclicked'),
        whenBackdropSwitchedTo: b => cmd('event_whenbackdropswitchesto', undefined, {BACKDROP: b}),
        whenXGreaterThanY: (what, v) => cmd('event_whengreaterthan', {VALUE: v}, {WHENGREATERTHANMENU: what}),
        whenIReceive: b => cmd('event_whenbroadcastreceived', undefined, {BROADCAST_OPTION: b}),
        broadcast: n => cmd('event_broadcast', {BROADCAST_INPUT: n}),
        broadcastAndWait: n => cmd('event_broadcastandwait', {BROADCAST_INPUT: n}),
        whenIStartAsClone: () => cmd('control_start_as_clone'),
        wait: d => cmd('control_wait', {DURATION: d}),
        waitUntil: c => cmd('control_wait_until', {CONDITION: c}),
        createCloneOf: s => cmd('control_create_clone_of',
            {CLONE_OPTION: menu('control_create_clone_of_menu', 'CLONE_OPTION', s)}),
        repeat: (times, body) => cmd('control_repeat', {TIMES: times, SUBSTACK: body}),
        forever: body => cmd('control_forever', {SUBSTACK: body}),
        ifThen: (c, body) => cmd('control_if', {CONDITION: c, SUBSTACK: body}),
        ifThenElse: (c, a, b) => cmd('control_if_else', {CONDITION: c, SUBSTACK: a, SUBSTACK2: b}),
        repeatUntil: (c, body) => cmd('control_repeat_until', {CONDITION: c, SUBSTACK: body}),
        stop: w => cmd('control_stop', undefined, {STOP_OPTION: w}),
        deleteThisClone: () => cmd('control_delete_this_clone'),
        resetTimer: () => cmd('sensing_resettimer'),
        setDragMode: m => cmd('sensing_setdragmode', undefined, {DRAG_MODE: m}),
        askAndWait: q => cmd('sensing_askandwait', {QUESTION: q}),
        isTouching: o => rep('boolean', 'sensing_touchingobject',
            {TOUCHINGOBJECTMENU: menu('sensing_touchingobjectmenu', 'TOUCHINGOBJECTMENU', o)}),
        isTouchingColor: c => rep('boolean', 'sensing_touchingcolor', {COLOR: c}),
        colorIsTouching: (a, b) => rep('boolean', 'sensing_coloristouchingcolor', {COLOR: a, COLOR2: b}),
        isKeyPressed: k => rep('boolean', 'sensing_keypressed', {KEY_OPTION: menu('sensing_keyoptions', 'KEY_OPTION', k)}),
        isMouseDown: () => rep('boolean', 'sensing_mousedown'),
        distanceTo: w => rep('reporter', 'sensing_distanceto',
            {DISTANCETOMENU: menu('sensing_distancetomenu', 'DISTANCETOMENU', w)}),
        answer: () => rep('reporter', 'sensing_answer'),
        mouseX: () => rep('reporter', 'sensing_mousex'),
        mouseY: () => rep('reporter', 'sensing_mousey'),
        loudness: () => rep('reporter', 'sensing_loudness'),
        timer: () => rep('reporter', 'sensing_timer'),
        senseXOfY: (what, s) => rep('reporter', 'sensing_of', {OBJECT: menu('sensing_of_object_menu', 'OBJECT', s)},
            {PROPERTY: what}),
        currentX: w => rep('reporter', 'sensing_current', undefined, {CURRENTMENU: w}),
        daysSince2000: () => rep('reporter', 'sensing_dayssince2000'),
        username: () => rep('reporter', 'sensing_username'),
        isLessThan: (a, b) => rep('boolean', 'operator_lt', {OPERAND1: a, OPERAND2: b}),
        equals: (a, b) => rep('boolean', 'operator_equals', {OPERAND1: a, OPERAND2: b}),
        isGreaterThan: (a, b) => rep('boolean', 'operator_gt', {OPERAND1: a, OPERAND2: b}),
        and: (a, b) => rep('boolean', 'operator_and', {OPERAND1: a, OPERAND2: b}),
        or: (a, b) => rep('boolean', 'operator_or', {OPERAND1: a, OPERAND2: b}),
        not: a => rep('boolean', 'operator_not', {OPERAND: a}),
        contains: (h, n) => rep('boolean', 'operator_contains', {STRING1: h, STRING2: n}),
        add: (a, b) => rep('reporter', 'operator_add', {NUM1: a, NUM2: b}),
        subtract: (a, b) => rep('reporter', 'operator_subtract', {NUM1: a, NUM2: b}),
        multiply: (a, b) => rep('reporter', 'operator_multiply', {NUM1: a, NUM2: b}),
        divide: (a, b) => rep('reporter', 'operator_divide', {NUM1: a, NUM2: b}),
        pickRandom: (a, b) => rep('reporter', 'operator_random', {FROM: a, TO: b}),
        join: (a, b) => rep('reporter', 'operator_join', {STRING1: a, STRING2: b}),
        letterOf: (i, s) => rep('reporter', 'operator_letter_of', {LETTER: i, STRING: s}),
        lengthOf: s => rep('reporter', 'operator_length', {STRING: s}),
        mod: (a, b) => rep('reporter', 'operator_mod', {NUM1: a, NUM2: b}),
        round: n => rep('reporter', 'operator_round', {NUM: n}),
        operatorOf: (op, v) => rep('reporter', 'operator_mathop', {NUM: v}, {OPERATOR: op}),
        setXtoY: (v, value) => cmd('data_setvariableto', {VALUE: value}, {VARIABLE: v}),
        changeXbyY: (v, d) => cmd('data_changevariableby', {VALUE: d}, {VARIABLE: v}),
        showVariable: v => cmd('data_showvariable', undefined, {VARIABLE: v}),
        hideVariable: v => cmd('data_hidevariable', undefined, {VARIABLE: v}),
        variable: v => rep('reporter', 'data_variable', undefined, {VARIABLE: v}),
        addXtoList: (v, l) => cmd('data_addtolist', {ITEM: v}, {LIST: l}),
        deleteXfromList: (i, l) => cmd('data_deleteoflist', {INDEX: i}, {LIST: l}),
        deleteAllFromList: l => cmd('data_deletealloflist', undefined, {LIST: l}),
        insertAt: (v, at, l) => cmd('data_insertatlist', {ITEM: v, INDEX: at}, {LIST: l}),
        replaceInList: (i, l, v) => cmd('data_replaceitemoflist', {INDEX: i, ITEM: v}, {LIST: l}),
        showList: l => cmd('data_showlist', undefined, {LIST: l}),
        hideList: l => cmd('data_hidelist', undefined, {LIST: l}),
        list: l => rep('reporter', 'data_listcontents', undefined, {LIST: l}),
        itemOfList: (i, l) => rep('reporter', 'data_itemoflist', {INDEX: i}, {LIST: l}),
        lengthOfList: l => rep('reporter', 'data_lengthoflist', undefined, {LIST: l}),
        indexOf: (v, l) => rep('reporter', 'data_itemnumoflist', {ITEM: v}, {LIST: l}),
        listContains: (l, v) => rep('boolean', 'data_listcontainsitem', {ITEM: v}, {LIST: l}),
        procedureDefinition: m => cmd('procedures_definition',
            {custom_block: script({opcode: 'procedures_prototype', mutation: m})}),
        procedureCall: (...args) => ({opcode: 'procedures_call', argumentList: args}),
        stringNumberArgument: n => rep('argument', 'argument_reporter_string_number', undefined, {VALUE: n}),
        penEraseAll: () => cmd('pen_clear'),
        penUp: () => cmd('pen_penUp'),
        penDown: () => cmd('pen_penDown'),
        penSetColor: c => cmd('pen_setPenColorToColor', {COLOR: c}),
        nodeMatchesPattern,
        subTreeMatchesStack: subTreeMatchesScript,
        subTreeMatchesScript,
        checkBlocks,
        anyOrder
    };

    // ------------------------------------------------------------------ predefined blocks
    const walkNodes = (node, f) => {
        for (let n = node; n; n = n.next) {
            f(n);
            for (const key of ['SUBSTACK', 'SUBSTACK2']) {
                if (P.isNode(n.inputs[key])) {
                    walkNodes(n.inputs[key], f);
                }
            }
        }
    };

    /**
     * Itch's check that a submission keeps the template's scripts: per sprite, a fatal test
     * that it still exists, a test that every template script has an identical one (or, for
     * scripts its pattern or function accepts, one that the pattern accepts), optionally a
     * test of the blocks used, and a test that no other scripts were added.
     */
    const checkPredefinedBlocks = (userConfig, evaluation) => {
        const template = evaluation.log.template;
        const submission = evaluation.log.submission;
        const e = evaluation.out;
        const config = userConfig || {};
        const given = config.spriteConfig || {};
        const sprites = {};
        for (const target of template.targets) {
            let c = given[target.name];
            if (c === undefined) {
                sprites[target.name] = {pattern: () => false, allowedBlocks: undefined, allowAdditionalScripts: false};
                continue;
            }
            if (!(typeof c === 'object' && c !== null && Object.prototype.hasOwnProperty.call(c, 'pattern'))) {
                c = {pattern: c};
            }
            const p = c.pattern;
            sprites[target.name] = {
                pattern: typeof p === 'function' ? p : n => subTreeMatchesScript(n, p),
                allowedBlocks: c.allowedBlocks,
                allowAdditionalScripts: c.allowAdditionalScripts !== undefined ? c.allowAdditionalScripts
                    : Boolean(config.allowAdditionalScripts)
            };
        }
        const ignored = config.ignoredSprites || [];
        const T = P.translate;
        e.group(T('predefined.existing_code'), {visibility: 'summary', summary: T('predefined.no_changes')}, () => {
            for (const target of template.targets) {
                const name = target.name;
                if (ignored.includes(name)) {
                    continue;
                }
                const sc = sprites[name];
                e.group(name, {sprite: name, visibility: 'summary'}, () => {
                    const mine = submission.findTarget(name);
                    e.test(T('predefined.deleted.name')).fatal()
                        .feedback({wrong: T('predefined.deleted.wrong', name), correct: T('predefined.deleted.correct', name)})
                        .expect(mine).toNotBe(undefined);
                    const templateStacks = target.blockTreeList();
                    const submissionStacks = mine ? mine.blockTreeList() : [];
                    const seen = new Set();
                    let correct = Boolean(mine);
                    for (const stack of templateStacks) {
                        const filter = sc.pattern(stack) ? n => sc.pattern(n) : n => P.isEqual(n, stack);
                        const inSubmission = submissionStacks.filter(filter);
                        if (inSubmission.length >= templateStacks.filter(filter).length) {
                            inSubmission.forEach(n => seen.add(n));
                        } else {
                            correct = false;
                        }
                    }
                    e.test(T('predefined.existing.name'))
                        .feedback({wrong: T('predefined.existing.wrong', name), correct: T('predefined.existing.correct', name)})
                        .acceptIf(correct);
                    if (sc.allowedBlocks !== undefined && mine) {
                        const allowed = new Set(sc.allowedBlocks.map(b => b.opcode));
                        templateStacks.filter(n => sc.pattern(n)).forEach(s => walkNodes(s, n => allowed.add(n.opcode)));
                        const used = new Set();
                        submissionStacks.filter(n => sc.pattern(n)).forEach(s => walkNodes(s, n => used.add(n.opcode)));
                        const illegal = [...used].filter(o => !allowed.has(o));
                        e.test(T('predefined.allowed.name'))
                            .feedback({wrong: T('predefined.allowed.wrong', illegal.join(', ')),
                                correct: T('predefined.allowed.correct')})
                            .acceptIf(illegal.length === 0);
                    }
                    if (!sc.allowAdditionalScripts && correct) {
                        e.test(T('predefined.around.name'))
                            .feedback({wrong: T('predefined.around.wrong'), correct: T('predefined.around.correct')})
                            .expect(submissionStacks.filter(n => !seen.has(n)).length).toBe(0);
                    }
                });
            }
        });
    };

    // ------------------------------------------------------------------ pen geometry
    const distSq = (a, b) => (a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y);
    const near = (a, b) => Math.abs(a - b) < 0.01;
    const fixed4 = n => {
        const s = n.toFixed(4);
        return s === '-0.0000' ? '0.0000' : s;
    };
    const distinctPoints = ps => ps.filter((p, i) => ps.findIndex(q => near(q.x, p.x) && near(q.y, p.y)) === i);
    /** Joins segments that lie on one straight line (same slope and intercept, or same x). */
    const mergeLines = lines => {
        const groups = new Map();
        for (const l of lines) {
            const {start: a, end: b} = l;
            let key;
            if (a.x === b.x) {
                key = `v:${a.x}`;
            } else {
                const slope = (b.y - a.y) / (b.x - a.x);
                key = `s:${fixed4(slope)}:${fixed4(a.y - slope * a.x)}`;
            }
            if (!groups.has(key)) {
                groups.set(key, []);
            }
            groups.get(key).push(l);
        }
        // Sloped lines first, then vertical ones, each in order of first appearance.
        const keys = [...groups.keys()];
        const ordered = keys.filter(k => k.startsWith('s:')).concat(keys.filter(k => k.startsWith('v:')));
        return ordered.map(k => groups.get(k).reduce((line, l) => (distSq(line.start, l.end) > distSq(line.end, l.start)
            ? {start: line.start, end: l.end} : {start: l.start, end: line.end})));
    };
    const squareSides = (d1, d2, d3, p1, p2, p3) => {
        if (near(d1, d2) && near(2 * d1, d3) && near(2 * d1, distSq(p1, p2))) {
            const d = distSq(p1, p3);
            return near(d, distSq(p2, p3)) && near(d, d1);
        }
        return false;
    };
    const isSquare = ps => {
        if (ps.length !== 4) {
            return false;
        }
        const [a, b, c, d] = ps;
        const [ab, ac, ad] = [distSq(a, b), distSq(a, c), distSq(a, d)];
        return squareSides(ab, ac, ad, b, c, d) || squareSides(ac, ad, ab, c, d, b) || squareSides(ab, ad, ac, b, d, c);
    };
    const sideOf = ps => {
        let best = 0;
        for (const p of ps) {
            for (const q of ps) {
                const d = p === q ? 0 : distSq(p, q);
                if (d > 0 && (best === 0 || d < best)) {
                    best = d;
                }
            }
        }
        return Math.sqrt(best);
    };
    const combinations = (n, k, f) => {
        const idx = [];
        const rec = from => {
            if (idx.length === k) {
                f(idx.slice());
                return;
            }
            for (let i = from; i < n; i++) {
                idx.push(i);
                rec(i + 1);
                idx.pop();
            }
        };
        rec(0);
    };
    /** Squares formed by four merged lines (`false` with fewer than four lines). */
    const findSquares = lines => {
        if (lines.length < 4) {
            return false;
        }
        const merged = mergeLines(lines);
        if (merged.length > 200) {
            throw new RangeError('findSquares: too many lines');
        }
        const out = [];
        combinations(merged.length, 4, ix => {
            const ps = distinctPoints([].concat(...ix.map(i => [merged[i].start, merged[i].end])));
            if (isSquare(ps)) {
                out.push({points: ps, length: sideOf(ps)});
            }
        });
        return out;
    };
    /** Triangles formed by three merged lines: their six end points are three distinct points. */
    const findTriangles = lines => {
        if (lines.length < 3) {
            return false;
        }
        const merged = mergeLines(lines);
        if (merged.length > 400) {
            throw new RangeError('findTriangles: too many lines');
        }
        const out = [];
        combinations(merged.length, 3, ix => {
            const ps = distinctPoints([].concat(...ix.map(i => [merged[i].start, merged[i].end])));
            if (ps.length === 3) {
                out.push(ps);
            }
        });
        return out;
    };
    const angle = (p1, p2) => -((Math.atan2(p2.y - p1.y, p2.x - p1.x) * 180) / Math.PI - 90);

    Object.assign(P, {
        ANY, NONE, BlockScript, B, nodeMatchesPattern, subtreeMatchesOneScript, subTreeMatchesScript, checkBlocks,
        anyOrder, checkPredefinedBlocks, walkNodes, distSq, mergeLines, findSquares, findTriangles, angle
    });
})(globalThis.__itchParts);
