"""What store entries keep, applied to the facts a merge made of them (issue 30, SPEC.md
§Merge): the anchors the store kept (besides those found in the text), a status the file
states and its reason (they win over the stored ones, as a notes line's ``x`` marker does;
a fact the run made keeps the file's reason or none, never one the merge made up),
``supersedes`` and ``related`` mapped to the facts their ids and keys became, and, into an
empty store, the ids themselves.

``apply`` takes the merge's ``RunResult`` (a higher stage, so duck-typed here) and changes
it in place, before the store is written.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

from brainmigrate.codes import diagnostic
from brainmigrate.model import Diagnostic, FactRecord
from brainmigrate.sources import Entry
from brainmigrate.spill import Keyed

#: The report entries that name a fact, and the key they name it by.
_NAMING = (("merged", "into"), ("gone", "fact"), ("outside", "fact"), ("ambiguous", "fact"))
_NAMING += (("unresolved", "fact"), ("ignored", "fact"))


def apply(ran, kept: Mapping[tuple[str, int], Entry]) -> list[Diagnostic]:
    """Apply ``kept`` (``(file, line)`` -> the entry read there) to ``ran``'s facts.

    Ids are kept when the store held no fact before (the run's new ids start at 1), every
    fact the run made came from an entry with an id, and those ids are distinct; else the
    facts keep the ids the merge gave them and ``supersedes``/``related`` are mapped
    through them. Returns the warnings: one for ids not kept, one per link to an id or key
    no entry read holds (the link is left out, not lost in silence)."""
    if not kept:
        return []
    stored_ids, new_ids = ran.changed
    again = _already_imported(ran, kept, stored_ids)
    ids = list(itertools.chain(stored_ids, again, new_ids))
    recs: list[FactRecord] = list(ran.facts.values_of(ids, len(ids)))
    entries: dict[int, list[Entry]] = {}
    for rec in recs:
        lines = [(f, n) for f, n, _ in rec.new_provenance] or [rec.origin] * (rec.id in again)
        for where in lines:
            entry = kept.get(where)
            if entry is not None:
                entries.setdefault(rec.id, []).append(entry)
    renumber, warnings = _renumbered(recs, entries, new_ids, stored_ids)
    by_id: dict[int, int] = {}
    by_key: dict[str, int] = {}
    for fid, got in entries.items():
        for entry in got:
            if entry.id is not None:
                by_id.setdefault(entry.id, renumber.get(fid, fid))
            if entry.key is not None:
                by_key.setdefault(entry.key, renumber.get(fid, fid))
    for rec in recs:
        got = entries.get(rec.id)
        if got:
            warnings += _new(_keep(rec, got, by_id, by_key), warnings)
    if renumber:
        _renumber(ran, recs, renumber)
    else:
        for rec in recs:
            if rec.id in entries:
                ran.facts.replace(rec.id, rec)
        now = [rec.id for rec in recs if rec.id in again and rec.state() != rec.snapshot]
        if now:  # a stated status changed a fact its lines fed before: it is written
            ran.changed = (sorted({*stored_ids, *now}), new_ids)
    return warnings


def _already_imported(ran, kept: Mapping[tuple[str, int], Entry], stored_ids) -> set[int]:
    """The stored facts lines already imported fed (not among ``stored_ids``, the ones
    the run may have changed), when an entry states a status: a status the file states
    wins over the stored one, also on a line imported before (SPEC.md §Merge, as a notes
    line's ``x`` marker does)."""
    if not any(entry.status_stated for entry in kept.values()):
        return set()
    return set(ran.fed).difference(stored_ids)


def _renumbered(recs, entries, new_ids, stored_ids) -> tuple[dict[int, int], list[Diagnostic]]:
    """The ids to give the run's facts (merge id -> kept id), or ``{}`` with why not."""
    with_ids = [e for got in entries.values() for e in got if e.id is not None]
    if not with_ids:
        return {}, []
    wanted = {fid: got[0].id for fid, got in entries.items() if got[0].id is not None}
    keepable = (
        not stored_ids
        and getattr(new_ids, "start", 1) == 1
        and all(rec.id in wanted for rec in recs)
        and len(set(wanted.values())) == len(wanted)
    )
    if keepable:
        return {fid: kid for fid, kid in wanted.items() if fid != kid}, []
    if all(rec.stored for rec in recs if rec.id in wanted):
        return {}, []  # every entry repeats a stored fact: no new id to keep or not
    first = with_ids[0]
    why = (
        "the store holds facts already"
        if stored_ids or getattr(new_ids, "start", 1) != 1
        else "two entries merged into one fact, or a fact came from a line without an id"
    )
    return {}, [
        diagnostic(
            first.file,
            None,
            "BM312",
            f"ids not kept ({why}): the facts get new ids, and supersedes and related are"
            " mapped through them; import into an empty store to keep the ids",
        )
    ]


def _keep(rec: FactRecord, got: list[Entry], by_id, by_key) -> list[Diagnostic]:
    warnings = []
    have = set(rec.anchors)
    for entry in got:
        for anchor in entry.anchors:
            if anchor not in have:
                have.add(anchor)
                rec.anchors.append(anchor)
        for path in entry.gone:
            if path not in rec.gone:
                rec.gone.append(path)
        if entry.status_stated:  # the file states it: it wins, as an ``x`` marker does
            rec.status, rec.status_reason = entry.status, entry.status_reason
        elif rec.status == entry.status and (entry.status_reason is not None or not rec.stored):
            rec.status_reason = entry.status_reason  # the file's reason, or none: not one made up
    last = got[-1]
    links = {"supersedes": [], "related": []}
    for what, values in (("supersedes", last.supersedes), ("related", last.related)):
        for old in values:
            if old in by_id:
                links[what].append(by_id[old])
            else:
                warnings.append(_unlinked(last, what, f"k{old}"))
    places = last.relates_at or ((last.line, last.col),) * len(last.relates_to)
    for key, at in zip(last.relates_to, places, strict=True):
        if key in by_key:
            links["related"].append(by_key[key])
        else:
            warnings.append(_unlinked(last, "related", key, at))
    if last.supersedes or last.related or last.relates_to:
        rec.supersedes = tuple(dict.fromkeys(links["supersedes"]))
        rec.related = tuple(dict.fromkeys(links["related"]))
    return warnings


def _unlinked(entry: Entry, what: str, name: str, at: tuple[int, int] | None = None) -> Diagnostic:
    """BM312 for a link no entry read holds, at ``at`` (where the file names it: a
    relation's line) else at the entry."""
    line, col = at or (entry.line, entry.col)
    return diagnostic(
        entry.file,
        line,
        "BM312",
        f"{what} {name}: no entry read holds it; the link is left out (import the file that"
        " holds it in the same run)",
        col,
    )


def _new(said: list[Diagnostic], before: list[Diagnostic]) -> list[Diagnostic]:
    """The warnings of ``said`` not already in ``before`` (the same place and words): a
    note's relation to a target no note has is said once, not once per fact."""
    seen = {(d.file, d.line, d.col, d.message) for d in before}
    return [d for d in said if (d.file, d.line, d.col, d.message) not in seen]


def _renumber(ran, recs: list[FactRecord], renumber: dict[int, int]) -> None:
    """Give ``ran``'s facts their kept ids, in the facts and every report entry."""
    keyed = Keyed()
    moved = {}
    for rec in sorted(recs, key=lambda r: renumber.get(r.id, r.id)):
        new = renumber.get(rec.id, rec.id)
        moved[f"k{rec.id}"] = f"k{new}"
        rec.id = new
        keyed.add(new, rec)
    ran.facts = keyed
    ran.changed = ([], sorted(r.id for r in recs))
    for name, key in _NAMING:
        entries = getattr(ran, name)
        again = type(entries)()
        for item in entries:
            again.append({**item, key: moved.get(item[key], item[key])})
        setattr(ran, name, again)
