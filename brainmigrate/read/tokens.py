"""The token rules of SPEC.md §Anchors, in one place: what in a fact's text can cite a file.

Pure: no file system (a backtick span with spaces asks a ``holds`` callable). ``anchors``
resolves what these functions find; ``consumed`` reads from them which text a cited path
consumed, so that no task id is read inside a path (``docs/incidents/INC-2231.md``,
``#L10-20``).
Which texts are paths, and of what kind, is ``cited``; link-ish sources (HTML, references,
``file:`` URLs, repository URLs) are ``links``; CamelCase names ``names``; module paths
``modules``. This module re-exports the names its callers import from it.

A segment's text is split into tokens:

* at whitespace, at invisible format characters (Unicode category Cf: zero-width space,
  LRM/RLM, bidi controls, a BOM in mid-text), at CJK and full-width punctuation and at
  arrows (U+2190–21FF, U+27F0–27FF, U+2900–297F), and at ``->``/``=>`` inside a token;
* where a Han, Hiragana, Katakana or Hangul letter meets an ASCII letter or digit, a
  bracket, a quote or a backtick (``见docs/setup.md``);
* at a ``(`` right after a letter, digit, ``_`` or ``>`` (``Poster.post(Poster.kt:5)``,
  ``LedgerWriter.<init>(LedgerWriter.kt:3)``);
* at ``](`` (a Markdown link's target is its own token, marked ``link``).

These spans are one token each, spaces and all: a link target in angle brackets
(``[x](<docs/My File.md>)``), a wiki link's target (``[[docs/flow.md|alias]]``, cut at
``|``; a ``[[`` after a character other than whitespace, ``(`` or ``!`` opens none), an
HTML ``href``/``src`` value (a link target), and a backtick span holding whitespace when
``holds`` says a root holds a file at its whole text. Leading and trailing punctuation, a
possessive ``'s`` and a leading ``mdc:`` are stripped, a ``file:`` URL gives its path, a
line form (``:88``, ``:18–74``, ``#L10C5-L20C8``) is split off, and after a file's
extension a ``#fragment``, ``?query`` or ``::name`` is dropped. Reference-style links give
their definitions' targets when ``tokens`` is given the file's ``references``.

Every function here is linear in its input (tests/test_linear.py).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from reprlib import recursive_repr

from brainmigrate.model import Segment, pickled_as_tuple
from brainmigrate.patterns import lazy
from brainmigrate.read.charclasses import (
    ARROWS,
    CF_CHARS,
    CJK_LETTERS,
    CJK_PUNCT,
    MEETS,
    unescaped,
)
from brainmigrate.read.cited import (
    FILE_NAMES,
    cited_link,
    cited_path,
    glob_edge,
    has_extension,
    link_path,
    path_like,
)
from brainmigrate.read.lineforms import (
    DASHES,
    LINE_FORM,
    MAX_LINE_NUMBER,
    line_form_starts,
    lines_of,
    suffix_start,
)
from brainmigrate.read.links import (
    URL_START,
    file_url_path,
    html_targets,
    may_hold_html,
    names_target,
    reference_links,
)
from brainmigrate.read.names import camelcase_names
from brainmigrate.read.notation import WS_CHARS, WS_CLASS

__all__ = [
    "DASHES",
    "FILE_NAMES",
    "MAX_LINE_NUMBER",
    "Token",
    "camelcase_names",
    "cited_link",
    "cited_path",
    "has_extension",
    "link_path",
    "path_like",
    "span_token",
    "strip_edges",
    "tokens",
]

_CHUNK = lazy(f"[^{WS_CHARS}\n{CF_CHARS}{CJK_PUNCT}{ARROWS}]+")
#: ``->`` and ``=>`` inside a token split it (``a.ts->b.ts``; a longer shaft too: ``-->``).
_ASCII_ARROW = lazy(r"-+>|=+>")
#: Where a chunk splits: before ``(`` after a name, and at the edges between CJK letters
#: and ASCII. Only ``(`` can split ASCII text, so the CJK pattern (6 ms to compile, for
#: its large classes) is compiled when a chunk first holds other text (``_script_split``).
_PAREN_SPLIT = lazy(r"(?<=[\w>])(?=\()")


@functools.cache
def _script_split() -> re.Pattern:
    return re.compile(
        f"(?<=[{CJK_LETTERS}])(?=[{MEETS}])|(?<=[{MEETS}])(?=[{CJK_LETTERS}])"
        r"|(?<=[\w>])(?=\()"
    )


_WS = lazy(WS_CLASS)
#: Spans that are one token with their spaces: a wiki link (target before ``|``; its ``[[``
#: only after whitespace, ``(`` or ``!``, so ``app/[[...slug]]/page.tsx`` stays one path), a
#: link target in angle brackets, a backtick span.
SPANS = lazy(
    r"(?P<wiki>!?(?<![^\s(!])\[\[(?P<target>[^\[\]|\n]+)(?:\|[^\[\]\n]*)?\]\])"
    r"|\]\((?P<angle><(?P<inner>[^<>\n]+)>)"
    r"|(?P<tick>`(?P<code>[^`\n]+)`)"
)
_LEAD = "([\"'<!@*`\u201c\u2018\u00ab"
_TRAIL = ")]>\"'.,;:!?*`\u2026\u201d\u2019\u00bb"
_BAZEL = lazy(r"(?:@[\w.\-]*)?//")
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
    it is a link target (a Markdown link's, an ``mdc:`` target, an HTML ``href``/``src``
    value, a reference-style link's definition), ``end`` is the column after the text the
    token consumed (path, suffix and line form), ``overflow`` a line number too large for a
    line form.

    ``url`` says ``text`` is a URL (``scheme://…``, kept whole but for its line form and a
    suffix after a file's extension: ``repo_url_parts`` reads it); ``tick`` that the token
    is a whole backtick span's content (`` `app-shared` ``, SPEC.md §Anchors 2);
    ``fragment`` the ``#fragment`` a dropped suffix held, without ``#`` (``rollback-steps``
    of ``docs/x.md#rollback-steps``; None when there was none; a line form is no fragment).
    ``at`` says a leading ``@`` was stripped (``@docs/x.md``, ``@/lib/date.ts`` whose
    ``text`` is ``/lib/date.ts``, ``@tallyfin/tokens/src/colors.ts``): the resolver reads
    ``"@" + text`` through aliases and workspace packages (SPEC.md §Anchors 1). An
    ``mdc:`` target is a link target, never ``at``.

    For every token but a reference-style link's, ``text`` is the line's text at ``col``
    as written (``fix`` rewrites it there). A reference's ``text`` is its definition's
    target, ``col`` and ``end`` span the reference (``[text][label]``).
    """

    text: str
    line: int
    col: int
    lines: tuple[int, int] | None = None
    whole: str | None = None
    link: bool = False
    end: int = 0
    overflow: str | None = None
    url: bool = False
    tick: bool = False
    fragment: str | None = None
    at: bool = False

    # --- generated by tools/records.py from the fields above; do not edit ---
    # fmt: off
    def __init__(
        self, text, line, col, lines=None, whole=None, link=False, end=0, overflow=None, url=False,
        tick=False, fragment=None, at=False,
    ) -> None:
        self.text = text
        self.line = line
        self.col = col
        self.lines = lines
        self.whole = whole
        self.link = link
        self.end = end
        self.overflow = overflow
        self.url = url
        self.tick = tick
        self.fragment = fragment
        self.at = at

    @recursive_repr()
    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(text={self.text!r}, line={self.line!r}, "
            f"col={self.col!r}, lines={self.lines!r}, whole={self.whole!r}, link={self.link!r}, "
            f"end={self.end!r}, overflow={self.overflow!r}, url={self.url!r}, tick={self.tick!r}, "
            f"fragment={self.fragment!r}, at={self.at!r})"
        )

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (
                self.text, self.line, self.col, self.lines, self.whole, self.link, self.end,
                self.overflow, self.url, self.tick, self.fragment, self.at,
            ) == (
                other.text, other.line, other.col, other.lines, other.whole, other.link, other.end,
                other.overflow, other.url, other.tick, other.fragment, other.at,
            )
        return NotImplemented
    # fmt: on
    # --- end generated ---


