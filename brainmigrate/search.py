"""Find facts in the store and show one: ``search`` and ``show`` (SPEC.md §Store).

Search is SQLite FTS5 with BM25 over the stems the merge rule uses (``merge.Stems``): the
query is cut into words and stemmed the same way, and every stem goes to FTS5 as a quoted
string, joined with OR. So any text is a valid query -- quotes, a leading ``-``, ``AND``,
``*``, ``NEAR(`` or parentheses never reach FTS5 as syntax -- and a query with no words
finds nothing. Ranking: BM25 (facts holding more of the query's rarer stems first), ties
by id.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from brainmigrate.fsutil import printable
from brainmigrate.merge import Stems
from brainmigrate.model import FactRecord
from brainmigrate.reports import anchor_fields, fact_fields, safe_text
from brainmigrate.stores import sqlite

#: Default and largest number of hits.
DEFAULT_LIMIT = 5
MAX_LIMIT = 30
#: A hit line is cut to about this many characters.
LINE_WIDTH = 300

_ID = re.compile(r"[kK]?([0-9]+)")


class NotFound(Exception):
    """No fact has the id asked for, or the id is not of the form ``k17`` / ``17``."""


@dataclass(frozen=True, slots=True)
class Hit:
    """A fact found by ``search`` and its one-line form (``k41 decision area:x  text (T-1)``)."""

    fact: FactRecord
    line: str


def fts_query(query: str, stems: Stems | None = None) -> str:
    """The FTS5 expression for a user's ``query``: its stems, each quoted, joined by OR.

    Returns ``""`` when the query holds no words. A stem holds only letters (``Stems``
    splits at everything else), so quoting it is enough; a ``"`` would be doubled.
    """
    words = (stems or Stems()).words(query)
    unique = list(dict.fromkeys(words))
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in unique)


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


def search(
    store: str | os.PathLike,
    query: str,
    scopes=(),
    kinds=(),
    limit: int = DEFAULT_LIMIT,
    include_superseded: bool = False,
) -> list[Hit]:
    """The facts best matching ``query``, at most ``limit`` (BM25 order).

    ``scopes``: ``--scope`` values (see ``parse_scopes``); ``kinds``: kinds to keep.
    Superseded facts only with ``include_superseded``; stale ones are marked in the line.
    Raises ``sqlite.StoreError`` (no store, newer schema) and ``ValueError`` for a limit
    outside 1..30.
    """
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"--limit must be between 1 and {MAX_LIMIT}")
    with sqlite.reader(Path(store)) as store_reader:
        expr = fts_query(query)
        if not expr:
            return []
        exact, areas = parse_scopes(scopes)
        ids = store_reader.match(expr, exact, areas, kinds, include_superseded, limit)
        facts = store_reader.fetch(ids)
    return [Hit(facts[i], hit_line(facts[i])) for i in ids if i in facts]


def hit_line(rec: FactRecord, width: int = LINE_WIDTH) -> str:
    """One compact line: ``id kind scope [STALE: reason]  text (task)``, about ``width``
    characters at most (the text is cut with an ellipsis). ``(task)`` is left out when the
    text already names the task."""
    head = f"{rec.key} {rec.kind} {rec.scope}"
    if rec.status == "stale":
        head += " STALE" + (f": {rec.status_reason}" if rec.status_reason else "")
    tail = f" ({rec.task})" if rec.task and rec.task not in rec.text else ""
    room = max(width - len(head) - 2 - len(tail), 20)
    text = rec.text if len(rec.text) <= room else rec.text[: room - 1].rstrip() + "…"
    return safe_text(f"{head}  {text}{tail}")


def parse_id(value: str) -> int:
    """``k17`` or ``17`` -> 17. Raises ``NotFound`` for anything else."""
    m = _ID.fullmatch(value.strip())
    if not m or int(m.group(1)) == 0:
        raise NotFound(f"{value!r} is not a fact id; give one like k17 or 17")
    return int(m.group(1))


def show(store: str | os.PathLike, fact_id: str) -> dict:
    """The whole fact ``fact_id`` (``k17`` or ``17``) as a dict: the §Report fact shape
    (anchors with ``root`` the checkout's path) plus ``status_reason``, ``supersedes``,
    ``related``, ``gone``, ``imported``, ``updated`` and ``provenance``.

    Raises ``NotFound`` and ``sqlite.StoreError``.
    """
    path = Path(store)
    number = parse_id(fact_id)
    with sqlite.reader(path) as store_reader:
        rec = store_reader.fetch([number]).get(number)
        if rec is None:
            raise NotFound(f"no fact k{number} in {path}; 'brainmigrate search' finds ids")
        extra = store_reader.details([number]).get(number, {})
    return fact_dict(rec, extra)


def fact_dict(rec: FactRecord, extra: dict) -> dict:
    """A stored fact as a JSON-able dict (the shape ``show`` and the jsonl export use)."""
    prov = extra.get("provenance", [])
    return {
        **fact_fields(rec),
        "status_reason": rec.status_reason,
        "origin": {"file": prov[0]["file"], "line": prov[0]["line"]} if prov else None,
        "anchors": [anchor_fields(a, a.root) for a in rec.anchors],
        "gone": list(rec.gone),
        "supersedes": [f"k{i}" for i in rec.supersedes],
        "related": [f"k{i}" for i in rec.related],
        "imported": extra.get("imported"),
        "updated": extra.get("updated"),
        "provenance": prov,
    }


def render_fact(fact: dict) -> str:
    """``show``'s text form of ``fact_dict``: a header line, the text, then fields."""
    out = [f"{fact['id']} {fact['kind']} {fact['scope']} ({fact['status']})"]
    out.append(f"  {fact['text']}")
    if fact["status_reason"]:
        out.append(f"status: {fact['status']}: {fact['status_reason']}")
    out.append(f"marker: {fact['marker']}")
    for key in ("task", "run", "created", "imported", "updated"):
        out.append(f"{key}: {fact[key] if fact[key] is not None else '-'}")
    for key in ("supersedes", "related"):
        if fact[key]:
            out.append(f"{key}: {', '.join(fact[key])}")
    out.append(f"anchors: {len(fact['anchors'])}")
    for a in fact["anchors"]:
        where = a["path"]
        if a["lines"]:
            first, last = a["lines"]
            where += f":{first}" if first == last else f":{first}-{last}"
        what = f"{a['symbol']} in {where}" if a["symbol"] else where
        out.append(f"  {a['kind']} {what} ({a['how']}; root {a['root']})")
    if fact["gone"]:
        out.append(f"citing gone files: {len(fact['gone'])}")
        out.extend(f"  {p}" for p in fact["gone"])
    out.append(f"provenance: {len(fact['provenance'])}")
    for p in fact["provenance"]:
        out.append(f"  {p['file']}:{p['line']} (imported {p['imported']})")
    return safe_text("\n".join(out)) + "\n"
