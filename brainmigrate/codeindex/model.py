"""Values of the declaration index: declarations, skipped files, summaries, errors."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from reprlib import recursive_repr
from typing import Any

from brainmigrate.errors import BrainmigrateError

#: Fine kinds that declare a type (SPEC §Anchors 3: class, interface, struct, enum, object,
#: trait, type alias; plus the equivalents other languages spell differently).
TYPE_KINDS = frozenset(
    {
        "class",
        "interface",
        "struct",
        "enum",
        "object",
        "trait",
        "typealias",
        "type",
        "typedef",
        "record",
        "protocol",
        "union",
        "companion",
        "annotation",
        "delegate",
        "actor",
    }
)

#: Fine kinds that declare something callable.
FUNCTION_KINDS = frozenset({"function", "method", "constructor", "destructor", "prototype"})


def category_of(kind: str) -> str:
    """Map a fine kind to its category: ``"type"``, ``"function"`` or ``"other"``.

    ``other`` covers fields, properties, variables, constants, enum members, macros and the
    containers that do not declare a type of their own (Rust ``impl``, Swift ``extension``,
    namespaces and modules), so that e.g. ``impl Foo`` in one file and ``struct Foo`` in
    another do not make ``Foo`` ambiguous.
    """
    if kind in TYPE_KINDS:
        return "type"
    if kind in FUNCTION_KINDS:
        return "function"
    return "other"


class RootError(BrainmigrateError, ValueError):
    """The root does not exist or is not a folder."""


@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class Declaration:
    """One declaration found by tree-sitter in one file of a root.

    Fields:
        name: the declared identifier as written (``PaymentGateway``, ``charge``).
        kind: fine kind (``class``, ``interface``, ``struct``, ``enum``, ``object``,
            ``trait``, ``typealias``, ``record``, ``protocol``, ``function``, ``method``,
            ``constructor``, ``field``, ``property``, ``variable``, ``constant`` …).
        category: ``"type"``, ``"function"`` or ``"other"`` (see :func:`category_of`).
        container: dotted qualified name of the enclosing declaration (``Outer.Inner``),
            the receiver type for Go methods, or ``None`` at top level.
        path: root-relative POSIX path of the declaring file.
        lines: 1-based inclusive (first, last) line span of the declaration, widened over
            Python decorators, JS/TS ``export`` and C++ ``template <…>`` prefixes.
        name_line: 1-based line of the name token (the declaration's first line when it
            has no name token, e.g. a Swift ``init``).
        language: tree-sitter language name (``python``, ``kotlin``, ``tsx`` …).
        signature_digest: hex blake2b (12 bytes) of the header (declaration start up to
            its body, or the whole declaration when it has no body), whitespace folded.
        body_digest: hex blake2b (12 bytes) of the whole declaration text (header and
            body, leading comments and a Python docstring excluded), whitespace folded;
            ``None`` without a body.
    """

    name: str
    kind: str
    category: str
    container: str | None
    path: str
    lines: tuple[int, int]
    name_line: int
    language: str
    signature_digest: str
    body_digest: str | None

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(
        self,
        name,
        kind,
        category,
        container,
        path,
        lines,
        name_line,
        language,
        signature_digest,
        body_digest,
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "category", category)
        object.__setattr__(self, "container", container)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "lines", lines)
        object.__setattr__(self, "name_line", name_line)
        object.__setattr__(self, "language", language)
        object.__setattr__(self, "signature_digest", signature_digest)
        object.__setattr__(self, "body_digest", body_digest)

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(name={self.name!r}, kind={self.kind!r}, "
            f"category={self.category!r}, container={self.container!r}, path={self.path!r}, "
            f"lines={self.lines!r}, name_line={self.name_line!r}, language={self.language!r}, "
            f"signature_digest={self.signature_digest!r}, body_digest={self.body_digest!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (
                self.name,
                self.kind,
                self.category,
                self.container,
                self.path,
                self.lines,
                self.name_line,
                self.language,
                self.signature_digest,
                self.body_digest,
            ) == (
                other.name,
                other.kind,
                other.category,
                other.container,
                other.path,
                other.lines,
                other.name_line,
                other.language,
                other.signature_digest,
                other.body_digest,
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash(
            (
                self.name,
                self.kind,
                self.category,
                self.container,
                self.path,
                self.lines,
                self.name_line,
                self.language,
                self.signature_digest,
                self.body_digest,
            )
        )

    @property
    def qualname(self) -> str:
        """``container.name``, or ``name`` at top level."""
        return f"{self.container}.{self.name}" if self.container else self.name


@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class FileState:
    """One source file as it is now (:meth:`CodeIndex.read_files`): its declarations in
    source order and ``digest``, the file without the comments outside its declarations
    (SPEC.md §Staleness)."""

    declarations: tuple[Declaration, ...]
    digest: str

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(self, declarations, digest) -> None:
        object.__setattr__(self, "declarations", declarations)
        object.__setattr__(self, "digest", digest)

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(declarations={self.declarations!r}, "
            f"digest={self.digest!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.declarations, self.digest) == (other.declarations, other.digest)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.declarations, self.digest))


@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class SkippedFile:
    """A source file left unparsed, and why: ``binary``, ``too large (…)``, ``unreadable: …``."""

    path: str
    reason: str

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(self, path, reason) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "reason", reason)

    @recursive_repr()
    def __repr__(self) -> str:
        return f"{self.__class__.__qualname__}(path={self.path!r}, reason={self.reason!r})"

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.path, self.reason) == (other.path, other.reason)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.path, self.reason))


@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class LanguageCount:
    """Per-language totals of one build: source files, declarations, files with parse errors."""

    files: int
    declarations: int
    errors: int

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(self, files, declarations, errors) -> None:
        object.__setattr__(self, "files", files)
        object.__setattr__(self, "declarations", declarations)
        object.__setattr__(self, "errors", errors)

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(files={self.files!r}, "
            f"declarations={self.declarations!r}, errors={self.errors!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.files, self.declarations, self.errors) == (
                other.files,
                other.declarations,
                other.errors,
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.files, self.declarations, self.errors))


@dataclass(frozen=True, init=False, repr=False, eq=False)
class IndexSummary:
    """What :meth:`CodeIndex.build` did.

    Fields:
        root: the resolved root folder.
        listing: ``"git"`` (``git ls-files``) or ``"scandir"`` (walk with .gitignore rules).
        files: number of regular files listed (all files, not only source files).
        by_language: language -> :class:`LanguageCount` for parsed or cached source files.
        declarations: total declarations over all languages.
        parsed: source files parsed in this build.
        cache_hits: source files whose declarations came from the cache.
        skipped: source files not parsed (binary, over the size limit, unreadable), whether
            found so now or in the cache: ``parsed + cache_hits + len(skipped)`` is the
            number of source files.
        error_files: sorted paths of files whose parse tree holds syntax errors (their
            declarations are kept).
        seconds: wall time of the build.
        cache_path: the cache file, or ``None`` when the cache is disabled.
        cache_status: ``"used"``, ``"created"``, ``"discarded: <why>; rebuilt"`` or
            ``"disabled: <why>"`` (the folder could not be written; nothing was cached).
    """

    root: str
    listing: str
    files: int
    by_language: Mapping[str, LanguageCount]
    declarations: int
    parsed: int
    cache_hits: int
    skipped: tuple[SkippedFile, ...]
    error_files: tuple[str, ...]
    seconds: float
    cache_path: str | None
    cache_status: str

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(
        self,
        root,
        listing,
        files,
        by_language,
        declarations,
        parsed,
        cache_hits,
        skipped,
        error_files,
        seconds,
        cache_path,
        cache_status,
    ) -> None:
        object.__setattr__(self, "root", root)
        object.__setattr__(self, "listing", listing)
        object.__setattr__(self, "files", files)
        object.__setattr__(self, "by_language", by_language)
        object.__setattr__(self, "declarations", declarations)
        object.__setattr__(self, "parsed", parsed)
        object.__setattr__(self, "cache_hits", cache_hits)
        object.__setattr__(self, "skipped", skipped)
        object.__setattr__(self, "error_files", error_files)
        object.__setattr__(self, "seconds", seconds)
        object.__setattr__(self, "cache_path", cache_path)
        object.__setattr__(self, "cache_status", cache_status)

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(root={self.root!r}, listing={self.listing!r}, "
            f"files={self.files!r}, by_language={self.by_language!r}, "
            f"declarations={self.declarations!r}, parsed={self.parsed!r}, "
            f"cache_hits={self.cache_hits!r}, skipped={self.skipped!r}, "
            f"error_files={self.error_files!r}, seconds={self.seconds!r}, "
            f"cache_path={self.cache_path!r}, cache_status={self.cache_status!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (
                self.root,
                self.listing,
                self.files,
                self.by_language,
                self.declarations,
                self.parsed,
                self.cache_hits,
                self.skipped,
                self.error_files,
                self.seconds,
                self.cache_path,
                self.cache_status,
            ) == (
                other.root,
                other.listing,
                other.files,
                other.by_language,
                other.declarations,
                other.parsed,
                other.cache_hits,
                other.skipped,
                other.error_files,
                other.seconds,
                other.cache_path,
                other.cache_status,
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash(
            (
                self.root,
                self.listing,
                self.files,
                self.by_language,
                self.declarations,
                self.parsed,
                self.cache_hits,
                self.skipped,
                self.error_files,
                self.seconds,
                self.cache_path,
                self.cache_status,
            )
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form: plain dicts, lists, strings and numbers (seconds rounded to ms)."""
        return {
            "root": self.root,
            "listing": self.listing,
            "files": self.files,
            "by_language": {
                lang: {"files": c.files, "declarations": c.declarations, "errors": c.errors}
                for lang, c in sorted(self.by_language.items())
            },
            "declarations": self.declarations,
            "parsed": self.parsed,
            "cache_hits": self.cache_hits,
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
            "error_files": list(self.error_files),
            "seconds": round(self.seconds, 3),
            "cache_path": self.cache_path,
            "cache_status": self.cache_status,
        }
