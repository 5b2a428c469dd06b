"""The read stage run over notes files: options, lines counted per file, lines grouped
into facts, each fact handed to the caller's resolver and kept (SPEC.md §Notation, §Report).

``read_files`` touches no root and no store: what a fact names is the ``resolve`` its
caller passes (``importer.read_notes`` gives the anchors' ``Resolver``), so ``check``,
``fix`` and ``import`` read alike.
"""

from __future__ import annotations

import gc
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from reprlib import recursive_repr
from typing import NamedTuple

from brainmigrate.model import FROM_FACTORY, Diagnostic, ParsedFact
from brainmigrate.read import lines, markdown_notes, notation, references
from brainmigrate.read.facts import (
    MAX_FACT_CHARS,
    Grouper,
    TaskIds,
    group_fact,
    plus_kind_for,
    scope_for,
)
from brainmigrate.read.files import InputError
from brainmigrate.spill import Spill

#: What makes a fact text's stems (``merge.rule.Stems``, a higher stage).
StemsOf = Callable[[str], Iterable[str]]

#: What notes read from standard input without ``--stdin-filename`` are scoped by.
STDIN_NAME = "stdin.md"


@dataclass(kw_only=True, init=False, repr=False, eq=False)
class ImportOptions:
    """How to read the notes: roots in order, scope, kind of ``+``, task pattern.

    ``roots`` default to the current folder. ``parser`` (``--parser``) is ``fast`` or ``lark``
    (SPEC.md §Notation; both give the same lines). ``cache_dir`` is where the first root's
    declaration index is cached (None: the default cache folder). ``names`` maps a notes
    file given (as given) to the name it is shown, scoped and resolved by (notes read from
    standard input into a temporary file, ``--stdin-filename``). ``progress``, when given,
    is called as ``progress(stage, done, total, lines)``: ``("read", files done, files,
    lines read)`` after each file and every 65536 lines, then ``("merge", 0, facts, lines)``
    before the merge and ``("write", 0, facts, lines)`` before the store is written.
    ``notation`` (``--notation``) reads every file as ``markdown`` or ``brain`` notation;
    None: a file that a ``markdown`` glob matches (``markdown_notes.MarkdownGlobs``) is
    read as Markdown notes, any other as brain notation (SPEC.md §Notation).
    """

    roots: Sequence[str | os.PathLike] = ()
    scope: str | None = None
    plus_kind: str | None = None
    task_pattern: str | None = None
    parser: str = "fast"
    cache_dir: str | os.PathLike | None = None
    names: Mapping[str, str] = field(default_factory=dict)
    progress: Callable[[str, int, int, int], object] | None = field(default=None, compare=False)
    notation: str | None = None
    markdown: Sequence[str] = markdown_notes.DEFAULT_GLOBS

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(
        self,
        *,
        roots=(),
        scope=None,
        plus_kind=None,
        task_pattern=None,
        parser="fast",
        cache_dir=None,
        names=FROM_FACTORY,
        progress=None,
        notation=None,
        markdown=markdown_notes.DEFAULT_GLOBS,
    ) -> None:
        self.roots = roots
        self.scope = scope
        self.plus_kind = plus_kind
        self.task_pattern = task_pattern
        self.parser = parser
        self.cache_dir = cache_dir
        self.names = dict() if names is FROM_FACTORY else names
        self.progress = progress
        self.notation = notation
        self.markdown = markdown

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(roots={self.roots!r}, scope={self.scope!r}, "
            f"plus_kind={self.plus_kind!r}, task_pattern={self.task_pattern!r}, "
            f"parser={self.parser!r}, cache_dir={self.cache_dir!r}, names={self.names!r}, "
            f"progress={self.progress!r}, notation={self.notation!r}, "
            f"markdown={self.markdown!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (
                self.roots,
                self.scope,
                self.plus_kind,
                self.task_pattern,
                self.parser,
                self.cache_dir,
                self.names,
                self.notation,
                self.markdown,
            ) == (
                other.roots,
                other.scope,
                other.plus_kind,
                other.task_pattern,
                other.parser,
                other.cache_dir,
                other.names,
                other.notation,
                other.markdown,
            )
        return NotImplemented


