"""Faults a review of the staleness work found (issue 25), each on a real git checkout
imported with ``import --verify`` (SPEC.md §Staleness): a cited line holding several
declarations, a deleted function and a same-name method elsewhere, a re-imported line
that cites another existing file, a rewritten citation beside a kept one. The CLI, real
stores."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from clirun import cli
from stored import rows, stale_states, verified_checkout
from trees import git, write


def tree(tmp_path: Path, monkeypatch, notes: str, files: dict[str, str]) -> Path:
    """``stored.verified_checkout`` of ``files`` and ``notes`` in ``tmp_path``, the current
    folder."""
    monkeypatch.chdir(tmp_path)
    return verified_checkout(tmp_path, files, notes, name="f.md", store="k.db")


def states(tmp_path: Path) -> dict[str, tuple[str, str | None]]:
    return stale_states(tmp_path / "k.db")


TARGETS = (
    "SELECT fact_id, path, line_first, line_last, target_kind, target_container, target_name"
    " FROM anchors ORDER BY fact_id, path"
)


def test_a_line_of_several_declarations_is_fingerprinted_on_the_one_holding_them(
    tmp_path, monkeypatch
):
    repo = tree(
        tmp_path,
        monkeypatch,
        "+ timeout is 30 in cfg.js:1\n+ host is a in cfg.py:1\n+ Limits has max in lim.rs:1\n",
        {
            "cfg.js": "let timeout = 30, retries = 3;\nexport function go() { return timeout; }\n",
            "cfg.py": 'class Cfg: host = "a"; port = 80\n',
            "lim.rs": "pub struct Limits { pub max: u32, pub min: u32 }\n",
        },
    )
    assert rows(tmp_path / "k.db", TARGETS) == [
        (1, "cfg.js", 1, 1, "lines", None, None),
        (2, "cfg.py", 1, 1, "type", None, "Cfg"),
        (3, "lim.rs", 1, 1, "type", None, "Limits"),
    ]
    write(
        repo,
        {
            "cfg.js": "let timeout = 99, retries = 3;\nexport function go() { return timeout; }\n",
            "cfg.py": 'class Cfg: host = "zzz"; port = 80\n',
            "lim.rs": "pub struct Limits { pub max: u64, pub min: u32 }\n",
        },
    )
    assert states(tmp_path) == {
        "k1": ("body changed", "STALE: body changed: cfg.js:1"),
        "k2": ("body changed", "STALE: body changed: cfg.py#Cfg"),
        "k3": ("body changed", "STALE: body changed: lim.rs#Limits"),
    }


CSVIO = 'def parse(text):\n    return text.split(",")\n\n\ndef other():\n    return 1\n'
TOK = "class Tokenizer:\n    def parse(self, s):\n        return list(s)\n"


def test_a_deleted_function_is_not_the_same_name_method_of_another_file(tmp_path, monkeypatch):
    repo = tree(
        tmp_path,
        monkeypatch,
        "+ csv parse splits on commas in src/csvio.py:1-2\n",
        {"src/csvio.py": CSVIO, "src/tok.py": TOK},
    )
    write(repo, {"src/csvio.py": "def other():\n    return 1\n"})
    assert states(tmp_path) == {
        "k1": ("declaration gone", "STALE: declaration gone: src/csvio.py#parse"),
    }
    r = cli("verify", "--store", "k.db", "k1")
    assert r.exit_code == 1, r.output
    assert "k1 refused: declaration gone: src/csvio.py#parse" in r.output.splitlines()
    assert rows(tmp_path / "k.db", TARGETS) == [
        (1, "src/csvio.py", 1, 2, "function", None, "parse"),
    ]


def test_verify_moves_cited_lines_onto_the_method_a_function_became(tmp_path, monkeypatch):
    repo = tree(
        tmp_path,
        monkeypatch,
        "+ csv parse splits on commas in src/csvio.py:1-2\n",
        {"src/csvio.py": CSVIO},
    )
    method = "class Tokenizer:\n    def parse(self, text):\n        return 1\n"
    write(repo, {"src/csvio.py": method})
    assert states(tmp_path) == {
        "k1": (
            "signature changed",
            "STALE: signature changed: src/csvio.py#Tokenizer.parse (was src/csvio.py#parse)",
        ),
    }
    r = cli("verify", "--store", "k.db", "k1")
    assert r.exit_code == 0, r.output
    assert rows(tmp_path / "k.db", TARGETS) == [
        (1, "src/csvio.py", 2, 3, "function", "Tokenizer", "parse"),
    ]
    assert states(tmp_path) == {"k1": ("fresh", None)}


ANCHORED = "SELECT fact_id, path, body_digest IS NOT NULL FROM anchors ORDER BY fact_id, path"


def test_a_line_now_citing_another_file_that_was_there_is_no_edit_of_its_fact(
    tmp_path, monkeypatch
):
    tree(
        tmp_path,
        monkeypatch,
        "# DB\n+ the schema is in db/users.sql\n+ migrations run at boot\n",
        {"db/users.sql": "create table users(id int);\n", "db/orders.sql": "create table o;\n"},
    )
    write(
        tmp_path,
        {"notes/f.md": "# DB\n+ migrations run at boot\n+ the schema is in db/orders.sql\n"},
    )
    r = cli("import", "notes", "--root", "repo", "--store", "k.db")
    assert r.exit_code == 0, r.output
    assert rows(tmp_path / "k.db", "SELECT id, text FROM facts ORDER BY id") == [
        (1, "the schema is in db/users.sql"),
        (2, "migrations run at boot"),
        (3, "the schema is in db/orders.sql"),
    ]
    assert rows(tmp_path / "k.db", ANCHORED) == [(1, "db/users.sql", 1), (3, "db/orders.sql", 0)]
    assert states(tmp_path) == {"k1": ("fresh", None), "k3": ("fresh", None)}


def test_a_path_a_fixed_line_still_cites_keeps_its_anchor(tmp_path, monkeypatch):
    """``first in src/b.py, second in src/b.py`` -> ``… second in src/a.py`` after git
    renamed src/b.py to src/a.py and a new src/b.py was written: src/a.py takes the old
    fingerprint, and src/b.py, still cited, keeps it too (its file is another now)."""
    b = "def b():\n    return 2\n"
    repo = tree(
        tmp_path,
        monkeypatch,
        "+ first in src/b.py, second in src/b.py\n",
        {"src/b.py": b},
    )
    git(repo, "mv", "src/b.py", "src/a.py")
    git(repo, "commit", "-qm", "rename")
    write(repo, {"src/b.py": "def c():\n    return 3\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "another b")
    write(tmp_path, {"notes/f.md": "+ first in src/b.py, second in src/a.py\n"})
    r = cli("import", "notes", "--root", "repo", "--store", "k.db")
    assert r.exit_code == 0, r.output
    assert rows(tmp_path / "k.db", "SELECT id, text FROM facts ORDER BY id") == [
        (1, "first in src/b.py, second in src/a.py"),
    ]
    assert rows(tmp_path / "k.db", ANCHORED) == [(1, "src/a.py", 1), (1, "src/b.py", 1)]
    assert states(tmp_path) == {"k1": ("body changed", "STALE: body changed: src/b.py")}


def test_a_line_citing_a_second_existing_file_gives_it_no_fingerprint(tmp_path, monkeypatch):
    tree(
        tmp_path,
        monkeypatch,
        "+ first in src/b.py, second in src/b.py\n",
        {"src/a.py": "def a():\n    return 1\n", "src/b.py": "def b():\n    return 2\n"},
    )
    write(tmp_path, {"notes/f.md": "+ first in src/b.py, second in src/a.py\n"})
    r = cli("import", "notes", "--root", "repo", "--store", "k.db")
    assert r.exit_code == 0, r.output
    assert rows(tmp_path / "k.db", ANCHORED) == [(1, "src/a.py", 0), (1, "src/b.py", 1)]
    assert states(tmp_path) == {"k1": ("fresh", None)}


GUIDE = "# Guide\n\nstep one\nstep two\n\nstep three\nthe end\n"


def test_cited_lines_that_moved_are_found_by_their_text_held_in_git_or_their_digest(
    tmp_path, monkeypatch
):
    """The text of lines 3-4 moved down two lines: found there (fresh), whether git holds
    the fingerprinted file (its text is searched for) or not (an uncommitted edit was
    fingerprinted: each window's digest is compared); an edit inside it is a body change."""
    repo = tree(
        tmp_path, monkeypatch, "+ the steps are doc/guide.md:3-4 TER-1\n", {"doc/guide.md": GUIDE}
    )
    for tail in ("", "uncommitted\n"):
        write(repo, {"doc/guide.md": GUIDE + tail})
        r = cli("import", "notes", "--root", "repo", "--store", "k.db", "--verify")
        assert r.exit_code == 0, r.output
        write(repo, {"doc/guide.md": "# Guide\n\nfirst\nsecond\n" + GUIDE.split("\n", 2)[2]})
        assert states(tmp_path) == {"k1": ("fresh", None)}
        r = cli("verify", "--store", "k.db", "k1")
        assert r.exit_code == 0, r.output
        assert rows(tmp_path / "k.db", "SELECT line_first, line_last FROM anchors") == [(5, 6)]
        write(repo, {"doc/guide.md": "# Guide\n\nfirst\nsecond\nstep one\nstep 2\n"})
        assert states(tmp_path) == {"k1": ("body changed", "STALE: body changed: doc/guide.md:5-6")}
        con = sqlite3.connect(tmp_path / "k.db")
        con.execute("UPDATE anchors SET line_first = 3, line_last = 4")  # as cited again
        con.commit()
        con.close()


def test_verify_takes_the_declaration_the_cited_lines_give_now(tmp_path, monkeypatch):
    """An anchor an older rule fingerprinted on the last of several declarations of its
    line (``retries`` of ``let timeout = 30, retries = 3;``, as a store of schema 3 holds
    it) is fingerprinted as the cited lines give it now when verified again: on the
    line's text, so ``timeout = 99`` is a change."""
    repo = tree(
        tmp_path,
        monkeypatch,
        "+ timeout is 30 in cfg.js:1\n",
        {"cfg.js": "let timeout = 30, retries = 3;\nexport function go() { return timeout; }\n"},
    )
    from brainmigrate.codeindex.extract import extract_file

    retries = next(
        r
        for r in extract_file((repo / "cfg.js").read_bytes(), "javascript")[1]
        if r[0] == "retries"
    )
    con = sqlite3.connect(tmp_path / "k.db")
    con.execute(
        "UPDATE anchors SET target_kind = 'other', target_container = NULL, target_name = ?,"
        " signature_digest = ?, body_digest = ?",
        ("retries", retries[6], retries[7]),
    )
    con.commit()
    con.close()
    assert cli("verify", "--all", "--store", tmp_path / "k.db").exit_code == 0
    assert rows(tmp_path / "k.db", TARGETS) == [(1, "cfg.js", 1, 1, "lines", None, None)]
    write(
        repo,
        {"cfg.js": "let timeout = 99, retries = 3;\nexport function go() { return timeout; }\n"},
    )
    assert states(tmp_path) == {"k1": ("body changed", "STALE: body changed: cfg.js:1")}
