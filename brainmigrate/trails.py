"""Where a file went by git's history: its renames and deletes indexed once
(``RenameTrail``), the checked-out branch's own line of history deciding first
(``BranchTrail``), a checkout's history read once for any number of commits
(``History``). Read from ``git``, which runs git."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from brainmigrate.git import commit_parents, held_by, log_events, worktree_events


class RenameTrail:
    """Where a file went, by git's ``events`` (``history_events`` then ``worktree_events``,
    oldest first), indexed once for any number of paths (``follow``).

    A removal of a path seen again with no add of that path between is the same removal
    listed twice: by the branch commit that made it and by the merge that brought it in
    (against the merge's first parent). A rename among them wins (a branch's delete, then
    the merge's rename of the same path: the file was renamed), and the later of two
    renames (the merge's, which names where the branch left the file)."""

    def __init__(self, events: list[tuple[str, str, str]]) -> None:
        self._removals: dict[str, list[tuple[int, str, str]]] = {}
        self._arrivals: dict[str, list[tuple[int, str]]] = {}  # new path -> (seq, old)
        open_removal: set[str] = set()  # paths removed and not added since
        for seq, (kind, old, new) in enumerate(events):
            if kind == "A":
                open_removal.discard(old)
                continue
            if kind == "R":
                open_removal.discard(new)  # a rename adds its new path
                self._arrivals.setdefault(new, []).append((seq, old))
            gone = self._removals.setdefault(old, [])
            if old in open_removal:
                if kind == "R":
                    gone[-1] = (seq, kind, new)
                continue
            gone.append((seq, kind, new))
            open_removal.add(old)

    def removed(self) -> Iterable[str]:
        """Every path the events renamed or deleted (in no particular order)."""
        return self._removals.keys()

    def follow(self, path: str, *, from_start: bool = False) -> str | None:
        """Where the file at ``path`` went. Its trail starts at its last removal
        (``from_start``: its first, for a file known to be at ``path`` when the events
        begin, as a fingerprinted one); that removal must be a rename, then each later
        removal of the new path a rename too, to the path where it is now. None when a
        delete ends the trail (a file added again at that path and deleted later
        included: that later file is the one a note cites) or when no rename took it
        away."""
        gone = self._removals.get(path)
        if not gone:
            return None
        seq, kind, new = gone[0] if from_start else gone[-1]
        while kind == "R":  # each step is later than the one before: it ends
            later = next((r for r in self._removals.get(new, ()) if r[0] > seq), None)
            if later is None:
                return new
            seq, kind, new = later
        return None

    def source(self, path: str) -> str | None:
        """Where the file at ``path`` was when the events begin: the last rename that
        brought it to ``path`` followed back, each step by the last rename before it to
        that step's old path. None when no rename brought it there."""
        seq, found = None, None
        while True:
            came = [r for r in self._arrivals.get(path, ()) if seq is None or r[0] < seq]
            if not came:
                return found
            seq, path = came[-1]
            found = path


class BranchTrail:
    """Where a file went along the checked-out branch's own line of history: the trail
    of its first parents (``first``: each merge's changes against the branch it was
    made on, the net renames it brought in) decides when it ends at a path; where it
    ends in a delete or holds no removal of the path (a branch that renamed then
    rewrote the file, which a merge shows as a delete and an add; a file fingerprinted
    on a merged branch), the trail of every commit (``every``, made on first need)
    does. A rename on a branch whose merge threw it away is on no first-parent line, so
    it never wins over the rename the branch kept."""

    def __init__(self, first: RenameTrail, every: Callable[[], RenameTrail]) -> None:
        self._first = first
        self._make_every = every
        self._every: RenameTrail | None = None

    def _all(self) -> RenameTrail:
        if self._every is None:
            self._every = self._make_every()
        return self._every

    def removed(self) -> Iterable[str]:
        """Every path either trail renamed or deleted (in no particular order)."""
        return self._first.removed() | self._all().removed()

    def follow(self, path: str, *, from_start: bool = False) -> str | None:
        """``RenameTrail.follow`` of the first-parent trail, else of every commit's."""
        found = self._first.follow(path, from_start=from_start)
        if found is not None:
            return found
        return self._all().follow(path, from_start=from_start)

    def source(self, path: str) -> str | None:
        """``RenameTrail.source`` of the first-parent trail, else of every commit's."""
        found = self._first.source(path)
        return found if found is not None else self._all().source(path)


class History:
    """The rename history of the checkout holding ``folder``, read once for any number
    of fingerprint commits (``trail``): the first-parent and the whole history
    (``log_events``; the whole on first need), each commit's parents (``commit_parents``,
    when a commit is asked for) and what is not yet committed (``worktree_events``): at
    most four git runs, however many commits are asked. ``logs`` (``first_parent`` ->
    ``log_events``' answer) and ``parents`` (-> ``commit_parents``' answer) read them
    another way (kept across runs: ``githistory``)."""

    def __init__(
        self,
        folder: str | os.PathLike,
        logs: Callable[[bool], list[tuple[str, str, str, str]] | None] | None = None,
        parents: Callable[[], dict[str, tuple[str, ...]]] | None = None,
    ) -> None:
        self.folder = folder
        self._read_log = logs or (lambda fp: log_events(folder, first_parent=fp))
        self._read_parents = parents or (lambda: commit_parents(folder))
        self._logs: dict[bool, list[tuple[str, str, str, str]]] = {}
        self._parents: dict[str, tuple[str, ...]] | None = None
        self._worktree: list[tuple[str, str, str]] | None = None
        self._trails: dict[str | None, BranchTrail] = {}
        self._held: dict[bool, tuple[dict[str, int], dict[str, int]]] = {}

    def trail(self, since: str | None) -> tuple[BranchTrail, bool]:
        """The ``BranchTrail`` of the events of the commits ``since`` does not hold (that
        are not among its ancestors: what came after it on every line of history merged
        into ``HEAD`` since), then those not yet committed; and whether they start at
        ``since`` (then a file's trail starts at its first removal, else at its last).
        ``since`` None, or no commit of ``HEAD``'s history: the whole history, False."""
        if since and self._parents is None:
            self._parents = self._read_parents()
        known = since if since and self._parents and since in self._parents else None
        if known not in self._trails:
            self._trails[known] = BranchTrail(
                self._sliced(True, known), lambda: self._sliced(False, known)
            )
        return self._trails[known], known is not None

    def _sliced(self, first_parent: bool, since: str | None) -> RenameTrail:
        """The ``RenameTrail`` of one history's events, but those of the commits
        ``since`` holds (itself and its ancestors: ``git.held_by``, worked out once per
        history for its commits with events)."""
        if first_parent not in self._logs:
            self._logs[first_parent] = self._read_log(first_parent) or []
        if self._worktree is None:
            self._worktree = worktree_events(self.folder)
        events = self._logs[first_parent]
        if since is not None:
            if first_parent not in self._held:
                commits = list(dict.fromkeys(e[0] for e in events))
                self._held[first_parent] = (
                    {c: i for i, c in enumerate(commits)},
                    held_by(self._parents or {}, commits),
                )
            bits, held = self._held[first_parent]
            mask = held.get(since, 0)
            events = [e for e in events if not mask >> bits[e[0]] & 1]
        return RenameTrail([*((k, a, b) for _c, k, a, b in events), *self._worktree])