@dataclass
class FileStats:
    """Line counts of one notes file (SPEC.md §Report: lines == fact_lines + continuations
    + blank + skipped), and the notation it was read as (``brain`` or ``markdown``)."""

    path: str
    scope: str
    lines: int = 0
    fact_lines: int = 0
    continuations: int = 0
    blank: int = 0
    skipped: int = 0
    skipped_by_reason: Counter = field(default_factory=Counter)
    merged: int = 0
    gone: int = 0
    notation: str = "brain"

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(
        self,
        path,
        scope,
        lines=0,
        fact_lines=0,
        continuations=0,
        blank=0,
        skipped=0,
        skipped_by_reason=FROM_FACTORY,
        merged=0,
        gone=0,
        notation="brain",
    ) -> None:
        self.path = path
        self.scope = scope
        self.lines = lines
        self.fact_lines = fact_lines
        self.continuations = continuations
        self.blank = blank
        self.skipped = skipped
        self.skipped_by_reason = (
            Counter() if skipped_by_reason is FROM_FACTORY else skipped_by_reason
        )
        self.merged = merged
        self.gone = gone
        self.notation = notation

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(path={self.path!r}, scope={self.scope!r}, "
            f"lines={self.lines!r}, fact_lines={self.fact_lines!r}, "
            f"continuations={self.continuations!r}, blank={self.blank!r}, "
            f"skipped={self.skipped!r}, skipped_by_reason={self.skipped_by_reason!r}, "
            f"merged={self.merged!r}, gone={self.gone!r}, notation={self.notation!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (
                self.path,
                self.scope,
                self.lines,
                self.fact_lines,
                self.continuations,
                self.blank,
                self.skipped,
                self.skipped_by_reason,
                self.merged,
                self.gone,
                self.notation,
            ) == (
                other.path,
                other.scope,
                other.lines,
                other.fact_lines,
                other.continuations,
                other.blank,
                other.skipped,
                other.skipped_by_reason,
                other.merged,
                other.gone,
                other.notation,
            )
        return NotImplemented


class ReadFacts:
    """The facts a run read, in order, as ``(ParsedFact, anchors.Resolved)`` pairs: ``len`` and
    iteration (any number of times).

    Kept in a ``Spill`` (a temporary file), not in memory; each pair gets its CamelCase
    declarations as it is read back (``Resolver.complete``).
    """

    def __init__(self, spill: Spill, complete: Callable, nothing: object) -> None:
        # ``complete`` and ``nothing``: the resolver's (``anchors.Resolver.complete``,
        # ``anchors.NOTHING``), passed in: the read stage is below anchors
        self._spill, self._complete, self._nothing = spill, complete, nothing

    def __len__(self) -> int:
        return len(self._spill)

    def __iter__(self) -> Iterator[tuple[ParsedFact, object]]:
        for fact, res, _ in self.with_stems():
            yield fact, res

    def with_stems(self) -> Iterator[tuple[ParsedFact, object, tuple[str, ...] | None]]:
        """``(fact, what it names, its stems)``; stems are None unless ``read_notes`` was
        given a ``Stems``."""
        complete, nothing = self._complete, self._nothing
        for fact, res, stems in self._spill:
            yield fact, nothing if res is None else complete(res), stems

    def parsed(self) -> Iterator[ParsedFact]:
        """The facts alone, without what they name (cheaper to read back)."""
        for fact, _, _ in self._spill:
            yield fact


@dataclass
class Notes:
    """What reading the notes gave: per-file counts, facts with what they name, diagnostics."""

    files: list[FileStats]
    facts: ReadFacts
    warnings: list[Diagnostic]
    roots: list  # anchors.Root, in order
    #: document frequency of each stem over the facts, when ``read_notes`` made stems
    frequencies: Counter | None = None
    #: the first root's declaration index the run used (made on first call; None when
    #: there is no root), for whatever else needs it in the same run
    name_index: Callable[[], object] | None = None

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(self, files, facts, warnings, roots, frequencies=None, name_index=None) -> None:
        self.files = files
        self.facts = facts
        self.warnings = warnings
        self.roots = roots
        self.frequencies = frequencies
        self.name_index = name_index

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(files={self.files!r}, facts={self.facts!r}, "
            f"warnings={self.warnings!r}, roots={self.roots!r}, "
            f"frequencies={self.frequencies!r}, name_index={self.name_index!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (
                self.files,
                self.facts,
                self.warnings,
                self.roots,
                self.frequencies,
                self.name_index,
            ) == (
                other.files,
                other.facts,
                other.warnings,
                other.roots,
                other.frequencies,
                other.name_index,
            )
        return NotImplemented


@contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while a run builds its many small objects.

    They hold no reference cycles, and the collector's passes over a growing heap cost a
    third of an import's time on 200k lines (bench/bench_import.py).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class Reader(NamedTuple):
    """How a run reads each line and fact: the task ids, the line classifier, the
    Markdown globs (``reader`` checks them)."""

    tasks: TaskIds
    classify: Callable[[str], notation.Classified]
    markdown: markdown_notes.MarkdownGlobs


