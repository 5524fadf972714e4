#!/usr/bin/env bash
# Differential geometry check (issue 7, acceptance 4): the VM's CPU renderer against the real
# scratch-render (WebGL in headless Chromium, shared/tools/render-oracle), question by question.
#
#   scripts/geometry.sh [--scenes N] [--seed S] [--only SUBSTRING] [--show N] [--pairs FILE]
#                       [--folders "whisker-rq1 whisker-integration"] [--tolerance PX]
#
# For every whisker-rq1 and whisker-integration project with costumes it generates N random
# scenes (gen_queries.py PROJECT N SEED, default 200 1), asks the oracle (answers cached outside
# the repository, keyed by project, queries and oracle version) and `clowder vm geometry-query`,
# and prints the agreement per question kind and per project. Positions and bounds agree within
# --tolerance px (default 0.5; 0.001 shows the sub-pixel differences that decide an edge bounce or
# a fence at a stage border). --folders names the corpus folders to sample (e.g. add codeclub). --pairs keeps every (question, oracle answer, our answer) row as JSON lines in FILE.
# Needs python3, node/npm and Chromium: Debian's `chromium` is installed with apt-get when
# missing (root only), and the oracle's npm packages are installed into a writable copy.
#
# Environment: CLOWDER_CORPORA (default ../shared/corpora), RENDER_ORACLE (default
# ../shared/tools/render-oracle), CLOWDER_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/clowder),
# CHROMIUM (default /usr/bin/chromium), CLOWDER_BIN (a prebuilt clowder binary).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
corpora="${CLOWDER_CORPORA:-$repo/../shared/corpora}"
oracle_src="${RENDER_ORACLE:-$repo/../shared/tools/render-oracle}"
cache="${CLOWDER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/clowder}"
chromium="${CHROMIUM:-/usr/bin/chromium}"
scenes=200
seed=1
only=""
show=20
keep_pairs=""
folders="whisker-rq1 whisker-integration"
tolerance=0.5
while [ $# -gt 0 ]; do
  case "$1" in
    --scenes) scenes="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --show) show="$2"; shift 2 ;;
    --pairs) keep_pairs="$2"; shift 2 ;;
    --folders) folders="$2"; shift 2 ;;
    --tolerance) tolerance="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

[ -d "$corpora" ] || { echo "SKIP: corpora not found at $corpora (set CLOWDER_CORPORA)"; exit 0; }
[ -f "$oracle_src/query.js" ] || { echo "render oracle not found at $oracle_src (set RENDER_ORACLE)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 is needed" >&2; exit 1; }
command -v node >/dev/null && command -v npm >/dev/null || { echo "node and npm are needed" >&2; exit 1; }

