#!/usr/bin/env python3
"""The whisker-profile fidelity sweep: clowder's VM against the real Whisker's (its scratch-vm
fork and renderer, through the whisker-oracle) on every project with costumes (issue 32).

    scripts/whisker_sweep.py [--steps 300] [--seed 1] [--out /tmp/whisker-sweep] [--only REGEX]
        [--clowder BIN] [--oracle DIR] [--corpora DIR] [--no-whisker] [--driver] [--repeat-differing]
        [--pin-clock MS] [--offline] [PROJECT.sb3 | FOLDER ...]

Default projects: every project of datasets/games (the 16 whisker-rq1 games, the 40 codeclub
projects, 8 of whisker-integration), the rest of whisker-integration and large/.

For each project a seeded input sequence is drawn from what the project listens to (keys of its
key hats and `key pressed?` blocks, clicks on sprites with click hats, stage clicks, mouse moves
when it reads the mouse, typed answers when it asks; waits between them) for --steps steps after
the green flag. The same sequence drives
* a Whisker test (driver calls with `runForSteps(1)` and a dump of the state after every step:
  variables, and per sprite and clone position, direction, size, costume, visibility, say text
  (with --driver, `null`, no bubble state, told apart from the empty text), effects, local variables, draw
  order, lists, costume name, volume and rotation style; the stage's backdrop, effects and
  volume), run by the oracle's run.sh at the seed and
  acceleration 10; the dump is cached in OUT/<project>/whisker/ (reused while the project and
  the test are the same), and
* `clowder vm trace --profile whisker` with the same inputs (or, with --driver, the same test
  run by `clowder test`, so that clowder's side is read through its emulation of Whisker's
  driver and sprite wrappers exactly as Whisker's side is),
and the states are compared step by step. Printed: per project the first differing step and the
kinds of difference there, then how many projects each kind affects and the share of projects
identical for all steps. Drags are not drawn (the trace has no drag input).

Whisker's own conditions, made the same on both sides: --pin-clock MS drives the page's clocks
(`Date.now`, `performance.now`) by Whisker's step count, MS milliseconds a step, so the blocks it
times on the wall clock (music beats, `when timer >`) behave as on a machine of exactly that
speed, reproducibly, and clowder models the same machine (`--whisker-wall-ms MS`); --offline
makes Whisker's browser fail every network request at once (text to speech never gets a sound
and `speak` never ends) and runs clowder's `speak` the same way (`--whisker-offline-speech`).

Exit status 0 when every project is identical.
"""
import argparse
import hashlib
import math
import json
import os
import random
import re
import subprocess
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from whisker_mutant_grading import run_whisker_capped  # noqa: E402
from whisker_roundtrip import OFFLINE_FLAG, offline_oracle, read_project, uses_network  # noqa: E402
from whisker_step_compare import build, live_sprites, num  # noqa: E402

# A clone is numbered by its place among its sprite's clones. Their list is read once per sprite
# and dump: read once per clone, a game with hundreds of clones took `clowder test` past its
# 10^8 JavaScript ticks (quadratic in the clones) before step 300.
DUMP = (
    "const dump = () => { const cl = new Map();"
    " const ci = s => { if (s.isOriginal) return 0;"
    " if (!cl.has(s.name)) cl.set(s.name, s.getOriginal().getClones());"
    " return cl.get(s.name).indexOf(s) + 1; };"
    " console.log('STEPDUMP ' + JSON.stringify(["
    "t.getStage().getVariables().map(v => [v.name, v.value]),"
    "t.getStage().getLists().map(l => [l.name, l.value]),"
    "t.getSprites(s => !s.isStage).map(s => [s.name, ci(s),"
    " s.x, s.y, s.direction, s.size, s.currentCostume, s.visible, s.sayText, s.effects, s.layerOrder,"
    " s.getVariables().map(v => [v.name, v.value]), s.getLists().map(l => [l.name, l.value]),"
    " s.currentCostumeName, s.volume, s.rotationStyle]),"
    "[t.getStage().currentCostume, t.getStage().effects, t.getStage().volume]])); };"
)

