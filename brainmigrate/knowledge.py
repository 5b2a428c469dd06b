"""What one root holds and held, built once per run (SPEC.md §Anchors 1 "What the roots know
comes first").

``RootKnowledge`` answers every question the token rules ask of a root with a set or dict
hit: the files and folders it holds (from git's listing in a git work tree, tracked and
untracked-not-ignored files, else a walk honouring ``.gitignore``; directory symlinks never
followed), the paths its git history held and their folders (one ``git log`` pass, cached
on disk keyed by HEAD), its remotes, its ``tsconfig``/``jsconfig`` aliases, its workspace
package names, its ignore rules, its file names, and per file (read lazily, once) its line
count and its Markdown heading anchors. Each table is made on first need.

Nothing outside the root is read: every file opened is one the listing holds.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from reprlib import recursive_repr

from brainmigrate import roottables
from brainmigrate.digests import blake2b
from brainmigrate.read.links import remote_parts

#: Files larger than this are not read for line counts or headings (bytes).
MAX_READ = 16 * 1024 * 1024
#: The format of the history cache file (changed when its layout changes).
_HISTORY_FORMAT = b"brainmigrate-history 2"

#: ``History``'s sets when they hold nothing.
_NO_PATHS: frozenset[str] = frozenset()


@dataclass(slots=True, init=False, repr=False, eq=False)
class History:
    """The paths a root's git history held (root-relative, NFC) that its tree may lack now,
    their first segments, and every folder of them (``folders``: ``a``, ``a/b`` for
    ``a/b/c.py``); ``unavailable`` says why the history could not be read whole (a shallow
    clone, a repository git refuses), else it is empty."""

    paths: frozenset[str] = _NO_PATHS
    firsts: frozenset[str] = _NO_PATHS
    unavailable: str = ""
    folders: frozenset[str] = _NO_PATHS

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(self, paths=_NO_PATHS, firsts=_NO_PATHS, unavailable="", folders=_NO_PATHS):
        self.paths = paths
        self.firsts = firsts
        self.unavailable = unavailable
        self.folders = folders

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(paths={self.paths!r}, firsts={self.firsts!r}, "
            f"unavailable={self.unavailable!r}, folders={self.folders!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.paths, self.firsts, self.unavailable, self.folders) == (
                other.paths,
                other.firsts,
                other.unavailable,
                other.folders,
            )
        return NotImplemented


def folders_of(paths: Iterable[str]) -> set[str]:
    """Every folder prefix of root-relative ``paths`` (``a`` and ``a/b`` for ``a/b/c``)."""
    out: set[str] = set()
    for p in paths:
        cut = p.rfind("/")
        while cut > 0:
            folder = p[:cut]
            if folder in out:
                break
            out.add(folder)
            cut = p.rfind("/", 0, cut)
    return out


def _history_of(paths: set[str], unavailable: str) -> History:
    return History(
        frozenset(paths),
        frozenset(p.split("/", 1)[0] for p in paths),
        unavailable,
        frozenset(folders_of(paths)),
    )


def git_history(root, cache_dir: str | os.PathLike | None = None) -> History | None:
    """The paths ``root``'s git history held under ``root``: every path a commit of the
    checked-out branch deleted (``git log --diff-filter=D``; with ``--no-renames`` a rename
    deletes its old path; with ``-m`` a merge commit counts, against each of its parents)
    and every path of ``HEAD`` (deleted from the work tree or the index but not committed
    yet). In a shallow clone, the commits fetched are read and ``unavailable`` says "a
    shallow clone". None when ``root`` is no git work tree.

    With ``cache_dir`` the paths are kept in a file there, keyed by the root's folder,
    HEAD's commit and whether the clone is shallow: a second run at the same HEAD runs no
    ``git log``. A cache that cannot be read or written is passed by."""
    from brainmigrate.git import in_work_tree, run_git

    errors: list[str] = []
    state = run_git(
        root.path, "rev-parse", "--is-inside-work-tree", "--is-shallow-repository", errors=errors
    )
    if state is None or not state.startswith(b"true"):
        if state is None and in_work_tree(root.real):
            return History(unavailable=f"git refused the repository: {errors[0]}")
        return None
    # A shallow clone's history is read as far as it was fetched: HEAD's paths and what its
    # fetched commits deleted are known; what only older commits knew reads as unresolved.
    shallow = "a shallow clone" if state.split()[-1:] == [b"true"] else ""
    head = run_git(root.path, "rev-parse", "--verify", "-q", "HEAD")
    if head is None:
        return History()  # no commit yet: no history, and nothing it could know
    head = head.strip()
    cache = _history_file(root, cache_dir, head, shallow)
    if cache is not None:
        cached = _read_history(cache[0], cache[1])
        if cached is not None:
            return _history_of(cached, shallow)
    log = run_git(
        root.path,
        "log",
        "--format=",
        "--name-only",
        "-z",
        "--no-renames",
        "--diff-filter=D",
        "-m",  # a merge's own changes too: a path a merge resolution dropped
        "--relative",
        errors=errors,
    )
    tree = run_git(root.path, "ls-tree", "-r", "-z", "--name-only", "HEAD") or b""
    if log is None:
        return History(unavailable=f"git log failed: {errors[-1]}")
    paths = {os.fsdecode(p.strip(b"\n")) for p in (log + b"\0" + tree).split(b"\0")}
    paths.discard("")
    paths = {unicodedata.normalize("NFC", p) for p in paths}
    if cache is not None:
        _write_history(cache[0], cache[1], paths)
    return _history_of(paths, shallow)


def _history_file(root, cache_dir, head: bytes, shallow: str) -> tuple[Path, bytes] | None:
    if cache_dir is None or not head:
        return None
    key = blake2b(os.fsencode(root.real), digest_size=8).hexdigest()
    header = b"%s %s %s" % (_HISTORY_FORMAT, head, b"shallow" if shallow else b"whole")
    return Path(cache_dir) / f"history-{key}.bin", header


def _read_history(path: Path, header: bytes) -> set[str] | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    first, _, body = data.partition(b"\n")
    if first != header:
        return None
    return {p.decode("utf-8", "surrogateescape") for p in body.split(b"\0") if p}


def _write_history(path: Path, header: bytes, paths: set[str]) -> None:
    from brainmigrate.fsutil import write_bytes_atomic

    body = b"\0".join(p.encode("utf-8", "surrogateescape") for p in sorted(paths))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, header + b"\n" + body)
    except OSError:
        pass  # a cache folder that cannot be written: the next run reads git again


def default_listing(root) -> tuple[str, list[str]]:
    """``(way, paths)``: how ``codeindex.listing.list_files`` lists ``root`` and its files."""
    from brainmigrate.codeindex.listing import list_files

    way, files = list_files(Path(root.path))
    return way, [f.path for f in files]


class RootKnowledge:
    """What one root holds and held (SPEC.md §Anchors 1); every table made on first need.

    ``listing()`` gives ``(way, root-relative POSIX paths)`` (``way`` ``"git"`` or
    ``"scandir"``, default ``default_listing``); ``history()`` reads the git history
    through ``git_history`` (cached in ``cache_dir`` when given). Paths are compared after
    NFC; ``actual(rel)`` gives the path as the file system spells it.
    """

    def __init__(
        self,
        root,
        listing: Callable[[], tuple[str, Iterable[str]]] | None = None,
        cache_dir: str | os.PathLike | None = None,
        history: Callable | None = None,
    ) -> None:
        self.root = root
        self._listing = listing or (lambda: default_listing(root))
        self._history_reader = history
        self.cache_dir = cache_dir
        self._files: frozenset[str] | None = None
        self._actual: dict[str, str] = {}
        self._folders: frozenset[str] | None = None
        self._names: dict[str, list[str]] | None = None
        self._tops: frozenset[str] | None = None
        self.way = ""
        self._history_read = False
        self._history: History | None = None
        self._remotes: list[tuple[str, str, str]] | None = None
        self._aliases: list[roottables.Alias] | None = None
        self._packages: dict[str, str] | None = None
        self._rules = None
        self._ignored: dict[tuple[str, bool], bool] = {}
        self._lines: dict[str, int | None] = {}
        self._anchors: dict[str, frozenset[str] | None] = {}

    # --- what it holds ----------------------------------------------------------------

    def _list(self) -> None:
        way, paths = self._listing()
        self.way = way
        files = set()
        for p in paths:
            nfc = unicodedata.normalize("NFC", p) if not p.isascii() else p
            files.add(nfc)
            if nfc != p:
                self._actual[nfc] = p
        self._files = frozenset(files)

    @property
    def files(self) -> frozenset[str]:
        """The root-relative paths (NFC) of the regular files the root holds."""
        if self._files is None:
            self._list()
        return self._files  # type: ignore[return-value]

    @property
    def folders(self) -> frozenset[str]:
        """Every folder holding a listed file, at any depth (root-relative, no ``/`` at
        either end)."""
        if self._folders is None:
            self._folders = frozenset(folders_of(self.files))
        return self._folders

    @property
    def tops(self) -> frozenset[str]:
        """The names of the files and folders at the root's top."""
        if self._tops is None:
            self._tops = frozenset(p.split("/", 1)[0] for p in self.files)
        return self._tops

    def actual(self, rel: str) -> str:
        """``rel`` (NFC) as the listing spells it."""
        return self._actual.get(rel, rel)

    def named(self, name: str) -> list[str]:
        """The sorted paths (as listed) of the files whose last segment is ``name`` (NFC)."""
        if self._names is None:
            names: dict[str, list[str]] = {}
            for p in sorted(self.files):
                names.setdefault(p.rsplit("/", 1)[-1], []).append(self.actual(p))
            self._names = names
        return self._names.get(unicodedata.normalize("NFC", name), [])

    def is_git(self) -> bool:
        """Whether git listed the root (a git work tree git can read)."""
        self.files  # noqa: B018 - lists the root
        return self.way == "git"

    # --- what it held -----------------------------------------------------------------

    def history(self) -> History | None:
        """The root's git history (None: no git work tree), read once."""
        if not self._history_read:
            self._history_read = True
            reader = self._history_reader or git_history
            self._history = reader(self.root, self.cache_dir)
        return self._history

    def held(self, rel: str) -> bool:
        """Whether the history held a file at ``rel`` or under it (as a folder)."""
        h = self.history()
        return h is not None and (rel in h.paths or rel in h.folders)

    # --- its own tables ---------------------------------------------------------------

    def remotes(self) -> list[tuple[str, str, str]]:
        """``(host, owner, repo)`` of each git remote, ``origin`` first, then as git lists
        them (``git config --get-regexp remote\\..*\\.url``)."""
        if self._remotes is None:
            from brainmigrate.git import run_git

            out = run_git(self.root.path, "config", "--get-regexp", r"^remote\..*\.url$")
            pairs = []
            for line in os.fsdecode(out or b"").splitlines():
                key, _, url = line.partition(" ")
                parts = remote_parts(url)
                if parts is not None:
                    pairs.append((key != "remote.origin.url", parts))
            pairs.sort(key=lambda p: p[0])  # stable: origin first, the others in order
            self._remotes = [p for _, p in pairs]
        return self._remotes

    def folder_names(self) -> frozenset[str]:
        """The names an absolute path may give this root by: its folder's name (as given
        and resolved) and its remotes' repository names."""
        names = {os.path.basename(self.root.path), os.path.basename(self.root.real)}
        names.update(r[2] for r in self.remotes())
        return frozenset(n.lower() for n in names if n)

    def aliases(self) -> list[roottables.Alias]:
        """The path aliases of ``tsconfig.json`` and ``jsconfig.json`` at the root's top."""
        if self._aliases is None:
            out: list[roottables.Alias] = []
            for name in ("tsconfig.json", "jsconfig.json"):
                text = self.read_text(name) if name in self.files else None
                if text is not None:
                    out.extend(roottables.aliases(text))
            out.sort(key=lambda a: -len(a[0]))
            self._aliases = out
        return self._aliases

    def packages(self) -> dict[str, str]:
        """Workspace package name → its folder (root-relative, '' for the top), from each
        ``package.json`` not under ``node_modules``; the first by path wins."""
        if self._packages is None:
            out: dict[str, str] = {}
            for rel in self.named("package.json"):
                if "node_modules" in rel.split("/"):
                    continue
                text = self.read_text(rel)
                name = roottables.package_name(text) if text is not None else None
                if name is not None and name not in out:
                    out[name] = rel.rpartition("/")[0]
            self._packages = out
        return self._packages

    # --- ignore rules -----------------------------------------------------------------

    def _ignore_rules(self):
        if self._rules is None:
            from brainmigrate.codeindex.listing import IgnoreRules, parse_gitignore

            rules = []
            if self.is_git():
                from brainmigrate.git import run_git

                out = run_git(
                    self.root.path, "rev-parse", "--show-prefix", "--git-path", "info/exclude"
                )
                lines = os.fsdecode(out or b"").split("\n")
                if len(lines) >= 2 and lines[0] == "":
                    exclude = os.path.join(self.root.path, lines[1])
                    text = _read_small(exclude)
                    if text is not None:
                        rules.extend(parse_gitignore(text, ""))
            found = self.named(".gitignore")
            for rel in sorted(found, key=lambda p: (p.count("/"), p)):
                text = self.read_text(rel)
                if text is not None:
                    rules.extend(parse_gitignore(text, rel.rpartition("/")[0]))
            self._rules = IgnoreRules(tuple(rules))
        return self._rules

    def ignored(self, rel: str, folder: bool = False) -> bool:
        """Whether root-relative ``rel``, which the root does not list, is matched by its
        ignore rules (its ``.gitignore`` files, and ``.git/info/exclude`` in a git work
        tree): the path itself, or any folder above it (SPEC.md §Anchors 1 "Git-ignored
        paths"). A listed path is never ignored."""
        key = (rel, folder)
        hit = self._ignored.get(key)
        if hit is None:
            hit = False
            if len(rel) > 4096:
                pass  # held by no file system (Linux's PATH_MAX); its prefixes cost n²
            elif rel not in self.files and (folder or rel not in self.folders):
                rules = self._ignore_rules()
                if rules.rules:
                    cut = rel.find("/")
                    while cut > 0 and not hit:  # each folder above, top first, cached
                        above = (rel[:cut], True)
                        if above not in self._ignored:
                            self._ignored[above] = rules.ignored(above[0], True)
                        hit = self._ignored[above]
                        cut = rel.find("/", cut + 1)
                    hit = hit or rules.ignored(rel, folder)
            self._ignored[key] = hit
        return hit

    # --- per file ---------------------------------------------------------------------

    def read_text(self, rel: str) -> str | None:
        """The text of listed file ``rel`` (UTF-8, bad bytes replaced), or None when it
        cannot be read or passes ``MAX_READ``."""
        if rel not in self.files:
            return None
        return _read_small(os.path.join(self.root.real, self.actual(rel)))

    def line_count(self, rel: str) -> int | None:
        """How many lines listed file ``rel`` holds (a last line without a line end
        counts), or None when it cannot be read."""
        if rel not in self._lines:
            listed = rel in self.files  # nothing the listing lacks is opened
            data = _read_bytes(os.path.join(self.root.real, self.actual(rel))) if listed else None
            if data is None:
                self._lines[rel] = None
            else:
                n = data.count(b"\n")
                self._lines[rel] = n + (1 if data and not data.endswith(b"\n") else 0)
        return self._lines[rel]

    def heading_anchors(self, rel: str) -> frozenset[str] | None:
        """The fragments Markdown file ``rel`` answers to (``roottables.heading_anchors``),
        or None when it cannot be read."""
        if rel not in self._anchors:
            text = self.read_text(rel)
            self._anchors[rel] = (
                None if text is None else roottables.heading_anchors(text.splitlines())
            )
        return self._anchors[rel]


def _read_bytes(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_READ + 1)
    except OSError:
        return None
    return None if len(data) > MAX_READ else data


def _read_small(path: str) -> str | None:
    data = _read_bytes(path)
    return None if data is None else data.decode("utf-8", "replace")
