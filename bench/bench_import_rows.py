"""The whole import, as whole processes, next to a plain regex loop (issue 14's rows).

A corpus of 200k lines (bench/corpus.py) cites files of a real tree, the venv's
site-packages (``--tree`` for another; it is passed as the ``--root``). Each round runs, one
after the other so that load from other work falls on all alike:

* a 15-line regex loop over the same files (``python -c``: match each line, keep each
  fact's text, stamp and continuations),
* ``brainmigrate import --dry-run`` (text report, discarded),
* ``brainmigrate import`` into a new store,
* the same ``import`` again (every line already imported: it adds nothing).

Each row is the median over rounds of the ratio within a round (of wall times, the bar's
measure, and of CPU times, which waiting for a shared core does not inflate), with its bar:

* dry run vs the regex loop, in lines/s: at least 0.2x;
* import into a new store vs the dry run: at most 1.3x;
* re-import that adds nothing vs the dry run: at most 1.0x.

A first, untimed round writes bytecode and the tree's declaration index cache (a user's
second run on). With ``--base DIR`` (an earlier checkout, e.g. ``git worktree add DIR
HEAD~3`` or ``git archive HEAD~3 | tar -x -C DIR``) the three imports also run from that
copy in the same rounds, for before/after ratios.

    python bench/bench_import_rows.py [--lines 200000] [--rounds 5] [--tree DIR] [--base DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: The regex loop the dry run is measured against (bench/bench_import.py's BASELINE).
REGEX_LOOP = r"""
import re, sys, glob
B = re.compile(
    r"(?:(?P<m>->|[+!~=?>x@%])(?=[ \t]|$)(?P<t>(?:[^\n<]+|<(?!!--[ \t]*\d{4}-))*)"
    r"|(?P<c>[ \t]+(?![ \t\n])(?:[^\n<]+|<(?!!--[ \t]*\d{4}-))*)|(?P<h>#+[ \t][^\n]*)|)"
    r"(?P<s><!--[ \t]*\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d)?\S*(?:[ \t]+\S+)?[ \t]*-->)?[ \t]*$")
n, facts = 0, []
for f in sorted(glob.glob(sys.argv[1] + "/**/*.md", recursive=True)):
    cur = None
    for line in open(f, encoding="utf-8"):
        n += 1
        m = B.match(line.rstrip("\n"))
        if m is None: cur = None
        elif m["m"]: cur = [m["m"], m["t"], m["s"]]; facts.append(cur)
        elif m["c"] and cur is not None: cur[1] += " " + m["c"].strip()
        else: cur = None
print(n, len(facts))
"""

#: (row, what is timed, what it is divided by, bar, "min" or "max")
ROWS = [
    ("import --dry-run vs regex loop, lines/s", "regex", "dry", 0.2, "min"),
    ("import into a new store vs --dry-run", "new", "dry", 1.3, "max"),
    ("re-import adding nothing vs --dry-run", "again", "dry", 1.0, "max"),
]


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Run ``cmd``; its wall time and its CPU time (user + system, from wait4)."""
    start = time.perf_counter()
    with subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd
    ) as p:
        err = p.stderr.read()
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = code = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    if code not in (0, 1):  # 1: the notes hold findings
        sys.exit(f"{' '.join(cmd)} failed ({code}):\n{err.decode()[-2000:]}")
    return seconds, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tree", type=Path, help="tree the notes cite (default: site-packages)")
    ap.add_argument("--base", type=Path, help="an earlier checkout to compare with")
    ap.add_argument("--keep", type=Path, help="work in this folder and keep it")
    a = ap.parse_args()
    tree = (a.tree or Path(sysconfig.get_paths()["purelib"])).resolve()
    if not tree.is_dir():
        sys.exit(f"{tree}: no such tree; pass --tree with a folder of source files")
    tmp = a.keep or Path(tempfile.mkdtemp(prefix="bench-import-rows-"))
    tmp.mkdir(parents=True, exist_ok=True)
    corpus = tmp / "corpus"
    py = sys.executable
    if not corpus.is_dir():
        subprocess.run(
            [py, REPO / "bench/corpus.py", corpus, "--lines", str(a.lines), "--files",
             str(a.files), "--cite", tree],
            check=True,
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
    size = sum(f.stat().st_size for f in corpus.glob("*.md"))
    print(f"corpus: {a.lines:,} lines in {a.files} files, {size / 1e6:.1f} MB, citing {tree}")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def imports(src: Path, tag: str) -> dict[str, tuple[list[str], dict[str, str], Path]]:
        e = {**env, "PYTHONPATH": str(src), "BRAINMIGRATE_CACHE_DIR": str(tmp / f"cache{tag}")}
        store = tmp / f"store{tag}.db"
        base = [py, "-m", "brainmigrate", "import", str(corpus), "--root", str(tree)]
        base += ["--no-progress", "--isolated"]
        return {
            f"dry{tag}": (base + ["--dry-run", "--store", str(tmp / "none.db")], e, store),
            f"new{tag}": (base + ["--store", str(store)], e, store),
            f"again{tag}": (base + ["--store", str(store)], e, store),
        }

    runs = {"regex": ([py, "-c", REGEX_LOOP, str(corpus)], env, None)}
    runs.update(imports(REPO, ""))
    if a.base:
        runs.update(imports(a.base.resolve(), " (base)"))

    def run(name: str) -> tuple[float, float]:
        cmd, e, store = runs[name]
        if name.startswith("new") and store.exists():
            store.unlink()
        return timed(cmd, e, tmp)

    for name in runs:  # bytecode, the tree's index cache
        run(name)
    wall: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    for i in range(a.rounds):
        for name in runs:
            w, c = run(name)
            wall[name].append(w)
            cpu[name].append(c)
        print(f"round {i + 1}: " + ", ".join(f"{n} {t[-1]:.2f}s" for n, t in wall.items()))

    def ratio(times: dict[str, list[float]], num: str, den: str) -> float:
        return statistics.median(x / y for x, y in zip(times[num], times[den], strict=True))

    print(f"\n{'run':<16} {'wall':>7} {'cpu':>7}  (medians)")
    for name in runs:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        print(f"{name:<16} {w:6.2f}s {c:6.2f}s  {a.lines / w:>9,.0f} lines/s")
    print(f"\n{'row (median of in-round ratios)':<49} {'wall':>6} {'cpu':>6}  bar")
    for tag in ["", " (base)"] if a.base else [""]:
        for row, num, den, bar, how in ROWS:
            # a rate: the regex loop's time over the dry run's (one regex loop for both)
            pair = (num if num == "regex" else num + tag, den + tag)
            got, got_cpu = ratio(wall, *pair), ratio(cpu, *pair)
            ok = got >= bar if how == "min" else got <= bar
            sign = ">=" if how == "min" else "<="
            verdict = "ok" if ok else "MISSED"
            print(f"{row + tag:<49} {got:5.3f}x {got_cpu:5.3f}x  {sign} {bar:g}x {verdict}")
    if a.base:
        for name in ("dry", "new", "again"):
            before = name + " (base)"
            print(
                f"{name}: after / before = {ratio(wall, name, before):.2f} (wall),"
                f" {ratio(cpu, name, before):.2f} (cpu)"
            )
    if a.keep is None:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
