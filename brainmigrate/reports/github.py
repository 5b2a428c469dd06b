"""The GitHub Actions report of ``check`` (docs/check.md, Formats): workflow commands, one
annotation per finding up to GitHub's limit, and the step summary of the rest.
"""

from __future__ import annotations

from collections import Counter

from brainmigrate.check import CheckResult
from brainmigrate.escapes import github_data, github_property, one_line
from brainmigrate.reports.findings import markdown_of, summary
from brainmigrate.rules import Finding

#: GitHub shows at most this many annotations of each kind (error, warning, notice) per step.
GITHUB_LIMIT = 10
_GITHUB_KIND = {"error": "error", "warning": "warning", "info": "notice"}


#: A workflow command's message and property values (the names the tests use).
escape_data, escape_property = github_data, github_property


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
    return one_line(value.replace("\r", " ").replace("\n", " "))


def github_step_summary(result: CheckResult) -> str | None:
    """Markdown of the findings the annotations leave out, with their count, for
    ``$GITHUB_STEP_SUMMARY``; None when every finding was annotated."""
    _, rest = _annotated(result)
    if not rest:
        return None
    return markdown_of(
        result,
        rest,
        title=f"brainmigrate {result.tool}: {len(rest)} more findings",
        note=f"GitHub shows {GITHUB_LIMIT} annotations of each kind per step; "
        f"these {len(rest)} are not annotated.",
    )
