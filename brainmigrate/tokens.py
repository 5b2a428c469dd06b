"""The token rules of SPEC.md §Anchors, in one place: what in a fact's text can cite a file.

Pure: no file system (a backtick span with spaces asks a ``holds`` callable). ``anchors``
resolves what these functions find; ``facts`` asks them which text a cited path consumed, so
that no task id is read inside a path (``docs/incidents/INC-2231.md``, ``#L10-20``).

A segment's text is split into tokens:

* at whitespace, at invisible format characters (Unicode category Cf: zero-width space,
  LRM/RLM, bidi controls, a BOM in mid-text) and at CJK and full-width punctuation;
* where a Han, Hiragana, Katakana or Hangul letter meets an ASCII letter or digit, a
  bracket, a quote or a backtick (``见docs/setup.md``);
* at a ``(`` right after a letter, digit or ``_`` (``Poster.post(Poster.kt:5)``);
* at ``](`` (a Markdown link's target is its own token, marked ``link``).

These spans are one token each, spaces and all: a link target in angle brackets
(``[x](<docs/My File.md>)``), a wiki link's target (``[[docs/flow.md|alias]]``, cut at
``|``) and a backtick span holding whitespace when ``holds`` says a root holds a file at
its whole text. Leading and trailing punctuation is stripped, a line form (``:88``,
``#L10C5-L20C8``) is split off, and after a file's extension a ``#fragment``, ``?query``
or ``::name`` is dropped.

Every function here is linear in its input (tests/test_linear.py).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from reprlib import recursive_repr

from brainmigrate.model import Segment, pickled_as_tuple
from brainmigrate.notation import WS_CHARS, WS_CLASS

#: File names that are paths without an extension (SPEC.md §Anchors 1).
FILE_NAMES = frozenset(
    """Makefile GNUmakefile makefile Dockerfile Containerfile Jenkinsfile Vagrantfile Gemfile
    Rakefile Procfile Pipfile Brewfile Podfile Justfile justfile LICENSE LICENCE COPYING
    NOTICE AUTHORS CODEOWNERS README CHANGELOG CONTRIBUTING""".split()
)
#: The largest line number a line form holds (a store column's and every reader's limit);
#: a larger one is not a line form (SPEC.md §Anchors; warned as BM203).
MAX_LINE_NUMBER = 2**31 - 1

#: Unicode category Cf (format characters), as of Python 3.11's Unicode 14.0;
#: tests/test_tokens.py checks it against ``unicodedata``.
CF_CHARS = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f"
)
#: CJK and full-width punctuation (``。，、：；！？（）「」【】``).
CJK_PUNCT = "\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
#: Han, Hiragana, Katakana and Hangul letters.
CJK_LETTERS = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
#: What a CJK letter splits from: ASCII letters and digits, brackets, quotes, backticks.
_MEETS = "A-Za-z0-9()\\[\\]{}<>\"'`\u201c\u201d\u2018\u2019\u00ab\u00bb"

_CHUNK = re.compile(f"[^{WS_CHARS}\n{CF_CHARS}{CJK_PUNCT}]+")
#: Where a chunk splits: before ``(`` after a name, and at the edges between CJK letters
#: and ASCII. Only ``(`` can split ASCII text, so the CJK pattern (6 ms to compile, for
#: its large classes) is compiled when a chunk first holds other text (``_script_split``).
_PAREN_SPLIT = re.compile(r"(?<=\w)(?=\()")


@functools.cache
def _script_split() -> re.Pattern:
    return re.compile(
        f"(?<=[{CJK_LETTERS}])(?=[{_MEETS}])|(?<=[{_MEETS}])(?=[{CJK_LETTERS}])|(?<=\\w)(?=\\()"
    )


_WS = re.compile(WS_CLASS)
#: Spans that are one token with their spaces: a wiki link (target before ``|``), a link
#: target in angle brackets, a backtick span.
_SPANS = re.compile(
    r"(?P<wiki>!?\[\[(?P<target>[^\[\]|\n]+)(?:\|[^\[\]\n]*)?\]\])"
    r"|\]\((?P<angle><(?P<inner>[^<>\n]+)>)"
    r"|(?P<tick>`(?P<code>[^`\n]+)`)"
)
_LEAD = "([\"'<!@*`\u201c\u2018\u00ab"
_TRAIL = ")]>\"'.,;:!?*`\u2026\u201d\u2019\u00bb"
_BAZEL = re.compile(r"(?:@[\w.\-]*)?//")
_EXTENSION = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_LINE_FORM = re.compile(
    r":(?P<a>[0-9]+)(?:-(?P<b>[0-9]+))?(?::[0-9]+)?(?P<more>(?:,[0-9]+(?:-[0-9]+)?)*)"
    r"|#L(?P<c>[0-9]+)(?:C[0-9]+)?(?:-L?(?P<d>[0-9]+)(?:C[0-9]+)?)?"
)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]+:")
_SCP = re.compile(r"[^/@]+@[^/:]+:")
_NOT_PATH_CHARS = frozenset("*${}<>")
_ENV_VAR = re.compile(r"(?:^|/)%[A-Za-z_][A-Za-z0-9_]*%(?:/|$)")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: An identifier in any script: a letter, then letters, digits or ``_`` (``ÜberGateway``).
_UNICODE_IDENT = re.compile(r"[^\W\d_]\w*")
_HUMP = re.compile(r"[A-Z]+(?![a-z])|[A-Z][a-z0-9]*|[a-z0-9]+")
_NAME_SEP = re.compile(r"::|[.#<>,]")
_UPPER = re.compile(r"[A-Z]").search
_LOWER = re.compile(r"[a-z]").search


@pickled_as_tuple
@dataclass(
    slots=True, init=False, repr=False, eq=False
)  # not frozen: a frozen init sets each field through object.__setattr__
class Token:
    """A token of a fact's text: ``text`` (stripped; a line form and a suffix after a file's
    extension split off), ``lines`` its line form as ``(first, last)``, 1-based ``line`` and
    ``col`` of its first character in the physical line.

    ``whole`` is the text before a suffix was dropped (None when nothing was), ``link`` says
    it is a Markdown link target, ``end`` is the column after the text the token consumed
    (path, suffix and line form), ``overflow`` a line number too large for a line form.
    """

    text: str
    line: int
    col: int
    lines: tuple[int, int] | None = None
    whole: str | None = None
    link: bool = False
    end: int = 0
    overflow: str | None = None

    # dataclass() would compile these on every start-up (issue 14): written out as it
    # writes them; tests/test_records.py holds them to it.
    def __init__(
        self, text, line, col, lines=None, whole=None, link=False, end=0, overflow=None
    ) -> None:
        self.text = text
        self.line = line
        self.col = col
        self.lines = lines
        self.whole = whole
        self.link = link
        self.end = end
        self.overflow = overflow

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(text={self.text!r}, line={self.line!r}, "
            f"col={self.col!r}, lines={self.lines!r}, whole={self.whole!r}, "
            f"link={self.link!r}, end={self.end!r}, overflow={self.overflow!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (
                self.text,
                self.line,
                self.col,
                self.lines,
                self.whole,
                self.link,
                self.end,
                self.overflow,
            ) == (
                other.text,
                other.line,
                other.col,
                other.lines,
                other.whole,
                other.link,
                other.end,
                other.overflow,
            )
        return NotImplemented


def tokens(
    segments: Iterable[Segment],
    holds: Callable[[str], bool] | None = None,
    references: Mapping[str, str] | None = None,
) -> Iterator[Token]:
    """Split a fact's segments into tokens (SPEC.md §Anchors), in order of position.

    ``holds(path)`` says whether a root holds a file at a cited path; a backtick span that
    holds whitespace is one token only when it does (without ``holds``, never).
    """
    for seg in segments:
        text = seg.text
        if not _interesting(text):
            continue
        spans: list[Token] = []
        if "[[" in text or "](<" in text or "`" in text:
            text = _special_spans(text, seg, holds, spans)
        out = list(_plain(text, seg.line, seg.col))
        if spans:
            out.extend(spans)
            out.sort(key=lambda t: t.col)
        yield from out


def _interesting(raw: str) -> bool:
    """Whether text can hold a path, a file name or a CamelCase name: a slash, a dot, or an
    upper-case letter with a lower-case one after it. Linear."""
    if "/" in raw or "." in raw or "\\" in raw:
        return True
    upper = _UPPER(raw)
    if upper is not None and _LOWER(raw, upper.end()) is not None:
        return True
    if raw.isascii() or raw.lower() == raw:  # (no upper-case letter: CJK text, in C)
        return False
    # an upper-case letter of any script with a lower-case one after it (``ÄnderungsLog``)
    upper = next((i for i, c in enumerate(raw) if c.isupper() or c.istitle()), None)
    return upper is not None and any(c.islower() for c in raw[upper + 1 :])


def _special_spans(text: str, seg: Segment, holds, out: list[Token]) -> str:
    """Take the one-token spans out of ``text`` (blanked, so columns stay) into ``out``."""
    chars = None
    for m in _SPANS.finditer(text):
        if m.group("wiki"):
            start, end = m.start("target"), m.end("target")
            blank = (
                (m.start(), start),
                (end, end + 1 if text[end] == "|" else end),
                (
                    m.end() - 2,
                    m.end(),
                ),
            )
            link = False
        elif m.group("angle"):
            start, end = m.start("inner"), m.end("inner")
            blank = ((m.start("angle"), m.end("angle")),)
            link = True
        else:
            code = m.group("code")
            if not _WS.search(code) or holds is None:
                continue
            start, end = m.start("code"), m.end("code")
            tok = next(_shape(text[start:end], seg.line, seg.col + start, False), None)
            if tok is None or path_like(tok.text) is None or not holds(tok.text):
                continue
            blank = ((m.start(), m.end()),)
            link = False
        inner = text[start:end]
        trimmed = inner.strip()
        lead = len(inner) - len(inner.lstrip())
        out.extend(_shape(trimmed, seg.line, seg.col + start + lead, link, whole_span=True))
        if chars is None:
            chars = list(text)
        for a, b in ((start, end), *blank):
            chars[a:b] = " " * (b - a)
    return "".join(chars) if chars is not None else text


def _plain(text: str, line: int, col: int) -> Iterator[Token]:
    for m in _CHUNK.finditer(text):
        raw = m.group()
        if _interesting(raw):
            yield from _chunk(raw, line, col + m.start())


def _chunk(raw: str, line: int, col: int) -> Iterator[Token]:
    """The tokens of a chunk between separators: a Markdown link's target is cut out
    first (its parentheses are its own), the rest splits at script edges and ``(``."""
    link = raw.find("](")
    while link >= 0:
        yield from _pieces(raw[: link + 1], line, col)
        target = _link_target(raw[link + 2 :])
        yield from _shape(target, line, col + link + 2, True)
        rest = link + 2 + len(target)
        raw, col = raw[rest:], col + rest
        link = raw.find("](")
    yield from _pieces(raw, line, col)


def _pieces(raw: str, line: int, col: int) -> Iterator[Token]:
    if raw.isascii():
        if "(" not in raw:
            yield from _shape(raw, line, col, False)
            return
        split = _PAREN_SPLIT
    else:
        split = _script_split()
    cuts = [0, *(s.start() for s in split.finditer(raw)), len(raw)]
    for a, b in zip(cuts, cuts[1:], strict=False):
        yield from _shape(raw[a:b], line, col + a, False)


def _link_target(text: str) -> str:
    """A link target ends at the ``)`` that closes its link (balanced parentheses kept)."""
    depth = 0
    for i, c in enumerate(text):
        if c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                return text[:i]
            depth -= 1
    return text


def _shape(raw: str, line: int, col: int, link: bool, whole_span: bool = False) -> Iterator[Token]:
    """Strip a raw token's edges, split off its line form and suffix; yield it if left."""
    if "//" in raw and ":" in raw and _BAZEL.match(raw.lstrip(_LEAD.replace("@", ""))):
        return  # a Bazel label (//pkg:target, @repo//pkg:target): no path, no name
    stripped = raw if whole_span else raw.lstrip(_LEAD)
    col += len(raw) - len(stripped)
    text = stripped if whole_span else _strip_tail(stripped)
    if not text:
        return
    end = col + len(text)
    lines = overflow = None
    for start in _line_form_starts(text):
        m = _LINE_FORM.fullmatch(text, start)
        if m:
            lines = _lines_of(m)
            if lines is None:
                overflow = text[start:]
            text = _strip_tail(text[:start])
            break
    whole = None
    cut = _suffix_start(text)
    if cut is not None:
        whole, text = text, text[:cut]
    if text:
        yield Token(text, line, col, lines, whole, link, end, overflow)


