"""Store schema 4 (each fingerprint's line sketch and digest form) and the upgrade of a
kept version-2 store to it (SPEC.md §Store, §Staleness).

``tests/fixtures/store-v2.db`` was written by brainmigrate at commit 75a1227 (the last
with ``STORE_SCHEMA = 2``: ``git log -S'STORE_SCHEMA = 3'`` gives its child f724094),
checked out into ``/tmp/bm-v2`` and run from there on a committed checkout
``/tmp/v2tree/repo`` of the ``FILES`` below, with ``NOTES`` in ``/tmp/v2tree/notes``:

    cd /tmp/v2tree && PYTHONPATH=/tmp/bm-v2 python -c \\
        "from brainmigrate.cli import main; main()" \\
        import notes --root repo --store store-v2.db --verify

Its four anchors are fingerprinted (a type, lines in a function, a Markdown file, a Python
file) on the absolute root ``/tmp/v2tree/repo``, which does not exist where the tests run;
the tests build the same files again and read the store with ``--root``.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from clirun import cli
from stored import rows, stale_states
from trees import committed, git, write

from brainmigrate import stores as store

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "store-v2.db"
FILES = {
    "src/lib.rs": (
        "/// Counts what passes through.\n"
        "pub struct PulseMeter {\n"
        "    pub count: u32,\n"
        "}\n"
        "\n"
        "impl PulseMeter {\n"
        "    pub fn bump(&mut self) -> u32 {\n"
        "        self.count += 1;\n"
        "        self.count\n"
        "    }\n"
        "}\n"
    ),
    "app/util.py": (
        "def clamp(x, low, high):\n"
        '    """x kept between low and high."""\n'
        "    return max(low, min(x, high))\n"
        "\n"
        "\n"
        "LIMIT = 10\n"
    ),
    "doc/README.md": "# Meter\n\nThe meter counts bumps.\nRun `cargo test` to check it.\n",
}
NOTES = (
    "+ PulseMeter.bump returns the new count TER-401\n"
    "+ clamp keeps a value between its bounds, app/util.py:1-3 TER-402\n"
    "+ the meter's guide is doc/README.md TER-403\n"
    "+ the limit is set in app/util.py TER-404\n"
)
FRESH = "OK: checked 4, stale 0, unreachable 0\n"


def states(tmp_path: Path) -> dict[str, tuple[str, str | None]]:
    return stale_states(tmp_path / "know.db")


def checkout(tmp_path: Path, monkeypatch) -> Path:
    """The fixture's checkout built again at ``tmp_path/repo`` (committed), its notes at
    ``tmp_path/notes``, a copy of the fixture at ``tmp_path/know.db``; the current folder
    is ``tmp_path``."""
    repo = committed(tmp_path / "repo", FILES, "sources")
    write(tmp_path, {"notes/code.md": NOTES})
    shutil.copy(FIXTURE, tmp_path / "know.db")
    monkeypatch.chdir(tmp_path)
    return repo


def test_the_version_2_fixture_is_what_it_claims():
    assert rows(FIXTURE, "PRAGMA user_version") == [(2,)]
    columns = [r[1] for r in rows(FIXTURE, "PRAGMA table_info(anchors)")]
    assert columns[-2:] == ["target_name", "content_hash"]
    assert rows(FIXTURE, "SELECT fact_id, path, target_kind, target_name FROM anchors") == [
        (1, "src/lib.rs", "type", "PulseMeter"),
        (2, "app/util.py", "function", "clamp"),
        (3, "doc/README.md", "file", None),
        (4, "app/util.py", "file", None),
    ]


def test_a_version_2_store_reads_its_fingerprints_as_digest_version_1(tmp_path):
    db = tmp_path / "know.db"
    shutil.copy(FIXTURE, db)
    before = db.read_bytes()
    with store.reader(db) as r:
        anchors = [a for f in r.fetch([1, 2, 3, 4]).values() for a in f.anchors]
    assert [(a.fingerprinted, a.sketch, a.digest_version) for a in anchors] == [(True, None, 1)] * 4
    assert db.read_bytes() == before


def upgraded(tmp_path: Path) -> Path:
    """The copy upgraded by its first write: a plain import of the notes that fed it (it
    adds and changes nothing; its one root names the fixture's, which is no folder here)."""
    r = cli("import", "notes", "--root", "repo", "--store", "know.db")
    assert r.exit_code == 0, r.output
    assert (
        r.output.splitlines()[0]
        == "Imported into know.db: nothing changed, every fact was already there"
    )
    return tmp_path / "know.db"


def test_the_upgrade_keeps_the_rows_and_marks_their_digests_version_1(tmp_path, monkeypatch):
    checkout(tmp_path, monkeypatch)
    before = rows(FIXTURE, "SELECT * FROM anchors ORDER BY rowid")
    facts = rows(FIXTURE, "SELECT id, text, status FROM facts ORDER BY id")
    db = upgraded(tmp_path)
    assert rows(db, "PRAGMA user_version") == [(4,)]
    columns = [r[1] for r in rows(db, "PRAGMA table_info(anchors)")]
    assert columns[-3:] == ["content_hash", "sketch", "digest_version"]
    after = rows(db, "SELECT * FROM anchors ORDER BY rowid")
    # every value kept but the root (the importing root's name: version 3); no sketch,
    # digests of version 1
    assert after == [(*r[:2], "repo", *r[3:], None, 1) for r in before]
    assert rows(db, "SELECT id, text, status FROM facts ORDER BY id") == facts
    r = cli("stale", "--store", "know.db")
    assert (r.exit_code, r.output) == (0, FRESH)


def test_a_version_1_fingerprint_on_changed_bytes_but_not_code_reads_fresh(tmp_path, monkeypatch):
    """Whitespace inside lines widened (no comment, no token changed): the bytes differ,
    so the version-1 digests are taken again in their own form, and match."""
    repo = checkout(tmp_path, monkeypatch)
    db = upgraded(tmp_path)
    util = repo / "app/util.py"
    util.write_text(
        FILES["app/util.py"].replace("max(low, min", "max(low,   min").replace(" = ", "  =  "),
        encoding="utf-8",
    )
    lib = repo / "src/lib.rs"
    lib.write_text(FILES["src/lib.rs"].replace("count: u32", "count:   u32"), encoding="utf-8")
    readme = repo / "doc/README.md"
    readme.write_text(FILES["doc/README.md"].replace("counts bumps", "counts  bumps"))
    r = cli("stale", "--store", "know.db")
    assert (r.exit_code, r.output) == (0, FRESH)
    assert rows(db, "SELECT digest_version, sketch FROM anchors") == [(1, None)] * 4

    # verify takes them again in the form of now, with a sketch
    r = cli("verify", "--all", "--store", "know.db")
    assert r.exit_code == 0, r.output
    got = rows(db, "SELECT digest_version, length(sketch) FROM anchors ORDER BY rowid")
    # distinct lines with a letter or digit: 7 in lib.rs, 4 in util.py, 3 in README.md
    assert got == [(2, 7 * 8), (2, 4 * 8), (2, 3 * 8), (2, 4 * 8)]
    r = cli("stale", "--store", "know.db")
    assert (r.exit_code, r.output) == (0, FRESH)


def test_import_verify_takes_version_1_fingerprints_again_as_version_2(tmp_path, monkeypatch):
    """Nothing changed, yet an ``import --verify`` rewrites an upgraded fingerprint: its
    digests taken in the form of now, with the sketch the old one lacked."""
    checkout(tmp_path, monkeypatch)
    r = cli("import", "notes", "--root", "repo", "--store", "know.db", "--verify")
    assert r.exit_code == 0, r.output
    db = tmp_path / "know.db"
    assert rows(db, "SELECT count(*) FROM anchors") == [(4,)]  # no anchor added
    assert (
        rows(db, "SELECT root, digest_version, sketch IS NOT NULL FROM anchors")
        == [("repo", 2, 1)] * 4
    )
    again = cli("import", "notes", "--root", "repo", "--store", "know.db", "--verify")
    assert again.exit_code == 0, again.output
    r = cli("stale", "--store", "know.db")
    assert (r.exit_code, r.output) == (0, FRESH)


def test_a_sketch_or_digest_version_the_importer_never_writes_is_refused(tmp_path, monkeypatch):
    checkout(tmp_path, monkeypatch)
    r = cli("import", "notes", "--root", "repo", "--store", "know.db", "--verify")
    assert r.exit_code == 0, r.output
    db = tmp_path / "know.db"
    for column, value, wanted in (
        ("sketch", "0123456789ab", "hashes of 8 hex characters each, joined"),
        ("digest_version", 3, "1 or 2"),
    ):
        con = sqlite3.connect(db)
        con.execute(f"UPDATE anchors SET {column} = ? WHERE fact_id = 3", (value,))
        con.commit()
        con.close()
        # (a plain stale on an unchanged tree reads no anchors row: it lists stale facts
        # only; the JSON report reads every anchored fact, so every row)
        r = cli("stale", "--store", "know.db", "--format", "json")
        assert r.exit_code == 2
        assert wanted in r.stderr, r.stderr
        con = sqlite3.connect(db)
        con.execute("UPDATE anchors SET sketch = NULL, digest_version = 2")
        con.commit()
        con.close()


def test_a_version_1_lines_fingerprint_is_read_with_lines_of_its_own_form(tmp_path, monkeypatch):
    """Lines no declaration encloses, fingerprinted as version 1 (the folded text): once
    the lines of code the index reads are taken another way (here: ``line_texts`` that
    reads a Python file's lines with every space removed), a version-1 fingerprint is
    still read with the folded text and holds; the same digest marked version 2 does not."""
    from brainmigrate.codeindex import tokens

    main = "import os\nimport sys\n\n\ndef run():\n    return os.name, sys.argv\n"
    repo = tmp_path / "repo"
    write(repo, {"app/main.py": main})
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "sources")
    write(tmp_path, {"notes/code.md": "+ the imports come first, app/main.py:1-2 TER-9\n"})
    monkeypatch.chdir(tmp_path)
    r = cli("import", "notes", "--root", "repo", "--store", "know.db", "--verify")
    assert r.exit_code == 0, r.output
    db = tmp_path / "know.db"
    assert rows(db, "SELECT target_kind FROM anchors") == [("lines",)]
    folded = tokens.lines_digest(tokens.line_texts(main.encode(), None), 1, 2)
    con = sqlite3.connect(db)
    con.execute("UPDATE anchors SET body_digest = ?, digest_version = 1, sketch = NULL", (folded,))
    con.commit()
    con.close()
    plain = tokens.line_texts

    def other_form(data: bytes, language: str | None) -> list[bytes]:
        texts = plain(data, None)
        return texts if language is None else [t.replace(b" ", b"") for t in texts]

    monkeypatch.setattr(tokens, "line_texts", other_form)
    (repo / "app/main.py").write_text(main.replace("import sys", "import  sys"))
    assert states(tmp_path) == {"k1": ("fresh", None)}
    con = sqlite3.connect(db)
    con.execute("UPDATE anchors SET digest_version = 2")
    con.commit()
    con.close()
    assert states(tmp_path) == {"k1": ("body changed", "STALE: body changed: app/main.py:1-2")}


