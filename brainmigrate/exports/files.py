"""File names and writing for exports: safe stems per scope, the output check, and
publishing (all or nothing, through ``fsutil``).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from brainmigrate.exports.common import (
    ExportError,
    _cap,
)
from brainmigrate.fsutil import (
    printable,
    publish_bytes,
    publish_folder,
    remove_leftovers,
)

#: A file stem that is safe as it is: starts with a letter or digit, then word characters,
#: dots and hyphens, lower case, no "..".
_SAFE_STEM = re.compile(r"[^\W_][\w.-]*")

#: Names Windows reserves, whatever the extension (``nul.txt.md`` is ``nul`` to it).
_RESERVED = frozenset(
    ["con", "prn", "aux", "nul"]
    + [f"{dev}{i}" for dev in ("com", "lpt") for i in [*"123456789", "¹", "²", "³"]]
)

#: The longest file stem a scope gets, in UTF-8 bytes: with ``.md`` and the temporary
#: name around it (``fsutil.temp_prefix``) far below the 255 bytes file systems take.
STEM_BYTES = 120


def sanitize(text: str, fallback: str = "scope") -> str:
    """A safe, lower-case file stem for ``text``: word characters, dots and hyphens only,
    no leading dot or hyphen, no ``..``, no name Windows reserves, at most ``STEM_BYTES``
    bytes (a longer one is cut and ends in ``-`` and 8 hex digits of ``text``'s SHA-256,
    so two texts alike in their first bytes get two stems); ``fallback`` when nothing is
    left. Never a path: ``../../etc`` gives ``etc``."""
    s = unicodedata.normalize("NFKC", text).lower()
    s = re.sub(r"[^\w.-]+", "-", s)
    s = re.sub(r"\.{2,}", ".", s)
    s = re.sub(r"-{2,}", "-", s)
    s = re.sub(r"(?:^|(?<=-))[.-]+|[.-]+$", "", s).strip(".-_")
    s = re.sub(r"-[.-]+", "-", s)
    if not s or windows_reserved(s):
        s = f"{fallback}-{s}" if s else fallback
    if len(s.encode("utf-8")) > STEM_BYTES:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        head = s.encode("utf-8")[: STEM_BYTES - 9].decode("utf-8", "ignore")
        s = f"{head.rstrip('.-_')}-{digest}"
    return s


def windows_reserved(stem: str) -> bool:
    """Whether Windows reserves a file named ``stem`` (with any extension): ``nul``,
    ``NUL.txt``, ``com1.md`` … (case-insensitive)."""
    return stem.split(".", 1)[0].rstrip(" ").lower() in _RESERVED


def scope_stems(scopes: Iterable[str], reserved: Iterable[str] = ()) -> dict[str, str]:
    """A unique file stem per scope.

    ``area:<name>`` keeps ``<name>`` when it is a safe lower-case stem (so importing the
    file gives the scope back); every other scope is ``sanitize``d (``repo`` -> ``repo``,
    ``file:src/Foo.kt`` -> ``file-src-foo.kt``). Clashes (also with ``reserved`` stems,
    compared case-insensitively) get ``-2``, ``-3`` … in sorted scope order.
    """
    taken = {r.lower() for r in reserved}
    out: dict[str, str] = {}
    scopes = sorted(set(scopes))
    later = []
    for scope in scopes:
        name = scope[5:] if scope.startswith("area:") else ""
        if (
            name
            and _SAFE_STEM.fullmatch(name)
            and name == name.lower()
            and ".." not in name
            and not name.endswith(".")
            and not windows_reserved(name)
            and len(name.encode("utf-8")) <= STEM_BYTES
            and name not in taken
        ):
            out[scope] = name
            taken.add(name)
        else:
            later.append(scope)
    for scope in later:
        base = sanitize(scope[5:] if scope.startswith("area:") and scope[5:] else scope)
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}-{n}"
        out[scope] = name
        taken.add(name)
    return out


def slug(text: str, limit: int = 48) -> str:
    """Kebab-case ASCII words of ``text``, cut at a word boundary to ``limit`` characters."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    s = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if len(s) > limit:
        s = s[: limit + 1]
        s = s[: s.rfind("-")] if "-" in s else s[:limit]
    return s.strip("-")


# ------------------------------------------------------------------------------ writing


def _tidy(out: Path, folder: bool, notes: list[str]) -> None:
    """Remove the hidden temporary files (and folders) a killed export to ``out`` left:
    beside it, made for its name, and in it, when it is a folder (``fsutil.leftovers``
    knows them by name and by their process being gone); add a note naming them."""
    parent = out.parent if str(out.parent) else Path(".")
    removed = [parent / n for n in remove_leftovers(parent, out.name)]
    if folder and out.is_dir() and not out.is_symlink():
        removed += [out / n for n in remove_leftovers(out)]
    if removed:
        names = [printable(str(p)) for p in removed]
        notes.append(
            f"removed {len(removed)} temporary files a killed export left: {', '.join(_cap(names))}"
        )


def publish_file(path: Path, text: str) -> list[str]:
    """Write ``text`` to ``path`` through a temporary file and a rename; ``[]`` when the
    file already holds these bytes, else ``[path.name]``. Raises ``ExportError``."""
    try:
        return publish_bytes(path, text.encode("utf-8"))
    except OSError as exc:
        raise ExportError(
            f"--output {path}: cannot write ({exc.strerror or exc}); free space or pass"
            " --output with another path"
        ) from None


def publish(folder: Path, files: dict[str, str]) -> tuple[list[str], list[str]]:
    """Write ``files`` (name -> text) into ``folder`` all or nothing (``fsutil.publish_folder``).

    Returns ``(written names, names of other files in the folder)``; raises ``ExportError``,
    also when a name to write is in the folder as something else than a regular file.
    """
    data = {name: text.encode("utf-8") for name, text in files.items()}
    try:
        if folder.exists():
            for name in data:
                target = folder / name
                if target.is_symlink() or (target.exists() and not target.is_file()):
                    raise ExportError(
                        f"--output {folder}: {name} exists and is not a regular file; "
                        "move it away or pass another --output folder"
                    )
        return publish_folder(folder, data)
    except OSError as exc:
        raise ExportError(
            f"--output {folder}: cannot write: {exc.strerror or exc}; "
            "nothing written (pass --output with a writable folder)"
        ) from None
