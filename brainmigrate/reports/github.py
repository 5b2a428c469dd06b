"""The GitHub Actions report of ``check`` (docs/check.md, Formats): workflow commands, one
annotation per finding up to GitHub's limit, and the step summary of the rest; the
findings read back as they are written (``rules.Findings``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from brainmigrate.check import CheckResult
from brainmigrate.escapes import github_data, github_property, one_line
from brainmigrate.reports.findings import markdown_of, summary
from brainmigrate.rules import Finding
from brainmigrate.shapes import plural

#: GitHub shows at most this many annotations of each kind (error, warning, notice) per step.
GITHUB_LIMIT = 10
_GITHUB_KIND = {"error": "error", "warning": "warning", "info": "notice"}


#: A workflow command's message and property values (the names the tests use).
escape_data, escape_property = github_data, github_property


def _annotated(result: CheckResult) -> tuple[list[Finding], int]:
    """Findings to show (neither suppressed nor baselined): the first ``GITHUB_LIMIT`` of
    each kind, and how many are left (``_rest``: from the counts, no finding held)."""
    shown, seen = [], Counter()
    for f in result.findings:
        if f.suppressed or f.baselined:
            continue
        seen[f.severity] += 1
        if seen[f.severity] <= GITHUB_LIMIT:
            shown.append(f)
        elif len(shown) == GITHUB_LIMIT * len(_GITHUB_KIND):
            break
    counts = Counter()
    for (_, severity, suppressed, baselined), n in result.tally().counts().items():
        if not suppressed and not baselined:
            counts[severity] += n
    return shown, sum(max(0, n - GITHUB_LIMIT) for n in counts.values())


def _rest(result: CheckResult) -> Iterator[Finding]:
    """The findings ``_annotated`` leaves out, in order, read back as they are used."""
    seen: Counter[str] = Counter()
    for f in result.findings:
        if not f.suppressed and not f.baselined:
            seen[f.severity] += 1
            if seen[f.severity] > GITHUB_LIMIT:
                yield f


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
    then the counts (``github_chunks``, joined).

    Every line is either a command built here with escaped fields, or stands between
    ``::stop-commands::<token>`` and ``::<token>::`` (``token`` random, unless given, and
    never part of what it encloses), so no text from the notes (``##[error]``, a file
    named ``::warning::x.md``) reaches the runner's command channel.
    """
    return "".join(github_chunks(result, token))


def github_chunks(result: CheckResult, token: str | None = None) -> Iterator[str]:
    """``github`` a line at a time: the findings past the annotations are read back twice
    (once to see that the token stands in none of their lines, then to write them)."""
    shown, more = _annotated(result)
    for f in shown:
        yield github_command(f) + "\n"

    def plain() -> Iterator[str]:
        if more:
            shows = f"GitHub shows {GITHUB_LIMIT} annotations of each kind"
            yield f"{plural(more, 'more finding')} ({shows}):"
            for f in _rest(result):
                yield f"{_plain(f.where)}: {f.code} {_plain(f.full_message)}"
        yield f"brainmigrate {result.tool}: {summary(result)}"

    import secrets  # GitHub annotations only

    while token is None or any(token in line for line in plain()):
        token = secrets.token_hex(16)
    yield f"::stop-commands::{token}\n"
    for line in plain():
        yield line + "\n"
    yield f"::{token}::\n"


def _plain(value: str) -> str:
    return one_line(value.replace("\r", " ").replace("\n", " "))


def github_step_summary(result: CheckResult) -> str | None:
    """Markdown of the findings the annotations leave out, with their count, for
    ``$GITHUB_STEP_SUMMARY``; None when every finding was annotated."""
    _, more = _annotated(result)
    if not more:
        return None
    return markdown_of(
        result,
        _rest(result),
        title=f"brainmigrate {result.tool}: {plural(more, 'more finding')}",
        note=f"GitHub shows {GITHUB_LIMIT} annotations of each kind per step; "
        f"{'this one is' if more == 1 else f'these {more} are'} not annotated.",
    )
