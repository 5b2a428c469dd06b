"""Values the resolver and the notes reader make (folder anchors, ignored citations, the
BM204/BM205/BM311 diagnostics: SPEC.md §Anchors, §Notation), planted into a real run so
that the stages downstream of them (check, reports, store, staleness, exports, fix) are
tested on exactly those values, whatever the resolver makes of the same text.
"""

from __future__ import annotations

from collections.abc import Callable

from brainmigrate import anchors
from brainmigrate.model import Anchor, Citation, Diagnostic

#: ``make(root, file, line, col)`` gives the value a token of a fact stands for.
Maker = Callable[[str, str, int, int], Anchor | Citation | Diagnostic]
#: The resolver's own ``scan``: planting again replaces what was planted before.
_SCAN = anchors.Resolver.scan


def plant(monkeypatch, made: dict[str, Maker]) -> None:
    """Make ``Resolver.scan`` give, for each text of ``made`` written in a fact, the value
    ``made[text]`` makes at its line and column (the first root's recorded name as ``root``): an
    anchor is added, a citation replaces what the resolver said at that place, a
    diagnostic goes to the run's diagnostics."""
    real = _SCAN

    def scan(self, fact, diags=None, folder=None, **kw):
        res = anchors.copy_resolved(real(self, fact, diags, folder))
        for seg in fact.segments:
            for text, make in made.items():
                at = seg.text.find(text)
                if at < 0:
                    continue
                value = make(self.roots[0].name, fact.file, seg.line, seg.col + at)
                if isinstance(value, Anchor):
                    res.anchors.append(value)
                elif isinstance(value, Citation):
                    res.citations = [
                        c for c in res.citations if (c.line, c.col) != (value.line, value.col)
                    ]
                    res.citations.append(value)
                elif diags is not None:
                    diags.append(value)
        return res

    monkeypatch.setattr(anchors.Resolver, "scan", scan)


def ignored(path: str) -> Maker:
    """A git-ignored citation of ``path``."""
    return lambda root, file, line, col: Citation("ignored", path, line, col)


def folder(path: str, how: str = "cited") -> Maker:
    """A folder anchor on ``path`` (root-relative, no trailing ``/``)."""
    return lambda root, file, line, col: Anchor("folder", root, path, None, None, how)


def module(path: str) -> Maker:
    """A file anchor found as a Python module path."""
    return lambda root, file, line, col: Anchor("file", root, path, None, None, "module")


def gone(path: str) -> Maker:
    """A gone citation of ``path``."""
    return lambda root, file, line, col: Citation("gone", path, line, col)


def diagnostic(code: str, severity: str, message: str, line: int | None = None) -> Maker:
    """A diagnostic at the token (or at ``line``, without a column)."""

    def make(root, file, at_line, col):
        if line is not None:
            return Diagnostic(file, line, code, severity, message)
        return Diagnostic(file, at_line, code, severity, message, col)

    return make
