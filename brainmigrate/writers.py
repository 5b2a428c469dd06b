"""The one writer every file this package writes goes through (docs/reference.md "## The store",
docs/check.md "Fixing moved paths").

A target is resolved once (``fsutil.write_target``: a symlink the user typed is followed,
a device or FIFO is written in place); its folder is then opened as a file descriptor
(``O_DIRECTORY``; below a folder it must stay under, walked one name at a time with
``O_NOFOLLOW``), and every later step names the file relative to that descriptor: the
temporary file is made with ``O_CREAT | O_EXCL | O_NOFOLLOW`` and a ``fsutil.temp_prefix``
name, written, given its mode (and owner, when kept), and renamed over the target within
the folder. A folder or file swapped for a symlink after the target was resolved changes
nothing, or makes the write fail; it never sends it elsewhere. A failure or an interrupt
removes the temporary file, and the first write into a folder removes the leftovers a
killed run left there (``fsutil.leftovers``).
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from brainmigrate.errors import BrainmigrateError
from brainmigrate.fsutil import (
    _TEMP_SUFFIX,
    descriptor,
    file_mode,
    leftovers,
    made,
    shown,
    signals_held,
    temp_prefix,
    write_target,
)
from brainmigrate.runstate import state

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789_"


class Outside(BrainmigrateError, OSError):
    """A target that leads out of the folder it must stay under (an ``OSError`` too, so a
    writer's caller that turns write failures into notes sees it); the message names it."""


def under(path: str | os.PathLike, folder: str | os.PathLike) -> bool:
    """Whether the real path ``path`` is ``folder`` (a real path) or lies below it."""
    path, folder = os.fspath(path), os.fspath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def open_folder(path: str | os.PathLike) -> int:
    """A descriptor of the folder ``path`` (``O_RDONLY | O_DIRECTORY``). Raises ``OSError``."""
    return os.open(os.fspath(path) or ".", _DIR_FLAGS)


def open_below(base: str | os.PathLike, folder: str | os.PathLike, base_fd: int = -1) -> int:
    """A descriptor of ``folder`` opened from ``base`` one name at a time with ``O_NOFOLLOW``
    (both real paths; ``folder`` is ``base`` or below it), starting at ``base_fd`` when
    given (a descriptor of ``base`` opened earlier, kept open by the caller): a name on the
    way that is now a symlink fails the walk (``OSError``, ``ELOOP`` or ``ENOTDIR``) instead
    of leading elsewhere. Raises ``Outside`` when ``folder`` is not below ``base``."""
    base, folder = os.fspath(base), os.fspath(folder)
    if not under(folder, base):
        raise Outside(errno.EXDEV, f"{shown(folder)} is not under {shown(base)}")
    fd = open_folder(base) if base_fd < 0 else os.dup(base_fd)
    rest = os.path.relpath(folder, base)
    for name in [] if rest == os.curdir else rest.split(os.sep):
        try:
            nxt = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
        finally:
            os.close(fd)
        fd = nxt
    return fd


@contextlib.contextmanager
def folder_below(base: str | None, base_fd: int, folder: str) -> Iterator[int]:
    """``open_below`` as a block (the descriptor closed after it), the folder's leftovers
    removed (``sweep``); with no ``base``, ``folder`` is opened as it is."""
    fd = open_folder(folder) if base is None else open_below(base, folder, base_fd)
    try:
        sweep(fd)
        yield fd
    finally:
        os.close(fd)


def sweep(dir_fd: int) -> list[str]:
    """Remove the temporary files (and folders) a killed run of this package left in the
    folder ``dir_fd`` (``fsutil.leftovers``: ``temp_prefix`` names whose process is gone),
    once per folder and command line (``state.swept``); return the names removed.
    Failures are ignored: a leftover that stays is only a hidden file."""
    try:
        st = os.fstat(dir_fd)
    except OSError:
        return []
    if (st.st_dev, st.st_ino) in state.swept:
        return []
    state.swept.add((st.st_dev, st.st_ino))
    removed = []
    for name in leftovers(dir_fd):
        try:
            os.unlink(name, dir_fd=dir_fd)
        except OSError:  # a folder (EISDIR, or EPERM on some systems), or gone meanwhile
            if not remove_tree(dir_fd, name):
                continue
        removed.append(name)
    return removed


def remove_tree(dir_fd: int, name: str) -> bool:
    """Remove the leftover folder ``name`` (in ``dir_fd``) and what it holds, not following
    symlinks; whether it is gone."""
    try:
        fd = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=dir_fd)
    except OSError:
        return False
    try:
        for entry in os.listdir(fd):
            with contextlib.suppress(OSError):
                os.unlink(entry, dir_fd=fd)
    finally:
        os.close(fd)
    try:
        os.rmdir(name, dir_fd=dir_fd)
    except OSError:
        return False
    return True


