"""What every writer shares (``writers`` writes): temporary names and the leftovers of a
killed run, where a write lands, the output check; file names as printable text, and the
rule that a run never writes over what it reads."""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

from brainmigrate.errors import BrainmigrateError
from brainmigrate.escapes import terminal
from brainmigrate.patterns import lazy
from brainmigrate.shapes import shorten


@contextlib.contextmanager
def signals_held():
    """Hold SIGINT and SIGTERM back while the block runs (where the system allows it):
    one that comes meanwhile is delivered, and its handler runs, when the block is done."""
    import signal

    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


class PathError(BrainmigrateError):
    """A path from the environment that no file can be found at: a home folder of a user
    the system does not know, or bytes that are no UTF-8 text. The message names the
    variable and the fix."""


def user_cache_dir() -> Path:
    """The user's cache folder for brainmigrate: ``$BRAINMIGRATE_CACHE_DIR`` if set, else
    ``$XDG_CACHE_HOME/brainmigrate``, else ``~/.cache/brainmigrate``. Not created here.
    Raises ``PathError`` (``env_path``) for a value naming an unknown user's home folder
    (``~nouser/c``) or one that is no UTF-8 text (the grammar and template caches name
    their files in UTF-8)."""
    explicit = os.environ.get("BRAINMIGRATE_CACHE_DIR")
    if explicit:
        return Path(env_path("BRAINMIGRATE_CACHE_DIR", explicit))
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(env_path("XDG_CACHE_HOME", xdg)) / "brainmigrate"
    return Path(env_path("HOME", "~")) / ".cache" / "brainmigrate"


