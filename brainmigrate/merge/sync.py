"""The facts an import finds no longer in the notes, and what ``import --sync`` does with
them (issue 24, "Sync"; docs/reference.md "## The store (`know.db`)").

A stored fact all of whose provenance lies in the notes files this import read, and none
of whose lines the import read again, is no longer in the notes. ``--sync`` retires it:
status ``superseded``, kept with its history. A fact added by this import at the place of
such a fact supersedes it (a rewording beyond the merge rule): the place is the file and the
gap between the two nearest facts of that file that are still there, before and after;
among several removed facts in one gap, the one whose words are most like the new fact's
(SPEC.md §Merge's similarity; ties: the first).
Writes no store; ``stored`` is a ``stores.Stored``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from brainmigrate.fsutil import gone_from_here
from brainmigrate.merge.index import similarity
from brainmigrate.model import FactRecord

#: The status reason of a fact ``--sync`` retires because no line holds it any more.
REMOVED_REASON = "removed from notes"


def revive(rec: FactRecord, status: str, reason: str | None) -> bool:
    """A fact ``--sync`` retired whose line is read again is in the notes again: it takes
    the line's ``status`` and ``reason``. Returns whether ``rec`` changed."""
    retired = rec.status_reason or ""
    if rec.status != "superseded" or not retired.startswith((REMOVED_REASON, _REWORDED)):
        return False
    rec.status, rec.status_reason = status, reason
    return True


_REWORDED = "reworded in notes as "


def reworded_reason(key: str) -> str:
    """The status reason of a fact ``--sync`` retires for a rewording, the new fact ``key``."""
    return _REWORDED + key


def deleted(stored, paths: Sequence[str]) -> list[str]:
    """The notes files that fed the store (``stored.files()``), are gone
    (``fsutil.gone_from_here``: not there from the current folder nor from one above it),
    and lie under what the import reads: a folder of ``paths`` (the command line's notes
    paths, as given) or one of them. An import reads such a file as empty: a deleted notes
    file's facts are no longer in the notes."""
    given = [os.path.normpath(os.fspath(p)) for p in paths if os.fspath(p) != "-"]
    if not given:
        return []
    out = []
    for name in stored.files():
        plain = os.path.normpath(name)
        under = any(g in (".", plain) or plain.startswith(g.rstrip(os.sep) + os.sep) for g in given)
        if under and gone_from_here(name):
            out.append(name)
    return out


#: A fact's place among the facts of its file: (the fact before, the fact after), each the
#: id of a fact that is still there, or None at the file's start or end.
Gap = tuple[int | None, int | None]


def removed(
    stored,
    files: list[str],
    fed: set[int],
    placed: dict[str, list[tuple[int, bool, str]]] | None,
    record: Callable[[int], FactRecord] | None = None,
) -> list[dict]:
    """The report's entries of the stored facts no longer in the notes ``files`` read:
    ``fact`` (its key), ``file`` and ``line`` (its last line), ``scope``, ``text``,
    ``status`` (before this run), ``superseded_by`` (the key of the new fact at its place,
    or None), ordered by file and line. ``fed`` holds the ids of the stored facts a line of
    this run fed; ``placed`` (``--sync`` only) the run's facts of each file in line order,
    ``(id, new, scope)``, and ``record(id)`` a fact's record, for the rewordings.
    Raises ``sqlite3.Error`` (from ``stored``)."""
    if len(fed) >= stored.next_id - 1:  # every stored fact was fed (ids are dense from 1)
        return []
    rows = list(stored.last_lines(files, placed is not None))
    out = []
    by_file: dict[str, list[tuple[int, bool, str]]] = {}
    for fid, file, line, inside, status, scope, text in rows:
        gone = inside and status != "superseded" and fid not in fed
        by_file.setdefault(file, []).append((fid, gone, scope))
        if gone:
            entry = {"fact": f"k{fid}", "file": file, "line": line, "scope": scope}
            out.append({**entry, "text": text, "status": status, "superseded_by": None})
    if placed is not None and out:
        pairs = {}
        for file, old in by_file.items():
            pairs.update(_reworded(old, placed.get(file, []), record))
        for entry in out:
            new = pairs.get(int(entry["fact"][1:]))
            entry["superseded_by"] = None if new is None else f"k{new}"
    return out


def _reworded(old: list[tuple[int, bool, str]], now: list[tuple[int, bool, str]], record):
    """``{removed id: new id}`` for one file: ``old`` its stored facts by last line
    ``(id, removed, scope)``, ``now`` this run's facts in line order ``(id, new, scope)``.
    A new fact takes the removed fact of its scope in its gap most like it."""
    here = {fid for fid, new, _ in now if not new}
    waiting: dict[Gap, list[tuple[int, str]]] = {}
    for gap, fid, scope in _gaps([(f, g, s) for f, g, s in old], here):
        waiting.setdefault(gap, []).append((fid, scope))
    seen: set[int] = set()
    fresh = []
    for fid, new, scope in now:
        if new and fid not in seen:
            seen.add(fid)
            fresh.append((fid, True, scope))
        elif not new:
            fresh.append((fid, False, scope))
    pairs = {}
    for gap, nid, scope in _gaps(fresh, here):
        queue = [(fid, s) for fid, s in waiting.get(gap, ()) if s == scope]
        if not queue:
            continue
        stems = frozenset(record(nid).stems)
        best = max(
            queue,
            key=lambda q: (similarity(stems, frozenset(record(q[0]).stems)), -queue.index(q)),
        )
        waiting[gap].remove(best)
        pairs[best[0]] = nid
    return pairs


def _gaps(items: list[tuple[int, bool, str]], here: set[int]):
    """``(gap, id, scope)`` of each flagged item of ``items`` (``(id, flagged, scope)``
    in order): the nearest items before and after it whose ids are in ``here``."""
    after: list[int | None] = [None] * len(items)
    nxt = None
    for i in range(len(items) - 1, -1, -1):
        after[i] = nxt
        if items[i][0] in here and not items[i][1]:
            nxt = items[i][0]
    before = None
    for i, (fid, flagged, scope) in enumerate(items):
        if flagged:
            yield (before, after[i]), fid, scope
        elif fid in here:
            before = fid


def retire(
    entries: list[dict], touch: Callable[[int], FactRecord], new: Callable[[int], FactRecord]
):
    """``--sync``: each fact of ``entries`` (``removed``) retired, status ``superseded``
    with its reason, and each new fact at its place made to supersede it. ``touch(id)``
    gives a stored fact's record for the run to write, ``new(id)`` a new one's; yields
    the records changed, for the run to put back."""
    for entry in entries:
        rec = touch(int(entry["fact"][1:]))
        successor = entry["superseded_by"]
        rec.status = "superseded"
        rec.status_reason = reworded_reason(successor) if successor else REMOVED_REASON
        yield rec
        if successor:
            later = new(int(successor[1:]))
            if rec.id not in later.supersedes:
                later.supersedes = (*later.supersedes, rec.id)
            yield later
