"""The repeat rule: when two facts are the same fact, and how a repeat updates the fact
it repeats (SPEC.md §Merge). Pure: ``Repeats`` decides and updates, the importer reads and
writes the store.

Two facts of one scope are the same fact when their stem sets have a Jaccard similarity of
at least 0.85, their number sets are equal and their task-id sets are equal.

Finding the most similar earlier fact is exact and fast: facts are blocked by
``(scope, numbers, task ids)`` (equal sets are required, so nothing is missed), and inside
a block inverted indexes over each fact's *prefixes* -- its first stems in one fixed
global order, rarest first -- find every candidate that can reach the threshold.
Candidates are then verified with integer arithmetic, so there are no float edge cases.

Two prefixes per fact (Bayardo et al., "Scaling Up All Pairs Similarity Search"; Xiao et
al., "Efficient Similarity Joins for Near Duplicate Detection"). Sets x and y with
Jaccard >= t share o >= t/(1+t) (|x| + |y|) stems, and the first ``|x| - o + 1`` stems of
x meet the first ``|y| - o + 1`` of y. So when |y| <= |x|, o >= 2t/(1+t) |y| and o >= t |x|:
y's *short* prefix (``n - ceil(2t/(1+t) n) + 1`` stems) meets x's *long* prefix
(``n - ceil(t n) + 1``); when |y| > |x|, the other way round. A block keeps one index of
short prefixes and one of long prefixes; a new fact probes the short index with its long
prefix and the long index with its short prefix. Facts that share most of their words (a
template with one word changed) then share no short-prefix stem, and candidates stay few
where one index over long prefixes made every pair a candidate.
"""

from __future__ import annotations

import hashlib
import re
from array import array
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from itertools import chain
from typing import NamedTuple
from urllib.parse import unquote

import snowballstemmer

from brainmigrate.model import Anchor, FactRecord, ParsedFact, Segment
from brainmigrate.read.tokens import link_path, path_like, tokens

#: Jaccard threshold as a fraction NUM/DEN (0.85).
NUM, DEN = 85, 100

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


def qualifies(a: frozenset[str], b: Collection[str]) -> bool:
    """Jaccard(a, b) >= 0.85, in integers; two empty sets are similar (SPEC.md §Merge).

    ``b`` may be any collection of distinct stems (a stored fact keeps a tuple)."""
    if not a and not b:
        return True
    inter = len(a.intersection(b))
    return inter * DEN >= NUM * (len(a) + len(b) - inter)


def similarity(a: frozenset[str], b: Collection[str]) -> float:
    """Jaccard similarity of two stem sets (``b`` any collection of distinct stems); 1.0
    for two empty sets."""
    if not a and not b:
        return 1.0
    inter = len(a.intersection(b))
    return inter / (len(a) + len(b) - inter)


def prefix_length(n: int) -> int:
    """The long prefix of a set of ``n`` stems: ``n - ceil(t n) + 1`` (t = 0.85)."""
    return n - (NUM * n + DEN - 1) // DEN + 1


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


def short_prefix_length(n: int) -> int:
    """The short prefix of a set of ``n`` stems: ``n - ceil(2t/(1+t) n) + 1`` (t = 0.85),
    enough against every set at least as large."""
    return n - (2 * NUM * n + DEN + NUM - 1) // (DEN + NUM) + 1


class Key(NamedTuple):
    """The block a fact belongs to: facts merge only inside one block.

    A named tuple, so that hashing and comparing keys in the index stays in C.
    """

    scope: str
    numbers: frozenset[str]
    tasks: frozenset[str]


