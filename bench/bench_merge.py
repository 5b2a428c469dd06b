"""The merge's worst case: facts from one template, next to facts of random words.

Each template fact is the same eleven words and one word of its own: every pair has a stem
Jaccard of 11/13 = 0.846, just under the 0.85 of SPEC.md §Merge, so nothing merges, yet
every pair shares most of its words. The control is as many facts of twelve random words
from a large vocabulary. Both are one notes file (one scope) imported with
`brainmigrate import --dry-run` as whole processes, in turn (paired), against an empty
root; the median of ``--repeat`` rounds is kept. With ``--base DIR`` (an earlier checkout,
e.g. ``git archive HEAD~1 | tar -x -C DIR``) the template runs also run from that copy.

Prints the seconds of each, template / control at each size, and template time per
doubling of the facts.

    python bench/bench_merge.py [--facts 16000] [--repeat 3] [--base DIR]

Bars (issue 14): template at most 2x the random control; at most 2x per doubling.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LETTERS = "bcdfghjklmnpqrtvwxz"  # no vowels, no s: the stemmer leaves such words alone
TEMPLATE = (
    "ledger retries webhook gateway timeout replica partition session rollback budget jitter"
).split()


def word(i: int, lead: str) -> str:
    out = lead
    while True:
        out += LETTERS[i % len(LETTERS)]
        i //= len(LETTERS)
        if not i:
            return out


def template_notes(path: Path, n: int) -> Path:
    lines = [f"+ {' '.join(TEMPLATE)} {word(i, 'kv')}\n" for i in range(n)]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def random_notes(path: Path, n: int, seed: int = 1) -> Path:
    rng = random.Random(seed)
    vocab = [word(i, "rq") for i in range(50_000)]
    lines = [f"+ {' '.join(rng.sample(vocab, 12))}\n" for _ in range(n)]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def run(notes: Path, root: Path, pythonpath: Path) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(pythonpath)
    cmd = [sys.executable, "-m", "brainmigrate", "import", str(notes), "--root", str(root)]
    start = time.perf_counter()
    done = subprocess.run(
        [*cmd, "--dry-run", "--format", "json", "--store", str(root.parent / "none.db")],
        capture_output=True,
        env=env,
        cwd=root,
    )
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr.decode()}")
    if b'"merged": 0,' not in done.stdout:
        raise SystemExit(f"{notes}: something merged; the case is not the worst case")
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--facts", type=int, default=16_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--base", type=Path, help="an earlier checkout to run the template from")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-merge-"))
    root = tmp / "root"
    root.mkdir()
    sizes = [args.facts // 2, args.facts]
    cases: dict[str, tuple[Path, Path]] = {}
    for n in sizes:
        cases[f"template {n}"] = (template_notes(tmp / f"template-{n}.md", n), REPO)
        cases[f"random {n}"] = (random_notes(tmp / f"random-{n}.md", n), REPO)
        if args.base:
            cases[f"template {n} (base)"] = (cases[f"template {n}"][0], args.base.resolve())
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.repeat):
        for name, (notes, code) in cases.items():
            times[name].append(run(notes, root, code))
    med = {name: statistics.median(t) for name, t in times.items()}
    for name, m in med.items():
        print(f"{name:<24} {m:8.2f} s")
    for n in sizes:
        ratio = med[f"template {n}"] / med[f"random {n}"]
        print(f"{n} facts: template / random = {ratio:.2f} (bar <= 2: {_ok(ratio <= 2)})")
        if args.base:
            print(
                f"{n} facts: template after / before = "
                f"{med[f'template {n}'] / med[f'template {n} (base)']:.3f}"
            )
    doubling = med[f"template {sizes[1]}"] / med[f"template {sizes[0]}"]
    print(f"template {sizes[0]} -> {sizes[1]}: x{doubling:.2f} (bar <= 2: {_ok(doubling <= 2)})")


def _ok(good: bool) -> str:
    return "ok" if good else "MISSED"


if __name__ == "__main__":
    main()
