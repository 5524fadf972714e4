#!/usr/bin/env python3
"""Reference values for clowder's statistics, computed independently with scipy/pandas.

Writes (committed, so `cargo test` never needs Python):
  analysis/tests/fixtures/stats_cases.json   Mann-Whitney U / p (scipy, asymptotic with tie and
                                             continuity correction), exact Â12 as a fraction, the
                                             exact permutation p by brute-force enumeration,
                                             Pearson r / p (scipy), Holm-adjusted p-values.
  analysis/tests/fixtures/table6/runs.csv    a synthetic study: 2 datasets, 58 projects x 3
                                             algorithms x 20 seeds, heavy ties, some failed runs.
  analysis/tests/fixtures/table6/expected_table6.csv
  analysis/tests/fixtures/table6/expected_coverage.csv
                                             the Table-6 counts and coverage summary derived from
                                             runs.csv with pandas + scipy only.
  analysis/tests/fixtures/incomplete/runs.csv  a study with failed, missing, pending, cancelled and
                                             `limit` runs (cells with 0..10 results).
  analysis/tests/fixtures/incomplete/expected_{pairs,table6,excluded,limit}.csv
                                             per project n_a, n_b, U, p, Â12; Table-6 counts; the
                                             projects left out; limit runs per algorithm, under
                                             `--incomplete exclude` and `compare` (column `mode`).

Floats are written as strings with Python's repr (shortest round-trip), so the Rust side parses
exactly the same doubles. Deterministic: a fixed numpy seed; rerunning gives the same bytes for
the same scipy/pandas versions.

Usage: python3 scripts/stats_fixtures.py   (needs: pip install scipy pandas)
"""

import hashlib
import itertools
import json
import math
import os
from fractions import Fraction

import numpy as np
import pandas as pd
import scipy
from scipy import stats

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
FIX = os.path.join(ROOT, "analysis", "tests", "fixtures")


def f2s(x):
    """Float to its shortest round-trip text (what Rust's str::parse reads back exactly)."""
    return repr(float(x))


def doubled_u(a, b):
    """2·U of sample a by pairwise counting (wins count 2, ties 1); an integer."""
    return sum(2 if x > y else (1 if x == y else 0) for x in a for y in b)


def brute_exact(a, b):
    """Exact two-sided permutation p by enumerating every split of the pooled sample.

    p = #{splits: |2U - n1*n2| >= |2U_obs - n1*n2|} / C(n, n1), ties kept as they are.
    Returned as (extreme, total) integers.
    """
    pooled = list(a) + list(b)
    n1, n = len(a), len(pooled)
    obs = abs(doubled_u(a, b) - len(a) * len(b))
    extreme = total = 0
    for idx in itertools.combinations(range(n), n1):
        s = set(idx)
        xa = [pooled[i] for i in idx]
        xb = [pooled[i] for i in range(n) if i not in s]
        total += 1
        if abs(doubled_u(xa, xb) - n1 * (n - n1)) >= obs:
            extreme += 1
    assert total == math.comb(n, n1)
    return extreme, total


def mwu_case(name, a, b):
    a = [float(x) for x in a]
    b = [float(x) for x in b]
    res = stats.mannwhitneyu(a, b, use_continuity=True, alternative="two-sided", method="asymptotic")
    u1 = float(res.statistic)
    p = float(res.pvalue)
    d = doubled_u(a, b)
    # scipy's U (from average ranks) must equal the counted U exactly.
    assert Fraction(d, 2) == Fraction(u1), (name, u1, d)
    # All values tied: scipy yields nan (0/0) in some versions; the convention is p = 1.
    if len(set(a + b)) == 1:
        assert math.isnan(p) or p == 1.0, (name, p)
        p = 1.0
    case = {
        "name": name,
        "a": [f2s(x) for x in a],
        "b": [f2s(x) for x in b],
        "u1": f2s(u1),
        "p_asymptotic": f2s(p),
        "a12_num": d,
        "a12_den": 2 * len(a) * len(b),
        "a12": f2s(u1 / (len(a) * len(b))),
    }
    if len(a) + len(b) <= 16:
        e, t = brute_exact(a, b)
        case["exact_extreme"] = e
        case["exact_total"] = t
    return case


