#!/usr/bin/env python3
"""Every block input fed `undefined`, `null` (and, on request, other odd values), in clowder
and in the real scratch-vm.

A value that is no number, string or boolean reaches a block when a variable was saved
without a value (`["name"]`: `undefined`) or with `null`, when a list holds such an item,
or when a procedure's argument has no default. scratch-vm passes it on as it is, and some
blocks call a method on it and throw (`switch costume to` reads `requested.toString()`),
which aborts the rest of the step (the oracle's P10). This probe finds every such block:
for each opcode of the VM's own tables (`vm/src/program/opcodes.rs`, read at run time, so
a new opcode is probed too) and each of its inputs, it builds a project whose green flag
runs the block with that input fed by such a variable (a reporter inside `say`), runs both
VMs for a few steps and compares the traces exactly.

  scripts/fidelity-bad-values.py --oracle DIR --clowder target/release/clowder [--jobs 2]
                                 [--only REGEX] [--keep DIR] [--values undefined,null | all]

DIR is an installed fidelity oracle (scripts/fidelity.sh installs one into
~/.cache/clowder-fidelity/oracle). Prints one line per probe that differs and a summary;
exit status 0 = every probe identical.
"""
import argparse
import concurrent.futures as cf
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SVG = "cd21514d0531fdffb22204e0ec5ed84a"  # the blank costume every oracle run has

# Fields the probed blocks need (the rest take none). Variables `u` (stage) and list `L`.
FIELDS = {
    "looks_changeeffectby": {"EFFECT": ["COLOR", None]},
    "looks_seteffectto": {"EFFECT": ["GHOST", None]},
    "sound_seteffectto": {"EFFECT": ["PITCH", None]},
    "sound_changeeffectby": {"EFFECT": ["PAN", None]},
    "data_setvariableto": {"VARIABLE": ["u", "u1"]},
    "data_changevariableby": {"VARIABLE": ["u", "u1"]},
    "control_for_each": {"VARIABLE": ["u", "u1"]},
    "data_addtolist": {"LIST": ["L", "L1"]},
    "data_deleteoflist": {"LIST": ["L", "L1"]},
    "data_insertatlist": {"LIST": ["L", "L1"]},
    "data_replaceitemoflist": {"LIST": ["L", "L1"]},
    "data_itemoflist": {"LIST": ["L", "L1"]},
    "data_itemnumoflist": {"LIST": ["L", "L1"]},
    "data_listcontainsitem": {"LIST": ["L", "L1"]},
    "sensing_of": {"PROPERTY": ["x position", None]},
    "operator_mathop": {"OPERATOR": ["abs", None]},
    "event_whengreaterthan": {"WHENGREATERTHANMENU": ["TIMER", None]},
    "videoSensing_videoOn": {},
}
# The values a probe can feed, by name: `undefined` (a variable saved as `["v"]`), `null`
# (refused at load by both VMs: scratch-vm's schema allows no `null` value), and, with
# `--values all`, the strings, numbers and booleans where JS casts have corners.
VALUES = {
    "undefined": None, "null": None, "empty": "", "space": " ", "word": "abc", "NaN": "NaN",
    "Infinity": "Infinity", "-Infinity": "-Infinity", "1e309": "1e309", "-0": "-0", "neg0": -0.0,
    "hex": "0x1A", "padded": " 7 ", "half": 2.5, "negative": -3.7, "big": 1e21, "true": True, "false": False,
    "true-text": "true", "zero": 0, "emoji": "😀x",
}
# Opcodes left out: they never finish a step the same way for reasons of their own
# (a question waits for an answer; sounds and speech have their own probes).
SKIP = {"sensing_askandwait", "text2speech_speakAndWait", "procedures_call", "procedures_definition"}
BOOLEAN = {"CONDITION", "OPERAND", "OPERAND1", "OPERAND2"}


def table(name):
    """(opcode, inputs) pairs of one of the Rust opcode tables."""
    src = open(os.path.join(ROOT, "vm/src/program/opcodes.rs")).read()
    body = src.split(f"fn {name}(", 1)[1].split("\n}\n", 1)[0]
    out = []
    for line in body.splitlines():
        m = re.match(r'\s*((?:"[^"]+"\s*\|?\s*)+)=>\s*(?:\("[^"]*",\s*)?&\[([^\]]*)\]', line)
        if not m:
            continue
        ops = re.findall(r'"([^"]+)"', m.group(1))
        slots = re.findall(r'"([^"]+)"', m.group(2))
        out += [(op, slots) for op in ops]
    return out


def block(op, parent=None, nxt=None, inputs=None, fields=None, top=False, shadow=False):
    b = {"opcode": op, "next": nxt, "parent": parent, "inputs": inputs or {}, "fields": fields or {},
         "shadow": shadow, "topLevel": top}
    if top:
        b.update(x=0, y=0)
    return b


