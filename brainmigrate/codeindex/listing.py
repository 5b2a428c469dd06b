"""Listing the regular files of a root, with their size and mtime.

Two ways, chosen per root:

* **git** — when the work tree does not ignore the root itself (``git check-ignore``: a
  root inside an ignored ``.venv`` is walked, as git would list nothing there) and
  ``git ls-files -z --cached --others --exclude-standard`` succeeds in the root (it is a
  work tree or a folder inside one, and git can read it), i.e. tracked
  files plus untracked files that .gitignore, ``.git/info/exclude`` and the global excludes
  do not ignore. Paths come out relative to the root, also when the root is a sub-folder of
  the work tree. git lists a submodule (or any nested repository it tracks) as one path,
  and an untracked nested repository as ``dir/``; each is listed the same way in turn, as
  its own work tree, and its paths prefixed, so a name is looked up in the same files a
  cited path finds (a nested repository git cannot list is walked as below).
* **scandir** — otherwise: a walk that skips folders named ``.git``, ``.hg`` and ``.svn``
  and honours ``.gitignore`` files found on the way (see :class:`IgnoreRules` for the subset
  of the syntax). Nothing else is skipped by name: a tracked ``build/`` or ``dist/`` folder
  can hold real sources.

Both ways: directory symlinks are never followed (a symlink to a folder is not listed);
a file symlink is listed only when it resolves to a regular file inside the root; nothing
under a ``.git`` folder is ever listed; only regular files are kept. File contents are not
read here.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from reprlib import recursive_repr

from brainmigrate.git import run_git

VCS_DIRS = frozenset({".git", ".hg", ".svn"})


@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class ListedFile:
    """A regular file of a root: root-relative POSIX ``path``, ``size`` in bytes, ``mtime_ns``."""

    path: str
    size: int
    mtime_ns: int

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(self, path, size, mtime_ns) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "size", size)
        object.__setattr__(self, "mtime_ns", mtime_ns)

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(path={self.path!r}, size={self.size!r}, "
            f"mtime_ns={self.mtime_ns!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.path, self.size, self.mtime_ns) == (other.path, other.size, other.mtime_ns)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.path, self.size, self.mtime_ns))


def _inside(target: str, root_real: str) -> bool:
    return target == root_real or target.startswith(root_real.rstrip(os.sep) + os.sep)


def _regular(abspath: str, root_real: str) -> os.stat_result | None:
    """stat of a regular file (a file symlink only when it resolves inside the root)."""
    try:
        st = os.lstat(abspath)
        if stat.S_ISLNK(st.st_mode):
            if not _inside(os.path.realpath(abspath), root_real):
                return None
            st = os.stat(abspath)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def _git_ignores(root: Path) -> bool:
    """True when the enclosing work tree ignores ``root`` itself (a virtualenv or a build
    folder named as a root): git would list nothing there, so the root is walked instead."""
    return run_git(root, "check-ignore", "-q", ".", timeout=60) is not None


def _own_work_tree(folder: str) -> bool:
    """True when ``folder`` is the top of a work tree of its own (a checked-out submodule
    or a nested repository): it holds a ``.git`` folder or file and is no symlink."""
    return not os.path.islink(folder) and os.path.lexists(os.path.join(folder, ".git"))


def _git_listing(
    folder: str, prefix: str, paths: list[str], root_real: str, visited: set[str]
) -> Iterator[ListedFile]:
    """The regular files among ``paths`` (as ``git ls-files`` gave them in ``folder``),
    ``prefix`` before each; nested work trees among them are listed recursively."""
    seen: set[str] = set()
    for path in paths:
        nested = path.rstrip("/")
        if nested in seen:
            continue
        seen.add(nested)
        if ".git" in nested.split("/"):
            continue
        full = os.path.join(folder, nested)
        if not path.endswith("/"):
            st = _regular(full, root_real)
            if st is not None:
                yield ListedFile(prefix + nested, st.st_size, st.st_mtime_ns)
                continue
            if not os.path.isdir(full):
                continue
        # a submodule, a nested repository (or a folder that replaced a tracked file)
        real = os.path.realpath(full)
        if real in visited or not _own_work_tree(full) or not _inside(real, root_real):
            continue
        visited.add(real)
        inner = _git_paths(Path(full))
        if inner is None:  # a broken submodule, say: walk it, honouring .gitignore
            listed = _walk(Path(full), root_real)
        else:
            listed = _git_listing(full, "", inner, root_real, visited)
        for f in listed:
            yield ListedFile(f"{prefix}{nested}/{f.path}", f.size, f.mtime_ns)


def _git_paths_unless_ignored(root: Path) -> list[str] | None:
    """``_git_paths(root)``, or None when the work tree ignores ``root`` (``_git_ignores``).

    The two git runs go side by side (``ls-files`` in a thread, which waits on its git
    process): a check's start-up waits for one of them, not both (issue 14). What
    ``ls-files`` gave an ignored root is dropped."""
    listed: list[list[str] | None] = []
    thread = threading.Thread(target=lambda: listed.append(_git_paths(root)), daemon=True)
    thread.start()
    try:
        ignored = _git_ignores(root)
    finally:
        thread.join()
    if ignored:
        return None
    if not listed:  # the thread failed: run again here, so its error is raised
        return _git_paths(root)
    return listed[0]


def _git_paths(root: Path) -> list[str] | None:
    out = run_git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if out is None:
        return None
    return [os.fsdecode(p) for p in out.split(b"\0") if p]


# --- .gitignore subset ---------------------------------------------------------------


def _translate(pattern: str) -> str:
    """Regex body for one gitignore glob (``*``, ``?``, ``[…]``, ``**``, ``\\`` escapes)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i) and (i == 0 or pattern[i - 1] == "/"):
                if i + 2 == n:
                    out.append(".*")
                    i += 2
                    continue
                if pattern[i + 2] == "/":
                    out.append("(?:.*/)?")
                    i += 3
                    continue
            while i < n and pattern[i] == "*":
                i += 1
            out.append("[^/]*")
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            close = pattern.find("]", i + 2 if pattern.startswith(("[!", "[^"), i) else i + 1)
            if close < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : close]
                neg = body[:1] in ("!", "^")
                body = body[1:] if neg else body
                body = body.replace("\\", "\\\\")
                out.append(("[^" if neg else "[") + body + "]")
                i = close
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class _Rule:
    """One rule of a .gitignore (``parse_gitignore``)."""

    base: str  # folder of the .gitignore, root-relative ('' for the root)
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


