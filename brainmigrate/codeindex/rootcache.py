"""The on-disk cache of what one root holds: its file listing and the tables
``knowledge.RootKnowledge`` makes from its files, read in one read on a warm run.

One file per root, beside the declaration cache,
``<cache_dir>/knowledge-<16 hex of blake2b(resolved root)>.bin``::

    MAGIC | blake2b-16 of the payload | payload

The payload is a pickle of plain values (dicts, lists, tuples, strings, ints, bools,
None), read with an unpickler that refuses every global, only after its checksum matched:
``{"root": str, "listing": (way, key, files) | None, "tables": {name: value}}``. A file with
another magic, root or a bad checksum is discarded and rebuilt, never trusted; writes go
through ``writers.write_file`` (a temporary file, then a rename).

The listing is trusted only while its key holds (:func:`key_holds`): the signature (file
type, size, mtime_ns and ctime_ns, from ``lstat``) of every folder the listing looked in
-- adding, removing or renaming an entry changes its folder's mtime -- and of every
``.gitignore`` that shaped it; in a git work tree also HEAD's commit, the index file,
``info/exclude``, every git configuration file and the global excludes file, and the
``.gitignore`` files above the root. A key whose newest mtime is within ``RACY_NS`` of the
listing's start is not written (a change in the same clock tick would leave an mtime as it
was). Each file of a trusted listing is stat-ed again, so sizes and mtimes are current.
"""

from __future__ import annotations

import io
import os
import pickle
import stat
import time
from pathlib import Path
from typing import Any

from brainmigrate import inputs
from brainmigrate.digests import blake2b

MAGIC = b"BMRK1\n"
#: An mtime this close to the listing's start (ns) may hide a change in the same tick.
RACY_NS = 2_000_000_000
#: Environment variables that change what git lists (configuration, excludes).
_GIT_ENV = (
    "HOME",
    "XDG_CONFIG_HOME",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_CONFIG_SYSTEM",
)

Signature = tuple[int, int, int, int] | None
#: (path relative to the root, or absolute, signature).
KeyItem = tuple[str, Signature]

#: Cache files read by this process: path -> (the file's own signature, payload); a second
#: reader in the same run (the name index, then the root's knowledge) reads no file again.
_READ: dict[str, tuple[tuple | None, dict]] = {}
#: Resolved root -> the remote URLs its listing's key holds, for the listings this process
#: took from a cache whose key held (taken again at each listing).
_TRUSTED: dict[str, dict[str, Any]] = {}


def cache_file(cache_dir: str | os.PathLike, root_real: str) -> Path:
    """The cache file of resolved root ``root_real`` inside ``cache_dir``."""
    key = blake2b(os.fsencode(root_real), digest_size=8).hexdigest()
    return Path(cache_dir) / f"knowledge-{key}.bin"


def signature(path: str) -> Signature:
    """``(file type, size, mtime_ns, ctime_ns)`` of ``path`` from ``lstat`` (the ctime
    changes with a folder's permissions too: an unreadable folder made readable), or None
    when missing."""
    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        return None
    return stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns, st.st_ctime_ns


class _NoGlobals(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"global {module}.{name} refused")


def load(path: Path, root_real: str) -> dict | None:
    """The payload of cache file ``path`` when it is one of ``root_real``'s, else None
    (missing, unreadable, corrupt, truncated, of another format or another root)."""
    own = _own_signature(path)
    if own is None:
        return None
    known = _READ.get(str(path))
    if known is not None and known[0] == own:
        return known[1]
    try:
        blob = inputs.read_whole(path)
    except OSError:
        return None
    head = len(MAGIC) + 16
    if len(blob) < head or not blob.startswith(MAGIC):
        return None
    payload = memoryview(blob)[head:]
    if blake2b(payload, digest_size=16).digest() != blob[len(MAGIC) : head]:
        return None
    try:
        data = _NoGlobals(io.BytesIO(payload)).load()
    except Exception:  # noqa: BLE001 - any unpickling failure means a bad file
        return None
    if (
        not isinstance(data, dict)
        or data.get("root") != root_real
        or not isinstance(data.get("tables"), dict)
    ):
        return None
    _READ[str(path)] = (own, data)
    return data


def save(path: Path, data: dict) -> bool:
    """Write ``data`` to cache file ``path`` atomically; False when it cannot be written."""
    from brainmigrate.writers import write_file

    from .cache import dumps

    payload = dumps(data)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_file(path, MAGIC + blake2b(payload, digest_size=16).digest() + payload)
    except OSError:
        return False
    _READ[str(path)] = (_own_signature(path), data)
    return True


