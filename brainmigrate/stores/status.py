"""The status updater: what ``stale`` and ``verify`` write to a store that exists (a
fact's status and reason, an anchor's fingerprint), in one locked write transaction
(``updating``); what they read there goes through its ``Reader``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from brainmigrate.model import Anchor
from brainmigrate.stores.connection import abandon, check_writable, connect, require, translated
from brainmigrate.stores.queries import Reader
from brainmigrate.stores.schema import upgrade

if TYPE_CHECKING:
    import sqlite3


def set_fingerprint(con: sqlite3.Connection, fid: int, old: Anchor, new: Anchor) -> None:
    """Record ``new``'s fingerprint on fact ``fid``'s anchor ``old`` (found by its key);
    ``new`` may have another path, symbol and lines (a target that moved). Inside an open
    write transaction of a store of the current version (``schema.STORE_SCHEMA``)."""
    con.execute(
        "UPDATE OR REPLACE anchors SET path=?, symbol=?, line_first=?, line_last=?,"
        " signature_digest=?, body_digest=?, target_kind=?, target_container=?,"
        " target_name=?, verified_commit=?, verified_at=?, content_hash=?, sketch=?,"
        " digest_version=?"
        " WHERE fact_id=? AND root=? AND path=? AND symbol=?",
        (
            new.path,
            new.symbol or "",
            new.lines[0] if new.lines else None,
            new.lines[1] if new.lines else None,
            new.signature_digest,
            new.body_digest,
            *(new.target or (None, None, None)),
            new.commit,
            new.verified_at,
            new.content_hash,
            new.sketch,
            new.digest_version,
            fid,
            old.root,
            old.path,
            old.symbol or "",
        ),
    )


class Updater:
    """The status writes of one open write transaction (``updating``): ``set_status`` and
    ``set_fingerprint``; ``reader`` reads the store inside it (errors translated as a
    write's). Every method raises ``sqlite3.Error`` or ``StoreError``; ``updating`` turns
    the first into ``StoreError`` and rolls the whole transaction back."""

    __slots__ = ("_con", "reader")

    def __init__(self, con: sqlite3.Connection, path: Path) -> None:
        self._con = con
        self.reader = Reader(con, path, writing=True)

    def set_status(self, fid: int, status: str, reason: str | None, now: str) -> None:
        """Set fact ``fid``'s ``status`` and ``status_reason`` (and ``updated`` to ``now``,
        an ISO UTC time)."""
        self._con.execute(
            "UPDATE facts SET status=?, status_reason=?, updated=? WHERE id=?",
            (status, reason, now, fid),
        )

    def set_fingerprint(self, fid: int, old: Anchor, new: Anchor) -> None:
        """Record ``new``'s fingerprint on fact ``fid``'s anchor ``old`` (``set_fingerprint``)."""
        set_fingerprint(self._con, fid, old, new)


@contextlib.contextmanager
def updating(path: Path) -> Iterator[Updater]:
    """The existing store at ``path`` in one locked write transaction (``BEGIN
    IMMEDIATE``), after upgrading it to ``STORE_SCHEMA``: the ``with`` block writes
    through the ``Updater``, and the transaction commits when it ends. Any failure in it
    leaves the store as it was. Raises ``StoreError`` (no store, unwritable, busy, a row
    the reader refuses) and whatever else the block raises."""
    require(path)
    check_writable(path)
    con = None
    try:
        with translated(path, writing=True):
            try:
                con = connect(path, readonly=False)
                con.execute("BEGIN IMMEDIATE")
                upgrade(con, path)
                yield Updater(con, path)
                con.execute("COMMIT")
            except BaseException:
                abandon(con, path, True)
                raise
    finally:
        if con is not None:
            con.close()
