"""What a run keeps for every fact, kept in temporary files instead of memory.

A run keeps something for every fact it reads: the fact and what it names, the merge's
entries, the merged facts. Kept in memory, a run's peak grows with its input. A ``Spill``
(a sequence read in order) keeps one batch in memory and the rest in an unnamed
temporary file; ``Keyed`` (facts by id, changed while the merge runs) keeps a few
thousand in memory and the rest in a temporary SQLite database. Both live in ``TMPDIR``
(``folder``) and their files are removed as soon as they are open, so nothing is left
behind however the process ends.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

from brainmigrate.errors import BrainmigrateError
from brainmigrate.fsutil import printable

if TYPE_CHECKING:  # loaded when a run spills to a database, not by every run
    import sqlite3

_NONE = object()
#: Values ``Keyed`` keeps in memory before it writes them to its database.
CACHE = 4096


class SpillError(BrainmigrateError):
    """A temporary file could not be written (``TMPDIR`` is full or not writable)."""

    def __init__(self, where: str, why: BaseException | str) -> None:
        why = getattr(why, "strerror", None) or str(why)
        super().__init__(
            f"cannot write a temporary file in {printable(where)}: {why}; "
            "set TMPDIR to a writable folder with free space"
        )


def folder() -> str:
    """Where temporary files go: ``$TMPDIR`` when it is set, else the system's folder.

    A ``TMPDIR`` that is not a writable folder raises ``SpillError``, rather than files
    going somewhere the user did not name (as Python's and SQLite's fallbacks would).
    """
    given = os.environ.get("TMPDIR")
    if not given:
        import tempfile  # loaded when something is spilled, not by every run

        try:
            return tempfile.gettempdir()
        except OSError as exc:  # no usable folder at all
            raise SpillError("the system's temporary folder", exc) from None
    if not os.path.isdir(given):
        raise SpillError(given, "not a folder" if os.path.exists(given) else "no such folder")
    if not os.access(given, os.W_OK | os.X_OK):
        raise SpillError(given, "not writable")
    return given


def scratch_database() -> sqlite3.Connection:
    """A new SQLite database in ``folder()`` that only this connection can see: its file is
    removed as soon as it is open, so nothing is left however the process ends. Written
    without a journal (it is thrown away on any failure). Raises ``SpillError``."""
    import sqlite3
    import tempfile

    where = folder()
    try:
        fd, name = tempfile.mkstemp(prefix="brainmigrate-", suffix=".db", dir=where)
        os.close(fd)
    except OSError as exc:
        raise SpillError(where, exc) from None
    try:
        con = sqlite3.connect(name, isolation_level=None)
        con.execute("PRAGMA locking_mode=EXCLUSIVE")  # no one else can open it anyway
        con.execute("PRAGMA journal_mode=OFF")
        con.execute("PRAGMA synchronous=OFF")
        con.execute("PRAGMA temp_store=MEMORY")
        con.execute("PRAGMA cache_size=-4096")
    except sqlite3.Error as exc:
        raise SpillError(where, exc) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)
    return con


#: Items pickled together: large enough that pickling is cheap per item, small enough
#: that a batch is a few hundred kilobytes.
BATCH = 1024
#: A batch is written sooner once the sizes its items were appended with reach this.
BATCH_BYTES = 4 << 20


class Spill:
    """A list that only grows and is read in order: ``append``, ``extend``, ``len``, iterate.

    Items must be picklable; an item read back is a copy of the one appended (the last,
    unwritten batch is read as it is). Several iterations may run at once; appending
    while iterating is not supported. Small spills never touch the disk.
    """

    def __init__(self, items: Iterable[Any] = (), batch: int | None = None) -> None:
        self._batch = batch or BATCH
        self._buffer: list[Any] = []
        self._file: BinaryIO | None = None
        self._spans: list[tuple[int, int]] = []  # (offset, size) of each batch written
        self._end = 0
        self._len = 0
        self._held = 0  # sizes given with the buffered items
        self.extend(items)

    def append(self, item: Any, size: int = 0) -> None:
        """Append ``item``; ``size`` (about its bytes, for large items) makes the batch
        be written sooner, so a few huge items never fill memory."""
        self._buffer.append(item)
        self._len += 1
        self._held += size
        if len(self._buffer) >= self._batch or self._held >= BATCH_BYTES:
            self._flush()

    def extend(self, items: Iterable[Any]) -> None:
        """``append`` each of ``items``, in order."""
        for item in items:
            self.append(item)

    def _flush(self) -> None:
        import pickle  # (a run that never spills does not load it)

        data = pickle.dumps(self._buffer, protocol=pickle.HIGHEST_PROTOCOL)
        where = folder()
        try:
            if self._file is None:
                import tempfile

                self._file = tempfile.TemporaryFile(prefix="brainmigrate-", dir=where)  # noqa: SIM115
            self._file.seek(self._end)
            self._file.write(data)
            self._file.flush()
        except OSError as exc:
            raise SpillError(where, exc) from None
        self._spans.append((self._end, len(data)))
        self._end += len(data)
        self._buffer, self._held = [], 0

    def __len__(self) -> int:
        return self._len

    def __bool__(self) -> bool:
        return self._len > 0

    def __iter__(self) -> Iterator[Any]:
        buffer, spans = self._buffer, list(self._spans)
        if spans:
            import pickle

        for offset, size in spans:
            self._file.seek(offset)
            yield from pickle.loads(self._file.read(size))
        yield from buffer

    def close(self) -> None:
        """Remove the temporary file; the spill is empty afterwards."""
        if self._file is not None:
            self._file.close()
            self._file = None
        self._buffer, self._spans, self._end, self._len, self._held = [], [], 0, 0, 0


#: Items ``sorted_spill`` sorts in memory at a time (a run), and the batch each sorted
#: run is read back in while the runs are merged.
SORT_RUN = 1 << 14
MERGE_BATCH = 256


def sorted_spill(items: Spill, key: Callable[[Any], Any]) -> Spill:
    """The items of ``items`` sorted by ``key`` (a stable sort), as a new ``Spill``;
    ``items`` is closed. An external merge sort: runs of ``SORT_RUN`` items are sorted in
    memory, each kept in a spill of its own, then merged (``heapq.merge``, which keeps
    equal items in the order of their runs), each run read back ``MERGE_BATCH`` items at a
    time, so memory holds one run while sorting and a batch a run while merging. Items
    already in order (the usual case) are returned as they are, after one pass that
    reads them. Raises ``SpillError``."""
    if _in_order(items, key):
        return items
    runs: list[Spill] = []
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= SORT_RUN:
            chunk.sort(key=key)
            runs.append(Spill(chunk, batch=MERGE_BATCH))
            chunk = []
    items.close()
    chunk.sort(key=key)
    if not runs:
        return Spill(chunk)
    runs.append(Spill(chunk, batch=MERGE_BATCH))
    import heapq

    out = Spill(heapq.merge(*runs, key=key))
    for run in runs:
        run.close()
    return out


def _in_order(items: Iterable[Any], key: Callable[[Any], Any]) -> bool:
    """Whether ``items`` come in order of ``key`` (read up to the first that does not)."""
    last = _NONE
    for item in items:
        k = key(item)
        if last is not _NONE and k < last:
            return False
        last = k
    return True


class Merged:
    """The items of sorted spills merged by ``key`` (equal keys in the order of the
    spills, as one stable sort of them all), merged again each time they are read rather
    than copied into one more spill: ``len``, iteration, ``close`` (which closes the
    spills)."""

    def __init__(self, parts: list[Spill], key: Callable[[Any], Any]) -> None:
        self._parts, self._key = parts, key

    def __len__(self) -> int:
        return sum(len(p) for p in self._parts)

    def __bool__(self) -> bool:
        return any(self._parts)

    def __iter__(self) -> Iterator[Any]:
        import heapq

        return heapq.merge(*self._parts, key=self._key)

    def close(self) -> None:
        for part in self._parts:
            part.close()
        self._parts = []


class Sorter:
    """Items appended nearly in order of ``key``, read back in order (a stable sort):
    ``append``, ``extend``, ``len``, then ``sorted()`` once.

    An item at or after the last one kept in order goes to the spill of items in order;
    an earlier one to a second spill, sorted at the end (``sorted_spill``) and merged with
    the first as they are read (``Merged``). Items that come nearly in order (warnings
    made a fact at a time) are so written once and read once, not read to find out,
    sorted in runs and copied. Stable: an item kept in order whose key equals a late
    one's came before it (else that one would not be late), and ``Merged`` gives the
    first spill's items first on equal keys."""

    def __init__(self, key: Callable[[Any], Any], items: Iterable[Any] = ()) -> None:
        self.key = key
        self._kept = Spill()
        self._late: Spill | None = None
        self._last: Any = _NONE
        self.extend(items)

    def append(self, item: Any, size: int = 0) -> None:
        k = self.key(item)
        if self._last is _NONE or not k < self._last:
            self._last = k
            self._kept.append(item, size)
        else:
            if self._late is None:
                self._late = Spill()
            self._late.append(item, size)

    def extend(self, items: Iterable[Any]) -> None:
        for item in items:
            self.append(item)

    def __len__(self) -> int:
        return len(self._kept) + (len(self._late) if self._late is not None else 0)

    def __bool__(self) -> bool:
        return len(self) > 0

    def sorted(self) -> Spill | Merged:
        """The items in order of ``key``, equal keys in the order appended; they now
        belong to what is returned (close that), and this sorter is empty."""
        kept, late = self._kept, self._late
        self._kept, self._late, self._last = Spill(), None, _NONE
        if not late:
            return kept
        return Merged([kept, sorted_spill(late, self.key)], self.key)


