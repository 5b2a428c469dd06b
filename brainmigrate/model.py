"""The values every stage passes on: lines, facts, anchors, citations, diagnostics.

All frozen dataclasses. Positions (file, line, column) are kept out of equality where two
values should compare by meaning (STYLE.md, "Habits").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter
from reprlib import recursive_repr
from typing import Any

#: Kinds the store keeps, in report order (SPEC.md §Notation, "Markers").
KINDS = ("decision", "pattern", "blocker", "environment", "other")
#: Markers in report order (SPEC.md §Notation), and last ``-``: a Markdown notes fact that
#: no brain marker starts (``- pool of 8``; kind ``other``, SPEC.md §Notation, Markdown
#: notes).
MARKERS = ("+", "!", "~", "=", "?", ">", "->", "x", "-")
#: The markers of brain notation: every marker but ``-``.
BRAIN_MARKERS = MARKERS[:-1]
#: Reasons a line is skipped (SPEC.md §Notation, classes "skipped" and "other").
SKIP_REASONS = (
    "context",
    "state",
    "heading",
    "code",
    "comment",
    "callout",
    "empty",
    "orphan",
    "prose",
    "conflict",
    "link-definition",
    "front-matter",
    "table",
)
#: Fact statuses (SPEC.md §Store).
STATUSES = ("active", "stale", "superseded")
#: How an anchor was found, ``Anchor.how`` (SPEC.md §Report, "how"): a cited path, a bare
#: file name, a CamelCase name, a Python module path (§Anchors 4). No other value is
#: written, by any version.
HOWS = ("cited", "bare-name", "camelcase", "module")
#: What an anchor points at, ``Anchor.kind`` (SPEC.md §Report, "kind"): a file, a folder
#: (existence only, §Staleness "Folder anchor"), a declaration.
ANCHOR_KINDS = ("file", "folder", "symbol")
#: The default of a written-out ``__init__``'s parameter whose field has a
#: ``default_factory``: left out, the field gets the factory's value, as with dataclass().
FROM_FACTORY: Any = object()
#: ``ParsedFact.suppress`` of a fact no trailer waives anything for.
_NO_ENTRIES: frozenset[str] = frozenset()


def pickled_as_tuple(cls):
    """Pickle instances of the slotted dataclass ``cls`` as ``cls(*fields)``.

    A run keeps its facts in temporary files (``spill``); pickle's default for slotted
    dataclasses (a state dict set field by field) took a quarter of a merge's time.
    """
    fields = attrgetter(*cls.__slots__)
    cls.__reduce__ = lambda self: (cls, fields(self))
    return cls


@pickled_as_tuple
@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class Diagnostic:
    """A problem in the notes: where it is, a stable code, a severity and a sentence.

    ``line`` and ``col`` are 1-based; ``col`` is None when the whole line is meant.
    Severity is ``error``, ``warning`` or ``info``.
    """

    file: str
    line: int | None
    code: str
    severity: str
    message: str
    col: int | None = None

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(self, file, line, code, severity, message, col=None) -> None:
        object.__setattr__(self, "file", file)
        object.__setattr__(self, "line", line)
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "severity", severity)
        object.__setattr__(self, "message", message)
        object.__setattr__(self, "col", col)

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(file={self.file!r}, line={self.line!r}, "
            f"code={self.code!r}, severity={self.severity!r}, message={self.message!r}, "
            f"col={self.col!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.file, self.line, self.code, self.severity, self.message, self.col) == (
                other.file,
                other.line,
                other.code,
                other.severity,
                other.message,
                other.col,
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.file, self.line, self.code, self.severity, self.message, self.col))

    def to_dict(self) -> dict:
        """``file``, ``line``, ``col`` (None when the whole line or file is meant), ``code``,
        ``severity``, ``message``: every key always present."""
        return {
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
        }


@pickled_as_tuple
@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class Segment:
    """A fact's text as it stands on one physical line: 1-based line and column of ``text``."""

    line: int
    col: int
    text: str

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(self, line, col, text) -> None:
        object.__setattr__(self, "line", line)
        object.__setattr__(self, "col", col)
        object.__setattr__(self, "text", text)

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(line={self.line!r}, col={self.col!r}, "
            f"text={self.text!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.line, self.col, self.text) == (other.line, other.col, other.text)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.line, self.col, self.text))


@pickled_as_tuple
@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class Anchor:
    """What a fact holds for: a file (``kind="file"``) or a declaration (``kind="symbol"``).

    ``root`` is the checkout's folder as an absolute path; ``path`` is POSIX, relative to it;
    ``lines`` is ``(first, last)`` or None; ``how`` is ``cited``, ``bare-name`` or
    ``camelcase`` (SPEC.md §Anchors). Equality is by (root, path, symbol) only, the key
    anchors are de-duplicated by.

    The fingerprint (SPEC.md §Staleness), all None until one is taken: ``signature_digest``
    and ``body_digest`` (the body, file or lines digest), ``target`` what was fingerprinted
    (``("type" | "function" | "other", container, name)`` for a declaration, ``("lines",
    None, None)`` for the text of the lines, ``("file", None, None)`` for the whole file),
    ``commit`` (``git rev-parse HEAD`` of the checkout, None outside git),
    ``verified_at`` (ISO UTC time) and ``content_hash``, a hash of the file's bytes then:
    while they are the same, the anchor is fresh without parsing the file again.
    """

    kind: str
    root: str
    path: str
    symbol: str | None = None
    lines: tuple[int, int] | None = field(default=None, compare=False)
    how: str = field(default="cited", compare=False)
    signature_digest: str | None = field(default=None, compare=False)
    body_digest: str | None = field(default=None, compare=False)
    target: tuple[str, str | None, str | None] | None = field(default=None, compare=False)
    commit: str | None = field(default=None, compare=False)
    verified_at: str | None = field(default=None, compare=False)
    content_hash: str | None = field(default=None, compare=False)

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(
        self,
        kind,
        root,
        path,
        symbol=None,
        lines=None,
        how="cited",
        signature_digest=None,
        body_digest=None,
        target=None,
        commit=None,
        verified_at=None,
        content_hash=None,
    ) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "root", root)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "symbol", symbol)
        object.__setattr__(self, "lines", lines)
        object.__setattr__(self, "how", how)
        object.__setattr__(self, "signature_digest", signature_digest)
        object.__setattr__(self, "body_digest", body_digest)
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "commit", commit)
        object.__setattr__(self, "verified_at", verified_at)
        object.__setattr__(self, "content_hash", content_hash)

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(kind={self.kind!r}, root={self.root!r}, "
            f"path={self.path!r}, symbol={self.symbol!r}, lines={self.lines!r}, "
            f"how={self.how!r}, signature_digest={self.signature_digest!r}, "
            f"body_digest={self.body_digest!r}, target={self.target!r}, "
            f"commit={self.commit!r}, verified_at={self.verified_at!r}, "
            f"content_hash={self.content_hash!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.kind, self.root, self.path, self.symbol) == (
                other.kind,
                other.root,
                other.path,
                other.symbol,
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.kind, self.root, self.path, self.symbol))

    @property
    def fingerprinted(self) -> bool:
        """Whether a fingerprint was taken (``verify`` or ``import --verify``)."""
        return self.verified_at is not None


