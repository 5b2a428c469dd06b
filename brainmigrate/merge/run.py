"""The merge run: the facts read merged into the stored ones, line by line, with the
entries every report renders (SPEC.md §Merge, §Report). Writes no store.

``merge`` drives the repeat rule (``merge.rule``) over what the read stage gave
(``read.run.Notes``) against a store being read: ``stored`` below is a
``stores.Stored`` (a higher stage, so not imported here).
"""

from __future__ import annotations

import itertools
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from brainmigrate.digests import blake2b
from brainmigrate.merge.edits import PathEdits
from brainmigrate.merge.index import Key, MergeIndex, similarity
from brainmigrate.merge.rule import (
    Repeats,
    Stems,
    add_anchors,
    add_gone,
    numbers,
    status_reason,
)
from brainmigrate.merge.sync import revive
from brainmigrate.model import Diagnostic, FactRecord, ParsedFact
from brainmigrate.read.run import FileStats, Notes, gc_paused
from brainmigrate.roots import Root
from brainmigrate.spill import Keyed, Spill


class Merged(Spill):
    """The merge's entries (dicts, SPEC.md §Report "merged"), with ``known``: how many are
    lines already imported (``"known": true``), counted as they come, so a report that
    only counts them never reads the entries back."""

    def __init__(self) -> None:
        super().__init__()
        self.known = 0

    def append(self, item: dict, size: int = 0) -> None:
        self.known += item["known"]
        super().append(item, size)


@dataclass
class RunResult:
    """An import's outcome, what every report renders (SPEC.md §Report)."""

    notes: Notes
    facts: Keyed  # FactRecord by id: iterate for the facts in id order
    merged: Merged  # dicts, one per repeat merged (SPEC.md §Report "merged")
    gone: Spill
    outside: Spill
    ambiguous: Spill
    unresolved: Spill
    store: str | None
    dry_run: bool
    #: ids of the stored facts the run may have changed or fed (repeated, or given
    #: anchors, gone paths or provenance), ascending, and of the new facts (a range): the
    #: others it touched are unchanged
    changed: tuple[list[int], range] | None = None
    #: ids of every stored fact a line of the run fed (already imported lines included),
    #: ascending: what ``import --verify`` fingerprints besides what the run changed
    fed: list[int] = field(default_factory=list)
    #: dicts, one per git-ignored citation (SPEC.md §Anchors "Git-ignored paths"): ``file``,
    #: ``line``, ``col``, ``fact``, ``path`` (root-relative), as ``unresolved`` without lines
    ignored: Spill | list = field(default_factory=list)
    #: dicts, one per stored fact no longer in the notes read (``merge.sync.removed``)
    removed: list = field(default_factory=list)
    #: whether the run retires them (``import --sync``)
    sync: bool = False
    #: dicts, one per notes file renamed: ``from``, ``to``, ``facts`` (``merge.renames``)
    renamed: list = field(default_factory=list)

    @property
    def files(self) -> list[FileStats]:
        return self.notes.files

    @property
    def warnings(self) -> list[Diagnostic]:
        return self.notes.warnings

    @property
    def roots(self) -> list[Root]:
        return self.notes.roots


