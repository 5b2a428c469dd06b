"""Issue 29, "Flags": ``-q``/``-v``/``--color`` on every command, ``stale --format
junit|gitlab``, ``search``'s refusals, fact ids and superseded marks, ``index --name``
for a name that never anchors. Each test runs the command on a store imported from a
small notes file."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from clirun import invoker

cli = invoker(catch_exceptions=False)


@pytest.fixture
def gone(tmp_path, monkeypatch) -> Path:
    """A store of two facts imported with ``--verify``, the first citing ``pkg/merge.py``,
    which is then removed: one stale fact, at line 1 of ``notes/code.md``."""
    (tmp_path / "repo" / "pkg").mkdir(parents=True)
    (tmp_path / "repo" / "pkg" / "merge.py").write_text("def f():\n    pass\n", encoding="utf-8")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "code.md").write_text(
        "+ the merge rule lives in pkg/merge.py TER-303\n+ nothing cited here\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    r = cli("import", "notes", "--root", "repo", "--store", "know.db", "--verify")
    assert r.exit_code == 0, r.output
    (tmp_path / "repo" / "pkg" / "merge.py").unlink()
    return tmp_path / "know.db"


MESSAGE = (
    "BM501 k1 STALE: file gone: pkg/merge.py: the merge rule lives in pkg/merge.py TER-303;"
    " fix the note's citation (check --fix repairs a file git renamed) or remove the note,"
    " then import it again; 'brainmigrate verify k1' refuses while it is gone"
)


def test_stale_junit_is_one_failing_case_per_stale_fact_at_its_notes_line(gone):
    r = cli("stale", "--store", gone, "--format", "junit", "--dry-run")
    assert r.exit_code == 1
    top = ET.fromstring(r.stdout)
    assert (top.get("name"), top.get("tests"), top.get("failures")) == (
        "brainmigrate stale",
        "1",
        "1",
    )
    (case,) = top.iter("testcase")
    assert (case.get("file"), case.get("line")) == ("notes/code.md", "1")
    assert case.find("failure").get("message") == MESSAGE


def test_stale_gitlab_is_one_issue_per_stale_fact_at_its_notes_line(gone):
    r = cli("stale", "--store", gone, "--format", "gitlab", "--dry-run")
    assert r.exit_code == 1
    (issue,) = json.loads(r.stdout)
    assert issue["description"] == MESSAGE
    assert issue["check_name"] == "BM501 stale-fact"
    assert issue["location"] == {"path": "notes/code.md", "lines": {"begin": 1}}
