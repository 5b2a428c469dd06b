"""An import of a store file never commits what the store cannot read back (issue 30): every
value an entry carries passes the store reader's rules (``values``) before the merge,
normalised where it has one right form, else the entry or anchor skipped with a BM312
warning; the rows written are read back in the transaction; a run that reads no fact
writes nothing; status and its reason are the file's."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from clirun import cli
from stored import rows, verified_checkout
from test_sources import line, warnings

from brainmigrate import stores
from brainmigrate.errors import BrainmigrateError


def text_col(jsonl_line: str) -> int:
    """The column a jsonl line's fact is reported at: where its text value starts."""
    return jsonl_line.index('"text": "') + len('"text": "') + 1


def imported(*args) -> tuple[int, dict, str]:
    done = cli("import", *args, "--format", "json")
    return done.exit_code, json.loads(done.stdout) if done.stdout else {}, done.stderr


def store_with_a_fact(tmp_path: Path) -> Path:
    """A store that holds the user's own fact (k1) before a jsonl is imported into it."""
    mine = tmp_path / "mine.md"
    mine.write_text("+ my own fact\n", encoding="utf-8")
    store = tmp_path / "mine.db"
    assert cli("import", mine, "--store", store).exit_code == 0
    return store


def readable(store: Path) -> None:
    """Every later reader takes the store: exports to brain and jsonl, a dry-run import."""
    for fmt in ("brain", "jsonl", "memory", "knowledge"):
        done = cli("export", "--store", store, "--to", fmt, "--output", store.parent / fmt)
        assert done.exit_code == 0, done.output


def test_a_verified_store_exported_to_jsonl_imports_into_a_store_holding_facts(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    verified_checkout(tmp_path, {"src/app.py": "def run():\n    pass\n"}, "+ runs: src/app.py\n")
    assert cli("export", "--to", "jsonl", "--output", "a.jsonl").exit_code == 0
    (exported,) = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert exported["anchors"][0]["verified_at"] is not None  # a fingerprint, no digests
    store = store_with_a_fact(tmp_path)
    code, report, err = imported("--from", "jsonl", "a.jsonl", "--store", store)
    assert (code, err, warnings(report)[1:]) == (0, "", [])  # [0]: ids not kept
    readable(store)
    # the fingerprint the file cannot carry whole is dropped: the anchor is verified again
    assert rows(store, "SELECT fact_id, path, verified_at, digest_version FROM anchors") == [
        (2, "src/app.py", None, None)
    ]
    assert cli("verify", "--all", "--store", store).exit_code == 0
    assert rows(store, "SELECT digest_version IS NOT NULL FROM anchors") == [(1,)]


@pytest.mark.parametrize(
    ("fields", "column", "stored"),
    [
        ({"created": "2024-05-01"}, "created", "2024-05-01T00:00:00Z"),
        ({"created": "2024-05-01T10:00:00+02:00"}, "created", "2024-05-01T08:00:00Z"),
        ({"created": "2024-05-01T10:00:00"}, "created", "2024-05-01T10:00:00Z"),
        ({"task": "TER-1"}, "task || '|' || tasks", "TER-1|TER-1"),
        ({"task": " TER-1 "}, "task || '|' || tasks", "TER-1|TER-1"),
    ],
)
def test_a_value_with_one_stored_form_is_given_it(tmp_path, fields, column, stored):
    facts = tmp_path / "f.jsonl"
    facts.write_text(line(1, "ledger rows keep the key", **fields), encoding="utf-8")
    store = store_with_a_fact(tmp_path)
    code, report, _ = imported("--from", "jsonl", facts, "--store", store)
    assert code == 0
    assert [w for w in warnings(report) if w[3] != "BM312" or "ids not kept" not in w[4]] == []
    assert rows(store, f"SELECT {column} FROM facts WHERE id = 2") == [(stored,)]
    readable(store)


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"run": "my run", "created": "2024-05-01T10:00:00Z"}, "run 'my run' is not one word"),
        ({"run": "r1"}, "run 'r1' is given without created (a stamp gives both)"),
        ({"scope": ""}, "scope '' is blank"),
        ({"created": "never"}, "created 'never' is no ISO date or time (2024-05-01T10:00:00Z)"),
    ],
)
def test_a_value_the_store_cannot_read_back_skips_the_entry(tmp_path, fields, why):
    facts = tmp_path / "f.jsonl"
    odd = line(2, "odd fact", **fields)
    facts.write_text(line(1, "kept fact") + odd, encoding="utf-8")
    store = tmp_path / "k.db"
    code, report, _ = imported("--from", "jsonl", facts, "--store", store)
    assert code == 0
    assert warnings(report) == [(str(facts), 2, text_col(odd), "BM312", f"{why}; skipped")]
    assert rows(store, "SELECT id, text FROM facts") == [(1, "kept fact")]
    readable(store)


