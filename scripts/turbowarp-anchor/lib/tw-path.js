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
/**
 * The TurboWarp sources the anchor can run (install.sh installs one or both). `2024` is the
 * default: TurboWarp's develop of September 2024 with its newer compiler (type analysis and the
 * IR optimizer), as kept on the branch `next-next` of Tacodiva/turbowarp-vm (the compiler's
 * author's fork; TurboWarp/scratch-vm's own newer commits are not at hand here). `2021` is the
 * commit the first comparisons used. TW_ANCHOR_VARIANT chooses.
 */
const VARIANTS = {
    2024: {commit: 'df65b01cdee0924884518be353060dbfae0b9768', repo: 'Tacodiva/turbowarp-vm'},
    2021: {commit: '1d8a9c12db47c029feeacab2d9b1a49923253271', repo: 'TurboWarp/scratch-vm'}
};
const VARIANT = process.env.TW_ANCHOR_VARIANT || '2024';
if (!Object.prototype.hasOwnProperty.call(VARIANTS, VARIANT)) {
    throw new Error(`TW_ANCHOR_VARIANT=${VARIANT}: known variants are ${Object.keys(VARIANTS).join(', ')}`);
}
const PKG_DIR = path.join(ANCHOR_DIR, 'tw', VARIANT, 'scratch-vm');
const SRC_DIR = path.join(PKG_DIR, 'src');
/** The pinned commit of the chosen variant (install.sh installs it). */
const TW_COMMIT = VARIANTS[VARIANT].commit;
const VM_LABEL = `turbowarp-scratch-vm@${TW_COMMIT.slice(0, 10)}`;

const check = () => {
    const marker = path.join(PKG_DIR, '.tw-commit');
    if (!fs.existsSync(marker) || !fs.existsSync(path.join(SRC_DIR, 'index.js'))) {
        throw new Error(`TurboWarp scratch-vm (variant ${VARIANT}) is not installed under ${PKG_DIR}; run TW_ANCHOR_VARIANT=${VARIANT} ${path.join(ANCHOR_DIR, 'install.sh')}`);
    }
    const have = fs.readFileSync(marker, 'utf8').trim();
    if (have !== TW_COMMIT) throw new Error(`TurboWarp scratch-vm ${have} installed, expected ${TW_COMMIT}; re-run TW_ANCHOR_VARIANT=${VARIANT} install.sh`);
    if (!['scratch-parser', '@turbowarp/nanolog'].every(m => fs.existsSync(path.join(ANCHOR_DIR, 'node_modules', m)))) {
        throw new Error(`npm dependencies missing in ${ANCHOR_DIR}/node_modules; run install.sh`);
    }
    return TW_COMMIT;
};

const src = rel => path.join(SRC_DIR, rel);

module.exports = {
    FIDELITY_DIR: ANCHOR_DIR, PKG_DIR, SRC_DIR, EXPECTED_VERSION: TW_COMMIT, TW_COMMIT, VM_LABEL, VARIANT, VARIANTS, check, src
};
