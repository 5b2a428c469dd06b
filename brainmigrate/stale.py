"""Staleness: fingerprint anchors, read them again, record what changed (SPEC.md §Staleness).

``verify`` takes new fingerprints; ``stale`` reads every anchored fact again and records
its state; ``check_facts`` and ``mark`` give ``search`` and ``show`` the state of the facts
they print. The checkouts are read through ``fingerprints.Checkouts``, which
``import --verify`` shares (``fingerprints.fingerprint_records``).

An anchor's state (``AnchorCheck.state``), worst last in ``STATES``: ``fresh``, ``moved``,
``body changed``, ``signature changed``, ``declaration gone``, ``file gone``; or
``unreachable`` (its root is missing or unreadable: not stale, the status is left as it
was). A fact takes the worst state of its anchors (unreachable ones do not count; a fact
whose anchors are all unreachable is ``unreachable``).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from brainmigrate import stores
from brainmigrate.errors import EXIT_FINDINGS, EXIT_OK, BrainmigrateError
from brainmigrate.fingerprints import (
    GONE,
    RANK,
    UNREACHABLE,
    AnchorCheck,
    Checkouts,
    followed,
    now_utc,
)
from brainmigrate.model import Anchor, FactRecord
from brainmigrate.roots import not_a_root

#: ``schema_version`` of ``stale --format json``.
STALE_SCHEMA = 1


class VerifyError(BrainmigrateError):
    """``verify`` was asked for facts that do not exist, or for none."""


@dataclass(slots=True)
class FactCheck:
    """A fact read again: its anchors' checks and its origin, the notes line that fed it
    most recently (``(file, line)``; docs/reference.md "The store").

    ``worst`` is the anchor check that gives the fact its state (the first of the worst),
    None when every anchor is unreachable; ``state`` the fact's state."""

    fact: FactRecord
    anchors: list[AnchorCheck]
    origin: tuple[str, int] | None = None
    worst: AnchorCheck | None = field(init=False, default=None)
    state: str = field(init=False, default=UNREACHABLE)

    def __post_init__(self) -> None:
        for c in self.anchors:
            if c.state != UNREACHABLE and (
                self.worst is None or RANK[c.state] > RANK[self.worst.state]
            ):
                self.worst = c
        if self.worst is not None:
            self.state = self.worst.state

    @property
    def stale(self) -> bool:
        return self.state not in ("fresh", UNREACHABLE)

    @property
    def reason(self) -> str | None:
        """``body changed: src/Foo.kt#Foo.parse`` (None unless stale)."""
        return self.worst.reason if self.stale else None  # type: ignore[union-attr]


# ------------------------------------------------------------------------------ runs


def check_facts(
    facts: Iterable[FactRecord], checkouts: Checkouts, origins: dict | None = None
) -> list[FactCheck]:
    """Each fact with its anchors read again (the files read in one batch first)."""
    facts = list(facts)
    quick = checkouts.quick
    done = [[quick(a) for a in f.anchors] for f in facts]
    rest = [
        a for f, q in zip(facts, done, strict=True) for a, c in zip(f.anchors, q, strict=True)
        if c is None
    ]  # fmt: skip
    checkouts.prepare(rest, quick=False)
    origins = origins or {}
    check = checkouts.check
    out = []
    for f, q in zip(facts, done, strict=True):
        checks = [
            c if c is not None else check(a, quick=False) for a, c in zip(f.anchors, q, strict=True)
        ]
        out.append(FactCheck(f, checks, origins.get(f.id)))
    return out


@dataclass
class StaleResult:
    """What ``stale`` found: the checked facts (``facts``, id order; without ``every``,
    only those not found fresh at once) and the counts. ``fresh_unlisted`` counts the
    checked facts left out of ``facts`` because all their files held the fingerprinted
    bytes. ``recorded`` statuses and ``moved`` anchors (cited text found at other lines)
    were written to the store, in one transaction."""

    facts: list[FactCheck]
    dry_run: bool = False
    recorded: int = 0
    fresh_unlisted: int = 0
    moved: int = 0

    @property
    def checked(self) -> int:
        return len(self.facts) + self.fresh_unlisted

    @property
    def stale(self) -> int:
        return sum(f.stale for f in self.facts)

    @property
    def unreachable(self) -> int:
        return sum(f.state == UNREACHABLE for f in self.facts)

    @property
    def exit_code(self) -> int:
        """1 when a fact is stale, else 0."""
        return EXIT_FINDINGS if self.stale else EXIT_OK


