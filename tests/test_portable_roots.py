"""Portable roots (issue 24): the store records each root relative to its own folder, with
the root's git remote, so a copy of the checkout and its store, a teammate's clone and CI
read the same anchors; ``--root`` maps a recorded root to a folder; a version-2 store is
upgraded in place on its first write (SPEC.md §Store, §Staleness)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

from clirun import cli
from trees import git, write

NOTES = """\
+ payments retry twice in src/pay.py
+ the deploy script is deploy/run.sh
"""

PAY = "def charge(amount):\n    return amount * 2\n"


def checkout(folder: Path, remote: str | None = None, files: dict | None = None) -> Path:
    """A git checkout at ``folder`` holding the notes and the files they cite."""
    write(folder, files or {"notes/facts.md": NOTES, "src/pay.py": PAY, "deploy/run.sh": "ok\n"})
    git(folder, "init", "-q")
    if remote:
        git(folder, "remote", "add", "origin", remote)
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "start")
    return folder


def rows(db: Path, sql: str) -> list:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def every_text(db: Path) -> list[str]:
    """Every text value of every table of the store (FTS5's own tables left out)."""
    con = sqlite3.connect(db)
    try:
        tables = [
            r[0]
            for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")
            if not r[0].startswith("facts_fts")
        ]
        out = []
        for t in tables:
            for row in con.execute(f"SELECT * FROM {t}"):
                out.extend(v for v in row if isinstance(v, str))
        return out
    finally:
        con.close()


def imported(monkeypatch, repo: Path, *extra: str):
    monkeypatch.chdir(repo)
    r = cli("import", "notes", "--root", ".", "--store", "know.db", "--format", "json", *extra)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_a_committed_store_holds_no_absolute_path(tmp_path, monkeypatch):
    repo = checkout(tmp_path / "repo", "https://alice:s3cret@github.com/Acme/Pay.git")
    imported(monkeypatch, repo, "--verify")
    db = repo / "know.db"
    assert rows(db, "SELECT DISTINCT root FROM anchors") == [(".",)]
    assert rows(db, "SELECT name, remote, position FROM roots") == [(".", "github.com/acme/pay", 0)]
    texts = every_text(db)
    assert not [t for t in texts if str(tmp_path) in t or t.startswith("/")]
    assert not [t for t in texts if "s3cret" in t or "alice" in t]  # no credentials either


def test_a_copy_of_checkout_and_store_adds_no_anchor_and_stale_reads_the_copy(
    tmp_path, monkeypatch
):
    first = checkout(tmp_path / "one" / "repo")
    imported(monkeypatch, first, "--verify")
    anchors = rows(first / "know.db", "SELECT * FROM anchors ORDER BY rowid")
    assert [(r[1], r[2], r[3]) for r in anchors] == [
        ("file", ".", "src/pay.py"),
        ("file", ".", "deploy/run.sh"),
    ]
    copy = tmp_path / "two" / "repo"
    shutil.copytree(first, copy, symlinks=True)

    data = imported(monkeypatch, copy)
    assert data["totals"]["added"] == 0 and data["totals"]["updated"] == 0
    assert rows(copy / "know.db", "SELECT * FROM anchors ORDER BY rowid") == anchors

    # stale without --root reads the copy, not the checkout the store was made in
    (copy / "src/pay.py").write_text("def charge(amount):\n    return amount * 3\n")
    r = cli("stale", "--store", str(copy / "know.db"), "--format", "json")
    assert r.exit_code == 1, r.output
    out = json.loads(r.stdout)
    assert (out["checked"], out["stale"], out["unreachable"]) == (2, 1, 0)
    [changed] = [f for f in out["facts"] if f["state"] != "fresh"]
    assert changed["reason"] == "STALE: body changed: src/pay.py"
    assert changed["anchors"][0]["root"] == "."  # as recorded, no absolute path
    r = cli("stale", "--store", str(first / "know.db"))
    assert r.exit_code == 0, r.output
    assert r.output == "OK: checked 2, stale 0, unreachable 0\n"


def test_show_search_and_jsonl_print_the_recorded_root(tmp_path, monkeypatch):
    repo = checkout(tmp_path / "repo")
    imported(monkeypatch, repo)
    show = cli("show", "k1", "--store", "know.db", "--format", "json")
    assert show.exit_code == 0, show.output
    assert [a["root"] for a in json.loads(show.stdout)["anchors"]] == ["."]
    text = cli("show", "k1", "--store", "know.db")
    assert "  file src/pay.py (cited; root .)" in text.output.splitlines()
    found = cli("search", "payments", "--store", "know.db", "--format", "json")
    assert found.exit_code == 0, found.output
    assert [a["root"] for a in json.loads(found.stdout)["hits"][0]["fact"]["anchors"]] == ["."]
    out = tmp_path / "facts.jsonl"
    r = cli("export", "--store", "know.db", "--to", "jsonl", "--output", str(out))
    assert r.exit_code == 0, r.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [[a["root"] for a in f["anchors"]] for f in lines] == [["."], ["."]]


def test_a_store_beside_the_checkouts_matches_a_clone_by_its_remote(tmp_path, monkeypatch):
    """A store kept outside the checkout: CI's clone lies elsewhere relative to the store,
    so its path is not the recorded one; its git remote is, and it adds no anchor."""
    url = "git@github.com:acme/pay.git"
    laptop = checkout(tmp_path / "laptop/code/pay", url)
    store = tmp_path / "laptop/stores/know.db"
    store.parent.mkdir()
    monkeypatch.chdir(laptop)
    r = cli("import", "notes", "--root", ".", "--store", str(store))
    assert r.exit_code == 0, r.output
    assert rows(store, "SELECT name, remote FROM roots") == [("../code/pay", "github.com/acme/pay")]
    anchors = rows(store, "SELECT * FROM anchors ORDER BY rowid")

    ci = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(laptop), str(ci / "src/pay"))
    git(ci / "src/pay", "remote", "set-url", "origin", "https://github.com/acme/pay")
    (ci / "know.db").write_bytes(store.read_bytes())
    monkeypatch.chdir(ci / "src/pay")
    r = cli("import", "notes", "--root", ".", "--store", str(ci / "know.db"))
    assert r.exit_code == 0, r.output
    assert rows(ci / "know.db", "SELECT * FROM anchors ORDER BY rowid") == anchors
    assert rows(ci / "know.db", "SELECT name FROM roots") == [("../code/pay",)]
    # the recorded folder is not here: --root maps the recorded root to the clone
    r = cli("stale", "--store", str(ci / "know.db"), "--root", ".")
    assert (r.exit_code, r.output) == (0, "OK: checked 2, stale 0, unreachable 0\n")
    # import --verify fingerprints in the clone the import read, not the recorded folder
    r = cli("import", "notes", "--root", ".", "--store", str(ci / "know.db"), "--verify")
    assert r.exit_code == 0, r.output
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ci / "src/pay", capture_output=True, text=True
    ).stdout.strip()
    assert rows(ci / "know.db", "SELECT root, verified_commit FROM anchors") == [
        ("../code/pay", head),
        ("../code/pay", head),
    ]


