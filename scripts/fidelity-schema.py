#!/usr/bin/env python3
"""Files that break (or just keep) one rule of scratch-vm's project schema, loaded by both VMs.

scratch-vm validates `project.json` against scratch-parser's schema before loading it and
reports a load error when a rule is broken; clowder's loader checks the same rules
(`vm/src/project/schema.rs`). This probe takes a small valid project, changes one thing at a
time (a rule broken, or an edge the rule still allows) and checks that clowder refuses exactly
the files the real scratch-vm refuses.

  scripts/fidelity-schema.py --oracle DIR --clowder target/release/clowder [--jobs 2] [--keep DIR]

DIR is an installed fidelity oracle (scripts/fidelity.sh installs one into
~/.cache/clowder-fidelity/oracle). Exit status 0 = both refuse and accept the same files.
"""
import argparse
import concurrent.futures as cf
import copy
import json
import os
import subprocess
import sys
import tempfile

SVG = "cd21514d0531fdffb22204e0ec5ed84a"
WAV = "83a9787d4cb6f3b7632b4ddfebf74367"


def base():
    costume = {"assetId": SVG, "name": "c1", "md5ext": SVG + ".svg", "dataFormat": "svg", "rotationCenterX": 0,
               "rotationCenterY": 0}
    sound = {"assetId": WAV, "name": "pop", "dataFormat": "wav", "format": "", "rate": 48000, "sampleCount": 1123,
             "md5ext": WAV + ".wav"}
    blocks = {"f": {"opcode": "event_whenflagclicked", "next": "s", "parent": None, "inputs": {}, "fields": {},
                    "shadow": False, "topLevel": True, "x": 0, "y": 0},
              "s": {"opcode": "looks_say", "next": None, "parent": "f",
                    "inputs": {"MESSAGE": [3, [12, "v", "v1"], [10, "hi"]]}, "fields": {}, "shadow": False,
                    "topLevel": False}}
    stage = {"isStage": True, "name": "Stage", "variables": {"v1": ["v", 0]}, "lists": {"L1": ["L", ["a"]]},
             "broadcasts": {"b1": "go"}, "blocks": {}, "comments": {}, "currentCostume": 0,
             "costumes": [dict(costume, name="backdrop1", rotationCenterX=240, rotationCenterY=180)],
             "sounds": [], "volume": 100, "layerOrder": 0, "tempo": 60, "videoTransparency": 50,
             "videoState": "off", "textToSpeechLanguage": None}
    sprite = {"isStage": False, "name": "S", "variables": {"w1": ["w", "x"]}, "lists": {}, "broadcasts": {},
              "blocks": blocks, "comments": {"c": {"blockId": "s", "x": 10, "y": 10, "width": 200, "height": 200,
                                                   "minimized": False, "text": "a comment"}},
              "currentCostume": 0, "costumes": [costume, dict(costume, name="c2")], "sounds": [sound],
              "volume": 100, "layerOrder": 1, "visible": True, "x": 10, "y": 20, "size": 100, "direction": 90,
              "draggable": False, "rotationStyle": "all around"}
    return {"targets": [stage, sprite], "monitors": [], "extensions": [],
            "meta": {"semver": "3.0.0", "vm": "0.2.0", "agent": "probe"}}


def setter(path, value=None, delete=False):
    def change(p):
        node = p
        for k in path[:-1]:
            node = node[k]
        if delete:
            del node[path[-1]]
        else:
            node[path[-1]] = copy.deepcopy(value)
    return change


