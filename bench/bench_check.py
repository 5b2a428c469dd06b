"""Time `check` next to `import --dry-run` on the same generated corpus.

Both are run the way the commands run them, report included (text): `import --dry-run`
is ``importer.import_notes(..., dry_run=True)`` rendered with ``reports.render``; `check`
is ``check.run_check`` rendered with ``reports.ci.render``. Both resolve against the
sample checkout (a git checkout: gone paths get their "moved?" hints from git's history,
the file list and fuzzy matching). Each is run ``--repeat`` times, alternating, and the
best time is kept. Prints both times and the ratio check / import.

    python bench/bench_check.py [--lines 200000] [--files 100] [--repeat 3] [--corpus DIR]

Bar (issue 4): check costs at most 1.2x import --dry-run.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

from brainmigrate import check, importer, reports
from brainmigrate.read.run import ImportOptions
from brainmigrate.reports import ci

REPO = Path(__file__).resolve().parent.parent
ROOTS = [REPO / "samples/roots/app", REPO / "samples/roots/infra"]
BAR = 1.2


def simple_corpus(out: Path, lines: int, files: int, seed: int = 1) -> list[Path]:
    """A plain corpus (used when ``bench/corpus.py`` is not there): facts citing found and
    gone paths, CamelCase names, continuations, headings and prose."""
    rng = random.Random(seed)
    words = ["cache", "retries", "webhook", "ledger", "charge", "refund", "queue", "worker"]
    cited = [
        "src/main/kotlin/com/example/payments/PaymentGateway.kt",
        "docker/Dockerfile",
        "src/main/kotlin/com/example/payments/ChargeService.kt",
        "docker/certs/dev.pem",
    ]
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for i in range(files):
        buf = [f"# Notes {i}", ""]
        while len(buf) < lines // files:
            text = " ".join(rng.sample(words, 6))
            r = rng.random()
            if r < 0.3:
                text += " " + rng.choice(cited)
            elif r < 0.4:
                text += " PaymentGateway"
            buf.append(f"{rng.choice('+!~=?>')} {text} TER-{rng.randint(1, 900)}")
            if rng.random() < 0.2:
                buf.append("  " + " ".join(rng.sample(words, 4)))
            if rng.random() < 0.1:
                buf.append("Some prose.")
        f = out / f"notes-{i:04d}.md"
        f.write_text("\n".join(buf) + "\n", encoding="utf-8")
        written.append(f)
    return written


def corpus(out: Path, lines: int, files: int) -> list[Path]:
    """The shared generator ``bench/corpus.py`` when present, else ``simple_corpus``."""
    here = Path(__file__).resolve().parent
    if (here / "corpus.py").is_file():
        sys.path.insert(0, str(here))
        from corpus import generate

        return generate(out, lines, files)
    return simple_corpus(out, lines, files)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--corpus", type=Path, help="use these notes instead of generating")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bm-bench-check-"))
    folder = a.corpus or tmp / "corpus"
    if not a.corpus:
        corpus(folder, a.lines, a.files)
    files = sorted(folder.rglob("*.md"))
    size = sum(f.stat().st_size for f in files)
    print(f"corpus: {len(files)} files, {size / 1e6:.1f} MB")
    opts = ImportOptions(roots=ROOTS, cache_dir=tmp / "cache")

    def run_import() -> str:
        result = importer.import_notes([folder], opts, tmp / "none.db", dry_run=True)
        return reports.render(reports.report(result), "text")

    def run_check() -> tuple[str, check.CheckResult]:
        result = check.run_check([folder], opts)
        return ci.render(result, "text"), result

    run_import()  # warm the declaration cache and the OS file cache for both
    best_import = best_check = float("inf")
    result = None
    for _ in range(max(1, a.repeat)):
        t0 = time.perf_counter()
        run_import()
        best_import = min(best_import, time.perf_counter() - t0)
        t0 = time.perf_counter()
        _, result = run_check()
        best_check = min(best_check, time.perf_counter() - t0)
    totals = result.totals()
    hinted = sum(1 for f in result.findings if f.hint)
    print(
        f"fact lines: {totals['fact_lines']:,}; findings: {totals['findings']:,} "
        f"({totals['by_code'].get('BM101', 0):,} gone, {hinted:,} with a hint)"
    )
    print(f"import --dry-run  {best_import:7.2f} s")
    print(f"check             {best_check:7.2f} s")
    ratio = best_check / best_import
    print(f"ratio check / import --dry-run: {ratio:.2f} (bar {BAR})")


if __name__ == "__main__":
    main()
