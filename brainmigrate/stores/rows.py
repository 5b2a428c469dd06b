"""What a row of the store may hold: one check per column kind and one reader per row
kind (facts, anchors, provenance, the merge index's entries), each raising ``Inconsistent``
for a value no import, ``verify`` or ``stale`` writes (SPEC.md §Store).

Every value read from the store is checked here, where it enters, against what the
importer writes: a store another tool changed is refused as inconsistent (exit 2), never
an internal error later in a report or an export. The rows an import writes are checked in
one expression (the fast path); any other row goes through the column checks, which name
what is wrong.
"""

from __future__ import annotations

import json

from brainmigrate.model import (
    ANCHOR_KINDS,
    FACT_FIELDS,
    HOWS,
    KINDS,
    MARKERS,
    STATUSES,
    Anchor,
    FactRecord,
)
from brainmigrate.shapes import shorten
from brainmigrate.stores.errors import Inconsistent
from brainmigrate.values import DIGEST_VERSIONS as DIGEST_VERSIONS  # the store's modules
from brainmigrate.values import MAX_ID as MAX_ID  # read both from here
from brainmigrate.values import (
    id_ok,
    line_ok,
    run_ok,
    scope_ok,
    symbol_ok,
    task_ok,
    time_ok,
)

#: What ``str.strip()`` strips (the characters ``str.isspace`` holds): SQL's ``trim(x, ?)``
#: with these finds a blank text as Python does.
BLANKS = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
    "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def _shown(value) -> str:
    """A stored value as a message shows it: its SQL type, or a short printable text."""
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return "a BLOB"
    if isinstance(value, float):
        return f"the real number {value!r}"
    if isinstance(value, int):
        return str(value)
    text = value.encode("utf-8", "replace").decode("utf-8")
    text = "".join(c if c.isprintable() else "\ufffd" for c in text)
    return repr(shorten(text, 40))


def _bad(where: str, column: str, value, wanted: str) -> Inconsistent:
    return Inconsistent(f"{where}: {column} is {_shown(value)}, not {wanted}")


def checked_id(value, where: str, column: str = "id") -> int:
    """``value`` when it is a fact id (an integer 1..``MAX_ID``), else ``Inconsistent``
    naming ``where`` (the row) and ``column``."""
    if not id_ok(value):
        raise _bad(where, column, value, "a fact id of 1 or more")
    return value


def checked_text(value, where: str, column: str, null: bool = False) -> str | None:
    """``value`` when it is text (or NULL, with ``null``), else ``Inconsistent``."""
    if value is None and null:
        return None
    if not isinstance(value, str):
        raise _bad(where, column, value, "text" + (" or NULL" if null else ""))
    return value


def checked_scope(value, where: str) -> str:
    """A fact's scope: text that is not blank (an import's ``--scope`` or ``area:NAME``,
    SPEC.md §Notation, Scope)."""
    if not scope_ok(value):
        checked_text(value, where, "scope")
        raise _bad(where, "scope", value, "a scope (text that is not blank)")
    return value


def checked_time(value, where: str, column: str) -> str:
    """A time the store records (``imported``, ``updated``): ISO UTC to the second, as an
    import writes it (SPEC.md §Store)."""
    if not time_ok(value):
        checked_text(value, where, column)
        raise _bad(where, column, value, "a time like 2026-09-23T13:16:09Z")
    return value


def _choice(value, where: str, column: str, choices: tuple[str, ...]) -> str:
    if value not in choices or not isinstance(value, str):
        raise _bad(where, column, value, "one of " + ", ".join(choices))
    return value


def checked_line(value, where: str, column: str, null: bool = True) -> int | None:
    """``value`` when it is a line number (0..``MAX_ID``; NULL too with ``null``), else
    ``Inconsistent``."""
    if value is None and null:
        return None
    if not line_ok(value):
        raise _bad(where, column, value, "a line number" + (" or NULL" if null else ""))
    return value


