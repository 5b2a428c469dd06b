"""Where an anchor's target went when it is gone from its path (SPEC.md §Staleness, the
"moved" row): a declaration by (kind, container, name) at exactly one other path; a file
by git's rename history from the fingerprinted commit, else by the same bytes or digest,
else by the same file name when that file holds at least half of the fingerprinted file's
lines (the fingerprint's sketch, ``checkouts.sketch_of``).

``MoveSearch`` adds the search to ``checkouts.CheckoutFiles``; ``fingerprints.Checkouts``
builds on it and gives the ``_at`` (the state at a path) and ``_targets_declaration`` it
calls. Cited lines whose text moved within their file are looked for by that text, when
git holds the file as it was fingerprinted (``lines_held``, ``find_text``); whether a
declaration is new since a fingerprint is git's evidence too (``_new_since``).
"""

from __future__ import annotations

from dataclasses import replace
from itertools import accumulate
from typing import TYPE_CHECKING

from brainmigrate.checkouts import (
    FILE,
    LINES,
    CheckoutFiles,
    shares_half,
    sketch_lines,
    sketch_of,
)
from brainmigrate.digests import blake2b
from brainmigrate.model import Anchor

if TYPE_CHECKING:
    from brainmigrate.fingerprints import AnchorCheck


def split_symbol(symbol: str) -> tuple[str | None, str]:
    """An anchor's symbol as ``(container, name)``: ``Foo.parse`` -> ``("Foo", "parse")``,
    ``PaymentGateway`` -> ``(None, "PaymentGateway")``; ``::`` reads as ``.`` and a
    package before the first capitalised part is dropped (``com.x.Foo.parse``)."""
    parts = [p for p in symbol.replace("::", ".").split(".") if p]
    while len(parts) > 1 and parts[0][:1].islower():
        parts = parts[1:]
    if not parts:
        return None, symbol
    return ".".join(parts[:-1]) or None, parts[-1]


def in_container(decl, container: str | None) -> bool:
    """Whether declaration ``decl`` lies in ``container`` as a symbol names it (its
    container chain whole or as its tail: ``Inner.run`` finds ``Outer.Inner.run``)."""
    if container is None:
        return True
    held = decl.container or ""
    return held == container or held.endswith("." + container)


