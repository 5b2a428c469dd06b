"""Which reader reads each file an import is given (issue 30): ``--from`` when given,
else the first registered source that recognises the file's first 4 KiB, else the notes
readers as before (brain notation, or Markdown notes by the ``markdown`` globs).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from brainmigrate.fsutil import printable
from brainmigrate.read.files import DEFAULT_RULES, InputError, notes_files
from brainmigrate.sources import NOTES_READERS, READERS, SOURCES, Source, load_all, source_files

#: How much of a file detection reads.
HEAD = 4096


def head_of(path: Path) -> str:
    """The first ``HEAD`` bytes of ``path`` as text (UTF-8, errors replaced; a byte order
    mark dropped); ``""`` for a folder or a file that cannot be read (its reader says why)."""
    from brainmigrate import inputs

    try:
        with inputs.opened(path) as handle:
            data = handle.read(HEAD)
    except OSError:
        return ""
    return data.decode("utf-8", "replace").removeprefix("\ufeff")


def detected(path: Path) -> Source | None:
    """The first registered source that recognises ``path``, or None (notes)."""
    head = head_of(path)
    for source in load_all().values():
        if source.detect(path, head):
            return source
    return None


def chosen(reader: str | None) -> Source | None:
    """The source ``--from reader`` names; None for a notes reader (or no ``--from``).
    Raises ``InputError`` for a name that is no reader, or a reader not installed."""
    if reader is None or reader in NOTES_READERS:
        return None
    if reader not in READERS:
        raise InputError(f"--from {reader}: not a reader; pass one of {', '.join(READERS)}")
    source = load_all().get(reader)
    if source is None:
        raise InputError(
            f"--from {reader}: not available in this version; pass one of"
            f" {', '.join(r for r in READERS if r in NOTES_READERS or r in SOURCES)}"
        )
    return source


def plan(
    paths: Sequence[str | os.PathLike],
    reader: str | None,
    skipped: list[str],
    names=None,
    rules=None,
) -> tuple[list[tuple[str, Path]], list[tuple[str, Path, Source]]]:
    """The files to read: ``(display, path)`` of the notes files, and ``(display, path,
    source)`` of the store files, each in the order given. With ``--from`` a source, every
    path is read by it (a folder walked by its ``files``, else for ``*.md`` as notes
    folders are, or as ``rules``, the ``files.FileRules``, say); without, each file by
    what ``detected`` says. Raises ``InputError``
    (``notes_files``, ``chosen``)."""
    source = chosen(reader)
    notes: list[tuple[str, Path]] = []
    stores: list[tuple[str, Path, Source]] = []
    seen: set[str] = set()  # each file once, however many PATHS name it (notes_files' rule)

    def first(path: Path) -> bool:
        real = os.path.realpath(path)
        if real in seen:
            return False
        seen.add(real)
        return True

    for given in paths:
        p = Path(given)
        if source is not None and p.is_dir() and hasattr(source, "files"):
            stores.extend(
                (printable(f.as_posix()), f, source) for f in source_files(source, p) if first(f)
            )
            continue
        for display, path in notes_files([given], skipped, names, rules or DEFAULT_RULES):
            if not first(path):
                continue
            which = source if source is not None or reader is not None else detected(path)
            if which is None:
                notes.append((display, path))
            else:
                stores.append((display, path, which))
    return notes, stores


def looks_like(path: Path) -> str:
    """For a file read as notes that gave no fact line: ``": it looks like a jsonl export;
    pass --from jsonl"`` when a source recognises it, else ``""``."""
    source = detected(path)
    if source is None:
        return ""
    what = getattr(source, "looks_like", f"a {source.name} file")
    return f": it looks like {what}; pass --from {source.name}"
