#!/bin/sh
# Install the TurboWarp anchor: TurboWarp's scratch-vm source at a pinned commit into tw/scratch-vm/
# and its npm dependencies (package-lock.json) into node_modules/ (both git-ignored).
# Idempotent: does nothing when the right commit and the dependencies are already installed.
#
# TurboWarp does not publish its VM on the npm registry, so the source comes from a git
# repository of TurboWarp/scratch-vm that has the pinned commit:
#   TW_VM_GIT   a git directory (bare mirror or .git) holding TW_COMMIT
#               (default: /work/.mirror/TurboWarp+scratch-vm/repo, where the search tool's
#               `fetch github:TurboWarp/scratch-vm` puts it)
#   TW_VM_TAR   alternatively, a tarball of that commit's tree (`git archive` output)
set -eu
cd "$(dirname "$0")"
TW_COMMIT=1d8a9c12db47c029feeacab2d9b1a49923253271
DEST=tw/scratch-vm

if [ -f node_modules/.package-lock.json ] && cmp -s package-lock.json node_modules/.anchor-lock 2>/dev/null; then
    echo "npm dependencies already installed in $(pwd)/node_modules"
else
    npm ci --no-audit --no-fund --ignore-scripts
    cp package-lock.json node_modules/.anchor-lock
fi

if [ -f "$DEST/.tw-commit" ] && [ "$(cat "$DEST/.tw-commit")" = "$TW_COMMIT" ] && [ -f "$DEST/src/index.js" ]; then
    echo "TurboWarp scratch-vm @ $TW_COMMIT already installed in $(pwd)/$DEST"
else
    rm -rf "$DEST.tmp"
    mkdir -p "$DEST.tmp"
    if [ -n "${TW_VM_TAR:-}" ]; then
        tar -xf "$TW_VM_TAR" -C "$DEST.tmp"
    else
        git_dir="${TW_VM_GIT:-/work/.mirror/TurboWarp+scratch-vm/repo}"
        if ! git --git-dir="$git_dir" cat-file -e "$TW_COMMIT^{commit}" 2>/dev/null; then
            echo "install.sh: commit $TW_COMMIT of TurboWarp/scratch-vm not found in $git_dir;" >&2
            echo "  set TW_VM_GIT to a clone or mirror of TurboWarp/scratch-vm, or TW_VM_TAR to a tarball" >&2
            rm -rf "$DEST.tmp"
            exit 1
        fi
        git --git-dir="$git_dir" archive "$TW_COMMIT" src package.json COPYING COPYING.LESSER | tar -x -C "$DEST.tmp"
    fi
    [ -f "$DEST.tmp/src/compiler/jsexecute.js" ] || { echo "install.sh: not a TurboWarp scratch-vm tree" >&2; exit 1; }
    echo "$TW_COMMIT" > "$DEST.tmp/.tw-commit"
    rm -rf "$DEST"
    mv "$DEST.tmp" "$DEST"
    echo "TurboWarp scratch-vm @ $TW_COMMIT installed in $(pwd)/$DEST"
fi
node -e "require('./lib/tw-path').check(); console.log('turbowarp anchor ready')"