def anchor(root: Path, **fields) -> dict:
    return {"kind": "file", "root": str(root), "path": "src/a.py", "symbol": None,
            "lines": None, "how": "cited", **fields}  # fmt: skip


@pytest.mark.parametrize(
    ("fields", "said", "stored"),
    [
        ({"lines": [9, 2]}, None, [("src/a.py", "", 2, 9, None)]),
        ({"verified_at": "never"}, None, [("src/a.py", "", None, None, None)]),
        ({"verified_at": "2026-10-01T09:00:00Z", "commit": "abc"}, None,
         [("src/a.py", "", None, None, None)]),
        ({"kind": "symbol"}, "anchor 'src/a.py': a symbol anchor names no symbol", []),
        ({"symbol": "run"}, "anchor 'src/a.py': a file anchor names symbol 'run'", []),
        ({"lines": [-1, 2]}, "anchor 'src/a.py': lines [-1, 2] are not line numbers", []),
    ],
)  # fmt: skip
def test_an_anchor_is_kept_as_the_store_reads_it_or_left_out(tmp_path, fields, said, stored):
    facts = tmp_path / "f.jsonl"
    one = line(1, "ledger rows", anchors=[anchor(tmp_path, **fields)])
    facts.write_text(one, "utf-8")
    store = tmp_path / "k.db"
    code, report, _ = imported("--from", "jsonl", facts, "--store", store)
    assert code == 0
    at = text_col(one)
    expected = [(str(facts), 1, at, "BM312", f"{said}; anchor left out")] if said else []
    assert warnings(report) == expected
    sql = "SELECT path, symbol, line_first, line_last, verified_at FROM anchors"
    assert rows(store, sql) == stored
    readable(store)


def test_an_id_past_what_the_store_keeps_is_not_kept_and_said(tmp_path):
    facts = tmp_path / "f.jsonl"
    facts.write_text(
        line(99999999999999999999, "huge id") + line(2, "small", related=["k99999999999999999999"]),
        encoding="utf-8",
    )
    store = tmp_path / "k.db"
    code, report, err = imported("--from", "jsonl", facts, "--store", store)
    assert (code, err) == (0, "")
    said = [(w[1], w[4]) for w in warnings(report)]
    assert (1, "id k99999999999999999999 is past the largest a store keeps; not kept") in said
    assert (2, "related: an id past the largest a store keeps; left out") in said
    assert rows(store, "SELECT id, text, related FROM facts") == [
        (1, "huge id", "[]"),
        (2, "small", "[]"),
    ]


def test_a_text_cut_to_the_stored_length_is_said_as_in_notes(tmp_path):
    text = " ".join(["word"] * 600) + "x" * 4  # 3003 characters
    facts = tmp_path / "f.jsonl"
    facts.write_text(line(1, text), encoding="utf-8")
    notes = tmp_path / "n.md"
    notes.write_text(f"= {text}\n", encoding="utf-8")
    _, from_store, _ = imported("--from", "jsonl", facts, "--store", tmp_path / "a.db")
    _, from_notes, _ = imported(notes, "--store", tmp_path / "b.db")
    (cut,) = [w for w in warnings(from_store) if w[3] == "BM302"]
    at = text_col(line(1, text))
    assert cut == (str(facts), 1, at, "BM302", "text cut to 1999 of 3003 characters")
    assert [w[3:] for w in warnings(from_notes)] == [cut[3:]]


