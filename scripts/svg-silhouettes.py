#!/usr/bin/env python3
"""SVG costume silhouettes, pixel by pixel: the real scratch-render in Chromium against clowder.

    scripts/svg-silhouettes.py [--cache DIR] [--show N] [--scale S] [--text-samples] [--colour] FILE...

FILEs are .svg costumes or .sb3 projects (every SVG costume of their sprites). Each costume is
rasterised at scale S (default 1; scratch-render's MIP scales are powers of two, as a sprite at
size 150 % draws from the scale-2 MIP) as `SVGSkin.createMIP` does, by the render oracle (a copy of
shared/tools/render-oracle with one more question kind, `silhouette`, which returns the skin's
collision silhouette) and by clowder (`cargo run -p clowder-vm --example svg_alpha`). The
report counts, per kind of costume (plain paths, gradients, embedded images, text), the pixels
whose alpha is zero on one side only — what decides touching, bounds and picking at edges —
and the mean alpha difference over pixels partly covered on either side; --show lists the
costumes that differ most. --colour also asks for the silhouettes' colours (what colour sensing
reads) and counts the pixels drawn on both sides whose straight colour differs in the bits
scratch-render's colorMatches compares (5, 5 and 4).

Chromium's silhouettes are cached per file content under --cache (default
$CLOWDER_CACHE/svg-silhouettes). Needs node/npm and Chromium (CHROMIUM, default
/usr/bin/chromium), as scripts/geometry.sh does.
"""
import argparse
import base64
import collections
import hashlib
import math
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The question the oracle page gets: the silhouette after a MIP at scale 1 was made.
SILHOUETTE_CASE = """        case 'silhouette': {
            const d = r._allDrawables[resolve(q.a)];
            const s = 100 * (q.scale || 1);
            d.skin.updateSilhouette([s, s]);
            const sil = d.skin._silhouette;
            const w = sil._width, h = sil._height, data = sil._colorData;
            let a = '', c = '';
            if (data) for (let i = 0; i < w * h; i++) a += String.fromCharCode(data[i * 4 + 3]);
            if (data && q.rgb) for (let i = 0; i < w * h * 4; i++) if (i % 4 !== 3) c += String.fromCharCode(data[i]);
            return q.rgb ? {w, h, alpha: btoa(a), rgb: btoa(c)} : {w, h, alpha: btoa(a)};
        }
        default:"""

BLANK = b'<svg xmlns="http://www.w3.org/2000/svg" width="2" height="2" viewBox="0 0 2 2"></svg>'


def prepare_oracle(cache):
    """A writable copy of the render oracle with the `silhouette` question."""
    src = os.environ.get("RENDER_ORACLE", os.path.join(ROOT, "..", "shared", "tools", "render-oracle"))
    dst = os.path.join(cache, "oracle")
    page = os.path.join(dst, "oracle-page.js")
    if not os.path.exists(os.path.join(dst, "node_modules")):
        os.makedirs(dst, exist_ok=True)
        for f in os.listdir(src):
            if f.endswith((".js", ".json", ".py")):
                shutil.copy(os.path.join(src, f), dst)
        print("svg-silhouettes: installing the render oracle's packages…", file=sys.stderr)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=dst, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    text = open(page, encoding="utf-8").read()
    if "case 'silhouette'" in text and "q.rgb" not in text:
        # A copy patched by an older version of this script: patch it again.
        start = text.index("        case 'silhouette'")
        text = text[:start] + "        default:" + text[text.index("        default:", start) + len("        default:"):]
    if "case 'silhouette'" not in text:
        if text.count("        default:") != 1:
            sys.exit(f"svg-silhouettes: cannot add the silhouette question to {page}")
        open(page, "w", encoding="utf-8").write(text.replace("        default:", SILHOUETTE_CASE))
    return dst


