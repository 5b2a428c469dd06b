"""The merge's index: the earlier fact a new fact repeats, found exactly and fast
(SPEC.md §Merge: Jaccard similarity of the stem sets at least 0.85, equal number sets,
equal task-id sets, one scope).

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
from array import array
from collections import Counter
from collections.abc import Collection, Iterable
from typing import NamedTuple

#: Jaccard threshold as a fraction NUM/DEN (0.85).
NUM, DEN = 85, 100
#: Block keys whose digests ``MergeIndex`` keeps (then it forgets them all and starts over).
DIGESTS = 4096


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
        # the digests of the keys met last (a scope's facts without numbers or task ids
        # share one), at most DIGESTS of them: a few microseconds a fact, in little memory
        self._digests: dict[Key, bytes] = {}
        # best() then add() of one stem set: its ranks made once
        self._last_ranks: tuple[Collection[str], list[int]] | None = None
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
        digests = self._digests
        digest = digests.get(key)
        if digest is None:
            if len(digests) >= DIGESTS:
                digests.clear()
            digest = digests[key] = _digest(key)
        self._last = (key, digest)
        return digest

    def _ranks(self, stems: Collection[str]) -> list[int]:
        last = self._last_ranks
        if last is not None and last[0] is stems:  # ranks never change once given
            return list(last[1])
        rank = self._rank
        try:  # nearly every stem was met before: the whole lookup runs in C
            ranks = sorted(map(rank.__getitem__, stems))
        except KeyError:
            new = [s for s in stems if s not in rank]
            for s in sorted(new):
                rank[s] = len(rank)
            if self._code == "H" and len(rank) > 1 << 16:
                self._widen()
            ranks = sorted(map(rank.__getitem__, stems))
        if isinstance(stems, frozenset):  # held here, so no other set takes its identity
            self._last_ranks = (stems, ranks)
        return list(ranks)

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
    """16 bytes that stand for a block key: scope, numbers and task ids, each set sorted,
    as Python writes them (``repr`` of strings and lists of strings reads back as what it
    was written from, so no two keys share a text)."""
    text = repr((key.scope, sorted(key.numbers), sorted(key.tasks)))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
