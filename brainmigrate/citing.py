"""How a fact's text cites (SPEC.md §Anchors): the text around a token, a ``#fragment``
and the headings it may name (the shape of a cited path is ``tokens.cited_path``'s, a
module path's candidates ``modules.module_candidates``').

Pure: no file system. ``anchors.Resolver`` asks these while it resolves a fact.
"""

from __future__ import annotations

from urllib.parse import unquote

from brainmigrate.codes import diagnostic
from brainmigrate.model import ParsedFact
from brainmigrate.read.tokens import Token

#: Markdown files, whose ``#fragment`` names a heading (SPEC.md §Anchors 1).
MARKDOWN = (".md", ".markdown", ".mdx")


class FactText:
    """The fact ``Resolver.scan`` reads: the notes file's folder (absolute, or None), and
    ``diags``, where its diagnostics go (or None)."""

    __slots__ = ("diags", "fact", "folder")

    def __init__(self, fact: ParsedFact | None, diags, folder: str | None) -> None:
        self.fact = fact
        self.diags = diags
        self.folder = folder

    def warn(self, tok: Token, code: str, message: str) -> None:
        """Add warning ``code`` at ``tok`` to the diagnostics (when a fact collects any)."""
        if self.diags is not None and self.fact is not None:
            self.diags.append(diagnostic(self.fact.file, tok.line, code, message, tok.col))


NO_FACT = FactText(None, None, None)


def fragment_of(tok: Token) -> str:
    """The ``#fragment`` written after ``tok``'s path (percent-decoded), or ''."""
    fragment = tok.fragment or ""
    return unquote(fragment) if "%" in fragment else fragment


def names_heading(fragment: str, anchors: frozenset[str]) -> bool:
    """Whether ``fragment`` names one of a Markdown file's ``anchors`` (GitHub also
    answers to the ``user-content-`` prefix; case is not told apart)."""
    if fragment in anchors:
        return True
    from brainmigrate import roottables  # (a run that checks no fragment does not load it)

    low = fragment.lower().removeprefix("user-content-")
    if low in anchors or roottables.slug(low) in anchors:
        return True
    return low in {a.lower() for a in anchors}
