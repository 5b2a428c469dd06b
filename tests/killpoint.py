"""Run ``brainmigrate`` stopped at a known point of its store transaction, for the tests
that kill it there (``test_store_safety.py``).

``python killpoint.py POINT MARKER brainmigrate-args...`` runs the command line as
``python -m brainmigrate`` does, with the store's connection (the one of ``--store``; no
other, such as a spill file) watched statement by statement. When the run reaches
``POINT``, the file ``MARKER`` is created, so the test knows where the run is instead of
guessing it from a delay:

- ``lock``: just before the write lock is asked for (``BEGIN IMMEDIATE``); the run goes on.
- ``write``: just after the first rows are written to ``facts`` (the transaction is open,
  its journal beside the store); the run waits there for ``MARKER.go``.
- ``hot``: as ``write``, on a connection whose page cache is one page, so the transaction
  spills into the store file, and not before its journal is hot (its header written: a
  kill now leaves a journal the next open must roll back); the run waits there too.
- ``committed``: just after ``COMMIT``; the run waits there.

A run that waits is killed by the test, or goes on once ``MARKER.go`` exists (at most
``WAIT`` seconds, so a test that fails before it signals leaves no process behind for
long). Only ``sqlite3.connect`` is wrapped: the package itself has no test hook.
"""

from __future__ import annotations

import os
import re
import sqlite3
import sys
import time
from pathlib import Path

POINTS = ("lock", "write", "hot", "committed")
#: Seconds a paused run waits for ``MARKER.go`` before it goes on by itself.
WAIT = 120.0
_FACTS = re.compile(r"^\s*INSERT\b.*\bINTO\s+facts\b", re.IGNORECASE | re.DOTALL)


def _store(argv: list[str]) -> str:
    """The real path of the ``--store`` given in ``argv`` (SystemExit if none is)."""
    if "--store" not in argv:
        sys.exit("killpoint: the command line names no --store")
    return os.path.realpath(argv[argv.index("--store") + 1])


def _hot(journal: str) -> bool:
    """Whether ``journal`` has its header written (SQLite writes the magic number last)."""
    try:
        with open(journal, "rb") as f:
            return bool(f.read(8).strip(b"\0"))
    except OSError:
        return False


def _install(point: str, marker: Path, store: str) -> None:
    """Wrap ``sqlite3.connect`` so the connections to ``store`` stop at ``point``."""
    reached = False

    def arrive(wait: bool) -> None:
        nonlocal reached
        reached = True
        marker.touch()
        if wait:
            go = marker.with_name(marker.name + ".go")
            deadline = time.monotonic() + WAIT
            while not go.exists() and time.monotonic() < deadline:
                time.sleep(0.005)  # a signal (SIGTERM, SIGINT) is handled here

    class Watched(sqlite3.Connection):
        def execute(self, sql, *args):
            if not reached and point == "lock" and sql.strip().upper() == "BEGIN IMMEDIATE":
                arrive(wait=False)
            done = super().execute(sql, *args)
            if not reached and point == "committed" and sql.strip().upper() == "COMMIT":
                arrive(wait=True)
            return done

        def executemany(self, sql, *args):
            done = super().executemany(sql, *args)
            at = point == "write" or (point == "hot" and _hot(store + "-journal"))
            if not reached and at and _FACTS.match(sql):
                arrive(wait=True)
            return done

    connect = sqlite3.connect

    def watched_connect(database, *args, **kwargs):
        if os.path.realpath(database) != store:
            return connect(database, *args, **kwargs)
        con = connect(database, *args, factory=Watched, **kwargs)
        if point == "hot":
            con.execute("PRAGMA cache_size = 1")
        return con

    sqlite3.connect = watched_connect


def main() -> None:
    point, marker, *argv = sys.argv[1:]
    if point not in POINTS:
        sys.exit(f"killpoint: {point!r} is not one of {', '.join(POINTS)}")
    _install(point, Path(marker), _store(argv))
    sys.argv = ["brainmigrate", *argv]
    from brainmigrate.__main__ import run

    run()


if __name__ == "__main__":
    main()
