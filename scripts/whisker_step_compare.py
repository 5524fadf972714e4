#!/usr/bin/env python3
"""One generated test, step by step, in clowder's whisker profile and in the real Whisker (issue 22).

    scripts/whisker_step_compare.py PROJECT.sb3 SUITE.json TEST_INDEX [--seed 1]
        [--clowder BIN] [--oracle DIR] [--out DIR] [--probe JS_EXPR ...] [--show SPRITE:FROM:TO]
        [--extra-steps N] [--before JS]

SUITE.json is what `clowder gen --out` writes. The test's events become
* a Whisker probe test (the same driver calls as the export, with `runForSteps(1)` and a
  `console.log` of the stage variables and of every sprite and clone after each step, run by
  the whisker-oracle's run.sh at the seed and acceleration 10), and
* an input script for `clowder vm trace --profile whisker` (same steps),
and the two per-step states are compared: the first step where they differ is printed with the
differing values. `--probe` adds JavaScript expressions over `t` logged by Whisker after every
step (e.g. `t.getSprite('Kopf').isTouchingColor([6,0,0])`), printed with `--show`; `--show`
prints a sprite's state on both sides for a range of steps (1-based).
"""
import argparse
import json
import os
import subprocess
import sys

from whisker_roundtrip import run_whisker


def build(events, extra):
    """(input script for `vm trace`, JavaScript lines of the probe, total steps)."""
    inputs = [{"step": 0, "kind": "greenflag"}]
    js = []
    s = 0

    def run(n):
        js.append(f"  for (let i = 0; i < {n}; i++) {{ await t.runForSteps(1); dump(); }}")

    for ev in events:
        k = ev["kind"]
        if k == "key_press":
            inputs.append({"step": s, "kind": "key_down", "key": ev["key"]})
            s += ev["steps"]
            inputs.append({"step": s, "kind": "key_up", "key": ev["key"]})
            s += 1
            js.append(f"  t.keyPress({json.dumps(ev['key'])}, {ev['steps']});")
            run(ev["steps"] + 1)
        elif k == "click_sprite":
            inputs.append({"step": s, "kind": "click_sprite", "sprite": ev["sprite"], "clone": ev["clone"]})
            s += 1
            if ev["clone"] == 0:
                js.append(f"  t.clickSprite({json.dumps(ev['sprite'])}, {ev['steps']});")
            else:
                js.append(f"  t.clickCloneByCoords({int(ev['x'])}, {int(ev['y'])}, {ev['steps']});")
            run(1)
        elif k == "drag_sprite":
            # Whisker's driver moves the sprite at once; the trace applies it before the next step.
            inputs.append({"step": s, "kind": "drag", "sprite": ev["sprite"], "clone": ev["clone"],
                           "x": ev["x"], "y": ev["y"]})
            s += 1
            cid = "null" if ev["clone"] == 0 else str(ev["clone"])
            js.append(f"  t.dragSprite({json.dumps(ev['sprite'])}, {ev['x']!r}, {ev['y']!r}, {cid});")
            run(1)
        elif k == "click_stage":
            inputs.append({"step": s, "kind": "click_stage"})
            s += 1
            js.append("  t.clickStage();")
            run(1)
        elif k == "wait":
            s += ev["steps"] + 1
            run(ev["steps"] + 1)
        elif k in ("mouse_move", "mouse_move_to"):
            inputs.append({"step": s, "kind": "mouse_move", "x": int(ev["x"]), "y": int(ev["y"])})
            s += 1
            js.append(f"  t.mouseMove({int(ev['x'])}, {int(ev['y'])});")
            run(1)
        elif k == "mouse_down":
            inputs.append({"step": s, "kind": "mouse_down" if ev["down"] else "mouse_up"})
            s += 1
            js.append(f"  t.mouseDown({'true' if ev['down'] else 'false'});")
            run(1)
        elif k == "type_text":
            inputs.append({"step": s, "kind": "answer", "text": ev["text"]})
            s += 1
            js.append(f"  t.typeText({json.dumps(ev['text'])});")
            run(1)
        elif k == "sound":
            inputs.append({"step": s, "kind": "loudness", "value": ev["volume"]})
            s += max(1, ev["steps"])
            inputs.append({"step": s, "kind": "loudness", "value": -1})
            js.append(f"  t.sendSound({ev['volume']}, {ev['steps']});")
            run(max(1, ev["steps"]))
        else:
            raise SystemExit(f"unsupported event {ev}")
    if extra:
        s += extra
        run(extra)
    return inputs, js, s