def _strip_tail(text: str) -> str:
    """Strip trailing punctuation and ``()`` in any order; linear in the token's length."""
    end = len(text)
    while end:
        if end >= 2 and text[end - 2] == "(" and text[end - 1] == ")":
            end -= 2
        elif text[end - 1] in _TRAIL:
            end -= 1
        else:
            break
    return text[:end]


def _line_form_starts(text: str) -> list[int]:
    """Where a line form could begin: the last two ``:`` and the last ``#L`` (linear)."""
    starts = []
    colon = text.rfind(":")
    if colon > 0:
        starts.append(colon)
        before = text.rfind(":", 0, colon)
        if before > 0:
            starts.insert(0, before)
    hash_l = text.rfind("#L")
    if hash_l > 0:
        starts.append(hash_l)
    return starts


def _lines_of(m: re.Match) -> tuple[int, int] | None:
    """``(first, last)`` of a line form; None when a number passes ``MAX_LINE_NUMBER``."""
    if m.group("c") is not None:
        numbers = [m.group("c"), m.group("d") or m.group("c")]
    else:
        numbers = [m.group("a"), m.group("b") or m.group("a")]
        for part in filter(None, (m.group("more") or "").split(",")):
            numbers.extend(part.split("-"))
    if any(len(n) > 10 or int(n) > MAX_LINE_NUMBER for n in numbers):
        return None
    values = [int(n) for n in numbers]
    return min(values), max(values)  # a range written backwards (:92-88) is still 88-92


