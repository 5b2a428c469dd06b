"""Benchmark ``brainmigrate serve`` under many clients at once.

Builds a store of N facts (default 20,000) by importing a generated notes file, starts
the real daemon (``brainmigrate serve --port 0``), then runs W writer threads (default 8)
putting P facts each (default 250, one ``POST /know`` a fact) while R reader threads
(default 8) search (``GET /know/search``), each thread its own httpx client. Afterwards
every put's id is asked for (``GET /know/{id}``) and the store's facts are counted.

    python bench/bench_serve.py [--facts 20000] [--writers 8] [--puts 250] [--readers 8]
                                [--seconds 5] [--mcp-queries 200] [--seed 1] [--keep DIR]

Bars (issue 28): no fact lost (every put's id is found, and the store holds N + W x P
facts: the texts are distinct, so none merge), no 5xx but 503 with ``Retry-After``, which
the writer waits out and retries (their number is printed); then the throughput and the
p50/p95 latency of each route. The same for the MCP server's search when
``bench/serve_mcp.py`` (its ``measure(store, queries, n) -> dict``) is present.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import selectors
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

WORDS = (
    "retries webhook ledger charge refund queue worker timeout build image compose migration"
    " schema index token session login payment gateway processor handler event deploy release"
    " branch commit review flaky test sandbox staging metrics alert budget latency backoff"
    " jitter cache replica shard lock cursor batch export import parser lexer grammar"
).split()
SERVING = re.compile(r"on (http://\S+) \(token in (.+)\)$")


def notes(path: Path, n: int, rng: random.Random) -> None:
    """``n`` fact lines in 20 notes files under ``path``, every text distinct (its own
    number: the merge rule never joins facts with different numbers)."""
    path.mkdir(parents=True, exist_ok=True)
    files = [[] for _ in range(20)]
    for i in range(n):
        words = " ".join(rng.choices(WORDS, k=8))
        files[i % 20].append(f"+ {words} case {i} TER-{i}\n")
    for k, lines in enumerate(files):
        (path / f"topic{k}.md").write_text("".join(lines), encoding="utf-8")


def start(store: Path, token_file: Path) -> tuple[subprocess.Popen, str, str]:
    """The daemon on a free port: the process, its URL and token."""
    cmd = [sys.executable, "-m", "brainmigrate", "serve", "--store", str(store), "--port", "0"]
    proc = subprocess.Popen(
        [*cmd, "--token-file", str(token_file)], stderr=subprocess.PIPE, text=True
    )
    sel = selectors.DefaultSelector()
    sel.register(proc.stderr, selectors.EVENT_READ)
    if not sel.select(60):
        proc.kill()
        sys.exit("bench_serve: the daemon printed nothing in 60 s")
    line = proc.stderr.readline()
    m = SERVING.search(line.strip())
    if not m:
        proc.kill()
        sys.exit(f"bench_serve: the daemon did not start: {line.strip()}")
    # the rest of its stderr passed on as it comes: a full pipe would stop the daemon
    threading.Thread(target=lambda: sys.stderr.writelines(proc.stderr), daemon=True).start()
    return proc, m.group(1), token_file.read_text().strip()


class Tally:
    """Latencies (seconds) per route, 503s retried and other 5xx, shared by the threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.times: dict[str, list[float]] = {}
        self.spans: dict[str, list[float]] = {}
        self.busy = 0
        self.faults: list[str] = []

    def add(self, route: str, took: float, start: float) -> None:
        with self.lock:
            self.times.setdefault(route, []).append(took)
            self.spans.setdefault(route, []).append(start)
            self.spans[route].append(start + took)


def call(client: httpx.Client, tally: Tally, route: str, method: str, path: str, **kw):
    """One request, timed under ``route``; a 503 waited out (Retry-After) and sent again;
    any other 5xx recorded as a fault. The response."""
    while True:
        t0 = time.perf_counter()
        r = client.request(method, path, **kw)
        took = time.perf_counter() - t0
        if r.status_code == 503 and "retry-after" in r.headers:
            with tally.lock:
                tally.busy += 1
            time.sleep(float(r.headers["retry-after"]))
            continue
        tally.add(route, took, t0)
        if r.status_code >= 500 or r.status_code not in (200, 404):
            with tally.lock:
                tally.faults.append(f"{method} {path}: {r.status_code} {r.text[:200]}")
        return r


def writer(url: str, token: str, w: int, puts: int, tally: Tally, ids: list) -> None:
    rng = random.Random(w)
    with client_for(url, token) as client:
        for j in range(puts):
            text = f"{' '.join(rng.choices(WORDS, k=6))} put {w} {j} rule {w * 100000 + j}"
            body = {"scope": f"area:writer{w}", "text": text, "kind": "decision"}
            r = call(client, tally, "POST /know", "POST", "/know", json=body)
            if r.status_code == 200:
                with tally.lock:
                    ids.append(r.json()["fact"]["id"])


