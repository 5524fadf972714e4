#!/bin/sh
# Exported suites against clowder's own Whisker runner: a generator/runner consistency check.
#
#   scripts/export-selfcheck.sh [--seeds 1-3] [--algorithm mio] [--steps 30000] [--jobs N]
#                               [--out DIR] PROJECT.sb3 | FOLDER ...
#
# For every project and seed, `clowder gen --out` exports a suite, and `clowder test` runs it
# on the same project at the same seed, with the tests sharing one VM (as in Whisker) and with
# --fresh-tests. Every assertion was recorded from clowder's own execution, so every exported
# test must pass in both; each failure is printed with its first failed check. No real Whisker
# is needed (scripts/whisker-roundtrip.sh is the check against it). Exit status 0 when every
# exported test passed.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
if [ -z "${CLOWDER:-}" ]; then
    echo "== building clowder (release)" >&2
    (cd "$ROOT" && cargo build --release -p clowder-cli) >&2
    CLOWDER=$TARGET/release/clowder
fi
exec python3 "$ROOT/scripts/export-selfcheck.py" --clowder "$CLOWDER" "$@"
