"""Run an import: notes files -> lines -> facts -> anchors -> merge -> store (SPEC.md).

``import_notes`` is what ``brainmigrate import`` calls; ``read_notes`` is the part shared
with ``check`` (everything up to the merge, touching no store).
"""

from __future__ import annotations

import fnmatch
import gc
import itertools
import os
import re
import stat
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from reprlib import recursive_repr
from typing import TYPE_CHECKING

from brainmigrate.anchors import NAME_CAP, NOTHING, Resolved, Resolver, copy_resolved
from brainmigrate.digests import blake2b
from brainmigrate.errors import BrainmigrateError
from brainmigrate.fsutil import printable
from brainmigrate.model import FROM_FACTORY, Diagnostic, FactRecord, ParsedFact
from brainmigrate.read import markdown_notes, notation, references
from brainmigrate.read.facts import (
    MAX_FACT_CHARS,
    Grouper,
    TaskIds,
    group_fact,
    plus_kind_for,
    scope_for,
)
from brainmigrate.roots import Root
from brainmigrate.spill import Keyed, Spill

if TYPE_CHECKING:  # the merge and the store are loaded by an import, not by check
    from brainmigrate import stores
    from brainmigrate.merge.rule import Stems

#: What notes read from standard input without ``--stdin-filename`` are scoped by.
STDIN_NAME = "stdin.md"
#: Folders never walked for notes files: version control, and the installed packages and
#: tool caches a project folder holds (their *.md files are nobody's notes), so that
#: ``check .`` (the pre-commit hook's default) reads the project's own files only.
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "node_modules",
        "site-packages",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)


class InputError(BrainmigrateError):
    """A notes path or a root is missing or unreadable, or holds no notes; or a bad option."""


#: How to fix a notes path that names no notes.
NOTES_FIX = "pass notes files, or folders that hold *.md notes files"


def missing_or_unreadable(exc: OSError) -> str:
    """What an ``OSError`` from opening a path means to a user: "no such file or folder"
    (also when a folder on the way is a file), or "cannot read it (<reason>)"."""
    if isinstance(exc, FileNotFoundError | NotADirectoryError):
        return "no such file or folder"
    return f"cannot read it ({exc.strerror or exc})"


@dataclass(kw_only=True, init=False, repr=False, eq=False)
class Options:
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
    """The facts a run read, in order, as ``(ParsedFact, Resolved)`` pairs: ``len`` and
    iteration (any number of times).

    Kept in a ``Spill`` (a temporary file), not in memory; each pair gets its CamelCase
    declarations as it is read back (``Resolver.complete``).
    """

    def __init__(self, spill: Spill, resolver: Resolver) -> None:
        self._spill, self._resolver = spill, resolver

    def __len__(self) -> int:
        return len(self._spill)

    def __iter__(self) -> Iterator[tuple[ParsedFact, Resolved]]:
        for fact, res, _ in self.with_stems():
            yield fact, res

    def with_stems(self) -> Iterator[tuple[ParsedFact, Resolved, tuple[str, ...] | None]]:
        """``(fact, what it names, its stems)``; stems are None unless ``read_notes`` was
        given a ``Stems``."""
        complete = self._resolver.complete
        for fact, res, stems in self._spill:
            yield fact, NOTHING if res is None else complete(res), stems

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
    roots: list[Root]
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


class Merged(Spill):
    """The merge's entries (dicts, SPEC.md §Report "merged"), with ``known``: how many are
    lines already imported (``"known": true``), counted as they come, so a report that
    only counts them never reads the entries back."""

    def __init__(self) -> None:
        super().__init__()
        self.known = 0

    def append(self, item: dict, size: int = 0) -> None:
        self.known += item["known"]
        super().append(item, size)


