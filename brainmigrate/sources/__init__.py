"""The stores a team already keeps, read as facts: the interface every reader meets and
the registry ``import --from`` picks from (issue 30; SPEC.md §Anchors, §Merge).

A *source* reads one store file (a jsonl export, a memory topic file, a knowledge entry, a
Basic Memory note, an MCP memory file) and yields an ``Entry`` per fact it holds, in the
file's order. An entry is not brain notation: its text is one line, and the import finds
its anchors in that text as in a notes fact's (a fact's text cites files the same way in
every format); what the store kept besides (ids, status, anchors, links) rides along.

A line the source cannot read (no JSON, a field of the wrong type, front matter that is no
YAML mapping) is yielded as a ``Skip``: one warning ``file:line:col: reason``, the line
skipped and counted, never a traceback. A file that cannot be read at all raises
``read.files.InputError`` with ``file:line:col: reason``.

``brain`` and ``markdown`` are not sources here: they are the notes readers
(``read.run``), picked by the same ``--from``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from brainmigrate.model import Anchor, Segment

#: ``--from`` values that read notes, not a store: the notes readers (``read.run``).
NOTES_READERS = ("brain", "markdown")

#: Every ``--from`` value, in the order help and errors list them; a source not yet
#: registered (its module not installed) is named and says "not available".
READERS = (*NOTES_READERS, "jsonl", "memory", "knowledge", "basic-memory", "mcp-memory")


@dataclass(frozen=True, slots=True)
class Entry:
    """One fact read from a store file.

    ``file`` is the file as given (for reports); ``line`` and ``col`` are 1-based, where
    the fact starts. ``text`` is one line (no newline); anchors are found in it as in a
    notes fact (SPEC.md §Anchors). ``kind`` is one of ``model.KINDS``; ``scope`` the
    fact's scope. ``created`` is as the store keeps it (ISO 8601 UTC when it is one).
    ``status`` is one of ``model.STATUSES``, ``status_reason`` why (or None).

    Kept from stores that hold them: ``id`` (kept into an empty store only, jsonl),
    ``anchors`` (kept besides those found in the text: jsonl, knowledge), ``supersedes``
    and ``related`` (ids as the file keeps them; the import maps them through the new ids
    when it cannot keep ids). ``key`` names the entry for others to relate to (a Basic
    Memory note's title or permalink, an MCP entity name); ``relates_to`` lists the keys
    this entry relates to: they become ``related`` where both ends are facts (the import
    resolves them; a key no entry has is reported, not lost in silence).
    """

    file: str
    line: int
    col: int
    text: str
    kind: str
    scope: str
    task: str | None = None
    run: str | None = None
    created: str | None = None
    status: str = "active"
    status_reason: str | None = None
    id: int | None = None
    anchors: tuple[Anchor, ...] = ()
    supersedes: tuple[int, ...] = ()
    related: tuple[int, ...] = ()
    key: str | None = None
    relates_to: tuple[str, ...] = ()
    #: where the file names each key of ``relates_to`` (``(line, col)``, in its order: a
    #: relation's line), for a warning about a key no entry has; empty: at the entry
    relates_at: tuple[tuple[int, int], ...] = ()
    #: the text as it stands on each physical line (``model.Segment``), when it spans
    #: several (a knowledge entry's body); the lines past the first count as
    #: continuations. Empty: one segment, ``text`` at ``line`` and ``col``.
    segments: tuple[Segment, ...] = ()
    #: the fact's marker as the store keeps it (jsonl); None: the marker of its kind
    marker: str | None = None
    #: cited paths the store kept as gone (jsonl), besides those the import finds gone
    gone: tuple[str, ...] = ()
    #: the file states ``status`` (a jsonl line's ``"status"``): it and its reason win over
    #: a stored fact's, as a notes line's ``x`` marker does; else ``status`` is a default
    status_stated: bool = False


@dataclass(frozen=True, slots=True)
class Skip:
    """A line of a store file that held no fact it could read: the import warns
    ``file:line:col: reason`` and counts the line skipped (``reason`` one short phrase,
    e.g. ``"not JSON (Expecting value)"``)."""

    file: str
    line: int
    col: int
    reason: str


@dataclass(frozen=True, slots=True)
class Reading:
    """What a source reads one file with.

    ``file``: the name the file is shown by (as given). ``scope``: ``--scope`` when given,
    which overrides the scope the store keeps (None: the store's own, else the source's
    default). ``type_map``: the knowledge ``--type-map`` as ``{kind: type}`` (the export's
    mapping, read back). ``plus_kind``: ``--plus-kind``, for a source whose text carries a
    ``+`` marker.
    """

    file: str
    scope: str | None = None
    type_map: Mapping[str, str] = field(default_factory=dict)
    plus_kind: str | None = None


@runtime_checkable
class Source(Protocol):
    """A reader of one kind of store file.

    ``name`` is its ``--from`` value. ``detect(path, head)`` says whether a file whose
    start is ``head`` (``detect.head_of``: 4 KiB and the first line whole, decoded as
    UTF-8, errors replaced) is this source's (it
    must not read the file again; for a folder, ``head`` is ``""``). ``entries(path,
    reading)`` yields the file's ``Entry`` values in order, and a ``Skip`` for each line
    it could not read; it raises ``read.files.InputError`` (``"file:line:col: reason"``)
    for a file it cannot read at all.

    A source that reads a folder (a memory folder, a knowledge folder, a Basic Memory
    vault) also has ``files(path) -> list[Path]``: the files under it it reads, in order
    (``source_files`` falls back to ``[path]``); it is used when ``--from`` names the
    source, while without ``--from`` a folder is walked for ``*.md`` as a notes folder and
    each file detected. Optional too: ``looks_like``, the words BM313 names such a file by
    when it is read as notes (``"a jsonl export"``; default ``"a <name> file"``), and
    ``likely(path, head)``, whether a file ``detect`` leaves to notes may yet be its (BM313
    names it when notes find no fact line there). Detection asks the sources in the order
    they registered (``load_all``'s order), ``detect.FIRST`` before the others.
    """

    name: str

    def detect(self, path: Path, head: str) -> bool: ...

    def entries(self, path: Path, reading: Reading) -> Iterator[Entry | Skip]: ...


#: The registered sources by ``--from`` name (``register`` adds one).
SOURCES: dict[str, Source] = {}


def register(source: Source) -> Source:
    """Add ``source`` to ``SOURCES`` under its ``name`` (a later one of the same name
    replaces it); returns it, so a module may write ``register(MySource())``."""
    SOURCES[source.name] = source
    return source


def source_files(source: Source, path: Path) -> list[Path]:
    """The files ``source`` reads for ``path``: its ``files(path)`` when it has one and
    ``path`` is a folder, else ``[path]``."""
    walk = getattr(source, "files", None)
    if walk is not None and path.is_dir():
        return list(walk(path))
    return [path]


def load_all() -> dict[str, Source]:
    """``SOURCES`` with every source module of this package imported (each registers
    itself on import; a module not present is left out: its ``--from`` says "not
    available"). The modules are looked for once a run."""
    _import_sources()
    return SOURCES


@functools.cache
def _import_sources() -> None:
    import importlib

    for module in ("jsonl", "knowledge", "memory", "basic_memory", "mcp_memory"):
        try:
            importlib.import_module(f"{__name__}.{module}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{module}":
                raise


def safe_yaml(text: str) -> object:
    """``text`` read as YAML with ``yaml.safe_load``, dates and times kept as the strings
    they are written as (``2026-09-23`` stays ``"2026-09-23"``: a store's ``created`` is
    kept as the store keeps it). Raises ``yaml.YAMLError`` for text that is no YAML."""
    import yaml

    return yaml.load(text, Loader=_string_dates_loader())  # noqa: S506 -- a SafeLoader


#: A brain notation fact line (SPEC.md §Notation: a marker other than ``-``, then a blank):
#: a file holding one is notes, whatever store its other lines look like.
BRAIN_FACT_LINE = re.compile(r"(?:[+!~=?]|->)[ \t]+\S")


def holds_brain_facts(head: str) -> bool:
    """Whether a line of ``head`` (a file's start) is a brain notation fact line."""
    return any(BRAIN_FACT_LINE.match(line) for line in head.split("\n"))


def yaml_problem(exc: Exception, first_line: int = 2) -> str:
    """What is wrong with front matter ``safe_yaml`` refused, in one line: the problem
    and where, as a line of the file (the front matter starting at ``first_line``) and a
    column (``expected ',' or ']' at line 2, column 15``)."""
    problem = getattr(exc, "problem", None) or type(exc).__name__
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + first_line}, column {mark.column + 1}" if mark else ""
    return " ".join(f"{problem}{where}".split())


@functools.cache
def _string_dates_loader():
    import yaml

    class StringDates(yaml.SafeLoader):
        """``yaml.SafeLoader`` that resolves no timestamp: a date reads as a string."""

    StringDates.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    return StringDates
