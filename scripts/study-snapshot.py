#!/usr/bin/env python3
"""A study's store as one compressed file, to carry a study that runs longer than a machine lasts.

    scripts/study-snapshot.py save RESULTS/NAME SNAPSHOT.sqlite.xz     # while the coordinator runs, or not
    scripts/study-snapshot.py restore SNAPSHOT.sqlite.xz RESULTS/NAME  # then resume as usual

`save` copies the store (`study.sqlite`) with SQLite's online backup, so the copy is consistent
even while a coordinator writes to it, keeps only finished runs' results (runs in flight are
pending in the copy, as after any restart), and compresses it with xz. `restore` refuses to
overwrite an existing store. The store is the study: its results, run identities (with the
engine version) and submissions; the token and the coordinator's address are not copied.

Resume after `restore` with the same experiment file and a build of the engine version the
study started with: `clowder run EXPERIMENT --output RESULTS` (or `clowder coordinator`).
Standard library only.
"""

import lzma
import os
import sqlite3
import sys
import tempfile

STORE = "study.sqlite"


def save(results: str, out: str) -> None:
    src_path = os.path.join(results, STORE)
    if not os.path.isfile(src_path):
        sys.exit(f"study-snapshot: no {STORE} in {results}")
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, STORE)
        src = sqlite3.connect(f"file:{src_path}?mode=ro", uri=True)
        dst = sqlite3.connect(copy)
        try:
            src.backup(dst)
        finally:
            src.close()
        # The copy is not a live study: leases it names are dropped, as a restarted
        # coordinator would (runs in flight are still pending in the store itself).
        dst.execute("UPDATE runs SET lease_id = NULL, lease_worker = NULL")
        dst.commit()
        dst.execute("VACUUM")
        counts = dict(dst.execute("SELECT status, COUNT(*) FROM runs GROUP BY status").fetchall())
        engines = [r[0] for r in dst.execute("SELECT DISTINCT engine_version FROM submissions")]
        dst.close()
        tmp_out = out + ".tmp"
        with open(copy, "rb") as f, lzma.open(tmp_out, "wb", preset=9) as z:
            while chunk := f.read(1 << 20):
                z.write(chunk)
        os.replace(tmp_out, out)
    total = sum(counts.values())
    done = total - counts.get("pending", 0)
    print(f"study-snapshot: {out}: {done}/{total} runs finished {dict(sorted(counts.items()))}, "
          f"engine {', '.join(engines)}, {os.path.getsize(out)} bytes")


def restore(snapshot: str, results: str) -> None:
    dst_path = os.path.join(results, STORE)
    if os.path.exists(dst_path):
        sys.exit(f"study-snapshot: {dst_path} exists; restore into a new folder")
    os.makedirs(results, exist_ok=True)
    tmp_path = dst_path + ".tmp"
    with lzma.open(snapshot, "rb") as z, open(tmp_path, "wb") as f:
        while chunk := z.read(1 << 20):
            f.write(chunk)
    check = sqlite3.connect(tmp_path)
    ok = check.execute("PRAGMA integrity_check").fetchone()[0]
    check.close()
    if ok != "ok":
        os.remove(tmp_path)
        sys.exit(f"study-snapshot: {snapshot} does not hold a sound store ({ok})")
    os.replace(tmp_path, dst_path)
    print(f"study-snapshot: restored {dst_path}")


def main() -> None:
    if len(sys.argv) != 4 or sys.argv[1] not in ("save", "restore"):
        sys.exit(__doc__)
    (save if sys.argv[1] == "save" else restore)(sys.argv[2], sys.argv[3])


if __name__ == "__main__":
    main()
