"""Declarations of one source text: parse with tree-sitter, run the language's query.

The result of one file is a tuple of *rows*, plain tuples that pickle small and fast::

    (name, kind, container, first_line, last_line, name_line, signature_digest, body_digest)

Both digests are None in the rows of a file parsed without digests (``extract_file(...,
digests=False)``: the full index and name lookups, which never read them).
:func:`rows_to_declarations` turns them into :class:`~.model.Declaration` values.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from operator import itemgetter
from typing import TYPE_CHECKING

from brainmigrate.patterns import lazy

from . import legacy as legacy_digests
from .languages import parser_and_query, query_pruning
from .model import Declaration, category_of
from .tokens import Tokens
from .tokens import digest as digest  # (the whitespace-folding digest of other files)

if TYPE_CHECKING:
    from tree_sitter import Node, Query

Row = tuple[str, str, str | None, int, int, int, str | None, str | None]

#: Bumped whenever rows would come out differently for the same input (cache namespace).
#: 2: a Python docstring is left out of the body digest; the file digest is taken too.
#: 3: token digests; Rust attributes and preceding decorators start their declaration;
#: a variable's value is its body.
#: 4: digests are taken only where read: a parsed entry may hold none (file digest None),
#: which an older reader would take for digests; a token's edge whitespace counts; Rust
#: doc attributes are doc comments; Python strings are read with the careful walk.
EXTRACTOR_VERSION = 4

#: Containers whose direct ``function`` children are methods.
TYPE_LIKE = frozenset(
    {
        "class",
        "interface",
        "object",
        "enum",
        "struct",
        "trait",
        "impl",
        "protocol",
        "extension",
        "record",
        "companion",
        "actor",
        "union",
    }
)

#: Parents that a declaration's start (its lines and signature) is widened over:
#: always for these …
_WIDEN_ALWAYS = frozenset({"decorated_definition", "export_statement", "template_declaration"})
#: … and for these only when the declaration is their single child of its type
#: (``const f = …`` takes the ``const``; ``type T struct`` takes the ``type``).
_WIDEN_SINGLE = frozenset(
    {
        "lexical_declaration",
        "variable_declaration",
        "type_declaration",
        "const_declaration",
        "var_declaration",
    }
)

_WIDEN_ANY = _WIDEN_ALWAYS | _WIDEN_SINGLE

#: Names given to declarations whose grammar has no name node.
_DEFAULT_NAMES = {
    ("kotlin", "companion"): "Companion",
    ("kotlin", "constructor"): "constructor",
    ("swift", "constructor"): "init",
    ("swift", "destructor"): "deinit",
}

#: Languages whose query cannot tell some kinds apart (:func:`_refine_kind`).
_REFINED = frozenset({"kotlin", "swift"})
#: Attributes and decorators that grammars put before a declaration as its siblings (Rust
#: ``#[…]`` items; TypeScript and JavaScript decorators of class members): part of it.
_PRECEDING = frozenset({"attribute_item", "decorator"})
#: Languages where :data:`_PRECEDING` siblings occur.
_PRECEDED = frozenset({"rust", "typescript", "tsx", "javascript"})
#: Kinds whose text before ``=`` is their header and whose value is their body.
_VALUED = frozenset({"variable", "constant", "static", "field", "property", "event"})
_WORD_CODES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
#: Per language, pattern index -> the pattern's ``@def.<kind>`` capture name and kind.
_DEF_CAPTURE: dict[str, dict[int, tuple[str, str]]] = {}
_ROW_ORDER = itemgetter(0, 1, 2)
#: A match's order: its declaration's start, its end (larger first), its pattern index.
_MATCH_ORDER = itemgetter(0, 1, 2)

_IDENT = lazy(r"[A-Za-z_$~][\w$~]*(?:::~?[A-Za-z_$][\w$]*)*")
#: Names kept as written: identifiers (Ruby's may end in ? ! =) and dotted or backslashed
#: namespace names (``Demo.Sub``, ``App\Billing``).
_PLAIN = lazy(r"[^\W\d][\w$]*(?:[?!=]|(?:[.\\][^\W\d][\w$]*)*)\Z")


def normalise_source(data: bytes) -> bytes:
    """Strip a leading UTF-8 BOM and turn CRLF, then a lone CR (old Mac line ends), into LF
    (SPEC.md §Staleness: "CRLF/CR → LF"; a CRLF file keeps its line numbers, a CR one is
    read as the lines an editor shows)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return data


