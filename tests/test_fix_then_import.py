"""``check --fix`` then a re-import (SPEC.md §Staleness): the fact's anchors follow the
rewritten path -- the file anchor and the declarations found in the old file are replaced
by the new path's -- and keep the fingerprints ``import --verify`` took, so ``stale``
reads the fact fresh at its new path at once, and the knowledge export names no dead
anchor."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path
from types import SimpleNamespace

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


# ------------------------------------------------------------------ every kind of anchor

SERVER = (
    "package server\n\nfunc Start(port int) error {\n\treturn nil\n}\n\n"
    "func Restart(port int) error {\n\treturn Start(port)\n}\n"
)


def fixed_and_imported(tmp_path: Path, notes: dict[str, str], change, *imported) -> list:
    """``notes`` imported with --verify into a checkout of src/converters.py and
    cmd/server.go; the converters file renamed (and ``change``d) and committed; ``check
    --fix`` run, the notes imported again with ``imported`` options; ``stale``'s facts as
    ``(id, state, reason, [(path, symbol, fingerprinted)])``."""
    repo = tmp_path / "repo"
    write(repo, {"src/converters.py": CONVERTERS, "cmd/server.go": SERVER})
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "converters")
    write(tmp_path, notes)
    r = cli("import", "notes", "--root", "repo", "--verify", "--isolated")
    assert r.exit_code == 0, r.output
    (repo / "src/convert").mkdir()
    git(repo, "mv", "src/converters.py", "src/convert/base.py")
    if change:
        (repo / "src/convert/base.py").write_text(change(CONVERTERS))
    git(repo, "commit", "-qam", "split")
    r = cli("check", "notes", "--root", "repo", "--fix", "--isolated")
    assert r.exit_code == 0, r.output
    r = cli("import", "notes", "--root", "repo", "--isolated", *imported)
    assert r.exit_code == 0, r.output
    after = cli("stale", "--root", "repo", "--format", "json")
    return [
        (
            f["id"],
            f["state"],
            f["reason"],
            [(a["path"], a["symbol"], a["fingerprinted"]) for a in f["anchors"]],
        )
        for f in json.loads(after.stdout)["facts"]
    ]


def upper(text: str) -> str:
    return text.replace("return name", "return name.upper()")


def test_a_symbol_anchor_keeps_its_fingerprint_at_the_new_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    notes = {"notes/a.md": "+ ConverterRegistry in src/converters.py keeps the names\n"}
    assert fixed_and_imported(tmp_path, notes, upper) == [
        (
            "k1",
            "body changed",
            "STALE: body changed: src/convert/base.py",
            [
                ("src/convert/base.py", None, True),
                ("src/convert/base.py", "ConverterRegistry", True),
            ],
        )
    ]


def test_a_file_anchor_with_lines_keeps_its_fingerprint_at_the_new_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    notes = {"notes/a.md": "+ src/converters.py:2-3 keeps the names\n"}
    assert fixed_and_imported(tmp_path, notes, upper) == [
        (
            "k1",
            "body changed",
            "STALE: body changed: src/convert/base.py#ConverterRegistry.register",
            [("src/convert/base.py", None, True)],
        )
    ]
    assert (tmp_path / "notes/a.md").read_text() == "+ src/convert/base.py:2-3 keeps the names\n"


def test_an_unchanged_target_with_lines_reads_fresh_with_its_old_fingerprint(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    notes = {"notes/a.md": "+ src/converters.py:2-3 keeps the names\n"}
    assert fixed_and_imported(tmp_path, notes, None) == [
        ("k1", "fresh", None, [("src/convert/base.py", None, True)])
    ]
    [(verified_at, commit)] = (
        sqlite3.connect(tmp_path / "know.db")
        .execute("SELECT verified_at, verified_commit FROM anchors")
        .fetchall()
    )
    first = subprocess.run(
        ["git", "rev-list", "--max-parents=0", "HEAD"],
        cwd=tmp_path / "repo",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert commit == first  # the fingerprint taken before the move, not a new one
    assert verified_at is not None


def test_several_citations_in_one_fact_each_keep_theirs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    notes = {"notes/a.md": "+ src/converters.py and cmd/server.go keep the names\n"}
    assert fixed_and_imported(tmp_path, notes, upper) == [
        (
            "k1",
            "body changed",
            "STALE: body changed: src/convert/base.py",
            [("cmd/server.go", None, True), ("src/convert/base.py", None, True)],
        )
    ]


def test_a_fact_merged_with_a_repeat_keeps_its_fingerprint(tmp_path, monkeypatch):
    """Two lines, one fact: its text is the second line's, so the first line, fixed, is
    not the fact's text with only its paths changed; with its old path put back it
    repeats the fact. No new fact is made (it would read fresh without a fingerprint)."""
    monkeypatch.chdir(tmp_path)
    line = "+ the ConverterRegistry class in src/converters.py keeps the names of {} converter"
    line += " it was given at startup\n"
    notes = {"notes/a.md": line.format("every") + line.format("each")}
    assert fixed_and_imported(tmp_path, notes, upper) == [
        (
            "k1",
            "body changed",
            "STALE: body changed: src/convert/base.py",
            [
                ("src/convert/base.py", None, True),
                ("src/convert/base.py", "ConverterRegistry", True),
            ],
        )
    ]


def test_sync_keeps_the_fingerprint_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    notes = {
        "notes/a.md": "+ src/converters.py keeps the names\n+ cmd/server.go restarts\n",
    }
    assert fixed_and_imported(tmp_path, notes, upper, "--sync") == [
        (
            "k1",
            "body changed",
            "STALE: body changed: src/convert/base.py",
            [("src/convert/base.py", None, True)],
        ),
        ("k2", "fresh", None, [("cmd/server.go", None, True)]),
    ]


def test_import_verify_takes_a_new_fingerprint_at_the_new_path(tmp_path, monkeypatch):
    """``import --verify`` says the facts it writes hold: the new path is fingerprinted
    as it is now (SPEC.md §Staleness "When fingerprints are taken")."""
    monkeypatch.chdir(tmp_path)
    notes = {"notes/a.md": "+ src/converters.py keeps the names\n"}
    assert fixed_and_imported(tmp_path, notes, upper, "--verify") == [
        ("k1", "fresh", None, [("src/convert/base.py", None, True)])
    ]


def test_every_field_of_a_fingerprint_travels_with_a_rewritten_citation():
    from brainmigrate.merge.rule import add_anchors, drop_moved
    from brainmigrate.model import Anchor

    old = Anchor(
        "file", "repo", "src/a.rs", None, (3, 9), "cited", "s", "b", ("function", None, "f"),
        "c0ffee", "2026-11-30T08:00:00Z", "h", "sketch-bytes", 2,
    )  # fmt: skip
    # what the two read of a fact's record
    rec = SimpleNamespace(anchors=[old], gone=[], text="f is in lib/a.rs")
    carried = drop_moved(rec, [("src/a.rs", "lib/a.rs")])
    assert rec.anchors == []
    add_anchors(rec, [Anchor("file", "repo", "lib/a.rs", None, (3, 9), "cited")], carried)
    [new] = rec.anchors
    assert (new.path, new.lines, new.how) == ("lib/a.rs", (3, 9), "cited")
    fingerprint = ("signature_digest", "body_digest", "target", "commit", "verified_at")
    fingerprint += ("content_hash", "sketch", "digest_version")
    assert [getattr(new, f) for f in fingerprint] == [getattr(old, f) for f in fingerprint]


def fixed(
    tmp_path: Path, notes: str, then: str | None = None, *imported: str, gone: tuple = ()
) -> list:
    """``notes`` (notes/a.md) imported with --verify; src/converters.py renamed and
    changed, the files ``gone`` deleted; ``check --fix`` run; the fixed notes edited by
    ``then`` (``{}`` stands for the fixed text) and imported again with ``imported``;
    ``stale``'s facts as ``(id, state, reason, [(path, fingerprinted)])``."""
    repo = tmp_path / "repo"
    write(repo, {"src/converters.py": CONVERTERS, "cmd/server.go": SERVER})
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "converters")
    write(tmp_path, {"notes/a.md": notes})
    assert cli("import", "notes", "--root", "repo", "--verify", "--isolated").exit_code == 0
    (repo / "src/convert").mkdir()
    git(repo, "mv", "src/converters.py", "src/convert/base.py")
    (repo / "src/convert/base.py").write_text(upper(CONVERTERS))
    for rel in gone:
        (repo / rel).unlink()
    git(repo, "commit", "-qam", "split")
    fix = cli("check", "notes", "--root", "repo", "--fix", "--isolated")
    assert fix.exit_code == (1 if gone else 0), fix.output  # a gone file no fix finds
    if then is not None:
        text = (tmp_path / "notes/a.md").read_text()
        (tmp_path / "notes/a.md").write_text(then.format(text))
    r = cli("import", "notes", "--root", "repo", "--isolated", *imported)
    assert r.exit_code == 0, r.output
    after = cli("stale", "--root", "repo", "--format", "json")
    return [
        (f["id"], f["state"], f["reason"], [(a["path"], a["fingerprinted"]) for a in f["anchors"]])
        for f in json.loads(after.stdout)["facts"]
    ]


