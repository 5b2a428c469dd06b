"""What a root's git history held, read once per ``HEAD`` and kept in one file per root.

The file, ``githistory-<16 hex of blake2b(the root's real path)>.bin`` in the cache folder
the declaration index uses, starts with one line of JSON -- ``FORMAT``, the root's real
path, ``HEAD``'s commit, what cut a shallow clone's history (``git.head_key``) and where
each kept part starts and ends -- then the parts, each made on first need:

- ``gone``: the paths the gone rule knows the history held (``knowledge.git_history``),
  NUL-separated;
- ``first`` and ``every``: the rename events of ``HEAD``'s first-parent line and of its
  whole history (``git.log_events``), JSON (``kept_events``);
- ``parents``: each commit's parents (``git.commit_parents``' ``rev-list``), as git
  printed them (``kept_parents``).

That ``git log -M`` failed is kept too (a part ``!`` and ``git.objects_stamp``): rename
detection reads files' contents, and in a clone that lacks some of them it fails at every
run the same way while ``HEAD`` and the object store stay.

A file whose line is not what this module writes, whose key is another root's, another
format's or another shallow cut's, is read as holding nothing and written again whole. One
kept for an older ``HEAD`` of a whole clone is carried to the new one by reading only
``old..new`` where that gives what a whole read gives (``_moved_forward``): the ``gone``
part when the new ``HEAD`` descends from the old, each log when git's output for the new
``HEAD`` is the old one's followed by that of the commits since; else rebuilt. A part that
fails its shape is read from git again; a cache folder that cannot be written costs only
the next run's time. Within one process a file is parsed once while its size, mtime and
inode stay.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from brainmigrate import git, inputs
from brainmigrate.digests import blake2b
from brainmigrate.patterns import lazy

#: The layout of the file (changed when its layout changes: an older file is made again;
#: 4 since the rename limit is git's default, whatever ``diff.renameLimit`` says).
FORMAT = 4
_MAGIC = "brainmigrate-githistory"
#: Parsed files of this process: path -> ((size, mtime_ns, inode), header, body).
_PARSED: dict[str, tuple[tuple[int, int, int], dict, bytes]] = {}


def cache_file(cache_dir: str | os.PathLike, real: str) -> Path:
    """The one history file of the root whose real path is ``real``."""
    key = blake2b(os.fsencode(real), digest_size=8).hexdigest()
    return Path(cache_dir) / f"githistory-{key}.bin"


def _signature(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def _load(path: Path) -> tuple[dict, bytes] | None:
    """The header and body of the file at ``path``, or None when it is missing, unreadable
    or not of the shape this module writes."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    sig = _signature(st)
    known = _PARSED.get(os.fspath(path))
    if known is not None and known[0] == sig:
        return known[1], known[2]
    try:
        data = inputs.read_whole(path)
    except OSError:
        return None
    line, newline, body = data.partition(b"\n")
    try:
        header = json.loads(line.decode("utf-8")) if newline else None
    except (ValueError, RecursionError):
        return None
    if not _header_ok(header, len(body)):
        return None
    _PARSED[os.fspath(path)] = (sig, header, body)
    return header, body


def _header_ok(header, size: int) -> bool:
    if not isinstance(header, dict) or header.get("magic") != _MAGIC:
        return False
    if not all(isinstance(header.get(k), str) for k in ("folder", "head", "shallow")):
        return False
    parts = header.get("parts")
    if header.get("format") != FORMAT or not isinstance(parts, dict):
        return False
    for span in parts.values():
        if not (
            isinstance(span, list)
            and len(span) == 2
            and all(type(n) is int for n in span)
            and 0 <= span[0] <= span[1] <= size
        ):
            return False
    return True


