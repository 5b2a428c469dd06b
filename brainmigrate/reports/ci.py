"""Reports of ``brainmigrate check`` for people and CI systems (docs/check.md, Formats).

One small interface: a formatter takes a ``check.CheckResult`` and returns the report's
text. ``Format`` names them and ``FORMATTERS`` maps every name to its function (a test
asserts the map is exhaustive). The Markdown report is a jinja2 template
(``check_markdown.j2``); the line formats (text, GitHub, statistics) are format strings, so
``check`` starts without loading jinja2; JSON and SARIF are ``json.dumps`` of a dict; JUnit
is built with ``xml.etree``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from enum import StrEnum
from functools import cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING
from urllib.parse import quote

from brainmigrate import __version__
from brainmigrate.check import CheckResult
from brainmigrate.codes import LEVELS
from brainmigrate.digests import blake2b
from brainmigrate.reports import make_environment
from brainmigrate.rules import RULES, Finding
from brainmigrate.shapes import one_line, safe_text, to_json

if TYPE_CHECKING:
    import jinja2

#: GitHub shows at most this many annotations of each kind (error, warning, notice) per step.
GITHUB_LIMIT = 10
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
#: The name of the fingerprint in SARIF ``partialFingerprints``.
SARIF_FINGERPRINT = "brainmigrate/v1"
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_GITHUB_KIND = {"error": "error", "warning": "warning", "info": "notice"}
#: GitLab Code Quality severity (info, minor, major, critical, blocker) of each level.
_GITLAB_SEVERITY = {"error": "major", "warning": "minor", "info": "info"}


def homepage() -> str | None:
    """Where brainmigrate lives (SARIF ``informationUri``; each rule's ``helpUri`` is
    ``<home>/blob/main/docs/check.md#bm101``): the ``Homepage`` of the installed package's
    ``[project.urls]``, or ``BRAINMIGRATE_HOMEPAGE`` when set. None when neither names one:
    SARIF then carries no links rather than made-up ones."""
    import os

    given = os.environ.get("BRAINMIGRATE_HOMEPAGE")
    if given:
        return given.rstrip("/")
    from importlib import metadata

    try:
        urls = metadata.metadata("brainmigrate").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "homepage" and url.strip():
            return url.strip().rstrip("/")
    return None


class Format(StrEnum):
    """Report formats of ``check``."""

    TEXT = "text"
    JSON = "json"
    GITHUB = "github"
    SARIF = "sarif"
    JUNIT = "junit"
    MARKDOWN = "markdown"
    GITLAB = "gitlab"


def plan(formats: Sequence[str], outputs: Sequence[str]) -> list[tuple[Format, str | None]]:
    """Pair ``--format`` and ``--output`` values by position: ``(format, file or None)``.

    No format means ``text``; a format without an output (or with ``-``) goes to stdout.
    Raises ``ValueError`` for more outputs than formats or more than one report on stdout.
    """
    chosen = [Format(f) for f in formats] or [Format.TEXT]
    if len(outputs) > len(chosen):
        raise ValueError(
            f"--output given {len(outputs)} times for {len(chosen)} --format: "
            "give one --format per --output, in the same order"
        )
    pairs = [
        (fmt, outputs[i] if i < len(outputs) and outputs[i] != "-" else None)
        for i, fmt in enumerate(chosen)
    ]
    to_stdout = [fmt.value for fmt, out in pairs if out is None]
    if len(to_stdout) > 1:
        raise ValueError(
            f"formats {', '.join(to_stdout)} would all go to stdout: "
            "give each but one an --output FILE"
        )
    return pairs


def render(result: CheckResult, fmt: str, *, color: bool = False, quiet: bool = False) -> str:
    """The report of ``result`` in format ``fmt``; ``color`` and ``quiet`` apply to
    ``text`` (``text``). Raises ``ValueError`` for an unknown format."""
    if Format(fmt) == Format.TEXT:
        return text(result, color=color, quiet=quiet)
    return FORMATTERS[Format(fmt)](result)


def statistics(result: CheckResult, *, quiet: bool = False) -> str:
    """A line per code that has findings, most first: count, code, severity, name; then
    the verdict and the counts (not with ``quiet``)."""
    counts = Counter(f.code for f in result.findings)
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    width = len(str(max(counts.values(), default=0)))
    return "".join(
        f"{n:>{width}} {code} {RULES[code].severity if code in RULES else 'info'}"
        f" {RULES[code].name if code in RULES else code.lower()}\n"
        for code, n in rows
    ) + ("" if quiet else f"{'FAILED' if result.failing else 'OK'}: {summary(result)}\n")


# ------------------------------------------------------------------------------ shared


def summary(result: CheckResult) -> str:
    """One sentence with every count: files, fact lines, findings by severity, failing,
    suppressed, baselined (and vanished baseline entries); ``result.summary_text`` when set."""
    if result.summary_text is not None:
        return result.summary_text
    t = result.totals()
    sev = ", ".join(f"{t['by_severity'][lvl]} {lvl}" for lvl in LEVELS)
    parts = [
        f"{_n(t['files'], 'file')}, {_n(t['facts'], 'fact line')}:"
        f" {_n(t['findings'], 'finding')} ({sev})",
        f"{t['failing']} failing at --fail-on {result.fail_on}",
        f"{t['suppressed']} suppressed",
        f"{t['baselined']} in the baseline",
    ]
    if result.baseline and result.baseline.vanished:
        n = len(result.baseline.vanished)
        parts.append(f"{n} baseline {'entry' if n == 1 else 'entries'} no longer {_occur(n)}")
    return "; ".join(parts)


def _occur(count: int) -> str:
    return "occurs" if count == 1 else "occur"


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _tags(f: Finding) -> str:
    return (" [suppressed]" if f.suppressed else "") + (" [baseline]" if f.baselined else "")


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&])")


def _md(value) -> str:
    """Escape text for a Markdown table cell (backslashes before punctuation; no newlines)."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(value).split()))


class Painted(str):
    """Text already made safe and coloured (``paint``): the template prints it as it is."""


#: Terminal styles of the text report (``click.style`` keywords) by what is painted.
STYLES = {
    "where": {"bold": True},
    "code": {"bold": True},
    "error": {"fg": "red", "bold": True},
    "warning": {"fg": "yellow"},
    "info": {"fg": "cyan"},
    "ok": {"fg": "green", "bold": True},
}


def paint(color: bool) -> Callable[[str, str], str]:
    """A function ``(text, style)`` that colours ``text`` with ``STYLES[style]`` when
    ``color``, else gives it back unchanged."""
    if not color:
        return lambda value, style: value
    import click  # only when colouring: check's start-up does not load it for nothing

    return lambda value, style: Painted(click.style(one_line(str(value)), **STYLES[style]))


@cache
def _env() -> jinja2.Environment:
    """check's own environment over the report templates: its filters and ``finalize``
    (which lets painted text through) are not the import reports' (``one_line``)."""
    import jinja2

    env = make_environment(jinja2.PackageLoader("brainmigrate.reports", "templates"))
    env.filters["md"] = _md
    env.filters["tags"] = _tags
    env.finalize = lambda value: value if isinstance(value, Painted) else safe_text(value)
    return env


# ------------------------------------------------------------------------------ text, markdown


def text(result: CheckResult, *, color: bool = False, quiet: bool = False) -> str:
    """``path:line:col: CODE severity message`` per finding, then the counts (not with
    ``quiet``); with ``color``, ANSI colours for a terminal.

    A format string per line, not a template: ``check`` is what a pre-commit hook runs
    on every commit, and loading jinja2 would double its start-up (issue 14). Every value
    is ``safe_text``, as in the templates."""
    c = paint(color)
    out = [
        f"{_shown(c(f.where, 'where'))}: {_shown(c(f.code, 'code'))}"
        f" {_shown(c(f.severity, f.severity))} {_shown(f.full_message)}{_shown(_tags(f))}\n"
        for f in result.findings
    ]
    if quiet:
        return "".join(out)
    b = result.baseline
    if b and b.vanished:
        n = len(b.vanished)
        out.append(
            f"Baseline {_shown(b.path)}: {n} {'entry' if n == 1 else 'entries'}"
            f" no longer {_occur(n)}\n"
        )
        for e in b.vanished:
            where = f" {_shown(e.path)}" if e.path else ""
            times = f" (x{e.count})" if e.count > 1 else ""
            out.append(f"  {_shown(e.code)} {_shown(e.scope)}{where}: {_shown(e.text)}{times}\n")
    if b and b.updated:
        out.append(f"Baseline {_shown(b.path)} written: {b.matched} findings\n")
    if result.excluded:
        out.append(f"Excluded: {_shown(', '.join(result.excluded))}\n")
    verdict = c("FAILED", "error") if result.failing else c("OK", "ok")
    out.append(f"{_shown(verdict)}: {_shown(summary(result))}\n")
    return "".join(out)


def _shown(value) -> str:
    """How the text report prints ``value``: painted text as it is (painted from
    ``one_line`` text), other text ``one_line``: one finding is one line."""
    if isinstance(value, Painted):
        return value
    return one_line(value) if isinstance(value, str) else str(value)


def markdown(result: CheckResult) -> str:
    """A Markdown report for step summaries and pull-request comments."""
    return _markdown(result, result.findings, title=_verdict(result))


def _verdict(result: CheckResult) -> str:
    n = len(result.failing)
    return (
        f"brainmigrate {result.tool}: {n} failing" if n else f"brainmigrate {result.tool}: passed"
    )


def _markdown(result: CheckResult, findings: Sequence[Finding], title: str, note: str = ""):
    return (
        _env()
        .get_template("check_markdown.j2")
        .render(r=result, findings=findings, title=title, note=note, summary=summary(result))
    )


# ------------------------------------------------------------------------------ json


def finding_dict(f: Finding, fail_on: str) -> dict:
    """A finding as JSON (the ``findings`` items of the JSON report)."""
    return {
        "code": f.code,
        "rule": f.rule.name,
        "severity": f.severity,
        "file": f.file,
        "line": f.line,
        "col": f.col,
        "message": f.message,
        "path": f.subject or None,
        "scope": f.scope,
        "fact_line": f.fact_line,
        "fingerprint": f.fingerprint,
        "hint": {"path": f.hint.path, "how": f.hint.how} if f.hint else None,
        "suppressed": f.suppressed,
        "baselined": f.baselined,
        "fails": f.fails(fail_on),
    }


def as_json(result: CheckResult) -> str:
    """The JSON report: versioned, keys sorted, findings in report order, no timestamps."""
    from brainmigrate.rules import SCHEMA_VERSION

    b = result.baseline
    data = {
        "schema_version": SCHEMA_VERSION,
        "tool": "brainmigrate check",
        "fail_on": result.fail_on,
        "exit_code": result.exit_code,
        "totals": result.totals(),
        "files": list(result.files),
        "excluded": list(result.excluded),
        "findings": [finding_dict(f, result.fail_on) for f in result.findings],
        "baseline": None
        if b is None
        else {
            "path": b.path,
            "updated": b.updated,
            "matched": b.matched,
            "vanished": [e.to_dict() for e in b.vanished],
        },
    }
    return to_json(data, indent=2, sort_keys=True) + "\n"


# ------------------------------------------------------------------------------ github


def escape_data(value: str) -> str:
    """Escape a workflow command's message: ``%`` ``\\r`` ``\\n``; other control
    characters are shown as U+FFFD, so the log shows what the notes say."""
    return safe_text(value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(value: str) -> str:
    """Escape a workflow command's property: as data, and ``:`` ``,`` too."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def _annotated(result: CheckResult) -> tuple[list[Finding], list[Finding]]:
    """Findings to show (neither suppressed nor baselined): the first ``GITHUB_LIMIT`` of
    each kind, and the rest."""
    seen: Counter[str] = Counter()
    shown, rest = [], []
    for f in result.findings:
        if f.suppressed or f.baselined:
            continue
        seen[f.severity] += 1
        (shown if seen[f.severity] <= GITHUB_LIMIT else rest).append(f)
    return shown, rest


def github_path(file: str) -> str:
    """``file`` as GitHub attaches annotations: relative to ``GITHUB_WORKSPACE`` (the
    checkout) when that is set and holds it, so a run from a subfolder still annotates
    the right file; else as given."""
    import os

    workspace = os.environ.get("GITHUB_WORKSPACE")
    if not workspace:
        return file
    whole = os.path.realpath(file)
    top = os.path.realpath(workspace)
    if whole == top or not whole.startswith(top.rstrip(os.sep) + os.sep):
        return file
    return os.path.relpath(whole, top).replace(os.sep, "/")


def github_command(f: Finding) -> str:
    """The workflow command (``::error file=…,line=…,col=…,title=…::message``) of a finding.
    A finding on a root rather than a notes file (BM104: its git history) names no file:
    GitHub cannot attach a folder; the message names the root."""
    if f.line is None and f.code == "BM104":
        title = escape_property(f"{f.code} {f.rule.name}")
        message = escape_data(f"{f.file}: {f.full_message}")
        return f"::{_GITHUB_KIND[f.severity]} title={title}::{message}"
    props = [f"file={escape_property(github_path(f.file))}"]
    if f.line is not None:
        props.append(f"line={f.line}")
        if f.col is not None:
            props.append(f"col={f.col}")
    props.append(f"title={escape_property(f'{f.code} {f.rule.name}')}")
    return f"::{_GITHUB_KIND[f.severity]} {','.join(props)}::{escape_data(f.full_message)}"


def github(result: CheckResult, token: str | None = None) -> str:
    """GitHub Actions workflow commands: one annotation per finding, at most
    ``GITHUB_LIMIT`` per kind; the rest as plain log lines (and in ``github_step_summary``),
    then the counts.

    Every line is either a command built here with escaped fields, or stands between
    ``::stop-commands::<token>`` and ``::<token>::`` (``token`` random, unless given, and
    never part of what it encloses), so no text from the notes (``##[error]``, a file
    named ``::warning::x.md``) reaches the runner's command channel.
    """
    shown, rest = _annotated(result)
    lines = [github_command(f) for f in shown]
    plain = []
    if rest:
        plain.append(
            f"{len(rest)} more findings (GitHub shows {GITHUB_LIMIT} annotations of each kind):"
        )
        plain.extend(f"{_plain(f.where)}: {f.code} {_plain(f.full_message)}" for f in rest)
    plain.append(f"brainmigrate {result.tool}: {summary(result)}")
    text = "\n".join(plain)
    import secrets  # GitHub annotations only

    while token is None or token in text:
        token = secrets.token_hex(16)
    lines += [f"::stop-commands::{token}", *plain, f"::{token}::"]
    return "\n".join(lines) + "\n"


def _plain(value: str) -> str:
    return safe_text(value.replace("\r", " ").replace("\n", " "))


def github_step_summary(result: CheckResult) -> str | None:
    """Markdown of the findings the annotations leave out, with their count, for
    ``$GITHUB_STEP_SUMMARY``; None when every finding was annotated."""
    _, rest = _annotated(result)
    if not rest:
        return None
    return _markdown(
        result,
        rest,
        title=f"brainmigrate {result.tool}: {len(rest)} more findings",
        note=f"GitHub shows {GITHUB_LIMIT} annotations of each kind per step; "
        f"these {len(rest)} are not annotated.",
    )


# ------------------------------------------------------------------------------ sarif


def _uri(path: str) -> str:
    if path.startswith("/"):
        return PurePosixPath(path).as_uri()
    return quote(path, safe="/")


def sarif(result: CheckResult) -> str:
    """SARIF 2.1.0: one run, every rule, one result per finding with its physical location,
    ``partialFingerprints`` (no line numbers), in-source suppressions and, with a baseline,
    ``baselineState``."""
    codes = list(RULES)
    codes += sorted({f.code for f in result.findings} - set(codes))
    index = {c: i for i, c in enumerate(codes)}
    home = homepage()
    rules = []
    for code in codes:
        r = RULES.get(code)
        rules.append(
            {
                "id": code,
                "name": r.name if r else code,
                "shortDescription": {"text": r.summary if r else code},
                **({"helpUri": f"{home}/blob/main/docs/check.md#{code.lower()}"} if home else {}),
                "defaultConfiguration": {"level": _SARIF_LEVEL[r.severity if r else "info"]},
            }
        )
    results = []
    for f in result.findings:
        loc: dict = {"artifactLocation": {"uri": _uri(f.file)}}
        if f.line is not None:
            loc["region"] = {"startLine": f.line}
            if f.col is not None:
                loc["region"]["startColumn"] = f.col
        item: dict = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f.full_message},
            "locations": [{"physicalLocation": loc}],
            "partialFingerprints": {SARIF_FINGERPRINT: f.fingerprint},
        }
        if f.hint:
            item["properties"] = {"hint": {"path": f.hint.path, "how": f.hint.how}}
        if f.suppressed:
            item["suppressions"] = [
                {
                    "kind": "inSource",
                    "justification": f"<!-- brainmigrate: {f.suppressed_by or 'allow-gone'} -->",
                }
            ]
        if result.baseline is not None:
            item["baselineState"] = "unchanged" if f.baselined else "new"
        results.append(item)
    totals = result.totals()
    data = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "brainmigrate",
                        "version": __version__,
                        **({"informationUri": home} if home else {}),
                        "rules": rules,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
                "properties": {
                    "failOn": result.fail_on,
                    "failing": totals["failing"],
                    "suppressed": totals["suppressed"],
                    "baselined": totals["baselined"],
                },
            }
        ],
    }
    return to_json(data, indent=2) + "\n"


# ------------------------------------------------------------------------------ gitlab


def gitlab(result: CheckResult) -> str:
    """GitLab Code Quality JSON (a ``codequality`` report): an issue per finding that is
    neither suppressed nor baselined, with ``description``, ``check_name``, ``severity``,
    ``location.path``, ``location.lines.begin`` and a ``fingerprint`` that holds no line
    number (the finding's, with its occurrence, so repeated findings stay distinct)."""
    seen: Counter[str] = Counter()
    issues = []
    for f in result.findings:
        if f.suppressed or f.baselined:
            continue
        seen[f.fingerprint] += 1
        key = f"{f.fingerprint}:{seen[f.fingerprint]}".encode()
        issues.append(
            {
                "type": "issue",
                "description": f"{f.code} {f.full_message}",
                "check_name": f"{f.code} {f.rule.name}",
                "fingerprint": blake2b(key, digest_size=16).hexdigest(),
                "severity": _GITLAB_SEVERITY[f.severity],
                "location": {"path": f.file, "lines": {"begin": f.line or 1}},
            }
        )
    return to_json(issues, indent=2) + "\n"


# ------------------------------------------------------------------------------ junit


@cache
def _xml_invalid() -> re.Pattern[str]:
    """Characters XML 1.0 cannot hold (compiled for a JUnit report only: start-up)."""
    return re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _x(value) -> str:
    """Text XML 1.0 can hold (other characters become U+FFFD)."""
    return _xml_invalid().sub("\ufffd", str(value))


def junit(result: CheckResult) -> str:
    """JUnit XML: a testsuite per notes file, a testcase per fact (named by its first line);
    a failure for each fact with findings that fail the check. Findings that belong to no
    fact and fail go to a testcase named ``(file)``. Suppressed and baselined counts are
    suite properties."""
    by_fact: dict[tuple[str, int | None], list[Finding]] = {}
    for f in result.findings:
        by_fact.setdefault((f.file, f.fact_line), []).append(f)
    facts_of: dict[str, list] = {}
    for fact in result.facts:
        facts_of.setdefault(fact.file, []).append(fact)
    import xml.etree.ElementTree as ET  # JUnit only: check's start-up does not load it

    top = ET.Element("testsuites", name="brainmigrate check")
    all_tests = all_failures = 0
    for path in result.files:
        suite = ET.SubElement(top, "testsuite", name=_x(path))
        cases: list[tuple[str, int | None, list[Finding]]] = [
            (f"line {fact.line}: {fact.text[:80]}", fact.line, by_fact.get((path, fact.line), []))
            for fact in facts_of.get(path, [])
        ]
        loose = [f for f in by_fact.get((path, None), []) if f.fails(result.fail_on)]
        if loose:
            cases.append(("(file)", None, loose))
        mine = [f for key, fs in by_fact.items() if key[0] == path for f in fs]
        props = ET.SubElement(suite, "properties")
        for name, value in (
            ("fail-on", result.fail_on),
            ("suppressed", sum(f.suppressed for f in mine)),
            ("baselined", sum(f.baselined for f in mine)),
        ):
            ET.SubElement(props, "property", name=name, value=str(value))
        failures = 0
        for name, line, findings in cases:
            case = ET.SubElement(suite, "testcase", classname=_x(path), name=_x(name))
            case.set("file", _x(path))
            if line is not None:
                case.set("line", str(line))
            failing = [f for f in findings if f.fails(result.fail_on)]
            if failing:
                failures += 1
                fail = ET.SubElement(
                    case,
                    "failure",
                    message=_x(f"{failing[0].code} {failing[0].full_message}"),
                    type=failing[0].code,
                )
                fail.text = _x("\n".join(f"{f.where}: {f.code} {f.full_message}" for f in failing))
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(failures))
        suite.set("errors", "0")
        suite.set("skipped", "0")
        all_tests += len(cases)
        all_failures += failures
    top.set("tests", str(all_tests))
    top.set("failures", str(all_failures))
    top.set("errors", "0")
    ET.indent(top)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(top, "unicode") + "\n"


#: Every format's formatter; ``tests/test_check_formats.py`` asserts it covers ``Format``.
FORMATTERS: dict[Format, Callable[[CheckResult], str]] = {
    Format.TEXT: text,
    Format.JSON: as_json,
    Format.GITHUB: github,
    Format.SARIF: sarif,
    Format.JUNIT: junit,
    Format.MARKDOWN: markdown,
    Format.GITLAB: gitlab,
}