MOUSE_OPCODES = {"sensing_mousex", "sensing_mousey", "sensing_mousedown"}


def listens_to(project):
    """(keys, sprites with click hats, stage clicked, reads the mouse, asks)."""
    keys, clicks, stage_click, mouse, asks = set(), set(), False, False, False
    for t in project.get("targets", []):
        for b in (t.get("blocks") or {}).values():
            if not isinstance(b, dict):
                continue
            op = b.get("opcode", "")
            fields = b.get("fields") or {}
            if op in ("event_whenkeypressed", "sensing_keyoptions"):
                k = (fields.get("KEY_OPTION") or [None])[0]
                if isinstance(k, str):
                    keys.add("space" if k == "any" else k)
            elif op == "event_whenthisspriteclicked" and not t.get("isStage"):
                clicks.add(t.get("name"))
            elif op in ("event_whenstageclicked",) or (op == "event_whenthisspriteclicked" and t.get("isStage")):
                stage_click = True
            elif op in MOUSE_OPCODES or any(v == ["_mouse_", None] or (isinstance(v, list) and v[:1] == ["_mouse_"])
                                            for v in fields.values()):
                mouse = True
            elif op == "sensing_askandwait":
                asks = True
    return sorted(keys), sorted(c for c in clicks if c), stage_click, mouse, asks


def events_for(project, name, seed, steps):
    """A seeded input sequence of about `steps` steps (build() adds the trailing wait)."""
    keys, clicks, stage_click, mouse, asks = listens_to(project)
    rng = random.Random(f"{seed}:{name}")
    kinds = ["wait"] + ["key"] * bool(keys) * 3 + ["click"] * bool(clicks) * 2 + ["stage"] * stage_click + \
        ["mouse"] * mouse * 2 + ["type"] * asks
    out, s = [], 0
    while s < steps - 20:
        k = rng.choice(kinds)
        if k == "wait":
            n = rng.randint(1, 15)
            out.append({"kind": "wait", "steps": n})
            s += n + 1
        elif k == "key":
            n = rng.randint(1, 10)
            out.append({"kind": "key_press", "key": rng.choice(keys), "steps": n})
            s += n + 1
        elif k == "click":
            out.append({"kind": "click_sprite", "sprite": rng.choice(clicks), "clone": 0, "steps": 1})
            s += 1
        elif k == "stage":
            out.append({"kind": "click_stage"})
            s += 1
        elif k == "mouse":
            out.append({"kind": "mouse_move", "x": rng.randint(-240, 240), "y": rng.randint(-180, 180)})
            s += 1
        elif k == "type":
            out.append({"kind": "type_text", "text": rng.choice(["1", "42", "yes", "Scratch", ""])})
            s += 1
    return out, s


def dumps(wdir):
    """The states a Whisker run dumped (STEPDUMP lines of its log), in step order."""
    log = os.path.join(wdir, "whisker.out")
    out = []
    if os.path.exists(log):
        with open(log, encoding="utf-8", errors="replace") as f:
            for ln in f:
                if "STEPDUMP " in ln:
                    try:
                        out.append(json.loads(ln.split("STEPDUMP ", 1)[1].split(" color: ")[0]))
                    except json.JSONDecodeError:
                        pass
    return out


def whisker_again(oracle, path, out, key, seed, cap):
    """Whisker's states from a second run of the same probe (cached in OUT/<project>/whisker2/)."""
    wdir = os.path.join(out, "whisker2")
    cached = os.path.exists(os.path.join(wdir, "key")) and open(os.path.join(wdir, "key")).read() == key
    if not cached:
        run_whisker_capped(oracle, path, os.path.join(out, "probe.js"), wdir, seed, cap)
        with open(os.path.join(wdir, "key"), "w") as f:
            f.write(key)
    return dumps(wdir)


