"""Reports of ``brainmigrate check`` for people and CI systems (docs/check.md, Formats).

One small interface: a formatter takes a ``check.CheckResult`` and returns the report's
text. ``Format`` names them and ``FORMATTERS`` maps every name to its function (a test
asserts the map is exhaustive). The text, statistics, JSON and Markdown reports are here;
GitHub, SARIF, GitLab and JUnit have a module each (``reports.github`` …), and what they
share is ``reports.findings``. The Markdown report is a jinja2 template
(``check_markdown.j2``); the line formats (text, GitHub, statistics) are format strings, so
``check`` starts without loading jinja2; JSON and SARIF are ``json.dumps`` of a dict; JUnit
is built with ``xml.etree``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from enum import StrEnum

from brainmigrate.check import CheckResult
from brainmigrate.reports.findings import (
    Painted,
    list_chunks,
    markdown_chunks,
    occurs,
    summary,
    tags,
    verdict,
)
from brainmigrate.rules import RULES, Finding
from brainmigrate.shapes import one_line, plural, to_json


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
    return "".join(render_chunks(result, fmt, color=color, quiet=quiet))


def render_chunks(
    result: CheckResult, fmt: str, *, color: bool = False, quiet: bool = False
) -> Iterator[str]:
    """``render``'s text in chunks made while they are written: every report but JUnit
    (an ``xml.etree`` tree, made whole) reads the findings back one at a time
    (``rules.Findings``), so a large run never holds them, nor the report whole.
    Raises ``ValueError`` for an unknown format (when called, before any chunk)."""
    fmt = Format(fmt)
    if fmt == Format.TEXT:
        return text_chunks(result, color=color, quiet=quiet)
    if fmt == Format.JSON:
        return json_chunks(result)
    if fmt == Format.MARKDOWN:
        return markdown_chunks(result, result.findings, title=verdict(result))
    if fmt == Format.SARIF:
        from brainmigrate.reports.sarif import sarif_chunks  # (a format's module: when used)

        return sarif_chunks(result)
    if fmt == Format.GITLAB:
        from brainmigrate.reports.gitlab import gitlab_chunks

        return gitlab_chunks(result)
    if fmt == Format.GITHUB:
        from brainmigrate.reports.github import github_chunks

        return github_chunks(result)
    return iter((FORMATTERS[fmt](result),))


def statistics(result: CheckResult, *, quiet: bool = False) -> str:
    """A line per code that has findings, most first: count, code, severity, name; then
    the verdict and the counts (not with ``quiet``)."""
    counts = result.tally().by_code()
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    width = len(str(max(counts.values(), default=0)))
    return "".join(
        f"{n:>{width}} {code} {RULES[code].severity if code in RULES else 'info'}"
        f" {RULES[code].name if code in RULES else code.lower()}\n"
        for code, n in rows
    ) + ("" if quiet else f"{'FAILED' if result.failing_count else 'OK'}: {summary(result)}\n")


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


# ------------------------------------------------------------------------------ text, markdown


def text(result: CheckResult, *, color: bool = False, quiet: bool = False) -> str:
    """``path:line:col: CODE severity message`` per finding, then the counts (not with
    ``quiet``); with ``color``, ANSI colours for a terminal (``text_chunks``, joined)."""
    return "".join(text_chunks(result, color=color, quiet=quiet))


def text_chunks(result: CheckResult, *, color: bool = False, quiet: bool = False) -> Iterator[str]:
    """The text report a line at a time, the findings read back as they are printed.

    A format string per line, not a template: ``check`` is what a pre-commit hook runs
    on every commit, and loading jinja2 would double its start-up (issue 14). Every value
    is ``safe_text``, as in the templates."""
    c = paint(color)
    shown = (f for f in result.findings if not (quiet and f.baselined))  # -q: what fails
    mark = fixable_mark(result)
    if color:
        for f in shown:
            yield (
                f"{_shown(c(f.where, 'where'))}: {_shown(c(f.code, 'code'))}{mark(f)}"
                f" {_shown(c(f.severity, f.severity))} {_shown(f.full_message)}{_shown(tags(f))}\n"
            )
    else:  # uncoloured, every part is text: made one line at once (a per-character table)
        for f in shown:
            line = f"{f.where}: {f.code}{mark(f)} {f.severity} {f.full_message}{tags(f)}"
            yield one_line(line) + "\n"
    if quiet:
        return
    out = []
    b = result.baseline
    if b and b.vanished:
        n = len(b.vanished)
        out.append(f"Baseline {_shown(b.path)}: {plural(n, 'entry')} no longer {occurs(n)}\n")
        for e in b.vanished:
            where = f" {_shown(e.path)}" if e.path else ""
            times = f" (x{e.count})" if e.count > 1 else ""
            out.append(f"  {_shown(e.code)} {_shown(e.scope)}{where}: {_shown(e.text)}{times}\n")
    if b and b.updated:
        out.append(f"Baseline {_shown(b.path)} written: {plural(b.matched, 'finding')}\n")
    if result.excluded:
        out.append(f"Excluded: {_shown(', '.join(result.excluded))}\n")
    verdict = c("FAILED", "error") if result.failing_count else c("OK", "ok")
    out.append(f"{_shown(verdict)}: {_shown(summary(result))}\n")
    yield "".join(out)


#: What marks a finding ``--fix`` fixes in the text report, after its code (ruff's).
FIXABLE = " [*]"


def fixable_mark(result: CheckResult) -> Callable[[Finding], str]:
    """A function giving ``FIXABLE`` for a finding of ``result`` that ``--fix`` fixes
    (``CheckResult.fix_of``), else ``""``."""
    if not result.fixes:
        return lambda f: ""
    return lambda f: FIXABLE if result.fix_of(f) is not None else ""


def fixable_line(result: CheckResult) -> str | None:
    """``[*] N fixable with --fix`` (ruff's count line) when a finding is fixable."""
    n = result.fixable_count
    return f"[*] {n} fixable with --fix" if n else None


def fix_dict(fix) -> dict:
    """A ``fix.Fix`` as the JSON report's ``fix``: the text ``replacement`` for the
    characters from ``start`` up to (not including) ``end``, each ``{line, col}``
    (1-based code points of the line, as ``col``)."""
    return {
        "replacement": fix.new,
        "start": {"line": fix.line, "col": fix.col},
        "end": {"line": fix.line, "col": fix.col + len(fix.old)},
    }


def _shown(value) -> str:
    """How the text report prints ``value``: painted text as it is (painted from
    ``one_line`` text), other text ``one_line``: one finding is one line."""
    if isinstance(value, Painted):
        return value
    return one_line(value) if isinstance(value, str) else str(value)


def markdown(result: CheckResult) -> str:
    """A Markdown report for step summaries and pull-request comments."""
    return "".join(markdown_chunks(result, result.findings, title=verdict(result)))


# ------------------------------------------------------------------------------ json


def finding_dict(f: Finding, fail_on: str, fix=None) -> dict:
    """A finding as JSON (the ``findings`` items of the JSON report); ``fix``, the
    ``fix.Fix`` ``--fix`` makes of it, gives ``fix`` (``fix_dict``) and ``end_col``
    (None for a finding without one)."""
    edit = fix_dict(fix) if fix is not None else None
    return {
        "end_col": edit["end"]["col"] if edit else None,
        "fix": edit,
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
    """The JSON report: versioned, keys sorted, findings in report order, no timestamps
    (``json_chunks``, joined)."""
    return "".join(json_chunks(result))


def json_chunks(result: CheckResult) -> Iterator[str]:
    """The JSON report in chunks: the findings made into dicts and encoded one at a
    time, where ``json.dumps`` of the whole report (``indent=2``, keys sorted) puts
    them, so the text is the same byte for byte."""
    from brainmigrate.rules import CHECK_SCHEMA

    b = result.baseline
    data = {
        "schema_version": CHECK_SCHEMA,
        "tool": "brainmigrate check",
        "fail_on": result.fail_on,
        "exit_code": result.exit_code,
        "totals": result.totals(facts=True),
        "files": list(result.files),
        "excluded": list(result.excluded),
        "findings": [],
        "baseline": None
        if b is None
        else {
            "path": b.path,
            "updated": b.updated,
            "matched": b.matched,
            "vanished": [e.to_dict() for e in b.vanished],
        },
    }
    items = (
        to_json(finding_dict(f, result.fail_on, result.fix_of(f)), indent=2, sort_keys=True)
        for f in result.findings
    )
    text = to_json(data, indent=2, sort_keys=True) + "\n"
    return list_chunks(text, "findings", 1, items)


def github(result: CheckResult) -> str:
    """``reports.github.github`` (its module is loaded when a run renders it)."""
    from brainmigrate.reports import github

    return github.github(result)


def sarif(result: CheckResult) -> str:
    """``reports.sarif.sarif`` (loaded when used)."""
    from brainmigrate.reports import sarif

    return sarif.sarif(result)


def junit(result: CheckResult) -> str:
    """``reports.junit.junit`` (loaded when used)."""
    from brainmigrate.reports import junit

    return junit.junit(result)


def gitlab(result: CheckResult) -> str:
    """``reports.gitlab.gitlab`` (loaded when used)."""
    from brainmigrate.reports import gitlab

    return gitlab.gitlab(result)


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
