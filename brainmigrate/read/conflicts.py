"""Unresolved merge conflicts in a notes file (SPEC.md §Notation, class ``conflict``): which
lines are a committed conflict's marker lines and merge base, and one BM311 warning per
conflict. Pure: the line classes come from the grammar (``notation``).
"""

from __future__ import annotations

from brainmigrate.codes import diagnostic
from brainmigrate.model import Diagnostic

#: The classes of a merge conflict's marker lines (SPEC.md §Notation, ``conflict``).
CONFLICT_CLASSES = frozenset({"conflict_open", "conflict_base", "conflict_sep", "conflict_close"})


class Conflicts:
    """The unresolved merge conflicts open while a file is read (SPEC.md §Notation,
    ``conflict``), and one BM311 warning per conflict, appended to ``diags``.

    ``take(cls, number)`` is given each line whose class is in ``CONFLICT_CLASSES``, and
    every line while ``in_base``; it says whether the line is a conflict line (skipped,
    reason ``conflict``): a ``<<<<<<<`` line always (it opens one; conflicts nest), a
    ``|||||||`` line and the lines after it up to ``=======`` (a diff3 merge base), the
    ``=======`` and ``>>>>>>>`` lines, only while one is open. ``end(last)`` closes the
    ones still open at the end of the file (line ``last``): they run to it.
    """

    __slots__ = ("diags", "file", "in_base", "opened")

    def __init__(self, file: str, diags: list[Diagnostic]) -> None:
        self.file, self.diags = file, diags
        self.opened: list[int] = []  # the line of each open conflict's <<<<<<<
        self.in_base = False

    def take(self, cls: str, number: int) -> bool:
        """Whether line ``number`` (of class ``cls``) is a conflict line."""
        if cls == "conflict_open":
            self.opened.append(number)
            self.in_base = False
            return True
        if not self.opened:
            return False
        if cls == "conflict_close":
            first = self.opened.pop()
            self.in_base = False
            self._warn(first, number, "")
        elif cls == "conflict_sep":
            self.in_base = False
        elif cls == "conflict_base":
            self.in_base = True
        return True  # a line of the merge base, or a marker line

    def end(self, last: int) -> None:
        """Warn of every conflict still open when the file ends at line ``last``."""
        while self.opened:
            self._warn(self.opened.pop(), last, ", never closed")
        self.in_base = False

    def _warn(self, first: int, last: int, more: str) -> None:
        self.diags.append(
            diagnostic(
                self.file,
                first,
                "BM311",
                f"unresolved merge conflict (lines {first}-{last}{more}); resolve it",
            )
        )
