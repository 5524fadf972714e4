#!/usr/bin/env bash
# Extracts the Itch test plans clowder's tests may use, with their projects, into a folder
# outside the repository (Itch's licence is "all rights reserved": its plans are used from a
# path, never copied into clowder):
#
#   scripts/itch-plans.sh DIR [ITCH_GIT]     then   CLOWDER_ITCH=DIR cargo test -p clowder-suites --test itch_plans
#
# ITCH_GIT is a clone (or bare mirror) of https://github.com/scratch-ed/itch; without it the
# repository is cloned into DIR/.itch.git. Only the VPW-2017 plans 01, 04, 06, 07 (and its simple
# variant), 08, 09, 13 and `anything-order` are taken: the plans `agario`,
# `laserjets-level-5`, `03_teken_een_vierkant` and `11_vang_de_appels` are reserved for
# acceptance checks and are never extracted.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 DIR [ITCH_GIT]" >&2
    exit 2
fi
dir=$1
mkdir -p "$dir"
git_dir=${2:-}
if [ -z "$git_dir" ]; then
    git_dir="$dir/.itch.git"
    [ -d "$git_dir" ] || git clone --quiet --bare https://github.com/scratch-ed/itch "$git_dir"
fi
assets=packages/test-utils/test/assets
files=(
    01_mad_hatter.sb3 01_mad_hatter_test.js
    04_teken_een_driehoek.sb3 04_teken_een_driehoek_test.js
    06_voetballende_kat.sb3 06_voetballende_kat_test.js
    07_heksenjacht.sb3 07_heksenjacht_test.js 07_heksenjacht_eenvoudig_test.js
    08_op_bezoek_bij_devin.sb3 08_op_bezoek_bij_devin_test.js
    09_flauw_mopje.sb3 09_flauw_mopje_test.js
    13_cijfersom.sb3 13_cijfersom_test.js
    anything-empty-stack.sb3 anything-order.js
)
for f in "${files[@]}"; do
    git --git-dir="$git_dir" show "HEAD:$assets/$f" > "$dir/$f"
done
echo "extracted ${#files[@]} files into $dir"
