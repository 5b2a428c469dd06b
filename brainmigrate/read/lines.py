"""Read a notes file into lines: one ``Line`` per physical line (SPEC.md §Notation).

``scan`` decodes the file (UTF-8, or UTF-16 and UTF-32 by their byte order mark,
transcoded through a temporary file), keeps the little state that spans lines (an open
fact, a fence, an HTML comment block, a callout, a merge conflict: ``Conflicts``) and asks
the grammar's classifier (``notation.classifier``) what each line is, so every line is
accounted for: ``fact``, ``continuation``, ``blank`` or ``skipped`` with a reason. It
streams: memory does not grow with the file.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from reprlib import recursive_repr
from typing import BinaryIO

from brainmigrate import spill
from brainmigrate.codes import diagnostic
from brainmigrate.errors import BrainmigrateError
from brainmigrate.model import Diagnostic
from brainmigrate.read.conflicts import CONFLICT_CLASSES, Conflicts
from brainmigrate.read.notation import (
    WS_CLASS,
    Classified,
    classifier,
    is_blank,
    split_block_id,
    split_trailer,
)

BOM = b"\xef\xbb\xbf"
#: Bytes of a physical line that are read; the rest of a longer line is passed over (BM308).
MAX_LINE = 16 << 20


@dataclass(slots=True, init=False, repr=False, eq=False)
class Line:
    """One physical line and what it is.

    ``cls`` is ``fact``, ``continuation``, ``blank`` or ``skipped``; ``reason`` is the skip
    reason (SPEC.md §Notation); for a fact ``marker`` is its marker; for a fact or a
    continuation ``text`` is the raw text (marker removed) and ``col`` its 1-based column;
    a skipped ``link-definition`` line keeps its whole text (``references`` reads it).
    """

    number: int
    cls: str
    reason: str = ""
    marker: str = ""
    text: str = ""
    col: int = 1

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(self, number, cls, reason="", marker="", text="", col=1) -> None:
        self.number = number
        self.cls = cls
        self.reason = reason
        self.marker = marker
        self.text = text
        self.col = col

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(number={self.number!r}, cls={self.cls!r}, "
            f"reason={self.reason!r}, marker={self.marker!r}, text={self.text!r}, "
            f"col={self.col!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.number, self.cls, self.reason, self.marker, self.text, self.col) == (
                other.number,
                other.cls,
                other.reason,
                other.marker,
                other.text,
                other.col,
            )
        return NotImplemented


#: What reads a notes file's decoded lines into ``Line`` values: ``body(handle, file,
#: diags, classify, encoding)``, ``handle`` a seekable binary file of UTF-8 (its lines read
#: with ``read_lines``), ``encoding`` None or the name of the encoding it was transcoded from.
Body = Callable[
    [BinaryIO, str, list[Diagnostic], Callable[[str], "Classified"], str | None], Iterator[Line]
]


class NotesReadError(BrainmigrateError, OSError):
    """A notes file could not be opened or read."""


#: How to fix a notes file that cannot be read.
_READ_FIX = "make it readable or leave it out"


#: Byte order marks of the encodings a notes file is decoded as instead of UTF-8, in the
#: order they are checked (SPEC.md §Notation, Decoding): UTF-32 first, as ``FF FE 00 00``
#: starts with the UTF-16 LE mark.
WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32 LE"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32 BE"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16 LE"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16 BE"),
)
#: Bytes of a UTF-16 or UTF-32 file decoded at a time.
CHUNK = 1 << 20
#: The error handler a wide encoding is decoded with: every invalid sequence (a lone
#: surrogate, a code point beyond U+10FFFF, an odd trailing byte) becomes one U+DCFF,
#: which ``surrogateescape`` writes as the byte FF: one invalid UTF-8 byte, so the line
#: reader replaces it with one U+FFFD and warns (BM305) at its line and column.
_INVALID = "brainmigrate-invalid"
codecs.register_error(_INVALID, lambda exc: ("\udcff", exc.end))


def _utf16_shaped(raw: bytes) -> bool:
    """Whether a line's bytes look like UTF-16 text without a BOM: at least 4 bytes and
    every byte at even (or every byte at odd) positions NUL."""
    body = raw.rstrip(b"\r\n\x00") if len(raw) % 2 else raw.rstrip(b"\r\n")
    return len(body) >= 4 and (not any(body[0::2]) or not any(body[1::2]))


def _decode(
    raw: bytes, number: int, file: str, diags: list[Diagnostic] | None, encoding: str = "UTF-8"
) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = raw.decode("utf-8", errors="replace")
        if diags is not None:
            col = len(raw[: exc.start].decode("utf-8", errors="replace")) + 1
            diags.append(
                diagnostic(
                    file,
                    number,
                    "BM305",
                    f"invalid {encoding} bytes replaced with U+FFFD",
                    col,
                )
            )
    if "\x00" in text:
        if diags is not None:
            message = "NUL bytes replaced with U+FFFD"
            if _utf16_shaped(raw):
                message += (
                    "; every other byte is NUL, as in UTF-16 without a byte order mark:"
                    " save the file as UTF-8 (or UTF-16 with a BOM)"
                )
            diags.append(diagnostic(file, number, "BM306", message, text.index("\x00") + 1))
        text = text.replace("\x00", "\ufffd")
    return text


def read_lines(
    handle,
    offset: int,
    number: int,
    file: str,
    warn_after: int,
    diags: list[Diagnostic],
    encoding: str | None,
):
    """Yield ``(number, text, offset_after)`` from byte ``offset`` of ``handle`` on, decoding
    each line (SPEC.md §Notation, Decoding); ``number`` is the number of the line before.

    Problems of lines numbered ``warn_after`` or less were reported by an earlier pass.
    ``encoding`` is None for a UTF-8 file (whose BOM is dropped here), else the name of
    the encoding the UTF-8 in ``handle`` was transcoded from (its BOM is already gone).
    """
    handle.seek(offset)
    readline = handle.readline
    while raw := readline(MAX_LINE):
        number += 1
        offset += len(raw)
        if len(raw) == MAX_LINE and raw[-1:] != b"\n":
            # An overlong line (a sparse or binary file): keep its first MAX_LINE bytes and
            # pass over the rest unread, so memory stays bounded.
            skipped = 0
            while (more := readline(1 << 20)) and more[-1:] != b"\n":
                skipped += len(more)
            skipped += len(more)
            offset += skipped
            if number > warn_after:
                diags.append(
                    diagnostic(
                        file,
                        number,
                        "BM308",
                        f"line longer than {MAX_LINE} bytes: the {skipped} bytes after them"
                        " were skipped",
                    )
                )
            raw = raw.rstrip(b"\r")
        elif raw[-1:] == b"\n":
            raw = raw[:-2] if raw[-2:-1] == b"\r" else raw[:-1]
        if number == 1 and raw[:3] == BOM and encoding is None:
            raw = raw[3:]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is None or "\x00" in text:
            text = _decode(
                raw, number, file, diags if number > warn_after else None, encoding or "UTF-8"
            )
        yield number, text, offset


def scan(
    path: str | Path,
    file: str,
    diags: list[Diagnostic],
    classify: Callable[[str], Classified] | None = None,
    *,
    body: Body | None = None,
) -> Iterator[Line]:
    """Yield one ``Line`` per physical line of the notes file at ``path`` (see ``scan_file``).

    Raises ``NotesReadError`` when the file cannot be opened or read, ``spill.SpillError``
    when a UTF-16 or UTF-32 file cannot be transcoded into a temporary file.
    """
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed in finally, across a generator
    except OSError as exc:
        raise NotesReadError(
            f"{file}: cannot read it ({exc.strerror or exc}); {_READ_FIX}"
        ) from exc
    try:
        yield from scan_file(handle, file, diags, classify, body=body)
    except OSError as exc:
        raise NotesReadError(
            f"{file}: cannot read it ({exc.strerror or exc}); {_READ_FIX}"
        ) from exc
    finally:
        handle.close()


def scan_file(
    handle: BinaryIO,
    file: str,
    diags: list[Diagnostic],
    classify: Callable[[str], Classified] | None = None,
    *,
    body: Body | None = None,
) -> Iterator[Line]:
    """Yield one ``Line`` per physical line of the notes read from ``handle``, a seekable
    binary file object positioned at its start (an open file, ``io.BytesIO``).

    ``file`` is the name diagnostics use. Problems in the notes (invalid bytes, NUL, an
    unclosed fence or comment, a merge conflict: BM311) are appended to ``diags``; they
    never stop the scan. Lines
    end at ``\\n`` only; a ``\\r`` before it is dropped (SPEC.md §Notation, Decoding).

    The notes are UTF-8, and a UTF-8 BOM at byte 0 is dropped, unless they start with a
    UTF-32 or UTF-16 BOM: then they are decoded as that encoding (info BM310), streamed
    through an unnamed temporary file as UTF-8, so memory stays bounded; columns are in
    characters either way. Raises ``OSError`` when ``handle`` cannot be read and
    ``spill.SpillError`` when the temporary file cannot be written.

    ``body`` reads the decoded lines (default: brain notation; ``markdown_notes.body`` reads
    Markdown notes).
    """
    classify = classify or classifier()
    body = body or _scan
    head = handle.read(4)
    for bom, codec, name in WIDE_BOMS:
        if head.startswith(bom):
            diags.append(diagnostic(file, None, "BM310", f"decoded as {name} (byte order mark)"))
            handle.seek(len(bom))
            with _transcoded(handle, codec) as utf8:
                yield from body(utf8, file, diags, classify, name)
            return
    handle.seek(0)
    yield from body(handle, file, diags, classify, None)


def _transcoded(handle: BinaryIO, codec: str) -> BinaryIO:
    """An unnamed temporary file holding the rest of ``handle``, decoded from ``codec``
    and written as UTF-8, rewound. Invalid sequences become the byte FF (see ``_INVALID``)."""
    where = spill.folder()
    try:
        import tempfile  # only for a stream that must be spilled

        out = tempfile.TemporaryFile(prefix="brainmigrate-", dir=where)  # noqa: SIM115
    except OSError as exc:
        raise spill.SpillError(where, exc) from None
    decode = codecs.getincrementaldecoder(codec)(errors=_INVALID).decode
    try:
        while True:
            chunk = handle.read(CHUNK)
            text = decode(chunk, final=not chunk)
            try:
                out.write(text.encode("utf-8", "surrogateescape"))
            except OSError as exc:
                raise spill.SpillError(where, exc) from None
            if not chunk:
                break
        out.seek(0)
    except BaseException:
        out.close()
        raise
    return out


def _scan(
    handle, file: str, diags: list[Diagnostic], classify, encoding: str | None
) -> Iterator[Line]:
    offset = number = warned = 0
    comments_close = True  # False once a comment was seen to run to the end of the file
    # "fact", "callout", "context" or "state": what an indented line would continue (and,
    # for a callout, a ">" line too)
    open_kind = ""
    conflicts = Conflicts(file, diags)
    while True:
        lines = read_lines(handle, offset, number, file, warned, diags, encoding)
        restart = None
        for number, text, offset in lines:
            cls, lead, start = classify(text)
            if cls in CONFLICT_CLASSES or conflicts.in_base:
                if conflicts.take(cls, number):
                    open_kind = ""
                    yield Line(number, "skipped", "conflict")
                    continue
                cls = "prose"  # a conflict line with no conflict open
            if cls == "indented":
                if open_kind == "fact":
                    yield Line(number, "continuation", "", "", text, 1)
                else:
                    yield Line(number, "skipped", open_kind or "orphan")
                continue
            if open_kind == "callout" and text[:1] == ">":
                yield Line(number, "skipped", "callout")
                continue
            open_kind = ""
            if cls == "fact":
                rest = text[start:]
                body = split_trailer(rest)[0] if "-->" in rest else rest
                if "^" in body:
                    body = split_block_id(body)
                if is_blank(body):
                    yield Line(number, "skipped", "empty")
                else:
                    open_kind = "fact"
                    yield Line(number, "fact", "", lead, rest, start + 1)
            elif cls == "blank":
                yield Line(number, "blank")
            elif cls == "callout" or cls == "context" or cls == "state":
                open_kind = cls
                yield Line(number, "skipped", cls)
            elif cls == "heading" or cls == "prose":
                yield Line(number, "skipped", cls)
            elif cls == "link_definition":
                yield Line(number, "skipped", "link-definition", "", text, 1)
            elif cls == "fence":
                yield Line(number, "skipped", "code")
                number = yield from code_fence(lines, number, lead, file, diags)
            elif cls == "comment":
                if text.find("-->", start) >= 0:
                    yield Line(number, "skipped", "comment")
                    continue
                if not comments_close:
                    yield Line(number, "skipped", "comment")
                    diags.append(unclosed_comment(file, number))
                    continue
                first, resume = number, offset
                number, closed = yield from closed_block(lines, first, ends_comment, "comment")
                if not closed:
                    # Never closed: that line alone is a comment; read on after it. The
                    # lines after it were read to the end, and their problems reported.
                    yield Line(first, "skipped", "comment")
                    diags.append(unclosed_comment(file, first))
                    comments_close = False
                    restart = (resume, first)
                    warned = number
                    break
        if restart is None:
            conflicts.end(number)
            return
        offset, number = restart


def code_fence(
    lines: Iterator[tuple[int, str, int]],
    first: int,
    lead: str,
    file: str,
    diags: list[Diagnostic],
    indented: bool = False,
) -> Generator[Line, None, int]:
    """The lines after a code fence opened at line ``first`` by ``lead`` (backticks or
    tildes), read from ``lines`` (``(number, text, offset)``) through the closing fence:
    each skipped as ``code`` (SPEC.md §Notation). A fence of the same character at least as
    long closes it, at column 0 (``indented``: after any spaces and tabs, as Markdown notes
    read it). Never closed, it runs to the end and ``diags`` gets a BM303 info. Returns the
    number of the last line read."""
    pad = "[ \t]*" if indented else ""
    closing = re.compile(f"{pad}{re.escape(lead[0])}{{{len(lead)},}}{WS_CLASS}*$")
    number = first
    for number, text, _ in lines:
        yield Line(number, "skipped", "code")
        if closing.match(text):
            return number
    diags.append(diagnostic(file, first, "BM303", "code fence never closed", 1))
    return number


def closed_block(
    lines: Iterator[tuple[int, str, int]], first: int, closes: Callable[[str], bool], reason: str
) -> Generator[Line, None, tuple[int, bool]]:
    """A block opened at line ``first`` (an HTML comment, front matter), read from ``lines``
    (``(number, text, offset)``) up to the first line whose text ``closes`` it: then every
    line from ``first`` through that one is skipped with ``reason``, and it returns
    ``(that line's number, True)``. Never closed, it yields nothing and returns ``(the last
    number read, False)``: the caller says what line ``first`` is and reads on after it."""
    number = first
    for number, text, _ in lines:
        if closes(text):
            for n in range(first, number + 1):
                yield Line(n, "skipped", reason)
            return number, True
    return number, False


def ends_comment(text: str) -> bool:
    """Whether a line closes an HTML comment (holds ``-->``)."""
    return "-->" in text


def unclosed_comment(file: str, number: int) -> Diagnostic:
    """The BM304 info of an HTML comment opened at line ``number`` and never closed."""
    return diagnostic(file, number, "BM304", "HTML comment never closed", 1)
