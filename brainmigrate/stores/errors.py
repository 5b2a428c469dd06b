"""The store's errors: ``StoreError`` (the one a caller sees) and ``Inconsistent`` (a row
the row checks refuse, turned into a ``StoreError`` that names the row)."""

from __future__ import annotations

from pathlib import Path

from brainmigrate.errors import BrainmigrateError


class StoreError(BrainmigrateError):
    """The store cannot be opened, read or written; the message names the fix."""


class StoreBusy(StoreError):
    """Another writer held the store past the busy timeout (``connection.busy_timeout``);
    trying again later may succeed (the daemon answers 503 with Retry-After)."""


class Inconsistent(BrainmigrateError, ValueError):
    """A row of the store holds what brainmigrate never writes; the message names the row
    and the column (``inconsistent`` makes it a ``StoreError``)."""


def inconsistent(path: Path, exc: Exception) -> StoreError:
    """The ``StoreError`` for a store whose rows do not hold together: what is wrong, and
    how to recover (one line)."""
    return StoreError(
        f"{path}: the store is inconsistent ({exc}); "
        "restore a backup, or import the notes into a new store"
    )
