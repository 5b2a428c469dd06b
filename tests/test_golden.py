"""Golden cases: one small notes file per rule of SPEC.md §Notation and §Anchors 1.

Each ``golden/cases/<name>.md`` is imported (dry run) against ``golden/root-a`` and
``golden/root-b``; the JSON report must equal ``golden/expected/<name>.json``. Regenerate
with ``pytest tests/test_golden.py --update-golden`` and review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from brainmigrate import anchors, importer, reports, spill

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.stem for p in (GOLDEN / "cases").glob("*.md"))
VOLATILE = ("roots", "store")


@pytest.fixture(autouse=True)
def _no_git_history(monkeypatch):
    """The golden roots live in this project's own work tree: its history (whole in one
    clone, cut in another) must not decide gone against unresolved here. History has its
    own tests (tests/test_citations.py)."""
    monkeypatch.setattr(anchors, "git_history", lambda root: None)


def run_case(name: str, parser: str, tmp_path: Path) -> dict:
    options = importer.Options(roots=["root-a", "root-b"], parser=parser)
    result = importer.import_notes(
        [f"cases/{name}.md"], options, store=tmp_path / "none.db", dry_run=True
    )
    data = reports.report(result)
    for key in VOLATILE:
        data.pop(key)
    return data


@pytest.mark.parametrize("name", CASES)
def test_golden_case(name, tmp_path, monkeypatch, update_golden):
    monkeypatch.chdir(GOLDEN)
    got = run_case(name, "fast", tmp_path)
    expected_file = GOLDEN / "expected" / f"{name}.json"
    if update_golden:
        expected_file.parent.mkdir(exist_ok=True)
        expected_file.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n")
    expected = json.loads(expected_file.read_text(encoding="utf-8"))
    assert got == expected


@pytest.mark.parametrize("name", CASES)
def test_lark_parser_gives_the_same_report(name, tmp_path, monkeypatch):
    monkeypatch.chdir(GOLDEN)
    assert run_case(name, "lark", tmp_path) == run_case(name, "fast", tmp_path)


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_every_golden_case_renders_in_every_format(fmt, tmp_path, monkeypatch):
    monkeypatch.chdir(GOLDEN)
    from brainmigrate.reports import render

    for name in CASES:
        options = importer.Options(roots=["root-a", "root-b"])
        result = importer.import_notes(
            [f"cases/{name}.md"], options, store=tmp_path / "none.db", dry_run=True
        )
        out = render(reports.report(result, with_facts=fmt != "text"), fmt)
        for w in result.warnings:
            where = w.file + (f":{w.line}" if w.line else "") + (f":{w.col}" if w.col else "")
            assert where in out, (name, fmt, where)


@pytest.mark.parametrize("name", CASES)
def test_a_run_kept_on_disk_gives_the_same_report(name, tmp_path, monkeypatch):
    # Batches of one fact: everything a run keeps goes through its temporary files.
    monkeypatch.chdir(GOLDEN)
    expected = run_case(name, "fast", tmp_path)
    monkeypatch.setattr(spill, "BATCH", 1)
    monkeypatch.setattr(spill, "CACHE", 1)
    assert run_case(name, "fast", tmp_path) == expected
