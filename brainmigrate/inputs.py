"""The one reader of files named by a user path (a baseline, a configuration file, notes,
anchored and indexed code): opened without blocking, checked to be a regular file, then
read with a size bound or streamed in chunks.

A FIFO opened for reading blocks until a writer comes, and ``/dev/zero`` never ends: each
is refused here before a byte is read (``O_NONBLOCK`` makes the open of a FIFO return at
once; ``fstat`` of the open descriptor tells what it is, so a file swapped for a FIFO
after it was listed is refused too). The refusals are ``OSError`` subclasses with the
reason in ``strerror`` ("is a FIFO"), so every caller that reports an unreadable file
reports these the same way, and ``BrainmigrateError`` subclasses, so one that reaches the
command line is one line, exit 2.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from typing import BinaryIO

from brainmigrate.errors import BrainmigrateError

#: How many bytes a chunk of a streamed read holds (hashes update once per chunk).
CHUNK = 1 << 20
#: The largest baseline or configuration file read (16 MiB): larger is refused unread.
SMALL_FILE_MAX = 16 << 20
_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
_KINDS = (
    (stat.S_ISDIR, "is a folder"),
    (stat.S_ISFIFO, "is a FIFO"),
    (stat.S_ISCHR, "is a character device"),
    (stat.S_ISBLK, "is a block device"),
    (stat.S_ISSOCK, "is a socket"),
)


class NotAFile(BrainmigrateError, OSError):
    """A path that names a folder, FIFO, device or socket where a file is read.
    ``strerror`` is what it is ("is a FIFO"), ``filename`` the path as given."""


class TooLarge(BrainmigrateError, OSError):
    """A file over the size bound of its kind; ``strerror`` says its size and the bound."""


def what_it_is(mode: int) -> str:
    """What a non-regular ``st_mode`` is, as a phrase: "is a FIFO", "is a folder" …"""
    for test, phrase in _KINDS:
        if test(mode):
            return phrase
    return "is not a regular file"


def size_text(size: int) -> str:
    """``size`` bytes rounded in the largest unit it holds one of: "24 GB", "16 MB",
    "900 bytes" (units of 1024)."""
    for unit, shift in (("GB", 30), ("MB", 20), ("KB", 10)):
        if size >= 1 << shift:
            return f"{round(size / (1 << shift))} {unit}"
    return f"{size} bytes"


def open_fd(path: str | os.PathLike, *, dir_fd: int | None = None) -> tuple[int, os.stat_result]:
    """A read-only descriptor of the regular file at ``path`` (relative to ``dir_fd`` when
    given) and its ``fstat``, opened ``O_NONBLOCK|O_NOCTTY`` (a FIFO's open never waits)
    and made blocking again once it is known to be a regular file.

    Raises ``NotAFile`` for a folder, FIFO, device or socket (``strerror`` "is a FIFO" …),
    the ``OSError`` of the open otherwise (missing, permission denied).
    """
    try:
        fd = os.open(path, _FLAGS, dir_fd=dir_fd) if dir_fd is not None else os.open(path, _FLAGS)
    except OSError as exc:  # a socket cannot be opened at all (ENXIO): say what it is
        if exc.errno == errno.ENXIO and stat.S_ISSOCK(os.stat(path, dir_fd=dir_fd).st_mode):
            raise NotAFile(0, "is a socket", os.fspath(path)) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotAFile(0, what_it_is(st.st_mode), os.fspath(path))
        if _FLAGS & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


@contextlib.contextmanager
def opened(path: str | os.PathLike, *, dir_fd: int | None = None) -> Iterator[BinaryIO]:
    """The regular file at ``path`` as a binary file object, closed at the end of the block
    (``open_fd``'s refusals and errors)."""
    fd, _st = open_fd(path, dir_fd=dir_fd)
    with os.fdopen(fd, "rb") as handle:
        yield handle


def open_binary(path: str | os.PathLike) -> BinaryIO:
    """The regular file at ``path`` as a binary file object the caller closes (a reader
    across a generator); ``open_fd``'s refusals and errors."""
    fd, _st = open_fd(path)
    return os.fdopen(fd, "rb")


def read_whole(path: str | os.PathLike) -> bytes:
    """Every byte of the regular file at ``path`` (notes ``check --fix`` rewrites, a moved
    file whose lines are found again: a regular file ends); ``open_fd``'s refusals and
    errors."""
    with opened(path) as handle:
        return handle.read()


def read_bounded(path: str | os.PathLike, limit: int, kind: str) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them.

    Raises ``TooLarge`` (``strerror`` "is 24 GB; a baseline is at most 16 MB", ``kind``
    naming what the file is) for a larger file, or one that grows past the bound while it
    is read; ``open_fd``'s refusals and errors.
    """
    fd, st = open_fd(path)
    with os.fdopen(fd, "rb") as handle:
        if st.st_size > limit:
            shown = size_text(st.st_size)
            shown = f"over {shown}" if shown == size_text(limit) else shown  # not "16 MB"
            raise TooLarge(0, _too_large(shown, limit, kind), os.fspath(path))
        data = handle.read(limit + 1)
    if len(data) > limit:  # it grew while read, or a size fstat does not tell
        raise TooLarge(0, _too_large(f"over {size_text(limit)}", limit, kind), os.fspath(path))
    return data


def _too_large(size: str, limit: int, kind: str) -> str:
    return f"is {size}; {kind} is at most {size_text(limit)}"


def chunks(handle: BinaryIO, size: int = CHUNK) -> Iterator[bytes]:
    """The rest of ``handle`` in chunks of ``size`` bytes (the last one shorter)."""
    while chunk := handle.read(size):
        yield chunk


def hash_file(path: str | os.PathLike, hasher) -> None:
    """Feed the bytes of the regular file at ``path`` to ``hasher`` (``update``), one
    ``CHUNK`` at a time: memory stays one chunk whatever the file's size. ``open_fd``'s
    refusals and errors, and the ``OSError`` of a read."""
    with opened(path) as handle:
        for chunk in chunks(handle):
            hasher.update(chunk)


#: The deepest nesting of arrays and tables (objects) a baseline or configuration file
#: may hold: the parsers recurse per level, and a real file nests 3 or 4 deep.
MAX_DEPTH = 256
_STRINGS = {
    "json": r'"(?:[^"\\\n]|\\.)*"',
    "toml": r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*',
}
_INTEGER = {"json": r"(?<![\w.+-])-?[0-9]+(?![0-9.eE])", "toml": r"(?<![\w.])[+-]?[0-9][0-9_]*"}


def structure_fault(text: str, syntax: str, numbers: bool = False) -> tuple[int, int, str] | None:
    """Where ``text`` (``syntax`` "json" or "toml") nests arrays and tables deeper than
    ``MAX_DEPTH``, or with ``numbers`` (the parser failed: find why) writes an integer of
    more digits than the interpreter converts (``sys.get_int_max_str_digits``, 4300 by
    default): ``(line, column, reason)``, both 1-based, reason "too deeply nested (more
    than 256 levels)" or "a number of 5000 digits"; None when neither occurs. Strings
    (and TOML comments) are skipped. Linear in the length of ``text``; a text of fewer
    brackets than ``MAX_DEPTH`` is not scanned for the depth."""
    import re
    import sys

    if not numbers and text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    blank = re.sub(_STRINGS[syntax], lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    depth = 0
    for m in re.finditer(r"[\[\]{}]", blank):
        depth += 1 if m.group() in "[{" else -1
        if depth > MAX_DEPTH:
            return (
                *_line_col(text, m.start()),
                f"too deeply nested (more than {MAX_DEPTH} levels)",
            )
    limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
    for m in re.finditer(_INTEGER[syntax], blank) if limit and numbers else ():
        digits = len(m.group()) - m.group().count("_") - (m.group()[0] in "+-")
        if digits > limit:
            return (*_line_col(text, m.start()), f"a number of {digits} digits")
    return None


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1
