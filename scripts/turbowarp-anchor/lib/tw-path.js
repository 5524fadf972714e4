'use strict';
/**
 * Stands in for the fidelity oracle's lib/scratch-vm-path.js: the same exports, but pointing at
 * TurboWarp's scratch-vm source installed by install.sh (tw/scratch-vm/src). trace.js puts this
 * module into require.cache under the oracle's path before the oracle's lib is loaded, so every
 * oracle patch (module swaps, prototype wrappers, primitives) lands on TurboWarp's modules.
 * The folder is named .../scratch-vm/src so that the oracle's error descriptions
 * ("TypeError: ... @ fn (file:line)") find TurboWarp's frames as they find scratch-vm's.
 */
const fs = require('fs');
const path = require('path');

const ANCHOR_DIR = path.resolve(__dirname, '..');
const PKG_DIR = path.join(ANCHOR_DIR, 'tw', 'scratch-vm');
const SRC_DIR = path.join(PKG_DIR, 'src');
/** The pinned TurboWarp/scratch-vm commit (install.sh installs it). */
const TW_COMMIT = '1d8a9c12db47c029feeacab2d9b1a49923253271';
const VM_LABEL = `turbowarp-scratch-vm@${TW_COMMIT.slice(0, 10)}`;

const check = () => {
    const marker = path.join(PKG_DIR, '.tw-commit');
    if (!fs.existsSync(marker) || !fs.existsSync(path.join(SRC_DIR, 'index.js'))) {
        throw new Error(`TurboWarp scratch-vm is not installed under ${PKG_DIR}; run ${path.join(ANCHOR_DIR, 'install.sh')}`);
    }
    const have = fs.readFileSync(marker, 'utf8').trim();
    if (have !== TW_COMMIT) throw new Error(`TurboWarp scratch-vm ${have} installed, expected ${TW_COMMIT}; re-run install.sh`);
    if (!fs.existsSync(path.join(ANCHOR_DIR, 'node_modules', 'scratch-parser'))) {
        throw new Error(`npm dependencies missing in ${ANCHOR_DIR}/node_modules; run install.sh`);
    }
    return TW_COMMIT;
};

const src = rel => path.join(SRC_DIR, rel);

module.exports = {
    FIDELITY_DIR: ANCHOR_DIR, PKG_DIR, SRC_DIR, EXPECTED_VERSION: TW_COMMIT, TW_COMMIT, VM_LABEL, check, src
};
