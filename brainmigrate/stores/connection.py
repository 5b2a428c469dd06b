"""Opening the store, and the one translation of what SQLite raises into ``StoreError``
(``translated``): every read and write of the store runs inside it.

Safety: a read-only command opens the store read-only, after letting SQLite roll back a
journal a killed writer left (``recover``); every path derived from a store goes through
its symlinks first (``real``).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

from brainmigrate.stores.errors import Inconsistent, StoreBusy, StoreError, inconsistent
from brainmigrate.stores.schema import check_schema

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


#: How to fix a store file that cannot be read.
_READ_FIX = "make it readable or pass --store with another path"


#: The files (device, inode) ``check_file`` found to be SQLite files in this process: not
#: opened again. Closing any descriptor of a file drops every POSIX lock the process holds
#: on it, SQLite's included: in the daemon, where other threads' connections hold the
#: store's locks, a header read at each request let another process take the store for
#: its own (it checkpointed and removed the WAL under them: "disk I/O error").
_CHECKED: set[tuple[int, int]] = set()


def check_file(path: Path) -> None:
    """Raise ``StoreError`` unless ``path`` is absent, empty, or an SQLite file; ``-``
    (standard input or output elsewhere) is no store either. A file found to be an SQLite
    file is not opened again by this process (``_CHECKED``)."""
    if os.fspath(path) == "-":
        raise StoreError(
            "--store -: a store is a file, not standard input or output; pass --store with"
            " a file path"
        )
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the store ({exc.strerror}); {_READ_FIX}") from None
    mode = st.st_mode
    if (st.st_dev, st.st_ino) in _CHECKED:
        return
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
    if head == b"SQLite format 3\x00":
        _CHECKED.add((st.st_dev, st.st_ino))
    if head and head != b"SQLite format 3\x00" and not journal(path).exists():
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


def journal(path: Path) -> Path:
    """The rollback journal SQLite keeps beside the file ``path`` leads to."""
    path = real(path)
    return path.with_name(path.name + "-journal")


def recover(path: Path) -> None:
    """Let SQLite roll back a journal a killed writer left (a read-only connection cannot).

    A read-write connection that reads the store rolls a hot journal back; while another
    writer is still at work, it waits for it or reads the last committed state instead.
    """
    if not journal(path).exists() or not os.access(path, os.W_OK):
        return
    with contextlib.suppress(sqlite3.Error):
        con = sqlite3.connect(real(path), timeout=busy_timeout())
        try:
            con.execute("PRAGMA user_version").fetchone()
        finally:
            con.close()


def connect(path: Path, readonly: bool, snapshot: bool = False) -> sqlite3.Connection:
    """A connection to the store at ``path`` (read-only, after ``recover``, or read-write;
    autocommit: each caller begins its own transaction) whose schema ``check_schema``
    accepts. With ``snapshot`` (read-only only) the connection is inside one read
    transaction from before the schema is checked until it is closed (``begin_read``).
    Raises ``StoreError``."""
    with translated(path):
        if readonly:
            recover(path)
            con = sqlite3.connect(
                real(path).as_uri() + "?mode=ro",
                uri=True,
                timeout=busy_timeout(),
                isolation_level=None,
            )
        else:
            con = sqlite3.connect(real(path), timeout=busy_timeout(), isolation_level=None)
        try:
            if snapshot and readonly:
                begin_read(con)
            check_schema(con, path)
        except BaseException:
            con.close()
            raise
    return con


def begin_read(con: sqlite3.Connection) -> None:
    """Put ``con`` inside one read transaction that lasts until it is closed: every query
    after this sees the store as one commit left it. A store in SQLite's rollback-journal
    mode (the mode brainmigrate leaves it in) is read under a shared lock, so an import
    that wants to commit waits for the read to end (up to ``busy_timeout``); in WAL mode
    the read sees the last commit before it began and holds no writer back. The read
    that starts the transaction is done here, so it begins now, not at the first query.
    Raises ``sqlite3.Error``."""
    con.execute("BEGIN DEFERRED")
    con.execute("SELECT count(*) FROM sqlite_master").fetchone()


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
        return StoreBusy(
            f"{path}: store is busy (another writer holds it); try again when it is done"
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


@contextlib.contextmanager
def translated(path: Path, writing: bool = False) -> Iterator[None]:
    """Run the ``with`` block with what it raises about the store at ``path`` turned into a
    ``StoreError``: an ``sqlite3.Error`` by its result code (``_error``; ``writing``: inside
    a write transaction), an ``Inconsistent`` row as "the store is inconsistent"
    (``inconsistent``). Anything else passes through as it is."""
    try:
        yield
    except sqlite3.Error as exc:
        raise _error(path, exc, writing) from None
    except Inconsistent as exc:
        raise inconsistent(path, exc) from None


def check_writable(path: Path) -> None:
    """Raise ``StoreError`` early when the store at ``path`` could not be written."""
    check_file(path)
    # where SQLite writes the journal: beside the file a link leads to
    folder = real(path).parent if path.is_symlink() else path.parent
    if path.exists():
        if not os.access(path, os.W_OK):
            raise StoreError(f"{path}: store is read-only; make it writable or pass --store")
        try:
            con = connect(path, readonly=True)
        except StoreError:
            if path.exists():
                raise  # (else a first run that failed removed it meanwhile: none to check)
        else:
            con.close()
    elif not folder.is_dir():
        raise StoreError(f"{path}: folder {folder} does not exist; create it or pass --store")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise StoreError(f"{path}: cannot write in {folder}; pass --store with a writable path")


def abandon(con: sqlite3.Connection | None, path: Path, existed: bool) -> None:
    """Undo a write transaction that failed: roll ``con`` back and close it, roll back a
    journal the rollback left, and remove the store file when this run created it (not
    ``existed``) and it is still empty."""
    if con is not None:
        if con.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                con.execute("ROLLBACK")
        con.close()
    # a rollback that failed too (a full disk) leaves a hot journal: roll it back now, so
    # the store is as it was (a new one empty, and then removed) when the run ends
    recover(path)
    if not existed:
        with contextlib.suppress(OSError, sqlite3.Error), folder_lock(path):
            if path.stat().st_size == 0 and not journal(path).exists():
                _remove_empty(path)


@contextlib.contextmanager
def folder_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock (``flock``) on the folder of the store at ``path``: a first
    run opens and locks a new store file under it, and a failed first run removes the
    empty file it made under it, so it never removes a file another first run has opened
    and not locked yet. A folder that cannot be locked (some network file systems) is
    used without it."""
    try:
        fd = os.open(real(path).parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        yield
        return
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # (releases the lock)


def _remove_empty(path: Path) -> None:
    """Remove the empty store file a failed first run made (the file, not a link to it),
    only when no other run holds its write lock (a first run that opened it since)."""
    probe = sqlite3.connect(real(path), timeout=0, isolation_level=None)
    try:
        probe.execute("BEGIN IMMEDIATE")  # raises "database is locked" when held
        if os.stat(real(path)).st_size == 0:
            real(path).unlink()
    finally:
        probe.close()


def require(path: Path) -> None:
    """Raise ``StoreError`` unless ``path`` holds a store this version can read.

    Absent, empty and never-initialized files are "no store" (the message names
    ``brainmigrate import``); other files fail as in ``load``.
    """
    open_store(path).close()


def open_store(path: Path) -> sqlite3.Connection:
    """The store at ``path`` opened read-only, inside one read transaction until it is
    closed (``begin_read``: every read through it sees one committed state). Raises
    ``StoreError`` as ``require`` does."""
    check_file(path)
    missing = StoreError(
        f"{path}: no store here; run 'brainmigrate import NOTES --store {path}' first "
        "or pass --store with the path of a store"
    )
    if not path.exists() or path.stat().st_size == 0:
        raise missing
    con = connect(path, readonly=True, snapshot=True)
    try:
        with translated(path):
            version = con.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            raise missing
    except BaseException:
        con.close()
        raise
    return con
