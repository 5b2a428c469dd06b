"""Read a notes file and say what every physical line is (SPEC.md §Notation).

The notation's tokens are defined once, in ``grammar/notation.lark``. Two classifiers read
a line with them:

* ``LarkClassifier`` runs Lark's LALR parser (contextual lexer) on each line;
* ``FastClassifier`` (the default) matches one regular expression composed from the same
  grammar's terminals, in the lexer's priority order. It is 5-10x faster; tests assert both
  give the same answer on every golden and generated line.

``scan`` keeps the little state that spans lines (an open fact, a fence, an HTML comment
block, a callout, a context or state line, a merge conflict: ``Conflicts``) and yields one
``Line`` per physical line, so
every line is accounted for: ``fact``, ``continuation``, ``blank`` or ``skipped`` with a
reason. It streams: memory does not grow with the file (a UTF-16 or UTF-32 file is
transcoded through a temporary file).
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import re
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from reprlib import recursive_repr
from typing import TYPE_CHECKING, BinaryIO

from brainmigrate import spill
from brainmigrate.digests import sha256
from brainmigrate.errors import BrainmigrateError
from brainmigrate.model import Diagnostic
from brainmigrate.read.conflicts import CONFLICT_CLASSES, Conflicts

if TYPE_CHECKING:  # lark is imported when the parser is first built (start-up)
    from lark import Lark

#: Unicode White_Space, "\n" aside (SPEC.md §Notation: "Whitespace" is Unicode White_Space):
#: the class of the grammar's ``WS`` terminal (a test holds the two equal).
WS_CHARS = "\t\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
#: The grammar's ``SEP`` class: ``WS_CHARS`` but the ones that end a line elsewhere
#: (U+000B-U+000D, U+0085, U+2028, U+2029).
SEP_CHARS = "\t \xa0\u1680\u2000-\u200a\u202f\u205f\u3000"
#: Classes that match the same characters as ``[WS_CHARS]``, ``[WS_CHARS\n]``,
#: ``[^WS_CHARS\n]`` and ``[SEP_CHARS]`` and that ``re`` compiles fast: a class listing
#: characters past U+00FF is compiled into a table of 65536 entries (about 0.3 ms each
#: time, issue 14). ``\s`` (``str.isspace``) is Unicode White_Space plus U+001C-U+001F;
#: tests/test_notation.py checks each pair on every code point.
WS_CLASS = r"[^\S\n\x1c-\x1f]"
WS_NL_CLASS = r"[^\S\x1c-\x1f]"
NOT_WS_NL_CLASS = r"[\S\x1c-\x1f]"
SEP_CLASS = r"(?:(?![\u2028\u2029])[^\S\n-\r\x1c-\x1f\x85])"
#: Each class as the grammar's terminals spell it -> its fast form (``fast_classes``).
_FAST_CLASSES = {
    f"[{WS_CHARS}]": WS_CLASS,
    f"[{SEP_CHARS}]": SEP_CLASS,
    f"[^\t\n{WS_CHARS[1:]}]": NOT_WS_NL_CLASS,
}
WS_RUN = re.compile(f"{WS_NL_CLASS}+")
BOM = b"\xef\xbb\xbf"
#: Bytes of a physical line that are read; the rest of a longer line is passed over (BM308).
MAX_LINE = 16 << 20
#: The same characters as a string, for str.strip().
_WS_STRIP = "\t\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(
    chr(c) for c in range(0x2000, 0x200B)
)


def fast_classes(pattern: str) -> str:
    """``pattern`` with each of the grammar's whitespace classes (as ``terminals()`` spells
    them) in its fast form (``WS_CLASS``, ``SEP_CLASS``, ``NOT_WS_NL_CLASS``): the same
    matches, compiled in a fraction of the time."""
    for slow, fast in _FAST_CLASSES.items():
        pattern = pattern.replace(slow, fast)
    return pattern


class GrammarError(BrainmigrateError, RuntimeError):
    """The notation grammar could not be found or loaded (a broken install)."""


def grammar_text() -> str:
    """Return the text of ``notation.lark``.

    Looks beside the package's modules first (the wheel force-includes it as
    ``brainmigrate/grammar/notation.lark``), then in the repository's ``grammar/`` folder
    (an editable install or a checkout), then through ``importlib.resources`` (a package
    that is not plain files, such as a zip). Raises ``GrammarError`` when none holds it.
    """
    package = Path(__file__).resolve().parent.parent  # (this module is in ``read/``)
    for path in (
        package / "grammar" / "notation.lark",
        package.parent / "grammar" / "notation.lark",
    ):
        if path.is_file():
            return path.read_text(encoding="utf-8")
    from importlib import resources

    packaged = resources.files("brainmigrate").joinpath("grammar/notation.lark")
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    raise GrammarError("notation.lark is missing from the installation; reinstall brainmigrate")


@cache
def parser() -> Lark:
    """The grammar's LALR parser (contextual lexer), built once per process.

    Lark's analysis of the grammar is cached in ``grammar_cache_dir()``, in a file named
    for the grammar's text and ``LARK_OPTIONS`` (Lark checks the text, options and its own
    version again on load), so a changed grammar or option is built afresh; without a
    writable cache folder the parser is built every time.
    """
    from lark import Lark

    text = grammar_text()
    options = LARK_OPTIONS
    final = _cache_file(text, "lark")
    if final is None:
        return Lark(text, **options)
    if final.is_file():
        return Lark(text, cache=str(final), **options)
    # written under a name of its own, then renamed: a run started meanwhile never reads
    # half a file
    scratch = final.with_name(f".{final.name}.{os.getpid()}.tmp")
    built = Lark(text, cache=str(scratch), **options)
    try:
        os.replace(scratch, final)
    except OSError:
        _remove(scratch)
    return built


@cache
def terminals() -> dict[str, str]:
    """The grammar's terminals as regular expressions, by name (what ``FastClassifier`` and
    the stamp reader are composed from).

    Kept in ``grammar_cache_dir()`` next to Lark's cache, keyed by the grammar's text and
    the parser's options, so the fast path reads them without importing or building the
    parser.
    """
    text = grammar_text()
    path = _cache_file(text, "terminals.json")
    key = _grammar_key(text)
    if path is not None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("grammar") == key and isinstance(data.get("terminals"), dict):
                return data["terminals"]
        except (OSError, ValueError):
            pass
    found = {term.name: term.pattern.to_regexp() for term in parser().terminals}
    if path is not None:
        from brainmigrate.fsutil import write_text_atomic

        with contextlib.suppress(OSError):
            write_text_atomic(path, json.dumps({"grammar": key, "terminals": found}))
    return found


def grammar_cache_dir() -> Path:
    """Where the built grammar is kept: ``grammar`` in the user cache folder
    (``$BRAINMIGRATE_CACHE_DIR``, else ``$XDG_CACHE_HOME/brainmigrate``, else
    ``~/.cache/brainmigrate``)."""
    from brainmigrate.fsutil import user_cache_dir

    return user_cache_dir() / "grammar"


#: How the parser is built. ``strict``: terminals that could collide fail the build
#: (Lark checks it with ``interegular``).
LARK_OPTIONS = {
    "parser": "lalr",
    "lexer": "contextual",
    "start": ["line", "stamp"],
    "strict": True,
}
#: The form of the cached terminals file; a new form is a new key.
_TERMINALS_FORM = 1


def _grammar_key(text: str) -> str:
    """What the cached analysis and terminals stand for: the grammar's text, the parser's
    options and the form of the terminals file; a change to any of them is a new key."""
    options = json.dumps(LARK_OPTIONS, sort_keys=True)
    data = f"{text}\x00{options}\x00{_TERMINALS_FORM}"
    return sha256(data.encode("utf-8")).hexdigest()[:32]


def _cache_file(text: str, suffix: str) -> Path | None:
    """``notation-<digest of text>.<suffix>`` in the grammar cache folder, made if need be;
    None when the folder cannot be made."""
    folder = grammar_cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder / f"notation-{_grammar_key(text)}.{suffix}"


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


# A classification: (class, lead token, index where the line's rest begins).
# class is one of: blank fact callout context state heading fence comment indented prose
# link_definition conflict_open conflict_base conflict_sep conflict_close.
# For a fact, lead is the marker ("!" for "!P3") and the rest is the fact's raw text.
Classified = tuple[str, str, int]


class LarkClassifier:
    """Classify a line with the Lark parser. The reference the fast path is tested against."""

    name = "lark"

    def __init__(self) -> None:
        self._lark = parser()

    def __call__(self, line: str) -> Classified:
        from lark import Token, Tree

        tree = self._lark.parse(line, start="line")
        node = tree.children[0]
        assert isinstance(node, Tree)
        cls = str(node.data)
        tokens = [t for t in node.children if isinstance(t, Token)]
        if cls == "prose":
            return cls, "", 0
        if cls == "blank":
            return cls, "", len(line)
        lead, start = "", len(line)
        for tok in tokens:
            if tok.type == "PRIORITY":
                return cls, "!", tok.start_pos + 1
            if tok.type not in ("BULLET", "TASK_BOX", "REST"):
                lead, start = str(tok), tok.end_pos
        return cls, lead, start


def classifier_source() -> str:
    """The regular expression ``FastClassifier`` matches, as composed from the grammar's
    terminals (before ``fast_classes``)."""
    t = terminals()
    return (
        f"(?P<link_definition>{t['LINK_DEF']})"
        f"|(?P<blank>(?:{t['BLANK']})?$)"
        f"|(?P<indented>{t['INDENT']})(?=.)"
        f"|(?P<heading>{t['HEADING']})"
        f"|(?P<fence>{t['FENCE']})"
        f"|(?P<comment>{t['COMMENT_OPEN']})"
        f"|(?P<conflict_open>{t['CONFLICT_OPEN']})"
        f"|(?P<conflict_base>{t['CONFLICT_BASE']})"
        f"|(?P<conflict_sep>{t['CONFLICT_SEP']})"
        f"|(?P<conflict_close>{t['CONFLICT_CLOSE']})"
        f"|(?:{t['BULLET']})?(?:(?P<callout>{t['CALLOUT']})"
        f"|(?:{t['TASK_BOX']})?(?:(?P<priority>{t['PRIORITY']})|(?P<fact>{t['MARKER']})"
        f"|(?P<context>{t['CONTEXT']})|(?P<state>{t['STATE']})))"
        f"|(?P<prose>)"
    )


class FastClassifier:
    """Classify a line with one regex composed from the grammar's terminals.

    Alternatives follow the terminals' priorities in ``notation.lark`` (the order Lark's
    contextual lexer tries them in), so the answer equals ``LarkClassifier``'s.
    """

    name = "fast"

    def __init__(self) -> None:
        self._re = re.compile(fast_classes(classifier_source()))

    def __call__(self, line: str) -> Classified:
        m = self._re.match(line)
        cls = m.lastgroup
        if cls == "priority":
            return "fact", "!", m.start("priority") + 1
        if cls == "prose":
            return "prose", "", 0
        if cls == "blank":
            return "blank", "", len(line)
        return cls, m.group(cls), m.end()


def classifier(name: str = "fast") -> Callable[[str], Classified]:
    """Return the line classifier called ``name`` (``fast`` or ``lark``)."""
    if name == "fast":
        return _fast()
    if name == "lark":
        return LarkClassifier()
    raise ValueError(f"unknown classifier {name!r}; use 'fast' or 'lark'")


@cache
def _fast() -> FastClassifier:
    return FastClassifier()


# ------------------------------------------------------------------------------ trailers


def split_trailer(text: str) -> tuple[str, str | None]:
    """Split the last HTML comment at the end of ``text`` off it (SPEC.md §Notation, Trailer).

    Returns ``(text_before, comment_inside)``; ``comment_inside`` is None when the text does
    not end with a closed comment (trailing whitespace aside). A comment in mid-line, an
    unclosed one (``<!-- a``) and one closed with ``->`` stay in the text. Linear time.
    """
    end = len(text.rstrip(_WS_STRIP))
    if end < 7 or not text.startswith("-->", end - 3):
        return text, None
    start = text.rfind("<!--", 0, end - 3)
    if start < 0 or start + 4 > end - 3:
        return text, None
    inside = text[start + 4 : end - 3]
    if "-->" in inside:
        return text, None
    return text[:start], inside


_WS_SET = frozenset(_WS_STRIP)
_BLOCK_ID = re.compile(r"[A-Za-z0-9-]+")
_LETTER = re.compile(r"[A-Za-z]")


def split_block_id(text: str, alone: bool = False) -> str:
    """``text`` without a trailing Obsidian block id (SPEC.md §Notation, Block ids).

    A block id is whitespace, ``^``, then ASCII letters, digits or ``-`` with at least one
    letter, and only whitespace after it (``fact ^abc-1``; ``keep ^123`` keeps its ``^123``).
    Every trailing id goes (``a ^x ^y`` gives ``a``): a text that still ended in one would
    lose it when written out and read again. It trails text: on a fact's first line,
    ``^abc`` with nothing before it is the fact's text (``+ ^abc``), so every text a fact
    can hold reads back the same. ``alone``: a
    continuation line's id stands after the fact's earlier text and goes even alone. The
    whitespace before the ``^`` is kept (folding trims it). Linear time.
    """
    while True:
        end = len(text.rstrip(_WS_STRIP))
        caret = text.rfind("^", 0, end)
        if (
            caret < 1
            or text[caret - 1] not in _WS_SET
            or not _BLOCK_ID.fullmatch(text, caret + 1, end)
            or not _LETTER.search(text, caret + 1, end)
            or (not alone and is_blank(text[:caret]))
        ):
            return text
        text = text[:caret]  # and again: no stored text ends in an id (it would not read back)


def fold(text: str) -> str:
    """Fold runs of Unicode White_Space to one space and trim (SPEC.md §Notation)."""
    if "\x1c" in text or "\x1d" in text or "\x1e" in text or "\x1f" in text:
        return WS_RUN.sub(" ", text).strip(" ")
    # str.split() splits at exactly White_Space plus U+001C..U+001F, ruled out above.
    return " ".join(text.split())


def link_label(label: str) -> str:
    """A link label as labels are matched (SPEC.md §Anchors, Reference-style links):
    case-folded, runs of Unicode White_Space folded to one space, trimmed
    (``link_label(" ADR\t4 ")`` is ``"adr 4"``)."""
    return fold(label).casefold()


def is_blank(text: str) -> bool:
    """True when ``text`` is empty or only Unicode White_Space."""
    return not text.strip(_WS_STRIP)


# ------------------------------------------------------------------------------ reading


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

    # --- generated by tools/records.py from the fields above; do not edit ---
    # fmt: off
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
            f"reason={self.reason!r}, marker={self.marker!r}, text={self.text!r}, col={self.col!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (
                self.number, self.cls, self.reason, self.marker, self.text, self.col,
            ) == (
                other.number, other.cls, other.reason, other.marker, other.text, other.col,
            )
        return NotImplemented
    # fmt: on
    # --- end generated ---


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
                Diagnostic(
                    file,
                    number,
                    "BM305",
                    "warning",
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
            diags.append(
                Diagnostic(file, number, "BM306", "warning", message, text.index("\x00") + 1)
            )
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
                    Diagnostic(
                        file,
                        number,
                        "BM308",
                        "warning",
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
    classify = classify or _fast()
    body = body or _scan
    head = handle.read(4)
    for bom, codec, name in WIDE_BOMS:
        if head.startswith(bom):
            diags.append(
                Diagnostic(file, None, "BM310", "info", f"decoded as {name} (byte order mark)")
            )
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
    diags.append(Diagnostic(file, first, "BM303", "info", "code fence never closed", 1))
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
    return Diagnostic(file, number, "BM304", "info", "HTML comment never closed", 1)


def parse_stamp(inside: str) -> tuple[str, str | None] | None:
    """Read a trailer's inside as ``YYYY-MM-DD HH:MM[:SS][offset] [run]`` (SPEC.md §Notation).

    Returns ``(created, run)`` with ``created`` in UTC as ``YYYY-MM-DDTHH:MM:SSZ``, or None
    when the text is not such a stamp or not a real calendar time.
    """
    m = _STAMP.match(inside.strip(_WS_STRIP))
    if not m:
        return None
    return _stamp_value(m.group("date"), m.group("time"), m.group("offset"), m.group("run"))


def parse_stamp_lark(inside: str) -> tuple[str, str | None] | None:
    """``parse_stamp`` through the Lark parser's ``stamp`` rule; tests check they agree."""
    from lark.exceptions import LarkError

    try:
        tree = parser().parse(inside.strip(_WS_STRIP), start="stamp")
    except LarkError:
        return None
    parts = {t.type: str(t) for t in tree.children}
    return _stamp_value(parts["DATE"], parts["TIME"], parts.get("OFFSET"), parts.get("RUN"))


