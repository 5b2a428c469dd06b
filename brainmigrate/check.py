"""``brainmigrate check``: what in the notes a CI job should flag (docs/check.md).

Read-only: the notes are read and resolved exactly as ``import`` reads them
(``importer.read_notes``); no store is opened. Every citation that anchored nothing and
every diagnostic of the reading becomes a ``Finding`` with a stable code and a severity
(``rules.RULES``); ``rules.Selection`` (``--select``, ``--ignore``) says which codes are reported. A
finding *fails* the check when its severity is at or above ``fail_on``, unless an inline
``<!-- brainmigrate: allow-gone -->`` (gone paths) or ``<!-- brainmigrate: ignore BM102 -->``
suppresses it or the baseline (``baseline``) holds it; a suppression that waives nothing is
a BM401. For a gone path, ``hints.MoveHints`` says where the file may have gone.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from reprlib import recursive_repr
from typing import TYPE_CHECKING

from brainmigrate import importer
from brainmigrate.codes import LEVELS
from brainmigrate.errors import EXIT_FINDINGS, EXIT_OK
from brainmigrate.hints import MoveHints
from brainmigrate.model import Citation, Diagnostic, ParsedFact
from brainmigrate.read.files import InputError, select_files
from brainmigrate.read.run import ImportOptions, Notes, ReadFacts
from brainmigrate.rules import (
    RULES,
    Finding,
    Selection,
    finding_key,
    suppression_text,
    waived_by,
)
from brainmigrate.shapes import shorten

if TYPE_CHECKING:  # the baseline is loaded when a run names one
    from brainmigrate.baseline import BaselineStatus


@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class CheckedFact:
    """A fact the check read: its file, first line, scope and text (for per-fact reports)."""

    file: str
    line: int
    scope: str
    text: str

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(self, file, line, scope, text) -> None:
        object.__setattr__(self, "file", file)
        object.__setattr__(self, "line", line)
        object.__setattr__(self, "scope", scope)
        object.__setattr__(self, "text", text)

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(file={self.file!r}, line={self.line!r}, "
            f"scope={self.scope!r}, text={self.text!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.file, self.line, self.scope, self.text) == (
                other.file,
                other.line,
                other.scope,
                other.text,
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.file, self.line, self.scope, self.text))


class CheckedFacts:
    """The facts a check read, as ``CheckedFact`` values: ``len`` and iteration, read back
    from the run's temporary file each time (``read.run.ReadFacts``)."""

    def __init__(self, facts: ReadFacts) -> None:
        self._facts = facts

    def __len__(self) -> int:
        return len(self._facts)

    def __iter__(self) -> Iterator[CheckedFact]:
        for f in self._facts.parsed():
            yield CheckedFact(f.file, f.line, f.scope, f.text)


