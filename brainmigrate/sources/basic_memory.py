"""Basic Memory notes read as facts (``import --from basic-memory``; docs/migrate.md).

A Basic Memory note is a Markdown file with YAML front matter (``title``, ``type``,
``permalink``, ``tags``), observations ``- [category] text #tag (context)`` and relations
``- relation_type [[Target]] (context)``; a ``[[Target]]`` elsewhere links the note too.

Each observation is one fact:
- scope ``area:<permalink>``: the front matter's ``permalink``, else the file stem made a
  permalink (``permalink_of``: lower-cased, runs of other characters than letters, digits
  and ``/`` made ``-``); ``--scope`` overrides it. The same however the note is reached
  (a vault walked, the file named, a folder detected file by file);
- kind: the category when it names a kind (``KIND_OF``, case ignored); the text is then
  what follows the category; any other category stays in the text as ``[category] text``
  and the kind is ``other``;
- text: the observation as written (``#tags`` and ``(context)`` kept, so search finds
  them), then each front matter tag the text lacks as `` #tag``;
- key: the note's ``link_key``, its title's (else its file stem's) permalink's last part;
  ``relates_to``: the keys of the notes its relations and ``[[links]]`` name (found by
  permalink, title or file stem among the notes of a vault walked, else the target's own
  ``link_key``). The import makes them ``related`` where both ends are facts.

Headings, blank lines, code blocks and the front matter are structure, not facts. Other
lines (prose, task items ``- [ ]``) are no facts either: each run of them is one ``Skip``
(``file:line:col: reason``), never dropped in silence, as are a line that is no UTF-8, an
observation without text and front matter that is no YAML mapping.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from brainmigrate.model import KINDS
from brainmigrate.read.files import SKIP_DIRS, InputError, missing_or_unreadable, notes_files
from brainmigrate.sources import (
    BRAIN_FACT_LINE,
    Entry,
    Reading,
    Skip,
    register,
    safe_yaml,
    yaml_problem,
)

#: Words that name a kind, as a Basic Memory category or an MCP ``entityType`` may spell
#: it (case ignored); every kind names itself.
KIND_OF = {
    **{kind: kind for kind in KINDS},
    "decisions": "decision",
    "decided": "decision",
    "choice": "decision",
    "patterns": "pattern",
    "convention": "pattern",
    "practice": "pattern",
    "best-practice": "pattern",
    "blockers": "blocker",
    "blocked": "blocker",
    "bug": "blocker",
    "problem": "blocker",
    "env": "environment",
    "setup": "environment",
    "config": "environment",
}
#: ``- [category] text``: a list item whose first thing is a bracketed category (not a
#: task box ``[ ]``/``[x]``, not a link ``[text](url)`` or ``[[Target]]``).
_OBSERVATION = re.compile(r"(?P<lead>\s*[-*+]\s+)\[(?P<cat>[^\[\]]+)\](?![(\[])(?P<rest>.*)")
_TASK_BOX = re.compile(r"[ xX]")
#: ``- relation_type [[Target]] (context)``.
_RELATION = re.compile(
    r"\s*[-*+]\s+(?P<type>[^\s\[\]()][^\[\]()]*?)\s+\[\[(?P<target>[^\[\]]+)\]\]"
    r"\s*(?:\([^()]*\))?\s*"
)
_LINK = re.compile(r"\[\[(?P<target>[^\[\]|]+)(?:\|[^\[\]]*)?\]\]")
_HEADING = re.compile(r"\s{0,3}#{1,6}(\s|$)")
_MARKER = BRAIN_FACT_LINE  # a file holding one is notes (sources.BRAIN_FACT_LINE)
_BULLET = re.compile(r"\s*[-*+][ \t]+\S")
_FENCE = re.compile(r"\s{0,3}(```|~~~)")
_RULE = re.compile(r"\s{0,3}([-*_])(\s*\1){2,}\s*")
#: Characters a made permalink keeps; other runs become one ``-``.
_NOT_PERMALINK = re.compile(r"[^\w/]+|_+")
#: How many of a folder's ``.md`` files ``detect`` looks at.
DETECT_FILES = 32


def permalink_of(text: str) -> str:
    """``text`` (a path without ``.md`` or a title) as a permalink: lower-cased, each run
    of characters other than letters, digits and ``/`` made one ``-``, no ``-`` at either
    end of a part (``Search Design`` -> ``search-design``, ``specs/API v2`` ->
    ``specs/api-v2``)."""
    parts = (_NOT_PERMALINK.sub("-", part.lower()).strip("-") for part in text.split("/"))
    return "/".join(p for p in parts if p)


def kind_named(word: str) -> str | None:
    """The kind ``word`` names (``KIND_OF``, case and outer blanks ignored), else None."""
    return KIND_OF.get(word.strip().lower())


@dataclass(slots=True)
class _Note:
    """What one note yields, gathered before any of it is yielded (relations may follow
    the observations they belong with)."""

    observations: list[tuple[int, int, str, str]] = field(default_factory=list)
    #: each ``[[Target]]`` named, ``(target without |label, line, col)``
    targets: list[tuple[str, int, int]] = field(default_factory=list)
    skips: list[Skip] = field(default_factory=list)


class BasicMemory:
    """The ``basic-memory`` source: a vault folder (every ``.md`` file under it) or single
    note files. ``files`` walks a vault and learns its notes' names (permalink, title,
    file stem), so a ``[[Target]]`` that names a note by any of them finds it."""

    name = "basic-memory"
    looks_like = "a Basic Memory note"

    def __init__(self) -> None:
        # a file walked -> its vault's names (a note's name, lower-cased -> its key); each
        # walk starts its vault afresh, so a long-lived process never links to an old one
        self._names: dict[Path, dict[str, str]] = {}

    def files(self, path: Path) -> list[Path]:
        """Every ``.md`` file under the vault ``path``, in the order notes folders are
        walked (sorted, ``.git`` and git-ignored files left out); learns each note's names.
        Raises ``InputError`` for a folder without notes."""
        found = [f for _, f in notes_files([path]) if f.suffix.lower() == ".md"]
        names: dict[str, str] = {}
        for file in found:
            self._names[file] = names
            head, _ = _front_matter(_head_lines(file))
            head = head if isinstance(head, dict) else {}
            key = _key_of(file, head)
            for name in (head.get("permalink"), head.get("title"), file.stem):
                if isinstance(name, str) and name.strip():
                    names.setdefault(name.strip().lower(), key)
                    names.setdefault(link_key(name), key)
        return found

    def detect(self, path: Path, head: str) -> bool:
        """A note (``.md``, ``_is_note``): no brain notation fact line, observations and
        relations more than half of its list items, and two observations or one beside a
        front matter ``permalink``; a folder when more than half of its first
        ``DETECT_FILES`` ``.md`` files (sorted) are such notes."""
        if path.is_dir():
            notes = []
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
                notes += [Path(dirpath, n) for n in sorted(filenames) if n.endswith(".md")]
                if len(notes) >= DETECT_FILES:
                    break
            notes = notes[:DETECT_FILES]
            hits = sum(_is_note("\n".join(_head_lines(n))) for n in notes)
            return bool(notes) and hits * 2 > len(notes)
        return path.suffix.lower() == ".md" and _is_note(head)

    def likely(self, path: Path, head: str) -> bool:
        """Whether a ``.md`` file that ``detect`` leaves to notes may yet be a note (it
        holds an observation, and no brain notation fact line): BM313 then names this
        reader when notes find no fact line in it."""
        counts = path.suffix.lower() == ".md" and _counts(head)
        return bool(counts) and counts[0] >= 1

    def entries(self, path: Path, reading: Reading) -> Iterator[Entry | Skip]:
        """The facts of the note ``path`` and a ``Skip`` for each line not read, in line order.
        Raises ``InputError`` when the file cannot be read."""
        lines, skips = _lines(path, reading.file)
        head, body_at = _front_matter(lines)
        if isinstance(head, str):  # front matter that is no mapping: why, as a skip
            skips.append(Skip(reading.file, 1, 1, head))
            head = {}
        key = _key_of(path, head)
        note = _read_body(lines, body_at, reading.file)
        tags = _tags(head.get("tags"))
        scope = reading.scope or "area:" + _permalink(path, head).replace(",", "-")
        names = self._names.get(path, {})
        linked: dict[str, tuple[int, int]] = {}  # key -> where it is first named
        for target, line, col in note.targets:
            found = names.get(target.strip().lower()) or link_key(target)
            if found and found != key:
                linked.setdefault(found, (line, col))
        related, at = tuple(linked), tuple(linked.values())
        out: list[Entry | Skip] = [*skips, *note.skips]
        for line, col, kind, text in note.observations:
            known = {w.lower() for w in re.findall(r"#([\w-]+)", text)}
            text += "".join(f" #{t}" for t in tags if t.lower() not in known)
            out.append(
                Entry(
                    reading.file,
                    line,
                    col,
                    text,
                    kind,
                    scope,
                    key=key,
                    relates_to=related,
                    relates_at=at,
                )  # fmt: skip
            )
        yield from sorted(out, key=lambda item: (item.line, item.col))


def link_key(name: str) -> str:
    """The key a note's title (or a ``[[Target]]``) links by: its permalink's last part
    (``Search Design`` and ``specs/search-design`` -> ``search-design``)."""
    return permalink_of(name).rpartition("/")[2]


def _key_of(path: Path, head: dict) -> str:
    """A note's key: its title's ``link_key``, else its file stem's."""
    title = head.get("title")
    return (isinstance(title, str) and link_key(title)) or link_key(path.stem) or "note"


