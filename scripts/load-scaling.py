#!/usr/bin/env python3
"""How the cost of loading, a few steps, one generation run and the mutant list grows with the size
of a project, one dimension at a time: finds whatever is quadratic in something a file controls.

A project file is untrusted input; the load limits (`vm/src/project/error.rs`) bound its size,
but within them nothing should cost more than about linear time, or a 10 MB file can hold a
worker for minutes. For each shape (many costumes, many costumes of one name, many variables,
local variables that clash with global ones, many lists, list items, broadcasts, comments,
monitors, sounds, one long script, many scripts, many procedures, many calls, ...) this builds
the project at N and 4N, runs each command on both, and reports the CPU time and the growth
exponent log(t(4N)/t(N)) / log 4 (1 = linear, 2 = quadratic).

  scripts/load-scaling.py --clowder target/release/clowder [--n 5000] [--only costumes,...]
                          [--commands trace,gen,mutate] [--keep DIR]
                          [--oracle DIR [--oracle-n 300] [--steps 30]]

With --oracle (an installed fidelity oracle, as scripts/fidelity.sh installs into
~/.cache/clowder-fidelity/oracle), each shape is also built at --oracle-n and traced by the
real scratch-vm and by clowder (green flag, a second at step 5, a broadcast at steps 10 and 12,
space pressed at steps 15 and 17; --steps steps); the traces must be identical: the paths a large file takes (indexes
instead of scans) are checked to answer as scratch-vm does.

Exit status 1 when some shape grows with an exponent above --max-exponent (default 1.5) while
its 4N run takes at least --min-seconds (default 0.3 s: below that, start-up noise dominates).
CPU time is a measurement of this machine, not a result: the exponent is what to read.
"""
import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile

SVG = "cd21514d0531fdffb22204e0ec5ed84a"
WAV = "83a9787d4cb6f3b7632b4ddfebf74367"


def costume(name, i=0):
    return {"assetId": SVG, "name": name, "md5ext": SVG + ".svg", "dataFormat": "svg", "rotationCenterX": i,
            "rotationCenterY": 0}


def block(opcode, nxt=None, parent=None, inputs=None, fields=None, top=False):
    b = {"opcode": opcode, "next": nxt, "parent": parent, "inputs": inputs or {}, "fields": fields or {},
         "shadow": False, "topLevel": top}
    if top:
        b.update(x=0, y=0)
    return b


def project(sprite_blocks=None, **sprite):
    stage = {"isStage": True, "name": "Stage", "variables": {}, "lists": {}, "broadcasts": {}, "blocks": {},
             "comments": {}, "currentCostume": 0, "costumes": [costume("backdrop1")], "sounds": [], "volume": 100,
             "layerOrder": 0, "tempo": 60, "videoTransparency": 50, "videoState": "off",
             "textToSpeechLanguage": None}
    s = {"isStage": False, "name": "S", "variables": {}, "lists": {}, "broadcasts": {}, "blocks": sprite_blocks or {},
         "comments": {}, "currentCostume": 0, "costumes": [costume("c1")], "sounds": [], "volume": 100,
         "layerOrder": 1, "visible": True, "x": 0, "y": 0, "size": 100, "direction": 90, "draggable": False,
         "rotationStyle": "all around"}
    stage_changes = sprite.pop("stage", {})
    monitors = sprite.pop("monitors", [])
    s.update(sprite)
    stage.update(stage_changes)
    return {"targets": [stage, s], "monitors": monitors, "extensions": [],
            "meta": {"semver": "3.0.0", "vm": "0.2.0", "agent": "load-scaling"}}


def chain(opcodes_inputs, hat="event_whenflagclicked", prefix="b", hat_fields=None):
    """One script: a hat and then the given (opcode, inputs, fields) blocks, stacked."""
    blocks = {}
    ids = [f"{prefix}h"] + [f"{prefix}{i}" for i in range(len(opcodes_inputs))]
    blocks[ids[0]] = block(hat, ids[1] if len(ids) > 1 else None, None, None, hat_fields, top=True)
    for i, (op, inputs, fields) in enumerate(opcodes_inputs):
        me = ids[i + 1]
        blocks[me] = block(op, ids[i + 2] if i + 2 < len(ids) else None, ids[i], inputs, fields)
    return blocks


