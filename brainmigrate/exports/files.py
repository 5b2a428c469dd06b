"""File names and writing for exports: safe stems per scope, the output check, and
publishing (all or nothing, through ``writers``' descriptors).
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from brainmigrate.exports.common import (
    ExportError,
    _cap,
)
from brainmigrate.fsutil import (
    folder_mode,
    printable,
    remove_leftovers,
    shown,
    signals_held,
    write_target,
)
from brainmigrate.runstate import state
from brainmigrate.writers import (
    create,
    discard,
    folder_below,
    folder_of,
    make_folder,
    open_child,
    remove_tree,
    stage,
    write_file,
)

#: A file stem that is safe as it is: starts with a letter or digit, then word characters,
#: dots and hyphens, lower case, no "..".
_SAFE_STEM = re.compile(r"[^\W_][\w.-]*")

#: Names Windows reserves, whatever the extension (``nul.txt.md`` is ``nul`` to it).
_RESERVED = frozenset(
    ["con", "prn", "aux", "nul"]
    + [f"{dev}{i}" for dev in ("com", "lpt") for i in [*"123456789", "¹", "²", "³"]]
)

#: The longest file stem a scope gets, in UTF-8 bytes: with ``.md`` and the temporary
#: name around it (``fsutil.temp_prefix``) far below the 255 bytes file systems take.
STEM_BYTES = 120


def sanitize(text: str, fallback: str = "scope") -> str:
    """A safe, lower-case file stem for ``text``: word characters, dots and hyphens only,
    no leading dot or hyphen, no ``..``, no name Windows reserves, at most ``STEM_BYTES``
    bytes (a longer one is cut and ends in ``-`` and 8 hex digits of ``text``'s SHA-256,
    so two texts alike in their first bytes get two stems); ``fallback`` when nothing is
    left. Never a path: ``../../etc`` gives ``etc``."""
    s = unicodedata.normalize("NFKC", text).lower()
    s = re.sub(r"[^\w.-]+", "-", s)
    s = re.sub(r"\.{2,}", ".", s)
    s = re.sub(r"-{2,}", "-", s)
    s = re.sub(r"(?:^|(?<=-))[.-]+|[.-]+$", "", s).strip(".-_")
    s = re.sub(r"-[.-]+", "-", s)
    if not s or windows_reserved(s):
        s = f"{fallback}-{s}" if s else fallback
    if len(s.encode("utf-8")) > STEM_BYTES:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        head = s.encode("utf-8")[: STEM_BYTES - 9].decode("utf-8", "ignore")
        s = f"{head.rstrip('.-_')}-{digest}"
    return s


def windows_reserved(stem: str) -> bool:
    """Whether Windows reserves a file named ``stem`` (with any extension): ``nul``,
    ``NUL.txt``, ``com1.md`` … (case-insensitive)."""
    return stem.split(".", 1)[0].rstrip(" ").lower() in _RESERVED


def scope_stems(scopes: Iterable[str], reserved: Iterable[str] = ()) -> dict[str, str]:
    """A unique file stem per scope.

    ``area:<name>`` keeps ``<name>`` when it is a safe lower-case stem (so importing the
    file gives the scope back); every other scope is ``sanitize``d (``repo`` -> ``repo``,
    ``file:src/Foo.kt`` -> ``file-src-foo.kt``). Clashes (also with ``reserved`` stems,
    compared case-insensitively) get ``-2``, ``-3`` … in sorted scope order.
    """
    taken = {r.lower() for r in reserved}
    out: dict[str, str] = {}
    scopes = sorted(set(scopes))
    later = []
    for scope in scopes:
        name = scope[5:] if scope.startswith("area:") else ""
        if (
            name
            and _SAFE_STEM.fullmatch(name)
            and name == name.lower()
            and ".." not in name
            and not name.endswith(".")
            and not windows_reserved(name)
            and len(name.encode("utf-8")) <= STEM_BYTES
            and name not in taken
        ):
            out[scope] = name
            taken.add(name)
        else:
            later.append(scope)
    for scope in later:
        base = sanitize(scope[5:] if scope.startswith("area:") and scope[5:] else scope)
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}-{n}"
        out[scope] = name
        taken.add(name)
    return out


def slug(text: str, limit: int = 48) -> str:
    """Kebab-case ASCII words of ``text``, cut at a word boundary to ``limit`` characters."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    s = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if len(s) > limit:
        s = s[: limit + 1]
        s = s[: s.rfind("-")] if "-" in s else s[:limit]
    return s.strip("-")


# ------------------------------------------------------------------------------ writing