def driver_dumps(clowder, path, js, out, seed, pin_clock=None, offline=False):
    """The states the dumping test logs when `clowder test` runs it (`t.log`, in the TAP); with
    `pin_clock` the page-clock prelude is left out and clowder models the same machine."""
    probe = os.path.join(out, "probe.clowder.js")
    if pin_clock is not None:
        js = js.replace(pin_clock_js(pin_clock) + "\n  ", "")
    with open(probe, "w", encoding="utf-8") as f:
        f.write(js.replace("console.log('STEPDUMP '", "t.log('STEPDUMP '"))
    tdir = os.path.join(out, "clowder-test")
    wall = (["--whisker-wall-ms", repr(pin_clock)] if pin_clock is not None else []) + \
        (["--whisker-offline-speech"] if offline else [])
    # The dump of a large project is hundreds of megabytes of log (ball-physics-scroll: 287 MB
    # in 300 steps), more than a test's default JavaScript heap.
    subprocess.run([clowder, "test", probe, path, "--seed", str(seed), "--out", tdir, "--workers", "1",
                    "--js-memory-mb", "4096"] + wall,
                   capture_output=True, text=True)
    states = []
    tap = os.path.join(tdir, "tap", os.path.splitext(os.path.basename(path))[0] + ".tap")
    if os.path.exists(tap):
        with open(tap, encoding="utf-8") as f:
            for ln in f:
                ln = ln.strip()
                if ln.startswith('- "STEPDUMP '):
                    states.append(json.loads(json.loads(ln[2:])[len("STEPDUMP "):]))
    return states


def pin_clock_js(ms):
    """The page's clocks driven by the step count (`--pin-clock`): both `Date.now` and
    `performance.now` read `steps × ms`, plus 0.05 ms for every read within the step (so the
    sequencer's work-time loop and warp timer still end, deterministically), from the test's
    start; the project timer restarts there. Whisker's wall-clock blocks (music beats, `when
    timer >`) then see a machine that takes exactly `ms` per step, which `clowder vm trace
    --whisker-wall-ms` models; nothing else in the page reads the clock for the VM."""
    return ("const __k0 = t.getTotalStepsExecuted(); let __k = -1, __n = 0;"
            " const __now = () => { const k = t.getTotalStepsExecuted() - __k0;"
            " if (k !== __k) { __k = k; __n = 0; } __n += 1;"
            f" return k * {ms!r} + __n * 0.05; }};"
            " const __d0 = Date.now(), __p0 = performance.now();"
            " Date.now = () => __d0 + __now(); performance.now = () => __p0 + __now();"
            " t.vm.runtime.currentMSecs = Date.now(); t.vm.runtime.ioDevices.clock.resetProjectTimer();")


def probe_js(lines, seed, pin_clock=None):
    prelude = (pin_clock_js(pin_clock) + "\n  ") if pin_clock is not None else ""
    return ("const test0 = async function (t) {\n  " + prelude + DUMP + "\n" + "\n".join(lines) + "\n  t.end();\n}\n"
            "module.exports = [{ test: test0, name: 'sweep', description: '', categories: [], "
            f"generationAlgorithm: 'none', seed: '{seed}' }}]\n")


def tnum(v):
    """A trace number: {"$num": "-0" | "NaN" | "Infinity" | "-Infinity"} as the float it is;
    {"$type": "undefined"} as None (Whisker's dump is JSON.stringify of arrays, where
    `undefined` shows as null)."""
    if isinstance(v, dict) and v.get("$type") == "undefined":
        return None
    return float(v["$num"]) if isinstance(v, dict) and "$num" in v else v


def values(pairs):
    # Whisker's dump is JSON.stringify: -0 shows as 0 (equal as floats here), NaN and ±Infinity
    # as null, so every non-finite number compares as null.
    return {n: (finite(num(tnum(v))) if not isinstance(v, list) else [finite(num(tnum(x))) for x in v])
            for n, v in pairs}


def finite(v):
    return None if isinstance(v, float) and not math.isfinite(v) else v


