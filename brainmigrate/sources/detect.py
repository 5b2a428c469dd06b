"""Which reader reads each file an import (or a check) is given (issue 30; docs/migrate.md
"Detection"): ``--from`` when given, else the folder's reader when a folder PATH is a
store's (a Basic Memory vault: more than half of its first 32 ``.md`` files are notes),
else the first source that recognises the file's first line (whole, up to ``HEAD``; a
memory index's claim on the files it names first), else the notes readers as before
(brain notation, or Markdown notes by the ``markdown`` globs).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from brainmigrate.fsutil import printable
from brainmigrate.read.files import DEFAULT_RULES, InputError, notes_files
from brainmigrate.sources import (
    NOTES_READERS,
    READERS,
    SOURCES,
    Source,
    holds_brain_facts,
    load_all,
    source_files,
)

#: How much of a file detection reads at least: 4 KiB, then on to the end of the first
#: line that is not blank, up to ``LINE_MAX`` (a jsonl export whose first fact is long).
HEAD = 4096
LINE_MAX = 1 << 20
#: Sources asked first: a memory index names its topic files, a stronger claim than a
#: shape (a topic file with knowledge front matter is the index's, not a knowledge entry).
FIRST = ("memory",)
#: Sources whose folder PATH is read by them whole when their ``detect`` says the folder
#: is theirs (one folder, one reader).
FOLDER_READERS = ("basic-memory",)


def head_of(path: Path) -> str:
    """The start of ``path`` as text (UTF-8, errors replaced; a byte order mark dropped):
    ``HEAD`` bytes, and on to the end of the first line that is not blank (lines end at
    ``\n`` only: a U+2028 inside a JSON string ends none), up to ``LINE_MAX``; ``""`` for
    a folder or a file that cannot be read (its reader says why)."""
    from brainmigrate import inputs

    try:
        with inputs.opened(path) as handle:
            data = handle.read(HEAD)
            while len(data) < LINE_MAX and not _first_line_ends(data):
                more = handle.read(min(len(data), LINE_MAX - len(data)))
                if not more:
                    break
                data += more
    except OSError:
        return ""
    return data.decode("utf-8", "replace").removeprefix("\ufeff")


def _first_line_ends(data: bytes) -> bool:
    """Whether ``data`` holds the end of its first line that is not blank."""
    start = len(data) - len(data.lstrip())
    return data.find(b"\n", start) >= 0


def first_line(head: str) -> str:
    """The first line of ``head`` that is not blank, without its line end (``\n`` or
    ``\r\n``; never split at U+2028, U+2029 or U+0085)."""
    return next((ln for ln in head.split("\n") if ln.strip()), "").removesuffix("\r")


def text_lines(text: str) -> list[str]:
    """``text``'s lines as every store reader and its report count them: split at ``\n``
    only, a ``\r`` before it dropped, no empty last line after a final ``\n``
    (``str.splitlines`` would also split at U+2028, U+2029, U+0085 and others, which a
    JSON string or a note's text may hold raw)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _ordered() -> list[Source]:
    sources = load_all()
    return [sources[n] for n in FIRST if n in sources] + [
        s for n, s in sources.items() if n not in FIRST
    ]


def detected(path: Path) -> Source | None:
    """The first source that recognises ``path`` (``FIRST`` asked first), or None (notes)."""
    head = head_of(path)
    for source in _ordered():
        if source.detect(path, head):
            return source
    return None


def folder_reader(folder: Path) -> Source | None:
    """The source that reads the folder PATH ``folder`` whole (``FOLDER_READERS`` whose
    ``detect`` claims it), or None: each of its files is detected. A folder holding a
    memory index is the memory reader's per file (the index decides for what it names)."""
    if not folder.is_dir() or (folder / "MEMORY.md").is_file():
        return None
    sources = load_all()
    for name in FOLDER_READERS:
        source = sources.get(name)
        if source is not None and source.detect(folder, ""):
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
    folders are, or as ``rules``, the ``files.FileRules``, say); without, a folder PATH
    that ``folder_reader`` gives a reader has its ``.md`` files read by it, and any other
    file is read by what ``detected`` says. Raises ``InputError``
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
        whole = folder_reader(p) if reader is None else None
        if whole is not None:
            source_files(whole, p)  # a vault walked: its notes' names are learnt
        for display, path in notes_files([given], skipped, names, rules or DEFAULT_RULES):
            if not first(path):
                continue
            if whole is not None and path.suffix.lower() == ".md":
                # a folder's reader takes its notes, not a file of brain notation facts
                which = None if holds_brain_facts(head_of(path)) else whole
            elif source is not None or reader is not None:
                which = source
            else:
                which = detected(path)
            if which is None:
                notes.append((display, path))
            else:
                stores.append((display, path, which))
    return notes, stores


def looks_like(path: Path, read_by: str | None = None) -> str:
    """For a file that gave no fact line (read as notes, or by the reader ``read_by``):
    ``": it looks like a jsonl export; pass --from jsonl"`` when another source than
    ``read_by`` recognises it, or one whose ``likely(path, head)`` says it may be its
    file (a note of one observation), else ``""``."""
    source = detected(path)
    if source is None:
        head = head_of(path)
        source = next((s for s in _ordered() if _likely(s, path, head)), None)
    if source is None or source.name == read_by:
        return ""
    what = getattr(source, "looks_like", f"a {source.name} file")
    return f": it looks like {what}; pass --from {source.name}"


def _likely(source: Source, path: Path, head: str) -> bool:
    likely = getattr(source, "likely", None)
    return likely is not None and likely(path, head)


def json_store(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a JSON lines store file (a jsonl export, an MCP memory file), by
    its name or by what detection says of it, as ``check`` read it (``--fix`` leaves such a
    file alone: a rewrite could break its JSON)."""
    if os.fspath(path).lower().endswith((".jsonl", ".json", ".ndjson")):
        return True
    found = detected(Path(path))
    return found is not None and found.name in ("jsonl", "mcp-memory")
