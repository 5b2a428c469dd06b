"""Importing the stores teams keep (issue 30): ``import --from``, detection, what a jsonl
export keeps into an empty store and into one that holds facts, bad lines (BM312), files
that yield no fact line (BM313) and an import that reads none (exit 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import cli
from stored import rows

from brainmigrate.sources import SOURCES, Entry, Reading, Skip, load_all, safe_yaml


def line(fid: int, text: str, **fields) -> str:
    """One line of a jsonl export, as ``export --to jsonl`` writes it (the fields a test
    names replace the defaults)."""
    fact = {
        "id": f"k{fid}",
        "scope": "area:ledger",
        "kind": "environment",
        "marker": "=",
        "text": text,
        "task": None,
        "run": None,
        "created": None,
        "status": "active",
        "status_reason": None,
        "origin": {"file": "notes/ledger.md", "line": fid},
        "anchors": [],
        "gone": [],
        "supersedes": [],
        "related": [],
        "imported": "2026-10-01T09:00:00Z",
        "updated": "2026-10-01T09:00:00Z",
        "provenance": [],
        **fields,
    }
    return json.dumps(fact) + "\n"


def imported(*args) -> tuple[int, dict, str]:
    done = cli("import", *args, "--format", "json")
    return done.exit_code, json.loads(done.stdout) if done.stdout else {}, done.stderr


def warnings(report: dict) -> list[tuple]:
    return [(w["file"], w["line"], w["col"], w["code"], w["message"]) for w in report["warnings"]]


@pytest.fixture
def export_file(tmp_path: Path) -> Path:
    """A jsonl export of three facts with ids 3, 7, 9 (a filtered export: not dense); k9
    supersedes k3 and relates to k7."""
    path = tmp_path / "facts.jsonl"
    path.write_text(
        line(
            3,
            "the ledger is written after the charge TER-40",
            status="superseded",
            status_reason="removed from notes",
        )
        + line(7, "ledger rows keep the idempotency key", created="2026-09-20T10:00:00Z")
        + line(
            9,
            "the ledger is written in the charge transaction TER-41",
            run="ter-41",
            created="2026-09-21T08:00:00Z",
            supersedes=["k3"],
            related=["k7"],
            status="stale",
            status_reason="anchor changed",
        ),
        encoding="utf-8",
    )
    return path


def test_a_jsonl_export_is_detected_and_keeps_ids_into_an_empty_store(export_file, tmp_path):
    code, report, _ = imported(export_file, "--store", tmp_path / "k.db")
    assert code == 0
    assert [(f["path"], f["notation"], f["fact_lines"]) for f in report["files"]] == [
        (str(export_file), "jsonl", 3)
    ]
    assert report["warnings"] == []
    assert rows(
        tmp_path / "k.db",
        "SELECT id, marker, status, status_reason, created, run, task, supersedes, related"
        " FROM facts ORDER BY id",
    ) == [
        (3, "=", "superseded", "removed from notes", None, None, "TER-40", "[]", "[]"),
        (7, "=", "active", None, "2026-09-20T10:00:00Z", None, None, "[]", "[]"),
        (
            9,
            "=",
            "stale",
            "anchor changed",
            "2026-09-21T08:00:00Z",
            "ter-41",
            "TER-41",
            "[3]",
            "[7]",
        ),
    ]


def test_into_a_store_that_holds_facts_ids_are_mapped_and_that_is_said(export_file, tmp_path):
    notes = tmp_path / "first.md"
    notes.write_text("+ the cache is warmed at start\n", encoding="utf-8")
    store = tmp_path / "k.db"
    assert imported(notes, "--store", store)[0] == 0
    code, report, _ = imported("--from", "jsonl", export_file, "--store", store)
    assert code == 0
    assert warnings(report) == [
        (
            str(export_file),
            None,
            None,
            "BM312",
            "ids not kept (the store holds facts already): the facts get new ids, and"
            " supersedes and related are mapped through them; import into an empty store to"
            " keep the ids",
        )
    ]
    assert rows(store, "SELECT id, text, supersedes, related FROM facts ORDER BY id") == [
        (1, "the cache is warmed at start", "[]", "[]"),
        (2, "the ledger is written after the charge TER-40", "[]", "[]"),
        (3, "ledger rows keep the idempotency key", "[]", "[]"),
        (4, "the ledger is written in the charge transaction TER-41", "[2]", "[3]"),
    ]


def test_bad_lines_are_one_warning_each_skipped_and_counted(export_file, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        export_file.read_text(encoding="utf-8").splitlines(keepends=True)[0]
        + "{oops\n"
        + "\n"
        + line(4, "x", scope=3)
        + '  ["a list"]\n'
        + line(5, "y", kind="note")
        + line(6, "z", anchors=[{"kind": "file", "root": ".", "path": "a.py", "lines": [1]}]),
        encoding="utf-8",
    )
    code, report, _ = imported(bad, "--store", tmp_path / "k.db")
    assert code == 0
    name = str(bad)
    assert warnings(report) == [
        (
            name,
            2,
            1,
            "BM312",
            "not JSON (Expecting property name enclosed in double quotes); line skipped",
        ),  # fmt: skip
        (name, 4, 1, "BM312", "'scope' is a JSON number, not a string; line skipped"),
        (name, 5, 3, "BM312", "a JSON array, not an object; line skipped"),
        (
            name,
            6,
            1,
            "BM312",
            "kind 'note' is not one of decision, pattern, blocker,"
            " environment, other; line skipped",
        ),  # fmt: skip
        (name, 7, 1, "BM312", "anchor lines [1] are not [first, last]; line skipped"),
    ]
    (entry,) = report["files"]
    assert (entry["lines"], entry["fact_lines"], entry["blank"], entry["skipped"]) == (7, 1, 1, 5)
    assert report["totals"]["facts"] == 1


def test_a_store_file_read_as_notes_says_which_reader_reads_it(export_file, tmp_path):
    store = tmp_path / "k.db"
    done = cli("import", "--from", "brain", export_file, "--store", store, "--format", "json")
    assert done.exit_code == 1
    assert warnings(json.loads(done.stdout)) == [
        (
            str(export_file),
            None,
            None,
            "BM313",
            f"0 fact lines in 3 lines of {export_file}: it looks like a jsonl export; pass"
            " --from jsonl",
        )
    ]
    assert done.stderr == (
        f"brainmigrate: 0 facts in 1 file: {export_file}: 3 lines, no fact line; nothing"
        " imported, nothing written (see the BM313 warnings; pass --from with the store the"
        " files are, or --allow-empty when none is expected)\n"
    )
    assert not store.exists()
    allowed = cli("import", "--from", "brain", export_file, "--store", store, "--allow-empty")
    assert allowed.exit_code == 0
    check = cli("check", "--from", "brain", export_file, "--isolated")
    assert (
        f"{export_file}: BM313 warning 0 fact lines in 3 lines of {export_file}: it looks like"
        " a jsonl export; pass --from jsonl"
    ) in check.stdout.splitlines()
    detected = cli("check", export_file, "--isolated")  # read as import reads it
    assert detected.stdout.startswith("OK: 1 file, 3 fact lines: 0 findings")


def test_a_notes_file_of_prose_alone_exits_1_without_a_finding(tmp_path):
    notes = tmp_path / "prose.md"
    notes.write_text("Just some words.\nNo facts here.\n", encoding="utf-8")
    code, report, err = imported(notes, "--store", tmp_path / "k.db")
    assert (code, report["warnings"], report["files"][0]["notation"]) == (1, [], "brain")
    assert err == (
        f"brainmigrate: 0 facts in 1 file: {notes}: 2 lines, no fact line; nothing imported,"
        " nothing written (pass --from with the store the files are, or --allow-empty when"
        " none is expected)\n"
    )
    assert not (tmp_path / "k.db").exists()


def test_notes_beside_a_store_file_are_read_as_notes(export_file, tmp_path):
    notes = tmp_path / "cache.md"
    notes.write_text("+ the cache is warmed at start\n", encoding="utf-8")
    code, report, _ = imported(notes, export_file, "--store", tmp_path / "k.db")
    assert code == 0
    assert [(Path(f["path"]).name, f["notation"]) for f in report["files"]] == [
        ("cache.md", "brain"),
        ("facts.jsonl", "jsonl"),
    ]
    assert report["totals"]["facts"] == 4


KNOWLEDGE = """---
name: "ledger-rows-keep-the-key-k1"
description: "ledger rows keep the idempotency key"
type: "reference"
created: 2026-09-20
---

