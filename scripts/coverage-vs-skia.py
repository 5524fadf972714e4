#!/usr/bin/env python3
"""SVG coverage, pixel by pixel: clowder's model of Skia's analytic anti-aliasing against Skia.

    scripts/coverage-vs-skia.py [--count N] [--seed S] [--kind fill|stroke|alpha] [--show]
    scripts/coverage-vs-skia.py --paths KIND [--count N] [--seed S] [--size PX] [--outside] [--colour RRGGBB] [--show]

Chromium rasterises a costume's shapes with Skia on the CPU. skia-python (`pip install
skia-python`; tested with 144.1) is that library: its `drawOval` of a filled, stroked or
translucent ellipse gives, pixel for pixel, the alphas Chromium's silhouettes have (checked on
the collection games' bacterium and shadow ellipses). This script draws N seeded random
ellipses (sub-pixel centres and radii on a 1/8 grid) both ways, each as a one-shape SVG
through clowder's whole path (`cargo run --example svg_alpha`: normalisation, conics, stroker,
coverage model, blending) and as the same `drawOval` call in Skia, and counts the pixels whose
alpha is zero on one side only (what decides touching) and the mean alpha difference where
either side is partly covered. `--show` lists the differing pixels per shape as
(x, y, clowder, Skia).

Unlike scripts/svg-silhouettes.py it needs no browser, and it isolates single shapes: a
difference here is clowder's outline or coverage model, never a costume's other content.

--paths checks the scan converter alone (`geometry::aaa`, through `cargo run --example
aaa_fill`): N seeded random paths of one KIND, drawn filled and opaque on canvases up to
--size px (default 70), with --outside reaching up to 40 % beyond the canvas (so Skia clips
their edges first), are compared byte for byte with Skia's `drawPath` (`rect`: `drawRect`,
as Chromium fills `<rect>`). KIND: convex, poly (self-crossing polygons), quad, cubic,
multi (several contours), open (unclosed), stairs (axis-aligned zigzags), rect, or all.
Printed: per kind the shapes whose coverage is identical in every byte. Skia draws in black,
whose blitter keeps the coverage as it is; --colour RRGGBB draws in that opaque colour
instead and compares the alpha after painting (Skia's blitter for other colours writes some
pixels with its own interpolation, which `svg_blend` models).
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def shapes(count, seed, kind):
    rng = random.Random(seed)
    grid = lambda v: round(v * 8) / 8
    for _ in range(count):
        w, h = rng.randint(30, 80), rng.randint(30, 80)
        rx, ry = grid(rng.uniform(1, 12)), grid(rng.uniform(1, 12))
        cx, cy = grid(rng.uniform(14, w - 14)), grid(rng.uniform(14, h - 14))
        stroke = grid(rng.uniform(1.2, 4)) if kind == "stroke" else 0.0
        opacity = round(rng.uniform(0.15, 0.6), 2) if kind == "alpha" else 1.0
        yield w, h, cx, cy, rx, ry, stroke, opacity


def svg_text(w, h, cx, cy, rx, ry, stroke, opacity):
    paint = f'fill="none" stroke="#000" stroke-width="{stroke}"' if stroke else 'fill="#000"'
    # The invisible rectangle pins scratch-svg-renderer's content box to the whole canvas, so
    # the shape is drawn untranslated, as in the Skia call.
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">'
            f'<rect x="0" y="0" width="{w}" height="{h}" fill="none"/>'
            f'<ellipse cx="{cx}" cy="{cy}" rx="{rx}" ry="{ry}" {paint} opacity="{opacity}"/></svg>')


PATH_KINDS = ["convex", "poly", "quad", "cubic", "multi", "open", "stairs", "rect"]


def random_path(rng, kind, w, h, outside):
    """One seeded path as (verb, point...) tuples, in float32 values."""
    import math
    import numpy as np
    f32 = lambda v: float(np.float32(v))

    def pt():
        if outside:
            return f32(rng.uniform(-0.4 * w, 1.4 * w)), f32(rng.uniform(-0.4 * h, 1.4 * h))
        return f32(rng.uniform(2, w - 2)), f32(rng.uniform(2, h - 2))
    n = rng.randint(3, 7)
    if kind == "convex":
        r = rng.uniform(3, min(w, h) / 2 - 2)
        angles = sorted(rng.uniform(0, 2 * math.pi) for _ in range(n))
        ps = [(f32(w / 2 + r * math.cos(a)), f32(h / 2 + r * math.sin(a))) for a in angles]
        return [("M", ps[0])] + [("L", p) for p in ps[1:]] + [("Z",)]
    if kind == "poly":
        ps = [pt() for _ in range(n)]
        return [("M", ps[0])] + [("L", p) for p in ps[1:]] + [("Z",)]
    if kind == "quad":
        return [("M", pt())] + [("Q", pt(), pt()) for _ in range(n - 1)] + [("Z",)]
    if kind == "cubic":
        return [("M", pt())] + [("C", pt(), pt(), pt()) for _ in range(n - 1)] + [("Z",)]
    if kind == "open":
        return [("M", pt())] + [rng.choice([("L", pt()), ("Q", pt(), pt()), ("C", pt(), pt(), pt())])
                                for _ in range(n - 1)]
    if kind == "stairs":
        x, y = pt()
        segs = [("M", (x, y))]
        for k in range(2 * n):
            x, y = (x, pt()[1]) if k % 2 else (pt()[0], y)
            segs.append(("L", (x, y)))
        return segs + [("Z",)]
    if kind == "multi":
        return [s for _ in range(rng.randint(2, 3))
                for s in random_path(rng, rng.choice(["poly", "quad", "cubic", "convex"]), w, h, outside)]
    (x0, y0), (x1, y1) = pt(), pt()
    return [("R", (min(x0, x1), min(y0, y1)), (max(x0, x1), max(y0, y1)))]


def check_paths(args):
    import numpy as np
    import skia
    kinds = PATH_KINDS if args.paths == "all" else [args.paths]
    for kind in kinds:
        rng = random.Random(args.seed)
        cases = []
        for _ in range(args.count):
            w, h = rng.randint(8, args.size), rng.randint(8, args.size)
            cases.append((w, h, rng.random() < 0.3, random_path(rng, kind, w, h, args.outside)))
        lines = [" ".join([str(w), str(h), "1" if eo else "0"] + [t for s in segs for t in
                          [s[0]] + [repr(v) for p in s[1:] for v in p]]) for w, h, eo, segs in cases]
        colour = ["--colour", args.colour] if args.colour else []
        out = subprocess.run(["cargo", "run", "-q", "--release", "-p", "clowder-vm", "--example", "aaa_fill", "--"]
                             + colour,
                             cwd=ROOT, input="\n".join(lines) + "\n", check=True, capture_output=True,
                             text=True).stdout.splitlines()
        same = 0
        for (w, h, eo, segs), line, text in zip(cases, out, lines):
            ours = np.frombuffer(bytes.fromhex(line), dtype=np.uint8).reshape(h, w)
            surface = skia.Surface(w, h)
            canvas = surface.getCanvas()
            canvas.clear(skia.Color4f(0, 0, 0, 0))
            rgb = int(args.colour, 16) if args.colour else 0
            paint = skia.Paint(AntiAlias=True, Color=skia.ColorSetARGB(255, rgb >> 16, (rgb >> 8) & 255, rgb & 255))
            if segs[0][0] == "R":
                canvas.drawRect(skia.Rect.MakeLTRB(*segs[0][1], *segs[0][2]), paint)
            else:
                path = skia.Path()
                for s in segs:
                    {"M": path.moveTo, "L": path.lineTo, "Q": path.quadTo, "C": path.cubicTo,
                     "Z": lambda: path.close()}[s[0]](*[v for p in s[1:] for v in p])
                path.setFillType(skia.PathFillType.kEvenOdd if eo else skia.PathFillType.kWinding)
                canvas.drawPath(path, paint)
            theirs = surface.makeImageSnapshot().toarray()[:, :, 3]
            if (ours == theirs).all():
                same += 1
            elif args.show:
                ys, xs = (ours != theirs).nonzero()
                print(f"  {text}\n    {[(int(x), int(y), int(ours[y, x]), int(theirs[y, x])) for x, y in zip(xs, ys)][:8]}")
        print(f"{kind}: {same} of {len(cases)} shapes identical to Skia in every byte")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--paths", choices=PATH_KINDS + ["all"])
    ap.add_argument("--size", type=int, default=70)
    ap.add_argument("--outside", action="store_true")
    ap.add_argument("--colour", help="with --paths: an opaque colour RRGGBB to draw in (default black)")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kind", choices=["fill", "stroke", "alpha"], default="fill")
    ap.add_argument("--show", action="store_true")
    args = ap.parse_args()
    try:
        import numpy as np
        import skia
    except ImportError:
        sys.exit("coverage-vs-skia: needs skia-python and numpy (pip install skia-python)")
    if args.paths:
        return check_paths(args)
    cases = list(shapes(args.count, args.seed, args.kind))
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, c in enumerate(cases):
            p = os.path.join(tmp, f"{i}.svg")
            with open(p, "w") as f:
                f.write(svg_text(*c))
            paths.append(p)
        lines = subprocess.run(["cargo", "run", "-q", "--release", "-p", "clowder-vm", "--example", "svg_alpha"],
                               cwd=ROOT, input="\n".join(paths) + "\n", check=True, capture_output=True,
                               text=True).stdout.splitlines()
    zero_mismatch = ours_only = skia_only = compared = 0
    diff_sum = partial = 0
    for i, (c, line) in enumerate(zip(cases, lines)):
        w, h, cx, cy, rx, ry, stroke, opacity = c
        m = line.split(" ")
        if len(m) < 5 or m[1] == "ERR" or (int(m[1]), int(m[2])) != (w, h):
            print(f"shape {i}: clowder gave {' '.join(m[1:3])}, not a {w}×{h} canvas", file=sys.stderr)
            continue
        ours = np.frombuffer(bytes.fromhex(m[4]), dtype=np.uint8).reshape(h, w).astype(int)
        surface = skia.Surface(w, h)
        canvas = surface.getCanvas()
        canvas.clear(skia.Color4f(0, 0, 0, 0))
        paint = skia.Paint(AntiAlias=True, Color=skia.Color4f(0, 0, 0, opacity))
        if stroke:
            paint.setStyle(skia.Paint.kStroke_Style)
            paint.setStrokeWidth(stroke)
        canvas.drawOval(skia.Rect.MakeLTRB(cx - rx, cy - ry, cx + rx, cy + ry), paint)
        theirs = surface.makeImageSnapshot().toarray()[:, :, 3].astype(int)
        compared += 1
        differ = (ours > 0) != (theirs > 0)
        zero_mismatch += int(differ.sum())
        ours_only += int(((ours > 0) & (theirs == 0)).sum())
        skia_only += int(((theirs > 0) & (ours == 0)).sum())
        some = ((ours > 0) & (ours < 255)) | ((theirs > 0) & (theirs < 255))
        diff_sum += int(abs(ours - theirs)[some].sum())
        partial += int(some.sum())
        if args.show and differ.any():
            ys, xs = differ.nonzero()
            print(f"shape {i} {svg_text(*c)[-90:]}: {[(int(x), int(y), int(ours[y, x]), int(theirs[y, x])) for x, y in zip(xs, ys)][:8]}")
    print(f"{args.kind}, {compared} ellipses (seed {args.seed}): {zero_mismatch} pixels zero on one side only "
          f"({ours_only} clowder only, {skia_only} Skia only), mean |alpha difference| at partly covered pixels "
          f"{diff_sum / max(partial, 1):.2f}")


if __name__ == "__main__":
    main()
