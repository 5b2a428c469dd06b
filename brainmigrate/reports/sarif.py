"""The SARIF 2.1.0 report of ``check`` (docs/check.md, Formats), for code scanning."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePosixPath
from urllib.parse import quote

from brainmigrate import __version__
from brainmigrate.check import CheckResult
from brainmigrate.codes import DOCS
from brainmigrate.reports.findings import list_chunks
from brainmigrate.rules import RULES, Finding, doc_parts, help_text
from brainmigrate.shapes import to_json

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
#: The name of the fingerprint in SARIF ``partialFingerprints``.
SARIF_FINGERPRINT = "brainmigrate/v1"
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def homepage() -> str | None:
    """Where brainmigrate lives (SARIF ``informationUri``; each rule's ``helpUri`` is
    ``<home>/blob/main/docs/check.md#bm101``): the ``Homepage`` of the installed package's
    ``[project.urls]``, or ``BRAINMIGRATE_HOMEPAGE`` when set. None when neither names one:
    SARIF then carries no links rather than made-up ones."""
    import os

    given = os.environ.get("BRAINMIGRATE_HOMEPAGE")
    if given:
        return given.rstrip("/")
    from importlib import metadata

    try:
        urls = metadata.metadata("brainmigrate").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "homepage" and url.strip():
            return url.strip().rstrip("/")
    return None


def _uri(path: str) -> str:
    if path.startswith("/"):
        return PurePosixPath(path).as_uri()
    return quote(path, safe="/")


def sarif(result: CheckResult) -> str:
    """SARIF 2.1.0: one run, every rule, one result per finding with its physical location,
    ``partialFingerprints`` (no line numbers), in-source suppressions and, with a baseline,
    ``baselineState`` (``sarif_chunks``, joined)."""
    return "".join(sarif_chunks(result))


def sarif_chunks(result: CheckResult) -> Iterator[str]:
    """``sarif`` in chunks, each result made and encoded as it is written (the findings
    read back once; the codes they use come from their counts)."""
    codes = list(RULES)
    codes += sorted(set(result.tally().by_code()) - set(codes))
    index = {c: i for i, c in enumerate(codes)}
    home = homepage()
    rules = []
    for code in codes:
        r = RULES.get(code)
        rules.append(
            {
                "id": code,
                "name": r.name if r else code,
                "shortDescription": {"text": r.summary if r else code},
                **(
                    {
                        "fullDescription": {"text": doc_parts(code)["finds"]},
                        "help": {"text": help_text(code)},
                    }
                    if code in DOCS
                    else {}
                ),
                **({"helpUri": f"{home}/blob/main/docs/check.md#{code.lower()}"} if home else {}),
                "defaultConfiguration": {"level": _SARIF_LEVEL[r.severity if r else "info"]},
            }
        )
    results = (
        to_json(_result(f, index, result.baseline is not None, result.fix_of(f)), indent=2)
        for f in result.findings
    )
    totals = result.totals()
    data = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "brainmigrate",
                        "version": __version__,
                        **({"informationUri": home} if home else {}),
                        "rules": rules,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": [],
                "properties": {
                    "failOn": result.fail_on,
                    "failing": totals["failing"],
                    "suppressed": totals["suppressed"],
                    "baselined": totals["baselined"],
                },
            }
        ],
    }
    return list_chunks(to_json(data, indent=2) + "\n", "results", 3, results)


def _fixes(f: Finding, fix) -> list[dict]:
    """SARIF ``fixes`` of ``f``: the one replacement ``--fix`` makes (``fix.Fix``), its
    region in code points as ``columnKind`` says (SARIF 2.1.0 §3.55, §3.57)."""
    region = {
        "startLine": fix.line,
        "startColumn": fix.col,
        "endLine": fix.line,
        "endColumn": fix.col + len(fix.old),
    }
    return [
        {
            "description": {"text": f"Replace {fix.old} by {fix.new} (brainmigrate check --fix)"},
            "artifactChanges": [
                {
                    "artifactLocation": {"uri": _uri(f.file)},
                    "replacements": [
                        {"deletedRegion": region, "insertedContent": {"text": fix.new}}
                    ],
                }
            ],
        }
    ]


def _result(f: Finding, index: dict[str, int], baseline: bool, fix=None) -> dict:
    """A finding as a SARIF result (``baseline``: the run had one: ``baselineState``;
    ``fix``: the ``fix.Fix`` ``--fix`` makes of it, as ``fixes`` and the region's end)."""
    loc: dict = {"artifactLocation": {"uri": _uri(f.file)}}
    if f.line is not None:
        loc["region"] = {"startLine": f.line}
        if f.col is not None:
            loc["region"]["startColumn"] = f.col
        if fix is not None:
            loc["region"]["endColumn"] = fix.col + len(fix.old)
    item: dict = {
        "ruleId": f.code,
        "ruleIndex": index[f.code],
        "level": _SARIF_LEVEL[f.severity],
        "message": {"text": f.full_message},
        "locations": [{"physicalLocation": loc}],
        "partialFingerprints": {SARIF_FINGERPRINT: f.fingerprint},
    }
    if fix is not None:
        item["fixes"] = _fixes(f, fix)
    if f.hint:
        item["properties"] = {"hint": {"path": f.hint.path, "how": f.hint.how}}
    if f.suppressed:
        item["suppressions"] = [
            {
                "kind": "inSource",
                "justification": f"<!-- brainmigrate: {f.suppressed_by or 'allow-gone'} -->",
            }
        ]
    if baseline:
        item["baselineState"] = "unchanged" if f.baselined else "new"
    return item
