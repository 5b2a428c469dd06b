"""The merge of facts put into the store: each one a new fact or a repeat of a stored one
of its scope, by the rule an import merges a line with (SPEC.md §Merge); and what its
``supersedes`` take out of search. Changes records only; ``put`` writes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from brainmigrate.merge.index import Key, MergeIndex, qualifies, similarity
from brainmigrate.merge.rule import Stems, add_anchors, add_gone, numbers
from brainmigrate.model import FactRecord


@dataclass
class Merged:
    """What a put merged: per fact put, in order, its ``records`` (new or stored),
    ``actions`` (``added``/``updated``) and ``replaced`` (how many facts its supersedes
    made superseded); ``others`` the facts superseded, by id."""

    records: list[FactRecord] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    replaced: list[int] = field(default_factory=list)
    others: dict[int, FactRecord] = field(default_factory=dict)

    def written(self) -> list[FactRecord]:
        """Every record this put changed, once each, in the order first touched (new facts
        in id order, as the store's writer wants them)."""
        seen: dict[int, FactRecord] = {}
        for rec in [*self.records, *self.others.values()]:
            seen.setdefault(rec.id, rec)
        return list(seen.values())


class _Pool:
    """The merge rule's index (``merge.index.MergeIndex``) over the stored facts of the
    blocks (scope, numbers, task ids) the put's facts fall in, read once a call, then kept
    up to date with this put's facts; and each block's members, for a fact whose best
    match is one it supersedes (then the next best is looked for among them)."""

    def __init__(self, stored, checked, stems: Stems) -> None:
        self.members: dict[Key, dict[int, frozenset[str]]] = {}
        made, scopes = [], {}
        for c in checked:
            key = Key(c.fact.scope, numbers(c.text), c.tasks)
            if key not in self.members:
                self.members[key] = {}
                scopes.setdefault(key.scope, []).append((key.numbers, key.tasks))
            made.append(stems(c.text))
        for scope, blocks in scopes.items():
            for fid, _scope, nums, tasks, st in stored.of_blocks(scope, blocks):
                self.members[Key(scope, nums, tasks)][fid] = frozenset(st)
        every = (st for block in self.members.values() for st in block.values())
        df = MergeIndex.frequencies(every)
        df.update(MergeIndex.frequencies(made))
        self.index = MergeIndex(df)
        for key, block in self.members.items():
            for fid, st in block.items():
                self.index.add(fid, key, st)

    def best(self, key: Key, st: frozenset[str], excluded: set[int]) -> int | None:
        """The fact a fact of ``key`` and stems ``st`` repeats (the most similar, ties the
        earliest), leaving out ``excluded``; None when there is none."""
        hit = self.index.best(key, st)
        if hit is None or hit[0] not in excluded:
            return None if hit is None else hit[0]
        found, score = None, -1.0
        for fid, other in sorted(self.members[key].items()):
            if fid not in excluded and qualifies(st, other):
                sim = similarity(st, other)
                if sim > score:
                    found, score = fid, sim
        return found

    def put(self, fid: int, key: Key, st: frozenset[str], new: bool) -> None:
        """Fact ``fid`` of ``key`` now has stems ``st`` (``new``: it was just made)."""
        if new:
            self.index.add(fid, key, st)
        else:
            self.index.replace(fid, key, st)
        self.members[key][fid] = st


def merge(stored, checked, placed, stems: Stems, now: str) -> Merged:
    """Merge the ``checked`` facts (``put.Checked``), with their ``placed`` anchors and
    gone citations (``(anchors, gone)`` each), into ``stored`` (a ``stores.Stored`` under
    the write lock): the most similar stored fact of the same scope, equal numbers and
    task ids and stems' Jaccard >= 0.85 (ties: the earliest), is updated, else a new fact
    is made (id ``stored.next_id`` on). A fact a put supersedes is no candidate of its
    merge. Raises ``put.PutError`` for a link to a fact the store does not hold, or a fact
    superseding itself."""
    from brainmigrate.put import PutError

    out, pool = Merged(), _Pool(stored, checked, stems)
    touched: dict[int, FactRecord] = {}
    next_id = stored.next_id
    linked = sorted({i for c in checked for i in (*c.supersedes, *c.related)})
    held = stored.held(linked)
    for c, (anchors, gone) in zip(checked, placed, strict=True):
        f = c.fact
        for name in ("supersedes", "related"):
            lost = [i for i in getattr(c, name) if i not in held and i not in touched]
            if lost:
                raise PutError(
                    f"{f.where}{name}: no fact k{lost[0]} in the store; 'brainmigrate search'"
                    " finds ids"
                )
        stem_tuple = tuple(stems(c.text))
        st, nums = frozenset(stem_tuple), numbers(c.text)
        key = Key(f.scope, nums, c.tasks)
        fid = pool.best(key, st, set(c.supersedes))
        if fid is None:
            rec = _new(next_id, c, stem_tuple, nums, now)
            next_id += 1
            action = "added"
        else:
            rec = touched.get(fid) or stored.fact(fid)
            _update(rec, c, stem_tuple, nums, now)
            action = "updated"
        pool.put(rec.id, key, st, fid is None)
        touched[rec.id] = rec
        add_anchors(rec, anchors)
        add_gone(rec, gone)
        if rec.id in c.related:
            raise PutError(
                f"{f.where}related: k{rec.id} is the fact this put writes; a fact is not"
                " related to itself"
            )
        rec.related = tuple(dict.fromkeys([*rec.related, *c.related]))
        rec.supersedes = tuple(dict.fromkeys([*rec.supersedes, *c.supersedes]))
        out.records.append(rec)
        out.actions.append(action)
        out.replaced.append(_supersede(rec, c, touched, stored, out))
    return out


def _supersede(rec: FactRecord, c, touched: dict, stored, out: Merged) -> int:
    """Mark the facts ``c`` supersedes superseded by ``rec``; how many were not before."""
    from brainmigrate.put import PutError

    replaced = 0
    for sid in c.supersedes:
        if sid == rec.id:
            raise PutError(
                f"{c.fact.where}supersedes: k{sid} is the fact this put updates; a fact cannot"
                " supersede itself"
            )
        target = touched.get(sid) or stored.fact(sid)
        touched[sid] = out.others[sid] = target
        if target.status != "superseded":
            target.status, target.status_reason = "superseded", f"superseded by {rec.key}"
            replaced += 1
    return replaced


def _new(fid: int, c, stem_tuple: tuple[str, ...], nums, now: str) -> FactRecord:
    from brainmigrate.put import MARKER_OF

    f = c.fact
    return FactRecord(
        id=fid,
        scope=f.scope,
        kind=f.kind or "other",
        marker=MARKER_OF[f.kind or "other"],
        text=c.text,
        task=c.task,
        run=f.run.strip() if f.run else None,
        created=now,
        status="active",
        status_reason=None,
        stems=stem_tuple,
        numbers=nums,
        tasks=c.tasks,
    )


def _update(rec: FactRecord, c, stem_tuple: tuple[str, ...], nums, now: str) -> None:
    """``rec`` as a repeat updates it (SPEC.md §Merge): text, status and the source's task
    replaced, kind (and its marker) and ``run`` only when given, ``created`` only when
    empty."""
    from brainmigrate.put import MARKER_OF

    f = c.fact
    rec.text = c.text
    if f.kind is not None:
        rec.kind, rec.marker = f.kind, MARKER_OF[f.kind]
    rec.status, rec.status_reason = "active", None
    rec.task, rec.stems, rec.numbers, rec.tasks = c.task, stem_tuple, nums, c.tasks
    if f.run:
        rec.run = f.run.strip()
    if not rec.created:
        rec.created = now
