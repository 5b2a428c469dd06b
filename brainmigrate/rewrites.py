"""Notes files ``check --fix`` rewrites, and only where it was sent (docs/check.md,
"Fixing moved paths"; docs/reference.md "## The store").

``Given`` holds a run's PATHS as they were at its start (a folder swapped for a symlink
later still names the folder that was read); ``rewrite`` replaces one notes file through
``writers``: refused when read-only, locked, read again right before the rename, its mode,
owner and hard links kept.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from brainmigrate import writers
from brainmigrate.fsutil import signals_held
from brainmigrate.runstate import state
from brainmigrate.writers import open_folder, under, write_all

#: How many folders of a run's PATHS ``Given`` keeps open; past that, a folder is walked
#: from ``/`` when written (still without following a symlink), so thousands of PATHS
#: never run out of descriptors.
KEPT_OPEN = 64


class Given:
    """The PATHS of a run as they were when it started: the real path of each, and for the
    first ``KEPT_OPEN`` folders among them (a folder PATH, a file PATH's folder) a
    descriptor, so a PATH swapped for a symlink later still names the folder that was read.
    A file PATH that is a symlink leading out of the folder it is named in holds nothing
    (the rule of a symlink met in a folder PATH: its target is written only when it lies
    under a PATH). Close it with ``close``."""

    def __init__(self, paths: Sequence[str | os.PathLike] | None) -> None:
        self.folders: list[str] = []  # folder PATHS, real
        self.files: set[str] = set()  # file PATHS, real
        self.fds: dict[str, int] = {}
        for p in paths or ():
            real = os.path.realpath(p)
            folder = os.path.isdir(real)
            if not folder and not under(real, os.path.realpath(os.path.dirname(p) or ".")):
                continue  # a symlink leading out of its folder: left alone, as a walked one
            (self.folders.append if folder else self.files.add)(real)
            where = real if folder else os.path.dirname(real)
            if where not in self.fds and len(self.fds) < KEPT_OPEN:
                with contextlib.suppress(OSError):
                    self.fds[where] = open_folder(where)
        self.free = paths is None

    def holding(self, real: str) -> tuple[str | None, int] | None:
        """``(folder, descriptor)`` to open the folder of the real path ``real`` from: the
        PATH it lies under and that PATH's descriptor, or ``/`` and -1 (walked then), and
        ``(None, -1)`` for any file when no PATHS were given; None when it lies under none."""
        if self.free:
            return None, -1
        if real in self.files:
            base = os.path.dirname(real)
        else:
            base = next((f for f in self.folders if under(real, f)), None)
            if base is None:
                return None
        fd = self.fds.get(base, -1)
        return (base, fd) if fd >= 0 else (os.sep, -1)

    def close(self) -> None:
        """Close the folders' descriptors."""
        for fd in self.fds.values():
            os.close(fd)
        self.fds = {}


def link_out(listed: Path, real: str) -> tuple[str, str]:
    """The symlink on the way of the listed name ``listed`` (the file itself, or a folder
    above it) and the real path it leads to; ``(listed, real)`` when none is found."""
    parts = Path(listed).parts
    for i in range(1, len(parts) + 1):
        step = Path(*parts[:i])
        if step.is_symlink():
            return os.fspath(step), os.path.realpath(step)
    return os.fspath(listed), real


# ------------------------------------------------------------------------------ notes

#: How often, and how many seconds apart, ``rewrite`` asks for a notes file's lock.
LOCK_TRIES = 10
LOCK_WAIT = 0.05

_CHANGED = (
    "changed on disk since it was read; left alone, run --fix again",
    "changed on disk since it was read",
)
_READ_ONLY = ("read-only; left alone (chmod u+w to fix it)", "is read-only")
_LOCKED = ("locked by another run; left alone, run --fix again", "is locked by another run")
_NOT_FILE = ("no longer a regular file; left alone", "is no longer a regular file")


def rewrite(
    dir_fd: int, name: str, before: bytes, after: bytes, shown_as: str | None
) -> tuple[str, str] | None:
    """Rewrite the notes file ``name`` of the folder ``dir_fd`` from ``before`` (the bytes
    the fixes were planned from) to ``after``; None when written, else ``(note, reason)``:
    why it was left alone, as a note's tail and as a citation's reason.

    In order: a file without write permission for us (``os.access``), or without its
    owner's write bit (even for root), is read-only and refused, as a shell's ``>>`` would;
    the file is opened (``O_NOFOLLOW | O_NONBLOCK``, so a symlink or FIFO put there fails)
    and locked (``fcntl.flock``, ``LOCK_EX | LOCK_NB``, ``LOCK_TRIES`` tries ``LOCK_WAIT``
    seconds apart); the new bytes are staged in a temporary file with the file's mode and
    owner (``stage``); then, right before the rename, the file is read again through its
    descriptor and its name looked up again: any change of bytes, size, mtime_ns or inode
    since it was opened, or bytes other than ``before``, leaves it alone (the temporary
    removed). A file with other hard links (``st_nlink > 1``) is written in place through
    the locked descriptor instead (every name sees the fix; no rename). The descriptor
    (and so the lock) is closed on return. ``shown_as`` is recorded in ``state.written``
    as the file lands."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError as exc:
        return (
            f"cannot read it again ({exc.strerror or exc}); left alone, run --fix again",
            "cannot be read again",
        )
    if not _regular(st.st_mode):
        return _NOT_FILE
    if read_only(dir_fd, name, st.st_mode):
        return _READ_ONLY
    flags = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except PermissionError:
        return _READ_ONLY
    except OSError as exc:
        if exc.errno == errno.EROFS:
            return _READ_ONLY
        return (
            f"cannot write it ({exc.strerror or exc}); left alone, run --fix again",
            "cannot be written",
        )
    try:
        return _rewrite_open(dir_fd, name, fd, before, after, shown_as)
    finally:
        os.close(fd)


def _regular(mode: int) -> bool:
    return stat.S_ISREG(mode)


def read_only(dir_fd: int | None, name: str, mode: int) -> bool:
    """Whether the file ``name`` (of the folder ``dir_fd``, or a path) of ``mode`` is one
    ``rewrite`` refuses as read-only: no owner write bit, or no write access."""
    if not mode & stat.S_IWUSR:
        return True
    try:
        return not os.access(name, os.W_OK, dir_fd=dir_fd, follow_symlinks=False)
    except (NotImplementedError, OSError):  # pragma: no cover - no dir_fd access
        return False


def _rewrite_open(dir_fd, name, fd, before, after, shown_as) -> tuple[str, str] | None:
    if not _lock(fd):
        return _LOCKED
    first = os.fstat(fd)
    if not _regular(first.st_mode):
        return _NOT_FILE
    if _read_all(fd) != before:
        return _CHANGED
    try:
        if first.st_nlink > 1:  # hard links: in place, so every name sees the fix
            return _in_place(dir_fd, name, fd, first, before, after, shown_as)
        tmp = None
        try:
            tmp = writers.stage(
                dir_fd,
                name,
                after,
                mode=stat.S_IMODE(first.st_mode),
                owner=(first.st_uid, first.st_gid),
            )
            if not _unchanged(dir_fd, name, fd, first, before):
                return _CHANGED
            writers.land(dir_fd, tmp, name, shown_as)
            tmp = None
        finally:
            writers.discard(dir_fd, tmp)
    except OSError as exc:  # the file is as it was (see ``_in_place``)
        return (
            f"cannot write it ({exc.strerror or exc}); left alone, run --fix again",
            "cannot be written",
        )
    return None


def _in_place(dir_fd, name, fd, first, before, after, shown_as) -> tuple[str, str] | None:
    """Write ``after`` over the locked file ``fd`` (a file with other hard links): the room
    for longer bytes is taken first (``posix_fallocate``, which fails before a byte
    changes when the disk or a size limit has no room), and a write that fails anyway
    puts ``before`` back. Raises ``OSError`` then."""
    if not _unchanged(dir_fd, name, fd, first, before):
        return _CHANGED
    with signals_held():
        if len(after) > len(before) and hasattr(os, "posix_fallocate"):
            try:
                os.posix_fallocate(fd, 0, len(after))
            except OSError as exc:
                if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                    raise
        try:
            write_all(fd, after)
            os.ftruncate(fd, len(after))
        except OSError:
            with contextlib.suppress(OSError):
                write_all(fd, before)
                os.ftruncate(fd, len(before))
            raise
        if shown_as is not None:
            state.written.append(shown_as)
    return None


def _lock(fd: int) -> bool:
    """Whether the advisory lock on ``fd`` was had (or the system keeps no locks there)."""
    import fcntl
    import time

    for attempt in range(LOCK_TRIES):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if attempt + 1 < LOCK_TRIES:
                time.sleep(LOCK_WAIT)
        except OSError:  # no locks on this file system: advisory only, go on
            return True
    return False


def _read_all(fd: int) -> bytes:
    parts = []
    at = 0
    while chunk := os.pread(fd, 1 << 20, at):
        parts.append(chunk)
        at += len(chunk)
    return b"".join(parts)


def _unchanged(dir_fd: int, name: str, fd: int, first: os.stat_result, before: bytes) -> bool:
    """Whether the file open as ``fd`` is as it was when opened (``first``: size, mtime_ns,
    inode), still holds ``before``, and ``name`` still leads to it (an editor's save by
    rename makes a new inode)."""
    try:
        now = os.fstat(fd)
        named = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return False
    same = (now.st_size, now.st_mtime_ns, now.st_ino, now.st_dev) == (
        first.st_size,
        first.st_mtime_ns,
        first.st_ino,
        first.st_dev,
    )
    return (
        same
        and (named.st_ino, named.st_dev) == (first.st_ino, first.st_dev)
        and (_read_all(fd) == before)
    )
