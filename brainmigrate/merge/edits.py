"""Which stored fact a fact line is with only its cited paths changed (what ``check --fix``
does to a line), so that the fact keeps its id and its anchors' fingerprints follow the
new paths (SPEC.md §Staleness: "An anchor whose citation was rewritten to its target's new
path (by ``check --fix``, or a re-import of the same fact whose text changed only in its
cited paths) keeps its fingerprint, and is compared at the new path").

A fact some line read still states (its scope and text) is still in the notes: a line
with other paths is another fact, however alike (a fact added above one that cites
another file is no edit of it). Otherwise the line is the edit of

1. a fact this file and line fed whose text it is up to its cited paths; else
2. a fact this file and line fed, merged with a repeat (its text is the other line's),
   when the line with the fact's paths put back repeats it (SPEC.md §Merge); else
3. the one fact of this file (its last line there), not read yet by this run, whose text
   it is up to its cited paths: the line moved within its file (lines added or removed
   above it since the fix).

Each rule holds only when every old path the line no longer cites went to its new one: no
root holds it any more, or git's renames since an anchor of the fact was fingerprinted
there took it to the new path (``PathEdits.moved_paths``). A line that now cites another
file that was there all along states another fact: its anchors must not carry the old
file's fingerprints (``db/users.sql`` -> ``db/orders.sql``, both there, read as a body
change of ``db/orders.sql``).

Writes no store; ``stored`` is a ``stores.Stored``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from urllib.parse import unquote

from brainmigrate.digests import blake2b
from brainmigrate.merge.index import qualifies
from brainmigrate.merge.rule import Stems, cited_paths, numbers, path_edits, restored_edits
from brainmigrate.model import FactRecord, ParsedFact

Edit = tuple[int, list[tuple[str, str]]]


def _stated(scope: str, text: str) -> bytes:
    return blake2b(f"{scope}\x1f{text}".encode("utf-8", "surrogatepass"), digest_size=8).digest()


def skeleton(text: str) -> str | None:
    """``text`` with each cited path (``merge.rule.cited_paths``) cut out, or None when it
    cites none: two texts equal up to their cited paths have the same skeleton."""
    spans = cited_paths(text)
    if not spans:
        return None
    parts, pos = [], 0
    for start, end, _ in spans:
        parts.append(text[pos:start])
        pos = end
    parts.append(text[pos:])
    return "\0".join(parts)


class PathEdits:
    """The rules above for one merge run: ``find(fact)`` gives ``(id, [(old, new)…])`` or
    None. ``record(id)`` gives a fact's record as the run holds it (read from the store
    when the run did not touch it); ``touched(id)`` whether the run read it already."""

    def __init__(
        self,
        notes,
        stored,
        stems: Stems,
        record: Callable[[int], FactRecord],
        touched: Callable[[int], bool],
    ) -> None:
        self.notes, self.stored, self.stems = notes, stored, stems
        self.record, self.touched = record, touched
        self.fed_at: dict[tuple[str, int], list[int]] | None = None
        self._stated: set[bytes] | None = None
        # rule 3: each file's stored facts (id, scope, text), then by skeleton
        self._last: dict[str, list[tuple[int, str, str]]] | None = None
        self._shapes: dict[str, dict[str, list[tuple[int, str, str]]]] = {}
        self._files = None  # a checkouts.CheckoutFiles for git's renames, made on need

    def find(self, fact: ParsedFact) -> Edit | None:
        """The stored fact ``fact``'s line is with only cited paths changed, with the
        ``(old, new)`` paths (normalized), or None (rules 1-3 above)."""
        if self.fed_at is None:
            files = {st.path: st for st in self.notes.files}
            self.fed_at = self.stored.fed_lines(files)
        fed = [self.record(fid) for fid in self.fed_at.get((fact.file, fact.line), ())]
        fed = [
            rec
            for rec in fed
            if rec.scope == fact.scope and not self.still_stated(rec.scope, rec.text)
        ]
        for rec in fed:
            pairs = path_edits(rec.text, fact.text)
            if pairs is not None and self.moved_paths(rec, pairs):
                return rec.id, pairs
        for rec in fed:
            pairs = restored_edits(
                rec.text, fact.text, lambda text, rec=rec: self._repeats(rec, fact, text)
            )
            if pairs is not None and self.moved_paths(rec, pairs):
                return rec.id, pairs
        return self._moved_line(fact)

    def moved_paths(self, rec: FactRecord, pairs: list[tuple[str, str]]) -> bool:
        """Whether each ``(old, new)`` cited path of ``pairs`` is a move: ``old`` is held by
        no root of the run (file or folder; an absolute path as it is), or git's renames
        since the commit an anchor of ``rec`` at ``old`` was fingerprinted on took it to
        ``new`` (``checkouts.CheckoutFiles.rename_trail``). A run without roots tells
        nothing: every pair counts."""
        roots = list(getattr(self.notes, "roots", None) or ())
        for old, new in pairs:
            old, new = unquote(old).rstrip("/"), unquote(new).rstrip("/")
            if not any(_holds(r.path, old) for r in roots):
                continue
            if not self._renamed(rec, roots, old, new):
                return False
        return True

    def _renamed(self, rec: FactRecord, roots, old: str, new: str) -> bool:
        """Whether git's renames took ``old`` to ``new`` since an anchor of ``rec`` at
        ``old`` was fingerprinted (in the root it records)."""
        folders = {r.name: r.path for r in roots}
        for a in rec.anchors:
            folder = folders.get(a.root)
            if a.path != old or not a.commit or folder is None:
                continue
            if self._files is None:
                from brainmigrate.checkouts import CheckoutFiles

                self._files = CheckoutFiles()
            trail, from_start = self._files.rename_trail(folder, a.commit)
            if trail.follow(old, from_start=from_start) == new:
                return True
        return False

    def still_stated(self, scope: str, text: str) -> bool:
        """Whether a fact line read (any file) states ``text`` in ``scope``."""
        if self._stated is None:
            self._stated = {_stated(f.scope, f.text) for f in self.notes.facts.parsed()}
        return _stated(scope, text) in self._stated

    def _repeats(self, rec: FactRecord, fact: ParsedFact, text: str) -> bool:
        """Whether ``text`` (``fact``'s line with other paths) repeats ``rec`` by the rule
        (SPEC.md §Merge): the same numbers and task ids, stems similar enough."""
        if numbers(text) != rec.numbers or fact.tasks != rec.tasks:
            return False
        return qualifies(frozenset(self.stems(text)), rec.stems)

    def _moved_line(self, fact: ParsedFact) -> Edit | None:
        """Rule 3: the one stored fact whose last line is in ``fact``'s file, of its scope,
        not superseded and not read by this run yet, that no line states any more and
        whose text ``fact``'s is up to its cited paths. Only the facts no line states are
        cut into skeletons (in a re-import, the few whose lines changed)."""
        if self._last is None:
            self._last = {}
            rows = self.stored.last_lines([st.path for st in self.notes.files], True)
            for fid, file, _line, _inside, status, scope, text in rows:
                if status != "superseded" and not self.still_stated(scope, text):
                    self._last.setdefault(file, []).append((fid, scope, text))
        if fact.file not in self._last:
            return None
        shapes = self._shapes.get(fact.file)
        if shapes is None:  # the file's stored facts by skeleton, made on first need
            shapes = self._shapes[fact.file] = {}
            for fid, scope, text in self._last[fact.file]:
                shape = skeleton(text)
                if shape is not None:
                    shapes.setdefault(shape, []).append((fid, scope, text))
        shape = skeleton(fact.text)
        if shape is None:
            return None
        found = None
        for fid, scope, text in shapes.get(shape, ()):
            if scope != fact.scope or self.touched(fid):
                continue
            pairs = path_edits(text, fact.text)
            if pairs is None or not self.moved_paths(self.record(fid), pairs):
                continue
            if found is not None:
                return None  # two could be the one: no telling which
            found = (fid, pairs)
        return found


def _holds(root: str, path: str) -> bool:
    """Whether ``path`` (relative to folder ``root``, or absolute) names a file or folder."""
    return os.path.lexists(path if path.startswith("/") else os.path.join(root, path))