class Keyed:
    """Values by int key, most of them in a private temporary SQLite database.

    ``add(key, value)`` stores a value under a new key; ``get(key)`` returns the value or
    None. The value given to ``add`` or returned by ``get`` may be changed in place until
    the next ``add`` or ``get``: up to ``CACHE`` values are kept in memory and written
    back, all but the newest, when more come. ``len`` counts keys;
    iteration yields the values in key order (copies, once they were written). Raises
    ``SpillError`` when the database cannot be written.
    """

    def __init__(self, cache: int | None = None) -> None:
        self._cache_size = cache or CACHE
        self._cache: dict[int, Any] = {}
        self._con: sqlite3.Connection | None = None
        self._where = ""
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def __bool__(self) -> bool:
        return self._len > 0

    def add(self, key: int, value: Any) -> None:
        """Store ``value`` under ``key``, which must not be stored yet."""
        if len(self._cache) >= self._cache_size:
            self._flush()
        self._cache[key] = value
        self._len += 1

    def replace(self, key: int, value: Any) -> None:
        """Store ``value`` under ``key``, which is stored already, in place of its value."""
        if key not in self._cache and len(self._cache) >= self._cache_size:
            self._flush()
        self._cache[key] = value

    def get(self, key: int) -> Any | None:
        """The value kept under ``key`` (from memory, else from the spill file), or None."""
        value = self._cache.get(key)
        if value is not None or self._con is None:
            return value
        row = self._db(lambda con: con.execute("SELECT v FROM t WHERE k=?", (key,)).fetchone())
        if row is None:
            return None
        if len(self._cache) >= self._cache_size:
            self._flush()
        import pickle

        value = self._cache[key] = pickle.loads(row[0])
        return value

    def _db(self, work):
        import sqlite3

        if self._con is None:
            self._con = scratch_database()
            self._where = folder()
            self._db(lambda con: con.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)"))
        try:
            return work(self._con)
        except sqlite3.Error as exc:
            raise SpillError(self._where, exc) from None

    def _flush(self) -> None:
        import pickle

        rows = [(k, pickle.dumps(v, pickle.HIGHEST_PROTOCOL)) for k, v in self._cache.items()]

        def write(con: sqlite3.Connection) -> None:
            con.execute("BEGIN")  # one transaction, not one a row
            try:
                con.executemany("INSERT OR REPLACE INTO t VALUES (?, ?)", rows)
            finally:
                con.execute("COMMIT")

        self._db(write)
        self._cache = {}

    def __iter__(self) -> Iterator[Any]:
        if self._con is None:
            for key in sorted(self._cache):
                yield self._cache[key]
            return
        if self._cache:
            self._flush()
        import pickle
        import sqlite3

        cursor = self._db(lambda con: con.execute("SELECT v FROM t ORDER BY k"))
        try:
            for (data,) in cursor:
                yield pickle.loads(data)
        except sqlite3.Error as exc:
            raise SpillError(self._where, exc) from None

    def values_of(self, keys: Iterable[int], count: int) -> Iterator[Any]:
        """The values of ``keys`` (``count`` stored keys, ascending, each once) in key
        order, read a batch at a time and not kept in memory (iteration, when they are
        every key)."""
        if count == self._len:
            yield from self
            return
        import pickle

        held, keys = self._cache, iter(keys)
        while chunk := list(itertools.islice(keys, 512)):
            ask = [k for k in chunk if k not in held]
            found: dict[int, Any] = {}
            if ask and self._con is not None:
                sql = f"SELECT k, v FROM t WHERE k IN ({','.join('?' * len(ask))})"
                rows = self._db(lambda con, sql=sql, ask=ask: con.execute(sql, ask).fetchall())
                found = {k: pickle.loads(v) for k, v in rows}
            for k in chunk:
                value = held[k] if k in held else found.get(k)
                if value is not None:
                    yield value

    def close(self) -> None:
        """Remove the database; nothing is stored afterwards."""
        if self._con is not None:
            self._con.close()
            self._con = None
        self._cache, self._len = {}, 0