def _clean_name(raw: str) -> tuple[str, str | None]:
    """Split a raw name into (name, qualifier).

    ``A::B::m`` -> (``m``, ``A.B``); ``:sym`` -> (``sym``, None); ``(*f)`` -> (``f``, None).
    """
    if not _PLAIN.match(raw):
        m = _IDENT.search(raw)
        if m is None:
            return raw, None
        raw = m.group(0)
    if "::" in raw:
        *outer, last = raw.split("::")
        qualifier = ".".join(p for p in outer if p)
        return last, qualifier or None
    return raw, None


def _widened_start(node: Node, counted: dict | None = None, parent: Node | None = None) -> Node:
    """The outermost node over which a declaration's start is widened (see _WIDEN_*).

    ``counted`` keeps, per (parent, child type), how many named children of that type the
    parent has, for the next declaration under the same parent: a Go ``const ( ... )`` of
    thousands of specs is counted once, not once a spec. ``parent``: ``node.parent`` when
    the caller has it already."""
    if parent is None:
        parent = node.parent
    while True:
        if parent is None:
            return node
        if parent.type in _WIDEN_ALWAYS:
            node = parent
            parent = node.parent
            continue
        if parent.type in _WIDEN_SINGLE:
            key = (parent.id, node.type)
            same = counted.get(key) if counted is not None else None
            if same is None:
                same = sum(1 for c in parent.named_children if c.type == node.type)
                if counted is not None:
                    counted[key] = same
            if same == 1:
                node = parent
                parent = node.parent
                continue
        return node


def _refine_kind(language: str, kind: str, node: Node) -> str:
    """Kinds the query cannot tell apart: Kotlin interface/enum, Swift struct/enum/actor."""
    if language == "kotlin" and kind == "class":
        for child in node.children:
            if child.type in ("interface", "enum"):
                return child.type
            if child.type == "type_identifier":
                break
    elif language == "swift" and kind == "class":
        dk = node.child_by_field_name("declaration_kind")
        if dk is not None and dk.type in ("struct", "enum", "actor", "extension"):
            return dk.type
    return kind


def _docstring(language: str, body: Node) -> Node | None:
    """A Python body's docstring (its first statement when that is a lone string)."""
    if language != "python" or body.type != "block" or not body.named_children:
        return None
    first = body.named_children[0]
    if first.type == "string":  # (this grammar version puts it in the block bare)
        return first
    if first.type == "expression_statement" and [c.type for c in first.named_children] == [
        "string"
    ]:
        return first
    return None


def _matches(
    language: str, query: Query, src: bytes, root: Node, tops: list[Node]
) -> list[tuple[int, dict[str, list[Node]]]]:
    """The declaration query's matches in a parsed file: those of a query over the whole
    tree, found without visiting what cannot hold one (``languages.QUERY_PRUNING``)."""
    from tree_sitter import QueryCursor

    pruning = query_pruning(language)
    if pruning is None:
        return QueryCursor(query).matches(root)
    depth, markers = pruning
    if root.has_error:
        marked = [
            i
            for i, c in enumerate(tops)
            if c.has_error or _marked(markers, src, c.start_byte, c.end_byte)
        ]
    else:  # the top-level nodes holding a marker
        starts = [c.start_byte for c in tops]
        marked = sorted(
            {bisect_right(starts, at) - 1 for at in _marker_starts(markers, src, 0, len(src))}
            - {-1}
        )
    if sum(tops[i].end_byte - tops[i].start_byte for i in marked) * 2 > len(src):
        return QueryCursor(query).matches(root)  # mostly marked: one pass over it all
    shallow = QueryCursor(query)
    shallow.set_max_start_depth(depth)
    found = shallow.matches(root)
    for i in marked:
        found.extend(QueryCursor(query).matches(tops[i]))
    return found


def _marker_starts(markers: Iterable[re.Pattern[bytes]], src: bytes, start: int, end: int):
    """Where a marker (``languages.QUERY_PRUNING``) starts in ``src[start:end]``."""
    for marker in markers:
        for m in marker.finditer(src, start, end):
            at = m.start()
            if at == 0 or src[at - 1] not in _WORD_CODES:
                yield at


def _marked(markers: Iterable[re.Pattern[bytes]], src: bytes, start: int, end: int) -> bool:
    return next(_marker_starts(markers, src, start, end), None) is not None


def extract(data: bytes, language: str) -> tuple[bool, tuple[Row, ...]]:
    """Parse one file's bytes and return ``(has_error, rows)`` (see ``extract_file``)."""
    has_error, rows, _digest = extract_file(data, language)
    return has_error, rows


