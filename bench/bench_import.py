"""Time `import --dry-run` on a synthetic corpus next to a plain regex line loop.

Prints lines/s of: a plain Python line-by-line regex loop (the baseline, which keeps each
fact's text, stamp and continuations), brainmigrate's parse stage (every line classified
and facts grouped with their continuations; fast and Lark classifiers), the parse and facts
stages (text folded, trailers dated, task ids found), those and the anchors stage
(every token resolved against the sample checkouts: ``importer.read_notes``), and the whole
`import --dry-run` (parse, anchors against the sample checkout, merge), each with its ratio
to the baseline, and the peak RSS of a `brainmigrate import --dry-run` process.

    python bench/bench_import.py [--lines 200000] [--files 100] [--corpus DIR]

Bar (issue 2): the parse stage at least 0.25x the regex loop's lines/s.
"""

from __future__ import annotations

import argparse
import gc
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import generate  # noqa: E402

from brainmigrate import importer
from brainmigrate.read import lines, notation  # noqa: E402
from brainmigrate.read.facts import TaskIds, build_fact  # noqa: E402
from brainmigrate.read.run import ImportOptions

REPO = Path(__file__).resolve().parent.parent
ROOTS = [REPO / "samples/roots/app", REPO / "samples/roots/infra"]
# A hand-written line regex like one a person would write for the notation: marker and
# text up to a trailing stamp, continuation, heading; the stamp captured.
BASELINE = re.compile(
    r"(?:(?P<m>->|[+!~=?>x@%])(?=[ \t]|$)(?P<t>(?:[^\n<]+|<(?!!--[ \t]*\d{4}-))*)"
    r"|(?P<c>[ \t]+(?![ \t\n])(?:[^\n<]+|<(?!!--[ \t]*\d{4}-))*)|(?P<h>#+[ \t][^\n]*)|)"
    r"(?P<s><!--[ \t]*\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d)?\S*(?:[ \t]+\S+)?[ \t]*-->)?[ \t]*$"
)


def regex_loop(files: list[Path]) -> int:
    """A plain line loop: match each line, keep each fact's text, stamp and continuations."""
    n, facts = 0, []
    for f in files:
        with open(f, encoding="utf-8") as fh:
            current = None
            for line in fh:
                n += 1
                m = BASELINE.match(line.rstrip("\n"))
                if m is None:
                    current = None
                elif m["m"]:
                    current = [m["m"], m["t"], m["s"]]
                    facts.append(current)
                elif m["c"] and current is not None:
                    current[1] += " " + m["c"].strip()
                else:
                    current = None
    return n


def parse_stage(files: list[Path], classifier: str) -> int:
    """brainmigrate's parse stage: every line classified, facts grouped with their
    continuations (what the regex loop does, through the grammar's terminals)."""
    classify, diags, n, records = notation.classifier(classifier), [], 0, []
    for f in files:
        current = None
        for ln in lines.scan(f, f.name, diags, classify):
            n += 1
            if ln.cls == "fact":
                current = [ln]
                records.append(current)
            elif ln.cls == "continuation":
                current.append(ln)
    return n


def facts_stage(files: list[Path], classifier: str) -> int:
    """The parse stage plus the facts stage: text folded, trailer dated, task ids found."""
    classify, tasks, diags, n = notation.classifier(classifier), TaskIds(), [], 0
    for f in files:
        pending: list = []
        for ln in lines.scan(f, f.name, diags, classify):
            n += 1
            if ln.cls == "fact":
                if pending:
                    build_fact(f.name, pending, "area:x", "environment", tasks, diags)
                pending = [ln]
            elif ln.cls == "continuation":
                pending.append(ln)
            elif pending:
                build_fact(f.name, pending, "area:x", "environment", tasks, diags)
                pending = []
        if pending:
            build_fact(f.name, pending, "area:x", "environment", tasks, diags)
    return n


def timed(fn, *args, repeat: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        out = fn(*args)
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--corpus", type=Path, help="use these notes instead of generating")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bm-bench-"))
    folder = a.corpus or tmp / "corpus"
    files = sorted(folder.glob("*.md")) if a.corpus else generate(folder, a.lines, a.files)
    size = sum(f.stat().st_size for f in files)
    print(f"corpus: {len(files)} files, {size / 1e6:.1f} MB")
    # First, while this process is small: a child's peak RSS can include its parent's.
    cmd = [
        sys.executable,
        "-c",
        "import resource, sys; from brainmigrate.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)",
        "import",
        str(folder),
        "--dry-run",
        "--store",
        str(tmp / "none.db"),
        "--cache-dir",
        str(tmp / "cache"),
        *sum((["--root", str(r)] for r in ROOTS), []),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True)
    rss_kb = int(done.stderr.strip().splitlines()[-1])
    print(f"peak RSS of `brainmigrate import --dry-run`: {rss_kb / 1024:.0f} MB")

    t_regex, lines = timed(regex_loop, files)
    t_fast, _ = timed(parse_stage, files, "fast")
    t_lark, _ = timed(parse_stage, files, "lark", repeat=1)
    t_facts, _ = timed(facts_stage, files, "fast")
    opts = ImportOptions(roots=ROOTS, cache_dir=tmp / "cache")
    t_anchors, _ = timed(lambda: importer.read_notes([folder], opts), repeat=2)
    t_import, result = timed(
        lambda: importer.import_notes([folder], opts, tmp / "none.db", dry_run=True), repeat=2
    )

    def rate(t: float) -> str:
        return f"{lines / t:>10,.0f} lines/s  ({lines / t / (lines / t_regex):.2f}x regex loop)"

    print(
        f"lines: {lines:,}; facts after merge: {len(result.facts):,};"
        f" merged: {len(result.merged):,}"
    )
    print(f"plain regex loop          {rate(t_regex)}  {t_regex:.2f} s")
    print(f"parse stage (fast)        {rate(t_fast)}  {t_fast:.2f} s")
    print(f"parse stage (lark)        {rate(t_lark)}  {t_lark:.2f} s")
    print(f"parse + facts stages      {rate(t_facts)}  {t_facts:.2f} s")
    print(f"parse + facts + anchors   {rate(t_anchors)}  {t_anchors:.2f} s")
    print(f"import --dry-run (all)    {rate(t_import)}  {t_import:.2f} s")


if __name__ == "__main__":
    main()
