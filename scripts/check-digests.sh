#!/usr/bin/env bash
# Golden digests: compares a study's run digests with a committed list.
#
#   scripts/check-digests.sh RESULTS_DIR DIGESTS_FILE           check (exit 1 on a difference)
#   scripts/check-digests.sh --write RESULTS_DIR DIGESTS_FILE   (re)write the list
#
# RESULTS_DIR is a study's export folder (`<output>/<name>/`: runs.csv and provenance.csv).
# The list holds one line per run, `run_id digest status work project algorithm seed`, sorted
# by run id, after a header that names the engine version the runs were made with. The work
# count is there because the digest does not cover it, and a change of it is a change of
# results too (the work cap reads it).
#
# A run's id includes the engine version (vm/src/lib.rs ENGINE_VERSION), so a version bump
# changes every id: then the list cannot be compared and the script says to regenerate it
# (exit 0). With the same engine version every run must have its listed digest and status:
# anything else (digest, status or work) is a change of results without a version bump, and
# the script fails.
set -euo pipefail

write=0
if [ "${1:-}" = "--write" ]; then
    write=1
    shift
fi
if [ $# -ne 2 ]; then
    echo "usage: $0 [--write] RESULTS_DIR DIGESTS_FILE" >&2
    exit 2
fi
dir=$1
list=$2
runs="$dir/runs.csv"
prov="$dir/provenance.csv"
for f in "$runs" "$prov"; do
    if [ ! -s "$f" ]; then
        echo "check-digests: $f is missing or empty" >&2
        exit 2
    fi
done

# Prints the named columns of an RFC 4180 CSV (quoted fields, doubled quotes, quoted line
# breaks), one row per line, separated by single spaces (the values used here have none).
csv_columns() {
    awk -v want="$2" '
        function flush_row(   i, line) {
            if (nf == 0) return
            if (!header_done) {
                for (i = 1; i <= nf; i++) pos[field[i]] = i
                n = split(want, names, ",")
                for (i = 1; i <= n; i++) {
                    if (!(names[i] in pos)) { print "check-digests: no column " names[i] > "/dev/stderr"; bad = 1; exit 2 }
                }
                header_done = 1
            } else {
                line = ""
                for (i = 1; i <= n; i++) line = line (i > 1 ? " " : "") field[pos[names[i]]]
                print line
            }
            nf = 0
        }
        {
            rec = (inq ? rec "\n" : "") $0
            # Parse the record char by char; a quoted field may continue on the next line.
            inq = 0; nf = 0; cur = ""; i = 1; L = length(rec)
            while (i <= L) {
                c = substr(rec, i, 1)
                if (inq) {
                    if (c == "\"") {
                        if (substr(rec, i + 1, 1) == "\"") { cur = cur "\""; i++ } else inq = 0
                    } else cur = cur c
                } else if (c == "\"") inq = 1
                else if (c == ",") { field[++nf] = cur; cur = "" }
                else if (c != "\r") cur = cur c
                i++
            }
            if (inq) next
            field[++nf] = cur
            flush_row()
            rec = ""
        }
        END { if (inq && !bad) { print "check-digests: unterminated quote" > "/dev/stderr"; exit 2 } }
    ' "$1"
}

engines=$(csv_columns "$prov" engine_version | sort -u)
if [ "$(printf '%s\n' "$engines" | wc -l)" -ne 1 ] || [ -z "$engines" ]; then
    echo "check-digests: expected one engine version in $prov, found: $engines" >&2
    exit 2
fi
engine=$engines
current=$(mktemp)
trap 'rm -f "$current"' EXIT
csv_columns "$runs" run_id,digest,status,work,project,algorithm,seed | LC_ALL=C sort > "$current"

if [ "$write" -eq 1 ]; then
    {
        echo "# Golden digests (scripts/check-digests.sh): run_id digest status work project algorithm seed"
        echo "# engine $engine"
        cat "$current"
    } > "$list"
    echo "check-digests: wrote $(wc -l < "$current") runs of engine $engine to $list"
    exit 0
fi

if [ ! -f "$list" ]; then
    echo "check-digests: no list $list (write it with: $0 --write $dir $list)" >&2
    exit 1
fi
listed_engine=$(sed -n 's/^# engine //p' "$list" | head -n 1)
if [ "$listed_engine" != "$engine" ]; then
    echo "check-digests: $list was made with engine '$listed_engine', these runs with '$engine'."
    echo "check-digests: the engine version changed, so every run id did: the list cannot be compared."
    echo "check-digests: REGENERATE it and commit the new list with the version bump:"
    echo "    $0 --write $dir $list"
    exit 0
fi

expected=$(grep -v '^#' "$list" | LC_ALL=C sort)
if [ "$expected" = "$(cat "$current")" ]; then
    echo "check-digests: all $(wc -l < "$current") runs match $list (engine $engine)"
    exit 0
fi
echo "check-digests: FAILED: the runs differ from $list with the same engine version ($engine)." >&2
echo "check-digests: a change that alters any run's result must bump ENGINE_VERSION (vm/src/lib.rs)." >&2
echo "check-digests: differences (- listed, + now):" >&2
diff <(printf '%s\n' "$expected") "$current" | grep '^[<>]' | sed 's/^</-/; s/^>/+/' >&2 || true
exit 1
