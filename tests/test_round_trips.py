"""Round trips through every target the project writes (issue 30): ``export --to X``, then
``import --from X`` into an empty store, then ``export --to X`` again, on the store the
README's first command makes of ``samples/notes``; and every command of the README's
"Migrate in and out" section, run."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
from pathlib import Path

import pytest
from clirun import cli
from stored import rows

from brainmigrate.sources import NOTES_READERS, READERS, load_all

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
ROOTS = ("--root", SAMPLES / "roots/app", "--root", SAMPLES / "roots/infra")

FACT_ROWS = (
    "SELECT id, scope, kind, marker, text, task, run, created, status, status_reason,"
    " supersedes, related, stems, numbers, tasks FROM facts ORDER BY id"
)
ANCHOR_ROWS = (
    "SELECT fact_id, kind, root, path, symbol, line_first, line_last, how FROM anchors"
    " ORDER BY fact_id, kind, root, path, symbol"
)
GONE_ROWS = "SELECT fact_id, state, path FROM citations ORDER BY fact_id, state, path"


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory) -> Path:
    """The store of samples/notes against the two sample roots (the README's first
    command, written)."""
    store = tmp_path_factory.mktemp("samples") / "know.db"
    done = cli("import", SAMPLES / "notes", *ROOTS, "--store", store, "--format", "json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["totals"]["facts"] == 29
    return store


def export(store: Path, target: str, out: Path) -> Path:
    done = cli("export", "--store", store, "--to", target, "--output", out)
    assert done.exit_code == 0, done.output
    return out


def import_back(source: str, path: Path, store: Path) -> dict:
    done = cli("import", "--from", source, path, *ROOTS, "--store", store, "--format", "json")
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by its relative path, with its bytes."""
    if folder.is_file():
        return {folder.name: folder.read_bytes()}
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def store_rows(store: Path) -> tuple[list, list, list]:
    return rows(store, FACT_ROWS), rows(store, ANCHOR_ROWS), rows(store, GONE_ROWS)


def test_brain_round_trip_gives_the_same_bytes(sample_store, tmp_path):
    first = export(sample_store, "brain", tmp_path / "first")
    report = import_back("brain", first, tmp_path / "again.db")
    assert {f["notation"] for f in report["files"]} == {"brain"}
    second = export(tmp_path / "again.db", "brain", tmp_path / "second")
    assert tree(second) == tree(first)
    assert len(tree(first)) == 4


def test_jsonl_round_trip_keeps_every_fact_row_and_id(sample_store, tmp_path):
    first = export(sample_store, "jsonl", tmp_path / "first.jsonl")
    report = import_back("jsonl", first, tmp_path / "again.db")
    assert report["warnings"] == []
    assert [(f["notation"], f["fact_lines"], f["skipped"]) for f in report["files"]] == [
        ("jsonl", 29, 0)
    ]
    assert store_rows(tmp_path / "again.db") == store_rows(sample_store)
    second = export(tmp_path / "again.db", "jsonl", tmp_path / "second.jsonl")
    # What differs is the store's own history of the fact: when and from which line this
    # import read it; every field of the fact itself is the same, byte for byte.
    history = ("origin", "imported", "updated", "provenance")

    def facts(path: Path) -> list[dict]:
        return [
            {k: v for k, v in json.loads(line).items() if k not in history}
            for line in path.read_text(encoding="utf-8").splitlines()
        ]

    assert facts(second) == facts(first)
    again = [json.loads(line) for line in second.read_text(encoding="utf-8").splitlines()]
    assert again[20]["origin"] == {"file": str(first), "line": 21}


def test_knowledge_round_trip_keeps_kind_scope_status_anchors_and_source(sample_store, tmp_path):
    first = export(sample_store, "knowledge", tmp_path / "first")
    report = import_back("knowledge", first, tmp_path / "again.db")
    assert {f["notation"] for f in report["files"]} == {"knowledge"}
    assert report["totals"]["facts"] == 29
    # the format holds no marker; created is the export's (the import time where none)
    kept = (
        "SELECT id, scope, kind, text, task, run, status, status_reason, supersedes, related"
        " FROM facts ORDER BY id"
    )
    again = tmp_path / "again.db"
    assert rows(again, kept) == rows(sample_store, kept)
    assert rows(again, ANCHOR_ROWS) == rows(sample_store, ANCHOR_ROWS)
    assert rows(again, GONE_ROWS) == rows(sample_store, GONE_ROWS)
    dated = "SELECT id, created FROM facts WHERE created LIKE '2026-09-%' ORDER BY id"
    assert rows(again, dated) == rows(sample_store, dated)
    second = export(again, "knowledge", tmp_path / "second")
    assert sorted(tree(second)) == sorted(tree(first))