def num(v):
    return [1, [4, str(v)]]


def shapes():
    def costumes(n):
        return project(costumes=[costume(f"c{i}x", i) for i in range(n)])

    def costumes_same_name(n):
        return project(costumes=[costume("c", i) for i in range(n)])

    def sounds(n):
        return project(sounds=[{"assetId": WAV, "name": "pop", "dataFormat": "wav", "format": "", "rate": 48000,
                                "sampleCount": 1123 + i, "md5ext": WAV + ".wav"} for i in range(n)])

    def variables(n):
        blocks = chain([("data_changevariableby", {"VALUE": num(1)}, {"VARIABLE": [f"v{i}", f"v{i}"]})
                        for i in range(min(n, 2000))])
        return project(blocks, stage={"variables": {f"v{i}": [f"v{i}", 0] for i in range(n)}})

    def clashing_locals(n):
        # Local variables with the names of global ones (scratch-vm renames the local ones).
        return project(variables={f"l{i}": [f"v{i}", 0] for i in range(n)},
                       stage={"variables": {f"v{i}": [f"v{i}", 0] for i in range(n)}})

    def lists(n):
        return project(lists={f"L{i}": [f"L{i}", ["a"]] for i in range(n)})

    def list_items(n):
        return project(lists={"L": ["L", [str(i) for i in range(n * 20)]]})

    def broadcasts(n):
        return project(stage={"broadcasts": {f"b{i}": f"m{i}" for i in range(n)}})

    def comments(n):
        return project(comments={f"c{i}": {"blockId": None, "x": i, "y": 0, "width": 200, "height": 200,
                                           "minimized": False, "text": "note"} for i in range(n)})

    def monitors(n):
        return project(stage={"variables": {f"v{i}": [f"v{i}", 0] for i in range(n)}},
                       monitors=[{"id": f"v{i}", "mode": "default", "opcode": "data_variable",
                                  "params": {"VARIABLE": f"v{i}"}, "spriteName": None, "value": 0, "width": 0,
                                  "height": 0, "x": 0, "y": 0, "visible": True, "sliderMin": 0, "sliderMax": 100,
                                  "isDiscrete": True} for i in range(n)])

    def long_script(n):
        return project(chain([("motion_changexby", {"DX": num(1)}, {}) for _ in range(n)]))

    def many_scripts(n):
        blocks = {}
        for i in range(n):
            blocks.update(chain([("motion_changexby", {"DX": num(1)}, {})], prefix=f"s{i}_"))
        return project(blocks)

    def receivers(n):
        blocks = chain([("event_broadcast", {"BROADCAST_INPUT": [1, [11, "m", "b"]]}, {})], prefix="g")
        # Each receiver waits, so that a second broadcast restarts running threads.
        for i in range(n):
            blocks.update(chain([("motion_changexby", {"DX": num(1)}, {}), ("control_wait", {"DURATION": num(0.1)}, {}),
                                 ("motion_changeyby", {"DY": num(1)}, {})], hat="event_whenbroadcastreceived",
                                prefix=f"r{i}_", hat_fields={"BROADCAST_OPTION": ["m", "b"]}))
        return project(blocks, stage={"broadcasts": {"b": "m"}})

    def key_scripts(n):
        # Many scripts of a hat that does not restart a running thread.
        blocks = {}
        for i in range(n):
            blocks.update(chain([("motion_changexby", {"DX": num(1)}, {}), ("control_wait", {"DURATION": num(0.1)}, {}),
                                 ("motion_changeyby", {"DY": num(1)}, {})], hat="event_whenkeypressed",
                                prefix=f"k{i}_", hat_fields={"KEY_OPTION": ["space", None]}))
        return project(blocks)

    def if_chain(n):
        # Many branches: coverage targets and control dependences grow with n.
        blocks = chain([("control_if", {"CONDITION": [2, f"c{i}"], "SUBSTACK": [2, f"t{i}"]}, {})
                        for i in range(n)])
        for i in range(n):
            blocks[f"c{i}"] = block("operator_gt", None, f"b{i}",
                                    {"OPERAND1": [3, [12, "v", "v"], [10, ""]], "OPERAND2": num(i)})
            blocks[f"t{i}"] = block("motion_changexby", None, f"b{i}", {"DX": num(1)})
        return project(blocks, stage={"variables": {"v": ["v", 0]}})

    def procedures(n):
        blocks = {}
        calls = []
        for i in range(n):
            proccode = f"p{i}"
            blocks[f"d{i}"] = block("procedures_definition", f"d{i}b", None, {"custom_block": [1, f"d{i}p"]},
                                    top=True)
            blocks[f"d{i}p"] = dict(block("procedures_prototype", None, f"d{i}"), shadow=True,
                                    mutation={"tagName": "mutation", "children": [], "proccode": proccode,
                                              "argumentids": "[]", "argumentnames": "[]",
                                              "argumentdefaults": "[]", "warp": "false"})
            blocks[f"d{i}b"] = block("motion_changexby", None, f"d{i}", {"DX": num(1)})
            calls.append(("procedures_call", {}, {}))
        script = chain(calls)
        for i in range(n):
            script[f"b{i}"]["mutation"] = {"tagName": "mutation", "children": [], "proccode": f"p{i}",
                                           "argumentids": "[]", "warp": "false"}
        blocks.update(script)
        return project(blocks)

    def calls_one(n):
        blocks = {"d": block("procedures_definition", "db", None, {"custom_block": [1, "dp"]}, top=True),
                  "dp": dict(block("procedures_prototype", None, "d"), shadow=True,
                             mutation={"tagName": "mutation", "children": [], "proccode": "p",
                                       "argumentids": "[]", "argumentnames": "[]", "argumentdefaults": "[]",
                                       "warp": "false"}),
                  "db": block("motion_changexby", None, "d", {"DX": num(1)})}
        script = chain([("procedures_call", {}, {}) for _ in range(n)])
        for b in script.values():
            if b["opcode"] == "procedures_call":
                b["mutation"] = {"tagName": "mutation", "children": [], "proccode": "p", "argumentids": "[]",
                                 "warp": "false"}
        blocks.update(script)
        return project(blocks)

    def costume_switches(n):
        # Switching by name in a sprite with many costumes.
        return project(chain([("looks_switchcostumeto", {"COSTUME": [1, f"m{i}"]}, {}) for i in range(n)])
                       | {f"m{i}": dict(block("looks_costume", None, f"b{i}", None,
                                              {"COSTUME": [f"c{n - 1 - i}x", None]}), shadow=True)
                          for i in range(n)},
                       costumes=[costume(f"c{i}x", i) for i in range(n)])

    def unknown_refs(n):
        # Variable references whose ids are nowhere declared (resolved by name, or created).
        return project(chain([("data_changevariableby", {"VALUE": num(1)}, {"VARIABLE": [f"u{i}", f"id{i}"]})
                              for i in range(n)]))

    return {f.__name__: f for f in [costumes, costumes_same_name, sounds, variables, clashing_locals, lists,
                                    list_items, broadcasts, comments, monitors, long_script, many_scripts,
                                    receivers, key_scripts, if_chain, procedures, calls_one, costume_switches, unknown_refs]}


