"""What digests of code read (SPEC.md §Staleness): a file's tokens, and each line of a file as
the digest of its lines sees it, so the text of cited lines can be digested and looked for
again anywhere in the file (a window of the same number of lines).

A file the index reads is digested over its **tokens**: tree-sitter's leaf nodes in source
order, comments left out (a node whose type holds ``comment`` is skipped with its children:
Rust doc comments have some), zero-width leaves (MISSING nodes) skipped, joined by one space.
A token's own whitespace runs (a multi-line string, JSX text) are folded to one space, its
leading and trailing whitespace included but kept: ``"bar"`` and ``"  bar"`` are two tokens
(the digest is not folded again once the tokens are joined, which would strip it); only
whitespace that ends a token where its line ends is dropped (trailing blanks). Rust's
``#[doc …]`` attributes (and ``#[cfg_attr(…, doc …)]``, ``#![doc …]``) are doc comments
written as attributes: left out like comments. So a re-flow that changes no token (prettier,
rustfmt, gofmt, a re-indent, CRLF, a BOM) changes no digest, and neither does a comment or
doc edit.

:class:`Tokens` is the token stream of one file, built in one walk of its tree; a
declaration's digest is the digest of a slice of it, found by bisecting the tokens' start
bytes. Interface used by ``extract``, ``checkouts`` and ``fingerprints``.
"""

from __future__ import annotations

import functools
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from itertools import accumulate
from typing import TYPE_CHECKING

from brainmigrate.digests import blake2b
from brainmigrate.patterns import lazy

if TYPE_CHECKING:
    from tree_sitter import Language, Tree

#: Anonymous tokens that end a variable's header (SPEC.md §Staleness: the text before ``=``).
_ASSIGN = ("=", ":=")
#: A whitespace run inside a token, and a stream that has one (or a token with whitespace at
#: an edge, which the joining space then doubles).
_RUN = lazy(rb"\s+")
_TOKEN_SPACE = lazy(rb"[\t\n\r\f\v]|  ")
#: Whitespace in tokens joined by NUL that folding changes: a run, a non-space blank, a
#: token's trailing blank (dropped at a line's end).
_SPACE = lazy(rb"[\t\n\r\f\v]| {2,}| (?=\0)| \Z")
#: Rust attributes that are doc comments: ``#[doc = "…"]``, ``#![doc(…)]``,
#: ``#[cfg_attr(feature = "x", doc = "…")]``.
_DOC_ATTRIBUTE = lazy(rb"#!?\s*\[\s*(?:(doc)\b|cfg_attr\s*\()")
_DOC_ARGUMENT = lazy(rb"\s*doc\b")


def _is_doc_attribute(src: bytes, start: int, end: int) -> bool:
    """Whether the Rust attribute in ``src[start:end]`` is a doc comment: ``#[doc …]``, or
    a ``#[cfg_attr(condition, …)]`` one of whose attributes after the condition (at the
    top level of its parentheses) is ``doc`` — ``cfg_attr(any(test, doc), derive(X))``
    names ``doc`` only in its condition and is no doc comment."""
    m = _DOC_ATTRIBUTE.match(src, start, end)
    if m is None:
        return False
    if m.group(1):
        return True
    depth, quoted, i = 0, False, m.end()
    while i < end:
        c = src[i]
        if quoted:
            if c == 92:  # a backslash escapes the next byte
                i += 1
            elif c == 34:
                quoted = False
        elif c == 34:
            quoted = True
        elif c in b"([{":
            depth += 1
        elif c in b")]}":
            if depth == 0:
                return False  # the end of cfg_attr( … )
            depth -= 1
        elif c == 44 and depth == 0 and _DOC_ARGUMENT.match(src, i + 1, end):
            return True  # a top-level ", doc": the condition is before the first comma
        i += 1
    return False


_ATTRIBUTE_KINDS = ("attribute_item", "inner_attribute_item")


def _hash(text: bytes) -> str:
    return blake2b(text, digest_size=12).hexdigest()


def digest(text: bytes) -> str:
    """Hex blake2b (12 bytes) of ``text`` with every whitespace run folded to one space."""
    return blake2b(b" ".join(text.split()), digest_size=12).hexdigest()


_BOM = b"\xef\xbb\xbf"
_FOLD = 1 << 16