def parse_gitignore(text: str, base: str) -> list[_Rule]:
    """Rules of one .gitignore found in folder ``base`` (root-relative POSIX, '' for the root).

    Supported: blank lines and ``#`` comments; ``!`` re-includes; a trailing ``/`` matches
    folders only; a pattern with a ``/`` before its end is anchored to the .gitignore's
    folder, one without matches the name at any depth below it; ``*``, ``?``, ``[…]``,
    ``**/``, ``/**`` and ``/**/``; trailing spaces are dropped. As in git, a file inside an
    ignored folder cannot be re-included (ignored folders are not entered).
    """
    rules = []
    for raw in text.splitlines():
        line = raw.rstrip(" ") if not raw.endswith("\\ ") else raw
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        body = _translate(line)
        if not anchored:
            body = "(?:.*/)?" + body
        rules.append(_Rule(base, re.compile(body + r"\Z", re.DOTALL), negate, dir_only))
    return rules


class IgnoreRules:
    """The .gitignore rules in force in one folder of a scandir walk (parents' rules first)."""

    __slots__ = ("rules",)

    def __init__(self, rules: tuple[_Rule, ...] = ()) -> None:
        self.rules = rules

    def extended(self, more: list[_Rule]) -> IgnoreRules:
        """These rules followed by ``more`` (a deeper .gitignore wins over a shallower one)."""
        return IgnoreRules(self.rules + tuple(more)) if more else self

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether root-relative ``path`` is ignored: the last matching rule decides."""
        result = False
        for rule in self.rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.base:
                if not path.startswith(rule.base + "/"):
                    continue
                sub = path[len(rule.base) + 1 :]
            else:
                sub = path
            if rule.regex.match(sub):
                result = not rule.negate
        return result


def _walk(root: Path, root_real: str) -> Iterator[ListedFile]:
    stack: list[tuple[str, str, IgnoreRules]] = [(str(root), "", IgnoreRules())]
    while stack:
        folder, rel, rules = stack.pop()
        gi = os.path.join(folder, ".gitignore")
        if os.path.isfile(gi) and not os.path.islink(gi):
            try:
                with open(gi, encoding="utf-8", errors="replace") as fh:
                    rules = rules.extended(parse_gitignore(fh.read(), rel))
            except OSError:
                pass
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            path = f"{rel}/{name}" if rel else name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if name in VCS_DIRS or rules.ignored(path, True):
                        continue
                    stack.append((entry.path, path, rules))
                    continue
                if name == ".git" or rules.ignored(path, False):
                    continue
                if entry.is_symlink():
                    st = _regular(entry.path, root_real)
                elif entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                else:
                    st = None
            except OSError:
                continue
            if st is not None:
                yield ListedFile(path, st.st_size, st.st_mtime_ns)


def list_files(root: Path) -> tuple[str, list[ListedFile]]:
    """List the regular files of ``root``; returns ``(way, files)`` sorted by path.

    ``way`` is ``"git"`` or ``"scandir"`` (see the module docstring). ``root`` must be an
    existing folder (checked by the caller). Files that vanish while listing are left out;
    a root inside a ``.git`` folder lists nothing.
    """
    root_real = os.path.realpath(root)
    files: list[ListedFile] = []
    if ".git" in Path(root_real).parts:
        return "scandir", files  # a folder inside a .git folder: nothing is listed
    # outside a work tree (or one git refuses to read) both git runs fail: walked
    paths = _git_paths_unless_ignored(root)
    if paths is not None:
        way = "git"
        files.extend(_git_listing(str(root), "", paths, root_real, {root_real}))
    else:
        way = "scandir"
        files.extend(_walk(root, root_real))
    files.sort(key=lambda f: f.path)
    return way, files