#: An HTML or XML closing tag at a token's start, or an HTML void element (``<br/>``);
#: ``<apps/>`` is a folder in angle brackets.
_TAG = lazy(
    r"</[A-Za-z]|<(?:br|hr|img|input|meta|link|wbr|area|base|col|embed|source|track)/>",
    re.IGNORECASE,
)


#: A ``,``, ``;`` or ``|`` glued to what follows, but a digit (``:12-20,41-55``): a list of
#: names, split like whitespace (``src/keep.py,src/lib/date.ts``, a table's ``a.py|b.py``).
_JOINED = lazy(r"[,;|](?=[^\d\s,;|])")


def tokens(
    segments: Iterable[Segment],
    holds: Callable[[str], bool] | None = None,
    references: Mapping[str, str] | None = None,
) -> Iterator[Token]:
    """Split a fact's segments into tokens (SPEC.md §Anchors), in order of position.

    ``holds(text)`` says whether a root holds a file at a cited path; a backtick span that
    holds whitespace is one token only when its text is a ``cited_path`` (of any kind) and
    ``holds`` says so (without ``holds``, never).
    ``references`` maps the notes file's link labels (normalized by ``notation.link_label``)
    to their definitions' targets: each reference-style link that cites one is a link
    token whose text is the target (line form and suffix split off as for any link target)
    at the reference's line and column (``links.reference_links``).
    """
    for seg in segments:
        text = seg.text
        if "\\" in text:
            text = unescaped(text)
        refs = reference_links(text, references) if references else ()
        if not (refs or _interesting(text) or "`" in text or "](" in text or may_hold_html(text)):
            continue
        spans: list[Token] = []
        if "[[" in text or "](<" in text or "`" in text or may_hold_html(text):
            text = _special_spans(text, seg, holds, spans)
        for start, end, target in refs:
            tok = _shape(target.strip(), seg.line, seg.col + start, True, whole_span=True)
            if tok is not None:
                tok.col, tok.end = seg.col + start, seg.col + end
                spans.append(tok)
        out: list[Token] = []
        _plain(text, seg.line, seg.col, out)
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
    """Take the one-token spans out of ``text`` (blanked, so columns stay) into ``out``:
    HTML ``href``/``src`` values first, then wiki links, angle-bracket link targets and
    backtick spans with whitespace that ``holds`` says a root holds."""
    if may_hold_html(seg.text):
        chars = None
        # raw HTML takes no Markdown escapes (CommonMark): its values are read as written
        for start, end, b0, b1 in html_targets(seg.text):
            _span_token(seg.text, start, end, seg, True, False, out)
            if chars is None:
                chars = list(text)
            chars[b0:b1] = " " * (b1 - b0)
        if chars is not None:
            text = "".join(chars)
    if not ("[[" in text or "](<" in text or "`" in text):
        return text
    chars = None
    for m in SPANS.finditer(text):
        tick = False
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
            tok = _shape(text[start:end], seg.line, seg.col + start, False)
            if tok is None or cited_path(tok.text) is None or not holds(tok.text):
                continue
            blank = ((m.start(), m.end()),)
            link, tick = False, True
        _span_token(text, start, end, seg, link, tick, out)
        if chars is None:
            chars = list(text)
        for a, b in ((start, end), *blank):
            chars[a:b] = " " * (b - a)
    return "".join(chars) if chars is not None else text