class MoveSearch(CheckoutFiles):
    """The move search over the checkouts (``CheckoutFiles``)."""

    def _declaration_elsewhere(self, a: Anchor, root: str, rel: str | None):
        """The declaration found by (kind, container, name) at exactly one other path."""
        target = a.target
        container = None
        if target and target[0] not in (FILE, LINES):
            name = target[2]
        else:
            container, name = split_symbol(a.symbol) if a.symbol else (None, None)
        if not name:
            return None
        found = self.index(root).declarations_of([name]).get(name, [])
        if target and target[0] not in (FILE, LINES):
            found = [d for d in found if d.container == target[1] and d.category == target[0]]
        else:
            found = [d for d in found if in_container(d, container)]
            types = [d for d in found if d.category == "type"]
            found = types or found
        paths = sorted({d.path for d in found if d.path != rel and d.path != a.path})
        if len(paths) != 1:
            return None
        return self._at(a, root, paths[0], a.path)

    def _moved(self, a: Anchor, root: str) -> AnchorCheck | None:
        """``a``'s target gone from its path, found at exactly one other path of ``root``."""
        if self._targets_declaration(a):
            found = self._declaration_elsewhere(a, root, None)
            if found is not None:
                return found
        rel = self._file_moved(a, root)
        if rel is None:
            return None
        return self._at(a, root, rel, a.path)

    def _file_moved(self, a: Anchor, root: str) -> str | None:
        """The one other path of ``root`` ``a``'s file is at now: by git's renames from
        the fingerprinted commit; else the one file of the same bytes (``content_hash``),
        or for a file anchor without lines of the same file digest; else the one file of
        the same name that holds at least half of the fingerprinted file's lines
        (``_evidence``). None when there is none, or more than one."""
        trail, from_start = self.rename_trail(root, a.commit)
        path = trail.follow(a.path, from_start=from_start)
        if path is not None and self.is_file(root, path):
            return path
        if a.fingerprinted:
            same = self._same_file(a, root)
            if len(same) == 1:
                return same[0]
        evidence = self._evidence(a, root)
        if evidence is None:
            return None
        named = [
            p
            for p in self.index(root).files_named(a.path.rpartition("/")[2])
            if shares_half(evidence, self.line_hashes(root, p) or frozenset())
        ]
        return named[0] if len(named) == 1 else None

    def _same_file(self, a: Anchor, root: str) -> list[str]:
        """The files of ``root`` byte for byte the one ``a`` was fingerprinted on (any
        anchor with a ``content_hash``, lines or symbol too); when none is, those of the
        same file digest for a file anchor without lines fingerprinted in the digest form
        of now. A fingerprint of ``digest_version`` 1 is looked for by its bytes only:
        its digest form is no file's cached one, and every file of its extension would be
        parsed again on every run (docs/staleness.md "Moved")."""
        if a.content_hash:
            same = self.same_bytes(root, a.path, a.content_hash)
            if same:
                return same
        if a.target and a.target[0] == FILE and a.body_digest and a.digest_version != 1:
            return self.same_digest(root, a.path, a.body_digest)
        return []

    def _evidence(self, a: Anchor, root: str) -> str | None:
        """The sketch of the lines of ``a``'s file as it was fingerprinted: the one the
        fingerprint keeps, else one taken of the file as its fingerprinted commit held it
        (a fingerprint taken before sketches); None without either (no same-name move)."""
        if a.sketch is not None:
            return a.sketch
        if a.commit:
            data = self.held_at(root, a.commit, a.path)
            if data is not None:
                return sketch_of(sketch_lines(data))
        return None

    def _new_since(self, a: Anchor, root: str, path: str, d, was: str | None = None) -> bool:
        """Whether declaration ``d`` (of ``path``) is new since ``a`` was fingerprinted, by
        git's evidence: the file at ``path`` (at ``was`` then: the anchor's own path, for
        the file its file moved to) held no declaration of its (kind, container, name) at
        the fingerprinted commit, or did not exist then. False without a commit or when
        git cannot tell, and when the fingerprint was taken on bytes that commit does not
        hold (an uncommitted edit: the commit says nothing of what was fingerprinted): no
        evidence, no claim."""
        if not a.commit:
            return False
        if a.content_hash and self.held_hash(root, a.commit, a.path) not in (None, a.content_hash):
            return False
        changed = self.changed_since(root, a.commit)
        if changed is not None and path not in changed and was is None:
            return False  # the file is as the commit held it: all it declares was there
        path = was or path
        old = self.held_at(root, a.commit, path)
        if old is None:  # a file new since then, if git can read the commit at all
            return path != a.path and self.held_at(root, a.commit, a.path) is not None
        key = (root, a.commit, path)
        held = self._held_declarations.get(key)
        if held is None:
            language = self.index(root).language_of(path)
            if language is None:
                return False
            from brainmigrate.codeindex.extract import extract_file
            from brainmigrate.codeindex.model import category_of

            rows = extract_file(old, language)[1]
            held = self._held_declarations[key] = {(category_of(r[1]), r[2], r[0]) for r in rows}
        return (d.category, d.container, d.name) not in held

    # --- fingerprints

    def in_form_of_now(self, a: Anchor, root: str) -> Anchor:
        """``a`` with its digests taken again in the form of now (``digest_version`` 2) on
        the very bytes it was fingerprinted on, when it is a version-1 fingerprint (an
        upgraded store) and its commit holds those bytes: then it is compared as a
        fingerprint of now is, and a comment edit or a re-flow is no change there either.
        Else ``a`` as it is (compared in its own form)."""
        target = a.target
        if a.digest_version != 1 or target is None or not (a.commit and a.content_hash):
            return a
        if self.held_hash(root, a.commit, a.path) != a.content_hash:
            return a
        data = self.held_at(root, a.commit, a.path)
        language = self.index(root).language_of(a.path)
        if data is None:
            return a
        from brainmigrate.codeindex.extract import digest

        if target[0] == FILE:
            body = self._held_rows(root, a.commit, a.path, language)[1] if language else None
            return replace(a, body_digest=body or digest(data), digest_version=2)
        if target[0] == LINES:
            from brainmigrate.codeindex.tokens import lines_digest

            if not a.lines:
                return a
            raw = self._held_texts(root, a.commit, a.path, None)
            texts = self._held_texts(root, a.commit, a.path, language) if language else raw
            digest_now = lines_digest(texts or [], *a.lines, raw if language else None)
            return replace(a, body_digest=digest_now, digest_version=2)
        if language is None:
            return a
        return self._declaration_now(a, root, language)

    def _declaration_now(self, a: Anchor, root: str, language: str) -> Anchor:
        """``in_form_of_now`` of a fingerprint taken on a declaration: the one of its
        (kind, container, name) whose version-1 digests are the fingerprint's (of several,
        overloads, the same one in order), with its digests of now."""
        from brainmigrate.codeindex.model import category_of

        kind, container, name = a.target  # type: ignore[misc]

        def same(rows):
            return [
                r for r in rows if r[0] == name and r[2] == container and category_of(r[1]) == kind
            ]

        old = same(self._held_rows(root, a.commit, a.path, language, legacy=True)[0])
        now = same(self._held_rows(root, a.commit, a.path, language)[0])
        at = next(
            (i for i, r in enumerate(old) if (r[6], r[7]) == (a.signature_digest, a.body_digest)),
            None,
        )
        if at is None or len(old) != len(now):
            return a
        row = now[at]
        return replace(a, signature_digest=row[6], body_digest=row[7], digest_version=2)

    def _held_rows(self, root, commit, path, language, legacy=False) -> tuple[tuple, str | None]:
        """``(rows, file digest)`` of ``path`` as ``commit`` held it (``extract_file``;
        ``legacy``: in digest form 1), parsed once per file and form; empty when git
        cannot tell."""
        key = (root, commit, path, language, legacy)
        if key not in self._held_parsed:
            from brainmigrate.codeindex.extract import extract_file

            data = self.held_at(root, commit, path)
            parsed = extract_file(data, language, legacy=legacy) if data is not None else None
            self._held_parsed[key] = ((), None) if parsed is None else (parsed[1], parsed[2])
        return self._held_parsed[key]

    def _held_texts(self, root, commit, path, language) -> list[bytes] | None:
        """``codeindex.tokens.line_texts`` of ``path`` as ``commit`` held it, once a file;
        None when git cannot tell."""
        key = (root, commit, path, language)
        if key not in self._held_lines:
            from brainmigrate.codeindex.tokens import line_texts

            data = self.held_at(root, commit, path)
            self._held_lines[key] = None if data is None else line_texts(data, language)
        return self._held_lines[key]

    def lines_held(self, a: Anchor, root: str) -> bytes | None:
        """The text ``a``'s lines digest was taken of (``codeindex.tokens.lines_digest``:
        its lines' non-empty texts joined by one space), read from the file as its
        fingerprinted commit held it, when that commit holds the very bytes fingerprinted
        and the text has that digest; else None (no commit, an uncommitted edit)."""
        if not (a.commit and a.content_hash and a.lines and a.body_digest):
            return None
        if self.held_hash(root, a.commit, a.path) != a.content_hash:
            return None
        legacy = a.digest_version == 1
        language = None if legacy else self.index(root).language_of(a.path)
        texts = self._held_texts(root, a.commit, a.path, language)
        if texts is None:
            return None
        first, last = a.lines
        text = b" ".join(t for t in texts[first - 1 : last] if t)
        return text if blake2b(text, digest_size=12).hexdigest() == a.body_digest else None


