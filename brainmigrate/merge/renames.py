"""A notes file renamed carries its facts with it (issue 24, "Sync"; docs/reference.md "Keeping the
store in sync"): before an import merges, each notes file it reads that never fed the store
is matched with a file that fed the store and is gone from its path; the match's facts then
follow the new name (provenance moves, ids stay, the scope follows the new file's).

A file is the rename of a gone one when at least half of the gone file's facts (those whose
last line was in it, superseded ones left out) have their text among the new file's facts'
texts, the most of any gone file (ties: the first by name): what git calls a rename,
committed or not, and a copy under a new name alike. A file read from another folder than
the imports before (``notes/a.md`` read as ``a.md`` from ``notes/``) is the same file, not
a rename: a gone file is one not there from the current folder nor from one above it
(``fsutil.gone_from_here``). Writes no store itself; ``stored`` is
a ``stores.Stored``.
"""

from __future__ import annotations

from brainmigrate.fsutil import gone_from_here
from brainmigrate.read.facts import scope_for
from brainmigrate.read.run import Notes


def follow(notes: Notes, stored, scope: str | None = None) -> list[dict]:
    """Move the facts of every renamed notes file to its new name (``stored.rename``) and
    return the report's entries, ``{"from", "to", "facts"}``, in the order of the files
    read. ``scope`` is ``--scope`` (the old file's facts then keep theirs). Raises
    ``sqlite3.Error`` (from ``stored``)."""
    read = {st.path: st for st in notes.files}
    known = stored.files()
    held = set(known)
    fresh = [path for path in read if path not in held]
    gone = sorted(f for f in known if f not in read and gone_from_here(f))
    if not fresh or not gone:
        return []
    texts: dict[str, set[str]] = {path: set() for path in fresh}
    for fact in notes.facts.parsed():
        if fact.file in texts:
            texts[fact.file].add(fact.text)
    was = {
        old: {row[6] for row in stored.last_lines([old], True) if row[4] != "superseded"}
        for old in gone
    }
    out = []
    for path in fresh:
        best, shared = None, 0
        for old in gone:
            n = len(was[old] & texts[path])
            if n > shared and 2 * n >= len(was[old]):
                best, shared = old, n
        if best is None:
            continue
        gone.remove(best)
        scopes = {} if scope is not None else {scope_for(best): read[path].scope}
        moved = stored.rename(best, path, scopes)
        out.append({"from": best, "to": path, "facts": moved})
    return out
