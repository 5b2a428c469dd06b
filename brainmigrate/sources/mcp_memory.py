"""The MCP reference memory server's ``memory.jsonl`` read as facts (``import --from
mcp-memory``; docs/migrate.md).

The file holds one JSON object a line: ``{"type": "entity", "name", "entityType",
"observations": [...]}`` and ``{"type": "relation", "from", "to", "relationType"}``.

Each observation of an entity is one fact:
- scope ``area:<entity name as a permalink>``: lower-cased, each run of characters other
  than letters, digits and ``/`` made one ``-`` (``Zoë Tanaka`` -> ``area:zoë-tanaka``,
  ``basic_memory.permalink_of``); ``--scope`` overrides it;
- kind: the ``entityType`` when it names a kind (``basic_memory.KIND_OF``: ``decision``,
  ``bug``, ``setup`` …, case ignored), else ``other``;
- text: the observation, its white space folded to single blanks (a fact is one line); an
  observation may also be an object with a string ``content`` (as forks of the server
  write it);
- line and column: where the observation's text starts on the entity's line (after the
  JSON string's opening quote), so a finding points at the path it cites;
- key: the entity's name, as written.

A relation makes each fact of ``from`` related to the first fact of ``to`` (its
``relates_to`` names ``to``, which the import resolves); the ``relationType`` is not
kept. A line that is no JSON, no object, of another ``type`` or with a field of the wrong
type, an entity without observations and a relation whose ``from`` or ``to`` has no fact
in the file are each one ``Skip`` (``file:line:col: reason``), counted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

from brainmigrate.read.files import InputError, missing_or_unreadable
from brainmigrate.sources import Entry, Reading, Skip, register
from brainmigrate.sources.basic_memory import kind_named, permalink_of

#: ``"type": "entity"`` near a line's start: a first line longer than the head still
#: tells the format.
_TYPED = re.compile(r'\s*\{\s*"type"\s*:\s*"(entity|relation)"')
_TYPES = ("entity", "relation")


class McpMemory:
    """The ``mcp-memory`` source: one ``memory.jsonl`` (or ``.json``) file."""

    name = "mcp-memory"
    looks_like = "an MCP memory file"

    def detect(self, path: Path, head: str) -> bool:
        """A ``.jsonl`` or ``.json`` file whose first non-blank line (``head`` holds it
        whole up to 1 MiB, ``detect.head_of``) is a JSON object with ``type`` ``entity``
        or ``relation`` (or starts as one, when it is longer than that)."""
        if path.suffix.lower() not in (".jsonl", ".json") or path.is_dir():
            return False
        from brainmigrate.sources.detect import first_line

        first = first_line(head)  # whole, up to detect.LINE_MAX; lines end at \n only
        try:
            data = json.loads(first)
        except ValueError:  # a first line longer than detection reads: how it starts
            return _TYPED.match(first) is not None and first == head.rstrip("\r\n")
        return isinstance(data, dict) and data.get("type") in _TYPES

    def files(self, folder: Path) -> list[Path]:
        """A folder's ``*.jsonl`` and ``*.json`` files, sorted (``--from mcp-memory
        FOLDER``: the server keeps its ``memory.jsonl`` in a folder of its own). Raises
        ``InputError`` for a folder without one."""
        found = sorted(
            p for p in folder.iterdir() if p.suffix.lower() in (".jsonl", ".json") and p.is_file()
        )
        if not found:
            raise InputError(
                f"{folder}: no *.jsonl or *.json file in this folder; pass the server's"
                " memory.jsonl (or its folder)"
            )
        return found

    def entries(self, path: Path, reading: Reading) -> Iterator[Entry | Skip]:
        """The facts of ``path``'s entities and a ``Skip`` for each line or item not read,
        in line order. Raises ``InputError`` when the file cannot be read."""
        file = reading.file
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise InputError(f"{file}:1:1: {missing_or_unreadable(exc)}") from None
        entities: list[tuple[int, str, dict]] = []  # line, its text, the object
        relations: list[tuple[int, dict]] = []
        skips: list[Skip] = []
        for number, chunk in enumerate(raw.removeprefix(b"\xef\xbb\xbf").split(b"\n"), 1):
            read = _object(chunk.removesuffix(b"\r"), file, number)
            if isinstance(read, Skip):
                skips.append(read)
            elif read is not None:
                text, data = read
                if data["type"] == "entity":
                    entities.append((number, text, data))
                else:
                    relations.append((number, data))
        facts: dict[str, list[Entry]] = {}
        for number, text, data in entities:
            for item in _entity(file, number, text, data, reading.scope):
                if isinstance(item, Skip):
                    skips.append(item)
                else:
                    facts.setdefault(item.key, []).append(item)
        links = _links(file, relations, facts, skips)
        out: list[Entry | Skip] = list(skips)
        for entry in (e for es in facts.values() for e in es):
            out.append(_with_links(entry, links[entry.key]) if entry.key in links else entry)
        yield from sorted(out, key=_where)


def _where(item: Entry | Skip) -> tuple[int, int]:
    return item.line, item.col


def _with_links(entry: Entry, targets: tuple[str, ...]) -> Entry:
    return Entry(
        entry.file, entry.line, entry.col, entry.text, entry.kind, entry.scope,
        key=entry.key, relates_to=targets,
    )  # fmt: skip


def _object(chunk: bytes, file: str, number: int) -> tuple[str, dict] | Skip | None:
    """A line as ``(its text, its object)``; a ``Skip`` saying why it is not read; None
    for a blank line."""
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError as exc:
        col = len(chunk[: exc.start].decode("utf-8", errors="replace")) + 1
        return Skip(file, number, col, "not UTF-8, the line is not read")
    if not text.strip():
        return None
    try:
        data = json.loads(text)
    except ValueError as exc:
        col = getattr(exc, "colno", 1)
        return Skip(file, number, col, f"not JSON ({getattr(exc, 'msg', exc)})")
    if not isinstance(data, dict):
        return Skip(file, number, 1, f"not a JSON object (a JSON {_json_name(data)})")
    kind = data.get("type")
    if kind not in _TYPES:
        return Skip(file, number, 1, f"type {kind!r} is neither 'entity' nor 'relation'")
    return text, data


def _entity(file, number: int, text: str, data: dict, scope: str | None):
    """The entity's ``Entry`` values, and a ``Skip`` for what cannot be read."""
    name, observations = data.get("name"), data.get("observations")
    if not isinstance(name, str) or not name.strip():
        yield Skip(file, number, 1, "entity: 'name' is no non-empty string")
        return
    if not isinstance(observations, list) or not observations:
        what = (
            " has no observations" if observations in (None, []) else ": 'observations' is no list"
        )
        yield Skip(file, number, 1, f"entity {name!r}{what}: no fact")
        return
    given = data.get("entityType")
    kind = (kind_named(given) if isinstance(given, str) else None) or "other"
    scope = scope or "area:" + (permalink_of(name) or " ".join(name.split()).lower())
    at = 0
    for i, given in enumerate(observations):
        observation = given.get("content") if isinstance(given, dict) else given
        said = " ".join(observation.split()) if isinstance(observation, str) else ""
        col, at = _column(text, observation if said else given, at)
        col += bool(said) and isinstance(given, str)  # the text starts after its quote
        if not said:
            yield Skip(file, number, col, f"entity {name!r}: observation {i + 1} is no text")
            continue
        yield Entry(file, number, col, said, kind, scope, key=name)


