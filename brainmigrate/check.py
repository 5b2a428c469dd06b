"""``brainmigrate check``: what in the notes a CI job should flag (docs/check.md).

Read-only: the notes are read and resolved exactly as ``import`` reads them
(``importer.read_notes``); no store is opened. Every citation that anchored nothing and
every diagnostic of the reading becomes a ``Finding`` with a stable code and a severity
(``RULES``); ``Selection`` (``--select``, ``--ignore``) says which codes are reported. A
finding *fails* the check when its severity is at or above ``fail_on``, unless an inline
``<!-- brainmigrate: allow-gone -->`` (gone paths) or ``<!-- brainmigrate: ignore BM102 -->``
suppresses it or the baseline holds it; a suppression that waives nothing is a BM401.
For a gone path, ``MoveHints`` says where the file may have gone:
git's rename history, else the one file of the first root with the same name, else one
clearly closest path of the first root.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from brainmigrate import importer
from brainmigrate.anchors import Root, is_absolute, normalize
from brainmigrate.fsutil import write_text_atomic
from brainmigrate.importer import is_excluded  # noqa: F401 - part of check's interface
from brainmigrate.model import Citation, Diagnostic, ParsedFact

#: Severity levels, highest first; ``--fail-on`` takes one of them.
LEVELS = ("error", "warning", "info")
_RANK = {"info": 0, "warning": 1, "error": 2}
#: Version of the JSON report and of the baseline file.
SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class Rule:
    """A finding code: short ``name``, default ``severity`` and a one-line ``summary``."""

    code: str
    name: str
    severity: str
    summary: str


#: Every finding code, in report order (docs/check.md, "Finding codes").
RULES: dict[str, Rule] = {
    r.code: r
    for r in (
        Rule("BM101", "gone-path", "error", "A fact cites a path that no root holds."),
        Rule("BM102", "outside-root", "warning", "A fact cites a path outside every root."),
        Rule(
            "BM103",
            "unresolved-path",
            "warning",
            "A fact cites a path nothing of which any root knows (most likely no file).",
        ),
        Rule("BM104", "no-git-history", "info", "A root's git history is cut (shallow)."),
        Rule("BM201", "ambiguous-name", "info", "A bare file name or CamelCase name is ambiguous."),
        Rule("BM202", "anchors-dropped", "info", "A fact names more than 6 names of one kind."),
        Rule("BM203", "line-out-of-range", "warning", "A line form's number passes 2^31-1."),
        Rule("BM301", "undated-trailer", "info", "A trailing comment of a fact is not a date."),
        Rule("BM302", "text-cut", "info", "A fact's text was cut to 2000 characters."),
        Rule("BM303", "unclosed-fence", "info", "A code fence is never closed."),
        Rule("BM304", "unclosed-comment", "info", "An HTML comment is never closed."),
        Rule("BM305", "invalid-utf8", "warning", "A line holds invalid bytes."),
        Rule("BM306", "nul-byte", "warning", "A line holds NUL bytes."),
        Rule("BM307", "not-a-file", "warning", "A *.md entry of a notes folder is not a file."),
        Rule(
            "BM308", "line-too-long", "warning", "A line is longer than 16 MiB; the rest skipped."
        ),
        Rule(
            "BM309", "fact-too-long", "warning", "A fact is longer than 1 MiB; the rest left out."
        ),
        Rule("BM310", "decoded-utf16-32", "info", "A notes file was decoded as UTF-16 or UTF-32."),
        Rule(
            "BM401",
            "unused-suppression",
            "info",
            "A brainmigrate: ignore or allow-gone comment waives no finding.",
        ),
        Rule(
            "BM501",
            "stale-fact",
            "error",
            "The code a fact is anchored to changed since it was verified (brainmigrate stale).",
        ),
    )
}


@dataclass(frozen=True)
class Selection:
    """Which codes a check reports, as ruff selects rules: a code is reported when the
    longest prefix of it in ``select`` (None: every code) or ``extend_select`` is longer than
    the longest in ``ignore`` (on a tie, ``ignore`` wins)."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for option, values in (
            ("--select", self.select or ()),
            ("--extend-select", self.extend_select),
            ("--ignore", self.ignore),
        ):
            for value in values:
                if not any(code.startswith(value) for code in RULES):
                    raise importer.InputError(
                        f"{option} {value}: matches no finding code (codes: {', '.join(RULES)})"
                    )

    def enabled(self, code: str) -> bool:
        """True when findings of ``code`` are reported."""
        chosen = (("BM",) if self.select is None else self.select) + self.extend_select
        on = max((len(p) for p in chosen if code.startswith(p)), default=-1)
        off = max((len(p) for p in self.ignore if code.startswith(p)), default=-1)
        return on > off

    def codes(self) -> list[str]:
        """The codes of ``RULES`` that ``check`` reports (``stale``'s own are left out)."""
        return [code for code in RULES if code not in STALE_CODES and self.enabled(code)]