def env_path(name: str, value: str) -> str:
    """The path the environment variable ``name`` holds (``value``), with a leading ``~``
    or ``~user`` made that home folder. Raises ``PathError`` naming the variable when the
    user is unknown (``os.path.expanduser`` leaves it, ``pathlib`` raises) or the value
    is no UTF-8 text (the bytes of a non-UTF-8 value reach Python as surrogates)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        shown_as = os.fsencode(value).decode("utf-8", "backslashreplace")
        raise PathError(
            f"{name}={shown_as}: not a UTF-8 path; set {name} to a folder whose name is UTF-8,"
            " or unset it"
        ) from None
    if not value.startswith("~"):
        return value
    expanded = os.path.expanduser(value)
    if expanded.startswith("~"):
        user = value[1:].split("/", 1)[0].split(os.sep, 1)[0]
        who = f"no such user {user!r}" if user else "no home folder (HOME is not set)"
        raise PathError(f"{name}={value}: {who}; set {name} to a folder path, or unset it")
    return env_path(name, expanded) if expanded != value else expanded


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


#: The longest file name (in bytes) the usual file systems take.
NAME_MAX = 255
_TEMP_SUFFIX = ".tmp"
#: A temporary name this package makes: ``.<name, cut>.bm<pid>.<8 random>.tmp``.
_TEMP_NAME = lazy(r"\.(?P<name>.*)\.bm(?P<pid>[0-9]+)\.[a-z0-9_]{8}\.tmp", re.S)


#: The temporary names this process made (``made``): a name with this process's id that
#: is not among them is a leftover of an earlier run that had the same id (a container's
#: processes get the same few ids run after run).
_MADE: set[str] = set()


def made(name: str) -> str:
    """Record ``name`` as a temporary name this process made; return it."""
    _MADE.add(name)
    return name


def temp_prefix(name: str) -> str:
    """The prefix of a hidden temporary name for ``name`` (``tempfile`` adds 8 random
    characters and ``.tmp``): ``.<name>.bm<pid>.``, with ``name`` cut so that the whole
    name stays within ``NAME_MAX`` bytes. The process id tells a leftover of a killed
    run (``leftovers``) from the files of a run still at work."""
    return f".{_short(name)}.bm{os.getpid()}."


def _short(name: str) -> str:
    room = NAME_MAX - len(".") - len(".bm.") - 7 - 8 - len(_TEMP_SUFFIX)  # pids: 7 digits
    return os.fsdecode(shorten(os.fsencode(name), room, mark=b""))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0  # someone else's process (or no pid at all)
    return True


def leftovers(folder: str | os.PathLike, name: str | None = None) -> list[str]:
    """Names of hidden temporary files and folders in ``folder`` that a killed run of this
    package left (``temp_prefix`` names whose process is gone, or that name this process
    but were not made by it: ``made``); with ``name``, only those made for that name."""
    want = None if name is None else _short(name)
    out = []
    try:
        entries = os.listdir(folder)
    except OSError:
        return []
    for entry in entries:
        m = _TEMP_NAME.fullmatch(entry)
        if m is None or entry in _MADE:
            continue
        pid = int(m.group("pid"))
        if pid != os.getpid() and _alive(pid):
            continue
        if want is not None and m.group("name") != want:
            continue
        out.append(entry)
    return sorted(out)


def remove_leftovers(folder: str | os.PathLike, name: str | None = None) -> list[str]:
    """Remove what ``leftovers`` finds; return the names removed (those that could be)."""
    removed = []
    for entry in leftovers(folder, name):
        path = os.path.join(folder, entry)
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                import shutil  # a leftover folder is rare: not every run loads it

                shutil.rmtree(path)
            else:
                os.unlink(path)
        except OSError:
            continue
        removed.append(entry)
    return removed


_DESCRIPTOR = lazy(r"/(?:proc/(?:self|(?P<pid>[0-9]+))|dev)/fd/(?P<fd>[0-9]+)")
_STANDARD = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}


def descriptor(path: str | os.PathLike) -> int | None:
    """The open file descriptor of this process that ``path`` names, or None: ``/dev/stdout``,
    ``/dev/stderr``, ``/dev/fd/N``, ``/proc/self/fd/N`` (or a symlink leading to one, up
    to 16 links). Such a path leads on to whatever the shell opened (``>> log.txt``, a
    pipe): opened by name again it would be truncated, or replaced by a rename, losing
    what was written there before; it is written through the descriptor instead."""
    at = os.path.abspath(os.fspath(path))
    for _ in range(16):
        if at in _STANDARD:
            return _STANDARD[at]
        m = _DESCRIPTOR.fullmatch(at)
        if m is not None and m.group("pid") in (None, str(os.getpid())):
            return int(m.group("fd"))
        try:
            link = os.readlink(at)
        except (OSError, ValueError):
            return None
        at = os.path.normpath(os.path.join(os.path.dirname(at), link))
    return None


def write_target(path: str | os.PathLike) -> tuple[Path, bool]:
    """Where a write to ``path`` lands, and whether in place: a device, FIFO or other file
    that is not a regular file or folder (``>(cmd)``), and a name of an open descriptor
    (``/dev/stdout``: ``descriptor``), is written in place, as a shell's ``>`` would; a
    symlink is followed, so the file it points at is replaced and the link stays a link;
    anything else is ``path``, replaced through a rename."""
    target = Path(path)
    if descriptor(target) is not None:
        return target, True
    try:
        st = os.stat(target)
    except OSError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
        return target, True
    try:
        link = target.is_symlink()
    except OSError:  # a name too long, a folder that cannot be read: the write says it
        link = False
    return (Path(os.path.realpath(target)), False) if link else (target, False)


def located(name: str) -> str | None:
    """The real path of the notes file ``name`` as an earlier run named it (relative to the
    folder that run started in, or absolute): found from the current folder, else from
    the nearest folder above it that holds it (``billing.md``, named from ``notes/``, is
    ``notes/billing.md`` seen from above); None when it is gone. A few ``lstat`` calls."""
    if os.path.lexists(name):
        return os.path.realpath(name)
    if os.path.isabs(name):
        return None
    here = os.path.abspath(os.curdir)
    while (above := os.path.dirname(here)) != here:
        here = above
        if os.path.lexists(os.path.join(here, name)):
            return os.path.realpath(os.path.join(here, name))
    return None


def gone_from_here(name: str) -> bool:
    """Whether the notes file ``name`` an earlier run named is gone (``located``)."""
    return located(name) is None


def printable(name: str) -> str:
    """A file name as text every output can hold: bytes that are not UTF-8 (which Python
    keeps as lone surrogates) become U+FFFD. The file is still opened by its real name."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return name


