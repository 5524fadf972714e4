#!/usr/bin/env bash
# VM speed, side by side with the reference scratch-vm (fidelity oracle):
#   scripts/bench-vm.sh [clowder bench vm options, e.g. --count 60 --out bench-vm.tsv]
# Builds clowder in release, installs the oracle's scratch-vm once (needs Node.js
# and the npm registry) and runs `clowder bench vm`. Environment:
#   CLOWDER_CORPORA  corpora folder (default ../shared/corpora)
#   CLOWDER_ORACLE   fidelity oracle folder (default ../shared/tools/fidelity); when it
#                    has no node_modules/, it is copied to target/oracle-fidelity and
#                    installed there. Set CLOWDER_ORACLE=none to measure our VM only.
set -euo pipefail
cd "$(dirname "$0")/.."

corpora="${CLOWDER_CORPORA:-../shared/corpora}"
oracle="${CLOWDER_ORACLE:-../shared/tools/fidelity}"
target_dir="${CARGO_TARGET_DIR:-target}"

cargo build --release --locked -p clowder-cli
clowder="$target_dir/release/clowder"

oracle_args=()
if [ "$oracle" != none ]; then
    if [ ! -d "$oracle/node_modules/scratch-vm" ]; then
        copy="$target_dir/oracle-fidelity"
        if [ ! -d "$copy/node_modules/scratch-vm" ]; then
            mkdir -p "$copy"
            cp -R "$oracle"/. "$copy"/
            chmod -R u+w "$copy"
            (cd "$copy" && ./install.sh)
        fi
        oracle="$copy"
    fi
    oracle_args=(--oracle "$oracle")
fi

exec "$clowder" bench vm --corpora "$corpora" "${oracle_args[@]}" "$@"
