"""``know.db``: the embedded fact store, SQLite with FTS5 (SPEC.md §Store).

Tables: ``facts`` (one row per fact, id ``k<id>``), ``anchors``, ``citations`` (gone
paths), ``provenance`` (every notes file and line that fed a fact, with the line's
fingerprint and when it was imported), ``facts_fts`` (FTS5 over the stemmed words of
text, scope, kind and task; rowid = fact id) and ``meta``. ``PRAGMA user_version`` holds
the schema version.

Safety: an import is one ``BEGIN IMMEDIATE`` transaction that takes the write lock before
it reads what it merges against, so a failure or a kill leaves the store as it was and two
imports at once run one after the other. A dry run opens the store read-only.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from brainmigrate.model import Anchor, FactRecord
from brainmigrate.spill import SpillError, folder, scratch_database

SCHEMA_VERSION = 1
APPLICATION = "brainmigrate"
#: Seconds to wait for another writer before giving up with "store is busy".
BUSY_TIMEOUT = float(os.environ.get("BRAINMIGRATE_BUSY_TIMEOUT", "30"))

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE facts (
    id INTEGER PRIMARY KEY,
    scope TEXT NOT NULL,
    kind TEXT NOT NULL,
    marker TEXT NOT NULL,
    text TEXT NOT NULL,
    task TEXT,
    run TEXT,
    created TEXT,
    status TEXT NOT NULL DEFAULT 'active',
    status_reason TEXT,
    supersedes TEXT NOT NULL DEFAULT '[]',
    related TEXT NOT NULL DEFAULT '[]',
    stems TEXT NOT NULL,
    numbers TEXT NOT NULL,
    tasks TEXT NOT NULL,
    imported TEXT NOT NULL,
    updated TEXT NOT NULL
);
CREATE INDEX facts_scope ON facts (scope);
CREATE TABLE anchors (
    fact_id INTEGER NOT NULL REFERENCES facts (id),
    kind TEXT NOT NULL,
    root TEXT NOT NULL,
    path TEXT NOT NULL,
    symbol TEXT NOT NULL DEFAULT '',
    line_first INTEGER,
    line_last INTEGER,
    how TEXT NOT NULL,
    signature_digest TEXT,
    body_digest TEXT,
    verified_at TEXT,
    PRIMARY KEY (fact_id, root, path, symbol)
);
CREATE INDEX anchors_path ON anchors (path);
CREATE TABLE citations (
    fact_id INTEGER NOT NULL REFERENCES facts (id),
    state TEXT NOT NULL,
    path TEXT NOT NULL,
    PRIMARY KEY (fact_id, state, path)
);
CREATE TABLE provenance (
    fact_id INTEGER NOT NULL REFERENCES facts (id),
    file TEXT NOT NULL,
    line INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    imported TEXT NOT NULL,
    PRIMARY KEY (fact_id, file, line, fingerprint)
);
CREATE INDEX provenance_fingerprint ON provenance (fingerprint);
CREATE VIRTUAL TABLE facts_fts USING fts5 (words, tokenize = 'unicode61');
"""


class StoreError(Exception):
    """The store cannot be opened, read or written; the message names the fix."""


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


