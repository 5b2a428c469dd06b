"""A fact's origin is the most recent notes line that fed it, in every output; provenance
keeps every line (README, "The store (`know.db`)")."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from clirun import invoker
from trees import git, write

cli = invoker(catch_exceptions=False)

LEDGER = "def post_entry(ledger, amount):\n    ledger.append(amount)\n    return len(ledger)\n"
ANCHORED = "+ post_entry appends one entry a call, see src/ledger.py:2 TER-2"
GONE = "+ the old ledger lived in src/old_ledger.py TER-3"
#: the notes as first imported: the two facts at lines 5 and 6
FIRST = f"# Ledger\n\n+ the ledger keeps every entry in order TER-1\n\n{ANCHORED}\n{GONE}\n"
#: four lines of prose written above them: they stand at lines 9 and 10 now
ABOVE = "Notes kept while building the ledger.\n\nRead them before the code.\n\n"
MOVED = FIRST.replace("# Ledger\n\n", "# Ledger\n\n" + ABOVE)


def provenance(store: Path, fid: int) -> list[tuple[str, int]]:
    con = sqlite3.connect(store)
    try:
        rows = con.execute(
            "SELECT file, line FROM provenance WHERE fact_id=? ORDER BY rowid", (fid,)
        )
        return [tuple(r) for r in rows]
    finally:
        con.close()


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    """A git checkout with notes whose facts stood at lines 5 and 6 when imported (with
    --verify), then moved to lines 9 and 10 and imported again; the code then changed."""
    write(tmp_path, {"repo/src/ledger.py": LEDGER, "notes/ledger.md": FIRST})
    git(tmp_path / "repo", "init", "-q")
    git(tmp_path / "repo", "add", ".")
    git(tmp_path / "repo", "commit", "-q", "-m", "ledger")
    monkeypatch.chdir(tmp_path)
    r = cli("import", "notes", "--root", "repo", "--store", "know.db", "--verify")
    assert r.exit_code == 0, r.output
    assert [provenance(tmp_path / "know.db", i) for i in (2, 3)] == [
        [("notes/ledger.md", 5)],
        [("notes/ledger.md", 6)],
    ]
    (tmp_path / "notes/ledger.md").write_text(MOVED, encoding="utf-8")
    r = cli("import", "notes", "--root", "repo", "--store", "know.db", "--format", "json")
    assert r.exit_code == 0, r.output
    report = {f["id"]: f["origin"] for f in json.loads(r.output)["facts"]}
    assert report == {
        "k1": {"file": "notes/ledger.md", "line": 7},
        "k2": {"file": "notes/ledger.md", "line": 9},
        "k3": {"file": "notes/ledger.md", "line": 10},
    }
    changed = LEDGER.replace("append(amount)", "append(-amount)")
    (tmp_path / "repo/src/ledger.py").write_text(changed, encoding="utf-8")
    return tmp_path


AT_9 = {"file": "notes/ledger.md", "line": 9}
AT_10 = {"file": "notes/ledger.md", "line": 10}


def test_provenance_keeps_both_lines_and_the_origin_is_the_last(tree):
    assert provenance(tree / "know.db", 2) == [("notes/ledger.md", 5), ("notes/ledger.md", 9)]
    assert provenance(tree / "know.db", 3) == [("notes/ledger.md", 6), ("notes/ledger.md", 10)]


def test_show_places_the_fact_at_its_current_line(tree):
    shown = json.loads(cli("show", "k2", "--format", "json").output)
    assert shown["origin"] == AT_9
    assert [(p["file"], p["line"]) for p in shown["provenance"]] == [
        ("notes/ledger.md", 5),
        ("notes/ledger.md", 9),
    ]
    lines = cli("show", "k2").output.splitlines()
    assert "origin: notes/ledger.md:9" in lines
    assert lines[-3:-1] == ["provenance: 2", lines[-2]]
    assert lines[-2].startswith("  notes/ledger.md:5 (imported ")
    assert lines[-1].startswith("  notes/ledger.md:9 (imported ")


def test_search_places_the_fact_at_its_current_line(tree):
    hits = json.loads(cli("search", "old ledger", "--format", "json").output)["hits"]
    assert [(h["fact"]["id"], h["fact"]["origin"]) for h in hits] == [
        ("k3", AT_10),
        ("k1", {"file": "notes/ledger.md", "line": 7}),
        ("k2", AT_9),
    ]


def test_every_stale_format_places_the_fact_at_its_current_line(tree):
    def stale(fmt: str) -> str:
        r = cli("stale", "--dry-run", "--format", fmt)
        assert r.exit_code == 1, r.output
        return r.output

    assert stale("text").splitlines()[0] == (
        "notes/ledger.md:9: k2 environment area:ledger STALE: body changed:"
        " src/ledger.py#post_entry  post_entry appends one entry a call, see src/ledger.py:2"
        " TER-2"
    )
    facts = json.loads(stale("json"))["facts"]
    assert [(f["id"], f["state"], f["origin"]) for f in facts] == [("k2", "body changed", AT_9)]
    github = [line for line in stale("github").splitlines() if line.startswith("::error")]
    assert len(github) == 1
    assert github[0].startswith("::error file=notes/ledger.md,line=9,")
    sarif = json.loads(stale("sarif"))["runs"][0]["results"]
    locations = [r["locations"][0]["physicalLocation"] for r in sarif]
    assert [(p["artifactLocation"]["uri"], p["region"]["startLine"]) for p in locations] == [
        ("notes/ledger.md", 9)
    ]
    assert "notes/ledger.md:9" in stale("markdown")


def test_exports_place_the_fact_at_its_current_line(tree):
    r = cli("export", "--to", "jsonl", "--output", "-")
    facts = {f["id"]: f for f in map(json.loads, r.output.splitlines())}
    assert (facts["k2"]["origin"], facts["k3"]["origin"]) == (AT_9, AT_10)
    assert cli("export", "--to", "knowledge", "--output", "kb").exit_code == 0
    (page,) = (tree / "kb").glob("*-k3.md")
    text = page.read_text(encoding="utf-8")
    assert '  notes: "notes/ledger.md:10"\n' in text
    assert text.endswith(
        "## Provenance\n\n- notes/ledger.md:6 (imported "
        + text.split("notes/ledger.md:6 (imported ")[1].split(")")[0]
        + ")\n- notes/ledger.md:10 (imported "
        + text.split("notes/ledger.md:10 (imported ")[1]
    )
    # brain notation carries no line: the fact is written as it stands
    assert cli("export", "--to", "brain", "--output", "brain").exit_code == 0
    assert ANCHORED[2:] in (tree / "brain/ledger.md").read_text(encoding="utf-8")


def test_check_names_the_line_the_fact_stands_at(tree):
    r = cli("check", "notes", "--root", "repo", "--format", "json")
    assert r.exit_code == 1, r.output
    found = json.loads(r.output)["findings"]
    assert [(f["code"], f["file"], f["line"], f["fact_line"], f["path"]) for f in found] == [
        ("BM101", "notes/ledger.md", 10, 10, "src/old_ledger.py")
    ]


def origins(store: Path) -> dict[str, tuple[str, int]]:
    r = cli("export", "--store", store, "--to", "jsonl", "--output", "-")
    facts = map(json.loads, r.output.splitlines())
    return {f["id"]: (f["origin"]["file"], f["origin"]["line"]) for f in facts}


def test_a_fact_moved_back_is_at_its_old_line_again_and_its_row_is_recorded_last(tree):
    store = tree / "know.db"
    (tree / "notes/ledger.md").write_text(FIRST, encoding="utf-8")
    r = cli("import", "notes", "--root", "repo", "--format", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert {f["id"]: f["origin"]["line"] for f in data["facts"]} == {"k1": 3, "k2": 5, "k3": 6}
    assert data["totals"]["provenance_added"] == 0
    assert origins(store) == {
        "k1": ("notes/ledger.md", 3),
        "k2": ("notes/ledger.md", 5),
        "k3": ("notes/ledger.md", 6),
    }
    # the rows stay two a fact: line 5's is recorded again, after line 9's
    assert provenance(store, 2) == [("notes/ledger.md", 9), ("notes/ledger.md", 5)]
    shown = json.loads(cli("show", "k2", "--format", "json").output)["provenance"]
    assert shown[0]["imported"] <= shown[1]["imported"]
    r = cli("stale", "--dry-run")
    assert r.output.splitlines()[0].startswith("notes/ledger.md:5: k2 ")
    # nothing moved since: the store file is not written again
    before = store.read_bytes()
    assert cli("import", "notes", "--root", "repo").exit_code == 0
    assert store.read_bytes() == before


def test_within_one_import_the_last_line_that_fed_a_fact_is_its_origin(tmp_path, monkeypatch):
    line = "+ the ledger keeps every entry in order TER-1\n"
    write(tmp_path, {"notes/ledger.md": f"{line}\n+ refunds are entries too TER-2\n{line}"})
    monkeypatch.chdir(tmp_path)
    r = cli("import", "notes", "--dry-run", "--format", "json")
    assert {f["id"]: f["origin"]["line"] for f in json.loads(r.output)["facts"]} == {
        "k1": 4,
        "k2": 3,
    }
    assert cli("import", "notes").exit_code == 0
    assert provenance(tmp_path / "know.db", 1) == [("notes/ledger.md", 1), ("notes/ledger.md", 4)]
    assert origins(tmp_path / "know.db")["k1"] == ("notes/ledger.md", 4)
    # read again as it is, line 1 feeds it before line 4 does: nothing to record
    before = (tmp_path / "know.db").read_bytes()
    r = cli("import", "notes", "--format", "json")
    assert {f["id"]: f["origin"]["line"] for f in json.loads(r.output)["facts"]} == {
        "k1": 4,
        "k2": 3,
    }
    assert (tmp_path / "know.db").read_bytes() == before


def test_the_origin_follows_the_notes_file_the_latest_import_read(tmp_path, monkeypatch):
    fact = "+ the ledger keeps every entry in order TER-1\n"
    write(tmp_path, {"a/ledger.md": f"\n\n{fact}", "b/ledger.md": fact})
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "know.db"
    assert cli("import", "a/ledger.md").exit_code == 0
    assert cli("import", "b/ledger.md").exit_code == 0
    assert origins(store) == {"k1": ("b/ledger.md", 1)}
    # a.md read again, as it was: its line is the most recent to feed the fact now
    r = cli("import", "a/ledger.md", "--dry-run", "--format", "json")
    assert json.loads(r.output)["facts"][0]["origin"] == {"file": "a/ledger.md", "line": 3}
    assert origins(store) == {"k1": ("b/ledger.md", 1)}  # a dry run records nothing
    assert cli("import", "a/ledger.md").exit_code == 0
    assert origins(store) == {"k1": ("a/ledger.md", 3)}
    assert provenance(store, 1) == [("b/ledger.md", 1), ("a/ledger.md", 3)]
    # both in one import: the command line's order decides
    assert cli("import", "a/ledger.md", "b/ledger.md").exit_code == 0
    assert origins(store) == {"k1": ("b/ledger.md", 1)}
    assert cli("import", "b/ledger.md", "a/ledger.md").exit_code == 0
    assert origins(store) == {"k1": ("a/ledger.md", 3)}


def test_the_store_answers_a_facts_last_row_without_a_prefetch(tree):
    from brainmigrate.stores import Stored

    con = sqlite3.connect(tree / "know.db")
    try:
        stored = Stored(con, tree / "know.db")
        assert [stored.latest(i) for i in (1, 2, 3, 4)] == [
            ("notes/ledger.md", 7),
            ("notes/ledger.md", 9),
            ("notes/ledger.md", 10),
            None,
        ]
        assert Stored().latest(1) is None  # an empty store
    finally:
        con.close()