def probe(op, slot, slots, kind, reporter):
    """The project.json of one probe: `op` with input `slot` fed by variable `v`."""
    var = [12, "v", "v1"]
    blocks = {}
    ins = {}
    for s in slots:
        if s == slot:
            ins[s] = [2, var] if s in BOOLEAN else [3, var, [10, "1"]]
        elif s in BOOLEAN:
            continue
        else:
            ins[s] = [1, [10, "1"]]
    if op in ("control_repeat", "control_repeat_until", "control_while", "control_for_each", "control_if",
              "control_if_else", "control_forever", "control_all_at_once"):
        blocks["body"] = block("motion_changexby", "x", None, {"DX": [1, [4, "1"]]})
        ins["SUBSTACK"] = [2, "body"]
    blocks["x"] = block(op, None, None, ins, FIELDS.get(op, {}))
    if op.startswith("event_when") or op in ("makeymakey_whenMakeyKeyPressed", "makeymakey_whenCodePressed",
                                              "videoSensing_whenMotionGreaterThan"):
        blocks["x"].update(topLevel=True, x=0, y=0)
        blocks["say"] = block("looks_say", "x", None, {"MESSAGE": [1, [10, "hat ran"]]})
        blocks["x"]["next"] = "say"
        blocks["flag"] = block("event_whenflagclicked", None, None, top=True)
    elif reporter:
        blocks["flag"] = block("event_whenflagclicked", None, "say", top=True)
        blocks["say"] = block("looks_say", "flag", "after", {"MESSAGE": [3, "x", [10, ""]]})
        blocks["x"]["parent"] = "say"
        blocks["after"] = block("looks_think", "say", None, {"MESSAGE": [1, [10, "after"]]})
    else:
        blocks["flag"] = block("event_whenflagclicked", None, "x", top=True)
        blocks["x"]["parent"] = "flag"
        blocks["x"]["next"] = "after"
        blocks["after"] = block("looks_think", "x", None, {"MESSAGE": [1, [10, "after"]]})
    value = ["v"] + ([] if kind == "undefined" else [VALUES[kind]])
    costume = {"assetId": SVG, "name": "c1", "md5ext": SVG + ".svg", "dataFormat": "svg",
               "rotationCenterX": 0, "rotationCenterY": 0}
    stage = {"isStage": True, "name": "Stage", "variables": {"v1": value, "u1": ["u", 0]},
             "lists": {"L1": ["L", ["a", "b"]]}, "broadcasts": {"b1": "1"}, "blocks": {}, "comments": {},
             "currentCostume": 0, "costumes": [dict(costume, name="backdrop1", rotationCenterX=240,
                                                    rotationCenterY=180)],
             "sounds": [], "volume": 100, "layerOrder": 0, "tempo": 60, "videoTransparency": 50,
             "videoState": "off", "textToSpeechLanguage": None}
    sprite = {"isStage": False, "name": "S", "variables": {}, "lists": {}, "broadcasts": {}, "blocks": blocks,
              "comments": {}, "currentCostume": 0, "costumes": [costume, dict(costume, name="c2")], "sounds": [],
              "volume": 100, "layerOrder": 1, "visible": True, "x": 10, "y": 20, "size": 100, "direction": 90,
              "draggable": False, "rotationStyle": "all around"}
    ext = op.split("_", 1)[0]
    exts = [ext] if ext in ("pen", "music", "text2speech", "translate", "videoSensing", "makeymakey") else []
    return {"targets": [stage, sprite], "monitors": [], "extensions": exts,
            "meta": {"semver": "3.0.0", "vm": "0.2.0", "agent": ""}}


def run_one(args, case):
    op, slot, slots, kind, reporter = case
    name = f"{op}.{slot}.{kind}"
    d = args.keep or tempfile.mkdtemp(prefix="badvalues-")
    os.makedirs(d, exist_ok=True)
    pj, ref, ours = (os.path.join(d, f"{name}.{x}") for x in ("json", "ref.jsonl", "ours.jsonl"))
    with open(pj, "w") as f:
        json.dump(probe(op, slot, slots, kind, reporter), f)
    steps = str(args.steps)
    # A load error is a trace too (its end line says so, and both exit non-zero): only a run
    # that wrote no trace at all failed.
    for who, cmd, out in (("oracle", ["node", os.path.join(args.oracle, "trace.js")], ref),
                          ("clowder", [args.clowder, "vm", "trace"], ours)):
        r = subprocess.run(cmd + [pj, "--steps", steps, "--seed", "1", "--out", out], capture_output=True, text=True)
        if not os.path.exists(out) or os.path.getsize(out) == 0:
            return name, f"{who} wrote no trace: " + r.stderr.strip()[-300:]
    r = subprocess.run([sys.executable, os.path.join(args.oracle, "compare.py"), ours, ref],
                       capture_output=True, text=True)
    if r.returncode == 0:
        return name, None
    diff = [ln.strip() for ln in r.stdout.splitlines() if ln.startswith("  ") and ":" in ln][:3]
    return name, " | ".join(diff)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--clowder", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--only", default=None, help="only probes whose opcode matches this regex")
    ap.add_argument("--keep", default=None, help="keep the probe projects and traces in this folder")
    ap.add_argument("--values", default="undefined,null",
                    help="comma-separated value names to feed, or `all` (default: undefined,null)")
    args = ap.parse_args()
    kinds = list(VALUES) if args.values == "all" else args.values.split(",")
    unknown = [k for k in kinds if k not in VALUES]
    if unknown:
        sys.exit(f"unknown values {unknown}; known: {', '.join(VALUES)}")
    cases = []
    for name, reporter in (("cmd_of_opcode", False), ("rep_of_opcode", True)):
        for op, slots in table(name):
            if op in SKIP or (args.only and not re.search(args.only, op)):
                continue
            for slot in slots:
                for kind in kinds:
                    cases.append((op, slot, slots, kind, reporter))
    if not cases:
        sys.exit("no probes (check --only)")
    differ = 0
    with cf.ThreadPoolExecutor(args.jobs) as ex:
        for name, diff in ex.map(lambda c: run_one(args, c), cases):
            if diff:
                differ += 1
                print(f"DIFFERS {name}: {diff}", flush=True)
    print(f"{len(cases) - differ} of {len(cases)} probes identical ({len(cases) // len(kinds)} inputs, "
          f"values {', '.join(kinds)})")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
