"""Peak memory of `brainmigrate import` on large notes (issue 6: at most 200 MB).

Generates two corpora with bench/corpus.py: 1M lines in 1,000 files, and one notes file of
about 100 MB (1.15M lines). On each it runs, as separate processes, a first import into a
new store, a second import of the same files (every line already imported) and a
`--dry-run --format json`, and prints each run's wall time and peak RSS (the child's own,
from wait4), and whether it is within the bar.

    python bench/bench_memory.py [--scale 1.0] [--bar-mb 200] [--keep DIR]

`--scale 0.1` runs a tenth of each corpus (a quick look, not the measurement). Last, in a
child, it measures what each warning and each `check` finding costs in memory: the
tracemalloc peak of a run over 100,000 facts with one warning (or one gone citation)
each, less that of the same facts without, per item (`--items N` alone runs only that).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ROOTS = [REPO / "samples/roots/app", REPO / "samples/roots/infra"]


def run(args: list[str]) -> tuple[float, float, int]:
    """Run ``brainmigrate ARGS`` with output discarded; (seconds, peak RSS in MB, exit)."""
    cmd = [sys.executable, "-m", "brainmigrate", *args]
    t = time.perf_counter()
    with subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as p:
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - t
    # ru_maxrss is in kilobytes on Linux, in bytes on macOS
    mb = usage.ru_maxrss / (1 << 20 if sys.platform == "darwin" else 1 << 10)
    return seconds, mb, p.returncode


def per_item(n: int) -> None:
    """Print the bytes of memory each warning and each ``check`` finding costs, over ``n``
    facts: the tracemalloc peak with them less the peak of the same facts without (each
    report written to a file)."""
    import tracemalloc

    from click.testing import CliRunner

    from brainmigrate.cli import main as cli

    def peak(args: list[str]) -> int:
        tracemalloc.start()
        result = CliRunner().invoke(cli, [*args, "--isolated", "--no-progress"])
        top = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert result.exit_code in (0, 1), result.output
        return top

    with tempfile.TemporaryDirectory(prefix="bm-items-") as tmp:
        base, root = Path(tmp), Path(tmp) / "root"
        root.mkdir()
        texts = {
            "plain": "+ fact number {i} about the cache\n",
            "warned": "+ fact number {i} about the cache <!-- note -->\n",
            "gone": "+ fact number {i} about src/gone.py\n",
            "gone-each": "+ fact number {i} about src/gone{i}.py\n",
        }
        for name, line in texts.items():
            (base / f"{name}.md").write_text("".join(line.format(i=i) for i in range(n)))
        runs = [
            ("warning, import text report", "import", "warned", ["--dry-run"]),
            (
                "warning, import --format json",
                "import",
                "warned",
                ["--dry-run", "--format", "json"],
            ),
            ("warning, check", "check", "warned", []),
            ("finding, check", "check", "gone", []),
            ("finding, check --format json", "check", "gone", ["--format", "json"]),
            # a path of its own each: the resolver keeps what it found of every path cited
            ("finding + cited path, check", "check", "gone-each", []),
        ]
        for what, command, name, extra in runs:
            # the report to a file: what the test runner would capture of stdout is no
            # memory of the run
            args = [command, "--root", str(root), "--output", str(base / "out"), *extra]
            without = peak([*args, str(base / "plain.md")])
            with_them = peak([*args, str(base / f"{name}.md")])
            print(f"  {what:<32} {(with_them - without) / n:7.0f} bytes each ({n:,})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--bar-mb", type=float, default=200.0)
    ap.add_argument("--keep", type=Path, help="generate the corpora here and keep them")
    ap.add_argument("--items", type=int, help="only measure memory per warning and finding")
    a = ap.parse_args()
    if a.items:
        per_item(a.items)
        return
    if run(["--version"])[1] > 60:
        sys.exit("this process is too large to measure its children; run it on its own")
    tmp = a.keep or Path(tempfile.mkdtemp(prefix="bm-memory-"))
    roots = sum((["--root", str(r)] for r in ROOTS), [])
    corpora = [("many", int(1_000_000 * a.scale), 1000), ("one", int(1_150_000 * a.scale), 1)]
    worst = 0.0
    try:
        for name, lines, files in corpora:
            folder = tmp / name
            if not folder.is_dir():
                # in a child: a process started from a large parent inherits the parent's
                # peak in wait4's ru_maxrss, so this process must stay small
                corpus = Path(__file__).resolve().parent / "corpus.py"
                subprocess.run(
                    [sys.executable, corpus, folder, "--lines", str(lines), "--files", str(files)],
                    check=True,
                    stdout=subprocess.DEVNULL,
                )
            size = sum(f.stat().st_size for f in folder.glob("*.md"))
            print(f"{lines:,} lines in {files:,} files, {size / 1e6:.0f} MB")
            store = tmp / f"{name}.db"
            store.unlink(missing_ok=True)
            cache = ["--cache-dir", str(tmp / "cache")]
            base = ["import", str(folder), *roots, *cache]
            for what, extra in [
                ("import into a new store", ["--store", str(store)]),
                ("import again (all known)", ["--store", str(store)]),
                (
                    "--dry-run --format json",
                    ["--store", str(tmp / "no.db"), "--dry-run", "--format", "json"],
                ),
            ]:
                seconds, mb, code = run(base + extra)
                worst = max(worst, mb)
                verdict = "ok" if mb <= a.bar_mb else f"OVER {a.bar_mb:.0f} MB"
                print(
                    f"  {what:<26} {seconds:6.1f} s  peak RSS {mb:6.0f} MB  exit {code}  {verdict}"
                )
    finally:
        if a.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"largest peak RSS: {worst:.0f} MB (bar {a.bar_mb:.0f} MB)")
    print("memory per warning and per finding (tracemalloc)")
    items = str(max(100, int(100_000 * a.scale)))
    subprocess.run([sys.executable, __file__, "--items", items], check=True)


if __name__ == "__main__":
    main()