def extract_file(
    data: bytes, language: str, *, digests: bool = True, legacy: bool = False
) -> tuple[bool, tuple[Row, ...], str | None]:
    """Parse one file's bytes and return ``(has_error, rows, file_digest)``.

    ``digests=False``: no digest is taken (no walk over the tokens, a third of the cost):
    both digests of every row and ``file_digest`` are None; names, kinds, containers and
    lines are those ``digests=True`` gives. ``legacy``: the digests as fingerprints of
    ``digest_version`` 1 took them (the text with whitespace runs folded), to compare a
    fingerprint taken before token digests (``digests=False`` wins over it).

    Digests (SPEC.md §Staleness) are taken over the file's tokens (``tokens.Tokens``:
    comments left out, so neither a re-flow nor a comment edit changes one): a
    declaration's signature digest covers its header, from its first decorator, annotation
    or attribute up to its body; its body digest the whole declaration (without a Python
    docstring, which is its doc comment). A variable, constant, field or property has the
    tokens before its ``=`` (or ``:=``) as header and the whole declaration as body; with
    neither body nor value it is all header (body digest None). ``file_digest`` covers every
    token of the file; for a file that declares nothing, its comments too.

    ``data`` is normalised first (BOM, CRLF), so both digests and all line numbers are the
    same for an LF and a CRLF copy. Rows are in source order (first line, then the name's
    position). Declarations inside syntax-error regions are kept; ``has_error`` tells they may be
    incomplete. Raises ``KeyError`` for an unknown language.
    """
    src = normalise_source(data)
    parser, query = parser_and_query(language)
    tree = parser.parse(src)
    root = tree.root_node
    tops = root.children
    found = _declaration_matches(language, query, src, root, tops)
    if not digests:
        return root.has_error, _rows(language, src, tops, found, None, False), None
    if legacy:
        rows = _rows(language, src, tops, found, None, True)
        return root.has_error, rows, legacy_digests.file_digest(src, tops)
    tokens = Tokens(src, tree, language)
    rows = _rows(language, src, tops, found, tokens, False)
    return root.has_error, rows, tokens.file_digest(src, bool(rows))


#: A declaration the query matched, in :data:`_MATCH_ORDER`: (start byte, minus its end
#: byte, pattern index, node, kind, name node, body node, receiver node, node id).
Match = tuple


def _declaration_matches(
    language: str, query: Query, src: bytes, root: Node, tops: list[Node]
) -> list[Match]:
    """The declarations the query matches, one per (node, name node), from the pattern
    of the lowest index that matches it, sorted by :data:`_MATCH_ORDER`."""
    defs = _DEF_CAPTURE.setdefault(language, {})
    best: dict[tuple[int, int], tuple] = {}
    for pattern, caps in _matches(language, query, src, root, tops):
        known = defs.get(pattern)
        if known is None:
            cap = next((c for c in caps if c.startswith("def.")), "")
            known = defs[pattern] = (cap, cap[4:])
        cap, kind = known
        if not cap:
            continue
        dnode = caps[cap][0]
        body = caps.get("body")
        body = body[0] if body else None
        receiver = caps.get("receiver")
        receiver = receiver[0] if receiver else None
        dnode_id = dnode.id
        span = None
        for name_node in caps.get("name") or (None,):
            key = (dnode_id, name_node.start_byte if name_node is not None else -1)
            old = best.get(key)
            if old is None or old[2] > pattern:
                if span is None:
                    span = dnode.start_byte, dnode.end_byte
                start, end = span
                best[key] = (start, -end, pattern, dnode, kind, name_node, body, receiver, dnode_id)
    return sorted(best.values(), key=_MATCH_ORDER)


