#!/usr/bin/env python3
"""The real Whisker's MIO and clowder's MIO side by side (issue 22, acceptance 3).

    scripts/whisker_side_by_side.py --whisker DIR [--clowder BIN] [--probe [--oracle ORACLE]]
                                    [--steps 18000 | --match-probe | --evaluations N | --match-evaluations]
                                    [--out OUT]

DIR holds Whisker's runs as scripts/whisker-generate.sh writes them (<project>/seed<N>/stats.csv
and wall.txt). For every (project, seed) there, clowder generates with the MIO configuration
Whisker ran with (DIR/mio-*.json, else <corpora>/whisker-configs/mio.json) and the same seed,
with a budget of --steps VM steps (18 000 = 600 Scratch-seconds, what Whisker's fixedTime of
600 000 ms gives at acceleration 10 when it keeps up with 10x real time), --evaluations fitness
evaluations (as `whisker-generate.sh --evaluations N` gives Whisker: a budget no machine load
changes) or, with --match-evaluations, the number of fitness evaluations that Whisker's run made
(biased against clowder: a run that reaches full coverage stops, so that number is what Whisker
needed to succeed). The study's
configuration also stops a run at full coverage. OUT gets runs.csv (algorithms `clowder-mio` and
`whisker-mio`, the columns `clowder analyze` reads) and the report of
`clowder analyze OUT --compare clowder-mio,whisker-mio --p-value exact` (Â12 and Mann-Whitney
U per project, the mean Â12 of Table 6; clowder is A). Printed: coverage per game (with each
tool's number of statements), Â12, p and verdict per game, the mean Â12, and the wall-time and
CPU-time ratios (Whisker / clowder; Whisker's CPU time is the machine's busy time during its run,
as whisker-generate.sh records it, so it counts the browser's processes).

--probe measures how many VM steps per wall second the real Whisker executes on each game on
this machine (scripts/whisker/step-rate-probe.js through the whisker-oracle's run.sh; cached in
DIR/<project>/step-rate.txt): Whisker's fixedTime budget is wall time divided by the acceleration,
so it is the nominal number of Scratch-seconds only at 30 x acceleration steps per second.
--match-probe gives clowder the steps Whisker could have run: the probed rate times Whisker's
wall-clock budget (fixedTime / acceleration, read from DIR/mio-<ms>.json).
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
                # The machine's busy time counts the browser; the servant's own time does not.
                c = re.search(r"machine_cpu=([0-9.]+)", text)
                wall = float(w.group(1)) if w else None
                cpu = float(c.group(1)) if c else None
            out.append((project, int(m.group(1)), rows[-1], wall, cpu))
    return out


def step_rate(oracle, sb3, cache):
    """Whisker's VM steps per wall second on `sb3` (the probe's 900 steps after the green flag)."""
    if not os.path.isfile(cache):
        probe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "whisker", "step-rate-probe.js")
        work = cache + ".d"
        subprocess.run([os.path.join(oracle, "run.sh"), sb3, probe, work, "1", "10"], capture_output=True)
        log = open(os.path.join(work, "whisker.out"), encoding="utf-8", errors="replace").read()
        m = re.search(r"STEP-RATE steps=(\d+) wall_ms=(\d+)", log)
        if not m:
            return None
        with open(cache, "w", encoding="utf-8") as f:
            f.write(f"{m.group(1)} {m.group(2)}\n")
    steps, ms = open(cache, encoding="utf-8").read().split()
    return 1000 * int(steps) / int(ms)


def whisker_wall_budget_s(root):
    """Whisker's wall-clock search budget in seconds: fixedTime / acceleration 10."""
    for name in os.listdir(root):
        m = re.fullmatch(r"mio-(\d+)\.json", name)
        if m:
            return int(m.group(1)) / 1000 / 10
    return None


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def read_csv(path):
    with open(path, encoding="utf-8") as f:
        return list(csv.DictReader(f))


