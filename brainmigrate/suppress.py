"""``brainmigrate check --add-ignore`` (ruff's ``--add-noqa``): write a suppression comment
for each finding a check leaves, so that the next check reports it as suppressed
(docs/check.md, "Adding suppressions").

A finding belongs to a fact (``Finding.fact_line``); its suppression is the trailer that
``read.facts.build_fact`` reads on any line of that fact: ``<!-- brainmigrate: ignore
BM101, BM102 -->``. A fact whose lines already end in such a comment has the new codes
added to it (after the codes it names, in the form it has); else the comment is appended
to the fact's first line that ends in no comment. Only those bytes change: the line ends
(LF or CRLF), a BOM and invalid UTF-8 stay as they were. The files are written as
``--fix`` writes them (``fix.apply``: atomically, read again right before the rename,
read-only files and symlinks leading out of the PATHS left alone, with a note).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from brainmigrate import check, inputs, line_edits, rules
from brainmigrate.fix import FIX_MAX, FileEdit, FixResult, apply
from brainmigrate.read.facts import ALLOW
from brainmigrate.read.files import notes_files, select_files
from brainmigrate.read.lines import WIDE_BOMS
from brainmigrate.read.notation import split_trailer
from brainmigrate.read.run import ImportOptions
from brainmigrate.rewrites import Given


@dataclass
class Added:
    """What ``add_ignores`` did: ``added`` the codes written (one per fact and code) into
    the ``written`` files (display names), ``notes`` why a finding or a file was left
    alone (one line each), ``left`` how many files that needed a comment were not
    written."""

    added: int = 0
    written: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    left: int = 0


def add_ignores(
    paths: Sequence[str | os.PathLike],
    options: ImportOptions,
    fail_on: str = "error",
    *,
    baseline: str | os.PathLike | None = None,
    exclude: Sequence[str] = (),
    select: rules.Selection | None = None,
    file_ignores: Sequence = (),
) -> Added:
    """Check ``paths`` (``check.run_check``, with ``baseline``, ``exclude``, ``select`` and
    ``file_ignores``, the ``per-file-ignores`` pairs)
    and write a suppression for each finding left: neither suppressed nor baselined. A
    finding of no fact (a file-level warning) and an unused suppression (BM401) cannot be
    waived by a comment: each is named in ``notes``. Run twice, the second run finds
    nothing to add and writes nothing. Raises what ``check.run_check`` raises."""
    given = Given(paths)  # the PATHS as they are now, before any work
    try:
        result = check.run_check(
            paths,
            options,
            fail_on,
            baseline=baseline,
            exclude=exclude,
            select=select,
            file_ignores=file_ignores,
        )
        out = Added()
        wanted = _wanted(result, out)
        spans = _spans(result, wanted)
        kept, _ = select_files(paths, exclude, options.names, options.files)
        files = dict(notes_files(kept, names=options.names, rules=options.files))
        plan = FixResult()
        counts: dict[str, int] = {}
        for display in _store_files(kept, options, wanted, out):
            del wanted[display]
        for display, facts in wanted.items():
            edit, count = _edit_file(display, files[display], facts, spans, out)
            if edit is not None:
                plan.edits.append(edit)
                counts[display] = count
        apply(plan, given, files)
        out.notes += plan.notes
        out.written = plan.written
        out.added = sum(counts[d] for d in plan.written)
        out.left = len(plan.edits) - len(plan.written)
        return out
    finally:
        given.close()


def _store_files(kept, options: ImportOptions, wanted: Wanted, out: Added) -> list[str]:
    """The files of ``wanted`` that a store reader reads (``sources.detect.plan``): no
    comment waives a store's fact, so each is named in ``out.notes`` and left alone."""
    from brainmigrate.sources.detect import plan

    _, stores = plan(kept, options.notation, [], options.names, options.files)
    found = [(d, s.name) for d, _, s in stores if d in wanted]
    for display, name in found:
        out.notes.append(
            f"{display}: read by the {name} reader, which keeps no suppression comment;"
            " left alone (fix the facts, or record them with --baseline)"
        )
    return [d for d, _ in found]


#: Per notes file (display name), per fact (its first line): the codes to waive, and the
#: lines of the fact its findings are on.
Wanted = dict[str, dict[int, tuple[set[str], set[int]]]]


