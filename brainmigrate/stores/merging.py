"""The store as an import merges against it (``Stored``), and as a dry run reads it
(``reading``): fact by fact, as the merge asks, never the whole store at once (SPEC.md
§Merge, "known lines").
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Container, Iterator
from pathlib import Path

from brainmigrate.model import FactRecord
from brainmigrate.spill import SpillError, folder, scratch_database
from brainmigrate.stores.connection import check_file, connect, translated
from brainmigrate.stores.errors import Inconsistent, inconsistent
from brainmigrate.stores.facts import read_facts
from brainmigrate.stores.rows import (
    BLANKS,
    ENTRY_OK,
    MAX_ID,
    checked_fact_id,
    checked_id,
    checked_line,
    checked_text,
    entry_row,
    missing,
    provenance_ok,
    provenance_row,
)
from brainmigrate.stores.schema import upgrade

#: The notes files a query is about, given as one JSON list (``?1``).
_CHOSEN = "(SELECT value FROM json_each(?1))"


class Stored:
    """The store as an import merges against it: read fact by fact when the merge needs
    it, so a run never holds the whole store (SPEC.md §Merge, "known lines").

    ``next_id`` is the id a new fact gets; ``entries()`` streams ``(id, scope, numbers,
    tasks, stems)`` of every stored fact (ascending ids) for the merge index; ``fact(id)``
    reads one fact with its anchors and gone paths (``stored`` set, ``snapshot`` taken);
    ``known(fp)`` is the id of the fact a line with fingerprint ``fp`` first fed, or None;
    ``fed(id, file, line, fp)`` says whether the store holds that provenance row;
    ``latest(id)`` is ``(file, line)`` of a fact's last provenance row (its origin);
    ``prefetch(fps)`` reads all four for a batch of lines at once.
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
        self._latest: dict[int, tuple[str, int]] = {}
        # facts whose notes file was renamed: the scope they take (``rename``)
        self._rescoped: dict[int, str] = {}
        if con is not None:
            if con.execute("PRAGMA user_version").fetchone()[0] == 0:
                self._con = None  # a new, empty store
            else:
                top = con.execute("SELECT max(id) FROM facts").fetchone()[0]
                self.next_id = (0 if top is None else checked_fact_id(top)) + 1
                if self.next_id > MAX_ID:
                    raise inconsistent(
                        path, Inconsistent(f"fact k{top} leaves no id for a new fact")
                    )

    def entries(self) -> Iterator[tuple[int, str, frozenset[str], frozenset[str], tuple]]:
        """``(id, scope, numbers, tasks, stems)`` of every stored fact, ascending ids, each
        checked (``rows.entry_row``)."""
        if self._con is None:
            return
        rescoped = self._rescoped
        for row in self._con.execute(
            "SELECT id, scope, numbers, tasks, stems FROM facts ORDER BY id"
        ):
            entry = entry_row(row)
            if rescoped and entry[0] in rescoped:
                entry = (entry[0], rescoped[entry[0]], *entry[2:])
            yield entry

    def of_blocks(
        self, scope: str, blocks: list[tuple[frozenset[str], frozenset[str]]]
    ) -> Iterator[tuple[int, str, frozenset[str], frozenset[str], tuple]]:
        """``entries`` of the stored facts of ``scope`` whose ``(numbers, task ids)`` is one
        of ``blocks`` (the merge rule's blocks: SPEC.md §Merge), ascending ids; one query
        over the scope's facts, for ``put``."""
        if self._con is None or not blocks:
            return
        keys = [(" ".join(sorted(n)), " ".join(sorted(t))) for n, t in blocks]
        head = "SELECT id, scope, numbers, tasks, stems FROM facts WHERE scope=?"
        if len(keys) == 1:  # (twice as fast as the list's test, for a put of one fact)
            rows = self._con.execute(
                f"{head} AND numbers=? AND tasks=? ORDER BY id", (scope, *keys[0])
            )
        else:
            listed = json.dumps([f"{n}\x1f{t}" for n, t in keys])
            rows = self._con.execute(
                f"{head} AND numbers || char(31) || tasks IN (SELECT value FROM json_each(?))"
                " ORDER BY id",
                (scope, listed),
            )
        for row in rows:
            yield entry_row(row)

    def held(self, ids: list[int]) -> set[int]:
        """Which of ``ids`` the store holds."""
        if self._con is None or not ids:
            return set()
        rows = self._con.execute(  # (one value however many ids: no SQL variable limit)
            "SELECT id FROM facts WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(ids),)
        )
        return {checked_fact_id(r[0]) for r in rows}

    def check_entries(self) -> None:
        """Raise ``Inconsistent`` as ``entries`` would, for the first stored fact (by id)
        it refuses, without reading the others: one query finds it."""
        if self._con is None:
            return
        row = self._con.execute(
            f"SELECT id, scope, numbers, tasks, stems FROM facts WHERE NOT ({ENTRY_OK})"
            " ORDER BY id LIMIT 1",
            (BLANKS,),
        ).fetchone()
        if row is not None:
            entry_row(row)

    def prefetch(self, fps: list[str]) -> None:
        """Read at once what ``known``, ``fed``, ``latest`` and ``fact`` will be asked about
        the lines of fingerprints ``fps`` (a few hundred): one query each instead of one a
        line. Forgets what the previous call read."""
        self._asked, self._known, self._fed, self._facts = set(fps), {}, set(), {}
        self._latest = {}
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
            if not provenance_ok(fid, file, line):  # else the checks that name the fault
                at = "a provenance row"
                checked_id(fid, at, "fact_id")
                checked_text(file, at, "file")
                checked_line(line, at, "line")
            fed.add(row[1:])
            held = first.get(fp)
            if held is None or rowid < held[0]:
                first[fp] = (rowid, fid)
        self._known = {fp: fid for fp, (_, fid) in first.items()}
        if self._known:
            ids = sorted(set(self._known.values()))
            self._facts = read_facts(self._con, ids)
            self._latest = self._last_rows(ids)

    def _last_rows(self, ids: list[int]) -> dict[int, tuple[str, int]]:
        """``(file, line)`` of the last provenance row (by rowid) of each of ``ids``."""
        out: dict[int, tuple[str, int]] = {}
        for fid, file, line in self._con.execute(
            "SELECT fact_id, file, line FROM provenance WHERE rowid IN (SELECT max(rowid)"
            f" FROM provenance WHERE fact_id IN ({','.join('?' * len(ids))}) GROUP BY fact_id)",
            ids,
        ):
            fid, file, line, _ = provenance_row(fid, file, line, "")
            out[fid] = (file, line)
        return out

    def latest(self, fid: int) -> tuple[str, int] | None:
        """``(file, line)`` of the provenance row the store recorded last for fact ``fid``
        (its origin: docs/reference.md "The store"), or None when it holds none."""
        if fid not in self._latest and self._con is not None:
            self._latest.update(self._last_rows([fid]))
        return self._latest.get(fid)

    def fact(self, fid: int) -> FactRecord:
        """Stored fact ``fid`` with its anchors and gone paths, its ``snapshot`` taken.
        Raises ``StoreError`` when the store holds no such fact."""
        rec = self._facts.pop(fid, None)
        if rec is None:
            rec = read_facts(self._con, [fid]).get(fid) if self._con is not None else None
        if rec is None:  # a provenance row or an index entry names a fact that is gone
            raise inconsistent(self._path, missing(fid, "provenance"))
        rec.snapshot = rec.state()
        rec.scope = self._rescoped.get(fid, rec.scope)  # a change the write then makes
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
            fid = checked_id(row[0], "a provenance row", "fact_id") if row else None
        if fid is not None and fid >= self.next_id:
            raise inconsistent(self._path, missing(fid, "provenance"))
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
                    ids.append(checked_id(fid, "a provenance row", "fact_id"))
        return out

    def last_lines(
        self, files: list[str], every: bool
    ) -> Iterator[tuple[int, str, int, bool, str, str, str]]:
        """``(id, file, line, inside, status, scope, text)`` of the stored facts whose last
        line (their most recent provenance row) is in one of the notes files ``files``;
        ``inside`` says that every line that ever fed the fact is in them. Without
        ``every``, only the facts ``inside`` and not superseded (those an import that read
        ``files`` may find no longer in the notes). One query over the provenance table."""
        if self._con is None or not files:
            return
        only = "" if every else " AND last.inside AND f.status != 'superseded'"
        rows = self._con.execute(
            f"WITH last(fact_id, r, inside) AS (SELECT fact_id, max(rowid),"
            f" sum(file NOT IN {_CHOSEN}) = 0 FROM provenance GROUP BY fact_id)"
            " SELECT last.fact_id, p.file, p.line, last.inside, f.status, f.scope, f.text"
            " FROM last JOIN provenance p ON p.rowid = last.r JOIN facts f ON f.id = last.fact_id"
            f" WHERE p.file IN {_CHOSEN}{only} ORDER BY p.file, p.line, last.fact_id",
            (json.dumps(files),),
        )
        for fid, file, line, inside, status, scope, text in rows:
            yield (
                checked_id(fid, "a provenance row", "fact_id"),
                checked_text(file, "a provenance row", "file"),
                checked_line(line, "a provenance row", "line"),
                bool(inside),
                status,
                scope,
                text,
            )

    def files(self) -> list[str]:
        """Every notes file the store holds provenance of, by name. Raises
        ``Inconsistent`` for a name no import writes (not text)."""
        if self._con is None:
            return []
        rows = self._con.execute("SELECT DISTINCT file FROM provenance")
        return [checked_text(r[0], "a provenance row", "file") for r in rows]

    def rename(self, old: str, new: str, scopes: dict[str, str]) -> int:
        """Follow the notes file ``old`` renamed to ``new``: its provenance rows move to
        ``new`` (in the store, inside the caller's transaction: a dry run's is a copy), and
        the facts whose last line was in it and whose scope is a key of ``scopes`` take
        its value, as their records say from now on. Returns how many facts moved."""
        ids = [fid for fid, *_ in self.last_lines([old], True)]
        self._con.execute("UPDATE OR IGNORE provenance SET file=? WHERE file=?", (new, old))
        self._con.execute("DELETE FROM provenance WHERE file=?", (old,))
        if ids and scopes:
            marks = ",".join("?" * len(ids))
            for fid, scope in self._con.execute(
                f"SELECT id, scope FROM facts WHERE id IN ({marks})", ids
            ):
                if scope in scopes and scopes[scope] != scope:
                    self._rescoped[fid] = scopes[scope]
        return len(ids)

    def fed_files(self, files: list[str]) -> int:
        """How many of the notes files ``files`` the store holds provenance of."""
        if self._con is None or not files:
            return 0
        return self._con.execute(
            "SELECT count(DISTINCT file) FROM provenance"
            " WHERE file IN (SELECT value FROM json_each(?))",
            (json.dumps(files),),
        ).fetchone()[0]

    def some_files(self, limit: int = 3) -> list[str]:
        """Up to ``limit`` notes files the store was fed from, by name."""
        if self._con is None:
            return []
        return [
            r[0]
            for r in self._con.execute(
                "SELECT DISTINCT file FROM provenance ORDER BY file LIMIT ?", (limit,)
            )
        ]

    def fed(self, fid: int, file: str, line: int, fp: str) -> bool:
        """Whether the store holds the provenance row ``(fid, file, line, fp)``."""
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
def reading(path: Path, roots=()) -> Iterator[Stored]:
    """The store at ``path`` as a dry run merges against it: a copy taken in one read
    (SQLite's backup, about a second for 400 MB) into a temporary database, so the
    merge sees one state of the store and holds no lock on it while it runs; a store in
    WAL mode is read in place, in one read transaction (which holds no writer back). An
    absent or empty file reads as an empty store; ``roots`` are the import's, for the
    copy's upgrade (``schema.upgrade``). Raises ``StoreError`` (also for read
    errors inside the ``with`` block) or ``spill.SpillError`` when the copy cannot be
    written."""
    check_file(path)
    if not path.exists() or path.stat().st_size == 0:
        yield Stored()
        return
    con = connect(path, readonly=True)
    copy = None
    try:
        with translated(path):
            if con.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                # a store another tool put in WAL mode: a reader there sees one state of it
                # and blocks no writer, so it is read in place (a copy of it would be a WAL
                # file SQLite cannot open once its name is gone)
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
            upgrade(copy, path, roots)  # the copy reads as the import's upgraded store would
            yield Stored(copy, path)
    finally:
        con.close()
        if copy is not None:
            copy.close()
