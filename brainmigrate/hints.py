"""Move hints: where a gone path may have gone -- git's rename history, else the one file
of the first root with the same name, else one clearly closest path of the first root.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from reprlib import recursive_repr

from brainmigrate.digests import blake2b
from brainmigrate.folder_moves import folder_files
from brainmigrate.fsutil import user_cache_dir, write_text_atomic
from brainmigrate.git import (
    RenameTrail,
    head_state,
    history_events,
    work_tree_top,
    worktree_events,
)
from brainmigrate.read.tokens import FILE_NAMES, has_extension
from brainmigrate.roots import Root, is_absolute, normalize
from brainmigrate.rules import Hint

#: A similar path is suggested only when the stem of its file name (before the first dot)
#: scores at least this against the gone one (rapidfuzz ``ratio``, 0-100, case folded): a
#: character or two apart in a usual name (``PaymentGatewy``/``PaymentGateway`` 96,
#: ``UserServce``/``UserService`` 95); short or sibling stems stay below (``util``/``utils``
#: 89, ``test_a``/``test_b`` 83, ``engine``/``appengine`` 80, ``bars``/``bar`` 86) ...
STEM_CUTOFF = 90.0
#: ... when its extension scores at least this (``yml``/``yaml`` 86; not ``ts``/``js`` 50) ...
EXT_CUTOFF = 80.0
#: ... and when its score (stem 70 %, extension 10 %, folder 20 %) leads the next one's by
#: this much.
MARGIN = 5.0
_DIGITS = re.compile(r"[0-9]+")


@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class Move:
    """A gone path's likely new place: in ``root``, the citation meant ``old`` (relative to
    it) and the file is now at ``path``; ``how`` as in ``Hint``; ``kind`` is ``file`` or
    ``folder`` (a folder moved: ``old`` and ``path`` without a trailing ``/``)."""

    root: Root
    old: str
    path: str
    how: str
    kind: str = "file"

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(self, root, old, path, how, kind="file") -> None:
        object.__setattr__(self, "root", root)
        object.__setattr__(self, "old", old)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "how", how)
        object.__setattr__(self, "kind", kind)

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(root={self.root!r}, old={self.old!r}, "
            f"path={self.path!r}, how={self.how!r}, kind={self.kind!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.root, self.old, self.path, self.how, self.kind) == (
                other.root,
                other.old,
                other.path,
                other.how,
                other.kind,
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.root, self.old, self.path, self.how, self.kind))


class MoveHints:
    """Says where a gone path may have moved (``hint``), first found wins:

    1. ``git-rename``: a root in a git checkout whose history, or a rename not yet
       committed (``git mv``), renamed the path (followed through later renames) to a
       file that exists now;
    2. ``same-name``: the first root holds exactly one file with the path's file name;
    3. ``similar``: one path of the first root is clearly the closest (``STEM_CUTOFF``,
       ``EXT_CUTOFF``, ``MARGIN``); names that differ only in their numbers
       (``handler_v1``/``handler_v2``) never match.

    A gone **folder** (a path cited with a trailing ``/``, or, without one, a path git's
    history moved files out of and held files under: ``folder_files``) moved when

    1. ``git-rename``: every file git last held under it was renamed (followed through
       later renames) to the same path under one other folder that a root holds now
       (``tools/legacy-import/run.py`` → ``tools/importers/legacy/run.py``);
    2. ``same-folder``: the first root holds exactly one other folder of its name.

    Everything is lazy and made once per run: git's history per root, the first root's
    file list; answers are cached per path. ``index`` gives the first root's declaration
    index when the run already has one (``Notes.name_index``), so it is not made twice.
    """

    def __init__(
        self,
        roots: Sequence[Root],
        cache_dir: str | os.PathLike | None = None,
        index: Callable[[], object] | None = None,
    ):
        self.roots = list(roots)
        self._cache_dir = cache_dir
        self._made_index = index
        self._trails: dict[int, RenameTrail] = {}
        self._heads: dict[str, tuple[str, bool] | None] = {}
        self._index = None
        self._by_stem: dict[str, list[tuple[str, str]]] | None = None
        self._answers: dict[str, Hint | None] = {}
        self._held: dict[tuple[int, str], list[str] | None] = {}
        self._folders: dict[str, list[str]] | None = None
        self._moved_folders: dict[int, set[str]] = {}

    def hint(self, cited: str) -> Hint | None:
        """The hint for the gone path ``cited`` (as a citation names it), or None."""
        if cited not in self._answers:
            self._answers[cited] = self._hint(cited)
        return self._answers[cited]

    def _hint(self, cited: str) -> Hint | None:
        move = self.locate(cited)
        if move is None:
            return None
        return Hint(move.path + ("/" if move.kind == "folder" else ""), move.how)

    def locate(self, cited: str, *, similar: bool = True) -> Move | None:
        """Where the gone path ``cited`` may have moved, with its root and the path the
        citation meant there (``Move``), or None; ``similar=False`` stops before the
        closest-path guess. ``cited`` ending in ``/`` is a folder: only the folder rules
        apply to it."""
        if not self.roots:
            return None
        folder_only = cited.endswith("/") and cited.strip("/") != ""
        candidates = self._relative(cited.rstrip("/") if folder_only else cited)
        if not folder_only:
            for root, rel in candidates:
                moved = self._renamed(root, rel)
                if moved:
                    return Move(root, rel, moved, "git-rename")
        for root, rel in candidates:
            moved = self._folder_renamed(root, rel) if self._renamed_from(root, rel) else None
            if moved:
                return Move(root, rel, moved, "git-rename", "folder")
        rel = next((r for root, r in candidates if root.index == 0), None)
        if rel is None:
            return None
        if not folder_only:
            name = rel.rpartition("/")[2]
            index = self._first_index()
            same = index.files_named(name)
            if len(same) == 1:
                return Move(self.roots[0], rel, same[0], "same-name")
        if folder_only or self._maybe_folder(self.roots[0], rel):
            other = self._same_name_folder(rel)
            if other is not None:
                return Move(self.roots[0], rel, other, "same-folder", "folder")
        if folder_only:
            return None
        close = self._similar(rel) if similar else None
        return Move(self.roots[0], rel, close, "similar") if close else None

    def _maybe_folder(self, root: Root, rel: str) -> bool:
        """Whether a gone path cited without a trailing ``/`` was a folder: its last segment
        is no file name, git's history moved something out of it, and git held files
        under it. Cheap tests first: git is asked (a history walk on a large clone) only
        for such a path."""
        last = rel.rpartition("/")[2]
        if has_extension(last) or last in FILE_NAMES:
            return False
        return self._renamed_from(root, rel) and bool(self._held_files(root, rel))

    def _renamed_from(self, root: Root, rel: str) -> bool:
        """Whether git's history renamed or deleted a path under the folder ``rel`` of
        ``root`` (the folders above every path it removed, made once per root), so that
        git is asked what the folder held only for a folder that may have moved."""
        if root.index not in self._trails:
            self._follow_renames()
        folders = self._moved_folders.get(root.index)
        if folders is None:
            folders = set()
            for path in self._trails[root.index].removed():
                folder = path.rpartition("/")[0]
                while folder and folder not in folders:
                    folders.add(folder)
                    folder = folder.rpartition("/")[0]
            self._moved_folders[root.index] = folders
        return rel in folders

    def _held_files(self, root: Root, rel: str) -> list[str] | None:
        """``folder_files`` of ``rel`` in ``root``, asked of git once per run."""
        key = (root.index, rel)
        if key not in self._held:
            self._held[key] = folder_files(root.path, rel) if rel else None
        return self._held[key]

    def _folder_renamed(self, root: Root, rel: str) -> str | None:
        """The folder of ``root`` that every file git last held under ``rel`` was renamed
        into, each at the same path under it, when a folder is there now; else None (one
        of them deleted, or renamed elsewhere, or none held)."""
        held = self._held_files(root, rel)
        if not held:
            return None
        trail = self._trails.get(root.index)
        if trail is None:
            self._follow_renames()
            trail = self._trails[root.index]
        target = None
        for tail in held:
            new = trail.follow(f"{rel}/{tail}")
            if new is None or not new.endswith("/" + tail):
                return None
            folder = new[: -len(tail) - 1]
            if target is not None and folder != target:
                return None
            target = folder
        if target is None or target == rel or not _is_dir_in(root, target):
            return None
        return target

    def _same_name_folder(self, rel: str) -> str | None:
        """The one folder of the first root (other than ``rel``) named like ``rel``'s last
        segment, or None; the folders are those that hold a listed file, made once."""
        if self._folders is None:
            self._folders = {}
            seen: set[str] = set()
            for path in self._first_index().files():
                folder = path.rpartition("/")[0]
                while folder and folder not in seen:
                    seen.add(folder)
                    self._folders.setdefault(folder.rpartition("/")[2], []).append(folder)
                    folder = folder.rpartition("/")[0]
        others = [f for f in self._folders.get(rel.rpartition("/")[2], ()) if f != rel]
        return others[0] if len(others) == 1 else None

    def _relative(self, cited: str) -> list[tuple[Root, str]]:
        """(root, path relative to it) pairs the cited path may have meant."""
        if is_absolute(cited):
            norm = normalize(os.path.expanduser(cited)) if cited.startswith(("/", "~")) else None
            for root in self.roots:
                rel = root.relative(norm) if norm else None
                if rel:
                    return [(root, rel)]
            return []
        return [(root, cited) for root in self.roots]

    def _renamed(self, root: Root, rel: str) -> str | None:
        trail = self._trails.get(root.index)
        if trail is None:
            self._follow_renames()
            trail = self._trails[root.index]
        path = trail.follow(rel)
        return path if path is not None and _is_file_in(root, path) else None

    def _follow_renames(self) -> None:
        """Make the ``RenameTrail`` of every root not made yet: its kept history
        (``history_at_head``), then, in a checkout with a commit, what is not yet committed
        (a pre-commit hook's case: git mv, staged or not). A gone path that no rename in
        one root explains is looked for in the next, so every root's is made at once, the
        roots' ``git diff`` runs side by side (a thread each but the first: each waits on
        its git process)."""
        pending = [r for r in self.roots if r.index not in self._trails]
        live = [r for r in pending if _head(os.path.realpath(r.path), self._heads) is not None]
        diffs: dict[int, list[tuple[str, str, str]]] = {}

        def diff(root: Root) -> None:
            diffs[root.index] = worktree_events(root.path)

        others = [threading.Thread(target=diff, args=(r,), daemon=True) for r in live[1:]]
        for thread in others:
            thread.start()
        try:
            for root in live[:1]:
                diff(root)
            histories = [history_at_head(r.path, self._cache_dir, self._heads) for r in pending]
        finally:
            for thread in others:
                thread.join()
        for root in live:
            if root.index not in diffs:  # its thread failed: the error is raised here
                diff(root)
        for root, events in zip(pending, histories, strict=True):
            self._trails[root.index] = RenameTrail([*events, *diffs.get(root.index, ())])

    def _first_index(self):
        if self._index is None and self._made_index is not None:
            self._index = self._made_index()
        if self._index is None:
            from brainmigrate.codeindex import CodeIndex

            cache = Path(self._cache_dir) if self._cache_dir else None
            self._index = CodeIndex(self.roots[0].path, cache_dir=cache)
        return self._index

    def _similar(self, rel: str) -> str | None:
        if self._by_stem is None:
            self._by_stem = {}
            for path in self._first_index().files():
                stem, ext = _stem_ext(path.rpartition("/")[2])
                self._by_stem.setdefault(stem, []).append((path, ext))
        folder, _, name = rel.rpartition("/")
        stem, ext = _stem_ext(name)
        folder = folder.casefold()
        within = reachable(stem, self._by_stem)
        if not within:
            return None  # no stem can score STEM_CUTOFF: rapidfuzz is not even loaded
        from rapidfuzz import fuzz, process

        hits = process.extract(
            stem, within, scorer=fuzz.ratio, score_cutoff=STEM_CUTOFF, limit=None
        )
        scored = []
        for other, score, _ in hits:
            if other != stem and _DIGITS.sub("#", other) == _DIGITS.sub("#", stem):
                continue  # numbered siblings: another file, not a move
            for path, other_ext in self._by_stem[other]:
                ext_score = fuzz.ratio(ext, other_ext)
                if ext_score < EXT_CUTOFF:
                    continue
                near = fuzz.ratio(folder, path.rpartition("/")[0].casefold())
                scored.append((0.7 * score + 0.1 * ext_score + 0.2 * near, path))
        if not scored:
            return None
        scored.sort(key=lambda t: (-t[0], t[1]))
        if len(scored) > 1 and scored[0][0] - scored[1][0] < MARGIN:
            return None
        return scored[0][1]


def history_at_head(
    folder: str | os.PathLike,
    cache_dir: str | os.PathLike | None = None,
    heads: dict[str, tuple[str, bool] | None] | None = None,
) -> list[tuple[str, str, str]]:
    """``git.history_events(folder)``, kept in ``cache_dir`` (default
    ``user_cache_dir()``) for the commit ``HEAD`` names: a run at the same commit reads
    the file instead of walking the whole history again (``git log -M`` costs 20 ms on a
    small repository, seconds on a large one; ``HEAD``, ``git.head_state``, little).

    The file, ``git-renames-<key>.json`` (key: the folder and ``HEAD``'s commit), holds
    the events; one that is not what this function writes is made again. When the cache
    cannot be written, the answer is still given. Not cached in a shallow clone (its
    history grows with a fetch while ``HEAD`` stays). Empty without a commit or git.
    ``heads`` keeps ``HEAD`` by checkout for a run's roots (read once for roots in one
    checkout).
    """
    real = os.path.realpath(folder)
    head = _head(real, {} if heads is None else heads)
    if head is None:
        return []
    commit, shallow = head
    if shallow:
        return history_events(folder) or []
    key = blake2b(f"{real}\0{commit}".encode("utf-8", "surrogateescape"), digest_size=8)
    where = Path(cache_dir) if cache_dir else user_cache_dir()
    path = where / f"git-renames-{key.hexdigest()}.json"
    kept = _read_events(path, real, commit)
    if kept is not None:
        return kept
    events = history_events(folder)
    if events is None:
        return []  # git failed: nothing to keep
    data = {"folder": real, "head": commit, "events": events}
    with contextlib.suppress(OSError):
        where.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps(data))
    return events


def _read_events(path: Path, real: str, commit: str) -> list[tuple[str, str, str]] | None:
    """The events kept at ``path`` for ``real`` at ``commit``, or None when the file is
    missing, unreadable or not of the shape ``history_at_head`` writes."""
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("folder") != real or kept.get("head") != commit:
        return None
    events = kept.get("events")
    if not isinstance(events, list):
        return None
    out = []
    for e in events:
        if not (
            isinstance(e, list)
            and len(e) == 3
            and all(isinstance(x, str) for x in e)
            and e[0] in ("A", "D", "R")
        ):
            return None
        out.append((e[0], e[1], e[2]))
    return out


def reachable(stem: str, stems) -> list[str]:
    """The ``stems`` that may score ``STEM_CUTOFF`` against ``stem``, in their order.

    rapidfuzz's ``ratio`` is ``100 * (1 - d / (m + n))`` with ``d`` the insert/delete
    distance of strings of lengths ``m`` and ``n``; ``d`` is at least ``|m - n|`` and at
    least the sum of the differences of each character's count. A stem whose bound
    already costs more than ``(100 - STEM_CUTOFF) / 100 * (m + n)`` cannot reach the
    cutoff and is left out: an exact prefilter, so the hits are rapidfuzz's own.
    """
    room = (100.0 - STEM_CUTOFF) / 100.0
    m, counts, out = len(stem), None, []
    for other in stems:
        budget = room * (m + len(other))
        if abs(m - len(other)) > budget:
            continue
        if counts is None:
            counts = Counter(stem)
        theirs = Counter(other)
        if sum(((counts - theirs) + (theirs - counts)).values()) > budget:
            continue
        out.append(other)
    return out


def _head(real: str, heads: dict[str, tuple[str, bool] | None]) -> tuple[str, bool] | None:
    """The commit ``HEAD`` names in the checkout holding the folder ``real`` and whether
    the clone is shallow, kept in ``heads`` by checkout. None without a commit or git."""
    top = work_tree_top(real)
    if top is None:
        return None
    if top not in heads:
        heads[top] = head_state(top)
    return heads[top]


def _stem_ext(name: str) -> tuple[str, str]:
    """A file name's stem (before the first dot; a leading dot is part of it) and the rest,
    case folded."""
    name = name.casefold()
    dot = name.find(".", 1)
    return (name, "") if dot < 0 else (name[:dot], name[dot + 1 :])


def _is_file_in(root: Root, rel: str) -> bool:
    real = os.path.realpath(os.path.join(root.real, rel))
    return root.relative(real) is not None and os.path.isfile(real)


def _is_dir_in(root: Root, rel: str) -> bool:
    real = os.path.realpath(os.path.join(root.real, rel))
    return bool(root.relative(real)) and os.path.isdir(real)
