#!/bin/sh
# Install the TurboWarp anchor: TurboWarp's scratch-vm source at a pinned commit into
# tw/VARIANT/scratch-vm/ and the npm dependencies (package-lock.json) into node_modules/
# (both git-ignored). Idempotent: does nothing when the right commit and the dependencies are
# already installed.
#
# Variants (TW_ANCHOR_VARIANT, default 2024; lib/tw-path.js holds the same table):
#   2024  TurboWarp's develop of 2024-09 with its newer compiler (type analysis, IR optimizer),
#         branch next-next of Tacodiva/turbowarp-vm, commit df65b01c
#   2021  TurboWarp/scratch-vm develop of 2021-07-22, commit 1d8a9c12 (the first comparisons)
#
# TurboWarp does not publish its VM on the npm registry, so the source comes from a git
# repository that has the pinned commit:
#   TW_VM_GIT   a git directory (bare mirror or .git) holding the commit (default: where the
#               search tool's `fetch github:OWNER/NAME` puts it, /work/.mirror/OWNER+NAME/repo)
#   TW_VM_TAR   alternatively, a tarball of that commit's tree (`git archive` output)
set -eu
cd "$(dirname "$0")"
VARIANT="${TW_ANCHOR_VARIANT:-2024}"
case "$VARIANT" in
    2024) TW_COMMIT=df65b01cdee0924884518be353060dbfae0b9768; TW_REPO=Tacodiva+turbowarp-vm; LICENSES=LICENSE ;;
    2021) TW_COMMIT=1d8a9c12db47c029feeacab2d9b1a49923253271; TW_REPO=TurboWarp+scratch-vm; LICENSES="COPYING COPYING.LESSER" ;;
    *) echo "install.sh: TW_ANCHOR_VARIANT=$VARIANT: known variants are 2024 and 2021" >&2; exit 2 ;;
esac
DEST="tw/$VARIANT/scratch-vm"

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
        git_dir="${TW_VM_GIT:-/work/.mirror/$TW_REPO/repo}"
        if ! git --git-dir="$git_dir" cat-file -e "$TW_COMMIT^{commit}" 2>/dev/null; then
            echo "install.sh: commit $TW_COMMIT ($VARIANT) not found in $git_dir;" >&2
            echo "  set TW_VM_GIT to a clone or mirror of $(echo "$TW_REPO" | tr + /), or TW_VM_TAR to a tarball" >&2
            rm -rf "$DEST.tmp"
            exit 1
        fi
        git --git-dir="$git_dir" archive "$TW_COMMIT" src package.json $LICENSES | tar -x -C "$DEST.tmp"
    fi
    [ -f "$DEST.tmp/src/compiler/jsexecute.js" ] || { echo "install.sh: not a TurboWarp scratch-vm tree" >&2; exit 1; }
    echo "$TW_COMMIT" > "$DEST.tmp/.tw-commit"
    rm -rf "$DEST"
    mv "$DEST.tmp" "$DEST"
    echo "TurboWarp scratch-vm @ $TW_COMMIT installed in $(pwd)/$DEST"
fi
TW_ANCHOR_VARIANT="$VARIANT" node -e "require('./lib/tw-path').check(); console.log('turbowarp anchor ($VARIANT) ready')"
