"""The repeat rule: when two facts are the same fact, and how a repeat updates the fact
it repeats (SPEC.md §Merge). Pure: ``Repeats`` decides and updates; the merge run
(``merge.run``) reads the store, the import writes it.

Two facts of one scope are the same fact when their stem sets have a Jaccard similarity of
at least 0.85, their number sets are equal and their task-id sets are equal.

The index that finds the fact a line may repeat is ``merge.index``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from itertools import chain
from urllib.parse import unquote

import snowballstemmer

from brainmigrate.merge.index import Key, MergeIndex
from brainmigrate.model import Anchor, FactRecord, ParsedFact, Segment
from brainmigrate.read.tokens import link_path, path_like, tokens

_LETTERS = re.compile(r"[^\W\d_]+")
_DIGITS = re.compile(r"\d+")
_NO_NUMBERS: frozenset[str] = frozenset()  # shared: each frozenset() is 216 bytes


class Stems:
    """Words of a text as English Snowball stems, memoised per word.

    Words split at non-alphanumerics, camelCase humps and letter/digit edges, and are
    lower-cased (SPEC.md §Merge). ``HTTPAdapter`` gives ``http``, ``adapter``.
    """

    def __init__(self) -> None:
        self._stemmer = snowballstemmer.stemmer("english")
        self._memo: dict[str, tuple[str, ...]] = {}

    def __call__(self, text: str) -> frozenset[str]:
        runs = _LETTERS.findall(text)
        try:  # nearly every word was met before: the whole lookup runs in C
            return frozenset(chain.from_iterable(map(self._memo.__getitem__, runs)))
        except KeyError:
            self._learn(runs)
            return frozenset(chain.from_iterable(map(self._memo.__getitem__, runs)))

    def words(self, text: str) -> list[str]:
        """The stems of ``text`` in order, repeats kept (for full-text search)."""
        runs = _LETTERS.findall(text)
        try:
            return list(chain.from_iterable(map(self._memo.__getitem__, runs)))
        except KeyError:
            self._learn(runs)
            return list(chain.from_iterable(map(self._memo.__getitem__, runs)))

    def _learn(self, runs: list[str]) -> None:
        """Stem the letter runs not met before."""
        memo = self._memo
        for run in runs:
            if run not in memo:
                memo[run] = tuple(self._stemmer.stemWords([w.lower() for w in humps(run)]))


def humps(word: str) -> list[str]:
    """Split a letter run at camelCase humps: ``parseHTTPResponse`` -> parse, HTTP, Response."""
    if word.islower() or word.isupper() or (word[0].isupper() and word[1:].islower()):
        return [word]
    out, start = [], 0
    for i in range(1, len(word)):
        prev, cur = word[i - 1], word[i]
        if cur.isupper() and not prev.isupper():
            out.append(word[start:i])
            start = i
        elif cur.islower() and prev.isupper() and i - 1 > start:
            out.append(word[start : i - 1])
            start = i - 1
    out.append(word[start:])
    return out


def numbers(text: str) -> frozenset[str]:
    """The digit runs of ``text``, compared as strings (``001`` is not ``1``)."""
    found = _DIGITS.findall(text)
    return frozenset(found) if found else _NO_NUMBERS


def cited_paths(text: str) -> list[tuple[int, int, str]]:
    """The cited paths of a fact's text (SPEC.md §Anchors 1), syntactically: ``(start,
    end, path)`` with 0-based ``[start, end)`` of the path as written (its line form and
    suffix outside) and ``path`` normalized as a gone citation records it."""
    from brainmigrate.folder_moves import folder_cited
    from brainmigrate.roots import normalize

    out = []
    for tok in tokens([Segment(1, 1, text)]):
        cited = link_path(tok.text) if tok.link else path_like(tok.text)
        if cited is None:
            cited = folder_cited(tok.text)  # a folder, as check --fix rewrites one
        if cited is not None:
            out.append((tok.col - 1, tok.col - 1 + len(tok.text), normalize(cited) or cited))
    return out


def path_edits(before: str, after: str) -> list[tuple[str, str]] | None:
    """The cited paths ``after`` changed in ``before``, as ``(old, new)`` pairs (normalized),
    when the two texts are equal up to their cited paths and at least one path differs
    (what ``check --fix`` does to a line); else None. Exact: the texts outside the paths
    must be equal character for character, and hold the same number of paths."""
    if before == after:
        return None
    a, b = cited_paths(before), cited_paths(after)
    if not a or len(a) != len(b):
        return None
    pos_a = pos_b = 0
    pairs = []
    for (s1, e1, p1), (s2, e2, p2) in zip(a, b, strict=True):
        if before[pos_a:s1] != after[pos_b:s2]:
            return None
        if before[s1:e1] != after[s2:e2]:
            pairs.append((p1, p2))
        pos_a, pos_b = e1, e2
    if before[pos_a:] != after[pos_b:] or not pairs:
        return None
    return pairs


def restored_edits(
    before: str, after: str, same: Callable[[str], bool]
) -> list[tuple[str, str]] | None:
    """The cited paths ``after`` changed in ``before``, as ``(old, new)`` pairs (normalized,
    paired in order), when both hold the same number of paths, at least one differs, and
    ``after`` with ``before``'s paths put back where its own stand is the same fact as
    ``before`` by ``same`` (the repeat rule, SPEC.md §Merge): a line ``check --fix``
    rewrote whose fact was merged with a repeat, so the fact's text is another line's.
    Else None."""
    a, b = cited_paths(before), cited_paths(after)
    if not a or len(a) != len(b):
        return None
    pairs, parts, pos = [], [], 0
    for (s1, e1, p1), (s2, e2, p2) in zip(a, b, strict=True):
        if before[s1:e1] != after[s2:e2]:
            pairs.append((p1, p2))
        parts += [after[pos:s2], before[s1:e1]]
        pos = e2
    if not pairs or not same("".join(parts) + after[pos:]):
        return None
    return pairs


# ------------------------------------------------------------------------------ the rule


#: The status reason of a fact whose text says SUPERSEDED.
SUPERSEDED_REASON = "SUPERSEDED in the text"


def status_reason(status: str) -> str | None:
    """The reason stored with a fact line's status: the SUPERSEDED one, else None."""
    return SUPERSEDED_REASON if status == "superseded" else None


