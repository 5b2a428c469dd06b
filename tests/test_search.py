"""Search (FTS5 BM25 over merge stems) and show (brainmigrate.search, ``search``/``show``)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from clirun import cli as run

from brainmigrate import importer, search, stores
from brainmigrate.read.run import ImportOptions

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("search")
    store = base / "know.db"
    options = ImportOptions(roots=["roots/app", "roots/infra"], cache_dir=str(base / "c"))
    with contextlib.chdir(SAMPLES):
        importer.import_notes(["notes"], options, store)
    return store


@pytest.fixture
def store(sample_store, tmp_path) -> Path:
    copy = tmp_path / "know.db"
    shutil.copyfile(sample_store, copy)
    return copy


def ids(hits) -> list[str]:
    return [h.fact.key for h in hits]


def test_stems_match_other_forms(store):
    # "retried" and "retrying" stem like "retries"/"retry"
    want = ["k12", "k19", "k26", "k11", "k24"]
    assert ids(search.search(store, "retries backoff")) == want
    assert set(ids(search.search(store, "retried", limit=30))) == set(
        ids(search.search(store, "retrying", limit=30))
    )
    assert "k26" in ids(search.search(store, "retrying", limit=30))


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '""',
        "'",
        "-x",
        "-",
        "AND",
        "OR",
        "NOT",
        "*",
        "(",
        ")",
        "NEAR(",
        "NEAR(a b",
        "^",
        ":",
        "",
        "   ",
        "col:umn",
        "a AND OR b",
        '"unbalanced',
        "{a b}",
        "\x00",
        "k1",
        "🙂",
    ],
)
def test_hostile_queries_never_raise(store, query):
    hits = search.search(store, query, limit=30)
    assert all(isinstance(h, search.Hit) for h in hits)


def test_hostile_syntax_is_only_words(store):
    plain = ids(search.search(store, "webhook signing", limit=30))
    assert plain and plain[0] == "k22"
    for noisy in [
        '"webhook signing"',
        "-webhook -signing",
        "(webhook) signing*",
        "{webhook} +signing",
        "webhook: signing^",
        "webhook' signing\"",
    ]:
        assert ids(search.search(store, noisy, limit=30)) == plain
    assert search.search(store, '"', limit=30) == []
    assert search.search(store, "", limit=30) == []


def test_fts_query_quotes_each_stem():
    assert search.fts_query('Retries AND "backoff" -x NEAR(') == (
        '"retri" OR "and" OR "backoff" OR "x" OR "near"'
    )
    assert search.fts_query('*()"') == ""


def test_superseded_only_with_all(store):
    assert "k21" not in ids(search.search(store, "refunds synchronously", limit=30))
    hits = search.search(store, "refunds synchronously", limit=30, include_superseded=True)
    assert ids(hits)[0] == "k21"
    result = run("search", "--store", str(store), "--all", "refunds", "synchronously")
    assert result.exit_code == 0
    # marked in its line (issue 29), before its text, which starts with the word too
    assert result.stdout.splitlines()[0].startswith(
        "k21 environment area:payments SUPERSEDED  SUPERSEDED:"
    )


def test_stale_is_marked(store):
    con = sqlite3.connect(store)
    con.execute(
        "UPDATE facts SET status='stale', status_reason='file gone: docker/Dockerfile' WHERE id=5"
    )
    con.commit()
    con.close()
    (hit,) = search.search(store, "temurin", recheck=False)
    assert hit.line == (
        "k5 environment area:docker STALE: file gone: docker/Dockerfile  "
        "the app image runs on eclipse-temurin:21-jre, see docker/Dockerfile"
    )
    # read again, the Dockerfile is there: the line shows the fact as it stands now
    (hit,) = search.search(store, "temurin")
    assert hit.line == (
        "k5 environment area:docker  "
        "the app image runs on eclipse-temurin:21-jre, see docker/Dockerfile"
    )
    assert (hit.fact.status, hit.fact.status_reason) == ("active", None)


def test_line_format_scope_kind_and_limit(store):
    (hit,) = search.search(store, "arm64")
    assert hit.line == "k10 blocker area:docker  the image does not build on arm64 hosts yet INF-16"
    assert set(ids(search.search(store, "idempotency", scopes=["area:payments"], limit=30))) == {
        "k13",
        "k14",
        "k16",
    }
    assert ids(search.search(store, "idempotency", kinds=["decision"])) == ["k13"]
    assert set(
        ids(
            search.search(
                store, "idempotency", scopes=["area:payments,area:api-patterns"], limit=30
            )
        )
    ) == {"k1", "k13", "k14", "k16"}
    assert len(search.search(store, "the", limit=2)) == 2
    with pytest.raises(ValueError):
        search.search(store, "the", limit=31)


def test_hit_line_adds_the_task_only_when_the_text_lacks_it_and_cuts_long_text():
    from brainmigrate.model import FactRecord

    rec = FactRecord(
        41,
        "area:webhooks",
        "decision",
        "~",
        "retries back off " + "x" * 400,
        "TER-1",
        None,
        None,
        "active",
        None,
        frozenset(),
        frozenset(),
        frozenset(),
    )
    line = search.hit_line(rec)
    assert line.startswith("k41 decision area:webhooks  retries back off xxx")
    assert line.endswith("… (TER-1)") and len(line) == 300


def test_cli_search_leading_dash_and_no_hits(store):
    result = run("search", "--store", str(store), "-webhook", "signing", "--", "-h")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].startswith("k22 other area:payments  who owns")
    result = run("search", "--store", str(store), "zzzqqq")
    assert result.exit_code == 0 and result.stdout == "" and "no facts match" in result.stderr
    result = run("search", "--store", str(store), "--format", "json", "arm64")
    data = json.loads(result.stdout)
    assert [h["fact"]["id"] for h in data["hits"]] == ["k10"]


def test_show_by_k_and_number(store):
    a = run("show", "k11", "--store", str(store))
    b = run("show", "11", "--store", str(store))
    assert a.exit_code == 0 and a.stdout == b.stdout
    lines = a.stdout.splitlines()
    assert lines[0] == "k11 environment area:payments (active)"
    assert "task: TER-160" in lines and "run: ter-160-b" in lines
    assert (
        "  file src/main/kotlin/com/example/payments/PaymentGateway.kt:13-24 (cited; root "
        + os.path.relpath(SAMPLES / "roots" / "app", store.parent.resolve())
        + ")"
        in lines
    )
    assert "provenance: 2" in lines
    assert any(line.startswith("  notes/payments.md:16 (imported ") for line in lines)
    data = json.loads(run("show", "k9", "--store", str(store), "--format", "json").stdout)
    assert data["gone"] == ["docker/certs/dev.pem", "scripts/gen-certs.sh"]


@pytest.mark.parametrize("bad", ["k999", "0", "kx", "k-1", "x17"])
def test_show_unknown_id_exits_2(store, bad):
    result = run("show", bad, "--store", str(store))
    assert result.exit_code == 2
    assert "brainmigrate: error:" in result.stderr


def test_missing_and_newer_store_exit_2(store, tmp_path):
    result = run("search", "--store", str(tmp_path / "none.db"), "x")
    assert result.exit_code == 2 and "no store here" in result.stderr
    con = sqlite3.connect(store)
    con.execute("PRAGMA user_version = 7")
    con.commit()
    con.close()
    for args in (["search", "--store", str(store), "x"], ["show", "k1", "--store", str(store)]):
        result = run(*args)
        assert result.exit_code == 2
        assert "upgrade brainmigrate" in result.stderr
    with pytest.raises(stores.StoreError):
        search.show(store, "k1")


def test_only_a_bare_area_means_every_area_scope():
    from brainmigrate.terms import parse_scopes

    assert parse_scopes(["area"]) == ([], True)
    assert parse_scopes(["area:"]) == (["area:"], False)  # a scope of its own
    assert parse_scopes(["area:a, area:b", "area"]) == (["area:a", "area:b"], True)


def test_task_ids_and_numbers_are_found_as_written(store):
    # the facts of task TER-160, and no fact of another TER task for its letters
    assert ids(search.search(store, "TER-160")) == ["k19", "k11"]
    assert ids(search.search(store, "ter-160")) == ["k19", "k11"]
    assert ids(search.search(store, "TER-1")) == []  # no such task
    assert ids(search.search(store, "500")) == ["k12"]
    assert ids(search.search(store, "retries TER-171"))[0] == "k26"
    assert search.fts_query("TER-160 backoff 500 ms") == ('"backoff" OR "ms" OR "ter160" OR "500"')
    assert search.fts_query("TER tasks") == '"ter" OR "task"'  # a word, not a task id


def test_a_store_indexed_before_task_and_number_tokens_still_finds_them(store):
    from brainmigrate.merge.rule import Stems

    con = sqlite3.connect(store)
    stems = Stems()
    rows = con.execute("SELECT id, text, scope, kind, task FROM facts").fetchall()
    con.execute("DELETE FROM facts_fts")
    for fid, *parts in rows:
        words = " ".join(stems.words(" ".join(p for p in parts if p)))
        con.execute("INSERT INTO facts_fts (rowid, words) VALUES (?, ?)", (fid, words))
    con.commit()
    con.close()
    assert ids(search.search(store, "500")) == ["k12"]
    # the task's facts first; this store has no token to rank them by, so by id
    assert ids(search.search(store, "TER-160"))[:2] == ["k11", "k19"]


def test_search_json_fact_is_the_show_object(store):
    result = run("search", "--store", str(store), "--format", "json", "retry", "tests")
    assert result.exit_code == 0
    first = json.loads(result.stdout)["hits"][0]
    shown = json.loads(
        run("show", first["fact"]["id"], "--store", str(store), "--format", "json").stdout
    )
    assert first["fact"] == shown
    assert shown["origin"] == {"file": "notes/payments.md", "line": 15}
    assert shown["provenance"][0]["file"] == "notes/payments.md"
    assert shown["anchors"][0]["fingerprinted"] is False


def test_search_anchor_by_path_symbol_and_both(store):
    def found(anchor, *query, **kw):
        return ids(search.search(store, " ".join(query), anchor=anchor, limit=30, **kw))

    by_path = found("PaymentGateway.kt")
    # newest first: by created, else when imported (k28 and k4 carry no date; ties: higher id)
    assert by_path == ["k28", "k4", "k12", "k11"]
    assert found("src/main/kotlin/com/example/payments/PaymentGateway.kt") == by_path
    assert found("payments/PaymentGateway.kt") == by_path
    assert found("ments/PaymentGateway.kt") == []  # a tail starts at a folder
    assert found("PaymentGateway") == ["k28", "k11"]
    assert found("com.example.payments.PaymentGateway") == found("PaymentGateway")
    assert found("src/main/kotlin/com/example/payments/PaymentGateway.kt#ChargeRequest") == ["k4"]
    assert found("Dockerfile") == []  # no extension, no '/': a symbol name, declared nowhere
    assert found("docker/Dockerfile") == ["k5"]
    assert found("PaymentGateway.kt", "backoff") == ["k12"]


@pytest.mark.parametrize("text", ["#", "  ", ".", "::", "#.", " # "])
def test_an_anchor_that_names_nothing_is_refused_not_a_match_for_everything(store, text):
    got = run("search", "--store", str(store), "--anchor", text)
    assert got.exit_code == 2
    assert "names no file or declaration" in got.output
    assert search.search(store, "", anchor=text, limit=30) == []
    assert search.anchor_parts(text) == ("", "")


def test_anchor_search_refuses_an_anchor_row_of_the_wrong_type_in_one_line(store):
    """``--anchor`` reads every anchors row; each column is checked there as wherever
    anchors are read (a symbol stored as bytes used to end in an internal error)."""
    con = sqlite3.connect(store)
    with con:
        con.execute(
            "UPDATE anchors SET symbol = ? WHERE rowid = (SELECT min(rowid) FROM anchors)",
            (b"\x00\xff",),
        )
    con.close()
    got = run("search", "--anchor", "app", "--store", str(store))
    assert got.exit_code == 2
    assert got.stderr.startswith("brainmigrate: error: ") and got.stderr.count("\n") == 1
    assert "symbol is a BLOB" in got.stderr


def _edit(store: Path, *statements: str) -> None:
    con = sqlite3.connect(store)
    with con:
        for sql in statements:
            con.execute(sql)
    con.close()


def _refused(got, what: str) -> None:
    assert got.exit_code == 2, got.output
    assert got.stderr.startswith("brainmigrate: error: ") and got.stderr.count("\n") == 1
    assert what in got.stderr, got.stderr


SAMPLE_ROOTS = ["--root", str(SAMPLES / "roots/app"), "--root", str(SAMPLES / "roots/infra")]


def test_a_deleted_fact_whose_anchors_remain_is_refused_not_skipped(store):
    """Every command that reads anchors refuses a store whose anchors rows name a fact it
    no longer holds; none passes over the fact in silence."""
    _edit(store, "DELETE FROM facts WHERE id = 11")
    missing = "fact k11 is missing, but anchors rows name it"
    _refused(run("search", "--anchor", "PaymentGateway", "--store", str(store)), missing)
    _refused(run("stale", "--store", str(store), *SAMPLE_ROOTS), missing)
    _refused(run("verify", "--all", "--store", str(store), *SAMPLE_ROOTS), missing)


def test_a_fact_id_out_of_range_is_refused_by_search_not_dropped(store):
    _edit(
        store,
        "UPDATE facts SET id = -5 WHERE id = 11",
        "UPDATE anchors SET fact_id = -5 WHERE fact_id = 11",
        "UPDATE provenance SET fact_id = -5 WHERE fact_id = 11",
        "UPDATE facts_fts SET rowid = -5 WHERE rowid = 11",
    )
    for query in (["charges", "twice"], ["TER-160"]):
        _refused(run("search", *query, "--store", str(store)), "id is -5")


def test_text_indexed_for_a_fact_the_store_lacks_is_refused_by_search(store):
    _edit(
        store,
        "DELETE FROM facts WHERE id = 11",
        "DELETE FROM anchors WHERE fact_id = 11",
        "DELETE FROM provenance WHERE fact_id = 11",
    )
    got = run("search", "charges", "twice", "--store", str(store))
    _refused(got, "fact k11 is missing, but facts_fts rows name it")


def test_stale_checks_the_provenance_rows_it_shows(store):
    _edit(store, "UPDATE provenance SET file = X'00ff' WHERE fact_id = 11")
    got = run("stale", "--store", str(store), *SAMPLE_ROOTS, "--dry-run", "--format", "json")
    _refused(got, "file is a BLOB")


@pytest.mark.parametrize(
    "edit, what",
    [
        ("DROP TABLE facts_fts", "the store is inconsistent (table facts_fts is missing)"),
        ("ALTER TABLE facts DROP COLUMN related", "the store is inconsistent (no such column"),
    ],
)
def test_a_table_or_column_dropped_by_hand_says_the_store_is_inconsistent(store, edit, what):
    """Not "store error …; run again": running again cannot help."""
    _edit(store, edit)
    _refused(run("show", "k1", "--store", str(store)), what)


@pytest.mark.parametrize("command", ["show", "verify"])
def test_an_id_of_5000_digits_is_no_fact_not_an_internal_error(tmp_path, command):
    """int() refuses more than 4300 digits: a 5000-digit id was "internal error"."""
    (tmp_path / "n.md").write_text("+ one fact\n")
    db = tmp_path / "s.db"
    assert run("import", tmp_path / "n.md", "--store", db, "--isolated").exit_code == 0
    r = run(command, "k" + "9" * 5000, "--store", db)
    assert (r.exit_code, r.stderr) == (
        2,
        "brainmigrate: error: no fact k99999999999999999999999…: a fact id has at most 19"
        " digits; 'brainmigrate search' finds ids\n",
    )