def line_key(fact: ParsedFact) -> str:
    """A digest of what a fact line says: scope, kind, marker, whole text, run, created.

    The store keeps it with each line a fact was fed (provenance): a line whose key the
    store holds is one already imported (SPEC.md §Merge)."""
    data = "\x1f".join(
        (fact.scope, fact.kind, fact.marker, fact.full_text, fact.run or "", fact.created or "")
    )
    return blake2b(data.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def merge(
    notes: Notes, stored, stems: Stems, sync: bool = False, deleted: Sequence[str] = ()
) -> RunResult:
    """Merge the facts read into the stored ones (SPEC.md §Merge); writes no store.

    A line whose key (``line_key``) the store already holds is the fact it fed and changes
    nothing but what adds up (anchors, gone citations, provenance); so importing the same
    files twice adds nothing and changes nothing. Any other line follows the repeat rule.

    What the merge holds in memory is its index (about 250 bytes a fact); the facts it
    merges into and its entries for the report are kept in temporary files (``spill``).
    The stored facts no longer in the notes read are the result's ``removed``; with
    ``sync`` they are retired and the new facts at their places supersede them
    (``merge.sync``). ``deleted`` names notes files that fed the store and are gone, under
    what the import reads (``merge.sync.deleted``): read as empty, their facts are no longer
    in the notes either.
    Raises ``sqlite3.Error`` from reading ``stored``, ``spill.SpillError``.
    """
    with gc_paused():
        stored.check_entries()  # a store the index would refuse is refused first, as ever
        run = _Run(notes, stored, stems, sync, deleted)
        for fact, res, stem_tuple, key in _prefetched(notes.facts.with_stems(), stored):
            run.line(fact, res, stem_tuple, key)
        return run.result()


class _Run:
    """One merge: the rule, the records it touched and the entries for the report."""

    def __init__(
        self, notes: Notes, stored, stems: Stems, sync: bool = False, deleted: Sequence[str] = ()
    ) -> None:
        self.notes, self.stored, self.stems, self.sync = notes, stored, stems, sync
        self.deleted = list(deleted)
        # ``--sync``: the run's facts of each file in line order, for the rewordings
        self.placed: dict[str, list[tuple[int, bool, str]]] | None = {} if sync else None
        self.rule = Repeats(self._index)
        self.next_id = self.first_new = first_new = stored.next_id
        self.facts = Keyed()  # the facts this run touched, by id
        self.merged = Merged()
        self.gone, self.outside, self.ambiguous = Spill(), Spill(), Spill()
        self.unresolved, self.ignored = Spill(), Spill()
        self.by_file = {st.path: st for st in notes.files}
        # the stored facts read into ``facts`` so far, so that a fact not read yet is not
        # looked for there first (a query a line, once ``facts`` spilled): a bit an id
        # while that is small, as stored ids are dense from 1
        self.read: bytearray | set[int] = (
            bytearray(first_new // 8 + 1) if first_new < 1 << 25 else set()
        )
        self.edits = PathEdits(
            notes,
            stored,
            stems,
            lambda fid: self.facts.get(fid) or self.stored.fact(fid),
            lambda fid: fid >= self.first_new or _has(self.read, fid),
        )
        self.changed = array("q")  # stored facts' ids, in the order touched (more than once)
        self.fed = array("q")  # every stored fact a line fed (more than once)

    def _index(self) -> MergeIndex:
        """The stored facts indexed, made when a line first needs it: nothing is added to
        it before, so it is the same whenever it is made."""
        notes, stored, stems = self.notes, self.stored, self.stems
        if notes.frequencies is not None:
            df = Counter(notes.frequencies)
        else:
            df = MergeIndex.frequencies(stems(f.full_text) for f in notes.facts.parsed())
        df.update(MergeIndex.frequencies(entry[4] for entry in stored.entries()))
        made = MergeIndex(df)
        for fid, scope, nums, tasks, stem_tuple in stored.entries():
            made.add(fid, Key(scope, nums, tasks), stem_tuple)
        return made

    def _touch(self, fid: int) -> FactRecord:
        if fid >= self.first_new or _has(self.read, fid):
            return self.facts.get(fid)
        rec = self.stored.fact(fid)
        self.facts.add(fid, rec)
        _put(self.read, fid)
        return rec

    def line(self, fact: ParsedFact, res, stem_tuple: tuple[str, ...] | None, fp: str) -> None:
        """Merge one fact line (``fp``: its ``line_key``): a new fact or a repeat, then what
        it adds up (anchors, provenance, gone paths) and its citations' entries."""
        stored = self.stored
        if stem_tuple is None:
            stem_tuple = tuple(self.stems(fact.full_text))
        st, nums = frozenset(stem_tuple), numbers(fact.full_text)
        key = Key(fact.scope, nums, fact.tasks)
        known = stored.known(fp)
        rule = self.rule
        fid, sim, edits = rule.which(key, st, known, lambda fact=fact: self.edits.find(fact))
        carried = None  # fingerprints a rewritten citation's new anchors keep
        revived = False
        if fid is None:
            rec = rule.new(self.next_id, fact, stem_tuple, nums, key, st)
            self.next_id += 1
            self.facts.add(rec.id, rec)
        else:
            rec = self._touch(fid)
            held = (len(rec.anchors), len(rec.gone))
            if sim is None:
                sim = similarity(st, rec.stems)
            into_text = rec.text  # before this line's text replaces it
            if known is None:
                carried = rule.update(rec, fact, stem_tuple, nums, key, st, edits)
            elif rec.status == "superseded":  # retired by --sync, its line is back?
                revived = revive(rec, fact.status, status_reason(fact.status))
            self.merged.append(
                {
                    "into": rec.key,
                    "file": fact.file,
                    "line": fact.line,
                    "similarity": round(sim, 4),
                    "known": known is not None,
                    "paths": edits is not None,
                    "text": fact.text,
                    "into_text": into_text,
                }
            )
            if known is None:
                self.by_file[fact.file].merged += 1
            else:
                self.by_file[fact.file].already_imported += 1
        if res.anchors:
            add_anchors(rec, res.anchors, carried)
        self._provenance(rec, fact, fp)
        if self.placed is not None:
            self.placed.setdefault(fact.file, []).append((rec.id, not rec.stored, fact.scope))
        if res.citations:
            add_gone(rec, [c.name for c in res.citations if c.state == "gone"])
        if rec.stored:
            self.fed.append(rec.id)
            if (
                known is None
                or revived
                or rec.new_provenance
                or rec.refed
                or held != (len(rec.anchors), len(rec.gone))
            ):
                self.changed.append(rec.id)
        if res.citations:
            self._cited(fact, rec, res.citations)

    def _provenance(self, rec: FactRecord, fact: ParsedFact, fp: str) -> None:
        """Record that ``fact`` (its line key ``fp``) fed ``rec``, which makes it the fact's
        origin (docs/reference.md "The store": the most recent line that fed it). A line the store
        holds already is recorded again, last (``refed``), only when another row would
        otherwise be the fact's last one: a new row of this run, or a stored row last."""
        where = (fact.file, fact.line)
        rec.origin = where
        # (a file and line is read once a run, so only the store can hold it already)
        if not self.stored.fed(rec.id, fact.file, fact.line, fp):
            rec.new_provenance.append((fact.file, fact.line, fp))
            rec.refed = None
        elif rec.new_provenance or self.stored.latest(rec.id) != where:
            rec.refed = (fact.file, fact.line, fp)
        else:
            rec.refed = None

    def _cited(self, fact: ParsedFact, rec: FactRecord, citations) -> None:
        """The report's entry of each citation of ``fact`` (merged into ``rec``) that is
        not an anchor: gone, outside, unresolved, git-ignored or ambiguous."""
        for c in citations:
            entry = {"file": fact.file, "line": c.line, "col": c.col, "fact": rec.key}
            if c.state == "gone":
                self.gone.append({**entry, "path": c.name, "lines": _lines(c.lines)})
                self.by_file[fact.file].gone += 1
            elif c.state == "outside":
                self.outside.append({**entry, "path": c.name, "reason": c.reason})
            elif c.state == "unresolved":
                self.unresolved.append({**entry, "path": c.name, "lines": _lines(c.lines)})
            elif c.state == "ignored":
                self.ignored.append({**entry, "path": c.name})
            else:
                self.ambiguous.append(
                    {**entry, "name": c.name, "how": c.how, "candidates": list(c.candidates)}
                )

    def _record(self, fid: int) -> FactRecord:
        return self.facts.get(fid) if fid >= self.first_new else self._touch(fid)

    def _removed(self) -> list[dict]:
        """The stored facts no longer in the notes read (``merge.sync.removed``), retired
        when the run syncs."""
        from brainmigrate.merge import sync

        files = [st.path for st in self.notes.files] + self.deleted
        fed = set(self.fed)
        entries = sync.removed(self.stored, files, fed, self.placed, self._record)
        if self.sync:
            for rec in sync.retire(entries, self._touch, self.facts.get):
                self.facts.replace(rec.id, rec)
                if rec.stored:
                    self.changed.append(rec.id)
        return entries

    def result(self) -> RunResult:
        """What the run merged, as a dry run's (``store`` None) ``RunResult``."""
        removed = self._removed()
        return RunResult(
            self.notes,
            self.facts,
            self.merged,
            self.gone,
            self.outside,
            self.ambiguous,
            self.unresolved,
            None,
            True,
            (sorted(set(self.changed)), range(self.first_new, self.next_id)),
            sorted(set(self.fed)),
            self.ignored,
            removed,
            self.sync,
        )


def _has(bits: bytearray | set[int], n: int) -> bool:
    if isinstance(bits, set):
        return n in bits
    return bool(bits[n >> 3] & (1 << (n & 7)))


def _put(bits: bytearray | set[int], n: int) -> None:
    if isinstance(bits, set):
        bits.add(n)
    else:
        bits[n >> 3] |= 1 << (n & 7)


def _lines(lines: tuple[int, int] | None) -> list[int] | None:
    return list(lines) if lines else None


#: Lines merged per batch of store reads (``Stored.prefetch``).
BATCH = 512


def _prefetched(items, stored):
    """``(fact, res, stems, line key)`` of ``items``, the store read a batch ahead."""
    it = iter(items)
    while chunk := list(itertools.islice(it, BATCH)):
        keys = [line_key(fact) for fact, _, _ in chunk]
        stored.prefetch(keys)
        for (fact, res, stem_tuple), key in zip(chunk, keys, strict=True):
            yield fact, res, stem_tuple, key


def fts_words(stems: Stems):
    """The words FTS5 indexes for a fact: stems of its text, scope, kind and task, then its
    task ids as one token each (``TER-160`` -> ``ter160``) and its numbers, so a search
    finds them as written."""
    from brainmigrate.terms import task_token

    # the words of a scope and kind, made once (words of texts joined with spaces are the
    # words of each text, in turn)
    after: dict[tuple[str, str], list[str]] = {}

    def words(rec: FactRecord) -> str:
        out = stems.words(rec.text)
        tail = after.get((rec.scope, rec.kind))
        if tail is None:
            tail = after[rec.scope, rec.kind] = stems.words(f"{rec.scope} {rec.kind}")
        out += tail
        if rec.task:
            out += stems.words(rec.task)
        if rec.tasks:
            out += [task_token(t) for t in sorted(rec.tasks)]
        if rec.numbers:
            out += sorted(rec.numbers)
        return " ".join(out)

    return words