class Repeats:
    """The repeat rule (SPEC.md §Merge) over ``index``, the facts merged so far: which fact
    a line repeats, a new fact, and how a repeat updates the fact it repeats.

    Pure: the caller reads the store and hands the records in; this changes only the
    records it is given and the index. ``index`` may be a function that makes the index: it
    is then called when a line first needs it (a line already imported does not), so a
    re-import that adds nothing never builds it.
    """

    __slots__ = ("_index", "_make")

    def __init__(self, index: MergeIndex | Callable[[], MergeIndex]) -> None:
        if isinstance(index, MergeIndex):
            self._index, self._make = index, None
        else:
            self._index, self._make = None, index

    @property
    def index(self) -> MergeIndex:
        if self._index is None:
            self._index = self._make()
        return self._index

    def which(
        self,
        key: Key,
        stems: frozenset[str],
        known: int | None,
        edited: Callable[[], tuple[int, list[tuple[str, str]]] | None],
    ) -> tuple[int | None, float | None, list[tuple[str, str]] | None]:
        """The fact a line repeats, as ``(id, similarity, path edits)``; ``(None, None,
        None)`` when it is a new fact.

        In order: ``known``, the fact a line of the same fingerprint fed (it changes
        nothing but what adds up); the fact this file and line fed when the line is its
        text with only cited paths changed (``edited()``: ``(id, [(old, new)…])`` or None,
        asked only when needed); else the most similar fact of the same block (ties: the
        earliest). The similarity is None when the caller must compute it from the record.
        """
        if known is not None:
            return known, None, None
        fixed = edited()
        if fixed is not None:
            return fixed[0], None, fixed[1]
        hit = self.index.best(key, stems)
        if hit is None:
            return None, None, None
        return hit[0], hit[1], None

    def new(
        self,
        fid: int,
        fact: ParsedFact,
        stem_tuple: tuple[str, ...],
        nums: frozenset[str],
        key: Key,
        stems: frozenset[str],
    ) -> FactRecord:
        """A new fact ``fid`` stating ``fact``, added to the index."""
        rec = FactRecord(
            id=fid,
            scope=fact.scope,
            kind=fact.kind,
            marker=fact.marker,
            text=fact.text,
            task=fact.task,
            run=fact.run,
            created=fact.created,
            status=fact.status,
            status_reason=status_reason(fact.status),
            stems=stem_tuple,
            numbers=nums,
            tasks=fact.tasks,
        )
        self.index.add(rec.id, key, stems)
        return rec

    def update(
        self,
        rec: FactRecord,
        fact: ParsedFact,
        stem_tuple: tuple[str, ...],
        nums: frozenset[str],
        key: Key,
        stems: frozenset[str],
        edits: list[tuple[str, str]] | None = None,
    ) -> Carried:
        """``rec`` as a repeat ``fact`` updates it: text, kind, marker, status and task are
        the later line's; ``run`` only when the line has one; ``created`` only when it was
        empty. A line with only cited paths changed (``edits``) also takes the line's
        numbers and task ids, and forgets what the old paths held (``drop_moved``): returns
        the fingerprints the new paths' anchors take (``add_anchors``), else ``{}``."""
        carried: Carried = {}
        rec.text, rec.kind, rec.marker = fact.text, fact.kind, fact.marker
        rec.status, rec.status_reason = fact.status, status_reason(fact.status)
        rec.task, rec.stems = fact.task, stem_tuple
        if fact.run:
            rec.run = fact.run
        if not rec.created:
            rec.created = fact.created
        if edits is not None:
            was = Key(rec.scope, rec.numbers, rec.tasks)
            rec.numbers, rec.tasks = nums, fact.tasks
            if was != key:  # a path's digits changed the block (v1/ -> v2/)
                self.index.remove(rec.id, was)
                self.index.add(rec.id, key, stems)
            carried = drop_moved(rec, edits)
        self.index.replace(rec.id, key, stems)
        return carried