def w_state(w):
    """Whisker's dump as {key: fields}: variables, lists, and per (sprite, clone)."""
    state = {"variables": values(w[0]), "lists": values(w[1])}
    sprites = {}
    for s in w[2]:
        sprites[(s[0], s[1])] = {
            "position": (r3(s[2]), r3(s[3])), "direction": r3(s[4]), "size": r3(s[5]),
            "costume": s[6], "visible": s[7], "say": s[8] if SAY_EXACT or s[8] is not None else "",
            "effects": {k: r3(v) for k, v in (s[9] or {}).items()}, "layer": s[10],
            "local variables": values(s[11]), "local lists": values(s[12])}
        # Dumps from before these fields were read lack them; they compare where both sides have them.
        if len(s) > 15:
            sprites[(s[0], s[1])].update({"costume name": s[13], "volume": r3(s[14]), "rotation style": s[15]})
    if len(w) > 3:
        state.update({"backdrop": w[3][0], "stage effects": {k: r3(v) for k, v in (w[3][1] or {}).items()},
                      "stage volume": r3(w[3][2])})
    return state, sprites


# Positions, directions, sizes and effects compare to 3 decimals unless --exact (then bit for bit:
# what tells a maths library's last-place differences apart).
EXACT = False
# `sayText` null (no bubble state) is told apart from "" only with --driver: the VM's trace, shared
# with the scratch-vm oracle, writes an empty bubble as null, so without --driver both read "".
SAY_EXACT = False


def r3(v):
    v = tnum(v)
    return round(v, 3) if isinstance(v, float) and math.isfinite(v) and not EXACT else v


def c_state(rec):
    stage = next(t for t in rec["targets"] if t["isStage"])
    state = {"variables": values(stage["variables"].items()), "lists": values(stage.get("lists", {}).items())}
    sprites = {}
    for t, clone in live_sprites(rec):
        sprites[(t["name"], clone)] = {
            "position": (r3(t["x"]), r3(t["y"])), "direction": r3(t["direction"]),
            # Whisker's wrapper gives Math.round(size).
            "size": r3(float(math.floor(tnum(t["size"]) + 0.5))), "costume": t["costume"]["index"],
            # The trace writes no bubble and an empty one alike (null): see SAY_EXACT.
            "visible": t["visible"], "say": "" if t["bubble"] is None else t["bubble"].get("text", ""),
            "effects": {k: r3(v) for k, v in t["effects"].items()},
            "layer": t["layer"], "local variables": values(t["variables"].items()),
            "local lists": values(t.get("lists", {}).items())}
    return state, sprites


def order(sprites):
    """Sprites and clones front to back by their layer numbers (only the order compares: Whisker's
    numbers count the pen layer and bubbles)."""
    return [k for k, _ in sorted(sprites.items(), key=lambda kv: kv[1]["layer"])]


def differences(w, c):
    """Kinds of difference between Whisker's and clowder's state after one step."""
    (ws, wsp), (cs, csp) = w, c
    kinds = set()
    for k in ws:
        if k in cs and ws[k] != cs[k]:
            kinds.add(k)
    if len(wsp) != len(csp) or set(wsp) != set(csp):
        kinds.add("clones")
    for key in set(wsp) & set(csp):
        a, b = wsp[key], csp[key]
        for field in a:
            if field != "layer" and field in b and a[field] != b[field]:
                kinds.add(field)
    common = set(wsp) & set(csp)
    if [k for k in order(wsp) if k in common] != [k for k in order(csp) if k in common]:
        kinds.add("layer order")
    return kinds


def print_detail(name, step, w, c):
    """Both sides' values of every field that differs (Whisker first, then clowder)."""
    (ws, wsp), (cs, csp) = w, c
    for k in ws:
        if k in cs and ws[k] != cs[k]:
            print(f"  {name} @{step} {k}: whisker {ws[k]} / clowder {cs[k]}", file=sys.stderr)
    for key in sorted(set(wsp) | set(csp), key=str):
        a, b = wsp.get(key), csp.get(key)
        if a is None or b is None:
            print(f"  {name} @{step} {key}: only in {'clowder' if a is None else 'whisker'}", file=sys.stderr)
            continue
        for field in a:
            if field != "layer" and field in b and a[field] != b[field]:
                print(f"  {name} @{step} {key} {field}: whisker {a[field]!r} / clowder {b[field]!r}",
                      file=sys.stderr)


