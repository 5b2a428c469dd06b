"""The values every stage passes on: lines, facts, anchors, citations, diagnostics.

All frozen dataclasses. Positions (file, line, column) are kept out of equality where two
values should compare by meaning (STYLE.md, "Habits").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter

#: Kinds the store keeps, in report order (SPEC.md §Notation, "Markers").
KINDS = ("decision", "pattern", "blocker", "environment", "other")
#: Markers in report order (SPEC.md §Notation).
MARKERS = ("+", "!", "~", "=", "?", ">", "->", "x")
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
)
#: Fact statuses (SPEC.md §Store).
STATUSES = ("active", "stale", "superseded")


def pickled_as_tuple(cls):
    """Pickle instances of the slotted dataclass ``cls`` as ``cls(*fields)``.

    A run keeps its facts in temporary files (``spill``); pickle's default for slotted
    dataclasses (a state dict set field by field) took a quarter of a merge's time.
    """
    fields = attrgetter(*cls.__slots__)
    cls.__reduce__ = lambda self: (cls, fields(self))
    return cls


@pickled_as_tuple
@dataclass(frozen=True, slots=True)
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
@dataclass(frozen=True, slots=True)
class Segment:
    """A fact's text as it stands on one physical line: 1-based line and column of ``text``."""

    line: int
    col: int
    text: str


@pickled_as_tuple
@dataclass(frozen=True, slots=True)
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

    @property
    def fingerprinted(self) -> bool:
        """Whether a fingerprint was taken (``verify`` or ``import --verify``)."""
        return self.verified_at is not None


@pickled_as_tuple
@dataclass(frozen=True, slots=True)
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


@pickled_as_tuple
@dataclass(frozen=True, slots=True)
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
    suppress: frozenset[str] = frozenset()
    last_line: int = field(compare=False, default=0)

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
@dataclass(slots=True)
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
