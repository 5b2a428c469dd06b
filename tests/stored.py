"""What tests read back from a store: its rows, and the states ``stale`` gives its facts."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from clirun import cli


def rows(db: Path, sql: str) -> list[tuple]:
    """The rows ``sql`` selects from the store ``db``."""
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def stale_states(store: Path) -> dict[str, tuple[str, str | None]]:
    """Fact id -> ``(state, reason)`` of ``stale --format json --dry-run`` on ``store``."""
    r = cli("stale", "--store", store, "--format", "json", "--dry-run")
    return {f["id"]: (f["state"], f["reason"]) for f in json.loads(r.stdout)["facts"]}


def verified_checkout(
    base: Path, files: dict[str, str], notes: str, *, name="facts.md", store="know.db"
) -> Path:
    """A committed checkout ``base/repo`` of ``files``, ``base/notes/<name>`` holding
    ``notes``, imported with ``--verify`` into ``base/<store>`` from ``base`` (the current
    folder); returns the checkout."""
    from trees import committed, write

    repo = committed(base / "repo", files)
    write(base, {f"notes/{name}": notes})
    r = cli("import", "notes", "--root", "repo", "--store", base / store, "--verify")
    assert r.exit_code == 0, r.output
    return repo
