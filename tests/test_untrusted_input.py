"""Stores, baselines and options from outside: every value is checked where it enters, and
what fails is one line on stderr with exit 2, never an internal error (issue 11)."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from brainmigrate.cli import main

NOTES = (
    "+ the app starts in src/app.py:2 TER-1 <!-- 2026-09-23 13:16 nightly -->\n"
    "! the release is blocked by src/old.py\n"
    "~ we keep SQLite for the store\n"
)
RECOVER = "restore a backup, or import the notes into a new store"


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """``n.md`` (three facts: k1 anchored to ``src/app.py``, k2 citing a gone file, k3
    plain), a checkout ``.`` and the store ``k.db`` they were imported into."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("import os\n\ndef main():\n    pass\n")
    (tmp_path / "n.md").write_text(NOTES)
    done = cli("import", "n.md", "--store", "k.db")
    assert done.exit_code == 0, done.output
    return tmp_path


def tamper(db: Path, *statements: str) -> str:
    con = sqlite3.connect(db)
    with con:
        for sql in statements:
            con.execute(sql)
    con.close()
    return digest(db)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def refused(args, message):
    got = cli(*args)
    assert (got.exit_code, got.stderr, got.stdout) == (2, f"brainmigrate: error: {message}\n", "")


EXPORTS = [
    ["export", "--store", "k.db", "--to", target, "--output", f"out-{target}"]
    for target in ("jsonl", "brain", "knowledge", "memory")
]
IMPORTS = [
    ["import", "n.md", "--store", "k.db", "--dry-run"],
    ["import", "n.md", "--store", "k.db"],
]


def test_an_id_too_large_for_sqlite_is_no_fact(project):
    for fact_id in ("k99999999999999999999", "9223372036854775808"):
        refused(
            ["show", fact_id, "--store", "k.db"],
            f"no fact k{fact_id.lstrip('k')} in k.db; 'brainmigrate search' finds ids",
        )


def test_a_deleted_fact_whose_anchors_remain(project):
    before = tamper(project / "k.db", "DELETE FROM facts WHERE id = 1")
    for args in IMPORTS + EXPORTS:
        refused(
            args,
            "k.db: the store is inconsistent (fact k1 is missing, but anchors rows name it); "
            + RECOVER,
        )
    assert digest(project / "k.db") == before
    assert sorted(p.name for p in project.iterdir()) == ["k.db", "n.md", "src"]


def test_a_negative_fact_id(project):
    before = tamper(
        project / "k.db",
        "UPDATE facts SET id = -3 WHERE id = 3",
        "UPDATE provenance SET fact_id = -3 WHERE fact_id = 3",
    )
    for args in IMPORTS + EXPORTS:
        refused(
            args,
            "k.db: the store is inconsistent (a facts row: id is -3, not a fact id of 1 or"
            " more); " + RECOVER,
        )
    assert digest(project / "k.db") == before


def test_a_blob_text(project):
    before = tamper(project / "k.db", "UPDATE facts SET text = CAST(text AS BLOB) WHERE id = 2")
    message = "k.db: the store is inconsistent (fact k2: text is a BLOB, not text); " + RECOVER
    for args in IMPORTS + EXPORTS:
        refused(args, message)
    refused(["show", "k2", "--store", "k.db"], message)
    refused(["search", "release", "--store", "k.db"], message)
    assert digest(project / "k.db") == before


def test_the_largest_id_leaves_none_for_a_new_fact(project):
    before = tamper(
        project / "k.db",
        "UPDATE facts SET id = 9223372036854775807 WHERE id = 3",
        "UPDATE provenance SET fact_id = 9223372036854775807 WHERE fact_id = 3",
    )
    for args in IMPORTS:
        refused(
            args,
            "k.db: the store is inconsistent (fact k9223372036854775807 leaves no id for a new"
            " fact); " + RECOVER,
        )
    assert digest(project / "k.db") == before
    got = cli("show", "k9223372036854775807", "--store", "k.db")
    assert got.exit_code == 0 and got.stdout.startswith("k9223372036854775807 decision")


@pytest.mark.parametrize(
    ("sql", "what"),
    [
        (
            "UPDATE facts SET kind = 'rumour' WHERE id = 3",
            "fact k3: kind is 'rumour', not one of decision, pattern, blocker, environment, other",
        ),
        (
            "UPDATE facts SET created = 'yesterday' WHERE id = 1",
            "fact k1: created is 'yesterday', not a time like 2026-09-23T13:16:09Z",
        ),
        (
            "UPDATE facts SET created = NULL WHERE id = 1",
            "fact k1: run is set but created is NULL (a stamp gives both)",
        ),
        (
            "UPDATE facts SET supersedes = '{\"a\": 1}' WHERE id = 2",
            "fact k2: supersedes is '{\"a\": 1}', not a JSON list of fact ids",
        ),
        (
            "UPDATE anchors SET line_first = 1e400 WHERE fact_id = 1",
            "an anchors row of k1: line_first is the real number inf, not a line number or NULL",
        ),
        (
            "UPDATE anchors SET line_last = -2 WHERE fact_id = 1",
            "an anchors row of k1: line_last is -2, not a line number or NULL",
        ),
        (
            "UPDATE citations SET path = x'00ff' WHERE fact_id = 2",
            "a citations row of k2: path is a BLOB, not text",
        ),
    ],
)
def test_a_value_the_importer_never_writes(project, sql, what):
    before = tamper(project / "k.db", sql)
    for args in IMPORTS + EXPORTS:
        refused(args, f"k.db: the store is inconsistent ({what}); {RECOVER}")
    assert digest(project / "k.db") == before


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["import", "n.md", "--task-pattern", ""], "--task-pattern"),
        (["import", "n.md", "--scope", "  "], "--scope"),
        (["import", "n.md", "--dry-run", "--scope", ""], "--scope"),
        (["check", "n.md", "--task-pattern", ""], "--task-pattern"),
        (["check", "n.md", "--scope", "\t"], "--scope"),
        (
            ["export", "--store", "k.db", "--to", "brain", "--output", "o", "--task-pattern", ""],
            "--task-pattern",
        ),
        (
            ["export", "--store", "k.db", "--to", "jsonl", "--output", "o", "--scope", " , "],
            "--scope",
        ),
        (["search", "app", "--store", "k.db", "--scope", ""], "--scope"),
    ],
)
def test_an_empty_or_blank_option_is_a_usage_error(project, args, option):
    before = digest(project / "k.db")
    refused(
        args,
        f"Invalid value for '{option}': empty or blank; give a value or leave the option out;"
        f" see 'brainmigrate {args[0]} --help'",
    )
    assert digest(project / "k.db") == before
    assert sorted(p.name for p in project.iterdir()) == ["k.db", "n.md", "src"]
