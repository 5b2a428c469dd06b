"""The ``knowledge`` source: knowledge entries read back (``exports.knowledge``; seed 000):
one Markdown file a fact, YAML front matter (``name``, ``description``, ``type``, and ours:
``id``, ``scope``, ``kind``, ``status``, ``created``, ``anchors``, ``source``), then the
fact's text as the body.

The kind is the front matter's ``kind``; an entry without one (as other tools write them)
has its ``type`` mapped back through ``--type-map`` (the export's ``KIND=TYPE``, read the
other way; a type no one kind maps to reads as ``other``). The fact's text is the body
up to its first heading or export trailer line, its lines joined with a blank (each a
``Segment``, the lines past the first counted as continuations). Anchors are kept, the task and
run from ``source`` or the body's ``Source:`` line, a status's reason from ``Status:``,
gone paths from "Cites files that are gone". Front matter that is no YAML mapping is a
``Skip`` at its first line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from brainmigrate import inputs
from brainmigrate.model import KINDS, STATUSES, Anchor, Segment
from brainmigrate.read.facts import scope_for
from brainmigrate.read.files import InputError, missing_or_unreadable
from brainmigrate.sources import Entry, Reading, Skip, register, safe_yaml, yaml_problem
from brainmigrate.sources.detect import text_lines

#: Knowledge entry types (seed 000), as ``exports.knowledge.TYPES``.
TYPES = ("project", "reference", "feedback")
_FRONT_KEY = re.compile(r"^(name|description|type):[ \t]*(.*)$", re.M)
_SOURCE = re.compile(r"Source: task (?P<task>\S+), run (?P<run>\S+)")
_STATUS = re.compile(r"Status: (?P<status>\w+)(?: \((?P<reason>.*)\))?")
#: The lines the export writes after the fact's text.
_TRAILER = re.compile(r"Status: \w|Source: task |Cites files that are gone:$")


class KnowledgeSource:
    """``--from knowledge``: a folder (or files) of knowledge entries."""

    name = "knowledge"
    looks_like = "a knowledge entry"

    def detect(self, path: Path, head: str) -> bool:
        """Front matter first, holding ``name``, ``description`` and a ``type`` of ``TYPES``
        (lines ending in ``\n`` or ``\r\n``)."""
        head = head.replace("\r\n", "\n")
        if not head.startswith("---\n"):
            return False
        end = head.find("\n---\n", 3)
        front = head[4 : end if end != -1 else len(head)]
        keys = {m.group(1): m.group(2).strip().strip("\"'") for m in _FRONT_KEY.finditer(front)}
        return len(keys) == 3 and keys["type"] in TYPES

    def entries(self, path: Path, reading: Reading) -> Iterator[Entry | Skip]:
        """The entry's one fact, or a ``Skip``. Raises ``InputError``."""
        try:
            text = inputs.read_whole(path).decode("utf-8", "replace").removeprefix("\ufeff")
        except OSError as exc:
            raise InputError(f"{reading.file}: {missing_or_unreadable(exc)}") from None
        lines = text_lines(text)
        if not lines or lines[0].rstrip() != "---":
            yield Skip(reading.file, 1, 1, "no front matter (a '---' line first); file skipped")
            return
        end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
        if end is None:
            yield Skip(reading.file, 1, 1, "front matter never closed by '---'; file skipped")
            return
        try:
            front = safe_yaml("\n".join(lines[1:end]))
        except Exception as exc:  # yaml.YAMLError: yaml is imported by safe_yaml alone
            yield Skip(reading.file, 2, 1, f"front matter is no YAML ({yaml_problem(exc)})")
            return
        if not isinstance(front, dict):
            yield Skip(reading.file, 2, 1, "front matter is no YAML mapping; file skipped")
            return
        yield _entry(reading, path, front, lines, end)


