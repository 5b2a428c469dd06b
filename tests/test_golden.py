"""Golden cases: one small notes file per rule of SPEC.md §Notation and §Anchors 1, with
golden files for each stage of the pipeline.

Each ``golden/cases/<name>.md`` is read against ``golden/root-a`` and ``golden/root-b``:

* imported (dry run), its JSON report must equal ``golden/expected/<name>.json``;
* checked, the ``check`` text lines must equal ``golden/expected-check/<name>.txt``;
* imported into a store and exported ``--to brain``, the exported files must equal
  ``golden/expected-brain/<name>.txt`` (each file after a ``==> <name> <==`` line), and
  importing them again must give the same facts as the store.

Regenerate with ``pytest tests/test_golden.py --update-golden`` and review the diff.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from brainmigrate import check, hints, importer, knowledge, reports, spill, stores
from brainmigrate import exports as export
from brainmigrate.read.run import ImportOptions
from brainmigrate.reports import ci

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.stem for p in (GOLDEN / "cases").glob("*.md"))
VOLATILE = ("roots", "store")
ROOTS = ["root-a", "root-b"]


@pytest.fixture(autouse=True)
def _no_git_history(monkeypatch):
    """The golden roots live in this project's own work tree: its history (whole in one
    clone, cut in another) must not decide gone against unresolved here. History has its
    own tests (tests/test_citations.py)."""
    monkeypatch.setattr(knowledge, "git_history", lambda root, cache_dir=None: None)


def run_case(name: str, parser: str, tmp_path: Path) -> dict:
    options = ImportOptions(roots=["root-a", "root-b"], parser=parser)
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
        options = ImportOptions(roots=["root-a", "root-b"])
        result = importer.import_notes(
            [f"cases/{name}.md"], options, store=tmp_path / "none.db", dry_run=True
        )
        out = render(reports.report(result, with_facts=fmt != "text"), fmt)
        if fmt == "html":  # a path is one span per folder there, a <wbr> after each "/"
            out = re.sub(r"</?span>|<wbr>", "", out)
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


def golden_bytes(path: Path, got: bytes, update: bool) -> None:
    """``got`` must equal the golden file ``path``; with ``--update-golden`` it becomes it."""
    if update:
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(got)
    assert got == path.read_bytes()


@pytest.mark.parametrize("name", CASES)
def test_golden_check_text(name, monkeypatch, update_golden):
    monkeypatch.chdir(GOLDEN)
    # move hints read this project's git history: not the golden files' business
    monkeypatch.setattr(hints, "history_at_head", lambda *args: [])
    monkeypatch.setattr(hints, "worktree_events", lambda folder: [])
    result = check.run_check([f"cases/{name}.md"], ImportOptions(roots=ROOTS))
    got = ci.text(result).encode("utf-8")
    golden_bytes(GOLDEN / "expected-check" / f"{name}.txt", got, update_golden)


def kept(rec) -> tuple:
    """What a brain round trip keeps of a fact."""
    return (
        rec.scope,
        rec.kind,
        rec.marker,
        rec.text,
        rec.task,
        rec.run,
        rec.created,
        rec.status,
        rec.status_reason,
        sorted((a.kind, a.root, a.path, a.symbol or "", a.lines, a.how) for a in rec.anchors),
        sorted(rec.gone),
    )


#: Cases whose anchors come through link reference definitions (SPEC.md §Anchors
#: "Reference-style links"): a brain export keeps the facts, not the definitions.
THROUGH_DEFINITIONS = frozenset({"class-link-definition"})


@pytest.mark.parametrize("name", CASES)
def test_golden_brain_round_trip(name, tmp_path, monkeypatch, update_golden):
    monkeypatch.chdir(GOLDEN)
    store = tmp_path / "know.db"
    importer.import_notes([f"cases/{name}.md"], ImportOptions(roots=ROOTS), store)
    out = tmp_path / "brain"
    result = export.export(store, "brain", out)
    files = sorted(out.iterdir())
    text = b"".join(b"==> " + p.name.encode() + b" <==\n" + p.read_bytes() for p in files)
    golden_bytes(GOLDEN / "expected-brain" / f"{name}.txt", text, update_golden)

    refused = {r["id"] for r in result.refused}
    facts = stores.load(store).facts.values()
    expected = sorted(kept(r) for r in facts if r.key not in refused)
    again = tmp_path / "again.db"
    if files:
        importer.import_notes([str(p) for p in files], ImportOptions(roots=ROOTS), again)
        back = sorted(kept(r) for r in stores.load(again).facts.values())
        if name in THROUGH_DEFINITIONS:
            # the facts come back whole; their anchors came through the notes file's link
            # definitions, which are no facts and so are not exported
            back, expected = [r[:-2] for r in back], [r[:-2] for r in expected]
        assert back == expected
    else:
        assert expected == []
