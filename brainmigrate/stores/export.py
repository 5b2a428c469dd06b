"""Export the fact store to the stores teams use: jsonl, brain notes, knowledge, memory.

``export(store, fmt, output, options)`` reads ``know.db``, keeps the facts the filters
select, renders every file in memory, checks the target's rules, and only then writes.
Nothing is written when a check fails (``ExportError``, the CLI exits 2):

* ``jsonl`` -- one JSON object per line, the §Report fact shape plus provenance.
* ``brain`` -- brain notation, one file per scope, each fact one line. Every line is read
  back with the importer's own rules before anything is written; a fact that would not
  come back the same (kind, text, task, status, created, run) fails the export.
* ``knowledge`` -- a flat folder of Markdown entries with YAML frontmatter: a unique
  kebab-case ``name`` (the file stem), ``description``, ``type``, times, anchors with the
  SHA-256 of the anchored file, or a ``source`` when there is no anchor.
* ``memory`` -- ``MEMORY.md`` (one line per topic) and one topic file per scope, within
  byte budgets; ``fit`` leaves out what does not fit, by priority, and says what.

Writes are atomic: a new folder is built as a hidden temporary folder beside the target
and renamed into place; into an existing folder every file is first written as a hidden
temporary file, and only when all of them are written are they renamed over the old ones.
A failure removes the temporary files and leaves the previous output as it was. Files in
an existing folder that this export does not write are left alone (and listed).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import tempfile
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from brainmigrate.facts import (
    KIND_OF_MARKER,
    MAX_TEXT,
    SUPERSEDED,
    TaskIds,
    build_fact,
    cut,
    plus_kind_for,
    scope_for,
)
from brainmigrate.fsutil import (
    NAME_MAX,
    file_mode,
    folder_mode,
    printable,
    refuse_clashes,
    remove_leftovers,
    stage_bytes,
    temp_prefix,
    write_bytes_atomic,
)
from brainmigrate.merge import Key, MergeIndex, Stems, numbers
from brainmigrate.model import KINDS, MARKERS, FactRecord
from brainmigrate.notation import Line, classifier, fold, split_trailer
from brainmigrate.reports import to_json
from brainmigrate.search import fact_dict, parse_scopes
from brainmigrate.stores import sqlite

#: Export formats, in help order.
FORMATS = ("jsonl", "brain", "knowledge", "memory")
#: Knowledge entry types (seed 000): facts about the project, about third parties, and the
#: user's durable instructions.
TYPES = ("project", "reference", "feedback")
#: Memory budgets in bytes (seed 004): the index and all files together.
INDEX_BUDGET = 2 * 1024
TOTAL_BUDGET = 64 * 1024
INDEX_NAME = "MEMORY.md"
#: How many ids an error message or a left-out summary names before "… and N more".
SHOW_AT_MOST = 50
#: How many characters of a fact's text a message quotes.
QUOTE_AT_MOST = 60
#: What fills a brain line past the 2000-character cut (no space, letter or digit: it
#: adds no word, number or task id, and the importer cuts it off again).
PAST_THE_CUT = "…"

#: The marker that gives a kind whatever the file is called ("+" depends on the file).
_OWN_MARKER = {"blocker": "!", "decision": "~", "environment": "=", "other": "?"}
_CREATED = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})T([0-9]{2}:[0-9]{2}:[0-9]{2})Z")
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
_KIND_RANK = {"blocker": 0, "decision": 1}
_STATUS_RANK = {"active": 0, "stale": 1, "superseded": 2}


class ExportError(Exception):
    """The export cannot be done as asked; nothing was written. The message names the fix."""


@dataclass
class Options:
    """What to export and how.

    Filters: ``scopes`` (``--scope`` values: exact scopes, comma lists, ``area`` for every
    ``area:*``), ``kinds``, ``status`` (``all`` or ``active``). ``brain``: ``plus_kind``
    (the kind ``+`` is written for in every file; default: by the file's name, as the
    importer reads it) and ``task_pattern`` (the importer's ``--task-pattern``).
    ``knowledge``: ``type_map`` (``KIND=TYPE`` strings). ``memory``: ``index_budget``,
    ``total_budget`` (bytes) and ``fit``.
    """

    scopes: Sequence[str] = ()
    kinds: Sequence[str] = ()
    status: str = "all"
    plus_kind: str | None = None
    task_pattern: str | None = None
    type_map: Sequence[str] = ()
    index_budget: int = INDEX_BUDGET
    total_budget: int = TOTAL_BUDGET
    fit: bool = False


@dataclass
class ExportResult:
    """What an export did. ``files`` are the names it produced (relative to ``output``),
    ``written`` those whose bytes changed; ``left_out`` the facts ``fit`` dropped
    (``{"id", "scope", "kind", "status", "bytes"}``); ``refused`` the facts the target
    cannot hold, left out while the others were written (``{"id", "scope", "text",
    "why"}``, ``refusal`` names one); ``notes`` what the reader should know;
    ``text`` the jsonl text when ``output`` is ``-``; ``sizes`` the memory byte counts."""

    format: str
    output: str
    facts: int
    files: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    left_out: list[dict] = field(default_factory=list)
    refused: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    others: list[str] = field(default_factory=list)
    sizes: dict = field(default_factory=dict)
    text: str | None = None


def export(
    store: str | os.PathLike, fmt: str, output: str | os.PathLike, options: Options | None = None
) -> ExportResult:
    """Export the facts of the store at ``store`` as ``fmt`` to ``output``.

    ``output`` is a file for ``jsonl`` (``-``: the text is returned in ``result.text``) and
    a folder for the others. Raises ``ExportError`` (bad format, option or output path;
    memory over budget without ``fit``; a failed write) and ``sqlite.StoreError`` (no
    store, newer schema); on any error nothing is written. A fact the target cannot hold
    does not stop the others: it is left out and listed in ``result.refused``.
    """
    options = options or Options()
    if fmt not in FORMATS:
        raise ExportError(f"unknown export format {fmt!r}; use one of: {', '.join(FORMATS)}")
    if options.status not in ("all", "active"):
        raise ExportError(f"--status {options.status!r}: use 'active' or 'all'")
    bad = sorted(set(options.kinds) - set(KINDS))
    if bad:
        raise ExportError(f"--kind {bad[0]!r}: use one of {', '.join(KINDS)}")
    type_map = parse_type_map(options.type_map)
    tasks = _task_ids(options.task_pattern)
    out = str(output)
    to_stdout = fmt == "jsonl" and out == "-"
    if not to_stdout:
        check_output(Path(out), folder=fmt != "jsonl")
    path = Path(store)
    sqlite.require(path)
    snap = sqlite.load(path)
    _check_scopes(options.scopes, {r.scope for r in snap.facts.values()})
    facts = select(snap.facts.values(), options)
    extra = sqlite.details(path) if fmt in ("jsonl", "knowledge") else {}
    result = ExportResult(fmt, out, len(facts))
    if fmt == "jsonl":
        text = "".join(to_json(fact_dict(r, extra.get(r.id, {}))) + "\n" for r in facts)
        if to_stdout:
            result.text = text
            return result
        result.files = [Path(out).name]
        _tidy(Path(out), False, result.notes)
        result.written = publish_file(Path(out), text)
        return result
    if fmt == "brain":
        files = brain_files(facts, options.plus_kind, tasks, result.notes, result.refused)
    elif fmt == "knowledge":
        files = knowledge_files(facts, extra, type_map)
    else:
        files = memory_files(facts, options, result)
    result.files = sorted(files)
    refuse_clashes([("--output", Path(out) / name) for name in files], [("the store", path)])
    _tidy(Path(out), True, result.notes)
    result.written, result.others = publish(Path(out), files)
    return result


# ------------------------------------------------------------------------------ selecting


def _check_scopes(values: Sequence[str], stored: set[str]) -> None:
    """Raise ``ExportError`` for a ``--scope`` no stored fact has (a typo would otherwise
    export nothing and look done); the message lists the store's scopes."""
    exact, areas = parse_scopes(values)
    missing = [s for s in exact if s not in stored]
    if areas and not any(s.startswith("area:") for s in stored):
        missing.append("area")
    if not missing:
        return
    known = sorted(stored)
    listed = ", ".join(printable(s) for s in known[:8]) + (", …" if len(known) > 8 else "")
    raise ExportError(
        f"--scope {printable(missing[0])}: no fact in the store has this scope"
        f" ({'scopes in the store: ' + listed if known else 'the store is empty'});"
        " pass --scope with one of the store's scopes, or leave it out"
    )


def select(facts: Iterable[FactRecord], options: Options) -> list[FactRecord]:
    """The facts the filters keep, in id order."""
    exact, areas = parse_scopes(options.scopes)
    wanted = set(exact)
    kinds = set(options.kinds)
    out = []
    for rec in facts:
        if (wanted or areas) and not (
            rec.scope in wanted or (areas and rec.scope.startswith("area:"))
        ):
            continue
        if kinds and rec.kind not in kinds:
            continue
        if options.status == "active" and rec.status != "active":
            continue
        out.append(rec)
    out.sort(key=lambda r: r.id)
    return out


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


def _task_ids(pattern: str | None) -> TaskIds:
    try:
        return TaskIds(pattern)
    except re.error as exc:
        raise ExportError(
            f"--task-pattern: not a valid regular expression ({exc}); fix it"
        ) from None


# ------------------------------------------------------------------------------ file names


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


# ------------------------------------------------------------------------------ brain


def brain_files(
    facts: Sequence[FactRecord],
    plus_kind: str | None = None,
    tasks: TaskIds | None = None,
    notes: list[str] | None = None,
    refused: list[dict] | None = None,
) -> dict[str, str]:
    """Brain notation, one ``<stem>.md`` per scope, facts one line each in id order.

    Each file starts with a heading naming the scope (the importer skips headings). A
    fact's marker is its stored one when the importer gives the stored kind for it in this
    file; otherwise the marker that gives the kind (``!`` blocker, ``~`` decision, ``=``
    environment, ``?`` other, ``+`` the file's plus kind). ``created`` and ``run`` become
    the trailer ``<!-- YYYY-MM-DD HH:MM:SSZ run -->``; a text ending in an HTML comment
    without one gets an empty trailer, so the comment stays text. A superseded fact whose
    text does not hold the word gets ``SUPERSEDED``, and a fact whose text does not show
    its task ``(TASK)``, past the 2000-character cut (noted; see ``brain_line``).
    Every line is read back with the importer's rules; a fact that would not
    come back the same is left out, and the others are written: ``refused`` gets
    ``{"id", "scope", "text", "why"}`` for it (``text`` at most ``QUOTE_AT_MOST``
    characters). ``notes`` gets what the notation cannot carry (stale status; facts the
    importer's repeat rule would merge). Without ``refused``, raises ``ExportError``
    listing every fact that cannot be written.
    """
    tasks = tasks or TaskIds()
    notes = notes if notes is not None else []
    stems = scope_stems(r.scope for r in facts)
    by_scope: dict[str, list[FactRecord]] = defaultdict(list)
    for rec in facts:
        by_scope[rec.scope].append(rec)
    classify = classifier()
    stemmer = Stems()
    problems: list[dict] = []
    stale, past, merging = [], [], []
    files: dict[str, str] = {}
    for scope in sorted(by_scope, key=lambda s: stems[s]):
        name = f"{stems[scope]}.md"
        plus = plus_kind or plus_kind_for(name)
        lines = [f"# {fold(scope) or '(no scope)'}", ""]
        index = MergeIndex()
        for rec in by_scope[scope]:
            line, text, problem = brain_line(rec, plus, tasks)
            if problem is None:
                problem = _read_back(line, text, rec, name, plus, tasks, classify)
            if problem is not None:
                problems.append(
                    {"id": rec.key, "scope": scope, "text": quote(rec.text), "why": problem}
                )
                continue
            lines.append(line)
            if rec.status == "stale":
                stale.append(rec.key)
            if text != fold(rec.text):
                past.append(rec.key)
            st = stemmer(text)
            key = Key(scope, numbers(text), frozenset(tasks.all(text)))
            hit = index.best(key, st)
            if hit is not None:
                merging.append(f"{rec.key} into k{hit[0]}")
            index.add(rec.id, key, st)
        if len(lines) > 2:  # (a scope whose every fact was refused gets no file)
            files[name] = "\n".join(lines) + "\n"
    if problems and refused is None:
        raise ExportError(
            f"{len(problems)} facts cannot be written in brain notation as they are; "
            "nothing written:\n  " + "\n  ".join(_cap([refusal(p) for p in problems]))
        )
    if refused is not None:
        refused.extend(problems)
    if stale:
        notes.append(
            f"{len(stale)} stale facts are written as plain facts (brain notation has no "
            f"stale status): {', '.join(_cap(stale))}"
        )
    if past:
        notes.append(
            f"{len(past)} facts were cut at {MAX_TEXT} characters before their task id or"
            " SUPERSEDED: written past the cut, where importing the export finds them"
            f" (and warns BM302): {', '.join(_cap(past))}"
        )
    if merging:
        notes.append(
            f"{len(merging)} facts are so alike that importing the export merges them: "
            f"{', '.join(_cap(merging))}"
        )
    renamed = [
        f"{printable(scope)} in {stems[scope]}.md (imports as {scope_for(stems[scope] + '.md')}"
        f" unless imported with --scope {printable(scope)})"
        for scope in sorted(by_scope)
        if scope_for(f"{stems[scope]}.md") != scope
    ]
    if renamed:
        notes.append(
            f"{len(renamed)} scopes cannot be told by their file name alone: "
            + "; ".join(_cap(renamed))
        )
    return files


def brain_line(rec: FactRecord, plus: str, tasks: TaskIds) -> tuple[str, str, str | None]:
    """``(line, text as written, problem)`` for ``rec`` in a file whose ``+`` gives
    ``plus``; ``problem`` is None or why the fact cannot be written.

    A text that does not show its task or ``SUPERSEDED`` is one the importer cut at 2000
    characters, where they stood after the cut (SPEC.md §Notation: they are read from the
    whole text). They are written after the text as one word, ``SUPERSEDED(TER-5)``,
    filled with ``…`` past 2000 characters: the importer finds them in the whole text and
    cuts the text back to exactly what is stored."""
    marker = _marker(rec, plus)
    if marker is None:
        if rec.kind not in KINDS:
            return "", "", f"unknown kind {rec.kind!r}"
        return (
            "",
            "",
            (
                f"a {rec.kind} has no marker of its own, and '+' gives {plus} in this file; "
                f"export with --plus-kind {rec.kind} and import the result with "
                f"--plus-kind {rec.kind}"
            ),
        )
    text = fold(rec.text)
    if not text:
        return "", "", "empty text"
    extra = []
    if rec.status == "superseded" and not SUPERSEDED.search(text):
        extra.append("SUPERSEDED")
    if rec.task and not tasks.all(text):
        extra.append(f"({rec.task})")
    if extra:
        # past the cut, as one word (and "…" up to the cut), so the importer finds it in
        # the whole text and keeps the text as it is stored
        text = f"{text} {''.join(extra)}"
        text += PAST_THE_CUT * max(0, MAX_TEXT + 1 - len(text))
    trailer = ""
    if rec.created:
        m = _CREATED.fullmatch(rec.created)
        if not m:
            return "", "", f"created {rec.created!r} is not YYYY-MM-DDTHH:MM:SSZ"
        run = f" {rec.run}" if rec.run else ""
        trailer = f" <!-- {m.group(1)} {m.group(2)}Z{run} -->"
    elif rec.run:
        return "", "", f"run {rec.run!r} without a created time (a trailer needs both)"
    elif split_trailer(text)[1] is not None:
        trailer = " <!-- -->"
    return f"{marker} {text}{trailer}", text, None


def _marker(rec: FactRecord, plus: str) -> str | None:
    if rec.marker in MARKERS and KIND_OF_MARKER.get(rec.marker, plus) == rec.kind:
        return rec.marker
    if rec.kind == plus:
        return "+"
    return _OWN_MARKER.get(rec.kind)


def _read_back(line, text, rec, name, plus, tasks, classify) -> str | None:
    """Read ``line`` as the importer does; None when it gives ``rec`` back, else why not."""
    cls, lead, start = classify(line)
    if cls != "fact":
        return f"the line would be read as {cls}, not as a fact"
    line_ = Line(1, "fact", marker=lead, text=line[start:], col=start + 1)
    got = build_fact(name, [line_], "", plus, tasks, [])
    want = {
        "kind": rec.kind,
        # what the importer stores of a text with SUPERSEDED or the task appended (a text
        # the store holds whole is never longer than the cut, see brain_line)
        "text": cut(text) if len(fold(rec.text)) <= MAX_TEXT else text,
        "task": rec.task,
        "status": "superseded" if rec.status == "superseded" else "active",
        "created": rec.created,
        "run": rec.run,
    }
    for key, value in want.items():
        have = getattr(got, key)
        if have != value:
            hint = (
                "; export and import with the --task-pattern the store was imported with"
                if key == "task"
                else ""
            )
            if key == "text" and isinstance(have, str) and value.startswith(have):
                return (
                    f"text would be read back cut to {len(have)} of {len(value)} characters"
                    f" (the notation keeps at most {MAX_TEXT})"
                )
            if isinstance(have, str) and isinstance(value, str):
                have, value = quote(have), quote(value)
            return f"{key} would be read back as {have!r}, not {value!r}{hint}"
    return None


def quote(text: str, limit: int = QUOTE_AT_MOST) -> str:
    """At most ``limit`` characters of ``text`` (folded), ``…`` when cut: what a message
    quotes of a fact, however long the fact is."""
    text = fold(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def refusal(entry: dict) -> str:
    """One line naming a fact an export left out: id, scope, the start of its text, why."""
    return f"{entry['id']} ({printable(entry['scope'])}) {entry['text']!r}: {entry['why']}"


def _cap(items: Sequence[str]) -> list[str]:
    if len(items) <= SHOW_AT_MOST:
        return list(items)
    return [*items[:SHOW_AT_MOST], f"… and {len(items) - SHOW_AT_MOST} more"]


# ------------------------------------------------------------------------------ knowledge


def knowledge_files(
    facts: Sequence[FactRecord], extra: dict[int, dict], type_map: dict[str, str]
) -> dict[str, str]:
    """One ``<name>.md`` per fact: YAML frontmatter (seed 000) and a body.

    ``name`` is the kebab-case slug of the text and the id (``app-image-runs-on-k5``), so
    it is unique, stable across exports and safe as a file name. Anchored files are hashed
    (SHA-256 of their bytes) when they exist as regular files inside their root.
    """
    digests: dict[tuple[str, str], str | None] = {}
    files: dict[str, str] = {}
    for rec in facts:
        info = extra.get(rec.id, {})
        name = f"{slug(rec.text) or 'fact'}-k{rec.id}"
        prov = info.get("provenance", [])
        anchors = []
        for a in rec.anchors:
            key = (a.root, a.path)
            if key not in digests:
                digests[key] = file_digest(a.root, a.path)
            entry: dict = {"root": a.root, "path": a.path, "sha256": digests[key]}
            if a.symbol:
                entry["symbol"] = a.symbol
            if a.lines:
                entry["lines"] = list(a.lines)
            anchors.append(entry)
        front: dict = {
            "name": name,
            "description": _one_line(rec.text, 150),
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
            first = prov[0] if prov else None
            front["source"] = {
                "task": rec.task,
                "run": rec.run,
                "notes": f"{first['file']}:{first['line']}" if first else None,
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
            body.extend(f"- {p}" for p in rec.gone)
            body.append("")
        body.append("## Provenance")
        body.append("")
        body.extend(f"- {p['file']}:{p['line']} (imported {p['imported']})" for p in prov)
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
        with open(real, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 16), b""):
                h.update(chunk)
        return h.hexdigest()
    except (OSError, ValueError):
        return None


def _one_line(text: str, limit: int) -> str:
    text = fold(text)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


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


def priority(facts: Iterable[FactRecord]) -> list[FactRecord]:
    """Facts in the order ``fit`` keeps them: blockers, decisions, the rest; active, stale,
    superseded; newest ``created`` first (none last), then the higher id."""
    newest = sorted(facts, key=lambda r: (r.created or "", r.id), reverse=True)
    return sorted(newest, key=lambda r: (_KIND_RANK.get(r.kind, 2), _STATUS_RANK.get(r.status, 3)))


def _index_line(scope: str, name: str, counts: Counter) -> str:
    summary = ", ".join(f"{counts[k]} {k}" for k in KINDS if counts[k])
    return f"- {fold(scope) or '(no scope)'}: {summary}, see {name}\n"


def _topic_head(scope: str) -> str:
    return f"# {fold(scope) or '(no scope)'}\n\n"


def _topic_line(rec: FactRecord) -> str:
    state = ""
    if rec.status == "stale":
        state = " (stale" + (f": {rec.status_reason}" if rec.status_reason else "") + ")"
    elif rec.status != "active":
        state = f" ({rec.status})"
    return f"- {rec.key} {rec.kind}{state}: {fold(rec.text)}\n"


def memory_files(facts: Sequence[FactRecord], options: Options, result: ExportResult) -> dict:
    """``MEMORY.md`` and one topic file per scope (seed 004), within the byte budgets.

    Facts are taken in ``priority`` order while both budgets hold; what does not fit is
    left out. Without ``options.fit`` anything left out fails the export with the plan;
    with it, ``result.left_out`` lists exactly what was left out. The index has one line
    per topic (``- area:docker: 1 blocker, 4 environment, see docker.md``); a topic file
    has a heading and one line per fact, in priority order.
    """
    if options.index_budget < 0 or options.total_budget < 0:
        raise ExportError("--index-budget and --total-budget are byte counts (0 or more)")
    names = {s: f"{n}.md" for s, n in scope_stems({r.scope for r in facts}, ["memory"]).items()}
    counts: dict[str, Counter] = defaultdict(Counter)
    index_lines: dict[str, str] = {}
    kept: dict[str, list[FactRecord]] = defaultdict(list)
    index_size = total = 0
    left: list[dict] = []
    for rec in priority(facts):
        line = _topic_line(rec).encode()
        old = index_lines.get(rec.scope, "")
        new_counts = counts[rec.scope].copy()
        new_counts[rec.kind] += 1
        new = _index_line(rec.scope, names[rec.scope], new_counts)
        d_index = len(new.encode()) - len(old.encode())
        d_topic = len(line) + (0 if old else len(_topic_head(rec.scope).encode()))
        if (
            index_size + d_index <= options.index_budget
            and total + d_index + d_topic <= options.total_budget
        ):
            counts[rec.scope] = new_counts
            index_lines[rec.scope] = new
            kept[rec.scope].append(rec)
            index_size += d_index
            total += d_index + d_topic
        else:
            left.append(
                {
                    "id": rec.key,
                    "scope": rec.scope,
                    "kind": rec.kind,
                    "status": rec.status,
                    "bytes": len(line),
                }
            )
    files = {INDEX_NAME: "".join(index_lines[s] for s in sorted(index_lines, key=names.get))}
    for scope, recs in kept.items():
        files[names[scope]] = _topic_head(scope) + "".join(_topic_line(r) for r in recs)
    sizes = {name: len(text.encode()) for name, text in files.items()}
    result.sizes = {
        "index": sizes[INDEX_NAME],
        "total": sum(sizes.values()),
        "index_budget": options.index_budget,
        "total_budget": options.total_budget,
    }
    if left and not options.fit:
        need_index = sum(
            len(_index_line(s, names[s], Counter(r.kind for r in facts if r.scope == s)).encode())
            for s in {r.scope for r in facts}
        )
        need_total = (
            need_index
            + sum(len(_topic_head(s).encode()) for s in {r.scope for r in facts})
            + sum(len(_topic_line(r).encode()) for r in facts)
        )
        ids = [f"{e['id']} ({e['kind']}, {e['status']}, {e['bytes']} B)" for e in left]
        raise ExportError(
            f"the facts do not fit the memory budgets: {INDEX_NAME} would be {need_index} "
            f"bytes (--index-budget {options.index_budget}), all files {need_total} bytes "
            f"(--total-budget {options.total_budget}); nothing written. To fit, these "
            f"{len(left)} of {len(facts)} facts would have to go: {', '.join(_cap(ids))}. "
            "Pass --fit to leave them out, raise the budgets, or narrow the export with "
            "--scope, --kind or --status active"
        )
    result.left_out = left
    return files


# ------------------------------------------------------------------------------ writing


def check_output(path: Path, folder: bool) -> None:
    """Raise ``ExportError`` early when ``path`` cannot take the export."""
    if len(os.fsencode(path.name)) > NAME_MAX:
        raise ExportError(
            f"--output {printable(str(path))}: a name longer than {NAME_MAX} bytes; pass a"
            " shorter one"
        )
    parent = path.parent if str(path.parent) else Path(".")
    if folder and path.exists() and not path.is_dir():
        raise ExportError(
            f"--output {path} is a file, and this format writes a folder; "
            "pass --output with a folder path"
        )
    if not folder and path.is_dir():
        raise ExportError(f"--output {path} is a folder; pass --output with a file path")
    if not parent.is_dir():
        raise ExportError(
            f"--output {path}: folder {parent} does not exist; create it or pass --output"
            " with another path"
        )
    where = path if folder and path.is_dir() else parent
    if not os.access(where, os.W_OK | os.X_OK):
        raise ExportError(
            f"--output {path}: cannot write in {where}; pass --output with a writable path"
        )


def _same(path: Path, data: bytes) -> bool:
    try:
        return path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


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
    data = text.encode("utf-8")
    if _same(path, data):
        return []
    try:
        write_bytes_atomic(path, data)
    except OSError as exc:
        raise ExportError(
            f"--output {path}: cannot write ({exc.strerror or exc}); free space or pass"
            " --output with another path"
        ) from None
    return [path.name]


def publish(folder: Path, files: dict[str, str]) -> tuple[list[str], list[str]]:
    """Write ``files`` (name -> text) into ``folder`` all or nothing.

    A folder that does not exist yet is built as a hidden temporary folder beside it and
    renamed into place. In an existing folder, files whose bytes would not change are not
    touched; the others are first all written as hidden temporary files, then renamed over
    the old ones. On a failure the temporary files are removed and the folder is as it was.
    Returns ``(written names, names of other files in the folder)``; raises ``ExportError``.
    """
    data = {name: text.encode("utf-8") for name, text in files.items()}
    mode = file_mode()
    parent = folder.parent if str(folder.parent) else Path(".")
    try:
        if not folder.exists():
            tmpdir = tempfile.mkdtemp(prefix=temp_prefix(folder.name), suffix=".tmp", dir=parent)
            try:
                for name, blob in data.items():
                    with open(os.path.join(tmpdir, name), "xb") as f:
                        f.write(blob)
                    os.chmod(os.path.join(tmpdir, name), mode)
                os.chmod(tmpdir, folder_mode())
                os.rename(tmpdir, folder)
            except BaseException:
                shutil.rmtree(tmpdir, ignore_errors=True)
                raise
            return sorted(data), []
        for name in data:
            target = folder / name
            if target.is_symlink() or (target.exists() and not target.is_file()):
                raise ExportError(
                    f"--output {folder}: {name} exists and is not a regular file; "
                    "move it away or pass another --output folder"
                )
        existing = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
        changed = {name: blob for name, blob in data.items() if not _same(folder / name, blob)}
        temps: dict[str, str] = {}
        try:
            for name, blob in changed.items():
                temps[name] = stage_bytes(folder, name, blob)
            for name, tmp in temps.items():
                os.replace(tmp, folder / name)
        except BaseException:
            for tmp in temps.values():
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            raise
        return sorted(changed), [n for n in existing if n not in data]
    except OSError as exc:
        raise ExportError(
            f"--output {folder}: cannot write: {exc.strerror or exc}; "
            "nothing written (pass --output with a writable folder)"
        ) from None
