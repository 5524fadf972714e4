#!/bin/sh
# Round trip of generated suites through the real Whisker (issue 22, acceptance 1).
#
#   scripts/whisker-roundtrip.sh [--steps 30000] [--seed 1] [--algorithm mio] [--jobs N]
#                                [--out DIR] [--only REGEX] [--reuse] [--dump-state] [--offline]
#                                [PROJECT.sb3 | FOLDER ...]
#
# 1. builds clowder (release; CLOWDER_ROUNDTRIP_PROFILE=dev for a dev build);
# 2. exports a suite for every project (default: the 16 games of <corpora>/whisker-rq1) with
#    `clowder gen --out` (MIO, seed 1, 30 000 steps);
# 3. runs each suite in the real Whisker (branch emse22) with the whisker-oracle's own run.sh
#    ($WHISKER_ORACLE, default <corpora>/../tools/whisker-oracle; build it first with its
#    build.sh), at the same seed and acceleration 10;
# 4. prints the pass rate per game and, for every test that did not pass, its first failure
#    (the runner is given a copy of each suite whose tests log the error they throw).
#
# --reuse keeps suites already exported in --out and the verdicts Whisker gave on them; --cap S
# stops a Whisker run after S wall seconds (default 600), --tries N. A Whisker run that left no
# verdicts (page not loaded in time, CSV not written on a loaded machine) is tried up to 3 times;
# without a CSV the verdicts come from a complete TAP text in its log.
# Everything lands in --out (default /tmp/whisker-roundtrip): per game the clowder run
# (tests.js, suite.json, result.json) and whisker/ (Whisker's CSV and log).
# --offline: Whisker's browser fails every network request at once, so its text to speech never
# gets a sound and `speak` never ends (without it, the page waits on each failing request and
# games with text to speech get no verdict here); projects with such blocks are generated with
# `--param whisker_offline_speech=true`, which runs `speak` the same way.
# Exit status 0 when every exported test passed.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORPORA=${CLOWDER_CORPORA:-$ROOT/../shared/corpora}
ORACLE=${WHISKER_ORACLE:-$CORPORA/../tools/whisker-oracle}
[ -x "$ORACLE/run.sh" ] || { echo "whisker-roundtrip.sh: no whisker-oracle at $ORACLE (set WHISKER_ORACLE)" >&2; exit 2; }

PROFILE=${CLOWDER_ROUNDTRIP_PROFILE:-release}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
if [ -z "${CLOWDER:-}" ]; then
    echo "== building clowder ($PROFILE)" >&2
    if [ "$PROFILE" = release ]; then
        (cd "$ROOT" && cargo build --release -p clowder-cli) >&2
    else
        (cd "$ROOT" && cargo build -p clowder-cli) >&2
        PROFILE=debug
    fi
    CLOWDER=$TARGET/$PROFILE/clowder
fi

exec python3 "$ROOT/scripts/whisker_roundtrip.py" --clowder "$CLOWDER" --oracle "$ORACLE" \
    --corpora "$CORPORA" "$@"