class RootError(BrainmigrateError):
    """A ``--root`` that is no folder, or no anchor could be read in any root."""


def require_roots(roots: Sequence[str | os.PathLike]) -> None:
    """Raise ``RootError`` for the first of ``roots`` (``--root`` values) that does not exist
    or is no folder, as ``import`` does: a typo must not read as "every anchor
    unreachable"."""
    for r in roots:
        if (why := not_a_root(r)) is not None:
            raise RootError(why)


def _none_readable(result: StaleResult, roots: Sequence[str | os.PathLike]) -> str | None:
    """The message when every anchor ``stale`` read was unreachable (and none was found
    fresh without reading), else None."""
    if not result.facts or result.fresh_unlisted or result.unreachable < len(result.facts):
        return None
    where = (
        "in --root " + ", ".join(os.fspath(r) for r in roots)
        if roots
        else "in the roots recorded with them ("
        + ", ".join(sorted({a.root for f in result.facts for a in f.fact.anchors})[:3])
        + ")"
    )
    n = len(result.facts)
    return (
        f"no anchor could be read {where}: {n} anchored {'fact' if n == 1 else 'facts'}"
        " unreachable; check --root"
    )


def _no_scope(scopes, path, known, what: str = "anchored fact", field: str = "--scope") -> str:
    """The message for a ``--scope`` that names no ``what`` (an anchored fact; search: a
    fact): the store's scopes ``known``; ``field`` names it as its caller took it (the
    option ``--scope``, HTTP's query parameter or MCP's argument ``scope``)."""
    shown = ", ".join(list(known)[:20]) + (" …" if len(known) > 20 else "")
    return (
        f"{field} {','.join(scopes)}: no {what} of it in {path}; give one of the"
        f" store's scopes ({shown or 'none'})"
    )


def _selected(facts: Iterable[FactRecord], scopes=(), kinds=()) -> list[FactRecord]:
    from brainmigrate.terms import parse_scopes

    exact, areas = parse_scopes(scopes)
    kinds = set(kinds)
    out = []
    for f in facts:
        if (exact or areas) and not (f.scope in exact or (areas and f.scope.startswith("area:"))):
            continue
        if kinds and f.kind not in kinds:
            continue
        out.append(f)
    return out


def stale(
    store: str | os.PathLike,
    roots: Sequence[str | os.PathLike] = (),
    scopes: Sequence[str] = (),
    kinds: Sequence[str] = (),
    *,
    dry_run: bool = False,
    cache_dir: str | os.PathLike | None = None,
    every: bool = True,
) -> StaleResult:
    """Read every anchored fact that is not superseded again (those of ``scopes`` and
    ``kinds`` when given) and, unless ``dry_run``, record each one's state in one
    transaction: status ``stale`` with its reason, or back to ``active``; unreachable facts
    keep theirs; an anchor whose cited text was found at other lines gets those lines
    (``_shifted``; SPEC.md §Staleness "File anchor with lines"). The store is read in two
    short read transactions (what is anchored, then the facts to read again) and the
    checkouts outside both, so no lock is held while files are hashed; the write lock is
    held only for the writes. Raises
    ``stores.StoreError``, and ``RootError`` for a ``roots`` folder that does not exist
    and when every anchor read was unreachable (none found fresh): the store is then left
    as it was.

    Without ``every`` (reports that list only stale and unreachable facts), a fact all of
    whose files hold the bytes its anchors were fingerprinted on, and that is not stored
    as stale, is counted fresh without being read: the store is asked for each distinct
    anchored file once, so the cost grows with the files, not with the facts.
    """
    path = Path(store)
    require_roots(roots)
    unlisted = 0
    with stores.reader(path) as r:  # short: an import may commit between the two reads
        base, recorded = r.base, r.recorded_roots()
        quick = not (every or scopes or kinds or r.version() < 2)
        files = r.anchored_files() if quick else ()
    checkouts = Checkouts(roots, cache_dir, base=base, recorded=recorded)
    # files hashed outside any read transaction: a reader's lock held for a long hash held
    # an import's commit back until the busy timeout
    fresh = {f for f in files if checkouts.quick(Anchor("file", f[0], f[1], content_hash=f[2]))}
    with stores.reader(path) as r:
        if not quick:
            facts = list(r.anchored().values())
            if scopes and not _selected(facts, scopes):
                raise VerifyError(_no_scope(scopes, path, r.scopes()))
            if scopes or kinds:
                facts = _selected(facts, scopes, kinds)
        else:  # what is not fresh now (changed, or anchored since) is read again
            suspects, unlisted = r.suspects(fresh)
            facts = list(r.anchored(suspects).values()) if suspects else []
        origins = r.origins([f.id for f in facts]) if facts else {}
    result = StaleResult(check_facts(facts, checkouts, origins), dry_run, 0, unlisted)
    _carried(result.facts, checkouts)
    unread = _none_readable(result, roots)
    if unread is not None:
        raise RootError(unread)
    if dry_run:
        return result
    changes = []
    shifted = _shifted(result.facts, checkouts)
    for fc in result.facts:
        if fc.state == UNREACHABLE:
            continue
        if fc.stale and (fc.fact.status, fc.fact.status_reason) != ("stale", fc.reason):
            changes.append((fc.fact.id, "stale", fc.reason))
        elif not fc.stale and fc.fact.status == "stale":
            changes.append((fc.fact.id, "active", None))
    if changes or shifted:
        when = now_utc()
        with stores.updating(path) as up:
            for fid, status, reason in changes:
                up.set_status(fid, status, reason, when)
            for fid, old, new in shifted:
                up.set_fingerprint(fid, old, new)
    result.recorded, result.moved = len(changes), len(shifted)
    return result