def test_root_maps_several_recorded_roots_by_remote_before_position(tmp_path, monkeypatch):
    """Two recorded roots that both hold ``config.yaml``: given in the other order,
    each --root still reads the anchors of the root of its own remote."""
    app = checkout(
        tmp_path / "app",
        "https://github.com/acme/app.git",
        {"notes/facts.md": "+ the app reads config.yaml at start\n", "config.yaml": "app: 1\n"},
    )
    checkout(tmp_path / "infra", "https://github.com/acme/infra.git", {"config.yaml": "x: 2\n"})
    monkeypatch.chdir(tmp_path)
    r = cli("import", "app/notes", "--root", "app", "--root", "infra", "--store", "know.db")
    assert r.exit_code == 0, r.output
    assert cli("verify", "--all", "--store", "know.db").exit_code == 0
    assert rows(tmp_path / "know.db", "SELECT name, remote, position FROM roots") == [
        ("app", "github.com/acme/app", 0),
        ("infra", "github.com/acme/infra", 1),
    ]
    moved = tmp_path / "elsewhere"
    shutil.copytree(app, moved / "a")
    shutil.copytree(tmp_path / "infra", moved / "b")
    roots = ["--root", str(moved / "b"), "--root", str(moved / "a")]
    r = cli("stale", "--store", "know.db", *roots)
    assert (r.exit_code, r.output) == (0, "OK: checked 1, stale 0, unreachable 0\n")
    (moved / "a/config.yaml").write_text("app: 2\n")
    r = cli("stale", "--store", "know.db", "--dry-run", *roots)
    assert r.exit_code == 1, r.output
    assert "STALE: body changed: config.yaml" in r.output


