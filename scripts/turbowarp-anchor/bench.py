#!/usr/bin/env python3
"""TurboWarp (compiler on) vs the reference scratch-vm, both under the oracle's semantics.

For each project: the generic input script of `clowder bench vm` (bench-inputs.js), --repeat
runs of this folder's trace.js and of the oracle's trace.js (--steps, --seed, --run-all), the
best vm_steps_per_sec of each; the first run of each side writes its trace, and the two traces
are compared with the oracle's compare.py, strictly and after loose.py (number-like strings as
numbers). Prints and writes a TSV.

  python3 bench.py --list ../../experiments/bench-heavy.txt --corpora ../../../shared/corpora \\
      --oracle ~/.cache/clowder-fidelity/oracle --steps 3000 --seed 1 --repeat 2 \\
      --work /tmp/tw-bench --out turbowarp.tsv
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run_trace(script, project, inputs, steps, seed, out):
    cmd = ["node", script, project, "--steps", str(steps), "--seed", str(seed), "--run-all",
           "--stats", "--out", out, "--inputs", inputs]
    p = subprocess.run(cmd, capture_output=True, text=True)
    for line in p.stderr.splitlines():
        if line.startswith("#stats "):
            return json.loads(line[7:])
    return {"reason": f"no #stats (exit {p.returncode}): {p.stderr.strip()[-300:]}"}


def compare(oracle, a, b):
    p = subprocess.run([sys.executable, os.path.join(oracle, "compare.py"), a, b, "--json"],
                       capture_output=True, text=True)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"equivalent": False, "first_divergence": p.stderr.strip()[-200:]}


def first_diff(c):
    f = c.get("first_divergence")
    if c.get("equivalent"):
        return ""
    if isinstance(f, dict):
        return f"step {f['step']}: {f['path']} tw={json.dumps(f['ours'])} ref={json.dumps(f['reference'])}"
    if c.get("end_differences"):
        return json.dumps(c["end_differences"])
    return str(f)


def yes_no(v):
    return "-" if v is None else ("yes" if v else "no")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--list", required=True)
    ap.add_argument("--corpora", required=True)
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--keep-traces", action="store_true")
    ap.add_argument("--no-traces", action="store_true", help="speed only: no trace files, no comparison")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    names = [l.strip() for l in open(a.list) if l.strip() and not l.startswith("#")]
    rows = []
    header = ["project", "tw_steps_per_sec", "ref_steps_per_sec", "tw_over_ref", "trace_identical",
              "trace_identical_loose", "first_difference", "compiled_scripts", "compile_errors", "note"]
    print("\t".join(header), flush=True)
    for name in names:
        proj = os.path.join(a.corpora, "random-sample", name)
        base = os.path.join(a.work, name.rsplit(".", 1)[0])
        inputs = base + ".inputs.json"
        with open(inputs, "w") as f:
            subprocess.run(["node", os.path.join(HERE, "bench-inputs.js"), proj, str(a.steps)], stdout=f, check=True)
        best = {}
        stats = {}
        notes = []
        for side, script in (("tw", os.path.join(HERE, "trace.js")), ("ref", os.path.join(a.oracle, "trace.js"))):
            for i in range(a.repeat):
                out = f"{base}.{side}.jsonl" if i == 0 and not a.no_traces else os.devnull
                s = run_trace(script, proj, inputs, a.steps, a.seed, out)
                stats.setdefault(side, s)
                if s.get("reason") != "steps_done":
                    notes.append(f"{side}: {s.get('reason')}")
                    break
                best[side] = max(best.get(side, 0.0), s["vm_steps_per_sec"])
        if a.no_traces:
            strict = loose = {"equivalent": None}
        else:
            strict = compare(a.oracle, f"{base}.tw.jsonl", f"{base}.ref.jsonl")
            for side in ("tw", "ref"):
                with open(f"{base}.{side}.loose.jsonl", "w") as f:
                    subprocess.run([sys.executable, os.path.join(HERE, "loose.py"), f"{base}.{side}.jsonl"],
                                   stdout=f, check=True)
            loose = compare(a.oracle, f"{base}.tw.loose.jsonl", f"{base}.ref.loose.jsonl")
        if not a.keep_traces and not a.no_traces:
            for suffix in (".tw.jsonl", ".ref.jsonl", ".tw.loose.jsonl", ".ref.loose.jsonl"):
                os.remove(base + suffix)
        tw, ref = best.get("tw"), best.get("ref")
        ratio = tw / ref if tw and ref else None
        st = stats.get("tw", {})
        row = [name, f"{tw:.0f}" if tw else "", f"{ref:.0f}" if ref else "", f"{ratio:.2f}" if ratio else "",
               yes_no(strict.get("equivalent")), yes_no(loose.get("equivalent")),
               "" if a.no_traces else first_diff(loose if not loose.get("equivalent") else strict),
               str(st.get("compiled_scripts", "")), str(st.get("compile_errors", "")), "; ".join(notes)]
        rows.append(row)
        print("\t".join(row), flush=True)
    ratios = [float(r[3]) for r in rows if r[3]]
    with open(a.out, "w") as f:
        f.write("\t".join(header) + "\n")
        for r in rows:
            f.write("\t".join(r) + "\n")
    if ratios:
        same = "" if a.no_traces else (f"; strict identical {sum(r[4] == 'yes' for r in rows)}/{len(rows)}, "
                                       f"loose identical {sum(r[5] == 'yes' for r in rows)}/{len(rows)}")
        print(f"# median tw/ref {statistics.median(ratios):.2f} over {len(ratios)} projects{same}", flush=True)


if __name__ == "__main__":
    main()
