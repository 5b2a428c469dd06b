"""Atomic file writes (a reader sees the old file or the new one, never half of one) and
file names as printable text."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def user_cache_dir() -> Path:
    """The user's cache folder for brainmigrate: ``$BRAINMIGRATE_CACHE_DIR`` if set, else
    ``$XDG_CACHE_HOME/brainmigrate``, else ``~/.cache/brainmigrate``. Not created here."""
    explicit = os.environ.get("BRAINMIGRATE_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg).expanduser() / "brainmigrate"
    return Path.home() / ".cache" / "brainmigrate"


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def file_mode() -> int:
    """The mode a new file gets under the current umask (0o666 less the umask)."""
    return 0o666 & ~_umask()


def folder_mode() -> int:
    """The mode a new folder gets under the current umask (0o777 less the umask)."""
    return 0o777 & ~_umask()


def stage_bytes(folder: str | os.PathLike, name: str, data: bytes) -> str:
    """Write ``data`` to a hidden temporary file ``.<name>.*.tmp`` in ``folder``, with the
    mode a new file gets; return its path, for the caller to rename into place.

    Raises ``OSError``; no temporary file is left behind then.
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, file_mode())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it and a rename.

    Raises ``OSError`` when the folder cannot be written; ``path`` is then untouched.
    """
    target = Path(path)
    tmp = stage_bytes(target.parent, target.name, data)
    try:
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """``write_bytes_atomic`` of ``text`` in UTF-8."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_chunks_atomic(path: str | os.PathLike, chunks: Iterable[str]) -> None:
    """Write text ``chunks`` (UTF-8) to ``path`` as they come, through a temporary file
    beside it and a rename: a large report is never held whole. Raises ``OSError`` (or what
    making a chunk raises); ``path`` is then untouched and no temporary file is left."""
    target = Path(path)
    tmp = stage_bytes(target.parent, target.name, b"")
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            for chunk in chunks:
                f.write(chunk)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def printable(name: str) -> str:
    """A file name as text every output can hold: bytes that are not UTF-8 (which Python
    keeps as lone surrogates) become U+FFFD. The file is still opened by its real name."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return name
