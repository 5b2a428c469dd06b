"""know.db: the import transaction, idempotency, and stores that cannot be used (SPEC.md §Store)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from brainmigrate import importer, reports
from brainmigrate import stores as store
from brainmigrate.merge import run as merge_run
from brainmigrate.read import run as read_run
from brainmigrate.read.run import ImportOptions
from brainmigrate.stores import importing

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
ROOTS = [SAMPLES / "roots" / "app", SAMPLES / "roots" / "infra"]


def run(tmp_path, dry_run=False, paths=None, db=None):
    options = ImportOptions(roots=ROOTS)
    result = importer.import_notes(
        paths or [SAMPLES / "notes"], options, db or tmp_path / "know.db", dry_run=dry_run
    )
    return reports.report(result)


def dump(db: Path) -> list:
    con = sqlite3.connect(db)
    try:
        return [
            con.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall()
            for t in ("facts", "anchors", "citations", "provenance", "meta")
        ] + [con.execute("PRAGMA user_version").fetchone()]
    finally:
        con.close()


def test_import_twice_adds_nothing_and_changes_nothing(tmp_path):
    first = run(tmp_path)
    before = dump(tmp_path / "know.db")
    mtime = (tmp_path / "know.db").stat().st_mtime_ns
    second = run(tmp_path)
    assert first["totals"]["added"] == first["totals"]["facts"] == 29
    assert second["totals"]["added"] == 0
    assert second["totals"]["updated"] == 0
    # every line is one already imported, none a repeat merged in this run (issue 24)
    assert second["totals"]["already_imported"] == second["totals"]["fact_lines"] == 32
    assert second["totals"]["merged"] == 0
    assert [f["merged"] for f in second["files"]] == [0] * len(second["files"])
    assert dump(tmp_path / "know.db") == before
    assert (tmp_path / "know.db").stat().st_mtime_ns == mtime


def test_a_new_store_has_every_index_of_the_schema(tmp_path):
    run(tmp_path)  # a first import builds them after its rows
    con = sqlite3.connect(tmp_path / "know.db")
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    con.close()
    assert {"facts_scope", "anchors_path", "provenance_fingerprint"} <= names


def test_dry_run_reports_what_the_import_does(tmp_path):
    dry = run(tmp_path, dry_run=True)
    assert not (tmp_path / "know.db").exists()
    real = run(tmp_path)
    for key in ("dry_run",):
        dry.pop(key), real.pop(key)
    assert dry == real
    again_dry = run(tmp_path, dry_run=True)
    assert again_dry["totals"]["added"] == 0


def test_store_contents(tmp_path):
    run(tmp_path)
    con = sqlite3.connect(tmp_path / "know.db")
    assert con.execute("PRAGMA user_version").fetchone() == (4,)
    row = con.execute(
        "SELECT id, scope, kind, task, run, created FROM facts"
        " WHERE text LIKE 'PaymentGateway retries%'"
    ).fetchone()
    assert row == (
        11,
        "area:payments",
        "environment",
        "TER-160",
        "ter-160-b",
        "2026-09-20T10:02:11Z",
    )
    prov = con.execute(
        "SELECT file, line FROM provenance WHERE fact_id=11 ORDER BY line"
    ).fetchall()
    assert [(Path(f).name, n) for f, n in prov] == [("payments.md", 6), ("payments.md", 16)]
    hits = con.execute(
        "SELECT rowid FROM facts_fts WHERE facts_fts MATCH 'retri' ORDER BY rowid"
    ).fetchall()
    assert (11,) in hits
    gone = con.execute("SELECT fact_id, path FROM citations ORDER BY 1, 2").fetchall()
    assert ("docker/certs/dev.pem") in [p for _, p in gone]


def test_a_changed_line_updates_its_fact(tmp_path):
    notes = tmp_path / "n.md"
    notes.write_text("+ the cache expires keys after ten minutes of idle time TER-1\n")
    run(tmp_path, paths=[notes])
    notes.write_text(
        "+ the cache expires keys after ten minutes of idle time TER-1"
        " <!-- 2026-10-01 10:00 r -->\n"
        "+ SUPERSEDED the cache expires keys after ten minutes of idle time TER-1\n"
    )
    r = run(tmp_path, paths=[notes])
    assert (r["totals"]["added"], r["totals"]["updated"]) == (0, 1)
    (fact,) = r["facts"]
    assert (fact["id"], fact["status"], fact["run"], fact["created"]) == (
        "k1",
        "superseded",
        "r",
        "2026-10-01T10:00:00Z",
    )


def test_failed_write_leaves_the_store_as_it_was(tmp_path, monkeypatch):
    run(tmp_path)
    before = dump(tmp_path / "know.db")
    notes = tmp_path / "more.md"
    notes.write_text("+ a brand new fact about queues\n")

    def boom(*a, **k):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(importing, "_write", boom)
    with pytest.raises(store.StoreError, match="disk I/O error"):
        run(tmp_path, paths=[notes])
    assert dump(tmp_path / "know.db") == before


def test_failed_first_write_leaves_no_store_and_no_temp_file(tmp_path, monkeypatch):
    monkeypatch.setattr(importing, "_write", lambda *a: (_ for _ in ()).throw(OSError(28, "full")))
    with pytest.raises(store.StoreError):
        run(tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "content, message",
    [
        (b"this is not sqlite at all", "not a brainmigrate store"),
        (b"SQLite format 3\x00" + b"\x00" * 50, "not a readable brainmigrate store"),
    ],
)
def test_not_a_store(tmp_path, content, message):
    db = tmp_path / "know.db"
    db.write_bytes(content)
    with pytest.raises(store.StoreError, match=message):
        run(tmp_path)
    assert db.read_bytes() == content


def test_foreign_sqlite_and_newer_schema(tmp_path):
    db = tmp_path / "know.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE other (x)")
    con.commit()
    con.close()
    with pytest.raises(store.StoreError, match="not a brainmigrate store"):
        run(tmp_path)
    db.unlink()
    run(tmp_path)
    con = sqlite3.connect(db)
    con.execute("PRAGMA user_version = 7")
    con.commit()
    con.close()
    data = db.read_bytes()
    with pytest.raises(store.StoreError, match="newer brainmigrate.*upgrade"):
        run(tmp_path)
    with pytest.raises(store.StoreError, match="newer"):
        run(tmp_path, dry_run=True)
    assert db.read_bytes() == data


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write read-only files")
def test_read_only_store(tmp_path):
    run(tmp_path)
    (tmp_path / "know.db").chmod(0o444)
    with pytest.raises(store.StoreError, match="read-only"):
        run(tmp_path)


def test_store_in_a_missing_folder_or_a_folder(tmp_path):
    with pytest.raises(store.StoreError, match="does not exist"):
        run(tmp_path, db=tmp_path / "nope" / "know.db")
    with pytest.raises(store.StoreError, match="is a folder"):
        run(tmp_path, db=tmp_path)


def test_truncated_store(tmp_path):
    run(tmp_path)
    db = tmp_path / "know.db"
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])
    with pytest.raises(store.StoreError):
        run(tmp_path)
    assert db.read_bytes() == data[: len(data) // 3]


def test_report_is_json_serializable_and_keeps_invariants(tmp_path):
    data = run(tmp_path, dry_run=True)
    t = data["totals"]
    assert t["lines"] == t["fact_lines"] + t["continuations"] + t["blank"] + t["skipped"]
    assert t["fact_lines"] == t["facts"] + t["merged"]
    json.dumps(data)


def test_copy_of_samples_imports_the_same(tmp_path):
    shutil.copytree(SAMPLES / "notes", tmp_path / "notes")
    a = run(tmp_path, dry_run=True, paths=[tmp_path / "notes"])
    b = run(tmp_path, dry_run=True)
    assert [f["text"] for f in a["facts"]] == [f["text"] for f in b["facts"]]


def test_store_that_is_a_fifo_is_refused_not_waited_on(tmp_path):
    os.mkfifo(tmp_path / "know.db")
    with pytest.raises(store.StoreError, match="is not a regular file; pass --store FILE"):
        run(tmp_path)
    with pytest.raises(store.StoreError, match="is not a regular file"):
        run(tmp_path, dry_run=True)


def _timeless(rows: list) -> list:
    # facts: drop imported/updated; provenance: drop imported
    facts, anchors, citations, provenance, meta, version = rows
    return [
        [r[:-2] for r in facts],
        anchors,
        citations,
        [r[:-1] for r in provenance],
        meta,
        version,
    ]


def test_a_run_kept_on_disk_writes_the_same_store(tmp_path, monkeypatch):
    # Batches and caches of one: every fact read, merged and written goes through the
    # run's temporary files, and the stores and reports come out the same.
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    expected = [run(tmp_path, db=tmp_path / "a" / "k.db") for _ in range(2)]
    from brainmigrate import spill

    monkeypatch.setattr(spill, "BATCH", 1)
    monkeypatch.setattr(spill, "CACHE", 1)
    monkeypatch.setattr(importing, "WRITE_BATCH", 1)
    got = [run(tmp_path, db=tmp_path / "b" / "k.db") for _ in range(2)]
    for g, e in zip(got, expected, strict=True):
        g.pop("store"), e.pop("store")
        assert g == e
    assert expected[1]["totals"]["added"] == 0
    assert _timeless(dump(tmp_path / "b" / "k.db")) == _timeless(dump(tmp_path / "a" / "k.db"))


def test_a_dry_run_holds_no_lock_on_the_store_while_it_merges(tmp_path, monkeypatch):
    run(tmp_path)  # a store to merge against
    db = tmp_path / "know.db"
    merge, took = merge_run.merge, []

    def merge_then_write(notes, stored, stems, *more):
        # while the dry run merges, another writer takes the store exclusively at once
        other = sqlite3.connect(db, timeout=0, isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")
        other.execute("UPDATE meta SET value = value WHERE key = 'application'")
        other.execute("COMMIT")
        other.close()
        took.append(True)
        return merge(notes, stored, stems, *more)

    monkeypatch.setattr(merge_run, "merge", merge_then_write)
    dry = run(tmp_path, dry_run=True)
    assert took == [True]
    assert dry["totals"]["added"] == 0 and dry["totals"]["unchanged"] == 29


def test_a_scope_given_in_bytes_that_are_not_utf8_imports_as_the_dry_run_says(tmp_path):
    options = ImportOptions(roots=ROOTS, scope="sc\udcff")  # how Python holds byte 0xff
    db = tmp_path / "know.db"
    dry = reports.report(importer.import_notes([SAMPLES / "notes"], options, db, dry_run=True))
    real = reports.report(importer.import_notes([SAMPLES / "notes"], options, db))
    assert {f["scope"] for f in real["facts"]} == {"sc\ufffd"}
    for data in (dry, real):
        data.pop("dry_run")
    assert dry == real


def test_a_runaway_fact_reads_up_to_its_cap_and_counts_every_line(tmp_path, monkeypatch):
    monkeypatch.setattr(read_run, "MAX_FACT_CHARS", 20)
    notes = tmp_path / "log.md"
    notes.write_text("+ pasted log\n  line one\n  line two\n  line three\n  line four\n+ next\n")
    data = run(tmp_path, dry_run=True, paths=[notes])
    assert [f["text"] for f in data["facts"]] == ["pasted log line one", "next"]
    assert data["totals"]["continuations"] == 4 and data["totals"]["lines"] == 6
    assert [(w["line"], w["code"], w["message"]) for w in data["warnings"]] == [
        (
            3,
            "BM309",
            "fact longer than 20 characters: 3 more continuation lines counted but"
            " not read into it",
        )
    ]


def test_one_dropped_name_is_singular():
    diags = []
    importer._dropped("n.md", 3, [(1, "CamelCase names"), (2, "bare file names")], diags)
    assert [d.message for d in diags] == [
        "1 more CamelCase name dropped (at most 6 anchors of each per fact)",
        "2 more bare file names dropped (at most 6 anchors of each per fact)",
    ]


def test_a_store_whose_provenance_names_a_missing_fact_is_refused_untouched(tmp_path):
    run(tmp_path)
    db = tmp_path / "know.db"
    con = sqlite3.connect(db)
    with con:
        con.execute("DELETE FROM facts WHERE id = 1")  # its provenance rows stay
    con.close()
    before = db.read_bytes()
    for dry in (True, False):
        with pytest.raises(store.StoreError) as caught:
            run(tmp_path, dry_run=dry)
        assert str(caught.value) == (
            f"{db}: the store is inconsistent (fact k1 is missing, but provenance rows name"
            " it); restore a backup, or import the notes into a new store"
        )
    assert db.read_bytes() == before


def test_provenance_naming_a_fact_past_the_last_one_is_refused_untouched(tmp_path):
    """The last facts deleted, their provenance kept: the next new fact would take the id
    a provenance row names, and its line would be merged into that new fact. Refused."""
    run(tmp_path)
    db = tmp_path / "know.db"
    con = sqlite3.connect(db)
    with con:
        (top,) = con.execute("SELECT max(id) FROM facts").fetchone()
        for sql in (
            "DELETE FROM facts WHERE id >= ?",
            "DELETE FROM anchors WHERE fact_id >= ?",
            "DELETE FROM facts_fts WHERE rowid >= ?",
        ):
            con.execute(sql, (top - 1,))
    con.close()
    before = db.read_bytes()
    for dry in (True, False):
        with pytest.raises(store.StoreError) as caught:
            run(tmp_path, dry_run=dry)
        assert str(caught.value) == (
            f"{db}: the store is inconsistent (fact k{top - 1} is missing, but provenance"
            " rows name it); restore a backup, or import the notes into a new store"
        )
    assert db.read_bytes() == before


def test_prefetched_store_reads_answer_as_one_by_one(tmp_path):
    """``Stored.prefetch`` (a batch of lines read at once) gives what ``known``, ``fed`` and
    ``fact`` give line by line, also for a fingerprint that fed two facts (the first wins)
    and for fingerprints the store does not hold."""
    db = tmp_path / "k.db"
    run(tmp_path, db=db)
    con = sqlite3.connect(db)
    rows = con.execute("SELECT fact_id, file, line, fingerprint FROM provenance").fetchall()
    fid, file, line, fp = rows[0]
    other = max(r[0] for r in rows)
    con.execute(  # the same fingerprint feeding a later fact: known() still says the first
        "INSERT INTO provenance (fact_id, file, line, fingerprint, imported)"
        " VALUES (?, 'x.md', 9, ?, '2026-11-30T00:00:00Z')",
        (other, fp),
    )
    con.commit()
    con.close()
    fps = [r[3] for r in rows] + ["nowhere"]
    asked = [(r[0], r[1], r[2], r[3]) for r in rows] + [(other, "x.md", 9, fp), (1, "a", 1, "no")]
    with store.reading(db) as one:
        want = (
            [one.known(f) for f in fps],
            [one.fed(*a) for a in asked],
            [repr(one.fact(i)) for i in sorted({r[0] for r in rows})],
        )
    with store.reading(db) as batch:
        batch.prefetch(fps)
        got = (
            [batch.known(f) for f in fps],
            [batch.fed(*a) for a in asked],
            [repr(batch.fact(i)) for i in sorted({r[0] for r in rows})],
        )
    assert got == want
    assert want[0][0] == fid and want[0][-1] is None and want[1][-2:] == [True, False]


def _records(count: int, start: int = 1) -> list:
    from brainmigrate.model import FactRecord

    return [
        FactRecord(
            id=i,
            scope="s",
            kind="pattern",
            marker="+",
            text=f"fact {i} about queues",
            task=None,
            run=None,
            created=None,
            status="active",
            status_reason=None,
            stems=("fact", "queue"),
            numbers=frozenset({str(i)}),
            tasks=frozenset(),
            new_provenance=[("n.md", i, f"fp{i}")],
        )
        for i in range(start, start + count)
    ]


def test_a_write_failing_after_two_batches_leaves_the_store_as_it_was(tmp_path):
    db = tmp_path / "know.db"
    store.write(db, _records(10), lambda rec: "fact queue", "2026-01-01T00:00:00Z")
    before = dump(db)
    # rows of the third batch cannot be bound: SQLite refuses them after two batches were
    # written in the same transaction
    bad = 2 * importing.WRITE_BATCH + 5

    def words(rec):
        return ["not", "text"] if rec.id == 10 + bad else "fact queue"

    with pytest.raises(store.StoreError, match="not supported"):
        store.write(
            db, _records(3 * importing.WRITE_BATCH, start=11), words, "2026-01-02T00:00:00Z"
        )
    assert dump(db) == before


def test_ctrl_c_between_batches_of_the_write_leaves_the_store_as_it_was(tmp_path):
    db = tmp_path / "know.db"
    store.write(db, _records(10), lambda rec: "fact queue", "2026-01-01T00:00:00Z")
    before = dump(db)

    def interrupted():
        yield from _records(3 * importing.WRITE_BATCH, start=11)
        raise KeyboardInterrupt  # after three batches were written

    with pytest.raises(KeyboardInterrupt):
        store.transact(db, lambda _: (interrupted(), None), lambda rec: "w", "2026-01-02T00:00:00Z")
    assert dump(db) == before
    store.write(db, _records(1, start=11), lambda rec: "w", "2026-01-03T00:00:00Z")  # not locked
    assert len(dump(db)[0]) == len(before[0]) + 1


# ------------------------------------------------------------------ the package's public face


def test_every_public_name_of_the_store_package_resolves_to_its_module():
    for name in store.__all__:
        value = getattr(store, name)
        assert value.__module__.startswith("brainmigrate.stores."), name
        assert value.__name__ == name
    with pytest.raises(AttributeError):
        store.sqlite  # noqa: B018 - the module it replaced is gone


def test_the_store_package_loads_sqlite_only_when_a_store_is_read():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from brainmigrate import stores\n"
        "stores.StoreError\n"
        "print('sqlite3' in sys.modules, end=' ')\n"
        "stores.Reader\n"
        "print('sqlite3' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False True\n"