def default_projects(root, corpora):
    out = []
    manifest = os.path.join(root, "datasets", "games", "dataset.toml")
    for m in re.finditer(r'^file = "(.+)"$', open(manifest, encoding="utf-8").read(), re.M):
        out.append(os.path.join(corpora, m.group(1)))
    for folder in ("whisker-integration", "large"):
        d = os.path.join(corpora, folder)
        if os.path.isdir(d):
            out += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".sb3"))
    seen, uniq = set(), []
    for p in out:
        if p not in seen:
            seen.add(p)
            uniq.append(p)
    return uniq


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--seed", default="1")
    ap.add_argument("--out", default="/tmp/whisker-sweep")
    ap.add_argument("--only", default=None)
    ap.add_argument("--clowder", default=os.path.join(root, "target", "release", "clowder"))
    ap.add_argument("--corpora", default=os.environ.get("CLOWDER_CORPORA", os.path.join(root, "..", "shared", "corpora")))
    ap.add_argument("--oracle", default=os.environ.get("WHISKER_ORACLE"))
    ap.add_argument("--no-whisker", action="store_true", help="only projects whose Whisker dump is cached")
    ap.add_argument("--cap", type=float, default=120.0, help="wall seconds a Whisker run may take")
    ap.add_argument("--repeat-differing", action="store_true",
                    help="run Whisker a second time on each project that differs, to tell whether Whisker "
                         "itself varies from run to run there (its clock is the wall clock)")
    ap.add_argument("--driver", action="store_true",
                    help="clowder's side: the same dumping test run by `clowder test` (Whisker's API as clowder "
                         "emulates it) instead of the VM's trace")
    ap.add_argument("--pin-clock", type=float, default=None, metavar="MS",
                    help="drive Whisker's page clocks by its step count, MS milliseconds a step (its wall-clock "
                         "blocks become reproducible), and run clowder with --whisker-wall-ms MS")
    ap.add_argument("--offline", action="store_true",
                    help="Whisker's browser fails every network request at once (its text to speech never gets "
                         "a sound), and clowder runs `speak` the same way (--whisker-offline-speech)")
    ap.add_argument("--detail", action="store_true",
                    help="print both sides' differing values at each project's first differing step")
    ap.add_argument("--exact", action="store_true",
                    help="compare positions, directions, sizes and effects bit for bit (default: to 3 decimals)")
    ap.add_argument("paths", nargs="*")
    args = ap.parse_args()
    global EXACT, SAY_EXACT
    EXACT = args.exact
    SAY_EXACT = args.driver
    oracle = args.oracle or os.path.join(args.corpora, "..", "tools", "whisker-oracle")
    if args.offline:
        oracle = offline_oracle(oracle, args.out)
    paths = []
    for p in args.paths or default_projects(root, args.corpora):
        paths += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".sb3")) if os.path.isdir(p) else [p]
    if args.only:
        paths = [p for p in paths if re.search(args.only, os.path.basename(p))]
    rows, kinds_count = [], Counter()
    for path in paths:
        name = os.path.splitext(os.path.basename(path))[0]
        out = os.path.join(args.out, name)
        os.makedirs(out, exist_ok=True)
        data, project = read_project(path)
        events, _ = events_for(project, name, args.seed, args.steps)
        inputs, lines, total = build(events, 0)
        if total < args.steps:
            inputs2, lines, total = build(events, args.steps - total)
            inputs = inputs2
        js = probe_js(lines, args.seed, args.pin_clock)
        # The Whisker side's conditions are part of what is cached (the network only where the
        # project asks it something).
        offline = args.offline and uses_network(project)
        key = hashlib.sha256(data + js.encode() + (OFFLINE_FLAG.encode() if offline else b"")).hexdigest()
        wdir = os.path.join(out, "whisker")
        cached = os.path.exists(os.path.join(wdir, "key")) and open(os.path.join(wdir, "key")).read() == key
        if not cached:
            if args.no_whisker:
                continue
            with open(os.path.join(out, "probe.js"), "w", encoding="utf-8") as f:
                f.write(js)
            # A step-by-step dump of 300 steps takes Whisker 5–30 s; a page that stalls (seen on
            # a sound-heavy project) is stopped and the project reported with the states it gave.
            run_whisker_capped(oracle, path, os.path.join(out, "probe.js"), wdir, args.seed, args.cap)
            with open(os.path.join(wdir, "key"), "w") as f:
                f.write(key)
        wd = dumps(wdir)
        with open(os.path.join(out, "inputs.json"), "w", encoding="utf-8") as f:
            json.dump(inputs, f)
        if args.driver:
            recs = driver_dumps(args.clowder, path, js, out, args.seed, args.pin_clock, args.offline)
        else:
            wall = (["--whisker-wall-ms", repr(args.pin_clock)] if args.pin_clock is not None else []) + \
                (["--whisker-offline-speech"] if args.offline else [])
            tr = subprocess.run([args.clowder, "vm", "trace", path, "--profile", "whisker", "--seed", args.seed,
                                 "--steps", str(total), "--run-all", "--inputs", os.path.join(out, "inputs.json")]
                                + wall, capture_output=True, text=True)
            recs = [json.loads(ln) for ln in tr.stdout.splitlines() if ln.startswith('{"step"')]
        if len(wd) < args.steps:
            rows.append((name, None, {f"Whisker gave {len(wd)} states"}))
            kinds_count["no Whisker states"] += 1
            print(f"{name}: Whisker gave {len(wd)} states of {args.steps}", file=sys.stderr)
            continue
        first, kinds = None, set()
        for j in range(min(args.steps, len(wd), len(recs))):
            d = differences(w_state(wd[j]), w_state(recs[j]) if args.driver else c_state(recs[j]))
            if d:
                first, kinds = j + 1, d
                if args.detail:
                    print_detail(name, j + 1, w_state(wd[j]), w_state(recs[j]) if args.driver else c_state(recs[j]))
                break
        if first is None and len(recs) < args.steps:
            first, kinds = len(recs) + 1, {f"clowder gave {len(recs)} states"}
        if first is not None and args.repeat_differing and not args.no_whisker:
            # Whisker's clock is the wall clock (timer hats, music beats, sounds, text to
            # speech): a second run of the same probe tells its own variation from ours.
            wd2 = whisker_again(oracle, path, out, key, args.seed, args.cap)
            n = min(len(wd), len(wd2))
            own = next((j + 1 for j in range(n) if differences(w_state(wd[j]), w_state(wd2[j]))), None)
            if own is not None or len(wd) != len(wd2):
                kinds = kinds | {"Whisker varies between runs"}
                print(f"{name}: Whisker's two runs differ from step {own or n + 1}", file=sys.stderr)
        rows.append((name, first, kinds))
        for k in kinds:
            kinds_count[k] += 1
        print(f"{name}: {'identical' if first is None else f'step {first}: ' + ', '.join(sorted(kinds))}",
              file=sys.stderr)
    same = sum(1 for _, f, k in rows if f is None and not k)
    print(f"\n| project | first difference (step) | kinds |\n|---|---:|---|")
    for name, first, kinds in rows:
        print(f"| {name} | {first if first else '–'} | {', '.join(sorted(kinds)) or 'identical'} |")
    print(f"\n| kind of difference | projects |\n|---|---:|")
    for k, n in kinds_count.most_common():
        print(f"| {k} | {n} |")
    pct = 100.0 * same / len(rows) if rows else 0.0
    print(f"\n{same} of {len(rows)} projects identical for {args.steps} steps ({pct:.1f} %)")
    return 0 if rows and same == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