# Chromium (Debian package), as the oracle's README says.
if [ ! -x "$chromium" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing chromium with apt-get…" >&2
    apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null
  fi
  [ -x "$chromium" ] || { echo "Chromium not found at $chromium (apt-get install -y chromium, or set CHROMIUM)" >&2; exit 1; }
fi
export CHROMIUM="$chromium"

# A writable copy of the oracle with its pinned npm packages.
oracle="$cache/render-oracle"
mkdir -p "$cache/geometry-oracle"
stamp="$(cat "$oracle_src/package.json" "$oracle_src/package-lock.json" "$oracle_src/query.js" \
  "$oracle_src/oracle-page.js" "$oracle_src/gen_queries.py" | sha256sum | cut -c1-16)"
if [ ! -f "$oracle/.stamp-$stamp" ]; then
  echo "preparing the render oracle in $oracle…" >&2
  rm -rf "$oracle"
  mkdir -p "$oracle"
  cp "$oracle_src"/*.js "$oracle_src"/*.json "$oracle_src"/*.py "$oracle"/
  (cd "$oracle" && npm install --no-audit --no-fund >/dev/null 2>&1) || { echo "npm install failed in $oracle" >&2; exit 1; }
  touch "$oracle/.stamp-$stamp"
fi

# Our side.
if [ -n "${CLOWDER_BIN:-}" ]; then
  bin="$CLOWDER_BIN"
else
  (cd "$repo" && cargo build --release -q -p clowder-cli)
  bin="${CARGO_TARGET_DIR:-$repo/target}/release/clowder"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
pairs="$work/pairs.jsonl"
: > "$pairs"
projects=()
for folder in $folders; do
  projects+=("$corpora/$folder"/*.sb3)
done
for project in "${projects[@]}"; do
  [ -f "$project" ] || continue
  name="$(basename "$(dirname "$project")")/$(basename "$project" .sb3)"
  case "$name" in *"$only"*) ;; *) continue ;; esac
  queries="$work/queries.json"
  if ! python3 "$oracle/gen_queries.py" "$project" "$scenes" "$seed" > "$queries" 2>/dev/null; then
    echo "skip $name (no sprites)" >&2
    continue
  fi
  key="$(cat "$project" "$queries" | sha256sum | cut -c1-16)-$stamp"
  answers="$cache/geometry-oracle/${name//\//--}.$key.jsonl"
  if [ ! -s "$answers" ]; then
    if ! (cd "$oracle" && node query.js "$project" "$queries" > "$answers.tmp" 2> "$work/oracle.log"); then
      echo "oracle failed on $name:" >&2
      tail -5 "$work/oracle.log" >&2
      rm -f "$answers.tmp"
      exit 1
    fi
    mv "$answers.tmp" "$answers"
  fi
  "$bin" vm geometry-query "$project" "$queries" > "$work/mine.jsonl" 2> "$work/mine.log" || {
    echo "clowder vm geometry-query failed on $name:" >&2
    tail -5 "$work/mine.log" >&2
    exit 1
  }
  python3 - "$name" "$answers" "$work/mine.jsonl" "$queries" >> "$pairs" <<'PY'
import json, sys
name, oracle, mine, queries = sys.argv[1:5]
qs = json.load(open(queries))
got = {}
for line in open(mine):
    o = json.loads(line)
    got[(o["scene"], o["q"])] = o["answer"]
for line in open(oracle):
    o = json.loads(line)
    q = None
    if o["q"] is not None and o["scene"] < len(qs):
        q = qs[o["scene"]]["questions"][o["q"]]
    print(json.dumps({"project": name, "scene": o["scene"], "q": o["q"], "kind": o["kind"], "question": q,
                      "oracle": o["answer"], "mine": got.get((o["scene"], o["q"]), "<missing>")}))
PY
done

[ -z "$keep_pairs" ] || cp "$pairs" "$keep_pairs"

python3 - "$pairs" "$show" "$tolerance" <<'PY'
import collections, json, sys
pairs, show, tol = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])

def equal(kind, a, b):
    if isinstance(a, dict) and "error" in a:
        return isinstance(b, dict) and "error" in b
    if isinstance(b, dict) and "error" in b:
        return False
    if kind in ("bounds", "bounds_for_bubble"):
        return isinstance(b, dict) and all(abs(a[k] - b[k]) <= tol for k in ("left", "right", "top", "bottom"))
    if kind == "fenced":
        return isinstance(b, list) and abs(a[0] - b[0]) <= tol and abs(a[1] - b[1]) <= tol
    return a == b

kinds, projects = collections.Counter(), collections.Counter()
kinds_ok, projects_ok = collections.Counter(), collections.Counter()
bad = []
for line in open(pairs):
    o = json.loads(line)
    ok = equal(o["kind"], o["oracle"], o["mine"])
    kinds[o["kind"]] += 1
    projects[o["project"]] += 1
    kinds_ok[o["kind"]] += ok
    projects_ok[o["project"]] += ok
    if not ok:
        bad.append(o)
total, agree = sum(kinds.values()), sum(kinds_ok.values())
if total == 0:
    print("no questions answered")
    sys.exit(1)
print(f"{'question kind':24s} {'agree':>8s} {'total':>8s} {'share':>8s}")
for k in sorted(kinds):
    print(f"{k:24s} {kinds_ok[k]:8d} {kinds[k]:8d} {100 * kinds_ok[k] / kinds[k]:7.2f}%")
print(f"{'ALL':24s} {agree:8d} {total:8d} {100 * agree / total:7.2f}%")
# Bubble bounds only place speech bubbles (no block reads them); they take the hull points in
# the top 8 px, so one anti-aliased pixel more or less at the top moves them most.
t2, a2 = total - kinds["bounds_for_bubble"], agree - kinds_ok["bounds_for_bubble"]
if t2:
    print(f"{'ALL but bounds_for_bubble':24s} {a2:8d} {t2:8d} {100 * a2 / t2:7.2f}%")
print()
worst = sorted(projects, key=lambda p: projects_ok[p] / projects[p])
print("projects (worst first):")
for p in worst:
    print(f"  {p:70s} {100 * projects_ok[p] / projects[p]:7.2f}%  ({projects[p] - projects_ok[p]} of {projects[p]} differ)")
below = [p for p in projects if projects_ok[p] / projects[p] < 0.99]
print(f"\n{len(projects)} projects, {len(below)} below 99 %")
by_kind = collections.defaultdict(list)
for o in bad:
    by_kind[o["kind"]].append(o)
if show and bad:
    print(f"\ndisagreements (up to {show} per kind):")
    for k in sorted(by_kind):
        print(f"  {k}: {len(by_kind[k])}")
        for o in by_kind[k][:show]:
            print(f"    {o['project']} scene {o['scene']} q {o['q']}: oracle {json.dumps(o['oracle'])} mine {json.dumps(o['mine'])}")
PY
