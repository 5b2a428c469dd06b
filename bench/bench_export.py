"""Benchmark export and search on a large store.

Builds a store of N generated facts (default 100,000) through ``stores.write`` --
the same writer an import uses, with the same FTS5 words -- then times an export to each
format and 100 search queries, and prints the median and the 95th percentile per query.

    python bench/bench_export.py [--facts 100000] [--queries 100] [--seed 1] [--keep DIR]

Facts look like notes: Zipf-distributed words (a few common, many rare), task ids, a
trailer on half of them, every marker, 3% superseded, 400 scopes (some named for
patterns). The memory export runs with ``fit`` (100k facts never fit 64 KB).
"""

from __future__ import annotations

import argparse
import bisect
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from brainmigrate import exports as export
from brainmigrate import search, stores
from brainmigrate.merge.rule import Stems, numbers
from brainmigrate.merge.run import fts_words
from brainmigrate.model import FactRecord
from brainmigrate.read.facts import KIND_OF_MARKER, SUPERSEDED, TaskIds, plus_kind_for

COMMON = [
    "the",
    "a",
    "of",
    "in",
    "to",
    "is",
    "on",
    "for",
    "runs",
    "uses",
    "retries",
    "webhook",
    "ledger",
    "charge",
    "refund",
    "queue",
    "worker",
    "timeout",
    "build",
    "image",
    "compose",
    "migration",
    "schema",
    "index",
    "token",
    "session",
    "login",
    "payment",
    "gateway",
    "processor",
    "handler",
    "event",
    "deploy",
    "release",
    "branch",
    "commit",
    "review",
    "flaky",
    "test",
    "sandbox",
    "staging",
    "metrics",
    "alert",
    "budget",
    "latency",
    "throughput",
    "backoff",
    "jitter",
    "lock",
    "transaction",
    "rollback",
    "replica",
]
SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "re",
    "tu",
    "ven",
    "sor",
    "dal",
    "pin",
    "gre",
    "fo",
    "nu",
    "bas",
    "tek",
    "lim",
    "orn",
    "quo",
    "zel",
    "ar",
    "is",
]
MARKERS = ["+", "+", "+", "!", "~", "=", "?", ">", "->", "x"]


def vocabulary(rng: random.Random, size: int = 6000) -> tuple[list[str], list[float]]:
    """Words with cumulative Zipf weights."""
    words = list(COMMON)
    seen = set(words)
    while len(words) < size:
        w = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        if w not in seen:
            seen.add(w)
            words.append(w)
    total, cum = 0.0, []
    for rank in range(1, len(words) + 1):
        total += 1 / rank
        cum.append(total)
    return words, cum


def pick(rng: random.Random, vocab: tuple[list[str], list[float]]) -> str:
    words, cum = vocab
    return words[min(bisect.bisect(cum, rng.random() * cum[-1]), len(words) - 1)]


def generate(n: int, seed: int) -> list[FactRecord]:
    """``n`` facts as an import of notes would store them."""
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    stems, tasks = Stems(), TaskIds()
    scopes = [f"area:{pick(rng, vocab)}-{i}" for i in range(380)]
    scopes += [f"area:topic-{i}-patterns" for i in range(20)]
    out = []
    for i in range(1, n + 1):
        scope = rng.choice(scopes)
        marker = rng.choice(MARKERS)
        words = [pick(rng, vocab) for _ in range(rng.randint(6, 20))]
        if rng.random() < 0.6:
            words.insert(rng.randint(0, len(words)), f"TER-{rng.randint(1, 5000)}")
        if rng.random() < 0.2:
            words.append(str(rng.randint(1, 10_000)))
        if rng.random() < 0.03:
            words.insert(0, "SUPERSEDED:")
        text = " ".join(words)
        found = tasks.all(text)
        created = run = None
        if rng.random() < 0.5:
            created = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T10:00:00Z"
            run = rng.choice([None, "nightly", f"run-{rng.randint(1, 50)}"])
        superseded = SUPERSEDED.search(text) is not None
        out.append(
            FactRecord(
                id=i,
                scope=scope,
                kind=KIND_OF_MARKER.get(marker, plus_kind_for(scope[5:] + ".md")),
                marker=marker,
                text=text,
                task=found[0] if found else None,
                run=run,
                created=created,
                status="superseded" if superseded else "active",
                status_reason="SUPERSEDED in the text" if superseded else None,
                stems=stems(text),
                numbers=numbers(text),
                tasks=frozenset(found),
            )
        )
    return out


def timed(label: str, func):
    start = time.perf_counter()
    value = func()
    took = time.perf_counter() - start
    print(f"{label:<28}{took:8.2f} s", flush=True)
    return value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", type=Path, help="build the store and exports here (kept)")
    args = ap.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-export-"))
    base.mkdir(parents=True, exist_ok=True)
    store = base / "know.db"
    if store.exists():
        store.unlink()
    facts = timed(f"generate {args.facts:,} facts", lambda: generate(args.facts, args.seed))
    timed(
        "write store",
        lambda: stores.write(store, facts, fts_words(Stems()), "2026-10-01T00:00:00Z"),
    )
    print(f"store: {store} ({store.stat().st_size / 1e6:.1f} MB)")
    for fmt, options in (
        ("jsonl", export.ExportOptions()),
        ("brain", export.ExportOptions()),
        ("knowledge", export.ExportOptions()),
        ("memory", export.ExportOptions(fit=True)),
    ):
        target = base / ("facts.jsonl" if fmt == "jsonl" else fmt)
        result = timed(
            f"export --to {fmt}",
            lambda fmt=fmt, target=target, options=options: export.export(
                store, fmt, target, options
            ),
        )
        extra = f", {len(result.left_out):,} left out by --fit" if result.left_out else ""
        print(f"  {len(result.files):,} files, {len(result.written):,} written{extra}")
    rng = random.Random(args.seed + 1)
    vocab = vocabulary(random.Random(args.seed))
    queries = [
        " ".join(pick(rng, vocab) for _ in range(rng.randint(1, 4))) for _ in range(args.queries)
    ]
    search.search(store, queries[0])  # warm the page cache
    times, hits = [], 0
    for q in queries:
        start = time.perf_counter()
        hits += len(search.search(store, q, limit=5))
        times.append(time.perf_counter() - start)
    times.sort()
    median = statistics.median(times) * 1000
    p95 = times[int(len(times) * 0.95) - 1] * 1000
    print(
        f"search: {len(queries)} queries, median {median:.1f} ms, p95 {p95:.1f} ms, "
        f"max {times[-1] * 1000:.1f} ms, {hits} hits (target: median under 50 ms)"
    )
    if not args.keep:
        import shutil

        shutil.rmtree(base, ignore_errors=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