def folded_digest(chunks: Iterable[bytes]) -> str:
    """``digest`` of ``extract.normalise_source`` of the bytes ``chunks`` hold
    (a UTF-8 BOM at byte 0 dropped, every whitespace run folded to one space, none at
    either end), taken a chunk at a time: memory is one chunk, whatever the file's size
    (folded ``_FOLD`` bytes at a time: a slice is a list of its words for a moment).
    (CR and LF are both whitespace, so the line-end rewrite changes nothing folded.)"""
    hasher = blake2b(digest_size=12)
    started = space = False  # space: whitespace since the last word hashed
    for piece in _slices(_without_bom(chunks)):
        words = piece.split()
        if words:
            if started and (space or piece[:1].isspace()):
                hasher.update(b" ")
            hasher.update(b" ".join(words))
            started, space = True, piece[-1:].isspace()
        else:
            space = True
    return hasher.hexdigest()


def _slices(chunks: Iterable[bytes]) -> Iterator[bytes]:
    for chunk in chunks:
        for at in range(0, len(chunk), _FOLD):
            yield chunk[at : at + _FOLD]


def _without_bom(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """``chunks`` without a UTF-8 BOM at byte 0 (however the first bytes are cut)."""
    it = iter(chunks)
    head = b""
    for chunk in it:
        head += chunk
        if len(head) >= len(_BOM):
            break
    yield head.removeprefix(_BOM)
    yield from it


@functools.cache
def _kinds(language: Language) -> tuple[frozenset[int], frozenset[int]]:
    """``(comment kind ids, assignment kind ids)`` of a grammar."""
    comments = frozenset(
        i for i in range(language.node_kind_count) if "comment" in language.node_kind_for_id(i)
    )
    assigns = frozenset(
        i
        for i in range(language.node_kind_count)
        if language.node_kind_for_id(i) in _ASSIGN and not language.node_kind_is_named(i)
    )
    return comments, assigns


@functools.cache
def _attribute_kinds(language: Language) -> frozenset[int]:
    """Kind ids of a grammar's attribute items (Rust's ``#[…]`` and ``#![…]``)."""
    return frozenset(
        i
        for i in range(language.node_kind_count)
        if language.node_kind_for_id(i) in _ATTRIBUTE_KINDS and language.node_kind_is_named(i)
    )


#: Grammars whose comment nodes have children (Rust doc comments, Scala comments), or whose
#: leaves leave some text out (Kotlin's string quotes, the text of Scala's interpolated
#: strings): their walk looks at every node's type and takes the text between leaves
#: that is no whitespace as a token too; the others' walk looks only at the leaves.
CAREFUL = frozenset({"rust", "scala", "kotlin"})


def _walk_leaves(src: bytes, tree: Tree, texts, starts, assigns, comments) -> None:
    """The tokens of a tree whose comments are leaves, appended to the lists given."""
    comment_ids, assign_ids = _kinds(tree.language)
    special = comment_ids | assign_ids
    cursor = tree.walk()
    down, across, up = cursor.goto_first_child, cursor.goto_next_sibling, cursor.goto_parent
    add_text, add_start = texts.append, starts.append
    while True:
        if down():
            continue
        node = cursor.node
        start = node.start_byte
        end = node.end_byte
        if end > start:
            if node.kind_id in special:
                if node.kind_id in comment_ids:
                    comments.append((start, end))
                else:
                    add_text(src[start:end])
                    add_start(start)
                    assigns.append(start)
            else:
                add_text(src[start:end])
                add_start(start)
        while not across():
            if not up():
                return


def _walk_careful(src: bytes, tree: Tree, texts, starts, assigns, comments) -> None:
    """The tokens of a tree whose comments may have children (skipped with them) and
    whose leaves may not cover all of its text (what lies between them is a token)."""
    comment_ids, assign_ids = _kinds(tree.language)
    attribute_ids = _attribute_kinds(tree.language)
    cursor = tree.walk()
    at = 0  # the end of the last token or comment

    def gap(upto: int) -> None:
        between = src[at:upto]
        if not between.isspace():
            word = between.lstrip()
            texts.append(word)
            starts.append(upto - len(word))

    while True:
        node = cursor.node
        kind = node.kind_id
        if kind in comment_ids or (
            kind in attribute_ids and _is_doc_attribute(src, node.start_byte, node.end_byte)
        ):
            if node.start_byte > at:
                gap(node.start_byte)
            at = node.end_byte
            comments.append((node.start_byte, at))
        elif cursor.goto_first_child():
            continue
        else:
            start, end = node.start_byte, node.end_byte
            if end > start:
                if start > at:
                    gap(start)
                texts.append(src[start:end])
                starts.append(start)
                if kind in assign_ids:
                    assigns.append(start)
                at = end
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                if len(src) > at:
                    gap(len(src))
                return


def _folded(src: bytes, texts: list[bytes], starts: list[int]) -> tuple[list, list]:
    """The tokens with their whitespace runs folded to one space, and the whitespace that
    ends a token where its line ends dropped (trailing blanks are no text: a C macro's
    value); a token left empty is no token. Only the tokens that hold such whitespace are
    looked at (found by one search of the tokens joined: most of a file's tokens, its
    names and punctuation, hold none)."""
    joined = b"\0".join(texts)
    lengths = list(accumulate(map(len, texts), initial=0))  # token i starts at lengths[i] + i
    at = range(len(texts))
    touched = sorted(
        {
            bisect_right(at, m.start(), key=lambda i: lengths[i] + i) - 1
            for m in _SPACE.finditer(joined)
        }
    )
    if not touched:
        return texts, starts
    end_of_source = len(src)
    texts = list(texts)
    for i in touched:
        text, start = texts[i], starts[i]
        if text[-1:].isspace():
            end = start + len(text)
            if end >= end_of_source or src[end] in b"\r\n":
                text = text.rstrip()
        texts[i] = _RUN.sub(b" ", text)
    if all(texts[i] for i in touched):
        return texts, starts
    kept = [i for i, t in enumerate(texts) if t]
    return [texts[i] for i in kept], [starts[i] for i in kept]


#: Nodes read as one token though they have children: a Python string's content holding
#: an escape sequence has the escapes as its only children (its words are in no leaf).
WHOLE = {"python": "(string_content (escape_sequence)) @whole"}


@functools.cache
def _whole_query(grammar: Language, language: str):
    from tree_sitter import Query

    return Query(grammar, WHOLE[language])


def _whole(src: bytes, tree: Tree, language: str, texts: list, starts: list) -> tuple[list, list]:
    """The tokens with each ``WHOLE`` node's leaves replaced by the node's text."""
    from tree_sitter import QueryCursor

    nodes = (
        QueryCursor(_whole_query(tree.language, language)).captures(tree.root_node).get("whole", ())
    )
    for node in sorted(nodes, key=lambda n: n.start_byte, reverse=True):
        first = bisect_left(starts, node.start_byte)
        last = bisect_left(starts, node.end_byte)
        texts[first:last] = [src[node.start_byte : node.end_byte]]
        starts[first:last] = [node.start_byte]
    return texts, starts


class Tokens:
    """The token stream of one parsed file.

    Attributes: ``stream`` (bytes: every token, comments left out, joined by one space),
    ``texts`` (the tokens), ``starts`` (each token's start byte in the source, ascending),
    ``offsets`` (each token's start in ``stream`` less its index, one more item at the end),
    ``assigns`` (start bytes of the ``=`` and ``:=`` tokens), ``comments`` (``(start, end)``
    byte spans of the comments left out)."""

    __slots__ = ("assigns", "comments", "offsets", "starts", "stream", "texts")

    def __init__(self, src: bytes, tree: Tree, language: str) -> None:
        texts: list[bytes] = []
        starts: list[int] = []
        assigns: list[int] = []
        comments: list[tuple[int, int]] = []
        walk = _walk_careful if language in CAREFUL else _walk_leaves
        walk(src, tree, texts, starts, assigns, comments)
        if language in WHOLE and b"\\" in src:
            texts, starts = _whole(src, tree, language, texts, starts)
        if _TOKEN_SPACE.search(b" ".join(texts)) is not None:
            texts, starts = _folded(src, texts, starts)
        self.texts = texts
        self.starts = starts
        self.assigns = assigns
        self.comments = comments
        self.stream = b" ".join(texts)
        #: Each token's start in ``stream`` less its index (the spaces before it).
        self.offsets = list(accumulate(map(len, texts), initial=0))

    def index(self, at: int) -> int:
        """The index of the first token starting at or after byte ``at``."""
        return bisect_left(self.starts, at)

    def text(self, first: int, last: int) -> bytes:
        """Tokens ``first`` (inclusive) to ``last`` (exclusive) joined by one space."""
        if last <= first:
            return b""
        return self.stream[self.offsets[first] + first : self.offsets[last] + last - 1]

    def digest(self, start: int, end: int, skip: tuple[int, int] | None = None) -> str:
        """Digest of the tokens starting in bytes ``[start, end)``, without those starting in
        the byte span ``skip`` (a Python docstring)."""
        first, last = self.index(start), self.index(end)
        if skip is None:
            return _hash(self.text(first, last))
        cut, resume = self.index(skip[0]), self.index(skip[1])
        parts = (self.text(first, cut), self.text(resume, last))
        return _hash(b" ".join(p for p in parts if p))

    def assign_in(self, start: int, end: int) -> int | None:
        """Start byte of the first ``=`` or ``:=`` token in bytes ``[start, end)``, or None."""
        assigns = self.assigns
        i = bisect_left(assigns, start)
        if i < len(assigns) and assigns[i] < end:
            return assigns[i]
        return None

    def file_digest(self, src: bytes, declares: bool) -> str:
        """The file digest (SPEC.md §Staleness): every token but comments; for a file that
        ``declares`` nothing, every token with each comment as one token, comments too."""
        if declares or not self.comments:
            return _hash(self.stream)
        merged = sorted(
            [
                *zip(self.starts, self.texts, strict=True),
                *((s, _RUN.sub(b" ", src[s:e])) for s, e in self.comments),
            ]
        )
        return _hash(b" ".join(t for _, t in merged))


def line_texts(data: bytes, language: str | None) -> list[bytes]:
    """Each line of ``data`` (already BOM-stripped and LF-ended: ``extract.normalise_source``)
    as a lines digest reads it, one item per line (index 0 is line 1).

    ``language``: the index's language name of the file, None for a file the index does not
    read. For a language the index reads, a line's text is its tokens (those starting on it,
    comments left out; a token spanning lines belongs to its first line) joined by one space;
    for any other file, the line with its whitespace runs folded to one space and stripped
    (SPEC.md §Staleness). Raises ``KeyError`` for a language the index does not know."""
    lines = data.split(b"\n")
    if language is None:
        return [b" ".join(line.split()) for line in lines]
    from .languages import parser_and_query

    parser, _query = parser_and_query(language)
    tokens = Tokens(data, parser.parse(data), language)
    line_starts = list(accumulate((len(line) + 1 for line in lines), initial=0))
    per_line: list[list[bytes]] = [[] for _ in lines]
    row = 0
    for start, text in zip(tokens.starts, tokens.texts, strict=True):
        while line_starts[row + 1] <= start:
            row += 1
        per_line[row].append(text)
    return [b" ".join(words) for words in per_line]


#: What a lines digest of code lines that hold no token is taken over, before their raw
#: text (so it never equals the digest of a token text).
_RAW = b"\0raw\0"


def lines_digest(texts: list[bytes], first: int, last: int, raw: list[bytes] | None = None) -> str:
    """Hex blake2b (12 bytes) of lines ``first`` to ``last`` (1-based, inclusive) of a file
    read by ``line_texts``: their non-empty texts joined by one space. ``raw``: the same
    file's lines as ``line_texts(data, None)`` reads them, for a file the index reads: lines
    that hold no token (comments, the inside of a multi-line string, blank lines) are
    digested over that raw text, comments too, as a file that declares nothing is (SPEC.md
    §Staleness) — else an edit of a cited comment could never make it stale."""
    joined = b" ".join(t for t in texts[first - 1 : last] if t)
    if not joined and raw is not None:
        return _raw_digest(raw, first - 1, last)
    return blake2b(joined, digest_size=12).hexdigest()


def _raw_digest(raw: list[bytes], start: int, end: int) -> str:
    """The digest of lines ``start`` (0-based) to ``end`` (exclusive) that hold no token."""
    return blake2b(_RAW + b" ".join(t for t in raw[start:end] if t), digest_size=12).hexdigest()


#: The digests of lines that hold no text at all: nothing to look for elsewhere.
EMPTY = frozenset({blake2b(b"", digest_size=12).hexdigest(), _raw_digest([], 0, 0)})


def find_lines(
    texts: list[bytes], wanted: str, first: int, last: int, raw: list[bytes] | None = None
) -> tuple[int, int] | None:
    """Where the text a lines digest ``wanted`` was taken of stands now in a file read by
    ``line_texts``: the window of ``last - first + 1`` lines whose ``lines_digest`` (with
    ``raw``) is ``wanted``, the one starting nearest line ``first`` (the earlier of two as
    near), as ``(first, last)`` 1-based; None when no window has it, or when ``wanted`` is
    the digest of no text (blank lines, lines past the end: found anywhere, they say
    nothing) (SPEC.md §Staleness "File anchor with lines"). One join of the file's texts;
    each window is a slice of it, hashed."""
    n = last - first + 1
    if n < 1 or n > len(texts) or wanted in EMPTY:
        return None
    kept = [t for t in texts if t]
    joined = b" ".join(kept)
    starts, ends, at = [], [], 0
    for t in kept:
        starts.append(at)
        at += len(t)
        ends.append(at)
        at += 1
    before = [0]  # before[i]: how many non-empty texts precede line i + 1
    for t in texts:
        before.append(before[-1] + (1 if t else 0))
    for s in sorted(range(len(texts) - n + 1), key=lambda s: (abs(s + 1 - first), s)):
        i, j = before[s], before[s + n] - 1
        if i <= j:
            found = blake2b(joined[starts[i] : ends[j]], digest_size=12).hexdigest()
        elif raw is not None:
            found = _raw_digest(raw, s, s + n)
        else:
            continue
        if found == wanted:
            return s + 1, s + n
    return None
