"""The ``memory`` source: an auto-memory folder read back (``exports.memory``; seed 004): a
``MEMORY.md`` index naming topic files, each topic file a ``# scope`` heading and one
bullet a fact.

A topic line the export wrote, ``- k4 pattern (stale: reason): text``, keeps its id (into
an empty store), kind and status; any other bullet is a fact of kind ``other``. A topic
file's scope is its ``# heading`` when that is one word (the export writes the scope
there), else ``area:<file stem>``; ``--scope`` overrides both. A topic file with front
matter whose body is not bullets alone (Claude Code's ``name``/``description``/``type``
files) is one entry, read as the ``knowledge`` reader reads one. In ``MEMORY.md`` a bullet
that names a topic file is the index, not a fact; its other bullets are facts scoped
``area:memory``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path

from brainmigrate import inputs
from brainmigrate.model import KINDS, STATUSES
from brainmigrate.read.facts import scope_for
from brainmigrate.read.files import InputError, missing_or_unreadable
from brainmigrate.sources import Entry, Reading, holds_brain_facts, register
from brainmigrate.sources.detect import text_lines

INDEX = "MEMORY.md"

#: A topic line as the export writes it: id, kind, an optional status and reason, text.
_TOPIC = re.compile(
    r"- k(?P<id>[1-9][0-9]*) (?P<kind>" + "|".join(KINDS) + r")"
    r"(?: \((?P<status>" + "|".join(STATUSES) + r")(?:: (?P<reason>.*?))?\))?: (?P<text>.+)"
)
_BULLET = re.compile(r"[-*+] +(?P<text>\S.*)")
#: A bullet of the index naming a topic file: ``see payments.md`` or ``[x](payments.md)``.
_NAMES = re.compile(r"(?:\bsee |\]\()(?P<name>[^\s()]+\.md)\b")


def _topics(index_text: str) -> list[str]:
    return [m.group("name") for m in _NAMES.finditer(index_text)]


@functools.lru_cache(maxsize=64)
def _index_names(index: Path) -> frozenset[str]:
    """The topic files ``index`` names (empty when there is none), read once a run for
    every file of its folder that detection asks about."""
    try:
        text = inputs.read_bounded(index, 1 << 20, "memory index").decode("utf-8", "replace")
    except OSError:
        return frozenset()
    return frozenset(_topics(text))


class MemorySource:
    """``--from memory``: ``MEMORY.md`` and the topic files it names."""

    name = "memory"
    looks_like = "an auto-memory folder (MEMORY.md and its topic files)"

    def detect(self, path: Path, head: str) -> bool:
        """``MEMORY.md`` naming a topic file beside it, or a topic file such an index names;
        never a file holding a brain notation fact line (notes: its ``~ ! =`` facts would
        be no bullets of a topic file, and lost)."""
        if holds_brain_facts(head):
            return False
        if path.name == INDEX:
            return any((path.parent / n).is_file() for n in _topics(head))
        return path.name in _index_names(path.parent / INDEX)

    def files(self, folder: Path) -> list[Path]:
        """``MEMORY.md``, then the topic files it names in its order, then any other
        ``*.md`` file of the folder (sorted)."""
        index = folder / INDEX
        out = [index] if index.is_file() else []
        if out:
            text = inputs.read_whole(index).decode("utf-8", "replace")
            out += [folder / n for n in dict.fromkeys(_topics(text)) if (folder / n).is_file()]
        out += sorted(p for p in folder.glob("*.md") if p not in out and p.is_file())
        return out

    def entries(self, path: Path, reading: Reading) -> Iterator[Entry]:
        """One ``Entry`` per fact bullet, in order. Raises ``InputError``."""
        try:
            text = inputs.read_whole(path).decode("utf-8", "replace")
        except OSError as exc:
            raise InputError(f"{reading.file}: {missing_or_unreadable(exc)}") from None
        is_index = path.name == INDEX
        if not is_index and _entry_file(text):
            from brainmigrate.sources.knowledge import KnowledgeSource

            yield from KnowledgeSource().entries(path, reading)
            return
        # an index bullet names a topic file beside it; any other bullet is a fact
        topics = {n for n in _topics(text) if "/" not in n and (path.parent / n).is_file()}
        scope = reading.scope or ("area:memory" if is_index else scope_for(path))
        for number, line in enumerate(text_lines(text), 1):
            if line.startswith("# ") and not is_index and not reading.scope:
                heading = line[2:].strip()
                if heading and " " not in heading:
                    scope = heading
                continue
            entry = _entry(reading, number, line, scope, topics if is_index else set())
            if entry is not None:
                yield entry


def _entry_file(text: str) -> bool:
    """Whether a topic file is one entry (Claude Code's own memory files: front matter
    ``name``, ``description``, ``type``, then a body that is not bullets alone): it is
    read as a knowledge entry, its body the fact."""
    lines = text_lines(text.removeprefix("\ufeff"))
    if not lines or lines[0].rstrip() != "---":
        return False
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        return False
    body = [ln for ln in lines[end + 1 :] if ln.strip() and not ln.startswith("#")]
    return any(_BULLET.fullmatch(ln.lstrip().rstrip()) is None for ln in body)


def _entry(reading: Reading, number: int, line: str, scope: str, topics: set) -> Entry | None:
    """The fact a line states, or None: no bullet, or an index bullet naming one of the
    ``topics`` beside it (``- [Payments](payments.md)``, the export's ``see payments.md``).
    A bullet that names another file (``see docs/build.md``) is a fact."""
    stripped = line.lstrip()
    col = len(line) - len(stripped) + 1
    if topics and any(m.group("name") in topics for m in _NAMES.finditer(stripped)):
        return None
    m = _TOPIC.fullmatch(stripped.rstrip())
    if m is not None:
        text = m.group("text")
        return Entry(
            reading.file,
            number,
            col + m.start("text"),
            text,
            m.group("kind"),
            scope,
            status=m.group("status") or "active",
            status_reason=m.group("reason"),
            id=int(m.group("id")),
        )
    m = _BULLET.fullmatch(stripped.rstrip())
    if m is None:
        return None
    return Entry(reading.file, number, col + m.start("text"), m.group("text"), "other", scope)


register(MemorySource())
