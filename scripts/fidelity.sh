#!/bin/sh
# Differential fidelity of clowder's VM against the real scratch-vm (issue 3).
#
#   scripts/fidelity.sh [--pass random-sample,whisker-rq1,whisker-rq1+inputs] [--only REGEX]
#                       [--jobs N] [--steps 300] [--seed 1] [--json FILE]
#
# 1. installs the fidelity oracle (scratch-vm 5.0.300) if needed: copies
#    $CLOWDER_FIDELITY (default: <corpora>/../tools/fidelity, read-only) into a
#    writable cache folder and runs its install.sh (needs node and the npm
#    registry once); CLOWDER_FIDELITY_DIR may name an already installed copy;
# 2. builds clowder (release; CLOWDER_FIDELITY_PROFILE=dev for a dev build);
# 3. runs both VMs on every project of random-sample/ and whisker-rq1/ (300 steps,
#    seed 1, green flag at step 0) and on whisker-rq1/ with generated input files,
#    compares the traces with the oracle's compare.py (exact) and prints the match
#    rate of each pass and, for each mismatch, its first diverging step and field.
#
# Reference traces are cached in $CLOWDER_FIDELITY_CACHE (default
# ~/.cache/clowder-fidelity), keyed by project hash, seed, steps and input file,
# so re-runs only run our VM. Exit status 0 = every project identical.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORPORA=${CLOWDER_CORPORA:-$ROOT/../shared/corpora}
CACHE=${CLOWDER_FIDELITY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/clowder-fidelity}
SRC=${CLOWDER_FIDELITY:-$CORPORA/../tools/fidelity}
mkdir -p "$CACHE"

if [ -n "${CLOWDER_FIDELITY_DIR:-}" ]; then
    ORACLE=$CLOWDER_FIDELITY_DIR
else
    ORACLE=$CACHE/oracle
    if [ ! -f "$ORACLE/node_modules/scratch-vm/package.json" ] || \
       ! cmp -s "$SRC/package-lock.json" "$ORACLE/package-lock.json"; then
        [ -d "$SRC" ] || { echo "fidelity.sh: no oracle at $SRC (set CLOWDER_FIDELITY)" >&2; exit 2; }
        echo "== installing the fidelity oracle into $ORACLE"
        mkdir -p "$ORACLE"
        (cd "$SRC" && tar --exclude=node_modules -cf - .) | (cd "$ORACLE" && tar -xf -)
        (cd "$ORACLE" && sh ./install.sh)
    fi
fi

PROFILE=${CLOWDER_FIDELITY_PROFILE:-release}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
echo "== building clowder ($PROFILE)"
if [ "$PROFILE" = release ]; then
    (cd "$ROOT" && cargo build --release -p clowder-cli)
else
    (cd "$ROOT" && cargo build -p clowder-cli)
    PROFILE=debug
fi

exec python3 "$ROOT/scripts/fidelity.py" --oracle "$ORACLE" --clowder "$TARGET/$PROFILE/clowder" \
    --corpora "$CORPORA" --cache "$CACHE" "$@"