def create(dir_fd: int, name: str, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to the new file ``name`` of the folder ``dir_fd`` (``O_CREAT | O_EXCL |
    O_NOFOLLOW``: a name that exists fails), with ``mode`` (default: a new file's).
    Raises ``OSError``."""
    fd = os.open(name, _NEW_FLAGS, 0o600, dir_fd=dir_fd)
    try:
        write_all(fd, data)
    finally:
        os.close(fd)
    os.chmod(name, file_mode() if mode is None else mode, dir_fd=dir_fd)


def make_folder(parent_fd: int, name: str) -> str:
    """Make a hidden temporary folder for ``name`` (``temp_prefix``) in the folder
    ``parent_fd``, SIGINT and SIGTERM held; return its name. Raises ``OSError``."""
    tmp = None
    try:
        with signals_held():  # an interrupt held here lands inside the ``try``: removed
            tmp, _ = _fresh(name, lambda c: os.mkdir(c, 0o700, dir_fd=parent_fd))
    except BaseException:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.rmdir(tmp, dir_fd=parent_fd)
        raise
    return tmp


def _fresh(name: str, make) -> tuple[str, object]:
    """``(temporary name, what make(name) returned)`` for the first of up to 100 new
    ``temp_name`` names that ``make`` could create (``FileExistsError``: the next)."""
    for _ in range(100):
        candidate = temp_name(name)
        try:
            return candidate, make(candidate)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", name)  # pragma: no cover


def open_child(dir_fd: int, name: str) -> int:
    """A descriptor of the folder ``name`` in ``dir_fd``, not following a symlink there."""
    return os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=dir_fd)


def temp_name(name: str) -> str:
    """A new hidden temporary name for ``name``: ``fsutil.temp_prefix``, 8 random
    characters and ``.tmp`` (what ``fsutil.leftovers`` knows as this package's)."""
    random = "".join(_ALPHABET[b % len(_ALPHABET)] for b in os.urandom(8))
    return made(f"{temp_prefix(name)}{random}{_TEMP_SUFFIX}")


def stage(
    dir_fd: int,
    name: str,
    data: bytes | Iterable[bytes] = b"",
    *,
    mode: int | None = None,
    owner: tuple[int, int] | None = None,
) -> str:
    """Write ``data`` (bytes, or chunks of bytes written as they come) to a new hidden
    temporary file for ``name`` in the folder ``dir_fd`` (``temp_prefix`` name, made with
    ``O_CREAT | O_EXCL | O_NOFOLLOW``), with ``mode`` (default: a new file's) and, when
    given and permitted, ``owner`` (uid, gid; refused by the system when we are not root:
    ignored). Returns the temporary file's name in the folder.

    Raises ``OSError`` (or what making a chunk raises); no temporary file is left then.
    """
    tmp = fd = None
    try:
        with signals_held():  # an interrupt held here lands inside the ``try``: removed
            tmp, fd = _fresh(name, lambda c: os.open(c, _NEW_FLAGS, 0o600, dir_fd=dir_fd))
        for chunk in [data] if isinstance(data, bytes | bytearray) else data:
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view) :]
        if owner is not None:
            with contextlib.suppress(PermissionError):
                os.fchown(fd, *owner)
        os.fchmod(fd, file_mode() if mode is None else mode)
    except BaseException:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
        raise
    finally:
        if fd is not None:
            os.close(fd)
    return tmp


def land(dir_fd: int, tmp: str, name: str, shown_as: str | None) -> None:
    """Rename the temporary file ``tmp`` over ``name`` in the folder ``dir_fd``; when
    ``shown_as`` is given, record it in ``state.written`` in the same step (SIGINT and
    SIGTERM held): an interrupt comes before both or after both (``cli.runtime.interrupted``)."""
    with signals_held():
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        if shown_as is not None:
            state.written.append(shown_as)


def discard(dir_fd: int, tmp: str | None) -> None:
    """Remove the temporary file ``tmp`` of the folder ``dir_fd``, if there is one."""
    if tmp is not None:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)