def _suffix_start(text: str) -> int | None:
    """Where a ``#fragment``, ``?query`` or ``::name`` begins after a file's extension (or a
    listed file name), or None. One pass; the last segment's extension is tracked as it
    goes, so the cost is linear however many ``#`` a token holds."""
    if "#" not in text and "?" not in text and "::" not in text:
        return None
    seg = 0  # where the current segment starts
    ext = -1  # characters of a valid extension so far; -1: none (no dot, or broken)
    for i, c in enumerate(text):
        if c == "#" or c == "?" or (c == ":" and text.startswith("::", i)):
            if ext > 0 or (i - seg <= 12 and text[seg:i] in FILE_NAMES):
                return i
            ext = -1
        elif c == "/" or c == "\\":
            seg, ext = i + 1, -1
        elif c == ".":
            ext = 0
        elif ext >= 0:
            if c.isascii() and (c.isalpha() or (ext > 0 and c.isdigit())):
                ext += 1
            else:
                ext = -1
    return None


# ------------------------------------------------------------------------------ paths


def path_like(text: str) -> str | None:
    """Return the POSIX form of ``text`` if it is a cited path (SPEC.md §Anchors 1), else None.

    A cited path holds ``/`` (``\\`` counts as ``/``) and its last segment has an extension
    or is a listed file name (Makefile, Dockerfile, LICENSE ...). Not paths: URLs
    (``scheme://``, ``www.``, ``user@host:path``), tokens with ``* $ { } < >`` (globs,
    variables, placeholders) and tokens with a ``%NAME%`` segment (Windows variables).
    """
    text = text.replace("\\", "/")
    if "/" not in text or _NOT_PATH_CHARS.intersection(text):
        return None
    if text.startswith("www.") or "://" in text or _SCP.match(text):
        return None  # a URL, also inside a token (href="https://…", --url=https://…)
    if "%" in text and _ENV_VAR.search(text):
        return None
    last = text[text.rfind("/") + 1 :]
    return text if has_extension(last) or last in FILE_NAMES else None


