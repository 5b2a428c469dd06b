"""Why each line of a store file that holds no fact is skipped, named as the notes
readers name theirs (``model.SKIP_REASONS``; SPEC.md §Report, ``skipped_by_reason``):
the front matter, headings and fenced code are structure; any other line is ``prose``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence

_HEADING = re.compile(r"\s{0,3}#{1,6}(\s|$)")
_FENCE = re.compile(r"\s{0,3}(```|~~~)")


def reasons(lines: Sequence[str], counted: Collection[int]) -> Counter:
    """``{reason: lines}`` for each line of ``lines`` (1-based, as ``detect.text_lines``
    splits them) that is neither blank nor in ``counted`` (the fact lines and their
    continuations): ``front-matter`` (a first line ``---`` through the next ``---`` or
    ``...``), ``code`` (a fence and what it holds), ``heading``, else ``prose``. The
    counts sum to the file's ``skipped``."""
    end = _front_matter_end(lines)
    out: Counter = Counter()
    fenced = False
    for number, line in enumerate(lines, 1):
        fence = number > end and _FENCE.match(line) is not None
        code = fenced or fence
        fenced ^= fence
        if number in counted or not line.strip():
            continue
        if number <= end:
            out["front-matter"] += 1
        elif code:
            out["code"] += 1
        elif _HEADING.match(line):
            out["heading"] += 1
        else:
            out["prose"] += 1
    return out


def _front_matter_end(lines: Sequence[str]) -> int:
    """The line number closing the front matter (0: there is none)."""
    if not lines or lines[0].strip() != "---":
        return 0
    for number, line in enumerate(lines[1:], 2):
        if line.strip() in ("---", "..."):
            return number
    return 0
