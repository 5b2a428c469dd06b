"""Store files read into the run's facts: each ``Entry`` made a ``ParsedFact`` and handed
to the same resolver as a notes fact, so its text cites files the same way in every
format (SPEC.md §Anchors); what the store kept besides (ids, anchors, links, a status's
reason) is kept by the line it came from, for the import to apply once merged (§Merge).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from brainmigrate import inputs
from brainmigrate.codes import diagnostic
from brainmigrate.model import KINDS, MARKERS, STATUSES, Anchor, Diagnostic, ParsedFact, Segment
from brainmigrate.read.facts import MAX_TEXT, TaskIds, cut
from brainmigrate.read.files import InputError, missing_or_unreadable
from brainmigrate.read.notation import fold
from brainmigrate.read.run import FileStats
from brainmigrate.shapes import shorten
from brainmigrate.sources import Entry, Reading, Skip, Source
from brainmigrate.sources.detect import text_lines
from brainmigrate.sources.skipped import reasons
from brainmigrate.spill import Spill
from brainmigrate.values import (
    DIGEST_VERSIONS,
    id_ok,
    line_ok,
    run_ok,
    scope_ok,
    store_time,
    symbol_ok,
    time_ok,
)

#: The marker a fact of each kind is stored with when its store keeps none (the marker
#: that reads as the kind in brain notation; ``-`` for other, SPEC.md §Notation).
MARKER_OF_KIND = {
    "pattern": "+",
    "environment": "=",
    "decision": "~",
    "blocker": "!",
    "other": "-",
}

#: ``(file as shown, line)`` -> the ``Entry`` read there, for what it keeps.
Kept = dict[tuple[str, int], Entry]


def entry_fact(entry: Entry, tasks: TaskIds) -> ParsedFact:
    """The ``ParsedFact`` an entry states: its one line of text folded (and cut to the
    stored length), its task ids read as a notes fact's are (with the words of the task
    the store kept, a fact ``put --task`` wrote whose text names none), its marker the
    stored one or its kind's."""
    full = fold(entry.text)
    text = cut(full) if len(full) > MAX_TEXT else full
    found = tasks.all(full)
    task = entry.task if entry.task is not None else (found[0] if found else None)
    if entry.task is not None:  # the store keeps a fact's task among its task ids
        found = [*found, *(t for t in entry.task.split(" ") if t not in found)]
    return ParsedFact(
        entry.file,
        entry.line,
        entry.scope,
        entry.kind,
        entry.marker or MARKER_OF_KIND[entry.kind],
        text,
        full,
        task,
        frozenset(found),
        entry.run,
        entry.created,
        entry.status,
        entry.segments or (Segment(entry.line, entry.col, entry.text),),
        frozenset(),
        entry.line,
    )


