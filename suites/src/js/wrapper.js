// The run loop, inputs, random inputs and the test driver object (Whisker's vm-wrapper.js,
// inputs.js, random-input.js, test-driver.js and test-runner.js, reimplemented over the
// native bindings). Evaluated after driver.js.
(function (P) {
    'use strict';
    const N = P.N;

    // ------------------------------------------------------------------ inputs
    class Input {
        constructor(inputs, steps, data, name) {
            this._inputs = inputs;
            this._steps = steps;
            this._data = data;
            if (Object.prototype.hasOwnProperty.call(data, 'key')) {
                this._data.key = P.scratchKeyToKeyString(data.key);
            }
            this._active = false;
            this._state = null;
            this._stepsExecutedBefore = 0;
            this.name = name;
        }
        // An input acts once its start step is reached; one with `steps` (not a drag) is
        // undone (key up, mouse up, silence) that many steps later.
        _perform(executed) {
            if (executed >= this._steps - this._stepsExecutedBefore) {
                const data = this._convert(this._data);
                if (!this._state) {
                    this._performSingle(data);
                    if (data.steps && this._data.device !== 'drag') {
                        this._state = true;
                    } else {
                        return true;
                    }
                }
                if (this._state && executed >= data.steps + this._steps - this._stepsExecutedBefore) {
                    data.isDown = !data.isDown;
                    data.volume = -1;
                    this._performSingle(data);
                    return true;
                }
            }
            return false;
        }
        _performSingle(d) {
            switch (d.device) {
            case 'keyboard':
                if (d.isDown) {
                    N.keyDown(String(d.key));
                } else {
                    N.keyUp(String(d.key));
                }
                break;
            case 'mouse':
                this._inputs._postMouse(d);
                break;
            case 'text':
                N.answer(String(d.answer));
                break;
            case 'drag': {
                const h = typeof d.sprite === 'object' && d.sprite ? d.sprite._h : N.find(String(d.sprite));
                if (h !== undefined) {
                    N.setXY(h, Number(d.x), Number(d.y), false);
                }
                break;
            }
            case 'microphone':
                N.loudness(Number(d.volume));
                break;
            default:
                throw new Error(`Invalid device for input ${d.device}`);
            }
        }
        _convert(data) {
            const d = {...data};
            if (d.isDown === 'toggle') {
                d.isDown = d.device === 'mouse' ? !this._inputs.isMouseDown() : !this._inputs.isKeyDown(d.key);
            }
            if (d.device === 'mouse') {
                if (d.sprite) {
                    d.x = d.sprite.x;
                    d.y = d.sprite.y;
                } else {
                    const m = this._inputs.getMousePos();
                    if (!Object.prototype.hasOwnProperty.call(d, 'x')) {
                        d.x = m.x;
                    }
                    if (!Object.prototype.hasOwnProperty.call(d, 'y')) {
                        d.y = m.y;
                    }
                }
                d.x += d.xOffset || 0;
                d.y += d.yOffset || 0;
            } else if (d.device === 'drag') {
                if (!Object.prototype.hasOwnProperty.call(d, 'x')) {
                    d.x = d.sprite.x;
                }
                if (!Object.prototype.hasOwnProperty.call(d, 'y')) {
                    d.y = d.sprite.y;
                }
                d.x += d.xOffset || 0;
                d.y += d.yOffset || 0;
            }
            if (d.duration !== undefined && d.steps === undefined) {
                d.steps = this._inputs.w.convertFromTimeToSteps(d.duration);
            }
            if (d.steps < 1) {
                d.steps = 1;
            }
            return d;
        }
        _reset() {
            this._active = false;
            this._state = null;
            this._steps = 0;
            this._stepsExecutedBefore = 0;
        }
        isActive() {
            return this._active;
        }
    }

    class Inputs {
        constructor(w) {
            this.w = w;
            this.inputs = [];
        }
        _postMouse(d) {
            N.mouseMove(Number(d.x), Number(d.y));
            if (typeof d.isDown !== 'undefined') {
                const was = N.mouseDown();
                N.mouseButton(Boolean(d.isDown));
                // A press over the stage clicks what it lands on (scratch-vm Mouse.postData).
                if (!was && d.isDown) {
                    const m = N.mousePos();
                    if (Math.abs(m[0]) < 240 && Math.abs(m[1]) < 180) {
                        N.click(N.pick(m[0], m[1]));
                    }
                }
            }
        }
        performInputs() {
            const executed = this.w.getRunStepsExecuted();
            for (const input of [...this.inputs]) {
                if (input._perform(executed)) {
                    this.removeInput(input);
                }
            }
        }
        addInput(steps, data, name) {
            const input = new Input(this, steps, {...data}, name);
            input._active = true;
            this.inputs.push(input);
            return input;
        }
        addInputs(list) {
            for (const data of list) {
                if (data.time !== undefined && data.steps === undefined) {
                    data.steps = this.w.convertFromTimeToSteps(data.time);
                }
                this.addInput(data.steps, data.input);
            }
        }
        reAddInput(steps, input) {
            input._steps = steps;
            input._active = true;
            this.inputs.push(input);
            return input;
        }
        inputImmediate(dataOrInput, name) {
            const executed = this.w.isScratchRunning() ? this.w.getRunStepsExecuted() : 0;
            const input = dataOrInput instanceof Input ? dataOrInput
                : new Input(this, executed, {...dataOrInput}, name);
            input._active = true;
            if (input._perform(executed)) {
                input._reset();
            } else {
                this.inputs.push(input);
            }
            return input;
        }
        removeInput(input) {
            input._reset();
            const i = this.inputs.indexOf(input);
            if (i !== -1) {
                this.inputs.splice(i, 1);
            }
            return i !== -1;
        }
        clearInputs() {
            for (const input of this.inputs) {
                input._reset();
            }
            this.inputs = [];
        }
        resetMouse() {
            N.mouseMove(0, 0);
            N.mouseButton(false);
        }
        resetKeyboard() {
            N.releaseAllKeys();
        }
        updateInputs(executed) {
            for (const input of this.inputs) {
                input._stepsExecutedBefore += executed;
            }
        }
        getMousePos() {
            const m = N.mousePos();
            return {x: m[0], y: m[1]};
        }
        isMouseDown() {
            return N.mouseDown();
        }
        isKeyDown(key) {
            return N.isKeyDown(String(key));
        }
        clickStage() {
            N.click(N.stage());
        }
        clickSprite(spriteName) {
            const h = N.find(String(spriteName));
            if (h !== undefined) {
                N.click(h);
            }
        }
        clickClone(clone, steps = 1) {
            this.inputImmediate({device: 'mouse', x: clone.x, y: clone.y, isDown: true, steps});
        }
        clickCloneByCoords(x, y, steps = 1) {
            if (N.targets().some(h => N.num(h, 0) === x && N.num(h, 1) === y)) {
                this.inputImmediate({device: 'mouse', x, y, isDown: true, steps});
            }
        }
        dragSprite(spriteName, x, y, cloneID) {
            let h = N.find(String(spriteName));
            // As Whisker emse22 (the study's, the whisker-oracle's): unless `cloneID` is `null`,
            // the instance whose `cloneID` (the number of the sprite's live clones right after it
            // was made; the original's is null) is `cloneID` itself, so a call with three
            // arguments (`undefined`) moves nothing there. Whisker master moves the sprite then.
            if (h !== undefined && cloneID !== null) {
                h = N.instances(h).find(c => !N.isOriginal(c) && N.num(c, 7) === cloneID);
            }
            if (h !== undefined) {
                N.setXY(h, Number(x), Number(y), true);
            }
        }
        keyPress(key, steps) {
            this.inputImmediate({device: 'keyboard', key: P.scratchKeyToKeyString(key), isDown: true, steps});
        }
        keyRelease(key, steps) {
            this.inputImmediate({device: 'keyboard', key: P.scratchKeyToKeyString(key), isDown: false, steps});
        }
        mouseDown(value) {
            this.inputImmediate({device: 'mouse', isDown: value});
        }
        mouseDownForSteps(steps = 1) {
            this.inputImmediate({device: 'mouse', isDown: true, steps});
        }
        mouseMove(x, y, steps) {
            this.inputImmediate({device: 'mouse', x: Math.trunc(x), y: Math.trunc(y), steps});
        }
        typeText(answer) {
            this.inputImmediate({device: 'text', answer});
        }
        sendSound(volume, steps = 1) {
            this.inputImmediate({device: 'microphone', volume, steps});
        }
    }

    // ------------------------------------------------------------------ random inputs
    const randomInt = (min, max) => Math.floor(N.driverRandom() * (max - min) + min);
    const randomProp = p => {
        if (typeof p === 'number') {
            return p;
        }
        if (Array.isArray(p)) {
            if (p.length === 1) {
                return p[0];
            }
            if (p.length >= 2) {
                return randomInt(p[0], p[1]);
            }
        }
        return undefined;
    };
    class RandomInput {
        constructor(data) {
            this.data = data;
            this.weight = Object.prototype.hasOwnProperty.call(data, 'weight') ? data.weight : 1;
            this.input = null;
        }
        register(inputs) {
            const d = {...this.data};
            if (d.isDown === 'random') {
                d.isDown = N.driverRandom() >= 0.5; // Randomness.randomBoolean
            }
            for (const prop of ['duration', 'x', 'y', 'xOffset', 'yOffset', 'length']) {
                if (Object.prototype.hasOwnProperty.call(d, prop)) {
                    d[prop] = randomProp(d[prop]);
                }
            }
            if (d.device === 'text') {
                let answer = d.answer === undefined ? '' : d.answer;
                const length = d.length === undefined ? 0 : d.length;
                const chars = d.answer === undefined ? '0123456789abcdefghijklmnopqrstuvwxyzABCDDEFGHIJKLMNOPQRSTUVWXYZ'
                    : (d.chars || '');
                for (let i = 0; i < length; i++) {
                    answer += chars.charAt(randomInt(0, chars.length - 1));
                }
                d.answer = answer;
            }
            this.input = inputs.inputImmediate(d);
        }
        isActive() {
            return this.input !== null && this.input.isActive();
        }
    }
    class RandomInputs {
        constructor(w) {
            this.w = w;
            this.randomInputs = [];
            this.frequency = 100;
            this.lastInputTime = 0;
        }
        performRandomInput() {
            if (!this.randomInputs.length) {
                return;
            }
            const elapsed = this.w.getTotalTimeElapsed();
            if (elapsed < this.lastInputTime + this.frequency) {
                return;
            }
            const inactive = this.randomInputs.filter(r => !r.isActive());
            let sum = 0;
            for (const r of inactive) {
                sum += r.weight;
            }
            if (!inactive.length || !sum) {
                return;
            }
            let pick = N.driverRandom() * sum;
            for (const r of inactive) {
                if (r.weight > pick) {
                    this.lastInputTime = elapsed;
                    r.register(this.w.inputs);
                    return;
                }
                pick -= r.weight;
            }
        }
        registerRandomInputs(list) {
            this.randomInputs = this.randomInputs.concat(list.map(d => new RandomInput(d)));
        }
        clearRandomInputs() {
            this.randomInputs = [];
        }
        setRandomInputInterval(frequency) {
            this.frequency = frequency;
        }
        detectRandomInputs(props) {
            props = props === undefined ? {} : props;
            if (!Object.prototype.hasOwnProperty.call(props, 'duration')) {
                props.duration = [0, 2 * this.frequency];
            }
            if (!Object.prototype.hasOwnProperty.call(props, 'xOffset')) {
                props.xOffset = [-50, 50];
            }
            if (!Object.prototype.hasOwnProperty.call(props, 'yOffset')) {
                props.yOffset = [-50, 50];
            }
            const anywhere = {x: [-P.STAGE.width / 2, P.STAGE.width / 2], y: [-P.STAGE.height / 2, P.STAGE.height / 2]};
            const sprites = this.w.sprites;
            // [target, opcode, value]: the detection hints of each block (suites/src/native.rs).
            const hints = N.inputHints();
            for (let i = 0; i + 2 < hints.length; i += 3) {
                const [h, opcode, value] = [hints[i], hints[i + 1], hints[i + 2]];
                const onStage = h === N.stage();
                switch (opcode) {
                case 'key':
                    this.registerRandomInputs([{device: 'keyboard', key: value, duration: props.duration}]);
                    break;
                case 'mouse':
                    this.registerRandomInputs([{device: 'mouse', ...anywhere}]);
                    break;
                case 'click':
                    this.registerRandomInputs([onStage
                        ? {device: 'mouse', isDown: 'toggle', ...anywhere, duration: props.duration}
                        : {device: 'mouse', isDown: 'toggle', sprite: sprites.wrap(h), xOffset: props.xOffset,
                            yOffset: props.yOffset, duration: props.duration}]);
                    break;
                case 'stageClick':
                    this.registerRandomInputs([{device: 'mouse', isDown: 'toggle', ...anywhere, duration: props.duration}]);
                    break;
                case 'mouseDown':
                    this.registerRandomInputs([{device: 'mouse', isDown: 'toggle', duration: props.duration}]);
                    break;
                case 'touchMouse':
                    this.registerRandomInputs([onStage ? {device: 'mouse', ...anywhere}
                        : {device: 'mouse', sprite: sprites.wrap(h), xOffset: props.xOffset, yOffset: props.yOffset}]);
                    break;
                case 'ask':
                    this.registerRandomInputs([{device: 'text', length: [1, 3]}]);
                    break;
                case 'answer':
                    this.registerRandomInputs([{device: 'text', answer: value}]);
                    break;
                default:
                    break;
                }
            }
        }
    }

    // ------------------------------------------------------------------ the VM wrapper
    const FAIL = 'fail';
    const STOP = 'stop';
    class VMWrapper {
        constructor(result) {
            this.result = result;
            this.sprites = new P.Sprites(this);
            this.callbacks = new P.Callbacks();
            this.inputs = new Inputs(this);
            this.randomInputs = new RandomInputs(this);
            this.constraints = new P.Constraints();
            this.actionOnConstraintFailure = FAIL;
            this.stepsExecuted = 0;
            this.runStartStepsExecuted = 0;
            this._scratchRunning = false;
            this._projectRunning = false;
            // The study's acceleration (the whisker profile's): Whisker's step time is
            // `1000 / 30 / acceleration` and its elapsed times multiply it back, so the values
            // tests read carry that rounding (`runForTime(1000)` gives 1000, `runForSteps(7)`
            // 7.000000000000001, as in the real Whisker: WhiskerProbe.js).
            this.accelerationFactor = P.ACCELERATION;
            this.stepTime = P.STEP_MS / P.ACCELERATION;
        }
        // What the real Whisker's one VMWrapper of a file keeps from a test to the next (it
        // is made once per project; `start()` clears inputs, callbacks, constraints and
        // sprite wrappers only): the total step count behind `getTotalStepsExecuted` and
        // `getTotalTimeElapsed`, the constraint-failure action, and the registered random
        // inputs with their interval and last time.
        carry() {
            const r = this.randomInputs;
            return {stepsExecuted: this.stepsExecuted, runStartStepsExecuted: this.runStartStepsExecuted,
                actionOnConstraintFailure: this.actionOnConstraintFailure,
                randomInputs: r.randomInputs.map(x => x.data), frequency: r.frequency,
                lastInputTime: r.lastInputTime};
        }
        takeOver(c) {
            if (!c || typeof c !== 'object') {
                return;
            }
            this.stepsExecuted = Number(c.stepsExecuted) || 0;
            this.runStartStepsExecuted = Number(c.runStartStepsExecuted) || 0;
            this.actionOnConstraintFailure = c.actionOnConstraintFailure === undefined ? FAIL
                : String(c.actionOnConstraintFailure);
            const r = this.randomInputs;
            r.randomInputs = Array.isArray(c.randomInputs) ? c.randomInputs.map(d => new RandomInput(d)) : [];
            r.frequency = typeof c.frequency === 'number' ? c.frequency : 100;
            r.lastInputTime = Number(c.lastInputTime) || 0;
        }
        onConstraintFailure(action) {
            if (action) {
                this.actionOnConstraintFailure = action;
            }
            return this.actionOnConstraintFailure;
        }
        // One step, in Whisker's order; `await null` between the parts lets other promises of
        // the test run in between, as Whisker's `_yield` does.
        async step() {
            this.callbacks.callCallbacks(false);
            await null;
            if (!this._scratchRunning) {
                return null;
            }
            this.randomInputs.performRandomInput();
            this.inputs.performInputs();
            await null;
            this.sprites.update();
            const code = N.step();
            if (code === 2) {
                this._scratchRunning = false;
                throw new P.StepLimitError(N.stepLimit());
            }
            const threads = N.threads();
            if (!this._projectRunning && threads > 0) {
                this._projectRunning = true;
            } else if (this._projectRunning && threads === 0) {
                this._projectRunning = false;
            }
            this.sprites.dispatch();
            await null;
            if (!this._scratchRunning) {
                return null;
            }
            this.callbacks.callCallbacks(true);
            await null;
            if (!this._scratchRunning) {
                return null;
            }
            const error = this.constraints.checkConstraints();
            P.fireDueTimers();
            return error;
        }
        async run(condition, timeout, steps) {
            if (this._scratchRunning) {
                throw new Error('Warning: A run was started while another run was still going! Make sure you are not ' +
                    'missing any await-statements in your test.');
            }
            condition = condition || (() => false);
            if (typeof condition !== 'function') {
                throw new TypeError('The condition of a run must be a function');
            }
            if (timeout !== undefined && steps === undefined) {
                steps = this.convertFromTimeToSteps(timeout);
            }
            steps = steps === undefined ? Infinity : steps;
            this._scratchRunning = true;
            this.runStartStepsExecuted = this.stepsExecuted;
            let constraintError = null;
            try {
                while (this._scratchRunning && this.getRunStepsExecuted() < steps && !condition()) {
                    const before = N.steps();
                    constraintError = await this.step();
                    this.stepsExecuted += N.steps() - before;
                    if (constraintError && (this.actionOnConstraintFailure === FAIL ||
                        this.actionOnConstraintFailure === STOP)) {
                        break;
                    }
                }
            } finally {
                this._scratchRunning = false;
            }
            this.inputs.updateInputs(this.getRunStepsExecuted());
            if (constraintError && this.actionOnConstraintFailure === FAIL) {
                throw constraintError;
            }
            return this.getRunTimeElapsed();
        }
        async runForTime(time) {
            return this.run(undefined, time);
        }
        async runUntil(condition, timeout) {
            return this.run(condition, timeout);
        }
        async runUntilChanges(callback, timeout) {
            const initial = callback();
            return this.run(() => callback() !== initial, timeout);
        }
        async runForSteps(steps) {
            return this.convertFromTimeToSteps(await this.run(undefined, undefined, steps));
        }
        cancelScratchRun() {
            this._scratchRunning = false;
        }
        getCurrentStepTime() {
            return P.STEP_MS;
        }
        getTotalTimeElapsed() {
            return this.stepsExecuted * this.stepTime * this.accelerationFactor;
        }
        getRunTimeElapsed() {
            return this.getRunStepsExecuted() * this.stepTime * this.accelerationFactor;
        }
        getTotalStepsExecuted() {
            return this.stepsExecuted;
        }
        getRunStepsExecuted() {
            return this.stepsExecuted - this.runStartStepsExecuted;
        }
        convertFromTimeToSteps(ms) {
            return ms / (this.stepTime * this.accelerationFactor);
        }
        isScratchRunning() {
            return this._scratchRunning;
        }
        isWhiskerRunning() {
            return this._projectRunning;
        }
        greenFlag() {
            N.greenFlag();
            // Whisker's listeners hear the green flag inside this call, not after the next step.
            N.collectEvents();
            this.sprites.dispatch();
        }
        // Whisker's start(): every test begins with the green flag clicked and no step run.
        start() {
            this.inputs.resetMouse();
            this.inputs.resetKeyboard();
            N.greenFlag();
            N.dropEvents();
        }
        end() {
            this.cancelScratchRun();
            N.stopAll();
            this.sprites.onSpriteMoved(null);
            this.sprites.onSpriteVisualChange(null);
            this.sprites.onSayOrThink(null);
            this.sprites.onVariableChange(null);
            N.endStep();
            this._projectRunning = false;
            this.inputs.resetMouse();
            this.inputs.resetKeyboard();
        }
        getStageSize() {
            return {width: P.STAGE.width, height: P.STAGE.height};
        }
        getGlobalVariable(name) {
            return this.sprites.getSpriteVariable('Stage', name);
        }
        setGlobalVariable(name, value) {
            return this.sprites.setSpriteVariable('Stage', name, value);
        }
        getAnswer() {
            return N.answerValue();
        }
        isQuestionAsked() {
            return N.questionPending();
        }
    }

    // ------------------------------------------------------------------ the test driver
    // The methods test-driver.js binds (emse22 and master), plus `wait` (bound until
    // December 2021; the example suites call it) and the runner's extensions `assert`,
    // `assume` and `log`.
    const makeDriver = (w, result) => {
        const t = {};
        const bind = (obj, names) => {
            for (const n of names) {
                t[n] = obj[n].bind(obj);
            }
        };
        bind(w, ['greenFlag', 'end', 'getStageSize', 'getGlobalVariable', 'getAnswer', 'isQuestionAsked',
            'setGlobalVariable', 'run', 'runForTime', 'runUntil', 'runUntilChanges', 'runForSteps',
            'cancelScratchRun', 'onConstraintFailure', 'getTotalTimeElapsed', 'getRunTimeElapsed',
            'getTotalStepsExecuted', 'getRunStepsExecuted', 'isScratchRunning', 'isWhiskerRunning']);
        t.cancelRun = t.cancelScratchRun;
        t.isRunning = t.isScratchRunning;
        t.isProjectRunning = t.isWhiskerRunning;
        bind(w.inputs, ['clickStage', 'clickSprite', 'clickClone', 'clickCloneByCoords', 'dragSprite', 'keyPress',
            'keyRelease', 'mouseDown', 'mouseDownForSteps', 'mouseMove', 'typeText', 'sendSound', 'getMousePos',
            'isMouseDown', 'isKeyDown', 'addInput', 'addInputs', 'reAddInput', 'inputImmediate', 'removeInput',
            'clearInputs', 'resetMouse', 'resetKeyboard']);
        bind(w.sprites, ['getSprites', 'getSpritesAtPoint', 'getSpriteAtPoint', 'getSprite', 'getStage',
            'getNewSprites', 'getRotationStyle', 'getSpriteVariable', 'onSpriteMoved', 'onSpriteVisualChange',
            'onSayOrThink', 'onVariableChange', 'setVisibility', 'setSpriteVariable']);
        bind(w.randomInputs, ['registerRandomInputs', 'clearRandomInputs', 'setRandomInputInterval',
            'detectRandomInputs']);
        bind(w.constraints, ['addConstraint', 'reAddConstraint', 'removeConstraint', 'clearConstraints']);
        bind(w.callbacks, ['addCallback', 'reAddCallback', 'removeCallback', 'clearCallbacks']);
        // Whisker's convertSeed keeps a number as it is and converts text (seeding.rs).
        t.seedScratch = seed => typeof seed === 'number' ? N.seedScratchNumber(seed) : N.seedScratch(String(seed));
        t.getTotalRealTimeElapsed = () => t.getTotalTimeElapsed() / w.accelerationFactor;
        t.getRealRunTimeElapsed = () => t.getRunTimeElapsed() / w.accelerationFactor;
        t.getAccelerationFactor = () => w.accelerationFactor;
        t.isCoverageEnabled = () => false;
        t.getCoverage = () => ({});
        t.assert = P.assert;
        t.assume = P.assume;
        t.log = message => {
            result.log.push(typeof message === 'string' ? message : P.inspect(message));
        };
        P.setNoteSink(note => result.log.push(note));
        // A method Whisker's driver does not have is named, not a bare "undefined is not a function".
        return new Proxy(t, {
            get(target, prop, receiver) {
                if (typeof prop === 'string' && !(prop in target) && prop !== 'then' && prop !== 'toJSON') {
                    throw new TypeError(`t.${prop} is not a method of the Whisker test driver`);
                }
                return Reflect.get(target, prop, receiver);
            }
        });
    };

    // ------------------------------------------------------------------ the runner's side
    const errorInfo = e => {
        if (e === null || typeof e !== 'object') {
            return {name: 'Error', message: `thrown value: ${P.inspect(e)}`};
        }
        const info = {name: String(e.name || 'Error'), message: String(e.message === undefined ? '' : e.message)};
        if ('actual' in e) {
            info.actual = P.inspect(e.actual);
        }
        if ('expected' in e) {
            info.expected = P.inspect(e.expected);
        }
        if ('operator' in e && e.operator !== undefined) {
            info.operator = String(e.operator);
        }
        if (e.constraint !== undefined) {
            info.constraint = String(e.constraint);
        }
        if (typeof e.stack === 'string' && !('actual' in e)) {
            info.stack = e.stack;
        }
        return info;
    };

    const classify = e => {
        if (e instanceof P.StepLimitError || (e && e.name === 'StepLimit')) {
            return 'timeout';
        }
        if (e && e.message === 'Timeout') {
            return 'fail';
        }
        if (P.isAssertion(e)) {
            return 'fail';
        }
        if (P.isAssumption(e)) {
            return 'skip';
        }
        return 'error';
    };

    /**
     * A test as the real Whisker's page gets it from its servant (emse22 `servant.js`,
     * `prepareTestFiles`): the servant evaluates the file, writes each test object back as
     * JSON (functions dropped) with `test` set to its function's name, unquotes the first
     * `"name"`, `"description"`, `"categories"` and `"test"`, then the first `"<that name>"`,
     * and the page evaluates the file again with this array. Usually that gives the test
     * back; but when the test's name (or description) is also its function's name, that is
     * what gets unquoted: the name becomes the function and `test` the string, which Whisker
     * then reports as an error. `scope` evaluates source in the suite's top-level scope
     * (CommonJS files; undefined for ES modules, which the servant cannot load at all).
     * Returns [the test, a note or null]: a test whose rewritten form would not load in
     * Whisker (an inline function's inferred name `test`, which no binding has) is kept as
     * written, with a note the runner shows once per suite (`TestInfo::note`).
     */
    const servantForm = (x, scope) => {
        if (typeof scope !== 'function' || typeof x === 'function') {
            return [x, null];
        }
        const fname = x.test.name;
        try {
            const desc = JSON.parse(JSON.stringify(x));
            desc.test = fname;
            const text = JSON.stringify(desc, null, 2)
                .replace('"name"', 'name')
                .replace('"description"', 'description')
                .replace('"categories"', 'categories')
                .replace('"test"', 'test')
                .replace(`"${fname}"`, `${fname}`);
            return [scope(`(${text}\n)`), null];
        } catch (e) {
            return [x, `the real Whisker's servant cannot load this file: it writes each test back as ` +
                `{test: ${fname}, ...} and evaluates that again (${e && e.message}); here the tests run as written`];
        }
    };

    /** The tests a suite exports (`module.exports = [...]` or `export default [...]`). */
    const load = (exported, scope) => {
        if (!Array.isArray(exported)) {
            throw new TypeError('the suite must export an array of tests (module.exports = [...])');
        }
        return exported.map((x, i) => {
            if (x === null || (typeof x !== 'object' && typeof x !== 'function')
                || (typeof x === 'object' && typeof x.test !== 'function')) {
                throw new TypeError(`test ${i + 1} of the suite has no test function`);
            }
            const [form, note] = servantForm(x, scope);
            const props = typeof form === 'function' ? {test: form, name: form.name} : form;
            return {
                note,
                test: props.test,
                name: props.name === undefined || props.name === null ? '' : String(props.name),
                description: props.description === undefined || props.description === null ? ''
                    : String(props.description),
                categories: Array.isArray(props.categories) ? props.categories.map(String) : [],
                skip: Boolean(props.skip),
                timeout: typeof props.timeout === 'number' ? props.timeout : null
            };
        });
    };

    // Whisker's console output goes to the browser's console, not into its results: here
    // to nowhere.
    globalThis.console = {log() {}, info() {}, warn() {}, error() {}, debug() {}, trace() {}};

    globalThis.__clowderRunner = {
        load,
        /** What the runner needs to know of each test. */
        describe(tests) {
            return JSON.stringify(tests.map(t => ({name: t.name, description: t.description,
                categories: t.categories, skip: t.skip, timeout: t.timeout, note: t.note})));
        },
        /** Starts test `index` of `tests`; the runner drives the returned promise to its end. */
        start(tests, index, carried) {
            const test = tests[index];
            P.resetTime();
            const result = {status: null, error: null, log: []};
            const w = new VMWrapper(result);
            w.takeOver(carried);
            w.start();
            const t = makeDriver(w, result);
            const done = (async () => {
                try {
                    if (typeof test.test !== 'function') {
                        // The servant's rewrite made `test` a string (servantForm): V8's words.
                        throw new TypeError('test.test is not a function');
                    }
                    await test.test(t);
                    result.status = 'pass';
                } catch (e) {
                    result.status = classify(e);
                    result.error = errorInfo(e);
                }
                result.steps = N.steps();
                w.end();
                result.carry = w.carry();
                return result;
            })();
            return done;
        },
        /** Fires the earliest virtual timer; false when none is left. */
        fireNextTimer() {
            const all = P.timers();
            if (!all.length) {
                return false;
            }
            P.fireTimer(all[0]);
            return true;
        },
        clearTimers() {
            for (const x of [...P.timers()]) {
                clearTimeout(x.id);
            }
        },
        errorInfo
    };
})(globalThis.__clowderParts);