def mwu_cases(rng):
    cases = []
    regimes = {
        "distinct": lambda n: rng.random(n),
        "ties3": lambda n: rng.choice([0.0, 0.5, 1.0], size=n),
        "frac7": lambda n: rng.integers(0, 8, size=n) / 7.0,
    }
    for n1 in range(1, 6):
        for n2 in range(1, 6):
            for reg, gen in regimes.items():
                cases.append(mwu_case(f"n{n1}x{n2}-{reg}", gen(n1), gen(n2)))
    for n in [1, 2, 5, 20, 30]:
        cases.append(mwu_case(f"all-equal-{n}", [0.75] * n, [0.75] * n))
    cases.append(mwu_case("one-side-constant", [1.0] * 20, list(rng.integers(15, 21, size=20) / 20.0)))
    cases.append(mwu_case("both-constant-different", [1.0] * 20, [0.5] * 20))
    for n1, n2 in [(3, 17), (17, 3), (20, 30), (7, 2), (1, 30), (30, 1), (6, 9)]:
        cases.append(mwu_case(f"unequal-{n1}x{n2}-ties", rng.integers(0, 5, size=n1) / 4.0, rng.integers(1, 6, size=n2) / 5.0))
        cases.append(mwu_case(f"unequal-{n1}x{n2}-distinct", rng.random(n1), rng.random(n2) + 0.1))
    for n in [20, 30]:
        cases.append(mwu_case(f"n{n}-distinct", rng.random(n), rng.random(n) + 0.15))
        cases.append(mwu_case(f"n{n}-heavy-ties", rng.choice([0.6, 0.8, 1.0], size=n, p=[0.1, 0.2, 0.7]),
                              rng.choice([0.6, 0.8, 1.0], size=n, p=[0.3, 0.3, 0.4])))
        cases.append(mwu_case(f"n{n}-coverage", rng.integers(30, 41, size=n) / 40.0, rng.integers(28, 41, size=n) / 40.0))
        cases.append(mwu_case(f"n{n}-one-differs", [1.0] * (n - 1) + [0.9], [1.0] * n))
    for n in [2, 5, 8, 20, 30, 100, 400]:
        lo = list(rng.random(n) * 0.4)
        hi = list(rng.random(n) * 0.4 + 0.5)
        cases.append(mwu_case(f"separated-{n}-up", hi, lo))
        cases.append(mwu_case(f"separated-{n}-down", lo, hi))
    cases.append(mwu_case("separated-ties-30", [1.0] * 30, [0.5] * 15 + [0.25] * 15))
    cases.append(mwu_case("large-ties-200x150", rng.integers(0, 11, size=200) / 10.0, rng.integers(0, 11, size=150) / 10.0))
    cases.append(mwu_case("signed-zero", [0.0, -0.0, 0.5], [0.0, 0.25]))
    # Random small samples for the exact test (n1 + n2 <= 16), with and without ties.
    for k in range(12):
        n1 = int(rng.integers(1, 9))
        n2 = int(rng.integers(1, 17 - n1))
        tied = k % 2 == 0
        g = (lambda n: rng.integers(0, 4, size=n) / 3.0) if tied else (lambda n: rng.random(n))
        cases.append(mwu_case(f"exact-random-{k}", g(n1), g(n2)))
    return cases


def pearson_cases(rng):
    out = []

    def add(name, x, y):
        r = stats.pearsonr(x, y)
        out.append({"name": name, "x": [f2s(v) for v in x], "y": [f2s(v) for v in y],
                    "r": f2s(r.statistic), "p": f2s(r.pvalue)})

    for n in [3, 4, 5, 10, 30, 100, 1000]:
        x = rng.normal(size=n)
        add(f"noise-{n}", x, rng.normal(size=n))
        add(f"linear-{n}", x, 0.7 * x + rng.normal(size=n))
    add("perfect", [1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0])
    add("perfect-negative", [1.0, 2.0, 3.0, 4.0, 5.0], [5.0, 4.0, 3.0, 2.0, 1.0])
    add("ties", [1.0, 1.0, 2.0, 2.0, 3.0, 3.0], [0.5, 0.5, 0.5, 1.0, 1.0, 0.0])
    sizes = rng.integers(5, 2000, size=200).astype(float)
    add("size-vs-coverage", sizes, np.clip(1.0 - sizes / 3000.0 + rng.normal(scale=0.1, size=200), 0, 1))
    return out


