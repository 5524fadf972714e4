#!/usr/bin/env python3
"""The size ladder: cost per step of Random, MOSA and MIO, and per mutant, on real projects
from tens to fifteen thousand blocks, for one clowder build or two side by side.

    scripts/size-ladder.py --new target/release/clowder [--old OLD_BUILD] [--steps 6000]
                           [--corpora DIR] [--mutation] [--repeat 1] [--out ladder.md]

Rungs: a smoke project of this repository, the random-sample projects at the median, 90th and
99th percentile of size and its largest, and the `large/` corpus (ball-physics-scroll, Paper
Minecraft). Each (rung, algorithm) runs `clowder gen --work-cap 0` with the step budget; with
`--old` the two builds run in turn (old, new, old, new, …) and the table gives old/new per run
pair: ratios measured side by side, not absolute times. CPU time is the child's user + system
time (`os.wait4`), so the machine's other load does not enter it. With `--mutation`, `clowder
mutate` (MIO, every mutant) runs too, and the CPU beyond the generation of the same suite is
divided by the mutants analysed: the cost per mutant.

Blocks are the non-shadow blocks of project.json; statements are the run's coverage targets.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def blocks_of(path: Path) -> int:
    if path.suffix == ".sb3":
        with zipfile.ZipFile(path) as z:
            p = json.loads(z.read("project.json"))
    else:
        p = json.loads(path.read_text())
    return sum(
        1
        for t in p.get("targets", [])
        for b in (t.get("blocks") or {}).values()
        if isinstance(b, dict) and not b.get("shadow")
    )


def rungs(corpora: Path) -> list[tuple[str, Path]]:
    out = [("smoke", ROOT / "datasets/smoke/counter.json")]
    rs = corpora / "random-sample"
    sized = sorted((blocks_of(p), p.name, p) for p in rs.glob("*.json"))
    if sized:
        for label, q in (("random-sample p50", 0.5), ("random-sample p90", 0.9), ("random-sample p99", 0.99)):
            out.append((label, sized[min(int(q * len(sized)), len(sized) - 1)][2]))
        out.append(("random-sample max", sized[-1][2]))
    for name in ("ball-physics-scroll.sb3", "paper-minecraft.sb3"):
        p = corpora / "large" / name
        if p.exists():
            out.append(("large", p))
    return out


def run(cmd: list[str]) -> tuple[float, int]:
    """CPU seconds (user + system) of the child, and its exit code."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    if proc.stderr:
        proc.stderr.read()
    return usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def gen(binary: str, project: Path, alg: str, steps: int) -> tuple[float, dict]:
    with tempfile.TemporaryDirectory() as d:
        cpu, code = run([binary, "gen", str(project), "--algorithm", alg, "--budget-steps", str(steps),
                         "--work-cap", "0", "--out", d])
        if code != 0:
            return cpu, {}
        return cpu, json.loads((Path(d) / "result.json").read_text())["outcome"]


def mutate(binary: str, project: Path, steps: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as d:
        cpu, code = run([binary, "mutate", str(project), "--algorithm", "mio", "--budget-steps", str(steps),
                         "--out", d])
        if code != 0:
            return cpu, 0
        lines = (Path(d) / "mutants.csv").read_text().splitlines()
        return cpu, max(len(lines) - 1, 0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--new", required=True, help="clowder build to measure")
    ap.add_argument("--old", help="an earlier build, run side by side")
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--corpora", default=os.environ.get("CLOWDER_CORPORA", str(ROOT / "../shared/corpora")))
    ap.add_argument("--algorithms", default="random,mosa,mio")
    ap.add_argument("--mutation", action="store_true")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--max-blocks", type=int, help="skip rungs larger than this")
    ap.add_argument("--out")
    a = ap.parse_args()
    builds = [("new", a.new)] + ([("old", a.old)] if a.old else [])
    lines = [
        f"| project | blocks | statements | algorithm | steps | new CPU-µs/step | new work/step |"
        + (" old CPU-µs/step | old/new |" if a.old else ""),
        "|---|---:|---:|---|---:|---:|---:|" + ("---:|---:|" if a.old else ""),
    ]
    for label, p in rungs(Path(a.corpora)):
        nb = blocks_of(p)
        if a.max_blocks is not None and nb > a.max_blocks:
            continue
        for alg in a.algorithms.split(","):
            best: dict[str, float] = {}
            outcome: dict = {}
            for _ in range(a.repeat):
                for name, binary in reversed(builds):  # old first, then new
                    cpu, o = gen(binary, p, alg, a.steps)
                    steps = max(o.get("steps", 0), 1)
                    per = cpu / steps * 1e6
                    best[name] = min(best.get(name, per), per)
                    if name == "new":
                        outcome = o
            steps = outcome.get("steps", 0)
            work = outcome.get("work", 0) / max(steps, 1)
            row = (f"| {label}: {p.name} | {nb} | {outcome.get('total_targets', '?')} | {alg} | {steps} | "
                   f"{best['new']:.1f} | {work:,.0f} |")
            if a.old:
                row += f" {best['old']:.1f} | {best['old'] / best['new']:.2f} |"
            lines.append(row)
            print(row, flush=True)
        if a.mutation:
            per_mutant = {}
            for name, binary in reversed(builds):
                mcpu, n = mutate(binary, p, a.steps)
                gcpu, _ = gen(binary, p, "mio", a.steps)
                per_mutant[name] = (max(mcpu - gcpu, 0.0) / max(n, 1) * 1e3, n, mcpu)
            row = (f"| {label}: {p.name} | {nb} | | mutants ({per_mutant['new'][1]}) | | "
                   f"{per_mutant['new'][0]:.2f} ms/mutant | {per_mutant['new'][2]:.1f} CPU-s in all |")
            if a.old:
                o = per_mutant["old"]
                row += f" {o[0]:.2f} ms/mutant | {o[0] / max(per_mutant['new'][0], 1e-9):.2f} |"
            lines.append(row)
            print(row, flush=True)
    text = "\n".join(lines) + "\n"
    if a.out:
        Path(a.out).write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
