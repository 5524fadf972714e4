// Sprite, variable and sprite-list objects of the driver (Whisker's vm/sprite.js,
// vm/variable.js, vm/sprites.js) over the native bindings, and the events of a step
// delivered to their callbacks. Evaluated after driver.js.
(function (P) {
    'use strict';
    const N = P.N;
    const STAGE = P.STAGE;

    // ------------------------------------------------------------------ variables and sprites
    class Variable {
        constructor(owner, name, isList, sprite) {
            this._owner = owner;
            this._name = name;
            this._isList = isList;
            this._sprite = sprite;
            this._old = {};
            this._last = isList ? [] : '';
            this.updateOld();
        }
        get name() {
            return this._name;
        }
        _raw() {
            const v = this._isList ? N.listItems(this._owner, this._name) : N.varValue(this._owner, this._name);
            if (v !== undefined) {
                this._last = v;
            }
            return this._last;
        }
        // As the VM holds it (a number stays a number), a list as a copy of its items: Whisker
        // `emse22`'s Variable, the study's and the whisker-oracle's (master stringifies; checked
        // in the real Whisker: WhiskerProbe.js, `variable types`).
        get value() {
            const v = this._raw();
            return this._isList ? v.slice() : v;
        }
        get valueAsNumber() {
            const v = this._raw();
            return this._isList ? v.map(x => Number(x)) : Number(v);
        }
        get old() {
            return {...this._old};
        }
        get sprite() {
            return this._sprite;
        }
        getScratchVariable() {
            const self = this;
            return {
                get name() {
                    return self._name;
                },
                get value() {
                    return self._raw();
                },
                set value(v) {
                    setVar(self._owner, self._name, v);
                },
                type: this._isList ? 'list' : ''
            };
        }
        updateOld() {
            this._old.value = this.value;
        }
        setOldValue(value) {
            this._old.value = value;
        }
    }

    /** Sets a scalar variable: numbers stay numbers, anything else becomes its string. */
    const setVar = (h, name, v) => (typeof v === 'number' ? N.setVar(h, name, true, v, '')
        : N.setVar(h, name, false, 0, String(v)));

    const NUM = {x: 0, y: 1, direction: 2, size: 3, costume: 4, volume: 5, layer: 6};
    const EFFECTS = ['color', 'fisheye', 'whirl', 'pixelate', 'mosaic', 'brightness', 'ghost'];

    /** A stand-in for the renderer's SVG skins: `resetMIPs` drops the MIPs of all of them. */
    const MIP_RESET = {_svgImageLoaded: true, resetMIPs: () => N.resetMips()};
    /** A stand-in for the runtime's targets: `blocks.resetCache` empties the one block cache. */
    const CACHE_RESET = {blocks: {resetCache: () => N.resetBlockCache()}};

    // The part of scratch-vm's `RenderedTarget` that a Whisker test reaches through a
    // wrapper's `_target`: the getters and the setters that hand a value to the renderer
    // (which Whisker's reset between tests does not; clowder's exported suites call them).
    class ScratchTarget {
        constructor(h) {
            this._h = h;
        }
        get x() { return N.num(this._h, NUM.x); }
        get y() { return N.num(this._h, NUM.y); }
        get direction() { return N.num(this._h, NUM.direction); }
        // A field assignment (the restore's): not wrapped, not handed to the renderer.
        set direction(d) { N.assignDirection(this._h, Number(d)); }
        get size() { return N.num(this._h, NUM.size); }
        get currentCostume() { return N.num(this._h, NUM.costume); }
        get visible() { return N.visible(this._h); }
        get isStage() { return N.isStage(this._h); }
        get isOriginal() { return N.isOriginal(this._h); }
        get effects() {
            const e = N.effects(this._h) || [];
            const out = {};
            EFFECTS.forEach((k, i) => {
                out[k] = e[i];
            });
            return out;
        }
        get runtime() {
            // What exported suites use of scratch-vm's runtime: the stage, the renderer's
            // skins to drop their MIPs (one stand-in skin drops every skin's, as all of
            // Whisker's together would), and the targets' block caches to empty (likewise).
            return {
                getTargetForStage: () => new ScratchTarget(N.stage()),
                renderer: {_allSkins: [MIP_RESET], _allDrawables: []},
                targets: [CACHE_RESET],
            };
        }
        getName() { return N.name(this._h); }
        goToFront() { N.goFrontBack(this._h, true); }
        goToBack() { N.goFrontBack(this._h, false); }
        setXY(x, y, force) { N.setXY(this._h, Number(x), Number(y), Boolean(force)); }
        setCostume(i) { N.setCostume(this._h, Number(i)); }
        setDirection(d) { N.setDirection(this._h, Number(d)); }
        setSize(v) { N.setSize(this._h, Number(v)); }
        setVisible(v) { N.setVisible(this._h, Boolean(v)); }
        updateAllDrawableProperties() { N.updateAllDrawableProperties(this._h); }
        setEffect(name, v) {
            const i = EFFECTS.indexOf(String(name));
            if (i >= 0) {
                N.setEffect(this._h, i, Number(v));
            }
        }
    }

    class Sprite {
        constructor(h, sprites) {
            this._h = h;
            this._sprites = sprites;
            this._old = {};
            this._variables = new Map();
            this._last = {};
            this.onMoved = null;
            this.onVisualChange = null;
            this._name = N.name(h);
            this._isStage = N.isStage(h);
            this._isOriginal = N.isOriginal(h);
        }
        _num(k) {
            const v = N.num(this._h, NUM[k]);
            if (v !== undefined) {
                this._last[k] = v;
                return v;
            }
            return this._last[k];
        }
        get exists() {
            return N.exists(this._h);
        }
        get _target() {
            return N.exists(this._h) ? new ScratchTarget(this._h) : undefined;
        }
        get old() {
            return {...this._old};
        }
        get isOriginal() {
            return this._isOriginal;
        }
        get isStage() {
            return this._isStage;
        }
        get name() {
            return this._name;
        }
        get id() {
            return `t${this._h}`;
        }
        get effects() {
            const e = N.effects(this._h);
            if (e === undefined) {
                return {...this._last.effects};
            }
            const out = {};
            EFFECTS.forEach((k, i) => {
                out[k] = e[i];
            });
            this._last.effects = out;
            return {...out};
        }
        get x() {
            return this._num('x');
        }
        get y() {
            return this._num('y');
        }
        get pos() {
            return {x: this.x, y: this.y};
        }
        get direction() {
            return this._num('direction');
        }
        get visible() {
            const v = N.visible(this._h);
            if (v !== undefined) {
                this._last.visible = v;
                return v;
            }
            return this._last.visible;
        }
        get size() {
            return Math.round(this._num('size'));
        }
        get currentCostume() {
            return this._num('costume');
        }
        get currentCostumeName() {
            return N.costumeName(this._h, this.currentCostume);
        }
        get volume() {
            return this._num('volume');
        }
        get layerOrder() {
            return this._num('layer');
        }
        get sayText() {
            const shown = this._sprites._bubbleShown;
            if (shown && shown.h === this._h) {
                return shown.text;
            }
            const v = N.sayText(this._h);
            if (v !== undefined) {
                this._last.sayText = v;
                return v;
            }
            // A deleted clone: looks' `_onTargetWillExit` (on `targetWasRemoved`) gave it a
            // bubble state if it had none, so Whisker reads its last text or "", never null.
            return this._last.sayText == null ? '' : this._last.sayText;
        }
        get rotationStyle() {
            return N.rotationStyle(this._h);
        }
        get bounds() {
            const b = N.bounds(this._h);
            if (!b) {
                return {left: this.x, right: this.x, top: this.y, bottom: this.y};
            }
            return {left: b[0], right: b[1], top: b[2], bottom: b[3]};
        }
        isPointInBounds(x, y) {
            const b = this.bounds;
            return x >= b.left && x <= b.right && y >= b.bottom && y <= b.top;
        }
        isIntersectingBounds(o) {
            const b = this.bounds;
            return b.left <= o.right && b.right >= o.left && b.top >= o.bottom && b.bottom <= o.top;
        }
        isTouchingMouse() {
            return N.touchingMouse(this._h);
        }
        isTouchingEdge() {
            return N.touchingEdge(this._h);
        }
        isTouchingVerticalEdge() {
            if (!N.touchingEdge(this._h)) {
                return false;
            }
            const b = this.bounds;
            return b.left < -STAGE.width / 2 || b.right > STAGE.width / 2;
        }
        isTouchingHorizEdge() {
            if (!N.touchingEdge(this._h)) {
                return false;
            }
            const b = this.bounds;
            return b.bottom < -STAGE.height / 2 || b.top > STAGE.height / 2;
        }
        isTouchingSprite(spriteName) {
            return N.touchingSprite(this._h, String(spriteName));
        }
        isTouchingColor(rgb) {
            const [r, g, b] = rgbOf(rgb);
            return N.touchingColor(this._h, r, g, b);
        }
        isColorTouchingColor(targetRgb, maskRgb) {
            const [r, g, b] = rgbOf(targetRgb);
            const [r2, g2, b2] = rgbOf(maskRgb);
            return N.colorTouchingColor(this._h, r, g, b, r2, g2, b2);
        }
        _wrapVariable(owner, name, isList) {
            const key = `${owner}/${isList ? 'l' : 'v'}/${name}`;
            let w = this._variables.get(key);
            if (!w) {
                w = new Variable(owner, name, isList, this);
                this._variables.set(key, w);
            }
            return w;
        }
        _scope(isList, skipStage) {
            const own = N.varNames(this._h, isList).map(n => [this._h, n]);
            if (skipStage || this._isStage) {
                return own;
            }
            const stage = N.stage();
            const names = new Set(own.map(x => x[1]));
            return own.concat(N.varNames(stage, isList).filter(n => !names.has(n)).map(n => [stage, n]));
        }
        getVariables(condition, skipStage = true) {
            let vars = this._scope(false, skipStage).map(([o, n]) => this._wrapVariable(o, n, false));
            if (condition) {
                vars = vars.filter(v => condition(v));
            }
            return vars;
        }
        getLists(skipStage = true) {
            return this._scope(true, skipStage).map(([o, n]) => this._wrapVariable(o, n, true));
        }
        getVariable(name, skipStage = true) {
            return this.getVariables(() => true, skipStage).find(v => v.name === name);
        }
        getList(name, skipStage = true) {
            return this.getLists(skipStage).find(v => v.name === name);
        }
        _instances() {
            return N.instances(this._h).map(h => this._sprites.wrap(h));
        }
        getInstances() {
            return this._instances();
        }
        // Whisker picks targets by their own `isOriginal`, then wraps them (a clone may get an
        // original's wrapper: `Sprites.wrap`).
        getOriginal() {
            const h = N.instances(this._h).find(c => N.isOriginal(c));
            return h === undefined ? undefined : this._sprites.wrap(h);
        }
        getClones(withSelf = false) {
            return N.instances(this._h).filter(c => withSelf || !N.isOriginal(c)).map(c => this._sprites.wrap(c));
        }
        getNewClones() {
            const mine = new Set(N.instances(this._h));
            return this._sprites.getNewSprites(s => !s.isOriginal && mine.has(s._h));
        }
        getClone(index) {
            // Whisker's `getClone` is `sprite.clones[index]`, the raw target: not wrapped, so
            // neither the cache of wrappers nor a clone whose id repeats its original's (which
            // `getClones` reads through the original's wrapper) changes what it reads.
            const h = N.instances(this._h)[index];
            return h === undefined ? undefined : new Sprite(h, this._sprites).getScratchTarget();
        }
        getCloneCount(withSelf = false) {
            return this.getClones(withSelf).length;
        }
        getCostumes() {
            return N.costumeNames(this._h).map(name => ({name}));
        }
        getCostumeByIndex(index) {
            return this.getCostumes()[index];
        }
        getCostumeByName(name) {
            return this.getCostumes().filter(c => c.name.match(name))[0];
        }
        getCostumeCount() {
            return this.getCostumes().length;
        }
        /** The RenderedTarget stand-in: the properties and setters tests use for direct changes. */
        getScratchTarget() {
            const s = this;
            const h = this._h;
            return {
                get id() {
                    return s.id;
                },
                get x() {
                    return s.x;
                },
                get y() {
                    return s.y;
                },
                get direction() {
                    return s.direction;
                },
                get size() {
                    return s._num('size');
                },
                get visible() {
                    return s.visible;
                },
                get currentCostume() {
                    return s.currentCostume;
                },
                get isOriginal() {
                    return s.isOriginal;
                },
                get isStage() {
                    return s.isStage;
                },
                get rotationStyle() {
                    return s.rotationStyle;
                },
                // What Whisker-generated assertions read on `getClone(i)` (a RenderedTarget).
                // A RenderedTarget has no `sayText`: it stays undefined, as in Whisker.
                get effects() {
                    return s.effects;
                },
                get volume() {
                    return s.volume;
                },
                getLayerOrder() {
                    return s.layerOrder;
                },
                sprite: {name: s.name},
                setXY(x, y, force) {
                    N.setXY(h, Number(x), Number(y), Boolean(force));
                },
                setVisible(v) {
                    N.setVisible(h, Boolean(v));
                },
                setSize(v) {
                    N.setSize(h, Number(v));
                },
                setDirection(v) {
                    N.setDirection(h, Number(v));
                },
                setCostume(v) {
                    N.setCostume(h, Number(v));
                },
                getCostumes() {
                    return s.getCostumes();
                },
                isTouchingEdge() {
                    return s.isTouchingEdge();
                },
                isTouchingSprite(name) {
                    return s.isTouchingSprite(name);
                },
                isTouchingColor(rgb) {
                    return s.isTouchingColor(rgb);
                },
                getBounds() {
                    return s.bounds;
                },
                lookupVariableByNameAndType(name, type) {
                    const v = type === 'list' ? s.getList(name, false) : s.getVariable(name, false);
                    return v ? v.getScratchVariable() : undefined;
                }
            };
        }
        updateOld() {
            this._old.effects = this.effects;
            this._old.x = this.x;
            this._old.y = this.y;
            this._old.pos = {...this.pos};
            this._old.direction = this.direction;
            this._old.visible = this.visible;
            this._old.size = this.size;
            this._old.currentCostume = this.currentCostume;
            this._old.volume = this.volume;
            this._old.layerOrder = this.layerOrder;
            this._old.sayText = this.sayText;
            this._old.rotationStyle = this.rotationStyle;
            this._old.currentCostumeName = this.currentCostumeName;
        }
        _update() {
            if (!N.exists(this._h)) {
                return;
            }
            this.updateOld();
            for (const v of this._variables.values()) {
                v.updateOld();
            }
        }
    }

    const rgbOf = c => {
        if (Array.isArray(c)) {
            return [c[0] | 0, c[1] | 0, c[2] | 0];
        }
        if (typeof c === 'string' && /^#?[0-9a-f]{6}$/i.test(c)) {
            const n = parseInt(c.replace('#', ''), 16);
            return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
        }
        if (typeof c === 'number') {
            return [(c >> 16) & 255, (c >> 8) & 255, c & 255];
        }
        throw new TypeError(`"${c}" is not a colour ([r, g, b] or "#rrggbb")`);
    };

    class Sprites {
        constructor(w) {
            this.w = w;
            // Whisker's cache of wrappers, by target id; an id is the draw of the project's
            // random stream where the target's uid() began (`N.uidDraw`, docs/vm.md).
            this.sprites = new Map();
            // The VM mirrors this cache: a new wrapper's `removeAllListeners` takes the pen's
            // listener away, and Whisker wraps clones as they are made.
            N.whiskerWrappersReset();
            // The wrapper last handed out for each target (moves and bubbles of gone targets).
            this.byHandle = new Map();
            // Targets dispatch() has seen: the others are clones created since.
            this.seen = new Set(N.targets());
            this.spritesBefore = new Set();
            this._onSpriteMoved = null;
            this._onSpriteVisualChange = null;
            this._onSayOrThink = null;
            this._onVariableChange = null;
            // The bubble an `onSayOrThink` callback is hearing about: its sprite's `sayText`
            // is the text of that moment, as Whisker's listener reads it mid-step.
            this._bubbleShown = null;
        }
        /**
         * Whisker's `wrapTarget`: the cached wrapper of the target's id when it belongs to a
         * sprite of the same name, else a new one that takes the id's place. A clone whose id
         * repeats an original's (Whisker seeds the stream again before every test) so gets the
         * original's wrapper, or the original the clone's, whichever was wrapped first.
         */
        wrap(h) {
            const key = N.uidDraw(h);
            if (key === undefined) {
                // Gone: the wrapper it had, as Whisker's listeners still hold it.
                let gone = this.byHandle.get(h);
                if (!gone) {
                    gone = new Sprite(h, this);
                    this.byHandle.set(h, gone);
                }
                return gone;
            }
            let s = this.sprites.get(key);
            if (!s || s.name !== N.name(h)) {
                N.whiskerWrap(h);
                s = new Sprite(h, this);
                s._update();
                this.sprites.set(key, s);
            }
            this.byHandle.set(h, s);
            return s;
        }
        getSprites(condition, skipStage = true) {
            let all = N.targets().map(h => this.wrap(h));
            if (skipStage) {
                all = all.filter(s => !s.isStage);
            }
            return condition ? all.filter(condition) : all;
        }
        getSpritesAtPoint(x, y) {
            return this.getSprites().filter(s => !s.isStage && s.isPointInBounds(x, y))
                .sort((a, b) => b.layerOrder - a.layerOrder);
        }
        getSpriteAtPoint(x, y) {
            const all = this.getSpritesAtPoint(x, y);
            return all.length > 0 ? all[0] : null;
        }
        getSprite(name) {
            return this.getSprites().find(s => s.isOriginal && s.name === name);
        }
        getStage() {
            return this.wrap(N.stage());
        }
        getNewSprites(condition) {
            condition = condition || (() => true);
            const out = [];
            for (const h of N.targets()) {
                if (!this.spritesBefore.has(h)) {
                    const s = this.wrap(h);
                    if (condition(s)) {
                        this.spritesBefore.add(h);
                        out.push(s);
                    }
                }
            }
            return out;
        }
        getRotationStyle(name) {
            const h = N.find(String(name));
            return h === undefined ? undefined : N.rotationStyle(h);
        }
        getSpriteVariable(spriteName, variableName) {
            const h = spriteName === 'Stage' ? N.stage() : N.find(String(spriteName));
            if (h === undefined) {
                throw new TypeError(`There is no sprite named "${spriteName}"`);
            }
            return N.varValue(h, String(variableName));
        }
        setSpriteVariable(spriteName, variableName, value) {
            const h = spriteName === 'Stage' ? N.stage() : N.find(String(spriteName));
            if (h === undefined) {
                throw new TypeError(`There is no sprite named "${spriteName}"`);
            }
            return setVar(h, String(variableName), value);
        }
        setVisibility(spriteName, visible) {
            const h = N.find(String(spriteName));
            if (h !== undefined) {
                N.setVisible(h, Boolean(visible));
            }
        }
        update() {
            let moveCallbacks = Boolean(this._onSpriteMoved);
            for (const s of this.sprites.values()) {
                s._update();
                moveCallbacks = moveCallbacks || Boolean(s.onMoved);
            }
            N.recordScenes(moveCallbacks);
        }
        onSpriteMoved(f) {
            this._onSpriteMoved = f;
        }
        onSpriteVisualChange(f) {
            this._onSpriteVisualChange = f;
        }
        onSayOrThink(f) {
            this._onSayOrThink = f;
        }
        onVariableChange(f) {
            this._onVariableChange = f;
        }
        /**
         * Event `i` of the step, a bubble (kind 0), variable (1) or visual (2) event, to its
         * listeners; during a bubble's or visual change's callbacks its sprite stands as it
         * was at the event.
         */
        _hear(i, kind, h, text) {
            if (kind === 2) {
                // Only wrapped targets have listeners (clones are wrapped when made).
                const s = this.byHandle.get(h);
                if (s && (s.onVisualChange || this._onSpriteVisualChange)) {
                    N.showHeard(i);
                    try {
                        if (s.onVisualChange) {
                            s.onVisualChange();
                        }
                        if (this._onSpriteVisualChange) {
                            this._onSpriteVisualChange(s);
                        }
                    } finally {
                        N.showEnd();
                    }
                }
            } else if (kind === 0) {
                if (this._onSayOrThink && (this.byHandle.has(h) || N.exists(h))) {
                    const s = this.wrap(h);
                    this._bubbleShown = {h, text};
                    N.showHeard(i);
                    try {
                        this._onSayOrThink(s);
                    } finally {
                        this._bubbleShown = null;
                        N.showEnd();
                    }
                }
            } else if (this._onVariableChange) {
                this._onVariableChange(text);
            }
        }
        /** The events of the step just run, in the order Whisker's listeners would see them. */
        dispatch() {
            // targetWasCreated: clones made in this step get wrappers, in creation order
            // (originals are wrapped when the test first asks, as in Whisker).
            const fresh = N.targets().filter(h => !this.seen.has(h));
            fresh.sort((a, b) => N.uidDraw(a) - N.uidDraw(b));
            for (const h of fresh) {
                this.seen.add(h);
                this.wrap(h);
            }
            // Moves are replayed one by one: during the callbacks of a move, the sprites stand
            // where they stood right after it (the VM records the scene when a move callback
            // exists), as Whisker's listeners see them in the middle of the step; then the
            // step's end state comes back.
            // Bubble, variable and visual events (scratch-vm's SAY, DELETE_SAY_OR_THINK,
            // CHANGE_VARIABLE and EVENT_TARGET_VISUAL_CHANGE, one per call that sends one) go
            // to their listeners in the order they happened among the moves.
            const moves = N.moves();
            const listening = this._onSayOrThink || this._onVariableChange || this._onSpriteVisualChange ||
                [...this.sprites.values()].some(s => s.onVisualChange);
            const heard = listening ? N.heard() : [];
            let next = 0;
            const hearBefore = seq => {
                for (; next < heard.length && heard[next] < seq; next += 4) {
                    this._hear(next / 4, heard[next + 1], heard[next + 2], heard[next + 3]);
                }
            };
            for (let i = 0, k = 0; i < moves.length; i += 4, k++) {
                hearBefore(moves[i + 3]);
                const h = moves[i];
                const s = this._onSpriteMoved && N.exists(h) ? this.wrap(h) : this.byHandle.get(h);
                if (!s || !N.exists(h)) {
                    continue;
                }
                s._old.x = moves[i + 1];
                s._old.y = moves[i + 2];
                if (!s.onMoved && !this._onSpriteMoved) {
                    continue;
                }
                N.showMove(k);
                try {
                    if (s.onMoved) {
                        s.onMoved(s);
                    }
                    if (this._onSpriteMoved) {
                        this._onSpriteMoved(s);
                    }
                } finally {
                    N.showEnd();
                }
            }
            hearBefore(Infinity);
        }
    }

    P.Sprites = Sprites;
    P.rgbOf = rgbOf;
})(globalThis.__clowderParts);