@pickled_as_tuple
@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class Citation:
    """A name in a fact's text that anchored nothing: a gone, outside or unresolved path
    (SPEC.md §Anchors 1), an ambiguous name.

    ``state`` is ``gone``, ``outside``, ``unresolved`` or ``ambiguous``; ``name`` is the
    normalized path (or the bare or CamelCase name); ``candidates`` lists the files for an
    ambiguous name; ``reason`` says why a path is outside; ``lines`` is a gone or
    unresolved path's line form as ``(first, last)``.
    """

    state: str
    name: str
    line: int
    col: int
    how: str = "cited"
    candidates: tuple[str, ...] = ()
    reason: str = ""
    lines: tuple[int, int] | None = None

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(
        self, state, name, line, col, how="cited", candidates=(), reason="", lines=None
    ) -> None:
        object.__setattr__(self, "state", state)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "line", line)
        object.__setattr__(self, "col", col)
        object.__setattr__(self, "how", how)
        object.__setattr__(self, "candidates", candidates)
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "lines", lines)

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(state={self.state!r}, name={self.name!r}, "
            f"line={self.line!r}, col={self.col!r}, how={self.how!r}, "
            f"candidates={self.candidates!r}, reason={self.reason!r}, lines={self.lines!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (
                self.state,
                self.name,
                self.line,
                self.col,
                self.how,
                self.candidates,
                self.reason,
                self.lines,
            ) == (
                other.state,
                other.name,
                other.line,
                other.col,
                other.how,
                other.candidates,
                other.reason,
                other.lines,
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash(
            (
                self.state,
                self.name,
                self.line,
                self.col,
                self.how,
                self.candidates,
                self.reason,
                self.lines,
            )
        )


@pickled_as_tuple
@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class ParsedFact:
    """A fact as its lines state it, before anchors and merge (SPEC.md §Notation).

    ``text`` is folded and cut to 2000 characters; ``full_text`` is the whole folded text
    every rule reads. ``created`` is ISO 8601 UTC (``2026-09-23T13:16:09Z``) or None.
    ``suppress`` names the checks a ``<!-- brainmigrate: allow-gone -->`` (``"gone"``) or
    ``<!-- brainmigrate: ignore BM102 -->`` (codes and prefixes) trailer waives.
    ``last_line`` is the line of its last continuation (``line`` when it has
    none; 0 when not known).
    """

    file: str
    line: int
    scope: str
    kind: str
    marker: str
    text: str
    full_text: str
    task: str | None
    tasks: frozenset[str]
    run: str | None
    created: str | None
    status: str
    segments: tuple[Segment, ...] = field(compare=False, default=())
    suppress: frozenset[str] = _NO_ENTRIES
    last_line: int = field(compare=False, default=0)

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(
        self,
        file,
        line,
        scope,
        kind,
        marker,
        text,
        full_text,
        task,
        tasks,
        run,
        created,
        status,
        segments=(),
        suppress=_NO_ENTRIES,
        last_line=0,
    ) -> None:
        object.__setattr__(self, "file", file)
        object.__setattr__(self, "line", line)
        object.__setattr__(self, "scope", scope)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "marker", marker)
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "full_text", full_text)
        object.__setattr__(self, "task", task)
        object.__setattr__(self, "tasks", tasks)
        object.__setattr__(self, "run", run)
        object.__setattr__(self, "created", created)
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "segments", segments)
        object.__setattr__(self, "suppress", suppress)
        object.__setattr__(self, "last_line", last_line)

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(file={self.file!r}, line={self.line!r}, "
            f"scope={self.scope!r}, kind={self.kind!r}, marker={self.marker!r}, "
            f"text={self.text!r}, full_text={self.full_text!r}, task={self.task!r}, "
            f"tasks={self.tasks!r}, run={self.run!r}, created={self.created!r}, "
            f"status={self.status!r}, segments={self.segments!r}, suppress={self.suppress!r}, "
            f"last_line={self.last_line!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (
                self.file,
                self.line,
                self.scope,
                self.kind,
                self.marker,
                self.text,
                self.full_text,
                self.task,
                self.tasks,
                self.run,
                self.created,
                self.status,
                self.suppress,
            ) == (
                other.file,
                other.line,
                other.scope,
                other.kind,
                other.marker,
                other.text,
                other.full_text,
                other.task,
                other.tasks,
                other.run,
                other.created,
                other.status,
                other.suppress,
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash(
            (
                self.file,
                self.line,
                self.scope,
                self.kind,
                self.marker,
                self.text,
                self.full_text,
                self.task,
                self.tasks,
                self.run,
                self.created,
                self.status,
                self.suppress,
            )
        )

    def without_segments(self) -> ParsedFact:
        """The same fact without its segments, once anchors have read them (they are the
        bulk of a fact kept for the merge)."""
        return ParsedFact(
            self.file,
            self.line,
            self.scope,
            self.kind,
            self.marker,
            self.text,
            self.full_text,
            self.task,
            self.tasks,
            self.run,
            self.created,
            self.status,
            (),
            self.suppress,
            self.last_line,
        )


#: A fact's own stored fields, in the store's column order (``facts``, after ``id``): the
#: one list the store's reads and writes, a fact's state and its JSON shape are made from.
FACT_FIELDS = (
    "scope",
    "kind",
    "marker",
    "text",
    "task",
    "run",
    "created",
    "status",
    "status_reason",
)


_own_fields = attrgetter(*FACT_FIELDS)


@pickled_as_tuple
@dataclass(slots=True, init=False, repr=False, eq=False)
class FactRecord:
    """A fact in the store, while a run merges into it: the one mutable record.

    ``id`` is the number behind ``k<id>``. ``stems`` (distinct, as a tuple: it is kept for
    every fact), ``numbers`` and ``tasks`` are the merge rule's sets, taken from the whole
    text (SPEC.md §Merge). ``anchors`` and ``gone`` add up
    over repeats. ``provenance`` lists ``(file, line, fingerprint)`` of every line that fed
    the fact; ``new_provenance`` those this run adds. ``stored`` says whether the store held
    the fact before this run; ``origin`` is the first line of this run that fed it.
    """

    id: int
    scope: str
    kind: str
    marker: str
    text: str
    task: str | None
    run: str | None
    created: str | None
    status: str
    status_reason: str | None
    stems: tuple[str, ...]
    numbers: frozenset[str]
    tasks: frozenset[str]
    anchors: list[Anchor] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    supersedes: tuple[int, ...] = ()
    related: tuple[int, ...] = ()
    new_provenance: list[tuple[str, int, str]] = field(default_factory=list)
    stored: bool = False
    origin: tuple[str, int] | None = None
    snapshot: tuple | None = None

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(
        self,
        id,
        scope,
        kind,
        marker,
        text,
        task,
        run,
        created,
        status,
        status_reason,
        stems,
        numbers,
        tasks,
        anchors=FROM_FACTORY,
        gone=FROM_FACTORY,
        supersedes=(),
        related=(),
        new_provenance=FROM_FACTORY,
        stored=False,
        origin=None,
        snapshot=None,
    ) -> None:
        self.id = id
        self.scope = scope
        self.kind = kind
        self.marker = marker
        self.text = text
        self.task = task
        self.run = run
        self.created = created
        self.status = status
        self.status_reason = status_reason
        self.stems = stems
        self.numbers = numbers
        self.tasks = tasks
        self.anchors = list() if anchors is FROM_FACTORY else anchors
        self.gone = list() if gone is FROM_FACTORY else gone
        self.supersedes = supersedes
        self.related = related
        self.new_provenance = list() if new_provenance is FROM_FACTORY else new_provenance
        self.stored = stored
        self.origin = origin
        self.snapshot = snapshot

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(id={self.id!r}, scope={self.scope!r}, "
            f"kind={self.kind!r}, marker={self.marker!r}, text={self.text!r}, "
            f"task={self.task!r}, run={self.run!r}, created={self.created!r}, "
            f"status={self.status!r}, status_reason={self.status_reason!r}, "
            f"stems={self.stems!r}, numbers={self.numbers!r}, tasks={self.tasks!r}, "
            f"anchors={self.anchors!r}, gone={self.gone!r}, supersedes={self.supersedes!r}, "
            f"related={self.related!r}, new_provenance={self.new_provenance!r}, "
            f"stored={self.stored!r}, origin={self.origin!r}, snapshot={self.snapshot!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (
                self.id,
                self.scope,
                self.kind,
                self.marker,
                self.text,
                self.task,
                self.run,
                self.created,
                self.status,
                self.status_reason,
                self.stems,
                self.numbers,
                self.tasks,
                self.anchors,
                self.gone,
                self.supersedes,
                self.related,
                self.new_provenance,
                self.stored,
                self.origin,
                self.snapshot,
            ) == (
                other.id,
                other.scope,
                other.kind,
                other.marker,
                other.text,
                other.task,
                other.run,
                other.created,
                other.status,
                other.status_reason,
                other.stems,
                other.numbers,
                other.tasks,
                other.anchors,
                other.gone,
                other.supersedes,
                other.related,
                other.new_provenance,
                other.stored,
                other.origin,
                other.snapshot,
            )
        return NotImplemented

    @property
    def key(self) -> str:
        return f"k{self.id}"

    def action(self) -> str:
        """What a run did to the fact: ``added``, ``updated`` or ``unchanged`` (SPEC.md
        §Report)."""
        if not self.stored:
            return "added"
        return "updated" if self.state() != self.snapshot else "unchanged"

    def state(self) -> tuple:
        """What the store keeps of the fact, to tell whether a run changed it: its
        ``FACT_FIELDS``, then its anchors and gone citations (last: ``sqlite`` reads them)."""
        return (*_own_fields(self), tuple(self.anchors), tuple(self.gone))
