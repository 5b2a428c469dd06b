"""What every report of ``check`` shares: the sentence of counts (``summary``), the tags
of a suppressed or baselined finding, and the Markdown of a list of findings (the
Markdown report and GitHub's step summary), through check's own jinja2 environment; a
JSON report's list of findings made while it is written (``list_chunks``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cache
from typing import TYPE_CHECKING

from brainmigrate.check import CheckResult
from brainmigrate.codes import LEVELS
from brainmigrate.escapes import markdown
from brainmigrate.reports import make_environment
from brainmigrate.rules import Finding
from brainmigrate.shapes import plural, safe_text, to_json

if TYPE_CHECKING:
    import jinja2


def summary(result: CheckResult) -> str:
    """One sentence with every count: files, fact lines, findings by severity, failing,
    suppressed, baselined (and vanished baseline entries); ``result.summary_text`` when set."""
    if result.summary_text is not None:
        return result.summary_text
    t = result.totals()
    sev = ", ".join(f"{t['by_severity'][lvl]} {lvl}" for lvl in LEVELS)
    parts = [
        f"{plural(t['files'], 'file')}, {plural(t['fact_lines'], 'fact line')}:"
        f" {plural(t['findings'], 'finding')} ({sev})",
        f"{t['failing']} failing at --fail-on {result.fail_on}",
        f"{t['suppressed']} suppressed",
        f"{t['baselined']} in the baseline",
    ]
    if result.baseline and result.baseline.vanished:
        n = len(result.baseline.vanished)
        parts.append(f"{plural(n, 'baseline entry')} no longer {occurs(n)}")
    return "; ".join(parts)


def occurs(count: int) -> str:
    """``occurs`` for one, ``occur`` for more (vanished baseline entries)."""
    return "occurs" if count == 1 else "occur"


def tags(f: Finding) -> str:
    """`` [suppressed]`` and `` [baseline]`` as they apply to ``f``, else ``""``."""
    return (" [suppressed]" if f.suppressed else "") + (" [baseline]" if f.baselined else "")


class Painted(str):
    """Text already made safe and coloured (``paint``): the template prints it as it is."""


@cache
def environment() -> jinja2.Environment:
    """check's own environment over the report templates: its filters and ``finalize``
    (which lets painted text through) are not the import reports' (``one_line``)."""
    import jinja2

    env = make_environment(jinja2.PackageLoader("brainmigrate.reports", "templates"))
    env.filters["md"] = markdown
    env.filters["tags"] = tags
    env.finalize = lambda value: value if isinstance(value, Painted) else safe_text(value)
    return env


def verdict(result: CheckResult) -> str:
    """The Markdown report's title: ``brainmigrate check: 3 failing`` or ``…: passed``."""
    n = result.failing_count
    return (
        f"brainmigrate {result.tool}: {n} failing" if n else f"brainmigrate {result.tool}: passed"
    )


def markdown_of(
    result: CheckResult, findings: Iterable[Finding], title: str, note: str = ""
) -> str:
    """``findings`` of ``result`` as Markdown (``check_markdown.j2``) under ``title``, with
    ``note`` below it and the counts of the whole result."""
    return "".join(markdown_chunks(result, findings, title, note))


def markdown_chunks(
    result: CheckResult, findings: Iterable[Finding], title: str, note: str = ""
) -> Iterator[str]:
    """``markdown_of`` in chunks, the template's ``generate``: ``findings`` (a sequence
    with ``bool``, or ``rules.Findings``) are read once, as their rows are made."""
    return (
        environment()
        .get_template("check_markdown.j2")
        .generate(r=result, findings=findings, title=title, note=note, summary=summary(result))
    )


def list_chunks(text: str, key: str, depth: int, items: Iterable[str]) -> Iterator[str]:
    """JSON ``text`` (``indent=2``) whose list under ``key``, a key ``depth`` levels in
    (its line indented ``2 * depth`` spaces), was made empty, with ``items`` (each an
    item already encoded with ``indent=2``) put in it, in chunks: the text
    ``json.dumps`` of the whole gives, byte for byte, made while it is written. The
    key's line is found by its newline and indent, which no JSON string holds."""
    pad = "  " * depth
    mark = f"\n{pad}{to_json(key)}: []"
    head, tail = text.split(mark)
    yield head + mark[:-2]
    inner = "\n" + pad + "  "
    first = True
    for item in items:
        yield ("[" if first else ",") + inner + item.replace("\n", inner)
        first = False
    yield ("[]" if first else "\n" + pad + "]") + tail