def _shifted(facts: Iterable[FactCheck], checkouts: Checkouts) -> list[tuple]:
    """``(fact id, anchor, anchor at its new lines)`` for each fresh anchor whose cited
    text was found at other lines of its file (SPEC.md §Staleness "File anchor with
    lines": its new lines are recorded). The new anchor keeps its digests, commit and
    time, and takes the file's content hash now (its digests hold at these bytes)."""
    out = []
    for fc in facts:
        for c in fc.anchors:
            if c.lines is not None and c.state == "fresh" and c.root and c.path:
                h = checkouts.content_hash(c.root, c.path)
                out.append((fc.fact.id, c.anchor, replace(c.anchor, lines=c.lines, content_hash=h)))
    return out


def _carried(facts: Iterable[FactCheck], checkouts: Checkouts) -> None:
    """Set ``diff_from`` of each stale anchor read at its own path whose fingerprinted
    commit holds no file there (a fingerprint carried to a renamed file by ``check
    --fix`` and a re-import): the path git's renames since that commit, followed back,
    say it had then (``Checkouts.rename_trail``). One ``git cat-file`` per root with such
    anchors; the history only for those the commit does not hold."""
    from brainmigrate.git import missing_at

    asked: dict[str, list[AnchorCheck]] = {}
    for fc in facts:
        for c in fc.anchors:
            a = c.anchor
            if c.state in ("fresh", UNREACHABLE) or not a.commit or not c.root:
                continue
            if c.moved_to is None and c.path == a.path and a.kind != "folder":
                asked.setdefault(c.root, []).append(c)
    for root, checks in asked.items():
        missing = missing_at(root, {(c.anchor.commit, c.anchor.path) for c in checks})
        for c in checks:
            if (c.anchor.commit, c.anchor.path) in missing:
                trail, from_start = checkouts.rename_trail(root, c.anchor.commit)
                c.diff_from = trail.source(c.anchor.path) if from_start else None


def diff_command(c: AnchorCheck) -> str | None:
    """The command that shows what changed in a stale anchor's target since it was
    fingerprinted: ``git -C <root> diff <commit> -- <path>``, or for a target found at
    another path, or fingerprinted at another (``AnchorCheck.diff_from``), ``git -C
    <root> diff -M <commit> -- <old> <new>`` (each word
    shell-quoted; the root relative to the current folder when inside it, else absolute);
    None when the anchor is fresh or unreachable or has no commit (docs/staleness.md,
    "What changed")."""
    a = c.anchor
    if c.state in ("fresh", UNREACHABLE) or not a.commit or not c.root:
        return None
    words = ["git", "-C", _shown(c.root), "diff"]
    if c.moved_to is not None and c.moved_to != a.path:
        words += ["-M", a.commit, "--", a.path, c.moved_to]
    elif c.diff_from is not None and c.diff_from != a.path:
        words += ["-M", a.commit, "--", c.diff_from, a.path]
    else:
        words += [a.commit, "--", a.path]
    return shlex.join(words)


