"""``know.db``: the embedded fact store, SQLite with FTS5 (SPEC.md §Store).

Tables: ``facts`` (one row per fact, id ``k<id>``), ``anchors``, ``citations`` (gone
paths), ``provenance`` (every notes file and line that fed a fact, with the line's
fingerprint and when it was imported), ``facts_fts`` (FTS5 over the stemmed words of
text, scope, kind and task; rowid = fact id) and ``meta``. ``PRAGMA user_version`` holds
the schema version: 2 adds each anchor's fingerprint (``verified_commit``, ``target_*``,
``content_hash`` beside the digest and time columns version 1 already had, SPEC.md
§Staleness). A version-1 store is upgraded in place, in the transaction of the first
command that writes it (``_upgrade``); read-only commands read it as it is (its anchors
without fingerprints).

Safety: an import is one ``BEGIN IMMEDIATE`` transaction that takes the write lock before
it reads what it merges against, so a failure or a kill leaves the store as it was and two
imports at once run one after the other. A dry run opens the store read-only.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import stat
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from operator import attrgetter
from pathlib import Path

from brainmigrate import runstate
from brainmigrate.errors import BrainmigrateError
from brainmigrate.fsutil import signals_held
from brainmigrate.model import (
    ANCHOR_KINDS,
    FACT_FIELDS,
    HOWS,
    KINDS,
    MARKERS,
    STATUSES,
    Anchor,
    FactRecord,
)
from brainmigrate.spill import SpillError, folder, scratch_database

SCHEMA_VERSION = 2
#: Versions this one reads (and upgrades when it writes).
READS = (1, 2)
APPLICATION = "brainmigrate"
#: Seconds to wait for another writer before giving up with "store is busy", unless
#: ``BRAINMIGRATE_BUSY_TIMEOUT`` says otherwise (``busy_timeout``).
BUSY_TIMEOUT = 30.0


def busy_timeout() -> float:
    """``BRAINMIGRATE_BUSY_TIMEOUT`` (seconds, a finite number >= 0; unset or empty:
    ``BUSY_TIMEOUT``). Raises ``StoreError`` for any other value, naming the variable."""
    given = os.environ.get("BRAINMIGRATE_BUSY_TIMEOUT", "").strip()
    if not given:
        return BUSY_TIMEOUT
    try:
        seconds = float(given)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise StoreError(
            f"BRAINMIGRATE_BUSY_TIMEOUT={given!r} is not a number of seconds (a number of 0"
            " or more, like 30); set it to one or unset it"
        )
    return seconds


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
    verified_commit TEXT,
    target_kind TEXT,
    target_container TEXT,
    target_name TEXT,
    content_hash TEXT,
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


#: How to fix a store file that cannot be read.
_READ_FIX = "make it readable or pass --store with another path"


class StoreError(BrainmigrateError):
    """The store cannot be opened, read or written; the message names the fix."""


class Inconsistent(BrainmigrateError, ValueError):
    """A row of the store holds what brainmigrate never writes; the message names the row
    and the column (``inconsistent`` makes it a ``StoreError``)."""


def inconsistent(path: Path, exc: Exception) -> StoreError:
    """The ``StoreError`` for a store whose rows do not hold together: what is wrong, and
    how to recover (one line)."""
    return StoreError(
        f"{path}: the store is inconsistent ({exc}); "
        "restore a backup, or import the notes into a new store"
    )


# ------------------------------------------------------------------ what a row may hold
#
# Every value read from the store is checked here, where it enters, against what the
# importer writes: a store another tool changed is refused as inconsistent (exit 2), never
# an internal error later in a report or an export.

#: The largest id SQLite keeps (a signed 64-bit integer).
MAX_ID = 2**63 - 1
_CREATED = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
#: What ``str.strip()`` strips (the characters ``str.isspace`` holds): SQL's ``trim(x, ?)``
#: with these finds a blank text as Python does.
BLANKS = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
    "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def _shown(value) -> str:
    """A stored value as a message shows it: its SQL type, or a short printable text."""
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return "a BLOB"
    if isinstance(value, float):
        return f"the real number {value!r}"
    if isinstance(value, int):
        return str(value)
    text = value.encode("utf-8", "replace").decode("utf-8")
    text = "".join(c if c.isprintable() else "\ufffd" for c in text)
    return repr(text if len(text) <= 40 else text[:39] + "…")


def _bad(where: str, column: str, value, wanted: str) -> Inconsistent:
    return Inconsistent(f"{where}: {column} is {_shown(value)}, not {wanted}")


def _id(value, where: str, column: str = "id") -> int:
    if type(value) is not int or not 1 <= value <= MAX_ID:
        raise _bad(where, column, value, "a fact id of 1 or more")
    return value


def _text(value, where: str, column: str, null: bool = False) -> str | None:
    if value is None and null:
        return None
    if not isinstance(value, str):
        raise _bad(where, column, value, "text" + (" or NULL" if null else ""))
    return value


def _scope(value, where: str) -> str:
    """A fact's scope: text that is not blank (an import's ``--scope`` or ``area:NAME``,
    SPEC.md §Notation, Scope)."""
    if type(value) is not str or not value.strip():
        _text(value, where, "scope")
        raise _bad(where, "scope", value, "a scope (text that is not blank)")
    return value


def _time(value, where: str, column: str) -> str:
    """A time the store records (``imported``, ``updated``): ISO UTC to the second, as an
    import writes it (SPEC.md §Store)."""
    if type(value) is not str or not _CREATED.fullmatch(value):
        _text(value, where, column)
        raise _bad(where, column, value, "a time like 2026-09-23T13:16:09Z")
    return value


def _choice(value, where: str, column: str, choices: tuple[str, ...]) -> str:
    if value not in choices or not isinstance(value, str):
        raise _bad(where, column, value, "one of " + ", ".join(choices))
    return value


def _line(value, where: str, column: str, null: bool = True) -> int | None:
    if value is None and null:
        return None
    if type(value) is not int or not 0 <= value <= MAX_ID:
        raise _bad(where, column, value, "a line number" + (" or NULL" if null else ""))
    return value


def _ids(value, where: str, column: str) -> tuple[int, ...]:
    if value == "[]":  # what nearly every fact holds: no JSON to parse
        return ()
    text = _text(value, where, column)
    try:
        ids = json.loads(text)
    except ValueError:
        raise _bad(where, column, value, "a JSON list of fact ids") from None
    if not isinstance(ids, list) or not all(type(i) is int and 1 <= i <= MAX_ID for i in ids):
        raise _bad(where, column, value, "a JSON list of fact ids")
    return tuple(ids)


def _fact_id(value) -> int:
    return _id(value, f"fact k{value}" if type(value) is int and value > 0 else "a facts row")


def _missing(fid: int, table: str) -> Inconsistent:
    return Inconsistent(f"fact k{fid} is missing, but {table} rows name it")


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
                top = con.execute("SELECT max(id) FROM facts").fetchone()[0]
                self.next_id = (0 if top is None else _fact_id(top)) + 1
                if self.next_id > MAX_ID:
                    raise inconsistent(
                        path, Inconsistent(f"fact k{top} leaves no id for a new fact")
                    )

    def entries(self) -> Iterator[tuple[int, str, frozenset[str], frozenset[str], tuple]]:
        if self._con is None:
            return
        for row in self._con.execute(
            "SELECT id, scope, numbers, tasks, stems FROM facts ORDER BY id"
        ):
            yield _entry(row)

    def check_entries(self) -> None:
        """Raise ``Inconsistent`` as ``entries`` would, for the first stored fact (by id)
        it refuses, without reading the others: one query finds it."""
        if self._con is None:
            return
        row = self._con.execute(
            "SELECT id, scope, numbers, tasks, stems FROM facts WHERE NOT (id >= 1"
            " AND typeof(scope) = 'text' AND trim(scope, ?) != '' AND typeof(numbers) = 'text'"
            " AND typeof(tasks) = 'text' AND typeof(stems) = 'text') ORDER BY id LIMIT 1",
            (BLANKS,),
        ).fetchone()
        if row is not None:
            _entry(row)

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
        fed = self._fed
        for row in self._con.execute(
            "SELECT rowid, fact_id, file, line, fingerprint FROM provenance"
            f" WHERE fingerprint IN ({marks})",
            unique,
        ):
            rowid, fid, file, line, fp = row
            if not (  # the row as the importer writes it; else the check that names the fault
                type(fid) is int
                and 1 <= fid <= MAX_ID
                and type(file) is str
                and type(line) is int
                and 0 <= line <= MAX_ID
            ):
                at = "a provenance row"
                _id(fid, at, "fact_id"), _text(file, at, "file"), _line(line, at, "line")
            fed.add(row[1:])
            held = first.get(fp)
            if held is None or rowid < held[0]:
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
            raise inconsistent(self._path, _missing(fid, "provenance"))
        rec.snapshot = rec.state()
        return rec

    def known(self, fp: str) -> int | None:
        """The stored fact the line of fingerprint ``fp`` fed before, or None. Raises
        ``StoreError`` when that fact is past the store's last one (a provenance row naming a
        deleted fact, which a new fact of this run would otherwise take the id of)."""
        if fp in self._asked:
            fid = self._known.get(fp)
        elif self._con is None:
            return None
        else:
            row = self._con.execute(
                "SELECT fact_id FROM provenance WHERE fingerprint=? ORDER BY rowid LIMIT 1", (fp,)
            ).fetchone()
            fid = _id(row[0], "a provenance row", "fact_id") if row else None
        if fid is not None and fid >= self.next_id:
            raise inconsistent(self._path, _missing(fid, "provenance"))
        return fid

    def fed_lines(self, files: Container[str]) -> dict[tuple[str, int], list[int]]:
        """``(file, line) -> [fact ids]`` of the provenance rows of the notes files
        ``files`` names (one pass over the table), in the order they were recorded."""
        out: dict[tuple[str, int], list[int]] = {}
        if self._con is None:
            return out
        for fid, file, line in self._con.execute(
            "SELECT fact_id, file, line FROM provenance ORDER BY rowid"
        ):
            if file in files:
                ids = out.setdefault((file, line), [])
                if fid not in ids:
                    ids.append(_id(fid, "a provenance row", "fact_id"))
        return out

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


def _entry(row: tuple) -> tuple[int, str, frozenset[str], frozenset[str], tuple]:
    """``(id, scope, numbers, tasks, stems)`` of a facts row, checked (``Inconsistent``)."""
    fid, scope, numbers, tasks, stems = row
    where = f"fact k{_fact_id(fid)}"
    return (
        fid,
        _scope(scope, where),
        _set(_text(numbers, where, "numbers")),
        _set(_text(tasks, where, "tasks")),
        tuple(stems.split(" ")) if _text(stems, where, "stems") else (),
    )


@contextlib.contextmanager
def reading(path: Path) -> Iterator[Stored]:
    """The store at ``path`` as a dry run merges against it: a copy taken in one read
    (SQLite's backup, about a second for 400 MB) into a temporary database, so the
    merge sees one state of the store and holds no lock on it while it runs; a store in
    WAL mode is read in place, in one read transaction (which holds no writer back). An
    absent or empty file reads as an empty store. Raises ``StoreError`` (also for read
    errors inside the ``with`` block) or ``spill.SpillError`` when the copy cannot be
    written."""
    check_file(path)
    if not path.exists() or path.stat().st_size == 0:
        yield Stored()
        return
    con = _connect(path, readonly=True)
    copy = None
    try:
        if con.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
            # a store another tool put in WAL mode: a reader there sees one state of it and
            # blocks no writer, so it is read in place (a copy of it would be a WAL file
            # SQLite cannot open once its name is gone)
            con.execute("BEGIN")
            con.execute("SELECT count(*) FROM sqlite_master").fetchone()
            yield Stored(con, path)
            return
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
    except Inconsistent as exc:
        raise inconsistent(path, exc) from None
    finally:
        con.close()
        if copy is not None:
            copy.close()


def check_file(path: Path) -> None:
    """Raise ``StoreError`` unless ``path`` is absent, empty, or an SQLite file; ``-``
    (standard input or output elsewhere) is no store either."""
    if os.fspath(path) == "-":
        raise StoreError(
            "--store -: a store is a file, not standard input or output; pass --store with"
            " a file path"
        )
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the store ({exc.strerror}); {_READ_FIX}") from None
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
        raise StoreError(f"{path}: cannot read the store ({exc.strerror}); {_READ_FIX}") from None
    if head and head != b"SQLite format 3\x00" and not _journal(path).exists():
        # (with a journal beside it, a first import is being written, or was killed while
        # it was: SQLite waits for the one or rolls the other back)
        raise StoreError(
            f"{path} is not a brainmigrate store (not an SQLite file); "
            "move it away or pass --store with another path"
        )


def real(path: Path) -> Path:
    """The file ``path`` leads to, through symlinks: every path derived from a store (its
    journal, its folder, the file SQLite opens and a failed first import removes) is
    derived from this one, so a journal a killed writer left beside the real file is found
    and rolled back through any link to it."""
    return Path(os.path.realpath(path))


def _journal(path: Path) -> Path:
    path = real(path)
    return path.with_name(path.name + "-journal")


def _recover(path: Path) -> None:
    """Let SQLite roll back a journal a killed writer left (a read-only connection cannot).

    A read-write connection that reads the store rolls a hot journal back; while another
    writer is still at work, it waits for it or reads the last committed state instead.
    """
    if not _journal(path).exists() or not os.access(path, os.W_OK):
        return
    with contextlib.suppress(sqlite3.Error):
        con = sqlite3.connect(real(path), timeout=busy_timeout())
        try:
            con.execute("PRAGMA user_version").fetchone()
        finally:
            con.close()


def _connect(path: Path, readonly: bool) -> sqlite3.Connection:
    try:
        if readonly:
            _recover(path)
            con = sqlite3.connect(
                real(path).as_uri() + "?mode=ro",
                uri=True,
                timeout=busy_timeout(),
                isolation_level=None,
            )
        else:
            con = sqlite3.connect(real(path), timeout=busy_timeout(), isolation_level=None)
        _check_schema(con, path)
    except sqlite3.DatabaseError as exc:
        raise _error(path, exc) from None
    return con


#: SQLite's primary result codes the messages tell apart (``sqlite3.Error.sqlite_errorcode``
#: holds the extended code; its low byte is the primary one).
SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY, SQLITE_IOERR = 5, 6, 8, 10
SQLITE_CORRUPT, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_NOTADB = 11, 13, 14, 26
#: Extended codes of a write that failed (``EFBIG`` past a file size limit gives
#: SQLITE_IOERR_WRITE; only ``ENOSPC`` gives SQLITE_FULL).
_WRITE_FAILED = {778: "write", 1034: "fsync", 1290: "fsync", 1546: "truncate"}


def _error(path: Path, exc: sqlite3.Error, writing: bool = False) -> StoreError:
    """The message for an SQLite error on the store at ``path``, chosen by its result code
    (by its text only when it has none): only SQLITE_FULL says the disk is full. ``writing``:
    the error came from a write transaction, where a bare SQLITE_IOERR is a refused write."""
    msg = str(exc)
    code = getattr(exc, "sqlite_errorcode", None)
    name = getattr(exc, "sqlite_errorname", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary in (SQLITE_BUSY, SQLITE_LOCKED) or (
        primary is None and ("locked" in msg or "busy" in msg)
    ):
        return StoreError(
            f"{path}: store is busy (another import holds it); try again when it is done"
        )
    if primary == SQLITE_READONLY or (
        primary is None and ("readonly" in msg or "read-only" in msg)
    ):
        return StoreError(f"{path}: store is read-only; make it writable or pass --store")
    if primary == SQLITE_FULL:
        return StoreError(
            f"{path}: cannot write the store ({msg}): the disk is full; free space and run"
            " again (the store is as it was)"
        )
    if code in _WRITE_FAILED or (writing and primary == SQLITE_IOERR):
        return StoreError(
            f"{path}: cannot write the store ({msg}): the system refused a"
            f" {_WRITE_FAILED.get(code, 'write')} (a file size limit such as 'ulimit -f', a"
            " quota, or a failing disk); lift it and run again (the store is as it was)"
        )
    if primary in (SQLITE_CORRUPT, SQLITE_NOTADB) or (
        primary is None and ("not a database" in msg or "malformed" in msg or "corrupt" in msg)
    ):
        return StoreError(
            f"{path} is not a readable brainmigrate store ({msg}); "
            "move it away or pass --store with another path"
        )
    if primary == SQLITE_CANTOPEN:
        return StoreError(
            f"{path}: cannot open the store ({msg}); check that it and its folder can be"
            " read (and written, for an import), or pass --store with another path"
        )
    if msg.startswith(("no such table", "no such column")):  # a store edited by hand
        return inconsistent(path, Inconsistent(msg))
    detail = f"{msg}, {name}" if name else msg
    return StoreError(
        f"{path}: store error ({detail}); run again, or restore a backup, or pass --store"
        " with another path (the store is as it was)"
    )


def _check_schema(con: sqlite3.Connection, path: Path) -> None:
    version = con.execute("PRAGMA user_version").fetchone()[0]
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if version < 0:
        raise StoreError(
            f"{path} has schema version {version}, which no brainmigrate writes; "
            "restore a backup, or import the notes into a new store"
        )
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
    if version in READS:
        if "meta" in tables:
            app = con.execute("SELECT value FROM meta WHERE key='application'").fetchone()
        if "meta" not in tables or not app or app[0] != APPLICATION:
            raise StoreError(f"{path} is not a brainmigrate store; pass --store with another path")
        lost = [t for t in _TABLES if t not in tables]
        if lost:
            raise inconsistent(path, Inconsistent(f"table {lost[0]} is missing"))


#: The tables of every store version this one reads.
_TABLES = ("meta", "facts", "anchors", "citations", "provenance", "facts_fts")


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
            fid, file, line, fp = _provenance_row(fid, file, line, fp)
            if fid not in snap.facts:
                raise _missing(fid, "provenance")
            snap.known.setdefault(fp, fid)
            snap.provenance.add((fid, file, line, fp))
        snap.next_id = max(snap.facts, default=0) + 1
        for rec in snap.facts.values():
            rec.snapshot = rec.state()
    except sqlite3.Error as exc:
        raise _error(path, exc) from None
    except Inconsistent as exc:
        raise inconsistent(path, exc) from None
    return snap


def _provenance_row(fid, file, line, fp) -> tuple[int, str, int, str]:
    where = "a provenance row" if type(fid) is not int else f"a provenance row of k{fid}"
    return (
        _id(fid, where, "fact_id"),
        _text(file, where, "file"),
        _line(line, where, "line", null=False),
        _text(fp, where, "fingerprint"),
    )


def _read_facts(con: sqlite3.Connection, ids: list[int] | None = None) -> dict[int, FactRecord]:
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
        f"SELECT id, {', '.join(_COLUMNS)} FROM facts{where} ORDER BY id",
        params,
    ):
        rec = _fact_row(row)
        out[rec.id] = rec
    fingerprint = _fingerprint_columns(con)
    for row in con.execute(
        f"SELECT fact_id, kind, root, path, symbol, line_first, line_last, how{fingerprint}"
        f" FROM anchors WHERE 1{fact_where} ORDER BY rowid",
        params,
    ):
        fid, anchor = _anchor_row(row)
        rec = out.get(fid)
        if rec is None:
            raise _missing(fid, "anchors")
        rec.anchors.append(anchor)
    for fid, p in con.execute(
        f"SELECT fact_id, path FROM citations WHERE state='gone'{fact_where} ORDER BY rowid",
        params,
    ):
        at = "a citations row" if type(fid) is not int else f"a citations row of k{fid}"
        rec = out.get(_id(fid, at, "fact_id"))
        if rec is None:
            raise _missing(fid, "citations")
        rec.gone.append(_text(p, at, "path"))
    _check_links(con, out, every=ids is None)
    return out


def _check_links(con: sqlite3.Connection, facts: dict[int, FactRecord], every: bool) -> None:
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


_KIND_SET, _MARKER_SET, _STATUS_SET = frozenset(KINDS), frozenset(MARKERS), frozenset(STATUSES)


def _fact_row(row: tuple) -> FactRecord:
    """A ``facts`` row as a ``FactRecord``, every column checked (``Inconsistent``).

    The row as the importer writes nearly every one (no links) is checked in one
    expression, the same checks as ``_checked_fact_row`` makes; any other row goes there
    (which also names what is wrong)."""
    fid, scope, kind, marker, text, task, run, created, status, reason = row[:10]
    supersedes, related, stems, numbers, tasks = row[10:]
    if (
        type(fid) is int
        and 1 <= fid <= MAX_ID
        and type(scope) is str
        and scope.strip()
        and kind in _KIND_SET
        and marker in _MARKER_SET
        and status in _STATUS_SET
        and type(text) is str
        and type(stems) is str
        and type(numbers) is str
        and type(tasks) is str
        and supersedes == "[]"
        and related == "[]"
        and (reason is None or type(reason) is str)
        and (created is None or type(created) is str and _CREATED.fullmatch(created))
        and (run is None or type(run) is str and created is not None and run.split() == [run])
        and (
            task is None
            and not tasks
            or type(task) is str
            and tasks
            and set(task.split(" ")) <= set(tasks.split(" "))
        )
        and text.strip()
    ):
        return FactRecord(
            id=fid,
            scope=scope,
            kind=kind,
            marker=marker,
            text=text,
            task=task,
            run=run,
            created=created,
            status=status,
            status_reason=reason,
            stems=tuple(stems.split(" ")) if stems else (),
            numbers=_set(numbers),
            tasks=_set(tasks),
            stored=True,
        )
    return _checked_fact_row(row)


def _checked_fact_row(row: tuple) -> FactRecord:
    """``_fact_row``, each column checked on its own."""
    fid = _fact_id(row[0])
    at = f"fact k{fid}"
    text = _text(row[4], at, "text")
    if not text.strip():
        raise _bad(at, "text", text, "a fact's text")
    created = _text(row[7], at, "created", null=True)
    if created is not None and not _CREATED.fullmatch(created):
        raise _bad(at, "created", created, "a time like 2026-09-23T13:16:09Z")
    run = _text(row[6], at, "run", null=True)
    if run is not None and run.split() != [run]:
        raise _bad(at, "run", run, "one word (a stamp's run)")
    if run is not None and created is None:
        raise Inconsistent(f"{at}: run is set but created is NULL (a stamp gives both)")
    tasks = _set(_text(row[14], at, "tasks"))
    task = _text(row[5], at, "task", null=True)
    if (task is None) != (not tasks) or task is not None and not set(task.split(" ")) <= tasks:
        wanted = "one of the task ids of column tasks" if tasks else "NULL (column tasks is empty)"
        raise _bad(at, "task", task, wanted)
    stems = _text(row[12], at, "stems")
    return FactRecord(
        id=fid,
        scope=_scope(row[1], at),
        kind=_choice(row[2], at, "kind", KINDS),
        marker=_choice(row[3], at, "marker", MARKERS),
        text=text,
        task=task,
        run=run,
        created=created,
        status=_choice(row[8], at, "status", STATUSES),
        status_reason=_text(row[9], at, "status_reason", null=True),
        supersedes=_ids(row[10], at, "supersedes"),
        related=_ids(row[11], at, "related"),
        stems=tuple(stems.split(" ")) if stems else (),
        numbers=_set(_text(row[13], at, "numbers")),
        tasks=tasks,
        stored=True,
    )


_EMPTY: frozenset[str] = frozenset()


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split(" ")) if text else _EMPTY


def _join(values: Iterable[str]) -> str:
    return " ".join(sorted(values))


def check_writable(path: Path) -> None:
    """Raise ``StoreError`` early when the store at ``path`` could not be written."""
    check_file(path)
    # where SQLite writes the journal: beside the file a link leads to
    folder = real(path).parent if path.is_symlink() else path.parent
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
        new = con.execute("PRAGMA user_version").fetchone()[0] == 0
        if new:
            _check_schema(con, path)  # someone else's SQLite file is refused, not extended
            _create(con, indexes=False)
        _upgrade(con)
        _write(con, plan(Stored(con, path)), words, now)
        if new:  # built once over the rows written, not row by row (same transaction)
            _create_indexes(con)
        with signals_held():  # the commit and saying so, with no interrupt between them
            con.execute("COMMIT")
            # for an interrupt after the commit: the store is then whole, not as it was
            runstate.state.committed = str(path)
    except sqlite3.Error as exc:
        _abandon(con, path, existed)
        raise _error(path, exc, writing=True) from None
    except Inconsistent as exc:
        _abandon(con, path, existed)
        raise inconsistent(path, exc) from None
    except OSError as exc:
        _abandon(con, path, existed)
        raise StoreError(
            f"{path}: cannot write the store ({exc.strerror or exc}); free space or pass"
            " --store with a writable path (the store is as it was)"
        ) from None
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
                real(path).unlink()  # the file this run created, not a link to it


#: What turns a store of version ``v`` into one of version ``v + 1``.
_UPGRADES = {
    1: (
        "ALTER TABLE anchors ADD COLUMN verified_commit TEXT",
        "ALTER TABLE anchors ADD COLUMN target_kind TEXT",
        "ALTER TABLE anchors ADD COLUMN target_container TEXT",
        "ALTER TABLE anchors ADD COLUMN target_name TEXT",
        "ALTER TABLE anchors ADD COLUMN content_hash TEXT",
    ),
}


def _upgrade(con: sqlite3.Connection) -> None:
    """Bring the store to ``SCHEMA_VERSION`` inside the caller's open write transaction
    (so a failure later in it rolls the upgrade back too)."""
    version = con.execute("PRAGMA user_version").fetchone()[0]
    while version < SCHEMA_VERSION:
        for statement in _UPGRADES[version]:
            con.execute(statement)
        version += 1
        con.execute(f"PRAGMA user_version = {version}")


def _create(con: sqlite3.Connection, indexes: bool = True) -> None:
    """Create the schema in an empty store; without ``indexes``, its secondary indexes are
    left for ``_create_indexes`` (after a first import's rows are written)."""
    for statement in SCHEMA.split(";"):
        if statement.strip() and (indexes or not _is_index(statement)):
            con.execute(statement)
    con.execute("INSERT INTO meta VALUES ('application', ?)", (APPLICATION,))
    from brainmigrate import __version__

    con.execute("INSERT INTO meta VALUES ('created_by', ?)", (__version__,))
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _is_index(statement: str) -> bool:
    return statement.strip().startswith("CREATE INDEX")


def _create_indexes(con: sqlite3.Connection) -> None:
    """The schema's secondary indexes ``_create(indexes=False)`` left out."""
    for statement in SCHEMA.split(";"):
        if _is_index(statement):
            con.execute(statement)


#: The ``facts`` columns a fact is read from and written to, ``id``, ``imported`` and
#: ``updated`` aside: its ``FACT_FIELDS``, its links, then the merge rule's sets.
_COLUMNS = (*FACT_FIELDS, "supersedes", "related", "stems", "numbers", "tasks")
_INSERT_FACT = (
    f"INSERT INTO facts ({', '.join(_COLUMNS)}, id, imported, updated)"
    f" VALUES ({','.join('?' * (len(_COLUMNS) + 3))})"
)
_UPDATE_FACT = f"UPDATE facts SET {', '.join(f'{c}=?' for c in _COLUMNS)}, updated=? WHERE id=?"


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


def _write(con: sqlite3.Connection, facts: Iterable[FactRecord], words, now: str) -> None:
    """Write ``facts``: new ones inserted, changed stored ones updated, provenance added.

    Rows are collected a batch of facts at a time and written one ``executemany`` a table,
    in the order the facts come (so each table's rows keep the order one statement a row
    gave them); a statement that must see earlier rows (an update of a stored fact, a
    fingerprint) first writes what is collected.
    """
    rows: dict[str, list[tuple]] = {
        sql: [] for sql in (_INSERT_FACT, _INSERT_FTS, _INSERT_ANCHOR, _INSERT_GONE)
    }
    rows[_INSERT_PROVENANCE] = []
    held = 0

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
        changed = not rec.stored
        if not rec.stored:
            rows[_INSERT_FACT].append((*values, rec.id, now, now))
        elif rec.state() != rec.snapshot:
            changed = True
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
        held += 1
        if held >= WRITE_BATCH:
            flush()
            held = 0
    flush()


#: The fingerprint columns of an anchors row (schema version 2), in the order read.
FINGERPRINT_COLUMNS = (
    "signature_digest",
    "body_digest",
    "target_kind",
    "target_container",
    "target_name",
    "verified_commit",
    "verified_at",
    "content_hash",
)


def _anchor_row(row: tuple) -> tuple[int, Anchor]:
    """``(fact id, Anchor)`` of an anchors row (``fact_id, kind, root, path, symbol,
    line_first, line_last, how``, then the ``FINGERPRINT_COLUMNS`` in a version-2 store),
    every column checked (``Inconsistent``) against what an import, ``verify`` and
    ``stale`` write (SPEC.md §Anchors, §Report): ``how`` one of ``HOWS``; the lines both
    NULL or ``first <= last`` (a range written backwards is stored in order; line 0, as
    ``:0`` gives it, is kept); ``kind`` one of ``ANCHOR_KINDS``: a symbol anchor names its
    declaration, a file or folder anchor none."""
    fid, kind, root, p, symbol, first, last, how = row[:8]
    at = "an anchors row" if type(fid) is not int else f"an anchors row of k{fid}"
    fid = _id(fid, at, "fact_id")
    first, last = _line(first, at, "line_first"), _line(last, at, "line_last")
    if (first is None) != (last is None):
        raise _bad(at, "line_first" if first is None else "line_last", None, "a line number")
    if first is not None and first > last:
        raise _bad(at, "line_first", first, f"a line number up to line_last ({last})")
    kind = _choice(kind, at, "kind", ANCHOR_KINDS)
    name = _text(symbol, at, "symbol", null=True) or None
    if (kind == "symbol") != (name is not None):
        wanted = "a declaration's name (kind is symbol)" if name is None else f"'' (kind is {kind})"
        raise _bad(at, "symbol", symbol, wanted)
    base = (
        kind,
        _text(root, at, "root"),
        _text(p, at, "path"),
        name,
        (first, last) if first is not None else None,
        _choice(how, at, "how", HOWS),
    )
    if len(row) > 8 and row[14] is not None:
        sig, body, tkind, tcontainer, tname, commit, verified, chash = (
            _text(v, at, name, null=True)
            for v, name in zip(row[8:], FINGERPRINT_COLUMNS, strict=True)
        )
        target = (tkind, tcontainer, tname) if tkind else None
        return fid, Anchor(*base, sig, body, target, commit, verified, chash)
    return fid, Anchor(*base)


def _fingerprint_columns(con: sqlite3.Connection) -> str:
    """``", signature_digest, …"`` to add to an anchors SELECT in a version-2 store (its
    fingerprint columns, in ``FINGERPRINT_COLUMNS`` order), or "" in a version-1 store."""
    if con.execute("PRAGMA user_version").fetchone()[0] < 2:
        return ""
    return "".join(f", {name}" for name in FINGERPRINT_COLUMNS)


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


def set_fingerprint(con: sqlite3.Connection, fid: int, old: Anchor, new: Anchor) -> None:
    """Record ``new``'s fingerprint on fact ``fid``'s anchor ``old`` (found by its key);
    ``new`` may have another path, symbol and lines (a target that moved). Inside an open
    write transaction of a version-2 store."""
    con.execute(
        "UPDATE OR REPLACE anchors SET path=?, symbol=?, line_first=?, line_last=?,"
        " signature_digest=?, body_digest=?, target_kind=?, target_container=?,"
        " target_name=?, verified_commit=?, verified_at=?, content_hash=?"
        " WHERE fact_id=? AND root=? AND path=? AND symbol=?",
        (
            new.path,
            new.symbol or "",
            new.lines[0] if new.lines else None,
            new.lines[1] if new.lines else None,
            new.signature_digest,
            new.body_digest,
            *(new.target or (None, None, None)),
            new.commit,
            new.verified_at,
            new.content_hash,
            fid,
            old.root,
            old.path,
            old.symbol or "",
        ),
    )


def set_status(
    con: sqlite3.Connection, fid: int, status: str, reason: str | None, now: str
) -> None:
    """Set fact ``fid``'s ``status`` and ``status_reason`` (and ``updated`` to ``now``)."""
    con.execute(
        "UPDATE facts SET status=?, status_reason=?, updated=? WHERE id=?",
        (status, reason, now, fid),
    )


def update(path: Path, work: Callable[[sqlite3.Connection], object]) -> object:
    """Run ``work(con)`` on the existing store at ``path`` in one locked write transaction,
    after upgrading it to ``SCHEMA_VERSION``; returns what ``work`` returns. A failure
    leaves the store as it was. Raises ``StoreError`` (no store, unwritable, busy)."""
    require(path)
    check_writable(path)
    con = None
    try:
        con = _connect(path, readonly=False)
        con.execute("BEGIN IMMEDIATE")
        _upgrade(con)
        out = work(con)
        con.execute("COMMIT")
        return out
    except sqlite3.Error as exc:
        _abandon(con, path, True)
        raise _error(path, exc, writing=True) from None
    except Inconsistent as exc:
        _abandon(con, path, True)
        raise inconsistent(path, exc) from None
    except BaseException:
        _abandon(con, path, True)
        raise
    finally:
        if con is not None:
            con.close()


def read_for_update(
    con: sqlite3.Connection, ids: Iterable[int] | None = None
) -> dict[int, FactRecord]:
    """The facts ``ids`` (None: every anchored fact not superseded) with their anchors,
    inside ``update``'s transaction."""
    if ids is None:
        return read_anchored(con)
    return _read_facts(con, list(ids))


def read_anchored(
    con: sqlite3.Connection, ids: Iterable[int] | None = None
) -> dict[int, FactRecord]:
    """Every fact with an anchor that is not superseded (of ``ids`` when given), by id,
    with its anchors: what staleness reads. Only what it shows and records is read (id,
    scope, kind, marker, text, task, status and its reason; not the merge rule's sets), in
    two plain scans.

    Raises ``sqlite3.Error``, or ``Inconsistent`` for a facts row it reads that
    ``_anchored_fact`` refuses, or an anchors row ``_anchor_row`` refuses. Rows it does
    not read are not checked: what is not read is not shown."""
    facts: dict[int, FactRecord] = {}
    only, args = "", []
    if ids is not None:
        only, args = " AND id IN (SELECT value FROM json_each(?))", [json.dumps(list(ids))]
    for row in con.execute(
        f"SELECT {_ANCHORED_COLUMNS} FROM facts WHERE status != 'superseded'{only}", args
    ):
        rec = _anchored_fact(row)
        facts[rec.id] = rec
    _anchors_of(con, facts)
    return {fid: rec for fid, rec in facts.items() if rec.anchors}


#: The ``facts`` columns ``read_anchored`` reads and ``_anchored_fact`` checks.
_ANCHORED_COLUMNS = "id, scope, kind, marker, text, task, status, status_reason"


def _anchored_fact(row: tuple) -> FactRecord:
    """A ``FactRecord`` of the ``_ANCHORED_COLUMNS`` of a facts row, each checked
    (``Inconsistent``); the merge rule's sets are left empty."""
    fid, scope, kind, marker, text, task, status, reason = row
    fid = _fact_id(fid)
    at = f"fact k{fid}"
    return FactRecord(
        fid,
        _scope(scope, at),
        _choice(kind, at, "kind", KINDS),
        _choice(marker, at, "marker", MARKERS),
        _text(text, at, "text"),
        _text(task, at, "task", null=True),
        None,
        None,
        _choice(status, at, "status", STATUSES),
        _text(reason, at, "status_reason", null=True),
        (),
        _EMPTY,
        _EMPTY,
    )


def _anchors_of(con: sqlite3.Connection, facts: dict[int, FactRecord]) -> None:
    """Add every anchor row of ``facts`` to its record (in the order they were stored),
    each checked as it enters (``_anchor_row``). A row of a fact the store does not hold
    at all raises ``Inconsistent``, as wherever anchors are read."""
    cols = _fingerprint_columns(con)
    others: set[int] = set()  # facts not asked for (superseded, or not of the ids)
    for row in con.execute(
        f"SELECT fact_id, kind, root, path, symbol, line_first, line_last, how{cols}"
        " FROM anchors ORDER BY rowid"
    ):
        fid, anchor = _anchor_row(row)
        rec = facts.get(fid)
        if rec is not None:
            rec.anchors.append(anchor)
        else:
            others.add(fid)
    _check_held(con, others, "anchors")


def _check_held(con: sqlite3.Connection, ids: set[int], table: str) -> None:
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
        raise _missing(gone[0], table)


def scopes(con: sqlite3.Connection) -> list[str]:
    """The scopes of the stored facts, sorted; raises ``Inconsistent`` for one that is not
    a scope (``_scope``)."""
    return sorted(
        {_scope(r[0], "a facts row") for r in con.execute("SELECT DISTINCT scope FROM facts")}
    )


def _ids_of(rows: Iterable[tuple]) -> list[int]:
    """The fact ids in the first column of ``rows``, each checked (``Inconsistent``)."""
    return [_fact_id(r[0]) for r in rows]


def origins(con: sqlite3.Connection, ids: Iterable[int] | None = None) -> dict[int, tuple]:
    """Fact id -> ``(file, line)`` of the first notes line that fed it (its provenance), of
    the facts ``ids`` (None: every fact); each row it returns checked (``Inconsistent``)."""
    only, args = "", []
    if ids is not None:
        only, args = " WHERE fact_id IN (SELECT value FROM json_each(?))", [json.dumps(list(ids))]
    out: dict[int, tuple] = {}
    for fid, file, line in con.execute(
        "SELECT fact_id, file, line FROM provenance WHERE rowid IN"
        f" (SELECT min(rowid) FROM provenance{only} GROUP BY fact_id)",
        args,
    ):
        fid, file, line, _ = _provenance_row(fid, file, line, "")
        out[fid] = (file, line)
    return out


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
        except Inconsistent as exc:
            raise inconsistent(self._path, exc) from None

    def fed_files(self) -> list[str]:
        """The notes files the store's facts were imported from (``provenance.file``, as
        they were named then), each once, sorted."""
        return self._run(
            lambda con: sorted(
                {
                    _text(r[0], "a provenance row", "file")
                    for r in con.execute("SELECT DISTINCT file FROM provenance")
                }
            )
        )

    def details(self, ids: Iterable[int] | None = None) -> dict[int, dict]:
        """See ``details``."""
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
                at = f"fact k{_fact_id(fid)}"
                out[fid] = {
                    "imported": _time(imported, at, "imported"),
                    "updated": _time(updated, at, "updated"),
                    "provenance": [],
                }
            for fid, file, line, imported in con.execute(
                f"SELECT fact_id, file, line, imported FROM provenance{fact_where} ORDER BY rowid",
                params,
            ):
                fid, file, line, _ = _provenance_row(fid, file, line, "")
                entry = out.get(fid)
                if entry is None:
                    raise _missing(fid, "provenance")
                at = f"a provenance row of k{fid}"
                entry["provenance"].append(
                    {"file": file, "line": line, "imported": _time(imported, at, "imported")}
                )
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
        *,
        only: Iterable[int] | None = None,
    ) -> list[int]:
        """Fact ids whose FTS5 words match ``query`` (an FTS5 expression), best BM25 first.

        ``scopes`` keeps facts of those scopes (``areas``: also every ``area:*`` scope),
        ``kinds`` those kinds; superseded facts only with ``superseded``; ``only`` keeps
        those ids. At most ``limit`` ids.
        """
        where, args = _filters(scopes, areas, kinds, superseded, only)
        sql = (
            "SELECT f.id FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid"
            f" WHERE facts_fts MATCH ?{where} ORDER BY bm25(facts_fts), f.id LIMIT ?"
        )

        def work(con: sqlite3.Connection) -> list[int]:
            ids = _ids_of(con.execute(sql, [query, *args, limit]))
            # a text indexed for a fact the store does not hold: the join above hides it
            orphan = con.execute(
                "SELECT rowid FROM facts_fts WHERE facts_fts MATCH ? AND NOT EXISTS"
                " (SELECT 1 FROM facts WHERE id = facts_fts.rowid) LIMIT 1",
                [query],
            ).fetchone()
            if orphan is not None:
                raise _missing(orphan[0], "facts_fts")
            return ids

        return self._run(work)

    def rank(
        self,
        query: str,
        tasks: Sequence[str],
        numbers: Sequence[str],
        scopes: Iterable[str] = (),
        areas: bool = False,
        kinds: Iterable[str] = (),
        superseded: bool = False,
        limit: int = 5,
        *,
        only: Iterable[int] | None = None,
    ) -> list[int]:
        """Search order: the facts of ``tasks`` (task ids, as the ``tasks`` column holds
        them) first, each group in BM25 order of ``query``; then ``match``; then facts
        whose ``numbers`` column holds one of ``numbers`` (a store imported before numbers
        were indexed), by id. Filters as ``match``; at most ``limit`` ids."""
        scopes, kinds = list(scopes), list(kinds)
        only = None if only is None else list(only)
        out: list[int] = []

        def column(name: str, values: Sequence[str]) -> list[int]:
            if not values:
                return []
            where, args = _filters(scopes, areas, kinds, superseded, only)
            likes = " OR ".join(f"(' ' || f.{name} || ' ') LIKE ? ESCAPE '\\'" for _ in values)
            sql = f"SELECT f.id FROM facts f WHERE ({likes}){where} ORDER BY f.id"
            params = [f"% {_like(v)} %" for v in values] + args
            return self._run(lambda con: _ids_of(con.execute(sql, params)))

        of_tasks = column("tasks", tasks)
        if of_tasks:
            ranked = self.match(query, scopes, areas, kinds, superseded, limit, only=of_tasks)
            out.extend(dict.fromkeys([*ranked, *of_tasks]))
        for fid in self.match(query, scopes, areas, kinds, superseded, limit, only=only):
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
        scopes: Iterable[str] = (),
        areas: bool = False,
        kinds: Iterable[str] = (),
        superseded: bool = False,
        limit: int = 5,
    ) -> list[int]:
        """The facts of ``only`` that pass the filters (as ``match``), newest first (by
        ``created``, else when imported; ties: the higher id)."""
        where, args = _filters(scopes, areas, kinds, superseded, list(only))
        sql = (
            f"SELECT f.id FROM facts f WHERE 1{where}"
            " ORDER BY coalesce(f.created, f.imported) DESC, f.id DESC LIMIT ?"
        )
        return self._run(lambda con: _ids_of(con.execute(sql, [*args, limit])))

    def anchored_to(self, matches: Callable[[Anchor], bool]) -> set[int]:
        """Ids of the facts with an anchor for which ``matches(anchor)`` holds."""

        def work(con: sqlite3.Connection) -> set[int]:
            out: set[int] = set()
            for row in con.execute(
                "SELECT fact_id, kind, root, path, symbol, line_first, line_last, how"
                f"{_fingerprint_columns(con)} FROM anchors"
            ):
                fid, a = _anchor_row(row)  # every column checked, as wherever anchors are read
                if fid not in out and matches(a):
                    out.add(fid)
            _check_held(con, out, "anchors")
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
                read_anchored(con, ())  # names the first row it refuses (Inconsistent)
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
        """See ``origins``."""
        return self._run(lambda con: origins(con, ids))

    def version(self) -> int:
        """The store's schema version (``PRAGMA user_version``)."""
        return self._run(lambda con: con.execute("PRAGMA user_version").fetchone()[0])

    def fetch(self, ids: Iterable[int]) -> dict[int, FactRecord]:
        """The facts with these ids (those the store holds), with anchors and gone
        citations; reads only those rows, so it is quick on a large store."""
        ids = [i for i in dict.fromkeys(ids) if 1 <= i <= MAX_ID]  # no other id is stored
        if not ids:
            return {}
        return self._run(lambda con: _read_facts(con, ids))


def _like(value: str) -> str:
    """``value`` with LIKE's wildcards escaped (``\\`` is the escape character)."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _filters(scopes, areas, kinds, superseded, only) -> tuple[str, list]:
    """SQL (`` AND …``) and arguments for search's filters on ``facts f``."""
    sql, args = [], []
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
    if only is not None:
        sql.append(" AND f.id IN (SELECT value FROM json_each(?))")
        args.append(json.dumps(list(only)))
    return "".join(sql), args


def fed_files(path: Path) -> list[str]:
    """``Reader.fed_files`` of the store at ``path``. Raises ``StoreError``."""
    with reader(path) as r:
        return r.fed_files()


def details(path: Path, ids: Iterable[int] | None = None) -> dict[int, dict]:
    """What ``load`` leaves out, per fact id: ``imported``, ``updated`` (ISO UTC times) and
    ``provenance``, a list of ``{"file", "line", "imported"}`` in the order it was recorded.

    ``ids`` limits the answer to those facts, and the rows read (None: every fact).
    Raises ``StoreError``.
    """
    with reader(path) as r:
        return r.details(ids)
