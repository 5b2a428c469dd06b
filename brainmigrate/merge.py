"""The repeat rule: when two facts are the same fact (SPEC.md §Merge). Pure.

Two facts of one scope are the same fact when their stem sets have a Jaccard similarity of
at least 0.85, their number sets are equal and their task-id sets are equal.

Finding the most similar earlier fact is exact and fast: facts are blocked by
``(scope, numbers, task ids)`` (equal sets are required, so nothing is missed), and inside
a block an inverted index over each fact's *prefix* -- its first ``n - ceil(0.85 n) + 1``
stems in one fixed global order, rarest first -- finds every candidate that can reach the
threshold (two sets with Jaccard >= t always share a stem of their prefixes). Candidates
are then verified with integer arithmetic, so there are no float edge cases.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable
from itertools import chain
from typing import NamedTuple

import snowballstemmer

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
        memo = self._memo
        for run in runs:
            if run not in memo:
                memo[run] = tuple(self._stemmer.stemWords([w.lower() for w in humps(run)]))
        return frozenset(chain.from_iterable(map(memo.__getitem__, runs)))

    def words(self, text: str) -> list[str]:
        """The stems of ``text`` in order, repeats kept (for full-text search)."""
        self(text)
        return list(chain.from_iterable(map(self._memo.__getitem__, _LETTERS.findall(text))))


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
    """How many stems of a set of ``n`` go into the index: ``n - ceil(0.85 n) + 1``."""
    return n - (NUM * n + DEN - 1) // DEN + 1


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
    smaller numbers); ``replace(seq, stems)`` re-indexes it after its text changed;
    ``best(key, stems)`` returns ``(seq, similarity)`` of the most similar qualifying fact
    (ties: the earliest) or None. ``frequencies`` fixes the global stem order (rarest
    first); stems it does not know sort after the others, in the order first seen.
    """

    def __init__(self, frequencies: Counter | None = None) -> None:
        df = frequencies or Counter()
        # One fixed total order of stems: rarest first, then by text; stems first seen
        # later are appended, so the order of a stem never changes once given.
        self._rank = {s: i for i, s in enumerate(sorted(df, key=lambda s: (df[s], s)))}
        self._blocks: dict[Key, int] = {}
        # Kept as tuples: a third of a frozenset's memory, and verified against a query set.
        self._stems: dict[int, tuple[str, ...]] = {}
        self._block_of: dict[int, int] = {}
        # Postings are lists (a third of a dict's memory); removal, only on a merge, scans.
        self._post: dict[tuple[int, str], list[int]] = {}
        self._empty: dict[int, list[int]] = {}

    @staticmethod
    def frequencies(stem_sets: Iterable[frozenset[str]]) -> Counter:
        """Document frequency of each stem over ``stem_sets``."""
        df: Counter = Counter()
        for s in stem_sets:
            df.update(s)
        return df

    def _prefix(self, stems: frozenset[str]) -> list[str]:
        rank = self._rank
        for s in sorted(stems.difference(rank)):
            rank[s] = len(rank)
        return sorted(stems, key=rank.__getitem__)[: prefix_length(len(stems))]

    def _block(self, key: Key) -> int:
        block = self._blocks.get(key)
        if block is None:
            block = self._blocks[key] = len(self._blocks)
        return block

    def add(self, seq: int, key: Key, stems: frozenset[str]) -> None:
        self._insert(seq, self._block(key), stems)

    def _insert(self, seq: int, block: int, stems: frozenset[str]) -> None:
        self._stems[seq] = tuple(stems)
        self._block_of[seq] = block
        if not stems:
            self._empty.setdefault(block, []).append(seq)
            return
        post = self._post
        for s in self._prefix(stems):
            entry = post.get((block, s))
            if entry is None:
                post[(block, s)] = [seq]
            else:
                entry.append(seq)

    def replace(self, seq: int, stems: frozenset[str]) -> None:
        old, block = frozenset(self._stems[seq]), self._block_of[seq]
        if old == stems:
            return
        if not old:
            self._empty[block].remove(seq)
        for s in self._prefix(old):
            self._post[(block, s)].remove(seq)
        self._insert(seq, block, stems)

    def best(self, key: Key, stems: frozenset[str]) -> tuple[int, float] | None:
        block = self._blocks.get(key)
        if block is None:
            return None
        if not stems:
            found = self._empty.get(block)
            return (min(found), 1.0) if found else None
        seen: set[int] = set()
        best_seq, best_inter, best_union = -1, 0, 1
        n = len(stems)
        for s in self._prefix(stems):
            for seq in self._post.get((block, s), ()):
                if seq in seen:
                    continue
                seen.add(seq)
                other = self._stems[seq]
                inter = len(stems.intersection(other))
                union = n + len(other) - inter
                if inter * DEN < NUM * union:
                    continue
                # more similar wins: inter/union > best_inter/best_union; ties: earlier seq
                lhs, rhs = inter * best_union, best_inter * union
                if best_seq < 0 or lhs > rhs or (lhs == rhs and seq < best_seq):
                    best_seq, best_inter, best_union = seq, inter, union
        if best_seq < 0:
            return None
        return best_seq, best_inter / best_union