def test_nul_and_bytes_that_are_not_utf8_are_replaced_and_said(tmp_path):
    facts = tmp_path / "f.jsonl"
    raw = line(1, "a\u0000b").encode() + line(2, "caf@").encode().replace(b"@", b"\xe9")
    facts.write_bytes(raw)
    store = tmp_path / "k.db"
    code, report, _ = imported("--from", "jsonl", facts, "--store", store)
    assert code == 0
    col = line(2, "caf@").index("@") + 1
    assert sorted(warnings(report)) == [
        (
            str(facts),
            1,
            text_col(line(1, "a")),
            "BM306",
            "NUL characters in the text replaced with U+FFFD",
        ),
        (str(facts), 2, col, "BM305", "invalid UTF-8 bytes replaced with U+FFFD"),
    ]
    assert rows(store, "SELECT text FROM facts") == [("a\ufffdb",), ("caf\ufffd",)]


def test_the_import_never_commits_a_row_the_reader_refuses(tmp_path):
    store = store_with_a_fact(tmp_path)
    before = rows(store, "SELECT * FROM facts")

    def plan(stored):
        rec = stored.fact(1)
        rec.created = "2024-05-01"  # what no reader takes
        return [rec], None

    with pytest.raises(BrainmigrateError) as caught:
        stores.transact(store, plan, lambda rec: rec.text, "2026-10-01T09:00:00Z")
    assert str(caught.value) == (
        f"{store}: the import made a row the store cannot read back (fact k1: created is"
        " '2024-05-01', not a time like 2026-09-23T13:16:09Z); nothing was written (the"
        " store is as it was): fix that value in the input"
    )
    assert rows(store, "SELECT * FROM facts") == before
    readable(store)