class Stored:
    """The store as an import merges against it: read fact by fact when the merge needs
    it, so a run never holds the whole store (SPEC.md §Merge, "known lines").

    ``next_id`` is the id a new fact gets; ``entries()`` streams ``(id, scope, numbers,
    tasks, stems)`` of every stored fact (ascending ids) for the merge index; ``fact(id)``
    reads one fact with its anchors and gone paths (``stored`` set, ``snapshot`` taken);
    ``known(fp)`` is the id of the fact a line with fingerprint ``fp`` first fed, or None;
    ``fed(id, file, line, fp)`` says whether the store holds that provenance row;
    ``prefetch(fps)`` reads all three for a batch of lines at once.
    ``Stored()`` is an empty store. Reads raise ``sqlite3.Error``; ``reading`` and
    ``transact`` turn it into ``StoreError``.
    """

    def __init__(self, con: sqlite3.Connection | None = None, path: Path | None = None) -> None:
        self._con, self._path = con, path
        self.next_id = 1
        # what ``prefetch`` read for the lines about to be merged
        self._asked: set[str] = set()
        self._known: dict[str, int] = {}
        self._fed: set[tuple[int, str, int, str]] = set()
        self._facts: dict[int, FactRecord] = {}
        if con is not None:
            if con.execute("PRAGMA user_version").fetchone()[0] == 0:
                self._con = None  # a new, empty store
            else:
                self.next_id = (con.execute("SELECT max(id) FROM facts").fetchone()[0] or 0) + 1

    def entries(self) -> Iterator[tuple[int, str, frozenset[str], frozenset[str], tuple]]:
        if self._con is None:
            return
        for fid, scope, numbers, tasks, stems in self._con.execute(
            "SELECT id, scope, numbers, tasks, stems FROM facts ORDER BY id"
        ):
            yield fid, scope, _set(numbers), _set(tasks), tuple(stems.split(" ")) if stems else ()

    def prefetch(self, fps: list[str]) -> None:
        """Read at once what ``known``, ``fed`` and ``fact`` will be asked about the lines
        of fingerprints ``fps`` (a few hundred): one query each instead of one a line.
        Forgets what the previous call read."""
        self._asked, self._known, self._fed, self._facts = set(fps), {}, set(), {}
        if self._con is None or not fps:
            return
        unique = list(self._asked)
        marks = ",".join("?" * len(unique))
        first: dict[str, tuple[int, int]] = {}
        for rowid, fid, file, line, fp in self._con.execute(
            "SELECT rowid, fact_id, file, line, fingerprint FROM provenance"
            f" WHERE fingerprint IN ({marks})",
            unique,
        ):
            self._fed.add((fid, file, line, fp))
            if fp not in first or rowid < first[fp][0]:
                first[fp] = (rowid, fid)
        self._known = {fp: fid for fp, (_, fid) in first.items()}
        if self._known:
            self._facts = _read_facts(self._con, sorted(set(self._known.values())))

    def fact(self, fid: int) -> FactRecord:
        rec = self._facts.pop(fid, None)
        if rec is not None:
            rec.snapshot = rec.state()
            return rec
        rec = _read_facts(self._con, [fid]).get(fid) if self._con is not None else None
        if rec is None:  # a provenance row or an index entry names a fact that is gone
            raise StoreError(
                f"{self._path}: the store is inconsistent (fact k{fid} is missing);"
                " restore a backup"
            )
        rec.snapshot = rec.state()
        return rec

    def known(self, fp: str) -> int | None:
        if fp in self._asked:
            return self._known.get(fp)
        if self._con is None:
            return None
        row = self._con.execute(
            "SELECT fact_id FROM provenance WHERE fingerprint=? ORDER BY rowid LIMIT 1", (fp,)
        ).fetchone()
        return row[0] if row else None

    def fed(self, fid: int, file: str, line: int, fp: str) -> bool:
        if fp in self._asked:
            return (fid, file, line, fp) in self._fed
        if self._con is None:
            return False
        return (
            self._con.execute(
                "SELECT 1 FROM provenance WHERE fact_id=? AND file=? AND line=? AND fingerprint=?",
                (fid, file, line, fp),
            ).fetchone()
            is not None
        )


@contextlib.contextmanager
def reading(path: Path) -> Iterator[Stored]:
    """The store at ``path`` as a dry run merges against it: a copy taken in one read
    (SQLite's backup, about a second for 400 MB) into a temporary database, so the
    merge sees one state of the store and holds no lock on it while it runs. An absent or
    empty file reads as an empty store. Raises ``StoreError`` (also for read errors inside
    the ``with`` block) or ``spill.SpillError`` when the copy cannot be written."""
    check_file(path)
    if not path.exists() or path.stat().st_size == 0:
        yield Stored()
        return
    con = _connect(path, readonly=True)
    copy = None
    try:
        copy = scratch_database()
        try:
            con.backup(copy)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise
            raise SpillError(folder(), exc) from None
        con.close()
        yield Stored(copy, path)
    except sqlite3.Error as exc:
        raise _error(path, exc) from None
    finally:
        con.close()
        if copy is not None:
            copy.close()


