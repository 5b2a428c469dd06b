"""Run an import: notes files -> lines -> facts -> anchors -> merge -> store (SPEC.md).

The stages are their own packages (``read``, ``anchors``, ``merge``, ``stores``); this
module puts them in order. ``import_notes`` is what ``brainmigrate import`` calls;
``read_notes`` is the part shared with ``check`` and ``fix`` (everything up to the merge,
touching no store): the read stage (``read.run``) with the anchors' resolver.
"""

from __future__ import annotations

import copy
import itertools
import os
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from brainmigrate.anchors import NAME_CAP, NOTHING, Resolver, copy_resolved
from brainmigrate.codes import diagnostic
from brainmigrate.fsutil import printable
from brainmigrate.model import Diagnostic, FactRecord
from brainmigrate.read.files import InputError
from brainmigrate.read.run import ImportOptions, Notes, ReadFacts, gc_paused, read_files, read_rules
from brainmigrate.roots import Root, match_recorded, not_a_root, remote_of, store_base
from brainmigrate.spill import Sorter, Spill

if TYPE_CHECKING:  # the merge and the store are loaded by an import, not by check
    from brainmigrate import stores
    from brainmigrate.merge.rule import Stems
    from brainmigrate.merge.run import RunResult


def make_roots(
    roots: Sequence[str | os.PathLike], store: str | os.PathLike | None = None
) -> list[Root]:
    """``Root`` values for the folders given, in order; the current folder when none.
    With ``store`` (the store an import writes), each is named as the store records it:
    relative to the store's folder, or after the recorded root of the same git remote
    (``roots.match_recorded``); without, by its absolute path.

    Raises ``InputError`` for a root that does not exist or is not a folder.
    """
    out = []
    base = store_base(store) if store is not None else None
    for i, r in enumerate(roots or ["."]):
        if (why := not_a_root(r)) is not None:
            raise InputError(why)
        out.append(Root.of(i, r, base))
    if store is not None:
        from brainmigrate import stores

        match_recorded(out, stores.recorded_roots(Path(store)))
    return out


def cache_folder(cache_dir) -> Path:
    """Where the run keeps its caches: ``--cache-dir``, else the user's cache folder."""
    from brainmigrate.fsutil import user_cache_dir

    return Path(cache_dir) if cache_dir else user_cache_dir()


def _name_index(root: Root, cache_dir, digests: bool = False):
    """The resolver's declaration index; ``digests``: its lookups take the digests that
    ``--verify`` reads next (then it parses no file twice)."""
    from brainmigrate.codeindex import CodeIndex

    index = CodeIndex(root.path, cache_dir=Path(cache_dir) if cache_dir else None)
    index.lookup_digests = digests
    return index


def read_notes(
    paths: Sequence[str | os.PathLike],
    options: ImportOptions,
    stems: Stems | None = None,
    store: str | os.PathLike | None = None,
    digests: bool = False,
    reader: Reader | None = None,
) -> Notes:
    """Read every notes file: count every line, build facts, resolve what they name;
    the anchors name their roots as ``store`` records them (``make_roots``). The store
    files among ``paths`` are read by their sources (``sources.detect.plan``: ``--from``,
    which is ``reader.name`` or else ``options.notation``, or each file detected) into the
    same facts, after the notes files, for ``import`` and ``check`` alike (so a check
    finds what the import would store); what their entries keep is gathered in
    ``reader.kept`` (default: a fresh ``Reader``). A file that gives no fact line is
    BM313, naming the reader that would read it.

    With ``stems``, each fact's stems are made (and kept with it) and counted in
    ``Notes.frequencies``, for the merge. ``digests``: the name lookups take the digests
    of the files they parse (for ``--verify``, which reads them next). Raises
    ``InputError`` (bad path, root, notation or task pattern), ``lines.NotesReadError`` or
    ``spill.SpillError``.
    """
    with gc_paused():
        return _read_notes(paths, options, stems, store, digests, reader)


class Reader:
    """How an import picks the reader of each file: ``name`` is ``--from`` (None: each
    file detected); ``kept`` is filled with what the store files' entries keep, by
    ``(file, line)`` (``sources.feed.Kept``); ``type_map`` is the knowledge ``--type-map``
    (``{kind: type}``), read back."""

    def __init__(
        self,
        name: str | None = None,
        type_map: dict[str, str] | None = None,
        refuse_empty: bool = False,
    ) -> None:
        self.name = name
        self.type_map = type_map or {}
        self.kept: dict = {}
        #: an import that reads no fact line fails (``import`` without ``--allow-empty``):
        #: it then writes nothing, not even a new empty store (``import_notes``)
        self.refuse_empty = refuse_empty


