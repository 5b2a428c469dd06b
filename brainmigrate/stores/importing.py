"""The import write: one ``BEGIN IMMEDIATE`` transaction that takes the write lock before
it reads what it merges against, so a failure or a kill leaves the store as it was and two
imports at once run one after the other (SPEC.md §Store).

A commit is recorded in the run state (``runstate.state.committed``), which the CLI reads
when an interrupt comes after it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable
from operator import attrgetter
from pathlib import Path
from typing import TypeVar

from brainmigrate import runstate
from brainmigrate.fsutil import signals_held
from brainmigrate.model import FACT_FIELDS, FactRecord
from brainmigrate.stores.connection import (
    abandon,
    check_file,
    connect,
    folder_lock,
    translated,
)
from brainmigrate.stores.errors import Inconsistent, StoreError
from brainmigrate.stores.facts import check_links
from brainmigrate.stores.merging import Stored
from brainmigrate.stores.rows import COLUMNS, anchor_row, checked_text, fact_ok, fact_row
from brainmigrate.stores.schema import (
    check_schema,
    create,
    create_indexes,
    record_roots,
    upgrade,
)
from brainmigrate.stores.status import set_fingerprint

T = TypeVar("T")


def transact(
    path: Path,
    plan: Callable[[Stored], tuple[Iterable[FactRecord], T]],
    words,
    now: str,
    roots: Iterable[tuple[str, str | None]] = (),
) -> T:
    """Import into the store at ``path`` under its write lock, in one transaction, and
    return what ``plan`` made of it.

    Takes the lock (``BEGIN IMMEDIATE``; another writer makes this wait up to
    ``BUSY_TIMEOUT`` seconds, then "store is busy"), creates the schema in a new or empty
    file, lets ``plan(stored)`` merge against the store as it is and writes the facts it
    returns with its value (``(records, value)``); ``value`` is returned once committed.
    So two imports at once run one after the other, each against what the other wrote.
    ``words(rec)`` gives the stemmed words FTS5 indexes; ``now`` is the ISO time of the
    import; ``roots`` the ``(name, remote)`` of its roots, recorded in the ``roots``
    table when new (``schema.record_roots``). Raises ``StoreError``; on any failure (or a
    kill) the store is left as it was, and a store file this run created is removed again.
    """
    check_file(path)
    existed = path.exists()
    first = not existed or path.stat().st_size == 0
    con = None
    try:
        with translated(path, writing=True):
            try:
                # a first run opens and locks the new file under the folder's lock, so a
                # failed first run never removes it between the two (``abandon``)
                with folder_lock(path) if first else contextlib.nullcontext():
                    con = connect(path, readonly=False)
                    con.execute("BEGIN IMMEDIATE")
                new = con.execute("PRAGMA user_version").fetchone()[0] == 0
                if new:
                    check_schema(con, path)  # someone else's SQLite file is refused, not extended
                    create(con, indexes=False)
                upgrade(con, path, roots)
                record_roots(con, roots)
                records, value = plan(Stored(con, path))
                _write_checked(con, records, words, now, path)
                if new:  # built once over the rows written, not row by row (same transaction)
                    create_indexes(con)
                with signals_held():  # the commit and saying so, with no interrupt between them
                    con.execute("COMMIT")
                    # for an interrupt after the commit: the store is then whole, not as it was
                    runstate.state.committed = str(path)
            except BaseException:
                abandon(con, path, existed)
                raise
    except OSError as exc:
        raise StoreError(
            f"{path}: cannot write the store ({exc.strerror or exc}); free space or pass"
            " --store with a writable path (the store is as it was)"
        ) from None
    finally:
        if con is not None:
            con.close()
    return value


def write(path: Path, facts: Iterable[FactRecord], words, now: str) -> None:
    """Write ``facts`` (new ones with their ids, or changed stored ones) to the store at
    ``path`` in one locked transaction; for building a store from records directly. Same
    errors and safety as ``transact``."""
    facts = list(facts)
    transact(path, lambda _snapshot: (facts, None), words, now)


def prepare(path: str | os.PathLike) -> None:
    """Make the store at ``path`` ready to serve many clients (``serve``, ``mcp``): created
    empty when missing (the schema, no fact), then in SQLite's WAL mode, which it keeps:
    readers see the last commit and never wait for a writer, writers take turns within
    the busy timeout. Raises ``StoreError``."""
    path = Path(path)
    transact(path, lambda _stored: ((), None), lambda _rec: "", "")
    with translated(path, writing=True):
        con = connect(path, readonly=False)
        try:
            con.execute("PRAGMA journal_mode=WAL").fetchone()
        finally:
            con.close()


_INSERT_FACT = (
    f"INSERT INTO facts ({', '.join(COLUMNS)}, id, imported, updated)"
    f" VALUES ({','.join('?' * (len(COLUMNS) + 3))})"
)
_UPDATE_FACT = f"UPDATE facts SET {', '.join(f'{c}=?' for c in COLUMNS)}, updated=? WHERE id=?"


_fact_fields = attrgetter(*FACT_FIELDS)
#: Facts whose rows are written together (``executemany``), one batch a table.
WRITE_BATCH = 2048

_INSERT_FTS = "INSERT INTO facts_fts (rowid, words) VALUES (?, ?)"
_INSERT_ANCHOR = (
    "INSERT OR IGNORE INTO anchors (fact_id, kind, root, path, symbol, line_first,"
    " line_last, how) VALUES (?,?,?,?,?,?,?,?)"
)
_INSERT_GONE = "INSERT OR IGNORE INTO citations (fact_id, state, path) VALUES (?, 'gone', ?)"
_INSERT_PROVENANCE = (
    "INSERT OR IGNORE INTO provenance (fact_id, file, line, fingerprint, imported)"
    " VALUES (?,?,?,?,?)"
)
#: A stored provenance row recorded again, last (a new rowid) with this import's time: the
#: line that fed the fact last in this run, so it is the fact's origin again.
_REFEED_PROVENANCE = (
    "INSERT OR REPLACE INTO provenance (fact_id, file, line, fingerprint, imported)"
    " VALUES (?,?,?,?,?)"
)


def _join(values: Iterable[str]) -> str:
    """``values`` sorted, in one space-separated text (the merge rule's set columns)."""
    return " ".join(sorted(values))


def _write_checked(
    con: sqlite3.Connection, facts: Iterable[FactRecord], words, now: str, path: Path
) -> None:
    """``_write``, every row it writes checked first by the store's own reader: the last
    guard that an import never commits a row a later read refuses (SPEC.md §Store).
    Raises ``StoreError`` for such a row (the caller rolls the transaction back)."""
    try:
        _write(con, facts, words, now)
    except Inconsistent as exc:
        raise StoreError(
            f"{path}: the import made a row the store cannot read back ({exc}); nothing was"
            " written (the store is as it was): fix that value in the input"
        ) from None


def _checked(rec: FactRecord, values: tuple, changed: bool, linked: dict) -> None:
    """Check the rows ``_write`` writes of ``rec`` (its facts row ``values`` when
    ``changed``, its anchors rows as written, fingerprints included, its gone paths)
    with the store's readers (``rows.fact_ok``/``fact_row``, ``rows.anchor_row``), which raise
    ``Inconsistent``; a fact with links goes in ``linked``, for ``facts.check_links``
    once its rows are written. The values are checked as they are bound: what SQLite
    stores of a ``str`` or an ``int`` is that value, so the row reads back the same."""
    if changed:
        row = (rec.id, *values)
        if not fact_ok(row):  # the reader's fast check; else its own, naming what is wrong
            fact_row(row)
        for p in rec.gone:
            checked_text(p, f"a citations row of k{rec.id}", "path")
        if rec.supersedes or rec.related:
            linked[rec.id] = rec
    for a in rec.anchors:
        if changed or a.fingerprinted:
            anchor_row((*_anchor_values(rec.id, a), *_fingerprint_values(a)))


def _anchor_values(fid: int, a) -> tuple:
    """The anchors row ``_INSERT_ANCHOR`` writes of anchor ``a`` of fact ``fid``."""
    first, last = a.lines if a.lines else (None, None)
    return (fid, a.kind, a.root, a.path, a.symbol or "", first, last, a.how)


def _fingerprint_values(a) -> tuple:
    """The fingerprint columns ``status.set_fingerprint`` writes of ``a``, in the order
    ``rows.anchor_row`` reads them (all NULL for an anchor not fingerprinted)."""
    if not a.fingerprinted:
        return (None,) * 10
    target = a.target or (None, None, None)
    return (a.signature_digest, a.body_digest, *target, a.commit, a.verified_at,
            a.content_hash, a.sketch, a.digest_version)  # fmt: skip


def _write(con: sqlite3.Connection, facts: Iterable[FactRecord], words, now: str) -> None:
    """Write ``facts``: new ones inserted, changed stored ones updated, provenance added,
    each row checked first (``_checked``; raises ``Inconsistent``).

    Rows are collected a batch of facts at a time and written one ``executemany`` a table,
    in the order the facts come (so each table's rows keep the order one statement a row
    gave them); a statement that must see earlier rows (an update of a stored fact, a
    fingerprint) first writes what is collected.
    """
    rows: dict[str, list[tuple]] = {
        sql: [] for sql in (_INSERT_FACT, _INSERT_FTS, _INSERT_ANCHOR, _INSERT_GONE)
    }
    rows[_INSERT_PROVENANCE] = []
    rows[_REFEED_PROVENANCE] = []  # after the new rows: the origin is the last row
    held = 0
    linked: dict[int, FactRecord] = {}

    def flush() -> None:
        for sql, batch in rows.items():
            if batch:
                con.executemany(sql, batch)
                batch.clear()

    for rec in facts:
        values = (
            *_fact_fields(rec),
            json.dumps(rec.supersedes) if rec.supersedes else "[]",
            json.dumps(rec.related) if rec.related else "[]",
            _join(rec.stems),
            _join(rec.numbers),
            _join(rec.tasks),
        )
        changed = not rec.stored or rec.state() != rec.snapshot
        _checked(rec, values, changed, linked)
        if not rec.stored:
            rows[_INSERT_FACT].append((*values, rec.id, now, now))
        elif changed:
            flush()
            con.execute(_UPDATE_FACT, (*values, now, rec.id))
            con.execute("DELETE FROM facts_fts WHERE rowid=?", (rec.id,))
            _forget(con, rec)
        if changed:
            rows[_INSERT_FTS].append((rec.id, words(rec)))
            rows[_INSERT_ANCHOR].extend(
                (
                    rec.id,
                    a.kind,
                    a.root,
                    a.path,
                    a.symbol or "",
                    a.lines[0] if a.lines else None,
                    a.lines[1] if a.lines else None,
                    a.how,
                )
                for a in rec.anchors
            )
            rows[_INSERT_GONE].extend((rec.id, p) for p in rec.gone)
        for a in rec.anchors:  # import --verify: fingerprints of new and stored anchors
            if a.fingerprinted:
                flush()
                set_fingerprint(con, rec.id, a, a)
        rows[_INSERT_PROVENANCE].extend(
            (rec.id, f, ln, fp, now) for f, ln, fp in rec.new_provenance
        )
        if rec.refed:
            rows[_REFEED_PROVENANCE].append((rec.id, *rec.refed, now))
        held += 1
        if held >= WRITE_BATCH:
            flush()
            held = 0
    flush()
    if linked:
        check_links(con, linked, every=False)


def _forget(con: sqlite3.Connection, rec: FactRecord) -> None:
    """Delete the anchors and gone citations a stored fact held and no longer holds (a
    line ``check --fix`` rewrote: ``merge.drop_moved``); what it still holds keeps its
    row, fingerprints included."""
    if rec.snapshot is None:
        return
    anchors, gone = rec.snapshot[-2:]  # ``FactRecord.state()`` ends with them
    now = set(rec.anchors)
    con.executemany(
        "DELETE FROM anchors WHERE fact_id=? AND root=? AND path=? AND symbol=?",
        [(rec.id, a.root, a.path, a.symbol or "") for a in anchors if a not in now],
    )
    held = set(rec.gone)
    con.executemany(
        "DELETE FROM citations WHERE fact_id=? AND state='gone' AND path=?",
        [(rec.id, p) for p in gone if p not in held],
    )