def _wanted(result: check.CheckResult, out: Added) -> Wanted:
    """What to waive of the findings ``result`` leaves."""
    wanted: Wanted = {}
    try:
        for f in result.findings:
            if f.suppressed or f.baselined:
                continue
            where = f"{f.file}:{f.line}" if f.line else f.file
            if f.code == "BM401":
                out.notes.append(f"{where}: {f.code}: an unused suppression; remove it by hand")
            elif f.fact_line is None:
                out.notes.append(
                    f"{where}: {f.code}: on no fact, no comment can waive it; fix the file"
                )
            else:
                codes, lines = wanted.setdefault(f.file, {}).setdefault(f.fact_line, (set(), set()))
                codes.add(f.code)
                lines.add(f.line or f.fact_line)
    finally:
        result.findings.close()
    return wanted


def _spans(result: check.CheckResult, wanted: Wanted) -> dict[tuple[str, int], int]:
    """The last line of each fact ``wanted`` names."""
    spans = {}
    for fact in result.facts.parsed():
        if fact.line in wanted.get(fact.file, ()):
            spans[fact.file, fact.line] = fact.last_line or fact.line
    return spans


def _edit_file(display, path, facts, spans, out: Added) -> tuple[FileEdit | None, int]:
    """The edit of one notes file that writes the suppressions of ``facts`` (codes by
    fact line), and how many codes it adds; None when nothing changes."""
    real = os.path.realpath(path)
    try:
        before = inputs.read_bounded(real, FIX_MAX, "a notes file --add-ignore rewrites")
    except OSError as exc:
        out.notes.append(f"{display}: cannot read it ({exc.strerror or exc}); left alone")
        return None, 0
    if any(before.startswith(bom) for bom, _, _ in WIDE_BOMS):
        out.notes.append(f"{display}: UTF-16 or UTF-32 notes are not rewritten; left alone")
        return None, 0
    lines = line_edits.split_lines(before)
    count = 0
    for head, (codes, on) in sorted(facts.items()):
        last = min(spans.get((display, head), head), len(lines))
        free = [n for n in sorted(on | {head}) if n <= len(lines)]
        free += [n for n in range(head, last + 1) if n not in free]  # then its other lines
        done = _waive(lines, range(head, last + 1), free, sorted(codes))
        if done is None:
            out.notes.append(
                f"{display}:{head}: every line of the fact ends in another comment or a"
                " hard line break; add"
                f" '<!-- brainmigrate: ignore {', '.join(sorted(codes))} -->' by hand"
            )
        count += done or 0
    after = b"".join(lines)
    return (FileEdit(display, real, before, after), count) if after != before else (None, 0)


def _waive(
    lines: list[bytes], span: Sequence[int], free: Sequence[int], codes: list[str]
) -> int | None:
    """Write ``codes`` into the fact of the lines ``span`` (1-based) of ``lines``, in
    place: into the fact's ``ignore`` comment, else as a new one on the first of the lines
    ``free`` (its first line, its findings' lines, then its other lines) that can take one
    (``_takes_comment``). How many
    codes were added; None when no line can take them."""
    for number in span:
        text, lead, end = _parts(lines[number - 1], number)
        before, inside = split_trailer(text)
        allow = None if inside is None else ALLOW.fullmatch(inside)
        if allow is None or allow.group("codes") is None:
            continue
        named = {c.upper() for c in allow.group("codes").replace(",", " ").split()}
        new = [c for c in codes if c not in named]
        cut = len(before) + 4 + allow.end("codes")
        text = text[:cut] + "".join(f", {c}" for c in new) + text[cut:]
        lines[number - 1] = lead + text.encode("utf-8", "surrogateescape") + end
        return len(new)
    free = next((n for n in free if _takes_comment(_parts(lines[n - 1], n)[0])), None)
    if free is None:
        return None
    text, lead, end = _parts(lines[free - 1], free)
    body = text.rstrip(" \t")  # before a hard line break's two spaces, which stay last
    space = " " if body else ""
    text = f"{body}{space}<!-- brainmigrate: ignore {', '.join(codes)} -->{text[len(body) :]}"
    lines[free - 1] = lead + text.encode("utf-8", "surrogateescape") + end
    return len(codes)


def _takes_comment(text: str) -> bool:
    """Whether a suppression can go at the end of a line without changing what it says:
    it ends in no comment (a date trailer stays the trailer) and in no backslash (a
    Markdown hard line break, lost behind a comment)."""
    return split_trailer(text)[1] is None and not text.rstrip(" \t").endswith("\\")


def _parts(raw: bytes, number: int) -> tuple[str, bytes, bytes]:
    """A line's text (invalid UTF-8 kept as surrogates, so it is written back as it was),
    the BOM before it and the line end after it."""
    content, lead = line_edits.content(raw, number)
    end = raw[lead + len(content) :]
    return content.decode("utf-8", "surrogateescape"), raw[:lead], end