def read_store_file(
    source: Source,
    reading: Reading,
    path: Path,
    tasks: TaskIds,
    diags: list[Diagnostic],
    keep: Callable[[ParsedFact, Entry], None],
) -> FileStats:
    """Read ``path`` with ``source``: every line counted (SPEC.md §Report: a line an entry
    starts on is a fact line, a blank one blank, any other skipped as ``prose``), each
    entry's fact handed to ``keep`` with the entry, each ``Skip`` a BM312 warning in
    ``diags``. A line holding several entries (an MCP memory entity's observations) counts
    once per entry in ``lines`` and ``fact_lines``, so that both invariants of §Report
    hold (``lines == fact_lines + continuations + blank + skipped``; into an empty store,
    ``fact_lines == facts + merged``). Raises ``InputError``."""
    st = FileStats(reading.file, reading.scope or "", notation=source.name)
    try:
        raw = inputs.read_whole(path)
    except OSError as exc:
        raise InputError(f"{reading.file}: {missing_or_unreadable(exc)}") from None
    text = raw.decode("utf-8", "replace")
    _bad_bytes(raw, reading.file, diags)
    fact_lines: Counter = Counter()  # line -> entries on it
    scopes: Counter = Counter()
    for item in (noted := _Noted(source.entries(path, reading))):
        if not isinstance(item, Skip):
            item, said = _checked(item)
            for code, message in said:
                diags.append(diagnostic(item.file, item.line, code, message, item.col))
        if isinstance(item, Skip):
            diags.append(diagnostic(item.file, item.line, "BM312", item.reason, item.col))
            continue
        fact_lines[item.line] += 1
        scopes[item.scope] += 1
        fact = entry_fact(item, tasks)
        if len(fact.full_text) > MAX_TEXT:
            cut_to = f"text cut to {len(fact.text)} of {len(fact.full_text)} characters"
            diags.append(diagnostic(item.file, item.line, "BM302", cut_to, item.col))
        keep(fact, item)
    st.fact_lines = fact_lines.total()
    lines = text_lines(text)  # as the readers split them: at \n only (not U+2028)
    st.continuations = len(noted.more - fact_lines.keys())
    st.lines = len(lines) + st.fact_lines - len(fact_lines)
    st.blank = sum(1 for n, ln in enumerate(lines, 1) if not ln.strip() and n not in fact_lines)
    st.skipped = st.lines - st.fact_lines - st.continuations - st.blank
    if st.skipped:  # named as notes name them: front matter, headings, code, prose
        st.skipped_by_reason.update(reasons(lines, fact_lines.keys() | noted.more))
    if not st.scope:
        st.scope = scopes.most_common(1)[0][0] if scopes else ""
    return st


class _Noted:
    """The items of a source, noting the further lines each entry's text spans
    (``Entry.segments`` past the first): counted as continuations, as a notes fact's."""

    def __init__(self, items) -> None:
        self.items, self.more = items, set()

    def __iter__(self):
        for item in self.items:
            if isinstance(item, Entry):
                self.more.update(seg.line for seg in item.segments[1:])
            yield item


def _bad_bytes(raw: bytes, file: str, diags: list[Diagnostic]) -> None:
    """BM305 for each line of ``raw`` holding bytes that are not UTF-8, which every source
    reads as U+FFFD: said as a notes file's are (``read.lines``), never silent."""
    try:
        raw.decode("utf-8")
        return
    except UnicodeDecodeError:
        pass
    for number, line in enumerate(text_lines(raw.decode("utf-8", "surrogateescape")), 1):
        bad = next((i for i, c in enumerate(line) if "\udc80" <= c <= "\udcff"), None)
        if bad is not None:
            message = "invalid UTF-8 bytes replaced with U+FFFD"
            diags.append(diagnostic(file, number, "BM305", message, bad + 1))


def _checked(entry: Entry) -> tuple[Entry | Skip, list[tuple[str, str]]]:
    """``entry`` as the store can keep it, or a ``Skip`` saying why it cannot; with the
    ``(code, message)`` warnings of what was changed or left out to keep it.

    Every value an entry carries into the store passes the rules the store's reader
    refuses a row by (``values``), before the merge: a value with one right form is
    given it (a date or a time with an offset: the store's UTC time; lines written
    backwards: in order; a task: its words single-spaced); an anchor that cannot be
    stored is left out (BM312), a fingerprint that is not whole (no ``digest_version``:
    a jsonl export keeps none) is dropped, so the anchor is verified again; an id past
    ``values.MAX_ID`` is not kept (BM312); NUL characters become U+FFFD (BM306), as in
    notes. Any other value the store cannot read back skips the entry (BM312)."""
    said: list[tuple[str, str]] = []
    why = _refused(entry)
    if why is not None:
        return Skip(entry.file, entry.line, entry.col, f"{why}; skipped"), said
    changes: dict = {}
    if entry.created is not None and entry.created != (created := store_time(entry.created)):
        changes["created"] = created
    if entry.task is not None and entry.task != (task := " ".join(entry.task.split()) or None):
        changes["task"] = task
    stored = [_stored_anchor(a) for a in entry.anchors]
    said += [("BM312", a) for a in stored if isinstance(a, str)]
    if any(a is not b for a, b in zip(stored, entry.anchors, strict=True)):
        # anchors are equal by their key alone: what changed is told by identity
        changes["anchors"] = tuple(a for a in stored if not isinstance(a, str))
    if entry.id is not None and not id_ok(entry.id):
        changes["id"] = None
        said.append(("BM312", f"id k{entry.id} is past the largest a store keeps; not kept"))
    for what in ("supersedes", "related"):
        ids = getattr(entry, what)
        if not all(map(id_ok, ids)):
            changes[what] = tuple(filter(id_ok, ids))
            said.append(("BM312", f"{what}: an id past the largest a store keeps; left out"))
    texts = {k: changes.get(k, getattr(entry, k)) for k in _TEXTS}  # as normalised
    texts = {k: v for k, v in texts.items() if v is not None}
    nul = [k for k, v in texts.items() if "\x00" in v]
    if nul:
        changes.update({k: texts[k].replace("\x00", "\ufffd") for k in nul})
        said.append(("BM306", f"NUL characters in the {', '.join(nul)} replaced with U+FFFD"))
    return (dataclasses.replace(entry, **changes) if changes else entry), said


