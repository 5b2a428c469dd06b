"""Reading facts from an open store connection, every row checked as it enters
(``rows``): the facts with their anchors and gone citations, the anchored facts staleness
reads, the scopes, the origin (latest notes line) of each fact, and the whole store as a
``Snapshot``. These raise ``sqlite3.Error`` and ``Inconsistent``; the ``Reader``, the
import's ``Stored`` and the status updater run them inside ``connection.translated``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from brainmigrate.model import FactRecord
from brainmigrate.stores.errors import Inconsistent
from brainmigrate.stores.rows import (
    ANCHORED_COLUMNS,
    COLUMNS,
    FINGERPRINT_COLUMNS,
    SKETCH_COLUMNS,
    anchor_row,
    anchored_fact_row,
    checked_fact_id,
    checked_id,
    checked_scope,
    checked_text,
    fact_row,
    missing,
    provenance_row,
)

if TYPE_CHECKING:
    import sqlite3


class Snapshot:
    """The whole store in memory, as export reads it: the stored facts and the
    fingerprints of fed lines (an import reads the store as ``Stored``, fact by fact).

    ``facts`` maps id to ``FactRecord`` (ids ascending); ``known`` maps a line fingerprint
    to the id of the fact it fed; ``next_id`` is the id a new fact gets.
    """

    def __init__(self) -> None:
        self.facts: dict[int, FactRecord] = {}
        self.known: dict[str, int] = {}
        self.provenance: set[tuple[int, str, int, str]] = set()
        self.next_id = 1


def snapshot_of(con: sqlite3.Connection) -> Snapshot:
    """The whole store ``con`` reads as a ``Snapshot`` (a new, empty file: an empty one),
    each stored fact's ``snapshot`` taken. Raises ``sqlite3.Error``, or ``Inconsistent``
    for a row it refuses or a provenance row naming a fact that is not stored."""
    snap = Snapshot()
    if con.execute("PRAGMA user_version").fetchone()[0] == 0:
        return snap
    snap.facts = read_facts(con)
    for fid, file, line, fp in con.execute(
        "SELECT fact_id, file, line, fingerprint FROM provenance ORDER BY rowid"
    ):
        fid, file, line, fp = provenance_row(fid, file, line, fp)
        if fid not in snap.facts:
            raise missing(fid, "provenance")
        snap.known.setdefault(fp, fid)
        snap.provenance.add((fid, file, line, fp))
    snap.next_id = max(snap.facts, default=0) + 1
    for rec in snap.facts.values():
        rec.snapshot = rec.state()
    return snap


def read_facts(con: sqlite3.Connection, ids: list[int] | None = None) -> dict[int, FactRecord]:
    """Facts (all, or those of ``ids``) by id, with their anchors and gone citations.

    Raises ``sqlite3.Error``, or ``Inconsistent`` for a row that holds what the importer
    never writes (a wrong type, an unknown kind, a row naming a missing fact).
    """
    where, fact_where, params = "", "", []
    if ids is not None:
        marks = ",".join("?" * len(ids))
        where, fact_where, params = f" WHERE id IN ({marks})", f" AND fact_id IN ({marks})", ids
    out: dict[int, FactRecord] = {}
    for row in con.execute(
        f"SELECT id, {', '.join(COLUMNS)} FROM facts{where} ORDER BY id",
        params,
    ):
        rec = fact_row(row)
        out[rec.id] = rec
    fingerprint = fingerprint_columns(con)
    for row in con.execute(
        f"SELECT fact_id, kind, root, path, symbol, line_first, line_last, how{fingerprint}"
        f" FROM anchors WHERE 1{fact_where} ORDER BY rowid",
        params,
    ):
        fid, anchor = anchor_row(row)
        rec = out.get(fid)
        if rec is None:
            raise missing(fid, "anchors")
        rec.anchors.append(anchor)
    for fid, p in con.execute(
        f"SELECT fact_id, path FROM citations WHERE state='gone'{fact_where} ORDER BY rowid",
        params,
    ):
        at = "a citations row" if type(fid) is not int else f"a citations row of k{fid}"
        rec = out.get(checked_id(fid, at, "fact_id"))
        if rec is None:
            raise missing(fid, "citations")
        rec.gone.append(checked_text(p, at, "path"))
    check_links(con, out, every=ids is None)
    return out


def check_links(con: sqlite3.Connection, facts: dict[int, FactRecord], every: bool) -> None:
    """Raise ``Inconsistent`` for the first of ``facts`` (by id) whose ``supersedes`` or
    ``related`` names a fact the store does not hold (SPEC.md §Store: they are fact ids);
    ``every``: ``facts`` is the whole store. Reads nothing when no fact has a link (the
    importer writes none)."""
    linked = [rec for rec in facts.values() if rec.supersedes or rec.related]
    if not linked:
        return
    named = {i for rec in linked for i in (*rec.supersedes, *rec.related)}
    held = named & facts.keys()
    if not every and named - held:
        held |= {
            r[0]
            for r in con.execute(
                "SELECT id FROM facts WHERE id IN (SELECT value FROM json_each(?))",
                [json.dumps(sorted(named - held))],
            )
        }
    for rec in linked:
        for column in ("supersedes", "related"):
            for i in getattr(rec, column):
                if i not in held:
                    raise Inconsistent(
                        f"fact k{rec.id}: {column} names k{i}, not the id of a stored fact"
                    )


def fingerprint_columns(con: sqlite3.Connection) -> str:
    """``", signature_digest, …"`` to add to an anchors SELECT: the fingerprint columns
    of the store's version, in the order ``anchor_row`` reads them (``FINGERPRINT_COLUMNS``
    from version 2, then ``SKETCH_COLUMNS`` from version 4), or "" in a version-1 store."""
    version = con.execute("PRAGMA user_version").fetchone()[0]
    if version < 2:
        return ""
    names = FINGERPRINT_COLUMNS + (SKETCH_COLUMNS if version >= 4 else ())
    return "".join(f", {name}" for name in names)


def read_anchored(
    con: sqlite3.Connection, ids: Iterable[int] | None = None
) -> dict[int, FactRecord]:
    """Every fact with an anchor that is not superseded (of ``ids`` when given), by id,
    with its anchors: what staleness reads. Only what it shows and records is read (id,
    scope, kind, marker, text, task, status and its reason; not the merge rule's sets), in
    two plain scans.

    Raises ``sqlite3.Error``, or ``Inconsistent`` for a facts row it reads that
    ``anchored_fact_row`` refuses, or an anchors row ``anchor_row`` refuses. Rows it does
    not read are not checked: what is not read is not shown."""
    facts: dict[int, FactRecord] = {}
    only, args = "", []
    if ids is not None:
        only, args = " AND id IN (SELECT value FROM json_each(?))", [json.dumps(list(ids))]
    for row in con.execute(
        f"SELECT {ANCHORED_COLUMNS} FROM facts WHERE status != 'superseded'{only}", args
    ):
        rec = anchored_fact_row(row)
        facts[rec.id] = rec
    _anchors_of(con, facts)
    return {fid: rec for fid, rec in facts.items() if rec.anchors}


def _anchors_of(con: sqlite3.Connection, facts: dict[int, FactRecord]) -> None:
    """Add every anchor row of ``facts`` to its record (in the order they were stored),
    each checked as it enters (``anchor_row``). A row of a fact the store does not hold
    at all raises ``Inconsistent``, as wherever anchors are read."""
    cols = fingerprint_columns(con)
    others: set[int] = set()  # facts not asked for (superseded, or not of the ids)
    for row in con.execute(
        f"SELECT fact_id, kind, root, path, symbol, line_first, line_last, how{cols}"
        " FROM anchors ORDER BY rowid"
    ):
        rec = facts.get(row[0])
        if rec is None:  # not read, so not checked: only whether its fact is held
            others.add(checked_id(row[0], "an anchors row", "fact_id"))
            continue
        rec.anchors.append(anchor_row(row)[1])
    check_held(con, others, "anchors")


def check_held(con: sqlite3.Connection, ids: set[int], table: str) -> None:
    """Raise ``Inconsistent`` for the smallest of ``ids`` (fact ids ``table``'s rows name)
    that the store holds no fact of."""
    if not ids:
        return
    held = {
        r[0]
        for r in con.execute(
            "SELECT id FROM facts WHERE id IN (SELECT value FROM json_each(?))",
            [json.dumps(sorted(ids))],
        )
    }
    gone = sorted(ids - held)
    if gone:
        raise missing(gone[0], table)


def scopes(con: sqlite3.Connection) -> list[str]:
    """The scopes of the stored facts, sorted; raises ``Inconsistent`` for one that is not
    a scope (``checked_scope``)."""
    return sorted(
        {
            checked_scope(r[0], "a facts row")
            for r in con.execute("SELECT DISTINCT scope FROM facts")
        }
    )


def ids_of(rows: Iterable[tuple]) -> list[int]:
    """The fact ids in the first column of ``rows``, each checked (``Inconsistent``)."""
    return [checked_fact_id(r[0]) for r in rows]


def origins(con: sqlite3.Connection, ids: Iterable[int] | None = None) -> dict[int, tuple]:
    """Fact id -> ``(file, line)`` of its origin: the provenance row recorded last, the
    line that fed it most recently (docs/reference.md "The store"); of the facts ``ids``
    (None: every fact); each row it returns checked (``Inconsistent``)."""
    only, args = "", []
    if ids is not None:
        only, args = " WHERE fact_id IN (SELECT value FROM json_each(?))", [json.dumps(list(ids))]
    out: dict[int, tuple] = {}
    for fid, file, line in con.execute(
        "SELECT fact_id, file, line FROM provenance WHERE rowid IN"
        f" (SELECT max(rowid) FROM provenance{only} GROUP BY fact_id)",
        args,
    ):
        fid, file, line, _ = provenance_row(fid, file, line, "")
        out[fid] = (file, line)
    return out
