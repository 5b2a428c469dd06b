"""``know.db``: the embedded fact store, SQLite with FTS5 (SPEC.md §Store). Callers outside
this package use these names only.

Tables: ``facts`` (one row per fact, id ``k<id>``), ``anchors``, ``citations`` (gone
paths), ``provenance`` (every notes file and line that fed a fact, with the line's
fingerprint and when it was imported), ``facts_fts`` (FTS5 over the stemmed words of
text, scope, kind and task; rowid = fact id) and ``meta``.

One owner per concern: ``schema`` (the tables, versions and upgrades), ``connection``
(opening a store and the one translation of SQLite's errors), ``rows`` (what a row may
hold), ``facts`` (reading facts from an open connection), ``queries`` (the ``Reader``,
with search's ``Filters``), ``merging`` (the store as an import merges against it,
``Stored``), ``importing`` (the import's one write transaction) and ``status`` (the
status updater of ``stale`` and ``verify``).

Reading: ``reader(path)`` (search, show, stale, export), ``load(path)`` (the whole store),
``reading(path)`` (a dry run's merge). Writing: ``transact``/``write`` (an import),
``updating(path)`` (statuses and fingerprints). Every error is a ``StoreError``.

The names are loaded when first used, so that importing this package loads no sqlite3
(a plain ``check`` never opens a store).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

#: Each public name -> the module of the package that holds it.
_HOME = {
    "StoreError": "errors",
    "StoreBusy": "errors",
    "prepare": "importing",
    "check_writable": "connection",
    "require": "connection",
    "Snapshot": "facts",
    "Filters": "queries",
    "Reader": "queries",
    "reader": "queries",
    "recorded_roots": "queries",
    "load": "queries",
    "Stored": "merging",
    "reading": "merging",
    "transact": "importing",
    "write": "importing",
    "Updater": "status",
    "updating": "status",
}

__all__ = [
    "Filters",
    "Reader",
    "Snapshot",
    "StoreBusy",
    "StoreError",
    "Stored",
    "Updater",
    "check_writable",
    "load",
    "prepare",
    "reader",
    "reading",
    "recorded_roots",
    "require",
    "transact",
    "updating",
    "write",
]

if TYPE_CHECKING:
    from brainmigrate.stores.connection import check_writable, require
    from brainmigrate.stores.errors import StoreBusy, StoreError
    from brainmigrate.stores.facts import Snapshot
    from brainmigrate.stores.importing import prepare, transact, write
    from brainmigrate.stores.merging import Stored, reading
    from brainmigrate.stores.queries import Filters, Reader, load, reader
    from brainmigrate.stores.status import Updater, updating


def __getattr__(name: str):
    """A public name, from the module that holds it (loaded on first use)."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # asked once
    return value