def _own_signature(path: Path):
    """What tells a cache file from the one read before: its inode, size, mtime, ctime
    (each write is a new file renamed in)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def key_holds(root: str, key: list[KeyItem]) -> bool:
    """Whether every item of a listing's key still has the signature it was made with
    (relative paths are read under ``root``; a git work tree's HEAD is asked again)."""
    for name, sig in key:
        if name == ":head":
            if _head(root) != sig:
                return False
            continue
        if name == ":env":
            if _env() != sig:
                return False
            continue
        if name in (":remotes", ":exclude"):  # what git said: what it read is keyed
            continue
        if name == ":top":  # a plain tree: still in no git work tree
            from brainmigrate.git import work_tree_top

            if work_tree_top(root) is not None:
                return False
            continue
        if signature(os.path.join(root, name)) != sig:
            return False
    return True


def racy(key: list[KeyItem], started: int) -> bool:
    """Whether an mtime of ``key`` is so close to ``started`` that a change made in the
    same clock tick could have left it unchanged."""
    return any(
        isinstance(sig, tuple)
        and len(sig) == 4
        and isinstance(sig[2], int)
        and sig[2] >= started - RACY_NS
        for name, sig in key
        if not name.startswith(":")
    )


def _head(root: str):
    from brainmigrate.git import head_state, work_tree_top

    top = work_tree_top(root)
    state = head_state(top) if top is not None else None
    return None if state is None else (top, state[0], state[1])


def _env():
    return tuple((k, os.environ.get(k)) for k in _GIT_ENV)


def folder_key(root: str, folders: list[str]) -> list[KeyItem]:
    """Each of ``folders`` (root-relative, '' for the root) and the ``.gitignore`` it holds
    (a regular file, not a link), with their signatures."""
    out: list[KeyItem] = []
    for rel in folders:
        where = os.path.join(root, rel) if rel else root
        out.append((rel or ".", signature(where)))
        gi = os.path.join(where, ".gitignore")
        sig = signature(gi)
        if sig is not None:
            out.append((f"{rel}/.gitignore" if rel else ".gitignore", sig))
    return out


def git_key(root: str, root_real: str) -> list[KeyItem] | None:
    """The key of a git listing of ``root``: HEAD, the index, ``info/exclude``, the git
    configuration files and the global excludes file, the ``.gitignore`` files from the
    work tree's top down to the root, and every folder git looks in (every folder under
    the root but those it ignores whole). None when it cannot be made (no commit yet)."""
    from brainmigrate.git import run_git

    head = _head(root_real)
    if head is None:
        return None
    paths = run_git(
        root, "rev-parse", "--show-prefix", "--git-path", "index", "--git-path", "info/exclude"
    )
    config = run_git(root, "config", "--list", "--show-origin", "-z")
    ignored = run_git(
        root, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"
    )
    if paths is None or config is None or ignored is None:
        return None
    key: list[KeyItem] = [(":head", head), (":env", _env())]
    lines = os.fsdecode(paths).split("\n")
    if len(lines) < 3:
        return None
    named = [os.path.join(root_real, p) for p in lines[1:3]]
    key.append((":exclude", (lines[0], named[1])))
    top = head[0]
    if os.path.isfile(os.path.join(top, ".git")):  # a linked work tree's or submodule's
        named.append(os.path.join(top, ".git"))
    named += _config_files(config, top)
    here = os.path.dirname(root_real)
    while len(here) >= len(top) and here.startswith(top):
        named.append(os.path.join(here, ".gitignore"))
        if here == top:
            break
        here = os.path.dirname(here)
    key.append((":remotes", _remote_urls(config)))
    key += [(os.path.abspath(p), signature(p)) for p in dict.fromkeys(named)]
    key += folder_key(root_real, _folders(root_real, _ignored_folders(root, ignored)))
    return key


def _ignored_folders(root: str, listing: bytes) -> set[str]:
    """The folders git ignores themselves (by a rule naming them: ``build/``), of the
    ``dir/`` entries of ``git ls-files --others --ignored --directory`` (which also shows a
    folder whose files are all ignored: one a new file may be added to, so looked in)."""
    from brainmigrate.git import run_git

    named = [p for p in listing.split(b"\0") if p.endswith(b"/")]
    if not named:
        return set()
    out = run_git(root, "check-ignore", "--stdin", "-z", stdin=b"\0".join(named) + b"\0")
    return {os.fsdecode(p).rstrip("/") for p in (out or b"").split(b"\0") if p}


def _remote_urls(listing: bytes) -> tuple[tuple[str, str], ...]:
    """``(key, url)`` of each ``remote.<name>.url`` of a ``git config --list
    --show-origin -z`` output, in its order (as ``git config --get-regexp`` gives them)."""
    parts = listing.split(b"\0")
    out = []
    for entry in parts[1::2]:
        name, _, value = entry.partition(b"\n")
        key = os.fsdecode(name)
        if key.startswith("remote.") and key.endswith(".url") and len(key) > 11:
            out.append((key, os.fsdecode(value)))
    return tuple(out)


def trusted_remotes(root_real: str) -> tuple[tuple[str, str], ...] | None:
    """The remote URLs of the git listing of ``root_real`` this process took from its
    cache (its key, which holds every configuration file, was checked), else None."""
    known = _TRUSTED.get(root_real, {}).get(":remotes")
    return known if isinstance(known, tuple) else None


def trusted_exclude(root_real: str) -> tuple[str, str] | None:
    """``(the root's prefix in its work tree, the path of its info/exclude)`` as git said
    them for the git listing this process took from its cache, else None."""
    known = _TRUSTED.get(root_real, {}).get(":exclude")
    if type(known) is tuple and len(known) == 2 and all(type(k) is str for k in known):
        return known
    return None


def _config_files(listing: bytes, top: str) -> list[str]:
    """The files ``git config --list --show-origin -z`` read (a relative one under the
    work tree's ``top``), and the global excludes file (``core.excludesFile``, else
    ``$XDG_CONFIG_HOME/git/ignore``)."""
    files: list[str] = []
    excludes = None
    parts = listing.split(b"\0")
    for origin, entry in zip(parts[::2], parts[1::2], strict=False):
        source = None
        if origin.startswith(b"file:"):
            source = os.path.join(top, os.fsdecode(origin[5:]))
            files.append(source)
        name, _, value = entry.partition(b"\n")
        name = name.lower()
        if name == b"core.excludesfile":
            excludes = os.path.expanduser(os.fsdecode(value))
        elif name.startswith((b"include.", b"includeif.")) and name.endswith(b".path"):
            # an included file holding nothing yet is named by no entry: keyed here
            where = os.path.expanduser(os.fsdecode(value))
            if source is not None:
                where = os.path.join(os.path.dirname(source), where)
            files.append(where)
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    if excludes is None:
        excludes = os.path.join(config, "git", "ignore")
    files.append(os.path.abspath(excludes))
    # the files git would read that did not exist (a global configuration made later)
    files += [
        os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig",
        os.path.join(config, "git", "config"),
        os.environ.get("GIT_CONFIG_GLOBAL") or os.path.expanduser("~/.gitconfig"),
        os.path.join(top, ".git", "config.worktree"),
    ]
    return files


def _folders(root: str, skip: set[str]) -> list[str]:
    """Every folder under ``root`` (root-relative, '' first, then in walk order) but
    ``.git`` folders, folder symlinks and the folders of ``skip`` (ignored whole)."""
    out: list[str] = []
    stack = [""]
    while stack:
        rel = stack.pop()
        out.append(rel)
        try:
            with os.scandir(os.path.join(root, rel) if rel else root) as entries:
                subs = sorted(e.name for e in entries if e.is_dir(follow_symlinks=False))
        except OSError:
            continue
        for name in reversed(subs):
            path = f"{rel}/{name}" if rel else name
            if name != ".git" and path not in skip:
                stack.append(path)
    return out


def listed_again(root: str, root_real: str, files: list) -> list | None:
    """``(path, size, mtime_ns)`` of each cached path, stat-ed now; None when one is no
    longer a regular file (a file symlink: no longer one resolving inside the root)."""
    from .listing import regular_file

    out = []
    join = os.path.join
    for rel in files:
        st = regular_file(join(root, rel), root_real)
        if st is None:
            return None
        out.append((rel, st.st_size, st.st_mtime_ns))
    return out


def cached_listing(cache_dir, root: str, root_real: str) -> tuple[str, list] | None:
    """``(way, [(path, size, mtime_ns)])`` of ``root`` from its cache file while the
    listing's key holds, else None."""
    _TRUSTED.pop(root_real, None)
    data = load(cache_file(cache_dir, root_real), root_real)
    listing = data.get("listing") if data is not None else None
    try:
        way, key, files = listing  # type: ignore[misc]
        if way not in ("git", "scandir") or not key_holds(root_real, key):
            return None
        again = listed_again(root, root_real, files)
        said = {n: v for n, v in key if n in (":remotes", ":exclude")}
    except (TypeError, ValueError):  # a payload of another shape: rebuilt
        return None
    if again is None:
        return None
    if way == "git":
        _TRUSTED[root_real] = said
    return way, again


def keep_listing(cache_dir, root: str, root_real: str, way: str, files, walked, started, links=()):
    """Write the listing ``files`` of ``root`` (made since ``started``) with its key to the
    cache file, keeping the tables there; nothing when no sound key can be made (a plain
    tree inside a git work tree, a racy mtime). The folders symlinks lead into
    (``links``: a dangling link's target may appear in a folder git ignores) are keyed."""
    if way == "git":
        key = git_key(root, root_real)
    else:
        from brainmigrate.git import work_tree_top

        if work_tree_top(root_real) is not None or walked is None:
            return  # a walked root inside a work tree (ignored, or refused): git may list it
        key = [(":top", None), *folder_key(root_real, walked)]
    if key is None:
        return
    key += [(folder, signature(folder)) for folder in sorted(links or ())]
    if racy(key, started):
        return
    path = cache_file(cache_dir, root_real)
    data = dict(load(path, root_real) or {"root": root_real, "tables": {}})
    data["listing"] = (way, key, [f.path for f in files])
    save(path, data)


def tables(cache_dir, root_real: str) -> dict:
    """The tables kept for ``root_real`` (name -> value; each value carries its own key),
    empty when there is no usable cache file."""
    data = load(cache_file(cache_dir, root_real), root_real)
    return dict(data["tables"]) if data is not None else {}


def keep_tables(cache_dir, root_real: str, made: dict) -> bool:
    """Write ``made`` as the root's tables, keeping its listing; False when the cache
    cannot be written."""
    path = cache_file(cache_dir, root_real)
    data = dict(load(path, root_real) or {"root": root_real, "listing": None})
    data["tables"] = made
    return save(path, data)


def now_ns() -> int:
    """The time a listing starts (``time.time_ns``): its key's mtimes are compared to it."""
    return time.time_ns()


_MISSING = object()


class KeptTables:
    """The tables of one root kept in its cache file: ``table -> {name: (signature,
    value)}``, each value trusted only while its signature (the size and mtime_ns of the
    file it was read from, or of several) is still what it was. Loaded on first need;
    ``save`` writes what was added (nothing without ``cache_dir``)."""

    def __init__(self, cache_dir, root_real: str) -> None:
        self.cache_dir = cache_dir
        self.root_real = root_real
        self._data: dict | None = None
        self._copied: set[str] = set()
        self.dirty = False

    def _tables(self) -> dict:
        if self._data is None:
            self._data = tables(self.cache_dir, self.root_real) if self.cache_dir else {}
        return self._data

    def get(self, table: str, name: str, sig) -> Any:
        """The value kept for ``name`` in ``table`` with signature ``sig``, else
        ``MISSING``."""
        kept = self._tables().get(table)
        entry = kept.get(name) if isinstance(kept, dict) else None
        if type(entry) is tuple and len(entry) == 2 and entry[0] == sig:
            return entry[1]
        return _MISSING

    def put(self, table: str, name: str, sig: tuple, value, alone: bool = False) -> None:
        """Keep ``value`` for ``name`` in ``table`` under ``sig`` (the ``stat_of`` of each
        file it was read from); ``alone``: the table keeps this entry only. Nothing is
        kept when a file is missing or its mtime so recent that an edit in the same tick
        could leave it unchanged."""
        if self.cache_dir is None:
            return
        soon = time.time_ns() - RACY_NS
        if any(s is None or s[1] >= soon for s in sig):
            return
        data = self._tables()
        if table not in self._copied:
            old = data.get(table)
            data[table] = dict(old) if isinstance(old, dict) and not alone else {}
            self._copied.add(table)
        if alone:
            data[table].clear()
        data[table][name] = (sig, value)
        self.dirty = True

    def save(self, keep: frozenset[str] | set[str]) -> None:
        """Write the tables; of the per-file ones (``PER_FILE``) each file not in ``keep``
        (the files listed) dropped."""
        if not self.dirty or self.cache_dir is None or self._data is None:
            return
        made = {}
        for table, rows in self._data.items():
            if isinstance(rows, dict):
                per_file = table in PER_FILE
                made[table] = {n: v for n, v in rows.items() if not per_file or n in keep}
        keep_tables(self.cache_dir, self.root_real, made)
        self.dirty = False


#: The tables keyed by a listed file's path.
PER_FILE = frozenset({"lines", "anchors"})


def missing(value: Any) -> bool:
    """Whether a ``KeptTables.get`` found nothing."""
    return value is _MISSING


def stat_of(path: str) -> tuple[int, int, int, int, int] | None:
    """``(size, mtime_ns, ctime_ns, inode, device)`` of the file at ``path`` (links
    followed), or None: a copy that kept the mtime (``cp -p``) still changes the ctime, a
    symlink turned to another file of that size and time changes the inode."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev
