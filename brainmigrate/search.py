"""Find facts in the store and show one: ``search`` and ``show`` (SPEC.md §Store).

Search is SQLite FTS5 with BM25 over the stems the merge rule uses (``merge.Stems``): the
query is cut into words and stemmed the same way, and every stem goes to FTS5 as a quoted
string, joined with OR. So any text is a valid query -- quotes, a leading ``-``, ``AND``,
``*``, ``NEAR(`` or parentheses never reach FTS5 as syntax -- and a query with no words
finds nothing. Task ids and numbers are found as written: ``TER-160`` ranks the facts of
that task first (the ``tasks`` column), and ``500`` finds the facts holding that number
(FTS5 tokens ``ter160`` and ``500`` that imports index, and the ``numbers`` column, so a
store imported before still answers). Ranking: BM25 (facts holding more of the query's
rarer words first), ties by id.

``--anchor`` (``anchor_ids``) keeps the facts anchored to a file or declaration; printed
facts are read again (``stale.check_facts``) and marked STALE as the checkouts are now.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from brainmigrate import stores
from brainmigrate.errors import BrainmigrateError
from brainmigrate.merge.rule import Stems
from brainmigrate.model import FactRecord
from brainmigrate.roots import store_base
from brainmigrate.shapes import fact_dict, one_line, shorten
from brainmigrate.terms import parse_scopes, task_token

#: Default and largest number of hits.
DEFAULT_LIMIT = 5
MAX_LIMIT = 30
#: A hit line is cut to about this many characters.
LINE_WIDTH = 300
#: Up to this many changed files of a root, search and show parse them without loading
#: the root's declaration cache (``fingerprints.Checkouts``).
FEW_FILES = 8

_ID = re.compile(r"[kK]?([0-9]+)")
#: A query that is a fact id as ``search`` prints it (``k12``): that fact is the first hit.
_FACT_ID = re.compile(r"[kK]0*([0-9]{1,19})")
#: A task id as people type it (``TER-160``, ``ter-160``), and a number.
_TASK = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z][A-Za-z0-9]*-[0-9]+(?![A-Za-z0-9])")
_NUMBER = re.compile(r"[0-9]+")
#: Extensions that make ``--anchor`` text a path (with the code index's, and any ``/``).
_DOC_EXTENSIONS = frozenset(
    ".md .markdown .txt .rst .adoc .yaml .yml .json .toml .ini .cfg .conf .sql .sh .bash"
    " .properties .xml .html .css .gradle .kts .lock .env .tf .proto .graphql".split()
)


class NotFound(BrainmigrateError):
    """No fact has the id asked for, or the id is not of the form ``k17`` / ``17``."""


class UnknownScope(BrainmigrateError, ValueError):
    """A ``--scope`` filter that no stored fact's scope matches (exit 2; HTTP 400, as a
    ``ValueError``); the message lists the store's scopes (``stale._no_scope``)."""


@dataclass(frozen=True, slots=True)
class Hit:
    """A fact found by ``search`` and its one-line form (``k41 decision area:x  text (T-1)``)."""

    fact: FactRecord
    line: str
    extra: dict | None = None

    def to_dict(self) -> dict:
        """``{"fact": <the fact as show gives it>, "line": …}``."""
        return {"fact": fact_dict(self.fact, self.extra or {}), "line": self.line}


def fts_query(query: str, stems: Stems | None = None) -> str:
    """The FTS5 expression for a user's ``query``: the stems of its words outside task
    ids, the tokens of its task ids and its numbers, each quoted, joined by OR.

    Returns ``""`` when the query holds no words. A stem holds only letters (``Stems``
    splits at everything else) and the other tokens letters and digits, so quoting is
    enough; a ``"`` would be doubled.
    """
    # a task id is one token: its letters are not a word of their own ("TER-1" must not
    # find every fact of every TER task)
    words = (stems or Stems()).words(_TASK.sub(" ", query))
    words += [task_token(t) for t in task_ids(query)] + numbers(query)
    unique = list(dict.fromkeys(words))
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in unique)


def task_ids(text: str) -> list[str]:
    """Task ids in a query as written, upper-cased (``ter-160`` -> ``TER-160``)."""
    return list(dict.fromkeys(m.group(0).upper() for m in _TASK.finditer(text)))