@pytest.mark.parametrize("imported", [(), ("--sync",)])
def test_a_fixed_line_that_moved_down_its_file_keeps_its_fingerprint(
    tmp_path, monkeypatch, imported
):
    """Lines added above the fixed line before the import: it is no longer at the file
    and line that fed the fact, and its text with other paths is not similar enough for
    the repeat rule (the path is most of its words); it is still that fact."""
    monkeypatch.chdir(tmp_path)
    got = fixed(tmp_path, "+ src/converters.py keeps names\n", "+ cmd/server.go restarts\n{}")
    assert got == [
        ("k1", "body changed", "STALE: body changed: src/convert/base.py",
         [("src/convert/base.py", True)]),
        ("k2", "fresh", None, [("cmd/server.go", False)]),
    ]  # fmt: skip


def test_a_moved_line_is_no_edit_when_two_stored_facts_could_be_it(tmp_path, monkeypatch):
    """Both stored facts are gone from the notes, so are the files they cite, and the line
    is either up to its path: it is a new fact, and the old ones keep what they had."""
    monkeypatch.chdir(tmp_path)
    notes = "+ src/converters.py keeps names\n+ cmd/server.go keeps names\n"
    then = "+ one thing\n+ another thing\n+ src/convert/base.py keeps names\n"
    got = fixed(tmp_path, notes, then, gone=("cmd/server.go",))
    assert got == [
        ("k1", "body changed",
         "STALE: body changed: src/convert/base.py (moved from src/converters.py)",
         [("src/converters.py", True)]),
        ("k2", "file gone", "STALE: file gone: cmd/server.go", [("cmd/server.go", True)]),
        ("k5", "fresh", None, [("src/convert/base.py", False)]),
    ]  # fmt: skip