def find_text(texts: list[bytes], text: bytes, first: int, last: int) -> tuple[int, int] | None:
    """``codeindex.tokens.find_lines`` for a wanted ``text`` known (``lines_held``), not
    only its digest: the window of ``last - first + 1`` lines of ``texts`` whose non-empty
    texts joined by one space are ``text``, the one starting nearest line ``first`` (the
    earlier of two as near), as ``(first, last)`` 1-based; when no window of that many
    lines has it, the text over another number of lines (blank or comment lines came or
    went inside it: clap's doc attributes turned into ``///`` lines), from its first line
    to its last; None when it is nowhere. The same-length answer in one substring search
    of the joined file instead of a hash of every window (a 1,000-line window in a
    20,000-line file: 0.6 s -> ms)."""
    n = last - first + 1
    if n < 1 or n > len(texts) or not text:
        return None
    kept = [t for t in texts if t]
    joined = b" ".join(kept)
    ends = list(accumulate((len(t) + 1 for t in kept), initial=-1))[1:]
    start_of = {end - len(t): i for i, (t, end) in enumerate(zip(kept, ends, strict=True))}
    end_of = {end: j for j, end in enumerate(ends)}
    spans, at = set(), joined.find(text)
    while at >= 0:
        i, j = start_of.get(at), end_of.get(at + len(text))
        if i is not None and j is not None:
            spans.add((i, j))
        at = joined.find(text, at + 1)
    if not spans:
        return None
    before = list(accumulate((1 if t else 0 for t in texts), initial=0))
    for s in sorted(range(len(texts) - n + 1), key=lambda s: (abs(s + 1 - first), s)):
        if (before[s], before[s + n] - 1) in spans:
            return s + 1, s + n
    # the text over another number of lines (lines blank or of comments only came or
    # went inside it): from its first line to its last, the one nearest line ``first``
    line_of = [k + 1 for k, t in enumerate(texts) if t]
    found = sorted((line_of[i], line_of[j]) for i, j in spans)
    return min(found, key=lambda span: (abs(span[0] - first), span[0]))
