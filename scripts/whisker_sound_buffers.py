#!/usr/bin/env python3
"""Reads, in the real Whisker, the buffer its browser decodes from every distinct WAV sound of
the given projects (default: every .sb3 of the corpora), and writes them as a table that
vm/tests/whisker_sounds.rs holds clowder's `whisker::sound_secs` to.

Whisker's scratch-vm fork waits `play sound until done` for `buffer.duration`, not for
project.json's `sampleCount / rate`; the two disagree where the editor left stale metadata.
The probe test loads each project and logs, per sound, `buffer.length`, `buffer.sampleRate` and
`buffer.duration` (and the AudioContext's rate). Only enough projects to cover every distinct
sound file (by md5ext) are run. Run on an idle machine.

    scripts/whisker_sound_buffers.py [--out TSV] [--work DIR] [FILES...]
"""
import argparse
import glob
import json
import os
import sys
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from whisker_mutant_grading import run_whisker_capped  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROBE = """const test0 = async function (t) {
  await t.runForSteps(1);
  const rt = t.vm.runtime;
  const ctx = rt.audioEngine && rt.audioEngine.audioContext;
  console.log('SNDCTX ' + (ctx ? ctx.sampleRate : 'none'));
  for (const tg of rt.targets) {
    if (!tg.isOriginal) continue;
    for (const s of tg.sprite.sounds) {
      const p = tg.sprite.soundBank && tg.sprite.soundBank.soundPlayers[s.soundId];
      const b = p && p.buffer;
      console.log('SNDBUF ' + JSON.stringify([s.md5, b ? b.length : null, b ? b.sampleRate : null,
                                              b ? b.duration : null]));
    }
  }
  t.end();
}
module.exports = [{ test: test0, name: 'sounds', description: '', categories: [], generationAlgorithm: 'none', seed: '1' }]
"""


def wav_sounds(path):
    """The md5ext of every sound of the project whose file is in the sb3 and says `wav`."""
    try:
        z = zipfile.ZipFile(path)
        names = set(z.namelist())
        p = json.loads(z.read("project.json"))
    except (OSError, zipfile.BadZipFile, KeyError, ValueError):
        return set()
    out = set()
    for t in p.get("targets", []):
        for s in t.get("sounds", []):
            m = s.get("md5ext")
            if isinstance(m, str) and m in names and str(s.get("dataFormat", "")).lower() == "wav":
                out.add(m)
    return out


def cover(files):
    """A few projects that hold every distinct sound of `files` between them (greedy)."""
    have = {f: wav_sounds(f) for f in files}
    left = set().union(*have.values()) if have else set()
    chosen = []
    while left:
        best = max(sorted(have), key=lambda f: len(have[f] & left))
        chosen.append(best)
        left -= have[best]
    return chosen


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--out", default=os.path.join(ROOT, "vm/tests/data/whisker_sound_buffers.tsv"))
    ap.add_argument("--work", default="/tmp/whisker-sound-buffers")
    ap.add_argument("--corpora", default=os.environ.get("CLOWDER_CORPORA", os.path.join(ROOT, "../shared/corpora")))
    ap.add_argument("--oracle", default=os.environ.get("WHISKER_ORACLE", os.path.join(ROOT, "../shared/tools/whisker-oracle")))
    a = ap.parse_args()
    files = [os.path.abspath(f) for f in a.files] or sorted(glob.glob(os.path.join(a.corpora, "**/*.sb3"), recursive=True))
    chosen = cover(files)
    os.makedirs(a.work, exist_ok=True)
    probe = os.path.join(a.work, "probe.js")
    with open(probe, "w") as f:
        f.write(PROBE)
    rows, contexts = {}, set()
    for i, path in enumerate(chosen):
        wdir = os.path.join(a.work, f"{i:03}")
        run_whisker_capped(a.oracle, path, probe, wdir, 1, 120)
        log = os.path.join(wdir, "whisker.out")
        text = open(log, encoding="utf-8", errors="replace").read() if os.path.exists(log) else ""
        got = 0
        for ln in text.splitlines():
            if "SNDCTX " in ln:
                contexts.add(ln.split("SNDCTX ", 1)[1].split()[0])
            if "SNDBUF " in ln:
                md5, length, rate, dur = json.loads(ln.split("SNDBUF ", 1)[1].split(" color: ")[0])
                if length is not None:
                    rows[md5] = (length, rate, dur)
                    got += 1
        print(f"{os.path.relpath(path, a.corpora) if path.startswith(os.path.abspath(a.corpora)) else path}: "
              f"{got} sounds", file=sys.stderr)
    with open(a.out, "w") as f:
        f.write("# buffers Whisker's browser decoded (scripts/whisker_sound_buffers.py); AudioContext rate "
                + ",".join(sorted(contexts)) + "\n")
        f.write("md5ext\tlength\tsample_rate\tduration\n")
        for md5 in sorted(rows):
            length, rate, dur = rows[md5]
            f.write(f"{md5}\t{length}\t{rate}\t{json.dumps(dur)}\n")
    print(f"{len(rows)} sounds from {len(chosen)} projects -> {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