def cpu_of(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return t, p.returncode, p.stderr.strip().splitlines()[-1:] if p.returncode else []


def commands(clowder, path, out):
    return {
        "trace": [clowder, "vm", "trace", path, "--steps", "3"],
        "gen": [clowder, "gen", path, "--algorithm", "mio", "--budget-executions", "3", "--out", out],
        "mutate": [clowder, "mutate", path, "--list"],
    }


ORACLE_INPUTS = [{"step": 0, "kind": "greenflag"}, {"step": 5, "kind": "greenflag"},
                 {"step": 10, "kind": "broadcast", "name": "m"}, {"step": 12, "kind": "broadcast", "name": "m"},
                 {"step": 15, "kind": "key_down", "key": "space"}, {"step": 17, "kind": "key_down", "key": "space"},
                 {"step": 20, "kind": "key_up", "key": "space"}]


def same_as_oracle(a, name, project, work):
    """None when clowder traces `project` as the oracle does, else the first differences."""
    pj, ref, ours, inputs = (os.path.join(work, f"{name}-oracle.{x}") for x in ("json", "ref.jsonl", "ours.jsonl",
                                                                                  "inputs.json"))
    with open(pj, "w") as f:
        json.dump(project, f)
    with open(inputs, "w") as f:
        json.dump(ORACLE_INPUTS, f)
    for who, cmd, out in (("oracle", ["node", os.path.join(a.oracle, "trace.js")], ref),
                          ("clowder", [a.clowder, "vm", "trace"], ours)):
        r = subprocess.run(cmd + [pj, "--steps", str(a.steps), "--seed", "1", "--inputs", inputs, "--out", out],
                           capture_output=True, text=True)
        if not os.path.exists(out) or os.path.getsize(out) == 0:
            return f"{who} wrote no trace: " + r.stderr.strip()[-300:]
    r = subprocess.run([sys.executable, os.path.join(a.oracle, "compare.py"), ours, ref], capture_output=True,
                       text=True)
    if r.returncode == 0:
        return None
    return " | ".join([ln.strip() for ln in r.stdout.splitlines() if ln.startswith("  ") and ":" in ln][:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clowder", required=True)
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--only", default="")
    ap.add_argument("--commands", default="trace,gen,mutate")
    ap.add_argument("--max-exponent", type=float, default=1.5)
    ap.add_argument("--min-seconds", type=float, default=0.3)
    ap.add_argument("--keep")
    ap.add_argument("--oracle")
    ap.add_argument("--oracle-n", type=int, default=300)
    ap.add_argument("--steps", type=int, default=30)
    a = ap.parse_args()
    work = a.keep or tempfile.mkdtemp(prefix="load-scaling-")
    os.makedirs(work, exist_ok=True)
    all_shapes = shapes()
    chosen = [s for s in a.only.split(",") if s] or list(all_shapes)
    bad = []
    print(f"{'shape':<20} {'command':<7} {'N':>6} {'CPU-s N':>8} {'CPU-s 4N':>9} {'exponent':>8}")
    for name in chosen:
        if name not in all_shapes:
            sys.exit(f"unknown shape {name!r}; known: {', '.join(all_shapes)}")
        paths = []
        for n in (a.n, 4 * a.n):
            path = os.path.join(work, f"{name}-{n}.json")
            with open(path, "w") as f:
                json.dump(all_shapes[name](n), f)
            paths.append(path)
        for cmd in a.commands.split(","):
            times = []
            for path in paths:
                out = path + f".{cmd}.out"
                t, rc, err = cpu_of(commands(a.clowder, path, out)[cmd])
                if rc not in (0, 1):
                    print(f"  {name} {cmd} {os.path.basename(path)}: exit {rc}: {' '.join(err)}")
                times.append(t)
            exp = math.log(max(times[1], 1e-3) / max(times[0], 1e-3)) / math.log(4)
            flag = exp > a.max_exponent and times[1] >= a.min_seconds
            if flag:
                bad.append((name, cmd))
            print(f"{name:<20} {cmd:<7} {a.n:>6} {times[0]:>8.2f} {times[1]:>9.2f} {exp:>8.2f}"
                  f"{'  SUPERLINEAR' if flag else ''}", flush=True)
        if a.oracle:
            diff = same_as_oracle(a, name, all_shapes[name](a.oracle_n), work)
            print(f"{name:<20} oracle  {a.oracle_n:>6} {'identical' if diff is None else 'DIFFERS: ' + diff}",
                  flush=True)
            if diff is not None:
                bad.append((name, "oracle"))
    if bad:
        print(f"superlinear or unlike scratch-vm: {', '.join(f'{s} ({c})' for s, c in bad)}")
        return 1
    print("every shape grows at most with exponent", a.max_exponent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