def _span_token(text, start, end, seg, link, tick, out: list[Token]) -> None:
    """The token of the one-token span ``text[start:end]``, trimmed of whitespace."""
    inner = text[start:end]
    trimmed = inner.strip()
    lead = len(inner) - len(inner.lstrip())
    tok = _shape(trimmed, seg.line, seg.col + start + lead, link, whole_span=True, tick=tick)
    if tok is not None:
        out.append(tok)


#: In ASCII text (whose only separators are these six of ``_CHUNK``'s), the chunks that
#: may pass ``_plain``'s test: those holding a character it looks for (``/ . \\ ` ]`` or
#: an upper-case letter). One scan of the whole text finds them, so a chunk of plain words
#: costs no Python call; linear: a match starts only at a chunk's first character (the
#: look-behind) and reads that chunk once.
_CANDIDATE = re.compile(
    r"(?<![^\t\n\x0b\x0c\r ])[^\t\n\x0b\x0c\r /.\\`\]A-Z]*+[/.\\`\]A-Z][^\t\n\x0b\x0c\r ]*+"
)


def _plain(text: str, line: int, col: int, out: list[Token]) -> None:
    """Append the tokens of ``text`` (its one-token spans blanked) to ``out``, in order.
    (Functions that append, not generators: a token costs fewer calls.)"""
    chunks = _CANDIDATE if text.isascii() else _CHUNK
    for m in chunks.finditer(text):
        raw = m.group()
        if not (_interesting(raw) or "`" in raw or "](" in raw):
            continue  # (a backtick span or a link target may name a folder: `editors`)
        at = col + m.start()
        if ">" in raw and ("->" in raw or "=>" in raw):
            start = 0
            for arrow in _ASCII_ARROW.finditer(raw):
                _chunk(raw[start : arrow.start()], line, at + start, out)
                start = arrow.end()
            raw, at = raw[start:], at + start
        if ("," in raw or ";" in raw or "|" in raw) and "](" not in raw:
            start = 0  # names joined by , ; | (src/a.py,src/b.py): one token each
            for join in _JOINED.finditer(raw):
                _chunk(raw[start : join.start()], line, at + start, out)
                start = join.end()
            raw, at = raw[start:], at + start
        _chunk(raw, line, at, out)


