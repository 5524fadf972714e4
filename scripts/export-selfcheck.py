#!/usr/bin/env python3
"""Exported suites against clowder's own Whisker runner (see export-selfcheck.sh).

For every project and seed: `clowder gen --out` (the exported tests.js), then `clowder test`
on that file and project at the same seed, once with the tests sharing one VM (Whisker's way)
and once with `--fresh-tests`. Every exported assertion was recorded from clowder's own
execution, so every test must pass in both: a failure is a generator/runner inconsistency
(the recorder and the runner disagree about what the program does under the same inputs),
found without the real Whisker and its wall clock. Prints one line per failing test with its
first failure, then the totals; exit status 1 when any test failed.
"""
import argparse
import concurrent.futures
import csv
import os
import subprocess
import sys

from whisker_roundtrip import projects


def seeds(spec):
    out = []
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out += range(int(a), int(b or a) + 1)
    return out


def verdicts(folder):
    """(test name, status, message) rows of a `clowder test --out` folder."""
    path = os.path.join(folder, "tests.csv")
    if not os.path.exists(path):
        return None
    with open(path, newline="", encoding="utf-8") as f:
        return [(r.get("test", ""), r.get("status", ""), r.get("message", "")) for r in csv.DictReader(f)]


def one(args, project, seed):
    name = os.path.splitext(os.path.basename(project))[0]
    out = os.path.join(args.out, f"{name}.seed{seed}")
    gen = [args.clowder, "gen", project, "--algorithm", args.algorithm, "--seed", str(seed),
           "--budget-steps", str(args.steps), "--out", out]
    r = subprocess.run(gen, capture_output=True, text=True)
    if r.returncode != 0:
        return name, seed, None, f"gen failed: {r.stderr.strip()[-300:]}"
    rows = {}
    for mode, extra in (("shared", []), ("fresh", ["--fresh-tests"])):
        folder = os.path.join(out, f"test-{mode}")
        cmd = [args.clowder, "test", os.path.join(out, "tests.js"), project, "--seed", str(seed),
               "--out", folder] + extra
        subprocess.run(cmd, capture_output=True, text=True)
        got = verdicts(folder)
        if got is None:
            return name, seed, None, f"clowder test ({mode}) wrote no tests.csv"
        rows[mode] = got
    return name, seed, rows, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clowder", required=True)
    ap.add_argument("--seeds", default="1", help="e.g. 1-3 or 1,7")
    ap.add_argument("--algorithm", default="mio")
    ap.add_argument("--steps", type=int, default=30000)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", default="/tmp/export-selfcheck")
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    work = [(p, s) for p in projects(args.paths, None) for s in seeds(args.seeds)]
    total = {"shared": [0, 0], "fresh": [0, 0]}
    bad_runs = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for name, seed, rows, err in pool.map(lambda w: one(args, *w), work):
            if err:
                bad_runs += 1
                print(f"ERROR {name} seed {seed}: {err}", flush=True)
                continue
            for mode, got in rows.items():
                total[mode][1] += len(got)
                for test, status, message in got:
                    if status == "pass":
                        total[mode][0] += 1
                    else:
                        print(f"{mode:6} {name} seed {seed} {test}: {status}: {message}", flush=True)
    for mode, (ok, n) in total.items():
        print(f"{mode}: {ok}/{n} exported tests pass")
    print(f"{len(work)} runs, {bad_runs} without a verdict")
    failed = bad_runs or any(ok != n for ok, n in total.values())
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
