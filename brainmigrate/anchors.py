"""Resolve what a fact's text names against the ``--root`` checkouts (SPEC.md §Anchors).

Three sources, in this order per token:

1. cited paths (a token with ``/``), looked up in every root in order;
2. bare file names (``PaymentGateway.kt``), looked up in the first root's file names;
3. CamelCase names (``PaymentGateway``), looked up in the first root's declarations.

Nothing outside a root is ever read: a path is resolved (symlinks included) and checked to
lie under its root before it is stat-ed, and nothing is opened. Results are cached per run,
so a path cited a thousand times costs one lookup.

Bare and CamelCase names need an index of the first root (``brainmigrate.codeindex``);
it is made lazily, only when a fact holds such a name. CamelCase names are collected over
all facts first and looked up in one batch (``Resolver.finish``), so the checkout is
searched once.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from reprlib import recursive_repr
from typing import Protocol
from urllib.parse import unquote

from brainmigrate.fsutil import printable
from brainmigrate.model import (
    FROM_FACTORY,
    Anchor,
    Citation,
    Diagnostic,
    ParsedFact,
    pickled_as_tuple,
)
from brainmigrate.tokens import (
    FILE_NAMES,
    MAX_LINE_NUMBER,
    Token,
    camelcase_names,
    has_extension,
    link_path,
    path_like,
    tokens,
)

__all__ = [
    "FILE_NAMES",
    "NAME_CAP",
    "NOTHING",
    "PathResolver",
    "Resolved",
    "Resolver",
    "Root",
    "Token",
    "camelcase_names",
    "copy_resolved",
    "has_extension",
    "is_absolute",
    "normalize",
    "path_like",
    "tokens",
]

#: At most this many anchors per fact from bare file names, and as many from CamelCase
#: names (SPEC.md §Anchors).
NAME_CAP = 6

_DRIVE = re.compile(r"[A-Za-z]:/")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
#: Longer relative paths are held by no root (Linux's PATH_MAX, in characters).
_PATH_MAX = 4096


def is_absolute(path: str) -> bool:
    """Paths starting with ``/``, ``~``, a drive letter (``C:/``) or ``//host``."""
    return path.startswith(("/", "~")) or bool(_DRIVE.match(path))


def normalize(path: str) -> str | None:
    """Drop ``./`` and empty segments and pop a segment for each ``..``.

    Returns the POSIX path (absolute ones keep their lead), or None when ``..`` climbs
    past the top of a relative path.
    """
    lead = ""
    if path.startswith("//"):
        return path  # //host/share: never under a root
    if path.startswith("/"):
        lead = "/"
    out: list[str] = []
    for seg in path.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if out:
                out.pop()
            elif not lead:
                return None
            continue
        out.append(seg)
    return lead + "/".join(out)