def _read_notes(
    paths: Sequence[str | os.PathLike],
    options: ImportOptions,
    stems: Stems | None,
    store,
    digests: bool,
    reader: Reader | None = None,
) -> Notes:
    from brainmigrate.sources import NOTES_READERS, READERS
    from brainmigrate.sources.detect import plan

    roots = make_roots(options.roots, store)
    odd: list[str] = []
    reader = reader or Reader()
    # ``--from`` and ``--notation`` name one thing, the reader (docs/reference.md)
    given = options.notation if options.notation in READERS else None  # else read_rules says
    name = reader.name or given
    files, store_files = plan(paths, name, odd, options.names, options.files)
    if given is not None and given not in NOTES_READERS:  # a store's name: no notes left
        options = copy.copy(options)
        options.notation = None
    how = read_rules(options)
    resolver = Resolver(
        roots,
        lambda: _name_index(roots[0], options.cache_dir, digests),
        cache_folder(options.cache_dir),
    )
    order = {display: i for i, (display, _) in enumerate(files)}
    where = lambda d: (order.get(d.file, 0), d.line or 0, d.col or 0)  # noqa: E731
    # Every warning goes to a temporary file, as the facts do: memory stays flat however
    # many the notes make, nearly in order (a fact's come once the lines after it are read).
    odd_files = (diagnostic(name, None, "BM307", "not a regular file; skipped") for name in odd)
    diags = Sorter(where, odd_files)
    # Facts naming more CamelCase names than are kept: BM202 once the names are looked up.
    crowded = Spill()

    def resolve(fact, folder, refs):
        res = resolver.scan(fact, diags, folder, references=refs)
        _dropped(fact.file, fact.line, res.notes, diags)
        if len({t.text for t in res.camel}) > NAME_CAP:
            crowded.append((fact.file, fact.line, res))
        return None if res is NOTHING else res

    stats, facts, df = read_files(files, options, how, diags, resolve, stems)
    if store_files:
        stats += _read_stores(store_files, options, how, diags, resolve, stems, facts, df, reader)
    _no_fact_lines(stats, [p for _, p in files] + [p for _, p, _ in store_files], diags, name)
    resolver.finish()
    _history_unavailable(resolver, diags)
    for file, line, res in crowded:
        done = resolver.complete(copy_resolved(res))
        _dropped(file, line, done.notes[len(res.notes) :], diags)
    crowded.close()
    warnings = diags.sorted()
    notes = ReadFacts(facts, resolver.complete, NOTHING)
    return Notes(stats, notes, warnings, roots, df, resolver.index)


def _read_stores(store_files, options, how, diags, resolve, stems, facts, df, reader):
    """The store files read by their sources into ``facts`` (``sources.feed``), each
    entry's fact resolved as a notes fact is; returns their ``FileStats``."""
    from brainmigrate.sources import Reading
    from brainmigrate.sources.feed import read_store_file, spill_fact

    out = []
    for display, path, source in store_files:
        folder = os.path.dirname(os.path.realpath(path))
        reading = Reading(display, options.scope, reader.type_map, options.plus_kind)

        def keep(fact, entry, folder=folder):
            spill_fact(facts, fact, resolve(fact, folder, {}), stems, df)
            reader.kept[(entry.file, entry.line)] = entry

        out.append(read_store_file(source, reading, path, how.tasks, diags, keep))
    return out


def _no_fact_lines(stats, paths, diags, forced: str | None = None) -> None:
    """BM313 for each file read that gave no fact line and is a store file: read as notes
    (a source recognises it), or read by its source and holding no entry (naming the
    reader that recognises it, when another does). Nothing of it reaches the store, and
    that is said, with the fix. With ``forced`` a notes reader (``--from brain``,
    ``--notation markdown``), also each file read as notes that a source recognises,
    whatever it gave: a JSON line read as a notes fact is no fact of the store's. (A
    notes file of prose alone is no finding: an import that reads no fact at all exits 1,
    ``cli.imports``.)"""
    from brainmigrate.sources import NOTES_READERS
    from brainmigrate.sources.detect import looks_like

    for st, path in zip(stats, paths, strict=True):
        if not st.lines or path.name == "MEMORY.md":
            continue
        notes = st.notation in NOTES_READERS
        if st.fact_lines and not (notes and forced in NOTES_READERS):
            continue
        hint = looks_like(path, st.notation)
        if st.fact_lines:
            if hint:
                from brainmigrate.shapes import plural

                said = (
                    f"{st.path} read as {st.notation} notes ({plural(st.fact_lines, 'fact line')})"
                )
                diags.append(diagnostic(st.path, None, "BM313", said + hint))
            continue
        if not notes and not hint:
            hint = (
                f": the {st.notation} reader found no fact in it; fix the lines it warns"
                " about, or pass --from with the reader the file needs"
            )
        if hint:
            diags.append(
                diagnostic(
                    st.path,
                    None,
                    "BM313",
                    f"0 fact lines in {st.lines} lines of {st.path}{hint}",
                )
            )


