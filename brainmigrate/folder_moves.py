"""Folders that moved (SPEC.md §Anchors 1, folder citations; docs/check.md "Fixing moved
paths"): what git last held under a folder, whether another folder holds it all, and how
``check --fix`` reads a folder citation as written (``tools/legacy-import/``).

``hints.MoveHints`` finds where a gone folder went; ``fix`` rewrites its citations with
what is here, once the move is certain (``certain_folder_move``).
"""

from __future__ import annotations

import os
import unicodedata
from typing import Protocol, TypeVar

from brainmigrate.git import run_git
from brainmigrate.read.tokens import path_like
from brainmigrate.roots import Root, is_absolute, normalize


class Move(Protocol):
    """What this module reads of a ``hints.Move`` (hints is above it: it imports this)."""

    @property
    def root(self) -> Root: ...
    @property
    def old(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def how(self) -> str: ...


M = TypeVar("M", bound=Move)


def folder_files(folder: str | os.PathLike, rel: str) -> list[str] | None:
    """The files git last held under the folder ``rel`` of the checkout folder ``folder``,
    relative to ``rel``, sorted: in ``HEAD`` when it holds them (a folder moved but not
    yet committed), else just before the last commit that touched ``rel`` (the one that
    removed it). None outside git or when git never held a file there."""
    spec = f":(literal)./{rel}/"  # a folder named a[1] is no glob
    listed = run_git(folder, "ls-tree", "-r", "--name-only", "-z", "HEAD", "--", spec)
    if not listed:
        last = run_git(folder, "rev-list", "-n", "1", "HEAD", "--", spec)
        if not last or not last.strip():
            return None
        commit = last.strip().decode("ascii")
        listed = run_git(folder, "ls-tree", "-r", "--name-only", "-z", f"{commit}^", "--", spec)
    if not listed:
        return None
    lead = rel + "/"
    tails = sorted(
        name[len(lead) :]
        for name in (os.fsdecode(n) for n in listed.split(b"\0") if n)
        if name.startswith(lead)
    )
    return tails or None


def same_files(root: Root, old: str, new: str) -> bool:
    """Whether the folder ``new`` (relative to ``root``) holds, at the same paths under it,
    every file git last held under the folder ``old`` (``hints.folder_files``). False
    outside git or when git held none."""
    held = folder_files(root.path, old)
    if not held:
        return False
    base = os.path.join(root.real, new)
    return all(os.path.isfile(os.path.join(base, tail)) for tail in held)


def certain_folder_move(move: M, unsafe: bool) -> tuple[M, str] | str:
    """``(move, how)`` for a folder ``move`` that ``hints`` found by its name
    (``same-folder``) when it is certain, else the reason it is not: the folder holds every
    file git last held under the old one (``same-files``); with ``unsafe``, it need not
    (``same-folder``). A ``git-rename`` move is certain as it is."""
    if move.how == "git-rename":
        return move, "git-rename"
    if same_files(move.root, move.old, move.path):
        return move, "same-files"
    if unsafe:
        return move, "same-folder"
    return (
        f"the only folder of that name is {move.path}/, but it does not hold every"
        " file git shows the old folder held (--unsafe-fixes applies it)"
    )


def is_folder_text(text: str) -> bool:
    """Whether a citation as written names a folder: it ends in ``/`` (or ``\\``)."""
    return text.endswith(("/", "\\")) and text.strip("/\\") != ""


def folder_cited(text: str) -> str | None:
    """A citation written as a folder (``tools/legacy-import/``) as a POSIX path with its
    trailing ``/``, when it is a path by every other rule of a cited path (no URL, glob,
    variable: ``tokens.path_like`` of a file in it); else None."""
    if not is_folder_text(text):
        return None
    unified = text.replace("\\", "/")
    return unified if path_like(unified + "x.md") is not None else None


def names_folder(new: str, link: bool, folder: str, target: Move) -> bool:
    """Whether the folder citation ``new`` (with its trailing ``/`` or without) names the
    folder ``target.path`` of ``target.root``, which holds it: read relative to the root
    (a path under it when absolute), and a link target also relative to the notes file's
    ``folder``."""
    cited = folder_cited(new if is_folder_text(new) else new + "/")
    if cited is None:
        return False
    root = target.root
    if is_absolute(cited):
        rel = root.relative(normalize(os.path.expanduser(cited)) or cited)
        readings = [rel] if rel else []
    else:
        readings = [normalize(cited)]
        base = root.relative(folder)
        if link and base is not None:
            readings.append(normalize(f"{base}/{cited}" if base else cited))
    real = os.path.realpath(os.path.join(root.real, target.path))
    holds = bool(root.relative(real)) and os.path.isdir(real)
    return holds and any(r is not None and _same(r, target.path) for r in readings)


def _same(a: str, b: str) -> bool:
    return unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b)