ledger rows keep the idempotency key, see src/Ledger.kt

Source: task TER-9, run ter-9
"""


def test_a_knowledge_entry_of_another_tool_maps_its_type_back(tmp_path):
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "entry.md").write_text(KNOWLEDGE, encoding="utf-8")
    (tmp_path / "k" / "broken.md").write_text("---\n- a list\n---\n\ntext\n", encoding="utf-8")
    store = tmp_path / "k.db"
    code, report, _ = imported(
        "--from", "knowledge", tmp_path / "k", "--type-map", "environment=reference",
        "--store", store,
    )  # fmt: skip
    assert code == 0
    broken = tmp_path / "k" / "broken.md"
    assert warnings(report) == [
        (
            str(broken),
            None,
            None,
            "BM313",
            f"0 fact lines in 5 lines of {broken}: the knowledge reader found no fact in it;"
            " fix the lines it warns about, or pass --from with the reader the file needs",
        ),
        (
            str(broken),
            2,
            1,
            "BM312",
            "front matter is no YAML mapping; file skipped",
        ),
    ]
    assert rows(store, "SELECT scope, kind, marker, text, task, run, created FROM facts") == [
        (
            "area:entry",
            "environment",
            "=",
            "ledger rows keep the idempotency key, see src/Ledger.kt",
            "TER-9",
            "ter-9",
            "2026-09-20T00:00:00Z",
        )
    ]


def test_from_names_every_reader_and_refuses_what_is_not_one(tmp_path):
    done = cli("import", "--from", "notion", tmp_path, "--store", tmp_path / "k.db")
    assert done.exit_code == 2
    assert "'notion' is not one of 'brain', 'markdown', 'jsonl', 'memory', 'knowledge'," in (
        done.stderr
    )
    notes = tmp_path / "n.md"
    notes.write_text("+ x\n", encoding="utf-8")
    clash = cli("import", "--from", "markdown", "--notation", "brain", notes)
    assert clash.exit_code == 2
    assert clash.stderr == (
        "brainmigrate: error: --from markdown and --notation brain disagree; pass one of them\n"
    )


def test_from_markdown_reads_as_markdown_notes(tmp_path):
    notes = tmp_path / "n.md"
    notes.write_text("- the pool holds 8 connections\n", encoding="utf-8")
    code, report, _ = imported("--from", "markdown", notes, "--store", tmp_path / "k.db")
    assert (code, report["files"][0]["notation"], report["totals"]["facts"]) == (0, "markdown", 1)


def test_the_registry_and_the_yaml_reader():
    load_all()
    assert {"jsonl", "knowledge", "memory"} <= set(SOURCES)
    reading = Reading("m.md")
    assert reading.type_map == {}
    assert Entry("m.md", 1, 1, "t", "other", "area:m").status == "active"
    assert Skip("m.md", 2, 3, "why").reason == "why"
    assert safe_yaml("created: 2026-09-23\nat: 2026-09-23T10:00:00Z\n") == {
        "created": "2026-09-23",
        "at": "2026-09-23T10:00:00Z",
    }


def test_every_report_format_names_the_reader_of_a_store_file(export_file, tmp_path):
    store = tmp_path / "k.db"
    text = cli("import", export_file, "--store", store, "--dry-run").stdout
    assert f"Read by store readers (import --from)\n  {export_file}: jsonl\n" in text
    md = cli("import", export_file, "--store", store, "--dry-run", "--format", "markdown")
    (said,) = [ln for ln in md.stdout.splitlines() if ln.startswith("Read by store readers")]
    assert said.startswith("Read by store readers (`import --from`): ")
    assert said.endswith("facts.jsonl (jsonl)")  # the path as Markdown escapes it
    page = cli("import", export_file, "--store", store, "--dry-run", "--format", "html").stdout
    assert f"<code>{export_file}</code> (jsonl)</p>" in page
    notes = tmp_path / "n.md"
    notes.write_text("+ x\n", encoding="utf-8")
    assert "store readers" not in cli("import", notes, "--store", store, "--dry-run").stdout


def test_from_jsonl_reads_a_folder_of_exports(export_file, tmp_path):
    (tmp_path / "notes.md").write_text("+ not read: --from jsonl reads *.jsonl\n", encoding="utf-8")
    code, report, _ = imported("--from", "jsonl", tmp_path, "--store", tmp_path / "k.db")
    assert code == 0
    assert [(Path(f["path"]).name, f["notation"]) for f in report["files"]] == [
        ("facts.jsonl", "jsonl")
    ]


def test_an_entry_the_store_cannot_keep_is_skipped_with_why(tmp_path):
    from brainmigrate.read.facts import TaskIds
    from brainmigrate.sources.feed import read_store_file

    class Lines:
        """A source of one fact a line, ``kind|status|text`` (a stand-in for a reader
        that passes on what its store holds unchecked)."""

        name = "lines"

        def detect(self, path, head):
            return False

        def entries(self, path, reading):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                kind, status, text = line.split("|")
                yield Entry(reading.file, n, 1, text, kind, "area:s", status=status)

    path = tmp_path / "s.txt"
    path.write_text("pattern|active|kept\nnote|active|x\nother|gone|y\nother|active| \n")
    diags, kept = [], []
    st = read_store_file(
        Lines(), Reading("s.txt"), path, TaskIds(None), diags, lambda f, e: kept.append(f.text)
    )
    assert kept == ["kept"]
    assert [(d.line, d.code, d.message) for d in diags] == [
        (
            2,
            "BM312",
            "kind 'note' is not one of decision, pattern, blocker, environment, other; skipped",
        ),  # fmt: skip
        (3, "BM312", "status 'gone' is not one of active, stale, superseded; skipped"),
        (4, "BM312", "the fact's text is blank; skipped"),
    ]
    assert (st.lines, st.fact_lines, st.skipped, st.notation) == (4, 1, 3, "lines")


def test_a_file_named_twice_is_read_once(tmp_path, export_file):
    """A folder and a file in it (or one file twice) are read once, as ``check`` reads
    them: no fact merged with itself, no line counted twice; the same for a jsonl folder
    beside a file of it under ``--from``."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("+ alpha fact\n+ beta fact\n", encoding="utf-8")
    code, report, _ = imported(notes, notes / "a.md", "--isolated", "--dry-run")
    assert code == 0
    assert [f["path"] for f in report["files"]] == [(notes / "a.md").as_posix()]
    totals = report["totals"]
    assert (totals["files"], totals["fact_lines"], totals["facts"], totals["merged"]) == (
        1,
        2,
        2,
        0,
    )
    args = ("--from", "jsonl", tmp_path, export_file, "--isolated", "--dry-run")
    code, report, _ = imported(*args, "--store", tmp_path / "k.db")
    assert code == 0
    assert [f["path"] for f in report["files"]] == [export_file.as_posix()]
    assert (report["totals"]["facts"], report["totals"]["merged"]) == (3, 0)