def _stamp_value(date: str, time: str, offset: str | None, run: str | None):
    try:
        when = datetime(
            int(date[:4]),
            int(date[5:7]),
            int(date[8:10]),
            int(time[:2]),
            int(time[3:5]),
            int(time[6:8]) if len(time) > 5 else 0,
        )
    except ValueError:
        return None
    if offset and offset != "Z":
        sign = -1 if offset[0] == "-" else 1
        digits = offset[1:].replace(":", "")
        hours, minutes = int(digits[:2]), int(digits[2:])
        if hours > 23 or minutes > 59:
            return None
        try:
            when -= sign * timedelta(hours=hours, minutes=minutes)
        except OverflowError:
            return None
    return (
        f"{when.year:04d}-{when.month:02d}-{when.day:02d}T"
        f"{when.hour:02d}:{when.minute:02d}:{when.second:02d}Z"
    ), run


def stamp_source() -> str:
    """The regular expression ``parse_stamp`` matches, as composed from the grammar's
    terminals (before ``fast_classes``)."""
    t = terminals()
    return (
        f"(?P<date>{t['DATE']})(?:{t['DATE_SEP']})(?P<time>{t['TIME']})"
        f"(?P<offset>{t['OFFSET']})?(?:(?:{t['RUN_SEP']})(?P<run>{t['RUN']}))?$"
    )


_STAMP = re.compile(fast_classes(stamp_source()))
