"""A notes file's link reference definitions (SPEC.md §Notation ``link-definition``,
§Anchors "Reference-style links"): ``[label]: target`` lines, which the file's
reference-style links (``[text][label]``, ``[label][]``, ``[label]``) cite.

A definition may come after its use, so a fact is resolved with the whole file's
definitions. They are read by a first pass over the file, made only when its bytes hold
``]:`` (every definition does; a UTF-16 or UTF-32 file is always read): most notes files
hold none and are read once, as before. The first pass reads lines as the second does
(the same ``scan``, so a ``[x]: y`` line inside a code fence or a comment is no
definition) and keeps only the definitions: memory does not grow with the file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType

from brainmigrate import inputs
from brainmigrate.patterns import lazy
from brainmigrate.read.lines import WIDE_BOMS, Line
from brainmigrate.read.notation import Classified, link_label

#: The parts of a line the grammar's ``LINK_DEF`` terminal matched: its label and its
#: target (``angle`` without the ``<>``, else ``bare``); a title after them is left out.
_LINK_PARTS = lazy(
    r"[ ]{0,3}\[(?P<label>(?:[^\[\]\\]|\\.)+)\]:[ \t]*"
    r"(?:<(?P<angle>[^<>]*)>|(?P<bare>[^\t <][^\t ]*))"
)


def link_definition(text: str) -> tuple[str, str] | None:
    """``(link_label(label), target)`` of a link reference definition line (class
    ``link_definition``, SPEC.md §Notation): the target as written, angle brackets
    removed, the title dropped (``[ADR-4]: <docs/a b.md> "t"`` gives ``("adr-4",
    "docs/a b.md")``). None when ``text`` does not start like one."""
    m = _LINK_PARTS.match(text)
    if m is None:
        return None
    target = m.group("angle")
    return link_label(m.group("label")), m.group("bare") if target is None else target


#: The definitions of a file that holds none.
NONE: Mapping[str, str] = MappingProxyType({})
#: Bytes read at a time when looking for ``]:``.
CHUNK = 1 << 20


def may_define(path: str | os.PathLike) -> bool:
    """Whether the notes file at ``path`` may hold a link reference definition: its bytes
    hold ``]:``, or it starts with a UTF-16 or UTF-32 byte order mark (whose ``]:`` is
    other bytes). A file that cannot be read may (the scan that follows says why).
    Reads the file in chunks of ``CHUNK`` bytes, stopping at the first ``]:``."""
    try:
        with inputs.opened(path) as handle:
            head = handle.read(4)
            if any(head.startswith(bom) for bom, _, _ in WIDE_BOMS):
                return True
            tail = head
            while True:
                if b"]:" in tail:
                    return True
                chunk = handle.read(CHUNK)
                if not chunk:
                    return False
                tail = tail[-1:] + chunk
    except OSError:
        return True


def definitions(lines: Iterator[Line]) -> dict[str, str]:
    """``{link_label(label): target}`` of the ``link-definition`` lines among ``lines``
    (as ``lines.scan`` or ``markdown_notes.scan`` yields them); the first definition
    of a label wins (SPEC.md §Anchors, Reference-style links)."""
    out: dict[str, str] = {}
    for ln in lines:
        if ln.reason == "link-definition":
            found = link_definition(ln.text)
            if found is not None and found[0] not in out:
                out[found[0]] = found[1]
    return out


def of_file(
    path: str | os.PathLike,
    file: str,
    scan: Callable[..., Iterator[Line]],
    classify: Callable[[str], Classified] | None = None,
) -> Mapping[str, str]:
    """The link reference definitions of the notes file at ``path`` (``definitions``),
    read with ``scan(path, file, diags, classify)`` (``lines.scan`` or
    ``markdown_notes.scan``); ``NONE`` when ``may_define`` says it holds none.

    The first pass's diagnostics are dropped: the pass that reads the facts reports them.
    Raises what ``scan`` raises (``lines.NotesReadError``).
    """
    if not may_define(path):
        return NONE
    return definitions(scan(path, file, [], classify)) or NONE