def test_a_memory_index_bullet_citing_another_file_is_a_fact(tmp_path):
    """In ``MEMORY.md`` only a bullet naming a topic file beside it is an index line; a
    bullet that says "see docs/build.md" is a fact, not dropped in silence."""
    mem = tmp_path / "mem"
    mem.mkdir()
    (mem / "MEMORY.md").write_text(
        "- [Payments](payments.md)\n"
        "- Build with make; see docs/build.md for the flags\n"
        "- Deploys go out on Tuesdays\n",
        encoding="utf-8",
    )
    (mem / "payments.md").write_text("# area:payments\n\n- Payments retry twice\n")
    code, report, _ = imported("--from", "memory", mem, "--isolated", "--store", tmp_path / "k.db")
    assert code == 0
    assert sorted(f["text"] for f in report["facts"]) == [
        "Build with make; see docs/build.md for the flags",
        "Deploys go out on Tuesdays",
        "Payments retry twice",
    ]


def test_export_lines_missing_a_field_are_warned_about_not_read_as_prose(tmp_path):
    """jsonl lines that lack their kind are still an export's: detected, each line a BM312
    warning, the file a BM313; they were read as notes, 0 fact lines, not a word."""
    facts = tmp_path / "facts.jsonl"
    facts.write_text('{"id":"k1","text":"x"}\n{"id":"k2","text":"y"}\n', encoding="utf-8")
    code, report, _ = imported(facts, "--isolated", "--dry-run", "--allow-empty")
    assert code == 0
    name = str(facts)
    assert sorted(warnings(report), key=lambda w: w[1] or 0) == [
        (
            name,
            None,
            None,
            "BM313",
            f"0 fact lines in 2 lines of {name}: the jsonl reader found no fact in it; fix the"
            " lines it warns about, or pass --from with the reader the file needs",
        ),
        (name, 1, 1, "BM312", "no 'kind' field; line skipped"),
        (name, 2, 1, "BM312", "no 'kind' field; line skipped"),
    ]