S = ["targets", 1]
ST = ["targets", 0]
COST = S + ["costumes", 0]
SND = S + ["sounds", 0]
COMMENT = S + ["comments", "c"]
# (name, change): each a single change of the base project.
CASES = [
    ("unchanged", lambda p: None),
    ("meta missing", setter(["meta"], delete=True)),
    ("meta semver 2.0.0", setter(["meta", "semver"], "2.0.0")),
    ("meta semver 3.1.22", setter(["meta", "semver"], "3.1.22")),
    ("meta semver 3.0", setter(["meta", "semver"], "3.0")),
    ("meta semver missing", setter(["meta", "semver"], delete=True)),
    ("meta vm prerelease", setter(["meta", "vm"], "0.2.0-prerelease.20210330")),
    ("meta vm 0.2", setter(["meta", "vm"], "0.2")),
    ("meta vm number", setter(["meta", "vm"], 5)),
    ("meta agent number", setter(["meta", "agent"], 5)),
    ("meta origin string", setter(["meta", "origin"], "scratch.mit.edu")),
    ("stage named Bühne", setter(ST + ["name"], "Bühne")),
    ("stage layerOrder 1", setter(ST + ["layerOrder"], 1)),
    ("stage layerOrder 0.0", setter(ST + ["layerOrder"], 0.0)),
    ("stage videoState flipped", setter(ST + ["videoState"], "flipped")),
    ("stage videoState on-flipped", setter(ST + ["videoState"], "on-flipped")),
    ("stage tempo string", setter(ST + ["tempo"], "60")),
    ("stage textToSpeechLanguage number", setter(ST + ["textToSpeechLanguage"], 5)),
    ("sprite named _stage_", setter(S + ["name"], "_stage_")),
    ("sprite x string", setter(S + ["x"], "12")),
    ("sprite direction null", setter(S + ["direction"], None)),
    ("sprite rotationStyle all-around", setter(S + ["rotationStyle"], "all-around")),
    ("sprite layerOrder 0", setter(S + ["layerOrder"], 0)),
    ("sprite layerOrder 1.5", setter(S + ["layerOrder"], 1.5)),
    ("sprite layerOrder 7", setter(S + ["layerOrder"], 7)),
    ("sprite visible 1", setter(S + ["visible"], 1)),
    ("sprite draggable string", setter(S + ["draggable"], "false")),
    ("sprite isStage missing", setter(S + ["isStage"], delete=True)),
    ("currentCostume 1.5", setter(S + ["currentCostume"], 1.5)),
    ("currentCostume -1", setter(S + ["currentCostume"], -1)),
    ("currentCostume 1", setter(S + ["currentCostume"], 1)),
    ("volume string", setter(S + ["volume"], "100")),
    ("variables missing", setter(S + ["variables"], delete=True)),
    ("lists missing", setter(S + ["lists"], delete=True)),
    ("broadcasts missing", setter(ST + ["broadcasts"], delete=True)),
    ("blocks missing", setter(ST + ["blocks"], delete=True)),
    ("sounds missing", setter(ST + ["sounds"], delete=True)),
    ("costumes empty", setter(ST + ["costumes"], [])),
    ("variable without value", setter(ST + ["variables", "v1"], ["v"])),
    ("variable null", setter(ST + ["variables", "v1"], ["v", None])),
    ("variable list value", setter(ST + ["variables", "v1"], ["v", [1]])),
    ("variable cloud", setter(ST + ["variables", "v1"], ["☁ v", 0, True])),
    ("variable cloud false", setter(ST + ["variables", "v1"], ["v", 0, False])),
    ("variable four items", setter(ST + ["variables", "v1"], ["v", 0, True, True])),
    ("variable name number", setter(ST + ["variables", "v1"], [5, 0])),
    ("variable not array", setter(ST + ["variables", "v1"], "v")),
    ("sprite variable cloud", setter(S + ["variables", "w1"], ["w", 1, True])),
    ("list item null", setter(ST + ["lists", "L1"], ["L", [None]])),
    ("list item boolean", setter(ST + ["lists", "L1"], ["L", [True, 1, "x"]])),
    ("list without items", setter(ST + ["lists", "L1"], ["L"])),
    ("list three items", setter(ST + ["lists", "L1"], ["L", [], 3])),
    ("list contents string", setter(ST + ["lists", "L1"], ["L", "abc"])),
    ("broadcast number", setter(ST + ["broadcasts", "b1"], 5)),
    ("comment text missing", setter(COMMENT + ["text"], delete=True)),
    ("comment text 8000", setter(COMMENT + ["text"], "x" * 8000)),
    ("comment text 8001", setter(COMMENT + ["text"], "x" * 8001)),
    ("comment text 8000 astral", setter(COMMENT + ["text"], "😀" * 8000)),
    ("comment x null", setter(COMMENT + ["x"], None)),
    ("comment blockId number", setter(COMMENT + ["blockId"], 5)),
    ("comment minimized string", setter(COMMENT + ["minimized"], "true")),
    ("comment width null", setter(COMMENT + ["width"], None)),
    ("costume duplicate", lambda p: p["targets"][1]["costumes"].append(copy.deepcopy(p["targets"][1]["costumes"][0]))),
    ("costume duplicate reordered", lambda p: p["targets"][1]["costumes"].append(
        dict(reversed(list(copy.deepcopy(p["targets"][1]["costumes"][0]).items()))))),
    ("costume webp", setter(COST + ["dataFormat"], "webp")),
    ("costume jpeg", setter(COST + ["dataFormat"], "jpeg")),
    ("costume assetId upper", setter(COST + ["assetId"], SVG.upper())),
    ("costume assetId short", setter(COST + ["assetId"], SVG[:31])),
    ("costume md5ext no extension", setter(COST + ["md5ext"], SVG)),
    ("costume md5ext digit extension", setter(COST + ["md5ext"], SVG + ".sv9")),
    ("costume name missing", setter(COST + ["name"], delete=True)),
    ("costume rotationCenterX string", setter(COST + ["rotationCenterX"], "1")),
    ("costume bitmapResolution 2.5", setter(COST + ["bitmapResolution"], 2.5)),
    ("costume bitmapResolution 2", setter(COST + ["bitmapResolution"], 2)),
    ("sound ogg", setter(SND + ["dataFormat"], "ogg")),
    ("sound mp3", setter(SND + ["dataFormat"], "mp3")),
    ("sound rate fraction", setter(SND + ["rate"], 44100.5)),
    ("sound sampleCount string", setter(SND + ["sampleCount"], "5")),
    ("sound md5ext digit extension", setter(SND + ["md5ext"], WAV + ".mp3")),
    ("sound duplicate", lambda p: p["targets"][1]["sounds"].append(copy.deepcopy(p["targets"][1]["sounds"][0]))),
    ("sound assetId missing", setter(SND + ["assetId"], delete=True)),
]


