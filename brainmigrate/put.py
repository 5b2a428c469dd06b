"""Write one fact, or a few, into the store: ``put`` (the seed's "Writing: one fact once").

A fact put is merged by the repeat rule (SPEC.md §Merge) against the stored facts of its
scope: a near-identical one is updated (text and source replaced, links and anchors added
up, id and creation time kept), else the fact is added. Its anchors are resolved in the
roots, never outside them (``putanchors``), and fingerprinted with ``verify`` (SPEC.md
§Staleness). Every fact of one call is written in one transaction under the store's write
lock: a bad fact, an id that does not exist or an anchor outside every root writes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from brainmigrate.errors import BrainmigrateError
from brainmigrate.model import KINDS

#: The longest text a fact may have, in characters after white space is folded (the
#: seed's "at most 2000 characters").
MAX_TEXT = 2000
#: The most facts one call writes (``{"facts": [...]}``, ``put --json``).
MAX_BATCH = 1000
#: The longest scope, task, run, root or anchor text, in characters.
MAX_FIELD = 1000
#: The marker a fact put is stored with, by kind (as an import reads the markers,
#: SPEC.md §Notation; ``-`` for ``other``: no brain marker means it).
MARKER_OF = {"decision": "~", "pattern": "+", "blocker": "!", "environment": "=", "other": "-"}
#: Scopes a put takes (the seed's "A fact" table): ``repo``, or a prefix and a name.
SCOPE_PREFIXES = ("area:", "file:", "symbol:", "task:")
#: The keys of a fact object and of an anchor object in JSON (the seed's ``POST /know``).
FACT_KEYS = (
    "scope", "text", "kind", "task", "run", "root", "anchors", "supersedes", "related", "verify",
)  # fmt: skip
ANCHOR_KEYS = ("path", "symbol", "root")


class PutError(BrainmigrateError):
    """A fact that cannot be written as given (empty or too long text, unknown kind, an id
    that does not exist, an anchor outside every root); the message names the field
    (``facts[2].kind``) and the fix. Nothing was written."""


@dataclass(frozen=True, slots=True)
class AnchorText:
    """One anchor as a caller gives it: a ``path``, a ``symbol`` or both; ``root`` the
    checkout it belongs to (None: the fact's root, else the put's roots in order)."""

    path: str | None = None
    symbol: str | None = None
    root: str | None = None

    @classmethod
    def from_text(cls, text: str, root: str | None = None) -> AnchorText:
        """``src/Foo.kt``, ``src/Foo.kt#Foo.parse`` or ``Foo.parse``: a path when it has a
        ``/`` or a known extension, as ``search --anchor`` reads it (``search.anchor_parts``)."""
        from brainmigrate.search import anchor_parts

        path, symbol = anchor_parts(text)
        return cls(path or None, symbol or None, root)


@dataclass(frozen=True, slots=True)
class NewFact:
    """A fact to put: ``text`` (one line once white space is folded, at most ``MAX_TEXT``
    characters), ``scope`` (``repo``, ``area:x``, ``file:src/Foo.kt``,
    ``symbol:src/Foo.kt#Foo.parse``, ``task:TER-12``), ``kind`` (one of ``model.KINDS``;
    None: ``other`` for a new fact, the stored kind kept by an update), ``task`` and ``run``
    (its source), ``anchors``, ``supersedes`` and ``related`` (fact
    ids, ``k17`` or ``17``), ``verify`` (fingerprint the anchors now) and ``root`` (the
    checkout its anchors belong to, one of the put's roots). ``where`` prefixes every
    message about it (``facts[2].``)."""

    text: str
    scope: str
    kind: str | None = None
    task: str | None = None
    run: str | None = None
    anchors: tuple[AnchorText, ...] = ()
    supersedes: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    verify: bool = False
    root: str | None = None
    where: str = ""


@dataclass(frozen=True, slots=True)
class Answer:
    """What a put did to one fact: ``action`` ``added`` or ``updated``, the fact as
    ``show`` gives it (``shapes.fact_dict``), ``replaced`` how many facts its
    ``supersedes`` took out of search (active before, superseded now), and ``line`` its
    search line (``search.hit_line``)."""

    action: str
    fact: dict
    replaced: int
    line: str

    def to_dict(self) -> dict:
        """``{"action", "fact", "replaced"}`` (the seed's HTTP answer)."""
        return {"action": self.action, "fact": self.fact, "replaced": self.replaced}


# ------------------------------------------------------------------------------ JSON


def from_json(value) -> list[NewFact]:
    """The facts of a decoded JSON body: one fact object ``{"scope", "text", "kind",
    "task", "run", "root", "anchors": [{"path", "symbol", "root"} or "text"],
    "supersedes", "related", "verify"}`` (the seed's ``POST /know``) or ``{"facts":
    [...]}`` (1 to ``MAX_BATCH``). Raises ``PutError`` naming the field (``facts[2].kind:
    …``) for a wrong type, an unknown key, a missing ``scope`` or ``text``."""
    if isinstance(value, dict) and "facts" in value:
        if len(value) != 1:
            raise PutError('give {"facts": [...]} alone, or one fact object, not both')
        items = value["facts"]
        if not isinstance(items, list):
            raise PutError("facts: must be a list of fact objects")
        if not 1 <= len(items) <= MAX_BATCH:
            raise PutError(f"facts: give 1 to {MAX_BATCH} facts, not {len(items)}")
        return [_fact(item, f"facts[{i}].") for i, item in enumerate(items)]
    return [_fact(value, "")]


def _fact(obj, where: str) -> NewFact:
    if not isinstance(obj, dict):
        what = where.rstrip(".") or "the JSON"
        raise PutError(f'{what}: must be a fact object ({{"scope": …, "text": …}})')
    unknown = sorted(k for k in obj if k not in FACT_KEYS)
    if unknown:
        raise PutError(f"{where}{unknown[0]}: no such field; a fact has {', '.join(FACT_KEYS)}")
    for key in ("scope", "text"):
        if key not in obj:
            raise PutError(f"{where}{key}: missing; a fact needs scope and text")
    verify = obj.get("verify", False)
    if not isinstance(verify, bool):
        raise PutError(f"{where}verify: must be true or false")
    root = _string(obj, "root", where)
    anchors = obj.get("anchors", [])
    if not isinstance(anchors, list):
        raise PutError(f"{where}anchors: must be a list of anchors")
    return NewFact(
        text=_string(obj, "text", where) or "",
        scope=_string(obj, "scope", where) or "",
        kind=_string(obj, "kind", where),
        task=_string(obj, "task", where),
        run=_string(obj, "run", where),
        anchors=tuple(_anchor(a, f"{where}anchors[{i}]") for i, a in enumerate(anchors)),
        supersedes=_ids(obj, "supersedes", where),
        related=_ids(obj, "related", where),
        verify=verify,
        root=root,
        where=where,
    )


def _string(obj: dict, key: str, where: str) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise PutError(f"{where}{key}: must be text")
    return value


def _anchor(value, where: str) -> AnchorText:
    if isinstance(value, str):
        return AnchorText.from_text(value[: MAX_FIELD + 1])
    if not isinstance(value, dict):
        raise PutError(f'{where}: must be text or {{"path", "symbol", "root"}}')
    unknown = sorted(k for k in value if k not in ANCHOR_KEYS)
    if unknown:
        raise PutError(f"{where}.{unknown[0]}: no such field; an anchor has path, symbol, root")
    path, symbol, root = (_string(value, k, f"{where}.") for k in ANCHOR_KEYS)
    if not (path or symbol):
        raise PutError(f"{where}: give a path, a symbol or both")
    return AnchorText(path, symbol, root)


def _ids(obj: dict, key: str, where: str) -> tuple[str, ...]:
    value = obj.get(key, [])
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not all(
        isinstance(v, (str, int)) and not isinstance(v, bool) for v in value
    ):
        raise PutError(f"{where}{key}: must be a list of fact ids (k17 or 17)")
    if len(value) > MAX_BATCH:
        raise PutError(f"{where}{key}: at most {MAX_BATCH} ids")
    return tuple(str(v) for v in value)


# ------------------------------------------------------------------------------ checks


@dataclass(frozen=True, slots=True)
class Checked:
    """A ``NewFact`` whose values were checked: ``text`` folded, ``tasks`` the task ids
    of the text and ``task`` (the merge rule's set), ``supersedes``/``related`` as ids."""

    fact: NewFact
    text: str
    task: str | None
    tasks: frozenset[str]
    supersedes: tuple[int, ...]
    related: tuple[int, ...]


def check(fact: NewFact) -> Checked:
    """``fact``'s values checked and normalized; raises ``PutError`` naming the field."""
    from brainmigrate.read.facts import TaskIds
    from brainmigrate.search import NotFound, parse_id

    w = fact.where
    text = " ".join(fact.text.split())
    if not text:
        raise PutError(f"{w}text: empty; give the fact as one line of text")
    if len(text) > MAX_TEXT:
        raise PutError(
            f"{w}text: {len(text)} characters, more than {MAX_TEXT}; state the fact shorter"
            " or split it"
        )
    _plain(text, f"{w}text")
    if fact.kind is not None and fact.kind not in KINDS:
        raise PutError(f"{w}kind: {fact.kind!r} is not a kind; give one of {', '.join(KINDS)}")
    check_scope(fact.scope, f"{w}scope")
    for key in ("task", "run", "root"):
        value = getattr(fact, key)
        if value is not None:
            if not value.strip():
                raise PutError(f"{w}{key}: empty; leave it out or give a value")
            _plain(value, f"{w}{key}", MAX_FIELD)
    for i, a in enumerate(fact.anchors):
        for key in ANCHOR_KEYS:
            value = getattr(a, key)
            if value is not None:
                _plain(value, f"{w}anchors[{i}].{key}", MAX_FIELD)
    tasks = TaskIds().all(text)
    task = fact.task.strip() if fact.task else (tasks[0] if tasks else None)
    ids: dict[str, tuple[int, ...]] = {}
    for key in ("supersedes", "related"):
        try:
            ids[key] = tuple(dict.fromkeys(parse_id(v) for v in getattr(fact, key)))
        except NotFound as exc:
            raise PutError(f"{w}{key}: {exc}") from None
        big = next((i for i in ids[key] if i >= 1 << 63), None)  # past SQLite's integers
        if big is not None:
            raise PutError(
                f"{w}{key}: no fact k{big} in the store; 'brainmigrate search' finds ids"
            )
    every = frozenset(tasks) | ({task} if task else set())
    return Checked(fact, text, task, every, ids["supersedes"], ids["related"])


def check_scope(scope: str, where: str = "scope") -> None:
    """Raise ``PutError`` unless ``scope`` is ``repo`` or ``area:``, ``file:``,
    ``symbol:`` or ``task:`` and a name (the seed's "A fact" table)."""
    _plain(scope, where, MAX_FIELD)
    if scope != "repo" and not (
        scope.startswith(SCOPE_PREFIXES) and scope.partition(":")[2].strip()
    ):
        raise PutError(
            f"{where}: {scope!r} is no scope; give repo, area:NAME, file:PATH,"
            " symbol:[PATH#]NAME or task:ID"
        )
    if scope != scope.strip():
        raise PutError(f"{where}: {scope!r} starts or ends with white space")
    if "," in scope:  # search --scope splits at commas: such a scope could never be chosen
        raise PutError(f"{where}: {scope!r} holds a comma; give one scope, without commas")


def _plain(value: str, where: str, most: int | None = None) -> None:
    """Raise ``PutError`` for text too long, or holding a control character or a line
    break (a field of a fact is one line)."""
    if most is not None and len(value) > most:
        raise PutError(f"{where}: {len(value)} characters, more than {most}")
    bad = next((c for c in value if ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        raise PutError(f"{where}: holds the control character U+{ord(bad):04X}; give one line")
    if any("\ud800" <= c <= "\udfff" for c in value):
        raise PutError(f"{where}: holds bytes that are not UTF-8 text; give it in UTF-8")


# ------------------------------------------------------------------------------ put


def put(
    store: str | os.PathLike,
    facts: Sequence[NewFact],
    *,
    roots: Sequence[str | os.PathLike] = (),
    cache_dir: str | os.PathLike | None = None,
) -> list[Answer]:
    """Put ``facts`` into the store at ``store`` (created when missing) in one transaction;
    one ``Answer`` per fact, in order. ``roots``: the checkouts anchors are resolved in
    (default: the current folder). A later fact of the same call may update an earlier
    one (the merge rule reads them in order). Raises ``PutError`` (nothing written),
    ``stores.StoreError`` (``stores.StoreBusy`` when another writer held the store past
    the busy timeout) and ``stale.RootError`` for a root that is no folder."""
    from brainmigrate import putanchors, stores
    from brainmigrate.merge.rule import Stems
    from brainmigrate.merge.run import fts_words
    from brainmigrate.search import hit_line
    from brainmigrate.shapes import fact_dict
    from brainmigrate.stale import RootError, require_roots

    if not facts:
        raise PutError("no fact to put")
    store_path = Path(store)
    require_roots(roots)
    checked = [check(f) for f in facts]
    stores.check_writable(store_path)
    try:
        place = putanchors.Places(roots, store_path, cache_dir)
    except BrainmigrateError as exc:
        raise RootError(str(exc)) from None
    placed = place.anchors(checked)  # outside the lock: reads checkouts
    checked = [
        c if scope == c.fact.scope else replace(c, fact=replace(c.fact, scope=scope))
        for c, (scope, _, _) in zip(checked, placed, strict=True)
    ]
    resolved = [(anchors, gone) for _, anchors, gone in placed]
    stems = Stems()
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def plan(stored):
        from brainmigrate import putmerge

        done = putmerge.merge(stored, checked, resolved, stems, now)
        if any(c.fact.verify for c in checked):
            place.fingerprint(
                [rec for rec, c in zip(done.records, checked, strict=True) if c.fact.verify]
            )
        return done.written(), done

    done = stores.transact(store_path, plan, fts_words(stems), now, place.recorded())
    ids = [rec.id for rec in done.records]
    with stores.reader(store_path) as reader:  # the facts as written, as show gives them
        written, extra = reader.fetch(ids), reader.details(ids)
    return [
        Answer(action, fact_dict(written[i], extra.get(i, {})), replaced, hit_line(written[i]))
        for i, action, replaced in zip(ids, done.actions, done.replaced, strict=True)
    ]


def decode_json(data: bytes, name: str = "the body"):
    """The JSON value ``data`` holds (UTF-8), for ``from_json``. Raises ``PutError`` with
    ``name:line:col`` for bytes that are not UTF-8, not JSON, nested more than
    ``inputs.MAX_DEPTH`` deep or holding an integer too long to read."""
    import json

    from brainmigrate import inputs

    try:
        text = data.decode("utf-8").removeprefix("\ufeff")  # (a BOM an editor wrote)
    except UnicodeDecodeError as exc:
        raise PutError(f"{name}: not UTF-8 (byte {exc.start + 1}); send JSON in UTF-8") from None
    fault = inputs.structure_fault(text, "json")
    try:
        if fault is None:
            return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PutError(f"{name}:{exc.lineno}:{exc.colno}: not JSON ({exc.msg})") from None
    except (ValueError, RecursionError):
        fault = inputs.structure_fault(text, "json", numbers=True)
        if fault is None:
            raise PutError(f"{name}: not JSON") from None
    line, col, reason = fault
    raise PutError(f"{name}:{line}:{col}: {reason}")
