"""Export the fact store to the stores teams use: jsonl, brain notes, knowledge, memory.

``export(store, fmt, output, options)`` reads ``know.db``, keeps the facts the filters
select, renders every file in memory, checks the target's rules, and only then writes.
Nothing is written when a check fails (``ExportError``, the CLI exits 2):

* ``jsonl`` -- one JSON object per line, the §Report fact shape plus provenance.
* ``brain`` -- brain notation, one file per scope, each fact one line. Every line is read
  back with the importer's own rules before anything is written; a fact that would not
  come back the same (kind, text, task, status, created, run) fails the export.
* ``knowledge`` -- a flat folder of Markdown entries with YAML frontmatter: a unique
  kebab-case ``name`` (the file stem), ``description``, ``type``, times, anchors with the
  SHA-256 of the anchored file, or a ``source`` when there is no anchor.
* ``memory`` -- ``MEMORY.md`` (one line per topic) and one topic file per scope, within
  byte budgets; ``fit`` leaves out what does not fit, by priority, and says what.

Writes are atomic: a new folder is built as a hidden temporary folder beside the target
and renamed into place; into an existing folder every file is first written as a hidden
temporary file, and only when all of them are written are they renamed over the old ones.
A failure removes the temporary files and leaves the previous output as it was. Files in
an existing folder that this export does not write are left alone (and listed).
"""

from __future__ import annotations

import os
from pathlib import Path

from brainmigrate import stores
from brainmigrate.exports.brain import _read_back, _task_ids, brain_files, brain_line
from brainmigrate.exports.common import (
    INDEX_BUDGET,
    INDEX_NAME,
    QUOTE_AT_MOST,
    SHOW_AT_MOST,
    TOTAL_BUDGET,
    ExportError,
    ExportOptions,
    ExportResult,
    _check_scopes,
    quote,
    refusal,
    select,
)
from brainmigrate.exports.files import (
    _tidy,
    publish,
    publish_file,
    sanitize,
    scope_stems,
    slug,
    windows_reserved,
)
from brainmigrate.exports.jsonl import jsonl_text
from brainmigrate.exports.knowledge import TYPES, file_digest, knowledge_files, parse_type_map
from brainmigrate.exports.memory import memory_files
from brainmigrate.fsutil import check_output, refuse_clashes
from brainmigrate.model import KINDS

__all__ = [
    "FORMATS",
    "INDEX_BUDGET",
    "INDEX_NAME",
    "QUOTE_AT_MOST",
    "SHOW_AT_MOST",
    "TOTAL_BUDGET",
    "TYPES",
    "ExportError",
    "ExportResult",
    "ExportOptions",
    "_read_back",
    "brain_files",
    "brain_line",
    "export",
    "file_digest",
    "knowledge_files",
    "memory_files",
    "parse_type_map",
    "publish",
    "publish_file",
    "quote",
    "refusal",
    "sanitize",
    "scope_stems",
    "select",
    "slug",
    "windows_reserved",
]

#: Export formats, in help order.
FORMATS = ("jsonl", "brain", "knowledge", "memory")


def _refuse_notes(fed: list[str], folder: Path, names, out: str) -> None:
    """Raise ``ExportError`` when a file the export would write (``folder``/name) is a
    notes file the store was imported from (``fed``: its provenance files, named as then,
    from this folder): an export keeps the facts, not the headings, ``@`` and ``%`` lines
    and prose around them, so writing over the notes would lose them. Before any work is
    written."""
    from brainmigrate.fsutil import identity, shown

    targets = {identity(folder / name): name for name in names if (folder / name).exists()}
    if not targets:
        return
    for source in fed:
        name = targets.get(identity(source))
        if name is not None:
            raise ExportError(
                f"--output {shown(out)}: {shown(name)} would be written over"
                f" {shown(source)}, a notes file this store was imported from (the"
                " headings, @ and % lines and prose around its facts are not in the store);"
                " pass --output another path, or move the notes away first"
            )


def export(
    store: str | os.PathLike,
    fmt: str,
    output: str | os.PathLike,
    options: ExportOptions | None = None,
) -> ExportResult:
    """Export the facts of the store at ``store`` as ``fmt`` to ``output``.

    ``output`` is a file for ``jsonl`` (``-``: the text is returned in ``result.text``) and
    a folder for the others. Raises ``ExportError`` (bad format or option; memory over
    budget without ``fit``; a failed write), ``fsutil.OutputError`` (an output path that
    cannot take the export) and ``stores.StoreError`` (no store, newer schema); on any
    error nothing is written. A fact the target cannot hold does not stop the others: it
    is left out and listed in ``result.refused``.
    """
    options = options or ExportOptions()
    if fmt not in FORMATS:
        raise ExportError(f"unknown export format {fmt!r}; use one of: {', '.join(FORMATS)}")
    if options.status not in ("all", "active"):
        raise ExportError(f"--status {options.status!r}: use 'active' or 'all'")
    bad = sorted(set(options.kinds) - set(KINDS))
    if bad:
        raise ExportError(f"--kind {bad[0]!r}: use one of {', '.join(KINDS)}")
    type_map = parse_type_map(options.type_map)
    tasks = _task_ids(options.task_pattern)
    out = str(output)
    to_stdout = fmt == "jsonl" and out == "-"
    if not to_stdout:
        check_output(Path(out), folder=fmt != "jsonl")
    path = Path(store)
    # every read in one read transaction, so they agree while an import commits; the
    # store is closed again before anything is written, so no import waits for the files
    with stores.reader(path) as store_reader:
        snap = store_reader.snapshot()
        _check_scopes(options.scopes, {r.scope for r in snap.facts.values()})
        facts = select(snap.facts.values(), options)
        extra = store_reader.details() if fmt in ("jsonl", "knowledge") else {}
        fed = [] if to_stdout else store_reader.fed_files()
        base = store_reader.base
    result = ExportResult(fmt, out, len(facts))
    if fmt == "jsonl":
        text = jsonl_text(facts, extra)
        if to_stdout:
            result.text = text
            return result
        result.files = [Path(out).name]
        _refuse_notes(fed, Path(out).parent, [Path(out).name], out)
        _tidy(Path(out), False, result.notes)
        result.written = publish_file(Path(out), text)
        return result
    if fmt == "brain":
        files = brain_files(facts, options.plus_kind, tasks, result.notes, result.refused)
    elif fmt == "knowledge":
        files = knowledge_files(facts, extra, type_map, base)
    else:
        files = memory_files(facts, options, result)
    result.files = sorted(files)
    refuse_clashes([("--output", Path(out) / name) for name in files], [("the store", path)])
    _refuse_notes(fed, Path(out), files, out)
    _tidy(Path(out), True, result.notes)
    result.written, result.others = publish(Path(out), files)
    return result