def waived_by(code: str, suppress: frozenset[str]) -> str | None:
    """The entry of a fact's ``suppress`` that waives findings of ``code`` (``"gone"``
    waives BM101; a code or prefix waives what it starts), or None."""
    for entry in sorted(suppress):
        if code.startswith(entry) if entry != "gone" else code == "BM101":
            return entry
    return None


def suppression_text(entry: str) -> str:
    """The comment that wrote a ``suppress`` entry, for messages and SARIF."""
    return "allow-gone" if entry == "gone" else f"ignore {entry}"


#: Codes only ``brainmigrate stale`` reports (docs/staleness.md), never ``check``.
STALE_CODES = frozenset({"BM501"})


def rule(code: str) -> Rule:
    """The rule of ``code``; a code without one (a newer diagnostic) is an ``info`` rule."""
    return RULES.get(code) or Rule(code, code.lower(), "info", code)


@dataclass(frozen=True, slots=True)
class Hint:
    """Where a gone path may have moved: ``path`` (relative to its root) and ``how`` it is
    known: ``git-rename``, ``same-name`` or ``similar``."""

    path: str
    how: str

    def describe(self) -> str:
        return f"moved? {self.path} ({HINT_HOW[self.how]})"


HINT_HOW = {
    "git-rename": "renamed in git history",
    "same-name": "the only file of that name",
    "similar": "the closest path",
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing a check reports, at ``file:line:col`` (1-based; ``col`` None: the line).

    ``subject`` is the cited path or the name a citation finding is about ("" for other
    findings); ``fact_line`` the first line of the fact it belongs to (None when it belongs
    to no fact) and ``fact_text`` the start of its text; ``fingerprint`` identifies it
    without line numbers (the baseline's key).
    """

    code: str
    severity: str
    file: str
    line: int | None
    col: int | None
    message: str
    subject: str = ""
    scope: str = ""
    fact_line: int | None = None
    fact_text: str = ""
    fingerprint: str = ""
    hint: Hint | None = None
    suppressed: bool = False
    baselined: bool = False
    #: the comment that suppressed it (``allow-gone``, ``ignore BM102``), when suppressed
    suppressed_by: str = ""

    @property
    def rule(self) -> Rule:
        return rule(self.code)

    @property
    def where(self) -> str:
        """``file:line:col`` (``file:line`` without a column, ``file`` without a line)."""
        out = self.file
        if self.line is not None:
            out += f":{self.line}"
            if self.col is not None:
                out += f":{self.col}"
        return out

    @property
    def full_message(self) -> str:
        """The message, with the "moved?" hint when there is one."""
        return f"{self.message}; {self.hint.describe()}" if self.hint else self.message

    def at_or_above(self, level: str) -> bool:
        return _RANK[self.severity] >= _RANK[level]

    def fails(self, fail_on: str) -> bool:
        """At or above ``fail_on`` and neither suppressed nor in the baseline."""
        return self.at_or_above(fail_on) and not self.suppressed and not self.baselined


@dataclass(frozen=True, slots=True)
class CheckedFact:
    """A fact the check read: its file, first line, scope and text (for per-fact reports)."""

    file: str
    line: int
    scope: str
    text: str


class CheckedFacts:
    """The facts a check read, as ``CheckedFact`` values: ``len`` and iteration, read back
    from the run's temporary file each time (``importer.ReadFacts``)."""

    def __init__(self, facts: importer.ReadFacts) -> None:
        self._facts = facts

    def __len__(self) -> int:
        return len(self._facts)

    def __iter__(self) -> Iterator[CheckedFact]:
        for f in self._facts.parsed():
            yield CheckedFact(f.file, f.line, f.scope, f.text)


@dataclass(frozen=True, slots=True)
class BaselineEntry:
    """A finding the baseline accepts: ``fingerprint`` and ``count``; the rest is for people."""

    fingerprint: str
    code: str
    scope: str
    path: str
    text: str
    count: int = 1

    def to_dict(self) -> dict:
        return {
            "code": self.code,
            "count": self.count,
            "fingerprint": self.fingerprint,
            "path": self.path,
            "scope": self.scope,
            "text": self.text,
        }


@dataclass(frozen=True, slots=True)
class BaselineStatus:
    """How the findings met the baseline at ``path``: ``matched`` findings it holds,
    ``vanished`` entries no finding matched; ``updated`` when this run wrote it."""

    path: str
    updated: bool
    matched: int
    vanished: tuple[BaselineEntry, ...] = ()


@dataclass(frozen=True)
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

    @property
    def failing(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.fails(self.fail_on))

    @property
    def exit_code(self) -> int:
        """1 when a finding fails the check, else 0 (SPEC.md §Exit codes)."""
        return 1 if self.failing else 0

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


class BaselineError(importer.InputError):
    """The baseline file is missing, unreadable, or not a brainmigrate baseline."""


# ------------------------------------------------------------------------------ running


def run_check(
    paths: Sequence[str | os.PathLike],
    options: importer.Options,
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
    Writes nothing else. Raises ``importer.InputError`` (bad path, root, option or baseline) or
    ``notation.NotesReadError``.
    """
    if fail_on not in LEVELS:
        raise importer.InputError(f"--fail-on {fail_on}: must be one of {', '.join(LEVELS)}")
    if update_baseline and baseline is None:
        raise importer.InputError("--update-baseline needs a baseline file: add --baseline FILE")
    paths, excluded = importer.select_files(paths, exclude, options.names)
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
        if update_baseline:
            write_baseline(baseline, findings)
        entries = read_baseline(baseline)
        findings, status = apply_baseline(findings, entries, os.fspath(baseline))
        status = replace(status, updated=update_baseline)
    return CheckResult(files, facts, tuple(findings), fail_on, status, tuple(excluded))


def collect(notes: importer.Notes, hints: MoveHints | None = None) -> list[Finding]:
    """The findings of read notes, sorted by file (command-line order), line, column, code.

    One finding per gone, outside, unresolved or ambiguous citation and per diagnostic; one
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
    what = "gone path" if entry == "gone" else f"{entry} finding"
    comment = suppression_text(entry)
    return Finding(
        code="BM401",
        severity=RULES["BM401"].severity,
        file=fact.file,
        line=fact.line,
        col=None,
        message=f"unused suppression '{comment}': the fact has no {what}",
        subject=comment,
        scope=fact.scope,
        fact_line=fact.line,
        fact_text=_short(fact.text),
        fingerprint=fingerprint("BM401", fact.scope, fact.full_text, comment),
    )


def _owners(notes: importer.Notes) -> Iterator[tuple[Diagnostic, ParsedFact | None]]:
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
        fact_text=_short(fact.text),
        fingerprint=fingerprint(code, fact.scope, fact.full_text, subject),
        hint=hint,
    )


def _diagnostic_finding(d: Diagnostic, fact: ParsedFact | None, scopes: dict) -> Finding:
    scope = fact.scope if fact else scopes.get(d.file, "")
    text = fact.full_text if fact else d.message
    return Finding(
        code=d.code,
        severity=RULES[d.code].severity if d.code in RULES else d.severity,
        file=d.file,
        line=d.line,
        col=d.col,
        message=d.message,
        scope=scope,
        fact_line=fact.line if fact else None,
        fact_text=_short(fact.text) if fact else "",
        fingerprint=fingerprint(d.code, scope, text, ""),
    )


def fingerprint(code: str, scope: str, text: str, subject: str) -> str:
    """A finding's identity without line numbers: rule, scope, normalized fact text (case
    and whitespace runs folded) and the cited path or name. 32 hex digits."""
    data = "\x1f".join((code, scope, _text_digest(text), subject))
    return hashlib.blake2b(data.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@lru_cache(maxsize=256)
def _text_digest(text: str) -> str:
    """Digest of the text with case and whitespace runs folded; cached, as a fact with many
    findings asks for it again (a long text is then read once, not once per finding)."""
    norm = " ".join(text.casefold().split())
    return hashlib.blake2b(norm.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


# ------------------------------------------------------------------------------ baseline


def baseline_entries(findings: Sequence[Finding]) -> list[BaselineEntry]:
    """Baseline entries for ``findings`` (suppressed ones left out), sorted."""
    counts: Counter[str] = Counter()
    first: dict[str, Finding] = {}
    for f in findings:
        if not f.suppressed:
            counts[f.fingerprint] += 1
            first.setdefault(f.fingerprint, f)
    entries = [
        BaselineEntry(fp, f.code, f.scope, f.subject, f.fact_text or f.message)
        for fp, f in first.items()
    ]
    entries = [replace(e, count=counts[e.fingerprint]) for e in entries]
    return sorted(entries, key=lambda e: (e.code, e.scope, e.path, e.text, e.fingerprint))


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def write_baseline(path: str | os.PathLike, findings: Sequence[Finding]) -> None:
    """Write the baseline of ``findings`` to ``path`` (JSON, sorted, atomic).

    Raises ``BaselineError`` when it cannot be written.
    """
    data = {
        "schema_version": SCHEMA_VERSION,
        "tool": "brainmigrate check",
        "entries": [e.to_dict() for e in baseline_entries(findings)],
    }
    try:
        write_text_atomic(
            path, json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        )
    except OSError as exc:
        raise BaselineError(
            f"--baseline {os.fspath(path)}: cannot write ({exc.strerror or exc}); pass"
            " --baseline with a writable path"
        ) from None


def read_baseline(path: str | os.PathLike) -> list[BaselineEntry]:
    """The entries of the baseline file at ``path``, every field checked where it enters:
    ``schema_version`` the number 1, ``entries`` a list of objects, each with a non-empty
    ``fingerprint`` string, a ``count`` that is a whole number of 1 or more (default 1) and
    strings for ``code``, ``scope``, ``path`` and ``text``. Raises ``BaselineError`` naming
    the entry and the field."""
    name = os.fspath(path)
    fix = "fix it, or write it again with --update-baseline"
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(
            f"--baseline {name}: no such file; create it with --update-baseline"
        ) from None
    except OSError as exc:
        raise BaselineError(
            f"--baseline {name}: cannot read it ({exc.strerror or exc}); pass --baseline with"
            " a readable baseline file"
        ) from None
    except UnicodeDecodeError as exc:
        raise BaselineError(f"--baseline {name}: not UTF-8 ({exc.reason}); {fix}") from None
    except (json.JSONDecodeError, RecursionError) as exc:
        raise BaselineError(f"--baseline {name}: not JSON ({exc}); {fix}") from None
    if not isinstance(data, dict):
        raise BaselineError(
            f"--baseline {name}: not a brainmigrate baseline (a JSON object with"
            f" schema_version {SCHEMA_VERSION}); {fix}"
        )
    version = data.get("schema_version", _ABSENT)
    if type(version) is not int or version != SCHEMA_VERSION:
        raise BaselineError(
            f"--baseline {name}: schema_version is {_json_value(version)}, not"
            f" {SCHEMA_VERSION}; {fix}"
        )
    items = data.get("entries", [])
    if not isinstance(items, list):
        raise BaselineError(
            f"--baseline {name}: entries is {_json_value(items)}, not a list; {fix}"
        )
    entries = []
    for n, item in enumerate(items, 1):
        where = f"--baseline {name}: entry {n}"
        if not isinstance(item, dict):
            raise BaselineError(f"{where} is {_json_value(item)}, not an object; {fix}")
        fp = item.get("fingerprint", _ABSENT)
        if not isinstance(fp, str) or not fp:
            raise BaselineError(
                f"{where}: fingerprint is {_json_value(fp)}, not a non-empty string; {fix}"
            )
        count = item.get("count", 1)
        if type(count) is not int or count < 1:
            raise BaselineError(
                f"{where}: count is {_json_value(count)}, not a whole number of 1 or more; {fix}"
            )
        fields = []
        for key in ("code", "scope", "path", "text"):
            value = item.get(key, "")
            if not isinstance(value, str):
                raise BaselineError(f"{where}: {key} is {_json_value(value)}, not a string; {fix}")
            fields.append(value)
        entries.append(BaselineEntry(fp, *fields, count))
    return entries


_ABSENT = object()


def _json_value(value) -> str:
    """A value of a JSON file as a message shows it: as JSON, cut to 40 characters, printable."""
    if value is _ABSENT:
        return "missing"
    try:
        text = json.dumps(value)  # (inf, which 1e400 reads as, is "Infinity")
    except ValueError:  # pragma: no cover - json.loads gives only what it can dump
        text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def apply_baseline(
    findings: Sequence[Finding], entries: Sequence[BaselineEntry], path: str
) -> tuple[list[Finding], BaselineStatus]:
    """Mark the findings the baseline holds (each entry covers ``count`` findings, in
    order); entries left over are ``vanished``. Suppressed findings are never matched."""
    left = Counter()
    for e in entries:
        left[e.fingerprint] += e.count
    out, matched = [], 0
    for f in findings:
        if not f.suppressed and left[f.fingerprint] > 0:
            left[f.fingerprint] -= 1
            matched += 1
            f = replace(f, baselined=True)
        out.append(f)
    vanished = []
    for e in entries:
        if left[e.fingerprint] > 0:
            vanished.append(replace(e, count=min(e.count, left[e.fingerprint])))
            left[e.fingerprint] -= vanished[-1].count
    return out, BaselineStatus(path, False, matched, tuple(vanished))


# ------------------------------------------------------------------------------ hints

#: A similar path is suggested only when the stem of its file name (before the first dot)
#: scores at least this against the gone one (rapidfuzz ``ratio``, 0-100, case folded): a
#: character or two apart in a usual name (``PaymentGatewy``/``PaymentGateway`` 96,
#: ``UserServce``/``UserService`` 95); short or sibling stems stay below (``util``/``utils``
#: 89, ``test_a``/``test_b`` 83, ``engine``/``appengine`` 80, ``bars``/``bar`` 86) ...
STEM_CUTOFF = 90.0
#: ... when its extension scores at least this (``yml``/``yaml`` 86; not ``ts``/``js`` 50) ...
EXT_CUTOFF = 80.0
#: ... and when its score (stem 70 %, extension 10 %, folder 20 %) leads the next one's by
#: this much.
MARGIN = 5.0
_DIGITS = re.compile(r"[0-9]+")


@dataclass(frozen=True, slots=True)
class Move:
    """A gone path's likely new place: in ``root``, the citation meant ``old`` (relative to
    it) and the file is now at ``path``; ``how`` as in ``Hint``."""

    root: Root
    old: str
    path: str
    how: str


class MoveHints:
    """Says where a gone path may have moved (``hint``), first found wins:

    1. ``git-rename``: a root in a git checkout whose history renamed the path (followed
       through later renames) to a file that exists now;
    2. ``same-name``: the first root holds exactly one file with the path's file name;
    3. ``similar``: one path of the first root is clearly the closest (``STEM_CUTOFF``,
       ``EXT_CUTOFF``, ``MARGIN``); names that differ only in their numbers
       (``handler_v1``/``handler_v2``) never match.

    Everything is lazy and made once per run: git's history per root, the first root's
    file list; answers are cached per path. ``index`` gives the first root's declaration
    index when the run already has one (``Notes.name_index``), so it is not made twice.
    """

    def __init__(
        self,
        roots: Sequence[Root],
        cache_dir: str | os.PathLike | None = None,
        index: Callable[[], object] | None = None,
    ):
        self.roots = list(roots)
        self._cache_dir = cache_dir
        self._made_index = index
        self._renames: dict[int, dict[str, str]] = {}
        self._index = None
        self._by_stem: dict[str, list[tuple[str, str]]] | None = None
        self._answers: dict[str, Hint | None] = {}

    def hint(self, cited: str) -> Hint | None:
        """The hint for the gone path ``cited`` (as a citation names it), or None."""
        if cited not in self._answers:
            self._answers[cited] = self._hint(cited)
        return self._answers[cited]

    def _hint(self, cited: str) -> Hint | None:
        move = self.locate(cited)
        return Hint(move.path, move.how) if move else None

    def locate(self, cited: str, *, similar: bool = True) -> Move | None:
        """Where the gone path ``cited`` may have moved, with its root and the path the
        citation meant there (``Move``), or None; ``similar=False`` stops before the
        closest-path guess."""
        if not self.roots:
            return None
        candidates = self._relative(cited)
        for root, rel in candidates:
            moved = self._renamed(root, rel)
            if moved:
                return Move(root, rel, moved, "git-rename")
        rel = next((r for root, r in candidates if root.index == 0), None)
        if rel is None:
            return None
        name = rel.rpartition("/")[2]
        index = self._first_index()
        same = index.files_named(name)
        if len(same) == 1:
            return Move(self.roots[0], rel, same[0], "same-name")
        close = self._similar(rel) if similar else None
        return Move(self.roots[0], rel, close, "similar") if close else None

    def _relative(self, cited: str) -> list[tuple[Root, str]]:
        """(root, path relative to it) pairs the cited path may have meant."""
        if is_absolute(cited):
            norm = normalize(os.path.expanduser(cited)) if cited.startswith(("/", "~")) else None
            for root in self.roots:
                rel = root.relative(norm) if norm else None
                if rel:
                    return [(root, rel)]
            return []
        return [(root, cited) for root in self.roots]

    def _renamed(self, root: Root, rel: str) -> str | None:
        renames = self._renames.get(root.index)
        if renames is None:
            renames = self._renames[root.index] = git_renames(root.path)
        seen = {rel}
        path = renames.get(rel)
        while path is not None and path not in seen:
            if _is_file_in(root, path):
                return path
            seen.add(path)
            path = renames.get(path)
        return None

    def _first_index(self):
        if self._index is None and self._made_index is not None:
            self._index = self._made_index()
        if self._index is None:
            from brainmigrate.codeindex import CodeIndex

            cache = Path(self._cache_dir) if self._cache_dir else None
            self._index = CodeIndex(self.roots[0].path, cache_dir=cache)
        return self._index

    def _similar(self, rel: str) -> str | None:
        from rapidfuzz import fuzz, process

        if self._by_stem is None:
            self._by_stem = {}
            for path in self._first_index().files():
                stem, ext = _stem_ext(path.rpartition("/")[2])
                self._by_stem.setdefault(stem, []).append((path, ext))
        folder, _, name = rel.rpartition("/")
        stem, ext = _stem_ext(name)
        folder = folder.casefold()
        hits = process.extract(
            stem, list(self._by_stem), scorer=fuzz.ratio, score_cutoff=STEM_CUTOFF, limit=None
        )
        scored = []
        for other, score, _ in hits:
            if other != stem and _DIGITS.sub("#", other) == _DIGITS.sub("#", stem):
                continue  # numbered siblings: another file, not a move
            for path, other_ext in self._by_stem[other]:
                ext_score = fuzz.ratio(ext, other_ext)
                if ext_score < EXT_CUTOFF:
                    continue
                near = fuzz.ratio(folder, path.rpartition("/")[0].casefold())
                scored.append((0.7 * score + 0.1 * ext_score + 0.2 * near, path))
        if not scored:
            return None
        scored.sort(key=lambda t: (-t[0], t[1]))
        if len(scored) > 1 and scored[0][0] - scored[1][0] < MARGIN:
            return None
        return scored[0][1]


def _stem_ext(name: str) -> tuple[str, str]:
    """A file name's stem (before the first dot; a leading dot is part of it) and the rest,
    case folded."""
    name = name.casefold()
    dot = name.find(".", 1)
    return (name, "") if dot < 0 else (name[:dot], name[dot + 1 :])


def _is_file_in(root: Root, rel: str) -> bool:
    real = os.path.realpath(os.path.join(root.real, rel))
    return root.relative(real) is not None and os.path.isfile(real)


def git_renames(folder: str | os.PathLike) -> dict[str, str]:
    """Old path -> new path of every rename in the history of the git checkout holding
    ``folder``, paths relative to ``folder`` (a later rename of the same path wins).

    Runs ``git log -M --diff-filter=R --name-status -z --format= --relative``. Empty when
    ``folder`` is not in a git checkout or git is missing or fails.
    """
    try:
        out = subprocess.run(
            [
                "git",
                "-C",
                os.fspath(folder),
                "-c",
                "core.quotepath=off",
                "log",
                "-M",
                "--diff-filter=R",
                "--name-status",
                "-z",
                "--format=",
                "--relative",
            ],
            capture_output=True,
            check=False,
            timeout=120,
        )
    except (OSError, subprocess.SubprocessError):
        return {}
    if out.returncode != 0:
        return {}
    fields = [os.fsdecode(p).strip("\n") for p in out.stdout.split(b"\0")]
    fields = [p for p in fields if p]
    moves: list[tuple[str, str]] = []
    i = 0
    while i + 2 < len(fields):
        status = fields[i]
        if status[:1] == "R" and status[1:].isdigit():
            moves.append((fields[i + 1], fields[i + 2]))
            i += 3
        else:
            i += 1
    renames: dict[str, str] = {}
    for old, new in reversed(moves):  # git log lists the newest first
        renames[old] = new
    return renames
