"""Staleness: schema version 2, fingerprints, ``verify``, ``stale`` (SPEC.md §Staleness)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from brainmigrate import importer
from brainmigrate.stores import sqlite as store

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "store-v1.db"
SAMPLES = REPO / "samples"


def table(db: Path, sql: str) -> list:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def version(db: Path) -> int:
    return table(db, "PRAGMA user_version")[0][0]


# ------------------------------------------------------------------ schema version 2


def test_version_1_fixture_is_what_it_claims():
    assert version(FIXTURE) == 1
    columns = [r[1] for r in table(FIXTURE, "PRAGMA table_info(anchors)")]
    assert "verified_commit" not in columns and "verified_at" in columns


def test_read_only_commands_read_version_1_as_it_is(tmp_path):
    db = tmp_path / "know.db"
    shutil.copy(FIXTURE, db)
    before = db.read_bytes()
    with store.reader(db) as r:
        facts = r.fetch([1, 2, 11])
        assert r.version() == 1
    assert [len(f.anchors) for f in facts.values()] == [0, 1, 2]
    assert not facts[11].anchors[0].fingerprinted
    assert db.read_bytes() == before


def test_first_write_upgrades_version_1_in_place(tmp_path):
    db = tmp_path / "know.db"
    shutil.copy(FIXTURE, db)
    facts_before = table(db, "SELECT * FROM facts ORDER BY id")
    anchors_before = table(db, "SELECT * FROM anchors ORDER BY rowid")
    notes = tmp_path / "more.md"
    notes.write_text("+ a fact the upgrade must not disturb\n", encoding="utf-8")
    importer.import_notes([notes], importer.Options(roots=[SAMPLES]), db)
    assert version(db) == 2
    columns = [r[1] for r in table(db, "PRAGMA table_info(anchors)")]
    assert columns[-4:] == ["verified_commit", "target_kind", "target_container", "target_name"]
    assert table(db, "SELECT * FROM facts WHERE id <= 29 ORDER BY id") == facts_before
    # the old rows keep every value; the new columns are empty
    assert [r[:11] for r in table(db, "SELECT * FROM anchors ORDER BY rowid")] == anchors_before
    assert table(db, "SELECT count(*) FROM anchors WHERE verified_commit IS NOT NULL") == [(0,)]
    assert table(db, "SELECT count(*), max(id) FROM facts") == [(30, 30)]


def test_an_upgrade_that_fails_later_in_its_transaction_is_rolled_back(tmp_path):
    db = tmp_path / "know.db"
    shutil.copy(FIXTURE, db)
    before = db.read_bytes()

    def work(con):
        assert con.execute("PRAGMA user_version").fetchone()[0] == 2
        raise RuntimeError("disk gave up")

    with pytest.raises(RuntimeError):
        store.update(db, work)
    assert version(db) == 1
    assert db.read_bytes() == before
