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
    emit,
    guarded,
    refuse_overwrites,
    verbose,
    voice,
    writable_output,
)
from brainmigrate.reports import FORMATS as REPORT_FORMATS


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
    **given,
):
    """Import notes files (or folders of *.md) into the fact store; with no PATH, the
    notes files under the current folder the include globs name.

    Settings come from .brainmigrate.toml or [tool.brainmigrate] in pyproject.toml, the
    nearest at or above each notes file; options given here override them.
    """
    from brainmigrate import importer
    from brainmigrate.cli import configs

    quiet = voice().quiet
    keys, how = configs.IMPORT_KEYS, "import them apart"
    args = (config_file, isolated, quiet, True, stdin_filename)
    paths, found = configs.of_paths(paths, keys, how, *args, **given)
    s = found[0].settings
    refuse_overwrites(
        [("--output", output)],
        store,
        paths,
        store_written=not dry_run,
        configs=[g.file for g in found if g.file],
        rules=file_rules(s),
    )
    writable_output(output)
    with (
        stdin_notes(paths, stdin_filename) as (read, names),
        notes_progress(no_progress or quiet) as progress,
    ):
        options = read_options(s, parser, names, progress, notation)
        read = _selected(found, dict(zip(paths, read, strict=True)), names)
        result = importer.import_notes(read, options, store, dry_run, verify, sync)
    _report(result, fmt, output, s.cache_dir)


def _selected(found, read: dict, names) -> list:
    """The notes files of every group (``configs.groups``) without those its own
    ``exclude`` globs leave out; ``read`` maps a PATH to the file it is read from (``-``:
    standard input's copy)."""
    from brainmigrate.read.files import select_files

    out: list = []
    for group in found:
        paths = [read.get(p, p) for p in group.paths]
        kept, _ = select_files(paths, group.settings.excludes, names, file_rules(group.settings))
        out += kept
    return out


def _report(result, fmt: str, output: str | None, cache_dir) -> None:
    """Write the import's report as ``fmt`` to ``output`` (None or ``-``: stdout); under
    ``-q`` the text report holds only what the import found (gone, outside, unresolved,
    ambiguous …), not its counts."""
    from brainmigrate import reports

    said = functools.partial(_imported, result)  # for a report that cannot be written
    if fmt == "json":
        emit(reports.json_chunks(result), output, changed=said)
    else:  # streamed: facts and entries are read back as they are written
        quiet = voice().quiet  # text: -q leaves out the counts and the files
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
