"""The MCP memory server's ``memory.jsonl`` read as facts (issue 30; docs/migrate.md "MCP
memory"): on ``tests/fixtures/sources/memory.jsonl`` and files written in ``tmp_path``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from clirun import cli
from stored import rows

from brainmigrate.read.files import InputError
from brainmigrate.sources import Entry, Reading, Skip, load_all
from brainmigrate.sources.mcp_memory import McpMemory

MEMORY = Path(__file__).parent / "fixtures" / "sources" / "memory.jsonl"
SQL = "SELECT id, scope, kind, text, related FROM facts ORDER BY id"


def read(path: Path, scope: str | None = None) -> list[tuple]:
    """Each item the source yields for ``path`` as a tuple: an entry's line, col, kind,
    scope, text, key and relates_to; a skip's line, col and reason."""
    out = []
    for item in McpMemory().entries(path, Reading(path.name, scope=scope)):
        if isinstance(item, Skip):
            assert item.file == path.name
            out.append((item.line, item.col, item.reason))
        else:
            assert isinstance(item, Entry) and item.file == path.name
            out.append(
                (item.line, item.col, item.kind, item.scope, item.text, item.key, item.relates_to)
            )
    return out


def test_registered_under_its_from_name():
    assert isinstance(load_all()["mcp-memory"], McpMemory)


def test_each_observation_is_a_fact_scoped_by_its_entity():
    assert read(MEMORY) == [
        (1, 83, "decision", "area:search-service", "Rank hits with BM25 over stemmed words",
         "Search Service", ()),
        (1, 124, "decision", "area:search-service", "Cache the 100 most frequent queries",
         "Search Service", ()),
        (2, 81, "environment", "area:build-box", "Python 3.12 on Debian, two cores",
         "Build Box", ()),
        (3, 76, "blocker", "area:flaky-upload", "Uploads over 2 GB time out in CI",
         "Flaky Upload", ("Build Box",)),
        (4, 77, "other", "area:zoë-tanaka", "Owns the søk index", "Zoë Tanaka",
         ("Search Service",)),
        (4, 98, "other", "area:zoë-tanaka", "Reviews every schema change", "Zoë Tanaka",
         ("Search Service",)),
        (7, 1, "relation to 'Nobody Yet': that entity has no fact"),
        (8, 1, "entity 'Empty One' has no observations: no fact"),
        (9, 80, "not JSON (Unterminated string starting at)"),
        (10, 1, "type 'note' is neither 'entity' nor 'relation'"),
        (11, 1, "relation from 'Ghost': that entity has no fact"),
    ]  # fmt: skip


def test_the_column_is_where_the_observation_starts():
    line = MEMORY.read_text(encoding="utf-8").splitlines()[3]
    assert line[75:].startswith('"Owns the søk index"')
    assert line[96:].startswith('"Reviews every schema change"')


def test_crlf_escapes_object_observations_and_fields_of_the_wrong_type(tmp_path):
    memory = tmp_path / "memory.jsonl"
    memory.write_bytes(
        b'{"type":"relation","from":"CI","to":"Cache","relationType":"uses"}\r\n'
        b'{"type":"entity","name":"CI","entityType":"Setup","observations":'
        b'["Runs on two\\ncores \\u2014 always",{"content":"Keeps 3 runners"},7,""]}\r\n'
        b"\r\n"
        b'{"type":"entity","name":"Cache","entityType":"pattern","observations":"one"}\r\n'
        b'{"type":"entity","name":["CI"],"observations":["x"]}\r\n'
        b'{"type":"relation","from":"CI","to":5}\r\n'
        b"[1, 2]\r\n"
        b'{"type":"entity","name":"Bytes","observations":["\xff"]}\r\n'
    )
    assert read(memory) == [
        (1, 1, "relation to 'Cache': that entity has no fact"),
        (2, 68, "environment", "area:ci", "Runs on two cores \u2014 always", "CI", ()),
        (2, 113, "environment", "area:ci", "Keeps 3 runners", "CI", ()),
        (2, 132, "entity 'CI': observation 3 is no text"),
        (2, 134, "entity 'CI': observation 4 is no text"),
        (4, 1, "entity 'Cache': 'observations' is no list: no fact"),
        (5, 1, "entity: 'name' is no non-empty string"),
        (6, 1, "relation: 'from' and 'to' must be strings"),
        (7, 1, "not a JSON object (a JSON array)"),
        (8, 50, "not UTF-8, the line is not read"),
    ]


def test_scope_given_overrides_the_entitys(tmp_path):
    memory = tmp_path / "m.json"
    memory.write_text(
        '{"type":"entity","name":"A","entityType":"x","observations":["a fact"]}\n',
        encoding="utf-8",
    )
    assert read(memory, scope="area:team") == [(1, 63, "other", "area:team", "a fact", "A", ())]


def test_a_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match=r"^memory\.jsonl:1:1: no such file or folder$"):
        list(McpMemory().entries(tmp_path / "memory.jsonl", Reading("memory.jsonl")))