@dataclass
class RunResult:
    """An import's outcome, what every report renders (SPEC.md §Report)."""

    notes: Notes
    facts: Keyed  # FactRecord by id: iterate for the facts in id order
    merged: Merged  # dicts, one per repeat merged (SPEC.md §Report "merged")
    gone: Spill
    outside: Spill
    ambiguous: Spill
    unresolved: Spill
    store: str | None
    dry_run: bool
    #: ids of the stored facts the run may have changed or fed (repeated, or given
    #: anchors, gone paths or provenance), ascending, and of the new facts (a range): the
    #: others it touched are unchanged
    changed: tuple[list[int], range] | None = None
    #: ids of every stored fact a line of the run fed (already imported lines included),
    #: ascending: what ``import --verify`` fingerprints besides what the run changed
    fed: list[int] = field(default_factory=list)
    #: dicts, one per git-ignored citation (SPEC.md §Anchors "Git-ignored paths"): ``file``,
    #: ``line``, ``col``, ``fact``, ``path`` (root-relative), as ``unresolved`` without lines
    ignored: Spill | list = field(default_factory=list)

    @property
    def files(self) -> list[FileStats]:
        return self.notes.files

    @property
    def warnings(self) -> list[Diagnostic]:
        return self.notes.warnings

    @property
    def roots(self) -> list[Root]:
        return self.notes.roots


def notes_files(
    paths: Sequence[str | os.PathLike],
    skipped: list[str] | None = None,
    names: Mapping[str, str] | None = None,
) -> list[tuple[str, Path]]:
    """The notes files ``paths`` name, in order: a file as given, a folder's ``*.md`` and
    ``*.mdc`` files (recursively, sorted, ``.git`` skipped, symlinked folders not followed).

    Returns ``(display name, path)`` pairs, each file once. A ``*.md`` entry of a folder
    that is not a regular file (a FIFO, a device, a dangling link) is left out and its name
    appended to ``skipped``. A file ``names`` holds is shown by the name it gives. Raises
    ``InputError`` for a path that does not exist, is not a regular file or folder, or a
    folder without readable notes.
    """
    out: list[tuple[str, Path]] = []
    seen: set[str] = set()
    for given in paths:
        p = Path(given)
        try:
            mode = p.stat().st_mode
        except OSError as exc:
            raise InputError(f"{given}: {missing_or_unreadable(exc)}; check the path") from None
        if stat.S_ISDIR(mode):
            found, odd = [], []
            for f in sorted(_walk(p)):
                (found if f.is_file() else odd).append(f)
            if skipped is not None:
                skipped.extend(printable(f.as_posix()) for f in odd)
            if not found and odd:
                raise InputError(
                    f"{given}: no readable *.md notes files in this folder"
                    f" ({printable(odd[0].name)} is not a regular file); {NOTES_FIX}"
                )
            if not found:
                raise InputError(f"{given}: no *.md notes files in this folder; {NOTES_FIX}")
        elif stat.S_ISREG(mode):
            found = [p]
        else:
            raise InputError(f"{given}: not a regular file or a folder; {NOTES_FIX}")
        named = (names or {}).get(os.fspath(given))
        for f in found:
            real = os.path.realpath(f)
            if real not in seen:
                seen.add(real)
                out.append((printable(named or f.as_posix()), f))
    return out


def select_files(
    paths: Sequence[str | os.PathLike],
    exclude: Sequence[str],
    names: Mapping[str, str] | None = None,
) -> tuple[list[str | os.PathLike], list[str]]:
    """The notes files ``paths`` name without those an ``exclude`` glob matches
    (``is_excluded``), and the display names of those left out. With no globs, ``paths``
    unchanged. Raises ``InputError`` as ``notes_files``."""
    if not exclude:
        return list(paths), []
    kept: list[str | os.PathLike] = []
    excluded: list[str] = []
    for display, path in notes_files(paths, names=names):
        if is_excluded(display, exclude):
            excluded.append(display)
        else:
            kept.append(path)
    return kept, excluded


def is_excluded(path: str, globs: Sequence[str]) -> bool:
    """True when a glob matches notes file ``path`` (POSIX, ``./`` dropped): a glob without
    ``/`` is matched against the file name, one with ``/`` against the path and each of its
    tails that starts at a folder (``drafts/*`` matches ``notes/drafts/a.md``). ``*`` also
    matches ``/``."""
    path = path.removeprefix("./")
    tails = [path] + [path[i + 1 :] for i, c in enumerate(path) if c == "/"]
    for glob in globs:
        glob = glob.removeprefix("./")
        if "/" not in glob:
            if fnmatch.fnmatchcase(tails[-1], glob):
                return True
        elif any(fnmatch.fnmatchcase(t, glob) for t in tails):
            return True
    return False


def _walk(folder: Path):
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in filenames:
            # NOTES.MD too, as on macOS and Windows; Cursor's rules (SPEC.md §Notation)
            if name.lower().endswith((".md", ".mdc")):
                yield Path(dirpath, name)


