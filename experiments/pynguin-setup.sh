#!/usr/bin/env bash
# Set-up of experiments/pynguin-smoke.toml: installs Pynguin (pinned, with pinned dependencies:
# pynguin-requirements.txt) into a virtual environment in the study's results folder.
# clowder runs this before the study (engine.setup) with CLOWDER_RESULTS set; it is idempotent:
# an environment that already has the pinned version is kept.
set -euo pipefail
results="${CLOWDER_RESULTS:?run by clowder, or set CLOWDER_RESULTS to the study results folder}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
requirements="$here/pynguin-requirements.txt"
venv="$results/pynguin-venv"
want="$(grep -E '^pynguin==' "$requirements" | cut -d= -f3)"
# A pinned version and a stamp of the requirements: any change reinstalls.
stamp="$venv/.clowder-requirements"
if [[ -x "$venv/bin/pynguin" && -f "$stamp" ]] && cmp -s "$stamp" "$requirements"; then
    echo "pynguin $want already installed in $venv"
    exit 0
fi
# Pynguin 0.48 supports CPython 3.10 to 3.15; prefer 3.11 (what the pins were made with).
python=""
for p in "${PYNGUIN_PYTHON:-}" python3.11 python3.12 python3.10 python3; do
    [[ -n "$p" ]] || continue
    if command -v "$p" >/dev/null 2>&1 &&
        "$p" -c 'import sys; sys.exit(0 if (3, 10) <= sys.version_info[:2] < (3, 16) else 1)' 2>/dev/null; then
        python="$p"
        break
    fi
done
[[ -n "$python" ]] || { echo "no CPython 3.10–3.15 found (set PYNGUIN_PYTHON)" >&2; exit 1; }
echo "installing pynguin $want with $("$python" --version) into $venv"
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$requirements"
"$venv/bin/pip" check
cp "$requirements" "$stamp"
PYNGUIN_DANGER_AWARE=1 "$venv/bin/pynguin" --version
