"""Cited lines of a file that moved: where they stand in the file at its new place, so
``check --fix`` rewrites ``src/utils.py:37`` to the lines that text is at now, not to line 37
of the new file (docs/check.md "Fixing moved paths").

A line form right after a cited path (``:37``, ``:37-40``, with the dashes SPEC.md §Anchors
allows) is read; the text of those lines as git last held the old path (in ``HEAD``, else
just before the commit that removed it) is looked for in the file at its new place, line
by line with whitespace runs folded; the window nearest the old lines wins. GitHub's and
GitLab's fragments (``#L37``, ``#L37-L40``, ``#L37-40``) are rewritten the same way, in
their own style. Other line forms (columns ``#L12C3``, several ranges) and text found
nowhere are left as written.
"""

from __future__ import annotations

import os
import re

from brainmigrate import inputs
from brainmigrate.checkouts import LINES_READ_MAX
from brainmigrate.git import last_held, run_git
from brainmigrate.roots import Root

#: A single line or one range right after a path; not one of several (``:1-2,5``) and not
#: a column (``:37:5``).
_LINE_FORM = re.compile(
    r":(\d{1,9})(?:([-\u2013\u2014\u2212])(\d{1,9}))?(?![\d,:\-\u2013\u2014\u2212])"
)


#: A fragment of one line or one range: ``#L37``, ``#L37-L40`` (GitHub), ``#L37-40``
#: (GitLab); not one with columns (``#L12C3``).
_FRAGMENT = re.compile(r"#L(\d{1,9})(?:-(L?)(\d{1,9}))?(?![\dC\-])")


def line_form(after: str) -> tuple[int, int, int, str, str | None] | None:
    """``(length, first, last, lead, dash)`` of the line form at the start of ``after``
    (the text right after a cited path): ``lead`` what comes before the first line
    (``:`` or ``#L``), ``dash`` what comes between the two (``-``, ``–``, ``-L``), None for
    a single line; None when there is none this module rewrites."""
    m = _LINE_FORM.match(after)
    if m is not None:
        lead, dash = ":", m.group(2)
    else:
        m = _FRAGMENT.match(after)
        if m is None:
            return None
        lead, dash = "#L", None if m.group(3) is None else "-" + m.group(2)
    first = int(m.group(1))
    last = int(m.group(3)) if m.group(3) else first
    if first < 1 or last < first:
        return None
    return m.end(), first, last, lead, dash


def held_last(root: Root, old: str) -> bytes | None:
    """The bytes git last held at ``old`` (relative to ``root``; ``git.last_held``), as a
    checkout writes them; None outside git or when git never held it."""
    rev = last_held(root.path, old)
    return run_git(root.path, "cat-file", "--filters", f"{rev}:./{old}") if rev else None


def relocated(before: bytes, after: bytes, first: int, last: int) -> tuple[int, int] | None:
    """Where lines ``first``..``last`` (1-based) of ``before`` stand in ``after``: the
    window of as many lines that reads the same (whitespace runs folded), the one starting
    nearest ``first`` (the earlier of two as near); None when those lines hold no text
    (blank, or past the end) or no window reads so."""
    old = _lines(before)
    wanted = old[first - 1 : last]
    if len(wanted) != last - first + 1 or not any(wanted):
        return None
    new = _lines(after)
    n = len(wanted)
    starts = [
        s for s in range(len(new) - n + 1) if new[s] == wanted[0] and new[s : s + n] == wanted
    ]
    if not starts:
        return None
    s = min(starts, key=lambda s: (abs(s + 1 - first), s))
    return s + 1, s + n


def shifted(
    after_path: str, root: Root, old: str, new: str, read: dict | None = None
) -> tuple[int, str] | None:
    """``(length, rewritten)`` for the line form at the start of ``after_path`` (what
    follows a citation of ``old`` that ``--fix`` rewrites to ``new``) when the cited text
    stands at other lines of ``new`` now; None to leave it as written. ``read``: the
    files read so far (old and new bytes by root and path), kept by the caller for the
    citations of one run, so each file is read once."""
    form = line_form(after_path)
    if form is None:
        return None
    length, first, last, lead, dash = form
    read = {} if read is None else read
    key = ("held", root.path, old)
    if key not in read:
        read[key] = held_last(root, old)
    before = read[key]
    key = ("now", root.real, new)
    if key not in read:
        try:
            read[key] = inputs.read_bounded(
                os.path.join(root.real, new), LINES_READ_MAX, "a file whose lines are cited"
            )
        except OSError:  # (a file over the bound keeps its line numbers as written)
            read[key] = None
    now = read[key]
    if before is None or now is None:
        return None
    found = relocated(before, now, first, last)
    if found is None or found == (first, last):
        return None
    a, b = found
    return length, f"{lead}{a}" if dash is None else f"{lead}{a}{dash}{b}"


def _lines(data: bytes) -> list[bytes]:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return [b" ".join(line.split()) for line in data.replace(b"\r\n", b"\n").split(b"\n")]