def collect(files, into):
    """The SVG costumes of FILEs as (path, bytes), each file content once."""
    seen, out = set(), []
    for f in files:
        if f.endswith(".sb3"):
            try:
                z = zipfile.ZipFile(f)
                pj = json.loads(z.read("project.json"))
            except (OSError, KeyError, ValueError, zipfile.BadZipFile) as e:
                print(f"svg-silhouettes: skipping {f}: {e}", file=sys.stderr)
                continue
            for t in pj.get("targets", []):
                for c in t.get("costumes", []) if not t.get("isStage") else []:
                    if c.get("dataFormat") != "svg":
                        continue
                    try:
                        data = z.read(c.get("md5ext") or c.get("assetId", "") + ".svg")
                    except KeyError:
                        continue
                    out.append(data)
        else:
            out.append(open(f, "rb").read())
    paths = []
    for data in out:
        k = hashlib.md5(data).hexdigest()
        if k in seen:
            continue
        seen.add(k)
        p = os.path.join(into, k + ".svg")
        if not os.path.exists(p):
            open(p, "wb").write(data)
        paths.append(p)
    return paths


def answer_file(svg, scale, colour=False):
    """Where Chromium's silhouette of `svg` at `scale` is cached (with its colours: `colour`)."""
    stem = ".chromium-rgb" if colour else ".chromium"
    return svg[:-4] + (f"{stem}.json" if scale == 1 else f"{stem}@{scale:g}.json")


