"""Module path candidates in a fact's text (SPEC.md §Anchors 4): pure text, by shape only.

The resolver decides which candidates are modules a root holds (``a.b.c`` is ``a/b/c.py``
or ``a/b/c/__init__.py``) and which are gone; this module only finds them and says whether
each stands in a **module context**. Linear in its input (tests/test_linear.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from brainmigrate.model import Segment
from brainmigrate.patterns import lazy
from brainmigrate.read.charclasses import ARROWS, CF_CHARS, CJK_PUNCT
from brainmigrate.read.lineforms import DASHES
from brainmigrate.read.notation import WS_CHARS
from brainmigrate.read.tokens import strip_edges

#: A lower-case identifier: a module path's part (SPEC.md §Anchors 4).
_LOWER_IDENT = lazy(r"[a-z_][a-z0-9_]*")
_IDENT = lazy(r"[A-Za-z_][A-Za-z0-9_]*")
#: Words split as tokens are (tokens.py): whitespace, format characters, CJK and
#: full-width punctuation, arrows.
_WORD = lazy(f"[^{WS_CHARS}\n{CF_CHARS}{CJK_PUNCT}{ARROWS}]+")
#: Words after which the next word names a module: ``python -m a.b``, ``import a.b``,
#: ``from a.b import c``.
CONTEXT_WORDS = frozenset({"-m", "import", "from"})
#: An option or variable whose name holds one of these (without case) gives its value a
#: module context (``DJANGO_SETTINGS_MODULE=config.settings.test``, ``--settings=x.y``).
CONTEXT_NAMES = ("MODULE", "SETTINGS")
_LINE_FORM = lazy(f"[0-9]+(?:[{DASHES}][0-9]+)?")


class ModuleCandidate(NamedTuple):
    """A module path by shape (``module_candidates``).

    ``name`` is two or more lower-case identifiers joined by ``.`` (``parsers.jobs.reindex``);
    ``entry`` the ``:name`` entry point after it (``main`` of ``billing.jobs:main``) or
    None; ``line``/``col`` 1-based, of the name's first character in the physical line;
    ``context`` whether it stands in a module context (SPEC.md §Anchors 4); ``attrs`` the
    dotted parts after ``name`` that are no lower-case identifiers (``Invoice.total`` of
    ``billing.models.Invoice.total``), or None.
    """

    name: str
    entry: str | None
    line: int
    col: int
    context: bool
    attrs: str | None = None


def module_candidates(segments: Iterable[Segment]) -> Iterator[ModuleCandidate]:
    """The module path candidates of a fact's segments, in order (SPEC.md §Anchors 4).

    A word (text between whitespace, format characters, CJK punctuation and arrows), its
    leading ``( [ " ' < ! @ *`` and backticks and trailing ``) ] > " ' . , ; : ! ? *``,
    backticks and ``()`` stripped, is a candidate when it is a chain of identifiers joined
    by ``.`` whose first two or more parts are lower-case identifiers, optionally followed
    by ``:name`` (an entry point) or a ``:N`` line form (dropped). A word holding ``=`` is
    read after its first ``=`` (its value).

    ``context`` is True after the word ``-m``, ``import`` or ``from``, for the value of an
    option or variable whose name holds ``MODULE`` or ``SETTINGS`` without case, written
    ``NAME=value`` or ``--name value``. Candidates are given by shape only: ``e.g.`` and
    ``i.e.`` are the candidates ``e.g`` and ``i.e``, a file name such as ``setup.py`` is the
    candidate ``setup.py``, ``app.state.db`` is one; version numbers (``1.2.3``,
    ``v1.2``), words holding ``/`` or ``\\`` and words starting upper-case are not.
    """
    for seg in segments:
        if "." not in seg.text:
            continue
        before = ""
        for m in _WORD.finditer(seg.text):
            raw = m.group()
            if "." in raw:  # (a word without one is no candidate: only its context counts)
                found = _candidate(raw, before, seg.line, seg.col + m.start())
                if found is not None:
                    yield found
            before = raw.strip("`")


def _candidate(raw: str, before: str, line: int, col: int) -> ModuleCandidate | None:
    context = before in CONTEXT_WORDS or (
        before.startswith("-") and "=" not in before and _names_context(before)
    )
    lead, text = strip_edges(raw)
    col += lead
    if "=" in text:
        name, _, value = text.partition("=")
        context = _names_context(name)
        lead, text = strip_edges(value)
        col += len(name) + 1 + lead
    if "." not in text or "/" in text or "\\" in text:
        return None
    head, colon, entry = text.partition(":")
    if colon and not _IDENT.fullmatch(entry):
        if not _LINE_FORM.fullmatch(entry):
            return None
        entry = ""
    parts = head.split(".")
    run = 0
    while run < len(parts) and _LOWER_IDENT.fullmatch(parts[run]):
        run += 1
    if run < 2 or not all(_IDENT.fullmatch(p) for p in parts[run:]):
        return None
    attrs = ".".join(parts[run:]) or None
    name = ".".join(parts[:run])
    return ModuleCandidate(name, entry or None, line, col, context, attrs)


def _names_context(name: str) -> bool:
    upper = name.upper()
    return any(word in upper for word in CONTEXT_NAMES)
