"""The ``brain`` export: brain notation, one file per scope, each fact one line. Every
line is read back with the importer's own rules before anything is written; a fact
that would not come back the same (kind, text, task, status, created, run) fails the
export.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

from brainmigrate.exports.common import (
    ExportError,
    _cap,
    quote,
    refusal,
)
from brainmigrate.exports.files import scope_stems
from brainmigrate.fsutil import (
    printable,
)
from brainmigrate.merge.index import Key, MergeIndex
from brainmigrate.merge.rule import Stems, numbers
from brainmigrate.model import BRAIN_MARKERS, KINDS, FactRecord
from brainmigrate.read.facts import (
    KIND_OF_MARKER,
    MAX_TEXT,
    TaskIds,
    build_fact,
    cut,
    is_superseded,
    plus_kind_for,
    scope_for,
)
from brainmigrate.read.lines import Line
from brainmigrate.read.notation import classifier, fold, split_trailer
from brainmigrate.shapes import plural

#: The shortest text taken for one the importer cut at 2000 characters (a cut leaves
#: less only before a word of over 1000 characters): a shorter text whose task or
#: SUPERSEDED it does not show was stored whole without them (``put --task``).
MAY_BE_CUT = MAX_TEXT // 2
#: What fills a brain line past the 2000-character cut (no space, letter or digit: it
#: adds no word, number or task id, and the importer cuts it off again).
PAST_THE_CUT = "…"

#: The marker that gives a kind whatever the file is called ("+" depends on the file).
_OWN_MARKER = {"blocker": "!", "decision": "~", "environment": "=", "other": "?"}

_CREATED = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})T([0-9]{2}:[0-9]{2}:[0-9]{2})Z")


def _task_ids(pattern: str | None) -> TaskIds:
    try:
        return TaskIds(pattern)
    except re.error as exc:
        raise ExportError(
            f"--task-pattern: not a valid regular expression ({exc}); fix it"
        ) from None


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
    its task ``(TASK)``: past the 2000-character cut for a text the importer cut, else in
    the text (both noted; see ``brain_line``).
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
    stale, past, shown, merging = [], [], [], []
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
            if len(text) > MAX_TEXT:
                past.append(rec.key)
            elif text != fold(rec.text):
                shown.append(rec.key)
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
            f"{plural(len(problems), 'fact')} cannot be written in brain notation as"
            f" {'it is' if len(problems) == 1 else 'they are'}; "
            "nothing written:\n  " + "\n  ".join(_cap([refusal(p) for p in problems]))
        )
    if refused is not None:
        refused.extend(problems)
    notes.extend(_notes(stale, past, merging, stems, shown))
    return files


def _shown_note(shown: list[str]) -> str:
    """The note for facts whose task or ``SUPERSEDED`` is written into their text (a text
    the importer did not cut, that does not show them: ``put --task``)."""
    return (
        f"{plural(len(shown), 'fact')} {_are(shown)} written with the task id or SUPERSEDED"
        " their text does not show in it (brain notation reads both from the text, so"
        f" importing the export keeps them in the text): {', '.join(_cap(shown))}"
    )


def _notes(
    stale: list[str],
    past: list[str],
    merging: list[str],
    stems: dict[str, str],
    shown: list[str] = (),
) -> list[str]:
    """What brain notation cannot carry of the facts written: ``stale`` ids, ids of facts
    whose task or ``SUPERSEDED`` stands past the cut (``past``) or in the text (``shown``),
    the merges importing the export would make (``merging``), scopes their file name
    (``stems``) does not tell."""
    notes: list[str] = []
    if stale:
        notes.append(
            f"{plural(len(stale), 'stale fact')} {_are(stale)} written as plain facts"
            " (brain notation has no "
            f"stale status): {', '.join(_cap(stale))}"
        )
    if past:
        notes.append(
            f"{plural(len(past), 'fact')} {'was' if len(past) == 1 else 'were'} cut at"
            f" {MAX_TEXT} characters before their task id or"
            " SUPERSEDED: written past the cut, where importing the export finds them"
            f" (and warns BM302): {', '.join(_cap(past))}"
        )
    if shown:
        notes.append(_shown_note(shown))
    if merging:
        notes.append(
            f"{plural(len(merging), 'fact')} {_are(merging)} so alike that importing the"
            " export merges them: "
            f"{', '.join(_cap(merging))}"
        )
    renamed = [
        f"{printable(scope)} in {stems[scope]}.md (imports as {scope_for(stems[scope] + '.md')}"
        f" unless imported with --scope {printable(scope)})"
        for scope in sorted(stems)
        if scope_for(f"{stems[scope]}.md") != scope
    ]
    if renamed:
        notes.append(
            f"{plural(len(renamed), 'scope')} cannot be told by their file name alone: "
            + "; ".join(_cap(renamed))
        )
    return notes


def _are(items: list) -> str:
    return "is" if len(items) == 1 else "are"


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
    if rec.status == "superseded" and not is_superseded(text):
        extra.append("SUPERSEDED")
    if rec.task and not tasks.all(text):
        extra.append(f"({rec.task})")
    if extra:
        # as one word after the text; for a text the importer cut, past the cut (and "…"
        # up to it), so the importer finds it in the whole text and keeps the text as it
        # is stored; a shorter text (``put --task``, a store's task) shows it in the text
        cut_one = len(text) > MAY_BE_CUT
        text = f"{text} {''.join(extra)}"
        if cut_one:
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
    if rec.marker in BRAIN_MARKERS and KIND_OF_MARKER.get(rec.marker, plus) == rec.kind:
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
