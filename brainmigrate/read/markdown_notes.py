"""Read Markdown notes: plain Markdown that no marker starts (SPEC.md §Notation, Markdown
notes), such as ``CLAUDE.md``, ``AGENTS.md`` and Cursor's ``.cursor/rules/*.mdc``.

``scan`` yields the same ``lines.Line`` stream that ``lines.scan`` yields for brain
notation, one ``Line`` per physical line, so facts, anchors and the merge read both alike:

* skipped as in brain notation: ``heading``, ``code``, ``comment``, ``conflict`` and
  ``link-definition``; ``front-matter`` (a first line ``---`` through the next line
  ``---``) and ``table`` (a table's delimiter row, ``|---|:--:|``);
* a fact line: a list item (``-``, ``*`` or ``+``, or ``1.``/``1)``, at any indentation,
  with an optional task box), a table row, a blockquote line, or the first line of a
  paragraph;
* a continuation: a non-blank line right after a fact line or its continuation that is
  itself no list item, table row, blockquote line or skipped line.

A fact records the marker ``-`` (``model.MARKERS``; kind ``other``) unless a brain marker
follows the list marker and the task box (``- ! flaky upload`` records ``!``, a blocker);
``@`` and ``%`` are not special. Where SPEC.md is silent, this module decides (docs/reference.md,
"Markdown notes"):

* headings, fences and HTML comments count at any indentation (a fence inside a list item
  is code, not the item's text); a closing fence too;
* a paragraph's first line directly followed by a Setext underline (``===`` or ``---``)
  is a heading, and so is the underline;
* a thematic break (``---``, ``***``, ``___``), a list item or a blockquote line with no
  text are skipped as ``empty``; a blockquote line that holds only an alert (``> [!NOTE]``)
  as ``callout``;
* after a delimiter row, each line holding ``|`` is a table row until one does not;
* a blockquote line's text drops every leading ``>`` (``> > nested`` gives ``nested``);
* front matter that is never closed is no front matter: its first line is a thematic
  break.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import BinaryIO

from brainmigrate.errors import BrainmigrateError
from brainmigrate.fsutil import printable
from brainmigrate.model import Diagnostic
from brainmigrate.patterns import lazy
from brainmigrate.read import lines
from brainmigrate.read.conflicts import CONFLICT_CLASSES, Conflicts
from brainmigrate.read.lines import (
    Line,
    closed_block,
    code_fence,
    ends_comment,
    read_lines,
    unclosed_comment,
)
from brainmigrate.read.notation import (
    SEP_CLASS,
    WS_CLASS,
    Classified,
    fast_classes,
    is_blank,
    split_block_id,
    split_trailer,
    terminals,
)

#: The marker a Markdown fact records when no brain marker follows its list marker.
NO_MARKER = "-"
#: What the report says a file was read as (SPEC.md §Report, ``notation``).
NOTATIONS = ("brain", "markdown")


def scan(
    path: str | Path,
    file: str,
    diags: list[Diagnostic],
    classify: Callable[[str], Classified] | None = None,
) -> Iterator[Line]:
    """Yield one ``Line`` per physical line of the Markdown notes file at ``path``.

    Decoding, errors raised and diagnostics as ``lines.scan`` (an unclosed fence BM303,
    an unclosed comment BM304, a merge conflict BM311). ``classify`` is the brain notation's
    line classifier (``fast`` or ``lark``): headings, fences, comments, conflicts and link
    definitions are recognised by it, as in brain notation.
    """
    return lines.scan(path, file, diags, classify, body=body)


def scan_file(
    handle: BinaryIO,
    file: str,
    diags: list[Diagnostic],
    classify: Callable[[str], Classified] | None = None,
) -> Iterator[Line]:
    """``scan`` of the notes read from ``handle`` (see ``lines.scan_file``)."""
    return lines.scan_file(handle, file, diags, classify, body=body)


@cache
def _patterns() -> tuple[re.Pattern, ...]:
    """A list item's prefix (bullet or ordered item, then an optional task box: brain
    notation's ``BULLET`` and ``TASK_BOX`` with ``+`` too, at any indentation, also at the
    end of the line) and a brain marker after it, composed from the grammar's ``MARKER``
    and ``PRIORITY`` terminals (so it is the grammar's marker)."""
    t = terminals()
    sep = f"(?:{SEP_CLASS}+|$)"
    item = re.compile(
        rf"[ \t]*(?:[-*+]|[0-9]{{1,9}}[.)]){sep}(?:\[[ xX]\]{sep})?",
    )
    marker = re.compile(fast_classes(f"(?P<priority>{t['PRIORITY']})|(?:{t['MARKER']})"))
    return item, marker


_THEMATIC = lazy(r"[ ]{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_SETEXT = lazy(r"[ ]{0,3}(?:=+|-+)[ \t]*")
_DELIMITER = lazy(r"[ \t]*(?=[^|]*\|)\|?(?:[ \t]*:?-+:?[ \t]*\|)*[ \t]*:?-+:?[ \t]*\|?[ \t]*")
_QUOTE = lazy(r"[ \t]*>(?:[ \t]*>)*[ \t]?")
_ALERT = lazy(r"[ \t]*\[![\w-]+\][ \t]*")
_FRONT = lazy(f"---{WS_CLASS}*")


def _has_text(rest: str) -> bool:
    """Whether ``rest`` holds text once its trailer and block id are gone (SPEC.md
    §Notation: a marker with no text, or only a comment, is ``empty``)."""
    body = split_trailer(rest)[0] if "-->" in rest else rest
    if "^" in body:
        body = split_block_id(body)
    return not is_blank(body)


class _State:
    """What ``body`` carries from line to line (and over a restart)."""

    __slots__ = ("is_open", "table", "held", "comments_close", "warned")

    def __init__(self) -> None:
        self.is_open = False  # a fact line or its continuation was the last line
        self.table = False  # after a delimiter row, until a line without "|"
        self.held: Line | None = None  # a paragraph's first line, until the next line is seen
        self.comments_close = True  # False once a comment was seen to run to the file's end
        self.warned = 0  # the last line a diagnostic of a block ran to (``read_lines``)


def body(
    handle: BinaryIO,
    file: str,
    diags: list[Diagnostic],
    classify: Callable[[str], Classified],
    encoding: str | None,
) -> Iterator[Line]:
    """Read the decoded lines of ``handle`` as Markdown notes (a ``lines.Body``)."""
    st = _State()
    offset = number = 0
    conflicts = Conflicts(file, diags)
    while True:
        lines = read_lines(handle, offset, number, file, st.warned, diags, encoding)
        restart, number = yield from _blocks(lines, number, file, diags, classify, st, conflicts)
        if st.held is not None:
            yield st.held
            st.held = None
        if restart is None:
            conflicts.end(number)
            return
        offset, number = restart


def _blocks(lines, number, file, diags, classify, st: _State, conflicts: Conflicts):
    """The ``Line`` of each of ``lines`` (``read_lines``), blocks that span lines read
    whole. Returns ``(restart, number)``: where to read again from when a block never
    closed (``(offset, line)``; else None), and the last line's number."""
    item_re, marker_re = _patterns()
    for number, text, offset in lines:
        cls, lead, start = classify(text)
        if cls in CONFLICT_CLASSES or conflicts.in_base:
            if conflicts.take(cls, number):
                if st.held is not None:
                    yield st.held
                    st.held = None
                st.is_open = st.table = False
                yield Line(number, "skipped", "conflict")
                continue
            cls = "prose"  # a conflict line with no conflict open
        if st.held is not None:
            if _SETEXT.fullmatch(text):
                yield Line(st.held.number, "skipped", "heading")
                yield Line(number, "skipped", "heading")
                st.held = None
                st.is_open = False
                continue
            yield st.held
            st.held = None
        if number == 1 and _FRONT.fullmatch(text):
            first, resume = number, offset
            number, closed = yield from closed_block(lines, first, _FRONT.fullmatch, "front-matter")
            if not closed:
                # Never closed: no front matter; its first line is a thematic break.
                yield Line(first, "skipped", "empty")
                st.warned = number
                return (resume, first), number
            continue
        if cls == "blank" or cls == "link_definition":
            st.is_open = st.table = False
            if cls == "blank":
                yield Line(number, "blank")
            else:
                yield Line(number, "skipped", "link-definition", "", text, 1)
            continue
        stripped = text.lstrip(" \t")
        if len(stripped) != len(text):
            cls, lead, start = classify(stripped)
            start += len(text) - len(stripped)
        if cls == "heading" or cls == "fence" or cls == "comment":
            st.is_open = st.table = False
        if cls == "heading":
            yield Line(number, "skipped", "heading")
        elif cls == "fence":
            yield Line(number, "skipped", "code")
            number = yield from code_fence(lines, number, lead, file, diags, True)
        elif cls == "comment":
            if text.find("-->", start) >= 0 or not st.comments_close:
                yield Line(number, "skipped", "comment")
                if text.find("-->", start) < 0:
                    diags.append(unclosed_comment(file, number))
                continue
            first, resume = number, offset
            number, closed = yield from closed_block(lines, first, ends_comment, "comment")
            if not closed:
                yield Line(first, "skipped", "comment")
                diags.append(unclosed_comment(file, first))
                st.comments_close = False
                st.warned = number
                return (resume, first), number
        else:
            line = _text_line(number, text, stripped, st, item_re, marker_re)
            if line is not None:
                yield line
    return None, number


def _text_line(number: int, text: str, stripped: str, st: _State, item_re, marker_re):
    """The ``Line`` of a line that is no block (a table row, list item, blockquote line,
    continuation or paragraph), or None for a paragraph's first line, held in ``st``."""
    if "|" in text and _DELIMITER.fullmatch(text):
        st.is_open, st.table = False, True
        return Line(number, "skipped", "table")
    if _THEMATIC.fullmatch(text):
        st.is_open = st.table = False
        return Line(number, "skipped", "empty")
    m = item_re.match(text)
    if m is not None:
        st.table = False
        at = m.end()
        rest = text[at:]
        mark = marker_re.match(rest)
        if mark is not None and _has_text(rest[mark.end() :]):
            if mark.group("priority"):  # "!P3": a blocker whose text is "P3 …"
                lead, at = "!", at + mark.start() + 1
            else:
                lead, at = mark.group(0), at + mark.end()
            st.is_open = True
            return Line(number, "fact", "", lead, text[at:], at + 1)
        if _has_text(rest):
            st.is_open = True
            return Line(number, "fact", "", NO_MARKER, rest, at + 1)
        st.is_open = False
        return Line(number, "skipped", "empty")
    if stripped[:1] == "|" or (st.table and "|" in text):
        st.is_open = st.table = True
        return Line(number, "fact", "", NO_MARKER, stripped, len(text) - len(stripped) + 1)
    st.table = False
    q = _QUOTE.match(text)
    if q is not None:
        rest = text[q.end() :]
        if _ALERT.fullmatch(rest):
            st.is_open = False
            return Line(number, "skipped", "callout")
        if _has_text(rest):
            st.is_open = True
            return Line(number, "fact", "", NO_MARKER, rest, q.end() + 1)
        st.is_open = False
        return Line(number, "skipped", "empty")
    if st.is_open:
        return Line(number, "continuation", "", "", text, 1)
    if not _has_text(stripped):  # only a comment, a block id
        return Line(number, "skipped", "empty")
    st.is_open = True
    st.held = Line(number, "fact", "", NO_MARKER, stripped, len(text) - len(stripped) + 1)
    return None


# ------------------------------------------------------------------ which files are Markdown

#: The ``markdown`` globs of the configuration when it names none (SPEC.md §Notation,
#: Markdown notes); a bare name matches at any depth.
DEFAULT_GLOBS = (
    "CLAUDE.md",
    "AGENTS.md",
    "GEMINI.md",
    "MEMORY.md",
    ".cursorrules",
    ".windsurfrules",
    "**/.cursor/rules/*.mdc",
    "**/.clinerules/**",
    ".github/copilot-instructions.md",
    ".github/instructions/*.md",
)


def glob_regex(glob: str) -> str:
    """A ``markdown`` glob as a regular expression over a POSIX path: ``**/`` is any number
    of folders (none too), ``**`` anything, ``*`` anything but ``/``, ``?`` one character
    but ``/``, ``[...]`` a class; every other character stands for itself."""
    out, i = [], 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (end := glob.find("]", i + 2)) > 0:
            inside = glob[i + 1 : end]
            neg = inside[:1] in ("!", "^")
            body = re.escape(inside[1:] if neg else inside).replace("\\-", "-")
            out.append(f"[{'^' if neg else ''}{body}]")
            i = end + 1
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


#: How long the ``markdown`` globs of a configuration may take on one path, in seconds.
GLOB_SECONDS = 1.0


class SlowGlob(BrainmigrateError):
    """The configuration's ``markdown`` globs took over ``GLOB_SECONDS`` on one path."""


class MarkdownGlobs:
    """Which notes files are read as Markdown notes: those a glob matches (SPEC.md
    §Notation, Markdown notes). A glob is matched against the file's path (POSIX, ``./``
    dropped) and each tail of it that starts at a folder, so ``CLAUDE.md`` matches at any
    depth and ``.github/instructions/*.md`` under any folder. Compiled once; a call is one
    regular expression match per tail of the path. Globs other than ``DEFAULT_GLOBS`` are
    a user's: matched by the ``regex`` module (many ``*`` in one glob made ``re``
    backtrack for seconds a path), with a time bound of ``GLOB_SECONDS`` a path past
    which a call raises ``SlowGlob``."""

    __slots__ = ("globs", "_regex", "_bounded")

    def __init__(self, globs: tuple[str, ...] | list[str] = DEFAULT_GLOBS) -> None:
        """Raises ``ValueError`` naming the first glob that is none (``[z-a].md``)."""
        self.globs = tuple(globs)
        parts = []
        for g in self.globs:
            part = glob_regex(g.removeprefix("./"))
            try:
                re.compile(part)
            except re.error as exc:
                raise ValueError(f"{g!r} is no glob ({exc})") from None
            parts.append(f"(?:{part})")
        self._bounded = self.globs != DEFAULT_GLOBS
        self._regex = None
        if parts:
            self._regex = (_user_regex if self._bounded else re.compile)("|".join(parts))

    def __call__(self, path: str) -> bool:
        """Whether notes file ``path`` is Markdown notes."""
        if self._regex is None:
            return False
        path = path.replace("\\", "/")
        while path.startswith("./"):
            path = path[2:]
        full = self._regex.fullmatch
        if self._bounded:
            regex = self._regex

            def full(text, pos=0):
                return regex.fullmatch(text, pos, timeout=GLOB_SECONDS)

        try:
            if full(path):
                return True
            return any(c == "/" and full(path, i + 1) for i, c in enumerate(path))
        except TimeoutError:
            raise SlowGlob(
                f"markdown: the globs took over {GLOB_SECONDS:g} s on {printable(path)};"
                " simplify them in the configuration"
            ) from None


def _user_regex(source: str):
    """``source`` compiled by the ``regex`` module (imported only for a user's globs).
    Raises ``ValueError`` when it cannot read it."""
    import regex

    try:
        return regex.compile(source)
    except regex.error as exc:
        raise ValueError(f"the globs are no regular expression the matcher reads ({exc})") from None


def notation_of(path: str, notation: str | None, markdown: MarkdownGlobs) -> str:
    """``"markdown"`` or ``"brain"``: how notes file ``path`` is read. ``notation`` is the
    ``--notation`` given (``markdown`` or ``brain``: every file so), else None (by the
    ``markdown`` globs)."""
    if notation is not None:
        return notation
    return "markdown" if markdown(path) else "brain"
