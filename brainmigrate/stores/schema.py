"""The store's schema, the versions this one reads and the upgrades between them
(SPEC.md §Store).

``PRAGMA user_version`` holds the schema version: 2 adds each anchor's fingerprint
(``verified_commit``, ``target_*``, ``content_hash`` beside the digest and time columns
version 1 already had, SPEC.md §Staleness); 3 records each anchor's root relative to the
store file's folder (``roots.recorded_name``: ``.``, ``app``, ``../checkout``) instead of
the absolute path of the machine that imported, and the ``roots`` table (each recorded
root's git remote and the order roots were first recorded in); 4 adds each fingerprint's
``sketch`` and ``digest_version`` (below). An older store is
upgraded in place, in the transaction of the first command that writes it (``upgrade``);
read-only commands read it as it is (its anchors without fingerprints, its roots
absolute).

An anchor's ``sketch`` (version 4; NULL for a folder, and for a fingerprint taken before
version 4) is a bottom-k sketch of the lines of its file as it was fingerprinted: of the
file's distinct lines (whitespace runs folded, stripped; those without a letter or digit,
such as ``}``, left out), the blake2b-4 hashes in hex (8 characters each) of the 32 that
hash lowest, ascending and joined without a separator (at most 256 characters; "" for a
file without such lines). ``checkouts.sketch_of`` takes it, and the move search reads it: a file
of the same name is the anchored file moved only when at least half of these hashes are
among its lines' (SPEC.md §Staleness, "moved"). ``digest_version`` is the form of the
digests: 1 for those of the text with whitespace runs folded (every fingerprint a store
older than version 4 holds is upgraded to 1), 2 for those over code's tokens
(``codeindex.tokens``); NULL without a fingerprint.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from brainmigrate.stores.errors import Inconsistent, StoreError, inconsistent

if TYPE_CHECKING:
    import sqlite3


#: The store's schema version (``PRAGMA user_version``); older stores are upgraded on
#: their first write, newer ones refused. One version name per document: ``STORE_SCHEMA``,
#: ``reports.IMPORT_SCHEMA``, ``rules.CHECK_SCHEMA``, ``stale.STALE_SCHEMA``.
STORE_SCHEMA = 4
#: Versions this one reads (and upgrades when it writes).
READS = (1, 2, 3, 4)
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
    sketch TEXT,
    digest_version INTEGER,
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
CREATE TABLE roots (
    name TEXT PRIMARY KEY,
    remote TEXT,
    position INTEGER NOT NULL
);
CREATE VIRTUAL TABLE facts_fts USING fts5 (words, tokenize = 'unicode61');
"""


#: The tables of every store version this one reads.
_TABLES = ("meta", "facts", "anchors", "citations", "provenance", "facts_fts")
#: The tables a version added (a store of that version holds them).
_ADDED = {3: ("roots",)}


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
        lost = [t for t in _TABLES + _ADDED.get(version, ()) if t not in tables]
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
    3: (
        "ALTER TABLE anchors ADD COLUMN sketch TEXT",
        "ALTER TABLE anchors ADD COLUMN digest_version INTEGER",
        "UPDATE anchors SET digest_version = 1 WHERE verified_at IS NOT NULL",
    ),
}


def upgrade(con: sqlite3.Connection, path: Path, roots=()) -> None:
    """Bring the store at ``path`` to ``STORE_SCHEMA`` inside the caller's open write
    transaction (so a failure later in it rolls the upgrade back too). A new, empty file
    (version 0) is left to ``create``. ``roots``: the ``(name, remote)`` of the roots of
    the import that upgrades it, in order (``_relative_roots``)."""
    version = con.execute("PRAGMA user_version").fetchone()[0]
    while 0 < version < STORE_SCHEMA:
        if version == 2:
            _relative_roots(con, path, roots)
        else:
            for statement in _UPGRADES[version]:
                con.execute(statement)
        version += 1
        con.execute(f"PRAGMA user_version = {version}")


def _relative_roots(con: sqlite3.Connection, path: Path, roots=()) -> None:
    """Version 2 to 3: each anchor's absolute root rewritten relative to the store's
    folder, and recorded in the new ``roots`` table (in the order first stored, with its
    git remote when that folder is a checkout here). A store of one root that is no folder
    here (committed, copied or cloned from another machine or place) gives that root the
    name of the upgrading import's first root (``roots``: ``(name, remote)``), so a
    clone's first import adds no anchor; with several, none is guessed.
    Two absolute roots that name one folder become one: a row the rewrite would repeat is
    dropped."""
    from brainmigrate.roots import recorded_name, remote_of, store_base

    base = store_base(path)
    con.execute(SCHEMA[SCHEMA.index("CREATE TABLE roots") :].split(";")[0])
    olds = [r[0] for r in con.execute("SELECT root FROM anchors GROUP BY root ORDER BY min(rowid)")]
    absolute = [o for o in olds if type(o) is str and os.path.isabs(o)]
    roots = list(roots)[:1] if len(absolute) == 1 and not os.path.isdir(absolute[0]) else []
    for i, old in enumerate(olds):
        if type(old) is not str:
            continue  # read_anchored refuses the row, naming it
        here = os.path.isdir(old)
        remote = remote_of(old) if here else None
        if not os.path.isabs(old):
            new = old
        elif not here and i < len(roots):
            new, remote = roots[i]
        else:
            new = recorded_name(old, base)
        if new != old:
            con.execute("UPDATE OR IGNORE anchors SET root=? WHERE root=?", (new, old))
            con.execute("DELETE FROM anchors WHERE root=?", (old,))
        record_roots(con, [(new, remote)])


def record_roots(con: sqlite3.Connection, roots) -> None:
    """Record each ``(name, remote)`` of ``roots`` the ``roots`` table does not hold yet,
    after those it holds (its ``position``); a recorded root keeps its remote, unless it
    had none."""
    for name, remote in roots:
        con.execute(
            "INSERT INTO roots (name, remote, position)"
            " SELECT ?, ?, (SELECT count(*) FROM roots) WHERE true"
            " ON CONFLICT (name) DO UPDATE SET remote = coalesce(remote, excluded.remote)",
            (name, remote),
        )


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