def check_file(path: Path) -> None:
    """Raise ``StoreError`` unless ``path`` is absent, empty, or an SQLite file."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the store: {exc.strerror}") from None
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        # a FIFO or a device would block or never end: never opened
        raise StoreError(f"{path} is not a regular file; pass --store FILE")
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except FileNotFoundError:
        return
    except IsADirectoryError:
        raise StoreError(f"{path} is a folder; pass --store FILE") from None
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the store: {exc.strerror}") from None
    if head and head != b"SQLite format 3\x00" and not _journal(path).exists():
        # (with a journal beside it, a first import is being written, or was killed while
        # it was: SQLite waits for the one or rolls the other back)
        raise StoreError(
            f"{path} is not a brainmigrate store (not an SQLite file); "
            "move it away or pass --store with another path"
        )


def _journal(path: Path) -> Path:
    return path.with_name(path.name + "-journal")


def _recover(path: Path) -> None:
    """Let SQLite roll back a journal a killed writer left (a read-only connection cannot).

    A read-write connection that reads the store rolls a hot journal back; while another
    writer is still at work, it waits for it or reads the last committed state instead.
    """
    if not _journal(path).exists() or not os.access(path, os.W_OK):
        return
    with contextlib.suppress(sqlite3.Error):
        con = sqlite3.connect(path, timeout=BUSY_TIMEOUT)
        try:
            con.execute("PRAGMA user_version").fetchone()
        finally:
            con.close()


def _connect(path: Path, readonly: bool) -> sqlite3.Connection:
    try:
        if readonly:
            _recover(path)
            con = sqlite3.connect(
                path.absolute().as_uri() + "?mode=ro",
                uri=True,
                timeout=BUSY_TIMEOUT,
                isolation_level=None,
            )
        else:
            con = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)
        _check_schema(con, path)
    except sqlite3.DatabaseError as exc:
        raise _error(path, exc) from None
    return con


def _error(path: Path, exc: sqlite3.Error) -> StoreError:
    msg = str(exc)
    if "locked" in msg or "busy" in msg:
        return StoreError(
            f"{path}: store is busy (another import holds it); try again when it is done"
        )
    if "readonly" in msg or "read-only" in msg:
        return StoreError(f"{path}: store is read-only; make it writable or pass --store")
    if "disk I/O error" in msg or "disk is full" in msg:
        return StoreError(
            f"{path}: cannot write the store ({msg}): the disk may be full or the file too"
            " large; free space and run again (the store is as it was)"
        )
    if "not a database" in msg or "malformed" in msg or "corrupt" in msg:
        return StoreError(
            f"{path} is not a readable brainmigrate store ({msg}); "
            "move it away or pass --store with another path"
        )
    return StoreError(f"{path}: store error: {msg}")


def _check_schema(con: sqlite3.Connection, path: Path) -> None:
    version = con.execute("PRAGMA user_version").fetchone()[0]
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} was written by a newer brainmigrate (schema {version}, this one reads "
            f"{SCHEMA_VERSION}); upgrade brainmigrate"
        )
    if version == 0 and tables:
        raise StoreError(
            f"{path} is an SQLite file but not a brainmigrate store; "
            "move it away or pass --store with another path"
        )
    if version == SCHEMA_VERSION:
        app = con.execute("SELECT value FROM meta WHERE key='application'").fetchone()
        if not app or app[0] != APPLICATION:
            raise StoreError(f"{path} is not a brainmigrate store; pass --store with another path")


def load(path: Path) -> Snapshot:
    """Read the store at ``path`` read-only; an absent or empty file gives an empty snapshot.

    Raises ``StoreError`` for a file that is not a (readable) store or is of a newer schema.
    """
    check_file(path)
    if not path.exists() or path.stat().st_size == 0:
        return Snapshot()
    con = _connect(path, readonly=True)
    try:
        return _load_from(con, path)
    finally:
        con.close()


def _load_from(con: sqlite3.Connection, path: Path) -> Snapshot:
    snap = Snapshot()
    try:
        if con.execute("PRAGMA user_version").fetchone()[0] == 0:
            return snap
        snap.facts = _read_facts(con)
        for fid, file, line, fp in con.execute(
            "SELECT fact_id, file, line, fingerprint FROM provenance ORDER BY rowid"
        ):
            snap.known.setdefault(fp, fid)
            snap.provenance.add((fid, file, line, fp))
        snap.next_id = max(snap.facts, default=0) + 1
        for rec in snap.facts.values():
            rec.snapshot = rec.state()
    except sqlite3.Error as exc:
        raise _error(path, exc) from None
    except (KeyError, ValueError) as exc:
        raise StoreError(f"{path}: the store is inconsistent ({exc}); restore a backup") from None
    return snap


def _read_facts(con: sqlite3.Connection, ids: list[int] | None = None) -> dict[int, FactRecord]:
    """Facts (all, or those of ``ids``) by id, with their anchors and gone citations.

    Raises ``sqlite3.Error``, or ``KeyError``/``ValueError`` for an inconsistent store.
    """
    where, fact_where, params = "", "", []
    if ids is not None:
        marks = ",".join("?" * len(ids))
        where, fact_where, params = f" WHERE id IN ({marks})", f" AND fact_id IN ({marks})", ids
    out: dict[int, FactRecord] = {}
    for row in con.execute(
        "SELECT id, scope, kind, marker, text, task, run, created, status, status_reason,"
        f" supersedes, related, stems, numbers, tasks FROM facts{where} ORDER BY id",
        params,
    ):
        out[row[0]] = FactRecord(
            id=row[0],
            scope=row[1],
            kind=row[2],
            marker=row[3],
            text=row[4],
            task=row[5],
            run=row[6],
            created=row[7],
            status=row[8],
            status_reason=row[9],
            supersedes=tuple(json.loads(row[10])),
            related=tuple(json.loads(row[11])),
            stems=tuple(row[12].split(" ")) if row[12] else (),
            numbers=_set(row[13]),
            tasks=_set(row[14]),
            stored=True,
        )
    for fid, kind, root, p, symbol, first, last, how in con.execute(
        "SELECT fact_id, kind, root, path, symbol, line_first, line_last, how FROM anchors"
        f" WHERE 1{fact_where} ORDER BY rowid",
        params,
    ):
        lines = (first, last) if first is not None else None
        out[fid].anchors.append(Anchor(kind, root, p, symbol or None, lines, how))
    for fid, p in con.execute(
        f"SELECT fact_id, path FROM citations WHERE state='gone'{fact_where} ORDER BY rowid",
        params,
    ):
        out[fid].gone.append(p)
    return out


_EMPTY: frozenset[str] = frozenset()


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split(" ")) if text else _EMPTY


def _join(values: Iterable[str]) -> str:
    return " ".join(sorted(values))


def check_writable(path: Path) -> None:
    """Raise ``StoreError`` early when the store at ``path`` could not be written."""
    check_file(path)
    folder = path.parent if str(path.parent) else Path(".")
    if path.exists():
        if not os.access(path, os.W_OK):
            raise StoreError(f"{path}: store is read-only; make it writable or pass --store")
        con = _connect(path, readonly=True)
        con.close()
    elif not folder.is_dir():
        raise StoreError(f"{path}: folder {folder} does not exist; create it or pass --store")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise StoreError(f"{path}: cannot write in {folder}; pass --store with a writable path")


def transact(path: Path, plan: Callable[[Stored], Iterable[FactRecord]], words, now: str) -> None:
    """Import into the store at ``path`` under its write lock, in one transaction.

    Takes the lock (``BEGIN IMMEDIATE``; another writer makes this wait up to
    ``BUSY_TIMEOUT`` seconds, then "store is busy"), creates the schema in a new or empty
    file, lets ``plan(stored)`` merge against the store as it is and writes the facts it
    returns: so two imports at once run one after the other, each against what the
    other wrote. ``words(rec)`` gives the stemmed words FTS5 indexes; ``now`` is the ISO time
    of the import. Raises ``StoreError``; on any failure (or a kill) the store is left as it
    was, and a store file this run created is removed again.
    """
    check_file(path)
    existed = path.exists()
    con = None
    try:
        con = _connect(path, readonly=False)
        con.execute("BEGIN IMMEDIATE")
        if con.execute("PRAGMA user_version").fetchone()[0] == 0:
            _check_schema(con, path)  # someone else's SQLite file is refused, not extended
            _create(con)
        _write(con, plan(Stored(con, path)), words, now)
        con.execute("COMMIT")
    except sqlite3.Error as exc:
        _abandon(con, path, existed)
        raise _error(path, exc) from None
    except OSError as exc:
        _abandon(con, path, existed)
        raise StoreError(f"{path}: cannot write the store: {exc.strerror or exc}") from None
    except BaseException:
        _abandon(con, path, existed)
        raise
    finally:
        if con is not None:
            con.close()


def write(path: Path, facts: Iterable[FactRecord], words, now: str) -> None:
    """Write ``facts`` (new ones with their ids, or changed stored ones) to the store at
    ``path`` in one locked transaction; for building a store from records directly. Same
    errors and safety as ``transact``."""
    facts = list(facts)
    transact(path, lambda _snapshot: facts, words, now)


def _abandon(con: sqlite3.Connection | None, path: Path, existed: bool) -> None:
    if con is not None:
        if con.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                con.execute("ROLLBACK")
        con.close()
    # a rollback that failed too (a full disk) leaves a hot journal: roll it back now, so
    # the store is as it was (a new one empty, and then removed) when the run ends
    _recover(path)
    if not existed:
        with contextlib.suppress(OSError):
            if path.stat().st_size == 0 and not _journal(path).exists():
                path.unlink()


def _create(con: sqlite3.Connection) -> None:
    for statement in SCHEMA.split(";"):
        if statement.strip():
            con.execute(statement)
    con.execute("INSERT INTO meta VALUES ('application', ?)", (APPLICATION,))
    from brainmigrate import __version__

    con.execute("INSERT INTO meta VALUES ('created_by', ?)", (__version__,))
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _write(con: sqlite3.Connection, facts: Iterable[FactRecord], words, now: str) -> None:
    for rec in facts:
        values = (
            rec.scope,
            rec.kind,
            rec.marker,
            rec.text,
            rec.task,
            rec.run,
            rec.created,
            rec.status,
            rec.status_reason,
            json.dumps(rec.supersedes),
            json.dumps(rec.related),
            _join(rec.stems),
            _join(rec.numbers),
            _join(rec.tasks),
        )
        if not rec.stored:
            con.execute(
                "INSERT INTO facts (scope, kind, marker, text, task, run, created, status,"
                " status_reason, supersedes, related, stems, numbers, tasks, id, imported,"
                " updated) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (*values, rec.id, now, now),
            )
        elif rec.state() != rec.snapshot:
            con.execute(
                "UPDATE facts SET scope=?, kind=?, marker=?, text=?, task=?, run=?, created=?,"
                " status=?, status_reason=?, supersedes=?, related=?, stems=?, numbers=?,"
                " tasks=?, updated=? WHERE id=?",
                (*values, now, rec.id),
            )
            con.execute("DELETE FROM facts_fts WHERE rowid=?", (rec.id,))
        if not rec.stored or rec.state() != rec.snapshot:
            con.execute("INSERT INTO facts_fts (rowid, words) VALUES (?, ?)", (rec.id, words(rec)))
            con.executemany(
                "INSERT OR IGNORE INTO anchors (fact_id, kind, root, path, symbol, line_first,"
                " line_last, how) VALUES (?,?,?,?,?,?,?,?)",
                [
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
                ],
            )
            con.executemany(
                "INSERT OR IGNORE INTO citations (fact_id, state, path) VALUES (?, 'gone', ?)",
                [(rec.id, p) for p in rec.gone],
            )
        con.executemany(
            "INSERT OR IGNORE INTO provenance (fact_id, file, line, fingerprint, imported)"
            " VALUES (?,?,?,?,?)",
            [(rec.id, f, ln, fp, now) for f, ln, fp in rec.new_provenance],
        )


# ------------------------------------------------------------------ reading: export, search, show


def require(path: Path) -> None:
    """Raise ``StoreError`` unless ``path`` holds a store this version can read.

    Absent, empty and never-initialized files are "no store" (the message names
    ``brainmigrate import``); other files fail as in ``load``.
    """
    _open_store(path).close()


def _open_store(path: Path) -> sqlite3.Connection:
    check_file(path)
    missing = StoreError(
        f"{path}: no store here; run 'brainmigrate import NOTES --store {path}' first "
        "or pass --store with the path of a store"
    )
    if not path.exists() or path.stat().st_size == 0:
        raise missing
    con = _connect(path, readonly=True)
    try:
        version = con.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.Error as exc:
        con.close()
        raise _error(path, exc) from None
    if version == 0:
        con.close()
        raise missing
    return con


@contextlib.contextmanager
def reader(path: Path) -> Iterator[Reader]:
    """The store at ``path`` opened once, read-only, for search, show and export.

    Raises ``StoreError`` as ``require`` does; the reader's methods raise ``StoreError``.
    """
    con = _open_store(path)
    try:
        yield Reader(con, path)
    finally:
        con.close()


class Reader:
    """Queries on one open store (``reader``): ``match``, ``fetch`` and ``details``. Every
    method raises ``StoreError`` for a store it cannot read."""

    def __init__(self, con: sqlite3.Connection, path: Path) -> None:
        self._con, self._path = con, path

    def _run(self, work):
        try:
            return work(self._con)
        except sqlite3.Error as exc:
            raise _error(self._path, exc) from None
        except (KeyError, ValueError) as exc:
            raise StoreError(
                f"{self._path}: the store is inconsistent ({exc}); restore a backup"
            ) from None

    def details(self, ids: Iterable[int] | None = None) -> dict[int, dict]:
        """See ``details``."""
        wanted = None if ids is None else list(dict.fromkeys(ids))
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
                out[fid] = {"imported": imported, "updated": updated, "provenance": []}
            for fid, file, line, imported in con.execute(
                f"SELECT fact_id, file, line, imported FROM provenance{fact_where} ORDER BY rowid",
                params,
            ):
                entry = out.get(fid)
                if entry is not None:
                    entry["provenance"].append({"file": file, "line": line, "imported": imported})
            return out

        return self._run(work)

    def match(
        self,
        query: str,
        scopes: Iterable[str] = (),
        areas: bool = False,
        kinds: Iterable[str] = (),
        superseded: bool = False,
        limit: int = 5,
    ) -> list[int]:
        """Fact ids whose FTS5 words match ``query`` (an FTS5 expression), best BM25 first.

        ``scopes`` keeps facts of those scopes (``areas``: also every ``area:*`` scope),
        ``kinds`` those kinds; superseded facts only with ``superseded``. At most
        ``limit`` ids.
        """
        sql = ["SELECT f.id FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid"]
        sql.append(" WHERE facts_fts MATCH ?")
        args: list = [query]
        scopes = list(scopes)
        if scopes or areas:
            parts = []
            if scopes:
                parts.append(f"f.scope IN ({','.join('?' * len(scopes))})")
                args.extend(scopes)
            if areas:
                parts.append("f.scope LIKE 'area:%'")
            sql.append(f" AND ({' OR '.join(parts)})")
        kinds = list(kinds)
        if kinds:
            sql.append(f" AND f.kind IN ({','.join('?' * len(kinds))})")
            args.extend(kinds)
        if not superseded:
            sql.append(" AND f.status != 'superseded'")
        sql.append(" ORDER BY bm25(facts_fts), f.id LIMIT ?")
        args.append(limit)
        return self._run(lambda con: [row[0] for row in con.execute("".join(sql), args)])

    def fetch(self, ids: Iterable[int]) -> dict[int, FactRecord]:
        """The facts with these ids (those the store holds), with anchors and gone
        citations; reads only those rows, so it is quick on a large store."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        return self._run(lambda con: _read_facts(con, ids))


def details(path: Path, ids: Iterable[int] | None = None) -> dict[int, dict]:
    """What ``load`` leaves out, per fact id: ``imported``, ``updated`` (ISO UTC times) and
    ``provenance``, a list of ``{"file", "line", "imported"}`` in the order it was recorded.

    ``ids`` limits the answer to those facts, and the rows read (None: every fact).
    Raises ``StoreError``.
    """
    with reader(path) as r:
        return r.details(ids)
