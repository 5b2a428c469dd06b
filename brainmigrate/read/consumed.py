"""Where no task id is read in a fact's text: the spans its cited paths, with their
suffixes and line forms, consume, and its one-token spans that are cited paths (SPEC.md
§Anchors). Syntactic: read from the tokens' shapes (``tokens``), no root is asked.
"""

from __future__ import annotations

from brainmigrate.model import Segment
from brainmigrate.patterns import lazy
from brainmigrate.read.cited import cited_link, cited_path
from brainmigrate.read.links import html_targets, may_hold_html, repo_url_parts
from brainmigrate.read.notation import WS_CLASS
from brainmigrate.read.tokens import SPANS, Token, span_token, tokens

_WS = lazy(WS_CLASS)


def consumes(tok: Token) -> bool:
    """Whether ``tok`` is a cited path by its shape alone (so no task id is read in it): a
    ``cited_path`` (or, for a link target, ``cited_link``) of kind ``"file"`` or
    ``"folder"``, or a URL that ``repo_url_parts`` reads as a repository's file. A
    ``"maybe"`` is read for task ids (``feature/TER-12`` names its task)."""
    if tok.url:
        return repo_url_parts(tok.text) is not None
    cited = cited_link(tok.text) if tok.link else cited_path(tok.text)
    return cited is not None and cited[1] != "maybe"


def consumed(text: str) -> list[tuple[int, int]]:
    """The 0-based ``[start, end)`` spans of ``text`` that cited paths with their suffixes
    and line forms consume, in order: no task id is read there (SPEC.md §Anchors).

    Syntactic (``consumes``): a backtick span with spaces is split as when no root holds
    it; of any other token only its line form is consumed (``#L10-20`` is no task).
    """
    out = []
    for tok in tokens([Segment(1, 1, text)]):
        if tok.lines is not None or tok.overflow is not None:
            start = tok.col - 1
            if not consumes(tok):
                start = tok.col - 1 + len(tok.whole or tok.text)  # only the line form
            out.append((start, tok.end - 1))
        elif consumes(tok):
            out.append((tok.col - 1, tok.end - 1))
    return out


def may_span(text: str) -> bool:
    """Cheap pre-test for ``span_regions``: whether ``text`` can hold a one-token span."""
    return "[[" in text or "](<" in text or "`" in text or may_hold_html(text)


def span_regions(text: str) -> list[tuple[int, int]]:
    """The 0-based ``[start, end)`` of the one-token spans of ``text`` that are cited paths
    (a wiki link's or an angle-bracket link's target, a backtick span with spaces, an HTML
    ``href``/``src`` value), in order: no task id is read there. Syntactic
    (``consumes``): a backtick span counts when its text is a cited path, whether or not a
    root holds it."""
    out = []
    for start, end, _, _ in html_targets(text) if may_hold_html(text) else ():
        tok = span_token(text[start:end], True)
        if tok is not None and consumes(tok):
            out.append((start, end))
    for m in SPANS.finditer(text):
        if m.group("wiki"):
            start, end = m.span("target")
        elif m.group("angle"):
            start, end = m.span("inner")
        elif _WS.search(m.group("code")):
            start, end = m.span("code")
        else:
            continue
        link = m.group("angle") is not None
        tok = span_token(text[start:end], link)
        if tok is not None and consumes(tok):
            out.append((start, end))
    out.sort()
    return out