def make_roots(roots: Sequence[str | os.PathLike]) -> list[Root]:
    """``Root`` values for the folders given, in order; the current folder when none.

    Raises ``InputError`` for a root that does not exist or is not a folder.
    """
    out = []
    for i, r in enumerate(roots or ["."]):
        if not Path(r).is_dir():
            what = "is not a folder" if os.path.lexists(r) else "no such folder"
            raise InputError(f"--root {r}: {what}; pass --root with the folder of a checkout")
        out.append(Root.of(i, r))
    return out


def cache_folder(cache_dir) -> Path:
    """Where the run keeps its caches: ``--cache-dir``, else the user's cache folder."""
    from brainmigrate.fsutil import user_cache_dir

    return Path(cache_dir) if cache_dir else user_cache_dir()


def _name_index(root: Root, cache_dir):
    from brainmigrate.codeindex import CodeIndex

    return CodeIndex(root.path, cache_dir=Path(cache_dir) if cache_dir else None)


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


def read_notes(
    paths: Sequence[str | os.PathLike], options: Options, stems: Stems | None = None
) -> Notes:
    """Read every notes file: count every line, build facts, resolve what they name.

    With ``stems``, each fact's stems are made (and kept with it) and counted in
    ``Notes.frequencies``, for the merge. Raises ``InputError`` (bad path, root, notation or task
    pattern), ``notation.NotesReadError`` or ``spill.SpillError``.
    """
    with gc_paused():
        return _read_notes(paths, options, stems)


def _read_notes(paths: Sequence[str | os.PathLike], options: Options, stems: Stems | None) -> Notes:
    roots = make_roots(options.roots)
    odd: list[str] = []
    files = notes_files(paths, odd, options.names)
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
    resolver = Resolver(
        roots, lambda: _name_index(roots[0], options.cache_dir), cache_folder(options.cache_dir)
    )
    diags: list[Diagnostic] = [
        Diagnostic(name, None, "BM307", "warning", "not a regular file; skipped") for name in odd
    ]
    stats: list[FileStats] = []
    facts = Spill()
    df: Counter | None = Counter() if stems is not None else None
    # Facts naming more CamelCase names than are kept: BM202 once the names are looked up.
    crowded = Spill()
    report = options.progress
    read = 0  # lines of the files done
    for number, (display, path) in enumerate(files):
        named = options.names.get(os.fspath(path))
        source = path if named is None else Path(STDIN_NAME if named == "-" else named)
        scope = scope_for(source, options.scope)
        plus = plus_kind_for(source, options.plus_kind)
        st = FileStats(display, scope)
        st.notation = markdown_notes.notation_of(source.as_posix(), options.notation, markdown)
        scan = markdown_notes.scan if st.notation == "markdown" else notation.scan
        # Definitions may follow their use: read first, from the whole file (references).
        refs = references.of_file(path, display, scan, classify)
        # Resolved, so a notes file reached through a symlink still lies inside its root.
        folder = os.path.dirname(os.path.realpath(source))
        reasons = st.skipped_by_reason
        grouper = Grouper(MAX_FACT_CHARS)

        def flush(group, display=display, scope=scope, plus=plus, folder=folder, refs=refs):
            fact = group_fact(display, group, scope, plus, tasks, diags, MAX_FACT_CHARS)
            res = resolver.scan(fact, diags, folder, references=refs)
            fact = fact.without_segments()
            _dropped(fact.file, fact.line, res.notes, diags)
            if len({t.text for t in res.camel}) > NAME_CAP:
                crowded.append((fact.file, fact.line, res))
            fact_stems = None
            if stems is not None:
                fact_stems = tuple(stems(fact.full_text))
                df.update(fact_stems)
            facts.append((fact, None if res is NOTHING else res, fact_stems), len(fact.full_text))

        for ln in scan(path, display, diags, classify):
            st.lines += 1
            if report is not None and not st.lines & 0xFFFF:
                report("read", number, len(files), read + st.lines)
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
        stats.append(st)
        read += st.lines
        if report is not None:
            report("read", number + 1, len(files), read)
    resolver.finish()
    for root, why in resolver.paths.history_unavailable():
        shallow = why == "a shallow clone"
        fix = (
            "fetch the whole history (git fetch --unshallow, or fetch-depth: 0 in actions/checkout)"
            if shallow
            else "let git read it (for another owner: git config --global --add"
            " safe.directory <path>)"
        )
        diags.append(
            Diagnostic(
                root.label,
                None,
                "BM104",
                "info",
                f"git history not available ({printable(why)}): a cited path only"
                f" {'the commits not fetched know' if shallow else 'the history knows'} reads"
                f" as unresolved, not gone; {fix}",
            )
        )
    for file, line, res in crowded:
        done = resolver.complete(copy_resolved(res))
        _dropped(file, line, done.notes[len(res.notes) :], diags)
    crowded.close()
    order = {display: i for i, (display, _) in enumerate(files)}
    diags.sort(key=lambda d: (order.get(d.file, 0), d.line or 0, d.col or 0))
    return Notes(stats, ReadFacts(facts, resolver), diags, roots, df, resolver.index)


