#!/usr/bin/env python3
"""Rewrite a trace with number-like strings in variables, lists and the answer turned into numbers.

TurboWarp's compiler stores some values as numbers where scratch-vm keeps the string (e.g. a
variable set to the literal "0.8"), so a strict compare.py run reports every such value. Comparing
two traces after this rewrite tells whether that is the only difference:
    python3 loose.py a.jsonl > a.loose.jsonl; python3 loose.py b.jsonl > b.loose.jsonl
    python3 ORACLE/compare.py a.loose.jsonl b.loose.jsonl
"""
import json
import re
import sys

NUMERIC = re.compile(r"-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def loose(v):
    if isinstance(v, str) and NUMERIC.fullmatch(v.strip()):
        f = float(v)
        return int(f) if f.is_integer() and abs(f) < 2**53 else f
    if isinstance(v, list):
        return [loose(x) for x in v]
    return v


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            for t in rec.get("targets", []):
                t["variables"] = {k: loose(v) for k, v in t.get("variables", {}).items()}
                t["lists"] = {k: loose(v) for k, v in t.get("lists", {}).items()}
            if "answer" in rec:
                rec["answer"] = loose(rec["answer"])
            sys.stdout.write(json.dumps(rec, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