def _history_unavailable(resolver: Resolver, diags: list[Diagnostic]) -> None:
    """BM104 for each root whose git history could not be read (SPEC.md §Anchors)."""
    for root, why in resolver.paths.history_unavailable():
        shallow = why == "a shallow clone"
        fix = (
            "fetch the whole history (git fetch --unshallow, or fetch-depth: 0 in actions/checkout)"
            if shallow
            else "let git read it (for another owner: git config --global --add"
            " safe.directory <path>)"
        )
        diags.append(
            diagnostic(
                root.label,
                None,
                "BM104",
                f"git history not available ({printable(why)}): a cited path only"
                f" {'the commits not fetched know' if shallow else 'the history knows'} reads"
                f" as unresolved, not gone; {fix}",
            )
        )


def _dropped(file: str, line: int, notes: list[tuple[int, str]], diags: list[Diagnostic]) -> None:
    for count, what in notes:
        diags.append(
            diagnostic(
                file,
                line,
                "BM202",
                f"{count} more {what if count != 1 else what[:-1]} dropped"
                f" (at most {NAME_CAP} anchors of each per fact)",
            )
        )


def _verify(ran: RunResult, cache_dir, base: str, batch: int = 4096) -> set[int]:
    """``import --verify``: fingerprint the anchors of the facts the run writes (those it
    may have changed, and every stored fact a line fed) in the run's own records, before
    a dry run's report or the write reads them, so both say the same (an anchor that
    follows a moved target changes the fact). A batch at a time: a large import is read
    back from its temporary file, never held whole. Adds the fed facts to
    ``ran.changed``; returns the ids of the facts whose anchors or status the
    fingerprints changed (a fingerprint equal to the stored one changes nothing)."""
    from brainmigrate.fingerprints import Checkouts, fingerprint_records

    stored_ids, new_ids = ran.changed
    stored_ids = sorted(set(stored_ids).union(ran.fed))
    ran.changed = (stored_ids, new_ids)
    # the run's own roots where they are, also one named after a recorded root elsewhere
    folders = {r.name: r.path for r in ran.roots}
    checkouts = Checkouts((), cache_dir, base=base, folders=folders)
    taken, chunk, refreshed = Spill(), [], set()
    keys = itertools.chain(stored_ids, new_ids)
    for rec in ran.facts.values_of(keys, len(stored_ids) + len(new_ids)):
        chunk.append(rec)
        if len(chunk) >= batch:
            refreshed |= fingerprint_records(chunk, checkouts)
            taken.extend(chunk)
            chunk = []
    if chunk:
        refreshed |= fingerprint_records(chunk, checkouts)
        taken.extend(chunk)
    for rec in taken:  # after the reading: the records are not changed under it
        ran.facts.replace(rec.id, rec)
    return refreshed


def import_notes(
    paths: Sequence[str | os.PathLike],
    options: ImportOptions,
    store: str | os.PathLike = "know.db",
    dry_run: bool = False,
    verify: bool = False,
    sync: bool = False,
    reader: Reader | None = None,
) -> RunResult:
    """Import notes files into the store at ``store``; with ``dry_run`` write nothing.
    ``reader``: which reader reads each file (``Reader``; default: each detected), and
    what store entries keep, applied once merged (``sources.keep``); with its
    ``refuse_empty``, an import that reads no fact line runs as a dry run: a run that
    fails writes nothing (the caller exits 1).
    With ``verify``, the anchors of the facts the import writes are fingerprinted
    (``fingerprints.fingerprint_records``) in the same transaction. Every import finds the
    stored facts no longer in the notes it read (``RunResult.removed``); with ``sync`` it
    retires them in the same transaction (``merge.sync``); ``sync`` raises ``InputError``
    for a store with no fact, or one none of the files read ever fed.

    Raises ``InputError``, ``lines.NotesReadError`` or ``stores.StoreError``; on any of
    them the store is left exactly as it was.
    """
    from brainmigrate import stores
    from brainmigrate.merge import run
    from brainmigrate.merge.rule import Stems

    store_path = Path(store)
    if not dry_run:
        stores.check_writable(store_path)
    stems = Stems()
    reader = reader or Reader()
    notes = read_notes(paths, options, stems, store_path, verify, reader)
    if reader.refuse_empty and not any(st.fact_lines for st in notes.files):
        dry_run = True
    lines = sum(st.lines for st in notes.files)
    if options.progress is not None:
        options.progress("merge", 0, len(notes.facts), lines)
    recorded = [(r.name, remote_of(r.path)) for r in notes.roots]
    if dry_run:
        with stores.reading(store_path, recorded) as stored:
            renamed = _follow(notes, stored, options.scope)
            _check_sync(sync, stored, notes, store_path)
            result = run.merge(notes, stored, stems, sync, _deleted(stored, paths))
            _kept(result, reader)
            result.renamed = renamed
        if verify:
            _verify(result, options.cache_dir, store_base(store_path))
    else:
        plan = _plan(notes, stems, options, lines, verify, sync, store_path, paths, reader)
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        result = stores.transact(store_path, plan, run.fts_words(stems), now, recorded)
        _tidy(store_path)
    result.store, result.dry_run = str(store_path), dry_run
    return result


