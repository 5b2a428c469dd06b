"""Resolve what a fact's text names against the ``--root`` checkouts (SPEC.md §Anchors).

Per token, in this order:

1. cited paths (a token with ``/``, a link target, a link into a root's own repository),
   resolved by ``paths.PathResolver`` in every root and reading: a file or folder anchor,
   or a gone, unresolved, ignored or outside citation; a line past the end of the file and
   a ``#fragment`` naming no heading of a Markdown file are warned (BM204, BM205);
2. bare file names (``PaymentGateway.kt``, ``Makefile``), looked up in the first root's
   file names, the one nearest the notes file first; a backticked or linked folder name;
3. module paths (``python -m billing.jobs``, ``billing.models.Invoice``);
4. CamelCase names (``PaymentGateway``), looked up in the first root's declarations.

What the roots hold comes from their ``knowledge.RootKnowledge``, built once per run; the
first root's listing is shared with its name index. CamelCase names are collected over
all facts first and looked up in one batch (``Resolver.finish``), so the checkout is
searched once.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from reprlib import recursive_repr
from typing import Protocol
from urllib.parse import unquote

from brainmigrate.citing import (
    MARKDOWN,
    NO_FACT,
    FactText,
    fragment_of,
    names_heading,
)
from brainmigrate.codes import diagnostic
from brainmigrate.fsutil import printable
from brainmigrate.knowledge import default_listing
from brainmigrate.model import (
    FROM_FACTORY,
    Anchor,
    Citation,
    Diagnostic,
    ParsedFact,
    pickled_as_tuple,
)
from brainmigrate.paths import PathResolver
from brainmigrate.read.links import repo_url_parts
from brainmigrate.read.modules import module_candidates
from brainmigrate.read.tokens import (
    FILE_NAMES,
    MAX_LINE_NUMBER,
    Token,
    camelcase_names,
    cited_link,
    cited_path,
    has_extension,
    path_like,
    tokens,
)
from brainmigrate.roots import Root, normalize
from brainmigrate.shapes import shorten

__all__ = ["NAME_CAP", "NOTHING", "NameIndex", "Resolved", "Resolver", "copy_resolved"]

#: At most this many anchors per fact from bare file names, and as many from CamelCase
#: names (SPEC.md §Anchors).
NAME_CAP = 6
# ------------------------------------------------------------------------------ names


class NameIndex(Protocol):
    """What bare and CamelCase names need of the first root (``brainmigrate.codeindex``)."""

    def files_named(self, name: str) -> list[str]: ...

    def declarations_of(self, names: Iterable[str]) -> dict[str, list]: ...


@pickled_as_tuple
@dataclass(slots=True, init=False, repr=False, eq=False)
class Resolved:
    """What a fact names: anchors, citations that anchored nothing, notes on caps."""

    anchors: list[Anchor] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    notes: list[tuple[int, str]] = field(default_factory=list)
    camel: list[Token] = field(default_factory=list)
    bare_count: int = 0
    bare_dropped: int = 0

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(
        self,
        anchors=FROM_FACTORY,
        citations=FROM_FACTORY,
        notes=FROM_FACTORY,
        camel=FROM_FACTORY,
        bare_count=0,
        bare_dropped=0,
    ) -> None:
        self.anchors = list() if anchors is FROM_FACTORY else anchors
        self.citations = list() if citations is FROM_FACTORY else citations
        self.notes = list() if notes is FROM_FACTORY else notes
        self.camel = list() if camel is FROM_FACTORY else camel
        self.bare_count = bare_count
        self.bare_dropped = bare_dropped

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(anchors={self.anchors!r}, "
            f"citations={self.citations!r}, notes={self.notes!r}, camel={self.camel!r}, "
            f"bare_count={self.bare_count!r}, bare_dropped={self.bare_dropped!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (
                self.anchors,
                self.citations,
                self.notes,
                self.camel,
                self.bare_count,
                self.bare_dropped,
            ) == (
                other.anchors,
                other.citations,
                other.notes,
                other.camel,
                other.bare_count,
                other.bare_dropped,
            )
        return NotImplemented


def copy_resolved(res: Resolved) -> Resolved:
    """A copy of ``res`` whose lists can change without changing ``res``'s."""
    return Resolved(
        list(res.anchors),
        list(res.citations),
        list(res.notes),
        list(res.camel),
        res.bare_count,
        res.bare_dropped,
    )


