"""Fingerprints: an anchor's target hashed as the checkouts are now, and read again against
them (SPEC.md §Staleness). ``Checkouts`` is the one reader of the checkouts during a run:
each anchored file is hashed once, and parsed once (source files through the declaration
cache, ``CodeIndex.read_files``) only when its bytes are not those its anchors were
fingerprinted on; each root's commit and git renames are asked for once.

The files themselves are read through ``checkouts.CheckoutFiles``. ``fingerprint_records``
serves ``import --verify``; ``stale`` builds its runs (``stale``, ``verify``,
``check_facts``) on ``Checkouts``. Below the importer, so an import fingerprints what it
writes without reaching into a command module.

An anchor's state (``AnchorCheck.state``), worst last in ``STATES``: ``fresh``, ``moved``,
``body changed``, ``signature changed``, ``declaration gone``, ``file gone``; or
``unreachable`` (its root is missing or unreadable, or its file is there but cannot be
read: ``CheckoutFiles.read_error``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from brainmigrate.checkouts import FILE, FOLDER, LINES, enclosing
from brainmigrate.model import Anchor, FactRecord
from brainmigrate.moves import MoveSearch, in_container, split_symbol

#: Anchor and fact states, from fresh to worst (SPEC.md §Staleness).
STATES = ("fresh", "moved", "body changed", "signature changed", "declaration gone", "file gone")
UNREACHABLE = "unreachable"
#: Each state's rank, fresh lowest (a fact takes its worst anchor's state).
RANK = {s: i for i, s in enumerate(STATES)}
#: States ``verify`` refuses: the anchor's target is not there to fingerprint.
GONE = frozenset({"declaration gone", "file gone", UNREACHABLE})
#: The form of the digests a fingerprint takes now (``Anchor.digest_version``): 2, over
#: code's tokens (SPEC.md §Staleness); 1 was the text with whitespace runs folded.
DIGEST_VERSION = 2
_UNKNOWN = object()


def now_utc() -> str:
    """The time now, ISO 8601 UTC to the second (``2026-11-30T08:00:00Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(slots=True)
class AnchorCheck:
    """One anchor read again: its ``state`` (``STATES`` or ``unreachable``), the
    ``reason`` without the ``STALE:`` prefix (None when fresh), where it was found
    (``root``, ``path``; ``moved_to`` is ``path`` when it moved, else None).

    ``lines``: where the text of an anchor fingerprinted on lines was found, when not at
    its recorded lines (``(first, last)``, 1-based); ``target``: the declaration found,
    ``(kind, container, name)``, when it was not found by its recorded one (a function
    that became a method). Both None otherwise. ``diff_from``: the path the fingerprinted
    commit held the file at, when it held none at ``path`` (a fingerprint carried to a
    renamed file; ``stale.diff_command``), else None."""

    anchor: Anchor
    state: str
    reason: str | None = None
    root: str | None = None
    path: str | None = None
    moved_to: str | None = None
    lines: tuple[int, int] | None = None
    target: tuple | None = None
    diff_from: str | None = None


def label(path: str, anchor: Anchor, target=None) -> str:
    """How a reason names an anchor's target: ``path#Container.name`` for a declaration,
    ``path:10-20`` for the text of lines, ``path`` for a file."""
    target = target or anchor.target
    if target and target[0] not in (FILE, LINES):
        kind, container, name = target
        return f"{path}#{container}.{name}" if container else f"{path}#{name}"
    if anchor.kind == "symbol" and anchor.symbol:
        return f"{path}#{anchor.symbol}"
    if target and target[0] == LINES and anchor.lines:
        first, last = anchor.lines
        return f"{path}:{first}" if first == last else f"{path}:{first}-{last}"
    return path


class Checkouts(MoveSearch):
    """The checkouts as they are now, read once per run (``CheckoutFiles``), and what they
    say of anchors: each anchor read again (``quick``, ``check``: its state) and
    fingerprinted (``fingerprint``)."""

    def prepare(self, anchors: Iterable[Anchor], quick: bool = True) -> None:
        """Parse, in one batch per root, every source file these anchors name whose bytes
        are not those they were fingerprinted on (``unchanged``); ``quick=False`` when the
        anchors are those ``quick`` did not answer."""
        wanted: dict[str, set[str]] = {}
        for a in anchors:
            if quick and self.quick(a) is not None:
                continue
            for root in self.roots_of(a):
                if self.is_file(root, a.path):
                    if not self.unchanged(a, root, a.path):
                        wanted.setdefault(root, set()).add(a.path)
                    break
        for root, paths in wanted.items():
            todo = sorted(p for p in paths if (root, p) not in self._states)
            if todo:
                cached = len(todo) > self.few
                hashes = self.known_hashes(root, todo)
                for rel, st in (
                    self.index(root).read_files(todo, cached=cached, hashes=hashes).items()
                ):
                    self._states[(root, rel)] = st

    # --- the states

    def _hash_in(self, root: str, rel: str) -> str | None:
        """The content hash of ``rel`` when ``root`` is readable and holds it as a file."""
        key = (root, rel)
        if key in self._hashes:
            return self._hashes[key]
        if not (self.readable(root) and self.is_file(root, rel)):
            return None
        return self.content_hash(root, rel)

    def quick(self, a: Anchor) -> AnchorCheck | None:
        """``a`` fresh at once when the first root holding its file holds the very bytes
        it was fingerprinted on (the common case: one hash per file, no parsing)."""
        if a.content_hash is None:
            return None
        for root in self.order(a):
            h = self._hashes.get((root, a.path), _UNKNOWN)
            if h is _UNKNOWN:
                h = self._hash_in(root, a.path)
            if h is not None:
                return AnchorCheck(a, "fresh", None, root, a.path) if h == a.content_hash else None
        return None

    def check(self, a: Anchor, quick: bool = True) -> AnchorCheck:
        """Read anchor ``a`` again and say how it stands (SPEC.md §Staleness, the table);
        ``quick=False`` when ``quick(a)`` was asked already."""
        if quick:
            fresh = self.quick(a)
            if fresh is not None:
                return fresh
        roots = self.roots_of(a)
        if not roots:
            where = ", ".join(self.order(a))
            return AnchorCheck(a, UNREACHABLE, f"root cannot be read: {where}")
        if a.kind == FOLDER:  # existence only (SPEC.md §Staleness "Folder anchor")
            for root in roots:
                if self.is_dir(root, a.path):
                    return AnchorCheck(a, "fresh", None, root, a.path)
            return AnchorCheck(a, "file gone", f"folder gone: {a.path}", roots[0])
        a = self.in_form_of_now(a, roots[0])  # an upgraded fingerprint git can re-take
        for root in roots:
            if self.is_file(root, a.path):
                reason = self.read_error(root, a.path, lines=a.lines is not None)
                if reason is not None:  # there, unread: not gone, nor changed
                    where = f"file cannot be read: {a.path} ({reason})"
                    return AnchorCheck(a, UNREACHABLE, where, root, a.path)
                return self._at(a, root, a.path, None)
        for root in roots:
            found = self._moved(a, root)
            if found is not None:
                return found
        return AnchorCheck(a, "file gone", f"file gone: {a.path}", roots[0])

    def _declaration(self, a: Anchor, root: str, rel: str):
        """The declaration ``a`` is fingerprinted on (or names) in ``rel``, or None."""
        by_name = self._by_name(root, rel, _legacy(a))
        if not by_name:
            return None
        target = a.target
        if target and target[0] not in (FILE, LINES):
            kind, container, name = target
            same = [
                d for d in by_name.get(name, ()) if d.container == container and d.category == kind
            ]
            if len(same) > 1:  # overloads, or one name defined in two branches
                exact = [d for d in same if d.body_digest == a.body_digest]
                by_signature = [d for d in same if d.signature_digest == a.signature_digest]
                same = (
                    [d for d in exact if d.signature_digest == a.signature_digest]
                    or by_signature
                    or same
                )
                if len(same) > 1 and a.lines:
                    first, last = a.lines
                    same = [d for d in same if d.lines[0] <= first and last <= d.lines[1]] or same
            return same[0] if same else None
        if not a.symbol:
            return None
        container, name = split_symbol(a.symbol)  # a put's anchor may be Foo.parse
        decls = [d for d in by_name.get(name, ()) if in_container(d, container)]
        return _by_name(decls, name, a.lines)

    def _by_name(self, root: str, rel: str, legacy: bool = False) -> dict[str, list]:
        """The declarations of ``rel`` by name (empty for a file the index does not read;
        ``legacy``: with version-1 digests)."""
        key = (root, rel, legacy)
        index = self._names.get(key)
        if index is None:
            index = {}
            for d in self.decl_digests(root, rel, legacy) or ():
                index.setdefault(d.name, []).append(d)
            self._names[key] = index
        return index

    def _targets_declaration(self, a: Anchor) -> bool:
        if a.target is not None:
            return a.target[0] not in (FILE, LINES)
        return a.kind == "symbol"

    def _at(self, a: Anchor, root: str, rel: str, moved_from: str | None) -> AnchorCheck:
        """The state of ``a`` at ``rel`` in ``root`` (``moved_from``: its recorded path)."""
        if a.fingerprinted and self.unchanged(a, root, rel):
            where = label(rel, a)
            return _result(a, "fresh", root, rel, moved_from, where)
        if self._targets_declaration(a):
            d = self._declaration(a, root, rel)
            if d is None:
                if moved_from is None:
                    found = self._declaration_elsewhere(a, root, rel)
                    if found is not None:
                        return found
                found = self._renested(a, root, rel, moved_from)
                if found is not None:
                    return found
                return AnchorCheck(
                    a, "declaration gone", f"declaration gone: {label(rel, a)}", root, rel
                )
            target = (d.category, d.container, d.name)
            if not a.fingerprinted:
                state = "fresh"
            elif d.signature_digest != a.signature_digest:
                state = "signature changed"
            elif d.body_digest != a.body_digest:
                state = "body changed"
            else:
                state = "fresh"
            return _result(a, state, root, rel, moved_from, label(rel, a, target))
        if not a.fingerprinted:
            return _result(a, "fresh", root, rel, moved_from, label(rel, a))
        if a.target and a.target[0] == LINES and a.lines:
            now = self.lines_digest(root, rel, a.lines, _legacy(a))
            if now != a.body_digest and now is not None:
                found = self._lines_found(a, root, rel)
                if found is not None:
                    where = label(rel, replace(a, lines=found))
                    check = _result(a, "fresh", root, rel, moved_from, where)
                    check.lines = found
                    return check
        else:
            now = self.file_digest(root, rel, _legacy(a))
        state = "fresh" if now == a.body_digest else "body changed"
        return _result(a, state, root, rel, moved_from, label(rel, a))

    def _lines_found(self, a: Anchor, root: str, rel: str) -> tuple[int, int] | None:
        """Where the fingerprinted text of ``a``'s lines stands in ``rel`` now: the window
        of as many lines with its digest nearest the recorded lines (SPEC.md §Staleness
        "File anchor with lines"), or None."""
        from brainmigrate.codeindex.tokens import find_lines
        from brainmigrate.moves import find_text

        texts = self.line_texts(root, rel, _legacy(a))
        if texts is None or not a.body_digest:
            return None
        held = self.lines_held(a, root)  # the text itself: one search, no hash a window
        if held is not None:
            return find_text(texts, held, *a.lines)
        return find_lines(texts, a.body_digest, *a.lines, self.raw_lines(root, rel, _legacy(a)))

    def at_its_text(self, a: Anchor, root: str) -> Anchor:
        """``a`` at the lines its fingerprinted text stands at now in ``root`` when it is
        fingerprinted on lines whose text moved (``_lines_found``), else ``a`` as it is:
        so a fingerprint taken again covers the text the fact was verified on, not what
        moved into its old lines (``import --verify``)."""
        if not (a.fingerprinted and a.target and a.target[0] == LINES and a.lines):
            return a
        if self.unchanged(a, root, a.path):
            return a
        if self.lines_digest(root, a.path, a.lines, _legacy(a)) == a.body_digest:
            return a
        found = self._lines_found(a, root, a.path)
        return a if found is None else replace(a, lines=found)

    def _renested(
        self, a: Anchor, root: str, rel: str, moved_from: str | None
    ) -> AnchorCheck | None:
        """A declaration not found by (kind, container, name) that is now in another
        container (a function that became a method, a method now in another class or at
        the top level): the one declaration of its name and kind in ``rel`` that is new
        since the fingerprint (``_new_since``), else (when ``rel`` is its recorded path)
        the one in the root. Its state is ``signature
        changed`` (how it is called changed), naming where it is and what it was:
        ``signature changed: path#Parser.parse (was path#parse)`` (SPEC.md §Staleness is
        silent; docs/staleness.md "A function that became a method"); None when there
        is not exactly one (a removed ``Conflicts.new`` is no ``Validator.new`` that was
        there already)."""
        if not (a.fingerprinted and a.target and a.target[0] not in (FILE, LINES)):
            return None
        kind, _, name = a.target
        legacy = _legacy(a)
        path = rel
        same = [
            d
            for d in self._by_name(root, rel, legacy).get(name, ())
            if d.category == kind and self._new_since(a, root, rel, d, moved_from)
        ]
        if not same and moved_from is None:
            found = self.index(root).declarations_of([name]).get(name, [])
            paths = sorted({d.path for d in found if d.category == kind and d.path != rel})
            same = [
                (p, d)
                for p in paths
                for d in self._by_name(root, p, legacy).get(name, ())
                if d.category == kind and self._new_since(a, root, p, d)
            ]
            if len(same) == 1:
                path = same[0][0]
            same = [d for _, d in same]
        if len(same) != 1:
            return None
        d = same[0]
        target = (d.category, d.container, d.name)
        was = label(moved_from or a.path, a)
        where = f"{label(path, a, target)} (was {was})"
        moved = path if (moved_from or path != a.path) else None
        reason = f"signature changed: {where}"
        return AnchorCheck(a, "signature changed", reason, root, path, moved, None, target)

    def _folder_fingerprint(
        self, a: Anchor, root: str, rel: str, commit: str | None, when: str
    ) -> Anchor | None:
        """A folder anchor's fingerprint: no digest, the commit and the time (None when
        ``root`` holds no folder at ``rel``)."""
        if not self.is_dir(root, rel):
            return None
        return replace(
            a,
            path=rel,
            signature_digest=None,
            body_digest=None,
            target=None,
            content_hash=None,
            sketch=None,
            digest_version=DIGEST_VERSION,
            commit=commit,
            verified_at=when,
        )

    def fingerprint(self, a: Anchor, root: str, rel: str, when: str) -> Anchor | None:
        """``a`` with a new fingerprint of what it points at in ``rel`` of ``root`` (its
        path, and its lines for a symbol or for cited lines fingerprinted on a declaration
        now in another file or no longer holding them, follow the target); None when it is
        not there.
        A folder anchor takes no digest (a folder has none): only the commit and the time
        (SPEC.md §Staleness "Folder anchor")."""
        commit = self.commit(root)
        if a.kind == FOLDER:
            return self._folder_fingerprint(a, root, rel, commit, when)
        a = replace(
            a,
            content_hash=self.content_hash(root, rel),
            sketch=self.sketch(root, rel),
            digest_version=DIGEST_VERSION,
        )
        if a.kind == "symbol":
            d = self._declaration(a, root, rel)
            if d is None:
                return None
            return replace(
                a,
                path=rel,
                lines=d.lines,
                signature_digest=d.signature_digest,
                body_digest=d.body_digest,
                target=(d.category, d.container, d.name),
                commit=commit,
                verified_at=when,
            )
        if a.lines:
            first, last = cited = self.trimmed(root, rel, a.lines)
            d = self._declaration(a, root, rel) if self._targets_declaration(a) else None
            decided = d is None and a.target is None
            if d is not None and rel == a.path and d.lines[0] <= first and last <= d.lines[1]:
                decided = True  # the cited lines decide again (a target an older rule chose)
            if decided:
                d = enclosing(self.decl_digests(root, rel) or (), cited)
            if d is not None:
                inside = rel == a.path and d.lines[0] <= first and last <= d.lines[1]
                return replace(
                    a,
                    path=rel,
                    lines=a.lines if inside else d.lines,
                    signature_digest=d.signature_digest,
                    body_digest=d.body_digest,
                    target=(d.category, d.container, d.name),
                    commit=commit,
                    verified_at=when,
                )
            if self._targets_declaration(a) and not decided:
                return None  # fingerprinted on a declaration that is gone
            body = self.lines_digest(root, rel, a.lines)
            target = (LINES, None, None)
        else:
            body = self.file_digest(root, rel)
            target = (FILE, None, None)
        if body is None:
            return None
        return replace(
            a,
            path=rel,
            signature_digest=None,
            body_digest=body,
            target=target,
            commit=commit,
            verified_at=when,
        )


def followed(c: AnchorCheck) -> Anchor:
    """The anchor of check ``c`` pointing where its target was found: at the lines its
    text stands at now, at the declaration it became (``AnchorCheck.lines``, ``target``);
    what ``verify`` fingerprints."""
    a = c.anchor
    if c.lines is not None:
        a = replace(a, lines=c.lines)
    if c.target is not None:
        a = replace(a, target=c.target)
    return a


def _legacy(a: Anchor) -> bool:
    """Whether ``a``'s digests are of the form before token digests (``digest_version``
    1: a fingerprint an older store holds), so it is compared with digests of that form."""
    return a.digest_version == 1


def _by_name(decls, name: str, lines):
    """A symbol anchor's declaration by name: the one at its lines, else a type, else the
    first."""
    same = [d for d in decls if d.name == name]
    if not same:
        return None
    for d in same:
        if lines and tuple(d.lines) == tuple(lines):
            return d
    types = [d for d in same if d.category == "type"]
    return (types or same)[0]


def _result(
    a: Anchor, state: str, root: str, rel: str, moved_from: str | None, where: str
) -> AnchorCheck:
    if moved_from is None:
        reason = None if state == "fresh" else f"{state}: {where}"
        return AnchorCheck(a, state, reason, root, rel)
    if state == "fresh":
        return AnchorCheck(a, "moved", f"moved: {moved_from} → {where}", root, rel, rel)
    return AnchorCheck(a, state, f"{state}: {where} (moved from {moved_from})", root, rel, rel)


def fingerprint_records(facts: Iterable[FactRecord], checkouts: Checkouts) -> set[int]:
    """``import --verify``: fingerprint the anchors of ``facts`` in place, as ``verify``
    does: where each one is, in the roots recorded with them; a target that moved (a
    renamed file, a declaration now in another file: ``Checkouts.check``) is fingerprinted
    where it is now and the anchor follows it. The fact's anchors are then de-duplicated
    by (root, path, symbol) (SPEC.md §Anchors), so the anchor a repeat adds at the new
    place and the stored one that followed it are one. An anchor whose target is gone is
    left as it was (``stale`` reports it); a ``stale`` fact whose every anchor was
    fingerprinted is ``active`` again, as ``verify`` makes it.

    A fingerprint equal to the one an anchor holds (same place, lines and digests) leaves
    the anchor as it is, its ``commit`` and ``verified_at`` included: an ``import
    --verify`` that finds nothing changed writes nothing (docs/reference.md "Keeping the store in
    sync"). Returns the ids of the facts whose anchors or status changed."""
    facts = list(facts)
    changed: set[int] = set()
    checkouts.prepare(a for f in facts for a in f.anchors)
    when = now_utc()
    for rec in facts:
        anchors, every = [], True
        for a in rec.anchors:
            taken = None
            folder = checkouts.folder(a.root)
            if checkouts.readable(folder):
                if checkouts.holds(folder, a):
                    here = checkouts.at_its_text(a, folder)
                    taken = checkouts.fingerprint(here, folder, a.path, when)
                if taken is None:
                    found = checkouts.check(a)
                    follows = found.moved_to is not None or found.target is not None
                    if follows and found.path is not None and found.root is not None:
                        taken = checkouts.fingerprint(followed(found), found.root, found.path, when)
            anchors.append(a if taken is None or _same_fingerprint(a, taken) else taken)
            every = every and taken is not None
        before = [_fingerprint_of(a) for a in rec.anchors]
        rec.anchors = list(dict.fromkeys(anchors))
        if [_fingerprint_of(a) for a in rec.anchors] != before:
            changed.add(rec.id)
        if every and rec.anchors and rec.status == "stale":
            rec.status, rec.status_reason = "active", None  # it holds again, as after verify
            changed.add(rec.id)
    return changed


def _fingerprint_of(a: Anchor, timed: bool = True) -> tuple:
    """What an anchor records: its target and place and every part of its fingerprint
    (``timed``: its commit and time too)."""
    moment = (a.commit, a.verified_at) if timed else ()
    return (
        a.kind,
        a.root,
        a.path,
        a.symbol,
        a.lines,
        a.how,
        a.signature_digest,
        a.body_digest,
        a.target,
        *moment,
        a.content_hash,
        a.sketch,
        a.digest_version,
    )


def _same_fingerprint(held: Anchor, taken: Anchor) -> bool:
    """Whether the fingerprint just ``taken`` is the one the anchor already ``held``: the
    same target, place, lines, digests, content hash, sketch and digest form (its commit
    and time aside: a fingerprint of ``digest_version`` 1 is taken again as 2)."""
    if held.verified_at is None:
        return False  # never fingerprinted (a folder anchor's has no digests, only a time)
    return _fingerprint_of(held, timed=False) == _fingerprint_of(taken, timed=False)