def _kept(ran: RunResult, reader: Reader | None) -> None:
    """What the store files' entries keep, applied to the merged facts (``sources.keep``);
    its warnings join the run's."""
    if reader is not None and reader.kept:
        from brainmigrate.sources import keep

        said = keep.apply(ran, reader.kept)
        if said:  # after the read's warnings, which are a sorted spill (or merged ones)
            ran.notes.warnings = Spill(itertools.chain(ran.notes.warnings, said))


def _tidy(store_path: Path) -> None:
    """Remove the temporary files killed runs left beside the store (``writers.sweep``)."""
    from brainmigrate.writers import open_folder, sweep

    try:
        fd = open_folder(os.path.dirname(os.path.realpath(store_path)))
    except OSError:
        return
    try:
        sweep(fd)
    finally:
        os.close(fd)


def _follow(notes: Notes, stored: stores.Stored, scope: str | None) -> list[dict]:
    """``merge.renames.follow`` for a dry run, against its copy of the store; a store read in
    place (WAL mode, read-only) follows no rename."""
    import sqlite3

    from brainmigrate.merge import renames

    try:
        return renames.follow(notes, stored, scope)
    except sqlite3.OperationalError as exc:
        if "readonly" not in str(exc):
            raise
        return []


def _deleted(stored: stores.Stored, paths) -> list[str]:
    """The notes files that fed the store and are deleted, under what this import reads
    (``merge.sync.deleted``), after renames were followed."""
    from brainmigrate.merge import sync

    return sync.deleted(stored, [os.fspath(p) for p in paths])


def _check_sync(sync: bool, stored: stores.Stored, notes: Notes, store: Path) -> None:
    """``import --sync`` refused (``InputError``) without a store to sync against, or when
    none of the notes files read ever fed the store (other files, or the same ones named
    from another folder: syncing would retire nothing it should)."""
    if not sync:
        return
    if stored.next_id == 1:
        raise InputError(
            f"--sync: {store} holds no fact to sync against; import the notes once without"
            " --sync (or pass --store with the store to sync)"
        )
    files = [st.path for st in notes.files]
    if files and not stored.fed_files(files):
        fed = ", ".join(printable(f) for f in stored.some_files())
        raise InputError(
            f"--sync: none of the {len(files)} notes files read ever fed {store} (it was fed"
            f" from {fed}, …); pass the notes files the store was imported from, named as"
            " they were then"
        )


def _plan(
    notes: Notes,
    stems: Stems,
    options: ImportOptions,
    lines: int,
    verify: bool,
    sync: bool = False,
    store: Path = Path("know.db"),
    paths: Sequence[str | os.PathLike] = (),
    reader: Reader | None = None,
):
    """What an import runs under the store's write lock (``stores.transact``): a function
    of the store as it is then that merges against it and returns the records to write
    with the merge's ``RunResult``, which ``transact`` hands back once committed."""

    def plan(stored: stores.Stored) -> tuple[Iterator[FactRecord], RunResult]:
        from brainmigrate.merge import renames, run

        renamed = renames.follow(notes, stored, options.scope)
        _check_sync(sync, stored, notes, store)
        ran = run.merge(notes, stored, stems, sync, _deleted(stored, paths))
        _kept(ran, reader)
        ran.renamed = renamed
        if options.progress is not None:
            options.progress("write", 0, len(notes.facts), lines)
        refreshed = set()
        if verify:  # also every stored fact a line fed, already imported or not
            refreshed = _verify(ran, options.cache_dir, store_base(store))
        # only facts the run may have changed are read back (a re-import: none)
        stored_ids, new_ids = ran.changed
        records = (
            r
            for r in ran.facts.values_of(
                itertools.chain(stored_ids, new_ids), len(stored_ids) + len(new_ids)
            )
            if r.id in refreshed or r.action() != "unchanged" or r.new_provenance or r.refed
        )
        return records, ran

    return plan
