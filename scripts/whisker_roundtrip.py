#!/usr/bin/env python3
"""Round trip of clowder-generated suites through the real Whisker (see whisker-roundtrip.sh).

For every project: `clowder gen --out`, then the whisker-oracle's run.sh on the exported
tests.js, then a table of verdicts per game and the first failure of every test that did not
pass. Whisker does not print assertion messages without its live log, so the runner gets a
copy of tests.js (`tests.logged.js`) whose test functions log the error they throw
(`ROUNDTRIP-FAIL <test>: <message>`, forwarded by the servant's -k) and rethrow it: same tests,
same verdicts.
"""
import argparse
import concurrent.futures
import csv
import hashlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import zipfile

TEST_FN = re.compile(r"^const (test\d+) = async function \(t\) \{$", re.M)
FAIL_LINE = re.compile(r"ROUNDTRIP-FAIL (.+?) :: (.*)")


def projects(paths, corpora):
    if not paths:
        paths = [os.path.join(corpora, "whisker-rq1")]
    out = []
    for p in paths:
        if os.path.isdir(p):
            out += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".sb3"))
        else:
            out.append(p)
    return out


# A JavaScript expression: every sprite and clone as Whisker's wrapper sees it (--dump-state).
STATE_JS = (
    "JSON.stringify(t.getSprites(s => !s.isStage).map(s => [s.name, s.isOriginal ? 0 : "
    "s.getOriginal().getClones().indexOf(s) + 1, s.x, s.y, s.direction, s.size, s.currentCostume, "
    "s.visible, s.layerOrder, s.sayText]))"
)


def logged_copy(src, dst, dump_state=False):
    """tests.js with every `testN` wrapped so that its error is logged before it propagates
    (with `dump_state`, followed by the state of every sprite and clone)."""
    text = open(src, encoding="utf-8").read()
    names = TEST_FN.findall(text)
    body = TEST_FN.sub(lambda m: f"const {m.group(1)}_body = async function (t) {{", text)
    head, sep, tail = body.partition("module.exports =")
    if not sep:
        raise ValueError(f"{src}: no module.exports")
    wrappers = []
    for i, n in enumerate(names):
        wrappers.append(
            f"const {n} = async function (t) {{\n"
            f"  try {{ await {n}_body(t); }} catch (e) {{\n"
            f"    console.log('ROUNDTRIP-FAIL Generated Test {n[4:]} :: ' + "
            f"String(e && e.message !== undefined ? e.message : e).replace(/\\n/g, ' '));\n"
            + (f"    console.log('ROUNDTRIP-STATE Generated Test {n[4:]} :: ' + {STATE_JS});\n" if dump_state else "")
            + "    throw e;\n  }\n};\n"
        )
    open(dst, "w", encoding="utf-8").write(head + "\n".join(wrappers) + "\n" + sep + tail)


def verdicts(csv_path):
    """{test name: pass/fail/error/skip} from Whisker's CSV (its last header and row)."""
    lines = [ln for ln in open(csv_path, encoding="utf-8").read().splitlines() if ln.strip()]
    heads = [i for i, ln in enumerate(lines) if ln.startswith("projectName,")]
    if not heads:
        return {}
    header_i = heads[-1]
    rows = list(csv.reader(io.StringIO("\n".join(lines[header_i:header_i + 2]))))
    if len(rows) < 2:
        return {}
    header, row = rows
    stop = header.index("passed") if "passed" in header else len(header)
    return {header[i]: row[i] for i in range(4, stop) if i < len(row)}


TAP_LINE = re.compile(r"(not )?ok (\d+) - (.+?)(?: # (SKIP|skip).*)?$")
TAP_SEVERITY = re.compile(r"^\s*severity: (fail|error|skip)\s*$")