def _ids(value, where: str, column: str) -> tuple[int, ...]:
    if value == "[]":  # what nearly every fact holds: no JSON to parse
        return ()
    text = checked_text(value, where, column)
    try:
        ids = json.loads(text)
    except ValueError:
        raise _bad(where, column, value, "a JSON list of fact ids") from None
    if not isinstance(ids, list) or not all(type(i) is int and 1 <= i <= MAX_ID for i in ids):
        raise _bad(where, column, value, "a JSON list of fact ids")
    return tuple(ids)


def checked_fact_id(value) -> int:
    """``value``, the ``id`` of a facts row, when it is a fact id, else ``Inconsistent``."""
    return checked_id(
        value, f"fact k{value}" if type(value) is int and value > 0 else "a facts row"
    )


def missing(fid: int, table: str) -> Inconsistent:
    """The ``Inconsistent`` for rows of ``table`` naming fact ``fid``, which is not stored."""
    return Inconsistent(f"fact k{fid} is missing, but {table} rows name it")


#: The facts rows ``entry_row`` accepts, as an SQL condition (its ``?`` is ``BLANKS``):
#: ``Stored.check_entries`` finds the first other one in one query.
ENTRY_OK = (
    "id >= 1 AND typeof(scope) = 'text' AND trim(scope, ?) != '' AND typeof(numbers) = 'text'"
    " AND typeof(tasks) = 'text' AND typeof(stems) = 'text'"
)


def entry_row(row: tuple) -> tuple[int, str, frozenset[str], frozenset[str], tuple]:
    """``(id, scope, numbers, tasks, stems)`` of a facts row, checked (``Inconsistent``)."""
    fid, scope, numbers, tasks, stems = row
    where = f"fact k{checked_fact_id(fid)}"
    return (
        fid,
        checked_scope(scope, where),
        _set(checked_text(numbers, where, "numbers")),
        _set(checked_text(tasks, where, "tasks")),
        tuple(stems.split(" ")) if checked_text(stems, where, "stems") else (),
    )


def provenance_ok(fid, file, line) -> bool:
    """Whether a provenance row's ``fact_id``, ``file`` and ``line`` are as an import
    writes them: the check of the import's fast path (``provenance_row`` checks each
    column and names what is wrong)."""
    return (
        type(fid) is int
        and 1 <= fid <= MAX_ID
        and type(file) is str
        and type(line) is int
        and 0 <= line <= MAX_ID
    )


def provenance_row(fid, file, line, fp) -> tuple[int, str, int, str]:
    """``(fact id, file, line, fingerprint)`` of a provenance row, each checked
    (``Inconsistent``)."""
    where = "a provenance row" if type(fid) is not int else f"a provenance row of k{fid}"
    return (
        checked_id(fid, where, "fact_id"),
        checked_text(file, where, "file"),
        checked_line(line, where, "line", null=False),
        checked_text(fp, where, "fingerprint"),
    )


#: The ``facts`` columns a fact is read from and written to, ``id``, ``imported`` and
#: ``updated`` aside: its ``FACT_FIELDS``, its links, then the merge rule's sets.
COLUMNS = (*FACT_FIELDS, "supersedes", "related", "stems", "numbers", "tasks")


_KIND_SET, _MARKER_SET, _STATUS_SET = frozenset(KINDS), frozenset(MARKERS), frozenset(STATUSES)


def fact_ok(row: tuple) -> bool:
    """Whether a ``facts`` row (``id`` and the ``COLUMNS``) is as the importer writes
    nearly every one (no links): one expression, the same checks as ``_checked_fact_row``
    makes column by column."""
    fid, scope, kind, marker, text, task, run, created, status, reason = row[:10]
    supersedes, related, stems, numbers, tasks = row[10:]
    return bool(
        type(fid) is int
        and 1 <= fid <= MAX_ID
        and type(scope) is str
        and scope.strip()
        and kind in _KIND_SET
        and marker in _MARKER_SET
        and status in _STATUS_SET
        and type(text) is str
        and type(stems) is str
        and type(numbers) is str
        and type(tasks) is str
        and supersedes == "[]"
        and related == "[]"
        and (reason is None or type(reason) is str)
        and (created is None or time_ok(created))
        and run_ok(run, created)
        and task_ok(task, _set(tasks))
        and text.strip()
    )