def probe_js(lines, probes, seed, before=""):
    dump = ("const dump = () => console.log('STEPDUMP ' + JSON.stringify([t.getStage().getVariables()"
            ".map(v => [v.name, v.value]), t.getSprites(s => !s.isStage).map(s => [s.name, s.isOriginal ? 0 : "
            "s.getOriginal().getClones().indexOf(s) + 1, s.x, s.y, s.direction, s.size, s.currentCostume, "
            "s.visible, s.sayText]), [" + ", ".join(probes) + "]]));")
    return ("const test0 = async function (t) {\n  " + dump + "\n  " + before + "\n" + "\n".join(lines) + "\n  t.end();\n}\n"
            "module.exports = [{ test: test0, name: 'probe', description: '', categories: [], "
            f"generationAlgorithm: 'none', seed: '{seed}' }}]\n")


def num(v):
    try:
        return round(float(v), 6)
    except (TypeError, ValueError):
        return v


def whisker_sprites(w):
    return sorted((s[0], s[1], round(s[2], 3), round(s[3], 3), round(s[4], 3), round(s[5], 3), s[6], s[7], s[8] or "")
                  for s in w[1])


def live_sprites(rec):
    """(target, clone number) of every sprite and clone of a trace record, clone numbers as
    Whisker's wrapper counts them: the order of creation among live clones (0: the original)."""
    rank = {}
    for t in sorted(rec["targets"], key=lambda t: (t["name"], t["cloneIndex"])):
        if t["isStage"]:
            continue
        clone = 0
        if t["cloneIndex"]:
            rank[t["name"]] = rank.get(t["name"], 0) + 1
            clone = rank[t["name"]]
        yield t, clone


def clowder_sprites(c):
    out = []
    for t, clone in live_sprites(c):
        out.append((t["name"], clone, round(t["x"], 3), round(t["y"], 3), round(t["direction"], 3),
                    round(t["size"], 3), t["costume"]["index"], t["visible"], (t["bubble"] or {}).get("text", "")))
    return sorted(out)


def scene(rec, pairs):
    """A render-oracle scene of a trace record (original sprites only) asking every pair."""
    stage = next(t for t in rec["targets"] if t["isStage"])
    sprites = [{"name": t["name"], "costume": t["costume"]["index"], "x": t["x"], "y": t["y"],
                "direction": t["direction"], "size": t["size"], "visible": t["visible"],
                "rotationStyle": t["rotationStyle"], "ghost": t["effects"]["ghost"], "layer": t["layer"]}
               for t in rec["targets"] if not t["isStage"] and not t["cloneIndex"]]
    return {"backdrop": stage["costume"]["index"], "sprites": sprites,
            "questions": [{"kind": "touching", "a": a, "b": b} for a, b in pairs]}