def test_a_version_1_fingerprint_git_holds_the_bytes_of_is_compared_in_the_form_of_now(
    tmp_path, monkeypatch
):
    """A version-1 fingerprint whose commit holds the very bytes it was taken on is taken
    again in the form of now on those bytes when read: a comment edit inside the function,
    which its version-1 digest (the folded text) counted, is no change."""
    from brainmigrate.codeindex.extract import extract_file

    monkeypatch.chdir(tmp_path)
    source = "def total(rows):\n    # the sum\n    return sum(rows)\n"
    repo = committed(tmp_path / "repo", {"app/total.py": source})
    write(tmp_path, {"notes/n.md": "+ total sums the rows, app/total.py:2-3 TER-1\n"})
    r = cli("import", "notes", "--root", "repo", "--store", "know.db", "--verify")
    assert r.exit_code == 0, r.output
    [row] = [r for r in extract_file(source.encode(), "python", legacy=True)[1] if r[0] == "total"]
    con = sqlite3.connect(tmp_path / "know.db")
    con.execute(
        "UPDATE anchors SET digest_version = 1, sketch = NULL, signature_digest = ?,"
        " body_digest = ?",
        (row[6], row[7]),
    )
    con.commit()
    con.close()
    (repo / "app/total.py").write_text(source.replace("# the sum", "# adds them up"), "utf-8")
    assert states(tmp_path) == {"k1": ("fresh", None)}
    (repo / "app/total.py").write_text(source.replace("sum(rows)", "sum(rows) + 1"), "utf-8")
    body = "STALE: body changed: app/total.py#total"
    assert states(tmp_path) == {"k1": ("body changed", body)}
