"""A notes line's bytes as ``check`` reads them, and rewrites made on them: what
``check --fix`` plans its edits with (docs/check.md, "Fixing moved paths").

Each function is linear in the line's length, however many citations the line holds: a
line is decoded once (with each code point's byte offset), read into tokens once for its
citations and once more for its rewrites together, and its edits are written in one pass
(tests/test_linear.py).
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from brainmigrate.folder_moves import folder_cited
from brainmigrate.model import Segment
from brainmigrate.read.lines import BOM
from brainmigrate.read.tokens import Token, link_path, path_like, tokens
from brainmigrate.roots import normalize


def split_lines(data: bytes) -> list[bytes]:
    """Lines with their ends, split at ``\\n`` only (as the notes reader does)."""
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def content(raw: bytes, number: int) -> tuple[bytes, int]:
    """A line's text bytes (without its end, and on line 1 without a BOM) and where they
    start in ``raw``."""
    end = len(raw)
    if raw.endswith(b"\r\n"):
        end -= 2
    elif raw.endswith(b"\n"):
        end -= 1
    lead = 3 if number == 1 and raw.startswith(BOM) else 0
    return raw[lead:end], lead


def decode(data: bytes) -> tuple[str, list[int]]:
    """The line as ``check`` reads it (each invalid sequence one U+FFFD, NUL one U+FFFD)
    and, for each code point and one past the end, its byte offset in ``data``. One pass:
    each valid stretch is decoded once, and an invalid sequence ends where the decoder's
    error says."""
    text: list[str] = []
    offsets: list[int] = []
    view = memoryview(data)
    pos = 0
    while pos < len(data):
        try:
            piece = codecs.utf_8_decode(view[pos:], "strict", True)[0]
            end = bad = len(data)
        except UnicodeDecodeError as exc:
            piece = codecs.utf_8_decode(view[pos : pos + exc.start], "strict", True)[0]
            end, bad = pos + exc.start, pos + exc.end
        if piece.isascii():
            offsets.extend(range(pos, end))
        else:
            at = pos
            for ch in piece:
                offsets.append(at)
                o = ord(ch)
                at += 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4
        text.append(piece)
        if end < len(data):  # an invalid sequence: one U+FFFD
            offsets.append(end)
            text.append("\ufffd")
        pos = bad
    offsets.append(len(data))
    return "".join(text).replace("\x00", "\ufffd"), offsets


def tokens_by_col(text: str, number: int) -> dict[int, list[Token]]:
    """The tokens of line ``number`` whose text is ``text``, by column (1-based)."""
    at_col: dict[int, list[Token]] = {}
    for tok in tokens([Segment(number, 1, text)]):
        at_col.setdefault(tok.col, []).append(tok)
    return at_col


def token_at(at_col: Iterable[Token], subject: str) -> Token | None:
    """The one of ``at_col`` (a line's tokens at a citation's column) that still names
    ``subject``, read as ``check`` reads a citation; else None."""
    want = normalize(subject) or subject
    for tok in at_col:
        cited = link_path(tok.text) if tok.link else path_like(tok.text)
        if cited is None:  # a folder (tools/x/), or a path only the roots know (bin/dev)
            cited = folder_cited(tok.text) or tok.text.replace("\\", "/")
        if cited is not None and (normalize(cited) or cited) == want:
            return tok
    return None


def reading_back(text: str, number: int, rewrites: Sequence[tuple[int, int, str]]) -> set[int]:
    """The indices of ``rewrites`` that read back: each ``(start, end, new)`` puts ``new``
    over ``text[start:end]`` (code points of line ``number``), and one reads back when the
    line, with it and the others kept all written, holds a token of exactly ``new`` where
    it was written.

    The rewrites are made at once and the line read into tokens once; those that do not
    read back are dropped and the rest read again, until all do (a round per drop that
    makes another fail; in practice one). One overlapping an earlier one is dropped.
    """
    todo = sorted(range(len(rewrites)), key=lambda i: rewrites[i][:2])
    while True:
        pieces: list[str] = []
        want: dict[int, tuple[int, str]] = {}
        at = shift = 0
        for i in todo:
            start, end, new = rewrites[i]
            if start < at:
                continue
            pieces += (text[at:start], new)
            want[i] = (start + 1 + shift, new)
            shift += len(new) - (end - start)
            at = end
        if not want:
            return set()
        pieces.append(text[at:])
        read = {(t.col, t.text) for t in tokens([Segment(number, 1, "".join(pieces))])}
        bad = {i for i, w in want.items() if w not in read}
        if not bad:
            return set(want)
        todo = [i for i in todo if i in want and i not in bad]


def edited(raw: bytes, edits: Iterable[tuple[int, int, bytes]]) -> bytes:
    """``raw`` with each ``(start, end, data)`` of ``edits`` (byte offsets; none overlap)
    written over its range, in one pass."""
    pieces: list[bytes] = []
    at = 0
    for a, b, data in sorted(edits, key=lambda e: (e[0], e[1])):
        pieces += (raw[at:a], data)
        at = b
    if not pieces:
        return raw
    pieces.append(raw[at:])
    return b"".join(pieces)


class Placed(NamedTuple):
    """A finding's ``line``, ``col`` and ``subject`` as ``--fix`` plans it: where the cited
    text is written."""

    line: int
    col: int
    subject: str


def at_definitions(found: Sequence, lines: Sequence[bytes]) -> list:
    """``found`` (findings: ``line``, ``col``, ``subject``) with each whose line does not
    hold its subject, a reference-style link (``[entry][r]``, SPEC.md §Anchors:
    reported at the reference), placed where the target is written: at the first link
    reference definition of the file whose target is the subject (``[r]: src/old.py``),
    as a ``Placed``; any other finding as it is."""
    from brainmigrate.read.references import link_definition

    defs: dict[str, tuple[int, int]] | None = None
    out = []
    for f in found:
        raw = lines[f.line - 1] if 0 < f.line <= len(lines) else b""
        if f.subject.encode("utf-8", "surrogateescape") in raw:
            out.append(f)
            continue
        if defs is None:
            defs = {}
            for number, line in enumerate(lines, 1):
                text, _ = decode(content(line, number)[0])
                target = link_definition(text)
                if target is not None and target[1] not in defs and target[1] in text:
                    defs[target[1]] = (number, text.index(target[1]) + 1)
        at = defs.get(f.subject)
        out.append(f if at is None else Placed(at[0], at[1], f.subject))
    return out