class MergeIndex:
    """Finds, for a new fact, the earlier fact it repeats (SPEC.md §Merge).

    ``add(seq, key, stems)`` registers a fact under a sequence number (earlier facts have
    smaller numbers; numbers are dense, like fact ids); ``replace(seq, key, stems)``
    re-indexes it after its text changed; ``best(key, stems)`` returns ``(seq, similarity)``
    of the most similar qualifying fact (ties: the earliest) or None. ``frequencies`` fixes
    the global stem order (rarest first); stems it does not know sort after the others, in
    the order first seen.

    Built to hold hundreds of thousands of facts in little memory (about 250 bytes a fact):
    a block is keyed by a 16-byte digest of its key; a fact's stems are kept as the packed
    ranks of its stems; a block of one fact is just that fact's number; a block gets an
    inverted index over prefixes only once it holds more than ``postings_from`` facts
    (smaller blocks are scanned, which is as fast and needs no index).
    """

    def __init__(self, frequencies: Counter | None = None, postings_from: int = 32) -> None:
        df = frequencies or Counter()
        # One fixed total order of stems: rarest first, then by text; stems first seen
        # later are appended, so the order of a stem never changes once given.
        self._rank = {s: i for i, s in enumerate(sorted(df, key=lambda s: (df[s], s)))}
        self._blocks: dict[bytes, int | _Block] = {}
        self._stems: list[bytes | None] = []  # by seq: the stems' ranks, ascending, packed
        # ranks packed as 2 bytes while there are fewer than 65,536 stems, else 4
        self._code = "H" if len(self._rank) < 1 << 16 else "I"
        self._rank_ints: list[int] = []
        self._last: tuple[Key, bytes] | None = None  # best() then add(): one digest
        self._postings_from = postings_from

    @staticmethod
    def frequencies(stem_sets: Iterable[Collection[str]]) -> Counter:
        """Document frequency of each stem over ``stem_sets``."""
        df: Counter = Counter()
        for s in stem_sets:
            df.update(s)
        return df

    def _digest(self, key: Key) -> bytes:
        last = self._last
        if last is not None and last[0] is key:
            return last[1]
        digest = _digest(key)
        self._last = (key, digest)
        return digest

    def _ranks(self, stems: Collection[str]) -> list[int]:
        rank = self._rank
        new = [s for s in stems if s not in rank]
        for s in sorted(new):
            rank[s] = len(rank)
        if new and self._code == "H" and len(rank) > 1 << 16:
            self._widen()
        return sorted(map(rank.__getitem__, stems))

    def _widen(self) -> None:
        """Repack every fact's ranks in 4 bytes, once there are 65,536 stems or more."""
        self._stems = [
            None if b is None else array("I", memoryview(b).cast("H")).tobytes()
            for b in self._stems
        ]
        self._code = "I"

    def _unpack(self, seq: int) -> memoryview:
        return memoryview(self._stems[seq]).cast(self._code)

    def add(self, seq: int, key: Key, stems: Collection[str]) -> None:
        self._store(seq, self._ranks(stems))
        digest = self._digest(key)
        block = self._blocks.get(digest)
        if block is None:
            self._blocks[digest] = seq
            return
        if isinstance(block, int):
            block = self._blocks[digest] = _Block(array("I", [block]))
        block.members.append(seq)
        if block.postings is not None:
            self._post(block, seq)
        elif len(block.members) > self._postings_from:
            block.postings, block.short = {}, {}
            for member in block.members:
                self._post(block, member)

    def _store(self, seq: int, ranks: list[int]) -> None:
        stems = self._stems
        if seq >= len(stems):
            stems.extend([None] * (seq + 1 - len(stems)))
        stems[seq] = array(self._code, ranks).tobytes()

    def _post(self, block: _Block, seq: int) -> None:
        ranks = self._unpack(seq)
        if not ranks:
            block.empty.append(seq)
            return
        n = len(ranks)
        self._post_into(block.postings, ranks[: prefix_length(n)], seq)
        self._post_into(block.short, ranks[: short_prefix_length(n)], seq)

    def _post_into(self, postings: dict, ranks, seq: int) -> None:
        for r in ranks:
            entry = postings.get(r)
            if entry is None:
                postings[self._shared(r)] = seq  # most postings hold one fact: no array
            elif isinstance(entry, int):
                postings[r] = array("I", (entry, seq))
            else:
                entry.append(seq)

    def _unpost(self, block: _Block, seq: int) -> None:
        ranks = self._unpack(seq)
        if not ranks:
            block.empty.remove(seq)
            return
        n = len(ranks)
        for postings, length in (
            (block.postings, prefix_length(n)),
            (block.short, short_prefix_length(n)),
        ):
            for r in ranks[:length]:
                entry = postings[r]
                if isinstance(entry, int):
                    del postings[r]
                else:
                    entry.remove(seq)

    def _shared(self, rank: int) -> int:
        """The one int object of ``rank``, so the postings of many blocks share their keys."""
        shared = self._rank_ints
        while len(shared) <= rank:
            shared.append(len(shared))
        return shared[rank]

    def replace(self, seq: int, key: Key, stems: Collection[str]) -> None:
        ranks = self._ranks(stems)
        if self._unpack(seq).tolist() == ranks:
            return
        block = self._blocks[self._digest(key)]
        indexed = not isinstance(block, int) and block.postings is not None
        if indexed:
            self._unpost(block, seq)
        self._store(seq, ranks)
        if indexed:
            self._post(block, seq)

    def remove(self, seq: int, key: Key) -> None:
        """Take fact ``seq`` out of block ``key`` (before it is added under another key)."""
        digest = self._digest(key)
        block = self._blocks.get(digest)
        if block is None:
            return
        if isinstance(block, int):
            if block == seq:
                del self._blocks[digest]
            return
        if seq not in block.members:
            return
        if block.postings is not None:
            self._unpost(block, seq)
        block.members.remove(seq)

    def best(self, key: Key, stems: Collection[str]) -> tuple[int, float] | None:
        block = self._blocks.get(self._digest(key))
        if block is None:
            return None
        ranks = self._ranks(stems)
        if isinstance(block, int):
            candidates: Iterable[int] = (block,)
        elif block.postings is None:
            candidates = block.members
        elif not ranks:
            candidates = block.empty
        else:
            # stored facts no larger share a stem of their short prefix with this long
            # prefix; larger ones a stem of their long prefix with this short prefix
            seen: set[int] = set()
            n = len(ranks)
            for postings, probe in (
                (block.short, ranks[: prefix_length(n)]),
                (block.postings, ranks[: short_prefix_length(n)]),
            ):
                for r in probe:
                    entry = postings.get(r)
                    if entry is None:
                        continue
                    if isinstance(entry, int):
                        seen.add(entry)
                    else:
                        seen.update(entry)
            candidates = seen
        query = frozenset(ranks)
        n = len(query)
        best_seq, best_inter, best_union = -1, 0, 0
        stored, code = self._stems, self._code
        for seq in candidates:
            other = memoryview(stored[seq]).cast(code)
            inter = len(query.intersection(other))
            union = n + len(other) - inter
            if inter * DEN < NUM * union:
                continue
            # more similar wins: inter/union > best_inter/best_union; ties: earlier seq
            lhs, rhs = inter * best_union, best_inter * union
            if best_seq < 0 or lhs > rhs or (lhs == rhs and seq < best_seq):
                best_seq, best_inter, best_union = seq, inter, union
        if best_seq < 0:
            return None
        return best_seq, best_inter / best_union if best_union else 1.0


