"""Group a file's lines into facts, and turn a fact line and its continuations into a
``ParsedFact`` (SPEC.md §Notation).

Pure: no file system. The rules here are the notation's: kind from the marker, text
folding and the 2000-character cut, trailers (``created`` and ``run``), block ids, the task
id, the SUPERSEDED status and the scope.
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_right
from collections.abc import Sequence
from pathlib import PurePath

from brainmigrate.codes import diagnostic
from brainmigrate.errors import BrainmigrateError
from brainmigrate.fsutil import printable
from brainmigrate.model import Diagnostic, ParsedFact, Segment
from brainmigrate.patterns import lazy
from brainmigrate.read.consumed import consumed, may_span, span_regions
from brainmigrate.read.lines import Line
from brainmigrate.read.notation import fold, parse_stamp, split_block_id, split_trailer

#: One empty set for every fact without task ids (each frozenset() is 216 bytes).
NONE: frozenset[str] = frozenset()
#: The stored text is at most this long (SPEC.md §Notation).
MAX_TEXT = 2000
#: A fact reads continuation lines until its text is this long; the rest are counted but
#: left out (BM309), so one runaway fact (a pasted log) cannot exhaust memory.
MAX_FACT_CHARS = 1 << 20

#: Marker -> kind; "+" depends on the file (SPEC.md §Notation, "Markers").
KIND_OF_MARKER = {
    "!": "blocker",
    "~": "decision",
    "=": "environment",
    "?": "other",
    ">": "other",
    "->": "other",
    "x": "other",
    "-": "other",  # a Markdown notes fact no brain marker starts
}

#: Default task id: an upper-case letter, upper-case letters or digits, a hyphen, digits;
#: not after an ASCII letter, digit or "_", not before an ASCII letter or digit (SPEC.md
#: §Notation): other scripts' letters may touch it (``修复了LDG-6会`` holds ``LDG-6``).
DEFAULT_TASK_PATTERN = r"(?<![A-Za-z0-9_])[A-Z][A-Z0-9]*-[0-9]+(?![A-Za-z0-9])"
#: ``DEFAULT_TASK_PATTERN`` as it is matched: the same matches, the look-behind read after
#: the first letter, so ``re`` skips to each upper-case letter in C instead of trying the
#: look-behind at every position (twice as fast; tests/test_facts.py checks they agree).
DEFAULT_TASK_REGEX = re.compile(r"[A-Z](?<![A-Za-z0-9_][A-Z])[A-Z0-9]*-[0-9]+(?![A-Za-z0-9])")
#: Technical prefixes that are never task ids, also followed by digits (SHA3, MD5, X86, P0),
#: and the numbers of standards, proposals and grades cited beside tickets (PSR-18,
#: EIP-1559, SEV-1), SPEC.md §Notation, Task id.
TASK_DENY = lazy(
    r"(?:UTF|SHA|ISO|RFC|CVE|CWE|HTTP|TLS|SSL|AES|RSA|MD|UUID|GPT|IPV|PEP|ECMA|X|P|PBKDF"
    r"|HMAC|BASE|UCS|IEEE|ANSI|CRC|WGS|EPSG|SRID"
    r"|PSR|EIP|ERC|BIP|JEP|JSR|KEP|KIP|SEV|SOC|FIPS|NIST|WCAG|OWASP|IEC)[0-9]*"
)
#: The status word (SPEC.md §Notation, SUPERSEDED): not after a letter, a digit or a path's
#: ``/`` or ``\\`` (``is_superseded`` also passes over one in a cited path or file name).
SUPERSEDED = lazy(r"(?<![^\W_])(?<![/\\])SUPERSEDED")
#: What follows the word in a name: the rest of its run of name characters ...
_NAME_RUN = lazy(r"[\w-]*")
#: ... and, after that run, what makes it a file name or a path (``.py``, ``/``).
_NAMED = lazy(r"\.[A-Za-z0-9]|[/\\]")
#: A trailer that waives findings of the fact: ``<!-- brainmigrate: allow-gone -->`` (gone
#: paths, BM101) or ``<!-- brainmigrate: ignore BM102, BM2 -->`` (codes or prefixes). It is
#: removed like any trailer but is not an undated comment (no BM301).
#: Read as flake8 reads ``noqa``: any case, codes separated by commas or spaces, and
#: ``ignore=``/``ignore:`` as well as ``ignore``.
ALLOW = lazy(
    r"\s*brainmigrate\s*:\s*(?:allow-(?P<what>gone)"
    r"|ignore(?:\s*[=:]\s*|\s+)(?P<codes>BM[0-9]{0,3}(?:(?:\s*,\s*|\s+)BM[0-9]{0,3})*))\s*",
    re.IGNORECASE,
)
#: A comment meant as a suppression that ``ALLOW`` does not read (it says so).
_ALLOW_MEANT = lazy(r"\s*brainmigrate\b", re.IGNORECASE)
_PATTERNS_STEM = lazy(r"(?:.*[-_])?patterns?")


#: How long a ``--task-pattern`` may take on one fact's text, in seconds.
TASK_PATTERN_SECONDS = 1.0


class SlowPattern(BrainmigrateError):
    """A ``--task-pattern`` took over ``TASK_PATTERN_SECONDS`` on one text: ``pattern``,
    and ``where`` that text stood (``file:line``, or a fact's id), once known."""

    def __init__(self, pattern: str, where: str = "a fact's text") -> None:
        import shlex  # loaded only for this message

        self.pattern, self.where = pattern, where
        seconds = f"{TASK_PATTERN_SECONDS:g}"
        super().__init__(
            f"--task-pattern {shlex.quote(pattern)} took over {seconds} s on {where}; simplify it"
        )


def _bounded(pattern: str):
    """``pattern`` compiled by the ``regex`` module, which can stop a match that takes too
    long (``re`` cannot: ``(a|aa)+$`` on 60 ``a`` and a ``!`` backtracks for hours).
    Imported only for a user's pattern. Raises ``re.error`` when ``regex`` cannot read a
    pattern ``re`` read."""
    import regex

    try:
        return regex.compile(pattern)
    except regex.error as exc:
        raise re.error(str(exc)) from None


def _matches(compiled, text: str) -> list:
    """Every match of a ``regex`` pattern in ``text``, within ``TASK_PATTERN_SECONDS`` in
    all; raises ``TimeoutError`` past it."""
    return list(compiled.finditer(text, timeout=TASK_PATTERN_SECONDS))


class TaskIds:
    """Finds task ids in a fact's text.

    With the default pattern, a match whose prefix (before the hyphen) is a deny-listed
    technical prefix is passed over. A ``--task-pattern`` is used as given: its whole match
    is the task id, and no deny-list applies; it runs with a time bound of
    ``TASK_PATTERN_SECONDS`` per text (``all`` raises ``SlowPattern`` past it). Raises
    ``re.error`` for an invalid pattern.
    """

    def __init__(self, pattern: str | None = None) -> None:
        self.default = pattern is None
        self.pattern = DEFAULT_TASK_PATTERN if pattern is None else pattern
        self.regex = DEFAULT_TASK_REGEX
        if pattern is not None:  # a user's pattern: matched with a time bound
            re.compile(pattern)  # (raises re.error as documented)
            self.regex = _bounded(pattern)

    def all(self, text: str) -> list[str]:
        """Every task id in ``text``, in order, but those inside a cited path, its suffix or
        a line form (``docs/incidents/INC-2231.md``, ``app/Ledger.kt#L10-20``: SPEC.md
        §Anchors)."""
        out: list[str] = []
        if self.default and "-" not in text:
            return out
        chunk: list = []  # the last chunk around a match: [left, right, consumed spans]
        spans = span_regions(text) if may_span(text) else ()
        starts = [a for a, _ in spans]
        try:
            found = self.regex.finditer(text) if self.default else _matches(self.regex, text)
        except TimeoutError:
            raise SlowPattern(self.pattern) from None
        for m in found:
            tid = m.group(0)
            if not tid or (self.default and TASK_DENY.fullmatch(tid[: tid.rindex("-")])):
                continue
            start, end = m.span()
            alone = (start == 0 or text[start - 1] == " ") and (
                end == len(text) or text[end] == " "
            )
            if not alone and _in_path(text, start, end, chunk):
                continue
            if spans:
                at = bisect_right(starts, start) - 1
                if at >= 0 and end <= spans[at][1]:
                    continue  # inside a path with spaces ([[docs/TER-9 notes.md]])
            out.append(tid)
        return out


def is_superseded(text: str) -> bool:
    """Whether ``text`` (a fact's whole folded text) says ``SUPERSEDED`` (SPEC.md §Notation):
    the upper-case word not after a letter or digit (``SUPERSEDED_BY k12`` counts), and
    standing as a word, not inside a name: not in what a cited path consumes
    (``src/SUPERSEDED.py``, ``docs/SUPERSEDED/x.md``, as no task id is read there), not
    after ``/`` or ``\\``, and not a file name (its name run followed by ``.`` and a letter
    or digit, or by ``/``: ``SUPERSEDED.md``, ``SUPERSEDED_BY.txt``). A path ``--fix``
    writes must not change a fact's status. Linear: each name run and each chunk between
    spaces is read once."""
    if "SUPERSEDED" not in text:
        return False
    chunk: list = []
    run_end, named = -1, False
    for m in SUPERSEDED.finditer(text):
        start, end = m.span()
        if end > run_end:  # a new run of name characters (the same run ends the same way)
            run_end = _NAME_RUN.match(text, end).end()
            named = _NAMED.match(text, run_end) is not None
        if not named and not _in_path(text, start, end, chunk):
            return True
    return False


def _in_path(text: str, start: int, end: int, chunk: list) -> bool:
    """Whether ``text[start:end]`` lies in what a cited path consumed, judged on the chunk
    (between spaces of the folded text) around it. ``chunk`` holds the last chunk's
    ``[left, right, spans, their starts]``: matches come in order, so each chunk is found
    and tokenized once and the whole text is scanned once (linear)."""
    if not chunk or start >= chunk[1]:
        floor = chunk[1] if chunk else 0
        left = text.rfind(" ", floor, start) + 1 or floor
        right = text.find(" ", end)
        right = len(text) if right < 0 else right
        piece = text[left:right]
        spans = []
        if "/" in piece or "\\" in piece or "#L" in piece or ":" in piece or "](" in piece:
            spans = consumed(piece)
        chunk[:] = [left, right, spans, [a for a, _ in spans]]
    left, _, spans, starts = chunk
    at = bisect_right(starts, start - left) - 1  # spans are in order and never overlap
    return at >= 0 and end - left <= spans[at][1]


def scope_for(path: str | PurePath, scope: str | None = None) -> str:
    """``area:<file stem, lower-cased>``, or ``scope`` as given (SPEC.md §Notation, Scope);
    bytes that are not UTF-8 (in a file name or a ``--scope``) become U+FFFD."""
    if scope is not None:
        return printable(scope)
    return "area:" + printable(PurePath(path).stem).lower()


def plus_kind_for(path: str | PurePath, plus_kind: str | None = None) -> str:
    """Kind of a ``+`` fact: ``plus_kind`` if given, ``pattern`` in a file named for
    patterns (stem ``pattern(s)`` or ending ``-pattern(s)``/``_pattern(s)``), else
    ``environment`` (SPEC.md §Notation)."""
    if plus_kind:
        return plus_kind
    return "pattern" if _PATTERNS_STEM.fullmatch(PurePath(path).stem.lower()) else "environment"


class Grouper:
    """A file's lines, in order, grouped into facts: a fact line and the continuation lines
    after it. A fact reads continuations until its text is ``limit`` characters long; the
    rest are counted but left out (``left_out``: ``[first, last, count]`` of their line
    numbers), so one runaway fact cannot exhaust memory. One ``Grouper`` per file.
    """

    __slots__ = ("held", "left_out", "limit", "pending")

    def __init__(self, limit: int = MAX_FACT_CHARS) -> None:
        self.limit = limit
        self.pending: list[Line] = []
        self.left_out: list[int] = []
        self.held = 0  # characters of the fact's lines read

    def add(self, ln: Line) -> tuple[list[Line], list[int]] | None:
        """Take the next line; the fact it ends, as ``(lines, left_out)``, or None."""
        cls = ln.cls
        if cls == "fact":
            done = self.end()
            self.pending.append(ln)
            self.held = len(ln.text)
            return done
        if cls == "continuation":
            if self.held < self.limit:
                self.pending.append(ln)
                self.held += len(ln.text)
            elif self.left_out:
                self.left_out[1] = ln.number
                self.left_out[2] += 1
            else:
                self.left_out.extend((ln.number, ln.number, 1))
            return None
        return self.end()

    def end(self) -> tuple[list[Line], list[int]] | None:
        """The fact pending at the end of the file (or of a group), or None."""
        if not self.pending:
            return None
        done = (self.pending, self.left_out)
        self.pending, self.left_out = [], []
        return done


def group_fact(
    file: str,
    group: tuple[list[Line], list[int]],
    scope: str,
    plus_kind: str,
    tasks: TaskIds,
    diags: list[Diagnostic],
    limit: int = MAX_FACT_CHARS,
) -> ParsedFact:
    """``build_fact`` of a ``Grouper`` group; a fact that left continuation lines out (past
    ``limit`` characters, the ``Grouper``'s) gets BM309, appended to ``diags`` after
    ``build_fact``'s, and still ends at its last line."""
    lines, left_out = group
    fact = build_fact(file, lines, scope, plus_kind, tasks, diags)
    if left_out:
        first, last, count = left_out
        diags.append(
            diagnostic(
                file,
                first,
                "BM309",
                f"fact longer than {limit:,} characters: {count} more"
                " continuation lines counted but not read into it",
            )
        )
        fact = dataclasses.replace(fact, last_line=last)  # they are still its lines
    return fact


def build_fact(
    file: str,
    lines: Sequence[Line],
    scope: str,
    plus_kind: str,
    tasks: TaskIds,
    diags: list[Diagnostic],
) -> ParsedFact:
    """Build the fact that ``lines`` (a fact line, then its continuations) state.

    Each line loses its trailing comment (the trailer), then a trailing block id (`` ^id``).
    Appends to ``diags``: BM301 for an undated trailing comment (removed all the same),
    BM302 when the text is cut to 2000 characters. A ``<!-- brainmigrate: allow-gone -->``
    trailer on any line adds ``"gone"`` to the fact's ``suppress``, one of
    ``<!-- brainmigrate: ignore BM102, BM2 -->`` the codes and prefixes it names.
    """
    head = lines[0]
    created = run = None
    segments = []
    suppress: set[str] = set()
    for ln in lines:
        body = ln.text
        inside = None
        if "-->" in body:
            body, inside = split_trailer(body)
        if inside is not None:
            stamp = parse_stamp(inside)
            allow = ALLOW.fullmatch(inside) if stamp is None else None
            if allow is not None and allow.group("what"):
                suppress.add(allow.group("what").lower())
            elif allow is not None:
                suppress.update(c.upper() for c in re.split(r"[\s,]+", allow.group("codes")))
            elif stamp is None:
                message = "trailing comment is not a date; removed from the text"
                if _ALLOW_MEANT.match(inside):
                    message = (
                        "trailing comment is not a suppression brainmigrate reads (write"
                        " 'brainmigrate: ignore BM101, BM103' or 'brainmigrate: allow-gone');"
                        " removed from the text"
                    )
                at = ln.col + len(body)
                diags.append(diagnostic(file, ln.number, "BM301", message, at))
            elif created is None:
                created, run = stamp
        if "^" in body:  # after the trailer, without a warning
            body = split_block_id(body, alone=ln is not head)
        segments.append(Segment(ln.number, ln.col, body))
    full = fold(segments[0].text if len(segments) == 1 else " ".join([s.text for s in segments]))
    text = full
    if len(full) > MAX_TEXT:
        text = cut(full)
        line, col = _source_of(segments, full, len(text))
        diags.append(
            diagnostic(
                file,
                line,
                "BM302",
                f"text cut to {len(text)} of {len(full)} characters",
                col,
            )
        )
    try:
        found = tasks.all(full)
    except SlowPattern as exc:
        raise SlowPattern(exc.pattern, f"{file}:{head.number}") from None
    marker = head.marker
    kind = plus_kind if marker == "+" else KIND_OF_MARKER[marker]
    superseded = "SUPERSEDED" in full and is_superseded(full)
    # in field order (file, line, scope, kind, marker, text, full_text, task, tasks, run,
    # created, status, segments, suppress, last_line): positional costs less than keywords
    return ParsedFact(
        file, head.number, scope, kind, marker, text, full,
        found[0] if found else None, frozenset(found) if found else NONE, run, created,
        "superseded" if superseded else "active", tuple(segments),
        frozenset(suppress) if suppress else NONE, lines[-1].number,
    )  # fmt: skip


def _source_of(segments: Sequence[Segment], full: str, at: int) -> tuple[int, int]:
    """The line and 1-based column, in the notes file, of the first character ``full`` (the
    folded text of ``segments``) holds at or after index ``at`` that is not a space: where a
    cut text's first dropped word was written. Folding only drops White_Space, so that
    character is the n-th non-White_Space character of the segments, n counted in
    ``full``."""
    while at < len(full) and full[at] == " ":
        at += 1
    n = at - full.count(" ", 0, at)  # characters before it that are not spaces
    for seg in segments:
        for i, c in enumerate(seg.text):
            if c.isspace() and c not in "\x1c\x1d\x1e\x1f":  # White_Space: what fold drops
                continue
            if n == 0:
                return seg.line, seg.col + i
            n -= 1
    last = segments[-1]
    return last.line, last.col + len(last.text)


def cut(text: str, limit: int = MAX_TEXT) -> str:
    """Cut folded ``text`` to at most ``limit`` characters at a word boundary.

    A single word longer than ``limit`` is cut inside the word.
    """
    if len(text) <= limit:
        return text
    head = text[: limit + 1]
    space = head.rfind(" ")
    return (head[:space] if space > 0 else text[:limit]).rstrip(" ")
