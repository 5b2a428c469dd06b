"""The store's schema, the versions this one reads and the upgrades between them
(SPEC.md §Store).

``PRAGMA user_version`` holds the schema version: 2 adds each anchor's fingerprint
(``verified_commit``, ``target_*``, ``content_hash`` beside the digest and time columns
version 1 already had, SPEC.md §Staleness). A version-1 store is upgraded in place, in the
transaction of the first command that writes it (``upgrade``); read-only commands read it
as it is (its anchors without fingerprints).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from brainmigrate.stores.errors import Inconsistent, StoreError, inconsistent

if TYPE_CHECKING:
    import sqlite3


#: The store's schema version (``PRAGMA user_version``); older stores are upgraded on
#: their first write, newer ones refused. One version name per document: ``STORE_SCHEMA``,
#: ``reports.IMPORT_SCHEMA``, ``rules.CHECK_SCHEMA``, ``stale.STALE_SCHEMA``.
STORE_SCHEMA = 2
#: Versions this one reads (and upgrades when it writes).
READS = (1, 2)
APPLICATION = "brainmigrate"


SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE facts (
    id INTEGER PRIMARY KEY,
    scope TEXT NOT NULL,
    kind TEXT NOT NULL,
    marker TEXT NOT NULL,
    text TEXT NOT NULL,
    task TEXT,
    run TEXT,
    created TEXT,
    status TEXT NOT NULL DEFAULT 'active',
    status_reason TEXT,
    supersedes TEXT NOT NULL DEFAULT '[]',
    related TEXT NOT NULL DEFAULT '[]',
    stems TEXT NOT NULL,
    numbers TEXT NOT NULL,
    tasks TEXT NOT NULL,
    imported TEXT NOT NULL,
    updated TEXT NOT NULL
);
CREATE INDEX facts_scope ON facts (scope);
CREATE TABLE anchors (
    fact_id INTEGER NOT NULL REFERENCES facts (id),
    kind TEXT NOT NULL,
    root TEXT NOT NULL,
    path TEXT NOT NULL,
    symbol TEXT NOT NULL DEFAULT '',
    line_first INTEGER,
    line_last INTEGER,
    how TEXT NOT NULL,
    signature_digest TEXT,
    body_digest TEXT,
    verified_at TEXT,
    verified_commit TEXT,
    target_kind TEXT,
    target_container TEXT,
    target_name TEXT,
    content_hash TEXT,
    PRIMARY KEY (fact_id, root, path, symbol)
);
CREATE INDEX anchors_path ON anchors (path);
CREATE TABLE citations (
    fact_id INTEGER NOT NULL REFERENCES facts (id),
    state TEXT NOT NULL,
    path TEXT NOT NULL,
    PRIMARY KEY (fact_id, state, path)
);
CREATE TABLE provenance (
    fact_id INTEGER NOT NULL REFERENCES facts (id),
    file TEXT NOT NULL,
    line INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    imported TEXT NOT NULL,
    PRIMARY KEY (fact_id, file, line, fingerprint)
);
CREATE INDEX provenance_fingerprint ON provenance (fingerprint);
CREATE VIRTUAL TABLE facts_fts USING fts5 (words, tokenize = 'unicode61');
"""


#: The tables of every store version this one reads.
_TABLES = ("meta", "facts", "anchors", "citations", "provenance", "facts_fts")


def check_schema(con: sqlite3.Connection, path: Path) -> None:
    """Raise ``StoreError`` unless ``con`` holds a new, empty file (version 0, no table)
    or a brainmigrate store of a version in ``READS`` with every table it has; the
    message names the file ``path`` and the fix. Raises ``sqlite3.Error`` when it cannot
    be read."""
    version = con.execute("PRAGMA user_version").fetchone()[0]
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if version < 0:
        raise StoreError(
            f"{path} has schema version {version}, which no brainmigrate writes; "
            "restore a backup, or import the notes into a new store"
        )
    if version > STORE_SCHEMA:
        raise StoreError(
            f"{path} was written by a newer brainmigrate (schema {version}, this one reads "
            f"{STORE_SCHEMA}); upgrade brainmigrate"
        )
    if version == 0 and tables:
        raise StoreError(
            f"{path} is an SQLite file but not a brainmigrate store; "
            "move it away or pass --store with another path"
        )
    if version in READS:
        if "meta" in tables:
            app = con.execute("SELECT value FROM meta WHERE key='application'").fetchone()
        if "meta" not in tables or not app or app[0] != APPLICATION:
            raise StoreError(f"{path} is not a brainmigrate store; pass --store with another path")
        lost = [t for t in _TABLES if t not in tables]
        if lost:
            raise inconsistent(path, Inconsistent(f"table {lost[0]} is missing"))


#: What turns a store of version ``v`` into one of version ``v + 1``.
_UPGRADES = {
    1: (
        "ALTER TABLE anchors ADD COLUMN verified_commit TEXT",
        "ALTER TABLE anchors ADD COLUMN target_kind TEXT",
        "ALTER TABLE anchors ADD COLUMN target_container TEXT",
        "ALTER TABLE anchors ADD COLUMN target_name TEXT",
        "ALTER TABLE anchors ADD COLUMN content_hash TEXT",
    ),
}


def upgrade(con: sqlite3.Connection) -> None:
    """Bring the store to ``STORE_SCHEMA`` inside the caller's open write transaction
    (so a failure later in it rolls the upgrade back too)."""
    version = con.execute("PRAGMA user_version").fetchone()[0]
    while version < STORE_SCHEMA:
        for statement in _UPGRADES[version]:
            con.execute(statement)
        version += 1
        con.execute(f"PRAGMA user_version = {version}")


def create(con: sqlite3.Connection, indexes: bool = True) -> None:
    """Create the schema in an empty store; without ``indexes``, its secondary indexes are
    left for ``create_indexes`` (after a first import's rows are written)."""
    for statement in SCHEMA.split(";"):
        if statement.strip() and (indexes or not _is_index(statement)):
            con.execute(statement)
    con.execute("INSERT INTO meta VALUES ('application', ?)", (APPLICATION,))
    from brainmigrate import __version__

    con.execute("INSERT INTO meta VALUES ('created_by', ?)", (__version__,))
    con.execute(f"PRAGMA user_version = {STORE_SCHEMA}")


def _is_index(statement: str) -> bool:
    return statement.strip().startswith("CREATE INDEX")


def create_indexes(con: sqlite3.Connection) -> None:
    """The schema's secondary indexes ``create(indexes=False)`` left out."""
    for statement in SCHEMA.split(";"):
        if _is_index(statement):
            con.execute(statement)