def refused(cmd, path):
    """Whether a one-step trace of `path` ends with a load error."""
    r = subprocess.run(cmd + [path, "--steps", "1", "--seed", "1"], capture_output=True, text=True)
    last = r.stdout.strip().splitlines()[-1:] or ["{}"]
    try:
        end = json.loads(last[0])
    except json.JSONDecodeError:
        return None
    return end.get("reason") == "load_error"


def run_one(args, case, folder):
    name, change = case
    p = base()
    change(p)
    path = os.path.join(folder, name.replace(" ", "_") + ".json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(p, f, ensure_ascii=False)
    ref = refused(["node", os.path.join(args.oracle, "trace.js")], path)
    ours = refused([args.clowder, "vm", "trace"], path)
    return name, ref, ours


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--clowder", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", default=None, help="keep the probe files in this folder")
    args = ap.parse_args()
    folder = args.keep or tempfile.mkdtemp(prefix="schema-probe-")
    os.makedirs(folder, exist_ok=True)
    differ = refused_n = 0
    with cf.ThreadPoolExecutor(args.jobs) as ex:
        for name, ref, ours in ex.map(lambda c: run_one(args, c, folder), CASES):
            refused_n += bool(ref)
            word = {True: "refused", False: "accepted", None: "no answer"}
            line = f"{name}: scratch-vm {word[ref]}, clowder {word[ours]}"
            if ref != ours:
                differ += 1
                print("DIFFERS " + line, flush=True)
            else:
                print("same    " + line, flush=True)
    print(f"{len(CASES) - differ} of {len(CASES)} files treated alike ({refused_n} refused by scratch-vm)")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