def _entry(reading: Reading, path: Path, front: dict, lines: list[str], end: int) -> Entry | Skip:
    body = [(n, ln) for n, ln in enumerate(lines[end + 1 :], end + 2)]
    segments = _text_segments(body)
    if not segments:
        return Skip(reading.file, end + 1, 1, "no text after the front matter; file skipped")
    number, last = segments[0].line, segments[-1].line
    text = " ".join(seg.text for seg in segments)
    kind = front.get("kind")
    if kind not in KINDS:
        kind = _kind_of_type(front.get("type"), reading.type_map)
    status = front.get("status") if front.get("status") in STATUSES else "active"
    task, run, reason, gone = _body(body, last)
    source = front.get("source") if isinstance(front.get("source"), dict) else {}
    task = task if task is not None else _text(source.get("task"))
    run = run if run is not None else _text(source.get("run"))
    scope = reading.scope or _text(front.get("scope")) or scope_for(path)
    return Entry(
        reading.file,
        number,
        segments[0].col,
        text,
        kind,
        scope,
        task=task,
        run=run,
        created=_text(front.get("created")),
        status=status,
        status_reason=reason,
        id=_id(front.get("id")),
        anchors=tuple(_anchors(front.get("anchors"))),
        gone=tuple(gone),
        key=_text(front.get("name")),
        segments=tuple(segments) if len(segments) > 1 else (),
    )


def _text_segments(body: list[tuple[int, str]]) -> list[Segment]:
    """The fact's text in the body: each line from the first that is not blank up to the
    first heading or line the export adds (``Status:``, ``Source:``, "Cites files that
    are gone:"), blank lines left out, as ``Segment`` values (Claude Code's own memory
    files: a rule, then ``**Why:**`` and ``**How to apply:**`` lines, all one fact)."""
    out: list[Segment] = []
    for number, line in body:
        stripped = line.strip()
        if line.startswith("#") or _TRAILER.match(stripped):
            break
        if stripped:
            out.append(Segment(number, len(line) - len(line.lstrip()) + 1, stripped))
    return out


def _body(body: list[tuple[int, str]], text_line: int):
    """``(task, run, status reason, gone paths)`` from the body's lines after the text."""
    task = run = reason = None
    gone: list[str] = []
    in_gone = False
    for number, line in body:
        if number <= text_line:
            continue
        if m := _SOURCE.fullmatch(line.strip()):
            task = None if m.group("task") == "-" else m.group("task").rstrip(",")
            run = None if m.group("run") == "-" else m.group("run")
        elif m := _STATUS.fullmatch(line.strip()):
            reason = m.group("reason")
        elif line.strip() == "Cites files that are gone:":
            in_gone = True
        elif in_gone and line.startswith("- "):
            gone.append(line[2:])
        elif line.startswith("#"):
            break
        elif not line.strip():
            in_gone = False
    return task, run, reason, gone


def _kind_of_type(kind_type, type_map: Mapping[str, str]) -> str:
    """A knowledge ``type`` read back as a kind: the one kind ``type_map`` maps to it."""
    kinds = [k for k in KINDS if type_map.get(k, "project") == kind_type]
    return kinds[0] if len(kinds) == 1 else "other"


def _text(value) -> str | None:
    return None if value is None else str(value)


def _id(value) -> int | None:
    if isinstance(value, str) and value[:1] == "k" and value[1:].isdigit() and int(value[1:]):
        return int(value[1:])
    return None


def _anchors(values) -> Iterator[Anchor]:
    for a in values if isinstance(values, list) else ():
        if not isinstance(a, dict) or not isinstance(a.get("path"), str):
            continue
        root, symbol = str(a.get("root") or "."), a.get("symbol")
        lines = a.get("lines")
        lines = tuple(lines) if isinstance(lines, list) and len(lines) == 2 else None
        kind = "folder" if a.get("kind") == "folder" else "symbol" if symbol else "file"
        yield Anchor(kind, root, a["path"], symbol if isinstance(symbol, str) else None, lines)


register(KnowledgeSource())