def test_a_fact_added_above_one_that_cites_another_file_is_a_new_fact(tmp_path, monkeypatch):
    """A new line at the file and line of a fact that is still stated below it is no
    edit of that fact, though its text is the fact's up to its cited path."""
    monkeypatch.chdir(tmp_path)
    repo = tmp_path / "repo"
    write(repo, {"src/a.py": "def a():\n    return 1\n", "src/b.py": "def b():\n    return 2\n"})
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two")
    write(tmp_path, {"notes/n.md": "+ see src/a.py for the reader\n"})
    assert cli("import", "notes", "--root", "repo", "--verify", "--isolated").exit_code == 0
    (tmp_path / "notes/n.md").write_text(
        "+ see src/b.py for the reader\n+ see src/a.py for the reader\n"
    )
    assert cli("import", "notes", "--root", "repo", "--isolated").exit_code == 0
    after = cli("stale", "--root", "repo", "--format", "json")
    got = [
        (
            f["id"],
            f["state"],
            f["origin"]["line"],
            [(a["path"], a["fingerprinted"]) for a in f["anchors"]],
        )
        for f in json.loads(after.stdout)["facts"]
    ]
    assert got == [
        ("k1", "fresh", 2, [("src/a.py", True)]),
        ("k2", "fresh", 1, [("src/b.py", False)]),
    ]


def test_a_fix_to_a_file_renamed_superseded_keeps_the_fact_active(tmp_path, monkeypatch):
    """``--fix`` writes the path git renamed a file to; a file named ``SUPERSEDED.py`` is a
    path, not the status word: the fact imported again stays active (it was superseded)."""
    monkeypatch.chdir(tmp_path)
    repo = tmp_path / "repo"
    write(repo, {"src/old.py": CONVERTERS, "src/kept.py": "X = 1\n"})
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "start")
    git(repo, "mv", "src/old.py", "src/SUPERSEDED.py")
    git(repo, "commit", "-qm", "rename")
    write(tmp_path, {"notes/conv.md": "+ the converters live in src/old.py\n"})
    r = cli("check", "notes/conv.md", "--root", "repo", "--fix")
    assert (r.exit_code, r.stderr.splitlines()[-1]) == (0, "Fixed 1 citation in 1 file; 0 left")
    text = (tmp_path / "notes/conv.md").read_text()
    assert text == "+ the converters live in src/SUPERSEDED.py\n"
    r = cli("import", "notes/conv.md", "--root", "repo", "--isolated")
    assert r.exit_code == 0, r.output
    con = sqlite3.connect(tmp_path / "know.db")
    try:
        rows = con.execute("SELECT text, status FROM facts").fetchall()
    finally:
        con.close()
    assert rows == [("the converters live in src/SUPERSEDED.py", "active")]
