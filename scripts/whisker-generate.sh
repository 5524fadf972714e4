#!/bin/sh
# Test generation with the real Whisker (branch emse22, as built by the whisker-oracle's build.sh):
# MIO with the study's configuration, acceleration 10, for each seed and project. Feeds
# scripts/whisker_replay.py (Whisker's suites replayed in clowder) and
# scripts/whisker_side_by_side.py (the two generators side by side).
#
#   scripts/whisker-generate.sh [--seeds "1 2 3"] [--budget-ms 600000 | --evaluations N]
#                               [--search-only] [--out DIR] [PROJECT.sb3 | FOLDER ...]
#
# Default projects: the 16 games of <corpora>/whisker-rq1. The budget replaces the study's
# stopping condition (<corpora>/whisker-configs/mio.json: fixedTime 6 000 000 ms, or optimal):
# --budget-ms is Whisker's fixedTime, which Whisker divides by the acceleration and measures on
# the wall clock (600 000 = 60 s = 600 Scratch-seconds = 18 000 steps only while Whisker keeps
# up with 10x real time: on a loaded machine it runs fewer steps); --evaluations is Whisker's
# `evaluations` condition (fitness evaluations, independent of the machine). --search-only turns
# off the suite's minimisation and assertions (`"minimize": false, "assertions": false`): they
# run after the search and change no coverage, but Whisker's minimisation re-runs every test
# event by event (2 minutes of a 3-minute run on Fangen). Per project and
# seed, DIR/<project>/seed<N>/ gets tests.js (Whisker's suite), stats.csv (Whisker's statistics
# row), out.txt (its log) and wall.txt (exit status, wall seconds, CPU seconds of the servant
# process, busy CPU seconds of the whole machine during the run, load average). Finished
# (project, seed) pairs are skipped, so a sweep resumes.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORPORA=${CLOWDER_CORPORA:-$ROOT/../shared/corpora}
WROOT=${WHISKER_ROOT:-$HOME/.cache/whisker-oracle}
SERVANT=$WROOT/emse22/servant/servant.js
[ -f "$SERVANT" ] || { echo "whisker-generate.sh: no Whisker build in $WROOT (run the whisker-oracle's build.sh)" >&2; exit 2; }
SEEDS="1 2 3"; BUDGET=600000; EVALS=""; SEARCH_ONLY=""; OUT=${OUT:-/tmp/whisker-generated}
while [ $# -gt 0 ]; do
    case $1 in
        --seeds) SEEDS=$2; shift 2 ;;
        --budget-ms) BUDGET=$2; shift 2 ;;
        --evaluations) EVALS=$2; shift 2 ;;
        --search-only) SEARCH_ONLY=1; shift ;;
        --out) OUT=$2; shift 2 ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        *) break ;;
    esac
done
[ $# -gt 0 ] || set -- "$CORPORA/whisker-rq1"
mkdir -p "$OUT/work"
OUT=$(cd "$OUT" && pwd)
if [ -n "$EVALS" ]; then CFG=$OUT/mio-evals$EVALS.json; else CFG=$OUT/mio-$BUDGET.json; fi
python3 - "$CORPORA/whisker-configs/mio.json" "$CFG" "$BUDGET" "$EVALS" "$SEARCH_ONLY" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
if sys.argv[5]:
    c["minimize"] = False
    c["assertions"] = False
conds = c["stoppingCondition"]["conditions"]
if sys.argv[4]:
    conds = [x for x in conds if x.get("type") != "fixedTime"] + [{"type": "evaluations", "max-evaluations": int(sys.argv[4])}]
else:
    for x in conds:
        if x.get("type") == "fixedTime":
            x["duration"] = int(sys.argv[3])
c["stoppingCondition"]["conditions"] = conds
json.dump(c, open(sys.argv[2], "w"), indent=2)
PY
export CHROME_BIN=${CHROME_BIN:-/usr/bin/chromium} NODE_ENV=production
export WHISKER_EXTRA_CHROME_ARGS="--use-angle=swiftshader --enable-unsafe-swiftshader"
# Busy CPU time of the whole machine (jiffies): Chromium's processes are not all waited for by
# the servant, so /usr/bin/time misses most of the browser's CPU; on a quiet machine the
# machine-wide difference is the run's CPU time.
busy_jiffies() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
projects=$(for p in "$@"; do if [ -d "$p" ]; then ls "$p"/*.sb3; else echo "$p"; fi; done)
cd "$OUT/work"   # the servant's scratch folder (.tmpWorkingDir) is the working directory
for seed in $SEEDS; do
    for p in $projects; do
        p=$(realpath "$p"); g=$(basename "$p" .sb3); d="$OUT/$g/seed$seed"
        [ -f "$d/tests.js" ] && continue
        mkdir -p "$d"
        # Up to 3 tries: Chromium sometimes does not load Whisker's page within puppeteer's 30 s
        # on a loaded machine (no search ran then).
        for try in 1 2 3; do
            load0=$(cut -d' ' -f1 /proc/loadavg); busy0=$(busy_jiffies)
            rc=0
            /usr/bin/time -f "%e %U %S" -o "$d/time.txt" timeout 7200 node "$SERVANT" \
                -u "$WROOT/emse22/whisker-web/dist/index.html" -s "$p" -c "$CFG" -g "$d/" \
                -a 10 -d -k -v "$d/stats.csv" -se "$seed" > "$d/out.txt" 2>&1 || rc=$?
            load1=$(cut -d' ' -f1 /proc/loadavg); busy1=$(busy_jiffies)
            grep -q "Navigation timeout" "$d/out.txt" && [ ! -f "$d/tests.js" ] || break
        done
        read -r wall user sys <<EOF2
$(tail -1 "$d/time.txt")
EOF2
        echo "rc=$rc wall=$wall cpu=$(echo "$user + $sys" | bc) machine_cpu=$(echo "scale=2; ($busy1 - $busy0) / $(getconf CLK_TCK)" | bc) load_start=$load0 load_end=$load1 tries=$try" > "$d/wall.txt"
        echo "$g seed $seed: $(cat "$d/wall.txt")"
    done
done