def link_path(text: str) -> str | None:
    """A Markdown link target as a cited path: as ``path_like``, and also without ``/`` when
    it names a file (``0021-ledger.md``); None for a target with a scheme (``mailto:``), an
    e-mail address or a ``www.`` host."""
    cited = path_like(text)
    if cited is not None:
        return cited
    if "/" in text or "\\" in text or "@" in text or text.startswith("www."):
        return None  # a folder path that is no path, an e-mail address, a host
    if _SCHEME.match(text) or _NOT_PATH_CHARS.intersection(text):
        return None
    return text if has_extension(text) or text in FILE_NAMES else None


def has_extension(name: str) -> bool:
    """True when ``name`` ends in a dot, a letter, then letters or digits (``x.kt``)."""
    dot = name.rfind(".")
    return dot >= 0 and _EXTENSION.fullmatch(name, dot + 1) is not None


# ------------------------------------------------------------------------------ names


def camelcase_names(text: str) -> list[str]:
    """CamelCase identifiers in a token (SPEC.md §Anchors 3).

    An identifier starting upper-case, holding a lower-case letter and splitting into two or
    more words (an upper-case run is a word); as the whole token or a part of it between
    ``.``, ``::``, ``#`` (``crate::store::LedgerStore``, ``PaymentGateway#charge``) or a
    type argument's ``< > ,`` (``Map<String,LedgerRow>``).
    """
    out = []
    for part in _NAME_SEP.split(text):
        if not part:
            continue
        if not part.isascii():
            name = _unicode_name(part)
            if name is not None:
                out.append(name)
        elif (
            part[0].isupper()
            and _IDENT.fullmatch(part)
            and not part.isupper()
            and sum(len(_HUMP.findall(w)) for w in part.split("_") if w) >= 2
        ):
            out.append(part)
    return out


