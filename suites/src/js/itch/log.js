// Itch's log (snapshots, events, the renderer's record) and the static model of a project
// (targets, blocks, block trees), built from what __itch gives: `project(0|1)` for the
// template and the submission, `state()` for the live targets.
(function (P) {
    'use strict';

    const ensure = (v, message = 'This value was promised to be there.') => {
        if (v === undefined || v === null) {
            throw new TypeError(message);
        }
        return v;
    };

    // ------------------------------------------------------------------ block trees
    const isNode = o => o !== null && typeof o === 'object' && 'opcode' in o && 'next' in o && 'inputs' in o;

    /** A procedure call's label parts and argument values, in the order of its proccode. */
    const procedureArguments = (opcode, mutation, inputs, argumentIds) => {
        if (opcode !== 'procedures_call' || !mutation || !inputs) {
            return undefined;
        }
        const parts = mutation.split(/ ?(%b|%n|%s) ?/g).filter(s => s !== '');
        let next = 0;
        return parts.map(p => {
            if (p === '%s' || p === '%b' || p === '%n') {
                const id = (argumentIds || [])[next++];
                const value = inputs[id];
                if (!value) {
                    throw new Error('Procedure call has a non-existing input value');
                }
                return value;
            }
            return p;
        });
    };

    /** A block as a tree node: next block, inputs (text or node), fields, mutation. */
    const asNode = (block, map, depth = 0) => {
        if (depth > 2000) {
            throw new RangeError('block tree too deep');
        }
        const get = id => {
            const b = id === null || id === undefined ? undefined : map.get(id);
            return b === undefined ? undefined : asNode(b, map, depth + 1);
        };
        const inputs = {};
        for (const [k, v] of Object.entries(block.inputs || {})) {
            inputs[k] = v !== null && typeof v === 'object' ? get(v.b) : v === null ? undefined : v;
        }
        const next = block.next ? (get(block.next) || null) : null;
        return {
            opcode: block.opcode,
            next,
            inputs,
            input: inputs,
            fields: {...(block.fields || {})},
            mutation: block.mutation === undefined ? null : block.mutation,
            arguments: procedureArguments(block.opcode, block.mutation, inputs, block.argumentids)
        };
    };

    // ------------------------------------------------------------------ targets
    class ScratchVariable {
        constructor(id, name, type, value) {
            this.id = id;
            this.name = name;
            this.type = type;
            this.value = value;
        }
    }

    class ScratchTarget {
        constructor(d, blocks) {
            this.id = d.id;
            this.name = d.name;
            this.variables = (d.variables || []).map(v => new ScratchVariable(v.id, v.name, v.type, v.value));
            this.blocks = blocks;
            this.comments = [];
            this.currentCostume = d.currentCostume;
            this.costumes = d.costumes;
            this.volume = d.volume;
            this.layerOrder = d.layerOrder;
        }
        getCurrentCostume() {
            return this.costumes[this.currentCostume];
        }
        comparableObject() {
            return {name: this.name};
        }
        _map() {
            if (!this.__map) {
                Object.defineProperty(this, '__map', {value: new Map(this.blocks.map(b => [b.id, b])), enumerable: false});
            }
            return this.__map;
        }
        blockTree(blocks) {
            const tops = (blocks || this.blocks).filter(b => b.topLevel);
            return new Set(tops.map(b => asNode(b, this._map())));
        }
        blockTreeList(blocks) {
            return Array.from(this.blockTree(blocks));
        }
        find(script) {
            return this.blockTreeList().find(b => P.subtreeMatchesOneScript(b, script));
        }
        findScript(first, ...other) {
            return this.find(P.B.script(first, ...other));
        }
        variable(name) {
            return this.variables.find(v => v.name === name);
        }
        block(id) {
            return ensure(this._map().get(id));
        }
        node(block) {
            const id = typeof block === 'string' ? block : block.id;
            return asNode(this.block(id), this._map());
        }
    }

    class ScratchStage extends ScratchTarget {
        constructor(d, blocks) {
            super(d, blocks);
            this.tempo = d.tempo;
            this.videoTransparency = d.videoTransparency;
            this.videoState = d.videoState;
        }
    }

    class ScratchSprite extends ScratchTarget {
        constructor(d, blocks, clones) {
            super(d, blocks);
            this.visible = d.visible;
            this.x = d.x;
            this.y = d.y;
            this.size = d.size;
            this.direction = d.direction;
            this.draggable = d.draggable;
            this.rotationStyle = d.rotationStyle;
            this.clones = clones || [];
            this.effects = d.effects || {};
            this.bounds = d.bounds || undefined;
            this.bubbleState = d.bubbleState || undefined;
        }
        touchesPosition(pos, padding = 0) {
            const {left, right, bottom, top} = ensure(this.bounds, 'the sprite has no bounds in this snapshot');
            return left - padding < pos.x && pos.x < right + padding && bottom - padding < pos.y && pos.y < top + padding;
        }
        get position() {
            return {x: this.x, y: this.y};
        }
        get costume() {
            const c = this.costumes ? this.costumes[this.currentCostume] : undefined;
            return c ? c.name : undefined;
        }
    }

    const makeBlocks = d => (d.blocks || []).map(b => ({
        id: b.id, opcode: b.opcode, next: b.next === null ? undefined : b.next,
        parent: b.parent === null ? undefined : b.parent, inputs: b.inputs, fields: b.fields,
        shadow: b.shadow, topLevel: b.topLevel, mutation: b.mutation, argumentids: b.argumentids,
        toString() {
            return `Block ${this.id} (${this.opcode})`;
        },
        get calledProcedureName() {
            if (this.opcode !== 'procedures_call') {
                throw new Error('Cannot get called procedure name from non procedure call.');
            }
            return this.mutation;
        }
    }));

    // ------------------------------------------------------------------ snapshots
    class Snapshot {
        constructor(timestamp, origin, targets) {
            this.timestamp = timestamp;
            this.origin = origin;
            this.targets = targets;
        }
        get sprites() {
            return this.targets.filter(t => t instanceof ScratchSprite);
        }
        get stage() {
            return this.targets.find(t => t instanceof ScratchStage);
        }
        get time() {
            return this.timestamp;
        }
        findSprite(name) {
            return this.sprites.find(s => s.name === name);
        }
        findSpriteById(id) {
            return this.sprites.find(s => s.id === id);
        }
        findTarget(name) {
            return this.targets.find(t => t.name === name);
        }
        findTargetById(id) {
            return this.targets.find(t => t.id === id);
        }
        sprite(name) {
            return ensure(this.findSprite(name));
        }
        spriteById(id) {
            return ensure(this.findSpriteById(id));
        }
        target(name) {
            return ensure(this.findTarget(name));
        }
        areTouching(first, second) {
            const a = this.sprite(first);
            const b = this.sprite(second);
            return a.touchesPosition({x: b.x, y: b.y});
        }
        hasChangedTarget(other, target, predicate = (a, b) => !P.isEqual(a.comparableObject(), b.comparableObject())) {
            const a = this.findTarget(target);
            const b = other.findTarget(target);
            if (a === undefined && b === undefined) {
                return false;
            }
            if (a === undefined || b === undefined) {
                return true;
            }
            return predicate(a, b);
        }
        hasChangedBlocks(other, target) {
            return this.hasChangedTarget(other, target, (a, b) => !P.isEqual(a.blockTree(), b.blockTree()));
        }
    }

    /** A snapshot of a project file (template or submission) at timestamp 0. */
    const snapshotFromProject = (json, origin) => {
        const data = JSON.parse(json);
        const targets = data.targets.map(d => {
            const blocks = makeBlocks(d);
            return d.isStage ? new ScratchStage(d, blocks) : new ScratchSprite({...d, effects: {}}, blocks, []);
        });
        return new Snapshot(0, origin, targets);
    };

    /** A snapshot of the live VM; blocks are the submission's (the program does not change). */
    const snapshotFromState = (state, timestamp, origin, submission) => {
        const blocksOf = name => {
            const t = submission.findTarget(name);
            return t ? t.blocks : [];
        };
        const costumesOf = name => {
            const t = submission.findTarget(name);
            return t ? t.costumes : [];
        };
        const sprite = (d, withClones) => new ScratchSprite({
            id: d.original ? `target${d.def}` : `clone${d.h}`, name: d.name, variables: d.variables,
            currentCostume: d.costume, costumes: costumesOf(d.name), volume: d.volume, layerOrder: d.layer, visible: d.visible, x: d.x, y: d.y,
            size: d.size, direction: d.direction, draggable: d.draggable, rotationStyle: d.rotationStyle,
            effects: d.effects, bounds: d.bounds || undefined,
            bubbleState: d.bubble ? {onSpriteRight: true, text: d.bubble.text, type: d.bubble.type} : undefined
        }, withClones ? blocksOf(d.name) : [], withClones ? state.filter(c => !c.original && !c.isStage &&
            c.name === d.name).map(c => sprite(c, false)) : []);
        const targets = state.filter(d => d.isStage || d.original).map(d => (d.isStage
            ? new ScratchStage({id: `target${d.def}`, name: d.name, variables: d.variables, currentCostume: d.costume,
                costumes: costumesOf(d.name), volume: d.volume, layerOrder: d.layer}, blocksOf(d.name))
            : sprite(d, true)));
        return new Snapshot(timestamp, origin, targets);
    };

    class Event {
        constructor(type, data = {}) {
            this.type = type;
            this.data = data;
            this._previous = undefined;
            this._next = undefined;
        }
        get previous() {
            return ensure(this._previous, 'The previous snapshot is not available yet.');
        }
        set previous(s) {
            this._previous = s;
        }
        get next() {
            return ensure(this._next, 'The next snapshot is not available yet.');
        }
        set next(s) {
            this._next = s;
        }
        hasNext() {
            return this._next !== undefined;
        }
        set snapshot(s) {
            this._previous = s;
            this._next = s;
        }
        get timestamp() {
            return this.previous.timestamp;
        }
    }

    class Log {
        constructor(clock) {
            this._clock = clock;
            this._snapshots = [];
            this._events = [];
            this._template = undefined;
            this.renderer = {lines: [], color: null, points: [], responses: []};
            this.started = true;
        }
        get snapshots() {
            return this._snapshots;
        }
        get last() {
            return this._snapshots[this._snapshots.length - 1];
        }
        get events() {
            // Itch's compatibility alias.
            this._events.list = this._events;
            return this._events;
        }
        get ops() {
            return this._events.filter(e => e.type === 'ops');
        }
        get submission() {
            return this._snapshots[0];
        }
        get template() {
            return ensure(this._template);
        }
        registerStartSnapshots(template, submission) {
            this._snapshots.push(submission);
            this._template = template;
        }
        /** A snapshot of the VM now, added to the timeline. */
        snap(origin) {
            const s = snapshotFromState(JSON.parse(__itch.state()), this.timestamp(), origin, this.submission);
            this._snapshots.push(s);
            return s;
        }
        timestamp() {
            return this._clock();
        }
        registerEvent(event) {
            this._events.push(event);
            return true;
        }
        savedRange(name) {
            const event = this._events.find(e => e.type === 'savedRange' && e.data.name === name);
            if (!event) {
                throw new Error(`Could not find saved range event with name ${name}.`);
            }
            const start = this._snapshots.indexOf(event.previous);
            const end = this._snapshots.indexOf(event.next, start);
            if (start === -1 || end === -1) {
                throw new Error('Could not find the snapshots of the saved range.');
            }
            return this._snapshots.slice(start, end);
        }
        eventsDuring(e) {
            if (!e) {
                return [];
            }
            const start = e.previous.timestamp;
            const end = e.next.timestamp;
            return this._events.filter(s => s.timestamp >= start && s.timestamp <= end);
        }
        setRange(start, end) {
            let index = 0;
            this._events = this._events.filter(e => {
                if (e.type === 'ops') {
                    index += 1;
                }
                return start < index && index <= end;
            });
        }
    }

    Object.assign(P, {
        ensure, isNode, asNode, ScratchVariable, ScratchTarget, ScratchStage, ScratchSprite, Snapshot, Event, Log,
        snapshotFromProject, snapshotFromState
    });
})(globalThis.__itchParts);
