"""How a fact's text cites (SPEC.md §Anchors): the shape of a cited path, the text around
a token, a ``#fragment`` and the headings it may name, and module-path candidates.

Pure: no file system. ``anchors.Resolver`` asks these while it resolves a fact.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from brainmigrate import roottables
from brainmigrate.model import Diagnostic, ParsedFact
from brainmigrate.tokens import Token, path_like

#: Markdown files, whose ``#fragment`` names a heading (SPEC.md §Anchors 1).
MARKDOWN = (".md", ".markdown", ".mdx")

_NOT_PATH = frozenset("*${}<>")
_SCP = re.compile(r"[^/@]+@[^/:]+:")
_ENV_VAR = re.compile(r"(?:^|/)%[A-Za-z_][A-Za-z0-9_]*%(?:/|$)")
#: Two or more lower-case identifiers joined by ``.`` (SPEC.md §Anchors 4).
_MODULE = re.compile(r"[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+")
_MODULE_WORD = re.compile(r"(?:^|[\s(`'\"])(?:-m|import|from)[ \t]+[`'\"]?\Z")
_MODULE_KEY = re.compile(r"MODULE|SETTINGS", re.IGNORECASE)


def cited_shape(text: str) -> tuple[str, str] | None:
    """``(posix, kind)`` when token text ``text`` has the shape of a cited path (SPEC.md
    §Anchors 1): kind ``"file"`` (a last segment with an extension, or a listed file
    name), ``"folder"`` (ending in ``/``) or ``"maybe"`` (any other token with ``/``: a
    citation only when a root knows it). None for URLs, globs, variables and tokens
    without ``/``, and for a text of ``.``, ``..`` and empty segments only (``/``, ``./``,
    ``../``, ``../..`` once its trailing dot is dropped), which names no file or folder, as
    ``cited.cited_path`` holds."""
    text = text.replace("\\", "/")
    if "/" not in text or _NOT_PATH.intersection(text):
        return None
    if all(part in ("", ".", "..") for part in text.split("/")):
        return None
    if text.startswith("www.") or "://" in text or _SCP.match(text):
        return None
    if "%" in text and _ENV_VAR.search(text):
        return None
    if path_like(text) is not None:
        return text, "file"
    return text, "folder" if text.endswith("/") else "maybe"


class FactText:
    """The fact ``Resolver.scan`` reads: its text around a token, the notes file's folder
    (absolute, or None), and ``diags``, where its diagnostics go (or None)."""

    __slots__ = ("diags", "fact", "folder", "_lines")

    def __init__(self, fact: ParsedFact | None, diags, folder: str | None) -> None:
        self.fact = fact
        self.diags = diags
        self.folder = folder
        self._lines = None

    def before(self, tok: Token) -> str:
        """The text of ``tok``'s segment before it (up to 40 characters)."""
        if self.fact is None:
            return ""
        if self._lines is None:
            self._lines = {}
            for seg in self.fact.segments:
                self._lines.setdefault(seg.line, []).append(seg)
        for seg in self._lines.get(tok.line, ()):
            at = tok.col - seg.col
            if 0 <= at <= len(seg.text):
                return seg.text[max(0, at - 40) : at]
        return ""

    def ticked(self, tok: Token) -> bool:
        """Whether ``tok`` was written in backticks."""
        tick = getattr(tok, "tick", None)
        if tick is not None:
            return bool(tick)
        return self.before(tok).endswith("`")

    def warn(self, tok: Token, code: str, message: str) -> None:
        if self.diags is not None and self.fact is not None:
            self.diags.append(
                Diagnostic(self.fact.file, tok.line, code, "warning", message, tok.col)
            )


NO_FACT = FactText(None, None, None)


def fragment_of(tok: Token) -> str:
    """The ``#fragment`` written after ``tok``'s path (percent-decoded), or ''."""
    fragment = getattr(tok, "fragment", None)
    if fragment is None:
        whole = tok.whole or ""
        rest = whole[len(tok.text) :] if whole.startswith(tok.text) else ""
        if not rest.startswith("#"):
            return ""
        fragment = rest[1:].split("?", 1)[0]
    return unquote(fragment) if "%" in fragment else fragment


def names_heading(fragment: str, anchors: frozenset[str]) -> bool:
    """Whether ``fragment`` names one of a Markdown file's ``anchors`` (GitHub also
    answers to the ``user-content-`` prefix; case is not told apart)."""
    if fragment in anchors:
        return True
    low = fragment.lower().removeprefix("user-content-")
    if low in anchors or roottables.slug(low) in anchors:
        return True
    return low in {a.lower() for a in anchors}


def module_candidate(tok: Token, text: FactText) -> tuple[str, bool] | None:
    """``(name, context)`` of the module path ``tok`` may hold (SPEC.md §Anchors 4): the
    whole token in a module context (after ``-m``, ``import`` or ``from``, or the value of
    an option or variable whose name holds ``MODULE`` or ``SETTINGS``), else its leading
    lower-case dotted name; None when it holds none."""
    value = tok.text
    context = False
    if "=" in value:
        key, _, value = value.partition("=")
        if not _MODULE_KEY.search(key):
            return None
        context = True
    else:
        context = bool(_MODULE_WORD.search(text.before(tok)))
    m = _MODULE.match(value)
    if m is None:
        return None
    if context and not (m.end() == len(value) or value[m.end()] == ":"):
        return None
    return m.group(), context