def _rows(
    language: str,
    src: bytes,
    tops: list[Node],
    found: list[Match],
    tokens: Tokens | None,
    legacy: bool,
) -> tuple[Row, ...]:
    """The rows of the matched declarations, in source order (first line, then the
    name's position), each with its container from the declarations enclosing it; digests
    over ``tokens``, as :mod:`.legacy` took them (``legacy``: also their lines, which
    started at no attribute), or None when neither."""
    refine = language in _REFINED
    preceded = not legacy and language in _PRECEDED
    # Stack of enclosing declarations: (start, end, qualified name, kind).
    stack: list[tuple[int, int, str, str]] = []
    keyed: list[tuple[int, int, int, Row]] = []
    counted: dict[tuple[int, str], int] = {}
    top_ids = {c.id for c in tops}  # their parent is the root: their start is not widened
    for start, end, _pattern, dnode, kind, name_node, body, receiver, dnode_id in found:
        end = -end
        while stack:
            top = stack[-1]
            if top[0] <= start and end <= top[1] and (top[0] != start or top[1] != end):
                break
            stack.pop()
        start_row = dnode.start_point[0]
        if refine:
            kind = _refine_kind(language, kind, dnode)
        if name_node is not None:
            name, qualifier, name_line, name_at = _name_of(src, name_node)
        else:
            name, qualifier = _DEFAULT_NAMES.get((language, kind), kind), None
            name_line = start_row + 1
            name_at = start
        if receiver is not None:
            container: str | None = src[receiver.start_byte : receiver.end_byte].decode(
                "utf-8", "replace"
            )
        else:
            container = stack[-1][2] if stack else None
            if qualifier:
                container = f"{container}.{qualifier}" if container else qualifier
            if kind == "function" and stack and stack[-1][3] in TYPE_LIKE:
                kind = "method"
        outer = dnode if dnode_id in top_ids else _outer(dnode, counted)
        first = _attributes(outer) if preceded else None
        if first is not None:
            outer_start, first_row = first.start_byte, first.start_point[0]
        elif outer is dnode:
            outer_start, first_row = start, start_row
        else:
            outer_start, first_row = outer.start_byte, outer.start_point[0]
        row_end, col_end = dnode.end_point
        last_line = row_end if col_end == 0 and row_end > start_row else row_end + 1
        if tokens is not None:
            signature, body_digest = _digests(language, tokens, kind, outer_start, body, end)
        elif legacy:
            doc = _docstring(language, body) if language == "python" and body else None
            signature, body_digest = legacy_digests.declaration_digests(
                src, outer, outer_start, body, end, doc
            )
        else:
            signature = body_digest = None
        row = (name, kind, container, first_row + 1, last_line, name_line, signature, body_digest)
        keyed.append((first_row, name_line, name_at, row))
        stack.append((start, end, f"{container}.{name}" if container else name, kind))
    keyed.sort(key=_ROW_ORDER)
    return tuple(k[3] for k in keyed)


def _name_of(src: bytes, name_node: Node) -> tuple[str, str | None, int, int]:
    """``(name, qualifier, 1-based line, start byte)`` of a declaration's name node."""
    raw = src[name_node.start_byte : name_node.end_byte].decode("utf-8", "replace")
    if _PLAIN.match(raw):
        name, qualifier = raw, None
    else:
        name, qualifier = _clean_name(raw)
    return name, qualifier, name_node.start_point[0] + 1, name_node.start_byte


def _outer(dnode: Node, counted: dict) -> Node:
    """``_widened_start`` of a declaration below the top level, the parent looked up once."""
    parent = dnode.parent
    if parent is None or parent.type not in _WIDEN_ANY:
        return dnode
    return _widened_start(dnode, counted, parent)


def _attributes(node: Node) -> Node | None:
    """The first of the attributes or decorators (:data:`_PRECEDING`) that come right before
    ``node`` as its siblings, comments between them allowed; None when there are none."""
    first = None
    prev = node.prev_sibling
    while prev is not None:
        kind = prev.type
        if kind in _PRECEDING:
            first = prev
        elif "comment" not in kind:
            break
        prev = prev.prev_sibling
    return first


def _digests(
    language: str, tokens: Tokens, kind: str, start: int, body: Node | None, end: int
) -> tuple[str, str | None]:
    """The signature digest and body digest (None without a body or value) of a
    declaration of ``kind`` over bytes ``[start, end)`` (SPEC.md §Staleness)."""
    body_start = body.start_byte if body is not None else -1
    if body_start < start:
        at = tokens.assign_in(start, end) if kind in _VALUED else None
        if at is None:
            return tokens.digest(start, end), None
        return tokens.digest(start, at), tokens.digest(start, end)
    doc = _docstring(language, body) if language == "python" else None
    skip = (doc.start_byte, doc.end_byte) if doc is not None else None
    return tokens.digest(start, body_start), tokens.digest(start, end, skip)


def rows_to_declarations(rows: Iterable[Row], path: str, language: str) -> list[Declaration]:
    """Declarations of one file from its cached rows (see the module docstring for the shape)."""
    return [
        Declaration(
            name=r[0],
            kind=r[1],
            category=category_of(r[1]),
            container=r[2],
            path=path,
            lines=(r[3], r[4]),
            name_line=r[5],
            language=language,
            signature_digest=r[6],
            body_digest=r[7],
        )
        for r in rows
    ]
