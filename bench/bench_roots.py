"""Cold and warm `check` as whole processes, under several ``PYTHONHASHSEED`` values.

Each round runs ``brainmigrate check`` on the notes against ``--tree``, once per seed: cold
(a new, empty cache folder: the listing, the name scan and the parse all done) and warm
(the same cache folder again: the root's knowledge and declarations read from it). CPU
time is the child's user+sys (``os.wait4``: the scan pool's workers included), wall time
the whole process. It prints the medians per seed and mode, their spread ((max - min) /
min), the warm / cold ratio, whether every run's report is byte-identical, and the bars.
``--base SRC`` runs the same with ``PYTHONPATH=SRC`` too (another copy of the sources,
say main's), paired and alternating, for a before/after.

    python bench/bench_roots.py [--tree DIR] [--notes FILE ...] [--seeds 0,1,2,3,4]
        [--rounds 3] [--base SRC]

Without ``--tree``, a tree of ``--files`` generated source files and notes citing them is
made (``samples/roots/app`` is too small to say much). The notes default to the tree's
``CLAUDE.md``, ``AGENTS.md`` and the Markdown files under ``docs/``.

Bars (issue 27): the cold run's CPU and wall medians vary at most 10% across the seeds;
every report is byte-identical; a warm run costs less than the cold one.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SPREAD_BAR = 0.10


def generated(out: Path, files: int) -> Path:
    """A tree of ``files`` Python files (classes in folders), a .gitignore and notes."""
    for i in range(files):
        path = out / f"pkg{i % 20}/mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"class Widget{i}:\n    def run(self):\n        return Helper{i}()\n")
    (out / ".gitignore").write_text("*.log\nbuild/\n")
    lines = ["# Notes", ""]
    for i in range(0, files, max(1, files // 50)):
        lines.append(f"- `Widget{i}` lives in `pkg{i % 20}/mod{i}.py`; `Helper{i}` is gone.")
        lines.append(f"- The old `pkg{i % 20}/gone{i}.py` left.")
    (out / "CLAUDE.md").write_text("\n".join(lines) + "\n")
    # a minute old, as a checkout is: a listing's cache is not written while a folder's
    # mtime is as recent as the listing (a change in the same clock tick would hide)
    back = time.time() - 60
    for folder, dirs, names in os.walk(out):
        for name in dirs + names:
            os.utime(os.path.join(folder, name), (back, back))
    os.utime(out, (back, back))
    return out


def notes_of(tree: Path) -> list[str]:
    found = [tree / n for n in ("CLAUDE.md", "AGENTS.md") if (tree / n).is_file()]
    found += sorted((tree / "docs").rglob("*.md")) if (tree / "docs").is_dir() else []
    return [str(p) for p in found]


def one_run(src: str | None, tree: Path, notes: list[str], seed: int, cache: Path):
    """(report bytes, CPU seconds, wall seconds) of one ``check`` process."""
    env = {**os.environ, "PYTHONHASHSEED": str(seed), "BRAINMIGRATE_CACHE_DIR": str(cache)}
    env.pop("CI", None)
    if src:
        env["PYTHONPATH"] = src
    args = [sys.executable, "-m", "brainmigrate", "check", "--isolated", "--no-progress"]
    args += ["--format", "json", "--root", str(tree), *notes]
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        child = subprocess.Popen(
            args, stdout=out, stderr=subprocess.DEVNULL, env=env, cwd=tempfile.gettempdir()
        )
        _pid, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode not in (0, 1):
            raise SystemExit(f"check exited {child.returncode}")
        out.seek(0)
        return out.read(), usage.ru_utime + usage.ru_stime, wall


def measure(sources: dict[str, str | None], tree: Path, notes, seeds, rounds, scratch: Path):
    times: dict[tuple[str, str, int], list[tuple[float, float]]] = {}
    reports: dict[str, set[bytes]] = {name: set() for name in sources}
    for r in range(rounds):
        for seed in seeds:
            for name, src in sources.items():
                cache = scratch / f"{name}-{seed}-{r}"
                for mode in ("cold", "warm"):
                    data, cpu, wall = one_run(src, tree, notes, seed, cache)
                    times.setdefault((name, mode, seed), []).append((cpu, wall))
                    reports[name].add(data)
                shutil.rmtree(cache, ignore_errors=True)
    return times, reports


def spread(values: list[float]) -> float:
    return (max(values) - min(values)) / min(values) if min(values) > 0 else 0.0


def show(times, reports, sources, seeds) -> bool:
    ok = True
    for name in sources:
        for mode in ("cold", "warm"):
            cpus, walls = [], []
            for seed in seeds:
                runs = times[(name, mode, seed)]
                cpus.append(statistics.median(c for c, _ in runs))
                walls.append(statistics.median(w for _, w in runs))
                print(f"{name:5} {mode} seed={seed}: cpu {cpus[-1]:.3f} s  wall {walls[-1]:.3f} s")
            c, w = spread(cpus), spread(walls)
            print(
                f"{name:5} {mode}: cpu spread {c:.1%}, wall spread {w:.1%} (bar {SPREAD_BAR:.0%})"
            )
            if mode == "cold":
                ok = ok and c <= SPREAD_BAR and w <= SPREAD_BAR
        cold = statistics.median(c for s in seeds for c, _ in times[(name, "cold", s)])
        warm = statistics.median(c for s in seeds for c, _ in times[(name, "warm", s)])
        print(f"{name:5} warm / cold cpu: {warm / cold:.2f} (bar < 1)")
        same = len(reports[name]) == 1
        print(f"{name:5} reports byte-identical across seeds and modes: {same}")
        ok = ok and same and warm < cold
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", type=Path)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--notes", nargs="*")
    parser.add_argument("--seeds", default="0,1,2,3,4")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--base", help="another copy of the sources to run as well")
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-roots-") as tmp:
        scratch = Path(tmp)
        tree = args.tree.resolve() if args.tree else generated(scratch / "tree", args.files)
        notes = args.notes or notes_of(tree)
        if not notes:
            raise SystemExit(f"no notes found in {tree}: give --notes")
        sources: dict[str, str | None] = {"this": str(REPO)}
        if args.base:
            sources = {"base": args.base, **sources}
        print(f"tree {tree}: {len(notes)} notes files, seeds {seeds}, {args.rounds} rounds")
        times, reports = measure(sources, tree, notes, seeds, args.rounds, scratch)
        met = show(times, reports, sources, seeds)
    print(f"bars met: {met}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
