"""The shapes a fact takes outside the store: the JSON objects ``show``, ``search --format
json``, the JSON report and the jsonl export share (SPEC.md §Report, §Store), and the two
ways text leaves the program safely (``to_json``, ``safe_text``), cut short
(``shorten``), and a count with its noun (``plural``: ``1 fact``, ``2 facts``).

Below search, reports and exports, so none of them imports another to shape a fact.
"""

from __future__ import annotations

import json

from brainmigrate.escapes import one_line as one_line  # (the report templates' finalize)
from brainmigrate.escapes import terminal
from brainmigrate.model import FACT_FIELDS, FactRecord

#: The stored fields every fact shape starts with, after the id.
_REPORT_FIELDS = tuple(name for name in FACT_FIELDS if name != "status_reason")

#: The control characters JSON does not escape by itself (DEL and C1), as escapes.
_JSON_CONTROLS = {c: f"\\u{c:04x}" for c in [127, *range(0x80, 0xA0)]}


def to_json(value, **options) -> str:
    """``json.dumps`` with non-ASCII text kept as it is, but every control character
    escaped (``json`` escapes only those below U+0020): safe to print to a terminal.
    These characters only ever stand inside JSON strings, so escaping them is exact."""
    return json.dumps(value, ensure_ascii=False, **options).translate(_JSON_CONTROLS)


def safe_text(value):
    """``value`` as a terminal may show it (``escapes.terminal``: control characters but
    tab and newline as U+FFFD); values that are not strings pass unchanged. Every CI
    template's output goes through it (the report templates' through ``one_line``)."""
    return terminal(value) if isinstance(value, str) else value


def shorten(text, limit: int, *, mark="…", strip: bool = False, keep: int | None = None):
    """``text`` when it holds at most ``limit`` characters (bytes for ``bytes``), else
    its first ``keep`` ones (default ``limit - len(mark)``: the result holds ``limit``)
    with trailing whitespace dropped when ``strip``, then ``mark``. The one place output
    cuts text short: a finding's fact text (120), a stale reason (100), a message's
    quote of a fact, a description, a line form, a temporary file's name (bytes, no
    mark); each caller keeps its own limit, mark and cut."""
    if len(text) <= limit:
        return text
    head = text[: limit - len(mark) if keep is None else keep]
    return (head.rstrip() if strip else head) + mark


def fact_fields(rec: FactRecord) -> dict:
    """The §Report fields every fact shape starts with: id, scope, kind, marker, text,
    task, run, created, status (``FACT_FIELDS`` but the status reason, which not every
    shape shows)."""
    return {"id": rec.key, **{name: getattr(rec, name) for name in _REPORT_FIELDS}}


def anchor_fields(a, root) -> dict:
    """An anchor as the reports show it; ``root`` is an index (a run's report) or a path."""
    return {
        "kind": a.kind,
        "path": a.path,
        "root": root,
        "lines": list(a.lines) if a.lines else None,
        "symbol": a.symbol,
        "how": a.how,
    }


def report_fact(rec: FactRecord, roots: dict[str, int], action: str) -> dict:
    """A fact of a run as the JSON report lists it (§Report): ``roots`` maps a root's
    label to its index; ``action`` is ``added``, ``updated`` or ``unchanged``."""
    anchors = []
    for a in rec.anchors:
        entry = anchor_fields(a, roots.get(a.root))
        if entry["root"] is None:
            entry["root_path"] = a.root
        anchors.append(entry)
    return {
        **fact_fields(rec),
        "origin": {"file": rec.origin[0], "line": rec.origin[1]} if rec.origin else None,
        "anchors": anchors,
        "action": action,
    }


def fact_dict(rec: FactRecord, extra: dict) -> dict:
    """A stored fact as a JSON-able dict (the shape ``show``, ``search --format json`` and
    the jsonl export use). ``origin`` is the last of ``extra["provenance"]`` (recorded
    order): the line that fed the fact most recently (docs/reference.md "The store")."""
    prov = extra.get("provenance", [])
    return {
        **fact_fields(rec),
        "status_reason": rec.status_reason,
        "origin": {"file": prov[-1]["file"], "line": prov[-1]["line"]} if prov else None,
        "anchors": [
            {
                **anchor_fields(a, a.root),
                "fingerprinted": a.fingerprinted,
                "verified_at": a.verified_at,
                "commit": a.commit,
            }
            for a in rec.anchors
        ],
        "gone": list(rec.gone),
        "supersedes": [f"k{i}" for i in rec.supersedes],
        "related": [f"k{i}" for i in rec.related],
        "imported": extra.get("imported"),
        "updated": extra.get("updated"),
        "provenance": prov,
    }


#: Nouns whose plural is not the noun and ``s``.
_IRREGULAR = {"entry": "entries", "status": "statuses"}


def noun(count: int, word: str) -> str:
    """``word`` as it reads after ``count``: ``fact`` for 1, ``facts`` for 0 or more than 1
    (``entry``/``entries``, ``status``/``statuses``); a word of several words takes the
    plural on its last (``fact line``/``fact lines``)."""
    if count == 1:
        return word
    head, _, last = word.rpartition(" ")
    return head + (" " if head else "") + _IRREGULAR.get(last, last + "s")


def plural(count: int, word: str) -> str:
    """``count`` and ``word`` as they read together: ``1 fact``, ``2 facts``, ``0 facts``
    (``noun``); the report templates' ``plural`` filter (``{{ n | plural("fact") }}``)."""
    return f"{count} {noun(count, word)}"