def reader(options: ImportOptions) -> Reader:
    """The ``Reader`` of ``options``. Raises ``InputError`` for a task pattern that is not a
    regular expression, a notation that is not one of ``markdown_notes.NOTATIONS`` or a bad
    Markdown glob, in that order (a bad ``--parser`` raises ``ValueError``)."""
    try:
        tasks = TaskIds(options.task_pattern)
    except re.error as exc:
        raise InputError(
            f"--task-pattern: not a valid regular expression ({exc}); fix it"
        ) from None
    classify = notation.classifier(options.parser)
    if options.notation not in (None, *markdown_notes.NOTATIONS):
        raise InputError(
            f"--notation {options.notation}: must be one of {', '.join(markdown_notes.NOTATIONS)}"
        )
    try:
        markdown = markdown_notes.MarkdownGlobs(tuple(options.markdown))
    except ValueError as exc:
        raise InputError(f"markdown: {exc}; fix the glob in the configuration") from None
    return Reader(tasks, classify, markdown)


#: ``resolve(fact, folder, references)``: what a fact names (None: nothing), from the
#: caller; ``folder`` is the notes file's real folder, ``references`` its link definitions.
Resolve = Callable[[ParsedFact, str, Mapping], object]


def read_files(
    files: Sequence[tuple[str, Path]],
    options: ImportOptions,
    how: Reader,
    diags: list[Diagnostic],
    resolve: Resolve,
    stems: StemsOf | None = None,
) -> tuple[list[FileStats], Spill, Counter | None]:
    """Read ``files`` (``(display name, path)`` pairs, ``files.notes_files``) in order:
    count every line (``FileStats``), group lines into facts, ``resolve`` each.

    Returns the counts, a ``Spill`` of ``(fact, what it names or None, its stems or None)``
    and, with ``stems``, each stem's document frequency over the facts. Appends the
    diagnostics of lines and facts to ``diags``; reports progress as
    ``ImportOptions.progress`` says. Raises ``lines.NotesReadError``,
    ``spill.SpillError``.
    """
    run = _Run(options, how, diags, resolve, stems)
    stats: list[FileStats] = []
    report = options.progress
    read = 0  # lines of the files done
    for number, (display, path) in enumerate(files):
        st = run.file(number, display, path, len(files), read)
        stats.append(st)
        read += st.lines
        if report is not None:
            report("read", number + 1, len(files), read)
    return stats, run.facts, run.df


class _Run:
    """One ``read_files`` run: what every file is read with, and the facts read so far."""

    __slots__ = ("options", "how", "diags", "resolve", "stems", "facts", "df")

    def __init__(self, options, how, diags, resolve, stems) -> None:
        self.options, self.how, self.diags = options, how, diags
        self.resolve, self.stems = resolve, stems
        self.facts = Spill()
        self.df: Counter | None = Counter() if stems is not None else None

    def file(self, number: int, display: str, path: Path, total: int, read: int) -> FileStats:
        """Read one notes file (the ``number``-th of ``total``; ``read`` lines before it)."""
        options, how, diags = self.options, self.how, self.diags
        resolve, stems, facts, df = self.resolve, self.stems, self.facts, self.df
        named = options.names.get(os.fspath(path))
        source = path if named is None else Path(STDIN_NAME if named == "-" else named)
        scope = scope_for(source, options.scope)
        plus = plus_kind_for(source, options.plus_kind)
        st = FileStats(display, scope)
        st.notation = markdown_notes.notation_of(source.as_posix(), options.notation, how.markdown)
        scan = markdown_notes.scan if st.notation == "markdown" else lines.scan
        classify, tasks, report = how.classify, how.tasks, options.progress
        # Definitions may follow their use: read first, from the whole file (references).
        refs = references.of_file(path, display, scan, classify)
        # Resolved, so a notes file reached through a symlink still lies inside its root.
        folder = os.path.dirname(os.path.realpath(source))
        reasons = st.skipped_by_reason
        grouper = Grouper(MAX_FACT_CHARS)

        def flush(group):
            fact = group_fact(display, group, scope, plus, tasks, diags, MAX_FACT_CHARS)
            res = resolve(fact, folder, refs)
            fact = fact.without_segments()
            fact_stems = None
            if stems is not None:
                fact_stems = tuple(stems(fact.full_text))
                df.update(fact_stems)
            facts.append((fact, res, fact_stems), len(fact.full_text))

        for ln in scan(path, display, diags, classify):
            st.lines += 1
            if report is not None and not st.lines & 0xFFFF:
                report("read", number, total, read + st.lines)
            cls = ln.cls
            if cls == "fact":
                st.fact_lines += 1
            elif cls == "continuation":
                st.continuations += 1
            elif cls == "blank":
                st.blank += 1
            else:
                st.skipped += 1
                reasons[ln.reason] += 1
            done = grouper.add(ln)
            if done is not None:
                flush(done)
        done = grouper.end()
        if done is not None:
            flush(done)
        return st