def chromium_silhouettes(oracle, cache, paths, scale, colour=False, chunk=40):
    """Asks the oracle for every costume not cached yet, `chunk` costumes per browser."""
    todo = [p for p in paths if not os.path.exists(answer_file(p, scale, colour))]
    for i in range(0, len(todo), chunk):
        part = todo[i:i + chunk]
        costumes, files = [], {}
        for p in part:
            k = os.path.basename(p)[:-4]
            files[k + ".svg"] = open(p, "rb").read()
            costumes.append({"name": k, "assetId": k, "md5ext": k + ".svg", "dataFormat": "svg",
                             "rotationCenterX": 0, "rotationCenterY": 0})
        bk = hashlib.md5(BLANK).hexdigest()
        files[bk + ".svg"] = BLANK
        common = {"variables": {}, "lists": {}, "broadcasts": {}, "blocks": {}, "comments": {},
                  "currentCostume": 0, "sounds": [], "volume": 100}
        stage = dict(common, isStage=True, name="Stage", layerOrder=0,
                     costumes=[{"name": "b", "assetId": bk, "md5ext": bk + ".svg", "dataFormat": "svg",
                                "rotationCenterX": 1, "rotationCenterY": 1}])
        sprite = dict(common, isStage=False, name="S", layerOrder=1, costumes=costumes, visible=True, x=0,
                      y=0, size=100, direction=90, draggable=False, rotationStyle="all around")
        sb3 = os.path.join(cache, "chunk.sb3")
        with zipfile.ZipFile(sb3, "w") as z:
            z.writestr("project.json", json.dumps({"targets": [stage, sprite], "meta": {"semver": "3.0.0"}}))
            for n, d in files.items():
                z.writestr(n, d)
        scenes = [{"sprites": [{"name": "S", "costume": j, "raw": True}],
                   "questions": [{"kind": "silhouette", "a": "S", "scale": scale, "rgb": colour}]}
                  for j in range(len(part))]
        qf = os.path.join(cache, "questions.json")
        json.dump(scenes, open(qf, "w"))
        env = dict(os.environ, CHROMIUM=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
        r = subprocess.run(["node", "query.js", sb3, qf], cwd=oracle, capture_output=True, text=True, env=env,
                           timeout=1800)
        got = 0
        for line in r.stdout.splitlines():
            if not line.startswith("{"):
                continue
            a = json.loads(line)
            j = a.get("scene")
            if isinstance(a.get("answer"), dict) and isinstance(j, int) and 0 <= j < len(part):
                json.dump(a["answer"], open(answer_file(part[j], scale, colour), "w"))
                got += 1
        if got < len(part):
            print(f"svg-silhouettes: the oracle answered {got} of {len(part)}: {r.stderr[-300:]}", file=sys.stderr)
        print(f"svg-silhouettes: oracle {i + len(part)}/{len(todo)}", file=sys.stderr)


TEXT_FONTS = ["Sans Serif", "Serif", "Handwriting", "Marker", "Curly", "Pixel"]
TEXT_STRINGS = ["O", "H", "a", "g", "Hello", "Score: 12"]
TEXT_COLOURS = ["#FFFFFF", "#FF0000", "#00FF00", "#0000FF", "#7F7F7F", "#D03535", "#404040", "#FFCC00", "#4C97FF",
                "#9966FF", "#202020", "#C0C0C0"]


def text_samples(into, seed=5):
    """Seeded text costumes as the paint editor writes them (a `<text>` in each Scratch font at
    sizes 12-48, at a fractional position, under a text scale of 1, 0.73 or 0.5; then single
    glyphs in twelve colours): the instrument for glyph placement and glyph masks
    (`geometry/svg/glyphs.rs`)."""
    import random
    rng = random.Random(seed)
    paths = []
    for f in TEXT_FONTS:
        for t in TEXT_STRINGS:
            for k in range(4):
                size = rng.choice([12, 16, 20, 24, 30, 40, 48])
                x, y = round(rng.uniform(2, 8), 3), round(rng.uniform(size, size + 6), 3)
                w, h = int(size * len(t) * 0.9 + 20), int(size * 1.6 + 10)
                sc = rng.choice([None, None, 0.5, 0.73])
                tr = f"translate({x},{y})" + (f" scale({sc},{sc})" if sc else "")
                fs = f"{size / sc:g}" if sc else f"{size}"
                svg = (f'<svg version="1.1" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
                       f'viewBox="0,0,{w},{h}"><g fill="#000000" stroke="none" font-family="{f}" font-size="{fs}" '
                       f'text-anchor="start"><text transform="{tr}" xml:space="preserve" font-family="{f}" '
                       f'font-size="{fs}">{t}</text></g></svg>').encode()
                paths.append(keep(into, svg))
    # Colours: the gamma pre-blend's table depends on the text colour's luminance.
    rng = random.Random(11)
    for c in TEXT_COLOURS:
        for t in ["O", "a", "H"]:
            size = rng.choice([16, 24, 30])
            x, y = round(rng.uniform(2, 8), 3), round(rng.uniform(size, size + 6), 3)
            w, h = int(size * 0.9 + 20), int(size * 1.6 + 10)
            svg = (f'<svg version="1.1" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
                   f'viewBox="0,0,{w},{h}"><text transform="translate({x},{y})" xml:space="preserve" '
                   f'font-family="Sans Serif" font-size="{size}" fill="{c}">{t}</text></svg>').encode()
            paths.append(keep(into, svg))
    return paths


def keep(into, svg):
    """Writes `svg` under its MD5 in `into` (once) and returns the path."""
    p = os.path.join(into, hashlib.md5(svg).hexdigest() + ".svg")
    if not os.path.exists(p):
        open(p, "wb").write(svg)
    return p


def kind(svg_text):
    k = [n for n, pat in (("text", "<text"), ("image", "<image"), ("gradient", "Gradient")) if re.search(pat, svg_text)]
    return "+".join(k) or "paths"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*")
    ap.add_argument("--text-samples", action="store_true",
                    help="also 180 seeded text costumes: the six Scratch fonts, twelve colours (glyph masks)")
    default_cache = os.path.join(os.environ.get("CLOWDER_CACHE", os.path.expanduser("~/.cache/clowder")),
                                 "svg-silhouettes")
    ap.add_argument("--cache", default=default_cache)
    ap.add_argument("--show", type=int, default=10)
    ap.add_argument("--scale", type=float, default=1.0, help="MIP scale, a power of two (default 1)")
    ap.add_argument("--colour", action="store_true",
                    help="compare colours too: pixels non-zero on both sides whose colour differs in the bits "
                         "colour sensing compares (scratch-render's colorMatches: 5, 5 and 4 bits)")
    args = ap.parse_args()
    if args.scale <= 0 or args.scale > 8 or math.log2(args.scale) != int(math.log2(args.scale)):
        sys.exit("svg-silhouettes: --scale must be a power of two between 1/8 and 8")
    cache = os.path.abspath(args.cache)
    svgdir = os.path.join(cache, "svg")
    os.makedirs(svgdir, exist_ok=True)
    paths = collect(args.files, svgdir) + (text_samples(svgdir) if args.text_samples else [])
    if not paths:
        sys.exit("svg-silhouettes: no costumes (give FILEs or --text-samples)")
    oracle = prepare_oracle(cache)
    chromium_silhouettes(oracle, cache, paths, args.scale, args.colour)
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "clowder-vm", "--example", "svg_alpha"], cwd=ROOT,
                   check=True)
    tool = os.path.join(ROOT, "target", "release", "examples", "svg_alpha")
    flags = ["--scale", f"{args.scale:g}"] + (["--rgba"] if args.colour else [])
    mine = subprocess.run([tool] + flags, input="\n".join(paths) + "\n", capture_output=True, text=True).stdout.splitlines()
    by = collections.defaultdict(collections.Counter)
    other = collections.Counter()
    worst = []
    for p, line in zip(paths, mine):
        cf = answer_file(p, args.scale, args.colour)
        if not os.path.exists(cf):
            other["no answer from the oracle"] += 1
            continue
        o = json.load(open(cf))
        m = line.split(" ")
        if len(m) < 5 or m[1] == "ERR":
            other["clowder could not load"] += 1
            continue
        if (o["w"], o["h"]) != (int(m[1]), int(m[2])):
            other[f"canvas size differs ({o['w']}x{o['h']} / {m[1]}x{m[2]})"] += 1
            continue
        oa = base64.b64decode(o["alpha"]) if o["alpha"] else bytes(o["w"] * o["h"])
        ma = bytes.fromhex(m[4]) if m[4] != "-" else bytes(len(oa) * (4 if args.colour else 1))
        if args.colour:
            # Straight colours of the pixels both sides draw, masked as colorMatches compares them.
            orgb = base64.b64decode(o.get("rgb") or "") or bytes(3 * len(oa))
            mrgb, ma = bytes(b for i, b in enumerate(ma) if i % 4 != 3), ma[3::4]
            colour = sum(1 for i in range(len(oa)) if oa[i] and ma[i] and any(
                (orgb[3 * i + k] ^ mrgb[3 * i + k]) & mask for k, mask in enumerate((0xF8, 0xF8, 0xF0))))
        else:
            colour = 0
        c = by[kind(open(p, encoding="utf-8", errors="replace").read())]
        c["costumes"] += 1
        c["identical"] += oa == ma
        n = 0
        for x, y in zip(oa, ma):
            if (x == 0) != (y == 0):
                n += 1
                c["chromium only" if x else "clowder only"] += 1
            if 0 < x < 255 or 0 < y < 255:
                c["partial"] += 1
                c["absdiff"] += abs(x - y)
        c["colour"] += colour
        worst.append((n + colour, p))
    print("| costumes | count | byte-identical | pixels non-zero on one side | Chromium only | clowder only "
          "| per costume | mean alpha difference at partial pixels |" + (" colour differs |" if args.colour else ""))
    print("|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if args.colour else ""))
    for k, c in sorted(by.items()):
        d = c["chromium only"] + c["clowder only"]
        print(f"| {k} | {c['costumes']} | {c['identical']} | {d} | {c['chromium only']} | {c['clowder only']} | "
              f"{d / c['costumes']:.1f} | {c['absdiff'] / max(1, c['partial']):.2f} |"
              + (f" {c['colour']} |" if args.colour else ""))
    for k, n in other.items():
        print(f"{n} costumes: {k}")
    for n, p in sorted(worst, reverse=True)[:args.show]:
        print(f"{n:7d} {p}")


if __name__ == "__main__":
    main()
