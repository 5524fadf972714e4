#!/usr/bin/env python3
"""Differential fidelity: clowder's VM against the real scratch-vm (fidelity oracle).

Runs both VMs on every project of the chosen corpora, compares the traces with the
oracle's compare.py (exact) and prints the match rate per pass and, for each
mismatch, the first diverging step and field.

Passes (issue 3, acceptance 2):
  random-sample   300 steps, seed 1, default input (green flag at step 0)
  whisker-rq1     the same
  whisker-rq1+in  with a generated input file per project that presses the keys the
                  project listens to, clicks its clickable sprites and the stage,
                  answers questions and moves the mouse (see make_inputs)

Reference traces are cached (they only depend on the project bytes, the oracle,
the seed, the step count and the input file), so re-runs only run our VM.
Usually called through scripts/fidelity.sh, which installs the oracle and builds
clowder first.
"""
import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile

ORACLE_TAG = "scratch-vm@5.0.300-fidelity-1"


def sha(data, n=12):
    return hashlib.sha256(data).hexdigest()[:n]


# --------------------------------------------------------------------------- inputs

KEY_NAMES = {"space", "left arrow", "right arrow", "up arrow", "down arrow", "enter"}


def project_json(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"PK":
        with zipfile.ZipFile(path) as z:
            for name in z.namelist():
                if name.rsplit("/", 1)[-1] == "project.json":
                    return json.loads(z.read(name))
        raise ValueError("no project.json")
    return json.loads(data)


def make_inputs(path, steps):
    """A deterministic input script for one project.

    Green flag at step 0; then, cycling every 12 steps from step 5: press (5 steps)
    each key the project names (key hats and `key pressed?` menus, `any` -> space),
    click each sprite that has a `when this sprite clicked` script and the stage,
    answer (when the project asks something), move the mouse over a fixed grid and
    press/release the button. The same project always gets the same file.
    """
    proj = project_json(path)
    keys, sprites, stage_click, asks = set(), [], False, False
    for t in proj.get("targets", []):
        blocks = t.get("blocks", {}) or {}
        for b in blocks.values():
            if not isinstance(b, dict):
                continue
            op = b.get("opcode")
            fields = b.get("fields") or {}
            if op == "event_whenkeypressed" or op == "sensing_keyoptions":
                v = fields.get("KEY_OPTION")
                if isinstance(v, list) and v and isinstance(v[0], str):
                    keys.add(v[0])
            elif op == "event_whenthisspriteclicked":
                if t.get("isStage"):
                    stage_click = True
                elif t.get("name") not in sprites:
                    sprites.append(t.get("name"))
            elif op == "event_whenstageclicked":
                stage_click = True
            elif op == "sensing_askandwait":
                asks = True
    if "any" in keys:
        keys.discard("any")
        keys.add("space")
    keys = sorted(k for k in keys if k in KEY_NAMES or len(k) == 1)
    events = []
    for k in keys:
        events.append(("key", k))
    for s in sorted(sprites):
        events.append(("click", s))
    if stage_click:
        events.append(("stage", None))
    answers = ["42", "yes", "Scratch", "7", ""]
    if asks:
        events.append(("answer", None))
    events.append(("mouse", None))
    out = [{"step": 0, "kind": "greenflag"}]
    grid = [(100, 50), (-120, -80), (0, 150), (200, -170), (-230, 30)]
    i, step, n_answer, n_mouse = 0, 5, 0, 0
    while step < steps:
        kind, arg = events[i % len(events)]
        if kind == "key":
            out.append({"step": step, "kind": "key_down", "key": arg})
            out.append({"step": step + 5, "kind": "key_up", "key": arg})
        elif kind == "click":
            out.append({"step": step, "kind": "click_sprite", "sprite": arg})
        elif kind == "stage":
            out.append({"step": step, "kind": "click_stage"})
        elif kind == "answer":
            out.append({"step": step, "kind": "answer", "text": answers[n_answer % len(answers)]})
            n_answer += 1
        elif kind == "mouse":
            x, y = grid[n_mouse % len(grid)]
            n_mouse += 1
            out.append({"step": step, "kind": "mouse_move", "x": x, "y": y})
            out.append({"step": step + 1, "kind": "mouse_down"})
            out.append({"step": step + 3, "kind": "mouse_up"})
        i += 1
        step += 12
    return [e for e in out if e["step"] < steps]


# --------------------------------------------------------------------------- running


def run(cmd, out_path, timeout):
    tmp = out_path + ".tmp"
    with open(tmp, "wb") as f:
        try:
            p = subprocess.run(cmd, stdout=f, stderr=subprocess.PIPE, timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"timeout after {timeout} s"
    if p.returncode not in (0, 2):  # trace.js exits 2 on load_error (still a valid trace)
        return f"exit {p.returncode}: {p.stderr.decode(errors='replace').strip()[-300:]}"
    os.replace(tmp, out_path)
    return None


def reference(args, proj, tag, inputs_file):
    corpus = os.path.basename(os.path.dirname(proj))
    d = os.path.join(args.cache, "ref", corpus)
    os.makedirs(d, exist_ok=True)
    with open(proj, "rb") as f:
        ph = sha(f.read())
    out = os.path.join(d, f"{os.path.basename(proj)}.{ph}.{tag}.jsonl")
    if os.path.exists(out):
        return out, None
    cmd = ["node", os.path.join(args.oracle, "trace.js"), proj, "--steps", str(args.steps), "--seed", str(args.seed)]
    if inputs_file:
        cmd += ["--inputs", inputs_file]
    err = run(cmd, out, args.timeout)
    return (None, err) if err else (out, None)


def ours(args, proj, tag, inputs_file):
    corpus = os.path.basename(os.path.dirname(proj))
    d = os.path.join(args.cache, "ours", corpus)
    os.makedirs(d, exist_ok=True)
    out = os.path.join(d, f"{os.path.basename(proj)}.{tag}.jsonl")
    cmd = [args.clowder, "vm", "trace", proj, "--steps", str(args.steps), "--seed", str(args.seed)]
    if inputs_file:
        cmd += ["--inputs", inputs_file]
    err = run(cmd, out, args.timeout)
    return (None, err) if err else (out, None)


def compare(args, mine, ref):
    p = subprocess.run([sys.executable, os.path.join(args.oracle, "compare.py"), mine, ref, "--json"],
                       capture_output=True, text=True)
    if p.returncode == 2:
        return {"equivalent": False, "error": p.stderr.strip()}
    return json.loads(p.stdout)


def one(args, proj, with_inputs):
    inputs_file, tag = None, f"s{args.seed}-n{args.steps}-default-{ORACLE_TAG}"
    if with_inputs:
        data = json.dumps(make_inputs(proj, args.steps), indent=0).encode()
        d = os.path.join(args.cache, "inputs")
        os.makedirs(d, exist_ok=True)
        inputs_file = os.path.join(d, f"{os.path.basename(proj)}.{sha(data)}.json")
        if not os.path.exists(inputs_file):
            with open(inputs_file, "wb") as f:
                f.write(data)
        tag = f"s{args.seed}-n{args.steps}-in{sha(data)}-{ORACLE_TAG}"
    ref, err = reference(args, proj, tag, inputs_file)
    if err:
        return {"project": proj, "status": "ref_error", "detail": err}
    if args.reference_only:
        return {"project": proj, "status": "ref_only"}
    mine, err = ours(args, proj, tag, inputs_file)
    if err:
        return {"project": proj, "status": "our_error", "detail": err}
    s = compare(args, mine, ref)
    if s.get("equivalent"):
        return {"project": proj, "status": "match"}
    return {"project": proj, "status": "mismatch", "summary": s, "ours": mine, "ref": ref}


def describe(s):
    if "error" in s:
        return s["error"]
    fd = s.get("first_divergence")
    if fd:
        return (f"step {fd['step']}: {fd['path']}: ours={json.dumps(fd['ours'], ensure_ascii=False)[:100]} "
                f"ref={json.dumps(fd['reference'], ensure_ascii=False)[:100]} ({fd['differences_in_step']} diffs)")
    ed = s.get("end_differences") or []
    if ed:
        e = ed[0]
        return f"{e['path']}: ours={e['ours']} ref={e['reference']}"
    return (f"steps only in ours {s.get('steps_only_in_ours')}, "
            f"only in reference {s.get('steps_only_in_reference')}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--oracle", required=True, help="installed fidelity oracle folder (trace.js, compare.py)")
    ap.add_argument("--clowder", required=True, help="clowder binary")
    ap.add_argument("--corpora", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--only", default=None, help="regex on the project file name")
    ap.add_argument("--pass", dest="passes", default="random-sample,whisker-rq1,whisker-rq1+inputs",
                    help="comma-separated passes")
    ap.add_argument("--reference-only", action="store_true", help="only fill the reference cache")
    ap.add_argument("--json", default=None, help="write all results to this JSON file")
    args = ap.parse_args()

    all_results = {}
    exit_code = 0
    for pname in [p.strip() for p in args.passes.split(",") if p.strip()]:
        corpus, _, mode = pname.partition("+")
        folder = os.path.join(args.corpora, corpus)
        if not os.path.isdir(folder):
            print(f"SKIP {pname}: no folder {folder}")
            continue
        projects = sorted(os.path.join(folder, f) for f in os.listdir(folder)
                          if f.endswith((".sb3", ".json")) and not f.startswith("MANIFEST"))
        if args.only:
            projects = [p for p in projects if re.search(args.only, os.path.basename(p))]
        with cf.ThreadPoolExecutor(max_workers=args.jobs) as ex:
            results = list(ex.map(lambda p: one(args, p, mode == "inputs"), projects))
        all_results[pname] = results
        n = len(results)
        match = sum(r["status"] == "match" for r in results)
        print(f"\n== {pname}: {match}/{n} identical ({100.0 * match / max(n, 1):.1f} %)")
        for r in results:
            name = os.path.basename(r["project"])
            if r["status"] == "mismatch":
                print(f"  MISMATCH {name}: {describe(r['summary'])}")
            elif r["status"] != "match" and r["status"] != "ref_only":
                print(f"  {r['status'].upper()} {name}: {r.get('detail')}")
        if match < n and not args.reference_only:
            exit_code = 1
    if args.json:
        with open(args.json, "w") as f:
            json.dump(all_results, f, indent=1)
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
