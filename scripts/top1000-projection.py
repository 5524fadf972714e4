#!/usr/bin/env python3
"""A Top1000 projection from measured runs: what 60 000 runs of the paper's Top1000 set-up cost.

    scripts/top1000-projection.py RESULTS_DIR [RESULTS_DIR …] [--runs 60000] [--cores 2,100]
                                  [--mean 1036] [--min 5] [--max 11530] [--sigmas 0.9,1.1,1.25]

Each RESULTS_DIR is a study's export folder (`runs.csv` and `provenance.csv`), e.g. the whole
random sample (`experiments/random-sample-seed1.toml`) and `large/` at the paper budget. Every
run that ended `ok` or `limit` gives a point (statements = its coverage targets, CPU = its
`cpu_ms`). The script fits CPU ≈ a · statements^b (least squares in log-log) and applies it to
the paper's Top1000 size distribution, of which the paper gives only the range (5–11 530
statements) and the mean (1 036): a log-normal truncated to that range, its location chosen so
that the truncated mean is 1 036, for each spread σ given. Each sampled project's CPU is the
fit times a residual drawn from the measured ones (so runaway programs enter at the rate they
were measured), from a fixed seed: the same inputs give the same table. No run costs more than
the slowest measured one: the work cap bounds every run's work, and the slowest runs are the
ones that reach it.

The projection is an extrapolation: few measured projects are larger than 1 000 statements.
It says so in its output.
"""

import argparse
import csv
import math
import random
import statistics
import sys
from pathlib import Path


def points(folder: Path) -> list[tuple[int, float]]:
    with open(folder / "runs.csv", newline="") as f:
        runs = list(csv.DictReader(f))
    with open(folder / "provenance.csv", newline="") as f:
        cpu = {r.get("run_id") or "": r.get("cpu_ms") or "" for r in csv.DictReader(f)}
    out = []
    for r in runs:
        if r.get("status") not in ("ok", "limit"):
            continue
        try:
            n = int(r.get("total_targets") or "")
            ms = float(cpu.get(r.get("run_id") or "", ""))
        except ValueError:
            continue
        if n >= 1:
            # A run below the clock's millisecond counts as one: log-log needs a positive time.
            out.append((n, max(ms, 1.0) / 1000.0))
    return out


def fit(pts: list[tuple[int, float]]) -> tuple[float, float, list[float]]:
    xs = [math.log(n) for n, _ in pts]
    ys = [math.log(c) for _, c in pts]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        raise SystemExit("error: every measured run has the same number of statements; no size trend to fit")
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    a = my - b * mx
    return math.exp(a), b, [y - (a + b * x) for x, y in zip(xs, ys)]


def truncated_mean(mu: float, sigma: float, lo: float, hi: float) -> float:
    # E[X | lo ≤ X ≤ hi] of a log-normal, in closed form.
    phi = lambda z: 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))  # noqa: E731
    a, b = (math.log(lo) - mu) / sigma, (math.log(hi) - mu) / sigma
    mass = phi(b) - phi(a)
    return math.exp(mu + sigma**2 / 2) * (phi(b - sigma) - phi(a - sigma)) / mass


def location(mean: float, sigma: float, lo: float, hi: float) -> float:
    # The truncated mean grows with μ: bisection.
    left, right = math.log(lo) - 10 * sigma, math.log(hi) + 10 * sigma
    for _ in range(200):
        mid = (left + right) / 2
        if truncated_mean(mid, sigma, lo, hi) < mean:
            left = mid
        else:
            right = mid
    return (left + right) / 2


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+", type=Path)
    ap.add_argument("--runs", type=int, default=60000)
    ap.add_argument("--cores", default="2,100")
    ap.add_argument("--mean", type=float, default=1036.0)
    ap.add_argument("--min", type=float, default=5.0)
    ap.add_argument("--max", type=float, default=11530.0)
    ap.add_argument("--sigmas", default="0.9,1.1,1.25")
    ap.add_argument("--samples", type=int, default=200000)
    ap.add_argument("--seed", type=int, default=1036)
    args = ap.parse_args()

    pts = []
    for folder in args.results:
        if not (folder / "runs.csv").is_file() or not (folder / "provenance.csv").is_file():
            print(f"error: {folder} has no runs.csv and provenance.csv (a study's export folder)", file=sys.stderr)
            return 2
        pts += points(folder)
    if len(pts) < 10:
        print(f"error: only {len(pts)} measured runs; need at least 10", file=sys.stderr)
        return 2
    a, b, res = fit(pts)
    bound = max(c for _, c in pts)
    big = sum(1 for n, _ in pts if n > 1000)
    print(f"measured: {len(pts)} runs, {min(n for n, _ in pts)}–{max(n for n, _ in pts)} statements "
          f"({big} runs above 1 000), {sum(c for _, c in pts):.0f} CPU-s in all")
    print(f"fit: CPU ≈ {a:.3g} s · statements^{b:.3f} (log-log least squares, residual sd {statistics.pstdev(res):.2f}); "
          f"no run above the slowest measured, {bound:.0f} CPU-s")
    cores = [int(c) for c in args.cores.split(",") if c.strip()]
    print()
    print("| σ | median project (statements) | mean CPU per run | median CPU per run | CPU-hours for "
          f"{args.runs} runs | " + " | ".join(f"hours on {c} cores" for c in cores) + " |")
    print("|---:|---:|---:|---:|---:|" + "---:|" * len(cores))
    for sigma in (float(s) for s in args.sigmas.split(",") if s.strip()):
        rng = random.Random(args.seed)
        mu = location(args.mean, sigma, args.min, args.max)
        sizes, cpus = [], []
        while len(sizes) < args.samples:
            n = math.exp(rng.gauss(mu, sigma))
            if not args.min <= n <= args.max:
                continue
            sizes.append(n)
            cpus.append(min(a * n**b * math.exp(rng.choice(res)), bound))
        mean = statistics.fmean(cpus)
        hours = mean * args.runs / 3600
        print(f"| {sigma:g} | {statistics.median(sizes):.0f} | {mean:.1f} s | {statistics.median(cpus):.2f} s | "
              f"{hours:.0f} | " + " | ".join(f"{hours / c:.1f}" for c in cores) + " |")
    print()
    print("An extrapolation beyond the measured sizes; mutation analysis not included (measure a sample).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