def fact_row(row: tuple) -> FactRecord:
    """A ``facts`` row (``id`` and the ``COLUMNS``) as a ``FactRecord``, every column
    checked (``Inconsistent``): a row ``fact_ok`` accepts is taken as it is; any other
    goes through ``_checked_fact_row``, which also names what is wrong."""
    if not fact_ok(row):
        return _checked_fact_row(row)
    fid, scope, kind, marker, text, task, run, created, status, reason = row[:10]
    stems, numbers, tasks = row[12:]
    return FactRecord(
        id=fid,
        scope=scope,
        kind=kind,
        marker=marker,
        text=text,
        task=task,
        run=run,
        created=created,
        status=status,
        status_reason=reason,
        stems=tuple(stems.split(" ")) if stems else (),
        numbers=_set(numbers),
        tasks=_set(tasks),
        stored=True,
    )


def _checked_fact_row(row: tuple) -> FactRecord:
    """``fact_row``, each column checked on its own."""
    fid = checked_fact_id(row[0])
    at = f"fact k{fid}"
    text = checked_text(row[4], at, "text")
    if not text.strip():
        raise _bad(at, "text", text, "a fact's text")
    created = checked_text(row[7], at, "created", null=True)
    if created is not None and not time_ok(created):
        raise _bad(at, "created", created, "a time like 2026-09-23T13:16:09Z")
    run = checked_text(row[6], at, "run", null=True)
    if run is not None and run.split() != [run]:
        raise _bad(at, "run", run, "one word (a stamp's run)")
    if run is not None and created is None:
        raise Inconsistent(f"{at}: run is set but created is NULL (a stamp gives both)")
    tasks = _set(checked_text(row[14], at, "tasks"))
    task = checked_text(row[5], at, "task", null=True)
    if not task_ok(task, tasks):
        wanted = "one of the task ids of column tasks" if tasks else "NULL (column tasks is empty)"
        raise _bad(at, "task", task, wanted)
    stems = checked_text(row[12], at, "stems")
    return FactRecord(
        id=fid,
        scope=checked_scope(row[1], at),
        kind=_choice(row[2], at, "kind", KINDS),
        marker=_choice(row[3], at, "marker", MARKERS),
        text=text,
        task=task,
        run=run,
        created=created,
        status=_choice(row[8], at, "status", STATUSES),
        status_reason=checked_text(row[9], at, "status_reason", null=True),
        supersedes=_ids(row[10], at, "supersedes"),
        related=_ids(row[11], at, "related"),
        stems=tuple(stems.split(" ")) if stems else (),
        numbers=_set(checked_text(row[13], at, "numbers")),
        tasks=tasks,
        stored=True,
    )


_EMPTY: frozenset[str] = frozenset()


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split(" ")) if text else _EMPTY


#: The fingerprint columns of an anchors row (schema version 2), in the order read; a
#: version-4 store adds ``SKETCH_COLUMNS`` after them.
FINGERPRINT_COLUMNS = (
    "signature_digest",
    "body_digest",
    "target_kind",
    "target_container",
    "target_name",
    "verified_commit",
    "verified_at",
    "content_hash",
)
SKETCH_COLUMNS = ("sketch", "digest_version")


