"""The notation's grammar and what each line of it is (SPEC.md §Notation).

The notation's tokens are defined once, in ``grammar/notation.lark``. Two classifiers read
a line with them:

* ``LarkClassifier`` runs Lark's LALR parser (contextual lexer) on each line;
* ``FastClassifier`` (the default) matches one regular expression composed from the same
  grammar's terminals, in the lexer's priority order. It is 5-10x faster; tests assert both
  give the same answer on every golden and generated line.

Besides: the whitespace classes, a fact's trailer (its stamp) and block id, folding.
Reading a notes file into lines with these is ``read.lines``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from brainmigrate.digests import sha256
from brainmigrate.errors import BrainmigrateError
from brainmigrate.patterns import lazy

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
WS_RUN = lazy(f"{WS_NL_CLASS}+")
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
    from brainmigrate.writers import temp_name  # a temporary name a later run can remove

    scratch = final.with_name(temp_name(final.name))
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
            from brainmigrate import inputs  # a FIFO there is refused, never waited on

            data = json.loads(inputs.read_bounded(path, inputs.SMALL_FILE_MAX, "a cache file"))
            if data.get("grammar") == key and isinstance(data.get("terminals"), dict):
                return data["terminals"]
        except (OSError, ValueError):
            pass
    found = {term.name: term.pattern.to_regexp() for term in parser().terminals}
    if path is not None:
        from brainmigrate.writers import write_text

        with contextlib.suppress(OSError):
            write_text(path, json.dumps({"grammar": key, "terminals": found}))
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
_BLOCK_ID = lazy(r"[A-Za-z0-9-]+")
_LETTER = lazy(r"[A-Za-z]")


def split_block_id(text: str, alone: bool = False) -> str:
    """``text`` without a trailing Obsidian block id (SPEC.md §Notation, Block ids).

    A block id is whitespace, ``^``, then ASCII letters, digits or ``-`` with at least one
    letter, and only whitespace after it (``fact ^abc-1``; ``keep ^123`` keeps its ``^123``).
    Every trailing id goes (``a ^x ^y`` gives ``a``): a text that still ended in one would
    lose it when written out and read again. It trails text: on a fact's first line,
    ``^abc`` with nothing before it is the fact's text (``+ ^abc``), so every text a fact
    can hold reads back the same. ``alone``: a
    continuation line's id stands after the fact's earlier text and goes even alone. The
    whitespace before the ``^`` is kept (folding trims it). Linear time: one pass from
    the end, by positions (no slice or strip of the text per id).
    """
    end = len(text.rstrip(_WS_STRIP))
    first = len(text) - len(text.lstrip(_WS_STRIP))  # text[:i] is blank when i <= first
    cut = len(text)
    while True:
        caret = text.rfind("^", 0, end)
        if (
            caret < 1
            or text[caret - 1] not in _WS_SET
            or not _BLOCK_ID.fullmatch(text, caret + 1, end)
            or not _LETTER.search(text, caret + 1, end)
            or (not alone and caret <= first)
        ):
            return text[:cut]
        cut = end = caret  # and again: no stored text ends in an id (it would not read back)
        while end and text[end - 1] in _WS_SET:
            end -= 1


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


def parse_stamp(inside: str) -> tuple[str, str | None] | None:
    """Read a trailer's inside as ``YYYY-MM-DD HH:MM[:SS][offset] [run]`` (SPEC.md §Notation).

    Returns ``(created, run)`` with ``created`` in UTC as ``YYYY-MM-DDTHH:MM:SSZ``, or None
    when the text is not such a stamp or not a real calendar time.
    """
    m = _STAMP.match(inside.strip(_WS_STRIP))
    if not m:
        return None
    return _stamp_value(*m.group("date", "time", "offset", "run"))


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
    if not offset or offset == "Z":
        # UTC as written: the digits DATE and TIME hold are the ones formatting gives
        return (f"{date}T{time}Z" if len(time) > 5 else f"{date}T{time}:00Z"), run
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


_STAMP = lazy(fast_classes(stamp_source()))
