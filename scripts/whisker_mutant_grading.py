#!/usr/bin/env python3
"""Mutants as graded programs: hand-written suites graded by clowder and by the real Whisker
on the same faulty variants of their games (issue 32, acceptance 2).

    scripts/whisker_mutant_grading.py --examples DIR [--per-operator 3] [--seed 1]
        [--out /tmp/whisker-mutant-grading] [--only REGEX] [--clowder BIN] [--oracle DIR]
        [--corpora DIR] [--no-whisker]

DIR holds se2p/whisker's `whisker-web/src/examples/<Game>Test.js` (branch master; extract them
outside the repository). For every whisker-rq1 game with a suite there:

1. `clowder mutate <game> --write-mutants OUT/mutants --sample N --seed S` writes N mutants per
   operator as .sb3 files (the game's assets unchanged, the edit in project.json; a test checks
   that a written mutant runs exactly as clowder's own mutant);
2. `clowder test <suite> <original> <mutants…>` grades them (OUT/clowder/<game>/tests.csv);
3. the whisker-oracle's run.sh grades the original and every mutant in the real Whisker
   (emse22, the same seed, acceleration 10), one at a time. Whisker gives a test no time limit
   (only its own mutation mode does): a mutant's run is stopped after --cap times the
   original's wall time, the test then running counts as `timeout` (clowder's test that did not
   end within its step limit, a `fail` with "Timeout:", counts the same) and the tests after it,
   never started there, are not compared. Verdicts are cached in
   OUT/whisker/<game>/<mutant>/ and reused (the real Whisker's timing is wall-clock: run this
   on an idle machine, and delete a cached folder to run it again);
4. prints the agreement per suite and per operator, for tests (one verdict per test and
   program) and for programs (every test's verdict the same), then each difference with both
   runners' first failure line.

Exit status 0 when every compared verdict agrees.
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from whisker_roundtrip import kill_session, tap_results, whisker_verdicts  # noqa: E402

OPERATORS = ["KRM", "SBD", "SDM", "AOR", "LOR", "ROR", "NCM", "VRM"]


def clowder_verdicts(path):
    """{program: {test: (verdict, message)}} from `clowder test --out`'s tests.csv."""
    out = defaultdict(dict)
    with open(path, encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            status = row["status"]
            # A test that has not ended within the step limit: what Whisker runs for ever.
            if status == "fail" and row["message"].startswith("Timeout:"):
                status = "timeout"
            out[row["project"]][row["test"]] = (status, row["message"])
    return out


def run_whisker_capped(oracle, project, tests, wdir, seed, cap_s):
    """The whisker-oracle's run.sh, stopped after `cap_s` wall seconds (with its browser).

    Outside its own mutation mode, Whisker gives a test no time limit: a test that waits for
    something a mutant never does (e.g. a score that cannot rise) runs for ever. Returns the wall
    seconds it ran and whether it was stopped."""
    os.makedirs(wdir, exist_ok=True)
    started = time.monotonic()
    with open(os.path.join(wdir, "run.log"), "w") as log:
        p = subprocess.Popen([os.path.join(oracle, "run.sh"), project, tests, wdir, str(seed), "10"],
                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            p.wait(timeout=cap_s)
            capped = False
        except subprocess.TimeoutExpired:
            kill_session(p)
            capped = True
    wall = time.monotonic() - started
    with open(os.path.join(wdir, "wall.txt"), "w") as f:
        f.write(f"{wall:.1f} {'capped' if capped else 'done'} {cap_s}\n")
    return wall, capped


def partial_verdicts(wdir, names):
    """Verdicts of a run stopped by the cap, from the TAP lines in its log: the tests before the
    one that ran for ever, that one as `timeout`, the rest (never started) left out."""
    path = os.path.join(wdir, "whisker.out")
    if not os.path.exists(path):
        return {}
    out = tap_results(open(path, encoding="utf-8", errors="replace").read())
    running = next((n for n in names if n not in out), None)
    if running is not None:
        out[running] = "timeout"
    return out


def whisker_result(wdir, names):
    """(verdicts, capped) of a cached run."""
    wall = os.path.join(wdir, "wall.txt")
    capped = os.path.exists(wall) and "capped" in open(wall).read()
    if capped:
        return partial_verdicts(wdir, names), True
    return whisker_verdicts(wdir), False


def whisker_messages(wdir):
    """{test: first failure line} from the TAP text of Whisker's log."""
    out = {}
    path = os.path.join(wdir, "whisker.out")
    if not os.path.exists(path):
        return out
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    for i, ln in enumerate(lines):
        m = re.search(r"not ok \d+ - (.+?)$", ln)
        if m and m.group(1) not in out:
            msg = next((x.split("message:", 1)[1].strip() for x in lines[i + 1:i + 12] if "message:" in x), "")
            out[m.group(1)] = msg
    return out


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    corpora_default = os.environ.get("CLOWDER_CORPORA", os.path.join(root, "..", "shared", "corpora"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples", required=True, help="folder with <Game>Test.js")
    ap.add_argument("--per-operator", type=int, default=3, help="mutants per operator and game (seeded sample)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="/tmp/whisker-mutant-grading")
    ap.add_argument("--only", default=None, help="regex on the game name")
    ap.add_argument("--clowder", default=os.path.join(root, "target", "release", "clowder"))
    ap.add_argument("--corpora", default=corpora_default)
    ap.add_argument("--oracle", default=os.environ.get("WHISKER_ORACLE"))
    ap.add_argument("--no-whisker", action="store_true", help="only compare what Whisker's cache already has")
    ap.add_argument("--cap", type=float, default=3.0,
                    help="a mutant's Whisker run is stopped after this many times the original's wall time "
                         "(at least 90 s): its test then running counts as `timeout`")
    args = ap.parse_args()
    oracle = args.oracle or os.path.join(args.corpora, "..", "tools", "whisker-oracle")
    games_dir = os.path.join(args.corpora, "whisker-rq1")
    games = sorted(f[:-len("Test.js")] for f in os.listdir(args.examples) if f.endswith("Test.js"))
    games = [g for g in games if os.path.exists(os.path.join(games_dir, g + ".sb3"))]
    if args.only:
        games = [g for g in games if re.search(args.only, g)]
    if not games:
        print("whisker_mutant_grading: no game has both a suite and a project", file=sys.stderr)
        return 2

    per_suite = {}
    per_op = defaultdict(lambda: [0, 0, 0, 0])  # tests same, tests, programs same, programs
    differences = []
    missing = 0
    for game in games:
        project = os.path.join(games_dir, game + ".sb3")
        suite = os.path.join(args.examples, game + "Test.js")
        mdir = os.path.join(args.out, "mutants")
        # The sample is prefix-stable (a larger --per-operator keeps the smaller one's mutants
        # and their ids), so Whisker's cached verdicts stay valid when it grows.
        stamp = os.path.join(mdir, game, "per-operator.txt")
        written = open(stamp).read().strip() if os.path.exists(stamp) else "3"
        if not os.path.exists(os.path.join(mdir, game, "mutants.csv")) or written != str(args.per_operator):
            subprocess.run([args.clowder, "mutate", project, "--write-mutants", mdir, "--sample",
                            str(args.per_operator), "--seed", str(args.seed)], check=True, stdout=subprocess.DEVNULL)
            with open(stamp, "w") as f:
                f.write(str(args.per_operator))
        with open(os.path.join(mdir, game, "mutants.csv"), encoding="utf-8", newline="") as f:
            mutants = [r for r in csv.DictReader(f) if r["file"]]
        programs = [("original", None, project)] + [
            (m["mutant_id"], m["operator"], os.path.join(mdir, game, m["file"])) for m in mutants]
        cdir = os.path.join(args.out, "clowder", game)
        subprocess.run([args.clowder, "test", suite] + [p for _, _, p in programs] +
                       ["--seed", str(args.seed), "--out", cdir, "--summary"], check=True, stdout=subprocess.DEVNULL)
        ours = clowder_verdicts(os.path.join(cdir, "tests.csv"))
        stats = [0, 0, 0, 0]
        cap = 1800.0
        for pid, op, path in programs:
            wdir = os.path.join(args.out, "whisker", game, pid)
            stem = os.path.splitext(os.path.basename(path))[0]
            mine = ours.get(stem, {})
            theirs, capped = whisker_result(wdir, list(mine)) if os.path.isdir(wdir) else ({}, False)
            if not theirs and not args.no_whisker:
                for _ in range(2):  # a run that left no verdicts (page not loaded in time) is tried again
                    _, capped = run_whisker_capped(oracle, path, suite, wdir, args.seed, cap)
                    theirs, capped = whisker_result(wdir, list(mine))
                    if theirs:
                        break
            if pid == "original":
                wall = os.path.join(wdir, "wall.txt")
                if os.path.exists(wall):
                    cap = max(90.0, args.cap * float(open(wall).read().split()[0]))
            if not theirs or not mine:
                missing += 1
                print(f"  {game} {pid}: no verdicts from {'Whisker' if not theirs else 'clowder'}", file=sys.stderr)
                continue
            msgs = whisker_messages(wdir)
            same_all = True
            for test, (v, msg) in mine.items():
                w = theirs.get(test)
                if w is None and capped:
                    continue  # never started in Whisker: after a test that ran for ever
                same = w == v
                same_all &= same
                stats[0] += same
                stats[1] += 1
                if op:
                    per_op[op][0] += same
                    per_op[op][1] += 1
                if not same:
                    differences.append((game, pid, test, v, msg, w, msgs.get(test, "")))
            stats[2] += same_all
            stats[3] += 1
            if op:
                per_op[op][2] += same_all
                per_op[op][3] += 1
            note = " (stopped by the cap)" if capped else ""
            print(f"  {game} {pid}: {'same' if same_all else 'DIFFERENT'}{note}", file=sys.stderr)
        per_suite[game] = stats

    def pct(a, b):
        return f"{100.0 * a / b:.1f} %" if b else "–"

    print("\n| suite | programs | same verdicts (programs) | test verdicts | same (tests) |")
    print("|---|---:|---:|---:|---:|")
    tot = [0, 0, 0, 0]
    for game, s in per_suite.items():
        print(f"| {game} | {s[3]} | {s[2]} ({pct(s[2], s[3])}) | {s[1]} | {s[0]} ({pct(s[0], s[1])}) |")
        tot = [a + b for a, b in zip(tot, s)]
    print(f"| **all** | {tot[3]} | {tot[2]} ({pct(tot[2], tot[3])}) | {tot[1]} | {tot[0]} ({pct(tot[0], tot[1])}) |")
    print("\n| operator | mutants | same verdicts (mutants) | test verdicts | same (tests) |")
    print("|---|---:|---:|---:|---:|")
    for op in OPERATORS:
        s = per_op.get(op)
        if s:
            print(f"| {op} | {s[3]} | {s[2]} ({pct(s[2], s[3])}) | {s[1]} | {s[0]} ({pct(s[0], s[1])}) |")
    if differences:
        print("\nDifferences (game, program, test: clowder / Whisker):")
        for game, pid, test, v, msg, w, wmsg in differences:
            print(f"- {game} {pid} \"{test}\": clowder {v}{(' (' + msg[:160] + ')') if msg else ''} / "
                  f"Whisker {w}{(' (' + wmsg[:160] + ')') if wmsg else ''}")
    if missing:
        print(f"\n{missing} programs without verdicts on one side (see stderr)")
    return 0 if not differences and not missing else 1


if __name__ == "__main__":
    sys.exit(main())
