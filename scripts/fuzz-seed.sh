#!/usr/bin/env bash
# Seeds the cargo-fuzz corpora (fuzz/corpus/, git-ignored) from small files of the
# shared corpora: project.json files up to 32 KB for load_json and run_project, .sb3
# files up to 256 KB for load_zip. Never copies anything into tracked files.
set -euo pipefail
cd "$(dirname "$0")/.."
corpora="${CLOWDER_CORPORA:-../shared/corpora}"
for t in load_json run_project load_zip; do mkdir -p "fuzz/corpus/$t"; done
find "$corpora" -type f -name '*.json' -size -32k -print0 |
    while IFS= read -r -d '' f; do
        h=$(sha1sum "$f" | cut -c1-16)
        cp "$f" "fuzz/corpus/load_json/$h.json"
        cp "$f" "fuzz/corpus/run_project/$h.json"
    done
find "$corpora" -type f -name '*.sb3' -size -256k -print0 |
    while IFS= read -r -d '' f; do
        cp "$f" "fuzz/corpus/load_zip/$(sha1sum "$f" | cut -c1-16).sb3"
    done
for t in load_json run_project load_zip; do echo "$t: $(ls "fuzz/corpus/$t" | wc -l) seeds"; done