def _column(text: str, value, at: int) -> tuple[int, int]:
    """1-based column of the JSON ``value`` in ``text`` from index ``at`` (column 1 when
    it is not found spelled as ``json.dumps`` spells it), and where to look next."""
    for ascii_only in (False, True):
        for separators in ((",", ":"), (", ", ": ")):
            spelled = json.dumps(value, ensure_ascii=ascii_only, separators=separators)
            found = text.find(spelled, at)
            if found >= 0:
                return found + 1, found + len(spelled)
    return 1, at


def _links(file, relations, facts: dict[str, list[Entry]], skips: list[Skip]) -> dict:
    """``{entity name: (names it relates to, in order)}`` from the relations; a ``Skip``
    for a relation that cannot be read or whose ``from`` or ``to`` has no fact in the
    file."""
    links: dict[str, list[str]] = {}
    for number, data in relations:
        start, end = data.get("from"), data.get("to")
        if not isinstance(start, str) or not isinstance(end, str):
            skips.append(Skip(file, number, 1, "relation: 'from' and 'to' must be strings"))
        elif start not in facts or end not in facts:
            end_of, name = ("from", start) if start not in facts else ("to", end)
            skips.append(
                Skip(file, number, 1, f"relation {end_of} {name!r}: that entity has no fact")
            )
        elif end != start and end not in links.setdefault(start, []):
            links[start].append(end)
    return {name: tuple(targets) for name, targets in links.items() if targets}


def _json_name(data) -> str:
    return {list: "array", str: "string", bool: "boolean"}.get(type(data), "number or null")


register(McpMemory())