def reader(url: str, token: str, seed: int, done: threading.Event, tally: Tally) -> None:
    rng = random.Random(1000 + seed)
    with client_for(url, token) as client:
        while not done.is_set():
            q = " ".join(rng.choices(WORDS, k=2))
            call(client, tally, "GET /know/search", "GET", "/know/search", params={"q": q})


def client_for(url: str, token: str) -> httpx.Client:
    headers = {"x-brainmigrate-token": token}
    return httpx.Client(base_url=url, headers=headers, trust_env=False, timeout=120)


def report(tally: Tally) -> None:
    """Each route's requests, throughput (requests a second over the span the route's
    requests took) and p50/p95 latency, one row each."""
    print(f"{'route':<20} {'requests':>8} {'req/s':>8} {'p50 ms':>8} {'p95 ms':>8}")
    for route, times in tally.times.items():
        span = max(tally.spans[route]) - min(tally.spans[route])
        ordered = sorted(times)
        p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
        rate = len(times) / span if span > 0 else float("inf")
        print(
            f"{route:<20} {len(times):>8} {rate:>8.1f}"
            f" {statistics.median(times) * 1000:>8.1f} {p95 * 1000:>8.1f}"
        )


def mcp_search(store: Path, n: int) -> None:
    """The MCP server's search, when ``bench/serve_mcp.py`` is there (its ``measure``)."""
    try:
        from serve_mcp import measure  # bench/serve_mcp.py: the MCP server's own timing
    except ImportError:
        print("MCP search: bench/serve_mcp.py is not there; not measured")
        return
    queries = [" ".join(random.Random(i).choices(WORDS, k=2)) for i in range(n)]
    print(f"MCP search: {measure(store, queries, n)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--facts", type=int, default=20_000)
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--puts", type=int, default=250)
    ap.add_argument("--readers", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=5.0, help="readers search at least this long")
    ap.add_argument("--mcp-queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", help="build in this folder and keep it")
    args = ap.parse_args()
    base = Path(args.keep or tempfile.mkdtemp(prefix="bench-serve-"))
    base.mkdir(parents=True, exist_ok=True)
    store, token_file = base / "know.db", base / "token"
    store.unlink(missing_ok=True)
    notes(base / "notes", args.facts, random.Random(args.seed))
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "brainmigrate", "import", str(base / "notes"), "--store",
         str(store), "--root", str(base)],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    print(f"store: {args.facts} facts imported in {time.perf_counter() - t0:.1f} s")
    token_file.write_text("bench-token\n")
    proc, url, token = start(store, token_file)
    try:
        ok = load(url, token, args, store)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    mcp_search(store, args.mcp_queries)
    if not args.keep:
        shutil.rmtree(base)
    return 0 if ok else 1


def load(url: str, token: str, args, store: Path) -> bool:
    """The writers and readers at once, then the checks; whether every bar was met."""
    tally, ids, done = Tally(), [], threading.Event()
    readers = [
        threading.Thread(target=reader, args=(url, token, i, done, tally))
        for i in range(args.readers)
    ]
    writers = [
        threading.Thread(target=writer, args=(url, token, w, args.puts, tally, ids))
        for w in range(args.writers)
    ]
    t0 = time.perf_counter()
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join()
    time.sleep(max(0.0, args.seconds - (time.perf_counter() - t0)))  # the readers' least time
    done.set()
    for t in readers:
        t.join()
    wall = time.perf_counter() - t0
    with client_for(url, token) as client:
        lost = [
            i
            for i in ids
            if call(client, tally, "GET /know/{id}", "GET", f"/know/{i}").status_code != 200
        ]
    con = sqlite3.connect(store)
    count = con.execute("SELECT count(*) FROM facts").fetchone()[0]
    con.close()
    want = args.facts + args.writers * args.puts
    print(f"load: {args.writers} writers x {args.puts} puts, {args.readers} readers, {wall:.1f} s")
    report(tally)
    print(f"puts answered: {len(ids)} of {args.writers * args.puts}, distinct ids {len(set(ids))}")
    print(f"facts in the store: {count} (want {want}); lost: {len(lost)}")
    print(f"503 (Retry-After) retried: {tally.busy}; other faults: {len(tally.faults)}")
    for fault in tally.faults[:5]:
        print(f"  {fault}")
    return (
        not lost
        and not tally.faults
        and count == want
        and len(set(ids)) == len(ids) == want - args.facts
    )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
