"""Write one fact, or a few, into the store: ``put`` (the seed's "Writing: one fact once").

A fact put is merged by the repeat rule (SPEC.md §Merge) against the stored facts of its
scope: a near-identical one is updated (text and source replaced, links and anchors added
up, id and creation time kept), else the fact is added. Its anchors are resolved in the
roots, never outside them, and fingerprinted with ``verify`` (SPEC.md §Staleness).
Every fact of one call is written in one transaction under the store's write lock: a bad
fact, an id that does not exist or an anchor outside every root writes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from brainmigrate.errors import BrainmigrateError

#: The longest text a fact may have, in characters after white space is folded.
MAX_TEXT = 2000


class PutError(BrainmigrateError):
    """A fact that cannot be written as given (empty or too long text, unknown kind, an id
    that does not exist, an anchor outside every root); the message names the field
    (``facts[2].kind``) and the fix. Nothing was written."""


@dataclass(frozen=True, slots=True)
class AnchorText:
    """One anchor as a caller gives it: a ``path``, a ``symbol`` or both (``path#symbol``
    as one text is split by ``from_text``); ``root`` the checkout it belongs to (None: the
    put's roots, in order)."""

    path: str | None = None
    symbol: str | None = None
    root: str | None = None


@dataclass(frozen=True, slots=True)
class NewFact:
    """A fact to put: ``text`` (one line once white space is folded, at most ``MAX_TEXT``
    characters), ``scope`` (``repo``, ``area:x``, ``file:src/Foo.kt``,
    ``symbol:src/Foo.kt#Foo.parse``, ``task:TER-12``), ``kind`` (one of ``model.KINDS``),
    ``task`` and ``run`` (its source), ``anchors``, ``supersedes`` and ``related`` (fact
    ids, ``k17`` or ``17``), ``verify`` (fingerprint the anchors now) and ``root`` (the
    checkout its paths belong to, before the call's roots)."""

    text: str
    scope: str
    kind: str = "other"
    task: str | None = None
    run: str | None = None
    anchors: tuple[AnchorText, ...] = ()
    supersedes: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    verify: bool = False
    root: str | None = None


@dataclass(frozen=True, slots=True)
class Answer:
    """What a put did to one fact: ``action`` ``added`` or ``updated``, the fact as
    ``show`` gives it (``shapes.fact_dict``), ``replaced`` how many facts its
    ``supersedes`` took out of search (made superseded by this put), and ``line`` its
    search line (``search.hit_line``)."""

    action: str
    fact: dict
    replaced: int
    line: str

    def to_dict(self) -> dict:
        """``{"action", "fact", "replaced"}`` (the seed's HTTP answer)."""
        return {"action": self.action, "fact": self.fact, "replaced": self.replaced}


def from_json(value) -> list[NewFact]:
    """The facts of a decoded JSON body: one fact object ``{"scope", "text", "kind",
    "task", "run", "root", "anchors": [{"path", "symbol", "root"} or "text"],
    "supersedes", "related", "verify"}`` or ``{"facts": [...]}`` (1 to ``MAX_BATCH``).
    Raises ``PutError`` naming the field (``facts[2].kind: …``) for a wrong type, an
    unknown key, a missing ``scope`` or ``text``."""
    raise NotImplementedError


def put(
    store: str | os.PathLike,
    facts: Sequence[NewFact],
    *,
    roots: Sequence[str | os.PathLike] = (),
    cache_dir: str | os.PathLike | None = None,
) -> list[Answer]:
    """Put ``facts`` into the store at ``store`` (created when missing) in one transaction;
    one ``Answer`` per fact, in order. ``roots``: the checkouts anchors are resolved in
    (default: the current folder). Raises ``PutError`` (nothing written),
    ``stores.StoreError`` (``stores.StoreBusy`` when another writer held the store past
    the busy timeout) and ``stale.RootError`` for a root that is no folder."""
    raise NotImplementedError
