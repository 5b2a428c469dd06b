"""Line forms and suffixes of a token (SPEC.md §Anchors, "Line forms"): ``:88``,
``:18–74``, ``:88-92,100-104``, ``#L10C5-L20C8``, and the ``#fragment``, ``?query`` or
``::name`` after a file's extension. Pure text; each function linear in its input.
"""

from __future__ import annotations

import re

from brainmigrate.patterns import lazy
from brainmigrate.read.cited import FILE_NAMES

#: The largest line number a line form holds (a store column's and every reader's limit);
#: a larger one is not a line form (SPEC.md §Anchors; warned as BM203).
MAX_LINE_NUMBER = 2**31 - 1

#: The dash of a line range: ``-``, or an en dash, an em dash or a minus sign (SPEC.md
#: §Anchors, "Line forms": ``x.py:18–74``).
DASHES = "-\u2013\u2014\u2212"
_DASH = lazy(f"[{DASHES}]")
LINE_FORM = lazy(
    f":(?P<a>[0-9]+)(?:[{DASHES}](?P<b>[0-9]+))?(?::[0-9]+)?"
    f"(?P<more>(?:,[0-9]+(?:[{DASHES}][0-9]+)?)*)"
    f"|#L(?P<c>[0-9]+)(?:C[0-9]+)?(?:[{DASHES}]L?(?P<d>[0-9]+)(?:C[0-9]+)?)?"
)


def line_form_starts(text: str, floor: int = 0) -> list[int]:
    """Where a line form could begin: the last two ``:`` at or after ``floor`` and the last
    ``#L`` (linear)."""
    starts = []
    colon = text.rfind(":", floor)
    if colon > 0:
        starts.append(colon)
        before = text.rfind(":", floor, colon)
        if before > 0:
            starts.insert(0, before)
    hash_l = text.rfind("#L")
    if hash_l > 0:
        starts.append(hash_l)
    return starts


def lines_of(m: re.Match) -> tuple[int, int] | None:
    """``(first, last)`` of a line form; None when a number passes ``MAX_LINE_NUMBER``."""
    if m.group("c") is not None:
        numbers = [m.group("c"), m.group("d") or m.group("c")]
    else:
        numbers = [m.group("a"), m.group("b") or m.group("a")]
        for part in filter(None, (m.group("more") or "").split(",")):
            numbers.extend(_DASH.split(part))
    if any(len(n) > 10 or int(n) > MAX_LINE_NUMBER for n in numbers):
        return None
    values = [int(n) for n in numbers]
    return min(values), max(values)  # a range written backwards (:92-88) is still 88-92


def suffix_start(text: str) -> int | None:
    """Where a ``#fragment``, ``?query`` or ``::name`` begins after a file's extension (or a
    listed file name), or None. Where SPEC is silent, ``:Name`` too (``src/x.py:Foo.bar``,
    a declaration named after its file; a line form is split off before). One pass; the
    last segment's extension is tracked as it goes, so the cost is linear however many
    ``#`` a token holds."""
    if "#" not in text and "?" not in text and ":" not in text:
        return None
    seg = 0  # where the current segment starts
    ext = -1  # characters of a valid extension so far; -1: none (no dot, or broken)
    for i, c in enumerate(text):
        if (
            c == "#"
            or c == "?"
            or (c == ":" and text[i + 1 : i + 2].isalpha())
            or (c == ":" and text.startswith("::", i))
        ):
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
