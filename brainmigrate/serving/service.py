"""What the HTTP daemon and the MCP server ask of the store, in one place (``Service``).

Every method takes what a request carries (query parameters as text, a decoded JSON
body, an id as text), checks it, calls the library once and returns JSON-able values:
the seed's shapes (``{"hits": [{"fact", "line"}]}``, ``{"action", "fact", "replaced"}``,
``{"checked", "unreachable", "stale": [hits]}``). A request that cannot be answered
raises ``ServiceError`` with the HTTP status that says why (400 bad input, 404 no such
fact, 409 an anchor is gone, 503 the store is busy) and a one-line reason.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from brainmigrate.errors import BrainmigrateError
from brainmigrate.model import KINDS

#: How long a client is told to wait before it tries a put again (seconds, 503 Retry-After).
RETRY_AFTER = 1


class ServiceError(BrainmigrateError):
    """A request the service refuses: ``status`` is the HTTP status (400, 404, 409, 500,
    503), the message one line; ``retry_after`` (seconds) for a 503."""

    def __init__(self, status: int, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


def _values(params: Mapping, name: str) -> list[str]:
    """Every value of query parameter ``name`` (a ``MultiDict``'s ``getlist`` or a plain
    mapping's one value), comma-separated parts split."""
    getlist = getattr(params, "getlist", None)
    raw = getlist(name) if getlist is not None else [params[name]] if name in params else []
    out = []
    for value in raw:
        if not isinstance(value, str):
            raise ServiceError(400, f"{name}: must be text")
        out.extend(p.strip() for p in value.split(",") if p.strip())
    return out


def _one(params: Mapping, name: str) -> str | None:
    values = _values(params, name) if name != "q" else None
    if name == "q":
        getlist = getattr(params, "getlist", None)
        raw = getlist(name) if getlist is not None else [params[name]] if name in params else []
        if len(raw) > 1:
            raise ServiceError(400, "q: give it once")
        if raw and not isinstance(raw[0], str):
            raise ServiceError(400, "q: must be text")
        return raw[0] if raw else None
    if values is not None and len(values) > 1:
        raise ServiceError(400, f"{name}: give it once")
    return values[0] if values else None


class Service:
    """The store at ``store`` served: ``roots`` are the checkouts anchors are read in
    (``--root``; none: the roots recorded with them), ``cache_dir`` the caches' folder."""

    def __init__(
        self,
        store: str | os.PathLike,
        roots: Sequence[str | os.PathLike] = (),
        cache_dir: str | os.PathLike | None = None,
    ) -> None:
        self.store = Path(store)
        self.roots = [os.fspath(r) for r in roots]
        self.cache_dir = cache_dir
        # the store was there once: gone later, it was moved or removed while served, and
        # a put must not make a new, empty one (the facts would split between two files)
        self._held_once = self.store.exists()

    def search(self, params: Mapping) -> dict:
        """``GET /know/search``: ``q`` and/or ``anchor`` (one is required), ``scope`` and
        ``kind`` (repeated or comma-separated), ``limit`` (1..30, default 5), ``all``
        (``1``/``true``: superseded facts too). Returns ``{"hits": [{"fact", "line"}]}``,
        best first."""
        from brainmigrate import search

        query = _one(params, "q") or ""
        anchor = _one(params, "anchor")
        if not query.strip() and anchor is None:
            raise ServiceError(400, "give q (the question), or anchor, or both")
        if anchor is not None and search.anchor_parts(anchor) == ("", ""):
            raise ServiceError(
                400,
                f"anchor {anchor!r} names no file or declaration; give a path (src/Foo.kt),"
                " a name (Foo.start) or both (src/Foo.kt#Foo.start)",
            )
        kinds = _values(params, "kind")
        for k in kinds:
            if k not in KINDS:
                raise ServiceError(400, f"kind {k!r} is not one of {', '.join(KINDS)}")
        limit_text = _one(params, "limit")
        limit = search.DEFAULT_LIMIT
        if limit_text is not None:
            digits = limit_text.isascii() and limit_text.isdigit()  # ("²" is a digit too)
            if not digits or not 1 <= int(limit_text) <= search.MAX_LIMIT:
                raise ServiceError(
                    400, f"limit {limit_text!r} is not a number from 1 to {search.MAX_LIMIT}"
                )
            limit = int(limit_text)
        every = (_one(params, "all") or "").lower() in ("1", "true", "yes")
        hits = self._guard(
            lambda: search.search(
                self.store,
                query,
                _values(params, "scope"),
                kinds,
                limit,
                every,
                anchor=anchor,
                cache_dir=self.cache_dir,
                roots=self.roots,
                scope_field="scope",  # HTTP's query parameter, MCP's argument
            )
        )
        return {"hits": [h.to_dict() for h in hits]}

    def search_lines(self, params: Mapping) -> list[str]:
        """``search``'s hits as their lines (the MCP tool's answer, the CLI's text)."""
        return [h["line"] for h in self.search(params)["hits"]]

    def put(self, body) -> dict:
        """``POST /know``: ``body`` one fact object or ``{"facts": [...]}`` (``put.from_json``).
        One fact answers ``{"action", "fact", "replaced"}``; a list ``{"answers": [...]}``
        in order. All are written in one transaction or none."""
        answers = self.put_answers(body)
        if isinstance(body, dict) and "facts" in body:
            return {"answers": [a.to_dict() for a in answers]}
        return answers[0].to_dict()

    def put_answers(self, body) -> list:
        """``put``'s answers as ``put.Answer``s, each with its search ``line`` (what the
        MCP tool answers); the same checks and ``ServiceError``s as ``put``."""
        from brainmigrate import put

        if self._held_once and not self.store.exists():  # (a put would make a new one)
            raise ServiceError(
                500,
                f"{self.store}: the store is gone (moved or removed while served); put it"
                " back or start serving again",
            )
        try:
            facts = put.from_json(body)
        except put.PutError as exc:
            raise ServiceError(400, str(exc)) from None
        answers = self._guard(
            lambda: put.put(self.store, facts, roots=self.roots, cache_dir=self.cache_dir)
        )
        self._held_once = True
        return answers

    def show(self, fact_id: str) -> dict:
        """``GET /know/{id}``: the fact as ``brainmigrate show --format json`` gives it."""
        from brainmigrate import search

        return self._guard(
            lambda: search.show(self.store, fact_id, cache_dir=self.cache_dir, roots=self.roots)
        )

    def stale(self) -> dict:
        """``GET /know/stale``: every anchored active fact read again (a dry run: nothing is
        recorded, a GET changes nothing); ``{"checked", "unreachable", "stale": [hits]}``,
        each hit's line marked STALE with its reason."""
        from brainmigrate import search, stale
        from brainmigrate.search import Hit

        def work() -> dict:
            result = stale.stale(
                self.store, self.roots, dry_run=True, cache_dir=self.cache_dir, every=True
            )
            found = [fc for fc in result.facts if fc.stale]
            extra = {}
            if found:
                from brainmigrate import stores

                with stores.reader(self.store) as reader:
                    extra = reader.details([fc.fact.id for fc in found])
            hits = []
            for fc in found:
                stale.mark(fc)
                hits.append(Hit(fc.fact, search.hit_line(fc.fact), extra.get(fc.fact.id, {})))
            return {
                "checked": result.checked,
                "unreachable": result.unreachable,
                "stale": [h.to_dict() for h in hits],
            }

        return self._guard(work)

    def verify(self, fact_id: str) -> dict:
        """``POST /know/{id}/verify``: fingerprint the fact's anchors now; returns the fact
        as ``show`` gives it after. 409 with the reason when an anchor is gone."""
        from brainmigrate import search, stale

        def work() -> dict:
            number = search.parse_id(fact_id)
            result = stale.verify(self.store, [number], roots=self.roots, cache_dir=self.cache_dir)
            if number in result.refused:
                raise ServiceError(409, f"k{number}: {result.refused[number]}")
            return search.show(self.store, f"k{number}", cache_dir=self.cache_dir, roots=self.roots)

        return self._guard(work)

    def _guard(self, work):
        """``work()``, with the library's errors as ``ServiceError``s."""
        from brainmigrate import put, search, stale, stores

        try:
            return work()
        except ServiceError:
            raise
        except search.NotFound as exc:
            raise ServiceError(404, str(exc)) from None
        except (put.PutError, ValueError) as exc:
            raise ServiceError(400, str(exc)) from None
        except stale.VerifyError as exc:
            raise ServiceError(404 if "no fact" in str(exc) else 400, str(exc)) from None
        except stores.StoreBusy as exc:
            raise ServiceError(503, str(exc), RETRY_AFTER) from None
        except (stores.StoreError, stale.RootError) as exc:
            raise ServiceError(500, str(exc)) from None
