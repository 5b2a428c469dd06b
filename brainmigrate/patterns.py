"""Regular expressions compiled at their first use (``lazy``): a module's patterns cost its
import nothing, and a run compiles only the ones it uses. Compiling every module-level
pattern of the package on each start-up was 4 ms of a 1-line ``check`` (issue 27).

At its first use a stand-in puts the compiled pattern in its place among the globals of
the module that made it, so the module's own code then calls the pattern itself, at no
cost beyond today's; a reference kept elsewhere (another module's import of the name, a
local) goes on through the stand-in, whose attributes are by then the pattern's own.
"""

from __future__ import annotations

import re
import sys

#: What a compiled pattern offers, taken from it at the first use.
_ATTRIBUTES = (
    "match",
    "search",
    "fullmatch",
    "finditer",
    "findall",
    "sub",
    "subn",
    "split",
    "scanner",
    "pattern",
    "flags",
    "groups",
    "groupindex",
)


class Lazy:
    """``re.compile(source, flags)``, compiled when one of its attributes is first asked
    for (see the module's docstring)."""

    __slots__ = ("_source", "_flags", "_home", *_ATTRIBUTES)

    def __init__(self, source: str | bytes, flags: int, home: dict | None) -> None:
        self._source = source
        self._flags = flags
        self._home = home

    def __getattr__(self, name: str):
        # only reached while the slots are empty: compile, fill them, take its place
        compiled = re.compile(self._source, self._flags)
        for attribute in _ATTRIBUTES:
            setattr(self, attribute, getattr(compiled, attribute))
        home, self._home = self._home, None
        if home is not None:
            for key in [key for key, value in home.items() if value is self]:
                home[key] = compiled
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy({self._source!r}, {self._flags!r})"


def lazy(source: str | bytes, flags: int = 0) -> Lazy:
    """``re.compile(source, flags)`` at its first use, for a module-level name (see the
    module's docstring)."""
    return Lazy(source, flags, sys._getframe(1).f_globals)