class KeptHistory:
    """The kept history of the root whose real path is ``real``, at ``HEAD`` ``key``
    (``git.head_key``), in ``cache_dir`` (None: nothing kept, every part read from git).
    ``part(name, make, check)`` gives a part: kept, else made (``make``: its bytes, None
    when git failed: nothing kept) and written with the parts already kept."""

    def __init__(self, real: str, key: tuple[str, str], cache_dir: str | os.PathLike | None):
        self.real = real
        self.commit, self.shallow = key
        self.path = cache_file(cache_dir, real) if cache_dir else None
        self._parts: dict[str, bytes] | None = None

    def _kept(self) -> dict[str, bytes]:
        if self._parts is None:
            self._parts = {}
            loaded = _load(self.path) if self.path else None
            if loaded is not None:
                header, body = loaded
                parts = {n: body[a:b] for n, (a, b) in header["parts"].items()}
                if (
                    header["folder"] == self.real
                    and header["shallow"] == self.shallow
                    and header["head"] == self.commit
                ):
                    self._parts = parts
                elif header["folder"] == self.real and header["shallow"] == self.shallow == "":
                    self._parts = _moved_forward(self.real, header["head"], self.commit, parts)
                    if self._parts:
                        self._write()
        return self._parts

    def part(self, name: str, make: Callable[[], bytes | None]) -> bytes | None:
        """The part ``name``: kept, else ``make()`` kept (None: not kept, and None)."""
        parts = self._kept()
        if name in parts:
            return parts[name]
        made = make()
        if made is None:
            return None
        parts[name] = made
        self._write()
        return made

    def forget(self, name: str) -> None:
        """Drop the part ``name`` (it failed its shape): the next ``part`` makes it."""
        self._kept().pop(name, None)

    def _write(self) -> None:
        if self.path is None or self._parts is None:
            return
        loaded = _load(self.path)  # parts another reader of this run kept meanwhile
        if loaded is not None and (loaded[0]["folder"], loaded[0]["head"]) == (
            self.real,
            self.commit,
        ):
            header, body = loaded
            if header["shallow"] == self.shallow:
                for name, (a, b) in header["parts"].items():
                    self._parts.setdefault(name, body[a:b])
        spans, offset = {}, 0
        for name, data in self._parts.items():
            spans[name] = [offset, offset + len(data)]
            offset += len(data)
        header = {
            "magic": _MAGIC,
            "format": FORMAT,
            "folder": self.real,
            "head": self.commit,
            "shallow": self.shallow,
            "parts": spans,
        }
        line = json.dumps(header, ensure_ascii=True).encode("ascii") + b"\n"
        from brainmigrate.writers import write_file

        with contextlib.suppress(OSError):  # a cache: what is not kept is read again
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_file(self.path, [line, *self._parts.values()])


def paths_part(paths: set[str]) -> bytes:
    """The ``gone`` part of ``paths``: sorted, NUL-separated."""
    return b"\0".join(p.encode("utf-8", "surrogateescape") for p in sorted(paths))


def part_paths(data: bytes) -> set[str]:
    """The paths of a ``gone`` part."""
    return {p.decode("utf-8", "surrogateescape") for p in data.split(b"\0") if p}