def _unicode_name(part: str) -> str | None:
    """``part`` (not ASCII) in NFC when it is a CamelCase name by the rule ASCII names
    follow, with "upper-case", "lower-case" and "digit" as Unicode says (``ÜberGateway``,
    ``ÄnderungsLog``, ``ЛедгерRepository``); else None. A titlecase letter (``ǅ``) counts
    as upper-case; letters without case (Han, Arabic) as lower-case, so they never start a
    word."""
    import unicodedata

    part = unicodedata.normalize("NFC", part)
    first = part[0]
    if not ((first.isupper() or first.istitle()) and _UNICODE_IDENT.fullmatch(part)):
        return None
    if part.isupper():
        return None
    shape = "".join(
        "A" if c.isupper() or c.istitle() else "0" if c.isdigit() else "a" for c in part
    )
    words = sum(len(_HUMP.findall(w)) for w in shape.split("_") if w)
    return part if words >= 2 else None


# ------------------------------------------------------------------------------ task ids


def consumed(text: str) -> list[tuple[int, int]]:
    """The 0-based ``[start, end)`` spans of ``text`` that cited paths with their suffixes
    and line forms consume, in order: no task id is read there (SPEC.md §Anchors).

    Syntactic: a backtick span with spaces is split as when no root holds it.
    """
    out = []
    for tok in tokens([Segment(1, 1, text)]):
        if tok.lines is not None or tok.overflow is not None:
            start = tok.col - 1
            if path_like(tok.text) is None and not (tok.link and link_path(tok.text)):
                start = tok.col - 1 + len(tok.whole or tok.text)  # only the line form
            out.append((start, tok.end - 1))
        elif path_like(tok.text) is not None or (tok.link and link_path(tok.text)):
            out.append((tok.col - 1, tok.end - 1))
    return out


def span_regions(text: str) -> list[tuple[int, int]]:
    """The 0-based ``[start, end)`` of the one-token spans of ``text`` that are cited paths
    (a wiki link's or an angle-bracket link's target, a backtick span with spaces), in
    order: no task id is read there. Syntactic: a backtick span counts when its text is a
    cited path, whether or not a root holds it."""
    out = []
    for m in _SPANS.finditer(text):
        if m.group("wiki"):
            start, end = m.span("target")
        elif m.group("angle"):
            start, end = m.span("inner")
        elif _WS.search(m.group("code")):
            start, end = m.span("code")
        else:
            continue
        tok = next(_shape(text[start:end].strip(), 1, 1, False, whole_span=True), None)
        if tok is not None and (path_like(tok.text) or (m.group("angle") and link_path(tok.text))):
            out.append((start, end))
    return out