def _tidy(out: Path, folder: bool, notes: list[str]) -> None:
    """Remove the hidden temporary files (and folders) a killed export to ``out`` left:
    beside it, made for its name, and in it, when it is a folder (``fsutil.leftovers``
    knows them by name and by their process being gone); add a note naming them."""
    parent = out.parent if str(out.parent) else Path(".")
    removed = [parent / n for n in remove_leftovers(parent, out.name)]
    if folder and out.is_dir() and not out.is_symlink():
        removed += [out / n for n in remove_leftovers(out)]
    if removed:
        names = [printable(str(p)) for p in removed]
        notes.append(
            f"removed {len(removed)} temporary files a killed export left: {', '.join(_cap(names))}"
        )


def same_bytes(path: Path, data: bytes) -> bool:
    """Whether the regular file ``path`` already holds exactly ``data`` (``False`` when it
    cannot be read)."""
    try:
        return path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


def publish_bytes(path: Path, data: bytes) -> list[str]:
    """Write ``data`` to ``path`` with ``write_file`` (an output), unless the file already
    holds these bytes: returns ``[]`` then, else ``[path.name]``. Raises ``OSError``."""
    if write_target(path)[1] is False and same_bytes(path, data):
        return []
    write_file(path, data, output=True)
    return [path.name]


def publish_folder(folder: Path, data: dict[str, bytes]) -> tuple[list[str], list[str]]:
    """Write ``data`` (name -> bytes) into ``folder`` all or nothing.

    A folder that does not exist yet is built as a hidden temporary folder beside it and
    renamed into place. In an existing folder, files whose bytes would not change are not
    touched; the others are first all written as hidden temporary files (``stage``), then
    renamed over the old ones. Every step is relative to the descriptor of the folder (and
    of its parent), opened once. On a failure the temporary files are removed and the
    folder is as it was. The renames run with SIGINT and SIGTERM held, and the folder is
    recorded in ``state.written`` with them: an interrupt leaves the old files or the new
    ones, never a mix, and no temporary file. Returns ``(written names, names of other
    files in the folder)``; raises ``OSError``.
    """
    if not folder.exists():
        with folder_of(folder) as parent_fd:
            _publish_new(parent_fd, folder.name, data, shown(os.fspath(folder)))
        return sorted(data), []
    with folder_below(None, -1, os.fspath(folder)) as fd:
        names = [n for n in os.listdir(fd) if not n.startswith(".")]
        existing = sorted(names)
        changed = {n: b for n, b in data.items() if not same_bytes(folder / n, b)}
        temps: dict[str, str] = {}
        try:
            for name, blob in changed.items():
                temps[name] = stage(fd, name, blob)
            with signals_held():  # all renamed, or none
                for name, tmp in list(temps.items()):
                    os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
                    del temps[name]
                if changed:
                    state.written.append(shown(os.fspath(folder)))
        finally:
            for tmp in temps.values():
                discard(fd, tmp)
    return sorted(changed), [n for n in existing if n not in data]


def _publish_new(parent_fd: int, name: str, data: dict[str, bytes], shown_as: str) -> None:
    """Build the folder ``name`` in ``parent_fd`` as a hidden temporary folder holding
    ``data``, then rename it into place; on a failure nothing is left."""
    tmpdir = None
    try:
        tmpdir = make_folder(parent_fd, name)
        fd = open_child(parent_fd, tmpdir)
        try:
            for entry, blob in data.items():
                create(fd, entry, blob)
        finally:
            os.close(fd)
        os.chmod(tmpdir, folder_mode(), dir_fd=parent_fd)
        with signals_held():
            os.rename(tmpdir, name, src_dir_fd=parent_fd, dst_dir_fd=parent_fd)
            tmpdir = None
            state.written.append(shown_as)
    finally:
        if tmpdir is not None:
            remove_tree(parent_fd, tmpdir)


def publish_file(path: Path, text: str) -> list[str]:
    """Write ``text`` to ``path`` through a temporary file and a rename; ``[]`` when the
    file already holds these bytes, else ``[path.name]``. Raises ``ExportError``."""
    try:
        return publish_bytes(path, text.encode("utf-8"))
    except OSError as exc:
        raise ExportError(
            f"--output {path}: cannot write ({exc.strerror or exc}); free space or pass"
            " --output with another path"
        ) from None


def publish(folder: Path, files: dict[str, str]) -> tuple[list[str], list[str]]:
    """Write ``files`` (name -> text) into ``folder`` all or nothing (``publish_folder``).

    Returns ``(written names, names of other files in the folder)``; raises ``ExportError``,
    also when a name to write is in the folder as something else than a regular file.
    """
    data = {name: text.encode("utf-8") for name, text in files.items()}
    try:
        if folder.exists():
            for name in data:
                target = folder / name
                if target.is_symlink() or (target.exists() and not target.is_file()):
                    raise ExportError(
                        f"--output {folder}: {name} exists and is not a regular file; "
                        "move it away or pass another --output folder"
                    )
        return publish_folder(folder, data)
    except OSError as exc:
        raise ExportError(
            f"--output {folder}: cannot write: {exc.strerror or exc}; "
            "nothing written (pass --output with a writable folder)"
        ) from None
