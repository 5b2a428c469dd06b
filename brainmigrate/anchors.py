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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import unquote

from brainmigrate.fsutil import printable
from brainmigrate.model import Anchor, Citation, ParsedFact, Segment, pickled_as_tuple
from brainmigrate.notation import WS_CHARS

#: At most this many anchors per fact from bare file names, and as many from CamelCase
#: names (SPEC.md §Anchors).
NAME_CAP = 6

#: File names that are paths without an extension (SPEC.md §Anchors 1).
FILE_NAMES = frozenset(
    {
        "Makefile",
        "GNUmakefile",
        "makefile",
        "Dockerfile",
        "Containerfile",
        "Jenkinsfile",
        "Vagrantfile",
        "Gemfile",
        "Rakefile",
        "Procfile",
        "Pipfile",
        "Brewfile",
        "Podfile",
        "Justfile",
        "justfile",
        "LICENSE",
        "LICENCE",
        "COPYING",
        "NOTICE",
        "AUTHORS",
        "CODEOWNERS",
        "README",
        "CHANGELOG",
        "CONTRIBUTING",
    }
)

_TOKEN = re.compile(f"[^{WS_CHARS}\n]+")
#: What every path, file name or CamelCase name holds: a slash, a dot or an upper-case letter.
_INTERESTING = re.compile(r"[/\\.A-Z]").search
_UPPER = re.compile(r"[A-Z]").search
_LOWER = re.compile(r"[a-z]").search


def _interesting(raw: str) -> bool:
    """Whether a token can hold a path, a file name or a CamelCase name: it has a slash or
    a dot, or an upper-case letter with a lower-case one after it. Linear; plain words,
    numbers and task ids (``TER-167``) are passed over without further work."""
    if "/" in raw or "." in raw or "\\" in raw:
        return True
    upper = _UPPER(raw)
    return upper is not None and _LOWER(raw, upper.end()) is not None


_LEAD = "([\"'<`"
_TRAIL = ")]>\"'.,;:!?`"
_EXTENSION = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_LINE_FORM = re.compile(
    r":(?P<a>[0-9]+)(?:-(?P<b>[0-9]+))?(?::[0-9]+)?(?P<more>(?:,[0-9]+(?:-[0-9]+)?)*)"
    r"|#L(?P<c>[0-9]+)(?:-L?(?P<d>[0-9]+))?"
)
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")
_SCP = re.compile(r"[^/@]+@[^/:]+:")
_NOT_PATH_CHARS = frozenset("*${}<>")
_DRIVE = re.compile(r"[A-Za-z]:/")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HUMP = re.compile(r"[A-Z]+(?![a-z])|[A-Z][a-z0-9]*|[a-z0-9]+")


@pickled_as_tuple
@dataclass(frozen=True, slots=True)
class Token:
    """A token of a fact's text: stripped ``text``, its ``lines`` form, 1-based position."""

    text: str
    line: int
    col: int
    lines: tuple[int, int] | None = None


def tokens(segments: Iterable[Segment]) -> Iterator[Token]:
    """Split a fact's segments into tokens (SPEC.md §Anchors).

    Tokens split at whitespace; in ``[label](target)`` the target is its own token; leading
    ``( [ " ' <`` and backticks and trailing ``) ] > " ' . , ; : ! ?``, backticks and
    ``()`` are stripped; a line form (``:88``, ``:88-92``, ``:88:5``, ``:88-92,100-104``,
    ``#L88``, ``#L88-L92``) is split off into ``lines`` as ``(first, last)``.
    """
    for seg in segments:
        if not _INTERESTING(seg.text):
            continue
        for m in _TOKEN.finditer(seg.text):
            raw = m.group()
            if not _interesting(raw):
                continue
            col = seg.col + m.start()
            link = raw.find("](")
            if link >= 0:
                yield from _token(raw[: link + 1], seg.line, col)
                yield from _token(raw[link + 2 :], seg.line, col + link + 2)
            else:
                yield from _token(raw, seg.line, col)


def _token(raw: str, line: int, col: int) -> Iterator[Token]:
    stripped = raw.lstrip(_LEAD)
    col += len(raw) - len(stripped)
    text = _strip_tail(stripped)
    if not text:
        return
    lines = None
    for start in _line_form_starts(text):
        m = _LINE_FORM.fullmatch(text, start)
        if m:
            lines = _lines_of(m)
            text = _strip_tail(text[:start])
            break
    if text:
        yield Token(text, line, col, lines)


def _strip_tail(text: str) -> str:
    """Strip trailing punctuation and ``()`` in any order; linear in the token's length."""
    end = len(text)
    while end:
        if end >= 2 and text[end - 2] == "(" and text[end - 1] == ")":
            end -= 2
        elif text[end - 1] in _TRAIL:
            end -= 1
        else:
            break
    return text[:end]


def _line_form_starts(text: str) -> list[int]:
    """Where a line form could begin: the last two ``:`` and the last ``#L`` (linear)."""
    starts = []
    colon = text.rfind(":")
    if colon > 0:
        starts.append(colon)
        before = text.rfind(":", 0, colon)
        if before > 0:
            starts.insert(0, before)
    hash_l = text.rfind("#L")
    if hash_l > 0:
        starts.append(hash_l)
    return starts