@dataclass(frozen=True, init=False, repr=False, eq=False)
class CheckResult:
    """A check's outcome: notes files (display names, in order), facts, findings (sorted by
    file, line, column, code), the ``fail_on`` level, the baseline's status and the files
    ``exclude`` globs left out. ``tool`` names the command in report titles;
    ``summary_text``, when given, is the reports' one-sentence summary (``stale`` gives its
    own counts)."""

    files: tuple[str, ...]
    facts: Sequence[CheckedFact] | CheckedFacts
    findings: tuple[Finding, ...]
    fail_on: str = "error"
    baseline: BaselineStatus | None = None
    excluded: tuple[str, ...] = ()
    tool: str = "check"
    summary_text: str | None = None

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(
        self,
        files,
        facts,
        findings,
        fail_on="error",
        baseline=None,
        excluded=(),
        tool="check",
        summary_text=None,
    ) -> None:
        object.__setattr__(self, "files", files)
        object.__setattr__(self, "facts", facts)
        object.__setattr__(self, "findings", findings)
        object.__setattr__(self, "fail_on", fail_on)
        object.__setattr__(self, "baseline", baseline)
        object.__setattr__(self, "excluded", excluded)
        object.__setattr__(self, "tool", tool)
        object.__setattr__(self, "summary_text", summary_text)

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(files={self.files!r}, facts={self.facts!r}, "
            f"findings={self.findings!r}, fail_on={self.fail_on!r}, "
            f"baseline={self.baseline!r}, excluded={self.excluded!r}, tool={self.tool!r}, "
            f"summary_text={self.summary_text!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (
                self.files,
                self.facts,
                self.findings,
                self.fail_on,
                self.baseline,
                self.excluded,
                self.tool,
                self.summary_text,
            ) == (
                other.files,
                other.facts,
                other.findings,
                other.fail_on,
                other.baseline,
                other.excluded,
                other.tool,
                other.summary_text,
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash(
            (
                self.files,
                self.facts,
                self.findings,
                self.fail_on,
                self.baseline,
                self.excluded,
                self.tool,
                self.summary_text,
            )
        )

    @property
    def failing(self) -> tuple[Finding, ...]:
        """The findings that fail the check at ``fail_on``."""
        return tuple(f for f in self.findings if f.fails(self.fail_on))

    @property
    def exit_code(self) -> int:
        """1 when a finding fails the check, else 0 (SPEC.md §Exit codes)."""
        return EXIT_FINDINGS if self.failing else EXIT_OK

    def totals(self) -> dict:
        """Counts every report shows: files, facts, findings by severity and by code,
        failing, suppressed, baselined."""
        sev = Counter(f.severity for f in self.findings)
        return {
            "files": len(self.files),
            "facts": len(self.facts),
            "findings": len(self.findings),
            "by_severity": {lvl: sev.get(lvl, 0) for lvl in LEVELS},
            "by_code": dict(sorted(Counter(f.code for f in self.findings).items())),
            "failing": len(self.failing),
            "suppressed": sum(f.suppressed for f in self.findings),
            "baselined": sum(f.baselined for f in self.findings),
        }


# ------------------------------------------------------------------------------ running


def run_check(
    paths: Sequence[str | os.PathLike],
    options: ImportOptions,
    fail_on: str = "error",
    *,
    baseline: str | os.PathLike | None = None,
    update_baseline: bool = False,
    exclude: Sequence[str] = (),
    select: Selection | None = None,
) -> CheckResult:
    """Check the notes files ``paths`` name: read them as ``import`` does, make findings.

    ``fail_on`` is ``error``, ``warning`` or ``info``. With ``baseline``, findings its file
    holds do not fail; with ``update_baseline`` too, the file is first (re)written with the
    current findings (atomically). ``exclude`` globs leave notes files out (``is_excluded``);
    ``select`` leaves out the findings of codes it does not report (default: none).
    Writes nothing else. Raises ``InputError`` (bad path, root, option or baseline) or
    ``lines.NotesReadError``.
    """
    if fail_on not in LEVELS:
        raise InputError(f"--fail-on {fail_on}: must be one of {', '.join(LEVELS)}")
    if update_baseline and baseline is None:
        raise InputError("--update-baseline needs a baseline file: add --baseline FILE")
    paths, excluded = select_files(paths, exclude, options.names)
    notes = importer.read_notes(paths, options)
    if options.progress is not None:
        options.progress("check", 0, len(notes.facts), sum(st.lines for st in notes.files))
    findings = collect(notes, MoveHints(notes.roots, options.cache_dir, notes.name_index))
    if select is not None:
        findings = [f for f in findings if select.enabled(f.code)]
    facts = CheckedFacts(notes.facts)
    files = tuple(st.path for st in notes.files)
    status = None
    if baseline is not None:
        from brainmigrate.baseline import apply_baseline, read_baseline, write_baseline

        if update_baseline:
            write_baseline(baseline, findings)
        entries = read_baseline(baseline)
        findings, status = apply_baseline(findings, entries, os.fspath(baseline))
        status = replace(status, updated=update_baseline)
    return CheckResult(files, facts, tuple(findings), fail_on, status, tuple(excluded))


def collect(notes: Notes, hints: MoveHints | None = None) -> list[Finding]:
    """The findings of read notes, sorted by file (command-line order), line, column, code.

    One finding per gone, outside, unresolved, ignored (BM105, SPEC.md §Anchors "Git-ignored
    paths") or ambiguous citation and per diagnostic; one
    BM401 per entry of a fact's ``suppress`` that waived none of its findings. ``hints``
    gives gone paths a "moved?" hint (None: no hints).
    """
    out: list[Finding] = []
    waivers: dict[tuple[str, int], ParsedFact] = {}  # facts with a suppression comment
    used: set[tuple[str, int, str]] = set()

    def add(finding: Finding, fact: ParsedFact | None) -> None:
        if fact is not None and fact.suppress:
            waivers[fact.file, fact.line] = fact
            entry = waived_by(finding.code, fact.suppress)
            if entry is not None:
                used.add((fact.file, fact.line, entry))
                finding = replace(finding, suppressed=True, suppressed_by=suppression_text(entry))
        out.append(finding)

    for fact, res in notes.facts:
        if fact.suppress:
            waivers[fact.file, fact.line] = fact
        for c in res.citations:
            add(_citation_finding(fact, c, hints), fact)
    if notes.warnings:
        scopes = {st.path: st.scope for st in notes.files}
        for d, owner in _owners(notes):
            add(_diagnostic_finding(d, owner, scopes), owner)
    for (file, line), fact in waivers.items():
        for entry in sorted(fact.suppress):
            if (file, line, entry) not in used:
                out.append(_unused_finding(fact, entry))
    order = {st.path: i for i, st in enumerate(notes.files)}
    out.sort(key=lambda f: (order.get(f.file, 0), f.line or 0, f.col or 0, f.code, f.subject))
    return out


def _unused_finding(fact: ParsedFact, entry: str) -> Finding:
    comment = suppression_text(entry)
    if entry == "gone":
        message = f"unused suppression '{comment}': the fact has no gone path"
    elif any(code.startswith(entry) for code in RULES):
        message = f"unused suppression '{comment}': the fact has no {entry} finding"
    else:
        codes = f"{min(RULES)}-{max(RULES)}"
        message = f"suppression '{comment}' names no finding code (they are {codes})"
    return Finding(
        code="BM401",
        severity=RULES["BM401"].severity,
        file=fact.file,
        line=fact.line,
        col=None,
        message=message,
        subject=comment,
        scope=fact.scope,
        fact_line=fact.line,
        fact_text=shorten(fact.text, 120),
        fingerprint=finding_key("BM401", fact.scope, fact.full_text, comment),
    )


def _owners(notes: Notes) -> Iterator[tuple[Diagnostic, ParsedFact | None]]:
    """Each warning with the fact it is about (or None), in one pass over the facts.

    Facts come in file order (command-line order) and line order; warnings are sorted the
    same way, so a warning's candidate is the last fact at or before its line in its file.
    """
    order = {st.path: i for i, st in enumerate(notes.files)}
    warnings = sorted(
        (d for d in notes.warnings if d.line is not None and d.file in order),
        key=lambda d: (order[d.file], d.line),
    )
    yield from ((d, None) for d in notes.warnings if d.line is None or d.file not in order)
    facts = iter(notes.facts.parsed())
    last: ParsedFact | None = None
    ahead = next(facts, None)
    for d in warnings:
        at = (order[d.file], d.line)
        while ahead is not None and (order[ahead.file], ahead.line) <= at:
            last, ahead = ahead, next(facts, None)
        yield d, _owner(d, last)


#: Diagnostics that always belong to a fact: at its first line (BM202, BM302) or at one of
#: its lines (BM301); others (BM305, BM306, …) belong to a fact when they sit on one of its
#: lines (its first line or a continuation).
_FACT_CODES = frozenset({"BM202", "BM301", "BM302"})


def _owner(d: Diagnostic, last: ParsedFact | None) -> ParsedFact | None:
    """The fact diagnostic ``d`` is about, given ``last``, the last fact starting at or
    before its line (in any file), or None."""
    if last is None or last.file != d.file:
        return None
    mine = d.line <= max(last.line, last.last_line) or d.code in _FACT_CODES
    return last if mine else None


def _citation_finding(fact: ParsedFact, c: Citation, hints: MoveHints | None) -> Finding:
    if c.state == "gone":
        code, subject = "BM101", c.name
        message = f"cites {c.name}, which no root holds"
        hint = hints.hint(c.name) if hints else None
    elif c.state == "outside":
        code, subject, hint = "BM102", c.name, None
        message = f"cites {c.name}, outside every root ({c.reason})"
    elif c.state == "unresolved":
        code, subject, hint = "BM103", c.name, None
        message = f"cites {c.name}, but nothing of it is in any root (no file citation?)"
    elif c.state == "ignored":
        code, subject, hint = "BM105", c.name, None
        message = f"cites {c.name}, which git ignores (a runtime or build file)"
    else:
        code, subject, hint = "BM201", c.name, None
        shown = ", ".join(c.candidates[:5])
        if len(c.candidates) > 5:
            shown += f" and {len(c.candidates) - 5} more"
        if c.how == "camelcase":
            message = f"{c.name} is declared in {len(c.candidates)} files: {shown}"
        else:
            message = f"{c.name} names {len(c.candidates)} files: {shown}"
    return Finding(
        code=code,
        severity=RULES[code].severity,
        file=fact.file,
        line=c.line,
        col=c.col,
        message=message,
        subject=subject,
        scope=fact.scope,
        fact_line=fact.line,
        fact_text=shorten(fact.text, 120),
        fingerprint=finding_key(code, fact.scope, fact.full_text, subject),
        hint=hint,
    )


#: Diagnostics whose message names lines: a finding of one that belongs to no fact has a
#: fingerprint of the message without them, so a baseline holds it while lines above move.
_LINED = {"BM311": "unresolved merge conflict"}
#: The cited path in the message of a diagnostic about one (SPEC.md §Anchors, "Lines and
#: fragments are checked"): the finding's ``subject``, as a citation finding's.
_CITED = {
    "BM204": re.compile(r"line \d+ is past the end of (.+) \(\d+ lines?\)"),
    "BM205": re.compile(r"no heading #\S* in (.+)"),
}


def _diagnostic_finding(d: Diagnostic, fact: ParsedFact | None, scopes: dict) -> Finding:
    """A finding of the diagnostic ``d`` (the rule's severity, when the code has one: a
    BM311 merge conflict is an error in ``check`` though the import report warns)."""
    scope = fact.scope if fact else scopes.get(d.file, "")
    text = fact.full_text if fact else _LINED.get(d.code, d.message)
    cited = _CITED.get(d.code)
    named = cited.fullmatch(d.message) if cited else None
    subject = named.group(1) if named else ""
    return Finding(
        code=d.code,
        severity=RULES[d.code].severity if d.code in RULES else d.severity,
        file=d.file,
        line=d.line,
        col=d.col,
        message=d.message,
        subject=subject,
        scope=scope,
        fact_line=fact.line if fact else None,
        fact_text=shorten(fact.text, 120) if fact else "",
        fingerprint=finding_key(d.code, scope, text, subject),
    )
