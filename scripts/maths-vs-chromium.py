#!/usr/bin/env python3
"""JavaScript's Math in Chromium, in Node and in clowder's three maths libraries, bit for bit.

    scripts/maths-vs-chromium.py [--count N] [--seed S]

Evaluates Math.sin, cos, tan, asin, acos, atan, atan2(x, 1.3), exp(x / 50), log(|x|) and
pow(|x|, 1.7) on N seeded arguments (angles in radians as `move` and `mathop` make them,
numbers in [-1, 1], and numbers from 1e-3 to 1e3) in headless Chromium (the browser Whisker
runs in), in Node (where the fidelity oracle runs scratch-vm) and with clowder's `node`,
`chromium` and `glibc` libraries (`cargo run --example math_values`), and prints, per function,
on how many arguments each differs from Chromium and from Node, then the library closest to
this Chromium (the one `clowder test --whisker-maths` should name).

Needs node, Chromium (CHROMIUM, default /usr/bin/chromium) and playwright-core, taken from the
render oracle's prepared copy ($CLOWDER_CACHE/render-oracle, which scripts/geometry.sh and
scripts/svg-silhouettes.py install).
"""
import argparse
import json
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAMES = ["sin", "cos", "tan", "asin", "acos", "atan", "atan2", "exp", "log", "pow"]
JS_ROW = ("x => [Math.sin(x), Math.cos(x), Math.tan(x), Math.asin(x), Math.acos(x), Math.atan(x), "
          "Math.atan2(x, 1.3), Math.exp(x / 50), Math.log(Math.abs(x)), Math.pow(Math.abs(x), 1.7)]")

BROWSER_JS = """
const { chromium } = require('playwright-core');
(async () => {
  const xs = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'));
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
                                          args: ['--no-sandbox'] });
  const page = await browser.newPage();
  const rows = await page.evaluate(xs => xs.map(ROW).map(r => r.map(v => Object.is(v, -0) ? '-0' : String(v))), xs);
  await browser.close();
  process.stdout.write(JSON.stringify(rows));
})().catch(e => { console.error(e); process.exit(1); });
"""

NODE_JS = """
const xs = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'));
process.stdout.write(JSON.stringify(xs.map(ROW).map(r => r.map(v => Object.is(v, -0) ? '-0' : String(v)))));
"""


def arguments(n, seed):
    rng = random.Random(seed)
    xs = []
    for i in range(n):
        kind = i % 4
        if kind < 2:
            deg = rng.uniform(-360, 360)
            if kind == 1:
                deg = round(deg, rng.randint(0, 6))
            xs.append((90 - deg) * math.pi / 180)
        elif kind == 2:
            xs.append(rng.uniform(-1, 1))
        else:
            xs.append(rng.choice([-1, 1]) * 10 ** rng.uniform(-3, 3))
    return xs


def js_number(s):
    return float(s) if s not in ("-0",) else -0.0


def bits(v):
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or bits(a) == bits(b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    cache = os.environ.get("CLOWDER_CACHE", os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "clowder"))
    oracle = os.path.join(cache, "render-oracle")
    if not os.path.isdir(os.path.join(oracle, "node_modules", "playwright-core")):
        sys.exit(f"maths-vs-chromium: no playwright-core in {oracle} (run scripts/geometry.sh once to prepare it)")
    xs = arguments(args.count, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        inp = os.path.join(tmp, "xs.json")
        with open(inp, "w") as f:
            json.dump(xs, f)
        script = os.path.join(oracle, "maths-vs-chromium.tmp.js")
        with open(script, "w") as f:
            f.write(BROWSER_JS.replace("ROW", JS_ROW))
        try:
            chrome = json.loads(subprocess.run(["node", script, inp], check=True, capture_output=True, text=True).stdout)
        finally:
            os.remove(script)
        node = json.loads(subprocess.run(["node", "-e", NODE_JS.replace("ROW", JS_ROW), inp], check=True,
                                         capture_output=True, text=True).stdout)
    ours = subprocess.run(["cargo", "run", "-q", "--release", "-p", "clowder-vm", "--example", "math_values"],
                          cwd=ROOT, input="".join(f"{bits(x):016x}\n" for x in xs), check=True,
                          capture_output=True, text=True).stdout.split("\n")
    counts = {k: [0, 0, 0, 0, 0] for k in NAMES}
    for i, x in enumerate(xs):
        row = [struct.unpack("<d", struct.pack("<Q", int(h, 16)))[0] for h in ours[i].split()]
        for k, name in enumerate(NAMES):
            c, n = js_number(chrome[i][k]), js_number(node[i][k])
            mine_node, mine_chrome, mine_glibc = row[k], row[10 + k], row[20 + k]
            counts[name][0] += not same(c, n)
            counts[name][1] += not same(c, mine_chrome)
            counts[name][2] += not same(c, mine_glibc)
            counts[name][3] += not same(c, mine_node)
            counts[name][4] += not same(n, mine_node)
    print(f"{len(xs)} arguments (seed {args.seed}); how many results differ in any bit:\n")
    print("| function | Chromium vs Node | Chromium vs clowder `chromium` | Chromium vs clowder `glibc` "
          "| Chromium vs clowder `node` | Node vs clowder `node` |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in NAMES:
        print("| " + name + " | " + " | ".join(str(v) for v in counts[name]) + " |")
    # The library whose results differ from this Chromium's least is what
    # `clowder test --whisker-maths` should name (docs/testing.md, "Whisker's machine").
    totals = {lib: sum(counts[n][i] for n in NAMES) for lib, i in (("chromium", 1), ("glibc", 2), ("node", 3))}
    best = min(totals, key=totals.get)
    print(f"\nclosest library: {best} ({totals[best]} results differ; "
          + ", ".join(f"{lib} {t}" for lib, t in totals.items()) + ")")


if __name__ == "__main__":
    main()