def _chunk(raw: str, line: int, col: int, out: list[Token]) -> None:
    """The tokens of a chunk between separators: a Markdown link's target is cut out
    first (its parentheses are its own), the rest splits at script edges and ``(``."""
    link = raw.find("](")
    while link >= 0:
        if (link and raw[link - 1] == "\\") or raw.count("`", 0, link) % 2:
            # \[x\](y) is no link, and `[x](y)` is code: read as plain text
            _pieces(raw, line, col, out)
            return
        target = _link_target(raw[link + 2 :])
        label = raw.rfind("[", 0, link)
        if label >= 0 and names_target(raw[label + 1 : link], target):
            _pieces(raw[:label], line, col, out)  # the label shows the target
        else:
            _pieces(raw[: link + 1], line, col, out)
        tok = _shape(target, line, col + link + 2, True)
        if tok is not None:
            out.append(tok)
        rest = link + 2 + len(target)
        raw, col = raw[rest:], col + rest
        link = raw.find("](")
    _pieces(raw, line, col, out)


def _pieces(raw: str, line: int, col: int, out: list[Token]) -> None:
    if raw.isascii():
        if "(" not in raw:
            tok = _shape(raw, line, col, False)
            if tok is not None:
                out.append(tok)
            return
        split = _PAREN_SPLIT
    else:
        split = _script_split()
    cuts = [0, *(s.start() for s in split.finditer(raw)), len(raw)]
    for a, b in zip(cuts, cuts[1:], strict=False):
        tok = _shape(raw[a:b], line, col + a, False)
        if tok is not None:
            out.append(tok)


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


