"""A root (one ``--root`` checkout) and how a cited path reads in the roots (SPEC.md
§Anchors 1): normalized (``normalize``), absolute or not (``is_absolute``), and the
readings of a relative path: the roots' tops, the notes file's folder and each folder
above it (``readings_of``). ``paths.PathResolver`` looks each reading up.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from reprlib import recursive_repr

from brainmigrate.fsutil import printable

__all__ = ["DRIVE", "Reading", "Root", "is_absolute", "normalize", "readings_of"]

#: A drive letter at the start of a path (``C:/``, ``/C:/``).
DRIVE = re.compile(r"/?([A-Za-z]):/")

#: A reading of a cited path: the root it is read in (None: each root in order), the
#: root-relative path (None: it leaves every root) and where its first segment lands.
Reading = tuple


def is_absolute(path: str) -> bool:
    """Paths starting with ``/``, ``~``, a drive letter (``C:/``) or ``//host``."""
    return path.startswith(("/", "~")) or bool(DRIVE.match(path))


def normalize(path: str) -> str | None:
    """Drop ``./`` and empty segments and pop a segment for each ``..``.

    Returns the POSIX path (absolute ones keep their lead), or None when ``..`` climbs
    past the top of a relative path.
    """
    lead = ""
    if path.startswith("//"):
        return path  # //host/share: never under a root
    if path.startswith("/"):
        lead = "/"
    out: list[str] = []
    for seg in path.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if out:
                out.pop()
            elif not lead:
                return None
            continue
        out.append(seg)
    return lead + "/".join(out)


@dataclass(slots=True, init=False, repr=False, eq=False)
class Root:
    """A checkout: ``path`` as an absolute path and ``real`` with symlinks resolved."""

    index: int
    path: str
    real: str

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(self, index, path, real) -> None:
        self.index = index
        self.path = path
        self.real = real

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(index={self.index!r}, path={self.path!r}, "
            f"real={self.real!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.index, self.path, self.real) == (other.index, other.path, other.real)
        return NotImplemented

    @classmethod
    def of(cls, index: int, folder: str | os.PathLike) -> Root:
        """Root number ``index`` (0: the first ``--root``) at ``folder``, made absolute."""
        absolute = os.path.abspath(os.fspath(folder))
        return cls(index, absolute, os.path.realpath(absolute))

    @property
    def label(self) -> str:
        """The root's path as text every output and the store can hold."""
        return printable(self.path)

    def relative(self, absolute: str) -> str | None:
        """``absolute`` relative to this root, or None when it lies outside."""
        for base in (self.path, self.real):
            if absolute == base:
                return ""
            if absolute.startswith(base.rstrip("/") + "/"):
                return absolute[len(base.rstrip("/")) + 1 :]
        return None


def readings_of(roots: Sequence[Root], path: str, folder: str | None, near: bool) -> list[Reading]:
    """The readings of relative ``path`` in ``roots`` (SPEC.md §Anchors 1): the roots'
    tops, and the notes ``folder`` and each folder above it up to its root's top
    (``near``: those first). Each is ``(root or None, rel or None, first)``: ``first``
    is where the path's first segment lands in that reading."""
    segs = path.split("/")
    lead = next((i for i, s in enumerate(segs) if s not in ("", ".", "..")), len(segs) - 1)
    head = "/".join(segs[: lead + 1])
    rel = normalize(path)
    top: Reading = (None, rel, normalize(head) if rel else None)
    beside: list[Reading] = []
    owner = None
    if folder is not None:
        owner = next((r for r in roots if r.relative(folder) is not None), None)
    if owner is not None:
        level = owner.relative(folder) or ""
        while True:  # the notes file's folder, each folder above it, the root's top
            at = f"{level}/" if level else ""
            rel = normalize(at + path)
            if rel is None:  # climbs above this root: into another root, or outside
                target = normalize(f"{owner.real}/{at}{path}")
                other = next((r for r in roots if r.relative(target)), None)
                if other is None:
                    beside.append((None, None, None))
                else:
                    first = other.relative(normalize(f"{owner.real}/{at}{head}"))
                    beside.append((other, other.relative(target), first))
            elif level:
                beside.append((owner, rel, normalize(at + head)))
            if not level:
                break
            level = level.rpartition("/")[0]
    readings = [*beside, top] if near else [top, *beside]
    out: list[Reading] = []
    seen = set()
    for r in readings:
        key = (r[0].index if r[0] is not None else None, r[1])
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out