def _permalink(path: Path, head: dict) -> str:
    """The front matter's ``permalink``, else the file stem made one."""
    given = head.get("permalink")
    if isinstance(given, str) and permalink_of(given):
        return given.strip().strip("/")
    return permalink_of(path.stem) or "note"


def _is_note(head: str) -> bool:
    """Whether ``head`` (a file's start) is a Basic Memory note: no brain notation fact
    line (``_MARKER``) outside code blocks, observations and relations more than half of
    its list items, and either two observations or one beside a front matter
    ``permalink`` (Jekyll and Hugo pages keep a ``permalink`` too)."""
    counts = _counts(head)
    if counts is None:
        return False
    observations, relations, bullets, permalink = counts
    if (observations + relations) * 2 <= bullets:
        return False
    return observations >= 2 or (permalink and observations >= 1)


def _counts(head: str) -> tuple[int, int, int, bool] | None:
    """``(observations, relations, list items, has a permalink)`` of ``head`` outside its
    front matter and code blocks; None when a line there is a brain notation fact line."""
    lines = [line.removesuffix("\r") for line in head.split("\n")]
    front, start = _front_matter(lines)
    permalink = isinstance(front, dict) and isinstance(front.get("permalink"), str)
    observations = relations = bullets = 0
    fenced = False
    for line in lines[start:]:
        if _FENCE.match(line):
            fenced = not fenced
        if fenced:
            continue
        if _observation(line) is not None:
            observations += 1
        elif _RELATION.fullmatch(line):
            relations += 1
        elif _MARKER.match(line):
            return None
        elif not _BULLET.match(line):
            continue
        bullets += 1
    return observations, relations, bullets, permalink