#: What a fact that names nothing resolves to; its tuples make any change to it fail.
NOTHING = Resolved((), (), (), ())  # type: ignore[arg-type]


class Resolver:
    """Resolves facts' tokens to anchors against ``roots`` (SPEC.md §Anchors).

    ``name_index`` makes the first root's ``NameIndex`` on first need (it is not called
    when no fact holds a path, a bare or a CamelCase name); its listing is the first root's
    listing for path lookups too. ``cache_dir`` keeps each root's git history across runs.
    Call ``scan`` per fact, then ``finish`` once to look up the CamelCase names of all of
    them in one batch, then ``complete`` on each result (which needs only the names, not
    every result kept in memory).
    """

    def __init__(
        self,
        roots: Sequence[Root],
        name_index: Callable[[], NameIndex | None] | None = None,
        cache_dir: str | os.PathLike | None = None,
    ) -> None:
        self.roots = list(roots)
        self.paths = PathResolver(roots, self._first_root_listing, cache_dir)
        self._make_index = name_index
        self._index: NameIndex | None = None
        self._index_made = False
        self._wanted: set[str] = set()
        self._choice: dict[str, tuple] = {}

    def index(self) -> NameIndex | None:
        """The first root's ``NameIndex``, made on first need (None without a maker)."""
        if not self._index_made:
            self._index_made = True
            self._index = self._make_index() if self._make_index else None
        return self._index

    def _first_root_listing(self) -> tuple[str, Iterable[str]]:
        """The first root's files, from its name index (listed once for both uses)."""
        index = self.index()
        files = getattr(index, "files", None)
        if files is None:
            return default_listing(self.roots[0])
        return getattr(index, "listing_way", "git"), files()

    def _holds(self, text: str) -> bool:
        cited = path_like(text)
        return cited is not None and self.paths.holds(cited)

    def scan(
        self,
        fact: ParsedFact,
        diags: list[Diagnostic] | None = None,
        folder: str | None = None,
        references: Mapping[str, str] | None = None,
    ) -> Resolved:
        """Resolve cited paths, bare file names and module paths; collect CamelCase names
        for ``finish``.

        ``folder`` is the notes file's own folder (absolute): paths are also read relative
        to it and to each folder above it (SPEC.md §Anchors 1). A line form whose number
        passes 2^31-1 is no line form: the path keeps no lines and ``diags`` gets a BM203
        warning; a line past the end of the file gets BM204, a ``#fragment`` naming no
        heading of a Markdown file BM205 (both warnings; the anchor is kept).
        ``references`` (the notes file's link reference definitions, label normalized by
        ``notation.link_label`` → target as written) is passed on to the token layer.
        """
        out = Resolved()
        seen: set[Anchor] = set()  # out.anchors as a set: a fact may cite thousands of paths
        ctx = FactText(fact, diags, folder)
        modules = None
        for tok in tokens(fact.segments, self._holds, references=references):
            if tok.overflow is not None and diags is not None:
                form = tok.overflow
                shown = shorten(form, 24, keep=24)
                diags.append(
                    diagnostic(
                        fact.file,
                        tok.line,
                        "BM203",
                        f"line form {shown} holds a number past {MAX_LINE_NUMBER}: the"
                        " citation keeps no lines",
                        tok.col,
                    )
                )
            cited = self._cited(tok, ctx)
            if cited is not None and self._cite(out, tok, cited[0], cited[1], seen, ctx):
                continue
            if "://" in tok.text and self._own_url(out, tok, seen, ctx):
                continue
            text = tok.text
            if "/" not in text.replace("\\", "/"):
                if has_extension(text) or text in FILE_NAMES:
                    files = self._files_named(text)
                    if files:
                        self._bare(out, tok, files, seen, ctx)
                        continue
                elif (tok.link or tok.tick) and self._folder_name(out, tok, seen, folder):
                    continue
            if "." in text:
                if modules is None:  # this fact's module candidates, made on first need
                    modules = {}
                    for c in module_candidates(fact.segments):
                        modules.setdefault(c.line, []).append(c)
                end = tok.end or tok.col + len(tok.whole or text)
                for c in modules.get(tok.line, ()):
                    if tok.col <= c.col < end:
                        # ``import a.b.Name`` names the module a.b and more: no context
                        at = Token(c.name, c.line, c.col, tok.lines)
                        self._module(c.name, c.context and not c.attrs, at, out, seen, folder)
                        break
            for name in camelcase_names(tok.whole or tok.text):
                out.camel.append(Token(name, tok.line, tok.col, None))
                if name not in self._choice:
                    self._wanted.add(name)
        if out.bare_dropped:
            out.notes.append((out.bare_dropped, "bare file names"))
        if not (out.anchors or out.citations or out.camel or out.notes):
            return NOTHING  # most facts name nothing: one shared, read-only value for them
        return out

    # --- cited paths ------------------------------------------------------------------

    def _cited(self, tok: Token, ctx: FactText) -> tuple[str, str] | None:
        """``(path as written, kind)`` when ``tok`` has a cited path's shape
        (``tokens.cited_path``, or ``cited_link`` for a link target): the one place a token
        becomes a path. A folder keeps its trailing ``/``. A leading ``@`` the token layer
        stripped (``Token.at``) is put back: an alias, a workspace package, or a Claude Code
        import."""
        shape = cited_link(tok.text) if tok.link else cited_path(tok.text)
        if shape is None:
            return None
        posix, kind = shape
        if kind == "folder":
            posix += "/"
        if tok.at and not posix.startswith("@"):
            posix = "@" + posix
        return posix, kind

    def _cite(
        self, out: Resolved, tok: Token, cited: str, kind: str, seen: set[Anchor], ctx
    ) -> bool:
        """Resolve cited path ``cited`` of ``tok``; False when it is no citation."""
        plain = cited.lstrip("@")
        near = tok.link or plain.startswith(("./", "../"))
        found = self.paths.resolve(cited, ctx.folder, near=near, kind=kind, link=tok.link)
        if found is None:
            return False
        self._record(out, tok, cited, found, seen, ctx, "cited")
        return True

    def _record(self, out, tok, cited, found, seen, ctx, how: str) -> None:
        state = found[0]
        if state == "found":
            root = self.roots[found[1]]
            folder = found[3] == "folder"
            lines = None if folder else tok.lines
            anchor = Anchor(
                "folder" if folder else "file", root.label, printable(found[2]), None, lines, how
            )
            if anchor not in seen:
                seen.add(anchor)
                out.anchors.append(anchor)
            if not folder and ctx.diags is not None:
                self._check(tok, found[1], found[2], ctx)
        elif state == "outside":
            name = normalize(cited) or cited
            out.citations.append(Citation("outside", name, tok.line, tok.col, reason=found[1]))
        elif state == "ignored":
            out.citations.append(Citation("ignored", printable(found[1]), tok.line, tok.col))
        else:
            name = found[1] if len(found) > 1 else normalize(cited) or cited
            out.citations.append(Citation(state, name, tok.line, tok.col, lines=tok.lines))

    def _check(self, tok: Token, index: int, rel: str, ctx: FactText) -> None:
        """Warn a line form past the end of the file (BM204) and a ``#fragment`` naming no
        heading of a Markdown file (BM205), per SPEC.md §Anchors 1 "Lines and fragments are
        checked"."""
        k = self.paths.knowledge[index]
        nfc = unicodedata.normalize("NFC", rel)
        shown = printable(rel)
        if tok.lines is not None:
            count = k.line_count(nfc)
            if count is not None and tok.lines[0] > count:
                ctx.warn(
                    tok, "BM204", f"line {tok.lines[0]} is past the end of {shown} ({count} lines)"
                )
        fragment = fragment_of(tok)
        if fragment and rel.lower().endswith(MARKDOWN):
            anchors = k.heading_anchors(nfc)
            if anchors is not None and not names_heading(fragment, anchors):
                ctx.warn(tok, "BM205", f"no heading #{printable(fragment)} in {shown}")

    def _own_url(self, out: Resolved, tok: Token, seen: set[Anchor], ctx) -> bool:
        """A URL into a root's own repository (its git remotes, ``origin`` first) is a
        cited path of that root (SPEC.md §Anchors 1); other URLs stay URLs."""
        url = repo_url_parts(tok.text)
        if url is None:
            return False
        named = (url.host, url.owner, url.repo)
        rel = unquote(url.path) if "%" in url.path else url.path
        for i, k in enumerate(self.paths.knowledge):
            if named in k.remotes():
                found = self.paths.resolve_in(i, rel)
                # a branch name with one or two "/" (feature/login): the path starts
                # later; a path of one segment left is no evidence (docs)
                cut, shifts = rel.find("/"), 0
                while found is not None and found[0] != "found" and cut > 0 and shifts < 2:
                    later = rel[cut + 1 :]
                    again = self.paths.resolve_in(i, later) if "/" in later else None
                    if again is not None and again[0] == "found":
                        found = again
                    cut, shifts = rel.find("/", cut + 1), shifts + 1
                if found is not None:
                    self._record(out, tok, url.path, found, seen, ctx, "cited")
                    return True
        return False

    # --- names ------------------------------------------------------------------------

    def _files_named(self, name: str) -> list[str]:
        return self.paths.knowledge[0].named(name) if self.roots else []

    def _bare(self, out, tok: Token, files: list[str], seen, ctx: FactText) -> None:
        """A bare file name: its one file, else the one nearest the notes file (its own
        folder, then each folder above it up to the first root's top), else ambiguous."""
        if len(files) > 1:
            near = self._nearest(files, ctx.folder)
            if near is None:
                out.citations.append(
                    Citation(
                        "ambiguous",
                        tok.text,
                        tok.line,
                        tok.col,
                        "bare-name",
                        tuple(printable(f) for f in files),
                    )
                )
                return
            files = [near]
        anchor = Anchor(
            "file", self.roots[0].label, printable(files[0]), None, tok.lines, "bare-name"
        )
        if (self._add_named(out, anchor, seen) or anchor in seen) and ctx.diags is not None:
            self._check(tok, 0, files[0], ctx)  # each citation's lines and fragment

    def _nearest(self, files: list[str], folder: str | None) -> str | None:
        base = self.roots[0].relative(folder) if folder is not None else None
        if base is None:
            return None
        by_folder = {f.rpartition("/")[0]: f for f in files}
        level = base
        while True:
            if level in by_folder:
                return by_folder[level]
            if not level:
                return None
            level = level.rpartition("/")[0]

    def _add_named(self, out: Resolved, anchor: Anchor, seen: set[Anchor]) -> bool:
        """Add an anchor of a bare name, at most ``NAME_CAP`` per fact; whether it was."""
        if anchor in seen:
            return False
        if out.bare_count >= NAME_CAP:
            out.bare_dropped += 1
            return False
        out.bare_count += 1
        seen.add(anchor)
        out.anchors.append(anchor)
        return True

    def _folder_name(self, out: Resolved, tok: Token, seen, folder: str | None) -> bool:
        """A backticked or linked name without ``/`` or extension that a root holds as a
        folder at its top or in the notes file's folder: a folder anchor (SPEC.md
        §Anchors 2)."""
        name = unicodedata.normalize("NFC", tok.text)
        if not name or name in (".", "..") or has_extension(name):
            return False
        for root, k in zip(self.roots, self.paths.knowledge, strict=True):
            base = root.relative(folder) if folder is not None else None
            for rel in (f"{base}/{name}" if base else None, name):
                if rel and rel in k.folders:
                    anchor = Anchor("folder", root.label, printable(rel), None, None, "bare-name")
                    self._add_named(out, anchor, seen)
                    return True
        return False

    # --- module paths -----------------------------------------------------------------

    def _module(
        self, name: str, context: bool, tok: Token, out: Resolved, seen, folder: str | None
    ) -> bool:
        """Module path ``name`` (``a.b.c``, optionally ``:entry``) per SPEC.md §Anchors 4:
        the file ``a/b/c.py`` or ``a/b/c/__init__.py`` in the roots and readings of 1.
        In a module ``context``: held, a file anchor (``how="module"``); not held, gone
        when its parent package folder is held or a git history held the module, else
        nothing. Elsewhere (only when the first part is a package a root holds) the longest
        held prefix of two or more parts is a file anchor, and nothing is gone. Returns
        whether it anchored or cited something."""
        parts = name.split(":", 1)[0].split(".")
        if len(parts) < 2:
            return False
        if not context and self._module_file(parts[:1], folder) is None:
            return False
        for n in range(len(parts), 1, -1) if not context else (len(parts),):
            found = self._module_file(parts[:n], folder)
            if found is not None:
                self._record(out, tok, found[2], found, seen, NO_FACT, "module")
                return True
        if not context:
            return False
        base = "/".join(parts)
        parent = self.paths.resolve("/".join(parts[:-1]) + "/", folder, kind="folder")
        held = any(
            k.held(f"{base}.py") or k.held(f"{base}/__init__.py") for k in self.paths.knowledge
        )
        if (parent is not None and parent[0] == "found") or held:
            out.citations.append(Citation("gone", f"{base}.py", tok.line, tok.col, "module"))
            return True
        return False

    def _module_file(self, parts: list[str], folder: str | None):
        base = "/".join(parts)
        for rel in (f"{base}.py", f"{base}/__init__.py"):
            found = self.paths.resolve(rel, folder, kind="file")
            if found is not None and found[0] == "found" and found[3] == "file":
                return found
        return None

    def finish(self) -> None:
        """Look up every CamelCase name ``scan`` collected, in one batch; then ``complete``
        gives each fact its declarations."""
        wanted, self._wanted = self._wanted, set()
        if not wanted:
            return
        index = self.index()
        found = index.declarations_of(wanted) if index else {}
        from brainmigrate.codeindex import resolve_symbol

        aliases = getattr(index, "link_target", None)
        for name in wanted:
            state, decls = resolve_symbol(found.get(name, []), aliases)
            if state != "none":  # most names declare nothing: those are not kept
                self._choice[name] = (state, decls)

    def complete(self, res: Resolved) -> Resolved:
        """Resolve ``res``'s CamelCase names with what ``finish`` found: anchors for unique
        declarations, citations for ambiguous ones, a note when more than ``NAME_CAP`` were
        dropped. Changes ``res`` in place and returns it; completing it again changes
        nothing."""
        if not res.camel:
            return res
        count = dropped = 0
        seen: set[str] = set()
        have = set(res.anchors)
        root = self.roots[0].label
        for tok in res.camel:
            if tok.text in seen:
                continue
            seen.add(tok.text)
            state, decls = self._choice.get(tok.text, _UNDECLARED)
            if state == "ambiguous":
                res.citations.append(
                    Citation(
                        "ambiguous",
                        tok.text,
                        tok.line,
                        tok.col,
                        "camelcase",
                        tuple(sorted({printable(d.path) for d in decls})),
                    )
                )
            elif state == "unique":
                d = decls[0]
                anchor = Anchor(
                    "symbol", root, printable(d.path), tok.text, tuple(d.lines), "camelcase"
                )
                if anchor in have:
                    continue
                if count >= NAME_CAP:
                    dropped += 1
                    continue
                count += 1
                have.add(anchor)
                res.anchors.append(anchor)
        if dropped:
            res.notes.append((dropped, "CamelCase names"))
        res.camel = []
        return res


_UNDECLARED = ("none", ())