def tap_by_number(text):
    """{test number: (name, verdict)} of every TAP line in a log text (a `not ok` is what its
    `severity` says: fail, error or skip)."""
    by_number = {}
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        m = TAP_LINE.search(ln)
        # A test's line can be forwarded twice: its number identifies it.
        if not m or int(m.group(2)) in by_number:
            continue
        if m.group(4):
            verdict = "skip"
        elif not m.group(1):
            verdict = "pass"
        else:
            verdict = next((s.group(1) for s in map(TAP_SEVERITY.match, lines[i + 1:i + 6]) if s), "fail")
        by_number[int(m.group(2))] = (m.group(3), verdict)
    return by_number


def tap_results(text):
    """{test name: verdict} of every TAP line in a log text, in order."""
    # Two tests with one name: the later one's verdict, as in a CSV row keyed by name.
    return {name: verdict for _, (name, verdict) in sorted(tap_by_number(text).items())}


def tap_verdicts(log_path):
    """{test name: verdict} from the TAP13 text in Whisker's log (the servant sometimes fails to
    write its CSV after the tests ran: then their verdicts are only there); {} unless the log
    has a verdict for every test of the plan (`1..N`: it does not always forward them all)."""
    text = open(log_path, encoding="utf-8", errors="replace").read()
    plan = re.search(r"^1\.\.(\d+)$", text, re.M)
    out = tap_results(text)
    numbers = {int(m.group(2)) for m in map(TAP_LINE.search, text.splitlines()) if m}
    return out if plan and len(numbers) == int(plan.group(1)) else {}


def whisker_verdicts(wdir):
    """Whisker's verdicts from its CSV, else from the TAP text of its log; {} when neither has them."""
    csv_path = os.path.join(wdir, "whisker.csv")
    if os.path.exists(csv_path):
        return verdicts(csv_path)
    log = os.path.join(wdir, "whisker.out")
    return tap_verdicts(log) if os.path.exists(log) else {}


def whisker_verdict_list(wdir):
    """Whisker's verdicts in the order of the tests, or None: from its CSV's data row (the last
    line, read by position: a header can repeat a name, or hold a whole function's source with
    commas and line breaks, when a test's name was not a string), else from its log's TAP."""
    csv_path = os.path.join(wdir, "whisker.csv")
    if os.path.exists(csv_path):
        lines = [ln for ln in open(csv_path, encoding="utf-8").read().splitlines() if ln.strip()]
        row = next(csv.reader([lines[-1]])) if lines else []
        # projectName, seed, assertions, algorithm, a verdict per test, then passed, failed,
        # error, skip, totalBlocks, coveredBlocks, coverage, duration.
        found = row[4:len(row) - 8] if len(row) >= 12 else []
        if found and all(v in ("pass", "fail", "error", "skip") for v in found):
            return found
    log = os.path.join(wdir, "whisker.out")
    if not os.path.exists(log) or not tap_verdicts(log):
        return None
    text = open(log, encoding="utf-8", errors="replace").read()
    return [v for _, (_, v) in sorted(tap_by_number(text).items())]


