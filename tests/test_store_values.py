"""A store edited by hand: values no import writes are refused by every command that
reads them, in one line, and the store is left as it was."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

IMPORT = [sys.executable, "-m", "brainmigrate", "import"]


# ------------------------------------------------------------ values no import writes
#
# A store a real import wrote, then edited by hand with sqlite3: each value below is one
# the importer never writes, and every command that reads it refuses the store in one
# line (exit 2), as for a value of the wrong type, and leaves it as it was.

RECOVER = "restore a backup, or import the notes into a new store"
EDITED_NOTES = (
    "+ the app starts in src/app.py:1-2 TER-1\n"
    "+ PaymentGateway charges once\n"
    "~ we keep SQLite for the store\n"
)


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    """A checkout, ``n.md`` and ``base.db`` imported from it with ``--verify`` (so
    ``stale`` takes its fast path): k1 anchored to ``src/app.py`` lines 1-2 (cited), k2 to
    the class ``PaymentGateway`` (camelcase), k3 anchored to nothing."""
    folder = tmp_path_factory.mktemp("edited")
    (folder / "src").mkdir()
    (folder / "src" / "app.py").write_text(
        "import os\n\n\nclass PaymentGateway:\n    def charge(self):\n        return 1\n"
    )
    (folder / "n.md").write_text(EDITED_NOTES)
    db = folder / "base.db"
    subprocess.run(
        [*IMPORT, str(folder / "n.md"), "--store", str(db), "--root", str(folder), "--verify"],
        check=True,
        capture_output=True,
    )
    con = sqlite3.connect(db)
    assert con.execute(
        "SELECT fact_id, kind, symbol, line_first, line_last, how, content_hash IS NOT NULL"
        " FROM anchors ORDER BY fact_id"
    ).fetchall() == [
        (1, "file", "", 1, 2, "cited", 1),
        (2, "symbol", "PaymentGateway", 4, 6, "camelcase", 1),
    ]
    con.close()
    return folder


def edited(imported: Path, tmp_path: Path, *statements: str) -> Path:
    db = tmp_path / "k.db"
    db.write_bytes((imported / "base.db").read_bytes())
    con = sqlite3.connect(db)
    with con:
        for sql in statements:
            con.execute(sql)
    con.close()
    return db


def commands(imported: Path, tmp_path: Path, db: Path, *which: str, fact: str = "k1") -> list:
    """The command lines ``which`` names, on the store ``db``."""
    store = ["--store", str(db)]
    every = {
        "show": ["show", fact, *store],
        "search": ["search", "app", "PaymentGateway", "SQLite", "--all", *store],
        "search --anchor": ["search", "--anchor", "app.py", *store],
        "stale": ["stale", *store],
        "stale --dry-run": ["stale", "--dry-run", *store],
        "stale json": ["stale", "--format", "json", *store],
        "verify": ["verify", "--all", *store],
        "verify id": ["verify", fact, *store],
        "import": [
            "import",
            str(imported / "n.md"),
            "--root",
            str(imported),
            "--format",
            "json",
            *store,
        ],
        "import --dry-run": [
            "import",
            str(imported / "n.md"),
            "--root",
            str(imported),
            "--dry-run",
            *store,
        ],
    }
    for target in ("jsonl", "brain", "knowledge", "memory"):
        out = str(tmp_path / f"out-{target}")
        every[f"export {target}"] = ["export", "--to", target, "--output", out, *store]
    return [every[name] for name in which]


def refused_by(db: Path, args: list, what: str) -> None:
    before = db.read_bytes()
    done = subprocess.run(
        [sys.executable, "-m", "brainmigrate", *args], capture_output=True, text=True
    )
    assert (done.returncode, done.stderr, done.stdout) == (
        2,
        f"brainmigrate: error: {db}: the store is inconsistent ({what}); {RECOVER}\n",
        "",
    ), args
    assert db.read_bytes() == before, args  # refused: left as it was


#: Every command that reads a fact's row or its anchors (``show`` of the fact named).
READERS = (
    "show",
    "search",
    "export jsonl",
    "export brain",
    "export knowledge",
    "export memory",
    "stale",
    "stale --dry-run",
    "stale json",
    "verify",
    "import",
    "import --dry-run",
)


#: ``READERS`` that read every fact's row: not ``stale``'s text report, which reads again
#: only the facts whose files changed (what it does not read, it does not show).
READ_EVERY_FACT = tuple(c for c in READERS if c not in ("stale", "stale --dry-run"))


@pytest.mark.parametrize(
    ("sql", "fact", "what"),
    [
        (
            "UPDATE facts SET scope = '' WHERE id = 1",
            "k1",
            "fact k1: scope is '', not a scope (text that is not blank)",
        ),
        (
            "UPDATE facts SET scope = ' \t\u3000' WHERE id = 2",
            "k2",
            "fact k2: scope is ' \ufffd\ufffd', not a scope (text that is not blank)",
        ),
    ],
)
def test_a_blank_scope_is_refused_by_every_command(imported, tmp_path, sql, fact, what):
    db = edited(imported, tmp_path, sql)
    for args in commands(imported, tmp_path, db, *READ_EVERY_FACT, fact=fact):
        refused_by(db, args, what)
    assert not list(tmp_path.glob("out-*"))  # no export written


def test_a_blank_scope_of_a_fact_without_anchors_is_refused_by_every_command(imported, tmp_path):
    # verify and stale json read every fact that is not superseded, anchored or not
    db = edited(imported, tmp_path, "UPDATE facts SET scope = '' WHERE id = 3")
    what = "fact k3: scope is '', not a scope (text that is not blank)"
    for args in commands(imported, tmp_path, db, *READ_EVERY_FACT, fact="k3"):
        refused_by(db, args, what)


@pytest.mark.parametrize(
    ("sql", "fact", "what"),
    [
        (
            "UPDATE anchors SET how = 'magic' WHERE fact_id = 1",
            "k1",
            "an anchors row of k1: how is 'magic', not one of cited, bare-name, camelcase, module",
        ),
        (
            "UPDATE anchors SET how = 'camelcase ' WHERE fact_id = 2",
            "k2",
            "an anchors row of k2: how is 'camelcase ', not one of cited, bare-name,"
            " camelcase, module",
        ),
        (
            "UPDATE anchors SET line_first = 9, line_last = 3 WHERE fact_id = 1",
            "k1",
            "an anchors row of k1: line_first is 9, not a line number up to line_last (3)",
        ),
        (
            "UPDATE anchors SET symbol = '' WHERE fact_id = 2",
            "k2",
            "an anchors row of k2: symbol is '', not a declaration's name (kind is symbol)",
        ),
        (
            "UPDATE anchors SET symbol = 'PaymentGateway' WHERE fact_id = 1",
            "k1",
            "an anchors row of k1: symbol is 'PaymentGateway', not '' (kind is file)",
        ),
        (
            "UPDATE anchors SET kind = 'folder', symbol = 'Pay' WHERE fact_id = 1",
            "k1",
            "an anchors row of k1: symbol is 'Pay', not '' (kind is folder)",
        ),
    ],
)
def test_an_anchor_value_no_import_writes_is_refused_by_every_command(
    imported, tmp_path, sql, fact, what
):
    db = edited(imported, tmp_path, sql)
    for args in commands(imported, tmp_path, db, *READERS, "search --anchor", fact=fact):
        refused_by(db, args, what)
    assert not list(tmp_path.glob("out-*"))


@pytest.mark.parametrize(
    ("sql", "what"),
    [
        (
            "UPDATE facts SET imported = '2026-09-23 13:16:09' WHERE id = 1",
            "fact k1: imported is '2026-09-23 13:16:09', not a time like 2026-09-23T13:16:09Z",
        ),
        (
            "UPDATE facts SET updated = 'yesterday' WHERE id = 1",
            "fact k1: updated is 'yesterday', not a time like 2026-09-23T13:16:09Z",
        ),
        (
            "UPDATE provenance SET imported = '2026-09-23T13:16:09+00:00' WHERE fact_id = 1",
            "a provenance row of k1: imported is '2026-09-23T13:16:09+00:00', not a time"
            " like 2026-09-23T13:16:09Z",
        ),
    ],
)
def test_a_time_not_in_the_form_an_import_writes_is_refused_where_it_is_read(
    imported, tmp_path, sql, what
):
    # these columns are read by show, search and the exports that print them (jsonl,
    # knowledge); brain, memory, stale, verify and import read no such time
    db = edited(imported, tmp_path, sql)
    readers = ("show", "search", "export jsonl", "export knowledge")
    for args in commands(imported, tmp_path, db, *readers):
        refused_by(db, args, what)
    assert not list(tmp_path.glob("out-*"))


@pytest.mark.parametrize(
    ("sql", "what"),
    [
        (
            "UPDATE facts SET supersedes = '[99]' WHERE id = 3",
            "fact k3: supersedes names k99, not the id of a stored fact",
        ),
        (
            "UPDATE facts SET related = '[1, 4]' WHERE id = 3",
            "fact k3: related names k4, not the id of a stored fact",
        ),
    ],
)
def test_a_link_to_a_fact_the_store_does_not_hold_is_refused_where_it_is_read(
    imported, tmp_path, sql, what
):
    # links are read with the whole fact (show, search, export, verify of its id, an
    # import that merges into it); stale and verify --all read no links
    db = edited(imported, tmp_path, sql)
    readers = (
        "show",
        "search",
        "export jsonl",
        "export brain",
        "export knowledge",
        "export memory",
        "verify id",
        "import",
        "import --dry-run",
    )
    for args in commands(imported, tmp_path, db, *readers, fact="k3"):
        refused_by(db, args, what)
    assert not list(tmp_path.glob("out-*"))


@pytest.mark.parametrize(
    ("sql", "what"),
    [
        (
            "UPDATE facts SET kind = 'rumour' WHERE id = 1",
            "fact k1: kind is 'rumour', not one of decision, pattern, blocker, environment, other",
        ),
        (
            "UPDATE facts SET marker = '*' WHERE id = 2",
            "fact k2: marker is '*', not one of +, !, ~, =, ?, >, ->, x, -",
        ),
        (
            "UPDATE facts SET text = CAST(text AS BLOB) WHERE id = 1",
            "fact k1: text is a BLOB, not text",
        ),
        (
            "UPDATE facts SET task = CAST(task AS BLOB) WHERE id = 1",
            "fact k1: task is a BLOB, not text or NULL",
        ),
        (
            "UPDATE facts SET status_reason = x'00' WHERE id = 2",
            "fact k2: status_reason is a BLOB, not text or NULL",
        ),
        ("UPDATE facts SET scope = x'00' WHERE id = 3", "fact k3: scope is a BLOB, not text"),
        (
            "UPDATE anchors SET root = CAST(root AS BLOB) WHERE fact_id = 1",
            "an anchors row of k1: root is a BLOB, not text",
        ),
        (
            "UPDATE anchors SET path = CAST(path AS BLOB) WHERE fact_id = 2",
            "an anchors row of k2: path is a BLOB, not text",
        ),
        (
            "UPDATE provenance SET file = CAST(file AS BLOB) WHERE fact_id = 1",
            "a provenance row of k1: file is a BLOB, not text",
        ),
    ],
)
def test_stale_refuses_the_rows_it_reads(imported, tmp_path, sql, what):
    """json reads every anchored fact and its first provenance row; text reads again only
    the facts whose files changed (here none), and the anchors of all: each refuses what
    it reads (what it does not read, it does not show)."""
    db = edited(imported, tmp_path, sql)
    which = ["stale json"]
    if sql.startswith("UPDATE anchors"):  # a BLOB root or path was an internal error
        which += ["stale", "stale --dry-run"]
    for args in commands(imported, tmp_path, db, *which):
        refused_by(db, args, what)


def test_sql_finds_a_blank_scope_as_python_does():
    """The one-query checks (``check_entries``, ``read_anchored`` of some facts) trim what
    ``str.strip`` strips, so they refuse the rows the row-by-row checks refuse."""
    from brainmigrate.stores import rows as store

    assert set(store.BLANKS) == {c for c in map(chr, range(0x110000)) if c.isspace()}


def test_a_notes_file_name_that_is_no_text_is_refused_by_an_import(imported, tmp_path):
    """The files an import checks for renames and deletions (``Stored.files``) are read
    with the row checks: a BLOB name of a file that is gone was an internal error."""
    db = edited(
        imported,
        tmp_path,
        "UPDATE provenance SET file = CAST('gone.md' AS BLOB) WHERE fact_id = 2",
    )
    for args in commands(imported, tmp_path, db, "import", "import --dry-run"):
        refused_by(db, args, "a provenance row: file is a BLOB, not text")
