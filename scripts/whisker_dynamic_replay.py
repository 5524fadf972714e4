#!/usr/bin/env python3
"""Neatest dynamic suites replayed in the real Whisker and in clowder, network by network.

    scripts/whisker_dynamic_replay.py --pairs FILE [--seeds 1-3] [--repeat 1]
                                      [--clowder BIN] [--oracle ORACLE] [--out OUT]
                                      [--only REGEX] [--no-whisker] [--clowder-args ARGS]
                                      [--calibrate | --measured-speed]

FILE: one line per (game, dynamic suite), tab-separated `name, project (.sb3), suite (.json)`,
further columns ignored (e.g. where the suite came from); `#` starts a comment. A suite can be
one the real Whisker's Neatest generated (`node servant.js generate -c <neatest config> -t DIR`
in a build of Whisker master; see docs/neatest.md) or one clowder's Neatest exported.

Each suite is replayed on each seed in the real Whisker (the whisker-oracle's run-dynamic.sh,
acceleration 10; kept in OUT/<name>/whisker-seed<N>[-r<k>]/ and not run again) and in clowder
(`clowder test SUITE PROJECT --seeds …`, whose dynamic.csv has a row per network and seed).
Compared per seed: how many networks the suite keeps after Whisker's minimisation (rows are
networks in the minimised suite's order, as Whisker's `testID`); per network and seed: the
project's statement count (must be equal) and the statements the network covered. Whisker replays against the wall clock, so a network that plays until the
suite's timeout can cover a little more or less from one replay to the next: `--repeat K` runs
every Whisker replay K times and counts clowder's value as agreeing when it lies within the
range of Whisker's (K = 1: equal). Prints a row per network and seed, then totals per game.
`--clowder-args` passes further flags to `clowder test`, e.g. `"--whisker-wall-ms 5"` to model
a Whisker machine that plays 200 steps per second instead of keeping up with acceleration 10
(the suite's timeout is wall-clock time in Whisker). Rerun with `--no-whisker` to compare
clowder again against the Whisker replays already in OUT.

Run it on an otherwise idle machine and never beside another Whisker run: Whisker replays on
the wall clock, and after each replay the script ends every browser puppeteer left behind.

`--calibrate` measures how fast the real Whisker plays each game instead: it replays the suite
(once per seed) on a copy of the game with one script added to the stage, `when flag clicked,
forever: change [points clock] by 1000000`. Whisker's CSV reports each playthrough's `score`,
the sum of the variables whose names hold "points", "score", … (its ScoreFitness), and its
`playTime`, wall-clock seconds × acceleration; the clock's millions are the steps played, so
steps per wall-clock second follow. Only playthroughs that ran into the suite's timeout are
counted (a game that stops itself stops the clock too). Writes OUT/<name>/whisker-speed.txt,
the median real milliseconds per step; `--measured-speed` then runs clowder with
`--whisker-wall-ms` set to each game's measured value.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import zipfile

from whisker_replay import tab_rows

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_seeds(text):
    """`1-3` or `1,3,5` -> [1, 2, 3] / [1, 3, 5]."""
    out = []
    for part in text.split(","):
        if "-" in part:
            lo, hi = part.split("-", 1)
            out.extend(range(int(lo), int(hi) + 1))
        else:
            out.append(int(part))
    return out


def pair_lines(path, only):
    """[(name, project, suite)] of a --pairs file."""
    return [(c[0], c[1], c[2]) for c in tab_rows(path, only, ["name", "project", "suite"])]


def whisker_rows(path):
    """{network index: (total statements, covered statements)} of run-dynamic.sh's CSV."""
    rows = {}
    with open(path, encoding="utf-8") as f:
        for i, r in enumerate(csv.DictReader(f)):
            rows[i] = (int(r["totalStatements"]), int(r["testCoveredStatements"]))
    return rows


