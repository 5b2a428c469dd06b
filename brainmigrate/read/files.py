"""The notes files a run reads: folders walked for ``*.md`` and ``*.mdc`` notes, each file
once, ``--exclude`` globs, and the error for a notes path that names none (SPEC.md §Notation).
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path

from brainmigrate.errors import BrainmigrateError
from brainmigrate.fsutil import printable

#: Folders never walked for notes files: version control, and the installed packages and
#: tool caches a project folder holds (their *.md files are nobody's notes), so that
#: ``check .`` (the pre-commit hook's default) reads the project's own files only.
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "node_modules",
        "site-packages",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)


class InputError(BrainmigrateError):
    """A notes path or a root is missing or unreadable, or holds no notes; or a bad option."""


#: How to fix a notes path that names no notes.
NOTES_FIX = "pass notes files, or folders that hold *.md notes files"


def missing_or_unreadable(exc: OSError) -> str:
    """What an ``OSError`` from opening a path means to a user: "no such file or folder"
    (also when a folder on the way is a file), or "cannot read it (<reason>)"."""
    if isinstance(exc, FileNotFoundError | NotADirectoryError):
        return "no such file or folder"
    return f"cannot read it ({exc.strerror or exc})"


def notes_files(
    paths: Sequence[str | os.PathLike],
    skipped: list[str] | None = None,
    names: Mapping[str, str] | None = None,
) -> list[tuple[str, Path]]:
    """The notes files ``paths`` name, in order: a file as given, a folder's ``*.md`` and
    ``*.mdc`` files (recursively, sorted, ``.git`` skipped, symlinked folders not followed).

    Returns ``(display name, path)`` pairs, each file once. A ``*.md`` entry of a folder
    that is not a regular file (a FIFO, a device, a dangling link) is left out and its name
    appended to ``skipped``. A file ``names`` holds is shown by the name it gives. Raises
    ``InputError`` for a path that does not exist, is not a regular file or folder, or a
    folder without readable notes.
    """
    out: list[tuple[str, Path]] = []
    seen: set[str] = set()
    for given in paths:
        p = Path(given)
        try:
            mode = p.stat().st_mode
        except OSError as exc:
            raise InputError(f"{given}: {missing_or_unreadable(exc)}; check the path") from None
        if stat.S_ISDIR(mode):
            found, odd = [], []
            for f in sorted(_walk(p)):
                (found if f.is_file() else odd).append(f)
            walked, found = found, _not_ignored(p, found)
            if walked and not found:
                raise InputError(
                    f"{given}: every *.md notes file in this folder is git-ignored; name the"
                    " files to read them"
                )
            if skipped is not None:
                skipped.extend(printable(f.as_posix()) for f in odd)
            if not found and odd:
                raise InputError(
                    f"{given}: no readable *.md notes files in this folder"
                    f" ({printable(odd[0].name)} is not a regular file); {NOTES_FIX}"
                )
            if not found:
                raise InputError(f"{given}: no *.md notes files in this folder; {NOTES_FIX}")
        elif stat.S_ISREG(mode):
            found = [p]
        else:
            raise InputError(f"{given}: not a regular file or a folder; {NOTES_FIX}")
        named = (names or {}).get(os.fspath(given))
        for f in found:
            real = os.path.realpath(f)
            if real not in seen:
                seen.add(real)
                out.append((printable(named or f.as_posix()), f))
    return out


def _not_ignored(folder: Path, files: list[Path]) -> list[Path]:
    """``files`` (walked in ``folder``) without those git ignores, as ruff and lychee walk a
    tree: a git-ignored notes file (a scratch note, a copy in a build folder) is read only
    when named on the command line."""
    from brainmigrate.git import in_work_tree, run_git

    if not files or not in_work_tree(folder):  # (no git process started outside git)
        return files
    absolute = [os.path.abspath(f) for f in files]
    stdin = b"".join(os.fsencode(a) + b"\0" for a in absolute)
    # ``.gitignore`` files, ``info/exclude``, the global excludes file; none when git fails
    out = run_git(folder, "check-ignore", "--stdin", "-z", stdin=stdin)
    dropped = {os.fsdecode(p) for p in (out or b"").split(b"\0") if p}
    return (
        [f for f, a in zip(files, absolute, strict=True) if a not in dropped] if dropped else files
    )


def select_files(
    paths: Sequence[str | os.PathLike],
    exclude: Sequence[str],
    names: Mapping[str, str] | None = None,
) -> tuple[list[str | os.PathLike], list[str]]:
    """The notes files ``paths`` name without those an ``exclude`` glob matches
    (``is_excluded``), and the display names of those left out. With no globs, ``paths``
    unchanged. Raises ``InputError`` as ``notes_files``."""
    if not exclude:
        return list(paths), []
    kept: list[str | os.PathLike] = []
    excluded: list[str] = []
    for display, path in notes_files(paths, names=names):
        if is_excluded(display, exclude):
            excluded.append(display)
        else:
            kept.append(path)
    return kept, excluded


def is_excluded(path: str, globs: Sequence[str]) -> bool:
    """True when a glob matches notes file ``path`` (POSIX, ``./`` dropped): a glob without
    ``/`` is matched against the file name, one with ``/`` against the path and each of its
    tails that starts at a folder (``drafts/*`` matches ``notes/drafts/a.md``). ``*`` also
    matches ``/``."""
    path = path.removeprefix("./")
    tails = [path] + [path[i + 1 :] for i, c in enumerate(path) if c == "/"]
    for glob in globs:
        glob = glob.removeprefix("./")
        if "/" not in glob:
            if fnmatch.fnmatchcase(tails[-1], glob):
                return True
        elif any(fnmatch.fnmatchcase(t, glob) for t in tails):
            return True
    return False


def _walk(folder: Path):
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in filenames:
            # NOTES.MD too, as on macOS and Windows; Cursor's rules (SPEC.md §Notation)
            if name.lower().endswith((".md", ".mdc")):
                yield Path(dirpath, name)
