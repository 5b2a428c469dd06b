"""The ``jsonl`` source: ``brainmigrate export --to jsonl`` read back, one fact a line
(``exports.jsonl``; the §Report fact shape plus provenance).

What the export keeps is kept: the id (into an empty store), scope, kind, marker, status
and its reason, created, run, task, anchors, supersedes and related. A line that is no
JSON object, or a field of the wrong type, is a ``Skip``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from brainmigrate import inputs
from brainmigrate.model import ANCHOR_KINDS, BRAIN_MARKERS, HOWS, KINDS, STATUSES, Anchor
from brainmigrate.read.files import InputError, missing_or_unreadable
from brainmigrate.sources import Entry, Reading, Skip, register

#: The keys every exported fact has: a JSON object holding them is one of ours.
NEEDED = ("id", "scope", "kind", "text")


class JsonlSource:
    """``--from jsonl``: a ``export --to jsonl`` file."""

    name = "jsonl"
    looks_like = "a jsonl export"

    def detect(self, path: Path, head: str) -> bool:
        """The first line that is not blank is a JSON object holding a ``text`` and one more
        of ``NEEDED`` (an export line missing a field is still one, and its reader warns
        about it, never a notes file of 0 fact lines), not an MCP memory line (``type``)."""
        for line in head.split("\n"):  # U+2028 in a JSON string ends no line
            if line.strip():
                try:
                    first = json.loads(line)
                except ValueError:  # a broken first line of a jsonl file: still its reader's
                    return path.suffix.lower() in (".jsonl", ".ndjson") and line.lstrip()[:1] == "{"
                if not isinstance(first, dict) or first.get("type") in ("entity", "relation"):
                    return False
                return "text" in first and any(k in first for k in NEEDED if k != "text")
        return False

    def files(self, folder: Path) -> list[Path]:
        """A folder's ``*.jsonl`` files, sorted (``--from jsonl FOLDER``)."""
        return sorted(p for p in folder.glob("*.jsonl") if p.is_file())

    def entries(self, path: Path, reading: Reading) -> Iterator[Entry | Skip]:
        """One ``Entry`` per line holding an exported fact, a ``Skip`` per line that holds
        none it can read (blank lines are neither). Raises ``InputError`` for a file that
        cannot be read."""
        try:
            text = inputs.read_whole(path).decode("utf-8", "replace")
        except OSError as exc:
            raise InputError(f"{reading.file}: {missing_or_unreadable(exc)}") from None
        for number, line in enumerate(text.split("\n"), 1):  # as detect.text_lines
            if line.strip():
                yield _entry(reading, number, line)


def _entry(reading: Reading, number: int, line: str) -> Entry | Skip:
    col = len(line) - len(line.lstrip()) + 1
    try:
        data = json.loads(line)
    except ValueError as exc:
        return Skip(reading.file, number, col, f"not JSON ({exc.msg}); line skipped")
    try:
        return _fact(reading, number, _text_col(line, data) or col, data)
    except _Bad as exc:
        return Skip(reading.file, number, col, f"{exc}; line skipped")


def _text_col(line: str, data) -> int | None:
    """The 1-based column where the ``text`` value's characters start on ``line`` (after
    its opening quote), so a finding points at the path it cites; None when the text is
    not found spelled as ``json.dumps`` spells it."""
    text = data.get("text") if isinstance(data, dict) else None
    for ascii_only in (False, True) if isinstance(text, str) else ():
        found = line.find(json.dumps(text, ensure_ascii=ascii_only))
        if found >= 0:
            return found + 2
    return None


class _Bad(InputError):
    """A field of an exported fact that is missing or of the wrong type."""


def _fact(reading: Reading, number: int, col: int, data) -> Entry:
    if not isinstance(data, dict):
        raise _Bad(f"a JSON {_json_type(data)}, not an object")
    text = _field(data, "text", str)
    kind = _one_of(data, "kind", KINDS)
    status = _one_of(data, "status", STATUSES, "active")
    marker = data.get("marker")
    if marker is not None and marker not in BRAIN_MARKERS and marker != "-":
        raise _Bad(f"marker {marker!r} is not a marker")
    return Entry(
        reading.file,
        number,
        col,
        text,
        kind,
        reading.scope or _field(data, "scope", str),
        task=_field(data, "task", str, None),
        run=_field(data, "run", str, None),
        created=_field(data, "created", str, None),
        status=status,
        status_reason=_field(data, "status_reason", str, None),
        id=_id(data.get("id"), "id"),
        anchors=tuple(_anchor(a) for a in _field(data, "anchors", list, [])),
        supersedes=tuple(_id(i, "supersedes") for i in _field(data, "supersedes", list, [])),
        related=tuple(_id(i, "related") for i in _field(data, "related", list, [])),
        marker=marker,
        gone=tuple(_strings(_field(data, "gone", list, []), "gone")),
        status_stated="status" in data,
    )


def _strings(values: list, key: str) -> list[str]:
    if not all(isinstance(v, str) for v in values):
        raise _Bad(f"{key!r} holds a value that is not a string")
    return values


_MISSING = object()


def _field(data: dict, key: str, kind: type, default=_MISSING):
    value = data.get(key, default)
    if value is _MISSING:
        raise _Bad(f"no {key!r} field")
    if value is default and default is not _MISSING:
        return value
    if not isinstance(value, kind):
        raise _Bad(f"{key!r} is a JSON {_json_type(value)}, not a {_json_type(kind())}")
    return value


def _json_type(value) -> str:
    names = {str: "string", list: "array", dict: "object", bool: "boolean", int: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _one_of(data: dict, key: str, allowed: tuple[str, ...], default=_MISSING) -> str:
    value = _field(data, key, str, default)
    if value not in allowed:
        raise _Bad(f"{key} {value!r} is not one of {', '.join(allowed)}")
    return value


def _id(value, key: str) -> int:
    """``"k12"`` -> 12."""
    if isinstance(value, str) and value[:1] == "k" and value[1:].isdigit() and int(value[1:]):
        return int(value[1:])
    raise _Bad(f"{key} {value!r} is not a fact id (k1, k2, …)")


def _anchor(data) -> Anchor:
    if not isinstance(data, dict):
        raise _Bad("an anchor is not a JSON object")
    kind = _one_of(data, "kind", ANCHOR_KINDS)
    lines = data.get("lines")
    if lines is not None and not (
        isinstance(lines, list) and len(lines) == 2 and all(type(n) is int for n in lines)
    ):
        raise _Bad(f"anchor lines {lines!r} are not [first, last]")
    return Anchor(
        kind,
        _field(data, "root", str),
        _field(data, "path", str),
        _field(data, "symbol", str, None),
        tuple(lines) if lines else None,
        _one_of(data, "how", HOWS, "cited"),
        verified_at=_field(data, "verified_at", str, None),
        commit=_field(data, "commit", str, None),
    )


register(JsonlSource())