def num(x, digits):
    """A number from a report CSV, rounded for the table ('-' when absent)."""
    try:
        return f"{float(x):.{digits}f}"
    except (TypeError, ValueError):
        return "-"


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
    ap.add_argument("--probe", action="store_true", help="measure Whisker's steps per second on each game")
    ap.add_argument("--match-probe", action="store_true",
                    help="give clowder the probed step rate times Whisker's wall budget (implies --probe)")
    ap.add_argument("--oracle", default=None, help="the whisker-oracle folder (run.sh), for --probe")
    ap.add_argument("--out", default="/tmp/whisker-side-by-side")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    corpora = args.corpora or os.environ.get("CLOWDER_CORPORA") or os.path.join(root, "..", "shared", "corpora")
    clowder = args.clowder or os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(root, "target"),
                                           "release", "clowder")
    # clowder reads the configuration Whisker ran with (whisker-generate.sh writes it into DIR), so
    # both get the same settings (e.g. --search-only's minimisation and assertions off); the
    # budget is given explicitly below.
    configs = sorted(n for n in os.listdir(args.whisker) if re.fullmatch(r"mio-.*\.json", n))
    config = (os.path.join(args.whisker, configs[0]) if configs
              else os.path.join(corpora, "whisker-configs", "mio.json"))
    oracle = args.oracle or os.environ.get("WHISKER_ORACLE") or os.path.join(corpora, "..", "tools", "whisker-oracle")
    args.probe = args.probe or args.match_probe
    wall_budget = whisker_wall_budget_s(args.whisker)
    if args.match_probe and not wall_budget:
        print(f"--match-probe: no mio-<ms>.json (a fixedTime budget) in {args.whisker}", file=sys.stderr)
        return 2
    runs = whisker_runs(args.whisker)
    if not runs:
        print(f"no Whisker runs under {args.whisker}", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    rows = []
    rates = {}
    for project, seed, w, wwall, wcpu in runs:
        sb3 = os.path.join(corpora, args.dataset, project + ".sb3")
        gdir = os.path.join(args.out, "clowder", project, f"seed{seed}")
        if args.probe and project not in rates:
            rates[project] = step_rate(oracle, sb3, os.path.join(args.whisker, project, "step-rate.txt"))
            print(f"{project}: Whisker runs {rates[project] or float('nan'):.0f} steps per wall second", file=sys.stderr)
        if args.match_probe:
            if not rates[project]:
                print(f"{project}: no step rate, skipped", file=sys.stderr)
                continue
            budget = ["--budget-steps", str(round(rates[project] * wall_budget))]
        elif args.match_evaluations:
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
                     "duration_ms": int((wwall or 0) * 1000), "cpu_ms": int(wcpu * 1000) if wcpu else "",
                     # The search alone: until full coverage, else the whole wall-clock budget.
                     "search_s": (int(w["timeToReachFullCoverage"]) / 1000 if w.get("timeToReachFullCoverage")
                                  else wall_budget)})
        print(f"{project} seed {seed}: clowder {o['covered']}/{o['total_targets']} ({o['evaluations']} evaluations) "
              f"in {wall:.1f} s, Whisker {covered}/{total} ({w['numberFitnessEvaluations']} evaluations) in "
              f"{wwall or float('nan'):.1f} s", file=sys.stderr)
    cols = ["dataset", "project", "algorithm", "seed", "status", "budget_unit", "budget", "coverage", "covered",
            "total_targets", "steps", "tests_after_min", "events_after_min", "evaluations", "duration_ms", "cpu_ms"]
    unit = "evaluations" if args.match_evaluations or args.evaluations else "steps"
    with open(os.path.join(args.out, "runs.csv"), "w", newline="", encoding="utf-8") as f:
        wr = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        wr.writeheader()
        for r in rows:
            if args.match_probe:
                budget = round(rates[r["project"]] * wall_budget)
            else:
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
            else f"{args.evaluations} evaluations" if args.evaluations
            else f"Whisker's probed steps per second x {wall_budget:.0f} s" if args.match_probe
            else f"{args.steps} steps")
    print(f"\nBudget: {what}, or full coverage; "
          "Â12: clowder is A (> 0.5: clowder covers more)\n")
    print("| game | statements (clowder / Whisker) | clowder coverage | Whisker coverage | Â12 | p | verdict | "
          "clowder evaluations | Whisker evaluations | clowder steps | Whisker steps/s | Whisker steps (est.) | "
          "clowder s | Whisker s | Whisker search s |")
    print("|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    by = {}
    for r in rows:
        by.setdefault((r["project"], r["algorithm"]), []).append(r)
    for g in games:
        c, w = by.get((g, "clowder-mio"), []), by.get((g, "whisker-mio"), [])
        p = pairs.get(g, {})
        print(f"| {g} | {c[0]['total_targets']} / {w[0]['total_targets']} | {100 * mean([r['coverage'] for r in c]):.1f} % | "
              f"{100 * mean([r['coverage'] for r in w]):.1f} % | {num(p.get('a12'), 2)} | {num(p.get('p'), 3)} | "
              f"{p.get('verdict', '-')} | {mean([r['evaluations'] for r in c]):.0f} | "
              f"{mean([r['evaluations'] for r in w]):.0f} | {mean([r['steps'] or None for r in c]):.0f} | "
              f"{rates[g] if rates.get(g) else float('nan'):.0f} | "
              f"{mean([r['search_s'] * rates[g] for r in w if r['search_s']]) if rates.get(g) else float('nan'):.0f} | "
              f"{mean([r['duration_ms'] / 1000 for r in c]):.2f} | "
              f"{mean([r['duration_ms'] / 1000 for r in w]):.1f} | "
              f"{mean([r['search_s'] for r in w]):.1f} |")
    for t in t6:
        print(f"\nTable 6 ({t.get('dataset')}): mean Â12 {num(t.get('mean_a12'), 3)} ({t.get('magnitude')}); "
              f"significantly better {t.get('sig_better')}, better {t.get('better')}, equal {t.get('equal')}, "
              f"worse {t.get('worse')}, significantly worse {t.get('sig_worse')} of {t.get('projects_compared')} games")
    cw = sum(r["duration_ms"] for r in rows if r["algorithm"] == "clowder-mio")
    ww = sum(r["duration_ms"] for r in rows if r["algorithm"] == "whisker-mio")
    print(f"Wall time: Whisker {ww / 1000:.0f} s, clowder {cw / 1000:.1f} s, ratio {ww / cw:.0f}x" if cw else "")
    ws = sum(r["search_s"] or 0 for r in rows if r["algorithm"] == "whisker-mio")
    if cw and ws:
        print(f"Whisker's search alone (to full coverage or its budget): {ws:.0f} s, ratio to clowder's whole "
              f"runs {1000 * ws / cw:.0f}x")
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