def downgraded_to_version_2(db: Path, root: Path) -> None:
    """The store as a version-2 brainmigrate left it: absolute roots, no roots table, no
    sketch or digest version."""
    con = sqlite3.connect(db)
    try:
        con.execute("UPDATE anchors SET root=?", (str(root),))
        con.execute("DROP TABLE roots")
        con.execute("ALTER TABLE anchors DROP COLUMN sketch")
        con.execute("ALTER TABLE anchors DROP COLUMN digest_version")
        con.execute("PRAGMA user_version = 2")
        con.commit()
    finally:
        con.close()


def test_a_version_2_store_is_read_as_it_is_and_upgraded_on_its_first_write(tmp_path, monkeypatch):
    repo = checkout(tmp_path / "repo", "https://github.com/acme/pay.git")
    imported(monkeypatch, repo, "--verify")
    db = repo / "know.db"
    downgraded_to_version_2(db, repo)
    before = db.read_bytes()
    show = cli("show", "k1", "--store", "know.db", "--format", "json")
    assert show.exit_code == 0, show.output
    assert json.loads(show.stdout)["anchors"][0]["root"] == str(repo)
    r = cli("stale", "--store", "know.db", "--dry-run")
    assert (r.exit_code, r.output) == (
        0,
        "OK: checked 2, stale 0, unreachable 0 (dry run: nothing recorded)\n",
    )
    assert db.read_bytes() == before  # read-only commands leave it at version 2

    dry = imported(monkeypatch, repo, "--dry-run")
    assert dry["totals"]["added"] == 0 and dry["totals"]["updated"] == 0
    assert rows(db, "PRAGMA user_version") == [(2,)]
    data = imported(monkeypatch, repo)
    assert data["totals"]["added"] == 0 and data["totals"]["updated"] == 0
    assert rows(db, "PRAGMA user_version") == [(4,)]
    assert rows(db, "SELECT root, path FROM anchors ORDER BY rowid") == [
        (".", "src/pay.py"),
        (".", "deploy/run.sh"),
    ]
    assert rows(db, "SELECT name, remote, position FROM roots") == [(".", "github.com/acme/pay", 0)]
    assert rows(db, "SELECT count(*) FROM anchors WHERE verified_commit IS NOT NULL") == [(2,)]


def test_a_fixed_absolute_citation_replaces_the_anchor_of_a_relative_root(tmp_path, monkeypatch):
    """``check --fix`` rewrote an absolute citation under the root: the re-import drops the
    anchor the old path gave, though the store records the root as ``.``."""
    repo = tmp_path / "repo"
    write(repo, {"src/old.py": "def a():\n    return 1\n"})
    write(repo, {"notes/facts.md": f"+ the helper lives in {repo}/src/old.py\n"})
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "start")
    imported(monkeypatch, repo)
    assert rows(repo / "know.db", "SELECT root, path FROM anchors") == [(".", "src/old.py")]
    git(repo, "mv", "src/old.py", "src/new.py")
    git(repo, "commit", "-qm", "move")
    r = cli("check", "notes", "--root", ".", "--fix")
    assert r.exit_code == 0, r.output
    assert (repo / "notes/facts.md").read_text() == f"+ the helper lives in {repo}/src/new.py\n"
    imported(monkeypatch, repo)
    assert rows(repo / "know.db", "SELECT root, path FROM anchors") == [(".", "src/new.py")]


def test_a_version_2_store_made_elsewhere_upgrades_onto_the_importing_root(tmp_path, monkeypatch):
    """A committed v2 store's absolute root is no folder in a clone: the clone's first
    import names it after its own root at that position, so it adds no anchor."""
    repo = checkout(tmp_path / "alice" / "repo")
    imported(monkeypatch, repo, "--verify")
    downgraded_to_version_2(repo / "know.db", repo)
    clone = tmp_path / "ci" / "repo"
    shutil.copytree(repo, clone)
    shutil.rmtree(repo)
    dry = imported(monkeypatch, clone, "--dry-run")
    assert (dry["totals"]["added"], dry["totals"]["updated"]) == (0, 0)
    data = imported(monkeypatch, clone)
    assert (data["totals"]["added"], data["totals"]["updated"]) == (0, 0)
    db = clone / "know.db"
    assert rows(db, "SELECT root, path FROM anchors ORDER BY rowid") == [
        (".", "src/pay.py"),
        (".", "deploy/run.sh"),
    ]
    assert rows(db, "SELECT name, position FROM roots") == [(".", 0)]
