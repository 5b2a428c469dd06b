"""Cited paths against the ``--root`` checkouts (SPEC.md §Anchors 1): found (a file or a
folder anchor), gone, unresolved, ignored or outside.

Every question is asked of the roots' ``RootKnowledge`` (sets and dicts built once per run),
so a token costs a few set hits. Only a path the listing lacks is looked at on disk, and
only after its real path is checked to lie under its root: nothing outside a root is ever
read, and a symlink leading out is ``outside``. Results are cached per run.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from urllib.parse import unquote

from brainmigrate.citing import MARKDOWN, names_heading
from brainmigrate.fsutil import printable
from brainmigrate.knowledge import RootKnowledge
from brainmigrate.patterns import lazy
from brainmigrate.roots import DRIVE, Reading, Root, is_absolute, normalize, readings_of
from brainmigrate.shapes import plural

__all__ = ["GONE", "UNRESOLVED", "PathResolver"]

_PERCENT = lazy(r"%[0-9A-Fa-f]{2}")
#: Longer relative paths are held by no root (Linux's PATH_MAX, in characters).
_PATH_MAX = 4096
_MISSING = object()


# A lookup result: ("found", root index, rel path[, "file" | "folder"]) | ("outside", reason)
# | ("gone"[, name]) | ("unresolved"[, name]) | ("ignored", rel path)
Lookup = tuple
GONE: Lookup = ("gone",)
UNRESOLVED: Lookup = ("unresolved",)
_CLIMBS = ("outside", "'..' climbs above the root")
_NO_ROOT = ("outside", "absolute path under no root")


class PathResolver:
    """Looks cited paths up in the roots, per SPEC.md §Anchors 1; never reads outside a root.

    ``resolve`` is the whole rule; ``lookup`` and ``holds`` are its
    narrower forms. ``listing`` lists the first root (``(way, paths)``; default
    ``knowledge.default_listing``, shared with its name index by ``Resolver``);
    ``cache_dir`` keeps each root's git history across runs. Results are cached.
    """

    def __init__(
        self,
        roots: Sequence[Root],
        listing: Callable[[], tuple[str, Iterable[str]]] | None = None,
        cache_dir: str | os.PathLike | None = None,
    ) -> None:
        self.roots = list(roots)
        self.knowledge = [
            RootKnowledge(r, listing if i == 0 else None, cache_dir)
            for i, r in enumerate(self.roots)
        ]
        self._cache: dict[tuple, Lookup | None] = {}
        self._at_cache: dict[tuple[int, str, str], Lookup | None] = {}
        self._tops: dict[str, bool] = {}
        self._cited: dict[tuple[int, str], tuple] = {}
        self._places: dict[str, tuple[int, str] | None] = {}

    # --- the rule ---------------------------------------------------------------------

    def resolve(
        self,
        cited: str,
        folder: str | None = None,
        *,
        near: bool = False,
        kind: str = "file",
        link: bool = False,
    ) -> Lookup | None:
        """Where cited path ``cited`` (POSIX, as written: ``@``, ``~``, ``./`` kept) is.

        ``folder`` is the notes file's own folder (absolute); ``near`` reads it relative
        to that folder first (``./``, ``../`` and link targets), else the roots' tops come
        first. ``kind`` is ``"file"``, ``"folder"`` (a path ending in ``/``) or
        ``"maybe"`` (a path whose last segment has no extension: a citation only when a root
        holds it or a git history held it). ``link`` (a Markdown link target): a citation
        whatever its shape, gone when no reading finds it, never unresolved (SPEC.md
        §Anchors 1).

        Returns ``("found", root_index, rel, "file" | "folder")``, ``("gone", name)``,
        ``("unresolved", name)`` (``name`` the path as written, normalized),
        ``("ignored", rel)``, ``("outside", reason)``, or None when it is no citation (a
        ``maybe`` nothing knows; a token starting ``@`` whose first segment no root holds).
        """
        # keyed by what the answer depends on: the notes folder only as the roots see it
        # (a folder under no root reads like any other), so notes files in many folders
        # of one checkout level share their answers
        place = self._places.get(folder, _MISSING) if folder is not None else None
        if place is _MISSING:
            place = self._places[folder] = self._place(folder)  # type: ignore[index]
        key = (cited, place, near, kind, link)
        hit = self._cache.get(key, _MISSING)
        if hit is _MISSING:
            hit = self._resolve(cited, folder, near, kind, link)
            self._cache[key] = hit
        return hit  # type: ignore[return-value]

    def _place(self, folder: str) -> tuple[int, str] | None:
        """Where notes ``folder`` is as ``roots.readings_of`` reads it (the first root
        holding it, and the folder in that root), or None: all a resolution asks of it."""
        for root in self.roots:
            rel = root.relative(folder)
            if rel is not None:
                return (root.index, rel)
        return None

    def _resolve(self, cited, folder, near, kind, link) -> Lookup | None:
        path = unicodedata.normalize("NFC", cited) if not cited.isascii() else cited
        if path.endswith("/") and len(path) > 1:
            kind = "folder"
        name = _named(path, kind)
        aliased = self._alias(path, kind, name, link)
        if aliased is not None and aliased[0] == "found":
            return aliased
        plain = self._unaliased(path, folder, near, kind, link, name)
        if aliased is not None and (plain is None or plain[0] != "found"):
            return aliased  # the alias judges what no reading finds (@/lib/gone.ts)
        return plain

    def _unaliased(self, path, folder, near, kind, link, name) -> Lookup | None:
        """``_resolve`` of a path no alias finds: packages, absolute paths, readings."""
        if path.startswith("@"):
            packaged = self._package(path, kind, name, link)
            if packaged is not None:
                return packaged
            path = path[1:]
            if not self._top(path.split("/", 1)[0]):
                return None  # a dependency's file (@types/node/index.d.ts): no citation
            name = _named(path, kind)
        if is_absolute(path):
            return self._absolute(path, kind, name, link)
        readings = readings_of(self.roots, path, folder, near)
        found, outside = self._first_found(readings, kind)
        if found is not None:
            return found
        decoded = unquote(path) if _PERCENT.search(path) else path
        if decoded != path:
            again, _ = self._first_found(readings_of(self.roots, decoded, folder, near), kind)
            if again is not None:
                return again
        inside = [r for r in readings if r[1]]
        if not inside:
            if any(r[1] == "" for r in readings):
                return None  # a root's own top (``./``, the checkout's folder): no citation
            return outside or _CLIMBS
        if not link and any(self._under_file(r) for r in inside):
            return None  # "A/B" where A is a file (package.json/package-lock.json): two names
        if kind == "maybe" and not link:  # a link target is a citation by its place
            # no path unless a history held it (SPEC.md §Anchors 1), ignored or not
            held = [r for r in inside if any(k.held(r[1]) for k in self.knowledge)]
            if not held:
                # under an ignored folder where its first segment lands (vendor/bin/pint):
                # ignored on every machine, installed or not; else no path
                under = next((r for r in inside if self._under_ignored(r)), None)
                return ("ignored", under[1]) if under is not None else None
            return ("ignored", held[0][1]) if self._ignored(held[0], kind) else ("gone", name)
        # the first reading that a root knows or ignores judges it: a later reading that git
        # ignores (the notes folder's ``w/*`` past its ``!w/keep.md``) does not hide a gone
        # ``src/Gone.kt`` that the roots' tops know
        judged = next((r for r in inside if self._first_known(r) or self._ignored(r, kind)), None)
        if judged is not None:
            if self._ignored(judged, kind):
                return ("ignored", judged[1])
            hit = self._find(judged, kind)
            if hit is not None and hit[0] == "outside":
                return hit
            return ("gone", name)
        hit = self._find(inside[0], kind)
        if hit is not None and hit[0] == "outside":
            return hit
        # no reading's first segment is held: judged under the first reading alone
        known = self._known(inside[0])
        if not known and decoded != path:
            again = [r for r in readings_of(self.roots, decoded, folder, near) if r[1]]
            known = bool(again) and self._known(again[0])
        return ("gone" if known or link else "unresolved", name)

    def _first_known(self, reading: Reading) -> bool:
        """Whether a root (the reading's own, or any) holds the file or folder the
        reading's first segment lands on."""
        root, _, first = reading
        if not first:
            return False
        if "/" not in first:
            return self._top(first)
        ks = self.knowledge if root is None else [self.knowledge[root.index]]
        return any(first in k.folders or first in k.files for k in ks)

    def _first_found(self, readings: list[Reading], kind: str) -> tuple[Lookup | None, Lookup]:
        """The first reading a root holds, and the first ``outside`` met on the way."""
        outside = None
        for reading in readings:
            if not reading[1]:
                continue
            hit = self._find(reading, kind)
            if hit is None:
                continue
            if hit[0] == "found":
                return hit, outside
            outside = outside or hit
        return None, outside

    def _find(self, reading: Reading, kind: str) -> Lookup | None:
        root, rel = reading[0], reading[1]
        if root is not None:
            return self._at(root.index, rel, kind)
        outside = None
        for i in range(len(self.roots)):
            hit = self._at(i, rel, kind)
            if hit is not None:
                if hit[0] == "found":
                    return hit
                outside = outside or hit
        return outside

    def _at(self, index: int, rel: str, kind: str) -> Lookup | None:
        """Found in root ``index`` (a file, or a folder), outside (a symlink on the way
        points out), or None."""
        key = (index, rel, kind)
        hit = self._at_cache.get(key, _MISSING)
        if hit is _MISSING:
            hit = self._at_disk(index, rel, kind)
            self._at_cache[key] = hit
        return hit  # type: ignore[return-value]

    def _at_disk(self, index: int, rel: str, kind: str) -> Lookup | None:
        k = self.knowledge[index]
        if len(rel) > _PATH_MAX:
            return None  # no file system holds it (and resolving it would be quadratic)
        if kind != "folder" and rel in k.files:
            return ("found", index, k.actual(rel), "file")
        if rel in k.folders:
            return ("found", index, rel, "folder")
        # Not listed: a symlink on the way, a folder of untracked files, a file git ignores.
        root = self.roots[index]
        try:
            real = os.path.realpath(os.path.join(root.real, rel))
        except (OSError, ValueError):  # a NUL in the text: no file system holds it
            return None
        if root.relative(real) is None:
            return ("outside", "a symlink points out of the root")
        if k.ignored(rel, kind == "folder"):
            return None
        try:
            mode = os.stat(real).st_mode
        except (OSError, ValueError):
            return None
        if stat.S_ISREG(mode) and kind != "folder":
            return ("found", index, rel, "file")
        if stat.S_ISDIR(mode) and kind != "file":
            return ("found", index, rel, "folder")
        return None

    def _under_file(self, reading: Reading) -> bool:
        """Whether a folder on the reading's way is a file a root holds (``README.md`` of
        ``README.md/CLAUDE.md``): no path lies under a file. Where SPEC is silent: such a
        token is two names joined by ``/``, no citation."""
        root, rel = reading[0], reading[1]
        if len(rel) > _PATH_MAX:
            return False  # held by no root anyway; and the prefixes would cost n² here
        ks = self.knowledge if root is None else [self.knowledge[root.index]]
        at = rel.find("/")
        while at > 0:
            if any(rel[:at] in k.files for k in ks):
                return True
            at = rel.find("/", at + 1)
        return False

    def _under_ignored(self, reading: Reading) -> bool:
        """Whether the folder a reading's first segment lands on is ignored (and so the
        reading): ``vendor/bin/pint`` with ``/vendor`` ignored, not ``origin/tmp/x``."""
        root, rel, first = reading
        if not first or first == rel:
            return False
        return self._ignored((root, first, first), "folder") and self._ignored(reading, "maybe")

    def _ignored(self, reading: Reading, kind: str) -> bool:
        """Whether git ignores the reading (SPEC.md §Anchors 1 "Git-ignored paths"): its
        ignore rules match it and no root tracks it. A file the root's git history held
        was tracked (added past its ignore rule: ``git add -f``), no runtime file: gone
        when it is no more, never ignored."""
        root, rel = reading[0], reading[1]
        folder = kind == "folder"
        ks = self.knowledge if root is None else [self.knowledge[root.index]]
        return any(k.ignored(rel, folder) and (folder or not k.held_file(rel)) for k in ks)

    def _in_root(self, index: int, rel: str, kind: str, name: str, link: bool, gone: bool):
        """``rel`` read in root ``index`` only: found, outside, ignored, else gone (when
        ``gone``, or something of it is known) or unresolved."""
        hit = self._at(index, rel, kind) if rel else None
        if hit is not None:
            return hit
        if not rel:
            return None  # the root's own folder: nothing to anchor, nothing gone
        if kind == "maybe" and not self.knowledge[index].held(rel):
            # no path unless the history held it, or it lies under an ignored folder
            reading = (self.roots[index], rel, rel.split("/", 1)[0])
            return ("ignored", rel) if self._under_ignored(reading) else None
        if self.knowledge[index].ignored(rel, kind == "folder"):
            return ("ignored", rel)
        if kind == "maybe":
            return ("gone", name)
        first = rel.split("/", 1)[0]
        known = self._known((self.roots[index], rel, first))
        return ("gone" if gone or link or known else "unresolved", name)

    def _absolute(self, path: str, kind: str, name: str, link: bool) -> Lookup | None:
        """An absolute path: under a root, read in that root only; else read after the
        last segment naming a root's folder or its remote's repository; else outside, or
        None for a ``maybe`` (``/api/v2``: a path by its shape only when a root knows it, so
        under no root it is no citation, SPEC.md §Anchors 1 "What the roots know")."""
        no_root = None if kind == "maybe" else _NO_ROOT
        if path.startswith("~"):
            path = os.path.expanduser(path)
            if path.startswith("~"):
                return None if kind == "maybe" else ("outside", "home folder unknown")
        if path.startswith("//"):
            return no_root
        drive = DRIVE.match(path)
        if drive:
            segs = [s for s in path[drive.end() :].split("/") if s]
        else:
            norm = normalize(path)
            for root in self.roots:
                rel = root.relative(norm)
                if rel is not None:
                    return self._in_root(root.index, rel, kind, name, link, True)
            segs = norm.split("/")[1:]
        best = None
        for i, k in enumerate(self.knowledge):
            names = k.folder_names()
            for j in range(len(segs) - 1, -1, -1):
                if segs[j].lower() in names:
                    if best is None or j > best[0]:
                        best = (j, i)
                    break
        if best is not None:
            rel = normalize("/".join(segs[best[0] + 1 :]))
            return self._in_root(best[1], rel, kind, name, link, False) if rel else None
        return no_root

    def _alias(self, path: str, kind: str, name: str, link: bool) -> Lookup | None:
        """``path`` read through a ``tsconfig``/``jsconfig`` alias of a root: the first
        target a root holds, else judged under the first target; None when no alias
        matches."""
        for i, k in enumerate(self.knowledge):
            aliases = k.aliases() if k.files else ()
            for prefix, suffix, targets in aliases:
                if not path.startswith(prefix) or not path.endswith(suffix):
                    continue
                middle = path[len(prefix) : len(path) - len(suffix)]
                rels = [normalize(head + middle + tail) for head, tail in targets]
                rels = [r for r in rels if r]
                for rel in rels:
                    hit = self._at(i, rel, kind)
                    if hit is not None and hit[0] == "found":
                        return hit
                if rels:
                    return self._in_root(i, rels[0], kind, name, link, False)
        return None

    def _package(self, path: str, kind: str, name: str, link: bool) -> Lookup | None:
        """``@scope/name/rest`` read under the folder of the workspace package
        ``@scope/name``; None when no root holds that package."""
        parts = path.split("/", 2)
        if len(parts) < 3:
            return None
        package = f"{parts[0]}/{parts[1]}"
        for i, k in enumerate(self.knowledge):
            where = k.packages().get(package)
            if where is not None:
                rel = normalize(f"{where}/{parts[2]}" if where else parts[2])
                if rel:
                    return self._in_root(i, rel, kind, name, link, False)
        return None

    def resolve_in(self, index: int, rel: str, kind: str = "file") -> Lookup | None:
        """Root-relative ``rel`` read in root ``index`` only (a link into the root's own
        repository): as ``resolve``, with something of it known to that root or not."""
        path = unicodedata.normalize("NFC", rel)
        if path.endswith("/"):
            kind = "folder"
        norm = normalize(path)
        if not norm:
            return None
        hit = self._in_root(index, norm, kind, _named(path, kind), False, False)
        if hit is not None and hit[0] != "found" and _PERCENT.search(norm):
            again = self._at(index, normalize(unquote(norm)) or norm, kind)
            if again is not None and again[0] == "found":
                return again
        return hit

    def check_cited(
        self, lines: tuple[int, int] | None, fragment: str | None, index: int, rel: str
    ) -> list[tuple[str, str]]:
        """The warnings of a citation found at ``rel`` in root ``index`` with ``lines``
        and ``fragment`` (as written, or None): a line form past the end of the file
        (BM204), a ``#fragment`` naming no heading of a Markdown file (BM205), per SPEC.md
        §Anchors 1 "Lines and fragments are checked"; as ``(code, message)``. What the
        file is asked is asked once per run."""
        known = self._cited.get((index, rel))
        if known is None:
            known = self._cited[index, rel] = (
                self.knowledge[index],
                unicodedata.normalize("NFC", rel),
                printable(rel),
                rel.lower().endswith(MARKDOWN),
            )
        k, nfc, shown, markdown = known
        out = []
        if lines is not None:
            count = k.line_count(nfc)
            if count is not None and lines[0] > count:
                past = f"line {lines[0]} is past the end of {shown} ({plural(count, 'line')})"
                out.append(("BM204", past))
        if markdown and fragment:
            fragment = unquote(fragment) if "%" in fragment else fragment
            anchors = k.heading_anchors(nfc) if fragment else None
            if anchors is not None and not names_heading(fragment, anchors):
                out.append(("BM205", f"no heading #{printable(fragment)} in {shown}"))
        return out

    # --- what is known ----------------------------------------------------------------

    def _known(self, reading: Reading) -> bool:
        """Whether something of a reading no root holds is known to a root (gone, not
        unresolved): the file or folder its first segment lands on, a file of its name,
        or the git history (the path, or anything under its first segment); cheapest test
        first, the git history last."""
        root, rel, first = reading
        if not rel:
            return False
        if self._first_known(reading):
            return True
        last = rel.rsplit("/", 1)[-1]
        if any(k.named(last) for k in self.knowledge):
            return True
        ks = self.knowledge if root is None else [self.knowledge[root.index]]
        for k in ks:
            h = k.history()
            if h is not None and (rel in h.paths or first in h.folders or first in h.paths):
                return True
        return False

    def _top(self, name: str) -> bool:
        """Whether a root holds a file or folder ``name`` at its top."""
        hit = self._tops.get(name)
        if hit is None:
            hit = any(name in k.tops for k in self.knowledge)
            if not hit and "/" not in name and name not in ("", ".", ".."):
                hit = any(os.path.lexists(os.path.join(r.real, name)) for r in self.roots)
            self._tops[name] = hit
        return hit

    # --- narrower forms ---------------------------------------------------------------

    def lookup(self, cited: str, link: bool = False) -> Lookup:
        """Where ``cited`` is, read relative to the roots' tops: ``("found", root_index,
        rel)``, ``("outside", reason)``, ``("gone",)``, ``("unresolved",)`` or
        ``("ignored", rel)``; a Markdown link target (``link``) is gone, never
        unresolved."""
        hit = self.resolve(cited, link=link)
        if hit is None:
            return UNRESOLVED
        if hit[0] == "found":
            return hit[:3]
        if hit[0] in ("gone", "unresolved"):
            return GONE if hit[0] == "gone" else UNRESOLVED
        return hit

    def holds(self, cited: str) -> bool:
        """Whether a root holds a regular file at ``cited`` (no gone/unresolved verdict, so
        nothing but the path is looked at)."""
        path = unicodedata.normalize("NFC", cited)
        if is_absolute(path) or path.startswith("@"):
            hit = self.resolve(cited)
            return hit is not None and hit[0] == "found" and hit[3] == "file"
        rel = normalize(path)
        if not rel:
            return False
        hit = self._find((None, rel, None), "file")
        return hit is not None and hit[0] == "found" and hit[3] == "file"

    def history_unavailable(self) -> list[tuple[Root, str]]:
        """The roots whose history was needed and could not be read whole, with why."""
        out = []
        for root, k in zip(self.roots, self.knowledge, strict=True):
            h = k._history if k._history_read else None
            if h is not None and h.unavailable:
                out.append((root, h.unavailable))
        return out


def _named(path: str, kind: str) -> str:
    """How a citation no root holds is named: normalized as written, a folder with its
    trailing ``/`` (``tools/legacy-import/``), so reports and "moved?" hints tell it from
    a file."""
    name = normalize(path) or path
    return name + "/" if kind == "folder" and not name.endswith("/") else name