def read_project(path):
    """(the file's bytes, its project.json) of an .sb3 or a bare project.json."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"PK":
        with zipfile.ZipFile(path) as z:
            name = next((n for n in z.namelist() if n == "project.json"), None) or next(
                n for n in z.namelist() if n.endswith("project.json"))
            return data, json.loads(z.read(name))
    return data, json.loads(data)


OFFLINE_FLAG = "--proxy-server=http://127.0.0.1:9"


def uses_network(project):
    """Whether the project has blocks that ask a Scratch web service (text to speech, translate)."""
    return any(isinstance(b, dict) and b.get("opcode", "").startswith(("text2speech_", "translate_"))
               for t in project.get("targets", []) for b in (t.get("blocks") or {}).values())


def offline_oracle(oracle, out):
    """The oracle's run.sh with Chromium sending every request outside the page to a closed port
    (`--offline`): Whisker's text to speech fails at once instead of waiting on name look-ups, as
    on a machine with no network that says so quickly. Written to OUT/oracle-offline/."""
    with open(os.path.join(oracle, "run.sh"), encoding="utf-8") as f:
        text = f.read()
    line = next((ln for ln in text.splitlines() if ln.startswith("export WHISKER_EXTRA_CHROME_ARGS=\"")), None)
    if line is None:
        sys.exit(f"--offline: {oracle}/run.sh does not set WHISKER_EXTRA_CHROME_ARGS as expected")
    d = os.path.join(out, "oracle-offline")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "run.sh"), "w", encoding="utf-8") as f:
        f.write(text.replace(line, line[:-1] + " " + OFFLINE_FLAG + "\""))
    os.chmod(os.path.join(d, "run.sh"), 0o755)
    return d


def generate(args, project):
    """`clowder gen --out` into <out>/<name>; returns an error text or None."""
    name = os.path.splitext(os.path.basename(project))[0]
    out = os.path.join(args.out, name)
    os.makedirs(out, exist_ok=True)
    if args.reuse and os.path.exists(os.path.join(out, "tests.js")):
        return None
    # Offline, `speak` never ends in Whisker; the generator runs it the same way (only where
    # the project has such blocks, so other exports stay the same).
    offline = ["--param", "whisker_offline_speech=true"] \
        if args.offline and uses_network(read_project(project)[1]) else []
    gen = subprocess.run(
        [args.clowder, "gen", project, "--algorithm", args.algorithm, "--seed", str(args.seed),
         "--budget-steps", str(args.steps), "--out", out] + offline,
        capture_output=True, text=True)
    if gen.returncode != 0:
        return f"clowder gen failed: {gen.stderr.strip()[-400:]}"
    return None


def kill_session(p):
    """Stops process `p` (started with `start_new_session`) and everything it started: by
    session, since run.sh's `timeout` puts the servant into a process group of its own."""
    subprocess.run(["pkill", "-KILL", "-s", str(p.pid)], check=False)
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.kill(p.pid, signal.SIGKILL)
        p.wait()


