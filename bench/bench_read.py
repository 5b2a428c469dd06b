"""Time the read stage of `check` and `import` stage by stage, in one process (CPU time).

On a generated corpus (``bench/corpus.py``) or a folder of notes (``--corpus``), read as
brain notation or as Markdown notes (``--notation``), each stage is run ``--repeat``
times and its best CPU time kept:

* ``scan``: the lines classified (``lines.scan`` or ``markdown_notes.scan``);
* ``facts``: the lines grouped and built into facts (``Grouper``, ``group_fact``), scan
  included;
* ``tokens``: the tokens of those facts (``tokens.tokens``, as the resolver asks for them);
* ``read``: ``read.run.read_files`` with a resolver that names nothing (facts kept in
  their temporary file, as a run keeps them), scan and facts included.

Prints each stage's time, lines a second, and, for ``read`` + ``tokens``, what share of
the 1M-line ``check`` bar they take.

    python bench/bench_read.py [--lines 100000] [--files 20] [--repeat 3]
                               [--notation brain|markdown] [--corpus DIR]

Bar (issue 27): ``check`` of 1M lines <= 6 s, so the read stage with its tokens (``read`` +
``tokens``) must take at most half of it: <= 3 s for 1M lines (0.3 s for 100k).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from brainmigrate.read import lines, markdown_notes, notation
from brainmigrate.read.facts import MAX_FACT_CHARS, Grouper, TaskIds, group_fact
from brainmigrate.read.run import ImportOptions, gc_paused, read_files, read_rules
from brainmigrate.read.tokens import tokens

BAR_SECONDS_1M = 3.0


def best(fn, repeat: int) -> tuple[float, object]:
    """The least CPU time of ``repeat`` calls of ``fn``, and its last result."""
    least, out = float("inf"), None
    for _ in range(repeat):
        with gc_paused():
            t0 = time.process_time()
            out = fn()
            least = min(least, time.process_time() - t0)
    return least, out


def stages(files: list[Path], markdown: bool, repeat: int) -> dict[str, float]:
    """Each stage's best CPU time on ``files``."""
    scan = markdown_notes.scan if markdown else lines.scan
    classify, tasks = notation.classifier("fast"), TaskIds()

    def scanned():
        return sum(1 for f in files for _ in scan(f, str(f), [], classify))

    def facts():
        out = []
        for f in files:
            grouper, diags = Grouper(MAX_FACT_CHARS), []
            for ln in scan(f, str(f), diags, classify):
                if (done := grouper.add(ln)) is not None:
                    out.append(group_fact(str(f), done, "s", "environment", tasks, diags))
            if (done := grouper.end()) is not None:
                out.append(group_fact(str(f), done, "s", "environment", tasks, diags))
        return out

    options = ImportOptions(notation="markdown" if markdown else "brain")
    how = read_rules(options)

    def read():
        _, kept, _ = read_files([(str(f), f) for f in files], options, how, [], _nothing)
        kept.close()

    times = {"scan": best(scanned, repeat)[0]}
    times["facts"], made = best(facts, repeat)
    tokenized = best(lambda: sum(len(list(tokens(f.segments))) for f in made), repeat)
    times["tokens"] = tokenized[0]
    times["read"] = best(read, repeat)[0]
    return times


def _nothing(fact, folder, refs) -> None:
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--notation", choices=("brain", "markdown"), default="brain")
    ap.add_argument("--corpus", type=Path, help="read these notes (*.md, *.mdc) instead")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if a.corpus is not None:
            files = sorted(p for p in a.corpus.rglob("*") if p.suffix in (".md", ".mdc"))
        else:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from corpus import generate

            files = generate(Path(tmp), a.lines, a.files)
        count = sum(f.read_bytes().count(b"\n") for f in files)
        times = stages(files, a.notation == "markdown", a.repeat)
    print(f"{len(files)} files, {count:,} lines, read as {a.notation} notation")
    for name, seconds in times.items():
        rate = count / seconds if seconds else float("inf")
        print(f"  {name:7s} {seconds * 1000:9.0f} ms  {rate:12,.0f} lines/s")
    total = times["read"] + times["tokens"]
    per_1m = total * 1_000_000 / max(count, 1)
    met = "met" if per_1m <= BAR_SECONDS_1M else "NOT met"
    print(f"read + tokens: {per_1m:.2f} s per 1M lines; bar <= {BAR_SECONDS_1M} s: {met}")


if __name__ == "__main__":
    main()
