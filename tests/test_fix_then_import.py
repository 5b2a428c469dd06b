"""``check --fix`` then a re-import (SPEC.md §Staleness): the fact's anchors follow the
rewritten path -- the file anchor and the declarations found in the old file are replaced
by the new path's -- and keep the fingerprints ``import --verify`` took, so ``stale``
reads the fact fresh at its new path at once, and the knowledge export names no dead
anchor."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from clirun import cli
from trees import git, write

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

CONVERTERS = (
    "class ConverterRegistry:\n"
    "    def register(self, name):\n"
    "        return name\n"
    "\n"
    "\n"
    "def convert_all(items):\n"
    "    return [str(i) for i in items]\n"
)


def anchors(db: Path) -> list[tuple]:
    con = sqlite3.connect(db)
    try:
        return con.execute(
            "SELECT fact_id, kind, path, symbol, verified_at IS NOT NULL FROM anchors"
            " ORDER BY fact_id, path, symbol"
        ).fetchall()
    finally:
        con.close()


@pytest.fixture
def moved(tmp_path: Path, monkeypatch) -> Path:
    """A checkout whose notes cite src/converters.py and its ConverterRegistry, imported
    with --verify, then the file renamed to src/convert/base.py and committed."""
    monkeypatch.chdir(tmp_path)
    repo = tmp_path / "repo"
    write(repo, {"src/converters.py": CONVERTERS, "src/kept.py": "X = 1\n"})
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "converters")
    write(
        tmp_path,
        {"notes/conv.md": "+ ConverterRegistry in src/converters.py keeps the names\n"},
    )
    r = cli("import", "notes/conv.md", "--root", "repo", "--verify", "--isolated")
    assert r.exit_code == 0, r.output
    assert anchors(tmp_path / "know.db") == [
        (1, "file", "src/converters.py", "", 1),
        (1, "symbol", "src/converters.py", "ConverterRegistry", 1),
    ]
    (repo / "src/convert").mkdir()
    git(repo, "mv", "src/converters.py", "src/convert/base.py")
    git(repo, "commit", "-qm", "split")
    return tmp_path


def test_a_fixed_citation_replaces_the_old_paths_anchors_and_keeps_their_fingerprints(moved):
    before = cli("stale", "--root", "repo")
    assert before.exit_code == 1, before.output
    r = cli("check", "notes/conv.md", "--root", "repo", "--fix", "--isolated")
    assert r.exit_code == 0, r.output
    assert (moved / "notes/conv.md").read_text() == (
        "+ ConverterRegistry in src/convert/base.py keeps the names\n"
    )
    r = cli("import", "notes/conv.md", "--root", "repo", "--isolated")
    assert r.exit_code == 0, r.output
    assert anchors(moved / "know.db") == [
        (1, "file", "src/convert/base.py", "", 1),
        (1, "symbol", "src/convert/base.py", "ConverterRegistry", 1),
    ]
    after = cli("stale", "--root", "repo", "--format", "json")
    assert after.exit_code == 0, after.output
    facts = json.loads(after.stdout)["facts"]
    assert [(f["id"], f["state"]) for f in facts] == [("k1", "fresh")]
    out = moved / "kb"
    r = cli("export", "--to", "knowledge", "--output", str(out))
    assert r.exit_code == 0, r.output
    exported = "".join(p.read_text() for p in sorted(out.rglob("*")) if p.is_file())
    assert "src/convert/base.py" in exported
    assert "src/converters.py" not in exported


def test_a_changed_file_at_the_new_path_is_compared_with_the_kept_fingerprint(moved):
    """The fingerprint is the one taken at the old path: an edit after the move is a
    change, not a fresh start."""
    (moved / "repo/src/convert/base.py").write_text(
        CONVERTERS.replace("return name", "return name.upper()")
    )
    assert cli("check", "notes/conv.md", "--root", "repo", "--fix", "--isolated").exit_code == 0
    assert cli("import", "notes/conv.md", "--root", "repo", "--isolated").exit_code == 0
    after = cli("stale", "--root", "repo", "--format", "json")
    assert after.exit_code == 1, after.output
    [fact] = json.loads(after.stdout)["facts"]
    assert fact["state"] == "body changed"
    assert fact["reason"] == "STALE: body changed: src/convert/base.py"
