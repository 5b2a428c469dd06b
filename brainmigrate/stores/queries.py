"""Reading a store for search, show, stale and export: one ``Reader`` over one open
connection, with the filters search applies as one ``Filters`` object.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from brainmigrate.model import Anchor, FactRecord
from brainmigrate.stores.connection import check_file, connect, open_store, translated
from brainmigrate.stores.errors import Inconsistent, StoreError
from brainmigrate.stores.facts import (
    Snapshot,
    check_held,
    fingerprint_columns,
    ids_of,
    origins,
    read_anchored,
    read_facts,
    scopes,
    snapshot_of,
)
from brainmigrate.stores.rows import (
    MAX_ID,
    anchor_row,
    checked_fact_id,
    checked_text,
    checked_time,
    missing,
    provenance_row,
)


class Filters(NamedTuple):
    """What a search keeps: facts of ``scopes`` (exact scope names; with ``areas`` also
    every ``area:*`` scope; neither: every scope), of ``kinds`` (empty: every kind), and
    superseded facts only with ``superseded``."""

    scopes: Sequence[str] = ()
    areas: bool = False
    kinds: Sequence[str] = ()
    superseded: bool = False


#: No filter but the default one: superseded facts left out.
EVERY = Filters()


@contextlib.contextmanager
def reader(path: Path) -> Iterator[Reader]:
    """The store at ``path`` opened once, read-only, for search, show, stale and export,
    in one read transaction (``connection.begin_read``): every query of the ``with``
    block sees the store as one commit left it, so reads that must agree (the facts and
    their provenance) do, while an import commits beside them.

    Raises ``StoreError`` as ``require`` does; the reader's methods raise ``StoreError``.
    """
    con = open_store(path)
    try:
        yield Reader(con, path)
    finally:
        con.close()


def recorded_roots(path: Path) -> list[tuple[str, str | None]]:
    """``Reader.recorded_roots`` of the store at ``path``; none when there is no store
    there yet or it cannot be read (the import that asks reports that itself)."""
    try:
        if not path.is_file() or path.stat().st_size == 0:
            return []
        with reader(path) as r:
            return r.recorded_roots()
    except (StoreError, OSError):
        return []


class Reader:
    """Queries on one open store (``reader``, or ``status.Updater.reader`` inside a write
    transaction, ``writing``): the one way the store is read outside an import. Every
    method raises ``StoreError`` for a store it cannot read (``connection.translated``)."""

    def __init__(self, con: sqlite3.Connection, path: Path, writing: bool = False) -> None:
        self._con, self._path, self._writing = con, path, writing

    def _run(self, work):
        with translated(self._path, self._writing):
            return work(self._con)

    def snapshot(self) -> Snapshot:
        """The whole store in memory (``facts.Snapshot``), as an export reads it."""
        return self._run(snapshot_of)

    def fed_files(self) -> list[str]:
        """The notes files the store's facts were imported from (``provenance.file``, as
        they were named then), each once, sorted."""
        return self._run(
            lambda con: sorted(
                {
                    checked_text(r[0], "a provenance row", "file")
                    for r in con.execute("SELECT DISTINCT file FROM provenance")
                }
            )
        )

    def details(self, ids: Iterable[int] | None = None) -> dict[int, dict]:
        """What a ``snapshot`` leaves out, per fact id: ``imported``, ``updated`` (ISO UTC
        times) and ``provenance``, a list of ``{"file", "line", "imported"}`` in the order
        it was recorded (the last one is the fact's origin: docs/reference.md "The store"). ``ids``
        limits the answer to those facts, and the rows read (None: every fact)."""
        wanted = None if ids is None else [i for i in dict.fromkeys(ids) if 1 <= i <= MAX_ID]
        if wanted == []:
            return {}
        where = fact_where = ""
        if wanted is not None:
            marks = ",".join("?" * len(wanted))
            where, fact_where = f" WHERE id IN ({marks})", f" WHERE fact_id IN ({marks})"
        params = wanted or []

        def work(con: sqlite3.Connection) -> dict[int, dict]:
            out: dict[int, dict] = {}
            for fid, imported, updated in con.execute(
                f"SELECT id, imported, updated FROM facts{where}", params
            ):
                at = f"fact k{checked_fact_id(fid)}"
                out[fid] = {
                    "imported": checked_time(imported, at, "imported"),
                    "updated": checked_time(updated, at, "updated"),
                    "provenance": [],
                }
            for fid, file, line, imported in con.execute(
                f"SELECT fact_id, file, line, imported FROM provenance{fact_where} ORDER BY rowid",
                params,
            ):
                fid, file, line, _ = provenance_row(fid, file, line, "")
                entry = out.get(fid)
                if entry is None:
                    raise missing(fid, "provenance")
                at = f"a provenance row of k{fid}"
                entry["provenance"].append(
                    {"file": file, "line": line, "imported": checked_time(imported, at, "imported")}
                )
            return out

        return self._run(work)

    def match(
        self,
        query: str,
        filters: Filters = EVERY,
        limit: int = 5,
        *,
        only: Iterable[int] | None = None,
    ) -> list[int]:
        """Fact ids whose FTS5 words match ``query`` (an FTS5 expression), best BM25 first,
        of the facts ``filters`` keeps; ``only`` keeps those ids. At most ``limit`` ids.
        """
        where, args = _filters(filters, only)
        sql = (
            "SELECT f.id FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid"
            f" WHERE facts_fts MATCH ?{where} ORDER BY bm25(facts_fts), f.id LIMIT ?"
        )

        def work(con: sqlite3.Connection) -> list[int]:
            ids = ids_of(con.execute(sql, [query, *args, limit]))
            # a text indexed for a fact the store does not hold: the join above hides it
            orphan = con.execute(
                "SELECT rowid FROM facts_fts WHERE facts_fts MATCH ? AND NOT EXISTS"
                " (SELECT 1 FROM facts WHERE id = facts_fts.rowid) LIMIT 1",
                [query],
            ).fetchone()
            if orphan is not None:
                raise missing(orphan[0], "facts_fts")
            return ids

        return self._run(work)

    def rank(
        self,
        query: str,
        tasks: Sequence[str],
        numbers: Sequence[str],
        filters: Filters = EVERY,
        limit: int = 5,
        *,
        only: Iterable[int] | None = None,
    ) -> list[int]:
        """Search order: the facts of ``tasks`` (task ids, as the ``tasks`` column holds
        them) first, each group in BM25 order of ``query``; then ``match``; then facts
        whose ``numbers`` column holds one of ``numbers`` (a store imported before numbers
        were indexed), by id. Filters as ``match``; at most ``limit`` ids."""
        filters = filters._replace(scopes=list(filters.scopes), kinds=list(filters.kinds))
        only = None if only is None else list(only)
        out: list[int] = []

        def column(name: str, values: Sequence[str]) -> list[int]:
            if not values:
                return []
            where, args = _filters(filters, only)
            likes = " OR ".join(f"(' ' || f.{name} || ' ') LIKE ? ESCAPE '\\'" for _ in values)
            sql = f"SELECT f.id FROM facts f WHERE ({likes}){where} ORDER BY f.id"
            params = [f"% {_like(v)} %" for v in values] + args
            return self._run(lambda con: ids_of(con.execute(sql, params)))

        of_tasks = column("tasks", tasks)
        if of_tasks:
            ranked = self.match(query, filters, limit, only=of_tasks)
            out.extend(dict.fromkeys([*ranked, *of_tasks]))
        for fid in self.match(query, filters, limit, only=only):
            if fid not in out:
                out.append(fid)
        if len(out) < limit:
            for fid in column("numbers", numbers):
                if fid not in out:
                    out.append(fid)
        return out[:limit]

    def newest(
        self,
        only: Iterable[int],
        filters: Filters = EVERY,
        limit: int = 5,
    ) -> list[int]:
        """The facts of ``only`` that pass the filters (as ``match``), newest first (by
        ``created``, else when imported; ties: the higher id)."""
        where, args = _filters(filters, list(only))
        sql = (
            f"SELECT f.id FROM facts f WHERE 1{where}"
            " ORDER BY coalesce(f.created, f.imported) DESC, f.id DESC LIMIT ?"
        )
        return self._run(lambda con: ids_of(con.execute(sql, [*args, limit])))

    def anchored_to(self, matches: Callable[[Anchor], bool]) -> set[int]:
        """Ids of the facts with an anchor for which ``matches(anchor)`` holds."""

        def work(con: sqlite3.Connection) -> set[int]:
            out: set[int] = set()
            for row in con.execute(
                "SELECT fact_id, kind, root, path, symbol, line_first, line_last, how"
                f"{fingerprint_columns(con)} FROM anchors"
            ):
                fid, a = anchor_row(row)  # every column checked, as wherever anchors are read
                if fid not in out and matches(a):
                    out.add(fid)
            check_held(con, out, "anchors")
            return out

        return self._run(work)

    def scopes(self) -> list[str]:
        """The scopes of the stored facts, sorted (``scopes``)."""
        return self._run(scopes)

    def anchored(self, ids: Iterable[int] | None = None) -> dict[int, FactRecord]:
        """Every fact with an anchor that is not superseded (``read_anchored``)."""
        return self._run(lambda con: read_anchored(con, ids))

    def anchored_files(self) -> list[tuple[str, str, str]]:
        """Distinct ``(root, path, content_hash)`` of the fingerprinted anchors of facts
        that are not superseded (a version-2 store). A value that is not text refuses the
        store as a read of every anchored fact does (``read_anchored``), before any file
        is looked at."""

        def work(con: sqlite3.Connection) -> list[tuple[str, str, str]]:
            files = con.execute(
                "SELECT DISTINCT root, path, content_hash FROM anchors"
                " WHERE content_hash IS NOT NULL"
                " AND fact_id IN (SELECT id FROM facts WHERE status != 'superseded')"
            ).fetchall()
            if not all(type(r) is str and type(p) is str and type(h) is str for r, p, h in files):
                read_anchored(con)  # names the first row it refuses (Inconsistent)
                raise Inconsistent("an anchors row: root, path or content_hash is not text")
            return files

        return self._run(work)

    def suspects(self, fresh: set[tuple[str, str, str]]) -> tuple[list[int], int]:
        """Of the anchored facts that are not superseded: the ids of those with an anchor
        whose ``(root, path, content_hash)`` is not in ``fresh``, or stored as stale (they
        must be read); and how many others there are (fresh as they stand)."""

        def work(con: sqlite3.Connection) -> tuple[list[int], int]:
            live = {
                fid: status
                for fid, status in con.execute(
                    "SELECT id, status FROM facts WHERE status != 'superseded'"
                )
            }
            anchored: set[int] = set()
            suspect: set[int] = set()
            for fid, root, p, chash in con.execute(
                "SELECT fact_id, root, path, content_hash FROM anchors"
            ):
                if fid in live:
                    anchored.add(fid)
                    if (root, p, chash) not in fresh or live[fid] == "stale":
                        suspect.add(fid)
            return sorted(suspect), len(anchored) - len(suspect)

        return self._run(work)

    def origins(self, ids: Iterable[int] | None = None) -> dict[int, tuple]:
        """Fact id -> ``(file, line)`` of the notes line that fed it most recently (its
        origin, the provenance row recorded last), of the facts ``ids`` (None: every fact;
        ``facts.origins``)."""
        return self._run(lambda con: origins(con, ids))

    def version(self) -> int:
        """The store's schema version (``PRAGMA user_version``)."""
        return self._run(lambda con: con.execute("PRAGMA user_version").fetchone()[0])

    def recorded_roots(self) -> list[tuple[str, str | None]]:
        """``(name, remote)`` of each root the store records, in the order first recorded
        (none in a store before schema 3, whose anchors hold absolute roots)."""

        def work(con: sqlite3.Connection) -> list[tuple[str, str | None]]:
            if con.execute("PRAGMA user_version").fetchone()[0] < 3:
                return []
            rows = con.execute("SELECT name, remote FROM roots ORDER BY position").fetchall()
            return [(n, r) for n, r in rows if type(n) is str and type(r) in (str, type(None))]

        return self._run(work)

    @property
    def base(self) -> str:
        """The folder the store's relative roots are read in (``roots.store_base``)."""
        from brainmigrate.roots import store_base

        return store_base(self._path)

    def fetch(self, ids: Iterable[int]) -> dict[int, FactRecord]:
        """The facts with these ids (those the store holds), with anchors and gone
        citations; reads only those rows, so it is quick on a large store."""
        ids = [i for i in dict.fromkeys(ids) if 1 <= i <= MAX_ID]  # no other id is stored
        if not ids:
            return {}
        return self._run(lambda con: read_facts(con, ids))


def _like(value: str) -> str:
    """``value`` with LIKE's wildcards escaped (``\\`` is the escape character)."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _filters(filters: Filters, only: Iterable[int] | None) -> tuple[str, list]:
    """SQL (`` AND …``) and arguments for ``filters`` (and the ids ``only``) on ``facts f``."""
    sql, args = [], []
    scopes, areas = list(filters.scopes), filters.areas
    if scopes or areas:
        parts = []
        if scopes:
            parts.append(f"f.scope IN ({','.join('?' * len(scopes))})")
            args.extend(scopes)
        if areas:
            parts.append("f.scope LIKE 'area:%'")
        sql.append(f" AND ({' OR '.join(parts)})")
    kinds = list(filters.kinds)
    if kinds:
        sql.append(f" AND f.kind IN ({','.join('?' * len(kinds))})")
        args.extend(kinds)
    if not filters.superseded:
        sql.append(" AND f.status != 'superseded'")
    if only is not None:
        sql.append(" AND f.id IN (SELECT value FROM json_each(?))")
        args.append(json.dumps(list(only)))
    return "".join(sql), args


def load(path: Path) -> Snapshot:
    """Read the store at ``path`` read-only (``Reader.snapshot``); an absent or empty file
    gives an empty snapshot. Raises ``StoreError`` for a file that is not a (readable)
    store or is of a newer schema."""
    check_file(path)
    if not path.exists() or path.stat().st_size == 0:
        return Snapshot()
    con = connect(path, readonly=True, snapshot=True)
    try:
        return Reader(con, path).snapshot()
    finally:
        con.close()