def numbers(text: str) -> list[str]:
    """Digit runs of ``text`` outside its task ids, in order, once each."""
    return list(dict.fromkeys(_NUMBER.findall(_TASK.sub(" ", text))))


def search(
    store: str | os.PathLike,
    query: str,
    scopes=(),
    kinds=(),
    limit: int = DEFAULT_LIMIT,
    include_superseded: bool = False,
    *,
    anchor: str | None = None,
    recheck: bool = True,
    cache_dir: str | os.PathLike | None = None,
    roots: Sequence[str | os.PathLike] = (),
    scope_field: str = "--scope",
) -> list[Hit]:
    """The facts best matching ``query``, at most ``limit``: the facts of a task id the
    query names first, then BM25 order, then facts holding a number it names.

    ``scopes``: ``--scope`` values (see ``parse_scopes``); ``kinds``: kinds to keep.
    Superseded facts only with ``include_superseded``. ``anchor``: only facts anchored to
    that file or declaration (``anchor_matches``); without a query, newest first. With
    ``recheck`` the hits' anchors are read again and stale ones marked in the line (and
    their ``status``); without, the stored status is shown. ``roots``: the checkouts the
    anchors are read in instead of their recorded roots (``--root``). A query that is a
    fact id as a hit line starts (``k12``) has that fact first when the filters keep it.
    ``scope_field``: how the caller took ``scopes``, named in ``UnknownScope``'s message
    (the option ``--scope``; ``scope`` over HTTP and MCP).
    Raises ``stores.StoreError`` (no store, newer schema), ``stale.RootError`` (a ``roots``
    folder that does not exist), ``UnknownScope`` for ``scopes`` that match no stored
    fact's scope, and ``ValueError`` for a limit outside 1..30.
    """
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"--limit must be between 1 and {MAX_LIMIT}")
    _require_roots(roots)
    with stores.reader(Path(store)) as store_reader:
        exact, areas = parse_scopes(scopes)
        if scopes:
            _require_scopes(scopes, exact, areas, store, store_reader.scopes(), scope_field)
        only = None
        if anchor is not None:
            only = store_reader.anchored_to(lambda a: anchor_matches(anchor, a))
            if not only:
                return []
        expr = fts_query(query)
        filters = stores.Filters(exact, areas, kinds, include_superseded)
        if expr:
            ids = store_reader.rank(
                expr, task_ids(query), numbers(query), filters, limit, only=only
            )
        elif only is not None and not query.strip():
            ids = store_reader.newest(only, filters, limit)
        else:
            ids = []
        ids = _id_first(store_reader, query, ids, filters, only, limit)
        facts = store_reader.fetch(ids)
        extra = store_reader.details(ids)
    hits = [facts[i] for i in ids if i in facts]
    if recheck:
        from brainmigrate import fingerprints, stale

        checkouts = fingerprints.Checkouts(
            roots,
            cache_dir,
            few=FEW_FILES,
            base=store_base(store),
            recorded=stores.recorded_roots(Path(store)) if roots else (),
        )
        checks = stale.check_facts([f for f in hits if f.anchors], checkouts)
        for fc in checks:
            stale.mark(fc)
    return [Hit(f, hit_line(f), extra.get(f.id, {})) for f in hits]


def _require_scopes(
    scopes, exact, areas: bool, store, stored: Sequence[str], field: str = "--scope"
) -> None:
    """Raise ``UnknownScope`` for a scope of ``exact`` that no stored fact has, or a bare
    ``area`` in a store without ``area:*`` scopes: each one, as ``export`` refuses them (a
    typo beside a scope that exists would quietly narrow the hits)."""
    held = set(stored)
    missing = [s for s in exact if s not in held]
    if areas and not any(s.startswith("area:") for s in held):
        missing.append("area")
    if not missing:
        return
    from brainmigrate.stale import _no_scope

    raise UnknownScope(_no_scope(missing, store, stored, what="fact", field=field))


def _id_first(reader, query: str, ids: list[int], filters, only, limit: int) -> list[int]:
    """``ids`` with the fact ``query`` names first (``k12``: ``_FACT_ID``), when it is
    stored and ``filters`` (and ``only``, the anchored ids) keep it; at most ``limit``."""
    m = _FACT_ID.fullmatch(query.strip())
    if m is None:
        return ids
    number = int(m.group(1))
    if only is not None and number not in only:
        return ids
    rec = reader.fetch([number]).get(number)
    if rec is None or not _kept(rec, filters):
        return ids
    return [number, *(i for i in ids if i != number)][:limit]