class _Block:
    """A block of more than one fact: its members, and once large, prefix postings (of
    long prefixes in ``postings``, of short ones in ``short``)."""

    __slots__ = ("members", "postings", "short", "empty")

    def __init__(self, members: array) -> None:
        self.members = members
        self.postings: dict[int, int | array] | None = None
        self.short: dict[int, int | array] | None = None
        self.empty = array("I")


def _digest(key: Key) -> bytes:
    """16 bytes that stand for a block key: scope, numbers and task ids, each set sorted and
    every item length-prefixed, so no two keys share a text."""
    parts = [key.scope, *sorted(key.numbers), "\x1f", *sorted(key.tasks)]
    text = "".join(f"{len(p)}:{p}" for p in parts)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


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
    ) -> None:
        """``rec`` as a repeat ``fact`` updates it: text, kind, marker, status and task are
        the later line's; ``run`` only when the line has one; ``created`` only when it was
        empty. A line with only cited paths changed (``edits``) also takes the line's
        numbers and task ids, and forgets what the old paths held (``drop_moved``)."""
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
            drop_moved(rec, edits)
        self.index.replace(rec.id, key, stems)


def add_anchors(rec: FactRecord, anchors: Iterable[Anchor]) -> None:
    """Add ``anchors`` to ``rec``'s, those it lacks, in order (anchors add up)."""
    have = set(rec.anchors)  # (a fact may cite thousands of paths)
    for a in anchors:
        if a not in have:
            have.add(a)
            rec.anchors.append(a)


def add_gone(rec: FactRecord, paths: Iterable[str]) -> None:
    """Add the gone ``paths`` a line cites to ``rec``'s, those it lacks, in order (gone
    citations add up)."""
    have = set(rec.gone)
    for p in paths:
        if p not in have:
            have.add(p)
            rec.gone.append(p)


def drop_moved(rec: FactRecord, edits: list[tuple[str, str]]) -> None:
    """Forget what ``rec`` held for the paths a fixed line no longer cites: their gone
    citations, and the file and folder anchors they were cited as (a root-relative path,
    or an absolute one under the anchor's root). What the line cites now is added after."""
    still = {new for _, new in edits}
    old = {p for p, _ in edits if p not in still}
    old |= {unquote(p) for p in old}
    if not old:
        return
    rec.gone = [p for p in rec.gone if p not in old and p.rstrip("/") not in old]  # a folder
    rec.anchors = [
        a
        for a in rec.anchors
        if not (
            a.kind in ("file", "folder")
            and a.how == "cited"
            and (a.path in old or f"{a.root.rstrip('/')}/{a.path}" in old)
        )
    ]
