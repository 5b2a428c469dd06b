"""The merge of facts put into the store: each one a new fact or a repeat of a stored one
of its scope, by the rule an import merges a line with (SPEC.md §Merge); and what its
``supersedes`` take out of search. Changes records only; ``put`` writes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from brainmigrate.merge.index import qualifies, similarity
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
    """The merge rule's entries (id, numbers, tasks, stems) of the scopes a put touches:
    the stored facts of a scope read once, then kept up to date with this put's facts."""

    def __init__(self, stored) -> None:
        self.stored = stored
        self.scopes: dict[str, list[list]] = {}

    def of(self, scope: str) -> list[list]:
        entries = self.scopes.get(scope)
        if entries is None:
            entries = self.scopes[scope] = [
                [fid, nums, tasks, frozenset(st)]
                for fid, _scope, nums, tasks, st in self.stored.of_scope(scope)
            ]
        return entries


def merge(stored, checked, placed, stems: Stems, now: str) -> Merged:
    """Merge the ``checked`` facts (``put.Checked``), with their ``placed`` anchors and
    gone citations (``(anchors, gone)`` each), into ``stored`` (a ``stores.Stored`` under
    the write lock): the most similar stored fact of the same scope, equal numbers and
    task ids and stems' Jaccard >= 0.85 (ties: the earliest), is updated, else a new fact
    is made (id ``stored.next_id`` on). A fact a put supersedes is no candidate of its
    merge. Raises ``put.PutError`` for a link to a fact the store does not hold, or a fact
    superseding itself."""
    from brainmigrate.put import PutError

    out, pool = Merged(), _Pool(stored)
    touched: dict[int, FactRecord] = {}
    next_id = stored.next_id
    linked = sorted({i for c in checked for i in (*c.supersedes, *c.related)})
    held = stored.held(linked)
    for c, (anchors, gone) in zip(checked, placed, strict=True):
        f = c.fact
        for key in ("supersedes", "related"):
            lost = [i for i in getattr(c, key) if i not in held and i not in touched]
            if lost:
                raise PutError(
                    f"{f.where}{key}: no fact k{lost[0]} in the store; 'brainmigrate search'"
                    " finds ids"
                )
        stem_tuple = tuple(stems(c.text))
        st, nums = frozenset(stem_tuple), numbers(c.text)
        entries = pool.of(f.scope)
        best = _best(entries, st, nums, c.tasks, set(c.supersedes))
        if best is None:
            rec = _new(next_id, c, stem_tuple, nums, now)
            next_id += 1
            entries.append([rec.id, nums, c.tasks, st])
            action = "added"
        else:
            rec = touched.get(best[0]) or stored.fact(best[0])
            _update(rec, c, stem_tuple, nums, now)
            best[3] = st
            action = "updated"
        touched[rec.id] = rec
        add_anchors(rec, anchors)
        add_gone(rec, gone)
        rec.related = tuple(dict.fromkeys([*rec.related, *c.related]))
        rec.supersedes = tuple(dict.fromkeys([*rec.supersedes, *c.supersedes]))
        replaced = 0
        for sid in c.supersedes:
            if sid == rec.id:
                raise PutError(
                    f"{f.where}supersedes: k{sid} is the fact this put updates; a fact cannot"
                    " supersede itself"
                )
            target = touched.get(sid) or stored.fact(sid)
            touched[sid] = out.others[sid] = target
            if target.status != "superseded":
                target.status, target.status_reason = "superseded", f"superseded by {rec.key}"
                replaced += 1
        out.records.append(rec)
        out.actions.append(action)
        out.replaced.append(replaced)
    return out


def _best(entries: list[list], st: frozenset[str], nums, tasks, excluded: set[int]):
    """The entry a fact repeats: same numbers and task ids, stems' Jaccard >= 0.85, the
    most similar (ties: the earliest); None when there is none."""
    best, score = None, -1.0
    for entry in entries:
        fid, n2, t2, s2 = entry
        if fid in excluded or n2 != nums or t2 != tasks or not qualifies(st, s2):
            continue
        sim = similarity(st, s2)
        if sim > score:
            best, score = entry, sim
    return best


def _new(fid: int, c, stem_tuple: tuple[str, ...], nums, now: str) -> FactRecord:
    from brainmigrate.put import MARKER_OF

    f = c.fact
    return FactRecord(
        id=fid,
        scope=f.scope,
        kind=f.kind,
        marker=MARKER_OF[f.kind],
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
    """``rec`` as a repeat updates it (SPEC.md §Merge): text, kind, marker, status and the
    source's task replaced, ``run`` only when given, ``created`` only when empty."""
    from brainmigrate.put import MARKER_OF

    f = c.fact
    rec.text, rec.kind, rec.marker = c.text, f.kind, MARKER_OF[f.kind]
    rec.status, rec.status_reason = "active", None
    rec.task, rec.stems, rec.numbers, rec.tasks = c.task, stem_tuple, nums, c.tasks
    if f.run:
        rec.run = f.run.strip()
    if not rec.created:
        rec.created = now