def events_part(events: list[tuple[str, str, str, str]]) -> bytes:
    """The ``first`` or ``every`` part of ``log_events``' events: JSON."""
    return json.dumps(events, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def part_events(data: bytes) -> list[tuple[str, str, str, str]] | None:
    """The events of a ``first`` or ``every`` part, or None when it is not of that shape."""
    try:
        kept = json.loads(data.decode("ascii"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(kept, list):
        return None
    out = []
    for e in kept:
        if not (
            isinstance(e, list)
            and len(e) == 4
            and all(isinstance(x, str) for x in e)
            and e[1] in ("A", "D", "R")
        ):
            return None
        out.append((e[0], e[1], e[2], e[3]))
    return out


def _kept_for(folder: str | os.PathLike, cache_dir, heads=None) -> KeptHistory | None:
    """The ``KeptHistory`` of the checkout folder ``folder`` at its ``HEAD`` (``heads``
    keeps ``git.head_key`` by work tree top for a run's roots), in ``cache_dir``
    (default ``user_cache_dir()``); None without a commit or git."""
    from brainmigrate.fsutil import user_cache_dir

    real = os.path.realpath(folder)
    top = git.work_tree_top(real)
    if top is None:
        return None
    heads = {} if heads is None else heads
    if top not in heads:
        heads[top] = git.head_key(top)
    key = heads[top]
    if not key:
        return None
    return KeptHistory(real, key, Path(cache_dir) if cache_dir else user_cache_dir())


def _failed_mark(folder: str | os.PathLike) -> bytes | None:
    stamp = git.objects_stamp(git.work_tree_top(os.path.realpath(folder)) or os.fspath(folder))
    return None if stamp is None else b"!" + stamp.encode("utf-8", "surrogateescape")


def kept_events(
    folder: str | os.PathLike, cache_dir=None, *, first_parent: bool = False, heads=None
) -> list[tuple[str, str, str, str]] | None:
    """``git.log_events(folder, first_parent=...)`` kept for ``HEAD`` (``_kept_for``):
    read from git once per ``HEAD``; a failure kept while the objects stay
    (``objects_stamp``). None when git fails (kept or not); ``[]`` outside git. Beside
    the events (``first``, ``every``) git's output is kept (``first-log``,
    ``every-log``), which ``_moved_forward`` extends."""
    kept = _kept_for(folder, cache_dir, heads)
    if kept is None:
        return []
    name = "first" if first_parent else "every"
    failed = _failed_mark(folder)
    said: list[str] = []

    def make() -> bytes | None:
        log = _kept_log(kept, folder, name, failed is not None, said)
        if log is None:  # kept only when the objects themselves failed git
            return failed if git.missing_object(said) else None
        return events_part(git.log_events_of(log))

    data = kept.part(name, make)
    if data is not None and data.startswith(b"!") and data != failed:
        kept.forget(name)  # the object store changed since git failed: ask again
        data = kept.part(name, make)
    if data is None or data.startswith(b"!"):
        return None
    events = part_events(data)
    if events is None:  # not of the shape written: read again
        kept.forget(name)
        kept.forget(name + "-log")
        data = kept.part(name, make)
        events = part_events(data) if data is not None and not data.startswith(b"!") else None
    return events


def _kept_log(
    kept: KeptHistory, folder, name: str, keep: bool, errors: list[str] | None = None
) -> bytes | None:
    """git's output for the part ``name`` (``first`` or ``every``), kept packed (``keep``)
    as ``<name>-log``. The first-parent line's is cut from the whole history's when git
    listed each merge against its first parent there (``every-modern``): the same
    commits, the same changes, in the same order, for one ``rev-list`` more instead of
    a second ``git log -M``."""

    def make_log() -> bytes | None:
        if name == "first":
            whole = _kept_log(kept, folder, "every", keep, errors)
            if whole is not None and kept.part("every-modern", lambda: None) is not None:
                cut = _first_parent_cut(folder, kept, whole)
                if cut is not None:
                    return cut
        modern: list[bool] = []
        out = git.log_output(
            folder, first_parent=name == "first", until=kept.commit, modern=modern, errors=errors
        )
        if name == "every" and out is not None and modern == [True]:
            kept.part("every-modern", lambda: b"1")
        return out

    if not keep:
        return make_log()
    packed = kept.part(name + "-log", lambda: _packed(make_log()))
    log = _unpacked(packed)
    if packed is not None and log is None:  # spoiled: read again
        kept.forget(name + "-log")
        log = _unpacked(kept.part(name + "-log", lambda: _packed(make_log())))
    return log


def _first_parent_cut(folder, kept: KeptHistory, whole: bytes) -> bytes | None:
    """The records of ``whole`` (``log_output`` of ``HEAD``'s whole history) of the
    commits on ``HEAD``'s first-parent line (followed in the kept ``parents`` when they
    are kept, else ``git rev-list --first-parent``): what ``log_output(first_parent=
    True)`` prints, as ``log_events_of`` reads it. None when git fails or a field only
    looks like a commit's header."""
    parents = kept.part("parents", lambda: None)
    if parents is not None:
        firsts = {}
        for row in parents.split(b"\n"):
            words = row.split()
            if words:
                firsts[words[0]] = words[1] if len(words) > 1 else None
        line, at = set(), kept.commit.encode("ascii")
        while at is not None and at not in line:
            line.add(at)
            at = firsts.get(at)
    else:
        out = git.run_git(folder, "rev-list", "--first-parent", kept.commit, timeout=120)
        if out is None:
            return None
        line = set(out.split())
    kept: list[bytes] = []
    on = False
    for field in whole.split(b"\0"):
        bare = field.strip(b"\n")
        if bare.startswith(b"\x01"):
            if len(bare) != 41 or not git._is_oid(bare[1:].decode("ascii", "replace")):
                return None
            on = bare[1:] in line
        if on:
            kept.append(field)
    return b"\0".join(kept)


def _moved_forward(real: str, older: str, commit: str, parts: dict[str, bytes]) -> dict:
    """The parts kept for ``HEAD`` ``older`` of the root at ``real`` carried to ``commit``
    where that reads only ``older..commit``: the gone paths when ``commit`` descends from
    ``older`` (what the commits since deleted and what ``commit`` holds added: the set a
    whole read gives, since every path ``older`` held that ``commit`` lacks was deleted
    by one of them); each log whose output for ``commit`` is the older one followed by
    the one since (``_continues``), with its events made again. The others are left
    out: made on need."""
    out: dict[str, bytes] = {}
    gone = parts.get("gone")
    ancestor = ("merge-base", "--is-ancestor", older, commit)
    if gone is not None and git.run_git(real, *ancestor) is not None:
        paths = gone_paths(real, commit, older, [])
        if paths is not None:
            out["gone"] = paths_part(paths | part_paths(gone))
    for name in ("first", "every"):
        log = _unpacked(parts.get(name + "-log"))
        if log is None or not _continues(real, older, commit, name):
            continue
        modern: list[bool] = []
        since = git.log_output(
            real, first_parent=name == "first", since=older, until=commit, modern=modern
        )
        if since is not None:
            out[name + "-log"] = _packed(log + b"\0" + since)
            out[name] = events_part(git.log_events_of(log + b"\0" + since))
            if name == "every" and "every-modern" in parts and modern == [True]:
                out["every-modern"] = b"1"
    return out


def _packed(log: bytes | None) -> bytes | None:
    """A kept log, compressed (read only when ``HEAD`` moves)."""
    import zlib

    return None if log is None else zlib.compress(log, 1)


def _unpacked(data: bytes | None) -> bytes | None:
    """The log ``_packed`` kept, or None when there is none or it does not decompress."""
    import zlib

    if data is None:
        return None
    try:
        return zlib.decompress(data)
    except zlib.error:
        return None


def gone_paths(
    folder: str | os.PathLike, commit: str, since: str | None, errors: list[str]
) -> set[str] | None:
    """What the history of ``commit`` (only the commits ``since..commit`` when given)
    deleted, and every path of ``commit``, NFC, relative to ``folder``: ``git log
    --no-renames --diff-filter=D -m`` (a rename deletes its old path; a merge counts,
    against each of its parents) and ``git ls-tree``. None when ``git log`` failed
    (``errors`` gets why)."""
    import unicodedata

    log = git.run_git(
        folder,
        "log",
        "--format=",
        "--name-only",
        "-z",
        "--no-renames",
        "--diff-filter=D",
        "-m",  # a merge's own changes too: a path a merge resolution dropped
        "--relative",
        f"{since}..{commit}" if since else commit,
        "--",
        errors=errors,
    )
    if log is None:
        return None
    tree = git.run_git(folder, "ls-tree", "-r", "-z", "--name-only", commit) or b""
    paths = {os.fsdecode(p.strip(b"\n")) for p in (log + b"\0" + tree).split(b"\0")}
    paths.discard("")
    return {unicodedata.normalize("NFC", p) for p in paths}


def _continues(folder: str | os.PathLike, older: str, commit: str, name: str) -> bool:
    """Whether ``git log`` of ``commit`` prints what it printed for ``older`` followed by
    what it prints for ``older..commit``: along the first-parent line (``first``), when
    ``older`` is on ``commit``'s; for the whole history (``every``, ``--date-order``),
    when the commits since are one line of single-parent commits on ``older`` (no merge
    brings older commits in between)."""
    args = ["rev-list", "--parents", f"{older}..{commit}"]
    out = git.run_git(folder, *args, *(["--first-parent"] if name == "first" else []))
    lines = [line.split() for line in (out or b"").decode("ascii", "replace").splitlines()]
    if not lines or any(len(words) < 2 for words in lines):
        return False
    if name == "first":
        return lines[-1][1] == older
    chain = [words[0] for words in lines[1:]] + [older]
    return all(len(w) == 2 and w[1] == below for w, below in zip(lines, chain, strict=True))


def kept_parents(folder: str | os.PathLike, cache_dir=None) -> dict[str, tuple[str, ...]]:
    """``git.commit_parents(folder)`` kept for ``HEAD``: commit -> its parents, in
    topological order from ``HEAD``; empty when git fails."""
    kept = _kept_for(folder, cache_dir)

    def make() -> bytes | None:
        return git.run_git(folder, "rev-list", "--topo-order", "--parents", "HEAD", timeout=120)

    data = kept.part("parents", make) if kept is not None else make()
    parents = _parents_of(data or b"")
    if parents is None and kept is not None:  # a spoiled part: read again
        kept.forget("parents")
        parents = _parents_of(kept.part("parents", make) or b"")
    return parents or {}


_HEX = lazy(r"[0-9a-f]+")


def _parents_of(data: bytes) -> dict[str, tuple[str, ...]] | None:
    """``git rev-list --parents``' lines as commit -> parents; None when a line is not
    of that shape (object ids: 40 or 64 hexadecimal digits)."""
    parents: dict[str, tuple[str, ...]] = {}
    for line in data.decode("ascii", "replace").splitlines():
        ids = line.split()
        if not ids or not all(len(i) in (40, 64) and _HEX.fullmatch(i) for i in ids):
            return None
        parents[ids[0]] = tuple(ids[1:])
    return parents


def history_readers(folder: str | os.PathLike, cache_dir=None):
    """``(logs, parents)`` for ``trails.History``: its logs and commits' parents kept
    (``kept_events``, ``kept_parents``)."""
    heads: dict = {}
    return (
        lambda first_parent: kept_events(folder, cache_dir, first_parent=first_parent, heads=heads),
        lambda: kept_parents(folder, cache_dir),
    )