def _lines_of(m: re.Match) -> tuple[int, int]:
    if m.group("c") is not None:
        first = int(m.group("c"))
        last = int(m.group("d")) if m.group("d") else first
        return first, max(first, last)
    first = int(m.group("a"))
    last = int(m.group("b")) if m.group("b") else first
    for part in filter(None, (m.group("more") or "").split(",")):
        last = max(last, *(int(x) for x in part.split("-")))
    return first, max(first, last)


# ------------------------------------------------------------------------------ paths


def path_like(text: str) -> str | None:
    """Return the POSIX form of ``text`` if it is a cited path (SPEC.md §Anchors 1), else None.

    A cited path holds ``/`` (``\\`` counts as ``/``) and its last segment has an extension
    or is a known file name (Makefile, Dockerfile, LICENSE ...). URLs, ``user@host:path``,
    ``www.`` tokens and tokens with ``* $ { } < >`` are not paths.
    """
    text = text.replace("\\", "/")
    if "/" not in text or _NOT_PATH_CHARS.intersection(text):
        return None
    if text.startswith("www.") or _URL.match(text) or _SCP.match(text):
        return None
    last = text[text.rfind("/") + 1 :]
    return text if has_extension(last) or last in FILE_NAMES else None


def has_extension(name: str) -> bool:
    """True when ``name`` ends in a dot, a letter, then letters or digits (``x.kt``)."""
    dot = name.rfind(".")
    return dot >= 0 and _EXTENSION.fullmatch(name, dot + 1) is not None


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


@dataclass(slots=True)
class Root:
    """A checkout: ``path`` as an absolute path and ``real`` with symlinks resolved."""

    index: int
    path: str
    real: str

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
Lookup = tuple


class PathResolver:
    """Looks cited paths up in the roots in order; never reads outside a root.

    ``lookup(path)`` returns ``("found", root_index, relative_path)``,
    ``("outside", reason)`` or ``("gone",)`` (SPEC.md §Anchors 1). Results are cached.
    """

    def __init__(self, roots: Sequence[Root]) -> None:
        self.roots = list(roots)
        self._cache: dict[str, Lookup] = {}
        self._listing: dict[str, dict[str, str] | None] = {}

    def lookup(self, cited: str) -> Lookup:
        hit = self._cache.get(cited)
        if hit is None:
            hit = self._lookup(cited)
            if hit[0] == "gone" and _PERCENT.search(cited):
                decoded = unquote(cited)
                if decoded != cited:
                    hit = self._lookup(decoded)
            self._cache[cited] = hit
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
                    return self._in_root(root, rel) or ("gone",)
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
        return outside or ("gone",)

    def _in_root(self, root: Root, rel: str) -> Lookup | None:
        """Found, outside (a symlink pointing out), or None when the root has no file there."""
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


def camelcase_names(text: str) -> list[str]:
    """CamelCase identifiers in a token (SPEC.md §Anchors 3).

    An identifier starting upper-case, holding a lower-case letter and splitting into two or
    more words (an upper-case run is a word); as the whole token or a part of a dotted token.
    """
    out = []
    for part in text.split("."):
        if (
            part
            and part[0].isupper()
            and _IDENT.fullmatch(part)
            and not part.isupper()
            and sum(len(_HUMP.findall(w)) for w in part.split("_") if w) >= 2
        ):
            out.append(part)
    return out


@pickled_as_tuple
@dataclass(slots=True)
class Resolved:
    """What a fact names: anchors, citations that anchored nothing, notes on caps."""

    anchors: list[Anchor] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    notes: list[tuple[int, str]] = field(default_factory=list)
    camel: list[Token] = field(default_factory=list)
    bare_count: int = 0
    bare_dropped: int = 0


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
        self.paths = PathResolver(roots)
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

    def scan(self, fact: ParsedFact) -> Resolved:
        """Resolve cited paths and bare file names; collect CamelCase names for ``finish``."""
        out = Resolved()
        seen: set[Anchor] = set()  # out.anchors as a set: a fact may cite thousands of paths
        for tok in tokens(fact.segments):
            cited = path_like(tok.text)
            if cited is not None:
                self._cite(out, tok, cited, seen)
                continue
            if "/" not in tok.text.replace("\\", "/") and has_extension(tok.text):
                files = self._files_named(tok.text)
                if files:
                    self._bare(out, tok, files, seen)
                    continue
            for name in camelcase_names(tok.text):
                out.camel.append(Token(name, tok.line, tok.col, None))
                if name not in self._choice:
                    self._wanted.add(name)
        if out.bare_dropped:
            out.notes.append((out.bare_dropped, "bare file names"))
        if not (out.anchors or out.citations or out.camel or out.notes):
            return NOTHING  # most facts name nothing: one shared, read-only value for them
        return out

    def _cite(self, out: Resolved, tok: Token, cited: str, seen: set[Anchor]) -> None:
        found = self.paths.lookup(cited)
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
            out.citations.append(Citation("gone", normalize(cited) or cited, tok.line, tok.col))

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

        for name in wanted:
            state, decls = resolve_symbol(found.get(name, []))
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
