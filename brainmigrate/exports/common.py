"""What every export target shares: the options, the result, the one error, and the
filters that select the facts (``select``) and the words that name a fact in a message.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from brainmigrate.errors import BrainmigrateError
from brainmigrate.fsutil import (
    printable,
)
from brainmigrate.model import FactRecord
from brainmigrate.read.notation import fold
from brainmigrate.shapes import shorten
from brainmigrate.terms import parse_scopes

#: Memory budgets in bytes (seed 004): the index and all files together.
INDEX_BUDGET = 2 * 1024

TOTAL_BUDGET = 64 * 1024

INDEX_NAME = "MEMORY.md"

#: How many ids an error message or a left-out summary names before "… and N more".
SHOW_AT_MOST = 50

#: How many characters of a fact's text a message quotes.
QUOTE_AT_MOST = 60


class ExportError(BrainmigrateError):
    """The export cannot be done as asked; nothing was written. The message names the fix."""


@dataclass(kw_only=True)
class ExportOptions:
    """What to export and how.

    Filters: ``scopes`` (``--scope`` values: exact scopes, comma lists, ``area`` for every
    ``area:*``), ``kinds``, ``status`` (``all`` or ``active``). ``brain``: ``plus_kind``
    (the kind ``+`` is written for in every file; default: by the file's name, as the
    importer reads it) and ``task_pattern`` (the importer's ``--task-pattern``).
    ``knowledge``: ``type_map`` (``KIND=TYPE`` strings). ``memory``: ``index_budget``,
    ``total_budget`` (bytes) and ``fit``.
    """

    scopes: Sequence[str] = ()
    kinds: Sequence[str] = ()
    status: str = "all"
    plus_kind: str | None = None
    task_pattern: str | None = None
    type_map: Sequence[str] = ()
    index_budget: int = INDEX_BUDGET
    total_budget: int = TOTAL_BUDGET
    fit: bool = False


@dataclass
class ExportResult:
    """What an export did. ``files`` are the names it produced (relative to ``output``),
    ``written`` those whose bytes changed; ``left_out`` the facts ``fit`` dropped
    (``{"id", "scope", "kind", "status", "bytes"}``); ``refused`` the facts the target
    cannot hold, left out while the others were written (``{"id", "scope", "text",
    "why"}``, ``refusal`` names one); ``notes`` what the reader should know;
    ``text`` the jsonl text when ``output`` is ``-``; ``sizes`` the memory byte counts."""

    format: str
    output: str
    facts: int
    files: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    left_out: list[dict] = field(default_factory=list)
    refused: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    others: list[str] = field(default_factory=list)
    sizes: dict = field(default_factory=dict)
    text: str | None = None


def _check_scopes(values: Sequence[str], stored: set[str]) -> None:
    """Raise ``ExportError`` for a ``--scope`` no stored fact has (a typo would otherwise
    export nothing and look done); the message lists the store's scopes."""
    exact, areas = parse_scopes(values)
    missing = [s for s in exact if s not in stored]
    if areas and not any(s.startswith("area:") for s in stored):
        missing.append("area")
    if not missing:
        return
    known = sorted(stored)
    listed = ", ".join(printable(s) for s in known[:8]) + (", …" if len(known) > 8 else "")
    raise ExportError(
        f"--scope {printable(missing[0])}: no fact in the store has this scope"
        f" ({'scopes in the store: ' + listed if known else 'the store is empty'});"
        " pass --scope with one of the store's scopes, or leave it out"
    )


def select(facts: Iterable[FactRecord], options: ExportOptions) -> list[FactRecord]:
    """The facts the filters keep, in id order."""
    exact, areas = parse_scopes(options.scopes)
    wanted = set(exact)
    kinds = set(options.kinds)
    out = []
    for rec in facts:
        if (wanted or areas) and not (
            rec.scope in wanted or (areas and rec.scope.startswith("area:"))
        ):
            continue
        if kinds and rec.kind not in kinds:
            continue
        if options.status == "active" and rec.status != "active":
            continue
        out.append(rec)
    out.sort(key=lambda r: r.id)
    return out


def quote(text: str, limit: int = QUOTE_AT_MOST) -> str:
    """At most ``limit`` characters of ``text`` (folded), ``…`` when cut: what a message
    quotes of a fact, however long the fact is."""
    return shorten(fold(text), limit)


def refusal(entry: dict) -> str:
    """One line naming a fact an export left out: id, scope, the start of its text, why."""
    return f"{entry['id']} ({printable(entry['scope'])}) {entry['text']!r}: {entry['why']}"


def _cap(items: Sequence[str]) -> list[str]:
    if len(items) <= SHOW_AT_MOST:
        return list(items)
    return [*items[:SHOW_AT_MOST], f"… and {len(items) - SHOW_AT_MOST} more"]