def run_whisker(oracle, project, tests, wdir, seed, tries=3, cap_s=600):
    """The whisker-oracle's run.sh, tried again (the tests are deterministic) when it left no
    verdicts: on a loaded machine Chromium sometimes does not load Whisker's page within
    puppeteer's 30 s, or the servant fails to write its CSV."""
    for _ in range(tries):
        p = subprocess.Popen([os.path.join(oracle, "run.sh"), project, tests, wdir, str(seed), "10"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            p.wait(timeout=cap_s)
        except subprocess.TimeoutExpired:
            # A generated test is a bounded event sequence, but a Whisker page that hangs (browser
            # not loading, servant stuck) would stop the whole round trip: stop it with its browser.
            kill_session(p)
        if whisker_verdicts(wdir):
            break
    return p


def replay(args, project):
    """Runs <out>/<name>/tests.js in Whisker; returns ((verdicts, first failures), error)."""
    name = os.path.splitext(os.path.basename(project))[0]
    out = os.path.join(args.out, name)
    logged = os.path.join(out, "tests.logged.js")
    logged_copy(os.path.join(out, "tests.js"), logged, args.dump_state)
    wdir = os.path.join(out, "whisker")
    # With --reuse, verdicts Whisker already gave for the same exported tests are kept (its
    # runs are the slow, wall-clock part of a round trip).
    stamp = os.path.join(wdir, "tests.sha256")
    digest = hashlib.sha256(open(logged, "rb").read()).hexdigest()
    cached = (args.reuse and whisker_verdicts(wdir) and os.path.exists(stamp)
              and open(stamp).read() == digest)
    rc = 0
    if not cached:
        run = run_whisker(args.oracle, project, logged, wdir, args.seed, tries=args.tries, cap_s=args.cap)
        rc = run.returncode
        with open(stamp, "w") as f:
            f.write(digest)
    v = whisker_verdicts(wdir)
    if not v:
        return None, f"Whisker gave no verdicts (run.sh exit {rc}; see {wdir}/whisker.out)"
    first = {}
    log = open(os.path.join(wdir, "whisker.out"), encoding="utf-8", errors="replace").read()
    for m in FAIL_LINE.finditer(log):
        first.setdefault(m.group(1), m.group(2).strip())
    return (v, first), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clowder", required=True)
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--corpora", required=True)
    ap.add_argument("--steps", type=int, default=30000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--algorithm", default="mio")
    ap.add_argument("--jobs", type=int, default=1, help="parallel clowder runs")
    ap.add_argument("--out", default="/tmp/whisker-roundtrip")
    ap.add_argument("--only", default=None, help="regex on the project file name")
    ap.add_argument("--reuse", action="store_true",
                    help="keep suites already exported in --out, and Whisker's verdicts on them")
    ap.add_argument("--cap", type=float, default=600.0,
                    help="wall seconds one Whisker run may take (then it is stopped with its browser)")
    ap.add_argument("--tries", type=int, default=3, help="Whisker runs per game while it leaves no verdicts")
    ap.add_argument("--dump-state", action="store_true",
                    help="log every sprite's state (name, clone, x, y, direction, size, costume, visible, "
                         "layer, bubble) in Whisker's log when a test fails")
    ap.add_argument("--offline", action="store_true",
                    help="Whisker's browser fails every network request at once (text to speech never gets a "
                         "sound, `speak` never ends), and projects with such blocks are generated the same way "
                         "(--param whisker_offline_speech=true)")
    ap.add_argument("paths", nargs="*")
    args = ap.parse_args()
    if args.offline:
        args.oracle = offline_oracle(args.oracle, args.out)
    todo = projects(args.paths, args.corpora)
    if args.only:
        todo = [p for p in todo if re.search(args.only, os.path.basename(p))]
    if not todo:
        print("whisker-roundtrip: no projects", file=sys.stderr)
        return 2
    # Generation runs in parallel; Whisker runs one at a time (the servant's working folder is fixed).
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        gen_errors = list(pool.map(lambda p: generate(args, p), todo))
    results = []
    for p, err in zip(todo, gen_errors):
        name = os.path.splitext(os.path.basename(p))[0]
        if err is None:
            res, err = replay(args, p)
        else:
            res = None
        results.append((name, res, err))
        print(f"== {name}: {err or 'done'}", file=sys.stderr)

    total = {"tests": 0, "pass": 0, "fail": 0, "error": 0, "skip": 0}
    print(f"\n| game | tests | pass | fail | error | pass rate |\n|---|---:|---:|---:|---:|---:|")
    problems = []
    for name, res, err in results:
        if res is None:
            print(f"| {name} | - | - | - | - | {err} |")
            problems.append(name)
            continue
        v, _ = res
        c = {k: sum(1 for x in v.values() if x == k) for k in ("pass", "fail", "error", "skip")}
        n = len(v)
        for k in c:
            total[k] += c[k]
        total["tests"] += n
        rate = f"{100.0 * c['pass'] / n:.1f} %" if n else "-"
        print(f"| {name} | {n} | {c['pass']} | {c['fail']} | {c['error']} | {rate} |")
    n = total["tests"]
    rate = f"{100.0 * total['pass'] / n:.1f} %" if n else "-"
    print(f"| **all** | {n} | {total['pass']} | {total['fail']} | {total['error']} | {rate} |")
    print("\nFirst failure of each test that did not pass:")
    for name, res, _ in results:
        if res is None:
            continue
        v, first = res
        for test, verdict in v.items():
            if verdict != "pass":
                print(f"  {name} / {test}: {verdict}: {first.get(test, '(no message logged)')}")
    return 0 if n and total["pass"] == n and not problems else 1


if __name__ == "__main__":
    sys.exit(main())
