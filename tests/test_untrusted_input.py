"""Stores, baselines and options from outside: every value is checked where it enters, and
what fails is one line on stderr with exit 2, never an internal error (issue 11)."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from clirun import cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

NOTES = (
    "+ the app starts in src/app.py:2 TER-1 <!-- 2026-09-23 13:16 nightly -->\n"
    "! the release is blocked by src/old.py\n"
    "~ we keep SQLite for the store\n"
)
RECOVER = "restore a backup, or import the notes into a new store"


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
    refused(
        ["show", "9223372036854775808", "--store", "k.db"],
        "no fact k9223372036854775808 in k.db; 'brainmigrate search' finds ids",
    )
    refused(  # more digits than any id has: told before the store is read
        ["show", "k99999999999999999999", "--store", "k.db"],
        "no fact k99999999999999999999: a fact id has at most 19 digits; 'brainmigrate"
        " search' finds ids",
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


@pytest.mark.parametrize(
    "sql, what",
    [
        ("UPDATE anchors SET path = CAST(path AS BLOB)", "path is a BLOB, not text"),
        ("UPDATE anchors SET kind = 'weird'", "kind is 'weird', not one of file, folder, symbol"),
        ("UPDATE anchors SET line_first = -5, line_last = -5", "line_first is -5, not a line"),
    ],
)
def test_staleness_reads_anchor_rows_as_every_command_does(project, sql, what):
    # stale, verify and search --anchor read anchors on their own path: checked there too
    before = tamper(project / "k.db", sql)
    message = f"k.db: the store is inconsistent (an anchors row of k1: {what}"
    for args in (
        ["stale", "--store", "k.db", "--dry-run"],
        ["stale", "--store", "k.db"],
        ["verify", "--all", "--store", "k.db"],
        ["show", "k1", "--store", "k.db"],
    ):
        got = cli(*args)
        assert got.exit_code == 2, (args, got.output)
        assert got.stderr.startswith(f"brainmigrate: error: {message}"), (args, got.stderr)
        assert got.stderr.endswith(RECOVER + "\n") and got.stderr.count("\n") == 1
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


def test_a_negative_schema_version(project):
    before = tamper(project / "k.db", "PRAGMA user_version = -1")
    for args in IMPORTS + EXPORTS + [["search", "app", "--store", "k.db"]]:
        refused(args, "k.db has schema version -1, which no brainmigrate writes; " + RECOVER)
    assert digest(project / "k.db") == before


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


# ------------------------------------------------------------------------------ any store

COLUMNS = {
    "facts": (
        "id scope kind marker text task run created status status_reason supersedes related"
        " stems numbers tasks imported updated"
    ).split(),
    "anchors": (
        "fact_id kind root path symbol line_first line_last how signature_digest body_digest"
        " verified_at"
    ).split(),
    "citations": ["fact_id", "state", "path"],
    "provenance": ["fact_id", "file", "line", "fingerprint", "imported"],
    "facts_fts": ["words"],
    "meta": ["key", "value"],
}
#: NULL, a BLOB, negative, zero and huge numbers, a real, and texts.
VALUES = [None, b"\x00\xff", -1, -(2**63), 0, 2**63 - 1, float("inf"), 1.5, "", "k1", "[1]"]

set_value = st.tuples(
    st.just("set"),
    st.sampled_from(sorted(COLUMNS)).flatmap(
        lambda t: st.tuples(st.just(t), st.sampled_from(COLUMNS[t]))
    ),
    st.sampled_from(VALUES),
    st.integers(0, 5),
)
delete_row = st.tuples(st.just("delete"), st.sampled_from(sorted(COLUMNS)), st.integers(0, 5))
mutation = st.lists(st.one_of(set_value, delete_row), min_size=1, max_size=3)
#: A baseline's entries with one field set to an odd value, or a top-level key changed.
ODD_JSON = [None, "", "many", -1, 0, 2**70, 1.5, True, [], {}, "Infinity"]
baseline_edit = st.one_of(
    st.tuples(
        st.just("entry"),
        st.sampled_from(["fingerprint", "count", "code", "scope", "path", "text"]),
        st.sampled_from([*ODD_JSON, "drop"]),
    ),
    st.tuples(
        st.just("top"),
        st.sampled_from(["schema_version", "entries"]),
        st.sampled_from([*ODD_JSON, "drop"]),
    ),
)


def mutate(db: Path, changes) -> None:
    con = sqlite3.connect(db)
    for change in changes:
        if change[0] == "set":
            _, (table, column), value, n = change
            sql = f"UPDATE {table} SET {column} = ? WHERE rowid = "
            args = [value]
        else:
            _, table, n = change
            sql, args = f"DELETE FROM {table} WHERE rowid = ", []
        sql += f"(SELECT rowid FROM {table} ORDER BY rowid LIMIT 1 OFFSET {n})"
        try:
            with con:
                con.execute(sql, args)
        except sqlite3.Error:
            pass  # NOT NULL, a primary key taken, a value FTS5 refuses: the store stays
    con.close()


def edit_baseline(path: Path, edit) -> None:
    data = json.loads(path.read_text())
    where, key, value = edit
    target = data if where == "top" else data["entries"][0]
    if value == "drop":
        target.pop(key, None)
    else:
        target[key] = float("inf") if value == "Infinity" else value
    path.write_text(json.dumps(data))


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A checkout with notes, the store they were imported into and a baseline of them."""
    folder = tmp_path_factory.mktemp("base")
    (folder / "src").mkdir()
    (folder / "src" / "app.py").write_text("import os\n\ndef main():\n    pass\n")
    (folder / "n.md").write_text(NOTES + "+ see src/gone.py and src/app.py:3 SUPERSEDED\n")
    root = ["--root", folder]
    assert cli("import", folder / "n.md", *root, "--store", folder / "k.db").exit_code == 0
    done = cli(
        "check", folder / "n.md", *root, "--baseline", folder / "bl.json", "--update-baseline"
    )
    assert done.exit_code == 0, done.output
    return folder


