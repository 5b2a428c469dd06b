"""Benchmark of the declaration index (brainmigrate.codeindex) on a real tree.

Measures, on one tree (default: this interpreter's site-packages):

1. the full index cold (fresh temporary cache folder) and warm (same cache, new object);
2. ``ctags -R --output-format=json -f - TREE`` on the same tree, when ctags is on PATH;
3. a lazy ``declarations_of`` of 20 CamelCase class names from the tree, cold cache,
   next to the cold full index;
4. ``read_files`` of every source file after the cold index: the staleness digests, which
   the index does not take (each file is parsed again, with them, and cached so);
5. ``brainmigrate index`` as whole processes, cold (a fresh cache folder each run) and warm
   (one kept), paired and alternating, the median of ``--repeat`` rounds: what a user
   waits for, start-up and the cache's load included.

Each measurement is repeated ``--repeat`` times (default 3; every cold run gets its own
fresh cache folder) and the best time is kept, so that a busy machine skews less. Prints
files, files/s, seconds, the ratios (cold/ctags, cold/warm, lazy/full) and the peak RSS of
this process and of its children (the pool workers and ctags)::

    python bench/bench_index.py [--tree DIR] [--names N] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from brainmigrate.codeindex import CodeIndex

CLASS_LINE = re.compile(rb"^class ([A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)\b", re.MULTILINE)


def pick_names(idx: CodeIndex, count: int) -> list[str]:
    """The first ``count`` distinct CamelCase class names of the tree's Python files (by path)."""
    names: list[str] = []
    for path in idx.files():
        if not path.endswith(".py"):
            continue
        try:
            data = (idx.root / path).read_bytes()
        except OSError:
            continue
        for m in CLASS_LINE.finditer(data):
            name = m.group(1).decode()
            if name not in names:
                names.append(name)
                if len(names) == count:
                    return names
    return names


def timed_build(tree: Path, cache_dir: Path) -> tuple[float, CodeIndex]:
    t0 = time.perf_counter()
    idx = CodeIndex(tree, cache_dir=cache_dir)
    idx.build()
    return time.perf_counter() - t0, idx


def processes(tree: Path, rounds: int) -> tuple[float, float]:
    """Medians of ``brainmigrate index`` cold and warm, whole processes (wall seconds)."""
    cmd = [sys.executable, "-m", "brainmigrate", "index", "--isolated", "--no-progress"]
    cmd += ["--root", str(tree)]
    repo = str(Path(__file__).resolve().parent.parent)
    cold: list[float] = []
    warm: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONPATH": repo, "BRAINMIGRATE_CACHE_DIR": f"{tmp}/warm"}
        for _ in range(2):  # the kept cache, bytecode
            subprocess.run(cmd, env=env, cwd=tmp, capture_output=True, check=False)
        for i in range(rounds):
            for kind, times in (("cold", cold), ("warm", warm)):
                here = (
                    {**env, "BRAINMIGRATE_CACHE_DIR": f"{tmp}/cold{i}"} if kind == "cold" else env
                )
                t0 = time.perf_counter()
                subprocess.run(cmd, env=here, cwd=tmp, capture_output=True, check=False)
                times.append(time.perf_counter() - t0)
    return statistics.median(cold), statistics.median(warm)


def rss_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, default=Path(sysconfig.get_paths()["purelib"]))
    ap.add_argument("--names", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    tree: Path = args.tree.resolve()
    runs = range(max(1, args.repeat))

    with tempfile.TemporaryDirectory() as tmp:
        colds = [timed_build(tree, Path(tmp) / f"full{i}") for i in runs]
        cold_s, idx = min(colds, key=lambda r: r[0])
        cold = idx.summary()
        warms = [timed_build(tree, Path(tmp) / "full0") for _ in runs]
        warm_s, widx = min(warms, key=lambda r: r[0])
        warm = widx.summary()

        digests_s = float("inf")
        for i in runs:
            _, didx = timed_build(tree, Path(tmp) / f"digests{i}")
            before = didx.parse_count
            t0 = time.perf_counter()
            didx.read_files(didx.files())
            digests_s = min(digests_s, time.perf_counter() - t0)
            digests_parsed = didx.parse_count - before

        names = pick_names(idx, args.names)
        lazy_s = float("inf")
        for i in runs:
            t0 = time.perf_counter()
            lidx = CodeIndex(tree, cache_dir=Path(tmp) / f"lazy{i}")
            found = lidx.declarations_of(names)
            lazy_s = min(lazy_s, time.perf_counter() - t0)
        lazy_parsed = lidx.parse_count

    ctags_s = None
    ctags = shutil.which("ctags")
    if ctags:
        ctags_s = float("inf")
        for _ in runs:
            t0 = time.perf_counter()
            subprocess.run(
                [ctags, "-R", "--output-format=json", "-f", "-", str(tree)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
            )
            ctags_s = min(ctags_s, time.perf_counter() - t0)

    sources = sum(c.files for c in cold.by_language.values())
    print(f"tree: {tree}  (best of {len(runs)} runs each)")
    print(
        f"files listed: {cold.files} ({cold.listing}); source files: {sources}; "
        f"skipped: {len(cold.skipped)}; declarations: {cold.declarations}"
    )
    print("by language: " + ", ".join(f"{k}={v.files}" for k, v in cold.by_language.items()))
    print(
        f"cold index : {cold_s:7.3f} s  {cold.files / cold_s:8.0f} files/s  "
        f"({sources / cold_s:.0f} source files/s, parsed {cold.parsed})"
    )
    print(
        f"warm index : {warm_s:7.3f} s  {warm.files / warm_s:8.0f} files/s  "
        f"(parsed {warm.parsed}, cache hits {warm.cache_hits})"
    )
    print(
        f"digests    : {digests_s:7.3f} s  (read_files of every file after the cold index, "
        f"parsed {digests_parsed})"
    )
    if ctags_s is not None:
        print(f"ctags -R   : {ctags_s:7.3f} s  {cold.files / ctags_s:8.0f} files/s")
        print(f"cold / ctags      : {cold_s / ctags_s:6.2f}x  (target <= 3)")
    else:
        print("ctags      : not on PATH")
    print(f"cold / warm       : {cold_s / warm_s:6.1f}x  (target >= 20)")
    hits = sum(1 for v in found.values() if v)
    print(
        f"lazy lookup of {len(names)} names: {lazy_s:.3f} s, parsed {lazy_parsed} files, "
        f"{hits} names declared; lazy / cold full = {lazy_s / cold_s:.3f}"
    )
    p_cold, p_warm = processes(tree, max(1, args.repeat))
    print(
        f"whole processes (median of {max(1, args.repeat)}): `brainmigrate index` cold "
        f"{p_cold:.3f} s, warm {p_warm:.3f} s; cold / warm {p_cold / p_warm:.1f}x"
    )
    print(
        f"peak RSS: self {rss_mb(resource.RUSAGE_SELF):.0f} MB, "
        f"children {rss_mb(resource.RUSAGE_CHILDREN):.0f} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