def test_an_import_that_reads_no_fact_writes_nothing(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    store = tmp_path / "e.db"
    done = cli("import", "--from", "mcp-memory", empty, "--store", store)
    assert done.exit_code == 1
    assert "Imported into" not in done.stdout
    assert done.stderr == (
        f"brainmigrate: 0 facts in 1 file: {empty} is empty; nothing imported, nothing"
        " written (pass --from with the store the files are, or --allow-empty when none is"
        " expected)\n"
    )
    assert not store.exists()
    allowed = cli("import", "--from", "mcp-memory", empty, "--store", store, "--allow-empty")
    assert allowed.exit_code == 0 and store.exists()


def test_a_status_the_file_states_wins_on_reimport(tmp_path):
    facts = tmp_path / "f.jsonl"
    facts.write_text(line(1, "ledger rows") + line(2, "other rows"), encoding="utf-8")
    store = tmp_path / "k.db"
    assert imported("--from", "jsonl", facts, "--store", store)[0] == 0
    edited = line(1, "ledger rows", status="stale", status_reason="checked by hand")
    facts.write_text(edited + line(2, "other rows"), encoding="utf-8")
    code, report, _ = imported("--from", "jsonl", facts, "--store", store)
    assert code == 0
    assert (report["totals"]["updated"], report["totals"]["unchanged"]) == (1, 1)
    assert rows(store, "SELECT id, status, status_reason FROM facts") == [
        (1, "stale", "checked by hand"),
        (2, "active", None),
    ]


def test_a_superseded_entry_keeps_the_files_reason_or_none(tmp_path):
    facts = tmp_path / "f.jsonl"
    facts.write_text(
        line(1, "old rows", status="superseded")
        + line(2, "older rows", status="superseded", status_reason="replaced by k3"),
        encoding="utf-8",
    )
    store = tmp_path / "k.db"
    assert imported("--from", "jsonl", facts, "--store", store)[0] == 0
    assert rows(store, "SELECT id, status, status_reason FROM facts") == [
        (1, "superseded", None),
        (2, "superseded", "replaced by k3"),
    ]


def test_values_rules_are_the_readers(tmp_path):
    """The store's reader refuses what ``values`` refuses: one rule (a created the feed
    would normalise is refused raw)."""
    store = store_with_a_fact(tmp_path)
    con = sqlite3.connect(store)
    con.execute("UPDATE facts SET created = '2024-05-01' WHERE id = 1")
    con.commit()
    con.close()
    done = cli("export", "--store", store, "--to", "jsonl", "--output", tmp_path / "o.jsonl")
    assert done.exit_code == 2
    assert "created is '2024-05-01', not a time like 2026-09-23T13:16:09Z" in done.stderr


def test_a_put_task_round_trips_through_every_export(tmp_path):
    """A fact ``put --task`` wrote (its text does not name the task) reads back from every
    export; brain notation shows the task in the text (no fill to the 2000-character
    cut), memory says it leaves the task out."""
    store = tmp_path / "p.db"
    put = cli("put", "ledger rows keep the key", "--scope", "area:p", "--task", "TER-1",
              "--store", store)  # fmt: skip
    assert put.exit_code == 0
    brain = cli("export", "--store", store, "--to", "brain", "--output", tmp_path / "br")
    assert brain.exit_code == 0
    (line,) = [x for x in (tmp_path / "br" / "p.md").read_text().splitlines() if x[:1] == "?"]
    assert line.split(" <!-- ")[0] == "? ledger rows keep the key (TER-1)"
    assert brain.stderr.splitlines()[1:] == [
        "  note: 1 fact is written with the task id or SUPERSEDED their text does not show in"
        " it (brain notation reads both from the text, so importing the export keeps them in"
        " the text): k1"
    ]
    code, report, _ = imported(tmp_path / "br", "--store", tmp_path / "b.db")
    assert (code, warnings(report)) == (0, [])
    assert rows(tmp_path / "b.db", "SELECT text, task FROM facts") == [
        ("ledger rows keep the key (TER-1)", "TER-1")
    ]
    memory = cli("export", "--store", store, "--to", "memory", "--output", tmp_path / "mem")
    assert memory.exit_code == 0
    assert (
        "  note: 1 fact loses its task id: a memory topic line holds the text alone, which"
        " does not name it (export --to jsonl or knowledge to keep it): k1"
    ) in memory.stderr.splitlines()
    for fmt in ("jsonl", "knowledge"):
        out = tmp_path / f"out-{fmt}"
        assert cli("export", "--store", store, "--to", fmt, "--output", out).exit_code == 0
        (tmp_path / fmt).mkdir()
        into = store_with_a_fact(tmp_path / fmt)
        code, _, err = imported("--from", fmt, out, "--store", into)
        assert (code, err) == (0, "")
        assert rows(into, "SELECT text, task, tasks FROM facts WHERE id = 2") == [
            ("ledger rows keep the key", "TER-1", "TER-1")
        ]
        readable(into)


def test_nul_is_replaced_for_every_reader(tmp_path):
    """The rule is the framework's: an MCP memory observation's ``\\u0000`` too."""
    memory = tmp_path / "memory.jsonl"
    entity = {"type": "entity", "name": "Ledger", "entityType": "component"}
    memory.write_text(json.dumps({**entity, "observations": ["rows\u0000 keep"]}) + "\n")
    store = tmp_path / "m.db"
    code, report, _ = imported("--from", "mcp-memory", memory, "--store", store)
    assert code == 0
    assert [w[3:] for w in warnings(report)] == [
        ("BM306", "NUL characters in the text replaced with U+FFFD")
    ]
    assert rows(store, "SELECT text FROM facts") == [("rows\ufffd keep",)]
    readable(store)
    assert all(b"\x00" not in p.read_bytes() for p in tmp_path.rglob("*.md"))


def test_a_time_whose_offset_leaves_the_calendar_skips_the_entry(tmp_path):
    """``0001-01-01T00:00:00+02:00`` is before year 1 in UTC: a BM312 skip, where it was
    an internal error (OverflowError) on check and import."""
    facts = tmp_path / "f.jsonl"
    odd = line(2, "odd fact", created="0001-01-01T00:00:00+02:00")
    facts.write_text(line(1, "kept fact") + odd, encoding="utf-8")
    code, report, _ = imported("--from", "jsonl", facts, "--store", tmp_path / "k.db")
    assert code == 0
    why = "created '0001-01-01T00:00:00+02:00' is no ISO date or time (2024-05-01T10:00:00Z)"
    assert warnings(report) == [(str(facts), 2, text_col(odd), "BM312", f"{why}; skipped")]
