"""Start-up: `brainmigrate --version` and `check` of a 100-line notes file, as whole
processes, next to `python -c pass`.

Runs are paired: in each round every command runs once, in turn, so load from other work
on the machine falls on all of them alike; the median of the rounds is kept. Prints each
median, its ratio to `python -c pass`, and the bar. With ``--base DIR`` (a copy of an
earlier checkout, e.g. ``git archive HEAD~3 | tar -x -C DIR``) the same commands also run
from that copy (``python -m brainmigrate`` with ``PYTHONPATH=DIR``), in the same rounds,
for a before/after ratio.

Compiled bytecode is written on a first, untimed run (``PYTHONDONTWRITEBYTECODE`` is
dropped for the child processes), and the grammar and template caches are warm, as they
are from a user's second run on.

    python bench/bench_startup.py [--rounds 15] [--base DIR]

Bars (issue 14): --version at most 3x `python -c pass`; check at most 8x.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import generate  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
ROOTS = ["--root", str(REPO / "samples/roots/app"), "--root", str(REPO / "samples/roots/infra")]
BARS = {"--version": 3.0, "check 100 lines": 8.0}


def timed(cmd: list[str], env: dict[str, str]) -> float:
    # run from a folder of its own: ``python -m`` puts the working folder first on sys.path
    start = time.perf_counter()
    subprocess.run(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=env["BRAINMIGRATE_CACHE_DIR"],
    )
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--base", type=Path, help="an earlier checkout to compare with")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    notes = generate(tmp / "notes", lines=100, files=1)[0]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["BRAINMIGRATE_CACHE_DIR"] = str(tmp / "cache")
    (tmp / "cache").mkdir()
    py = sys.executable
    check = ["check", str(notes), *ROOTS]
    runs: dict[str, tuple[list[str], dict[str, str]]] = {
        "python -c pass": ([py, "-c", "pass"], env),
        "--version": ([py, "-m", "brainmigrate", "--version"], {**env, "PYTHONPATH": str(REPO)}),
        "check 100 lines": ([py, "-m", "brainmigrate", *check], {**env, "PYTHONPATH": str(REPO)}),
    }
    if args.base:
        base_env = {**env, "PYTHONPATH": str(args.base.resolve())}
        base_env["BRAINMIGRATE_CACHE_DIR"] = str(tmp / "cache-base")
        (tmp / "cache-base").mkdir()
        runs["--version (base)"] = ([py, "-m", "brainmigrate", "--version"], base_env)
        runs["check 100 lines (base)"] = ([py, "-m", "brainmigrate", *check], base_env)
    for cmd, e in runs.values():  # bytecode, caches
        timed(cmd, e)
        timed(cmd, e)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, (cmd, e) in runs.items():
            times[name].append(timed(cmd, e))
    med = {name: statistics.median(t) for name, t in times.items()}
    floor = med["python -c pass"]
    print(f"{'run':<24} {'median':>9} {'x pass':>7}  bar")
    for name, m in med.items():
        bar = BARS.get(name)
        verdict = ""
        if bar:
            verdict = f"<= {bar:g}x {'ok' if m / floor <= bar else 'MISSED'}"
        print(f"{name:<24} {m * 1000:7.1f}ms {m / floor:6.2f}x  {verdict}")
    if args.base:
        for name in ("--version", "check 100 lines"):
            ratio = med[name] / med[f"{name} (base)"]
            print(f"{name}: after / before = {ratio:.2f}")


if __name__ == "__main__":
    main()