@dataclass
class VerifyResult:
    """What ``verify`` did: ``verified`` facts (id -> their anchors as fingerprinted) and
    ``refused`` ones (id -> the reason, ``file gone: src/Old.kt``)."""

    verified: dict[int, list[Anchor]] = field(default_factory=dict)
    refused: dict[int, str] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """1 when a fact was refused, else 0."""
        return EXIT_FINDINGS if self.refused else EXIT_OK


def verify(
    store: str | os.PathLike,
    ids: Sequence[int] = (),
    *,
    every: bool = False,
    scopes: Sequence[str] = (),
    roots: Sequence[str | os.PathLike] = (),
    cache_dir: str | os.PathLike | None = None,
) -> VerifyResult:
    """Fingerprint the anchors of facts ``ids`` (or ``every`` anchored fact, or those of
    ``scopes``) as the checkouts are now, with each root's commit and the time: the facts
    hold again (status ``active``). A fact whose anchor is gone (or unreachable) is
    refused with the reason and left as it was; a moved target is fingerprinted where it
    is now and the anchor follows it. One transaction, under the store's write lock.
    Raises ``VerifyError`` (unknown ids, nothing chosen), ``RootError`` (a ``roots`` folder
    that does not exist) and ``stores.StoreError``.
    """
    path = Path(store)
    if not ids and not every and not scopes:
        raise VerifyError("name the facts to verify: IDs, --all or --scope")
    stores.require(path)
    require_roots(roots)
    result = VerifyResult()
    when = now_utc()

    with stores.updating(path) as up:
        recorded = up.reader.recorded_roots()
        checkouts = Checkouts(roots, cache_dir, base=up.reader.base, recorded=recorded)
        if ids:
            facts = up.reader.fetch(ids)  # (skips an id SQLite cannot hold: no fact has it)
            missing = [i for i in dict.fromkeys(ids) if i not in facts]
            if missing:
                raise VerifyError(
                    f"no fact {', '.join(f'k{i}' for i in missing)} in {path};"
                    " 'brainmigrate search' finds ids"
                )
            chosen = [facts[i] for i in dict.fromkeys(ids)]
        else:
            chosen = list(up.reader.anchored().values())
        if scopes:
            chosen = _selected(chosen, scopes)
            if not chosen:
                raise VerifyError(_no_scope(scopes, path, up.reader.scopes()))
        for fc in check_facts(chosen, checkouts):
            if not fc.fact.anchors:
                result.refused[fc.fact.id] = "no anchor to fingerprint"
                continue
            gone = next((c for c in fc.anchors if c.state in GONE), None)
            if gone is not None:
                result.refused[fc.fact.id] = gone.reason or gone.state
                continue
            new = []
            for c in fc.anchors:
                taken = checkouts.fingerprint(followed(c), c.root, c.path, when)
                if taken is None:  # pragma: no cover - checked just above
                    result.refused[fc.fact.id] = c.reason or "target gone"
                    break
                new.append((c.anchor, taken))
            else:
                for old, taken in new:
                    up.set_fingerprint(fc.fact.id, old, taken)
                if fc.fact.status == "stale":
                    up.set_status(fc.fact.id, "active", None, when)
                result.verified[fc.fact.id] = [t for _, t in new]

    return result


def mark(fc: FactCheck) -> None:
    """Show a fact as it was just read (``search``, ``show``): a stale one gets status
    ``stale`` and the reason, a fresh one that was stale ``active``; an unreachable one
    keeps its stored status. Changes the record only, never the store."""
    rec = fc.fact
    if rec.status == "superseded" or fc.state == UNREACHABLE:
        return
    if fc.stale:
        rec.status, rec.status_reason = "stale", fc.reason
    elif rec.status == "stale":
        rec.status, rec.status_reason = "active", None


def _shown(folder: str) -> str:
    """``folder`` relative to the current folder when it lies inside it, else absolute."""
    try:
        rel = os.path.relpath(folder)
    except ValueError:  # another drive (Windows)
        return os.path.abspath(folder)
    return os.path.abspath(folder) if rel.split(os.sep)[0] == ".." else rel
