#!/bin/sh
# Runs each test of suites/tests/data/WhiskerProbe.js alone (a suite of that one test) on
# WhiskerProbe.sb3 in the real Whisker (the whisker-oracle's run.sh, emse22, seed 1,
# acceleration 10), then the whole suite in clowder (which runs every test fresh), and prints
# what each signature test saw in Whisker (`SIG <test> <json>`: the suite's EXPECTED), what
# each test threw there, and both runners' verdicts (suites/tests/whisker_verdicts.rs asserts
# them). Run on an idle machine.
#
#   scripts/whisker-probe.sh [OUT_DIR]
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORPORA=${CLOWDER_CORPORA:-$ROOT/../shared/corpora}
ORACLE=${WHISKER_ORACLE:-$CORPORA/../tools/whisker-oracle}
OUT=${1:-/tmp/whisker-probe}
CLOWDER=${CLOWDER:-$ROOT/target/release/clowder}
DATA=$ROOT/suites/tests/data
mkdir -p "$OUT"
SUITE=$DATA/WhiskerProbe.js
# The test functions in module.exports, in order.
FNS=$(sed -n 's/^ *{test: \([A-Za-z0-9_]*\), name: .*/\1/p' "$SUITE")
echo "# the real Whisker, each test alone"
for f in $FNS; do
    sed '/^module.exports = \[/,$d' "$SUITE" > "$OUT/$f.js"
    echo "module.exports = [{test: $f, name: 'alone $f', description: '', categories: []}];" >> "$OUT/$f.js"
    "$ORACLE/run.sh" "$DATA/WhiskerProbe.sb3" "$OUT/$f.js" "$OUT/whisker-$f" 1 10 > /dev/null 2>&1 || true
    grep -o 'SIG [a-z]* .*\|PROBE-THROW .*' "$OUT/whisker-$f/whisker.out" | sed 's/ color: .*$//' | sort -u
    printf '%s: ' "$f"; tail -1 "$OUT/whisker-$f/whisker.csv" 2>/dev/null | cut -d, -f5 || echo "no verdict"
done
echo "# clowder"
"$CLOWDER" test "$SUITE" "$DATA/WhiskerProbe.sb3" --seed 1 --out "$OUT/clowder" > "$OUT/clowder.tap" 2>&1 || true
grep -E '^(not )?ok [0-9]+ - ' "$OUT/clowder.tap"
