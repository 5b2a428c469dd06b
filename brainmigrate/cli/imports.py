"""``import`` (notes into the store) and ``index`` (a checkout's declarations)."""

from __future__ import annotations

import functools
import sys

import click

from brainmigrate.cli.options import (
    cache_option,
    config_options,
    dry_run_option,
    format_option,
    not_blank,
    notes_options,
    output_option,
    progress_option,
    root_option,
    store_option,
    voiced,
)
from brainmigrate.cli.reading import (
    file_rules,
    load_settings,
    notes_progress,
    read_options,
    stdin_notes,
)
from brainmigrate.cli.runtime import (
    Failure,
    emit,
    guarded,
    refuse_overwrites,
    say,
    verbose,
    voice,
    writable_output,
)
from brainmigrate.reports import FORMATS as REPORT_FORMATS


class _Reading:
    """``--from``, ``--type-map`` and ``--allow-empty``, as ``reader_options`` gives them."""

    def __init__(self, source: str | None, type_map: tuple[str, ...], allow_empty: bool):
        from brainmigrate.exports.knowledge import parse_type_map

        self.source, self.allow_empty = source, allow_empty
        self.type_map = parse_type_map(type_map)

    def notation(self, notation: str | None) -> str | None:
        """``--notation``, or what ``--from brain|markdown`` says; both, differing: refused."""
        if self.source not in ("brain", "markdown"):
            return notation
        if notation is not None and notation != self.source:
            raise Failure(
                f"--from {self.source} and --notation {notation} disagree; pass one of them"
            )
        return self.source

    def failed(self, result) -> bool:
        """Whether the import read no fact at all and that fails it (no
        ``--allow-empty``): it then ran as a dry run (``importer.Reader.refuse_empty``)."""
        return not self.allow_empty and not any(st.fact_lines for st in result.files)

    def check_empty(self, result) -> None:
        """Exit 1 when the import read no fact at all, unless ``--allow-empty``, naming
        what was read: ``0 facts in 1 file: empty.jsonl is empty``; the BM313 warnings
        are pointed to only when there are some."""
        if not self.failed(result):
            return
        files = result.files
        said = ", ".join(_why_no_fact(st) for st in files[:3])
        more = f", and {len(files) - 3} more" if len(files) > 3 else ""
        warned = any(d.code == "BM313" for d in result.notes.warnings)
        say(
            f"brainmigrate: 0 facts in {_files(len(files))}: {said}{more}; nothing imported,"
            f" nothing written ({'see the BM313 warnings; ' if warned else ''}pass --from with"
            " the store the files are, or --allow-empty when none is expected)"
        )
        sys.exit(1)


def _why_no_fact(st) -> str:
    """Why one file read gave no fact line, in a few words."""
    from brainmigrate.fsutil import printable

    name = printable(st.path)
    if not st.lines:
        return f"{name} is empty"
    return f"{name}: {st.lines} {'line' if st.lines == 1 else 'lines'}, no fact line"


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def reader_options(func):
    """``import``'s ``--from``, ``--type-map`` and ``--allow-empty``, given to the command
    as one ``reading`` value (``_Reading``)."""
    from brainmigrate.sources import READERS

    @functools.wraps(func)
    def wrapper(*args, source, type_map, allow_empty, **kwargs):
        return func(*args, reading=_Reading(source, type_map, allow_empty), **kwargs)

    for option in reversed(
        [
            click.option(
                "--from",
                "source",
                type=click.Choice(READERS),
                default=None,
                help="Reader of every PATH: notes (brain, markdown) or a store; default:"
                " each file detected.",
            ),
            click.option(
                "--type-map",
                "type_map",
                multiple=True,
                metavar="KIND=TYPE",
                help="--from knowledge: the export's --type-map, read back; repeatable.",
            ),
            click.option(
                "--allow-empty",
                is_flag=True,
                help="Exit 0 when the files read hold no fact (default: exit 1).",
            ),
        ]
    ):
        wrapper = option(wrapper)
    return wrapper