@pytest.mark.parametrize(
    ("name", "head", "found"),
    [
        ("memory.jsonl", '{"type":"entity","name":"A","observations":[]}\n', True),
        ("graph.json", '\n{"type": "relation", "from": "A", "to": "B"}\n', True),
        ("memory.jsonl", '{"id": "k1", "scope": "area:x", "kind": "decision"}\n', False),
        ("memory.md", '{"type":"entity","name":"A","observations":[]}\n', False),
        ("memory.jsonl", "not json at all\n", False),
        # a first line longer than the head: its start still tells the format
        ("memory.jsonl", '{"type":"entity","name":"A","observations":["' + "x" * 5000, True),
    ],
)
def test_detect(tmp_path, name, head, found):
    assert McpMemory().detect(tmp_path / name, head) is found


#: The fixture's facts as the store keeps them: id, scope, kind, text, related.
STORED = [
    (1, "area:search-service", "decision", "Rank hits with BM25 over stemmed words", "[]"),
    (2, "area:search-service", "decision", "Cache the 100 most frequent queries", "[]"),
    (3, "area:build-box", "environment", "Python 3.12 on Debian, two cores", "[]"),
    (4, "area:flaky-upload", "blocker", "Uploads over 2 GB time out in CI", "[3]"),
    (5, "area:zoë-tanaka", "other", "Owns the søk index", "[1]"),
    (6, "area:zoë-tanaka", "other", "Reviews every schema change", "[1]"),
]


@pytest.mark.parametrize("given", [("--from", "mcp-memory"), ()], ids=["from", "detected"])
def test_import_a_memory_file_then_search_and_show(tmp_path, monkeypatch, given):
    """``import --from mcp-memory memory.jsonl`` and detection without ``--from`` make
    the same store; each line not read is one warning; search finds an observation's
    word; show lists the fact a relation names."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(MEMORY, "memory.jsonl")
    r = cli("import", *given, "memory.jsonl", "--store", "know.db")
    assert r.exit_code == 0, r.output
    assert rows(tmp_path / "know.db", SQL) == STORED
    warnings = r.output.partition("\nWarnings\n")[2].splitlines()
    assert warnings == [
        "  memory.jsonl:7:1: BM312 relation to 'Nobody Yet': that entity has no fact",
        "  memory.jsonl:8:1: BM312 entity 'Empty One' has no observations: no fact",
        "  memory.jsonl:9:80: BM312 not JSON (Unterminated string starting at)",
        "  memory.jsonl:10:1: BM312 type 'note' is neither 'entity' nor 'relation'",
        "  memory.jsonl:11:1: BM312 relation from 'Ghost': that entity has no fact",
    ]
    r = cli("search", "søk", "--store", "know.db")
    assert r.stdout == "k5 other area:zoë-tanaka  Owns the søk index\n"
    r = cli("search", "--scope", "area:flaky-upload", "upload", "--store", "know.db")
    assert r.stdout == "k4 blocker area:flaky-upload  Uploads over 2 GB time out in CI\n"
    assert "\nrelated: k3\n" in cli("show", "k4", "--store", "know.db").stdout


def test_an_entity_line_of_several_observations_keeps_the_report_invariants(tmp_path):
    """One entity line holds three facts: it counts once per fact in ``lines`` and
    ``fact_lines``, so ``lines == fact_lines + continuations + blank + skipped`` and, into
    an empty store, ``fact_lines == facts + merged`` hold (SPEC.md §Report), as the
    shared ``report-invariants`` check says."""
    import json
    import subprocess
    import sys

    memory = tmp_path / "memory.jsonl"
    memory.write_text(
        '{"type":"entity","name":"Pool","entityType":"decision","observations":'
        '["pool size is 8","pool timeout is 30s","pool retries twice"]}\n'
        '{"type":"entity","name":"Db","entityType":"setup","observations":["db is postgres 16"]}\n'
        '{"type":"relation","from":"Pool","to":"Db","relationType":"uses"}\n',
        encoding="utf-8",
    )
    out = tmp_path / "report.json"
    args = ("--from", "mcp-memory", memory, "--isolated", "--store", tmp_path / "k.db")
    done = cli("import", *args, "--format", "json", "--output", out)
    assert done.exit_code == 0, done.output
    report = json.loads(out.read_text(encoding="utf-8"))
    (f,) = report["files"]
    counts = [f[k] for k in ("lines", "fact_lines", "continuations", "blank", "skipped")]
    assert counts == [5, 4, 0, 0, 1]
    t = report["totals"]
    assert (t["fact_lines"], t["facts"], t["merged"]) == (4, 4, 0)
    tool = Path(__file__).resolve().parents[2] / "shared" / "tools" / "report-invariants"
    if tool.exists():  # the shared tools sit beside the checkout, in CI too
        checked = subprocess.run(
            [sys.executable, tool, out, "--fresh-store"], capture_output=True, text=True
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
