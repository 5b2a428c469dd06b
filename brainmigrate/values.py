"""What a value of a fact may be once stored: the rules the store's reader
(``stores.rows``) refuses a row by, and that every import applies to what a store file
carries before the merge (``sources.feed``), so an import never writes what the store
cannot read back (SPEC.md §Store). One rule, two users: neither keeps a copy.

Each ``*_ok`` is a predicate; ``store_time`` gives a time's one stored form.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

#: The largest id SQLite keeps (a signed 64-bit integer); an id or line number past it
#: overflows the column.
MAX_ID = 2**63 - 1
#: A time as the store records it: ISO 8601 UTC to the second (``2026-09-23T13:16:09Z``).
TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
#: The forms of digest a fingerprint's ``digest_version`` names (``stores.schema``).
DIGEST_VERSIONS = (1, 2)


def time_ok(value) -> bool:
    """Whether ``value`` is a time in the store's form (``TIME``)."""
    return type(value) is str and TIME.fullmatch(value) is not None


def store_time(value: str) -> str | None:
    """``value`` (an ISO 8601 date or date and time) in the store's form: a date alone is
    its midnight UTC, a time with an offset is moved to UTC, one without is taken as UTC
    (``"2024-05-01"`` -> ``"2024-05-01T00:00:00Z"``, ``"2024-05-01T10:00:00+02:00"`` ->
    ``"2024-05-01T08:00:00Z"``); None for text that is no ISO date."""
    if time_ok(value):
        return value
    text = value.strip()
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            return f"{day.isoformat()}T00:00:00Z"
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    if when.tzinfo is not None:
        try:
            when = when.astimezone(UTC)
        except OverflowError:  # 0001-01-01 00:00+01:00 is before year 1 in UTC
            return None
    if not 1 <= when.year <= 9999:
        return None
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def scope_ok(value) -> bool:
    """Whether ``value`` is a scope: text that is not blank (SPEC.md §Notation, Scope)."""
    return type(value) is str and bool(value.strip())


def run_ok(run, created) -> bool:
    """Whether a fact's ``run`` may be stored with its ``created``: None, or one word with
    a ``created`` (a stamp gives both, SPEC.md §Notation)."""
    return run is None or type(run) is str and created is not None and run.split() == [run]


def task_ok(task, tasks: frozenset[str] | set[str]) -> bool:
    """Whether a fact's ``task`` goes with its ``tasks`` (the task ids its text names):
    None with no tasks, else words that are all among them."""
    if task is None:
        return not tasks
    return type(task) is str and bool(tasks) and set(task.split(" ")) <= tasks


def id_ok(value) -> bool:
    """Whether ``value`` is a fact id: an integer 1..``MAX_ID``."""
    return type(value) is int and 1 <= value <= MAX_ID


def line_ok(value) -> bool:
    """Whether ``value`` is a line number an anchor keeps: an integer 0..``MAX_ID``."""
    return type(value) is int and 0 <= value <= MAX_ID


def symbol_ok(kind: str, symbol) -> bool:
    """Whether an anchor of ``kind`` may hold ``symbol``: a symbol anchor names its
    declaration, a file or folder anchor none (None or ``""``)."""
    return (kind == "symbol") == bool(symbol)