def touching(args, pairs, wd, recs):
    """Prints the steps where Whisker's and clowder's `touching` answers differ."""
    n = min(len(wd), len(recs))
    qfile = os.path.join(args.out, "touching.json")
    with open(qfile, "w", encoding="utf-8") as f:
        json.dump([scene(r, pairs) for r in recs[:n]], f)
    out = subprocess.run([args.clowder, "vm", "geometry-query", args.project, qfile],
                         capture_output=True, text=True, check=True).stdout
    answers = [json.loads(ln)["answer"] for ln in out.splitlines() if ln.strip()]
    diffs = 0
    for i, (a, b) in enumerate(pairs):
        steps = [j + 1 for j in range(n) if wd[j][2][i] != answers[j * len(pairs) + i]]
        diffs += len(steps)
        print(f"{a} touching {b}: Whisker true after {sum(bool(wd[j][2][i]) for j in range(n))} of {n} steps, "
              f"clowder differs after {len(steps)}: {steps[:20]}")
    return diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("project")
    ap.add_argument("suite")
    ap.add_argument("index", type=int)
    ap.add_argument("--seed", default="1")
    ap.add_argument("--clowder", default=os.environ.get("CLOWDER", "clowder"))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    corpora = os.environ.get("CLOWDER_CORPORA") or os.path.join(root, "..", "shared", "corpora")
    ap.add_argument("--oracle", default=os.environ.get("WHISKER_ORACLE")
                    or os.path.join(corpora, "..", "tools", "whisker-oracle"))
    ap.add_argument("--out", default="/tmp/whisker-step-compare")
    ap.add_argument("--probe", action="append", default=[])
    ap.add_argument("--show", default=None)
    ap.add_argument("--before", default="", help="JavaScript run in Whisker before the first event, e.g. "
                    "`t.vm.renderer.setUseGpuMode('ForceCPU')`")
    ap.add_argument("--extra-steps", type=int, default=0, help="steps to run after the test's events")
    ap.add_argument("--touching", action="append", default=[], metavar="A:B",
                    help="compare `A touching B?` after every step (Whisker's isTouchingSprite against "
                         "clowder's renderer on clowder's state, through `clowder vm geometry-query`)")
    args = ap.parse_args()
    suite = json.load(open(args.suite, encoding="utf-8"))
    tests = suite if isinstance(suite, list) else suite["tests"]
    inputs, lines, total = build(tests[args.index]["events"], args.extra_steps)
    pairs = [tuple(p.split(":", 1)) for p in args.touching]
    probes = [f"t.getSprite({json.dumps(a)}).isTouchingSprite({json.dumps(b)})" for a, b in pairs] + args.probe
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "inputs.json"), "w", encoding="utf-8") as f:
        json.dump(inputs, f)
    probe = os.path.join(args.out, "probe.js")
    with open(probe, "w", encoding="utf-8") as f:
        f.write(probe_js(lines, probes, args.seed, args.before))
    wdir = os.path.join(args.out, "whisker")
    run_whisker(args.oracle, args.project, probe, wdir, args.seed)
    with open(os.path.join(wdir, "whisker.out"), encoding="utf-8", errors="replace") as f:
        wd = [json.loads(ln.split("STEPDUMP ", 1)[1]) for ln in f if "STEPDUMP " in ln]
    tr = subprocess.run([args.clowder, "vm", "trace", args.project, "--profile", "whisker", "--seed", args.seed,
                         "--steps", str(total), "--run-all", "--inputs", os.path.join(args.out, "inputs.json")],
                        capture_output=True, text=True, check=True).stdout
    # The trace's record k is the state after step k (0-based), Whisker's dump k + 1.
    recs = [json.loads(ln) for ln in tr.splitlines() if ln.startswith('{"step"')]
    print(f"steps {total}, Whisker states {len(wd)}, clowder states {len(recs)}")
    first = None
    for j, (w, c) in enumerate(zip(wd, recs)):
        wvars = {n: num(v) for n, v in w[0]}
        stage = next(t for t in c["targets"] if t["isStage"])
        cvars = {n: num(v) for n, v in stage["variables"].items()}
        ws, cs = whisker_sprites(w), clowder_sprites(c)
        if wvars != cvars or ws != cs:
            first = j + 1
            print(f"first difference after step {first}:")
            print("  variables: Whisker", {k: v for k, v in wvars.items() if cvars.get(k) != v},
                  "clowder", {k: v for k, v in cvars.items() if wvars.get(k) != v})
            for a, b in zip(ws, cs):
                if a != b:
                    print("  W", a, "\n  C", b)
            if len(ws) != len(cs):
                print("  sprites and clones: Whisker", len(ws), "clowder", len(cs))
            break
    if first is None:
        print("identical over", min(len(wd), len(recs)), "steps")
    if pairs:
        touching(args, pairs, wd, recs)
    if args.show:
        name, a, b = args.show.split(":")
        for j in range(int(a), min(int(b), len(wd), len(recs)) + 1):
            w, c = wd[j - 1], recs[j - 1]
            print(j, "W", [s[1:] for s in whisker_sprites(w) if s[0] == name], w[2] if len(w) > 2 else "")
            print(j, "C", [s[1:] for s in clowder_sprites(c) if s[0] == name])
    return 0 if first is None else 1


if __name__ == "__main__":
    sys.exit(main())