def holm(ps):
    """Holm step-down adjusted p-values (textbook definition, independent of the Rust code)."""
    m = len(ps)
    order = sorted(range(m), key=lambda i: (ps[i], i))
    adj = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        adj[i] = running
    return adj


def holm_cases(rng):
    out = []
    for k, m in enumerate([1, 2, 5, 20, 100]):
        ps = list(rng.random(m) ** 3)
        if m >= 5:
            ps[1] = ps[3]  # a tie
        out.append({"name": f"holm-{k}", "p": [f2s(p) for p in ps], "adjusted": [f2s(p) for p in holm(ps)]})
    return out


# ---------------------------------------------------------------------------------------------
# Table-6 fixture

ALGS = ["mio", "mosa", "random"]
SEEDS = list(range(1, 21))


def run_id(*parts):
    return hashlib.sha256("\0".join(str(p) for p in parts).encode()).hexdigest()[:32]


RESULT_STATUSES = ("ok", "limit")  # statuses whose runs carry a result (coverage, timeline, digest)


def contract_row(rng, ds, project, alg, seed, status, error, covered, total):
    """One row of runs.csv with every column of docs/exports.md; result columns stay empty for
    runs without a result. Draws from rng in a fixed order (the fixtures' bytes depend on it)."""
    ok = status in RESULT_STATUSES
    return {
        "run_id": run_id(ds, project, alg, seed),
        "dataset": ds,
        "project": project,
        "project_hash": run_id("h", ds, project),
        "algorithm": alg,
        "config": json.dumps({"algorithm": alg}),
        "seed": seed,
        "budget_unit": "steps",
        "budget": 3000,
        "status": status,
        "error": error,
        "coverage": f2s(covered / total) if ok else "",
        "covered": covered if ok else "",
        "total_targets": total if ok else "",
        "steps": 3000 if ok else "",
        "executions": int(rng.integers(10, 90)) if ok else "",
        "evaluations": "",
        "tests_before_min": "",
        "tests_after_min": int(rng.integers(1, 4)) if ok else "",
        "events_before_min": "",
        "events_after_min": int(rng.integers(2, 30)) if ok else "",
        "full_coverage": ("true" if covered == total else "false") if ok else "",
        "steps_to_full_coverage": int(rng.integers(1, 3000)) if ok and covered == total else "",
        "mutants": 0 if ok else "",
        "mutants_killed": 0 if ok else "",
        "mutants_excluded": 0 if ok else "",
        "mutants_timeout": 0 if ok else "",
        "mutation_score": "",
        "geometry": "exact" if ok else "",
        "reproducible": "true",
        "digest": run_id("d", ds, project, alg, seed) if ok else "",
        "duration_ms": int(rng.integers(10, 1000)),
    }


