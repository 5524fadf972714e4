#!/usr/bin/env python3
"""The real Whisker's MIO and clowder's MIO side by side (issue 22, acceptance 3).

    scripts/whisker_side_by_side.py --whisker DIR [--clowder BIN]
                                    [--steps 18000 | --evaluations N | --match-evaluations] [--out OUT]

DIR holds Whisker's runs as scripts/whisker-generate.sh writes them (<project>/seed<N>/stats.csv
and wall.txt). For every (project, seed) there, clowder generates with the study's MIO
configuration (<corpora>/whisker-configs/mio.json) and the same seed, with a budget of --steps
VM steps (18 000 = 600 Scratch-seconds, what Whisker's fixedTime of 600 000 ms gives at
acceleration 10 when it keeps up with 10x real time), --evaluations fitness evaluations (as
`whisker-generate.sh --evaluations N` gives Whisker: a budget no machine load changes) or, with
--match-evaluations, the number of fitness evaluations that Whisker's run made. The study's
configuration also stops a run at full coverage. OUT gets runs.csv (algorithms `clowder-mio` and
`whisker-mio`, the columns `clowder analyze` reads) and the report of
`clowder analyze OUT --compare clowder-mio,whisker-mio --p-value exact` (Â12 and Mann-Whitney
U per project, the mean Â12 of Table 6; clowder is A). Printed: coverage per game (with each
tool's number of statements), Â12, p and verdict per game, the mean Â12, and the wall-time and
CPU-time ratios (Whisker / clowder; CPU time of the servant with its browser).
"""
import argparse
import csv
import json
import os
import re
import resource
import subprocess
import sys
import time