def _observation(line: str) -> tuple[int, int, str, str] | None:
    """``(col, text col, category, rest)`` of an observation line, else None: ``col`` is
    the 1-based column of its ``[``, ``text col`` that of ``rest`` (where the fact's text
    starts when the category names a kind), so a finding points at the cited path."""
    m = _OBSERVATION.fullmatch(line)
    if m is None or _TASK_BOX.fullmatch(m["cat"]):
        return None
    rest = m["rest"]
    at = m.start("rest") + len(rest) - len(rest.lstrip()) + 1
    return len(m["lead"]) + 1, at, m["cat"].strip(), rest.strip()


def _read_body(lines: list[str | None], start: int, file: str) -> _Note:
    note, prose, fenced = _Note(), [], False
    for number, line in enumerate(lines[start:], start + 1):
        if line is None:  # not UTF-8: already a skip
            continue
        structure = fenced or not line.strip() or _HEADING.match(line) or _RULE.fullmatch(line)
        if _FENCE.match(line):
            fenced, structure = not fenced, True
        seen = None if structure else _observation(line)
        relation = None if structure or seen else _RELATION.fullmatch(line)
        if not (structure or seen or relation):
            prose.append(number)
        else:
            _end_prose(note, prose, file)
        if relation:
            target = relation["target"].partition("|")[0]  # [[Target|label]]: the target
            note.targets.append((target, number, relation.start("target") - 1))
        elif not fenced and not structure:
            note.targets += [(m["target"], number, m.start() + 1) for m in _LINK.finditer(line)]
        if seen:
            _observe(note, number, seen, file)
    _end_prose(note, prose, file)
    return note


