"""The character classes that split a fact's text into tokens (SPEC.md §Anchors, the
token paragraph), as ``re`` class bodies (put them inside ``[...]``), and the backslash
escapes that are no separator (``unescaped``).
"""

from __future__ import annotations

from brainmigrate.patterns import lazy

#: Unicode category Cf (format characters), as of Python 3.11's Unicode 14.0;
#: tests/test_citations.py checks it against ``unicodedata``.
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
#: The Unicode blocks Arrows, Supplemental Arrows-A and -B: they split tokens as whitespace
#: does (SPEC.md §Anchors: `` `api/a.ts`→`api/b.ts` ``).
ARROWS = "\u2190-\u21ff\u27f0-\u27ff\u2900-\u297f"
#: What a CJK letter splits from: ASCII letters and digits, brackets, quotes, backticks.
MEETS = "A-Za-z0-9()\\[\\]{}<>\"'`\u201c\u201d\u2018\u2019\u00ab\u00bb"


#: A Markdown backslash escape (``\"``, ``\|``, ``\*``): no path separator. A ``\`` before a
#: letter, digit, ``.``, ``_``, ``-`` or a bracket stays one (``D:\dev\app\x.php``,
#: ``app\[slug]\page.tsx``).
_ESCAPE = lazy(r"(?<!\\)\\(?=[\"'`|*<>!#])")
#: A word ending in ``\`` before whitespace or the end: a hard line break, unless the word
#: holds another ``\`` or a ``/`` (a Windows folder path, ``D:\dev\app\``).
_BREAK = lazy(r"(?<!\S)(\S*)\\(?=\s|\Z)")


#: A run of backticks: a code span opens and closes with runs of the same length.
_TICKS = lazy(r"`+")


def unescaped(text: str) -> str:
    r"""``text`` with the ``\`` of each Markdown escape and hard line break read as a space
    (``_ESCAPE``, ``_BREAK``), outside code spans (CommonMark: a backslash in a code span
    is the character itself, `` `a\#b` `` cites ``a\#b``). Same length, so every column
    stays; linear."""
    if "`" not in text:
        return _unescaped(text)
    out, at = [], 0
    for start, end in code_spans(text):
        out.append(_unescaped(text[at:start]))
        out.append(text[start:end])
        at = end
    out.append(_unescaped(text[at:]))
    return "".join(out)


def code_spans(text: str) -> list[tuple[int, int]]:
    r"""The ``(start, end)`` of each code span of ``text``, backticks included: a run of
    backticks up to the next run of the same length (CommonMark 6.1). A backtick after a
    ``\`` outside a span is no opener; a run with no closer is plain text. Linear: each
    run is passed once, the closers of each length kept in order."""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(text)]
    by_length: dict[int, list[int]] = {}
    for i, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(i)
    seen = {n: 0 for n in by_length}
    spans, i = [], 0
    while i < len(runs):
        start, end = runs[i]
        if start and text[start - 1] == "\\" and _escaping(text, start - 1):
            start += 1  # an escaped backtick: the rest of the run may open
            if start == end:
                i += 1
                continue
        n = end - start
        later = by_length.get(n, [])
        k = seen.get(n, 0)
        while k < len(later) and later[k] <= i:
            k += 1
        seen[n] = k
        if k == len(later):
            i += 1
            continue
        close = later[k]
        spans.append((start, runs[close][1]))
        i = close + 1
    return spans


def _escaping(text: str, at: int) -> bool:
    """Whether the ``\\`` at ``at`` escapes what follows (an odd run of them ends there)."""
    n = 0
    while at >= 0 and text[at] == "\\":
        n, at = n + 1, at - 1
    return n % 2 == 1


def _unescaped(text: str) -> str:
    text = _ESCAPE.sub(" ", text)
    if "\\" not in text:
        return text
    return _BREAK.sub(
        lambda m: m.group() if "\\" in m.group(1) or "/" in m.group(1) else m.group(1) + " ",
        text,
    )
