"""The ``knowledge`` export: a flat folder of Markdown entries with YAML frontmatter: a
unique kebab-case ``name`` (the file stem), ``description``, ``type``, times, anchors
with the SHA-256 of the anchored file, or a ``source`` when there is no anchor.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Sequence

from brainmigrate import inputs
from brainmigrate.exports.common import (
    ExportError,
)
from brainmigrate.exports.files import slug
from brainmigrate.model import KINDS, FactRecord
from brainmigrate.read.notation import fold
from brainmigrate.roots import root_folder
from brainmigrate.shapes import one_line, shorten

#: Knowledge entry types (seed 000): facts about the project, about third parties, and the
#: user's durable instructions.
TYPES = ("project", "reference", "feedback")


def parse_type_map(values: Iterable[str]) -> dict[str, str]:
    """``["blocker=feedback", …]`` -> ``{"blocker": "feedback"}``; kinds not named map to
    ``project``. Raises ``ExportError`` naming the bad entry."""
    out: dict[str, str] = {}
    for value in values or ():
        kind, sep, kind_type = value.partition("=")
        kind, kind_type = kind.strip(), kind_type.strip()
        if not sep or kind not in KINDS or kind_type not in TYPES:
            raise ExportError(
                f"--type-map {value!r}: give KIND=TYPE with KIND one of {', '.join(KINDS)} "
                f"and TYPE one of {', '.join(TYPES)}"
            )
        out[kind] = kind_type
    return out


def knowledge_files(
    facts: Sequence[FactRecord],
    extra: dict[int, dict],
    type_map: dict[str, str],
    base: str | None = None,
) -> dict[str, str]:
    """One ``<name>.md`` per fact: YAML frontmatter (seed 000) and a body.

    ``name`` is the kebab-case slug of the text and the id (``app-image-runs-on-k5``), so
    it is unique, stable across exports and safe as a file name. Anchored files are hashed
    (SHA-256 of their bytes) when they exist as regular files inside their root; a folder
    anchor is written ``{root, path, kind: folder}``, without a hash. ``root`` is the root
    as the store records it; a relative one is read in the store's folder ``base``.
    Values from input in the frontmatter are YAML double-quoted scalars (``yaml_scalar``);
    a file name in the body (provenance, gone paths) is ``escapes.one_line``, so a line
    break in it forges no line or heading.
    """
    digests: dict[tuple[str, str], str | None] = {}
    files: dict[str, str] = {}
    for rec in facts:
        info = extra.get(rec.id, {})
        name = f"{slug(rec.text) or 'fact'}-k{rec.id}"
        prov = info.get("provenance", [])
        anchors = []
        for a in rec.anchors:
            if a.kind == "folder":  # a folder has no content to hash: its kind says so
                anchors.append({"root": a.root, "path": a.path, "kind": "folder"})
                continue
            key = (a.root, a.path)
            if key not in digests:
                digests[key] = file_digest(root_folder(a.root, base), a.path)
            entry: dict = {"root": a.root, "path": a.path, "sha256": digests[key]}
            if a.symbol:
                entry["symbol"] = a.symbol
            if a.lines:
                entry["lines"] = list(a.lines)
            anchors.append(entry)
        front: dict = {
            "name": name,
            "description": shorten(fold(rec.text), 150, strip=True),
            "type": type_map.get(rec.kind, "project"),
            "id": rec.key,
            "scope": rec.scope,
            "kind": rec.kind,
            "status": rec.status,
            "created": rec.created or info.get("imported"),
            "updated": info.get("updated") or rec.created,
            "anchors": anchors,
        }
        if not anchors:
            origin = prov[-1] if prov else None  # the line that fed it most recently
            front["source"] = {
                "task": rec.task,
                "run": rec.run,
                "notes": f"{origin['file']}:{origin['line']}" if origin else None,
            }
        body = [fold(rec.text), ""]
        if rec.status != "active":
            body.append(
                f"Status: {rec.status}" + (f" ({rec.status_reason})" if rec.status_reason else "")
            )
            body.append("")
        if rec.task or rec.run:
            body.append(f"Source: task {rec.task or '-'}, run {rec.run or '-'}")
            body.append("")
        if rec.gone:
            body.append("Cites files that are gone:")
            body.extend(f"- {one_line(p)}" for p in rec.gone)
            body.append("")
        body.append("## Provenance")
        body.append("")
        body.extend(f"- {one_line(p['file'])}:{p['line']} (imported {p['imported']})" for p in prov)
        if not prov:
            body.append("- none recorded")
        files[f"{name}.md"] = "---\n" + yaml_mapping(front) + "---\n\n" + "\n".join(body) + "\n"
    return files


def file_digest(root: str, path: str) -> str | None:
    """SHA-256 (hex) of ``root/path``'s bytes, or None when it is not a regular file inside
    ``root`` (missing, a folder, or a symlink that leads out of the root)."""
    try:
        real_root = os.path.realpath(root)
        real = os.path.realpath(os.path.join(real_root, path))
        if os.path.commonpath([real_root, real]) != real_root or real == real_root:
            return None
        if not stat.S_ISREG(os.stat(real).st_mode):
            return None
        h = hashlib.sha256()
        inputs.hash_file(real, h)
        return h.hexdigest()
    except (OSError, ValueError):
        return None


def yaml_scalar(value) -> str:
    """A YAML scalar: ``null``, ``true``/``false``, an integer, or a double-quoted string
    with every character YAML would not keep as is escaped."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    out = ['"']
    for ch in str(value):
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\n":
            out.append("\\n")
        elif (
            code < 0x20
            or 0x7F <= code <= 0x9F
            or code in (0x2028, 0x2029, 0xFEFF)
            or 0xD800 <= code <= 0xDFFF
            or code in (0xFFFE, 0xFFFF)
        ):
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def yaml_mapping(data: dict, indent: int = 0) -> str:
    """Block-style YAML for a dict of scalars, lists of scalars, dicts and lists of dicts."""
    pad = " " * indent
    out = []
    for key, value in data.items():
        if isinstance(value, dict):
            out.append(f"{pad}{key}:\n" + yaml_mapping(value, indent + 2))
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            out.append(f"{pad}{key}:\n")
            for item in value:
                text = yaml_mapping(item, indent + 4)
                out.append(f"{pad}  - " + text[indent + 4 :])
        elif isinstance(value, list):
            out.append(f"{pad}{key}: [{', '.join(yaml_scalar(v) for v in value)}]\n")
        else:
            out.append(f"{pad}{key}: {yaml_scalar(value)}\n")
    return "".join(out)


# ------------------------------------------------------------------------------ memory
