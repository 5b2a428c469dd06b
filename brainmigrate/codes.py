"""Every finding code in one place: its name, its severity and a one-line summary
(docs/check.md, "Finding codes"), and the diagnostics of the reading made from them.

Low in the stages, so that the read stage makes its diagnostics from here and ``rules``
builds ``RULES`` from the same table.
"""

from __future__ import annotations

from typing import NamedTuple

from brainmigrate.model import Diagnostic

#: Severity levels, highest first; ``--fail-on`` and ``fail-on`` take one of them.
LEVELS = ("error", "warning", "info")


class Code(NamedTuple):
    """A finding code's ``name``, ``severity`` (a check's finding) and ``summary``, and
    ``reported``: the severity its diagnostic has in the import report's warnings when
    that is not ``severity`` (BM311: docs/check.md)."""

    name: str
    severity: str
    summary: str
    reported: str | None = None


#: Every finding code, in report order (docs/check.md, "Finding codes").
CODES: dict[str, Code] = {
    "BM101": Code("gone-path", "error", "A fact cites a path that no root holds."),
    "BM102": Code("outside-root", "warning", "A fact cites a path outside every root."),
    "BM103": Code(
        "unresolved-path",
        "warning",
        "A fact cites a path nothing of which any root knows (most likely no file).",
    ),
    "BM104": Code("no-git-history", "info", "A root's git history is cut (shallow)."),
    "BM105": Code(
        "ignored-path",
        "info",
        "A fact cites a path git ignores (a runtime or build file).",
    ),
    "BM201": Code("ambiguous-name", "info", "A bare file name or CamelCase name is ambiguous."),
    "BM202": Code("anchors-dropped", "info", "A fact names more than 6 names of one kind."),
    "BM203": Code("line-out-of-range", "warning", "A line form's number passes 2^31-1."),
    "BM204": Code("line-past-end", "warning", "A line form points past a file's last line."),
    "BM205": Code(
        "missing-heading",
        "warning",
        "A #fragment names no heading of a Markdown file.",
    ),
    "BM301": Code("undated-trailer", "info", "A trailing comment of a fact is not a date."),
    "BM302": Code("text-cut", "info", "A fact's text was cut to 2000 characters."),
    "BM303": Code("unclosed-fence", "info", "A code fence is never closed."),
    "BM304": Code("unclosed-comment", "info", "An HTML comment is never closed."),
    "BM305": Code("invalid-utf8", "warning", "A line holds invalid bytes."),
    "BM306": Code("nul-byte", "warning", "A line holds NUL bytes."),
    "BM307": Code("not-a-file", "warning", "A *.md entry of a notes folder is not a file."),
    "BM308": Code("line-too-long", "warning", "A line is longer than 16 MiB; the rest skipped."),
    "BM309": Code("fact-too-long", "warning", "A fact is longer than 1 MiB; the rest left out."),
    "BM310": Code("decoded-utf16-32", "info", "A notes file was decoded as UTF-16 or UTF-32."),
    "BM311": Code(
        "merge-conflict",
        "error",
        "A notes file holds an unresolved merge conflict.",
        "warning",
    ),
    "BM401": Code(
        "unused-suppression",
        "info",
        "A brainmigrate: ignore or allow-gone comment waives no finding.",
    ),
    "BM501": Code(
        "stale-fact",
        "error",
        "The code a fact is anchored to changed since it was verified (brainmigrate stale).",
    ),
}


def diagnostic(
    file: str, line: int | None, code: str, message: str, col: int | None = None
) -> Diagnostic:
    """The ``Diagnostic`` of ``code`` (a key of ``CODES``) at ``file``, ``line`` and ``col``
    (1-based; None: the whole file or line), with the code's severity. Raises ``KeyError``
    for a code ``CODES`` does not hold."""
    entry = CODES[code]
    return Diagnostic(file, line, code, entry.reported or entry.severity, message, col)