def shown(text: str) -> str:
    """``text`` as a message on a terminal may hold it: ``printable``, then
    ``escapes.terminal`` (control characters but tab and newline as U+FFFD), so a scope or
    a path cannot move the cursor or recolour the terminal that shows a message."""
    return terminal(printable(str(text)))


class Clash(BrainmigrateError):
    """An output of a run names a file the run reads, or another of its outputs."""


def identity(path: str | os.PathLike) -> tuple:
    """What tells two names of one file apart from two files: ``(device, inode)`` of the
    file a name leads to (through symlinks); for a name that leads to no file yet, its
    resolved path (so a new store and a new report named alike still clash)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return ("path", os.path.realpath(path))
    return ("file", st.st_dev, st.st_ino)


def refuse_clashes(
    outputs: Sequence[tuple[str, str | os.PathLike]],
    inputs: Sequence[tuple[str, str | os.PathLike]] = (),
) -> None:
    """Raise ``Clash`` when two ``outputs`` are one file, or an output is one of the
    ``inputs``, compared by ``identity``; called before any work, so nothing is lost.

    ``outputs`` are ``(option, path)`` pairs a run writes (``("--output", "r.json")``;
    ``("--format json --output", "r.json")`` tells reports apart), ``inputs`` are
    ``(what it is, path)`` pairs it reads (``("the store", "know.db")``).
    """
    seen: dict[tuple, tuple[str, str]] = {}
    for option, path in outputs:
        key = identity(path)
        name = f"{option} {shown(os.fspath(path))}"
        if key in seen:
            raise Clash(
                f"{seen[key][0]} and {name} are one file, and the first would be lost;"
                " give each its own file"
            )
        seen[key] = (name, option.split(" ")[-1])
    for what, path in inputs:
        name, flag = seen.get(identity(path), (None, None))
        if name is not None:
            raise Clash(
                f"{name} would be written over {what} {shown(os.fspath(path))}, which this"
                f" command reads; pass {flag} another path"
            )


class OutputError(BrainmigrateError):
    """An ``--output`` path cannot take what a command writes; the message names the fix."""


def check_output(path: str | os.PathLike, *, folder: bool = False) -> None:
    """Raise ``OutputError`` when ``path`` could not take a command's output, before any
    work (a run that fails at its output would have done the work for nothing, or written
    its store already): the name must fit, be a file (or, with ``folder``, a folder) name,
    its folder must exist and take a new file, which is tried (and removed again)."""
    text = os.fspath(path)
    if folder and text == "-":
        raise OutputError(
            "--output -: this format writes a folder, not standard output; pass --output"
            " with a folder path"
        )
    if not folder and (not text or text.endswith(("/", os.sep))):
        raise OutputError(f"--output {text!r}: not a file name; pass a file name")
    if not folder:
        written, in_place = write_target(text)
        if in_place:  # a device or FIFO: written as it is, nothing to try beside it
            if not os.access(written, os.W_OK):
                raise OutputError(f"--output {printable(text)}: not writable; pass another")
            return
        target = written
    else:
        target = Path(text)
    parent = target.parent
    if len(os.fsencode(target.name)) > NAME_MAX:
        raise OutputError(
            f"--output {printable(text)}: a name longer than {NAME_MAX} bytes; pass a shorter one"
        )
    if folder and target.exists() and not target.is_dir():
        raise OutputError(
            f"--output {text} is a file, and this format writes a folder; "
            "pass --output with a folder path"
        )
    if not folder and target.is_dir():
        raise OutputError(f"--output {text}: is a folder; pass a file name")
    if not parent.is_dir():
        raise OutputError(
            f"--output {text}: folder {parent} does not exist; create it or pass --output"
            " with another path"
        )
    where = target if folder and target.is_dir() else parent
    import tempfile  # writing a file, not every run's start-up

    try:
        with tempfile.NamedTemporaryFile(
            dir=where, prefix=temp_prefix(target.name), suffix=".tmp"
        ) as f:
            made(os.path.basename(f.name))
    except OSError as exc:
        raise OutputError(
            f"--output {text}: cannot write in {where} ({exc.strerror}); pass --output"
            " with a writable path"
        ) from None