def _kept(rec: FactRecord, filters) -> bool:
    """Whether ``stores.Filters`` keeps ``rec`` (as ``Reader.rank`` filters)."""
    if rec.status == "superseded" and not filters.superseded:
        return False
    if filters.kinds and rec.kind not in filters.kinds:
        return False
    if filters.scopes or filters.areas:
        return rec.scope in filters.scopes or (filters.areas and rec.scope.startswith("area:"))
    return True


def _require_roots(roots: Sequence[str | os.PathLike]) -> None:
    if roots:
        from brainmigrate import stale

        stale.require_roots(roots)


def _path_like(text: str) -> bool:
    from brainmigrate.codeindex.languages import EXTENSIONS

    if "/" in text or "\\" in text:
        return True
    ext = os.path.splitext(text)[1].lower()
    return bool(ext) and (ext in EXTENSIONS or ext in _DOC_EXTENSIONS)


def anchor_matches(text: str, a) -> bool:
    """Whether anchor ``a`` is what ``--anchor text`` names (SPEC.md §Staleness): a path
    whole or as its tail (``Foo.kt``, ``src/Foo.kt``); a symbol by name, ``Container.name``
    or with its package (``com.x.Foo``), a class also matching its members' anchors;
    ``path#Container.name`` both on the same anchor."""
    path, symbol = anchor_parts(text)
    if not (path or symbol):
        return False  # names nothing: matches nothing (the CLI refuses it first)
    if path and not (a.path == path or a.path.endswith("/" + path)):
        return False
    if not symbol:
        return True
    if a.target and a.target[0] not in ("file", "lines"):
        kind, container, name = a.target
        qual = (f"{container}." if container else "") + name
    elif a.symbol:
        qual = a.symbol
    else:
        return False
    q = qual.split(".")
    t = [p for p in symbol.replace("::", ".").split(".") if p]
    while len(t) > 1 and t[0][:1].islower():  # a package prefix
        t = t[1:]
    n = len(t)
    return any(q[i : i + n] == t for i in range(len(q) - n + 1))


@functools.lru_cache(maxsize=64)  # asked for every anchor of the store
def anchor_parts(text: str) -> tuple[str, str]:
    """``--anchor`` text as ``(path, symbol)``: ``path#symbol``, else a path-like text as a
    path, else a name; the path with ``/`` separators and no leading ``./``, the symbol
    with at least one name in it (``""`` when neither names anything, as ``#`` or ``.``)."""
    text = text.strip()
    path, sep, symbol = text.partition("#")
    if not sep:
        path, symbol = (text, "") if _path_like(text) else ("", text)
    path = path.strip().replace("\\", "/").removeprefix("./")
    if len(path) > 1:
        path = path.rstrip("/")  # a folder as it is cited, tools/legacy-import/
    symbol = symbol.strip()
    if not [p for p in symbol.replace("::", ".").split(".") if p]:
        symbol = ""
    return path, symbol


def hit_line(rec: FactRecord, width: int = LINE_WIDTH, stale_reason: str | None = None) -> str:
    """One compact line: ``id kind scope [SUPERSEDED] [STALE: reason]  text (task)``, about
    ``width`` characters at most (the text is cut with an ellipsis); every hit of the CLI,
    HTTP and MCP is this line. ``(task)`` is left out when the
    text already names the task. ``stale_reason`` overrides the stored status: a reason
    marks the fact STALE, ``""`` shows it fresh."""
    head = f"{rec.key} {rec.kind} {rec.scope}"
    if rec.status == "superseded":
        head += " SUPERSEDED"
    if stale_reason:
        head += f" STALE: {stale_reason}"
    elif stale_reason is None and rec.status == "stale":
        head += " STALE" + (f": {rec.status_reason}" if rec.status_reason else "")
    tail = f" ({rec.task})" if rec.task and rec.task not in rec.text else ""
    room = max(width - len(head) - 2 - len(tail), 20)
    text = shorten(rec.text, room, strip=True)
    return one_line(f"{head}  {text}{tail}")


