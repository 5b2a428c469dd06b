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
    "BM312": Code(
        "unreadable-entry",
        "warning",
        "A line of a store file (jsonl, knowledge, memory …) holds no fact it can read.",
    ),
    "BM313": Code(
        "no-fact-lines",
        "warning",
        "A file read yields no fact line; it may be a store another reader reads.",
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


class Doc(NamedTuple):
    """A finding code's documentation (``brainmigrate rule CODE``, ``check --explain``,
    SARIF's ``fullDescription`` and ``help``): what it ``finds``, ``why`` it matters, an
    ``example`` notes line that has it, and how to ``fix`` or suppress it."""

    finds: str
    why: str
    example: str
    fix: str


_IGNORE = "or suppress it with <!-- brainmigrate: ignore {code} --> at the end of the fact"
_OFF = "or leave the code out with --ignore {code}"

#: The documentation of every code of ``CODES`` (docs/check.md, "Finding codes");
#: ``{code}`` in a text stands for the code. ``tests/test_fixable29.py`` checks that
#: every code has one.
DOCS: dict[str, Doc] = {
    "BM101": Doc(
        "A fact cites a file or folder path that no --root holds now.",
        "The note points an agent at code that is no longer there; it will look for it, "
        "or trust advice about code that moved or was deleted.",
        "+ the parser lives in src/old_parser.py",
        "Cite the path where the code is now. When git renamed it (or the first root holds "
        "the one file of that name with the same content) check --fix rewrites it: the "
        "finding is marked [*]. A fact that records history can be marked SUPERSEDED; "
        "suppress it with <!-- brainmigrate: allow-gone --> or ignore {code}.",
    ),
    "BM102": Doc(
        "A fact cites a path outside every root (an absolute path elsewhere, or ../ out "
        "of the checkout).",
        "brainmigrate never reads outside the roots, so the citation can be neither "
        "anchored nor checked.",
        "+ logs are kept in /var/log/app/server.log",
        "Pass the checkout that holds it as another --root, cite it relative to a root, " + _IGNORE,
    ),
    "BM103": Doc(
        "A fact cites a path-like text nothing of which any root knows: no folder, file "
        "name or history of it.",
        "Most often it is no file at all (a package, a URL part, a version); sometimes a "
        "path of a checkout not passed as a root.",
        "+ we call net/http.Client with a timeout",
        "Write a text that is no path in backticks, pass the missing checkout as --root, "
        + _IGNORE,
    ),
    "BM104": Doc(
        "A root's git history is needed but cannot be read whole: a shallow clone, or a "
        "repository git refuses.",
        "Without the history a gone path reads as unresolved, and no rename hint or fix is found.",
        "(on the root, without a line: a CI checkout made with fetch-depth 1)",
        "Fetch the whole history (actions/checkout's fetch-depth: 0), add the repository "
        "to git's safe.directory, " + _OFF,
    ),
    "BM105": Doc(
        "A fact cites a path no root tracks that git's ignore rules match: a runtime or "
        "build file.",
        "Such a file exists on one machine and not on another, so it is neither anchored "
        "nor gone: every machine gives the same answer.",
        "+ the pid is written to tmp/pids/server.pid",
        "Nothing to fix when the note means the runtime file; " + _IGNORE,
    ),
    "BM201": Doc(
        "A bare file name or CamelCase name matches several files of the first root.",
        "The fact is anchored to none of them, so a change to the right one is never seen "
        "as stale.",
        "+ settings are read in config.py",
        "Cite the path (src/app/config.py) instead of the bare name, " + _IGNORE,
    ),
    "BM202": Doc(
        "A fact names more than 6 bare file names or CamelCase names of one kind; the rest "
        "were dropped.",
        "A fact with that many anchors goes stale on nearly every change; the dropped ones "
        "are not checked.",
        "+ A, B, C, D, E, F and G all read the cache",
        "Split the fact, cite paths instead of names, " + _IGNORE,
    ),
    "BM203": Doc(
        "A line form holds a number past 2^31-1.",
        "It is no line number: the path is kept without lines.",
        "+ see Foo.kt:9223372036854775808",
        "Write the real line (Foo.kt:42), drop the number, " + _IGNORE,
    ),
    "BM204": Doc(
        "A line form's first line lies past the last line of the file it anchors.",
        "The lines the note points at are gone or moved; the file shrank since.",
        "+ retry loop at src/net.py:900 (the file has 120 lines)",
        "Cite the lines where the code is now, " + _IGNORE,
    ),
    "BM205": Doc(
        "A #fragment after a Markdown file names no heading of it (GitHub's slugs).",
        "The link lands at the top of the file, not at the section the note means.",
        "+ the steps are in docs/guide.md#instal",
        "Write the heading's slug (docs/guide.md#install), " + _IGNORE,
    ),
    "BM301": Doc(
        "A fact's trailing comment is not a date; it is removed from the text.",
        "A trailer is read as the date the fact was written; another text there is lost.",
        "+ the cache is per user <!-- ask Ana -->",
        "Write the date (<!-- 2026-03-01 -->) or move the text into the fact, " + _IGNORE,
    ),
    "BM302": Doc(
        "A fact's text was cut to 2000 characters.",
        "The store keeps only the first 2000 characters; the rest is lost to search.",
        "+ (a fact of 3000 characters)",
        "Split the fact into shorter ones, " + _IGNORE,
    ),
    "BM303": Doc(
        "A code fence is never closed: it runs to the end of the file.",
        "Every fact after it is read as code, not as a fact.",
        "```sh (and no closing ```)",
        "Close the fence with a line of ```, " + _OFF,
    ),
    "BM304": Doc(
        "An HTML comment is never closed; that line alone is read as a comment.",
        "A comment left open hides text meant to be read, or shows text meant to be hidden.",
        "<!-- draft (and no -->)",
        "Close the comment with -->, " + _OFF,
    ),
    "BM305": Doc(
        "A line holds bytes that are not valid UTF-8 (or an invalid UTF-16/32 sequence); "
        "they are read as U+FFFD.",
        "The text stored is not the text written, and search does not find it.",
        "+ caf\\xe9 is Latin-1, not UTF-8",
        "Save the notes file as UTF-8, " + _OFF,
    ),
    "BM306": Doc(
        "A line holds NUL bytes; they are read as U+FFFD.",
        "A NUL is no text; most likely a binary file, or a file saved as UTF-16 without a "
        "byte order mark.",
        "+ the value\\x00 is stored",
        "Remove the NUL bytes (or save the file as UTF-8), " + _OFF,
    ),
    "BM307": Doc(
        "A *.md entry of a notes folder is not a regular file (a FIFO, a device, a "
        "dangling link); it is skipped.",
        "Notes it was meant to hold are not read.",
        "(notes/old.md is a symlink to a removed file)",
        "Remove the entry or make it the file it should be, " + _OFF,
    ),
    "BM308": Doc(
        "A physical line is longer than 16 MiB; its first 16 MiB are read, the rest skipped.",
        "Most likely a binary or sparse file among the notes.",
        "(a line of 20 MiB)",
        "Leave the file out (--exclude) or break the line, " + _OFF,
    ),
    "BM309": Doc(
        "A fact's lines reach 1 MiB of text; its further continuation lines are left out.",
        "Most likely a pasted log; the store keeps the fact short.",
        "+ the log: (and 30,000 continuation lines)",
        "Keep the log elsewhere and cite it, " + _IGNORE,
    ),
    "BM310": Doc(
        "A notes file starts with a UTF-16 or UTF-32 byte order mark and was decoded as that.",
        "It reads fine, but other tools (and check --fix, which does not rewrite it) expect UTF-8.",
        "(a file Windows PowerShell's > wrote)",
        "Save the file as UTF-8, " + _OFF,
    ),
    "BM311": Doc(
        "A notes file holds an unresolved merge conflict (<<<<<<< ... >>>>>>>).",
        "Both sides are read as facts until it is resolved, so the store holds both.",
        "<<<<<<< HEAD",
        "Resolve the conflict and commit the result; it cannot be suppressed inline, " + _OFF,
    ),
    "BM312": Doc(
        "A line of a store file (a jsonl export, a knowledge entry's front matter …) is no"
        " JSON, or a field has the wrong type, or front matter is no YAML mapping.",
        "The line is skipped and counted; the fact it held is not imported.",
        '{"id": "k1", "scope": "area:x", "kind": "note", "text": "…"}',
        "Fix the line in the store file (or export it again), " + _OFF,
    ),
    "BM313": Doc(
        "A file read yields no fact line (every line is prose, or it is a store file read"
        " as notes), or a store file is read as notes because --from brain|markdown (or"
        " --notation) says so.",
        "Nothing of it reaches the store, in silence unless said: an import of a jsonl"
        " export read as brain notation gives 0 facts.",
        '{"id": "k1", "scope": "area:x", "kind": "pattern", "text": "…"} (read as notes)',
        "Pass --from with the reader the message names, or write facts in the file, " + _OFF,
    ),
    "BM401": Doc(
        "A <!-- brainmigrate: ignore ... --> or allow-gone comment waives none of its "
        "fact's findings.",
        "A suppression that waives nothing hides the next real finding of that fact.",
        "+ the parser lives in src/parser.py <!-- brainmigrate: allow-gone -->",
        "Remove the comment, " + _OFF,
    ),
    "BM501": Doc(
        "The code a fact is anchored to changed since it was verified (brainmigrate "
        "stale; check never reports it).",
        "The fact may no longer be true of the code it describes.",
        "+ the retry limit in src/net.py is 3 (and src/net.py changed since)",
        "Read the code again: brainmigrate verify ID when the fact still holds, update or "
        "supersede it when not.",
    ),
}