@click.command("import")
@notes_options
@store_option("SQLite fact store to import into.")
@dry_run_option("Read and report; write no store.")
@click.option(
    "--verify",
    is_flag=True,
    help="Fingerprint the anchors of the facts this import writes (see 'brainmigrate stale').",
)
@click.option(
    "--sync",
    is_flag=True,
    help="Retire the stored facts no longer in the notes files read (status superseded).",
)
@format_option(REPORT_FORMATS, "Report format (html: one self-contained audit page).")
@output_option
@reader_options
@voiced
@guarded
def import_cmd(
    paths,
    config_file,
    isolated,
    stdin_filename,
    notation,
    parser,
    no_progress,
    store,
    dry_run,
    verify,
    sync,
    fmt,
    output,
    reading,
    **given,
):
    """Import notes files (or folders of *.md) into the fact store; with no PATH, the
    notes files under the current folder the include globs name.

    Settings come from .brainmigrate.toml or [tool.brainmigrate] in pyproject.toml, the
    nearest at or above each notes file; options given here override them.
    """
    from brainmigrate import importer

    quiet = voice().quiet
    setup = (store, dry_run, output, config_file, isolated, stdin_filename, given)
    paths, found = _configured(paths, *setup)
    s = found[0].settings
    with (
        stdin_notes(paths, stdin_filename) as (read, names),
        notes_progress(no_progress or quiet) as progress,
    ):
        options = read_options(s, parser, names, progress, reading.notation(notation))
        named = dict(zip(paths, read, strict=True))
        options, read = _selected(found, named, options, reading.source)
        reader = importer.Reader(reading.source, reading.type_map, not reading.allow_empty)
        result = importer.import_notes(read, options, store, dry_run, verify, sync, reader)
    _report(result, fmt, output, s.cache_dir, reading.failed(result))
    reading.check_empty(result)


def _configured(paths, store, dry_run, output, config_file, isolated, stdin_filename, given):
    """``(paths, groups)`` an import reads (``configs.of_paths``: groups that would read
    the notes apart are refused), with its outputs checked before any work: none over
    what it reads (``refuse_overwrites``), each writable."""
    from brainmigrate.cli import configs

    keys, how = configs.IMPORT_KEYS, "import them apart"
    args = (config_file, isolated, voice().quiet, True, stdin_filename)
    paths, found = configs.of_paths(paths, keys, how, *args, **given)
    notes, rules = configs.written_over(found)
    refuse_overwrites(
        [("--output", output)],
        store,
        notes,
        store_written=not dry_run,
        configs=[g.file for g in found if g.file],
        rules=rules,
    )
    writable_output(output)
    return paths, found


def _selected(found, read: dict, options, source):
    """``(options, files)``: the notes files of every group (``configs.groups``) without
    those its own ``exclude`` globs leave out; ``read`` maps a PATH to the file it is read
    from (``-``: standard input's copy). One group: its folders walked by the import with
    its file rules (``Group.skip`` in ``options.files``). Several (one read): each group's
    folders listed with its own file rules (``include``, ``respect-gitignore``, ``skip``),
    as ``check`` walks them, their files given as named (but for ``--from`` a source,
    whose folders the source walks)."""
    from dataclasses import replace

    from brainmigrate.read.files import notes_files, select_files

    listed, names = len(found) > 1 and source is None, options.names
    if len(found) == 1:
        options = replace(options, files=options.files._replace(skip=found[0].skip))
    out: list = []
    for group in found:
        paths = [read.get(p, p) for p in group.paths]
        rules = file_rules(group.settings, group.skip)
        kept, _ = select_files(paths, group.settings.excludes, names, rules)
        out += [f for _, f in notes_files(kept, names=names, rules=rules)] if listed else kept
    return options, out