#: The text fields of an ``Entry`` that reach the store.
_TEXTS = ("text", "scope", "task", "run", "status_reason")


def _refused(entry: Entry) -> str | None:
    """Why the store cannot keep ``entry`` at all (None: it can, once normalised)."""
    if entry.kind not in KINDS:
        return f"kind {entry.kind!r} is not one of {', '.join(KINDS)}"
    if entry.status not in STATUSES:
        return f"status {entry.status!r} is not one of {', '.join(STATUSES)}"
    if entry.marker is not None and entry.marker not in MARKERS:
        return f"marker {entry.marker!r} is not one of {' '.join(MARKERS)}"
    if not fold(entry.text):
        return "the fact's text is blank"
    if not scope_ok(entry.scope):
        return f"scope {entry.scope!r} is blank"
    created = entry.created
    if created is not None and (created := store_time(created)) is None:
        return (
            f"created {shorten(entry.created, 40)!r} is no ISO date or time (2024-05-01T10:00:00Z)"
        )
    if not run_ok(entry.run, created):
        if created is None:
            return f"run {shorten(entry.run, 40)!r} is given without created (a stamp gives both)"
        return f"run {shorten(entry.run, 40)!r} is not one word"
    return None


def _stored_anchor(anchor: Anchor) -> Anchor | str:
    """``anchor`` as the store keeps it, or why it cannot (a ``str``)."""
    name = f"anchor {shorten(anchor.path, 60)!r}"
    lines = anchor.lines
    if lines is not None and not all(map(line_ok, lines)):
        return f"{name}: lines {list(lines)} are not line numbers; anchor left out"
    if not symbol_ok(anchor.kind, anchor.symbol):
        if anchor.kind == "symbol":
            return f"{name}: a symbol anchor names no symbol; anchor left out"
        return f"{name}: a {anchor.kind} anchor names symbol {anchor.symbol!r}; anchor left out"
    if not anchor.path or not anchor.root:
        return f"{name}: no path or no root; anchor left out"
    whole = anchor.digest_version in DIGEST_VERSIONS and time_ok(anchor.verified_at)
    if lines is not None and lines[0] > lines[1] or anchor.fingerprinted and not whole:
        lines = (min(lines), max(lines)) if lines else None
        if whole:
            return dataclasses.replace(anchor, lines=lines)
        return Anchor(anchor.kind, anchor.root, anchor.path, anchor.symbol, lines, anchor.how)
    return anchor


def spill_fact(
    facts: Spill,
    fact: ParsedFact,
    res,
    stems: Callable[[str], Iterable[str]] | None,
    df: Counter | None,
) -> None:
    """Keep ``fact`` (and what it names, ``res``) in the run's ``facts`` as the read stage
    keeps a notes fact: without its segments, with its stems counted in ``df``."""
    fact_stems = None
    if stems is not None:
        fact_stems = tuple(stems(fact.full_text))
        if df is not None:
            df.update(fact_stems)
    fact = fact.without_segments()
    facts.append((fact, res, fact_stems), len(fact.full_text))
