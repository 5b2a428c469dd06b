"""A long fuzz session over the import pipeline, for runs far beyond CI's bounded tests.

Each example is 1-3 generated notes files built from the notation's alphabet (markers,
bullets, tabs and spaces, fences, comments, trailers valid and not, task ids and traps,
paths of every form, URLs, CRLF, lone CR, BOM, U+2028, NBSP, invalid UTF-8, NUL bytes),
read against a small checkout. Checked every time: no exception escapes; per file and in
total lines == fact_lines + continuations + blank + skipped; fact_lines == facts + merged
for a fresh store; by_kind, by_marker and skipped_by_reason add up. Every ``--store-every``
examples the real import runs too: its report must equal the dry run's, and a second
import must add and change nothing.

    python bench/fuzz.py [--examples 1000000] [--workers 2] [--seed 1]

Prints examples per second and the count; a failing example is written to
``bench/out/fuzz-failure-<seed>-<n>/`` and the run stops with exit 1.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

from brainmigrate import importer, reports, stores
from brainmigrate.merge.rule import Stems
from brainmigrate.merge.run import merge
from brainmigrate.read.run import ImportOptions

PIECES = [
    "+ ",
    "! ",
    "~ ",
    "= ",
    "? ",
    "> ",
    "-> ",
    "x ",
    "- ",
    "* ",
    "!P3 ",
    "@ ",
    "% ",
    "# ",
    "###### ",
    "  ",
    "\t",
    "```",
    "~~~",
    "<!--",
    "-->",
    "<!-- 2026-09-23 13:16:09 run -->",
    "<!-- 2026-09-23T13:16Z r -->",
    "<!-- 2026-09-23 13:16+02:00 r -->",
    "<!-- 2026-02-30 10:00 r -->",
    "<!-- 2026-09-23 13:16 -->",
    "<!-- note -->",
    "<!-- brainmigrate: allow-gone -->",
    "TER-167",
    "CL-86",
    "SHA-256",
    "X86-64",
    "ter-5",
    "aTER-1",
    "SUPERSEDED",
    "SUPERSEDED_BY k1",
    "app/src/Foo.kt:88",
    "app/src/Foo.kt#L1-L2",
    "app\\src\\Foo.kt",
    "./app//src/Foo.kt",
    "app/src/Gone.kt",
    "../x.kt",
    "/etc/passwd",
    "~/x.kt",
    "C:/x.kt",
    "//host/x.kt",
    "https://a.b/c.html",
    "www.a.b/c.md",
    "git@h:o/r.git",
    "src/*.kt",
    "and/or",
    "v1.2/v1.3",
    "PaymentGateway",
    "PaymentGateway.charge",
    "Foo.kt",
    "HTTPAdapter",
    "[l](app/src/Foo.kt)",
    "retries",
    "retried",
    "cache",
    "12",
    "001",
    "\r",
    "\u2028",
    "\u00a0",
    "\u3000",
    "\ufeff",
    "word",
    ".",
    "(",
    ")",
    "`",
    ":",
    "%20",
]
RAW_PIECES = [b"\xff", b"\x00", b"\xef\xbb\xbf", b"\xc3", b"\r\n", b"\n"]


def generate(rng: random.Random) -> bytes:
    lines = []
    for _ in range(rng.randint(0, 30)):
        parts = [rng.choice(PIECES) for _ in range(rng.randint(0, 9))]
        line = "".join(parts).encode("utf-8")
        if rng.random() < 0.05:
            line += rng.choice(RAW_PIECES)
        lines.append(line)
    sep = b"\r\n" if rng.random() < 0.2 else b"\n"
    data = sep.join(lines)
    if rng.random() < 0.5:
        data += sep
    if rng.random() < 0.1:
        data = b"\xef\xbb\xbf" + data
    return data


def add_up(data: dict, fresh: bool) -> None:
    totals = data["totals"]
    for entry in [totals, *data["files"]]:
        assert entry["lines"] == (
            entry["fact_lines"] + entry["continuations"] + entry["blank"] + entry["skipped"]
        ), entry
    for key in ("lines", "fact_lines", "continuations", "blank", "skipped"):
        assert totals[key] == sum(f[key] for f in data["files"]), key
    assert sum(totals["skipped_by_reason"].values()) == totals["skipped"]
    assert sum(totals["by_kind"].values()) == totals["facts"]
    assert sum(totals["by_marker"].values()) == totals["facts"]
    if fresh:
        assert totals["fact_lines"] == totals["facts"] + totals["merged"]


def run(args: tuple[int, int, int, int]) -> tuple[int, str | None]:
    """Run ``count`` examples from ``seed``; returns (done, failure folder or None)."""
    seed, first, count, store_every = args
    rng = random.Random(seed * 1_000_003 + first)
    work = Path(
        tempfile.mkdtemp(prefix="bm-fuzz-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None)
    )
    root = work / "root"
    (root / "app" / "src").mkdir(parents=True)
    (root / "app" / "src" / "Foo.kt").write_text("class PaymentGateway {\n  fun charge() {}\n}\n")
    options = ImportOptions(roots=[root], cache_dir=work / "cache")
    done = 0
    try:
        for n in range(first, first + count):
            paths = []
            for i in range(rng.randint(1, 3)):
                p = work / f"n{i}.md"
                p.write_bytes(generate(rng))
                paths.append(p)
            try:
                notes = importer.read_notes(paths, options)
                dry = merge(notes, stores.Stored(), Stems())
                dry.dry_run = True
                data = reports.report(dry)
                add_up(data, fresh=True)
                if store_every and n % store_every == 0:
                    db = work / "know.db"
                    db.unlink(missing_ok=True)
                    real = reports.report(importer.import_notes(paths, options, db))
                    for d in (data, real):
                        d.pop("dry_run"), d.pop("store")
                    assert real == data
                    again = reports.report(importer.import_notes(paths, options, db))
                    assert (again["totals"]["added"], again["totals"]["updated"]) == (0, 0)
            except Exception:  # noqa: BLE001 - a fuzz failure is kept, not raised
                out = Path(__file__).resolve().parent / "out" / f"fuzz-failure-{seed}-{n}"
                out.mkdir(parents=True, exist_ok=True)
                for p in paths:
                    shutil.copy(p, out / p.name)
                (out / "traceback.txt").write_text(traceback.format_exc())
                return done, str(out)
            done += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return done, None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=1_000_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--store-every", type=int, default=200)
    a = ap.parse_args()
    chunk = 5_000
    jobs = [
        (a.seed, first, min(chunk, a.examples - first), a.store_every)
        for first in range(0, a.examples, chunk)
    ]
    t0, total = time.perf_counter(), 0
    with multiprocessing.get_context("fork").Pool(a.workers) as pool:
        for done, failure in pool.imap_unordered(run, jobs):
            total += done
            if failure:
                print(f"FAILED after {total:,} examples: {failure}")
                pool.terminate()
                return 1
            rate = total / (time.perf_counter() - t0)
            print(f"{total:,} examples, {rate:,.0f}/s", flush=True)
    print(f"done: {total:,} examples in {time.perf_counter() - t0:,.0f} s, no failure")
    return 0


if __name__ == "__main__":
    sys.exit(main())
