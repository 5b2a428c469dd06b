"""Start-up: `brainmigrate --version`, `check` of a 1-line and of a 100-line notes file, as
whole processes, next to `python -c pass`.

Runs are paired: in each round every command runs once, in turn, so load from other work
on the machine falls on all of them alike; the median of the rounds is kept. Each run's
CPU time (user + system of the process and of the git processes it waited for, from
``os.wait4``) is measured beside its wall time: on a machine other work shares, CPU time
is the steadier figure, and the bars are judged on it. Prints each median, its ratio to
`python -c pass`, and the bar. With ``--base DIR`` (a copy of an earlier checkout, e.g.
``git archive HEAD~3 | tar -x -C DIR``) the same commands also run from that copy
(``python -m brainmigrate`` with ``PYTHONPATH=DIR``), in the same rounds, for a
before/after ratio.

Compiled bytecode is written on a first, untimed run (``PYTHONDONTWRITEBYTECODE`` is
dropped for the child processes), and the grammar and template caches are warm, as they
are from a user's second run on.

    python bench/bench_startup.py [--rounds 15] [--base DIR]

Bars (issue 27): --version at most 3x `python -c pass`; check of 100 lines at most 6x;
check of one line at most 30 ms.
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
#: Ratios to `python -c pass`, and times (ms) a run is held to.
BARS = {"--version": 3.0, "check 100 lines": 6.0}
BARS_MS = {"check 1 line": 30.0}
#: The 1-line file: a fact citing a file the sample checkout holds.
ONE_LINE = (
    "+ the gateway retries charges in `src/main/kotlin/com/example/payments/PaymentGateway.kt`\n"
)


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """``(wall, cpu)`` seconds of one run of ``cmd``."""
    # run from a folder of its own: ``python -m`` puts the working folder first on sys.path
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=env["BRAINMIGRATE_CACHE_DIR"],
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return wall, usage.ru_utime + usage.ru_stime


def verdict(name: str, cpu: float, floor: float) -> str:
    """The bar of run ``name`` and whether its median CPU time meets it."""
    if name in BARS:
        return f"<= {BARS[name]:g}x {'ok' if cpu / floor <= BARS[name] else 'MISSED'}"
    if name in BARS_MS:
        return f"<= {BARS_MS[name]:g} ms {'ok' if cpu * 1000 <= BARS_MS[name] else 'MISSED'}"
    return ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--base", type=Path, help="an earlier checkout to compare with")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    notes = generate(tmp / "notes", lines=100, files=1)[0]
    one = tmp / "one" / "notes.md"
    one.parent.mkdir()
    one.write_text(ONE_LINE, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["BRAINMIGRATE_CACHE_DIR"] = str(tmp / "cache")
    (tmp / "cache").mkdir()
    py = sys.executable
    here = {**env, "PYTHONPATH": str(REPO)}
    commands = {
        "--version": ["--version"],
        "check 1 line": ["check", str(one), "--root", str(REPO / "samples/roots/app")],
        "check 100 lines": ["check", str(notes), *ROOTS],
    }
    runs: dict[str, tuple[list[str], dict[str, str]]] = {
        "python -c pass": ([py, "-c", "pass"], env)
    }
    for name, words in commands.items():
        runs[name] = ([py, "-m", "brainmigrate", *words], here)
    if args.base:
        base_env = {**env, "PYTHONPATH": str(args.base.resolve())}
        base_env["BRAINMIGRATE_CACHE_DIR"] = str(tmp / "cache-base")
        (tmp / "cache-base").mkdir()
        for name, words in commands.items():
            runs[f"{name} (base)"] = ([py, "-m", "brainmigrate", *words], base_env)
    for cmd, e in runs.values():  # bytecode, caches
        timed(cmd, e)
        timed(cmd, e)
    walls: dict[str, list[float]] = {name: [] for name in runs}
    cpus: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, (cmd, e) in runs.items():
            wall, cpu = timed(cmd, e)
            walls[name].append(wall)
            cpus[name].append(cpu)
    wall = {name: statistics.median(t) for name, t in walls.items()}
    cpu = {name: statistics.median(t) for name, t in cpus.items()}
    floor_wall, floor_cpu = wall["python -c pass"], cpu["python -c pass"]
    print(f"{'run':<24} {'cpu':>8} {'x pass':>7} {'wall':>8} {'x pass':>7}  bar (on cpu)")
    for name in runs:
        print(
            f"{name:<24} {cpu[name] * 1000:6.1f}ms {cpu[name] / floor_cpu:6.2f}x"
            f" {wall[name] * 1000:6.1f}ms {wall[name] / floor_wall:6.2f}x"
            f"  {verdict(name, cpu[name], floor_cpu)}"
        )
    if args.base:
        for name in commands:
            ratio = cpu[name] / cpu[f"{name} (base)"]
            print(f"{name}: after / before = {ratio:.2f} (cpu)")


if __name__ == "__main__":
    main()
