"""Store files read into the run's facts: each ``Entry`` made a ``ParsedFact`` and handed
to the same resolver as a notes fact, so its text cites files the same way in every
format (SPEC.md §Anchors); what the store kept besides (ids, anchors, links, a status's
reason) is kept by the line it came from, for the import to apply once merged (§Merge).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from brainmigrate import inputs
from brainmigrate.codes import diagnostic
from brainmigrate.model import KINDS, STATUSES, Diagnostic, ParsedFact, Segment
from brainmigrate.read.facts import MAX_TEXT, TaskIds, cut
from brainmigrate.read.files import InputError, missing_or_unreadable
from brainmigrate.read.notation import fold
from brainmigrate.read.run import FileStats
from brainmigrate.sources import Entry, Reading, Skip, Source
from brainmigrate.sources.detect import text_lines
from brainmigrate.sources.skipped import reasons
from brainmigrate.spill import Spill

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
    stored length), its task ids read as a notes fact's are, its marker the stored one or
    its kind's."""
    full = fold(entry.text)
    text = cut(full) if len(full) > MAX_TEXT else full
    found = tasks.all(full)
    task = entry.task if entry.task is not None else (found[0] if found else None)
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
        text = inputs.read_whole(path).decode("utf-8", "replace")
    except OSError as exc:
        raise InputError(f"{reading.file}: {missing_or_unreadable(exc)}") from None
    lines = text.splitlines()
    fact_lines: Counter = Counter()  # line -> entries on it
    scopes: Counter = Counter()
    for item in (noted := _Noted(source.entries(path, reading))):
        if not isinstance(item, Skip):
            item = _checked(item)
        if isinstance(item, Skip):
            diags.append(diagnostic(item.file, item.line, "BM312", item.reason, item.col))
            continue
        fact_lines[item.line] += 1
        scopes[item.scope] += 1
        keep(entry_fact(item, tasks), item)
    st.fact_lines = fact_lines.total()
    lines = text_lines(text)  # as the readers split them: at \n only
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


def _checked(entry: Entry) -> Entry | Skip:
    """``entry``, or a ``Skip`` saying why the store cannot keep it (a source's kind or
    status that is none of the model's, a text that is blank)."""
    if entry.kind not in KINDS:
        why = f"kind {entry.kind!r} is not one of {', '.join(KINDS)}"
    elif entry.status not in STATUSES:
        why = f"status {entry.status!r} is not one of {', '.join(STATUSES)}"
    elif not fold(entry.text):
        why = "the fact's text is blank"
    else:
        return entry
    return Skip(entry.file, entry.line, entry.col, f"{why}; skipped")


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