def _dropped(file: str, line: int, notes: list[tuple[int, str]], diags: list[Diagnostic]) -> None:
    for count, what in notes:
        diags.append(
            Diagnostic(
                file,
                line,
                "BM202",
                "info",
                f"{count} more {what if count != 1 else what[:-1]} dropped"
                f" (at most {NAME_CAP} anchors of each per fact)",
            )
        )


def fingerprint(fact: ParsedFact) -> str:
    """A digest of what a fact line says: scope, kind, marker, whole text, run, created."""
    data = "\x1f".join(
        (fact.scope, fact.kind, fact.marker, fact.full_text, fact.run or "", fact.created or "")
    )
    return blake2b(data.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def merge(notes: Notes, stored: stores.Stored, stems: Stems) -> RunResult:
    """Merge the facts read into the stored ones (SPEC.md §Merge); writes no store.

    A line whose fingerprint the store already holds is the fact it fed and changes nothing
    but what adds up (anchors, gone citations, provenance); so importing the same files
    twice adds nothing and changes nothing. Any other line follows the repeat rule.

    What the merge holds in memory is its index (about 250 bytes a fact); the facts it
    merges into and its entries for the report are kept in temporary files (``spill``).
    Raises ``sqlite3.Error`` from reading ``stored``, ``spill.SpillError``.
    """
    with gc_paused():
        return _merge(notes, stored, stems)


def _merge(notes: Notes, stored: stores.Stored, stems: Stems) -> RunResult:
    from brainmigrate.merge.rule import (
        Key,
        MergeIndex,
        Repeats,
        add_anchors,
        add_gone,
        numbers,
        path_edits,
        similarity,
    )

    stored.check_entries()  # a store the index would refuse is refused first, as ever

    def index() -> MergeIndex:
        """The stored facts indexed, made when a line first needs it: nothing is added to
        it before, so it is the same whenever it is made."""
        if notes.frequencies is not None:
            df = Counter(notes.frequencies)
        else:
            df = MergeIndex.frequencies(stems(f.full_text) for f in notes.facts.parsed())
        df.update(MergeIndex.frequencies(entry[4] for entry in stored.entries()))
        made = MergeIndex(df)
        for fid, scope, nums, tasks, stem_tuple in stored.entries():
            made.add(fid, Key(scope, nums, tasks), stem_tuple)
        return made

    rule = Repeats(index)
    next_id = stored.next_id
    facts = Keyed()  # the facts this run touched, by id
    merged, gone, outside, ambiguous, unresolved = Merged(), Spill(), Spill(), Spill(), Spill()
    ignored = Spill()
    by_file = {st.path: st for st in notes.files}

    first_new = next_id
    # the stored facts read into ``facts`` so far, so that a fact not read yet is not
    # looked for there first (a query a line, once ``facts`` spilled): a bit an id while
    # that is small, as stored ids are dense from 1
    read: bytearray | set[int] = bytearray(first_new // 8 + 1) if first_new < 1 << 25 else set()

    def touch(fid: int) -> FactRecord:
        if fid >= first_new or _has(read, fid):
            return facts.get(fid)
        rec = stored.fact(fid)
        facts.add(fid, rec)
        _put(read, fid)
        return rec

    fed_at: dict[tuple[str, int], list[int]] | None = None

    def edited(fact: ParsedFact) -> tuple[int, list[tuple[str, str]]] | None:
        """The stored fact this file and line fed, when this line is its text with only
        cited paths changed (``check --fix``), with the ``(old, new)`` paths; else None."""
        nonlocal fed_at
        if fed_at is None:
            fed_at = stored.fed_lines(by_file)
        for fid in fed_at.get((fact.file, fact.line), ()):
            rec = facts.get(fid) or stored.fact(fid)
            if rec.scope != fact.scope:
                continue
            pairs = path_edits(rec.text, fact.text)
            if pairs is not None:
                return fid, pairs
        return None

    changed = array("q")  # stored facts' ids, in the order touched (more than once)
    fed = array("q")  # every stored fact a line fed (more than once)
    for fact, res, stem_tuple, fp in _prefetched(notes.facts.with_stems(), stored):
        if stem_tuple is None:
            stem_tuple = tuple(stems(fact.full_text))
        st, nums = frozenset(stem_tuple), numbers(fact.full_text)
        key = Key(fact.scope, nums, fact.tasks)
        known = stored.known(fp)
        fid, sim, edits = rule.which(key, st, known, lambda fact=fact: edited(fact))
        if fid is None:
            rec = rule.new(next_id, fact, stem_tuple, nums, key, st)
            next_id += 1
            facts.add(rec.id, rec)
        else:
            rec = touch(fid)
            held = (len(rec.anchors), len(rec.gone))
            if sim is None:
                sim = similarity(st, rec.stems)
            into_text = rec.text  # before this line's text replaces it
            if known is None:
                rule.update(rec, fact, stem_tuple, nums, key, st, edits)
            merged.append(
                {
                    "into": rec.key,
                    "file": fact.file,
                    "line": fact.line,
                    "similarity": round(sim, 4),
                    "known": known is not None,
                    "paths": edits is not None,
                    "text": fact.text,
                    "into_text": into_text,
                }
            )
            by_file[fact.file].merged += 1
        if res.anchors:
            add_anchors(rec, res.anchors)
        # (a file and line is read once a run, so only the store can hold it already)
        if not stored.fed(rec.id, fact.file, fact.line, fp):
            rec.new_provenance.append((fact.file, fact.line, fp))
        rec.origin = rec.origin or (fact.file, fact.line)
        if res.citations:
            add_gone(rec, [c.name for c in res.citations if c.state == "gone"])
        if rec.stored:
            fed.append(rec.id)
            if known is None or rec.new_provenance or held != (len(rec.anchors), len(rec.gone)):
                changed.append(rec.id)
        for c in res.citations:
            entry = {"file": fact.file, "line": c.line, "col": c.col, "fact": rec.key}
            if c.state == "gone":
                gone.append({**entry, "path": c.name, "lines": _lines(c.lines)})
                by_file[fact.file].gone += 1
            elif c.state == "outside":
                outside.append({**entry, "path": c.name, "reason": c.reason})
            elif c.state == "unresolved":
                unresolved.append({**entry, "path": c.name, "lines": _lines(c.lines)})
            elif c.state == "ignored":
                ignored.append({**entry, "path": c.name})
            else:
                ambiguous.append(
                    {**entry, "name": c.name, "how": c.how, "candidates": list(c.candidates)}
                )
    return RunResult(
        notes,
        facts,
        merged,
        gone,
        outside,
        ambiguous,
        unresolved,
        None,
        True,
        (sorted(set(changed)), range(first_new, next_id)),
        sorted(set(fed)),
        ignored,
    )


def _has(bits: bytearray | set[int], n: int) -> bool:
    if isinstance(bits, set):
        return n in bits
    return bool(bits[n >> 3] & (1 << (n & 7)))


def _put(bits: bytearray | set[int], n: int) -> None:
    if isinstance(bits, set):
        bits.add(n)
    else:
        bits[n >> 3] |= 1 << (n & 7)


def _lines(lines: tuple[int, int] | None) -> list[int] | None:
    return list(lines) if lines else None


#: Lines merged per batch of store reads (``Stored.prefetch``).
BATCH = 512


def _prefetched(items, stored: stores.Stored):
    """``(fact, res, stems, fingerprint)`` of ``items``, the store read a batch ahead."""
    it = iter(items)
    while chunk := list(itertools.islice(it, BATCH)):
        fps = [fingerprint(fact) for fact, _, _ in chunk]
        stored.prefetch(fps)
        for (fact, res, stem_tuple), fp in zip(chunk, fps, strict=True):
            yield fact, res, stem_tuple, fp


def fts_words(stems: Stems):
    """The words FTS5 indexes for a fact: stems of its text, scope, kind and task, then its
    task ids as one token each (``TER-160`` -> ``ter160``) and its numbers, so a search
    finds them as written."""
    from brainmigrate.terms import task_token

    # the words of a scope and kind, made once (words of texts joined with spaces are the
    # words of each text, in turn)
    after: dict[tuple[str, str], list[str]] = {}

    def words(rec: FactRecord) -> str:
        out = stems.words(rec.text)
        tail = after.get((rec.scope, rec.kind))
        if tail is None:
            tail = after[rec.scope, rec.kind] = stems.words(f"{rec.scope} {rec.kind}")
        out += tail
        if rec.task:
            out += stems.words(rec.task)
        if rec.tasks:
            out += [task_token(t) for t in sorted(rec.tasks)]
        if rec.numbers:
            out += sorted(rec.numbers)
        return " ".join(out)

    return words


def _verify(ran: RunResult, cache_dir, batch: int = 4096) -> None:
    """``import --verify``: fingerprint the anchors of the facts the run writes (those it
    may have changed, and every stored fact a line fed) in the run's own records, before
    a dry run's report or the write reads them, so both say the same (an anchor that
    follows a moved target changes the fact). A batch at a time: a large import is read
    back from its temporary file, never held whole. Adds the fed facts to
    ``ran.changed``."""
    from brainmigrate.fingerprints import Checkouts, fingerprint_records

    stored_ids, new_ids = ran.changed
    stored_ids = sorted(set(stored_ids).union(ran.fed))
    ran.changed = (stored_ids, new_ids)
    checkouts = Checkouts((), cache_dir)
    taken, chunk = Spill(), []
    keys = itertools.chain(stored_ids, new_ids)
    for rec in ran.facts.values_of(keys, len(stored_ids) + len(new_ids)):
        chunk.append(rec)
        if len(chunk) >= batch:
            fingerprint_records(chunk, checkouts)
            taken.extend(chunk)
            chunk = []
    if chunk:
        fingerprint_records(chunk, checkouts)
        taken.extend(chunk)
    for rec in taken:  # after the reading: the records are not changed under it
        ran.facts.replace(rec.id, rec)


def import_notes(
    paths: Sequence[str | os.PathLike],
    options: Options,
    store: str | os.PathLike = "know.db",
    dry_run: bool = False,
    verify: bool = False,
) -> RunResult:
    """Import notes files into the store at ``store``; with ``dry_run`` write nothing.
    With ``verify``, the anchors of the facts the import writes are fingerprinted
    (``fingerprints.fingerprint_records``) in the same transaction.

    Raises ``InputError``, ``notation.NotesReadError`` or ``stores.StoreError``; on any of
    them the store is left exactly as it was.
    """
    from brainmigrate import stores
    from brainmigrate.merge.rule import Stems

    store_path = Path(store)
    if not dry_run:
        stores.check_writable(store_path)
    stems = Stems()
    notes = read_notes(paths, options, stems)
    lines = sum(st.lines for st in notes.files)
    if options.progress is not None:
        options.progress("merge", 0, len(notes.facts), lines)
    if dry_run:
        with stores.reading(store_path) as stored:
            result = merge(notes, stored, stems)
        if verify:
            _verify(result, options.cache_dir)
    else:
        done: list[RunResult] = []

        def plan(stored: stores.Stored) -> Iterator[FactRecord]:
            done.append(merge(notes, stored, stems))
            if options.progress is not None:
                options.progress("write", 0, len(notes.facts), lines)
            ran = done[0]
            if verify:  # also every stored fact a line fed, already imported or not
                _verify(ran, options.cache_dir)
            # only facts the run may have changed are read back (a re-import: none)
            stored_ids, new_ids = ran.changed
            return (
                r
                for r in ran.facts.values_of(
                    itertools.chain(stored_ids, new_ids), len(stored_ids) + len(new_ids)
                )
                if verify or r.action() != "unchanged" or r.new_provenance
            )

        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        stores.transact(store_path, plan, fts_words(stems), now)
        result = done[0]
    result.store, result.dry_run = str(store_path), dry_run
    return result
