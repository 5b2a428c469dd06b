"""The digests as they were before token digests (fingerprints of ``digest_version`` 1).

A declaration's text with its whitespace runs folded, and the file's top-level nodes that
are no comment: kept unchanged so that a fingerprint taken before token digests can still
be compared (``extract.extract_file(..., legacy=True)``, SPEC.md §Staleness).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .tokens import digest

if TYPE_CHECKING:
    from tree_sitter import Node

#: First bytes no comment starts with: a declaration beginning with one has no leading comment.
_WORD_START = frozenset(
    bytes([c]) for c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"
)


def file_digest(src: bytes, tops: list[Node]) -> str:
    """Digest of a parsed file's top-level nodes that are no comment, text folded."""
    return digest(
        b" ".join(src[c.start_byte : c.end_byte] for c in tops if "comment" not in c.type)
    )


def _content_start(node: Node) -> int:
    """Start byte of ``node`` after any comment children it begins with."""
    start = node.start_byte
    for child in node.children:
        if "comment" not in child.type:
            return child.start_byte
        start = child.end_byte
    return start


def declaration_digests(
    src: bytes, outer: Node, outer_start: int, body: Node | None, end: int, doc: Node | None
) -> tuple[str, str | None]:
    """The signature digest and body digest (None without a body) of a declaration that
    starts at ``outer`` (widened, ``outer_start`` its start byte) and ends at ``end``;
    ``doc`` its Python docstring, left out of the body digest."""
    if src[outer_start : outer_start + 1] in _WORD_START:
        text_start = outer_start  # (no comment starts with a letter, digit or _)
    else:
        text_start = _content_start(outer)
    body_start = body.start_byte if body is not None else -1
    if body_start < text_start:
        return digest(src[text_start:end]), None
    if doc is None:
        body_digest = digest(src[text_start:end])
    else:
        body_digest = digest(src[text_start : doc.start_byte] + b" " + src[doc.end_byte : end])
    return digest(src[text_start:body_start]), body_digest