def anchor_row(row: tuple) -> tuple[int, Anchor]:
    """``(fact id, Anchor)`` of an anchors row (``fact_id, kind, root, path, symbol,
    line_first, line_last, how``, then the ``FINGERPRINT_COLUMNS`` in a version-2 or 3
    store, and the ``SKETCH_COLUMNS`` too in a version-4 one), every column checked
    (``Inconsistent``) against what an import, ``verify`` and ``stale`` write (SPEC.md
    §Anchors, §Report): ``how`` one of ``HOWS``; the lines both NULL or ``first <= last``
    (a range written backwards is stored in order; line 0, as ``:0`` gives it, is kept);
    ``kind`` one of ``ANCHOR_KINDS``: a symbol anchor names its declaration, a file or
    folder anchor none; a ``sketch`` of the shape ``schema`` gives, a ``digest_version``
    of ``DIGEST_VERSIONS``. A fingerprint of a store older than version 4 reads as
    ``digest_version`` 1 (what the upgrade gives it)."""
    fid, kind, root, p, symbol, first, last, how = row[:8]
    at = "an anchors row" if type(fid) is not int else f"an anchors row of k{fid}"
    fid = checked_id(fid, at, "fact_id")
    first, last = checked_line(first, at, "line_first"), checked_line(last, at, "line_last")
    if (first is None) != (last is None):
        raise _bad(at, "line_first" if first is None else "line_last", None, "a line number")
    if first is not None and first > last:
        raise _bad(at, "line_first", first, f"a line number up to line_last ({last})")
    kind = _choice(kind, at, "kind", ANCHOR_KINDS)
    name = checked_text(symbol, at, "symbol", null=True) or None
    if not symbol_ok(kind, name):
        wanted = "a declaration's name (kind is symbol)" if name is None else f"'' (kind is {kind})"
        raise _bad(at, "symbol", symbol, wanted)
    base = (
        kind,
        checked_text(root, at, "root"),
        checked_text(p, at, "path"),
        name,
        (first, last) if first is not None else None,
        _choice(how, at, "how", HOWS),
    )
    if len(row) > 8 and row[14] is not None:
        sig, body, tkind, tcontainer, tname, commit, verified, chash = (
            checked_text(v, at, name, null=True)
            for v, name in zip(row[8:16], FINGERPRINT_COLUMNS, strict=True)
        )
        target = (tkind, tcontainer, tname) if tkind else None
        sketch, version = _sketch_columns(row[16:], at)
        return fid, Anchor(*base, sig, body, target, commit, verified, chash, sketch, version)
    return fid, Anchor(*base)


def _sketch_columns(values: tuple, at: str) -> tuple[str | None, int]:
    """The ``sketch`` and ``digest_version`` of a fingerprinted anchors row (``values``:
    the ``SKETCH_COLUMNS``, or none in a store older than version 4: no sketch, version
    1), each checked: a sketch is text of whole 8-character hashes (their digits are
    not read here: every anchor row is checked on every ``stale``, and a hash that is no
    hex only matches no line)."""
    if not values:
        return None, 1
    sketch, version = values
    if sketch is not None and (type(sketch) is not str or len(sketch) % 8):
        raise _bad(at, "sketch", sketch, "hashes of 8 hex characters each, joined")
    if type(version) is not int or version not in DIGEST_VERSIONS:
        raise _bad(at, "digest_version", version, "1 or 2")
    return sketch, version


#: The ``facts`` columns ``read_anchored`` reads and ``anchored_fact_row`` checks.
ANCHORED_COLUMNS = "id, scope, kind, marker, text, task, status, status_reason"


def anchored_fact_row(row: tuple) -> FactRecord:
    """A ``FactRecord`` of the ``ANCHORED_COLUMNS`` of a facts row, each checked
    (``Inconsistent``); the merge rule's sets are left empty."""
    fid, scope, kind, marker, text, task, status, reason = row
    fid = checked_fact_id(fid)
    at = f"fact k{fid}"
    return FactRecord(
        fid,
        checked_scope(scope, at),
        _choice(kind, at, "kind", KINDS),
        _choice(marker, at, "marker", MARKERS),
        checked_text(text, at, "text"),
        checked_text(task, at, "task", null=True),
        None,
        None,
        _choice(status, at, "status", STATUSES),
        checked_text(reason, at, "status_reason", null=True),
        (),
        _EMPTY,
        _EMPTY,
    )