def whisker_runs(root):
    """[(project, seed, stats row, wall s, cpu s)] from <root>/<project>/seed<N>/."""
    out = []
    for project in sorted(os.listdir(root)):
        pdir = os.path.join(root, project)
        if not os.path.isdir(pdir):
            continue
        for sdir in sorted(os.listdir(pdir)):
            m = re.fullmatch(r"seed(\d+)", sdir)
            stats = os.path.join(pdir, sdir, "stats.csv")
            if not m or not os.path.isfile(stats):
                continue
            with open(stats, encoding="utf-8") as f:
                rows = list(csv.DictReader(f))
            if not rows:
                continue
            wall = cpu = None
            wpath = os.path.join(pdir, sdir, "wall.txt")
            if os.path.isfile(wpath):
                text = open(wpath, encoding="utf-8").read()
                w = re.search(r"wall=([0-9.]+)", text)
                c = re.search(r"cpu=([0-9.]+)", text)
                wall = float(w.group(1)) if w else None
                cpu = float(c.group(1)) if c else None
            out.append((project, int(m.group(1)), rows[-1], wall, cpu))
    return out


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def read_csv(path):
    with open(path, encoding="utf-8") as f:
        return list(csv.DictReader(f))


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--whisker", required=True, help="folder of whisker-generate.sh")
    ap.add_argument("--clowder", default=None, help="clowder binary (default: $CARGO_TARGET_DIR or target/, release)")
    ap.add_argument("--corpora", default=None)
    ap.add_argument("--dataset", default="whisker-rq1", help="folder of the projects under --corpora")
    ap.add_argument("--steps", type=int, default=18000)
    ap.add_argument("--evaluations", type=int, default=None, help="a budget of fitness evaluations (instead of --steps)")
    ap.add_argument("--match-evaluations", action="store_true",
                    help="give clowder as many fitness evaluations as Whisker's run made (instead of --steps)")
    ap.add_argument("--out", default="/tmp/whisker-side-by-side")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    corpora = args.corpora or os.environ.get("CLOWDER_CORPORA") or os.path.join(root, "..", "shared", "corpora")
    clowder = args.clowder or os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(root, "target"),
                                           "release", "clowder")
    config = os.path.join(corpora, "whisker-configs", "mio.json")
    runs = whisker_runs(args.whisker)
    if not runs:
        print(f"no Whisker runs under {args.whisker}", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for project, seed, w, wwall, wcpu in runs:
        sb3 = os.path.join(corpora, args.dataset, project + ".sb3")
        gdir = os.path.join(args.out, "clowder", project, f"seed{seed}")
        if args.match_evaluations:
            budget = ["--budget-evaluations", w["numberFitnessEvaluations"]]
        elif args.evaluations:
            budget = ["--budget-evaluations", str(args.evaluations)]
        else:
            budget = ["--budget-steps", str(args.steps)]
        cpu0, t0 = children_cpu(), time.monotonic()
        r = subprocess.run([clowder, "gen", sb3, "--config", config, "--seed", str(seed), *budget, "--out", gdir],
                           capture_output=True, text=True)
        wall, cpu = time.monotonic() - t0, children_cpu() - cpu0
        if r.returncode != 0:
            print(f"{project} seed {seed}: clowder gen failed: {r.stderr.strip()[-300:]}", file=sys.stderr)
            continue
        with open(os.path.join(gdir, "result.json"), encoding="utf-8") as f:
            o = json.load(f)["outcome"]
        total, covered = int(w["fitnessFunctionCount"]), int(w["coveredFitnessFunctionCount"])
        rows.append({"project": project, "algorithm": "clowder-mio", "seed": seed, "status": "ok",
                     "coverage": o["coverage"], "covered": o["covered"], "total_targets": o["total_targets"],
                     "steps": o.get("steps", ""), "tests_after_min": o["tests_after_min"],
                     "events_after_min": o["events_after_min"], "evaluations": o["evaluations"],
                     "duration_ms": int(wall * 1000), "cpu_ms": int(cpu * 1000)})
        rows.append({"project": project, "algorithm": "whisker-mio", "seed": seed, "status": "ok",
                     "coverage": covered / total if total else 0.0, "covered": covered, "total_targets": total,
                     "steps": "", "tests_after_min": int(w["bestTestSuiteSize"]),
                     "events_after_min": int(w["testsuiteEventCount"]),
                     "evaluations": int(w["numberFitnessEvaluations"]),
                     "duration_ms": int((wwall or 0) * 1000), "cpu_ms": int(wcpu * 1000) if wcpu else ""})
        print(f"{project} seed {seed}: clowder {o['covered']}/{o['total_targets']} ({o['evaluations']} evaluations) "
              f"in {wall:.1f} s, Whisker {covered}/{total} ({w['numberFitnessEvaluations']} evaluations) in "
              f"{wwall or float('nan'):.1f} s", file=sys.stderr)
    cols = ["dataset", "project", "algorithm", "seed", "status", "budget_unit", "budget", "coverage", "covered",
            "total_targets", "steps", "tests_after_min", "events_after_min", "evaluations", "duration_ms", "cpu_ms"]
    unit = "evaluations" if args.match_evaluations or args.evaluations else "steps"
    with open(os.path.join(args.out, "runs.csv"), "w", newline="", encoding="utf-8") as f:
        wr = csv.DictWriter(f, fieldnames=cols)
        wr.writeheader()
        for r in rows:
            budget = r["evaluations"] if args.match_evaluations else args.evaluations or args.steps
            wr.writerow({**r, "dataset": args.dataset, "budget_unit": unit, "budget": budget})
    # The statistics are clowder-analysis's (Â12, exact Mann-Whitney U, Table 6).
    subprocess.run([clowder, "analyze", args.out, "--compare", "clowder-mio,whisker-mio", "--p-value", "exact",
                    "--incomplete", "compare", "--no-plots", "--quiet"], check=True)
    report = os.path.join(args.out, "report")
    pairs = {p["project"]: p for p in read_csv(os.path.join(report, "pairs.csv"))}
    t6 = [t for t in read_csv(os.path.join(report, "table6.csv")) if t.get("a") == "clowder-mio"]

    games = sorted({r["project"] for r in rows})
    what = ("Whisker's evaluations per run" if args.match_evaluations
            else f"{args.evaluations} evaluations" if args.evaluations else f"{args.steps} steps")
    print(f"\nBudget: {what}, or full coverage; "
          "Â12: clowder is A (> 0.5: clowder covers more)\n")
    print("| game | statements (clowder / Whisker) | clowder coverage | Whisker coverage | Â12 | p | verdict | "
          "clowder evaluations | Whisker evaluations | clowder steps | clowder s | Whisker s |")
    print("|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|")
    by = {}
    for r in rows:
        by.setdefault((r["project"], r["algorithm"]), []).append(r)
    for g in games:
        c, w = by.get((g, "clowder-mio"), []), by.get((g, "whisker-mio"), [])
        p = pairs.get(g, {})
        print(f"| {g} | {c[0]['total_targets']} / {w[0]['total_targets']} | {100 * mean([r['coverage'] for r in c]):.1f} % | "
              f"{100 * mean([r['coverage'] for r in w]):.1f} % | {p.get('a12', '-')} | {p.get('p', '-')} | "
              f"{p.get('verdict', '-')} | {mean([r['evaluations'] for r in c]):.0f} | "
              f"{mean([r['evaluations'] for r in w]):.0f} | {mean([r['steps'] or None for r in c]):.0f} | "
              f"{mean([r['duration_ms'] / 1000 for r in c]):.1f} | "
              f"{mean([r['duration_ms'] / 1000 for r in w]):.1f} |")
    for t in t6:
        print(f"\nTable 6 ({t.get('dataset')}): mean Â12 {t.get('mean_a12')} ({t.get('magnitude')}); "
              f"significantly better {t.get('sig_better')}, better {t.get('better')}, equal {t.get('equal')}, "
              f"worse {t.get('worse')}, significantly worse {t.get('sig_worse')} of {t.get('projects_compared')} games")
    cw = sum(r["duration_ms"] for r in rows if r["algorithm"] == "clowder-mio")
    ww = sum(r["duration_ms"] for r in rows if r["algorithm"] == "whisker-mio")
    print(f"Wall time: Whisker {ww / 1000:.0f} s, clowder {cw / 1000:.1f} s, ratio {ww / cw:.0f}x" if cw else "")
    both = [(p, s) for (p, s, _, _, wc) in runs if wc]
    if both:
        cc = sum(r["cpu_ms"] for r in rows if r["algorithm"] == "clowder-mio" and (r["project"], r["seed"]) in both)
        wc = sum(r["cpu_ms"] for r in rows if r["algorithm"] == "whisker-mio" and (r["project"], r["seed"]) in both)
        if cc:
            print(f"CPU time ({len(both)} runs with Whisker's CPU time): Whisker {wc / 1000:.0f} s, "
                  f"clowder {cc / 1000:.1f} s, ratio {wc / cc:.0f}x")
    print(f"Report: {report} (pairs.csv, table6.csv)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