def parse_id(value: str) -> int:
    """``k17`` or ``17`` -> 17. Raises ``NotFound`` for anything else, and for a number
    of more than 19 digits (no store holds one)."""
    m = _ID.fullmatch(value.strip())
    digits = m.group(1).lstrip("0") if m else ""
    if not digits:
        raise NotFound(f"{value!r} is not a fact id; give one like k17 or 17")
    if len(digits) > 19:  # a store's ids are SQLite integers (and int() stops at 4300 digits)
        raise NotFound(
            f"no fact k{shorten(digits, 24)}: a fact id has at most 19 digits;"
            " 'brainmigrate search' finds ids"
        )
    return int(digits)


def show(
    store: str | os.PathLike,
    fact_id: str,
    *,
    recheck: bool = True,
    cache_dir: str | os.PathLike | None = None,
    roots: Sequence[str | os.PathLike] = (),
) -> dict:
    """The whole fact ``fact_id`` (``k17`` or ``17``) as a dict: the §Report fact shape
    (anchors with ``root`` the checkout's path and their fingerprint) plus
    ``status_reason``, ``supersedes``, ``related``, ``gone``, ``imported``, ``updated`` and
    ``provenance``. With ``recheck`` its anchors are read again: a stale fact shows status
    ``stale`` with the reason, a fresh one ``active``, as the checkouts are now (``roots``
    instead of the recorded ones when given: ``--root``).

    Raises ``NotFound``, ``stale.RootError`` (a ``roots`` folder that does not exist) and
    ``stores.StoreError``.
    """
    path = Path(store)
    _require_roots(roots)
    number = parse_id(fact_id)
    with stores.reader(path) as store_reader:
        rec = store_reader.fetch([number]).get(number)
        if rec is None:
            raise NotFound(f"no fact k{number} in {path}; 'brainmigrate search' finds ids")
        extra = store_reader.details([number]).get(number, {})
    if recheck and rec.anchors:
        from brainmigrate import fingerprints, stale

        checkouts = fingerprints.Checkouts(
            roots,
            cache_dir,
            few=FEW_FILES,
            base=store_base(store),
            recorded=stores.recorded_roots(path) if roots else (),
        )
        stale.mark(stale.check_facts([rec], checkouts)[0])
    return fact_dict(rec, extra)


def render_fact(fact: dict) -> str:
    """``show``'s text form of ``fact_dict``: a header line, the text, then fields; each
    line ``escapes.one_line`` (a scope or a file name with a line break shows it as
    U+FFFD and forges no line)."""
    out = [f"{fact['id']} {fact['kind']} {fact['scope']} ({fact['status']})"]
    out.append(f"  {fact['text']}")
    if fact["status_reason"]:
        out.append(f"status: {fact['status']}: {fact['status_reason']}")
    out.append(f"marker: {fact['marker']}")
    for key in ("task", "run", "created", "imported", "updated"):
        out.append(f"{key}: {fact[key] if fact[key] is not None else '-'}")
    origin = fact["origin"]  # the line that fed it most recently (docs/reference.md "The store")
    out.append(f"origin: {origin['file']}:{origin['line']}" if origin else "origin: -")
    for key in ("supersedes", "related"):
        if fact[key]:
            out.append(f"{key}: {', '.join(fact[key])}")
    out.append(f"anchors: {len(fact['anchors'])}")
    for a in fact["anchors"]:
        where = a["path"] + ("/" if a["kind"] == "folder" else "")  # as a folder is cited
        if a["lines"]:
            first, last = a["lines"]
            where += f":{first}" if first == last else f":{first}-{last}"
        what = f"{a['symbol']} in {where}" if a["symbol"] else where
        out.append(f"  {a['kind']} {what} ({a['how']}; root {a['root']})")
        if a["fingerprinted"]:
            commit = a["commit"] or "no git commit"
            what = " (a folder: its existence only)" if a["kind"] == "folder" else ""
            out.append(f"    fingerprinted {a['verified_at']} at {commit}{what}")
        else:
            out.append("    not fingerprinted (only checked to exist)")
    if fact["gone"]:
        out.append(f"citing gone files: {len(fact['gone'])}")
        out.extend(f"  {p}" for p in fact["gone"])
    out.append(f"provenance: {len(fact['provenance'])}")
    for p in fact["provenance"]:
        out.append(f"  {p['file']}:{p['line']} (imported {p['imported']})")
    return "".join(one_line(line) + "\n" for line in out)  # a name forges no line