def _report(result, fmt: str, output: str | None, cache_dir, failed: bool = False) -> None:
    """Write the import's report as ``fmt`` to ``output`` (None or ``-``: stdout); under
    ``-q`` the text report holds only what the import found (gone, outside, unresolved,
    ambiguous …), not its counts; so does the text report of a ``failed`` import (no
    fact read: nothing was written, and no count says it was)."""
    from brainmigrate import reports

    said = functools.partial(_imported, result)  # for a report that cannot be written
    if fmt == "json":
        emit(reports.json_chunks(result), output, changed=said)
    else:  # streamed: facts and entries are read back as they are written
        quiet = voice().quiet or failed  # text: -q leaves out the counts and the files
        emit(reports.import_chunks(result, fmt, output, cache_dir, quiet), output, changed=said)


def _imported(result) -> str | None:
    """What the import wrote to the store, in words (None: a dry run, or no commit), for
    a report that could not be written after it (``runtime.unwritten``)."""
    from brainmigrate import reports
    from brainmigrate.runstate import state
    from brainmigrate.shapes import plural

    if result.dry_run or state.committed is None:
        return None
    totals = reports.report(result, False, "none")["totals"]
    return (
        f"the store {state.committed} was written (the whole import:"
        f" {plural(totals['added'], 'fact')} added, {totals['updated']} updated)"
    )


@click.command("index")
@root_option(
    "Checkout to index (one folder). Default: the config's first root, else '.'.",
    multiple=False,
)
@config_options
@cache_option(
    "Folder for the index cache (env BRAINMIGRATE_CACHE_DIR, else config cache-dir; "
    "default ~/.cache/brainmigrate)."
)
@click.option(
    "--name",
    "names",
    multiple=True,
    callback=not_blank,
    help="List where NAME is declared; repeatable.",
)
@format_option(["text", "json"], "Report format.")
@output_option
@progress_option
@voiced
@guarded
def index_cmd(root, config_file, isolated, cache_dir, names, fmt, output, no_progress):
    """Index a checkout's declarations (cached) and show why a name does or does not anchor."""
    from pathlib import Path

    from brainmigrate import importer, reports
    from brainmigrate.codeindex import CodeIndex

    settings = load_settings(
        config_file, isolated, voice().quiet, roots_said=False, cache_dir=cache_dir
    )
    if not root:
        settings.check_roots()
    root = root or (settings.roots[0] if settings.roots else ".")
    cache_dir = settings.cache_dir
    verbose(f"brainmigrate: root: {root}")
    writable_output(output)
    importer.make_roots([root])  # a root that is no folder: the message import gives
    idx = CodeIndex(root, cache_dir=Path(cache_dir) if cache_dir else None)
    refuse_overwrites([("--output", output)], cache=idx.cache_path)
    summary = _build(idx, no_progress or voice().quiet)
    data = reports.index_report(summary, {n: idx.lookup(n) for n in names}, idx.link_target)
    _never_anchoring(data["names"])
    if fmt != "json":
        data["quiet"] = voice().quiet  # -q: the names asked for, not the build's counts
    emit(reports.render(data, "json" if fmt == "json" else "index"), output)


def _never_anchoring(names: dict) -> None:
    """Mark each name of ``index --name`` that is no CamelCase name of two or more words
    (``Context``, ``parse``) ``"anchor": "never"`` with no file chosen: notes never anchor
    to it, wherever it is declared (SPEC.md §Anchors 3, ``read.names.camelcase_names``)."""
    from brainmigrate.read.names import camelcase_names

    for name, entry in names.items():
        if not camelcase_names(name):
            entry["anchor"], entry["chosen"] = "never", []


def _build(idx, no_progress: bool):
    """``idx.build()``, with a progress line on stderr unless ``no_progress`` (or no
    terminal); returns the build's summary."""
    from brainmigrate import progress

    if not progress.enabled(sys.stderr, not no_progress):
        return idx.build()
    bar = progress.Progress(sys.stderr)
    bar.show("indexing: listing files", force=True)
    try:
        return idx.build(lambda done, total: bar.count("indexing", done, total))
    finally:
        bar.close()