def run_whisker(oracle, project, suite, seed, out):
    """Whisker's rows for one replay, run once and kept in `out`."""
    csv_path = os.path.join(out, "whisker.csv")
    if not os.path.isfile(csv_path):
        os.makedirs(out, exist_ok=True)
        subprocess.run([os.path.join(oracle, "run-dynamic.sh"), project, suite, out, str(seed), "10"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        # A browser left behind would slow the next replay down (it runs on the wall clock).
        subprocess.run(["pkill", "-f", "puppeteer_dev_chrome_profile"], check=False)
    if not os.path.isfile(csv_path):
        return None
    return whisker_rows(csv_path)


CLOCK = "points clock"
CLOCK_STEP = 1_000_000


def calibration_copy(project, out):
    """`project` with the stage counting steps in a variable Whisker's score reads."""
    with zipfile.ZipFile(project) as z:
        files = {n: z.read(n) for n in z.namelist()}
    doc = json.loads(files["project.json"])
    stage = next(t for t in doc["targets"] if t.get("isStage"))
    var_id = "clowder-calibration-clock"
    stage.setdefault("variables", {})[var_id] = [CLOCK, 0]
    blocks = stage.setdefault("blocks", {})
    blocks["clowder-cal-hat"] = {"opcode": "event_whenflagclicked", "next": "clowder-cal-forever", "parent": None,
                                 "inputs": {}, "fields": {}, "shadow": False, "topLevel": True, "x": 0, "y": 0}
    blocks["clowder-cal-forever"] = {"opcode": "control_forever", "next": None, "parent": "clowder-cal-hat",
                                     "inputs": {"SUBSTACK": [2, "clowder-cal-change"]}, "fields": {},
                                     "shadow": False, "topLevel": False}
    blocks["clowder-cal-change"] = {"opcode": "data_changevariableby", "next": None, "parent": "clowder-cal-forever",
                                    "inputs": {"VALUE": [1, [4, str(CLOCK_STEP)]]},
                                    "fields": {"VARIABLE": [CLOCK, var_id]}, "shadow": False, "topLevel": False}
    files["project.json"] = json.dumps(doc).encode()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for n, data in files.items():
            z.writestr(n, data)


def calibrate(oracle, name, project, suite, seeds, gdir, timeout_s):
    """Whisker's median real milliseconds per step on this game (None: no playthrough ran into
    the timeout), from replays of the suite on the calibration copy."""
    os.makedirs(gdir, exist_ok=True)
    copy = os.path.join(gdir, "calibrate.sb3")
    calibration_copy(project, copy)
    per_step = []
    for seed in seeds:
        wdir = os.path.join(gdir, f"calibrate-seed{seed}")
        csv_path = os.path.join(wdir, "whisker.csv")
        if not os.path.isfile(csv_path):
            run_whisker(oracle, copy, suite, seed, wdir)
        if not os.path.isfile(csv_path):
            print(f"{name}\tseed {seed}\tno Whisker result")
            continue
        with open(csv_path, encoding="utf-8") as f:
            for r in csv.DictReader(f):
                steps = int(float(r["score"]) // CLOCK_STEP)
                wall = float(r["playTime"]) / 10.0
                full = wall >= 0.95 * timeout_s
                print(f"{name}\tseed {seed}\tnetwork {r['id']}\t{steps} steps in "
                      f"{wall:.2f} s{'' if full else ' (ended before the timeout: not counted)'}")
                if full and steps > 0:
                    per_step.append(wall * 1000.0 / steps)
    if not per_step:
        return None
    ms = statistics.median(per_step)
    with open(os.path.join(gdir, "whisker-speed.txt"), "w", encoding="utf-8") as f:
        f.write(f"{ms:.4f}\n")
    print(f"{name}: Whisker plays {1000.0 / ms:.0f} steps per wall-clock second ({ms:.2f} ms per step, "
          f"median of {len(per_step)} playthroughs)")
    return ms


def suite_timeout_s(suite):
    """The suite's timeout in seconds (Whisker's default 10 s when it names none)."""
    with open(suite, encoding="utf-8") as f:
        cfg = json.load(f).get("Configs", {})
    return float(cfg.get("timeout", 10_000)) / 1000.0


def clowder_rows(binary, project, suite, seeds, out, extra):
    """{(network index, seed): (total statements, covered statements)} of clowder's dynamic.csv."""
    os.makedirs(out, exist_ok=True)
    spec = ",".join(str(s) for s in seeds)
    proc = subprocess.run([binary, "test", suite, project, "--seeds", spec, "--out", out, "--summary", *extra],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False)
    path = os.path.join(out, "dynamic.csv")
    if proc.returncode not in (0, 1) or not os.path.isfile(path):
        sys.stderr.write(proc.stderr)
        return None
    rows = {}
    with open(path, encoding="utf-8") as f:
        for r in csv.DictReader(f):
            key = (int(r["network"]), int(r["seed"]))
            rows[key] = (int(r["total_statements"]), int(r["covered_statements"]))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--seeds", default="1-3")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--clowder", default=os.path.join(ROOT, "target", "release", "clowder"))
    ap.add_argument("--oracle", default=os.path.join(ROOT, "..", "shared", "tools", "whisker-oracle"))
    ap.add_argument("--out", default="/tmp/whisker-dynamic-replay")
    ap.add_argument("--only")
    ap.add_argument("--no-whisker", action="store_true")
    ap.add_argument("--clowder-args", default="")
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--measured-speed", action="store_true")
    args = ap.parse_args()
    seeds = parse_seeds(args.seeds)
    if args.calibrate:
        for name, project, suite in pair_lines(args.pairs, args.only):
            calibrate(args.oracle, name, project, suite, seeds, os.path.join(args.out, name), suite_timeout_s(suite))
        return
    total_same = total = 0
    per_game = []
    for name, project, suite in pair_lines(args.pairs, args.only):
        gdir = os.path.join(args.out, name)
        extra = args.clowder_args.split()
        if args.measured_speed:
            speed = os.path.join(gdir, "whisker-speed.txt")
            if os.path.isfile(speed):
                with open(speed, encoding="utf-8") as f:
                    extra += ["--whisker-wall-ms", f.read().strip()]
            elif os.path.isdir(os.path.join(gdir, f"calibrate-seed{seeds[0]}")):
                # Calibrated, but every playthrough ended before the timeout: the speed cannot
                # cut a playthrough short, and clowder keeps its default.
                print(f"{name}: every calibration playthrough ended before the timeout; default speed")
            else:
                sys.exit(f"{name}: no measured speed in {gdir} (run --calibrate first)")
        ours = clowder_rows(args.clowder, project, suite, seeds, os.path.join(gdir, "clowder"), extra)
        if ours is None:
            print(f"{name}: clowder could not replay the suite")
            continue
        same = n = 0
        for seed in seeds:
            theirs = []
            for k in range(args.repeat):
                wdir = os.path.join(gdir, f"whisker-seed{seed}" + (f"-r{k}" if k else ""))
                if args.no_whisker and not os.path.isfile(os.path.join(wdir, "whisker.csv")):
                    continue
                rows = run_whisker(args.oracle, project, suite, seed, wdir)
                if rows is not None:
                    theirs.append(rows)
            if not theirs:
                print(f"{name}\tseed {seed}\tno Whisker result")
                continue
            # Whisker first minimises the suite by playing every network (on the wall clock), so
            # how many networks it keeps can vary between its own replays: clowder's count must
            # be one of Whisker's.
            kept = len([1 for _, s in ours if s == seed])
            counts = sorted({len(t) for t in theirs})
            if kept not in counts:
                print(f"{name}\tseed {seed}\tnetworks kept: clowder {kept}, whisker {'/'.join(map(str, counts))}\tDIFFERS")
                n += 1
            for net in sorted({i for i, s in ours if s == seed}):
                mine = ours.get((net, seed))
                vals = [t[net] for t in theirs if net in t]
                if mine is None or not vals:
                    continue
                totals = {v[0] for v in vals}
                lo, hi = min(v[1] for v in vals), max(v[1] for v in vals)
                ok = totals == {mine[0]} and lo <= mine[1] <= hi
                same += ok
                n += 1
                rng = str(lo) if lo == hi else f"{lo}-{hi}"
                print(f"{name}\tnetwork {net}\tseed {seed}\tstatements {mine[0]}/{'/'.join(map(str, sorted(totals)))}"
                      f"\tclowder {mine[1]}\twhisker {rng}\t{'same' if ok else 'DIFFERS'}")
        per_game.append((name, same, n))
        total_same += same
        total += n
    print()
    for name, same, n in per_game:
        print(f"{name}: {same}/{n} network replays agree")
    print(f"overall: {total_same}/{total} network replays agree, "
          f"{sum(1 for _, s, n in per_game if s == n and n)}/{len(per_game)} games at 100 %")


if __name__ == "__main__":
    main()