def _observe(note: _Note, number: int, seen: tuple[int, int, str, str], file: str) -> None:
    col, at, category, rest = seen
    kind = kind_named(category)
    text = rest if kind else f"[{category}] {rest}".rstrip()
    if not rest:
        note.skips.append(Skip(file, number, col, f"observation [{category}] has no text"))
        return
    note.observations.append((number, at if kind else col, kind or "other", text))


def _end_prose(note: _Note, prose: list[int], file: str) -> None:
    if prose:
        many = f"{len(prose)} lines to line {prose[-1]}" if len(prose) > 1 else "1 line"
        note.skips.append(
            Skip(
                file,
                prose[0],
                1,
                f"prose ({many}): no observation '- [category] text' or relation"
                " '- relation_type [[Target]]', not read as a fact",
            )
        )
        prose.clear()


def _tags(value) -> list[str]:
    """Front matter ``tags``: a list, or a string split at commas and blanks; each tag
    without a leading ``#``, inner blanks made ``-``."""
    if isinstance(value, str):
        value = re.split(r"[,\s]+", value)
    if not isinstance(value, list):
        return []
    tags = (re.sub(r"\s+", "-", str(t).strip().lstrip("#")) for t in value if t is not None)
    return list(dict.fromkeys(t for t in tags if t))


def _front_matter(lines: list[str | None]) -> tuple[dict | str, int]:
    """The front matter (a first line ``---`` through the next ``---``) read as YAML, and
    the index of the first line after it; a reason (str) instead of a mapping when it is
    no YAML mapping; ``({}, 0)`` when there is none."""
    if not lines or (lines[0] or "").strip() != "---":
        return {}, 0
    for end in range(1, len(lines)):
        if (lines[end] or "").strip() in ("---", "..."):
            break
    else:
        return {}, 0
    try:
        data = safe_yaml("\n".join(line or "" for line in lines[1:end]))
    except Exception as exc:  # yaml.YAMLError: its message, kept to one line
        return f"front matter is no YAML ({yaml_problem(exc)})", end + 1
    if data is None:
        return {}, end + 1
    if not isinstance(data, dict):
        return f"front matter is no YAML mapping (a {type(data).__name__})", end + 1
    return data, end + 1


def _lines(path: Path, file: str) -> tuple[list[str | None], list[Skip]]:
    """The file's lines without line ends (``\\n``, ``\\r\\n``); None for a line that is
    no UTF-8, with its skip. Raises ``InputError`` when it cannot be read."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{file}:1:1: {missing_or_unreadable(exc)}") from None
    lines: list[str | None] = []
    skips = []
    for number, chunk in enumerate(raw.removeprefix(b"\xef\xbb\xbf").split(b"\n"), 1):
        try:
            lines.append(chunk.removesuffix(b"\r").decode("utf-8"))
        except UnicodeDecodeError as exc:
            col = len(chunk[: exc.start].decode("utf-8", errors="replace")) + 1
            skips.append(Skip(file, number, col, "not UTF-8, the line is not read"))
            lines.append(None)
    if lines and lines[-1] == "":
        lines.pop()
    return lines, skips


def _head_lines(path: Path) -> list[str]:
    """The first 4 KiB of ``path`` as lines, split at ``\n`` (errors replaced; none
    when it is no regular file or cannot be read)."""
    from brainmigrate import inputs

    try:  # a regular file only: a FIFO or /dev/zero named *.md is refused, never read
        with inputs.opened(path) as f:
            text = f.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return []
    return [line.removesuffix("\r") for line in text.split("\n")]


register(BasicMemory())