def table6_runs(rng):
    rows = []
    datasets = [("d1", 48), ("d2", 10)]
    for ds, nproj in datasets:
        for pi in range(nproj):
            project = f"p{pi:03d}"
            total = int(rng.integers(4, 60))
            kind = pi % 6
            for ai, alg in enumerate(ALGS):
                # Levels of covered counts this algorithm reaches on this project.
                if kind == 0:  # everything covered by everyone: Â12 = 0.5 exactly
                    levels, probs = [total], [1.0]
                elif kind == 1:  # same plateau for everyone, below full
                    levels, probs = [total - 1], [1.0]
                elif kind == 2:  # heavy ties, algorithms differ a little
                    levels = [total - 2, total - 1, total]
                    probs = [[0.1, 0.2, 0.7], [0.2, 0.3, 0.5], [0.5, 0.3, 0.2]][ai]
                elif kind == 3:  # clear separation for mio/mosa over random
                    base = total - 3 if alg == "random" else total
                    levels, probs = [max(base - 1, 0), base], [0.3, 0.7]
                elif kind == 4:  # identical distributions: mostly small differences, ties
                    levels, probs = [total // 2, total // 2 + 1], [0.5, 0.5]
                else:  # random spread
                    lo = int(rng.integers(0, max(total // 2, 1)))
                    levels = list(range(lo, total + 1))
                    probs = [1.0 / len(levels)] * len(levels)
                for seed in SEEDS:
                    covered = int(rng.choice(levels, p=probs))
                    status, error = "ok", ""
                    # Incomplete repetitions: excluded from comparisons that involve them.
                    if ds == "d1" and pi in (7, 19) and alg == "mosa" and seed == 13:
                        status, error = "error", "vm error: synthetic"
                    if ds == "d1" and pi == 31 and alg == "random" and seed == 20:
                        continue  # a missing row
                    if ds == "d2" and pi == 4:
                        status, error = "project_rejected", "not a Scratch 3 project"
                    if ds == "d1" and pi == 40 and alg == "mio" and seed in (1, 2):
                        status, error = "infra_failure", "worker lost"
                    rows.append(contract_row(rng, ds, project, alg, seed, status, error, covered, total))
    return pd.DataFrame(rows)


def expected_table6(df):
    """Table-6 counts with pandas + scipy only (the independent derivation)."""
    out = []
    cov_rows = []
    for ds in sorted(df["dataset"].unique()):
        d = df[df["dataset"] == ds]
        # Seeds expected for an algorithm: every seed seen for it in this dataset.
        expected = {alg: set(d[d["algorithm"] == alg]["seed"]) for alg in ALGS}
        ok = d[d["status"] == "ok"].copy()
        ok["coverage"] = ok["coverage"].astype(float)
        complete = {}
        for (proj, alg), g in ok.groupby(["project", "algorithm"]):
            complete[(proj, alg)] = set(g["seed"]) == expected[alg] and len(g) == len(expected[alg])
        projects = sorted(d["project"].unique())
        for a, b in itertools.combinations(ALGS, 2):
            counts = dict(sig_better=0, better=0, equal=0, worse=0, sig_worse=0)
            a12s = []
            excluded = 0
            for proj in projects:
                if not (complete.get((proj, a), False) and complete.get((proj, b), False)):
                    excluded += 1
                    continue
                xa = ok[(ok["project"] == proj) & (ok["algorithm"] == a)]["coverage"].to_list()
                xb = ok[(ok["project"] == proj) & (ok["algorithm"] == b)]["coverage"].to_list()
                res = stats.mannwhitneyu(xa, xb, use_continuity=True, alternative="two-sided", method="asymptotic")
                p = 1.0 if len(set(xa + xb)) == 1 else float(res.pvalue)
                a12 = float(res.statistic) / (len(xa) * len(xb))
                a12s.append(a12)
                if a12 > 0.5:
                    counts["better"] += 1
                    counts["sig_better"] += p < 0.05
                elif a12 < 0.5:
                    counts["worse"] += 1
                    counts["sig_worse"] += p < 0.05
                else:
                    counts["equal"] += 1
            out.append({"dataset": ds, "a": a, "b": b, "compared": len(a12s), "excluded": excluded,
                        "mean_a12": f2s(sum(a12s) / len(a12s)), **{k: int(v) for k, v in counts.items()}})
        for alg in ALGS:
            g = ok[ok["algorithm"] == alg]
            per_project = g.groupby("project")["coverage"].mean()
            cov_rows.append({"dataset": ds, "algorithm": alg, "projects": len(per_project), "runs_ok": len(g),
                             "runs_not_ok": int(((d["algorithm"] == alg) & (d["status"] != "ok")).sum()),
                             "mean": f2s(per_project.mean()), "median": f2s(per_project.median())})
    return pd.DataFrame(out), pd.DataFrame(cov_rows)


# ---------------------------------------------------------------------------------------------
# Incomplete-repetitions fixture (`--incomplete exclude|compare`, `limit` runs)

# Damage applied to a project, by pi % 12: which runs of which algorithm failed, are missing or
# ended by the work cap (`limit`, a result). n below is the number of results out of the seeds.
INCOMPLETE_KINDS = [
    "complete",
    "mosa: 2 seeds error",                       # n = seeds - 2
    "random: last 2 seeds missing",              # missing rows
    "mio: 1 result, the rest infra_failure",     # n = 1
    "random: every run failed (d2: project_rejected for all)",  # n = 0
    "mosa: no rows at all",
    "mio: 4 limit runs, the rest ok",            # complete, through limit runs
    "random: 2 limit, 1 pending, 1 cancelled",
    "mosa: 2 results, the rest error",           # n = 2, the smallest compared
    "mio: 1 limit run, the other seeds missing",  # n = 1
    "only random has rows",                      # mio vs mosa does not involve the project
    "mio: 1 cancelled; random: 3 missing, 1 limit",
]


def incomplete_status(ds, kind, alg, seed, nseeds):
    """(status, error) of one run under a damage kind, or None for a missing row."""
    ok = ("ok", "")
    if kind == 1 and alg == "mosa" and seed in (3, 4):
        return "error", "vm error: synthetic"
    if kind == 2 and alg == "random" and seed > nseeds - 2:
        return None
    if kind == 3 and alg == "mio" and seed > 1:
        return "infra_failure", "worker lost"
    if kind == 4 and ds == "d2":
        return "project_rejected", "not a Scratch 3 project"
    if kind == 4 and alg == "random":
        return "error", "vm error: synthetic"
    if kind == 5 and alg == "mosa":
        return None
    if kind == 6 and alg == "mio" and seed <= 4:
        return "limit", "work cap reached"
    if kind == 7 and alg == "random":
        return {1: ("limit", "work cap reached"), 2: ("limit", "work cap reached"), 4: ("pending", ""),
                5: ("cancelled", "")}.get(seed, ok)
    if kind == 8 and alg == "mosa" and seed > 2:
        return "error", "vm error: synthetic"
    if kind == 9 and alg == "mio":
        return ("limit", "work cap reached") if seed == 1 else None
    if kind == 10 and alg != "random":
        return None
    if kind == 11 and alg == "mio" and seed == 5:
        return "cancelled", ""
    if kind == 11 and alg == "random":
        return None if seed <= 3 else (("limit", "work cap reached") if seed == 4 else ok)
    return ok


def incomplete_runs(rng):
    rows = []
    for ds, nproj, nseeds in [("d1", 36, 10), ("d2", 8, 5)]:
        for pi in range(nproj):
            project = f"q{pi:03d}"
            total = int(rng.integers(6, 50))
            kind = pi % len(INCOMPLETE_KINDS)
            # Every damage kind meets several value regimes (projects pi, pi+12, pi+24).
            regime = (pi + pi // 12) % 4
            for ai, alg in enumerate(ALGS):
                if regime == 0:  # heavy ties, algorithms differ a little
                    levels = [total - 2, total - 1, total]
                    probs = [[0.1, 0.2, 0.7], [0.2, 0.3, 0.5], [0.5, 0.3, 0.2]][ai]
                elif regime == 1:  # random spread
                    lo = int(rng.integers(0, total // 2))
                    levels = list(range(lo, total + 1))
                    probs = [1.0 / len(levels)] * len(levels)
                elif regime == 2:  # clear separation for mio/mosa over random
                    base = total - 4 if alg == "random" else total
                    levels, probs = [base - 1, base], [0.3, 0.7]
                else:  # everyone on the same plateau: all values tied, p = 1, Â12 = 0.5
                    levels, probs = [total - 1], [1.0]
                for seed in range(1, nseeds + 1):
                    covered = int(rng.choice(levels, p=probs))
                    st = incomplete_status(ds, kind, alg, seed, nseeds)
                    if st is None:
                        continue
                    rows.append(contract_row(rng, ds, project, alg, seed, st[0], st[1], covered, total))
    return pd.DataFrame(rows)


def expected_incomplete(df):
    """Per-project tests, Table-6 counts and exclusions under both rules, with pandas + scipy."""
    pairs, table, excluded_rows, limit_rows = [], [], [], []
    for ds in sorted(df["dataset"].unique()):
        d = df[df["dataset"] == ds]
        res = d[d["status"].isin(RESULT_STATUSES)].sort_values("seed")
        expected = {alg: set(d[d["algorithm"] == alg]["seed"]) for alg in ALGS}
        for alg in ALGS:
            limit_rows.append({"dataset": ds, "algorithm": alg,
                               "runs_limit": int(((d["algorithm"] == alg) & (d["status"] == "limit")).sum()),
                               "runs_result": int((res["algorithm"] == alg).sum())})
        for mode in ["exclude", "compare"]:
            for a, b in itertools.combinations(ALGS, 2):
                counts = dict(sig_better=0, better=0, equal=0, worse=0, sig_worse=0)
                a12s = []
                excluded = 0
                for proj in sorted(d["project"].unique()):
                    rows = {alg: d[(d["project"] == proj) & (d["algorithm"] == alg)] for alg in (a, b)}
                    if all(len(r) == 0 for r in rows.values()):
                        continue  # neither configuration ran on it: not part of this comparison
                    got = {alg: res[(res["project"] == proj) & (res["algorithm"] == alg)] for alg in (a, b)}
                    xa, xb = (got[alg]["coverage"].astype(float).to_list() for alg in (a, b))
                    if mode == "exclude":
                        enters = all(set(got[alg]["seed"]) == expected[alg] for alg in (a, b))
                    else:
                        enters = len(xa) >= 2 and len(xb) >= 2
                    if not enters:
                        excluded += 1
                        excluded_rows.append({"mode": mode, "dataset": ds, "a": a, "b": b, "project": proj,
                                              "n_a": len(xa), "n_b": len(xb)})
                        continue
                    r = stats.mannwhitneyu(xa, xb, use_continuity=True, alternative="two-sided", method="asymptotic")
                    p = 1.0 if len(set(xa + xb)) == 1 else float(r.pvalue)
                    u = float(r.statistic)
                    a12 = u / (len(xa) * len(xb))
                    a12s.append(a12)
                    pairs.append({"mode": mode, "dataset": ds, "a": a, "b": b, "project": proj, "n_a": len(xa),
                                  "n_b": len(xb), "u": f2s(u), "p": f2s(p), "a12": f2s(a12)})
                    if a12 > 0.5:
                        counts["better"] += 1
                        counts["sig_better"] += p < 0.05
                    elif a12 < 0.5:
                        counts["worse"] += 1
                        counts["sig_worse"] += p < 0.05
                    else:
                        counts["equal"] += 1
                table.append({"mode": mode, "dataset": ds, "a": a, "b": b, "compared": len(a12s),
                              "excluded": excluded, "mean_a12": f2s(sum(a12s) / len(a12s)),
                              **{k: int(v) for k, v in counts.items()}})
    return pd.DataFrame(pairs), pd.DataFrame(table), pd.DataFrame(excluded_rows), pd.DataFrame(limit_rows)


def read_runs(path):
    """runs.csv as the Rust side reads it: coverage parsed from the very text written."""
    df = pd.read_csv(path, dtype={"coverage": str}, keep_default_na=False)
    return df.assign(coverage=df["coverage"].map(lambda s: float(s) if s != "" else float("nan")))


def main():
    rng = np.random.default_rng(20240611)
    doc = {
        "generator": "scripts/stats_fixtures.py",
        "scipy": scipy.__version__,
        "mwu": mwu_cases(rng),
        "pearson": pearson_cases(rng),
        "holm": holm_cases(rng),
    }
    os.makedirs(FIX, exist_ok=True)
    with open(os.path.join(FIX, "stats_cases.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")

    t6 = os.path.join(FIX, "table6")
    os.makedirs(t6, exist_ok=True)
    runs = table6_runs(np.random.default_rng(7))
    runs.to_csv(os.path.join(t6, "runs.csv"), index=False, lineterminator="\n")
    # Re-read the CSV so the expectations come from exactly the bytes the Rust side reads.
    table, cov = expected_table6(read_runs(os.path.join(t6, "runs.csv")))
    table.to_csv(os.path.join(t6, "expected_table6.csv"), index=False, lineterminator="\n")
    cov.to_csv(os.path.join(t6, "expected_coverage.csv"), index=False, lineterminator="\n")

    inc = os.path.join(FIX, "incomplete")
    os.makedirs(inc, exist_ok=True)
    inc_runs = incomplete_runs(np.random.default_rng(11))
    inc_runs.to_csv(os.path.join(inc, "runs.csv"), index=False, lineterminator="\n")
    frames = expected_incomplete(read_runs(os.path.join(inc, "runs.csv")))
    for name, frame in zip(["expected_pairs", "expected_table6", "expected_excluded", "expected_limit"], frames):
        frame.to_csv(os.path.join(inc, f"{name}.csv"), index=False, lineterminator="\n")

    print(f"{len(doc['mwu'])} Mann-Whitney cases, {len(doc['pearson'])} Pearson cases, "
          f"{len(runs)} runs in the Table-6 fixture, {len(inc_runs)} in the incomplete fixture")
    print(table.to_string(index=False))
    print(frames[1].to_string(index=False))


if __name__ == "__main__":
    main()