@contextlib.contextmanager
def folder_of(target: Path, within: str | os.PathLike | None = None) -> Iterator[int]:
    """A descriptor of the folder of ``target`` (a resolved path), closed after the block,
    its leftovers removed (``sweep``). With ``within`` (a folder), ``target``'s real path
    must lie below it (else ``Outside``, naming where it leads), and the folder is opened
    from ``within`` with ``open_below``."""
    parent = target.parent if str(target.parent) else Path(".")
    if within is None:
        fd = open_folder(parent)
    else:
        base = os.path.realpath(within)
        real = os.path.realpath(target)
        if not under(real, base):
            raise Outside(errno.EXDEV, f"leads to {shown(real)}, outside {shown(base)}")
        fd = open_below(base, os.path.dirname(real))
    try:
        sweep(fd)
        yield fd
    finally:
        os.close(fd)


def write_file(
    path: str | os.PathLike,
    data: bytes | Iterable[bytes],
    *,
    output: bool = False,
    within: str | os.PathLike | None = None,
) -> None:
    """Write ``data`` (bytes or chunks of bytes) to ``path`` through a temporary file in its
    folder and a rename relative to the folder's descriptor (``folder_of``): a symlink the
    user typed is followed (its target replaced, the link kept), a device or FIFO the user
    named (``output``) written in place (``fsutil.write_target``); a cache's FIFO is
    replaced by the file, never waited on. With ``within``, the file's real path must lie below
    that folder (``Outside`` otherwise, nothing written: a path from a configuration file);
    with ``output`` (a file the user asked for) the path is recorded in ``state.written`` as
    it lands.

    Raises ``OSError``; ``path`` is then untouched and no temporary file is left.
    """
    target, in_place = write_target(path)
    shown_as = shown(os.fspath(path)) if output else None
    if in_place and within is None and output:
        _write_in_place(target, [data] if isinstance(data, bytes | bytearray) else data)
        if shown_as is not None:
            state.written.append(shown_as)
        return
    if within is not None:
        target = Path(os.path.realpath(path))
    with folder_of(target, within) as fd:
        tmp = None
        try:
            tmp = stage(fd, target.name, data)
            land(fd, tmp, target.name, shown_as)
            tmp = None
        finally:
            discard(fd, tmp)


def _write_in_place(target: Path, chunks: Iterable[bytes]) -> None:
    """Write ``chunks`` into the device or FIFO ``target``, or through the open descriptor
    it names (``fsutil.descriptor``: ``/dev/stdout``, written after what stdout holds, as
    ``>>`` and a shell's group of commands expect)."""
    fd = descriptor(target)
    if fd is None:
        with open(target, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
        return
    import sys

    for stream in (sys.stdout, sys.stderr):  # what they hold comes first
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    for chunk in chunks:
        view = memoryview(chunk)
        while view:
            view = view[os.write(fd, view) :]


def write_text(path: str | os.PathLike, text: str, output: bool = False) -> None:
    """``write_file`` of ``text`` in UTF-8."""
    write_file(path, text.encode("utf-8"), output=output)


def encoded(chunks: Iterable[str]) -> Iterator[bytes]:
    """Text ``chunks`` as UTF-8 bytes, one by one."""
    for chunk in chunks:
        yield chunk.encode("utf-8")


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` from its start (``pwrite``). Raises ``OSError``."""
    view, at = memoryview(data), 0
    while at < len(data):
        at += os.pwrite(fd, view[at:], at)
