"""The ``jsonl`` export: one JSON object per line, the §Report fact shape plus provenance."""

from __future__ import annotations

from collections.abc import Sequence

from brainmigrate.model import FactRecord
from brainmigrate.shapes import fact_dict, to_json


def jsonl_text(facts: Sequence[FactRecord], extra: dict) -> str:
    """The jsonl export of ``facts``: one ``fact_dict`` per line, ``extra`` the store's
    details by fact id (``stores.Reader.details``)."""
    return "".join(to_json(fact_dict(r, extra.get(r.id, {}))) + "\n" for r in facts)
