// Callbacks and constraints (Whisker's vm/callbacks.js and vm/constraints.js). Evaluated
// after driver.js.
(function (P) {
    'use strict';
    const isAssertion = P.isAssertion;

    // ------------------------------------------------------------------ callbacks, constraints
    class Callback {
        constructor(list, fn, name, afterStep) {
            this._list = list;
            this._callback = fn;
            this._active = false;
            this._afterStep = Boolean(afterStep);
            this.name = name;
        }
        enable() {
            this._list.reAddCallback(this);
        }
        disable() {
            this._list.removeCallback(this);
        }
        isActive() {
            return this._active;
        }
    }
    class Callbacks {
        constructor() {
            this.callbacks = [];
        }
        callCallbacks(afterStep) {
            for (const c of [...this.callbacks]) {
                if (c._active && c._afterStep === afterStep && c._callback()) {
                    this.removeCallback(c);
                }
            }
        }
        addCallback(fn, afterStep = false, name) {
            if (typeof fn !== 'function') {
                throw new TypeError('addCallback: the callback must be a function');
            }
            const c = new Callback(this, fn, name, afterStep);
            c._active = true;
            this.callbacks.push(c);
            return c;
        }
        reAddCallback(c) {
            this.removeCallback(c);
            c._active = true;
            this.callbacks.push(c);
            return c;
        }
        removeCallback(c) {
            c._active = false;
            const i = this.callbacks.indexOf(c);
            if (i !== -1) {
                this.callbacks.splice(i, 1);
            }
            return i !== -1;
        }
        clearCallbacks() {
            for (const c of this.callbacks) {
                c._active = false;
            }
            this.callbacks = [];
        }
    }
    class Constraint {
        constructor(list, fn, name) {
            this._list = list;
            this._callback = fn;
            this._active = false;
            this.name = name;
            this.error = null;
        }
        _check() {
            try {
                this._callback();
                return null;
            } catch (e) {
                this.error = e;
                if (isAssertion(e)) {
                    e.constraint = this.name ? this.name : '[no name]';
                    return e;
                }
                throw e;
            }
        }
        enable() {
            this._list.reAddConstraint(this);
        }
        disable() {
            this._list.removeConstraint(this);
        }
        isActive() {
            return this._active;
        }
    }
    class Constraints {
        constructor() {
            this.constraints = [];
        }
        checkConstraints() {
            for (const c of [...this.constraints]) {
                if (c._active) {
                    const e = c._check();
                    if (e) {
                        this.removeConstraint(c);
                        return e;
                    }
                }
            }
            return null;
        }
        addConstraint(fn, name) {
            if (typeof fn !== 'function') {
                throw new TypeError('addConstraint: the constraint must be a function');
            }
            const c = new Constraint(this, fn, name);
            c._active = true;
            this.constraints.push(c);
            return c;
        }
        reAddConstraint(c) {
            this.removeConstraint(c);
            c.error = null;
            c._active = true;
            this.constraints.push(c);
            return c;
        }
        removeConstraint(c) {
            c._active = false;
            const i = this.constraints.indexOf(c);
            if (i !== -1) {
                this.constraints.splice(i, 1);
            }
            return i !== -1;
        }
        clearConstraints() {
            for (const c of this.constraints) {
                c._active = false;
            }
            this.constraints = [];
        }
    }

    P.Callbacks = Callbacks;
    P.Constraints = Constraints;
})(globalThis.__clowderParts);
