"""Name lookup on a real Go tree: a cold import naming 20 types, and a cold full `index`,
each next to `ctags -R` of the same tree.

Whole processes, paired: in each round every command runs once, in turn, each brainmigrate
run with a fresh cache folder (cold); the median of ``--rounds`` is kept. The tree is a
folder of 1,500-2,500 ``.go`` files of Debian's Go standard library sources
(``apt-get install golang-src universal-ctags``; default ``/usr/share/go-*/src/cmd``); a
row whose tree or tool is missing is skipped with how to install it. With ``--base DIR``
(an earlier checkout, e.g. ``git archive HEAD~1 | tar -x -C DIR``) the brainmigrate runs
also run from that copy, for after / before.

    python bench/bench_names.py [--tree DIR] [--rounds 5] [--base DIR]

Bars (issue 14): cold import naming 20 types <= 0.5x ctags -R; cold full index <= 2x.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TYPE_LINE = re.compile(rb"^type ([A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*) struct\b", re.MULTILINE)
HOW = "apt-get install golang-src universal-ctags"


def default_tree() -> Path | None:
    found = sorted(glob.glob("/usr/share/go-*/src/cmd"))
    return Path(found[-1]) if found else None


def pick_types(tree: Path, count: int) -> list[str]:
    """``count`` CamelCase struct names of the tree, spread over its files (sorted paths)."""
    found: list[str] = []
    for path in sorted(p for p in tree.rglob("*.go") if "testdata" not in p.parts):
        found.extend(m.group(1).decode() for m in TYPE_LINE.finditer(path.read_bytes()))
    distinct = list(dict.fromkeys(found))
    return distinct[:: max(1, len(distinct) // count)][:count]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, default=default_tree())
    ap.add_argument("--names", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--base", type=Path, help="an earlier checkout to compare with")
    args = ap.parse_args()
    if args.tree is None or not args.tree.is_dir():
        print(f"skipped: no Go tree ({HOW}, or pass --tree)")
        return
    ctags = shutil.which("ctags")
    tree = args.tree.resolve()
    gofiles = sum(1 for _ in tree.rglob("*.go"))
    names = pick_types(tree, args.names)
    tmp = Path(tempfile.mkdtemp(prefix="bench-names-"))
    notes = tmp / "notes.md"
    notes.write_text("".join(f"+ {n} holds the state of the run\n" for n in names))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    code = {"after": REPO, **({"before": args.base.resolve()} if args.base else {})}
    counter = iter(range(1 << 30))

    def bm(which: str, *argv: str):
        def run() -> list[str]:
            cache = tmp / f"cache{next(counter)}"
            return [sys.executable, "-m", "brainmigrate", *argv, "--cache-dir", str(cache)]

        return run, {**env, "PYTHONPATH": str(code[which])}

    runs = {}
    for which in code:
        runs[f"import 20 types ({which})"] = bm(
            which, "import", str(notes), "--root", str(tree), "--dry-run", "--store", "x.db"
        )
        runs[f"full index ({which})"] = bm(which, "index", "--root", str(tree))
    if ctags:
        runs["ctags -R"] = (
            lambda: [ctags, "-R", "--output-format=json", "-f", "-", str(tree)],
            env,
        )
    else:
        print(f"ctags rows skipped: ctags not on PATH ({HOW})")
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, (make, e) in runs.items():
            start = time.perf_counter()
            subprocess.run(
                make(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=e, cwd=tmp
            )
            times[name].append(time.perf_counter() - start)
    med = {name: statistics.median(t) for name, t in times.items()}
    print(f"tree: {tree} ({gofiles} .go files); {len(names)} names; medians of {args.rounds}")
    for name, m in med.items():
        print(f"{name:<26} {m:7.3f} s")
    for which in code:
        if ctags:
            r = med[f"import 20 types ({which})"] / med["ctags -R"]
            print(f"import 20 types / ctags ({which}): {r:.2f} (bar <= 0.5: {_ok(r <= 0.5)})")
            r = med[f"full index ({which})"] / med["ctags -R"]
            print(f"full index / ctags ({which}):      {r:.2f} (bar <= 2: {_ok(r <= 2)})")
    if args.base:
        for row in ("import 20 types", "full index"):
            print(f"{row}: after / before = {med[f'{row} (after)'] / med[f'{row} (before)']:.2f}")


def _ok(good: bool) -> str:
    return "ok" if good else "MISSED"


if __name__ == "__main__":
    main()
