#!/usr/bin/env bash
# One generation run per project with two clowder binaries, side by side (issue 16, acceptance 2):
#
#   scripts/gen-side-by-side.sh OLD_BIN NEW_BIN [--algorithm mio] [--seed 1] [--steps 180000] PROJECT…
#
# For each project it runs `OLD_BIN gen` and `NEW_BIN gen` one after the other (alternating which
# goes first, so slow drifts of a shared machine hit both alike), and prints one TSV row:
# project, old wall s, new wall s, old/new, old and new coverage, whether the digests are equal,
# and the new run's work and limit. Then the median and maximum of each column. Pass `-` as
# OLD_BIN to time the new binary alone. Wall times come from the runs' own `… s` figure.
set -euo pipefail
old="$1"; new="$2"; shift 2
algorithm=mio; seed=1; steps=180000
while [ $# -gt 0 ]; do
  case "$1" in
    --algorithm) algorithm="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: $0 OLD_BIN NEW_BIN [--algorithm A] [--seed S] [--steps N] PROJECT…" >&2; exit 2; }

# gen BIN PROJECT → "seconds coverage digest work limit"
gen() {
  local out
  out=$("$1" gen "$2" --algorithm "$algorithm" --seed "$seed" --budget-steps "$steps" 2>&1) || { echo "error - - - -"; return; }
  awk '
    / coverage / { for (i = 1; i <= NF; i++) { if ($i == "coverage" && cov == "") cov = $(i + 1); if ($i == "s" && $(i - 1) ~ /^[0-9.]+$/) secs = $(i - 1) } }
    /^digest / { dig = $2 }
    /^work / { work = $2; lim = ($0 ~ /limit/) ? "limit" : "-" }
    END { print secs, cov, dig, (work == "" ? "-" : work), (lim == "" ? "-" : lim) }' <<<"$out"
}

rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
printf 'project\told_s\tnew_s\tratio\told_cov\tnew_cov\tsame_digest\tnew_work\tlimit\n'
i=0
for p in "$@"; do
  name=$(basename "$p"); name="${name%.sb3}"; name="${name%.json}"
  if [ "$old" = - ]; then
    read -r ns nc nd nw nl < <(gen "$new" "$p"); os=-; oc=-; od=-
  elif [ $((i % 2)) -eq 0 ]; then
    read -r os oc od _ _ < <(gen "$old" "$p"); read -r ns nc nd nw nl < <(gen "$new" "$p")
  else
    read -r ns nc nd nw nl < <(gen "$new" "$p"); read -r os oc od _ _ < <(gen "$old" "$p")
  fi
  ratio=$(awk -v a="$os" -v b="$ns" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.1f", a / b; else print "-" }')
  same=$([ "$od" = "$nd" ] && echo yes || echo no)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$os" "$ns" "$ratio" "$oc" "$nc" "$same" "$nw" "$nl"
  i=$((i + 1))
done | tee "$rows"
# median and maximum of a numeric column of the rows (old or new seconds)
stat() {
  cut -f"$1" "$rows" | grep -E '^[0-9.]+$' | sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%s\t%s\n", v[int((NR + 1) / 2)], v[NR]; else printf "%s\t%s\n", "-", "-" }'
}
read -r om ox < <(stat 2); read -r nm nx < <(stat 3)
printf 'median\t%s\t%s\nmax\t%s\t%s\n' "$om" "$nm" "$ox" "$nx"
