"""The notes files a run reads: folders walked for ``*.md`` and ``*.mdc`` notes (or the
``include`` globs), each file once, ``--exclude`` globs (on named files only with
``--force-exclude``), git-ignored files, globs given as PATHS, and the error for a notes path
that names none (SPEC.md §Notation; docs/check.md, "Which files are read").
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

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


class NoNotes(InputError):
    """A walked folder gives no notes file (``check`` given no PATH says so and passes)."""


#: How to fix a notes path that names no notes.
NOTES_FIX = "pass notes files, or folders that hold *.md notes files"

#: The brain notes files of ``include`` by default (as the pre-commit hooks' ``files:``):
#: ``*.md`` and ``*.mdc`` in a notes, brain, facts, memory or knowledge folder, and
#: ``*facts.md``; ``default_include`` adds the Markdown notes globs of SPEC.md §Notation.
BRAIN_GLOBS = (
    *(f"{folder}/**/*.{ext}" for folder in ("notes", "brain", "facts", "memory", "knowledge")
      for ext in ("md", "mdc")),
    "*facts.md",
)  # fmt: skip


def default_include() -> tuple[str, ...]:
    """The ``include`` globs when the configuration names none: ``BRAIN_GLOBS`` and
    ``markdown_notes.DEFAULT_GLOBS`` (``CLAUDE.md``, ``AGENTS.md``, ``.cursor/rules/*.mdc``
    …), matched as the ``markdown`` globs are (``MarkdownGlobs``)."""
    from brainmigrate.read.markdown_notes import DEFAULT_GLOBS

    return BRAIN_GLOBS + DEFAULT_GLOBS


class FileRules(NamedTuple):
    """Which files a walked folder gives and which named ones excludes drop, as ruff has
    them: ``include`` the globs of the notes files a folder gives (None: every ``*.md`` and
    ``*.mdc`` file); ``force_exclude`` applies ``exclude`` to files named on the command
    line too; ``respect_gitignore`` leaves git-ignored files of walked folders out (a named
    file is read even when git ignores it); ``base`` the folder the ``include`` globs are
    relative to (the configuration's, as ruff's are its project root's; None: the walked
    folder), never the path as typed, so ``/tmp/notes/proj`` and ``.`` give one answer,
    and the folder ``exclude`` globs are matched below (``relative``); ``skip`` the
    absolute folders a walk leaves out (those another, nearer configuration reads)."""

    include: tuple[str, ...] | None = None
    force_exclude: bool = False
    respect_gitignore: bool = True
    base: str | None = None
    skip: tuple[str, ...] = ()


#: The rules of a run that sets none.
DEFAULT_RULES = FileRules()


def arguments(paths: Sequence[str]) -> tuple[str, ...]:
    """The PATHS with each quoted glob expanded, as a shell would (Python's ``glob``,
    ``recursive=True``: ``**`` spans folders; hidden files matched, as git lists them;
    sorted; the ``SKIP_DIRS`` folders left out unless the glob names them). A path that
    exists as named is never read as a glob (a file named ``a[1].md``); ``-`` stays.
    Raises ``InputError`` for a glob that matches nothing."""
    import glob

    out: list[str] = []
    for given in paths:
        if given == "-" or not glob.has_magic(given) or os.path.lexists(given):
            out.append(given)
            continue
        named = set(Path(given).parts)
        found = sorted(
            m
            for m in glob.glob(given, recursive=True, include_hidden=True)
            if not any(part in SKIP_DIRS and part not in named for part in Path(m).parts)
        )
        if not found:
            raise InputError(
                f"no notes file matches {given}; check the glob (quote it, so that"
                " brainmigrate expands it)"
            )
        out.extend(found)
    return tuple(out)


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
    rules: FileRules = DEFAULT_RULES,
) -> list[tuple[str, Path]]:
    """The notes files ``paths`` name, in order: a file as given, a folder's ``*.md`` and
    ``*.mdc`` files, or those ``rules.include`` matches (recursively, sorted, ``SKIP_DIRS``
    skipped, symlinked folders not followed, git-ignored files left out unless
    ``rules.respect_gitignore`` is false).

    Returns ``(display name, path)`` pairs, each file once. A ``*.md`` entry of a folder
    that is not a regular file (a FIFO, a device, a dangling link) is left out and its name
    appended to ``skipped``. A file ``names`` holds is shown by the name it gives. Raises
    ``InputError`` for a path that does not exist, is not a regular file or folder, or a
    folder without readable notes.
    """
    return [(display, path) for display, path, _ in _listed(paths, skipped, names, rules)]


def _listed(
    paths: Sequence[str | os.PathLike],
    skipped: list[str] | None,
    names: Mapping[str, str] | None,
    rules: FileRules,
) -> Iterator[tuple[str, Path, bool]]:
    """``notes_files`` with, for each file, whether a folder walk gave it (not named)."""
    seen: set[str] = set()
    what = "*.md notes files" if rules.include is None else "notes files the include globs match"
    for given in paths:
        p = Path(given)
        try:
            mode = p.stat().st_mode
        except OSError as exc:
            raise InputError(f"{given}: {missing_or_unreadable(exc)}; check the path") from None
        walked = stat.S_ISDIR(mode)
        if walked:
            found, odd = [], []
            for f in sorted(_walk(p, rules.include, rules.base, rules.skip)):
                (found if f.is_file() else odd).append(f)
            if rules.respect_gitignore:
                listed, found = found, _not_ignored(p, found)
                if listed and not found:
                    raise InputError(
                        f"{given}: every {what.replace('files', 'file', 1)} in this folder is"
                        " git-ignored; name the files to read them"
                    )
            if skipped is not None:
                skipped.extend(printable(f.as_posix()) for f in odd)
            if not found and odd:
                raise InputError(
                    f"{given}: no readable {what} in this folder"
                    f" ({printable(odd[0].name)} is not a regular file); {NOTES_FIX}"
                )
            if not found:
                raise NoNotes(f"{given}: no {what} in this folder; {NOTES_FIX}")
        elif stat.S_ISREG(mode):
            found = [p]
        else:
            raise InputError(f"{given}: not a regular file or a folder; {NOTES_FIX}")
        named = (names or {}).get(os.fspath(given))
        for f in found:
            real = os.path.realpath(f)
            if real not in seen:
                seen.add(real)
                yield printable(named or f.as_posix()), f, walked


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
    rules: FileRules = DEFAULT_RULES,
) -> tuple[list[str | os.PathLike], list[str]]:
    """The notes files ``paths`` name without those an ``exclude`` glob matches
    (``is_excluded``), and the display names of those left out. As ruff's, the globs
    leave out a file named on the command line (not found by walking a folder) only with
    ``rules.force_exclude``. A glob matches the file's path below ``rules.base``
    (``relative``), as ruff matches its own, never the path as typed. With no globs,
    ``paths`` unchanged. Raises ``InputError`` as ``notes_files``."""
    if not exclude:
        return list(paths), []
    kept: list[str | os.PathLike] = []
    excluded: list[str] = []
    for display, path, walked in _listed(paths, None, names, rules):
        where = (names or {}).get(os.fspath(path)) or os.fspath(path)
        if (walked or rules.force_exclude) and is_excluded(relative(where, rules.base), exclude):
            excluded.append(display)
        else:
            kept.append(path)
    return kept, excluded


def relative(path: str | os.PathLike, base: str | None) -> str:
    """``path`` (as typed, from the current folder) as the ``exclude``, ``include`` and
    ``per-file-ignores`` globs see it: POSIX, relative to ``base``, the folder of the
    configuration that holds them (None: the current folder), as ruff has its project
    root; so ``/repo/notes/a.md``, ``notes/a.md`` and ``../repo/notes/a.md`` are one path
    and a folder above ``base`` is never matched. A path on another drive stays absolute."""
    top = os.path.abspath(base) if base is not None else os.getcwd()
    try:
        rel = os.path.relpath(os.path.abspath(path), top)
    except ValueError:  # another drive
        rel = os.path.abspath(path)
    return rel.replace(os.sep, "/")


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


def walk_matcher(include: tuple[str, ...] | None):
    """Whether a path (POSIX, relative to the configuration's folder) is one a walk with
    no PATH reads: the ``include`` globs, default ``default_include()`` (``_matcher``).
    Raises ``InputError`` as ``_matcher``."""
    return _matcher(tuple(include) if include else default_include())


def _matcher(include: tuple[str, ...]):
    """Whether a walked file's path is one the ``include`` globs match, as the ``markdown``
    globs match (``MarkdownGlobs``: the path or a tail of it that starts at a folder). A
    user's globs are matched with a time bound (past it, ``InputError``); the default ones,
    ours, by one ``re`` match a path (any tail: ``(?:.*/)?``). Raises ``InputError`` for a
    glob that is none (``[z-a].md``)."""
    from brainmigrate.read import markdown_notes

    if include != default_include():
        try:
            globs = markdown_notes.MarkdownGlobs(include)
        except ValueError as exc:
            raise InputError(f"include: {exc}; fix the glob in the configuration") from None

        def matches(path: str) -> bool:
            try:
                return globs(path)
            except markdown_notes.SlowGlob as exc:
                raise InputError(str(exc).replace("markdown:", "include:", 1)) from None

        return matches
    globs = "|".join(f"(?:{markdown_notes.glob_regex(g)})" for g in include)
    full = re.compile(f"(?:.*/)?(?:{globs})", re.DOTALL).fullmatch
    return lambda path: full(path) is not None


def _walk(
    folder: Path,
    include: tuple[str, ...] | None = None,
    base: str | None = None,
    skip: tuple[str, ...] = (),
):
    """The files under ``folder``: those an ``include`` glob matches (by their path below
    ``base`` when they lie under it, else below ``folder``: ``FileRules.base``), or with
    None every ``*.md`` and ``*.mdc`` one; the folders of ``skip`` (absolute) not walked."""
    matches = _matcher(include) if include is not None else None
    top = os.path.abspath(base if base is not None else folder)
    inside = os.path.abspath(folder).startswith(top.rstrip(os.sep) + os.sep)
    top = top if inside or os.path.abspath(folder) == top else os.path.abspath(folder)
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        if skip:
            here = os.path.abspath(dirpath)
            dirnames[:] = [d for d in dirnames if os.path.join(here, d) not in skip]
        rel = os.path.relpath(os.path.abspath(dirpath), top).replace(os.sep, "/")
        shown = "" if rel == "." else rel + "/"
        for name in filenames:
            if matches is not None:
                if matches(shown + name):
                    yield Path(dirpath, name)
            # NOTES.MD too, as on macOS and Windows; Cursor's rules (SPEC.md §Notation)
            elif name.lower().endswith((".md", ".mdc")):
                yield Path(dirpath, name)
