"""The words filters and queries share: ``--scope`` values (``parse_scopes``), the one
FTS5 token a task id is indexed as (``task_token``).
Pure; import, search, stale, check and the exports read them alike."""

from __future__ import annotations

from brainmigrate.fsutil import printable


def task_token(task: str) -> str:
    """The one FTS5 token a task id is indexed as: ``TER-160`` -> ``ter160``."""
    return "".join(c for c in task.lower() if c.isalnum())


def parse_scopes(values) -> tuple[list[str], bool]:
    """Split ``--scope`` values (repeatable, comma-separated) into exact scopes and whether a
    bare ``area`` (every ``area:*`` scope) was given."""
    scopes, areas = [], False
    for value in values or ():
        for part in printable(value).split(","):
            part = part.strip()
            if part == "area":
                areas = True
            elif part:
                scopes.append(part)
    return scopes, areas