def test_memory_round_trip_keeps_ids_scopes_kinds_and_statuses(sample_store, tmp_path):
    first = export(sample_store, "memory", tmp_path / "first")
    report = import_back("memory", first, tmp_path / "again.db")
    assert [(f["path"].rsplit("/", 1)[1], f["fact_lines"]) for f in report["files"]] == [
        ("MEMORY.md", 0),
        ("api-patterns.md", 4),
        ("docker.md", 6),
        ("payments.md", 12),
        ("webhooks.md", 7),
    ]
    assert report["warnings"] == []
    kept = "SELECT id, scope, kind, text, status FROM facts ORDER BY id"
    assert rows(tmp_path / "again.db", kept) == rows(sample_store, kept)
    second = export(tmp_path / "again.db", "memory", tmp_path / "second")
    a, b = tree(first), tree(second)
    assert a["MEMORY.md"] == b["MEMORY.md"]
    assert a["api-patterns.md"] == b["api-patterns.md"]  # no fact there has a created
    # memory holds no created: the newest-first order falls back to the ids
    assert sorted(a["payments.md"].splitlines()) == sorted(b["payments.md"].splitlines())


# --------------------------------------------------------------------- README section


def section_commands() -> list[str]:
    """The commands of the README's "Migrate in and out" section's ```sh blocks, in order."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Migrate in and out\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def test_the_section_shows_each_source_into_a_store_and_out():
    commands = section_commands()
    sources = {
        shlex.split(c)[shlex.split(c).index("--from") + 1] for c in commands if "--from" in c
    }
    targets = {shlex.split(c)[shlex.split(c).index("--to") + 1] for c in commands if "--to" in c}
    assert sources == {"jsonl", "memory", "knowledge", "basic-memory", "mcp-memory"}
    assert targets == {"jsonl", "memory", "knowledge", "brain"}


#: A Basic Memory note and an MCP memory file, in our own words, for the section's last two
#: commands (their readers are tested with their own fixtures).
VAULT_NOTE = """---
title: Ledger writes
type: note
permalink: ledger-writes
---

# Ledger writes

## Observations
- [decision] the ledger is written in the charge transaction #ledger
"""
MCP_MEMORY = (
    '{"type": "entity", "name": "ledger", "entityType": "module",'
    ' "observations": ["writes go through LedgerRepository"]}\n'
)


def test_every_command_of_the_section_runs(tmp_path):
    shutil.copytree(SAMPLES / "notes", tmp_path / "notes")
    (tmp_path / "vault").mkdir()
    (tmp_path / "vault" / "ledger-writes.md").write_text(VAULT_NOTE, encoding="utf-8")
    (tmp_path / "memory.jsonl").write_text(MCP_MEMORY, encoding="utf-8")
    sources = load_all()
    ran = 0
    with contextlib.chdir(tmp_path):
        for command in section_commands():
            args = shlex.split(command)
            if args[:2] == ["mkdir", "-p"]:
                os.makedirs(args[2], exist_ok=True)
                continue
            assert args[0] == "brainmigrate", command
            done = cli(*args[1:])
            reader = args[args.index("--from") + 1] if "--from" in args else None
            if reader is not None and reader not in sources:
                assert done.exit_code == 2, (command, done.output)
                have = ", ".join(r for r in READERS if r in NOTES_READERS or r in sources)
                assert done.stderr == (
                    f"brainmigrate: error: --from {reader}: not available in this version;"
                    f" pass one of {have}\n"
                )
                continue
            assert done.exit_code == 0, (command, done.output)
            ran += 1
    assert ran >= 8
    # the chain notes -> jsonl -> memory -> knowledge -> brain keeps the 29 facts' texts
    texts = "SELECT text FROM facts ORDER BY text"
    assert rows(tmp_path / "from-knowledge.db", texts) == rows(tmp_path / "know.db", texts)
    assert len(rows(tmp_path / "know.db", texts)) == 29
    assert sorted(os.listdir(tmp_path / "notes-again")) == sorted(os.listdir(tmp_path / "notes"))