def one_line_or_done(got, allowed=(0, 2)) -> None:
    assert got.exception is None or isinstance(got.exception, SystemExit), got.exception
    assert got.exit_code in allowed, (got.exit_code, got.output)
    assert "internal error" not in got.stderr and "Traceback" not in got.stderr, got.stderr
    if got.exit_code == 2:
        assert got.stderr.startswith("brainmigrate: error: ") and got.stderr.count("\n") == 1, (
            got.stderr
        )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes=mutation, edit=baseline_edit)
def test_any_store_or_baseline_is_read_or_refused_in_one_line(base, changes, edit):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        db = tmp / "k.db"
        shutil.copyfile(base / "k.db", db)
        mutate(db, changes)
        before = digest(db)
        baseline = tmp / "bl.json"
        shutil.copyfile(base / "bl.json", baseline)
        edit_baseline(baseline, edit)
        notes, root = base / "n.md", ["--root", base]
        for args in (
            ["import", notes, *root, "--store", db, "--dry-run"],
            *(
                ["export", "--store", db, "--to", target, "--output", tmp / target]
                for target in ("jsonl", "brain", "knowledge", "memory")
            ),
            ["search", "app", "release", "--store", db, "--format", "json"],
            ["search", "app", "--store", db, "--all"],
            ["show", "k1", "--store", db],
            ["show", "k2", "--store", db, "--format", "json"],
            ["search", "--anchor", "app", "--store", db],
            ["stale", "--store", db, *root, "--dry-run", "--format", "json"],
        ):
            got = cli(*args)
            one_line_or_done(got, (0, 1, 2) if args[0] == "stale" else (0, 2))
            assert digest(db) == before, args  # these commands only read the store
            if got.exit_code == 2 and args[0] == "export":
                assert not (tmp / args[4]).exists()
        one_line_or_done(cli("check", notes, *root, "--baseline", baseline), (0, 1, 2))
        got = cli("verify", "--all", "--store", db, *root)
        one_line_or_done(got, (0, 1, 2))
        if got.exit_code == 2:
            assert digest(db) == before  # a refused store is left as it was
        before = digest(db)
        got = cli("import", notes, *root, "--store", db)
        one_line_or_done(got)
        if got.exit_code == 2:
            assert digest(db) == before