@dataclass(slots=True, init=False, repr=False, eq=False)
class Root:
    """A checkout: ``path`` as an absolute path and ``real`` with symlinks resolved."""

    index: int
    path: str
    real: str

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(self, index, path, real) -> None:
        self.index = index
        self.path = path
        self.real = real

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(index={self.index!r}, path={self.path!r}, "
            f"real={self.real!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.index, self.path, self.real) == (other.index, other.path, other.real)
        return NotImplemented

    @classmethod
    def of(cls, index: int, folder: str | os.PathLike) -> Root:
        absolute = os.path.abspath(os.fspath(folder))
        return cls(index, absolute, os.path.realpath(absolute))

    @property
    def label(self) -> str:
        """The root's path as text every output and the store can hold."""
        return printable(self.path)

    def relative(self, absolute: str) -> str | None:
        """``absolute`` relative to this root, or None when it lies outside."""
        for base in (self.path, self.real):
            if absolute == base:
                return ""
            if absolute.startswith(base.rstrip("/") + "/"):
                return absolute[len(base.rstrip("/")) + 1 :]
        return None


# A lookup result: ("found", root index, rel path) | ("outside", reason) | ("gone",)
# | ("unresolved",)
Lookup = tuple
GONE: Lookup = ("gone",)
UNRESOLVED: Lookup = ("unresolved",)

#: ``History``'s sets when they hold nothing.
_NO_PATHS: frozenset[str] = frozenset()


@dataclass(slots=True, init=False, repr=False, eq=False)
class History:
    """The paths a root's git history held (root-relative) that its tree may lack now, and
    their first segments; ``unavailable`` says why the history could not be read whole (a
    shallow clone, a repository git refuses), else it is empty."""

    paths: frozenset[str] = _NO_PATHS
    firsts: frozenset[str] = _NO_PATHS
    unavailable: str = ""

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(self, paths=_NO_PATHS, firsts=_NO_PATHS, unavailable="") -> None:
        self.paths = paths
        self.firsts = firsts
        self.unavailable = unavailable

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(paths={self.paths!r}, firsts={self.firsts!r}, "
            f"unavailable={self.unavailable!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.paths, self.firsts, self.unavailable) == (
                other.paths,
                other.firsts,
                other.unavailable,
            )
        return NotImplemented


def git_history(root: Root) -> History | None:
    """The paths ``root``'s git history held under ``root``: every path a commit of the
    checked-out branch deleted (``git log --diff-filter=D``; with ``--no-renames`` a rename
    deletes its old path; with ``-m`` a merge commit counts, against each of its parents)
    and every path of ``HEAD`` (deleted from the work tree or the
    index but not committed yet). In a shallow clone, the commits fetched are read and
    ``unavailable`` says "a shallow clone". Read once. None when ``root`` is no git work
    tree."""
    from brainmigrate.git import in_work_tree, run_git

    errors: list[str] = []
    state = run_git(
        root.path, "rev-parse", "--is-inside-work-tree", "--is-shallow-repository", errors=errors
    )
    if state is None or not state.startswith(b"true"):
        if state is None and in_work_tree(root.real):
            return History(unavailable=f"git refused the repository: {errors[0]}")
        return None
    # A shallow clone's history is read as far as it was fetched: HEAD's paths and what its
    # fetched commits deleted are known; what only older commits knew reads as unresolved.
    shallow = "a shallow clone" if state.split()[-1:] == [b"true"] else ""
    if run_git(root.path, "rev-parse", "--verify", "-q", "HEAD") is None:
        return History()  # no commit yet: no history, and nothing it could know
    log = run_git(
        root.path,
        "log",
        "--format=",
        "--name-only",
        "-z",
        "--no-renames",
        "--diff-filter=D",
        "-m",  # a merge's own changes too: a path a merge resolution dropped
        "--relative",
        errors=errors,
    )
    head = run_git(root.path, "ls-tree", "-r", "-z", "--name-only", "HEAD") or b""
    if log is None:
        return History(unavailable=f"git log failed: {errors[-1]}")
    paths = {os.fsdecode(p.strip(b"\n")) for p in (log + b"\0" + head).split(b"\0")}
    paths.discard("")
    paths = {unicodedata.normalize("NFC", p) for p in paths}
    return History(frozenset(paths), frozenset(p.split("/", 1)[0] for p in paths), shallow)


class PathResolver:
    """Looks cited paths up in the roots in order; never reads outside a root.

    ``lookup(path)`` returns ``("found", root_index, relative_path)``,
    ``("outside", reason)``, ``("gone",)`` or ``("unresolved",)`` (SPEC.md §Anchors 1).
    A path no root holds is gone when something of it is known to a root: its first segment
    (a folder or file a root holds), its file name (a file of that name in a root), or the
    root's git history (the path, or a path under its first segment); else unresolved.
    ``file_names()`` gives the file names of every root (made once, on first need).
    Results are cached.
    """

    def __init__(
        self, roots: Sequence[Root], file_names: Callable[[], Iterable[str]] | None = None
    ) -> None:
        self.roots = list(roots)
        self._cache: dict[str, Lookup] = {}
        self._raw: dict[str, Lookup] = {}
        self._beside: dict[tuple[str, str], Lookup | None] = {}
        self._listing: dict[str, dict[str, str] | None] = {}
        self._file_names = file_names
        self._names: frozenset[str] | None = None
        self._histories: list[History | None] | None = None
        self._tops: dict[str, bool] = {}

    def lookup(self, cited: str, link: bool = False) -> Lookup:
        """Where ``cited`` is; a Markdown link target (``link``) is gone, never unresolved."""
        hit = self._cache.get(cited)
        if hit is None:
            hit = self._where(cited)
            if hit[0] == "missing":
                known = self._known(hit[1])
                if not known and _PERCENT.search(cited):
                    decoded = self._lookup(unquote(cited))
                    known = decoded[0] == "missing" and self._known(decoded[1])
                hit = GONE if known else UNRESOLVED
            self._cache[cited] = hit
        return GONE if link and hit is UNRESOLVED else hit

    def holds(self, cited: str) -> bool:
        """Whether a root holds a regular file at ``cited`` (no gone/unresolved verdict, so
        nothing but the path is looked at)."""
        hit = self._cache.get(cited)
        return (hit if hit is not None else self._where(cited))[0] == "found"

    def _where(self, cited: str) -> Lookup:
        """found, outside, gone (absolute under a root) or ``("missing", rel)``; tried once
        more percent-decoded when missing."""
        hit = self._raw.get(cited)
        if hit is None:
            hit = self._lookup(cited)
            if hit[0] == "missing" and _PERCENT.search(cited):
                decoded = unquote(cited)
                if decoded != cited:
                    again = self._lookup(decoded)
                    if again[0] != "missing":
                        hit = again
            self._raw[cited] = hit
        return hit

    def lookup_beside(self, cited: str, folder: str) -> Lookup | None:
        """``cited`` relative to ``folder`` (a notes file's own folder, absolute), when that
        folder lies inside a root: found, outside (it leaves every root) or gone; None when
        ``folder`` lies in no root."""
        key = (cited, folder)
        if key in self._beside:
            return self._beside[key]
        hit = None
        if not is_absolute(cited) and any(r.relative(folder) is not None for r in self.roots):
            target = normalize(folder + "/" + unicodedata.normalize("NFC", cited))
            hit = ("outside", "'..' climbs above the root")
            for root in self.roots:
                rel = root.relative(target) if target else None
                if rel:
                    hit = self._in_root(root, rel) or GONE
                    if hit[0] == "found":
                        break
        self._beside[key] = hit
        return hit

    def _lookup(self, cited: str) -> Lookup:
        path = unicodedata.normalize("NFC", cited)
        if is_absolute(path):
            if path.startswith("~"):
                path = os.path.expanduser(path)
                if path.startswith("~"):
                    return ("outside", "home folder unknown")
            if not path.startswith("/") or path.startswith("//"):
                return ("outside", "absolute path under no root")
            norm = normalize(path)
            for root in self.roots:
                rel = root.relative(norm)
                if rel:
                    return self._in_root(root, rel) or GONE
            return ("outside", "absolute path under no root")
        norm = normalize(path)
        if norm is None:
            return ("outside", "'..' climbs above the root")
        outside = None
        for root in self.roots:
            found = self._in_root(root, norm)
            if found is None:
                continue
            if found[0] == "found":
                return found
            outside = outside or found
        return outside or ("missing", norm)

    def _known(self, rel: str) -> bool:
        """Whether something of root-relative ``rel`` is known to a root (gone, not
        unresolved): cheapest test first, the git history last."""
        first = rel.split("/", 1)[0]
        if first and self._top(first):
            return True
        if rel.rsplit("/", 1)[-1] in self.file_names():
            return True
        for history in self.histories():
            if history is not None and (rel in history.paths or first in history.firsts):
                return True
        return False

    def _top(self, name: str) -> bool:
        """Whether a root holds a file or folder ``name`` at its top."""
        hit = self._tops.get(name)
        if hit is None:
            hit = any(os.path.lexists(os.path.join(r.real, name)) for r in self.roots)
            if not hit and not name.isascii():
                hit = any(self._nfc_walk(r.real, name) is not None for r in self.roots)
            self._tops[name] = hit
        return hit

    def file_names(self) -> frozenset[str]:
        """The file names (NFC) of every root's files, listed once."""
        if self._names is None:
            names: set[str] = set()
            for i, root in enumerate(self.roots):
                if i == 0 and self._file_names is not None:
                    files: Iterable[str] = self._file_names()
                else:
                    from brainmigrate.codeindex.listing import list_files

                    files = (f.path for f in list_files(Path(root.path))[1])
                names.update(unicodedata.normalize("NFC", f.rsplit("/", 1)[-1]) for f in files)
            self._names = frozenset(names)
        return self._names

    def histories(self) -> list[History | None]:
        """Each root's git history (None: no git work tree), read once on first need."""
        if self._histories is None:
            self._histories = [git_history(r) for r in self.roots]
        return self._histories

    def history_unavailable(self) -> list[tuple[Root, str]]:
        """The roots whose history was needed and could not be read whole, with why."""
        if self._histories is None:
            return []
        pairs = zip(self.roots, self._histories, strict=True)
        return [(r, h.unavailable) for r, h in pairs if h is not None and h.unavailable]

    def _in_root(self, root: Root, rel: str) -> Lookup | None:
        """Found, outside (a symlink pointing out), or None when the root has no file there."""
        if len(rel) > _PATH_MAX:
            return None  # no file system holds it (and resolving it would be quadratic)
        candidate = os.path.join(root.real, rel)
        real = os.path.realpath(candidate)
        if root.relative(real) is None:
            # Only a symlink on the way can lead out: never stat what lies there.
            return ("outside", "a symlink points out of the root")
        if _is_file(real):
            return ("found", root.index, rel)
        if not rel.isascii():
            actual = self._nfc_walk(root.real, rel)
            if actual is not None:
                return self._in_root(root, actual) if actual != rel else None
        return None

    def _nfc_walk(self, base: str, rel: str) -> str | None:
        """Find ``rel`` under ``base`` comparing names after NFC (for NFD file systems)."""
        parts = []
        folder = base
        for seg in rel.split("/"):
            names = self._listing.get(folder, False)
            if names is False:
                try:
                    names = {unicodedata.normalize("NFC", n): n for n in os.listdir(folder)}
                except OSError:
                    names = None
                self._listing[folder] = names
            if not names or seg not in names:
                return None
            parts.append(names[seg])
            folder = os.path.join(folder, names[seg])
        return "/".join(parts)


def _is_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


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
    when no fact holds a bare or CamelCase name). Call ``scan`` per fact, then ``finish``
    once to look up the CamelCase names of all of them in one batch, then ``complete`` on
    each result (which needs only the names, not every result kept in memory).
    """

    def __init__(
        self,
        roots: Sequence[Root],
        name_index: Callable[[], NameIndex | None] | None = None,
    ) -> None:
        self.roots = list(roots)
        self.paths = PathResolver(roots, self._first_root_files)
        self._make_index = name_index
        self._index: NameIndex | None = None
        self._index_made = False
        self._named: dict[str, list[str]] = {}
        self._wanted: set[str] = set()
        self._choice: dict[str, tuple] = {}

    def index(self) -> NameIndex | None:
        if not self._index_made:
            self._index_made = True
            self._index = self._make_index() if self._make_index else None
        return self._index

    def _first_root_files(self) -> Iterable[str]:
        """The first root's files, from its name index (listed once for both uses)."""
        index = self.index()
        files = getattr(index, "files", None)
        if files is None:
            from brainmigrate.codeindex.listing import list_files

            return [f.path for f in list_files(Path(self.roots[0].path))[1]]
        return files()

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
        """Resolve cited paths and bare file names; collect CamelCase names for ``finish``.

        ``folder`` is the notes file's own folder (absolute): Markdown link targets are
        also looked up there. A line form whose number passes 2^31-1 is no line form: the
        path keeps no lines and ``diags`` gets a BM203 warning.
        """
        out = Resolved()
        seen: set[Anchor] = set()  # out.anchors as a set: a fact may cite thousands of paths
        for tok in tokens(fact.segments, self._holds, references=references):
            if tok.overflow is not None and diags is not None:
                form = tok.overflow
                shown = form if len(form) <= 24 else form[:24] + "…"
                diags.append(
                    Diagnostic(
                        fact.file,
                        tok.line,
                        "BM203",
                        "warning",
                        f"line form {shown} holds a number past {MAX_LINE_NUMBER}: the"
                        " citation keeps no lines",
                        tok.col,
                    )
                )
            cited = link_path(tok.text) if tok.link else path_like(tok.text)
            if cited is not None:
                self._cite(out, tok, cited, seen, folder if tok.link else None)
                continue
            if "/" not in tok.text.replace("\\", "/") and has_extension(tok.text):
                files = self._files_named(tok.text)
                if files:
                    self._bare(out, tok, files, seen)
                    continue
            for name in camelcase_names(tok.whole or tok.text):
                out.camel.append(Token(name, tok.line, tok.col, None))
                if name not in self._choice:
                    self._wanted.add(name)
        if out.bare_dropped:
            out.notes.append((out.bare_dropped, "bare file names"))
        if not (out.anchors or out.citations or out.camel or out.notes):
            return NOTHING  # most facts name nothing: one shared, read-only value for them
        return out

    def _cite(
        self, out: Resolved, tok: Token, cited: str, seen: set[Anchor], folder: str | None
    ) -> None:
        found = self.paths.lookup(cited, link=tok.link)
        if found[0] != "found" and folder is not None:
            beside = self.paths.lookup_beside(cited, folder)
            if beside is not None and (beside[0] == "found" or found[0] == "outside"):
                found = beside  # ../setup.md from docs/adr/ is docs/setup.md: gone
        if found[0] == "found":
            root = self.roots[found[1]]
            anchor = Anchor("file", root.label, printable(found[2]), None, tok.lines, "cited")
            if anchor not in seen:
                seen.add(anchor)
                out.anchors.append(anchor)
        elif found[0] == "outside":
            out.citations.append(
                Citation("outside", normalize(cited) or cited, tok.line, tok.col, reason=found[1])
            )
        else:
            name = normalize(cited) or cited
            out.citations.append(Citation(found[0], name, tok.line, tok.col, lines=tok.lines))

    def _files_named(self, name: str) -> list[str]:
        hit = self._named.get(name)
        if hit is None:
            index = self.index()
            hit = index.files_named(unicodedata.normalize("NFC", name)) if index else []
            self._named[name] = hit
        return hit

    def _bare(self, out: Resolved, tok: Token, files: list[str], seen: set[Anchor]) -> None:
        if len(files) > 1:
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
        anchor = Anchor(
            "file", self.roots[0].label, printable(files[0]), None, tok.lines, "bare-name"
        )
        if anchor in seen:
            return
        if out.bare_count >= NAME_CAP:
            out.bare_dropped += 1
            return
        out.bare_count += 1
        seen.add(anchor)
        out.anchors.append(anchor)

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