def _shape(
    raw: str, line: int, col: int, link: bool, whole_span: bool = False, tick: bool = False
) -> Token | None:
    """Strip a raw token's edges, split off its line form and suffix; the token if any is
    left, else None.

    A leading ``mdc:`` is dropped like a leading ``@`` and makes the token a link target;
    a ``file:`` URL is the absolute path it names (``links.file_url_path``); a token
    starting ``scheme://`` is a URL (``url``), whose ``:`` line forms are looked for only
    after its host (``https://host:8080`` holds no line 8080)."""
    if "//" in raw and ":" in raw and _BAZEL.match(raw.lstrip(_LEAD.replace("@", ""))):
        return None  # a Bazel label (//pkg:target, @repo//pkg:target): no path, no name
    if raw[:1] == "<" and not whole_span and _TAG.match(raw):
        return None  # an HTML or XML tag (</code-snippet>, <br/>): no path
    at = False
    if whole_span:
        stripped = raw
    else:
        stripped = raw.lstrip(_LEAD)
        lead = len(raw) - len(stripped)
        if lead:
            col += lead
            tick = raw[lead - 1] == "`"
            at = "@" in raw[:lead]
    if "mdc:" in stripped and stripped.startswith("mdc:"):
        stripped, col, link, at = stripped[4:], col + 4, True, False
    text = stripped if whole_span else _strip_tail(stripped)
    if not text:
        return None
    if "*" in raw and not whole_span and glob_edge(raw):
        return None  # a glob's edge (**/skills/**, src/*): the '*' was no emphasis
    if tick and not whole_span:
        tick = len(text) < len(stripped) and stripped[len(text)] == "`"
    end = col + len(text)
    url = False
    floor = 0
    if ":" in text:
        path = file_url_path(text) if text[0] in "fF" and text[:5].lower() == "file:" else None
        if path is not None:
            text, col = text[path:], col + path
        elif "://" in text:
            scheme = URL_START.match(text)
            if scheme is not None:
                url = True
                slash = text.find("/", scheme.end())
                floor = slash if slash >= 0 else len(text)
    lines = overflow = None
    for start in line_form_starts(text, floor):
        m = LINE_FORM.fullmatch(text, start)
        if m:
            lines = lines_of(m)
            if lines is None:
                overflow = text[start:]
            text = _strip_tail(text[:start])
            break
    whole = fragment = None
    cut = suffix_start(text) if "#" in text or "?" in text or ":" in text else None
    if cut is not None:
        whole, text = text, text[:cut]
        sharp = whole.find("#", cut)
        if sharp >= 0 and sharp + 1 < len(whole):
            fragment = whole[sharp + 1 :]
    if not text:
        return None
    return Token(text, line, col, lines, whole, link, end, overflow, url, tick, fragment, at)


def strip_edges(raw: str) -> tuple[int, str]:
    """``(lead, text)``: ``raw`` without the leading and trailing characters that are no
    part of a token (SPEC.md §Anchors: ``( [ " ' < ! @ *``, backticks, curly quotes
    before; ``) ] > " ' . , ; : ! ? *``, backticks, ``…``, curly quotes, ``()`` and a
    possessive ``'s`` after), ``lead`` the number of leading characters stripped."""
    stripped = raw.lstrip(_LEAD)
    return len(raw) - len(stripped), _strip_tail(stripped)


def _strip_tail(text: str) -> str:
    """Strip trailing punctuation, ``()`` and a possessive ``'s``/``’s`` in any order;
    linear in the token's length."""
    end = len(text)
    while end:
        if end >= 2 and text[end - 2] == "(" and text[end - 1] == ")":
            end -= 2
        elif text[end - 1] in _TRAIL:
            end -= 1
        elif end >= 3 and text[end - 1] == "s" and text[end - 2] in "'\u2019":
            end -= 2
        else:
            break
    return text[:end]


def span_token(text: str, link: bool) -> Token | None:
    """The one token a span's text is, spaces and all (the target of a wiki link, of an
    angle-bracket link when ``link``, of an HTML value; a backtick span), or None."""
    return _shape(text.strip(), 1, 1, link, whole_span=True)
