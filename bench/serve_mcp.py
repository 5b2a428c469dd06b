"""Time the MCP server's search: ``brainmigrate mcp`` started through the SDK's stdio client.

``measure`` starts ``brainmigrate mcp --store STORE`` as a process (``python -m
brainmigrate``, this interpreter), calls ``know_search`` ``n`` times in turn over the
queries, one call at a time, and returns the throughput and the p50/p95 latency of a call
as the client sees it (the JSON-RPC round trip over the pipes, the search, the lines).
``bench/bench_serve.py`` calls it for its MCP row; alone:

    python bench/serve_mcp.py --store know.db [--n 200] [--query "retries backoff"]...
    python bench/serve_mcp.py --facts 20000 [--n 200]   # a store of generated facts

Start-up (the process, ``initialize``) is left out of the figures; a first call warms
the store's pages before the timed ones.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

#: Questions an agent might ask (words of bench_export's generated notes).
QUERIES = [
    "retries webhook",
    "payment timeout",
    "build image compose",
    "migration schema index",
    "token session login",
    "queue worker",
    "refund charge ledger",
    "TER-120",
]


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of ``sorted_values`` (``fraction`` 0.5: the median)."""
    rank = max(math.ceil(fraction * len(sorted_values)), 1)
    return sorted_values[rank - 1]


def measure(
    store: str | os.PathLike, queries: Sequence[str], n: int, roots: Sequence[str] = ()
) -> dict:
    """``n`` ``know_search`` calls over ``queries`` (in turn) against ``brainmigrate mcp
    --store store [--root R]...``: ``{"calls": n, "errors": calls answered isError,
    "per_s": calls a second, "p50_ms", "p95_ms"}`` (milliseconds a call)."""
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    args = ["-m", "brainmigrate", "mcp", "--store", os.fspath(store)]
    for root in roots:
        args += ["--root", root]
    env = {k: v for k, v in os.environ.items() if k.startswith("BRAINMIGRATE_")}
    params = StdioServerParameters(command=sys.executable, args=args, env=env)

    async def run() -> tuple[list[float], int, float]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            await client.call_tool("know_search", {"query": queries[0]})  # warm the pages
            times, errors = [], 0
            start = time.perf_counter()
            for i in range(n):
                began = time.perf_counter()
                result = await client.call_tool("know_search", {"query": queries[i % len(queries)]})
                times.append(time.perf_counter() - began)
                errors += bool(result.is_error)
            return times, errors, time.perf_counter() - start

    times, errors, took = anyio.run(run)
    times.sort()
    return {
        "calls": n,
        "errors": errors,
        "per_s": round(n / took, 1),
        "p50_ms": round(percentile(times, 0.5) * 1000, 2),
        "p95_ms": round(percentile(times, 0.95) * 1000, 2),
    }


def generated_store(base: Path, facts: int) -> Path:
    """A store of ``facts`` notes-like facts (``bench_export.generate``) in ``base``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_export import generate

    from brainmigrate import stores
    from brainmigrate.merge.rule import Stems
    from brainmigrate.merge.run import fts_words

    store = base / "know.db"
    stores.write(store, generate(facts, 1), fts_words(Stems()), "2026-10-01T00:00:00Z")
    return store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", type=Path, help="the store to serve (default: --facts generated)")
    ap.add_argument("--facts", type=int, default=20_000, help="facts of a generated store")
    ap.add_argument("--n", type=int, default=200, help="know_search calls timed")
    ap.add_argument("--query", action="append", help="a query (repeat; default: a fixed set)")
    ap.add_argument("--root", action="append", default=[], help="a checkout (--root of mcp)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        store = args.store or generated_store(Path(tmp), args.facts)
        figures = measure(store, args.query or QUERIES, args.n, args.root)
    print(
        f"mcp know_search: {figures['calls']} calls, {figures['errors']} errors,"
        f" {figures['per_s']}/s, p50 {figures['p50_ms']} ms, p95 {figures['p95_ms']} ms"
    )
    sys.exit(1 if figures["errors"] else 0)


if __name__ == "__main__":
    main()