def count_facts(facts: Iterable[ParsedFact], stems: Stems | None = None) -> int:
    """How many facts the fact lines ``facts`` make in an empty store: each line is a new
    fact unless the repeat rule finds one it repeats (SPEC.md §Merge), as an import into
    an empty store counts them (``facts``; ``fact_lines == facts + merged``). The rule's
    index alone: no record is made."""
    stems = stems or Stems()
    lines = [(f.scope, numbers(f.full_text), f.tasks, stems(f.full_text)) for f in facts]
    index = MergeIndex(MergeIndex.frequencies(st for *_, st in lines))
    made = 0
    for scope, nums, tasks, st in lines:
        key = Key(scope, nums, tasks)
        hit = index.best(key, st)
        if hit is None:
            made += 1
            index.add(made, key, st)
        else:
            index.replace(hit[0], key, st)
    return made


def add_anchors(rec: FactRecord, anchors: Iterable[Anchor], carried: Carried | None = None) -> None:
    """Add ``anchors`` to ``rec``'s, those it lacks, in order (anchors add up). An anchor
    at the new path of a rewritten citation takes the fingerprint of the one the old path
    gave (``carried``, from ``drop_moved``: SPEC.md §Staleness, "An anchor whose citation
    was rewritten … keeps its fingerprint, and is compared at the new path")."""
    have = set(rec.anchors)  # (a fact may cite thousands of paths)
    for a in anchors:
        if a not in have:
            have.add(a)
            if carried:
                a = _carry(a, carried)
            rec.anchors.append(a)


#: The anchors a rewritten citation dropped that held a fingerprint, by the anchor the
#: new path gives: ``(kind, new path, symbol)`` -> the dropped anchor.
Carried = dict[tuple[str, str, str | None], Anchor]


def _carry(a: Anchor, carried: Carried) -> Anchor:
    """``a`` with the fingerprint of the dropped anchor it replaces, if any (its own
    root, path and lines kept)."""
    old = carried.get((a.kind, a.path, a.symbol)) or carried.get(
        (a.kind, f"{a.root.rstrip('/')}/{a.path}", a.symbol)
    )
    if old is None or a.fingerprinted:
        return a
    # every field of the fingerprint travels, those added later too
    return replace(
        old, kind=a.kind, root=a.root, path=a.path, symbol=a.symbol, lines=a.lines, how=a.how
    )


def add_gone(rec: FactRecord, paths: Iterable[str]) -> None:
    """Add the gone ``paths`` a line cites to ``rec``'s, those it lacks, in order (gone
    citations add up)."""
    have = set(rec.gone)
    for p in paths:
        if p not in have:
            have.add(p)
            rec.gone.append(p)


def drop_moved(rec: FactRecord, edits: list[tuple[str, str]]) -> Carried:
    """Forget what ``rec`` held for the paths a fixed line no longer cites: their gone
    citations, and every anchor those paths gave (files, folders and the declarations
    found in them; a root-relative path, or an absolute one under the anchor's root).
    What the line cites now is added after (``add_anchors``).

    Returns the anchors of the old paths that held a fingerprint, by the anchor the new
    path gives (``Carried``), so that anchor keeps the fingerprint (SPEC.md §Staleness).
    A path the line (``rec.text``: the fixed line's already) still cites elsewhere is not
    forgotten: ``first in src/b.py, second in src/b.py`` fixed to ``… second in
    src/a.py`` keeps ``src/b.py``'s anchor (and its fingerprint)."""
    still = {new for _, new in edits} | {path for *_, path in cited_paths(rec.text)}
    still |= {unquote(p) for p in still}
    moves = {p: new for p, new in edits}
    moves.update({unquote(p): new for p, new in moves.items()})
    if not moves:
        return {}
    rec.gone = [
        p
        for p in rec.gone
        if p in still or p.rstrip("/") in still or (p not in moves and p.rstrip("/") not in moves)
    ]
    absolute = {p: new for p, new in moves.items() if p.startswith("/")}
    kept, carried = [], {}
    for a in rec.anchors:
        new = moves.get(a.path) or _absolute_move(a, absolute)
        if new is None or a.path in still:
            kept.append(a)
        if new is not None and a.fingerprinted:
            carried.setdefault((a.kind, unquote(new), a.symbol), a)
    rec.anchors = kept
    return carried


def _absolute_move(a: Anchor, absolute: dict[str, str]) -> str | None:
    """The new path of ``a`` when one of the ``absolute`` old paths (old path -> new) is
    ``a``'s path under its root: the root's path then ``a.path`` (a root recorded
    absolute, before schema 3), or, for a root recorded relative to the store's folder,
    any folder then ``a.path``; else None."""
    if not absolute:
        return None
    if a.root.startswith("/"):
        return absolute.get(f"{a.root.rstrip('/')}/{a.path}")
    return next((new for p, new in absolute.items() if p.endswith(f"/{a.path}")), None)
